#!/bin/sh
# The raidd kill campaign's outcome, from run-scenario's output, into the
# "kill-campaign" section of docs/benchmarks.md (bench/md-section.sh).
# Usage: kill-report.sh LOG REPORT.md EXIT-STATUS
set -eu
log=$1 out=$2 rc=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
{
	echo "## raidd killed during create and delete: make check-long"
	echo
	echo "Written by \`make check-long\` ($(date -u +%Y-%m-%d), $(git -C "$src" describe --always --dirty 2>/dev/null)), on the"
	echo "virtual board (qemu TCG, 2 bays of 256 MiB): tests/system/scenarios/raidd-kill-campaign,"
	echo "raidd SIGKILLed at a seeded random point of each create or delete, restarted by"
	echo "init, then checked: a whole volume or free disks, no md array, dm map or md"
	echo "superblock left over. Scenario exit status $rc (0: every run converged)."
	echo
	echo '```'
	grep -E '^raidd-kill-campaign:|^-- run|^   converged|^FAIL|failure\(s\)|exit [0-9]+ after' "$log" || true
	echo '```'
} | sh "$src/bench/md-section.sh" "$out" kill-campaign
