#!/usr/bin/env bash
# Installs Debian's Slurm (slurm-wlm: slurmctld, slurmd, client commands) and munge for the
# Slurm array test when they are missing and we can (root + apt-get). The test starts its own
# single-host munged + slurmctld + slurmd from a generated config in a temp folder and stops
# them; no system service is started or changed (the packages' services are not started
# without systemd, and the test never uses /etc/slurm or /etc/munge).
set -u
missing=0
for b in munged mungekey slurmctld slurmd sbatch squeue scancel scontrol sinfo; do
  command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || missing=1
done
[ "$missing" = 0 ] && exit 0
exec bash "$(dirname "$0")/apt_ensure.sh" slurm "the Slurm array test (tests/slurm)" slurm-wlm munge
