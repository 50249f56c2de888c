#!/bin/sh
# Runs Check suites and appends "P passed, F failed" per tier to the summary.
# Usage: run-unit.sh LABEL BINDIR TEST...
# TEST_WRAPPER (e.g. qemu-aarch64-static -L /usr/aarch64-linux-gnu) runs a
# cross-built suite on this machine. UNIT_JOBS suites run at once (default:
# the machine's CPUs): each is one process at a time (Check forks a test,
# waits for it), and they share nothing but mkdtemp's directories. The
# results are read back in the order given, so the log reads the same.
set -u
label=$1 bindir=$2
shift 2
jobs=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 1)}
out_dir=$(mktemp -d "${TMPDIR:-/tmp}/run-unit.XXXXXX") || exit 1
trap 'rm -rf "$out_dir"' EXIT
export bindir out_dir
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
	'${TEST_WRAPPER:-} "$bindir/$1" >"$out_dir/$1.out" 2>&1; echo $? >"$out_dir/$1.rc"' sh {}
pass=0 fail=0
for t in "$@"; do
	out=$(cat "$out_dir/$t.out" 2>/dev/null)
	rc=$(cat "$out_dir/$t.rc" 2>/dev/null || echo 127)
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -n 1)
	c=$(printf '%s' "$line" | sed -n 's/.*Checks: \([0-9]*\).*/\1/p')
	f=$(printf '%s' "$line" | sed -n 's/.*Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2/p')
	nf=0
	[ -n "$f" ] && nf=$(( ${f% *} + ${f#* } ))
	[ -n "$c" ] || { c=1; nf=1; }
	[ "$rc" -ne 0 ] && [ "$nf" -eq 0 ] && nf=1
	pass=$((pass + c - nf)) fail=$((fail + nf))
	if [ "$rc" -ne 0 ] || [ "$nf" -ne 0 ]; then
		printf '%s\n' "$out" | grep -vE '^Running suite' >&2
		echo "FAIL $t ($label)"
	else
		echo "ok   $t ($label): $c checks"
	fi
done
echo "unit ($label): $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail unit-$label" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
