#!/bin/sh
# raidd's Linux seam (sys_linux) on loop devices, checked with stock tools:
# disk scan, signatures found by libblkid (ext4, GPT, LUKS2, md member,
# raidd label, on disks and partitions), busy (mounted), GPT partitioning
# with libfdisk (sfdisk --json, blkid), byte I/O, mkfs, mount, hotplug.
# md and dm need a kernel with them: tests/system/scenarios/raidd-md-seam.sh.
# Root only (loop devices).  Usage: raidd-sys-loop.sh [BINDIR]
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bindir=${1:-$src/build/bin}
drv=$bindir/raidd-sysdrv
pass=0 fail=0
work=$(mktemp -d)
loops=
MIB=1048576

ok() { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
# check DESC CMD...
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
# same DESC ACTUAL EXPECTED
same() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }
finish() {
	echo "raidd-sys-loop: $pass passed, $fail failed"
	[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail host-raidd-sys" >>"$NAS_SUMMARY"
	[ "$fail" -eq 0 ]
	exit
}
cleanup() {
	umount "$work/mnt" 2>/dev/null
	for l in $loops; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "raidd-sys-loop: needs root (loop devices)"; bad root; finish; }
need=
for t in sfdisk:fdisk sgdisk:gdisk cryptsetup:cryptsetup mkfs.ext4:e2fsprogs \
	mkfs.btrfs:btrfs-progs jq:jq blkid:util-linux; do
	command -v "${t%%:*}" >/dev/null 2>&1 || need="$need ${t#*:}"
done
if [ -n "$need" ]; then
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$need >/dev/null 2>&1 || { bad "install$need"; finish; }
fi
[ -x "$drv" ] || make -C "$src" -s raidd-sysdrv >/dev/null 2>&1
[ -x "$drv" ] || { bad "no $drv"; finish; }

# attach VAR SIZE: a sparse file on a loop device with partition scanning;
# VAR gets its kernel name.  No subshell: $loops must see every device.
attach() {
	f=$work/d$(echo "$loops" | wc -w).img
	truncate -s "$2" "$f"
	l=$(losetup -f -P --show "$f") || return 1
	loops="$loops $l"
	eval "$1=\${l#/dev/}"
}
scan() { RAIDD_SCAN_LOOP=1 "$drv" scan 2>/dev/null >"$work/scan.json"; }
# disk NAME FILTER: jq FILTER on the scanned disk NAME
disk() { jq -r --arg n "$1" ".[] | select(.name == \$n) | $2" "$work/scan.json"; }
# sig NAME TYPE: "where offset" of the first signature of TYPE on disk NAME
sig() { disk "$1" ".sigs[] | select(.type == \"$2\") | \"\\(.where) \\(.offset)\"" | head -n 1; }

attach a 512M && attach b 256M && attach c 128M || { bad "losetup -P"; finish; }

# ---- scan ----
scan
same "scan lists the loop disks" "$(jq -r '.[].name' "$work/scan.json" | grep -c -x -e "$a" -e "$b" -e "$c")" 3
same "no loops without RAIDD_SCAN_LOOP" \
	"$("$drv" scan 2>/dev/null | jq -r '.[].name' | grep -c '^loop')" 0
same "size" "$(disk "$a" .size)" $((512 * MIB))
same "logical block" "$(disk "$a" .logical_block)" 512
same "syspath resolved" "$(disk "$a" .syspath)" "$(readlink -f /sys/block/"$a")"
same "dev numbers" "$(disk "$a" '"\(.major):\(.minor)"')" "$(cat /sys/block/"$a"/dev)"
same "blank disk: no signature" "$(disk "$a" '.sigs | length')" 0
same "blank disk: not busy" "$(disk "$a" .busy)" ""

# ---- signatures made by stock tools ----
mkfs.ext4 -q -F "/dev/$b" && scan
same "ext4 on the whole disk" "$(sig "$b" ext4)" "$b 1080"
printf 'nas-test-key' >"$work/key"
cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
	--key-file "$work/key" "/dev/$c" >/dev/null 2>&1 && scan
same "LUKS2 header" "$(sig "$c" crypto_LUKS)" "$c 0"
sgdisk -Z "/dev/$c" >/dev/null 2>&1
sgdisk -n 1:2048:+16M -t 1:8300 "/dev/$c" >/dev/null 2>&1 && partx -u "/dev/$c" 2>/dev/null
scan
same "GPT by sgdisk" "$(sig "$c" gpt)" "$c 512"
# raidd label magic in slot 0 (1 MiB - 16 KiB), on a disk with nothing else.
printf 'raiddlbl' | "$drv" write "$a" $((MIB - 16384)) && scan
same "raidd label" "$(sig "$a" raidd)" "$a $((MIB - 16384))"
"$drv" zero "$a" 0 "$MIB"

# ---- partition() with libfdisk ----
p1=$MIB s1=$((200 * MIB)) p2=$((201 * MIB)) s2=$((128 * MIB))
check "partition two" "$drv" partition "$a" "$p1:$s1:raidd-t0" \
	"$p2:$s2:raidd-t1:0f889da1fc053b4da006743f0f84911e"
sfdisk --json "/dev/$a" >"$work/pt.json" 2>/dev/null
same "sfdisk: label" "$(jq -r .partitiontable.label "$work/pt.json")" gpt
same "sfdisk: starts and sizes" \
	"$(jq -r '[.partitiontable.partitions[] | "\(.start)+\(.size)"] | join(" ")' "$work/pt.json")" \
	"$((p1 / 512))+$((s1 / 512)) $((p2 / 512))+$((s2 / 512))"
same "sfdisk: Linux RAID type" \
	"$(jq -r '[.partitiontable.partitions[].type] | unique | join(" ")' "$work/pt.json")" \
	A19D880F-05FC-4D3B-A006-743F0F84911E
same "sfdisk: names" "$(jq -r '[.partitiontable.partitions[].name] | join(" ")' "$work/pt.json")" \
	"raidd-t0 raidd-t1"
pa=$("$drv" partdev "$a" "$p1") pb=$("$drv" partdev "$a" "$p2")
same "part_dev" "$pa $pb" "${a}p1 ${a}p2"
same "kernel sees the partitions" "$(cat /sys/block/"$a"/"$pb"/size)" $((s2 / 512))
check "partition nodes exist" test -b "/dev/$pa" -a -b "/dev/$pb"
same "blkid: partition name" "$(blkid -p -s PART_ENTRY_NAME -o value "/dev/$pb")" raidd-t1
# The GUID raidd chose (and records in its label), in GPT byte order.
same "blkid: partition GUID as given" \
	"$(blkid -p -s PART_ENTRY_UUID -o value "/dev/$pb")" a19d880f-05fc-4d3b-a006-743f0f84911e
check "part_dev of no partition fails" sh -c "! '$drv' partdev $a 12345 2>/dev/null"
check "repartition to one" "$drv" partition "$a" "$p1:$((32 * MIB)):only"
same "old partitions gone" "$(ls -d /sys/block/"$a"/"$a"p* | wc -l)" 1
check "repartition to two" "$drv" partition "$a" "$p1:$s1:raidd-t0" "$p2:$s2:raidd-t1"

# ---- signatures inside partitions ----
mkfs.ext4 -q -F "/dev/$pb" && scan
same "ext4 in a partition" "$(sig "$a" ext4)" "$pb $((p2 + 1080))"
same "GPT on the disk" "$(sig "$a" gpt)" "$a 512"
gen=$bindir/test-raidd-mdsb
if [ -x "$gen" ] && "$gen" --image raid1 2 512 0 "$work/m.img" >/dev/null; then
	dd if="$work/m.img" of="/dev/$pa" bs=64k count=1 conv=notrunc,fsync 2>/dev/null
	scan
	same "md member in a partition" "$(sig "$a" linux_raid_member)" "$pa $((p1 + 4096))"
else
	bad "test-raidd-mdsb --image (md superblock fixture)"
fi

# ---- busy ----
mkdir -p "$work/mnt"
mount "/dev/$pb" "$work/mnt" && scan
same "mounted partition makes the disk busy" "$(disk "$a" .busy)" "$pb: mounted at $work/mnt"
same "is_mounted" "$("$drv" mounted "$work/mnt")" 1
check "umount" "$drv" umount "$work/mnt"
same "is_mounted after umount" "$("$drv" mounted "$work/mnt")" 0
check "umount again is fine" "$drv" umount "$work/mnt"
check "mount by kernel name" "$drv" mount "$pb" "$work/mnt" ext4
same "mounted" "$(findmnt -n -o SOURCE "$work/mnt")" "/dev/$pb"
umount "$work/mnt"
scan
same "not busy once unmounted" "$(disk "$a" .busy)" ""

# ---- byte I/O ----
head -c 8192 /dev/urandom >"$work/blob"
"$drv" write "$pa" $((3 * MIB)) <"$work/blob"
"$drv" read "$pa" $((3 * MIB)) 8192 >"$work/back"
check "write then read" cmp -s "$work/blob" "$work/back"
dd if="/dev/$pa" bs=1M skip=3 count=1 2>/dev/null | head -c 8192 >"$work/dd"
check "dd sees the write" cmp -s "$work/blob" "$work/dd"
"$drv" zero "$pa" $((3 * MIB)) 8192
same "zero" "$("$drv" read "$pa" $((3 * MIB)) 8192 | tr -d '\000' | wc -c)" 0
check "read past the end fails" sh -c "! '$drv' read $pa $s1 512 >/dev/null 2>&1"
same "dev_size" "$("$drv" size "$pb")" "$s2"

# ---- mkfs (child on the event loop) ----
check "mkfs ext4" "$drv" mkfs ext4 "$pa" vol1
same "blkid: ext4 labelled" "$(blkid -p -o export "/dev/$pa" | grep -E '^(TYPE|LABEL)=' | sort | tr '\n' ' ')" "LABEL=vol1 TYPE=ext4 "
check "mkfs btrfs" "$drv" mkfs btrfs "$pb" vol2
same "blkid: btrfs labelled" "$(blkid -p -o export "/dev/$pb" | grep -E '^(TYPE|LABEL)=' | sort | tr '\n' ' ')" "LABEL=vol2 TYPE=btrfs "
check "mount btrfs" "$drv" mount "$pb" "$work/mnt" btrfs
scan
same "btrfs mount found by source" "$(disk "$a" .busy)" "$pb: mounted at $work/mnt"
"$drv" umount "$work/mnt"
check "unknown fs refused" sh -c "! '$drv' mkfs xfs $pa x 2>/dev/null"

# ---- wipe: zeros, then reread drops the partitions ----
"$drv" zero "$a" 0 "$MIB"
"$drv" zero "$a" $((511 * MIB)) "$MIB"
check "reread after wipe" "$drv" reread "$a"
same "no partitions left" "$(ls -d /sys/block/"$a"/"$a"p* 2>/dev/null | wc -l)" 0

# ---- hotplug ----
# Kernel uevents reach only the initial network namespace; a container may
# get none at all, which is not the seam's fault: say so and count nothing.
"$drv" hotplug 5 >"$work/hp" &
hp=$!
sleep 0.5
attach d 64M
wait "$hp"
if [ "$(cat "$work/hp")" = 1 ]; then
	ok "hotplug sees a new disk ($d)"
else
	echo "skip - hotplug: no kernel uevent reached this network namespace"
fi

finish
