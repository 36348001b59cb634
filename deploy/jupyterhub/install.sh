#!/usr/bin/env bash
# One-machine attnlab class on JupyterHub (see README.md next to this file).
#
#   install.sh --instructors LIST --graders LIST --students LIST --port N [--start]
#   install.sh --uninstall
#
# Run as root. LISTs are comma-separated names of existing Unix accounts (they log in with their
# PAM passwords). Idempotent: a second run changes only what differs (group members, students),
# never the course folder, the gradebook or the exchange. --uninstall stops what install.sh
# started and removes what it made (recorded in its manifest), never the given users.
#
# Settings read from the environment (defaults in brackets):
#   ATTNLAB_COURSE_ID [attnlab]            nbgrader course id; names the grader account
#                                          grader-<course>, the groups <course>-students and
#                                          formgrade-<course>, the gradebook database
#   ATTNLAB_HUB_HOME  [/opt/attnlab-hub]   the environments (scripts/ensure_hub.sh builds them)
#   ATTNLAB_SRV       [/srv/attnlab-<course>]  everything of this class (see README.md)
#   ATTNLAB_BIND_IP   [127.0.0.1]          where the hub listens (TLS belongs to a reverse proxy)
#   ATTNLAB_CULL_TIMEOUT [3600]            seconds of inactivity before a user's server is stopped
#   ATTNLAB_MEM_LIMIT [2G], ATTNLAB_CPU_LIMIT [1]  per-user limits (enforced under systemd)
# (the last three are kept in the class's settings: a later run without them keeps their values)
set -euo pipefail
umask 022

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
COURSE="${ATTNLAB_COURSE_ID:-attnlab}"
HUB_HOME="${ATTNLAB_HUB_HOME:-/opt/attnlab-hub}"
SRV="${ATTNLAB_SRV:-/srv/attnlab-$COURSE}"
BIND_IP="${ATTNLAB_BIND_IP:-127.0.0.1}"
CULL_TIMEOUT="${ATTNLAB_CULL_TIMEOUT:-}"
GRADER="grader-$COURSE"
STUDENTS_GROUP="$COURSE-students"
STAFF_GROUP="formgrade-$COURSE"
DBNAME="${COURSE//-/_}_gradebook"
STATE="$SRV/hub"
MANIFEST="$STATE/manifest"
ENVFILE="$STATE/class.env"
PIDFILE="$STATE/jupyterhub.pid"
UNIT="attnlab-hub-$COURSE"
UNIT_FILE="/etc/systemd/system/$UNIT.service"

say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 2; }
usage() {
  cat >&2 <<EOF
usage: install.sh --instructors LIST --graders LIST --students LIST --port N [--start]
       install.sh --uninstall
LISTs are comma-separated existing Unix accounts; see deploy/jupyterhub/README.md.
EOF
  exit 2
}
systemd_runs() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }
made() { [ -f "$MANIFEST" ] && grep -qxF "$1" "$MANIFEST"; }
record() { made "$1" || echo "$1" >> "$MANIFEST"; }
port_busy() { python3 - "$1" "$BIND_IP" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind((sys.argv[2], int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)
PY
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
hub_pid() {  # the pid of this class's running hub (background mode), else nothing
  [ -f "$PIDFILE" ] || return 0
  local pid; pid="$(cat "$PIDFILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "jupyterhub -f $STATE/" && echo "$pid"
  return 0
}
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }  # not a zombie
hub_running() {
  if systemd_runs && [ -f "$UNIT_FILE" ]; then systemctl is-active --quiet "$UNIT"; else [ -n "$(hub_pid)" ]; fi
}

# ------------------------------------------------------------------------------------------ args
INSTRUCTORS="" GRADERS="" STUDENTS="" PORT="" START=0 UNINSTALL=0 HAVE_I=0 HAVE_G=0 HAVE_S=0
while [ $# -gt 0 ]; do
  case "$1" in
    --instructors) [ $# -ge 2 ] || usage; INSTRUCTORS="$2"; HAVE_I=1; shift 2 ;;
    --graders) [ $# -ge 2 ] || usage; GRADERS="$2"; HAVE_G=1; shift 2 ;;
    --students) [ $# -ge 2 ] || usage; STUDENTS="$2"; HAVE_S=1; shift 2 ;;
    --port) [ $# -ge 2 ] || usage; PORT="$2"; shift 2 ;;
    --start) START=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    -h|--help) usage ;;
    *) die "unknown option '$1'; see install.sh --help." ;;
  esac
