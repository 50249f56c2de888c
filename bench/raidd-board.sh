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
