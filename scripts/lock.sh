#!/usr/bin/env bash
# Regenerate the dependency locks constraints/py<X.Y>.txt with a resolver (uv), one per supported
# Python, each valid from X.Y.0 on, for the base install, every extra (dev, site) and the grader's
# distribution (autograder/pyproject.toml: its dependencies but attnlab itself) together:
#   bash scripts/lock.sh              # every Python in SUPPORTED
#   bash scripts/lock.sh 3.12         # one version (fails, saying so, when no torch CPU wheel exists for it)
# A lock exists only for a Python that has a torch $TORCH CPU wheel where pip looks (PIP_FIND_LINKS,
# pip's find-links, ATTNLAB_TORCH_INDEX): scripts/setup.sh takes the lock for the interpreter it uses
# and refuses, in one sentence, an interpreter without one. Existing pins are kept where they still
# resolve (uv keeps an output file's pins as preferences); ATTNLAB_LOCK_UPGRADE=1 takes the newest.
# uv comes from PATH or is installed once into .attnlab/lock-tools (git-ignored) from PyPI.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUPPORTED="3.11"                 # the Pythons the course claims (README, pyproject, environment.yml agree)
TORCH="2.13.0"                   # the course's torch, the CPU build (a newer or CUDA torch pulls GBs)
versions=("$@"); [ ${#versions[@]} -gt 0 ] || read -r -a versions <<< "$SUPPORTED"

UV="$(command -v uv || true)"
if [ -z "$UV" ]; then
  tools="$ROOT/.attnlab/lock-tools"
  [ -x "$tools/bin/uv" ] || { python3 -m venv "$tools" && "$tools/bin/python" -m pip install --quiet uv; }
  UV="$tools/bin/uv"
fi

# Where the torch CPU wheel is: pip's own configuration (uv does not read pip.conf) and ATTNLAB_TORCH_INDEX.
src=(--index-strategy unsafe-best-match)
links="${PIP_FIND_LINKS:-$(python3 -m pip config get global.find-links 2>/dev/null || true)}"
for l in $links; do src+=(--find-links "$l"); done
[ -z "${ATTNLAB_TORCH_INDEX:-}" ] || src+=(--extra-index-url "$ATTNLAB_TORCH_INDEX")
upgrade=(); [ "${ATTNLAB_LOCK_UPGRADE:-0}" != 1 ] || upgrade=(--upgrade)

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
echo "torch==$TORCH+cpu" > "$tmp/torch-cpu.txt"
# the grader's own dependencies (attnlab, which it pins too, is the project being locked, not on an index)
python3 - autograder/pyproject.toml > "$tmp/grader.txt" <<'PY'
import re, sys, tomllib
deps = tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]
print("\n".join(d for d in deps if re.split(r"[\s\[<>=!~;]", d, maxsplit=1)[0].lower() != "attnlab"))
PY
for v in "${versions[@]}"; do
  out="constraints/py$v.txt"
  [ ! -f "$out" ] || cp "$out" "$tmp/lock.txt"   # the current pins, as preferences
  if ! "$UV" pip compile pyproject.toml "$tmp/grader.txt" --all-extras --quiet --python-version "$v" \
       --python-platform x86_64-manylinux_2_28 -c "$tmp/torch-cpu.txt" "${src[@]}" ${upgrade[@]+"${upgrade[@]}"} \
       --custom-compile-command "bash scripts/lock.sh $v" --no-emit-index-url --no-emit-find-links \
       -o "$tmp/lock.txt"; then
    echo "lock: Python $v does not resolve (above); no torch $TORCH CPU wheel for it? Not writing $out." >&2
    exit 1
  fi
  # The pin names the release (2.13.0); setup.sh asks for its +cpu build on Linux (PyPI's Linux wheel is CUDA).
  sed -e "s/^torch==$TORCH+cpu\$/torch==$TORCH/" \
      -e "s|-c $tmp/torch-cpu.txt|scripts/lock.sh (its CPU build: torch==$TORCH+cpu)|" \
      -e "s|-r $tmp/grader.txt|attnlab-grader (autograder/pyproject.toml)|" "$tmp/lock.txt" > "$out"
  rm -f "$tmp/lock.txt"
  echo "lock: wrote $out ($(grep -c '^[A-Za-z]' "$out") pins)"
done
