#!/usr/bin/env bash
# One-machine attnlab class on JupyterHub (see README.md next to this file).
#
#   install.sh --instructors LIST --graders LIST --students LIST --port N [--start | --restart]
#   install.sh --uninstall
#
# Run as root. LISTs are comma-separated names of existing Unix accounts (they log in with their
# PAM passwords). Idempotent: a second run changes only what differs (group members, students),
# never the course folder, the gradebook or the exchange. --start starts the hub (or recovers it
# after a crash: this class's leftover proxy, formgrader and culler, found by the PID files and the
# owners recorded for them, are stopped first); --restart restarts a running hub. Users' servers
# and files survive both, and a new --port. --uninstall stops what install.sh started and removes
# what it made (recorded in its manifest), never the given users.
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
PROXY_PIDFILE="$STATE/jupyterhub-proxy.pid"   # written by JupyterHub (ConfigurableHTTPProxy.pid_file)
CULLER_PIDFILE="$STATE/idle-culler.pid"       # written by the culler's start line (jupyterhub_config.py)
FG_PIDFILE="$SRV/grader/.formgrader.pid"      # written by formgrader's start line, as the grader account
UNIT="attnlab-hub-$COURSE"
UNIT_FILE="/etc/systemd/system/$UNIT.service"

say() { echo "install.sh: $*"; }
die() { echo "install.sh: $*" >&2; exit 2; }
usage() {
  cat >&2 <<EOF
usage: install.sh --instructors LIST --graders LIST --students LIST --port N [--start | --restart]
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
cmdline() { { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null || true; }  # empty when gone
owner_uid() { { awk '/^Uid:/ {print $2}' "/proc/$1/status"; } 2>/dev/null || true; }
# recorded PID FILE UID TEXT: the pid in FILE when that process runs as UID and its command line
# has TEXT (a pid reused by another program is not ours), else nothing
recorded() {
  local pid; pid="$({ head -c 20 "$1"; } 2>/dev/null || true)"; pid="${pid//[[:space:]]/}"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  [ "$(owner_uid "$pid")" = "$2" ] && [[ "$(cmdline "$pid")" == *"$3"* ]] && echo "$pid"
  return 0
}
hub_pid() { recorded "$PIDFILE" 0 "jupyterhub -f $STATE/"; }  # this class's hub (background mode)
stop_pid() {  # TERM, then KILL after $2 seconds (default 10)
  kill -TERM "$1" 2>/dev/null || return 0
  local i; for ((i = 0; i < ${2:-10} * 10; i++)); do alive "$1" || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}
# what a hub that died leaves running: its proxy (root), the formgrader service (the grader account)
# and the idle culler (root); each is stopped by its recorded PID and owner, never by a name match.
# Users' servers stay: the next hub finds them through its database.
stop_orphans() {
  local pid what gid
  gid="$(id -u "$GRADER" 2>/dev/null || echo none)"
  for what in "proxy:$PROXY_PIDFILE:0:configurable-http-proxy" "idle culler:$CULLER_PIDFILE:0:jupyterhub-idle-culler" \
              "formgrader:$FG_PIDFILE:$gid:jupyterhub-singleuser"; do
    IFS=: read -r name file uid text <<< "$what"
    pid="$(recorded "$file" "$uid" "$text")"
    if [ -n "$pid" ]; then
      say "stopping the $name left by the hub of course '$COURSE' (pid $pid)"
      stop_pid "$pid"
    fi
  done
}
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }  # not a zombie
# put the freshly made folder NEW in place of DEST, unless DEST already holds the same files: a
# grading run working in DEST (its cwd, its imports) keeps it through a re-run of install.sh
replace_if_changed() {
  if [ -d "$2" ] && diff -rq --no-dereference "$1" "$2" >/dev/null 2>&1; then rm -rf "$1"
  else rm -rf "$2" && mv "$1" "$2"; fi
}
hub_running() {
  if systemd_runs && [ -f "$UNIT_FILE" ]; then systemctl is-active --quiet "$UNIT"; else [ -n "$(hub_pid)" ]; fi
}

# ------------------------------------------------------------------------------------------ args
INSTRUCTORS="" GRADERS="" STUDENTS="" PORT="" START=0 RESTART=0 UNINSTALL=0 HAVE_I=0 HAVE_G=0 HAVE_S=0
while [ $# -gt 0 ]; do
  case "$1" in
    --instructors) [ $# -ge 2 ] || usage; INSTRUCTORS="$2"; HAVE_I=1; shift 2 ;;
    --graders) [ $# -ge 2 ] || usage; GRADERS="$2"; HAVE_G=1; shift 2 ;;
    --students) [ $# -ge 2 ] || usage; STUDENTS="$2"; HAVE_S=1; shift 2 ;;
    --port) [ $# -ge 2 ] || usage; PORT="$2"; shift 2 ;;
    --start) START=1; shift ;;
    --restart) START=1; RESTART=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    -h|--help) usage ;;
    *) die "unknown option '$1'; see install.sh --help." ;;
  esac
