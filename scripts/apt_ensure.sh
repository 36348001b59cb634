#!/usr/bin/env bash
# apt_ensure.sh TAG WHAT_SKIPS PACKAGE...
# Installs Debian PACKAGEs for an optional test when we can (root + apt-get): quiet and bounded
# (apt-get update <= 5 min, install <= 10 min), output in $TMPDIR/attnlab-ensure-TAG.log.
# Never fails the test run: without the packages, WHAT_SKIPS skips and says why.
# Called by ensure_{bubblewrap,chromium,postgres,slurm}.sh once they found something missing.
set -u
tag="$1" skips="$2"; shift 2
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_$tag: $* not installed and cannot apt-get here (needs root + apt-get);" \
       "$skips will skip. Install with: sudo apt-get install $*" >&2
  exit 0
fi
log="${TMPDIR:-/tmp}/attnlab-ensure-$tag.log"
echo "ensure_$tag: installing $* from Debian (once; log: $log)"
export DEBIAN_FRONTEND=noninteractive
{
  timeout 300 apt-get update -qq &&
  timeout 600 apt-get install -y -qq --no-install-recommends "$@"
} >"$log" 2>&1 || echo "ensure_$tag: apt-get install $* failed (see $log); $skips will skip" >&2
exit 0
