"""deploy/kubernetes, checked offline: every manifest against the API schemas of the Kubernetes
version the deployment targets (kubernetes-validate, strict: unknown fields fail), the Zero to
JupyterHub values against the chart's own values schema (vendored), the grading Job's and the
other pods' security settings, and that names, images, volumes and versions agree across files."""
from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
#: The Kubernetes version the manifests target (README.md says the same); z2jh 4.4.0 needs >= 1.32.
KUBERNETES = "1.35.0"
CHART = "4.4.0"
MANIFESTS = ["namespace.yaml", "storage.yaml", "secrets.example.yaml", "postgres.yaml", "formgrader.yaml",
             "networkpolicies.yaml", "grading-job.yaml"]


def _docs(name):
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def _all():
    return [d for name in MANIFESTS for d in _docs(name)]


def _pods():
    """(kind/name, pod spec) of every workload."""
    out = []
    for d in _all():
        if d["kind"] in ("Deployment", "StatefulSet", "Job"):
            out.append((f"{d['kind']}/{d['metadata'].get('name') or d['metadata']['generateName']}",
                        d["spec"]["template"]["spec"]))
    return out


def _job():
    (job,) = _docs("grading-job.yaml")
    return job


def _merge(base, over):
    """Helm's merge of user values over the chart's defaults (maps merged, the rest replaced, null deletes)."""
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _values():
    return yaml.safe_load((K8S / "z2jh-values.yaml").read_text())


def _schema_errors(values):
    schema = yaml.safe_load((K8S / "z2jh-values.schema.yaml").read_text())
    defaults = yaml.safe_load((K8S / "z2jh-values.defaults.yaml").read_text())
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in jsonschema.Draft7Validator(schema).iter_errors(_merge(defaults, values))]


def test_every_file_is_listed_and_offline_schemas_exist_for_the_target_version():
    listed = set(MANIFESTS) | {"z2jh-values.yaml", "z2jh-values.schema.yaml", "z2jh-values.defaults.yaml"}
    assert {p.name for p in K8S.glob("*.yaml")} == listed, "a manifest is not validated by this test"
    assert KUBERNETES in kubernetes_validate.utils.all_versions()  # shipped with the package: no download
    assert f"Kubernetes {KUBERNETES.rsplit('.', 1)[0]}" in (K8S / "README.md").read_text()


@pytest.mark.parametrize("name", MANIFESTS)
def test_manifest_is_valid_for_the_pinned_kubernetes(name):
    for doc in _docs(name):
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)


def rendered_job(assignment: str, completions, suffix: str = "x7k2q") -> dict:
    """grading-job.yaml as ``kubectl create`` submits it after editing: ``generateName`` resolved
    to a name (the API server appends a random suffix), the assignment and ``completions`` set."""
    job = copy.deepcopy(_job())
    job["metadata"]["name"] = job["metadata"].pop("generateName") + suffix
    job["spec"]["completions"] = completions
    cmd = job["spec"]["template"]["spec"]["containers"][0]["command"]
    cmd[cmd.index("--assignment") + 1] = assignment
    return job


def _validate_cli(path: Path) -> subprocess.CompletedProcess:
    tool = Path(sys.executable).with_name("kubernetes-validate")
    return subprocess.run([str(tool), "-k", KUBERNETES, "--strict", str(path)], capture_output=True, text=True,
                          timeout=120)


def test_grading_job_in_its_created_form_passes_the_validator_that_refuses_it_as_written(tmp_path):
    as_written = _validate_cli(K8S / "grading-job.yaml")
    assert as_written.returncode != 0 and "could not be validated" in as_written.stdout + as_written.stderr
    good = tmp_path / "job.yaml"
    good.write_text(yaml.safe_dump(rendered_job("09_capstone", 187)))
    res = _validate_cli(good)
    assert res.returncode == 0 and "passed for resource job/attnlab-grade-x7k2q" in res.stdout, res.stdout + res.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(rendered_job("09_capstone", "all of them")))
    res = _validate_cli(bad)
    assert res.returncode != 0 and "completions" in res.stdout + res.stderr, res.stdout + res.stderr


