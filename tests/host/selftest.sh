#!/bin/sh
# Host test of nas-selftest on a directory: the quick preset at a tiny
# scale on a small ext4 loop mount (a plain directory when loop mounts are
# not allowed) passes with every read verified and writes a record of the
# documented schema; a block corrupted between a test's writes and reads
# makes "verified" false and the exit status 1; usage errors exit 2; a
# directory too small for the preset is refused with exit 3 and nothing
# written; the scratch directory is always removed.
# Usage: selftest.sh BINDIR    Ends with "selftest: N passed, N failed".
set -u
bin=$1
st=$bin/nas-selftest
tmp=$(mktemp -d /tmp/nas-selftest.XXXXXX)
pass=0 fail=0
mnt=$tmp/vol small=$tmp/small spid=

cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
	mountpoint -q "$small" 2>/dev/null && umount "$small"
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

mkdir -p "$mnt" "$small"
if truncate -s 96M "$tmp/vol.img" && mkfs.ext4 -q -F "$tmp/vol.img" 2>/dev/null &&
	mount -o loop "$tmp/vol.img" "$mnt" 2>/dev/null; then
	echo "on an ext4 loop mount"
else
	echo "on a plain directory (no loop mount here)"
fi
printf '[board]\nname = host\nmodel = test\n[selftest]\nseq_read_min_mbs = 0.001\n' >"$tmp/board.ini"
run() { "$st" run --board "$tmp/board.ini" -S "$tmp/nosock" "$@"; }

run --dir "$mnt" --preset quick --scale 0.05 --json "$tmp/r.json" --html "$tmp/r.html" \
	>"$tmp/table" 2>"$tmp/progress"
rc=$?
check "quick preset at scale 0.05 passes (exit $rc)" test "$rc" = 0
cat "$tmp/table"
check "table: a row per test, write and read columns" \
	sh -c "grep -q '^test  *write (up)  *read (down)  *limit  *result' '$tmp/table' &&
	    grep -q '^seq-max ' '$tmp/table' && grep -q '^iops-4k-q16 ' '$tmp/table' &&
	    grep -q '^result: PASS' '$tmp/table'"
check "progress: one line per step when not on a terminal" grep -q '^\[4/10\] seq-max: reading$' "$tmp/progress"
check "progress: net-1 says unavailable without --peers" grep -q '^\[9/10\] net-1: unavailable$' "$tmp/progress"
check "record: schema nas-selftest/1, board, kernel, preset" jq -e \
	'.schema == "nas-selftest/1" and .board.name == "host" and (.kernel | length > 0)
	 and .preset == "quick" and .pass == true and .exit == 0' "$tmp/r.json"
check "record: every disk row verified, with figures" jq -e \
	'[.results[] | select(.op != "idle" and .metric != "mbit_s")] | length == 13 and
	 all(.verified == true and .bytes > 0 and .mb_s > 0 and .cpu_s >= 0 and (.pass == true))' "$tmp/r.json"
check "record: net-1 and lacp-4 without --peers: four rows, unavailable (pass null)" jq -e \
	'[.results[] | select(.metric == "mbit_s")] | length == 4 and
	 all(.pass == null and .mbit_s == null and (.note | test("no --peers")))' "$tmp/r.json"
check "record: IOPS rows carry p50 <= p99 <= p99.9" jq -e \
	'[.results[] | select(.test | startswith("iops")) | .lat_us | .p50 <= .p99 and .p99 <= .p999]
	 | length == 4 and all' "$tmp/r.json"
check "record: load-curve's steps at 1 to 32 clients, each with MB/s and response times" jq -e \
	'.results[] | select(.test == "load-curve") | .op == "mixed" and .verified == true and
	 ([.steps[].clients] == [1, 2, 4, 8, 16, 32]) and
	 all(.steps[]; .mb_s > 0 and .iops > 0 and .lat_ms.mean > 0 and .lat_ms.p50 <= .lat_ms.p99
	     and .write_share > 0 and .write_share < 0.5) and
	 (.knee_clients as $k | $k == null or ([.steps[].clients] | index($k) != null))' "$tmp/r.json"
