#!/bin/sh
# Host test of netd on the real kernel: netd runs in a fresh network
# namespace with a veth pair (its peer end in a second namespace) and is
# judged by iproute2. Needs root and `ip netns`; says so and passes
# nothing when they are missing. A kernel without 802.1Q must refuse
# vlan.create with its own words. Ends with "netd-netns: N passed, N failed".
# Usage: netd-netns.sh BINDIR
set -u
bin=$1
name=netd-netns
. "$(dirname "$0")/netns-lib.sh"
cat > "$tmp/board.ini" <<EOB
[board]
name = netns
bays = 1
ports = 2
[bay1]
label = Bay 1
path = /sys/devices/none
[port1]
label = LAN 1
name = v0
path = /sys/devices/none
[port2]
label = LAN 2
name = lan2
path = /sys/devices/none
EOB
printf '[netd]\nboard = %s/board.ini\nresolv_conf = %s/resolv.conf\nmetrics_dir = %s/metrics\n' "$tmp" "$tmp" "$tmp" > "$tmp/netd.ini"
netd_start
# refused WHAT WORDS COMMAND...: the command fails and says WORDS.
refused() {
	_what=$1 _words=$2
	shift 2
	if "$@" > "$tmp/out" 2>&1; then bad "$_what (accepted)"; cat "$tmp/out"
	elif grep -q "$_words" "$tmp/out"; then ok "$_what"
	else bad "$_what"; cat "$tmp/out"; fi
}
jq_ok() { jq -e "$1" > /dev/null; }

check "link list: board ports first, by board name; a missing one says so" sh -c \
	"'$bin/nasctl' -S '$tmp/run' --json link list | jq -e '.links[0].name == \"v0\" and .links[0].port == \"LAN 1\" and .links[0].kind == \"veth\" and .links[1].state == \"missing\"'"
check "link show: veth reports 10000 Mb/s full duplex" sh -c \
	"'$bin/nasctl' -S '$tmp/run' --json link show v0 | jq -e '.speed_mbps == 10000 and .duplex == \"full\" and .state == \"down\"'"
check "link.set up and mtu 9000" n call netd link.set '{"link":"v0","up":true,"mtu":9000}'
check "iproute2 agrees: v0 up, mtu 9000" sh -c \
	"ip -n $ns -j link show v0 | jq -e '.[0].mtu == 9000 and (.[0].flags | index(\"UP\"))'"
refused "mtu above 65535: refused before the kernel" "out of range" \
	n call netd link.set '{"link":"v0","mtu":65536}'
check "a refused mtu changed nothing" sh -c "ip -n $ns -j link show v0 | jq -e '.[0].mtu == 9000'"

# link.state comes from the kernel's notification when the far end comes up.
n events netd --topic link > "$tmp/events" 2>&1 &
evpid=$!
sleep 0.3
ip -n "$peer" link set v1 up mtu 9000
ip -n "$peer" addr add 10.77.0.2/24 dev v1
sleep 0.5
kill "$evpid" 2>/dev/null
check "link.state: v0 has carrier once the peer is up" grep -q "link=v0 state=up.*carrier=true" "$tmp/events"

check "addr add 10.77.0.1/24" n addr add v0 10.77.0.1/24
check "iproute2 sees the address" sh -c "ip -n $ns -j addr show v0 | jq -e '[.[0].addr_info[] | select(.local == \"10.77.0.1\" and .prefixlen == 24)] | length == 1'"
refused "the same address again" "File exists" n addr add v0 10.77.0.1/24
refused "an address without a prefix" "CIDR" n addr add v0 10.77.0.9
refused "a prefix of 33" "prefix length" n addr add v0 10.77.0.9/33
check "refusals added nothing" sh -c "ip -n $ns -j addr show v0 | jq -e '[.[0].addr_info[] | select(.family == \"inet\")] | length == 1'"
check "addr add fd77::1/64" n addr add v0 fd77::1/64
check "addr list shows both" sh -c "'$bin/nasctl' -S '$tmp/run' --json addr list v0 | jq -e '.addresses | map(.address) | index(\"10.77.0.1/24\") and index(\"fd77::1/64\")'"

refused "a gateway no link reaches" "unreachable" n route default 10.78.0.1
check "route default 10.77.0.254" n route default 10.77.0.254
check "iproute2 sees the default route" sh -c "ip -n $ns -j route show default | jq -e '.[0].gateway == \"10.77.0.254\" and .[0].dev == \"v0\"'"
refused "another gateway without --force" "force" n route default 10.77.0.253
check "route default again with --force replaces it" n route default 10.77.0.253 --force
check "one default route, the new one" sh -c "ip -n $ns -j route show default | jq -e 'length == 1 and .[0].gateway == \"10.77.0.253\"'"

