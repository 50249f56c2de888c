#!/bin/sh
# Host test of netd.prom: netd on simulated ports (NETD_SIMULATE) makes
# an 802.3ad bond; its file passes `promtool check metrics` and has the
# bond, its ports and their LACP state. (tests/host/netd-netns.sh checks
# the file on the real kernel's dump.) Ends with "metrics-netd: N passed,
# N failed"; appends "P F metrics-netd" to $NAS_SUMMARY when set.
# Usage: metrics-netd.sh BINDIR
set -u
bin=$1
tmp=$(mktemp -d /tmp/nas-mnetd.XXXXXX)
pass=0 fail=0
pid=

cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

for tool in socat jq; do
	command -v $tool > /dev/null || { echo "metrics-netd.sh: $tool is needed" >&2; exit 1; }
done

prom=$tmp/metrics/netd.prom
printf '[api]\nread_group = %s\nadmin_group = %s\n[log]\nsyslog = no\n[netd]\nmetrics_dir = %s\nboard = %s\nresolv_conf = %s\n' \
	"$(id -gn)" "$(id -gn)" "$tmp/metrics" "$tmp/none.ini" "$tmp/resolv.conf" > "$tmp/netd.ini"

# call METHOD PARAMS JQ-FILTER
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"%s","params":%s}\n' "$1" "$2" |
		socat -t 5 - "UNIX-CONNECT:$tmp/netd.sock" > "$tmp/ans" || return 1
	jq -e "$3" "$tmp/ans" > /dev/null || { cat "$tmp/ans"; return 1; }
}
# netd writes the file at every link change and every 5 s: wait for a line.
has() {
	for _ in $(seq 100); do
		grep -qx "$1" "$prom" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$prom"
	return 1
}
promtool_ok() {
	promtool check metrics < "$prom"
}

NETD_SIMULATE=lan1,lan2 "$bin/netd" -f -S "$tmp" -c "$tmp/netd.ini" 2> "$tmp/netd.log" &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/netd.sock" ] && break; sleep 0.1; done
check "netd starts on simulated ports" test -S "$tmp/netd.sock"
check "netd.prom is written at start, with no bond" \
	sh -c "test -f '$prom' && ! grep -q '^nas_bond_up{' '$prom'"
check "bond.create b0, 802.3ad over lan1 and lan2" \
	call bond.create '{"name":"b0","mode":"802.3ad","ports":["lan1","lan2"],"force":true}' \
	'.result.name == "b0"'
check "netd.prom: b0 with its mode" has 'nas_bond_up{bond="b0",mode="802.3ad"} [01]'
check "netd.prom: both ports, up" \
	sh -c "grep -qx 'nas_bond_port_up{bond=\"b0\",port=\"lan1\"} 1' '$prom' &&
		grep -qx 'nas_bond_port_up{bond=\"b0\",port=\"lan2\"} 1' '$prom'"
# actor_bits PORT: the actor bits the file sets to 1 equal bond.show's actor_state.
actor_bits() {
	call bond.show '{"name":"b0"}' '.result != null' || return 1
	want=$(jq -r ".result.ports[] | select(.name == \"$1\") | .actor_state | sort | join(\",\")" "$tmp/ans")
	got=$(sed -n "s/^nas_bond_port_lacp_state{bond=\"b0\",port=\"$1\",side=\"actor\",bit=\"\([a-z]*\)\"} 1$/\1/p" "$prom" |
		sort | paste -sd, -)
	[ -n "$want" ] && [ "$want" = "$got" ] || { echo "bond.show: $want; netd.prom: $got"; return 1; }
}
check "netd.prom: lan1's actor LACP bits are bond.show's" actor_bits lan1
check "netd.prom: no partner, so neither port is in the bundle (bond.show: in_aggregator false)" \
	sh -c "grep -qx 'nas_bond_port_lacp_in_bundle{bond=\"b0\",port=\"lan1\"} 0' '$prom' &&
		grep -qx 'nas_bond_port_lacp_in_bundle{bond=\"b0\",port=\"lan2\"} 0' '$prom'"
if command -v promtool > /dev/null; then
	check "netd.prom passes promtool check metrics" promtool_ok
else
	bad "promtool is not installed (Debian package prometheus)"
fi
check "bond.delete b0" call bond.delete '{"name":"b0","force":true}' '.result != null'
check "netd.prom: b0 is gone" \
	sh -c "for _ in \$(seq 100); do ! grep -q 'bond=\"b0\"' '$prom' && exit 0; sleep 0.1; done; exit 1"

[ -n "${VERBOSE:-}" ] && cat "$prom"
echo "metrics-netd: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail metrics-netd" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
