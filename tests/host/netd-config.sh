#!/bin/sh
# Host test of netd's configuration on the real kernel, in a network
# namespace with a veth pair, iproute2 as the judge: netd.ini applied at
# start (a bad value costs its key, the rest is applied), an API change
# written back to netd.ini (the daemon's own sections kept), the network
# back from netd.ini after netd restarts on a flushed link, and net.apply
# rolled back unless confirmed, addresses with a lifetime and routes from
# router advertisements never written as configuration. Needs root and `ip netns` (skipped
# otherwise). Ends with "netd-config: N passed, N failed".
# Usage: netd-config.sh BINDIR
set -u
bin=$1
name=netd-config
. "$(dirname "$0")/netns-lib.sh"
ip -n "$peer" link set v1 up
cat > "$tmp/netd.ini" <<EOF2
; the daemon's own section, kept as written
[netd]
board = $tmp/none.ini
resolv_conf = $tmp/resolv.conf

[port v0]
up = yes
mtu = 1400
address = 10.77.0.1/24, fd77::1/64

[port v1x]
mtu = 99999

[route]
gateway = 10.77.0.254

[dns]
servers = 10.77.0.53
EOF2
mkdir "$tmp/run"
start() {
	in_ns "$bin/netd" -f -S "$tmp/run" -c "$tmp/netd.ini" >> "$tmp/netd.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "$tmp/run/netd.sock" ] && break; sleep 0.1; done
}
stop() {
	# $pid is in_ns's subshell; netd is its child.
	pkill -TERM -P "$pid"
	wait "$pid" 2>/dev/null
	pid=
	rm -f "$tmp/run/netd.sock"
}
n() { "$bin/nasctl" -S "$tmp/run" "$@"; }
v0_has() { ip -n "$ns" -j addr show v0 | jq -e "[.[0].addr_info[] | select(.local == \"$1\")] | length == 1"; }

check "netd -n accepts netd.ini with its network sections" in_ns "$bin/netd" -n -c "$tmp/netd.ini"
# A hand edit that repeats a network key must not stop the daemon that brings up the network.
{ cat "$tmp/netd.ini"; printf '[port v1x]\nup = yes\nup = no\n'; } > "$tmp/dup.ini"
check "netd -n accepts a key given twice in a network section (logged)" sh -c \
	"'$bin/netd' -n -c '$tmp/dup.ini' 2>&1 >/dev/null | grep -q 'given again'"
start
check "at start: v0 up with mtu 1400 (iproute2)" sh -c \
	"ip -n $ns -j link show v0 | jq -e '.[0].mtu == 1400 and (.[0].flags | index(\"UP\"))'"
check "at start: 10.77.0.1" v0_has 10.77.0.1
check "at start: fd77::1" v0_has fd77::1
check "at start: the default route" sh -c \
	"ip -n $ns -j route show default | jq -e '.[0].gateway == \"10.77.0.254\" and .[0].dev == \"v0\"'"
check "at start: resolv.conf" grep -qx 'nameserver 10.77.0.53' "$tmp/resolv.conf"
check "the bad mtu is logged with its section, the rest applied" grep -q "port v1x.*mtu.*99999" "$tmp/netd.log"

# What a router advertisement makes (an address with a lifetime, a default
# route through a link-local router) is the kernel's, not configuration.
in_ns ip addr add fd99::5/64 dev v0 valid_lft 600 preferred_lft 600
in_ns ip -6 route add default via fe80::99 dev v0 proto ra
check "addr add 10.77.0.9/24" n addr add v0 10.77.0.9/24
check "written back: the new address in netd.ini" grep -q '^address = .*10.77.0.9/24' "$tmp/netd.ini"
check "written back: no address with a lifetime, no route from an advertisement" sh -c \
	"! grep -q -e fd99::5 -e fe80::99 '$tmp/netd.ini'"
