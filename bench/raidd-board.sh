#!/bin/sh
# raidd on the virtual board: time to create each level and to assemble at
# boot, appended as a Markdown section to O/bench-board.md.
# Usage: raidd-board.sh SRC O IMAGE_DIR
set -eu
src=$1 out=$2 img=$3
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
python3 "$src/tests/system/run-scenario" --image-dir "$img" --log-dir "$out/system-logs" \
	--bays 4 --disk-size 1G,1G,2G,2G "$src/tests/system/tools/bench-raidd" >"$tmp"
{
	echo
	echo "## raidd on the virtual board ($(date -u +%Y-%m-%d), qemu TCG, 4 bays: 1G, 1G, 2G, 2G)"
	echo
	echo "Creation is the volume.create job until the volume is mounted (md's resync"
	echo "goes on in the background and is not counted; ext4 is made lazily). Assembly"
	echo "is raidd's start-up: reading every disk's label, starting arrays and maps,"
	echo "mounting."
	echo
	echo "| operation | seconds |"
	echo "|---|---|"
	awk '$1 == "create" { printf "| create %s | %s |\n", $2, $3 }' "$tmp"
	awk '$1 == "assembly" { printf "| assemble %s volumes at boot | %.3f |\n", $2, $3 }' "$tmp"
} >>"$out/bench-board.md"
python3 "$src/tests/system/run-scenario" --image-dir "$img" --log-dir "$out/system-logs" \
	--disk-size 96M "$src/tests/system/tools/bench-detect" >"$tmp"
{
	echo
	echo "## raidd: failure to event ($(date -u +%Y-%m-%d), qemu TCG, RAID 1 on 2 x 96M)"
	echo
	echo "A member pulled 10 times (put back and resynced in between); seconds until"
	echo "volume.state degraded reaches a subscriber, from the pull request (qemu's"
	echo "device_del included) and from the guest seeing the bay empty. Goal: 1 s."
	echo
	echo "| from | median | max |"
	echo "|---|---|---|"
	for col in 2 3; do
		awk -v c=$col '$1 == "detect" { print $c }' "$tmp" | sort -n | awk -v c=$col '
		    { v[NR] = $1 } END { if (NR) printf "| %s | %.2f | %.2f |\n",
		    c == 2 ? "pull request" : "bay empty", NR % 2 ? v[(NR + 1) / 2] :
		    (v[NR / 2] + v[NR / 2 + 1]) / 2, v[NR] }'
	done
} >>"$out/bench-board.md"
