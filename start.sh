#!/usr/bin/env bash
# Set up the course (if needed) and open it in JupyterLab at the first lesson.
#   ./start.sh                  interactive: opens JupyterLab in your browser
#   ./start.sh --check          non-interactive: full setup + headless smoke run, then exit
#                               (same as ATTNLAB_HEADLESS=1 ./start.sh)
#   ./start.sh --site           build the course website if needed (make site) and serve it on a free
#                               localhost port (the address is printed; Ctrl-C stops)
#   ./start.sh --root-dir DIR   serve DIR instead of the clone (same as ATTNLAB_ROOT_DIR=DIR), e.g. a
#                               folder holding an instructor's course folder, so that formgrader can
#                               open it (nbgrader needs the course inside the server's root)
# Other arguments go to `jupyter lab`. nbgrader reads the clone's nbgrader_config.py (defaults) and
# the deployment's own config (/etc/jupyter, ~/.jupyter; ATTNLAB_COURSE, ATTNLAB_EXCHANGE), which wins.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
root_dir="${ATTNLAB_ROOT_DIR:-}" check=0 site=0 rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --site) site=1 ;;
    --root-dir) [ $# -ge 2 ] || { echo "start.sh: --root-dir needs a folder, e.g. --root-dir ~/teaching" >&2; exit 2; }
                root_dir="$2"; shift ;;
    --root-dir=*) root_dir="${1#--root-dir=}" ;;
    *) rest+=("$1") ;;
  esac
  shift
done
if [ -n "$root_dir" ]; then
  [ -d "$root_dir" ] || { echo "start.sh: root folder $root_dir does not exist; create it or pick another with --root-dir" >&2; exit 2; }
  root_dir="$(cd "$root_dir" && pwd)"
else
  root_dir="$ROOT"
fi
if [ "$site" = 1 ]; then
  bash scripts/setup.sh --extras site  # the site builder (Sphinx, myst-nb) on top of the course
  exec .venv/bin/python scripts/build_site.py --serve
fi
bash scripts/setup.sh
# Tools installed in the venv (jupyter, nbgrader, alembic which nbgrader's gradebook calls) come first.
export PATH="$ROOT/.venv/bin:$PATH" VIRTUAL_ENV="$ROOT/.venv"
# The course folder (its SQLite gradebook lives there by default) and the private exchange that
# nbgrader_config.py falls back on (COURSE/.exchange, when no shared one is set up): formgrader cannot
# create the gradebook's folder and treats a missing exchange as absent for its whole session, so
# both are made here, before any server starts (the config file itself creates nothing when loaded).
mkdir -p "${ATTNLAB_COURSE:-$ROOT/autograder/course}" 2>/dev/null || true
if [ -z "${ATTNLAB_EXCHANGE:-}" ] && [ ! -d /usr/local/share/nbgrader/exchange ]; then
  mkdir -p "${ATTNLAB_COURSE:-$ROOT/autograder/course}/.exchange" 2>/dev/null || true
fi
if [ "$check" = 1 ] || [ "${ATTNLAB_HEADLESS:-0}" = "1" ]; then
  exec .venv/bin/python scripts/smoke.py
fi
under() { local r="${2%/}"; case "$1/" in "$r"/*) return 0 ;; *) return 1 ;; esac; }
url=/lab
if under "$ROOT" "$root_dir"; then url="/lab/tree/${ROOT#"$root_dir"}/lessons/00_orientation.ipynb"; url="${url//\/\//\/}"; fi
if [ -n "${ATTNLAB_COURSE:-}" ] && ! under "$(cd "$ATTNLAB_COURSE" 2>/dev/null && pwd || echo "$ATTNLAB_COURSE")" "$root_dir"; then
  echo "start.sh: the course folder $ATTNLAB_COURSE is not inside the server's root $root_dir, so formgrader cannot open it; start with --root-dir set to a folder that contains both" >&2
fi
extra=()
if [ "$(id -u)" = "0" ]; then extra+=(--allow-root); fi  # e.g. inside a container
# cwd stays the clone: nbgrader (formgrader, the assignment list) reads ./nbgrader_config.py.
exec .venv/bin/jupyter lab --ServerApp.root_dir="$root_dir" \
  --LabApp.default_url="$url" ${extra[@]+"${extra[@]}"} ${rest[@]+"${rest[@]}"}
