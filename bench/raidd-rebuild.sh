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
{
	echo
	echo "## raidd: rebuild and scrub ($(date -u +%Y-%m-%d), qemu TCG, RAID 1 on 2 x 256M)"
	echo
	echo "md's own initial resync of the array (no raidd in the way, md's default speed"
	echo "window) against raidd's scrub (volume.scrub check, a job) and raidd's rebuild"
	echo "(auto-repair: from a blank disk's insert to volume.repaired, partitioning and"
	echo "labels included); MB/s of the array's component size, and the ratio to md's resync."
	echo
	echo "| operation | seconds | MB/s | / md resync |"
	echo "|---|---|---|---|"
	awk '$1 == "resync" || $1 == "scrub" || $1 == "rebuild" { s[$1] = $2; b[$1] = $3; n[++k] = $1 }
	    END { for (i = 1; i <= k; i++) { o = n[i]; r = b[o] / s[o] / 1e6;
	        if (o == "resync") base = r
	        printf "| %s | %.2f | %.1f | %.2f |\n", o == "resync" ? "md resync (raw)" :
	            o == "scrub" ? "raidd scrub (check)" : "raidd rebuild (auto-repair)",
	            s[o], r, base ? r / base : 0 } }' "$tmp"
	grep -q '^rebuild ' "$tmp" || echo "(incomplete: $(tr '\n' ' ' < "$tmp"))"
} >>"$md"
