#!/usr/bin/env bash
# Installs Debian's chromium (and fonts for readable screenshots) for the end-to-end browser
# test when they are missing and we can (root + apt-get). Quiet and bounded: at most ~10
# minutes, output in a log file. Never fails the test run: tests/e2e skips, saying why, when
# chromium is absent. Playwright (PyPI) drives this chromium; it never downloads a browser.
set -u
want=()
command -v chromium >/dev/null 2>&1 || want+=(chromium)
# DejaVu covers JupyterLab's UI text; Liberation is metric-compatible with Arial/Helvetica.
[ -d /usr/share/fonts/truetype/dejavu ] || want+=(fonts-dejavu-core)
[ -d /usr/share/fonts/truetype/liberation ] || want+=(fonts-liberation)
if [ "${#want[@]}" -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  if ! command -v chromium >/dev/null 2>&1; then
    echo "ensure_chromium: chromium not installed and cannot apt-get here (needs root + apt-get);" \
         "the browser test will skip. Install it with: sudo apt-get install chromium" >&2
  fi
  exit 0
fi
log="${TMPDIR:-/tmp}/attnlab-ensure-chromium.log"
echo "ensure_chromium: installing ${want[*]} from Debian (once; log: $log)"
export DEBIAN_FRONTEND=noninteractive
{
  timeout 300 apt-get update -qq &&
  timeout 600 apt-get install -y -qq --no-install-recommends "${want[@]}"
} >"$log" 2>&1 || echo "ensure_chromium: apt-get install ${want[*]} failed (see $log);" \
                      "the browser test will skip if chromium is missing" >&2
exit 0
