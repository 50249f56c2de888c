#!/bin/sh
# Host test of the daemons' node_exporter files (docs/metrics.md); each
# passes `promtool check metrics` and says what the API says:
# - raidd.prom: raidd on simulated disks (RAIDD_SIMULATE) builds a raid1
#   volume: its state, members present and missing, size.
# - netd.prom: netd on simulated ports (NETD_SIMULATE) makes an 802.3ad
#   bond: the bond, its ports, their LACP bits as bond.show has them.
#   (tests/host/netd-netns.sh checks the file on the real kernel's dump.)
# - cryptd.prom: cryptd with device-mapper simulated (CRYPTD_SIMULATE)
#   opens a LUKS2 file: the mapping and its device, the count, a wrong
#   passphrase counted, and no passphrase or key in the file.
# Ends with "metrics-daemons: N passed, N failed"; appends
# "P F metrics-daemons" to $NAS_SUMMARY when set.
# Usage: metrics-daemons.sh BINDIR
set -u
bin=$1
tmp=$(mktemp -d /tmp/nas-metrics.XXXXXX)
pass=0 fail=0
pids=

cleanup() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/check-lib.sh"

for tool in socat jq; do
	command -v $tool > /dev/null || { echo "metrics-daemons.sh: $tool is needed" >&2; exit 1; }
done
api=$(printf '[api]\nread_group = %s\nadmin_group = %s\n[log]\nsyslog = no\n' "$(id -gn)" "$(id -gn)")

# call DAEMON METHOD PARAMS JQ-FILTER
call() {
	printf '{"jsonrpc":"2.0","id":1,"method":"%s","params":%s}\n' "$2" "$3" |
		socat -t 5 - "UNIX-CONNECT:$tmp/$1.sock" > "$tmp/ans" || return 1
	jq -e "$4" "$tmp/ans" > /dev/null || { cat "$tmp/ans"; return 1; }
}
# has LINE: $prom gets a line that matches (daemons write every 5 s at most).
has() {
	for _ in $(seq 150); do
		grep -qx "$1" "$prom" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$prom"
	return 1
}
# start DAEMON ENV=VALUE: the daemon on $tmp/DAEMON.ini, its socket in $tmp.
start() {
	env "$2" "$bin/$1" -f -S "$tmp" -c "$tmp/$1.ini" 2> "$tmp/$1.log" &
	pids="$pids $!"
	for _ in $(seq 100); do [ -S "$tmp/$1.sock" ] && return 0; sleep 0.1; done
	return 1
}
promtool_ok() {
	if ! command -v promtool > /dev/null; then
		echo "promtool is not installed (Debian package prometheus)"
		return 1
	fi
	promtool check metrics < "$prom"
}

# ---- raidd ----
prom=$tmp/metrics/raidd.prom
printf '%s\n[raidd]\nmetrics_dir = %s\nunit_id_file = %s\ndeleted_file = %s\nmount_root = %s\nboard = %s\n' \
	"$api" "$tmp/metrics" "$tmp/unit" "$tmp/deleted" "$tmp/vol" "$tmp/none.ini" > "$tmp/raidd.ini"
check "raidd starts on simulated disks" start raidd RAIDD_SIMULATE=sda:4,sdb:4
check "volume.create raid1 on sda, sdb" \
	call raidd volume.create '{"name":"data","level":"raid1","disks":["sda","sdb"],"fs":"none"}' \
	'.result.job > 0'
check "raidd.prom: data is clean or resyncing" \
	has 'nas_volume_state{volume="data",state="\(clean\|resyncing\)"} 1'
check "raidd.prom: two members present, none missing" \
	sh -c "grep -qx 'nas_volume_members{volume=\"data\",state=\"present\"} 2' '$prom' &&
		grep -qx 'nas_volume_members{volume=\"data\",state=\"missing\"} 0' '$prom'"
check "raidd.prom has the size" \
	sh -c "grep -q '^nas_volume_size_bytes{volume=\"data\"} [1-9]' '$prom'"
check "raidd.prom passes promtool check metrics" promtool_ok

# ---- netd ----
prom=$tmp/metrics/netd.prom
printf '%s\n[netd]\nmetrics_dir = %s\nboard = %s\nresolv_conf = %s\n' \
	"$api" "$tmp/metrics" "$tmp/none.ini" "$tmp/resolv.conf" > "$tmp/netd.ini"
check "netd starts on simulated ports" start netd NETD_SIMULATE=lan1,lan2
check "netd.prom is written at start, with no bond" \
	sh -c "test -f '$prom' && ! grep -q '^nas_bond_up{' '$prom'"