check "table and report: the load curve's steps and chart" sh -c \
	"grep -q '^load-curve ' '$tmp/table' && grep -q '^   32 clients ' '$tmp/table' &&
	 grep -q 'data-chart=\"load-curve\"' '$tmp/r.html'"
check "record: the seq read limit from board.ini applies" jq -e \
	'.results[] | select(.test == "seq-max" and .op == "read") | .limit == 0.001' "$tmp/r.json"
check "record: power unavailable without powerd (null, not 0 W)" jq -e \
	'.power == "unavailable" and (.results[] | select(.test == "power") | .watts == null and .pass == null)' \
	"$tmp/r.json"
check "report: one HTML file with inline SVG bars, no scripts or links" sh -c \
	"grep -q 'data-chart=\"mb_s\"' '$tmp/r.html' && grep -q 'data-chart=\"iops\"' '$tmp/r.html' &&
	 ! grep -Eq '<script|src=|href=' '$tmp/r.html'"
"$st" html "$tmp/r.json" "$tmp/again.html"
check "nas-selftest html: the same report from the stored record" cmp "$tmp/r.html" "$tmp/again.html"
"$st" html "$tmp/progress" "$tmp/x.html" 2>/dev/null
check "nas-selftest html: a file that is no record: exit 3" test $? = 3
check "scratch directory removed" sh -c "! ls -A '$mnt' | grep -q nas-selftest"

# A block of the file corrupted after the writes: the read must catch it.
corrupt='dd if=/dev/zero of="$NAS_SELFTEST_FILE" bs=512 count=1 seek=700 conv=notrunc 2>/dev/null'
run --dir "$mnt" --tests file-2g,seq-max --scale 0.002 --exec-between "$corrupt" \
	--json "$tmp/c.json" >"$tmp/table" 2>/dev/null
rc=$?
check "a corrupted block: exit 1 (got $rc)" test "$rc" = 1
check "a corrupted block: verified false on both tests, pass false" jq -e \
	'[.results[] | select(.op == "read")] as $r | ($r | length == 2) and
	 ($r | all(.verified == false and .pass == false and (.note | test("did not verify"))))
	 and .pass == false and .exit == 1' "$tmp/c.json"
check "a corrupted block: the table says FAIL (data)" grep -q '^file-2g .*FAIL (data)$' "$tmp/table"

# --exec-after: after the reads, the file still there and still the test's
# (a judge's read of it after the test's own); --exec-between before them.
hooks='echo "$1 $NAS_SELFTEST_TEST $(stat -c %s "$NAS_SELFTEST_FILE")" >>'"'$tmp/hooks'"
rm -f "$tmp/hooks"
run --dir "$mnt" --tests seq-max,iops-4k-q16 --scale 0.002 --exec-between "set -- between; $hooks" \
	--exec-after "set -- after; $hooks" --json "$tmp/h.json" >/dev/null 2>&1
rc=$?
check "--exec-between/--exec-after: exit 0 (got $rc)" test "$rc" = 0
check "--exec-after: run after each test's reads on its whole file, in order" sh -c \
	"[ \"\$(awk '{ print \$1, \$2, (\$3 > 0) }' '$tmp/hooks' | tr '\n' ,)\" = \
	 'between seq-max 1,after seq-max 1,between iops-4k-q16 1,after iops-4k-q16 1,' ]"

# Usage errors exit 2; a directory that cannot hold the tests exits 3.
run --tests nosuch >/dev/null 2>&1
check "unknown test: exit 2" test $? = 2
run --preset fast >/dev/null 2>&1
check "unknown preset: exit 2" test $? = 2
run --scale 0 >/dev/null 2>&1
check "scale 0: exit 2" test $? = 2
run --dir "$mnt" --volume v >/dev/null 2>&1
check "--dir and --volume: exit 2" test $? = 2
"$st" run --board "$tmp/nosuch.ini" --dir "$mnt" >/dev/null 2>&1
check "a board.ini named that cannot be read: exit 3" test $? = 3
run --dir "$tmp/nosuch" >/dev/null 2>&1
check "a directory that does not exist: exit 3" test $? = 3
if mount -t tmpfs -o size=4m tmpfs "$small" 2>/dev/null; then
	run --dir "$small" --preset quick >/dev/null 2>"$tmp/err"
	rc=$?
	check "4 MiB free for the quick preset: exit 3 (got $rc)" test "$rc" = 3
	check "  says how much is free and needed" grep -q 'MiB free, the tests need' "$tmp/err"
	check "  nothing written" test -z "$(ls -A "$small")"
	umount "$small"
