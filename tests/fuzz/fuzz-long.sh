#!/bin/sh
# make fuzz-long: each fuzz target for RUNS executions (or until
# $FUZZ_LONG_SECONDS per target, when set, if that comes first) on a
# scratch copy of its seeds, then a table of executions, time and
# crashes into the "fuzz-long" section of docs/benchmarks.md. libFuzzer
# stops a target at its first crash: the table says so and the input is
# kept as FUZZDIR/<target>-crash-*, to be fixed and added to the corpus.
# Usage: fuzz-long.sh FUZZDIR RUNS CORPUSDIR BENCHMARKS.md TARGET...
set -u
dir=$1 runs=$2 corpus=$3 out=$4
shift 4
src=$(cd "$(dirname "$0")/../.." && pwd)
limit=${FUZZ_LONG_SECONDS:-0}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
bad=0
for t in "$@"; do
	seeds=$corpus/${t#fuzz-}
	built=$dir/seeds/${t#fuzz-}
	[ -d "$built" ] || built=
	work=$dir/long-$t
	log=$dir/$t-long.log
	rm -rf "$work" && mkdir -p "$work"
	start=$(date +%s)
	"$dir/$t" -runs="$runs" -max_total_time="$limit" -timeout=20 \
		-rss_limit_mb=2048 -close_fd_mask=1 -print_final_stats=1 \
		-artifact_prefix="$dir/$t-" "$work" "$seeds" $built > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$rc" -eq 0 ]; then
		crashes=0
	else
		crashes="1 (stopped; exit $rc)"
		bad=1
		grep -E 'ERROR|SUMMARY|Test unit written' "$log" >&2
	fi
	echo "$t: ${n:-?} executions in ${secs}s, crashes: $crashes"
	printf '| %s | %s | %s | %s | %s |\n' "$t" "${n:-?}" "$secs" \
	    "$(awk -v n="${n:-0}" -v s="$secs" 'BEGIN { printf "%d", s ? n / s : 0 }')" \
	    "$crashes" >> "$rows"
done
{
	echo "## Fuzzing: make fuzz-long"
	echo
	echo "Written by \`make fuzz-long FUZZ_RUNS=$runs\`$([ "$limit" -gt 0 ] && echo " FUZZ_LONG_SECONDS=$limit")"
	echo "($(date -u +%Y-%m-%d), $(git -C "$src" describe --always --dirty 2>/dev/null), clang libFuzzer with ASan and UBSan, one"
	echo "process per target, one after another on one core of $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1))."
	echo "Each target starts from its seeds (tests/fuzz/corpus and the ones the build"
	echo "writes with raidd's encoders); a crash stops its target. Goal: 10 million"
	echo "executions each, 0 crashes. Load average of the host at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "(executions/s fall with it: the host is shared)."
	echo
	echo "| target | executions | seconds | executions/s | crashes |"
	echo "|---|---|---|---|---|"
	cat "$rows"
} | sh "$src/bench/md-section.sh" "$out" fuzz-long
echo "fuzz-long: table written to $out"
[ "$bad" -eq 0 ]