check "bond.create b0, 802.3ad over lan1 and lan2" \
	call netd bond.create '{"name":"b0","mode":"802.3ad","ports":["lan1","lan2"],"force":true}' \
	'.result.name == "b0"'
check "netd.prom: b0 with its mode" has 'nas_bond_up{bond="b0",mode="802.3ad"} [01]'
check "netd.prom: both ports, up" \
	sh -c "grep -qx 'nas_bond_port_up{bond=\"b0\",port=\"lan1\"} 1' '$prom' &&
		grep -qx 'nas_bond_port_up{bond=\"b0\",port=\"lan2\"} 1' '$prom'"
# actor_bits PORT: the actor bits the file sets to 1 equal bond.show's actor_state.
actor_bits() {
	call netd bond.show '{"name":"b0"}' '.result != null' || return 1
	want=$(jq -r ".result.ports[] | select(.name == \"$1\") | .actor_state | sort | join(\",\")" "$tmp/ans")
	got=$(sed -n "s/^nas_bond_port_lacp_state{bond=\"b0\",port=\"$1\",side=\"actor\",bit=\"\([a-z]*\)\"} 1$/\1/p" "$prom" |
		sort | paste -sd, -)
	[ -n "$want" ] && [ "$want" = "$got" ] || { echo "bond.show: $want; netd.prom: $got"; return 1; }
}
check "netd.prom: lan1's actor LACP bits are bond.show's" actor_bits lan1
check "netd.prom: no partner, so neither port is in the bundle (bond.show: in_aggregator false)" \
	sh -c "grep -qx 'nas_bond_port_lacp_in_bundle{bond=\"b0\",port=\"lan1\"} 0' '$prom' &&
		grep -qx 'nas_bond_port_lacp_in_bundle{bond=\"b0\",port=\"lan2\"} 0' '$prom'"
check "netd.prom passes promtool check metrics" promtool_ok
check "bond.delete b0" call netd bond.delete '{"name":"b0","force":true}' '.result != null'
check "netd.prom: b0 is gone" \
	sh -c "for _ in \$(seq 100); do ! grep -q 'bond=\"b0\"' '$prom' && exit 0; sleep 0.1; done; exit 1"

# ---- cryptd ----
prom=$tmp/metrics/cryptd.prom
printf '%s\n[kdf]\nmax_memory_kib = 1024\ntime_ms = 50\n[cryptd]\nmetrics_dir = %s\n' \
	"$api" "$tmp/metrics" > "$tmp/cryptd.ini"
disk=$tmp/crypt-disk
pass1=metrics-Passphrase-5e1d
truncate -s 20M "$disk"
check "cryptd starts with device-mapper simulated" start cryptd CRYPTD_SIMULATE=1
check "cryptd.prom is written at start, with no mapping" \
	sh -c "grep -qx 'nas_crypt_mappings_open 0' '$prom' && ! grep -q '^nas_crypt_mapping_open{' '$prom'"
check "crypt.format the file" \
	call cryptd crypt.format "{\"device\":\"$disk\",\"passphrase\":\"$pass1\"}" \
	'.result != null'
check "crypt.open with a wrong passphrase is refused" \
	call cryptd crypt.open "{\"device\":\"$disk\",\"name\":\"v1\",\"passphrase\":\"wrong\"}" \
	'.error != null'
check "cryptd.prom: one failed unlock on the file" \
	has "nas_crypt_unlock_failures{device=\"$disk\"} 1"
# The back-off of one failure is 1 s: the next attempt waits it out.
sleep 1.1
check "crypt.open v1" \
	call cryptd crypt.open "{\"device\":\"$disk\",\"name\":\"v1\",\"passphrase\":\"$pass1\"}" \
	'.result.name == "v1"'
check "cryptd.prom: v1 open on the file, one mapping" \
	sh -c "grep -qx 'nas_crypt_mapping_open{name=\"v1\",device=\"$disk\"} 1' '$prom' &&
		grep -qx 'nas_crypt_mappings_open 1' '$prom'"
check "cryptd.prom: the unlock cleared the failures" \
	sh -c "! grep -q '^nas_crypt_unlock_failures{' '$prom'"
check "cryptd.prom has no passphrase and no key reference" \
	sh -c "! grep -q -e '$pass1' -e 'logon' -e 'cryptd:' '$prom'"
check "cryptd.prom passes promtool check metrics" promtool_ok
check "crypt.close v1" call cryptd crypt.close '{"name":"v1"}' '.result != null'
check "cryptd.prom: v1 is gone" \
	sh -c "grep -qx 'nas_crypt_mappings_open 0' '$prom' && ! grep -q 'name=\"v1\"' '$prom'"

echo "metrics-daemons: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail metrics-daemons" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
