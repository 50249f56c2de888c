#!/bin/sh
# raidd's kernel seam (sys_linux) on the board's real md and device-mapper,
# driven op by op through raidd-sysdrv and cross-checked with stock tools:
# disk scan (bays, serials, busy), a RAID 1 from raidd-built superblocks and
# bitmaps (mdadm --detail and --examine), dm-linear over it (dmsetup table),
# ext4 through it, a busy map and bad names refused, nodes not a map's kept,
# stop (refused while dm holds it), re-assemble with the data intact,
# degraded assembly, stop, and a hot-pulled disk seen.
# Needs raidd-sysdrv in the image (tests/host/sys-linux-drv.c).
# run-scenario: --disk-size 512M
# shellcheck source=/dev/null # tests/system/guest/lib.sh
. /scenario/lib.sh
D=raidd-sysdrv
MD=md_seam_t0
DM=vol_seam
UUID=RAIDD-seam-0001
MNT=/tmp/seam

command -v $D >/dev/null || { fail "raidd-sysdrv is not in this image"; finish; exit; }
d1=$(bay_dev 1) && d2=$(bay_dev 2) || { fail "both bays hold a disk"; finish; exit; }
scan() { $D scan 2>/dev/null > /tmp/scan.json; }
disk() { jq -r --arg n "$1" ".[] | select(.name == \$n) | $2" /tmp/scan.json; }
same() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi; }

# ---- scan: bays, identity, blank ----
scan
cat /tmp/scan.json
for b in 1 2; do
	d=$(bay_dev $b)
	p=$(disk "$d" .syspath)
	# shellcheck disable=SC2254 # the board's glob is meant to match
	case $p in $(nas-ini /etc/board.ini "bay$b" path)) ok "bay$b: syspath $p matches board.ini" ;;
	*) fail "bay$b: syspath $p does not match board.ini" ;; esac
	same "bay$b: serial (VPD 0x80)" "$(disk "$d" .serial)" "NAS$b-0001"
	same "bay$b: blank" "$(disk "$d" '.sigs | length') $(disk "$d" .busy)" "0 "
done
same "model" "$(disk "$d1" .model)" "QEMU HARDDISK"

# ---- RAID 1 from raidd's superblocks ----
out=$($D md-create md_seam raid1 "$d1" "$d2")
check "md-create: $out" test "$out" = "$MD ${d1}1:0 ${d2}1:1"
mdadm --detail /dev/$MD > /tmp/detail 2>&1
cat /tmp/detail
check "mdadm: raid1" grep -q 'Raid Level : raid1' /tmp/detail
check "mdadm: 2 raid devices" grep -q 'Raid Devices : 2' /tmp/detail
check "mdadm: v1.2" grep -q 'Version : 1.2' /tmp/detail
check "mdadm: internal bitmap" grep -q 'Intent Bitmap : Internal' /tmp/detail
uuid=$(sed -n 's/^ *UUID : //p' /tmp/detail)
mdadm --examine /dev/${d1}1 > /tmp/examine 2>&1
check "mdadm --examine: v1.2" grep -q 'Version : 1.2' /tmp/examine
check "mdadm --examine: role 0" grep -q 'Device Role : Active device 0' /tmp/examine
check "mdadm --examine: name" grep -q 'Name : nas:seam_t0' /tmp/examine
check "mdadm --examine: checksum correct" grep -q 'Checksum : .* correct' /tmp/examine
$D md-status $MD > /tmp/st.json
same "md_status: level, disks" "$(jq -r '"\(.level) \(.raid_disks) \(.members | length)"' /tmp/st.json)" "raid1 2 2"
same "md_status: slots" "$(jq -r '[.members[].slot] | sort | join(",")' /tmp/st.json)" "0,1"
scan
same "member disk is busy" "$(disk "$d1" .busy)" "${d1}1: member of $MD"
check "md superblock seen by libblkid" sh -c "jq -e '.[] | select(.name == \"$d1\") | .sigs[] | select(.type == \"linux_raid_member\" and .where == \"${d1}1\")' /tmp/scan.json >/dev/null"

