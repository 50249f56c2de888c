#!/bin/sh
# Host test of netd with many links (issue 11): a NAS with many VLANs or
# containers' veths has more than the 64 links netd once read, past which
# the running state could not be read and every write-back and net.apply
# failed. In a network namespace with 100 more links (50 veth pairs),
# iproute2 as the judge: link.list has them all, an API change is written
# back to netd.ini, net.apply reaches the last link and is rolled back
# (the host kernel may have no 802.1Q: the unit suite makes a VLAN there),
# and netd.prom is written. Needs root and `ip netns` (skipped otherwise).
# Ends with "netd-many-links: N passed, N failed".
# Usage: netd-many-links.sh BINDIR
set -u
bin=$1
name=netd-many-links
. "$(dirname "$0")/netns-lib.sh"
i=0
while [ "$i" -lt 50 ]; do
	in_ns ip link add "m${i}a" type veth peer name "m${i}b"
	i=$((i + 1))
done
in_ns ip link set m49b up
printf '[port1]\nlabel = LAN 1\nname = v0\npath = /sys/devices/none\n' > "$tmp/board.ini"
printf '[netd]\nboard = %s/board.ini\nresolv_conf = %s/resolv.conf\nmetrics_dir = %s/metrics\n' \
	"$tmp" "$tmp" "$tmp" > "$tmp/netd.ini"
mkdir "$tmp/metrics"
netd_start

check "iproute2: more than 100 links in the namespace" sh -c \
	"[ \$(ip -n $ns -j link show | jq length) -gt 100 ]"
check "link list: every link, the last pair's too" sh -c \
	"n=\$(ip -n $ns -j link show | jq length); '$bin/nasctl' -S '$tmp/run' --json link list |
	    jq -e --argjson n \"\$n\" '(.links | length) == \$n and (.links | map(.name) | index(\"m49b\"))'"
check "addr add on the 100th link" n addr add m49b 10.66.0.1/24
check "written back to netd.ini (the running state was read whole)" \
	grep -q '^address = 10.66.0.1/24' "$tmp/netd.ini"
cat > "$tmp/new.ini" <<EOF2
[port m49b]
mtu = 1400
address = 10.66.0.2/24
EOF2
n events netd --topic net > "$tmp/events" 2>&1 &
evpid=$!
sleep 0.3
check "net apply --confirm-within 3 with 100 links" n net apply "$tmp/new.ini" --confirm-within 3
check "applied: m49b mtu 1400, 10.66.0.2 for 10.66.0.1" sh -c \
	"ip -n $ns -j link show m49b | jq -e '.[0].mtu == 1400' && ip -n $ns addr show m49b | grep -q 10.66.0.2 &&
	    ! ip -n $ns addr show m49b | grep -q 10.66.0.1"
# Waits for the rollback's event, not for a time.
for _ in $(seq 300); do grep -q "net.rollback" "$tmp/events" && break; sleep 0.1; done
kill "$evpid" 2>/dev/null
check "rolled back: mtu 1500, 10.66.0.1 again, 10.66.0.2 gone" sh -c \
	"ip -n $ns -j link show m49b | jq -e '.[0].mtu == 1500' && ip -n $ns addr show m49b | grep -q 10.66.0.1 &&
	    ! ip -n $ns addr show m49b | grep -q 10.66.0.2"
check "netd.prom written with 100 links" test -s "$tmp/metrics/netd.prom"
check "netd logged no failure to read the running state" sh -c "! grep -q 'running state' '$tmp/netd.log'"

echo "$name: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail $name" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
