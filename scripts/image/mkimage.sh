#!/bin/bash
# Assembles a firmware image (kernel + initramfs) for a board.
# Usage: mkimage.sh -v prod|test -b BOARDDIR -r ROOTFS -d DLDIR -o OUTDIR [-n NAME]
#   ROOTFS  what `make install DESTDIR=...` laid out (daemons, nasctl, overlay)
#   DLDIR   download cache (kernel package, see fetch-kernel.sh)
#   OUTDIR  receives vmlinuz and NAME-VARIANT.cpio.zst (NAME = board name)
# The initramfs holds: busybox-static and its applet links, the kernel modules
# listed in BOARDDIR/modules with their modules.dep closure, ROOTFS with the
# shared libraries its ELF files load (resolved with ldd on the build host),
# the board descriptions BOARDDIR/board*.ini and BOARDDIR/overlay/.
# The test variant adds the cross-check tools listed in TEST_TOOLS below,
# copied from the build host's Debian packages with their libraries.
set -euo pipefail
# Modes in the image never depend on the builder's umask (see the end).
umask 022

TEST_TOOLS="/usr/sbin/mdadm /usr/sbin/cryptsetup /usr/sbin/dmsetup /usr/bin/fio \
/usr/bin/iperf3 /usr/bin/jq /usr/bin/socat /usr/sbin/blkid /usr/sbin/wipefs \
/usr/sbin/mkfs.ext4 /usr/sbin/e2fsck /usr/bin/lsblk /usr/sbin/ip /usr/bin/strace \
/usr/sbin/sgdisk /usr/sbin/tc /usr/bin/ping"

# What the firmware itself runs (raidd makes and grows filesystems): in both
# variants, as /usr/sbin/<name>, copied from the build host's Debian packages.
FW_TOOLS="/sbin/mkfs.ext4 /sbin/mkfs.btrfs /sbin/resize2fs /bin/btrfs"

variant='' board='' rootfs='' dl='' out='' name=''
while getopts v:b:r:d:o:n: opt; do
	case $opt in
	v) variant=$OPTARG ;;
	b) board=$OPTARG ;;
	r) rootfs=$OPTARG ;;
	d) dl=$OPTARG ;;
	o) out=$OPTARG ;;
	n) name=$OPTARG ;;
	*) exit 2 ;;
	esac
done
case $variant in prod|test) ;; *) echo "mkimage.sh: -v prod|test" >&2; exit 2 ;; esac
for v in board rootfs dl out; do
	[ -n "${!v}" ] || { echo "mkimage.sh: -${v:0:1} is required" >&2; exit 2; }
done
name=${name:-$(basename "$board")}
here=$(cd "$(dirname "$0")" && pwd)
# IMAGE_ARCH (a cross board): programs and libraries come from that
# architecture's Debian packages (foreign.sh), KERNEL_META names its kernel.
triplet=x86_64-linux-gnu
[ -z "${IMAGE_ARCH:-}" ] || . "$here/foreign.sh"

kdir=$(sh "$here/fetch-kernel.sh" "$dl" ${KERNEL_META:-})
kver=$(basename "$(find "$kdir/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
[ -f "$kdir/lib/modules/$kver/modules.dep" ] || depmod -b "$kdir" "$kver"

mkdir -p "$out"
stage=$out/stage-$variant
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,run,tmp,root,mnt,var/log,usr/bin,usr/sbin,usr/share/nas/board,lib/modules}
chmod 1777 "$stage/tmp"
cp "$kdir/boot/vmlinuz-$kver" "$out/vmlinuz"

# ---- busybox: every applet as a link in /bin (init also in /sbin) ----
bb=/bin/busybox
[ -z "${IMAGE_ARCH:-}" ] || bb=$(foreign_busybox)
cp "$bb" "$stage/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] || ln -sf busybox "$stage/bin/$a"
done
ln -sf ../bin/busybox "$stage/sbin/init"
ln -sf bin/busybox "$stage/init"

