#!/bin/sh
# raidd on the virtual board: rebuild and scrub speed against md's own
# resync of the same array (tests/system/tools/bench-rebuild), appended as
# a Markdown section to OUT (O/bench-board.md for make bench).
# Usage: raidd-rebuild.sh SRC O IMAGE_DIR [OUT]
set -eu
src=$1 out=$2 img=$3 md=${4:-$2/bench-board.md}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
python3 "$src/tests/system/run-scenario" --image-dir "$img" --log-dir "$out/system-logs" \
	--disk-size 256M "$src/tests/system/tools/bench-rebuild" >"$tmp"
cp "$tmp" "$out/bench-rebuild.txt"
{
	echo
	echo "## raidd: rebuild and scrub ($(date -u +%Y-%m-%d), qemu TCG, RAID 1 on 2 x 256M)"
	echo
	echo "md's own initial resync of the array (no raidd in the way, md's default speed"
	echo "window) against raidd's scrub (volume.scrub check, a job) and raidd's rebuild"
	echo "(auto-repair: from a blank disk's insert to volume.repaired, partitioning and"
	echo "labels included); MB/s of the array's component size, and the ratio to md's resync."
	echo "md's resync is timed from the end of the volume.create job (md began a little"
	echo "before), so its figure is an upper bound and the ratios lower bounds."
	echo
	echo "| operation | seconds | MB/s | / md resync |"
	echo "|---|---|---|---|"
	awk '
	    $1 == "resync" { base = $3 / $2 / 1e6 }
	    $1 == "resync" || $1 == "scrub" || $1 == "rebuild" {
		r = $3 / $2 / 1e6
		what = "raidd rebuild (auto-repair)"
		if ($1 == "resync") what = "md resync (raw)"
		if ($1 == "scrub") what = "raidd scrub (check)"
		printf "| %s | %.2f | %.1f | %.2f |\n", what, $2, r, base ? r / base : 0
	    }' "$tmp"
	grep -q '^rebuild ' "$tmp" || echo "(incomplete: $(tr '\n' ' ' < "$tmp"))"
} >>"$md"
