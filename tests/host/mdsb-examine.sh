#!/bin/sh
# Cross-check raidd's md v1.2 superblocks with stock mdadm: members written
# by "test-raidd-mdsb --image" must read back through `mdadm --examine` and
# `mdadm --examine-bitmap` with the level, geometry, role and checksum raidd
# meant.  mdadm parses the superblock in userspace, so no kernel md is needed.
# The bitmap's coverage is judged by mdadm's rule, not raidd's: its Sync Size
# is the array (raid1, raid10) or a member (raid5) as mdadm --examine reports
# them, on sparse members of up to 6 TiB.
# Usage: mdsb-examine.sh [BINDIR]   (default: build/bin; built if missing)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bindir=${1:-$src/build/bin}
gen=$bindir/test-raidd-mdsb
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

if ! command -v mdadm >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends mdadm >/dev/null 2>&1
	fi
	command -v mdadm >/dev/null 2>&1 || {
		echo "mdsb-examine: mdadm missing and not installable"
		echo "0 passed, 1 failed"
		exit 1
	}
fi
[ -x "$gen" ] || make -C "$src" -s "$gen" >/dev/null 2>&1
[ -x "$gen" ] || { echo "mdsb-examine: no $gen"; echo "0 passed, 1 failed"; exit 1; }

# field NAME: the value mdadm printed after "NAME :" in $work/out.
field() {
	sed -n "s/^ *$1 : //p" "$work/out" | head -n 1
}

# want DESC ACTUAL EXPECTED
want() {
	if [ "$2" = "$3" ]; then ok; else bad "$case: $1: mdadm says '$2', raidd meant '$3'"; fi
}

check_member() {
	img=$work/m.img
	"$gen" --image "$@" "$img" >"$work/want" || { bad "$case: image not written"; return; }
	# shellcheck disable=SC1091
	. "$work/want"
	if ! mdadm --examine "$img" >"$work/out" 2>&1; then
		bad "$case: mdadm --examine failed: $(head -n 2 "$work/out")"
		return
	fi
	want version "$(field Version)" 1.2
	want magic "$(field Magic)" a92b4efc
	want level "$(field 'Raid Level')" "$level"
	want devices "$(field 'Raid Devices')" "$devices"
	want name "$(field Name)" "nas:vol1-t0"
	want uuid "$(field 'Array UUID')" "00112233:44556677:8899aabb:ccddeeff"
	want data-offset "$(field 'Data Offset')" "$data_offset sectors"
	want super-offset "$(field 'Super Offset')" "8 sectors"
	want avail "$(field 'Avail Dev Size' | cut -d' ' -f1)" "$avail"
	want checksum "$(field Checksum)" "$csum - correct"
	want role "$(field 'Device Role')" "Active device $role"
	if [ "$level" != raid0 ]; then
		want array-size "$(field 'Array Size' | cut -d' ' -f1)" "$array_kib"
		want used "$(field 'Used Dev Size' | cut -d' ' -f1)" \
			"$( [ "$used" = "$avail" ] || echo "$used")"
	fi
	# What md resyncs, by mdadm's own account of this member: the array
	# for raid1 and raid10 (mdadm sizes a raid10 bitmap by the array's
	# capacity), one member's used size for raid5.  In KiB.
	case $level in
	raid5) dev_sectors=$(field 'Used Dev Size' | cut -d' ' -f1)
		# mdadm leaves Used Dev Size out when it equals Avail Dev Size.
		[ -n "$dev_sectors" ] || dev_sectors=$(field 'Avail Dev Size' | cut -d' ' -f1)
		sync_kib=$((dev_sectors / 2)) ;;
	*) sync_kib=$(field 'Array Size' | cut -d' ' -f1) ;;
	esac
	if [ -n "${bitmap_chunk_mib:-}" ]; then
		want bitmap "$(field 'Internal Bitmap')" "8 sectors from superblock"
		bitmap_bits=$(( (sync_kib + bitmap_chunk_mib * 1024 - 1) / (bitmap_chunk_mib * 1024) ))
		# Given a regular file, mdadm reads it as a bitmap file from
		# byte 0: hand it the bytes at superblock + 8 sectors.
		dd if="$img" of="$work/bm" bs=512 skip=16 count=256 2>/dev/null
		mdadm --examine-bitmap "$work/bm" >"$work/out" 2>&1
		want bitmap-magic "$(field Magic)" 6d746962
		want bitmap-version "$(field Version)" 4
		want bitmap-chunk "$(field Chunksize)" "$bitmap_chunk_mib MB"
		want bitmap-sync "$(field 'Sync Size' | cut -d' ' -f1)" "$sync_kib"
		# A new array: every bit dirty, so the first start syncs it all.
		want bitmap-bits "$(field Bitmap)" \
			"$bitmap_bits bits (chunks), $bitmap_bits dirty (100.0%)"
		want bitmap-uuid "$(field UUID)" "00112233:44556677:8899aabb:ccddeeff"
	fi
	# A flipped bit in the covered area: mdadm must see a bad checksum.
	printf '\001' | dd of="$img" bs=1 seek=$((4096 + 100)) conv=notrunc 2>/dev/null
	mdadm --examine "$img" >"$work/out" 2>&1
	case $(field Checksum) in
	*expected*) ok ;;
	*) bad "$case: corrupted superblock not flagged: $(field Checksum)" ;;
	esac
	unset bitmap_chunk_mib bitmap_bits
}

for c in "raid0 2 512 1" "raid1 2 512 0" "raid1 2 512 1" "shr 1 512 0" \
	"raid5 3 256 1" "raid5 8 300 7" "raid10 4 1024 3" "raid10 8 2048 6" \
	"raid1 2 20480 0" "raid5 4 40960 2" \
	"raid1 2 3145728 1" "raid5 4 2097152 3" "raid10 4 1048576 0" \
	"raid10 4 2097152 1" "raid10 4 6291456 2"; do
	case=$(echo "$c" | tr ' ' ,)
	# shellcheck disable=SC2086
	check_member $c
done

# The same bytes through a loop device, when this host has them.
case=loop
"$gen" --image raid5 3 256 2 "$work/m.img" >"$work/want"
if [ "$(id -u)" = 0 ] && dev=$(losetup -f --show "$work/m.img" 2>/dev/null); then
	# shellcheck disable=SC1091
	. "$work/want"
	mdadm --examine "$dev" >"$work/out" 2>&1
	want loop-checksum "$(field Checksum)" "$csum - correct"
	losetup -d "$dev"
fi

echo "mdsb-examine: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-mdsb" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
