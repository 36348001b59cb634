#!/usr/bin/env bash
# Installs Debian's bubblewrap (`bwrap`) when it is missing and we can (root + apt-get).
# The grader uses it as its sandbox when it runs as an ordinary user and the kernel's
# unprivileged user namespaces cannot be used directly (see autograder/SECURITY.md);
# the sandbox tests also run the bubblewrap mechanism when it is present.
# Never fails the test run: without bwrap those tests skip, saying why.
set -u
command -v bwrap >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_bubblewrap: bubblewrap not installed and cannot apt-get here (needs root + apt-get);" \
       "the bubblewrap sandbox tests will skip. Install it with: sudo apt-get install bubblewrap" >&2
  exit 0
fi
log="${TMPDIR:-/tmp}/attnlab-ensure-bubblewrap.log"
echo "ensure_bubblewrap: installing bubblewrap from Debian (once; log: $log)"
export DEBIAN_FRONTEND=noninteractive
{
  timeout 300 apt-get update -qq &&
  timeout 300 apt-get install -y -qq --no-install-recommends bubblewrap
} >"$log" 2>&1 || echo "ensure_bubblewrap: apt-get install bubblewrap failed (see $log);" \
                      "the bubblewrap sandbox tests will skip" >&2
exit 0