def test_validation_is_real_a_misplaced_field_fails():
    job = copy.deepcopy(_job())
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES, strict=True)


def test_values_match_the_vendored_chart_schema_and_a_typo_fails():
    assert _schema_errors(_values()) == []
    bad = _merge(_values(), {"singleuser": {"memorry": {"limit": "2G"}}})
    assert any("memorry" in e for e in _schema_errors(bad))
    head = (K8S / "z2jh-values.schema.yaml").read_text().splitlines()[:2]
    assert f"tag {CHART}" in head[0] and "BSD-3-Clause" in head[1]
    assert "BSD 3-Clause License" in (K8S / "LICENSE.z2jh").read_text()
    assert f"--version {CHART}" in (K8S / "z2jh-values.yaml").read_text()


def test_one_jupyterhub_version_everywhere():
    pin = re.search(r"^jupyterhub==(\S+)$", (ROOT / "deploy/jupyterhub/requirements-hub.txt").read_text(), re.M)[1]
    single = re.search(r"^jupyterhub==(\S+)$", (ROOT / "deploy/jupyterhub/requirements-singleuser.txt").read_text(), re.M)[1]
    hub = (K8S / "hub.Dockerfile").read_text()
    assert single == pin and f'"jupyterhub=={pin}"' in hub and f"k8s-hub:{CHART}" in hub
    # installed over the chart's own JupyterHub: a package of the chart's image that declares the pin
    # incompatible fails the image build rather than the hub at run time
    assert re.search(rf'^RUN pip install [^\n]*"jupyterhub=={re.escape(pin)}" && pip check$', hub, re.M), hub
    assert _values()["hub"]["image"]["name"].endswith("attnlab-hub")


def test_grading_job_pod_is_a_sandbox():
    job = _job()
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] >= 1
    assert spec["activeDeadlineSeconds"] and spec["backoffLimitPerIndex"] >= 0
    assert {"action": "FailIndex", "onExitCodes": {"containerName": "grade", "operator": "In", "values": [3]}} \
        in spec["podFailurePolicy"]["rules"]  # a refusal (podjob.REFUSED) is not retried
    pod = spec["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False and pod["enableServiceLinks"] is False
    assert pod["activeDeadlineSeconds"] and pod["restartPolicy"] == "Never"
    assert not any(k in pod for k in ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace"))
    psc = pod["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] > 0 and psc["seccompProfile"] == {"type": "RuntimeDefault"}
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]} and "privileged" not in sc
    assert c["resources"]["limits"]["cpu"] and c["resources"]["limits"]["memory"]
    assert c["command"][:4] == ["python", "-m", "attnlab_grader.classroom.podjob", "grade"]
    assignment = c["command"][c["command"].index("--assignment") + 1]
    assert (ROOT / "solutions" / assignment / "grading.py").is_file()
    from attnlab_grader.classroom import podjob
    assert podjob.REFUSED == 3
    vols = {v["name"]: v for v in pod["volumes"]}
    assert not any("hostPath" in v for v in vols.values())
    assert vols["course"]["persistentVolumeClaim"]["claimName"] == "attnlab-course"
    # the grader image's account is the pod's uid (it owns the course's files)
    assert f"USER {psc['runAsUser']}:{psc['runAsGroup']}" in (K8S / "grader.Dockerfile").read_text()


def test_grading_pods_may_reach_only_postgres_and_dns():
    labels = _job()["spec"]["template"]["metadata"]["labels"]
    pols = [d for d in _docs("networkpolicies.yaml")
            if all(labels.get(k) == v for k, v in d["spec"]["podSelector"]["matchLabels"].items())]
    assert len(pols) == 1
    pol = pols[0]["spec"]
    assert set(pol["policyTypes"]) == {"Ingress", "Egress"} and pol["ingress"] == []
    ports = sorted((p["protocol"], p["port"]) for rule in pol["egress"] for p in rule["ports"])
    assert ports == [("TCP", 53), ("TCP", 5432), ("UDP", 53)]
    for rule in pol["egress"]:
        assert all("ipBlock" not in peer for peer in rule["to"])  # no address range, so no internet


def test_every_pod_is_least_privilege_and_refers_to_what_exists():
    claims = {d["metadata"]["name"] for d in _docs("storage.yaml")}
    secrets = {d["metadata"]["name"]: set(d["stringData"]) for d in _docs("secrets.example.yaml")}
    secrets["hub"] = {"hub.services.attnlab.apiToken"}  # made by the chart for hub.services.attnlab
    assert set(_values()["hub"]["services"]) == {"attnlab"}
    for what, pod in _pods():
        assert pod["automountServiceAccountToken"] is False, what
        assert pod["securityContext"]["runAsNonRoot"] is True, what
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, what
        for c in pod.get("initContainers", []) + pod["containers"]:
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}, what
            assert sc["readOnlyRootFilesystem"] is True, what
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in secrets[ref["name"]], (what, ref)
        for v in pod.get("volumes", []):
            if "persistentVolumeClaim" in v:
                assert v["persistentVolumeClaim"]["claimName"] in claims, (what, v)
    for d in _all():
        assert d["kind"] == "Namespace" or d["metadata"]["namespace"] == "attnlab"


