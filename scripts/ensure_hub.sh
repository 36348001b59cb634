#!/usr/bin/env bash
# Installs what the JupyterHub end-to-end test (tests/hub/) and deploy/jupyterhub/ need, once per
# machine, into $ATTNLAB_HUB_HOME (default /opt/attnlab-hub, root-owned, readable by every user):
#   hub/         the hub's venv: JupyterHub, pinned by deploy/jupyterhub/requirements-hub.txt
#   proxy/       configurable-http-proxy from npm, pinned by deploy/jupyterhub/proxy/package-lock.json
#   course-env/  the shared course environment every user's server runs in: Debian's python3
#                (a Python every user can execute; a pyenv under /root is not), the learner's
#                distribution attnlab installed non-editable with the course's lock (the course
#                library, `attnlab check` with the grader's judging and sandbox, the students'
#                `attnlab regrade-request`; no instructor code, no grader-only package), plus
#                jupyterhub-singleuser and nbgitpuller (deploy/jupyterhub/requirements-singleuser.txt);
#                its defaults are what a student may see: nbgrader's formgrader, create-assignment
#                and course list are off
#   grader-site/ the instructor's distribution attnlab-grader (autograder/pyproject.toml: the grader's
#                upper layers, attnlab-grade) and the distributions it adds to course-env (resolved
#                by pip, at the same pins), installed flat for PYTHONPATH (attnlab_grader's __init__
#                joins its attnlab_grader/ to the package); root-only (0700):
#                deploy/jupyterhub/install.sh copies it into each class, readable by its grader
#                account only, and puts it on PYTHONPATH for the formgrader service and the grader
#   grader-jupyter/  a Jupyter config path that turns them back on, for the formgrader service only
# Idempotent: each part is rebuilt only when its pin files changed (a stamp holds their hash).
# Never fails the test run: tests/hub skips, naming what is missing, when this could not install.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HUB_HOME="${ATTNLAB_HUB_HOME:-/opt/attnlab-hub}"
DEPLOY="$ROOT/deploy/jupyterhub"
PY="${ATTNLAB_HUB_PYTHON:-/usr/bin/python3}"
log="${TMPDIR:-/tmp}/attnlab-ensure-hub.log"
say() { echo "ensure_hub: $*" >&2; }

# --- who sees what (cheap: apply_roles runs on every run) ------------------------------------------
# Students' servers: no instructor menus or endpoints (formgrader, create-assignment, course list).
# The formgrader service runs with JUPYTER_CONFIG_PATH=$HUB_HOME/grader-jupyter, which Jupyter reads
# before the environment's own folder, so there they are on again.
apply_roles() {
  if [ -f "$ENV/.attnlab-stamp" ]; then
    mkdir -p "$ENV/etc/jupyter/labconfig" "$ENV/etc/jupyter/jupyter_server_config.d" \
             "$HUB_HOME/grader-jupyter/labconfig"
    instructor_ext='"@jupyter/nbgrader:formgrader": %s, "@jupyter/nbgrader:create-assignment": %s, "@jupyter/nbgrader:course-list": %s'
    instructor_srv='"nbgrader.server_extensions.formgrader": %s, "nbgrader.server_extensions.course_list": %s'
    # shellcheck disable=SC2059
    printf "{\"disabledExtensions\": {$instructor_ext}}\n" true true true > "$ENV/etc/jupyter/labconfig/page_config.json"
    # shellcheck disable=SC2059
    printf "{\"ServerApp\": {\"jpserver_extensions\": {$instructor_srv}}}\n" false false \
      > "$ENV/etc/jupyter/jupyter_server_config.d/zz-attnlab-students.json"
    # shellcheck disable=SC2059
    printf "{\"disabledExtensions\": {$instructor_ext}}\n" false false false > "$HUB_HOME/grader-jupyter/labconfig/page_config.json"
    # shellcheck disable=SC2059
    printf "{\"ServerApp\": {\"jpserver_extensions\": {$instructor_srv}}}\n" true true \
      > "$HUB_HOME/grader-jupyter/jupyter_server_config.json"
  fi
}

