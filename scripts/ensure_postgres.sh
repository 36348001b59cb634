#!/usr/bin/env bash
# Installs Debian's PostgreSQL server binaries for the gradebook-on-PostgreSQL test when
# they are missing and we can (root + apt-get). The test starts its own throwaway cluster on
# loopback (initdb + pg_ctl in a temp folder); no system service is started or changed.
set -u
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && exit 0
done
command -v initdb >/dev/null 2>&1 && exit 0
exec bash "$(dirname "$0")/apt_ensure.sh" postgres "the PostgreSQL gradebook test" postgresql