done
[ "$(id -u)" = 0 ] || die "run me as root (I create accounts, groups and folders owned by them)."
[[ "$COURSE" =~ ^[a-z][a-z0-9-]{0,30}$ ]] || die "course id '$COURSE' must be lower-case letters, digits and '-', starting with a letter."

# -------------------------------------------------------------------------------------- uninstall
stop_hub() {
  if systemd_runs && [ -f "$UNIT_FILE" ]; then
    systemctl disable --now "$UNIT" >/dev/null 2>&1 || true
  fi
  local pid; pid="$(hub_pid)"
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true  # the hub stops the users' servers, its services, its proxy
    for _ in $(seq 1 600); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    [ -d "/proc/$pid" ] && kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  # what a killed hub may leave: its proxy (a session of its own, pid in its pid file) and the
  # servers/services it started (they carry this hub's API URL in their environment)
  if [ -f "$STATE/jupyterhub-proxy.pid" ]; then
    pid="$(cat "$STATE/jupyterhub-proxy.pid" 2>/dev/null || true)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q configurable-http-proxy; then
      kill -TERM "$pid" 2>/dev/null || true
    fi
  fi
  if [ -f "$ENVFILE" ]; then
    local hub_port; hub_port="$(sed -n 's/^ATTNLAB_HUB_PORT=//p' "$ENVFILE")"
    [ -n "$hub_port" ] && for p in /proc/[0-9]*; do
      tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -qx "JUPYTERHUB_API_URL=http://127.0.0.1:$hub_port/hub/api" \
        && kill -KILL "${p#/proc/}" 2>/dev/null || true
    done
  fi
  return 0
}

uninstall() {
  if [ ! -f "$MANIFEST" ]; then
    local left=""
    getent passwd "$GRADER" >/dev/null && left="$left account $GRADER,"
    getent group "$STAFF_GROUP" >/dev/null && left="$left group $STAFF_GROUP,"
    getent group "$STUDENTS_GROUP" >/dev/null && left="$left group $STUDENTS_GROUP,"
    [ -e "$SRV" ] && left="$left folder $SRV,"
    if [ -n "$left" ]; then
      say "no install record for course '$COURSE' in $MANIFEST: left in place (not made by install.sh, or its record is gone):${left%,}."
    else
      say "nothing installed for course '$COURSE'; nothing to do."
    fi
    return 0
  fi
  say "stopping the hub of course '$COURSE'"
  stop_hub
  [ -f "$UNIT_FILE" ] && made "unit $UNIT_FILE" && { rm -f "$UNIT_FILE"; systemctl daemon-reload 2>/dev/null || true; }
  if made "postgres-db $DBNAME"; then
    runuser -u postgres -- psql -q -c "DROP DATABASE IF EXISTS \"$DBNAME\"" >/dev/null 2>&1 || say "could not drop database $DBNAME (is PostgreSQL running?); drop it by hand."
  fi
  if made "postgres-role $GRADER"; then
    runuser -u postgres -- psql -q -c "DROP ROLE IF EXISTS \"$GRADER\"" >/dev/null 2>&1 || true
  fi
  local line
  while IFS= read -r line; do  # students' homes back to their modes before the install
    case "$line" in "home-mode "*)
      set -- $line
      [ -d "$3" ] && chmod "$2" "$3" ;;
    esac
  done < "$MANIFEST"
  if grep -q "^postgres-started " "$MANIFEST"; then
    local others
    others="$(runuser -u postgres -- psql -Atq -c "SELECT count(*) FROM pg_database WHERE datname NOT IN ('postgres','template0','template1')" 2>/dev/null || echo 1)"
    if [ "$others" = "0" ]; then
      local ver; ver="$(sed -n 's/^postgres-started //p' "$MANIFEST" | head -1)"
      if systemd_runs; then systemctl stop postgresql >/dev/null 2>&1 || true
      else pg_ctlcluster $ver stop >/dev/null 2>&1 || true; fi
    fi
  fi
  if made "user $GRADER" && getent passwd "$GRADER" >/dev/null; then
    pkill -KILL -u "$GRADER" 2>/dev/null || true  # our own service account: only our processes
    for _ in $(seq 1 50); do pgrep -u "$GRADER" >/dev/null || break; sleep 0.1; done
    userdel "$GRADER" >/dev/null 2>&1 || say "could not remove the account $GRADER; remove it with userdel $GRADER."
    getent group "$GRADER" >/dev/null && groupdel "$GRADER" 2>/dev/null || true
  fi
  for g in "$STAFF_GROUP" "$STUDENTS_GROUP"; do
    made "group $g" && getent group "$g" >/dev/null && { groupdel "$g" || say "could not remove group $g."; }
  done
  for d in course-env grader-site hub proxy src grader-jupyter; do
    made "env $HUB_HOME/$d" && rm -rf "${HUB_HOME:?}/$d"
  done
  made "env-dir $HUB_HOME" && rmdir "$HUB_HOME" 2>/dev/null || true
  rm -rf "${SRV:?}"
  say "uninstalled course '$COURSE' (the users themselves are kept)."
}