done
[ "$(id -u)" = 0 ] || die "run me as root (I create accounts, groups and folders owned by them)."
[[ "$COURSE" =~ ^[a-z][a-z0-9-]{0,30}$ ]] || die "course id '$COURSE' must be lower-case letters, digits and '-', starting with a letter."

# -------------------------------------------------------------------------------------- uninstall
stop_hub() {  # the hub (it stops its proxy and services), then whatever it left; users' servers stay
  if systemd_runs && [ -f "$UNIT_FILE" ]; then
    systemctl stop "$UNIT" >/dev/null 2>&1 || true
  fi
  local pid; pid="$(hub_pid)"
  [ -n "$pid" ] && stop_pid "$pid" 30
  stop_orphans
  return 0
}

# "PID WHAT" lines for each running process of this class: the hub, what it started (by their PID
# files and owners, as stop_orphans), the users' servers (the pids the hub recorded in its database,
# LocalProcessSpawner, each only when it runs as that user)
class_processes() {
  local gid pid name uid db="$STATE/jupyterhub.sqlite"
  gid="$(id -u "$GRADER" 2>/dev/null || echo none)"
  pid="$(hub_pid)"; [ -z "$pid" ] || echo "$pid hub"
  pid="$(recorded "$PROXY_PIDFILE" 0 configurable-http-proxy)"; [ -z "$pid" ] || echo "$pid proxy"
  pid="$(recorded "$CULLER_PIDFILE" 0 jupyterhub-idle-culler)"; [ -z "$pid" ] || echo "$pid idle culler"
  pid="$(recorded "$FG_PIDFILE" "$gid" jupyterhub-singleuser)"; [ -z "$pid" ] || echo "$pid formgrader"
  [ -f "$db" ] || return 0
  while read -r name pid; do
    uid="$(id -u "$name" 2>/dev/null || echo none)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && [ "$(owner_uid "$pid")" = "$uid" ]; then echo "$pid server of $name"; fi
  done < <(python3 - "$db" 2>/dev/null <<'PY' || true
import json, sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for name, state in con.execute("SELECT users.name, spawners.state FROM spawners JOIN users ON users.id = spawners.user_id"):
    state = json.loads(state) if isinstance(state, str) and state else {}
    print(name, state.get("pid") or "")
PY
)
}

