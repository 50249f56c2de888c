#!/bin/bash
# Assembles the line PC's initramfs: the far end of the NAS's network ports
# in system tests and make selftest (docs/selftest.md, "The line PC").
# Usage: mklinepc.sh -d DLDIR -o OUTDIR
# It boots the board's kernel (OUTDIR/vmlinuz, from mkimage.sh) with
# OUTDIR/linepc.cpio.zst: busybox, iproute2's ip and tc, iperf3 with the
# libraries ldd names, the modules below with their modules.dep closure, and
# board/qemu-x86_64/linepc/init, all from the build host's Debian packages.
set -euo pipefail

MODULES="virtio_pci virtio_net virtio_console bonding sch_tbf sch_ingress cls_matchall act_mirred ifb"
TOOLS="/usr/sbin/ip /usr/sbin/tc /usr/bin/iperf3"

dl='' out=''
while getopts d:o: opt; do
	case $opt in
	d) dl=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
{ [ -n "$dl" ] && [ -n "$out" ]; } || { echo "mklinepc.sh: -d DLDIR -o OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
kdir=$(sh "$here/fetch-kernel.sh" "$dl")
kver=$(basename "$(find "$kdir/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
[ -f "$kdir/lib/modules/$kver/modules.dep" ] || depmod -b "$kdir" "$kver"

stage=$out/stage-linepc
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,run,tmp,usr/bin,usr/sbin,lib/modules}
cp /bin/busybox "$stage/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -sf busybox "$stage/bin/$a"
done
cp "$src/board/qemu-x86_64/linepc/init" "$stage/init"
chmod 755 "$stage/init"

mdir=$kdir/lib/modules/$kver
: >"$stage/etc/modules"
for m in $MODULES; do
	line=$(grep -E "/${m//[-_]/[-_]}\\.ko(\\.[a-z]+)?:" "$mdir/modules.dep" || true)
	[ -n "$line" ] || continue	# built in
	for f in ${line//:/}; do
		mkdir -p "$stage/lib/modules/$kver/$(dirname "$f")"
		cp "$mdir/$f" "$stage/lib/modules/$kver/$f"
	done
	# no bond0 of the driver's own: init makes it with its options
	case $m in
	bonding) echo "$m max_bonds=0" ;;
	ifb) echo "$m numifbs=2" ;;
	*) echo "$m" ;;
	esac >>"$stage/etc/modules"
done
cp "$mdir"/modules.{order,builtin,builtin.modinfo} "$stage/lib/modules/$kver/"
depmod -b "$stage" "$kver"

for t in $TOOLS; do
	[ -x "$t" ] || { echo "mklinepc.sh: $t missing on the build host" >&2; exit 1; }
	cp -L "$t" "$stage/usr/${t#/usr/}"
	ldd "$t" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}' |
		while read -r lib; do
			mkdir -p "$stage$(dirname "$lib")"
			cp -Ln "$lib" "$stage$lib"
		done
done
# the loader is named /lib64/ld-linux-x86-64.so.2 in every ELF
[ -e "$stage/lib64" ] || ln -s lib "$stage/lib64"

img=$out/linepc.cpio.zst
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	zstd -q -T0 -"${ZSTD_LEVEL:-12}" >"$img.tmp"
mv "$img.tmp" "$img"
echo "mklinepc.sh: $img $(stat -c %s "$img") bytes (kernel $kver)" >&2
