#!/bin/sh
# Host test of raidd.prom: raidd on simulated disks (RAIDD_SIMULATE)
# builds a raid1 volume; its file passes `promtool check metrics` and
# has the volume's state, its members present and missing and its size.
# Ends with "metrics-raidd: N passed, N failed"; appends
# "P F metrics-raidd" to $NAS_SUMMARY when set.
# Usage: metrics-raidd.sh BINDIR
set -u
bin=$1
tmp=$(mktemp -d /tmp/nas-mraidd.XXXXXX)
pass=0 fail=0
pid=

cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

for tool in socat jq; do
	command -v $tool > /dev/null || { echo "metrics-raidd.sh: $tool is needed" >&2; exit 1; }
done

prom=$tmp/metrics/raidd.prom
printf '[api]\nread_group = %s\nadmin_group = %s\n[log]\nsyslog = no\n[raidd]\nmetrics_dir = %s\nunit_id_file = %s\ndeleted_file = %s\nmount_root = %s\nboard = %s\n' \
	"$(id -gn)" "$(id -gn)" "$tmp/metrics" "$tmp/unit" "$tmp/deleted" "$tmp/vol" \
	"$tmp/none.ini" > "$tmp/raidd.ini"

# call METHOD PARAMS JQ-FILTER
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"%s","params":%s}\n' "$1" "$2" |
		socat -t 5 - "UNIX-CONNECT:$tmp/raidd.sock" > "$tmp/ans" || return 1
	jq -e "$3" "$tmp/ans" > /dev/null || { cat "$tmp/ans"; return 1; }
}
# The monitor writes the file every 5 s: wait for a line that matches.
has() {
	for _ in $(seq 150); do
		grep -qx "$1" "$prom" 2>/dev/null && return 0
		sleep 0.1
	done
	grep nas_volume "$prom"
	return 1
}
promtool_ok() {
	promtool check metrics < "$prom"
}

RAIDD_SIMULATE=sda:4,sdb:4 "$bin/raidd" -f -S "$tmp" -c "$tmp/raidd.ini" 2> "$tmp/raidd.log" &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/raidd.sock" ] && break; sleep 0.1; done
check "raidd starts on simulated disks" test -S "$tmp/raidd.sock"
check "volume.create raid1 on sda, sdb" \
	call volume.create '{"name":"data","level":"raid1","disks":["sda","sdb"],"fs":"none"}' \
	'.result.job > 0'
check "raidd.prom: data is clean or resyncing" \
	has 'nas_volume_state{volume="data",state="\(clean\|resyncing\)"} 1'
check "raidd.prom: two members present, none missing" \
	sh -c "grep -qx 'nas_volume_members{volume=\"data\",state=\"present\"} 2' '$prom' &&
		grep -qx 'nas_volume_members{volume=\"data\",state=\"missing\"} 0' '$prom'"
check "raidd.prom has the size" \
	sh -c "grep -q '^nas_volume_size_bytes{volume=\"data\"} [1-9]' '$prom'"
if command -v promtool > /dev/null; then
	check "raidd.prom passes promtool check metrics" promtool_ok
else
	bad "promtool is not installed (Debian package prometheus)"
fi

[ -n "${VERBOSE:-}" ] && cat "$prom"
echo "metrics-raidd: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail metrics-raidd" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
