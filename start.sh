#!/usr/bin/env bash
# Set up the course (if needed) and open it in JupyterLab at the first lesson.
#   ./start.sh            interactive: opens JupyterLab in your browser
#   ./start.sh --check    non-interactive: full setup + headless smoke run, then exit
#                         (same as ATTNLAB_HEADLESS=1 ./start.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# Tools installed in the venv (jupyter, nbgrader, alembic which nbgrader's gradebook calls) come first.
export PATH="$ROOT/.venv/bin:$PATH" VIRTUAL_ENV="$ROOT/.venv"
if [ "${1:-}" = "--check" ] || [ "${ATTNLAB_HEADLESS:-0}" = "1" ]; then
  exec .venv/bin/python scripts/smoke.py
fi
extra=()
if [ "$(id -u)" = "0" ]; then extra+=(--allow-root); fi  # e.g. inside a container
exec .venv/bin/jupyter lab --ServerApp.root_dir="$ROOT" \
  --LabApp.default_url=/lab/tree/lessons/00_orientation.ipynb ${extra[@]+"${extra[@]}"} "$@"