if [ "$UNINSTALL" = 1 ]; then
  [ "$HAVE_I$HAVE_G$HAVE_S" = 000 ] && [ -z "$PORT" ] && [ "$START" = 0 ] || die "--uninstall takes no other option."
  uninstall
  exit 0
fi

# ------------------------------------------------------------------------------ check every input
[ "$HAVE_I$HAVE_G$HAVE_S" = 111 ] && [ -n "$PORT" ] || usage
[[ "$PORT" =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1 ] && [ "$PORT" -le 65535 ] || die "--port '$PORT' is not a TCP port (1-65535)."
split() { tr ',' '\n' <<< "$1" | sed 's/^ *//; s/ *$//' | grep -v '^$' || true; }
declare -A ROLE_OF=()
for role in instructors graders students; do
  case $role in instructors) list="$INSTRUCTORS" ;; graders) list="$GRADERS" ;; students) list="$STUDENTS" ;; esac
  for u in $(split "$list"); do
    getent passwd "$u" >/dev/null || die "no Unix account '$u' (from --$role); create it first (adduser $u) or leave it out, then run install.sh again."
    [ "$(id -u "$u")" != 0 ] || die "'$u' (from --$role) is root; a class member must be an ordinary account."
    [ "$u" != "$GRADER" ] || die "'$u' is the grader account install.sh makes; list people, not it."
    [ -z "${ROLE_OF[$u]:-}" ] || die "'$u' is in both --${ROLE_OF[$u]} and --$role; give each account one role."
    ROLE_OF[$u]=$role
  done
