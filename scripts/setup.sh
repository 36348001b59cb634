#!/usr/bin/env bash
# Idempotent course setup: .venv in the repo, the dependency lock for its Python
# (constraints/py<X.Y>.txt, made by scripts/lock.sh), torch's CPU build, attnlab in editable mode,
# the "attnlab" Jupyter kernel, nbgrader's extensions. Works for any user who owns the clone.
# Re-running is fast: it only reinstalls when a pyproject.toml or the lock changed, or an extra is new.
#   bash scripts/setup.sh                     a learner's environment (the distribution attnlab: the
#                                             course, `attnlab check`, JupyterLab); what start.sh runs
#   bash scripts/setup.sh --extras grader     + the instructor's distribution attnlab-grader
#                                             (autograder/pyproject.toml: the grader's upper layers,
#                                             `attnlab-grade`, PostgreSQL gradebook, similarity, LTI),
#                                             editable too; --extras grader,dev,site is everything
#                                             (./test.sh); the other extras are pyproject.toml's
#   bash scripts/setup.sh --dry-run [--extras LIST]   pick the Python and its lock, create .venv, and
#                                             let pip resolve without installing (what would be installed)
# Interpreter: .venv's if it exists, else $ATTNLAB_PYTHON, else the first of python3.X (X with a lock)
# and python3 on PATH that has a lock. Linux gets torch's +cpu build (PyPI's Linux torch is the CUDA
# one): from pip's configuration (find-links / index) or ATTNLAB_TORCH_INDEX (e.g. PyTorch's CPU index).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMP="$VENV/.attnlab-setup-stamp"
die() { echo "attnlab setup: $*" >&2; exit 1; }
DRY=0 EXTRAS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --extras) [ $# -ge 2 ] || die "--extras needs a list, e.g. --extras grader,dev"; EXTRAS="$2"; shift ;;
    --extras=*) EXTRAS="${1#--extras=}" ;;
    *) die "unknown option '$1'; use --extras LIST (grader, dev, site) and/or --dry-run." ;;
  esac
  shift
done
# "grader" is the grader's distribution (autograder/), the others pyproject.toml's extras
[ -z "$EXTRAS" ] || known="grader,$(sed -n '/^\[project.optional-dependencies\]/,/^\[/s/^\([a-z][a-z0-9_-]*\) = \[.*/\1/p' pyproject.toml | paste -sd, -)"
for e in ${EXTRAS//,/ }; do
  case ",$known," in *",$e,"*) ;; *) die "there is no extra '$e'; there are: ${known//,/, }." ;; esac
done
EXTRAS="$(echo "${EXTRAS//,/ }" | tr ' ' '\n' | sed '/^$/d' | sort -u | paste -sd, -)"
root_extras="$(echo "${EXTRAS//,/ }" | tr ' ' '\n' | grep -vx grader | paste -sd, - || true)"
target="."; [ -z "$root_extras" ] || target=".[$root_extras]"
grader=0; case ",$EXTRAS," in *,grader,*) grader=1 ;; esac
supported() { (cd constraints && ls py*.txt) | sed 's/^py//; s/\.txt$//' | sort -V | paste -sd/ -; }
# "3.11.2" for a working interpreter, nothing (and non-zero) otherwise
py_version() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null; }
lock_of() { local mm; mm="$(echo "$1" | cut -d. -f1,2)"; echo "constraints/py$mm.txt"; }
# One sentence on why interpreter $1 (version $2) cannot be used, or nothing if it can.
why_not() {
  local v="$2" lo; lo="$(supported | cut -d/ -f1)"
  if [ -z "$v" ]; then echo "$1 is not a working Python interpreter"
  elif [ -f "$(lock_of "$v")" ]; then return 0
  elif [ "$(printf '%s\n%s\n' "$v" "$lo" | sort -V | head -1)" = "$v" ]; then
    echo "Python $v ($1) is too old: attnlab runs on Python $(supported)"
  else
    echo "Python $v ($1) is not supported: attnlab's dependency locks, with torch $(torch_pin) (CPU build), are for Python $(supported) only"
  fi
}
torch_pin() { grep -h '^torch==' constraints/py*.txt | head -1 | cut -d= -f3; }
hint="install Python $(supported) (python.org, pyenv or your package manager) or set ATTNLAB_PYTHON=/path/to/python$(supported | cut -d/ -f1)"