# uninstall: every process of this class at once (TERM, then KILL after 10 s), and under systemd the
# hub's unit and the users' server units
stop_everything() {
  local pid what pids=() i left name
  if systemd_runs; then
    [ -f "$UNIT_FILE" ] && systemctl stop "$UNIT" >/dev/null 2>&1
    for name in $(getent group "$STUDENTS_GROUP" "$STAFF_GROUP" | cut -d: -f4 | tr ',' ' '); do
      systemctl stop "jupyter-$COURSE-$name" >/dev/null 2>&1 || true
    done
  fi
  while read -r pid what; do
    say "stopping the $what (pid $pid)"
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  done < <(class_processes)
  for ((i = 0; i < 100; i++)); do
    left=0; for pid in "${pids[@]}"; do alive "$pid" && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do alive "$pid" && kill -KILL "$pid" 2>/dev/null; done
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
  stop_everything
  if [ -f "$UNIT_FILE" ] && made "unit $UNIT_FILE"; then
    systemctl disable "$UNIT" >/dev/null 2>&1 || true
    rm -f "$UNIT_FILE"; systemctl daemon-reload 2>/dev/null || true
  fi
  if grep -q "^postgres-cluster " "$MANIFEST"; then  # this class's own cluster (never another's)
    set -- $(sed -n 's/^postgres-cluster //p' "$MANIFEST" | head -1)
    if pg_dropcluster --stop "$1" "$2" >/dev/null 2>&1; then say "removed the PostgreSQL cluster $1/$2 (the gradebook)"
    else say "could not remove the PostgreSQL cluster $1/$2; remove it with pg_dropcluster --stop $1 $2."; fi
  elif made "postgres-db $DBNAME"; then  # a gradebook in the machine's shared cluster: the database only
    runuser -u postgres -- psql -q -c "DROP DATABASE IF EXISTS \"$DBNAME\"" >/dev/null 2>&1 || say "could not drop database $DBNAME (is PostgreSQL running?); drop it by hand."
    made "postgres-role $GRADER" && { runuser -u postgres -- psql -q -c "DROP ROLE IF EXISTS \"$GRADER\"" >/dev/null 2>&1 || true; }
  fi
  local line
  while IFS= read -r line; do  # students' homes back to their modes before the install
    case "$line" in "home-mode "*)
      set -- $line
      [ -d "$3" ] && chmod "$2" "$3" ;;
    esac
  done < "$MANIFEST"
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
old_port=""
[ -f "$ENVFILE" ] && old_port="$(sed -n 's/^ATTNLAB_HUB_URL=.*://p' "$ENVFILE")"
if [ "$START" = 1 ] && ! hub_running; then
  stop_orphans  # a hub that died: its proxy still holds the port, its formgrader and culler still run
fi
if [ "$START" = 1 ] && { ! hub_running || [ "$old_port" != "$PORT" ]; } && port_busy "$PORT"; then
  die "port $PORT on $BIND_IP is already in use by another program; choose a free --port."
fi
# the source checkout holds solutions/ and the grading specs: nobody but its owner and group may read it
if [ -d "$ROOT/solutions" ] && python3 - "$ROOT/solutions" <<'PY'
import os, stat, sys
path = os.path.abspath(sys.argv[1])
d, ok = path, True
while True:  # every folder on the way must let others through, and solutions/ must be readable
    mode = os.stat(d).st_mode
    ok = ok and bool(mode & stat.S_IXOTH) and (d != path or bool(mode & stat.S_IROTH))
    if d == os.path.dirname(d):
        break
    d = os.path.dirname(d)
sys.exit(0 if ok else 1)
PY
then
  chmod o-rwx "$ROOT"
  say "made the checkout $ROOT private (chmod o-rwx): it holds solutions/ and the grading specs, which students must not read."
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

# the grader's distribution (attnlab-grader: the instructor's code) and its packages (the PostgreSQL
# driver, copydetect, LTI): not in the course environment students run in, but a copy for this class
# readable by the grader account only
# (root-owned, group = the grader's own group, nothing for others), on PYTHONPATH only for the
# formgrader service and the grader's shell; refreshed from the built one on every run
GRADER_SITE="$SRV/grader-site"
rm -rf "$GRADER_SITE.new" && mkdir -m 700 "$GRADER_SITE.new"
cp -a "$HUB_HOME/grader-site/." "$GRADER_SITE.new/"
chown -R root:"$(id -gn "$GRADER")" "$GRADER_SITE.new"
chmod -R u+rwX,g+rX,g-w,o-rwx "$GRADER_SITE.new"
chmod 750 "$GRADER_SITE.new"
replace_if_changed "$GRADER_SITE.new" "$GRADER_SITE"

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
replace_if_changed "$CLONE.new" "$CLONE"

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
rm -rf "$work/lessons/src"  # the notebooks' text sources: authors', not students' (they get the notebooks)
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

