#!/bin/sh
# make check: runs every test tier that exists, even after one fails, and
# ends with one line "N passed, N failed" summed over all tiers.
# Usage: run-all.sh MAKE-COMMAND... (the tiers are make targets)
set -u
summary=${NAS_SUMMARY:?NAS_SUMMARY must name the summary file}
: > "$summary"
status=0
# check-system-arm: the ARM board's scenarios, when its cross compiler is
# here (scripts/install-deps.sh arm64; CI installs it).
tiers="check-unit check-host check-fuzz check-system"
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && tiers="$tiers check-system-arm"
for tier in $tiers; do
	echo "=== $tier"
	before=$(wc -l < "$summary")
	if ! "$@" "$tier"; then
		status=1
		# A tier that failed before counting anything counts as one failure.
		[ "$(wc -l < "$summary")" -eq "$before" ] && echo "0 1 $tier" >> "$summary"
	fi
done
echo "=== summary"
awk '{ printf "  %-16s %d passed, %d failed\n", $3, $1, $2 }' "$summary"
awk '{ p += $1; f += $2 } END { printf "%d passed, %d failed\n", p, f }' "$summary"
[ "$status" -eq 0 ] && ! awk '{ f += $2 } END { exit !(f > 0) }' "$summary"
