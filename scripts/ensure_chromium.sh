#!/usr/bin/env bash
# Installs Debian's chromium for the end-to-end browser test when it is missing and we
# can (root + apt-get). Never fails the test run: tests/e2e skips, saying why, if absent.
set -u
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_chromium: chromium not installed and cannot apt-get here; the browser test will skip" >&2
  exit 0
fi
echo "ensure_chromium: installing Debian's chromium (once)"
export DEBIAN_FRONTEND=noninteractive
timeout 600 apt-get update -qq >/dev/null 2>&1
timeout 900 apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1 ||
  echo "ensure_chromium: apt-get install chromium failed; the browser test will skip" >&2
exit 0
