#!/bin/sh
# netd on the virtual board (issue 11): LACP aggregate throughput with
# 1-8 iperf3 flows each way over tc-shaped links, the failover gap (a
# ping every 2 ms while a port goes down), and
# netd's RSS and CPU at rest (tests/system/tools/bench-netd), appended as
# a Markdown section to O/bench-board.md. Figures under qemu TCG are low
# and reported as measured; nothing is asserted.
# Usage: netd-board.sh SRC O IMAGE_DIR [OUTPUT]   (OUTPUT: the tool's lines
# from an earlier run, formatted instead of booting the board again)
set -eu
src=$1 out=$2 img=$3
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if [ $# -ge 4 ]; then
	cp "$4" "$tmp"
else
	python3 "$src/tests/system/run-scenario" --image-dir "$img" --log-dir "$out/system-logs" \
		--disk-size 64M --timeout 600 "$src/tests/system/tools/bench-netd" >"$tmp"
fi
cp "$tmp" "$out/bench-netd.txt"	# the tool's own lines, kept beside the report
rate=$(awk '$1 == "rate" { print $2 }' "$tmp")
{
	echo
	echo "## netd: LACP aggregate and failover ($(date -u +%Y-%m-%d), qemu TCG, make bench)"
	echo
	echo "netd's 802.3ad bond (LACP fast, layer3+4) over two veth pairs whose far ends are an"
	echo "iproute2 802.3ad bond in a network namespace; every link shaped to ${rate} Mbit/s with"
	echo "tc tbf, so two links carry at most twice that. iperf3, 5 s per run (1 s omitted),"
	echo "the receiver's count; tx is netd's side sending. One flow stays on one link. Target"
	echo "(issue 11): 4 flows >= 1.9x one flow in each direction."
	echo
	echo "| flows | tx Mbit/s | x 1 flow | rx Mbit/s | x 1 flow |"
	echo "|---|---|---|---|---|"
	awk '$1 == "flows" { v[$2, $3] = $4; if ($3 == 1) one[$2] = $4 }
	    END { for (n = 1; n <= 8; n *= 2)
		printf "| %d | %s | %.2f | %s | %.2f |\n", n, v["tx", n],
		    one["tx"] ? v["tx", n] / one["tx"] : 0, v["rx", n],
		    one["rx"] ? v["rx", n] / one["rx"] : 0 }' "$tmp"
	echo
	awk '$1 == "calm" { c = $2; cl = $3; cs = $4 }
	    $1 == "gap" { iv = $4 ? 8000 / $4 : 0
		printf "Failover: %s of %s pings lost, a ping every %.1f ms on average (asked: 2 ms; the emulated machine sends fewer), so about %.0f ms without replies, while the far end of the port carrying them was taken down (iputils ping -D through the bond, 8 s). The longest time between two replies was %s ms; the same ping without a cut lost %s of %s and its longest gap was %s ms: under qemu TCG the longest gap shows the emulation'"'"'s stalls as much as the failover.\n", $3, $4, iv, $3 * iv, $2, cl, cs, c }' "$tmp"
	awk '$1 == "rss" { printf "netd at rest with the bond: RSS %s KiB", $2 } $1 == "cpu" { printf ", CPU %s %% over 10 s.\n", $2 }' "$tmp"
} >>"$out/bench-board.md"
