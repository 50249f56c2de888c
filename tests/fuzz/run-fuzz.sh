#!/bin/sh
# Runs each fuzz target for a bounded time on a scratch copy of its seed
# corpus (corpus/<name without fuzz->, and FUZZDIR/seeds/<name> that the
# build generates), which replays every seed and kept crash first. Prints "fuzz: P passed, F failed" and appends "P F fuzz"
# to $NAS_SUMMARY when set.
# Usage: run-fuzz.sh FUZZDIR SECONDS CORPUSDIR TARGET...
set -u
dir=$1 secs=$2 corpus=$3
shift 3
pass=0 fail=0
for t in "$@"; do
	seeds=$corpus/${t#fuzz-}
	built=$dir/seeds/${t#fuzz-}
	[ -d "$built" ] || built=
	work=$dir/work-$t
	log=$dir/$t.log
	rm -rf "$work" && mkdir -p "$work"
	# -close_fd_mask=1: the targets' own chatter is not wanted in the log.
	"$dir/$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
		-close_fd_mask=1 -print_final_stats=1 \
		-artifact_prefix="$dir/$t-" "$work" "$seeds" $built > "$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok   $t: ${runs:-?} runs in ${secs}s"
	else
		fail=$((fail + 1))
		grep -E 'ERROR|SUMMARY|Test unit written|^not JSON' "$log" >&2
		echo "FAIL $t (exit $rc): see $log; keep the input under $seeds/ once fixed"
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail fuzz" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