# ---- kernel modules and their closure ----
mdir=$kdir/lib/modules/$kver
want=
while read -r m; do
	m=${m%%#*}; m=${m%% *}
	[ -n "$m" ] || continue
	pat="/${m//[-_]/[-_]}\\.ko(\\.[a-z]+)?:"
	line=$(grep -E "$pat" "$mdir/modules.dep" || true)
	if [ -z "$line" ]; then
		grep -qE "/${m//[-_]/[-_]}\\.ko" "$mdir/modules.builtin" ||
			echo "mkimage.sh: module $m neither in the package nor built in" >&2
		continue
	fi
	want="$want ${line//:/}"
done <"$board/modules"
for f in $want; do
	mkdir -p "$stage/lib/modules/$kver/$(dirname "$f")"
	cp "$mdir/$f" "$stage/lib/modules/$kver/$f"
done
cp "$mdir"/modules.{order,builtin,builtin.modinfo} "$stage/lib/modules/$kver/"
depmod -b "$stage" "$kver"
grep -v '^#' "$board/modules" | sed 's/#.*//; /^ *$/d' >"$stage/etc/modules"

# ---- the firmware: daemons, CLI, overlay ----
cp -a "$rootfs/." "$stage/"
rm -rf "$stage/usr/share/man" "$stage/usr/share/doc"
[ -d "$board/overlay" ] && cp -a "$board/overlay/." "$stage/"
for ini in "$board"/board*.ini; do
	b=$(basename "$ini" .ini)
	cp "$ini" "$stage/usr/share/nas/board/$name${b#board}.ini"
done
echo "$name" >"$stage/etc/board-name"

for t in $FW_TOOLS; do
	[ -x "$t" ] || { echo "mkimage.sh: firmware tool $t missing on the build host" >&2; exit 1; }
	src=$t
	[ -z "${IMAGE_ARCH:-}" ] || src=$(foreign_tool "$t")
	cp -L "$src" "$stage/usr/sbin/$(basename "$t")"
done

if [ "$variant" = test ]; then
	# Test programs of the project's own (TEST_EXTRA: paths to copy to /usr/bin).
	for t in ${TEST_EXTRA:-}; do
		cp "$t" "$stage/usr/bin/"
	done
	for t in $TEST_TOOLS; do
		if [ -x "$t" ]; then
			src=$t
			[ -z "${IMAGE_ARCH:-}" ] || src=$(foreign_tool "$t")
			cp "$src" "$stage/usr/${t#/usr/}"
		else
			echo "mkimage.sh: test tool $t missing on the build host" >&2
			exit 1
		fi
	done
	# cryptsetup needs /run/cryptsetup for its locks
	mkdir -p "$stage/run/cryptsetup"
fi

# ---- shared libraries of every dynamic ELF in the image ----
[ -z "${IMAGE_ARCH:-}" ] || foreign_libs "$stage"
[ -n "${IMAGE_ARCH:-}" ] || find "$stage" -type f -perm -u+x ! -path '*/lib/modules/*' ! -name busybox |
	while read -r elf; do { ldd "$elf" 2>/dev/null || true; } | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}'; done |
	sort -u | while read -r lib; do
		dst=$stage$lib
		[ -e "$dst" ] && continue
		mkdir -p "$(dirname "$dst")"
		cp -L "$lib" "$dst"
	done
# merged-/usr hosts resolve through /lib; keep both spellings valid
[ -e "$stage/lib64" ] || ln -s lib "$stage/lib64"
if [ -d "$stage/usr/lib/$triplet" ]; then
	mkdir -p "$stage/lib/$triplet"
	cp -an "$stage/usr/lib/$triplet/." "$stage/lib/$triplet/"
	rm -rf "$stage/usr/lib/$triplet"
	ln -s ../../lib/$triplet "$stage/usr/lib/$triplet"
fi
# libgcc_s is dlopen'ed by glibc for pthread_cancel/backtraces
l=/lib/$triplet/libgcc_s.so.1
if [ -e "$stage/lib/$triplet/libc.so.6" ] && [ ! -e "$stage$l" ]; then
	src=$l
	[ -z "${IMAGE_ARCH:-}" ] || { src=$(foreign_lib libgcc_s.so.1); src=${src%% *}; }
	cp -L "$src" "$stage$l"
fi
if [ -n "$(find "$stage/lib" -name 'libc.so.6' 2>/dev/null)" ]; then
	printf '/lib/%s\n/usr/lib/%s\n' "$triplet" "$triplet" >"$stage/etc/ld.so.conf"
fi
echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
printf "root:x:0:\nnas:x:100:\nnasadmin:x:101:\n" >"$stage/etc/group"

# ---- modes: only root writes, nothing is setuid (Decision 100) ----
# Files came from the checkout and the build host with whatever umask made
# them (0002 makes a checkout group-writable, 0000 world-writable), and
# the board has non-root users (the API's read and admin groups): a file
# they could write and root runs (udhcpc's script, a daemon, an init
# script) would be root for them.  Every program runs as who starts it.
find "$stage" ! -type l -perm /6000 | while read -r f; do
	echo "mkimage.sh: setuid/setgid dropped: ${f#"$stage"}" >&2
done
find "$stage" ! -type l \( -perm /022 -o -perm /6000 \) -exec chmod go-w,ug-s {} +
chmod 1777 "$stage/tmp"

# ---- pack ----
img=$out/$name-$variant.cpio.zst
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	zstd -q -T0 -"${ZSTD_LEVEL:-12}" >"$img.tmp"
mv "$img.tmp" "$img"
echo "$kver" >"$out/kernel-version"
echo "mkimage.sh: $img $(stat -c %s "$img") bytes ($variant, kernel $kver)" >&2
