#!/bin/sh
# bench-board.sh SRC O IMAGE_DIR BOARD: measure the virtual board and append
# a Markdown section to O/bench-board.md (merged into docs/benchmarks.md by
# `make bench`): time from qemu start to all daemons answering (production
# and test image), image sizes, per-daemon RSS on the board.
set -eu
src=$1 out=$2 img=$3 board=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in prod test; do
	python3 "$src/tests/system/run-scenario" --board "$board" --variant "$v" --image-dir "$img" \
		--log-dir "$out/system-logs" --disk-size 256M \
		"$src/tests/system/tools/bench-board" >"$tmp/$v.out" 2>"$tmp/$v.err" || {
		cat "$tmp/$v.out" "$tmp/$v.err" >&2
		echo "bench-board.sh: the $v image did not boot to all daemons answering" >&2
		exit 1
	}
done
ready() {
	sed -n 's/.*daemons answering \([0-9.]*\) s after qemu start (guest uptime \([0-9.]*\) s)\(; NOT answering: \(.*\)\)\{0,1\}$/\1 s (guest uptime \2 s)\3/p' "$tmp/$1.err" | head -n 1
}
size() { stat -c %s "$1" | awk '{printf "%.1f MB (%d bytes)", $1 / 1e6, $1}'; }
unpacked() { du -sk "$img/stage-$1" | awk '{printf "%.1f MB", $1 * 1024 / 1e6}'; }
{
	echo
	echo "## Virtual board $board ($(date -u +%Y-%m-%d), $(nproc) host CPUs, qemu TCG, no KVM)"
	echo
	echo "| figure | production image | test image |"
	echo "|---|---|---|"
	echo "| qemu start to all four daemons answering | $(ready prod) | $(ready test) |"
	echo "| initramfs, zstd | $(size "$img/$board-prod.cpio.zst") | $(size "$img/$board-test.cpio.zst") |"
	echo "| initramfs, unpacked | $(unpacked prod) | $(unpacked test) |"
	echo "| kernel (vmlinuz, $(cat "$img/kernel-version")) | $(size "$img/vmlinuz") | same |"
	for d in raidd cryptd netd powerd; do
		echo "| $d RSS on the board | $(awk -v d="$d" '$1 == "rss" && $2 == d {$1 = $2 = ""; print substr($0, 3) " KiB"}' "$tmp/prod.out") | $(awk -v d="$d" '$1 == "rss" && $2 == d {$1 = $2 = ""; print substr($0, 3) " KiB"}' "$tmp/test.out") |"
	done
	echo
	echo "MB = 10^6 bytes. Measured by \`make bench-board\` (scripts/image/bench-board.sh)."
} >>"$out/bench-board.md"
tail -n 14 "$out/bench-board.md"
