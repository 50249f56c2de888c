#!/bin/sh
# Host test of netd's DHCPv4 client on the real kernel: busybox udhcpd
# serves in the peer namespace, netd runs busybox udhcpc on v0 with its
# own script (rootfs-overlay/usr/libexec/netd/udhcpc-script), and
# iproute2 judges what netd applied. Then a rogue server's leases (a
# prefix that takes the management subnet over, a /32, a router outside
# the subnet) must change nothing they should not, and a crowded one (two
# routers, six name servers, shell in its strings) gives only what netd
# takes. Needs root, `ip netns` and busybox; says so and passes nothing
# when they are missing.
# Ends with "netd-dhcp: N passed, N failed".
# Usage: netd-dhcp.sh BINDIR
set -u
bin=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
name=netd-dhcp
. "$(dirname "$0")/netns-lib.sh"
bb=$(command -v busybox)
if [ -z "$bb" ] || ! "$bb" udhcpd --help 2>&1 | grep -q udhcpd; then
	echo "$name: skipped (needs busybox with udhcpc and udhcpd)"
	exit 0
fi
ln -s "$bb" "$tmp/udhcpc"
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; cleanup' EXIT INT TERM
# A second port that carries the management address: a lease must not take it over.
in_ns ip link add mgmt0 type veth peer name mgmt1
in_ns ip link set mgmt0 up
in_ns ip link set mgmt1 up
in_ns ip addr add 10.99.0.2/24 dev mgmt0
printf '[netd]\nresolv_conf = %s/resolv.conf\nmetrics_dir =\ndhcp_client = %s/udhcpc\ndhcp_script = %s/rootfs-overlay/usr/libexec/netd/udhcpc-script\n' \
	"$tmp" "$tmp" "$src" > "$tmp/netd.ini"
: > "$tmp/resolv.conf"
mkdir "$tmp/run"
# Not through in_ns: $! is then netd itself (ip netns exec execs it), which cleanup kills.
ip netns exec "$ns" "$bin/netd" -f -S "$tmp/run" -c "$tmp/netd.ini" > "$tmp/netd.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -S "$tmp/run/netd.sock" ] && break; sleep 0.1; done
n() { "$bin/nasctl" -S "$tmp/run" "$@"; }
# until SECONDS COMMAND...: polls the command every 0.2 s (a wait, not a timed assertion).
until_ok() {
	_i=$(($1 * 5))
	shift
	while [ "$_i" -gt 0 ]; do "$@" > /dev/null 2>&1 && return 0; sleep 0.2; _i=$((_i - 1)); done
	"$@"
}
dhcp_state() { n --json link show v0 | jq -e "$1"; }
# server OPTIONS...: (re)starts udhcpd on v1 with a pool in 10.77.0.0 and the options given.
server() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	{
		printf 'start 10.77.0.100\nend 10.77.0.110\ninterface v1\nlease_file %s/leases\n' "$tmp"
		printf 'max_leases 10\nauto_time 0\n'
		for o in "$@"; do printf 'opt %s\n' "$o"; done
	} > "$tmp/udhcpd.conf"
	: > "$tmp/leases"
	ip netns exec "$peer" "$bb" udhcpd -f "$tmp/udhcpd.conf" > "$tmp/udhcpd.log" 2>&1 &
	spid=$!
}
ip -n "$peer" link set v1 up
ip -n "$peer" addr add 10.77.0.1/24 dev v1
server "subnet 255.255.255.0" "router 10.77.0.1" "dns 10.77.0.53 10.77.0.54" "lease 120"

check "dhcp.start v0" n dhcp start v0
check "a lease binds: link.show says bound with the address, router and lease" until_ok 20 \
	dhcp_state '.dhcp.state == "bound" and (.dhcp.address | startswith("10.77.0.1")) and .dhcp.router == "10.77.0.1" and .dhcp.lease_s == 120 and .dhcp.default_route == true'
addr=$(n --json link show v0 | jq -r '.dhcp.address')
check "iproute2 sees the lease's address ($addr) on v0" sh -c \
	"ip -n $ns -j addr show v0 | jq -e '[.[0].addr_info[] | select(.family == \"inet\" and (.local + \"/\" + (.prefixlen|tostring)) == \"$addr\")] | length == 1'"
check "iproute2 sees the default route via the lease's router" sh -c \
	"ip -n $ns -j route show default | jq -e '.[0].gateway == \"10.77.0.1\" and .[0].dev == \"v0\"'"
check "resolv.conf holds the lease's name servers" sh -c \
	"grep -q '^nameserver 10.77.0.53' '$tmp/resolv.conf' && grep -q '^nameserver 10.77.0.54' '$tmp/resolv.conf'"
check "netd.ini says dhcp = yes, without the lease's address or route" sh -c \
	"grep -q '^dhcp = yes' '$tmp/netd.ini' && ! grep -q '10.77.0.1' '$tmp/netd.ini'"