# nbgrader's filesystem exchange: world-writable with the sticky bit (nbgrader's release insists on
# 0777), and this course's folder made here, owned by the grader account with nbgrader's own modes,
# before any student could make it (a student's folder there would block every release); a folder
# of that name that is not the grader's is moved out of the exchange (kept, root-only) and reported
EX="$SRV/exchange"
[ -d "$EX" ] || { mkdir -m 755 "$EX"; }  # not yet writable by others while the course folder is made
if [ -e "$EX/$COURSE" ] && [ "$(stat -c %U "$EX/$COURSE")" != "$GRADER" ]; then
  mkdir -p -m 700 "$SRV/exchange-moved"
  moved="$SRV/exchange-moved/$COURSE.$(date -u +%Y%m%dT%H%M%SZ)"
  mv "$EX/$COURSE" "$moved"
  say "moved $EX/$COURSE (made by $(stat -c %U "$moved"), not by the grader account) to $moved; the course's exchange folder is made anew."
fi
mkdir -p "$EX/$COURSE"
for sub in outbound inbound feedback; do mkdir -p "$EX/$COURSE/$sub"; done
chown "$GRADER:$GRADER" "$EX/$COURSE" "$EX/$COURSE/outbound" "$EX/$COURSE/inbound" "$EX/$COURSE/feedback"
chmod 755 "$EX/$COURSE" "$EX/$COURSE/outbound"
chmod 2733 "$EX/$COURSE/inbound"   # students write their submissions, nobody lists them
chmod 711 "$EX/$COURSE/feedback"   # feedback under unguessable hashes
# the regrade inbox (autograder/attnlab_grader/classroom/regrade.py): students drop requests, cannot list or
# read them; each request gets the staff group (setgid), which the grader account reads them by
mkdir -p "$EX/$COURSE/regrade"
chown "$GRADER:$STAFF_GROUP" "$EX/$COURSE/regrade"
chmod 3733 "$EX/$COURSE/regrade"
chmod 1777 "$EX"

# the grader's home: the course folder, its nbgrader settings, a shell that finds the tools
GH="$SRV/grader"
mkdir -p "$GH/course/source"
cp "$CLONE/deploy/jupyterhub/grader_nbgrader_config.py" "$GH/nbgrader_config.py"

# the gradebook: PostgreSQL in a cluster of this class's own (attnlab-<course>: its own port, data
# folder and server process, started and stopped with this class only), peer authentication (the
# grader's own unix identity, no password)
PG_CLUSTER="attnlab-$COURSE"
cluster_port() { pg_lsclusters -h 2>/dev/null | awk -v v="$1" -v c="$2" '$1 == v && $2 == c {print $3}'; }
if [ -f "$ENVFILE" ] && grep -q '^ATTNLAB_DB=' "$ENVFILE"; then
  DB="$(sed -n 's/^ATTNLAB_DB=//p' "$ENVFILE")"  # never switch the gradebook of a class
else
  if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "ok installed" &&
     apt-cache policy postgresql 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    say "installing PostgreSQL from Debian's package"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || true
  fi
  if dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "ok installed" && command -v pg_createcluster >/dev/null; then
    pg_ver="$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1)"
    if [ -z "$(cluster_port "$pg_ver" "$PG_CLUSTER")" ]; then
      pg_createcluster "$pg_ver" "$PG_CLUSTER" >/dev/null 2>&1 \
        || die "could not create the PostgreSQL cluster $pg_ver/$PG_CLUSTER (pg_createcluster failed); see /var/log/postgresql/ and run install.sh again."
      record "postgres-cluster $pg_ver $PG_CLUSTER"
    fi
    DB="postgresql:///$DBNAME?port=$(cluster_port "$pg_ver" "$PG_CLUSTER")"
  else
    DB="sqlite:///$GH/course/gradebook.db"
  fi
