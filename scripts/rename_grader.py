"""Give the grader an import name of its own: the Python package ``autograder`` becomes ``attnlab_grader``.

``autograder`` is a name another PyPI project owns, so a top-level package of that name clashes in any
environment that has both.  This script moves the grader's code out of the course layout's
``autograder/`` folder into the package folder ``attnlab_grader/`` (same depth in the repository, so
paths computed from ``__file__`` keep their meaning) and rewrites every import, module path, ``-m``
invocation and file path that names the moved code, in every tracked text file.

What stays in ``autograder/``: the grader's documentation (``*.md``) and the course folder
(``autograder/course``, git-ignored).  Everything else there (``*.py``, ``nbgrader_config.py``, the
sub-packages ``sandbox/``, ``instructor/``, ``tests/`` with its fixtures, and any folder or module
added later) moves.

Idempotent: run it again after merging branches that still add or edit files under ``autograder/``;
it moves what is left there and rewrites what still names the old package; a second run changes
nothing.  Run it from anywhere inside the clone to change (the script itself may live elsewhere):

    python3 scripts/rename_grader.py            # move (git mv) and rewrite; then: git add -u && git commit
    python3 scripts/rename_grader.py --check    # change nothing; exit 1, listing what would change, if anything
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

OLD, NEW = "autograder", "attnlab_grader"
#: entries of ``autograder/`` that belong to the course layout, not to the package
STAYS = ("course",)
STAYS_SUFFIXES = (".md",)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def moves(root: Path) -> list[tuple[str, str]]:
    """(old, new) path pairs, relative to ``root``, for every tracked file still to move."""
    pairs = []
    for rel in git(root, "ls-files", "-z", "--", f"{OLD}/").split("\0"):
        if not rel:
            continue
        parts = rel.split("/")
        top = parts[1]
        if len(parts) == 2 and top.endswith(STAYS_SUFFIXES):
            continue
        if len(parts) > 2 and top in STAYS:
            continue
        if not (root / rel).exists():  # deleted in the work tree: nothing to move
            continue
        pairs.append((rel, f"{NEW}/" + "/".join(parts[1:])))
    return pairs


def do_moves(root: Path, pairs: list[tuple[str, str]]) -> None:
    for old, new in pairs:
        dst = root / new
        if dst.exists():
            if dst.read_bytes() == (root / old).read_bytes():
                git(root, "rm", "-q", "--", old)
                continue
            sys.exit(f"rename_grader: both {old} and {new} exist and differ; merge them by hand "
                     f"(keep {new}) and re-run.")
        dst.parent.mkdir(parents=True, exist_ok=True)
        git(root, "mv", "--", old, new)
    # folders left empty (or holding only caches) by the moves
    for folder in sorted((root / OLD).rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if folder.is_dir() and folder.name not in STAYS and not git(root, "ls-files", "--", str(folder)):
            if all(p.name == "__pycache__" or p.suffix == ".pyc" for p in folder.rglob("*")):
                subprocess.run(["rm", "-rf", str(folder)], check=True)


def moved_names(root: Path) -> list[str]:
    """Top-level entries of the package folder: the names a path ``autograder/<name>`` may still use."""
    names = {p.split("/")[1] for p in git(root, "ls-files", "--", f"{NEW}/").splitlines() if p.count("/") >= 1}
    return sorted(names, key=len, reverse=True)


def rules(names: list[str]) -> list[tuple[re.Pattern[str], str]]:
    alt = "|".join(re.escape(n) for n in names) or r"(?!)"
    q = r"""["']"""
    return [
        # module paths: autograder.course, autograder.tests.qa, autograder.__main__, "autograder.*"
        (re.compile(rf"\b{OLD}\.(?!md\b)(?=[A-Za-z_*])"), f"{NEW}."),
        # imports of the package itself
        (re.compile(rf"\b(from|import)(\s+){OLD}\b(?!/)"), rf"\1\2{NEW}"),
        # python -m autograder, and ["-m", "autograder"] in argument lists
        (re.compile(rf"(-m\s+){OLD}\b(?![/.\w-])"), rf"\1{NEW}"),
        (re.compile(rf"""({q}-m{q},\s*)({q}){OLD}\2"""), rf"\1\2{NEW}\2"),
        # file paths of moved code: autograder/tests/..., autograder/nbgrader_config.py, autograder/sandbox
        (re.compile(rf"\b{OLD}/(?=(?:{alt})(?![\w.-]))"), f"{NEW}/"),
        # joined paths: ROOT / "autograder" / "tests", os.path.join(X, "autograder", "nbgrader_config.py")
        (re.compile(rf"""({q}){OLD}\1(\s*[,/]\s*)({q})(?=(?:{alt})\3)"""), rf"\1{NEW}\1\2\3"),
        # the package named in reStructuredText / Markdown code: ``autograder`` / `autograder`
        (re.compile(rf"(``?){OLD}\1(?![\w/])"), rf"\1{NEW}\1"),
    ]


#: literal rewrites for the few places that name the package's folder alone
LITERALS = {
    "pyproject.toml": [(f'"{OLD}"', f'"{NEW}"')],
}
LITERALS_ANY = [
    # the grader's nbgrader config is read from the package folder
    (f'path=str(ROOT / "{OLD}"))', f'path=str(ROOT / "{NEW}"))'),
]


def rewrite(text: str, path: str, compiled: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, repl in compiled:
        text = pattern.sub(repl, text)
    for old, new in LITERALS.get(path, []) + LITERALS_ANY:
        text = text.replace(old, new)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    args = ap.parse_args()
    root = Path(git(Path.cwd(), "rev-parse", "--show-toplevel").strip())  # the clone we are run in
    here = Path(__file__).resolve()
    me = here.relative_to(root).as_posix() if here.is_relative_to(root) else None

    pairs = moves(root)
    if args.check:
        names = sorted({n.split("/")[1] for _, n in pairs} | set(moved_names(root)), key=len, reverse=True)
    else:
        do_moves(root, pairs)
        names = moved_names(root)
    compiled = rules(names)
    changed = []
    for rel in git(root, "ls-files", "-z").split("\0"):
        p = root / rel
        if not rel or rel in (me, "scripts/rename_grader.py") or not p.is_file() or p.is_symlink():
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        new = rewrite(text, rel, compiled)
        if new != text:
            changed.append(rel)
            if not args.check:
                p.write_text(new, encoding="utf-8")
    for old, new in pairs:
        print(f"{'would move' if args.check else 'moved'} {old} -> {new}")
    for rel in changed:
        print(f"{'would rewrite' if args.check else 'rewrote'} {rel}")
    if args.check:
        return 1 if pairs or changed else 0
    print(f"rename_grader: {len(pairs)} files moved, {len(changed)} files rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