# Counters move with traffic through the pair.
# The ping must itself succeed: without iputils-ping, IPv6 neighbour
# discovery alone once made the counters pass by chance.
n --json link show v0 | jq -c .counters > "$tmp/before"
check "ping the peer: three replies" in_ns ping -c 3 -i 0.2 -w 5 -q 10.77.0.2
check "counters: at least 3 more packets out and in" sh -c \
	"'$bin/nasctl' -S '$tmp/run' --json link show v0 | jq -e --slurpfile b '$tmp/before' \
	'.counters.tx_packets - \$b[0].tx_packets >= 3 and .counters.rx_packets - \$b[0].rx_packets >= 3'"

check "dns set writes resolv.conf" n dns set --servers 10.77.0.2,fd77::53
check "resolv.conf holds both servers" sh -c \
	"grep -qx 'nameserver 10.77.0.2' '$tmp/resolv.conf' && grep -qx 'nameserver fd77::53' '$tmp/resolv.conf'"

if in_ns ip link add link v0 name probe.9 type vlan id 9 2>/dev/null; then
	in_ns ip link del probe.9
	check "vlan create v0 --id 100" n vlan create v0 --id 100
	check "iproute2 sees VLAN 100 on v0" sh -c \
		"ip -n $ns -d -j link show v0.100 | jq -e '.[0].linkinfo.info_data.id == 100'"
	refused "the same VLAN id again" "exists" n vlan create v0 --id 100 --name other
	check "vlan delete v0.100" n vlan delete v0.100
	check "the VLAN is gone" sh -c "! ip -n $ns link show v0.100 2>/dev/null"
else
	refused "no 802.1Q in this kernel: vlan.create says so" "Unknown device type" \
		n vlan create v0 --id 100
fi
refused "vlan delete of a link that is no VLAN" "not a VLAN" n vlan delete v0

# Bonds: the raw link dump netd decodes itself (bond-nl.c) on the real kernel.
check "bond list reads the kernel's dump: no bonds" sh -c \
	"'$bin/nasctl' -S '$tmp/run' --json bond list | jq -e '.bonds == []'"
if [ ! -e /sys/class/net/bonding_masters ] && ! in_ns ip link add probe0 type bond 2>/dev/null; then
	refused "no bonding in this kernel: bond.create says so" "Unknown device type" \
		n bond create b0 --mode 802.3ad --ports v0 --force
	check "the refused bond changed nothing: v0 up, no master, no b0" sh -c \
		"ip -n $ns -j link show v0 | jq -e '.[0].master == null and (.[0].flags | index(\"UP\"))' &&
		 ! ip -n $ns link show b0 2>/dev/null"
else
	in_ns ip link del probe0 2>/dev/null
	check "bond create b0 over v0" n bond create b0 --mode active-backup --ports v0 --force
	check "iproute2 sees v0 in b0" sh -c "ip -n $ns -j link show v0 | jq -e '.[0].master == \"b0\"'"
	check "bond delete b0" n bond delete b0 --force
fi

check "netd.prom from the real kernel's dump passes promtool" sh -c \
	"test -f '$tmp/metrics/netd.prom' && { ! command -v promtool > /dev/null ||
		promtool check metrics < '$tmp/metrics/netd.prom'; }"

refused "link down on the link with the default route, without force" "force" \
	n link set v0 --down
check "nasctl link set --mtu 9000 --force: the kernel's MTU" sh -c \
	"'$bin/nasctl' -S '$tmp/run' link set v0 --mtu 9000 --force > /dev/null &&
	 ip -n $ns link show v0 | grep -q 'mtu 9000'"
check "nasctl link set --down --force: the default route goes with it" sh -c \
	"'$bin/nasctl' -S '$tmp/run' link set v0 --down --force > /dev/null &&
	 ! ip -n $ns link show v0 | grep -q '[<,]UP[,>]' && [ -z \"\$(ip -n $ns route show default)\" ]"
check "nasctl link set --up: up again" sh -c \
	"'$bin/nasctl' -S '$tmp/run' link set v0 --up > /dev/null &&
	 ip -n $ns link show v0 | grep -q '[<,]UP[,>]'"

echo "netd-netns: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail netd-netns" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
