#!/bin/sh
# Encrypted volumes on the virtual board: dm-crypt vs plain MB/s on the
# same RAID 1 and volume.unlock time with the calibrated KDF, appended as
# a Markdown section to O/bench-board.md.
# Usage: crypt-board.sh SRC O IMAGE_DIR
set -eu
src=$1 out=$2 img=$3
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
python3 "$src/tests/system/run-scenario" --image-dir "$img" --log-dir "$out/system-logs" \
	--disk-size 512M --timeout 900 "$src/tests/system/tools/bench-crypt" >"$tmp"
{
	echo
	echo "## Encrypted volume on the virtual board ($(date -u +%Y-%m-%d), qemu TCG, RAID 1 on 2 x 512M)"
	echo
	echo "The same array through nas-b.crypt (dm-crypt, aes-xts-plain64, 512-bit key,"
	echo "4096-byte sectors) and through nas-b under it; 128 MiB sequential, direct I/O."
	echo "CPU AES instructions seen by the guest: $(awk '$1 == "cpu" { f = 1 } END { print f ? "yes" : "no" }' "$tmp")."
	echo "volume.unlock: nasctl to mounted, cryptd's shipped [kdf] calibrated on the board."
	echo
	echo "| figure | encrypted | plain | ratio |"
	echo "|---|---|---|---|"
	for op in write read; do
		awk -v op=$op '$1 == "mbs" && $2 == op { v[$3] = $4 } END {
		    r = v["plain"] > 0 ? v["crypt"] / v["plain"] : 0
		    printf "| %s MB/s | %s | %s | %.2f |\n", op, v["crypt"], v["plain"], r }' "$tmp"
	done
	awk '$1 == "unlock" { s = s sep $2; sep = ", " } END { printf "| volume.unlock seconds (3 runs) | %s | - | - |\n", s }' "$tmp"
} >>"$out/bench-board.md"
