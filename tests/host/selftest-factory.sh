#!/bin/sh
# Host test of nas-selftest factory (the production line's run) on a plain
# directory: a unit that meets its limits is PASS (exit 0, DIR/result,
# record and report kept, status LED lit); a missed limit is FAIL (exit 1,
# the fault LED); a test that measured nothing (no powerd, no peer) is
# SKIP and the run INCOMPLETE (exit 3), never a pass; a config with garbage
# in it, or one that leaves a test without a limit, is INCOMPLETE with the
# file, section and key named, and nothing is measured; a LED name from
# board.ini that is a path is not followed.
# Usage: selftest-factory.sh BINDIR    Ends with "selftest-factory: N passed, N failed".
set -u
bin=$1
st=$bin/nas-selftest
tmp=$(mktemp -d /tmp/nas-selftest-factory.XXXXXX)
pass=0 fail=0

spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

work=$tmp/work out=$tmp/flash leds=$tmp/leds
mkdir -p "$work" "$tmp/outside"
for l in status fault; do
	mkdir -p "$leds/$l"
	for f in trigger brightness delay_on delay_off; do : >"$leds/$l/$f"; done
done
: >"$tmp/outside/brightness"
board() {	# board [LED-NAME]: limits every factory test clears on any host
	printf '[board]\nname = host\nmodel = line\n[leds]\nstatus = %s\nfault = fault\n' "${1:-status}"
	printf '[selftest]\nfile_mb = 4\nseq_write_min_mbs = 0.001\nseq_read_min_mbs = 0.001\n'
	printf 'rand_read_min_iops = 1\nrand_write_min_iops = 1\nidle_max_w = 1000\nnet_min_mbits = 1\n'
}
board >"$tmp/board.ini"
factory() {	# factory CONFIG-TEXT: runs the line's test; its exit status in $rc
	printf '%b' "$1" >"$tmp/factory.ini"
	rm -rf "$out"
	"$st" factory --config "$tmp/factory.ini" --out "$out" --board "$tmp/board.ini" \
		--leds "$leds" -S "$tmp/nosock" >"$tmp/table" 2>"$tmp/err"
	rc=$?
}
led() { cat "$leds/$1/brightness"; }

factory "[factory]\ntests = file-2g,seq-max,iops-4k-t8\ndir = $work\n"
check "limits met: exit 0 (got $rc)" test "$rc" = 0
cat "$tmp/table"
check "limits met: result says PASS, one line per row" sh -c \
	"[ \"\$(head -n 1 '$out/result')\" = PASS ] && [ \$(grep -c ' PASS\$' '$out/result') = 6 ]"
check "limits met: the record's verdict and every row's" jq -e \
	'.verdict == "PASS" and .reason == null and .exit == 0 and .preset == "factory" and
	 ([.results[] | .verdict] | length == 6 and all(. == "PASS")) and
	 ([.results[] | .limit] | all(. > 0))' "$out/record.json"
check "limits met: the report beside it" grep -q '<svg' "$out/report.html"
check "limits met: status LED lit, fault LED off" sh -c \
	"[ \"\$(cat '$leds/status/brightness')\" = 255 ] && [ \"\$(cat '$leds/fault/brightness')\" = 0 ]"
check "the test's directory is gone" sh -c "[ -z \"\$(ls -A '$work')\" ]"

factory "[factory]\ntests = seq-max\ndir = $work\n[selftest]\nseq_read_min_mbs = 1e9\n"
check "a missed limit: exit 1 (got $rc)" test "$rc" = 1
check "a missed limit: result names the test, the figure and the limit" sh -c \
	"head -n 1 '$out/result' | grep -Eq '^FAIL seq-max read: [0-9.e+]+ MB/s, limit >= 1e\\+09 MB/s\$'"
check "a missed limit: the row FAIL, the record FAIL" jq -e \
	'.verdict == "FAIL" and ([.results[] | select(.op == "read") | .verdict] == ["FAIL"])' \
	"$out/record.json"
