#!/bin/sh
# Host test of netd's management guard (issue 11, Decision 81) on the real
# kernel, in a network namespace, iproute2 as the judge: with v0 carrying
# an address and the default route, a change that would cut a caller
# coming in through it (the address deleted, v0 down or re-MTU'd, net
# apply re-addressing it) is refused without force, and changes nothing;
# net apply with --confirm-within goes through and rolls back by itself;
# force goes through. Needs root and `ip netns` (skipped otherwise).
# Ends with "netd-guard: N passed, N failed".
# Usage: netd-guard.sh BINDIR
set -u
bin=$1
name=netd-guard
. "$(dirname "$0")/netns-lib.sh"
ip -n "$peer" link set v1 up
printf '[port1]\nlabel = LAN 1\nname = v0\npath = /sys/devices/none\n' > "$tmp/board.ini"
cat > "$tmp/netd.ini" <<EOF2
[netd]
board = $tmp/board.ini
resolv_conf = $tmp/resolv.conf

[port v0]
up = yes
address = 10.77.0.1/24

[route]
gateway = 10.77.0.254
EOF2
netd_start
# rpc METHOD PARAMS: netd's raw answer (a method nasctl has no command for).
rpc() {
	printf '{"jsonrpc":"2.0","id":1,"method":"%s","params":%s}\n' "$1" "$2" |
	    socat -t 2 - "UNIX-CONNECT:$tmp/run/netd.sock"
}
# refused WHAT COMMAND...: the command fails saying force, and v0 is as it was.
refused() {
	_what=$1
	shift
	if "$@" > "$tmp/out" 2>&1 && ! grep -q '"error"' "$tmp/out"; then
		bad "$_what (accepted)"
	elif ! grep -q force "$tmp/out"; then
		bad "$_what (refused without saying force)"; cat "$tmp/out"
	elif ! same; then bad "$_what (refused, but v0 changed)"
	else ok "$_what"; fi
}
same() {
	ip -n "$ns" -j link show v0 | jq -e '.[0].mtu == 1500 and (.[0].flags | index("UP"))' >/dev/null &&
	    ip -n "$ns" addr show v0 | grep -q 'inet 10.77.0.1/24' &&
	    ip -n "$ns" -j route show default | jq -e '.[0].gateway == "10.77.0.254"' >/dev/null
}
check "at start: v0 up with 10.77.0.1/24 and the default route" same
refused "addr del of v0's address" n addr del v0 10.77.0.1/24
refused "link.set v0 down" rpc link.set '{"link":"v0","up":false}'
refused "link.set v0 mtu 1400" rpc link.set '{"link":"v0","mtu":1400}'
cat > "$tmp/new.ini" <<EOF2
[port v0]
address = 10.88.0.1/24
EOF2
refused "net apply re-addressing v0 without --confirm-within" n net apply "$tmp/new.ini"
check "net.apply's refusal left netd.ini as it was" grep -q '^address = 10.77.0.1/24' "$tmp/netd.ini"
n events netd --topic net > "$tmp/events" 2>&1 &
evpid=$!
sleep 0.3
check "net apply --confirm-within 2 goes through" n net apply "$tmp/new.ini" --confirm-within 2
check "applied: 10.88.0.1 on v0" sh -c "ip -n $ns addr show v0 | grep -q 10.88.0.1"
for _ in $(seq 300); do grep -q "net.rollback" "$tmp/events" && break; sleep 0.1; done
kill "$evpid" 2>/dev/null
check "not confirmed: rolled back to 10.77.0.1 and the default route" same
check "net apply --force goes through at once" n net apply "$tmp/new.ini" --force
check "forced: 10.88.0.1 on v0, 10.77.0.1 gone" sh -c \
	"ip -n $ns addr show v0 | grep -q 10.88.0.1 && ! ip -n $ns addr show v0 | grep -q 10.77.0.1"
check "addr del --force" n addr del v0 10.88.0.1/24 --force
check "link.set v0 down with force" sh -c \
	"printf '%s\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"link.set\",\"params\":{\"link\":\"v0\",\"up\":false,\"force\":true}}' |
	    socat -t 2 - UNIX-CONNECT:$tmp/run/netd.sock | grep -q result"

echo "$name: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail $name" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