fi
if [[ "$DB" == postgresql* ]]; then
  pg_port="${DB##*port=}"; [[ "$DB" == *"?port="* ]] || pg_port=5432
  if grep -q "^postgres-cluster " "$MANIFEST"; then  # this class's own cluster: started when down
    read -r pg_ver pg_name <<< "$(sed -n 's/^postgres-cluster //p' "$MANIFEST" | head -1)"
    if ! pg_ctlcluster "$pg_ver" "$pg_name" status >/dev/null 2>&1; then
      if systemd_runs; then systemctl start "postgresql@$pg_ver-$pg_name" >/dev/null 2>&1 || true; fi
      pg_ctlcluster "$pg_ver" "$pg_name" status >/dev/null 2>&1 || pg_ctlcluster "$pg_ver" "$pg_name" start >/dev/null 2>&1 \
        || die "the gradebook's PostgreSQL cluster $pg_ver/$pg_name does not start; see /var/log/postgresql/postgresql-$pg_ver-$pg_name.log."
    fi
  fi
  pg() { runuser -u postgres -- psql -p "$pg_port" -Atq "$@"; }
  pg -c "SELECT 1" >/dev/null 2>&1 || die "the gradebook's PostgreSQL server (port $pg_port) does not answer; start it and run install.sh again."
  if [ "$(pg -c "SELECT 1 FROM pg_roles WHERE rolname='$GRADER'")" != 1 ]; then
    runuser -u postgres -- createuser -p "$pg_port" "$GRADER"; record "postgres-role $GRADER"
  fi
  if [ "$(pg -c "SELECT 1 FROM pg_database WHERE datname='$DBNAME'")" != 1 ]; then
    runuser -u postgres -- createdb -p "$pg_port" -O "$GRADER" "$DBNAME"; record "postgres-db $DBNAME"
    pg -d "$DBNAME" -c "REVOKE ALL ON DATABASE \"$DBNAME\" FROM PUBLIC" >/dev/null
  fi
  say "gradebook: PostgreSQL database $DBNAME in this class's own cluster (port $pg_port; owner $GRADER, local socket, peer authentication)"
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
ATTNLAB_LESSONS_REPO=file://$LESSONS
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
export PYTHONPATH="$GRADER_SITE"  # the grader's distribution and packages (students' servers do not have them)
export ATTNLAB_CLONE="$CLONE" ATTNLAB_COURSE="$GH/course" ATTNLAB_COURSE_ID="$COURSE"
export ATTNLAB_SOLUTIONS="$CLONE/solutions"  # the grading specs: the installed grader has no clone around it
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
bash "$CLONE/deploy/jupyterhub/install_site.sh" "$CLONE" "$SRV/site" "$SRV/site-service"  # the course website (course_site.py)
settings_after="$(cat "$ENVFILE" "$STATE/jupyterhub_config.py" | sha256sum)"
if [ "$START" = 1 ] && [ "$RESTART" = 0 ] && hub_running && [ "$settings_before" = "$settings_after" ]; then
  say "the hub of course '$COURSE' already runs with these settings; left running (users' servers untouched)"
elif [ "$START" = 1 ]; then
  if hub_running; then
    if [ "$RESTART" = 1 ]; then say "restarting the hub of course '$COURSE' (users' servers keep running)"
    else say "the hub of course '$COURSE' runs with other settings; restarting it (users' servers keep running)"; fi
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
  # formgrader (the hub starts it as a service): any HTTP answer below 500 on its own port
  fg="http://127.0.0.1:$FORMGRADER_PORT/services/$COURSE/api"
  until python3 - "$fg" 2>/dev/null <<'PY'
import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=2)
except urllib.error.HTTPError as e:
    sys.exit(e.code >= 500)
PY
  do
    [ "$SECONDS" -lt "$deadline" ] || die "formgrader (the hub service '$COURSE') did not answer $fg within 180 s; see $STATE/jupyterhub.log."
    sleep 0.2
  done
  say "the hub of course '$COURSE' answers at http://$BIND_IP:$PORT/ (put a TLS reverse proxy in front; see README.md)"
else
  if hub_running && [ "$settings_before" != "$settings_after" ]; then
    say "installed; the running hub keeps its old settings until install.sh ... --restart"
  else
    say "installed; start the hub with the same command and --start"
  fi
fi
say "lessons link for students: $LINK"