if [ "$(id -u)" != "0" ] && [ ! -w "$(dirname "$HUB_HOME")" ] && [ ! -w "$HUB_HOME" ]; then
  say "cannot write $HUB_HOME (not root); the hub test will skip. Set ATTNLAB_HUB_HOME to a writable folder."
  apply_roles
  exit 0
fi
if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "installing python3-venv from Debian (once)"
    export DEBIAN_FRONTEND=noninteractive
    { timeout 300 apt-get update -qq && timeout 600 apt-get install -y -qq python3-venv; } >>"$log" 2>&1
  fi
  "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1 || { say "$PY cannot create venvs (python3-venv); the hub test will skip"; exit 0; }
fi
mkdir -p "$HUB_HOME" && chmod 755 "$HUB_HOME"
umask 022  # everything readable by every user (the course environment is shared)

stamp_ok() {  # stamp_ok DIR HASH
  [ -f "$1/.attnlab-stamp" ] && [ "$(cat "$1/.attnlab-stamp")" = "$2" ]
}
pipq() { "$@" --quiet --disable-pip-version-check 2> >(grep -v "^WARNING: Location" >&2); }

# --- the hub ------------------------------------------------------------------------------------
want="$(cat "$DEPLOY/requirements-hub.txt" | sha256sum | cut -d' ' -f1)"
if ! stamp_ok "$HUB_HOME/hub" "$want"; then
  say "installing JupyterHub into $HUB_HOME/hub (once; log: $log)"
  rm -rf "$HUB_HOME/hub"
  if "$PY" -m venv "$HUB_HOME/hub" >>"$log" 2>&1 &&
     pipq "$HUB_HOME/hub/bin/pip" install -r "$DEPLOY/requirements-hub.txt" >>"$log" 2>&1; then
    echo "$want" > "$HUB_HOME/hub/.attnlab-stamp"
  else
    say "JupyterHub install failed (see $log); the hub test will skip"
  fi
fi

# --- the proxy ----------------------------------------------------------------------------------
want="$(cat "$DEPLOY/proxy/package.json" "$DEPLOY/proxy/package-lock.json" | sha256sum | cut -d' ' -f1)"
if ! stamp_ok "$HUB_HOME/proxy" "$want"; then
  if command -v npm >/dev/null 2>&1; then
    say "installing configurable-http-proxy into $HUB_HOME/proxy (once)"
    rm -rf "$HUB_HOME/proxy" && mkdir -p "$HUB_HOME/proxy"
    cp "$DEPLOY/proxy/package.json" "$DEPLOY/proxy/package-lock.json" "$HUB_HOME/proxy/"
    if (cd "$HUB_HOME/proxy" && timeout 600 npm ci --no-audit --no-fund --omit=dev) >>"$log" 2>&1; then
      echo "$want" > "$HUB_HOME/proxy/.attnlab-stamp"
    else
      say "npm ci configurable-http-proxy failed (see $log); the hub test will skip"
    fi
  else
    say "npm not found (Debian: apt-get install npm); the hub test will skip"
  fi
fi

code_hash() {
  (cd "$ROOT" && find src autograder/pyproject.toml autograder/attnlab_grader -path autograder/attnlab_grader/tests -prune -o -name __pycache__ -prune -o \
     -type f ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

# --- the shared course environment --------------------------------------------------------------
# the course's pins for this Python: a per-version lock when the course has one, else constraints.txt
pyver="$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
PINS="$ROOT/constraints/py$pyver.txt"
[ -f "$PINS" ] || PINS="$ROOT/constraints.txt"
# (the layout line: a change of what goes where rebuilds existing installs)
want="$({ echo "layout 3: course-env the learner's attnlab, grader-site attnlab-grader and its dependencies"
          cat "$ROOT/pyproject.toml" "$ROOT/autograder/pyproject.toml" "$PINS" "$DEPLOY/requirements-singleuser.txt" \
              "$DEPLOY/nbgrader_config_global.py"; } | sha256sum | cut -d' ' -f1)"