pick_python() {
  local cand v why found=()
  if [ -n "${ATTNLAB_PYTHON:-}" ]; then
    why="$(why_not "$ATTNLAB_PYTHON" "$(py_version "$ATTNLAB_PYTHON")")"
    [ -z "$why" ] || die "$why; $hint."
    echo "$ATTNLAB_PYTHON"; return
  fi
  for cand in $(supported | tr / '\n' | sed 's/^/python/') python3; do
    command -v "$cand" >/dev/null 2>&1 || continue
    v="$(py_version "$cand")" || continue
    if [ -z "$(why_not "$cand" "$v")" ]; then command -v "$cand"; return; fi
    found+=("$cand $v")
  done
  local seen="none"; [ ${#found[@]} -eq 0 ] || seen="$(IFS=,; echo "${found[*]}" | sed 's/,/, /g')"
  die "no Python $(supported) found (found: $seen); $hint."
}

if [ -x "$VENV/bin/python" ]; then
  PY="$VENV/bin/python"; V="$(py_version "$PY")" || V=""
  why="$(why_not .venv/bin/python "$V")"
  [ -z "$why" ] || die "$why; remove .venv and re-run (with ATTNLAB_PYTHON=/path/to/python$(supported | cut -d/ -f1) if needed)."
else
  PY="$(pick_python)"; V="$(py_version "$PY")"
fi
LOCK="$(lock_of "$V")"
TORCH="$(grep '^torch==' "$LOCK" | cut -d= -f3)"

# The stamp: the hash of what was installed from, then the extras installed with it (one a line).
want="$(cat pyproject.toml autograder/pyproject.toml "$LOCK" | sha256sum | cut -d' ' -f1)"
have_extras=""
if [ -f "$STAMP" ] && [ "$(head -1 "$STAMP")" = "$want" ]; then have_extras="$(tail -n +2 "$STAMP" | paste -sd, -)"; fi
missing_extras=""
for e in ${EXTRAS//,/ }; do case ",$have_extras," in *",$e,"*) ;; *) missing_extras+="$e " ;; esac; done
if [ "$DRY" = 0 ] && [ -f "$STAMP" ] && [ "$(head -1 "$STAMP")" = "$want" ] && [ -z "$missing_extras" ] &&
   "$VENV/bin/python" -c 'import attnlab' 2>/dev/null; then
  echo "attnlab setup: environment is up to date (.venv, Python $V, $LOCK${have_extras:+, extras $have_extras})"
  exit 0
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "attnlab setup: creating .venv with Python $V ($PY)"
  if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    die "$PY cannot create a virtual environment (on Debian/Ubuntu: apt-get install python3-venv)."
  fi
fi

pip=("$VENV/bin/python" -m pip --disable-pip-version-check)
extra=()
if [ -n "${ATTNLAB_TORCH_INDEX:-}" ]; then extra+=(--extra-index-url "$ATTNLAB_TORCH_INDEX"); fi
torch_req="torch==$TORCH"
if [ "$(uname -s)" = Linux ]; then torch_req="torch==$TORCH+cpu"; fi
no_torch="no $torch_req wheel for Python $V where pip looks; point pip at one (ATTNLAB_TORCH_INDEX=https://download.pytorch.org/whl/cpu, or PIP_FIND_LINKS=DIR holding the wheel) and re-run."
quiet() { grep -v -e "^WARNING: Location" -e "^WARNING: Skipping .* due to invalid metadata" >&2 || true; }

if [ "$DRY" = 1 ]; then
  echo "attnlab setup: dry run: resolving $LOCK + $torch_req for Python $V (nothing is installed)"
  grader_req=(); [ "$grader" = 0 ] || grader_req=(-e ./autograder)
  "${pip[@]}" install --dry-run --ignore-installed -c "$LOCK" ${extra[@]+"${extra[@]}"} \
    "$torch_req" -e "$target" ${grader_req[@]+"${grader_req[@]}"} 2> >(quiet) | grep -e "^Would install" -e "^ERROR" ||
    die "pip could not resolve $LOCK for Python $V (above)."
  exit 0
fi

# torch first, alone: its CPU build is the one thing that may need another source.
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('torch') != '${torch_req#torch==}')" 2>/dev/null; then
  echo "attnlab setup: installing $torch_req (CPU build)"
  "${pip[@]}" install --quiet --no-deps ${extra[@]+"${extra[@]}"} "$torch_req" 2> >(quiet) || die "$no_torch"
fi
echo "attnlab setup: installing the pinned dependencies ($LOCK${EXTRAS:+; extras $EXTRAS}); the first run takes a few minutes"
"${pip[@]}" install --quiet -c "$LOCK" ${extra[@]+"${extra[@]}"} -e "$target" 2> >(quiet)
if [ "$grader" = 1 ]; then
  # the grader's distribution, editable in setuptools' compat mode: autograder/ on sys.path, so that
  # attnlab_grader/ is one regular package (its __init__ is attnlab's; the default mode's finder would
  # make it a namespace package in front of that __init__)
  "${pip[@]}" install --quiet -c "$LOCK" ${extra[@]+"${extra[@]}"} --config-settings editable_mode=compat \
    -e ./autograder 2> >(quiet)
fi

"$VENV/bin/python" -m ipykernel install --sys-prefix --name attnlab \
  --display-name "Python 3 (attnlab)" >/dev/null
# nbgrader 0.9 ships its lab extension prebuilt and enables its server extensions on
# install; make sure they are on, quietly (formgrader, validate_assignment, ...).
"$VENV/bin/jupyter" server extension enable --sys-prefix nbgrader >/dev/null 2>&1 || true

"$VENV/bin/python" -c 'import attnlab, torch, sys; print(f"attnlab setup: done (Python {sys.version.split()[0]}, attnlab {attnlab.__version__}, torch {torch.__version__})")'
# extras installed earlier from the same pyproject and lock are still there
{ echo "$want"; echo "${have_extras//,/ } ${EXTRAS//,/ }" | tr ' ' '\n' | sed '/^$/d' | sort -u; } > "$STAMP"
