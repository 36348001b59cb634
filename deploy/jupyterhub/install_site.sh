#!/usr/bin/env bash
# The course website for a class's hub (called by install.sh; see course_site.py):
#   install_site.sh CLONE SITE_DIR PROGRAM_DIR
# copies the clone's built site (make site: CLONE/site/_build/html) to SITE_DIR, readable by everyone and
# writable by root only, and the service's program course_site.py to PROGRAM_DIR (0755: the service runs as
# nobody, so neither may sit in the hub's private state folder), beside the site; see the hub's
# configuration. Without a built site the hub runs without the website, and this says how to add it.
set -euo pipefail
[ $# -eq 3 ] || { echo "install_site.sh: give the clone, the site folder and the hub's state folder" >&2; exit 2; }
CLONE="$1" SITE_DIR="$2" PROGRAM_DIR="$3"
BUILT="$CLONE/site/_build/html"
install -d -m 755 "$PROGRAM_DIR"
install -m 644 "$CLONE/deploy/jupyterhub/course_site.py" "$PROGRAM_DIR/course_site.py"
if [ ! -f "$BUILT/index.html" ]; then
  rm -rf "${SITE_DIR:?}"
  echo "install.sh: the course website is not built in $CLONE, so the hub does not serve it; run make site there and install.sh again to add it at /services/course/."
  exit 0
fi
rm -rf "${SITE_DIR:?}.new"
cp -r "$BUILT/." "$SITE_DIR.new/"
chmod -R u=rwX,go=rX "$SITE_DIR.new"
rm -rf "${SITE_DIR:?}" && mv "$SITE_DIR.new" "$SITE_DIR"
echo "install.sh: the course website is served to logged-in users at /services/course/"