fi
# seq-max at the least scale needs 8 MiB + 1/16 + 16 MiB = 24.5 MiB; 25 MiB would hold
# it but leave the volume's owner less than a twentieth of it.
if mount -t tmpfs -o size=25m tmpfs "$small" 2>/dev/null; then
	run --dir "$small" --tests seq-max --scale 0.0001 >/dev/null 2>"$tmp/err"
	rc=$?
	check "a run that would leave under 5 % of the volume free: exit 3 (got $rc)" test "$rc" = 3
	check "  says a twentieth is kept free" grep -q '5 % of the volume is kept free' "$tmp/err"
fi
# Without a board, raidd or powerd the scratch RAID 1 cannot be made.
run --preset quick >/dev/null 2>"$tmp/err"
check "no --dir or --volume and no raidd: exit 3" test $? = 3

# The API: nas-selftest serve, a run as a job, its record and report.
mkdir -p "$tmp/sock" "$tmp/api"
printf '[selftest]\nrecord_dir = %s/rec\nprogram = %s\ndir_root = %s/api\n' \
	"$tmp" "$st" "$tmp" >"$tmp/serve.ini"
"$st" serve -f -S "$tmp/sock" -c "$tmp/serve.ini" >"$tmp/serve.log" 2>&1 &
spid=$!
N="$bin/nasctl -S $tmp/sock"
i=0
while [ ! -S "$tmp/sock/selftest.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "selftest.results before any run: not found" sh -c "! $N call selftest selftest.results"
check "selftest.run: a dir outside dir_root is refused" sh -c \
	"$N call selftest selftest.run '{\"dir\": \"$tmp\"}' 2>&1 | grep -q 'must be a directory below'"
ln -s "$tmp" "$tmp/api/out"
check "selftest.run: a link below dir_root that leads out is refused" sh -c \
	"$N call selftest selftest.run '{\"dir\": \"$tmp/api/out\"}' 2>&1 | grep -q 'must be a directory below'"
check "selftest.run: peers that are not addresses are refused" sh -c \
	"$N call selftest selftest.run '{\"dir\": \"$tmp/api\", \"peers\": \"10.0.0.1,-x\"}' 2>&1 | grep -q 'peers:'"
check "selftest.run: an unknown test is refused" sh -c \
	"! $N call selftest selftest.run '{\"dir\": \"$tmp/api\", \"tests\": \"nosuch\"}'"
$N call selftest selftest.run "{\"dir\": \"$tmp/api\", \"tests\": \"seq-max,iops-4k-q16\", \"scale\": \"0.01\"}" \
	>"$tmp/job" 2>&1
check "selftest.run starts job 1" jq -e '.job == 1' "$tmp/job"
check "a second run while one runs: busy" sh -c \
	"$N call selftest selftest.run '{\"dir\": \"$tmp/api\"}' 2>&1 | grep -q 'is running'"
i=0
while [ "$($N call selftest job.status '{"id": 1}' | jq -r .state)" = running ] && [ $i -lt 600 ]; do
	sleep 0.1; i=$((i + 1))
done
$N call selftest job.status '{"id": 1}' >"$tmp/status"
check "the job ends done, its result the record (pass)" jq -e \
	'.state == "done" and .result.schema == "nas-selftest/1" and .result.pass == true' "$tmp/status"
check "selftest.results: the same record, every read verified" sh -c \
	"$N call selftest selftest.results | jq -e '[.results[] | .verified] | length == 4 and all'"
check "selftest.report: the HTML report" sh -c \
	"$N call selftest selftest.report | jq -r .html | grep -q 'data-chart=\"iops\"'"
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

echo "selftest: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-selftest" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
