"""The ``attnlab`` console script: practise at the terminal and see progress.

    attnlab skills [--lesson 03]         every skill with its lesson
    attnlab practice SKILL [--max N]     interactive practice (h = hint, s = show the worked answer,
                                         n = new problem, q = quit)
    attnlab review [--lesson 05]         the spaced reviews that are due, one problem each
    attnlab hint SKILL                   the next hint for the open problem of SKILL
    attnlab progress                     table by lesson and skill: mastered / in progress / due
    attnlab gate LESSON [--override]     the lesson's prerequisite check, as a notebook would run it
    attnlab check NOTEBOOK               grade your copy of an exercise notebook with the grader's checks
    attnlab practice-attach NOTEBOOK     put your practice summary into NOTEBOOK before you submit it
    attnlab regrade-request ASSIGNMENT ITEM --reason TEXT
                                         ask your instructor to look at a graded item again

Input is read line by line from stdin, so piped answers work (``printf '0.5\\nq\\n' | attnlab practice ...``).
Progress goes to ``$ATTNLAB_HOME`` (default ``~/.attnlab``) under the learner ``--learner``, else
``$ATTNLAB_LEARNER`` (see :func:`attnlab.practice.seeding.learner_id`). The flag is passed to each command
explicitly (:func:`_learner`), never written into the process environment.
"""
from __future__ import annotations

import sys
import time

import click
from rich.console import Console
from rich.table import Table


def _console() -> Console:
    # Piped output has no terminal width; use a wide one so names are not cut.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 140)


@click.group()
@click.option("--learner", default=None, help="Learner id (default: $ATTNLAB_LEARNER, the profile, or the OS user).")
@click.version_option(package_name="attnlab")
@click.pass_context
def main(ctx: click.Context, learner: str | None) -> None:
    """attnlab: practise the skills of the attention course and track mastery."""
    ctx.obj = learner.strip() if learner and learner.strip() else None


def _learner() -> str | None:
    """The ``--learner`` of this command line (``None``: the usual order, environment first)."""
    return click.get_current_context().find_root().obj


def _store():
    """The progress store of this command line's learner."""
    from attnlab.practice import ProgressStore
    from attnlab.practice.seeding import as_learner_id

    learner = _learner()
    return ProgressStore(learner=as_learner_id(learner) if learner else None)


@main.command()
@click.option("--lesson", default=None, help="Only this lesson, e.g. 03.")
def skills(lesson: str | None) -> None:
    """List every skill with its lesson."""
    from attnlab.practice import all_skills, lesson_id

    table = Table(title="attnlab skills")
    for col in ("lesson", "skill", "title", "answer"):
        table.add_column(col)
    chosen = [s for s in all_skills() if lesson is None or s.lesson == lesson_id(lesson)]
    for s in chosen:
        table.add_row(s.lesson, s.name, s.title, s.kind)
    console = _console()
    console.print(table)
    console.print(f"{len(chosen)} skills.")


@main.command()
def progress() -> None:
    """Show progress by lesson and skill."""
    from attnlab.practice import all_skills
    from attnlab.practice import mastery

    store = _store()
    n = mastery.mastery_threshold()
    table = Table(title=f"Progress of {store.learner}")
    for col in ("lesson", "skill", "status", "run", "answers", "hints", "review due"):
        table.add_column(col)
    counts: dict[str, int] = {}
    for s in all_skills():
        rec = store.get(s.name)
        state = mastery.status(store, s.name)
        counts[state] = counts.get(state, 0) + 1
        due = ""
        if rec.mastered and rec.due_at is not None:
            day = time.strftime("%Y-%m-%d", time.localtime(rec.due_at))
            due = f"lesson {rec.due_lesson} or {day}" if rec.due_lesson else day
        table.add_row(s.lesson, s.name, state, f"{min(rec.streak, n)}/{n}", str(rec.attempts), str(rec.hints), due)
    console = _console()
    for notice in store.notices:
        console.print(f"Note: {notice}")
    console.print(table)
    console.print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


def run_regrade_request(assignment: str, item: str, reason: str, exchange: str | None = None,
                        course_id: str | None = None) -> None:
    """What ``attnlab regrade-request`` does: file the request (:func:`attnlab.regrade.file_request`) in
    the course's inbox (default: this user's nbgrader ``Exchange.root`` and ``course_id``) and say so;
    bad input or an unwritable inbox ends in one sentence (exit 1)."""
    from attnlab.regrade import RegradeError, file_request, nbgrader_setting

    try:
        path = file_request(exchange or nbgrader_setting("Exchange.root"),
                            course_id or nbgrader_setting("CourseDirectory.course_id"), assignment, item, reason)
    except (RegradeError, OSError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"regrade request for {item} of {assignment} received ({path.name}); "
               "you get a notice with your updated feedback")