check "dhcp.renew: the lease is renewed" n dhcp renew v0
check "renewals counts it" until_ok 10 dhcp_state '.dhcp.renewals >= 1 and .dhcp.state == "bound"'
refused_stop() { ! n dhcp stop v0 > "$tmp/out" 2>&1 && grep -q force "$tmp/out"; }
check "dhcp.stop of a bound lease without force is refused" refused_stop
check "dhcp.stop --force" n dhcp stop v0 --force
check "the lease's address, route and name servers are gone" sh -c \
	"[ -z \"\$(ip -n $ns -4 addr show v0)\" ] && [ -z \"\$(ip -n $ns route show default)\" ] &&
	 ! grep -q nameserver '$tmp/resolv.conf'"
check "netd.ini no longer says dhcp" sh -c "! grep -E '^dhcp( =|_fallback)' '$tmp/netd.ini'"

# A rogue server: a /16 over 10.77 and 10.99 would take mgmt0's subnet over.
server "subnet 255.0.0.0" "router 10.77.0.1"
check "dhcp.start v0 with a fallback" n call netd dhcp.start '{"link":"v0","fallback":"192.168.250.2/24"}'
check "the rogue lease is refused and says why" until_ok 20 \
	dhcp_state '.dhcp.state != "bound" and (.dhcp.error | test("overlaps 10.99.0.2/24 on mgmt0"))'
check "mgmt0's route is untouched and v0 has no lease address" sh -c \
	"ip -n $ns route get 10.99.0.7 | grep -q 'dev mgmt0' && ! ip -n $ns -4 addr show v0 | grep -q 10.77"
n dhcp stop v0 --force > /dev/null 2>&1
# A /32 and a router outside the subnet.
server "subnet 255.255.255.255" "router 10.77.0.1"
check "dhcp.start v0" n call netd dhcp.start '{"link":"v0","fallback":"192.168.250.2/24"}'
check "a /32 lease is refused" until_ok 20 dhcp_state '.dhcp.error | test("prefixes 8-30")'
n dhcp stop v0 --force > /dev/null 2>&1
server "subnet 255.255.255.0" "router 10.88.0.1"
check "dhcp.start v0" n dhcp start v0
check "a router outside the subnet: bound, no default route" until_ok 20 \
	dhcp_state '.dhcp.state == "bound" and .dhcp.router == null and .dhcp.default_route == false'
check "iproute2: no default route" sh -c "[ -z \"\$(ip -n $ns route show default)\" ]"
n dhcp stop v0 --force > /dev/null 2>&1
# Options as a hostile server fills them: two routers, six name servers,
# a domain and a host name with shell in them. The first router, the
# first three servers, nothing of the strings.
server "subnet 255.255.255.0" "router 10.77.0.1 10.77.0.2" \
	"dns 10.77.0.51 10.77.0.52 10.77.0.53 10.77.0.54 10.77.0.55 10.77.0.56" \
	"domain evil.example;touch $tmp/pwned" "hostname \$(touch $tmp/pwned)" "lease 120"
check "dhcp.start v0" n dhcp start v0
check "a crowded lease binds: the first router, the first three name servers" until_ok 20 \
	dhcp_state '.dhcp.state == "bound" and .dhcp.router == "10.77.0.1" and .dhcp.dns == ["10.77.0.51", "10.77.0.52", "10.77.0.53"]'
check "resolv.conf: three name servers, no search or domain line, nothing run" sh -c \
	"[ \"\$(grep -c '^nameserver ' '$tmp/resolv.conf')\" = 3 ] && ! grep -Eq '^(search|domain)' '$tmp/resolv.conf' && [ ! -e '$tmp/pwned' ]"
n dhcp stop v0 --force > /dev/null 2>&1

# No server: the fallback address comes, and goes when a lease binds.
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
check "dhcp.start v0 with a fallback, no server" n call netd dhcp.start '{"link":"v0","fallback":"192.168.250.2/24"}'
check "no answer: the fallback address is applied" until_ok 30 \
	dhcp_state '.dhcp.state == "fallback" and .dhcp.fallback_applied == true'
check "iproute2 sees the fallback address" sh -c "ip -n $ns -4 addr show v0 | grep -q 192.168.250.2/24"
check "netd.ini keeps the fallback as dhcp_fallback, not as an address" sh -c \
	"grep -q '^dhcp_fallback = 192.168.250.2/24' '$tmp/netd.ini' && ! grep -q '^address.*192.168.250.2' '$tmp/netd.ini'"
server "subnet 255.255.255.0" "router 10.77.0.1" "lease 120"
n dhcp renew v0 > /dev/null 2>&1
check "a server again: the lease binds and the fallback goes" until_ok 30 \
	dhcp_state '.dhcp.state == "bound" and .dhcp.fallback_applied == false'
check "iproute2: the fallback address is gone" sh -c "! ip -n $ns -4 addr show v0 | grep -q 192.168.250.2"
check "the client is supervised: killed, it runs again and binds" sh -c \
	"kill \$(pgrep -P $pid -x udhcpc) && sleep 0.5"
check "restarted and bound again" until_ok 30 dhcp_state '.dhcp.restarts >= 1 and .dhcp.state == "bound"'

echo "netd-dhcp: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail netd-dhcp" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