done
[ -z "$CULL_TIMEOUT" ] || [[ "$CULL_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "ATTNLAB_CULL_TIMEOUT '$CULL_TIMEOUT' is not a whole number of seconds; set it to e.g. 3600."
[ -n "$(split "$INSTRUCTORS")" ] || die "--instructors is empty; name at least one instructor."
missing=()  # Debian packages whose programs are needed (npm and python3-venv only to build the envs)
command -v git >/dev/null || missing+=(git)
command -v node >/dev/null || missing+=(nodejs)
[ -f "$HUB_HOME/proxy/.attnlab-stamp" ] || command -v npm >/dev/null || missing+=(npm)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || [ -f "$HUB_HOME/course-env/.attnlab-stamp" ] || missing+=(python3-venv)
[ ${#missing[@]} = 0 ] || die "missing Debian package(s): ${missing[*]}; install them with 'apt-get install -y ${missing[*]}' and run install.sh again."
if [ "$START" = 1 ] && ! hub_running && port_busy "$PORT"; then
  die "port $PORT on $BIND_IP is already in use by another program; choose a free --port."
fi
if [ -f "$ENVFILE" ]; then
  old_port="$(sed -n 's/^ATTNLAB_HUB_URL=.*://p' "$ENVFILE")"
  if [ "$old_port" != "$PORT" ] && hub_running; then
    die "the hub of course '$COURSE' runs on port $old_port; stop it (install.sh --uninstall keeps nothing, or kill it) before moving it to $PORT."
  fi
fi

# ------------------------------------------------------------------------------------ install
mkdir -p "$SRV" "$STATE"
chmod 755 "$SRV"; chmod 700 "$STATE"
touch "$MANIFEST"; chmod 600 "$MANIFEST"

# the environments: JupyterHub, the proxy, the course environment (pinned; built once)
for d in "$HUB_HOME" "$HUB_HOME/hub" "$HUB_HOME/proxy" "$HUB_HOME/course-env" "$HUB_HOME/grader-site" \
         "$HUB_HOME/src" "$HUB_HOME/grader-jupyter"; do
  [ -e "$d" ] || record "$( [ "$d" = "$HUB_HOME" ] && echo "env-dir $d" || echo "env $d")"
done
ATTNLAB_HUB_HOME="$HUB_HOME" bash "$ROOT/scripts/ensure_hub.sh"
for f in hub/bin/jupyterhub hub/bin/jupyterhub-idle-culler proxy/node_modules/.bin/configurable-http-proxy \
         course-env/.attnlab-stamp grader-site/.attnlab-stamp; do
  [ -e "$HUB_HOME/$f" ] || die "the environments in $HUB_HOME are incomplete ($f is missing; see the ensure_hub log above); fix that and run install.sh again."
done

# groups: the students (PAM may let them in), the staff (instructors and graders: formgrader)
for g in "$STUDENTS_GROUP" "$STAFF_GROUP"; do
  if ! getent group "$g" >/dev/null; then groupadd "$g"; record "group $g"; fi
done
join() { split "$1" | paste -sd, -; }
STAFF="$(join "$INSTRUCTORS,$GRADERS")"
gpasswd -M "$(join "$STUDENTS")" "$STUDENTS_GROUP" >/dev/null
gpasswd -M "$STAFF,$GRADER" "$STAFF_GROUP" >/dev/null 2>&1 || true  # the grader account joins below

# the grader account: formgrader runs as it; its home (0700) holds the course folder
if ! getent passwd "$GRADER" >/dev/null; then
  useradd --system --home-dir "$SRV/grader" --no-create-home --shell /bin/bash --user-group "$GRADER"
  record "user $GRADER"
fi
gpasswd -M "$STAFF,$GRADER" "$STAFF_GROUP" >/dev/null

# the grader's packages (attnlab's [grader] extra: the PostgreSQL driver, copydetect, LTI): not in the
# course environment students run in, but a copy for this class readable by the grader account only
# (root-owned, group = the grader's own group, nothing for others), on PYTHONPATH only for the
# formgrader service and the grader's shell; refreshed from the built one on every run
GRADER_SITE="$SRV/grader-site"
rm -rf "$GRADER_SITE.new" && mkdir -m 700 "$GRADER_SITE.new"
cp -a "$HUB_HOME/grader-site/." "$GRADER_SITE.new/"
chown -R root:"$(id -gn "$GRADER")" "$GRADER_SITE.new"
chmod -R u+rwX,g+rX,g-w,o-rwx "$GRADER_SITE.new"
chmod 750 "$GRADER_SITE.new"
rm -rf "$GRADER_SITE" && mv "$GRADER_SITE.new" "$GRADER_SITE"

# students' homes: private (their feedback and work are theirs); the old mode comes back at uninstall
for u in $(split "$STUDENTS"); do
  home="$(getent passwd "$u" | cut -d: -f6)"
  [ -d "$home" ] || continue
  if ! grep -q "^home-mode [0-7]* $home\$" "$MANIFEST"; then
    echo "home-mode $(stat -c %a "$home") $home" >> "$MANIFEST"
  fi
  chmod 700 "$home"
done

# the course repository, readable by the staff only (it holds solutions/ and the grading specs)
# (refreshed from this checkout on every run: a newer checkout brings its lessons and grading steps)
CLONE="$SRV/course-repo"
rm -rf "$CLONE.new" && mkdir -m 750 "$CLONE.new" && chown root:"$STAFF_GROUP" "$CLONE.new"
tar -C "$ROOT" --exclude=./.git --exclude=./.venv --exclude=./artifacts --exclude=__pycache__ \
    --exclude=.pytest_cache --exclude=node_modules --exclude=./course -cf - . | tar -C "$CLONE.new" -xf -
chown -R root:"$STAFF_GROUP" "$CLONE.new"
chmod -R u+rwX,g+rX,g-w,o-rwx "$CLONE.new"
chmod 750 "$CLONE.new"
rm -rf "$CLONE" && mv "$CLONE.new" "$CLONE"

# the lessons, as a git repository without solutions (nbgitpuller clones it as each student);
# a later run with newer lessons adds a commit, which nbgitpuller merges into students' copies
LESSONS="$SRV/lessons.git"
work="$(mktemp -d)"
git_="git -c user.name=attnlab -c user.email=attnlab@localhost -c init.defaultBranch=main"
if [ -d "$LESSONS" ]; then
  $git_ clone -q "$LESSONS" "$work/lessons"
  find "$work/lessons" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
else
  mkdir "$work/lessons" && $git_ -C "$work/lessons" init -q
fi
cp -r "$CLONE/lessons/." "$work/lessons/"
find "$work/lessons" \( -name __pycache__ -o -name .ipynb_checkpoints -o -name solutions -o -name grading.py \) \
  -prune -exec rm -rf {} +
$git_ -C "$work/lessons" add -A
if ! $git_ -C "$work/lessons" diff --cached --quiet 2>/dev/null || [ ! -d "$LESSONS" ]; then
  $git_ -C "$work/lessons" commit -qm "attnlab lessons"
  if [ -d "$LESSONS" ]; then $git_ -C "$work/lessons" push -q origin HEAD:main
  else $git_ clone -q --bare "$work/lessons" "$LESSONS"; fi
fi
rm -rf "$work"
chmod -R a+rX "$LESSONS"
# git (run by nbgitpuller as each student) reads this instead of /etc/gitconfig, which it includes
printf '[include]\n\tpath = /etc/gitconfig\n[safe]\n\tdirectory = %s\n' "$LESSONS" > "$SRV/gitconfig"
chmod 644 "$SRV/gitconfig"

# nbgrader's filesystem exchange: world-writable with the sticky bit (nbgrader sets the rest)
mkdir -p "$SRV/exchange"; chmod 1777 "$SRV/exchange"

# the grader's home: the course folder, its nbgrader settings, a shell that finds the tools
GH="$SRV/grader"
mkdir -p "$GH/course/source"
cp "$CLONE/deploy/jupyterhub/grader_nbgrader_config.py" "$GH/nbgrader_config.py"

# the gradebook: PostgreSQL (peer authentication: the grader's own unix identity, no password)
if [ -f "$ENVFILE" ] && grep -q '^ATTNLAB_DB=' "$ENVFILE"; then
  DB="$(sed -n 's/^ATTNLAB_DB=//p' "$ENVFILE")"  # never switch the gradebook of a class
else
  if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "ok installed" &&
     apt-cache policy postgresql 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    say "installing PostgreSQL from Debian's package"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || true
  fi
  if dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "ok installed"; then
    DB="postgresql:///$DBNAME"
  else
    DB="sqlite:///$GH/course/gradebook.db"
  fi
fi
if [[ "$DB" == postgresql* ]]; then
  if ! runuser -u postgres -- psql -Atq -c "SELECT 1" >/dev/null 2>&1; then
    if systemd_runs; then systemctl start postgresql
    else
      ver="$(pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | head -1)"
      [ -n "$ver" ] || die "PostgreSQL is installed but has no cluster; create one (pg_createcluster --start 15 main) and run install.sh again."
      pg_ctlcluster $ver start
      record "postgres-started $ver"
    fi
  fi
  if [ "$(runuser -u postgres -- psql -Atq -c "SELECT 1 FROM pg_roles WHERE rolname='$GRADER'")" != 1 ]; then
    runuser -u postgres -- createuser "$GRADER"; record "postgres-role $GRADER"
  fi
  if [ "$(runuser -u postgres -- psql -Atq -c "SELECT 1 FROM pg_database WHERE datname='$DBNAME'")" != 1 ]; then
    runuser -u postgres -- createdb -O "$GRADER" "$DBNAME"; record "postgres-db $DBNAME"
    runuser -u postgres -- psql -q -d "$DBNAME" -c "REVOKE ALL ON DATABASE \"$DBNAME\" FROM PUBLIC" >/dev/null
  fi
  say "gradebook: PostgreSQL database $DBNAME (owner $GRADER, local socket, peer authentication)"
else
  say "gradebook: SQLite at $GH/course/gradebook.db (Debian's postgresql package is not available here)"
fi

# the hub's settings for this class (read by jupyterhub_config.py; ports kept across runs)
keep() { [ -f "$ENVFILE" ] && sed -n "s/^$1=//p" "$ENVFILE" | grep . || "${@:2}"; }
settings_before="$({ cat "$ENVFILE" "$STATE/jupyterhub_config.py" 2>/dev/null || true; } | sha256sum)"
HUB_PORT="$(keep ATTNLAB_HUB_PORT free_port)"
PROXY_API_PORT="$(keep ATTNLAB_PROXY_API_PORT free_port)"
FORMGRADER_PORT="$(keep ATTNLAB_FORMGRADER_PORT free_port)"
CULL_TIMEOUT="${CULL_TIMEOUT:-$(keep ATTNLAB_CULL_TIMEOUT echo 3600)}"
cat > "$ENVFILE.new" <<EOF
ATTNLAB_COURSE_ID=$COURSE
ATTNLAB_HUB_HOME=$HUB_HOME
ATTNLAB_HUB_STATE=$STATE
ATTNLAB_HUB_URL=http://$BIND_IP:$PORT
ATTNLAB_HUB_PORT=$HUB_PORT
ATTNLAB_PROXY_API_PORT=$PROXY_API_PORT
ATTNLAB_FORMGRADER_PORT=$FORMGRADER_PORT
ATTNLAB_INSTRUCTORS=$(join "$INSTRUCTORS")
ATTNLAB_GRADERS=$(join "$GRADERS")
ATTNLAB_STUDENTS_GROUP=$STUDENTS_GROUP
ATTNLAB_GRADER_USER=$GRADER
ATTNLAB_GRADER_HOME=$GH
ATTNLAB_GRADER_SITE=$GRADER_SITE
ATTNLAB_EXCHANGE=$SRV/exchange
ATTNLAB_CLONE=$CLONE
ATTNLAB_GIT_SYSTEM_CONFIG=$SRV/gitconfig
ATTNLAB_DB=$DB
ATTNLAB_CULL_TIMEOUT=$CULL_TIMEOUT
ATTNLAB_SITE_DIR=$SRV/site
ATTNLAB_SITE_PORT=$(keep ATTNLAB_SITE_PORT free_port)
ATTNLAB_MEM_LIMIT=${ATTNLAB_MEM_LIMIT:-$(keep ATTNLAB_MEM_LIMIT echo 2G)}
ATTNLAB_CPU_LIMIT=${ATTNLAB_CPU_LIMIT:-$(keep ATTNLAB_CPU_LIMIT echo 1)}
EOF
chmod 600 "$ENVFILE.new"; mv "$ENVFILE.new" "$ENVFILE"

# the grader's login shell (formgrader's terminal): the course tools first on PATH, private files
cat > "$GH/.profile" <<EOF
# written by install.sh: formgrader's terminal finds python, nbgrader and the grader
[ -f ~/.bashrc ] && . ~/.bashrc
EOF
cat > "$GH/.bashrc" <<EOF
# written by install.sh
export PATH="$HUB_HOME/course-env/bin:/usr/local/bin:/usr/bin:/bin"
export PYTHONPATH="$GRADER_SITE"  # the grader's packages (students' servers do not have them)
export ATTNLAB_CLONE="$CLONE" ATTNLAB_COURSE="$GH/course" ATTNLAB_COURSE_ID="$COURSE"
export ATTNLAB_EXCHANGE="$SRV/exchange" ATTNLAB_DB="$DB"
umask 077
EOF
chown -R "$GRADER:$GRADER" "$GH"
chmod 700 "$GH"

# ------------------------------------------------------------------------------------ start
LINK="/hub/user-redirect/git-pull?repo=file://$LESSONS&branch=main&targetpath=lessons&urlpath=lab/tree/lessons"
start_cmd=("$HUB_HOME/hub/bin/jupyterhub" -f "$STATE/jupyterhub_config.py")
# the configuration the hub reads: a root-owned copy (the repository may be private or move)
cp "$CLONE/deploy/jupyterhub/jupyterhub_config.py" "$STATE/jupyterhub_config.py"
bash "$CLONE/deploy/jupyterhub/install_site.sh" "$CLONE" "$SRV/site" "$STATE"  # the course website (course_site.py)
settings_after="$(cat "$ENVFILE" "$STATE/jupyterhub_config.py" | sha256sum)"
if [ "$START" = 1 ] && hub_running && [ "$settings_before" = "$settings_after" ]; then
  say "the hub of course '$COURSE' already runs with these settings; left running (users' servers untouched)"
elif [ "$START" = 1 ]; then
  if hub_running; then
    say "the hub of course '$COURSE' runs with other settings; restarting it (users' servers stop, their files stay)"
    stop_hub
  fi
  started=""
  if systemd_runs; then
    cat > "$UNIT_FILE" <<EOF
[Unit]
Description=JupyterHub for the attnlab course $COURSE
After=network.target postgresql.service

[Service]
EnvironmentFile=$ENVFILE
WorkingDirectory=$STATE
ExecStart=${start_cmd[*]}
Restart=always

[Install]
WantedBy=multi-user.target
EOF
    record "unit $UNIT_FILE"
    systemctl daemon-reload && systemctl enable --now "$UNIT" >/dev/null && systemctl restart "$UNIT"
  else
    (cd "$STATE" && set -a && . "$ENVFILE" && set +a &&
     exec setsid "${start_cmd[@]}" >> "$STATE/jupyterhub.log" 2>&1 < /dev/null) &
    started=$!
    echo "$started" > "$PIDFILE"
  fi
  health="http://127.0.0.1:$PORT/hub/health"
  [ "$BIND_IP" = "0.0.0.0" ] || health="http://$BIND_IP:$PORT/hub/health"
  deadline=$((SECONDS + 180))
  while :; do
    if python3 -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('$health', timeout=2).status != 200)" 2>/dev/null; then
      break
    fi
    if { [ -n "$started" ] && ! alive "$started"; } || { [ -z "$started" ] && ! hub_running; }; then
      if [ -n "$started" ]; then tail -n 30 "$STATE/jupyterhub.log" >&2 || true
      else journalctl -u "$UNIT" -n 30 >&2 || true; fi
      die "the hub exited while starting (its log is above); fix the cause and run install.sh again."
    fi
    [ "$SECONDS" -lt "$deadline" ] || die "the hub did not answer $health within 180 s; see $STATE/jupyterhub.log."
    sleep 0.1
  done
  say "the hub of course '$COURSE' answers at http://$BIND_IP:$PORT/ (put a TLS reverse proxy in front; see README.md)"
else
  say "installed; start the hub with install.sh ... --start (or: cd $STATE && set -a && . $ENVFILE && ${start_cmd[*]})"
fi
say "lessons link for students: $LINK"
