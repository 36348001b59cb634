#!/usr/bin/env bash
# Idempotent course setup: .venv in the repo, pinned dependencies (constraints.txt),
# attnlab in editable mode, the "attnlab" Jupyter kernel, nbgrader's extensions.
# Re-running is fast: it only reinstalls when pyproject.toml or constraints.txt changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMP="$VENV/.attnlab-setup-stamp"

pick_python() {
  if [ -n "${ATTNLAB_PYTHON:-}" ]; then echo "$ATTNLAB_PYTHON"; return; fi
  for cand in python3.11 python3.12 python3.10 python3; do
    if command -v "$cand" >/dev/null 2>&1 &&
       "$cand" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; then
      echo "$cand"; return
    fi
  done
  echo "attnlab setup: no Python 3.10-3.13 found. Install Python 3.11 (python.org or your package manager) and re-run, or set ATTNLAB_PYTHON=/path/to/python3.11." >&2
  exit 1
}

want="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] &&
   "$VENV/bin/python" -c 'import attnlab' 2>/dev/null; then
  echo "attnlab setup: environment is up to date (.venv)"
  exit 0
fi

PY="$(pick_python)"
if [ ! -x "$VENV/bin/python" ]; then
  echo "attnlab setup: creating .venv with $("$PY" --version 2>&1)"
  "$PY" -m venv "$VENV"
fi

extra=()
# Optional: where PyPI's torch is the CUDA build (Linux), point pip at PyTorch's CPU index.
if [ -n "${ATTNLAB_TORCH_INDEX:-}" ]; then extra+=(--extra-index-url "$ATTNLAB_TORCH_INDEX"); fi

echo "attnlab setup: installing pinned dependencies (constraints.txt); the first run takes a few minutes"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  -c constraints.txt ${extra[@]+"${extra[@]}"} -e ".[dev]" 2> >(grep -v "^WARNING: Location" >&2)

"$VENV/bin/python" -m ipykernel install --sys-prefix --name attnlab \
  --display-name "Python 3 (attnlab)" >/dev/null
# nbgrader 0.9 ships its lab extension prebuilt and enables its server extensions on
# install; make sure they are on, quietly (formgrader, validate_assignment, ...).
"$VENV/bin/jupyter" server extension enable --sys-prefix nbgrader >/dev/null 2>&1 || true

"$VENV/bin/python" -c 'import attnlab, torch; print(f"attnlab setup: done (attnlab {attnlab.__version__}, torch {torch.__version__})")'
echo "$want" > "$STAMP"
