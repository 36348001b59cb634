"""Grading on Kubernetes as an Indexed Job in which the pod is the sandbox.

The Job follows the sharding contract of :mod:`attnlab_grader.classroom.shard`, one submission per pod:
``python -m attnlab_grader.classroom.podjob prepare COURSE -a A`` (trusted, once per assignment: in
formgrader's terminal or a one-pod Job) is ``shard prepare`` for ``A`` (listing
``COURSE/shards/A.txt``; its line count is the Job's ``completions``).
``python -m attnlab_grader.classroom.podjob grade COURSE -a A --index N`` is the command of completion
``N`` (``$JOB_COMPLETION_INDEX``): shard ``N`` of ``completions``, i.e. exactly the ``N``-th
submission of the listing, graded into the one gradebook with its report and feedback.
``python -m attnlab_grader.classroom.podjob finish COURSE -a A`` (trusted) is ``shard collect``: grades
CSV, class report, and an exit code that counts the submissions not graded.

The pod replaces the namespaces of the other sandbox mechanisms (deploy/kubernetes/README.md):
``grade`` first checks that it runs in such a pod and otherwise refuses, one sentence per
reason (:func:`refusals`): not root, no capability (bounding set included), ``no_new_privs``,
a seccomp filter, no service-account token, a read-only root filesystem, no egress to any
probe address (public addresses and the Kubernetes API), and Landlock ABI >= 4.  Student code
then runs in the ``landlock`` mechanism (``autograder/attnlab_grader/sandbox``): each check confines itself to
the operating system's files and the Python installation (the course, the repository and
``attnlab``'s source are out of reach), may not open TCP connections, and, with Landlock ABI
>= 6, may not signal the grader.
"""
from __future__ import annotations

import os
import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click

from attnlab_grader.records.settings import grader_default

#: Where Kubernetes mounts a service-account token when ``automountServiceAccountToken`` is on.
SA_TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Addresses the pod must NOT reach (``HOST:PORT``): well-known public resolvers.  The Kubernetes
#: API (``$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``, set in every pod) is added.
DEFAULT_PROBES = ("1.1.1.1:443", "8.8.8.8:53", "9.9.9.9:443")
#: Landlock ABI needed: 4 = files and TCP (Linux 6.7); 6 (Linux 6.12) adds signal scoping.
LANDLOCK_MIN_ABI = 4
#: Exit status of ``grade`` when it refuses (the pod is not a sandbox) or cannot grade at all.
REFUSED, FAILED = 3, 1


def _status() -> dict[str, str]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def _reachable(target: str, timeout: float) -> bool:
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def egress_probes(extra=()) -> list[str]:
    """``HOST:PORT`` addresses that must be unreachable: :data:`DEFAULT_PROBES`, the Kubernetes
    API from the pod's environment, and ``extra``."""
    probes = list(DEFAULT_PROBES) + list(extra)
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if host and port:
        probes.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    return list(dict.fromkeys(probes))