ENV="$HUB_HOME/course-env"
GS="$HUB_HOME/grader-site"

# copy_sources: the package sources both distributions build from, into $HUB_HOME/src (students need
# no clone): pyproject.toml maps autograder/attnlab_grader/ (judging, sandbox) and data/ into the
# learner's attnlab; autograder/pyproject.toml builds attnlab-grader from the same folder
copy_sources() {
  rm -rf "$HUB_HOME/src/src" "$HUB_HOME/src/autograder" "$HUB_HOME/src/build" "$HUB_HOME/src"/*.egg-info &&
  mkdir -p "$HUB_HOME/src/autograder" &&
  cp -r "$ROOT/pyproject.toml" "$ROOT/README.md" "$ROOT/src" "$ROOT/data" "$HUB_HOME/src/" &&
  cp -r "$ROOT/autograder/pyproject.toml" "$ROOT/autograder/README.md" "$ROOT/autograder/attnlab_grader" \
    "$HUB_HOME/src/autograder/" &&
  rm -rf "$HUB_HOME/src/autograder/attnlab_grader/tests"
}

# grader_site_code: the grader's distribution into $GS (its own files only: attnlab_grader/records,
# steps, reports, classroom, its metadata and attnlab-grade), replacing the one there
grader_site_code() {
  rm -rf "$HUB_HOME/src/autograder/build" "$HUB_HOME/src/autograder"/*.egg-info "$GS"/attnlab_grader "$GS"/attnlab_grader-*.dist-info
  pipq timeout 300 "$ENV/bin/pip" install --target "$GS" --no-deps --upgrade "$HUB_HOME/src/autograder" >>"$log" 2>&1
}

# grader_site CONSTRAINTS: the grader's distribution and the distributions it needs beyond what
# course-env holds (pip resolves autograder/pyproject.toml against the installed environment and
# reports what it would add), installed into $GS without dependencies (the report is the whole
# closure) at those versions
grader_site() {
  local report="$HUB_HOME/.grader-report.json" adds
  rm -rf "$GS" "$report" && mkdir -m 700 "$GS" || return 1
  pipq timeout 300 "$ENV/bin/pip" install --dry-run --report "$report" -c "$1" "$HUB_HOME/src/autograder" \
    >>"$log" 2>&1 || return 1
  adds="$("$ENV/bin/python" - "$report" <<'PY'
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    meta = item["metadata"]
    if meta["name"].lower() not in ("attnlab", "attnlab-grader"):  # course-env's, and the local build below
        print(f"{meta['name']}=={meta['version']}")
PY
)" || return 1
  rm -f "$report"
  if [ -n "$adds" ]; then
    # shellcheck disable=SC2086
    pipq timeout 300 "$ENV/bin/pip" install --target "$GS" --no-deps -c "$1" $adds >>"$log" 2>&1 || return 1
  fi
  grader_site_code || return 1
  # with $GS on the path: the grader's distribution and every requirement it names are found, the
  # instructor's commands import (course-env alone has judging and sandbox only), the driver loads
  (cd / && PYTHONPATH="$GS" "$ENV/bin/python" -) >>"$log" 2>&1 <<'PY' || return 1
import importlib.metadata as md
import re
needs = [r for r in md.requires("attnlab-grader") or [] if "extra ==" not in r]
assert needs, "attnlab-grader names no requirement"
for req in needs:
    md.version(re.match(r"[A-Za-z0-9_.\-]+", req).group(0))
import psycopg  # noqa: E402,F401
import attnlab_grader.classroom.cli  # noqa: E402,F401
PY
  # and course-env alone (what students run) has none of the instructor's code
  (cd / && PYTHONPATH="" "$ENV/bin/python" -c 'import importlib.util as u, sys
sys.exit(u.find_spec("attnlab_grader.classroom") is not None)') >>"$log" 2>&1 ||
    { echo "course-env holds the instructor's code (attnlab_grader.classroom)" >>"$log"; return 1; }
  chmod 700 "$GS"
}

if ! stamp_ok "$ENV" "$want" || ! stamp_ok "$GS" "$want"; then
  say "installing the course environment into $ENV with $("$PY" --version 2>&1) (once, a few minutes; log: $log)"
  rm -rf "$ENV" "$GS" "$HUB_HOME/src"
  # non-editable installs from a copy of the package sources (students need no clone)
  copy_sources
  note=""
  if "$PY" -m venv "$ENV" >>"$log" 2>&1; then
    # bounded: on a Python the pins were not made for, pip's backtracking can run for long
    CONS="$PINS"
    if ! pipq timeout 300 "$ENV/bin/pip" install -c "$PINS" "$HUB_HOME/src" \
         -r "$DEPLOY/requirements-singleuser.txt" >>"$log" 2>&1; then
      # the lock may not resolve on an unusual Python; keep the pins that matter to grading
      # and let pip pick the rest (the note is shown by the hub test).
      note="course pins $(basename "$PINS") do not resolve on $("$PY" --version 2>&1); installed with torch/nbgrader/jupyter pins only"
      say "$note"
      grep -iE '^(torch|numpy|nbgrader|jupyterlab|notebook|jupyter[-_]server|ipykernel|nbformat|nbconvert|nbclient|matplotlib|ipywidgets)==' \
        "$PINS" > "$HUB_HOME/core-constraints.txt"
      CONS="$HUB_HOME/core-constraints.txt"
      pipq "$ENV/bin/pip" install -c "$CONS" "$HUB_HOME/src" \
        -r "$DEPLOY/requirements-singleuser.txt" >>"$log" 2>&1 || note="FAILED"
    fi
    if [ "$note" != "FAILED" ] && ! grader_site "$CONS"; then
      say "the grader's distribution (attnlab-grader) and its packages did not install into $GS (see $log)"
      note="FAILED"
    fi
    if [ "$note" != "FAILED" ] && "$ENV/bin/python" -c 'import attnlab, torch, nbgrader, jupyterhub, nbgitpuller' >>"$log" 2>&1; then
      "$ENV/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null 2>&1
      "$ENV/bin/jupyter" server extension enable --sys-prefix nbgrader >/dev/null 2>&1
      "$ENV/bin/jupyter" server extension enable --sys-prefix nbgitpuller >/dev/null 2>&1
      mkdir -p "$ENV/etc/jupyter" && cp "$DEPLOY/nbgrader_config_global.py" "$ENV/etc/jupyter/nbgrader_config.py"
      echo "$note" > "$ENV/.attnlab-note"
      echo "$want" > "$GS/.attnlab-stamp"
      echo "$want" > "$ENV/.attnlab-stamp"
      code_hash > "$ENV/.attnlab-code"
    else
      say "course environment install failed (see $log); the hub test will skip"
    fi
  else
    say "$PY -m venv failed (see $log); the hub test will skip"
  fi
fi

# --- the course's own code, refreshed when this checkout's sources differ from the installed ones
# (a newer library reaches students' servers in course-env, a newer grader formgrader in grader-site;
# the environments themselves are rebuilt only when their pins change, above)
if [ -f "$ENV/.attnlab-stamp" ] && [ "$(cat "$ENV/.attnlab-code" 2>/dev/null)" != "$(code_hash)" ]; then
  say "refreshing attnlab in $ENV and attnlab-grader in $GS from this checkout's sources"
  if copy_sources && pipq timeout 300 "$ENV/bin/pip" install --no-deps --force-reinstall "$HUB_HOME/src" >>"$log" 2>&1 &&
     grader_site_code && chmod 700 "$GS"; then
    code_hash > "$ENV/.attnlab-code"
  else
    say "attnlab or attnlab-grader did not reinstall (see $log); servers and formgrader keep the previous version"
  fi
fi

apply_roles
exit 0
