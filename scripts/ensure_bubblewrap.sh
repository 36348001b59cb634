#!/usr/bin/env bash
# Installs Debian's bubblewrap (`bwrap`) when it is missing and we can (root + apt-get).
# The grader uses it as its sandbox when it runs as an ordinary user and the kernel's
# unprivileged user namespaces cannot be used directly (see autograder/SECURITY.md);
# the sandbox tests also run the bubblewrap mechanism when it is present.
set -u
command -v bwrap >/dev/null 2>&1 && exit 0
exec bash "$(dirname "$0")/apt_ensure.sh" bubblewrap "the bubblewrap sandbox tests" bubblewrap