def run_practice_attach(notebook: str, home: str | None = None, learner: str | None = None) -> None:
    """What ``attnlab practice-attach`` does: write ``learner``'s practice summary into ``notebook``
    (:func:`attnlab.practice.submission.attach`) and say what it holds; a notebook that cannot be read
    ends in one sentence (exit 1)."""
    from attnlab.practice.seeding import as_learner_id
    from attnlab.practice.submission import SummaryError, attach

    try:
        summary = attach(notebook, home=home, learner=as_learner_id(learner) if learner else None)
    except SummaryError as err:
        raise click.ClickException(str(err)) from None
    done = sum(s["mastered"] for s in summary["skills"].values())
    timed = len(summary.get("time_on_task", {}))
    click.echo(f"attached your practice summary ({len(summary['skills'])} skills, {done} mastered; minutes on task for "
               f"{timed} lessons and exercise sets, as your kernel counted them) to {notebook}; "
               "close and reopen it in JupyterLab before editing again, then submit")


@main.command("regrade-request")
@click.argument("assignment")
@click.argument("item")
@click.option("--reason", required=True, help="Why the item deserves another look (up to 2000 characters).")
@click.option("--exchange", default=None, help="The course exchange (default: nbgrader's Exchange.root).")
@click.option("--course", "course_id", default=None, help="Course id (default: nbgrader's course_id).")
def regrade_request(assignment: str, item: str, reason: str, exchange: str | None, course_id: str | None) -> None:
    """Ask for a regrade of ITEM (the id in your feedback) of ASSIGNMENT, with a reason."""
    run_regrade_request(assignment, item, reason, exchange, course_id)


@main.command("practice-attach")
@click.argument("notebook", type=click.Path(exists=True, dir_okay=False))
@click.option("--home", default=None, help="Your attnlab home (default: ATTNLAB_HOME or ~/.attnlab).")
def practice_attach(notebook: str, home: str | None) -> None:
    """Put a summary of your practice progress and time on task into NOTEBOOK before you submit it."""
    run_practice_attach(notebook, home, _learner())


_COMMANDS = "Type an answer; h = hint, s = show the worked answer, n = new problem, q = quit."


def _run_problem(item, *, review: bool = False) -> str:
    """Read lines for the open problem of ``item`` until it is answered right or the learner moves on.
    Returns ``"answered"`` (answered right, or a missed review answered: the review is over), ``"next"``
    (the learner asked for another problem), ``"quit"`` (q, or the end of the input)."""
    echo = click.echo
    while True:
        echo("answer> ", nl=False)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:  # EOF
            echo("")
            return "quit"
        text = line.strip()
        if not text:
            continue
        if text.lower() in ("q", "quit", "exit"):
            return "quit"
        if text.lower() in ("h", "hint", "?"):
            echo(item.hint())
            continue
        if text.lower() in ("s", "show", "answer", "solution"):
            echo(item.worked_answer())
            echo("This problem no longer counts; n for the next one.")
            continue
        if text.lower() in ("n", "next", "new", "skip"):
            return "next"
        feedback = item.check(text)
        if not feedback.readable:
            echo(f"? {feedback.message} Nothing was recorded; type the answer again.")
            continue
        echo(item.feedback_text())
        if feedback.correct:
            return "answered"
        if review:
            echo("Try again if you like (it no longer counts), or n for the next review.")
        else:
            echo("Try again, or n for a new problem (a retry does not count towards mastery).")


def _problem_number(item) -> int:
    """The open problem's number among the problems this learner has been given on the skill (1, 2, ...: it
    goes on from one session to the next)."""
    current = item.store.get(item.skill.name).current
    return 1 if current is None else current + 1


@main.command()
@click.argument("skill")
@click.option("--max", "max_items", type=int, default=None, help="Stop after this many problems.")
@click.option("--until-mastered", is_flag=True, help="Stop as soon as the skill is mastered.")
def practice(skill: str, max_items: int | None, until_mastered: bool) -> None:
    """Practise SKILL interactively: type an answer; h = hint, s = show the worked answer, n = new problem, q = quit."""
    from attnlab.practice import PracticeItem, get_skill

    try:
        get_skill(skill)
    except KeyError as err:
        raise click.UsageError(str(err.args[0])) from None
    item = PracticeItem(skill, store=_store())
    echo = click.echo
    for notice in item.store.notices:
        echo(f"Note: {notice}")
    echo(f"Practising {item.skill.name}: {item.skill.title} (lesson {item.skill.lesson}). {_COMMANDS}")
    shown = 0
    while True:
        shown += 1
        echo(f"\nProblem {_problem_number(item)} of {item.skill.name} ({shown} this session) "
             f"[{item.progress()}]\n{item.prompt}")
        was_mastered = item.mastered
        outcome = _run_problem(item)
        if outcome == "quit":
            break
        if outcome == "answered" and until_mastered and item.mastered and not was_mastered:
            break
        if max_items is not None and shown >= max_items:
            break
        item.next()
    echo(f"Progress on {item.skill.name}: {item.progress()}. Bye!")


