"""Every role's ``ATTNLAB_*`` declarations, gathered: the learner's, the grader's, the hub's, the setup
scripts' and the test suite's (:data:`ROLES`), each declared beside its own code.

``scripts/render_tables.py`` renders :func:`settings_markdown` (one table per role) into
``docs/settings.md``; ``tests/test_settings.py`` and ``tests/envscan.py`` judge the repository's files by
:func:`declarations` and :func:`role_of` (the role whose code a file is, so whose declarations its reads
must be in).  A variable two roles read is declared by each (type and meaning as that role's code has them);
:func:`problems` fails when the roles disagree on its type.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Role:
    """One role: its ``name`` (the table's heading word), who it is (``title``), the file that declares its
    variables (``home``; imported as ``module`` when that is given, else loaded from the file), and the path
    prefixes of the files that are its code (``owns``; test files belong to ``tests`` wherever they are)."""

    name: str
    title: str
    home: str
    module: str | None
    owns: tuple[str, ...]

    def load(self) -> ModuleType:
        """The declaring module (``VARIABLES``, ``PLATFORM_VARIABLES``, and optionally ``IGNORED``,
        ``DIRECT_READERS``)."""
        return _load(self)


ROLES: tuple[Role, ...] = (
    Role("learner", "the learner: the course library (`attnlab`), the lesson notebooks, `attnlab check`",
         "src/attnlab/settings.py", "attnlab.settings", ("src/", "lessons/", "solutions/", "exercises/")),
    Role("grader", "the grader: `attnlab_grader`, the course's `nbgrader_config.py`, the Slurm array script",
         "autograder/attnlab_grader/records/settings.py", "attnlab_grader.records.settings",
         ("autograder/", "nbgrader_config.py", "deploy/slurm/")),
    Role("hub", "the JupyterHub and Kubernetes recipes (`deploy/`)", "deploy/jupyterhub/settings.py", None,
         ("deploy/",)),
    Role("setup", "the setup scripts (`scripts/`, `start.sh`)", "scripts/setup_settings.py", None,
         ("scripts/", "start.sh")),
    Role("tests", "the test suite and benchmarks (`conftest.py`, `tests/`, the grader's tests, `test.sh`)",
         "tests/suite_settings.py", None, ("tests/", "conftest.py", "test.sh", "benchmarks/")),
)
BY_NAME = {r.name: r for r in ROLES}


@cache
def _load(role: Role) -> ModuleType:
    if role.module:
        try:
            return importlib.import_module(role.module)
        except ImportError:  # this clone's sources, when the packages are not installed
            for folder in ("src", "autograder"):
                if str(ROOT / folder) not in sys.path:
                    sys.path.insert(0, str(ROOT / folder))
            return importlib.import_module(role.module)
    spec = importlib.util.spec_from_file_location(f"_attnlab_{role.name}_settings", ROOT / role.home)
    assert spec and spec.loader, role.home
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def is_test(rel: str) -> bool:
    """Test code: the suites, their helpers and conftest files (they may set the environment)."""
    return rel.startswith("tests/") or "/tests/" in rel or rel.endswith("conftest.py") or rel == "test.sh"


def role_of(rel: str) -> Role:
    """The role whose code the file ``rel`` (from the repository root) is: a test file is the suite's,
    else the role owning the longest matching prefix, else the learner's."""
    if is_test(rel):
        return BY_NAME["tests"]
    owners = [(len(p), r) for r in ROLES for p in r.owns if rel == p or rel.startswith(p)]
    return max(owners, key=lambda o: o[0])[1] if owners else BY_NAME["learner"]


def declarations() -> dict[str, dict[str, object]]:
    """``{name: {role name: Variable}}`` for every declared ``ATTNLAB_*`` variable."""
    out: dict[str, dict[str, object]] = {}
    for role in ROLES:
        for v in role.load().VARIABLES:
            out.setdefault(v.name, {})[role.name] = v
    return out


def platform_variables(role: Role) -> dict[str, str]:
    """The platform's variables ``role``'s code reads directly: name -> who sets it and what it gives."""
    return dict(role.load().PLATFORM_VARIABLES)


def ignored() -> dict[str, str]:
    """Names that are deliberately not settings (tests set them to prove it): name -> why."""
    return {k: v for role in ROLES for k, v in getattr(role.load(), "IGNORED", {}).items()}


def direct_readers() -> dict[str, str]:
    """Files that read ``ATTNLAB_*`` variables from the environment directly: path -> why."""
    return {k: v for role in ROLES for k, v in getattr(role.load(), "DIRECT_READERS", {}).items()}


def homes() -> set[str]:
    """The files that hold declarations (a name found only there is used nowhere)."""
    return {r.home for r in ROLES} | {"docs/settings.md"}


def problems() -> list[str]:
    """What is wrong with the declarations themselves: a name declared twice by one role, a name whose
    roles disagree on its type, a name both declared and ignored, a direct reader another role's file."""
    out = []
    for role in ROLES:
        names = [v.name for v in role.load().VARIABLES]
        out += [f"{role.home}: {n} is declared twice; declare it once" for n in sorted({n for n in names
                                                                                     if names.count(n) > 1})]
    for name, by in sorted(declarations().items()):
        types = {r: v.type for r, v in by.items()}  # type: ignore[attr-defined]
        if len(set(types.values())) > 1:
            out.append(f"{name} has different types in its roles' declarations ({types}); make them agree")
        if name in ignored():
            out.append(f"{name} is declared by {', '.join(by)} and also listed as not a setting (IGNORED)")
    for role in ROLES:
        for path in getattr(role.load(), "DIRECT_READERS", {}):
            if role_of(path) is not role:
                out.append(f"{role.home}: lists {path} as a direct reader, but that file is the {role_of(path).name}'s")
    return out


def settings_markdown() -> str:
    """The Markdown of ``docs/settings.md``'s generated part: one table per role, then the names that are not
    settings and the files that read the environment directly."""
    decl = declarations()
    rows: list[str] = []
    for role in ROLES:
        module = role.load()
        rows += [f"## {role.name}", "", f"Read by {role.title}; declared in `{role.home}`.", "",
                 "| variable | type | default | meaning | also read by |", "|---|---|---|---|---|"]
        for v in sorted(module.VARIABLES, key=lambda v: v.name):
            also = ", ".join(r for r in decl[v.name] if r != role.name) or "-"
            rows.append(f"| `{v.name}` | {v.type} | {v.default} | {v.meaning} | {also} |")
        platform = platform_variables(role)
        if platform:
            rows += ["", "Platform variables its code reads (set by JupyterHub, Jupyter, Kubernetes, Slurm or the "
                     "operating system):", ""]
            rows += [f"- `{name}`: {why}" for name, why in sorted(platform.items())]
        rows.append("")
    rows += ["## Not settings", "", "Ignored on purpose; tests set them to prove it:", ""]
    rows += [f"- `{name}`: {why}" for name, why in sorted(ignored().items())]
    rows += ["", "## Files that read `ATTNLAB_*` variables from the environment directly", "",
             "Each name they read is declared by their role:", ""]
    rows += [f"- `{path}`: {why}" for path, why in sorted(direct_readers().items())]
    return "\n".join(rows) + "\n"
