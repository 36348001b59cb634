#!/usr/bin/env bash
# Installs Debian's chromium (and fonts for readable screenshots) for the end-to-end browser
# test when they are missing and we can (root + apt-get). Playwright (PyPI) drives this
# chromium; it never downloads a browser. tests/e2e skips, saying why, when chromium is absent.
set -u
want=()
command -v chromium >/dev/null 2>&1 || want+=(chromium)
# DejaVu covers JupyterLab's UI text; Liberation is metric-compatible with Arial/Helvetica.
[ -d /usr/share/fonts/truetype/dejavu ] || want+=(fonts-dejavu-core)
[ -d /usr/share/fonts/truetype/liberation ] || want+=(fonts-liberation)
if [ "${#want[@]}" -eq 0 ]; then exit 0; fi
exec bash "$(dirname "$0")/apt_ensure.sh" chromium "the browser test" "${want[@]}"