# ---- dm-linear over it ----
size=$($D size $MD)
check "dm-create linear ($size bytes)" $D dm-create $DM $UUID "$MD:0:$size"
dmsetup table $DM > /tmp/table
cat /tmp/table
check "dmsetup: linear over the array" grep -q "^0 $((size / 512)) linear $(cat /sys/block/$MD/dev) 0" /tmp/table
same "dm_table agrees" "$($D dm-table $DM)" "$(cat /tmp/table)"
same "dmsetup: uuid" "$(dmsetup info -c --noheadings -o uuid $DM)" $UUID
same "dm_exists" "$($D dm-exists $DM)" 1
check "/dev/mapper/$DM made" test -b /dev/mapper/$DM
check "mkfs ext4 through dm" $D mkfs ext4 $DM seam
check "mount" $D mount $DM $MNT ext4
dd if=/dev/urandom of=$MNT/data bs=1M count=4 2>/dev/null
sum=$(md5sum $MNT/data | cut -d' ' -f1)
check "dm-remove refused while mounted (busy)" sh -c "! $D dm-remove $DM 2>/dev/null"
same "still mapped after the busy refusal" "$($D dm-exists $DM)" 1
check "umount" $D umount $MNT
# Names that leave /dev/mapper, and nodes that are not a map's, are never unlinked.
mknod /dev/nas-bait b 7 0
mknod /dev/mapper/nas-foreign b 7 0
check "dm-remove ../nas-bait refused" sh -c "! $D dm-remove ../nas-bait 2>/dev/null"
check "/dev/nas-bait kept" test -b /dev/nas-bait
$D dm-remove nas-foreign
check "foreign node in /dev/mapper kept" test -b /dev/mapper/nas-foreign
check "dm-remove control refused" sh -c "! $D dm-remove control 2>/dev/null"
check "/dev/mapper/control kept" test -c /dev/mapper/control
rm -f /dev/nas-bait /dev/mapper/nas-foreign
check "md-stop refused while dm holds it" sh -c "! $D md-stop $MD 2>/dev/null"
check "dm-remove" $D dm-remove $DM
same "dm_exists after remove" "$($D dm-exists $DM)" 0
check "/dev/mapper/$DM gone" test ! -e /dev/mapper/$DM
check "dm-remove again is fine" $D dm-remove $DM

# ---- stop, assemble, data still there ----
check "md-stop" $D md-stop $MD
check "array gone" test ! -e /sys/block/$MD
check "assemble" $D md-assemble $MD "${d1}1:0" "${d2}1:1"
mdadm --detail /dev/$MD > /tmp/detail 2>&1
check "mdadm: same array back" grep -q "UUID : $uuid" /tmp/detail
check "mdadm: 2 active devices" grep -q 'Active Devices : 2' /tmp/detail
check "dm-create again" $D dm-create $DM $UUID "$MD:0:$size"
$D mount $DM $MNT ext4
same "data intact" "$(md5sum $MNT/data | cut -d' ' -f1)" "$sum"
$D umount $MNT
$D dm-remove $DM
check "md-stop" $D md-stop $MD

# ---- degraded: one member ----
check "assemble degraded from bay1 only" $D md-assemble $MD "${d1}1:0" "nosuchdev1:1"
$D md-status $MD > /tmp/st.json
same "md_status: degraded" "$(jq -r '"\(.degraded) \(.members | length)"' /tmp/st.json)" "1 1"
mdadm --detail /dev/$MD | grep -q 'degraded' && ok "mdadm: degraded" || fail "mdadm: degraded"
check "md-stop" $D md-stop $MD
check "md-stop again is fine" $D md-stop $MD
scan
same "disk free again" "$(disk "$d1" .busy)" ""

# ---- hotplug ----
$D hotplug 30 > /tmp/hp &
hp=$!
sleep 1
vmctl disk-pull 2
wait $hp
same "hotplug: a pulled disk is seen" "$(cat /tmp/hp)" 1

finish