check "a missed limit: fault LED lit, status LED off" sh -c \
	"[ \"\$(cat '$leds/fault/brightness')\" = 255 ] && [ \"\$(cat '$leds/status/brightness')\" = 0 ]"

factory "[factory]\ntests = seq-max,power\ndir = $work\n"
check "no powerd: exit 3, not a pass (got $rc)" test "$rc" = 3
check "no powerd: power SKIP with the reason, the run INCOMPLETE" sh -c \
	"[ \"\$(head -n 1 '$out/result')\" = 'INCOMPLETE power idle skipped: powerd does not answer power.status' ] &&
	 grep -qx 'power idle SKIP' '$out/result' && grep -qx 'seq-max read PASS' '$out/result'"
check "no powerd: table ends INCOMPLETE" grep -q '^factory: INCOMPLETE: power idle skipped' "$tmp/table"

factory "[factory]\ntests = net-1\ndir = $work\n"
check "net-1 without peers: exit 3 (got $rc)" test "$rc" = 3
check "net-1 without peers: SKIP, the reason" sh -c \
	"head -n 1 '$out/result' | grep -q '^INCOMPLETE net-1 write skipped: no --peers' && grep -qx 'net-1 read SKIP' '$out/result'"

# Garbage in the line's config: INCOMPLETE naming the fault, nothing measured.
garbage() {	# garbage DESCRIPTION CONFIG-TEXT EXPECTED-REASON-REGEX
	factory "$2"
	check "$1: exit 3 (got $rc)" test "$rc" = 3
	check "$1: result says why" sh -c "head -n 1 '$out/result' | grep -Eq '^INCOMPLETE could not run: $3'"
	check "$1: no rows, nothing written to the volume" sh -c \
		"jq -e '.results == [] and .verdict == \"INCOMPLETE\"' '$out/record.json' >/dev/null &&
		 [ -z \"\$(ls -A '$work')\" ]"
}
garbage "an unknown key" "[factory]\ntests = seq-max\nbogus = 1\ndir = $work\n" '.*\[factory\] bogus'
garbage "an unknown section" "[factory]\ndir = $work\n[limits]\nx = 1\n" '.*limits'
garbage "a limit that is not a number" "[factory]\ndir = $work\ntests = seq-max\n[selftest]\nseq_read_min_mbs = fast\n" \
	'.*\[selftest\] seq_read_min_mbs: not a number >= 0'
garbage "a negative limit" "[factory]\ndir = $work\n[selftest]\nidle_max_w = -5\n" '.*idle_max_w: not a number'
garbage "a limit set to 0 (no limit)" "[factory]\ndir = $work\ntests = seq-max\n[selftest]\nseq_write_min_mbs = 0\n" \
	'.*seq-max needs a limit: \[selftest\] seq_write_min_mbs is not set'
garbage "an unknown test" "[factory]\ndir = $work\ntests = seq-max,fastest\n" '.*unknown test "fastest"'
garbage "an idle floor above the ceiling" "[factory]\ndir = $work\ntests = power\n[selftest]\nidle_min_w = 1001\n" \
	'.*idle_min_w: needs an idle_max_w above it'
garbage "a volume name that is a path" "[factory]\nvolume = ../../etc\n" '.*\[factory\] volume: not a volume name'
garbage "a relative dir" "[factory]\ndir = tmp\n" '.*\[factory\] dir: an absolute path'
garbage "a peer that is an option" "[factory]\ndir = $work\npeers = -x\n" '.*\[factory\] peers'
garbage "file_mb of 0" "[factory]\ndir = $work\nfile_mb = 0\n" '.*file_mb: a number from 1 to 65536'
garbage "binary garbage" "\001\002[[[\377\n=\n" '.*factory.ini'
garbage "a repeated key" "[factory]\ndir = $work\ndir = /\n" '.*dir'
rm -f "$tmp/factory.ini"
rm -rf "$out"
"$st" factory --config "$tmp/factory.ini" --out "$out" --board "$tmp/board.ini" --leds "$leds" \
	-S "$tmp/nosock" >/dev/null 2>&1
rc=$?
check "no config at all: exit 3 (got $rc)" test "$rc" = 3
check "no config at all: the result says so" sh -c "head -n 1 '$out/result' | grep -q '^INCOMPLETE could not run: .*factory.ini'"

board ../outside >"$tmp/board.ini"
factory "[factory]\ntests = seq-max\ndir = $work\n"
check "a LED name that is a path is not followed" sh -c \
	"[ ! -s '$tmp/outside/brightness' ] && grep -q 'status: not a LED name' '$tmp/err'"
check "... and the verdict still stands (exit $rc)" test "$rc" = 0

# The API: the line's record served, a factory run as a job.
board >"$tmp/board.ini"
factory "[factory]\ntests = seq-max\ndir = $work\n"
mkdir -p "$tmp/sock" "$tmp/rec"
# serve runs nas-selftest factory as it is; a wrapper gives it this test's board and LEDs.
# shellcheck disable=SC2016 # $1 and $@ are the wrapper's own
printf '#!/bin/sh\n[ "$1" = factory ] && { shift; exec %s factory --board %s --leds %s "$@"; }\nexec %s "$@"\n' \
	"$st" "$tmp/board.ini" "$leds" "$st" >"$tmp/prog"
chmod +x "$tmp/prog"
printf '[selftest]\nrecord_dir = %s/rec\nprogram = %s/prog\ndir_root = %s/work\nfactory_dir = %s\n' \
	"$tmp" "$tmp" "$tmp" "$out" >"$tmp/serve.ini"
"$st" serve -f -S "$tmp/sock" -c "$tmp/serve.ini" >"$tmp/serve.log" 2>&1 &
spid=$!
N="$bin/nasctl -S $tmp/sock"
i=0
while [ ! -S "$tmp/sock/selftest.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "selftest.results factory: the line's record" sh -c \
	"$N call selftest selftest.results '{\"factory\": true}' | jq -e '.verdict == \"PASS\" and .preset == \"factory\"'"
check "selftest.report factory: its report" sh -c \
	"$N call selftest selftest.report '{\"factory\": true}' | jq -r .html | grep -q '<svg'"
check "selftest.results without factory: no run yet" sh -c "! $N call selftest selftest.results"
check "selftest.run factory with a preset: refused" sh -c \
	"$N call selftest selftest.run '{\"factory\": true, \"preset\": \"quick\"}' 2>&1 | grep -q 'config says what to run'"
printf '[factory]\ntests = seq-max\ndir = %s\n[selftest]\nseq_read_min_mbs = 1e9\n' "$work" >"$out/selftest.ini"
$N call selftest selftest.run '{"factory": true}' >"$tmp/job" 2>&1
check "selftest.run factory: a job" jq -e '.job == 1' "$tmp/job"
i=0
while [ "$($N call selftest job.status '{"id": 1}' | jq -r .state)" = running ] && [ $i -lt 600 ]; do
	sleep 0.1; i=$((i + 1))
done
$N call selftest job.status '{"id": 1}' >"$tmp/status"
check "selftest.run factory: done, its result the line's record (FAIL)" jq -e \
	'.state == "done" and .result.verdict == "FAIL" and .result.exit == 1' "$tmp/status"
check "selftest.run factory: the record on the flash is the new one" sh -c \
	"$N call selftest selftest.results '{\"factory\": true}' | jq -e '.verdict == \"FAIL\"'"
rm -f "$out/selftest.ini"
check "selftest.run factory on a unit without the line's config: refused, its record kept" sh -c \
	"$N call selftest selftest.run '{\"factory\": true}' 2>&1 | grep -q 'no factory config' &&
	 $N call selftest selftest.results '{\"factory\": true}' | jq -e '.verdict == \"FAIL\"'"
ln -sf "$tmp/status" "$out/record.json"
check "a record.json that is a link is not served" sh -c \
	"! $N call selftest selftest.results '{\"factory\": true}'"
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
spid=

echo "selftest-factory: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-selftest-factory" >> "$NAS_SUMMARY"
[ "$fail" = 0 ]