def test_students_never_get_the_course_volume_or_the_grader():
    single = _values()["singleuser"]
    claims = [v["persistentVolumeClaim"]["claimName"] for v in single["storage"]["extraVolumes"]]
    assert claims == ["attnlab-exchange"]
    egress = single["networkPolicy"]["egressAllowRules"]
    assert not egress["nonPrivateIPs"] and not egress["privateIPs"] and not egress["cloudMetadataServer"]
    docker = (K8S / "singleuser.Dockerfile").read_text()
    copied = [p for src in re.findall(r"^COPY (.+) \S+$", docker, flags=re.M) for p in src.split()]
    assert not any(p.startswith(("solutions", "deploy/jupyterhub/grader")) for p in copied)
    assert _values()["hub"]["config"]["GenericOAuthenticator"]["admin_groups"] == ["attnlab-instructors"]
    assert _values()["cull"]["enabled"] is True


@pytest.mark.parametrize("name", ["singleuser.Dockerfile", "grader.Dockerfile"])
def test_images_are_built_from_the_locks_and_copy_what_exists(name):
    docker = (K8S / name).read_text()
    assert "constraints/py3.11.txt" in docker and '"torch==2.13.0+cpu"' in docker
    for src in re.findall(r"^COPY (.+) \S+$", docker, flags=re.M):
        for path in src.split():
            assert list(ROOT.glob(path)), f"{name} copies {path}, which is not in the repository"


def test_postgres_admits_formgrader_and_grading_pods_only():
    (pol,) = [d for d in _docs("networkpolicies.yaml") if d["metadata"]["name"] == "attnlab-postgres"]
    (rule,) = pol["spec"]["ingress"]
    (peer,) = rule["from"]
    sel = peer["podSelector"]

    def admitted(labels):
        return all(labels.get(k) == v for k, v in sel.get("matchLabels", {}).items()) and all(
            labels.get(e["key"]) in e["values"] for e in sel.get("matchExpressions", []))
    pods = {d["metadata"]["labels"]["app.kubernetes.io/component"]: d["spec"]["template"]["metadata"]["labels"]
            for d in _all() if d["kind"] in ("Deployment", "StatefulSet", "Job")}
    assert {c for c, labels in pods.items() if admitted(labels)} == {"formgrader", "grading"}
    assert "namespaceSelector" not in peer and pol["spec"]["egress"] == []
    assert not admitted({"app": "jupyterhub", "component": "singleuser-server",
                         "app.kubernetes.io/component": "singleuser-server"})