def refusals(probes=(), timeout: float = 2.0) -> list[str]:
    """Why this process is not in a pod that may serve as the sandbox; ``[]`` when it is.

    Each reason is one sentence naming the pod setting that fixes it (deploy/kubernetes)."""
    from attnlab_grader.sandbox import landlock_abi
    why = []
    st = _status()
    if os.geteuid() == 0 or os.getuid() == 0:
        why.append("it runs as root (uid 0): set runAsNonRoot: true and a fixed runAsUser in the "
                   "pod's securityContext")
    caps = {k: st.get(k, "0") for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    held = {k: v for k, v in caps.items() if int(v, 16)}
    if held:
        why.append("it holds Linux capabilities (" + ", ".join(f"{k}={v}" for k, v in held.items())
                   + "): set capabilities: {drop: [ALL]} in the container's securityContext")
    if st.get("NoNewPrivs") != "1":
        why.append("no_new_privs is off: set allowPrivilegeEscalation: false in the container's "
                   "securityContext")
    if st.get("Seccomp", "0") == "0":
        why.append("no seccomp filter is in force: set seccompProfile: {type: RuntimeDefault}")
    if os.path.lexists(SA_TOKEN_DIR):
        why.append(f"a service-account token is mounted ({SA_TOKEN_DIR}): set "
                   "automountServiceAccountToken: false on the pod")
    if not os.statvfs("/").f_flag & os.ST_RDONLY:
        why.append("the root filesystem is writable: set readOnlyRootFilesystem: true in the "
                   "container's securityContext")
    targets = egress_probes(probes)
    with ThreadPoolExecutor(len(targets)) as pool:
        open_ = [t for t, ok in zip(targets, pool.map(lambda t: _reachable(t, timeout), targets), strict=True) if ok]
    if open_:
        why.append(f"egress is open ({', '.join(open_)} answered): apply the grading "
                   "NetworkPolicy (deploy/kubernetes/networkpolicies.yaml)")
    abi = landlock_abi()
    if abi < LANDLOCK_MIN_ABI:
        why.append(f"Landlock ABI {abi} is below {LANDLOCK_MIN_ABI}: the node needs Linux >= 6.7 with "
                   "Landlock enabled (lsm=...,landlock) and a runtime whose RuntimeDefault seccomp "
                   "profile allows the landlock_* system calls")
    return why


def listing_path(course, assignment: str) -> Path:
    """The listing of completion indexes: :func:`attnlab_grader.classroom.shard.listing_path` of the one
    assignment (completion ``N`` grades line ``N``: shard ``N`` of as many as there are lines)."""
    from attnlab_grader.classroom.shard import listing_path as shard_listing
    return shard_listing(course, [assignment])


def read_listing(course, assignment: str) -> list[str]:
    """The student folders of :func:`listing_path`, in index order; ``FileNotFoundError`` if the
    assignment was not prepared."""
    from attnlab_grader.classroom.shard import read_listing as shard_read
    return [s for _, s in shard_read(course, [assignment])]


def prepare(course, assignment: str, db_url: str | None = None) -> list[str]:
    """:func:`attnlab_grader.classroom.shard.prepare` for one assignment; returns the listing's student
    folders (their count is the Job's ``completions``).  Trusted: run once before the Job, never
    in it.  Raises ``RuntimeError`` when the assignment cannot be generated, ``ValueError`` for a
    student folder whose name cannot be one line of the listing."""
    from attnlab_grader.classroom.shard import prepare as shard_prepare
    return [s for _, s in shard_prepare(course, [assignment], db_url)]


def grade_index(course, assignment: str, index: int, db_url: str | None = None,
                item_timeout: float | None = None) -> dict:
    """Shard ``index`` of ``len(listing)`` (:func:`attnlab_grader.classroom.shard.grade_shard`): the
    ``index``-th submission of the listing, graded with the ``landlock`` sandbox into the
    gradebook, with its report and (when graded) its feedback.  Returns the report
    (:class:`attnlab_grader.records.grade_report.GradeReport`).  Does not check the pod (:func:`refusals`
    does).  Raises ``IndexError`` for an index outside the listing, ``FileNotFoundError`` for an
    unprepared assignment."""
    from attnlab_grader.classroom.shard import Shard, grade_shard
    root = os.path.abspath(course)
    students = read_listing(root, assignment)
    if not 0 <= index < len(students):
        raise IndexError(f"completion index {index} is outside the listing of {len(students)} "
                         f"submissions ({listing_path(root, assignment)})")
    (report,) = grade_shard(root, [assignment], Shard(index, len(students)), db_url, item_timeout, "landlock")
    return report


def _not_dumpable():
    """The grading process holds the gradebook URL (with its password) in its environment: make
    it non-dumpable so a process of the same uid cannot read ``/proc/<pid>/environ`` or trace it."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


@click.group()
def cli():
    """attnlab grading as a Kubernetes Indexed Job (deploy/kubernetes/README.md)."""


_db = click.option("--db", "db_url", default=grader_default("db"), show_default="$ATTNLAB_DB",
                   help="Gradebook URL (the course's PostgreSQL; default sqlite:///COURSE/gradebook.db).")
_assignment = click.option("--assignment", "-a", required=True, help="e.g. 02_scaled_dot_product_attention")


@cli.command("prepare")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@_assignment
@_db
def prepare_cmd(course, assignment, db_url):
    """Generate ASSIGNMENT and write the listing; prints the Job's completions count."""
    from attnlab_grader.records.course import GradebookUnavailable
    try:
        students = prepare(course, assignment, db_url)
    except (GradebookUnavailable, RuntimeError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"{len(students)} submissions of {assignment} listed in {listing_path(course, assignment)}; "
               f"run the Job with completions: {len(students)}")


@cli.command("grade")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@_assignment
@click.option("--index", type=int, envvar="JOB_COMPLETION_INDEX", show_envvar=True, required=True,
              help="Which line of the listing to grade (the Job sets JOB_COMPLETION_INDEX).")
@_db
@click.option("--egress-probe", "probes", multiple=True, metavar="HOST:PORT",
              help="Another address the pod must not reach (besides public resolvers and the API).")
@click.option("--item-timeout", type=float, default=None, help="Per-check limit in seconds (default: grading.py's).")
def grade_cmd(course, assignment, index, db_url, probes, item_timeout):
    """Grade completion INDEX of ASSIGNMENT in this pod, after checking the pod is a sandbox."""
    from attnlab_grader.records.course import GradebookUnavailable
    from attnlab_grader.records.intake import safe_text
    _not_dumpable()
    why = refusals(probes)
    if why:
        for reason in why:
            click.echo(f"refusing to grade: {reason}.", err=True)
        sys.exit(REFUSED)
    try:
        rep = grade_index(course, assignment, index, db_url, item_timeout)
    except (GradebookUnavailable, IndexError, FileNotFoundError, RuntimeError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(FAILED)
    line = f"{safe_text(rep['student'])} {assignment}: {rep['status']}"
    if rep.get("score") is not None:
        line += f" {rep['score']:g}/{rep.get('max_score', 0):g}"
    if rep.get("reason"):
        line += f" ({safe_text(rep['reason'])})"
    click.echo(line)
    click.echo(f"sandbox: {safe_text(rep.get('sandbox', ''))}")


@cli.command("finish")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@_assignment
@_db
@click.option("--csv", "csv_path", default=None, help="Grades CSV (default COURSE/grades.csv).")
def finish_cmd(course, assignment, db_url, csv_path):
    """After the Job: :func:`attnlab_grader.classroom.shard.collect` (grades CSV, class report); exits with
    the number of submissions not graded."""
    from attnlab_grader.classroom.shard import collect, exit_code
    try:
        summaries = collect(os.path.abspath(course), [assignment], db_url, {assignment: csv_path})
    except FileNotFoundError as err:
        raise click.ClickException(str(err)) from None
    summary = summaries[assignment]
    click.echo(summary.text())
    if summary.error:
        click.echo(summary.error)
    sys.exit(exit_code(summaries))


if __name__ == "__main__":
    cli()