@main.command()
@click.option("--lesson", default=None, help="The lesson you are at, e.g. 05 (default: the last one you opened).")
def review(lesson: str | None) -> None:
    """Do the spaced reviews that are due: one fresh problem for each mastered skill whose review is due (by the
    lessons you have reached or by FSRS's days). A miss puts that skill back into practice."""
    from attnlab.practice import PracticeItem
    from attnlab.practice import all_skills, lesson_id, mastery

    store = _store()
    echo = click.echo
    for notice in store.notices:
        echo(f"Note: {notice}")
    try:
        due = mastery.due_reviews(store, lesson_id(lesson) if lesson is not None else None)
    except ValueError as err:
        raise click.BadParameter(f"{err}.", param_hint="--lesson") from None
    if not due:
        upcoming = sorted((store.get(s.name).due_at, s.name) for s in all_skills()
                          if store.get(s.name).mastered and store.get(s.name).due_at is not None)
        nxt = (f" The next one: {upcoming[0][1]} on {time.strftime('%Y-%m-%d', time.localtime(upcoming[0][0]))}"
               "." if upcoming else "")
        echo(f"No reviews are due now.{nxt}")
        return
    echo(f"{len(due)} review{'s' if len(due) != 1 else ''} due: {', '.join(due)}. {_COMMANDS}")
    passed = missed = 0
    for number, name in enumerate(due, start=1):
        item = PracticeItem(name, store=store, review=True)
        echo(f"\nReview {number} of {len(due)}: {item.skill.title} ({name}, lesson {item.skill.lesson})\n"
             f"{item.prompt}")
        outcome = _run_problem(item, review=True)
        rec = store.get(name)
        passed += rec.mastered and outcome == "answered" and bool(item.last and item.last.counted)
        missed += not rec.mastered
        if outcome == "quit":
            break
    left = len(mastery.due_reviews(store, lesson_id(lesson) if lesson is not None else None))
    echo(f"\nReviews passed: {passed}; back in practice: {missed}; still due: {left}. Bye!")


@main.command()
@click.argument("skill")
def hint(skill: str) -> None:
    """Show the next hint for the open problem of SKILL (it then does not count towards mastery)."""
    from attnlab.practice import PracticeItem, get_skill

    try:
        get_skill(skill)
    except KeyError as err:
        raise click.UsageError(str(err.args[0])) from None
    item = PracticeItem(skill, store=_store())
    click.echo(item.prompt)
    click.echo(item.hint())


@main.command()
@click.argument("lesson")
@click.option("--override", is_flag=True, help="Open the lesson regardless (review, instructors).")
def gate(lesson: str, override: bool) -> None:
    """Run the prerequisite check of LESSON (e.g. 03) and print it."""
    from attnlab.course import UnknownLesson
    from attnlab.course import lesson as course_lesson
    from attnlab.practice import gate as run_gate

    try:
        course_lesson(lesson)
    except UnknownLesson as err:
        raise click.BadParameter(f"{err}.", param_hint="LESSON") from None
    run_gate(lesson, override=override, store=_store())


@main.command("check")
@click.argument("notebook", type=click.Path(dir_okay=True, path_type=str))
@click.option("--assignment", "-a", default=None,
              help="The exercise set, e.g. 03_masks (default: read from the file name or its setup cell).")
@click.option("--visible", is_flag=True, help="Run only the notebook's visible test cells.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--learner", "learner", default=None,
              help="Learner id whose by-hand numbers are checked (same as attnlab --learner ID check ...).")
def check_cmd(notebook: str, assignment: str | None, visible: bool, as_json: bool, learner: str | None) -> None:
    """Grade NOTEBOOK (your copy of an exercise set) with the grader's own checks and print each item,
    the written answers apart, and the points it could judge. Nothing is written to the notebook."""
    from attnlab.check import CheckError, SelfCheckMode, run_check

    try:
        who = learner.strip() if learner and learner.strip() else _learner()
        report = run_check(notebook, assignment=assignment, learner=who,
                           mode=SelfCheckMode.VISIBLE if visible else None)
    except CheckError as err:
        raise click.UsageError(str(err)) from None
    click.echo(report.to_json() if as_json else report.text())


if __name__ == "__main__":  # pragma: no cover
    main()