check "written back: the static IPv6 address kept" grep -q '^address = .*fd77::1/64' "$tmp/netd.ini"
check "addr list says which address is dynamic" sh -c \
	"'$bin/nasctl' -S '$tmp/run' --json addr list | jq -e '[.. | objects | select(.address? == \"fd99::5/64\") | .dynamic] == [true]'"
check "written back: the daemon's own section kept with its comment" sh -c \
	"head -4 '$tmp/netd.ini' | grep -q \"^; the daemon's own section\" && grep -q '^resolv_conf = $tmp/resolv.conf' '$tmp/netd.ini'"
check "netd -n still accepts the file netd wrote" in_ns "$bin/netd" -n -c "$tmp/netd.ini"

# A reboot's worth: the link flushed and reset behind netd's back, netd restarted.
stop
in_ns ip addr flush dev v0
in_ns ip link set v0 down mtu 1500
start
check "after restart: mtu 1400 again" sh -c "ip -n $ns -j link show v0 | jq -e '.[0].mtu == 1400'"
check "after restart: the API's address is back" v0_has 10.77.0.9
check "after restart: 10.77.0.1 is back" v0_has 10.77.0.1
check "after restart: the default route is back" sh -c \
	"ip -n $ns -j route show default | jq -e '.[0].gateway == \"10.77.0.254\"'"

# net.apply without confirm: rolled back by itself.
cat > "$tmp/new.ini" <<EOF2
[netd]
board = ignored
[port v0]
mtu = 1300
address = 10.88.0.1/24
[route]
gateway = 10.88.0.254
EOF2
cp "$tmp/netd.ini" "$tmp/before.ini"
n events netd --topic net > "$tmp/events" 2>&1 &
evpid=$!
sleep 0.3
# A window long enough that a loaded machine still tries the second apply inside it.
check "net apply --confirm-within 8" n net apply "$tmp/new.ini" --confirm-within 8
check "applied: 10.88.0.1, mtu 1300, the old address gone" sh -c \
	"ip -n $ns -j link show v0 | jq -e '.[0].mtu == 1300' && ! ip -n $ns addr show v0 | grep -q 10.77.0.1"
check "applied: the new default route" sh -c \
	"ip -n $ns -j route show default | jq -e '.[0].gateway == \"10.88.0.254\"'"
refused() {
	if "$@" > "$tmp/out" 2>&1; then bad "a second apply while one is pending (accepted)"
	else ok "a second apply while one is pending is refused"; fi
}
refused n net apply "$tmp/new.ini" --confirm-within 8
check "netd.ini unchanged while unconfirmed" cmp "$tmp/netd.ini" "$tmp/before.ini"
# Waits for the rollback's event, not for a time.
for _ in $(seq 300); do grep -q "net.rollback" "$tmp/events" && break; sleep 0.1; done
kill "$evpid" 2>/dev/null
check "net.rollback announced" grep -q "net.rollback" "$tmp/events"
check "rolled back: 10.77.0.1 and 10.77.0.9 again, 10.88.0.1 gone" sh -c \
	"ip -n $ns addr show v0 | grep -q 10.77.0.1 && ip -n $ns addr show v0 | grep -q 10.77.0.9 && ! ip -n $ns addr show v0 | grep -q 10.88.0.1"
check "rolled back: mtu 1400, the old default route" sh -c \
	"ip -n $ns -j link show v0 | jq -e '.[0].mtu == 1400' && ip -n $ns -j route show default | jq -e 'length == 1 and .[0].gateway == \"10.77.0.254\"'"

check "net apply + net confirm" sh -c \
	"'$bin/nasctl' -S '$tmp/run' net apply '$tmp/new.ini' --confirm-within 30 && '$bin/nasctl' -S '$tmp/run' net confirm"
check "confirmed: netd.ini holds the new network" sh -c \
	"grep -q '^address = 10.88.0.1/24' '$tmp/netd.ini' && grep -q '^gateway = 10.88.0.254' '$tmp/netd.ini'"
stop
in_ns ip addr flush dev v0
start
check "confirmed, then restarted: 10.88.0.1" v0_has 10.88.0.1
stop

echo "netd-config: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail netd-config" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
