#!/bin/sh
# Host test of the image builder (scripts/image), as an attacker on the
# build path and on the board would use it: a kernel .deb planted in the
# download cache is never unpacked (fetch-kernel.sh checks it against the
# SHA256 of apt's signed index; apt-get is replaced by one that fails, so
# nothing is downloaded), two fetches at once on an empty cache (the prod
# and test images under make -j2) give one complete tree, and an image built under umask 000 from a
# rootfs holding a world-writable file and a setuid program has nothing
# but /tmp (1777) writable by group or world and nothing setuid or setgid.
# Parts whose tools or apt metadata are missing are skipped. Ends with
# "image-builder: N passed, N failed".
# Usage: image-builder.sh SRCDIR
set -u
src=$1
pass=0 fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/image-builder.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/host/check-lib.sh"
t0=$(date +%s)

# ---- a planted kernel package ----
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ] || ! command -v dpkg-deb >/dev/null; then
	echo "skip planted .deb: no apt metadata for linux-image-amd64"
else
	ver=$(apt-cache show "$pkg" | awk '/^Version:/ {print $2; exit}')
	file=$(apt-cache show "$pkg=$ver" | awk '/^Filename:/ {print $2; exit}')
	mkdir -p "$tmp/deb/DEBIAN" "$tmp/deb/boot" "$tmp/dl" "$tmp/path"
	printf 'Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: planted\n' \
		"${pkg%%:*}" "$ver" >"$tmp/deb/DEBIAN/control"
	echo planted >"$tmp/deb/boot/planted"
	dpkg-deb --build -Zgzip "$tmp/deb" "$tmp/dl/${file##*/}" >/dev/null
	printf '#!/bin/sh\nexit 1\n' >"$tmp/path/apt-get"
	chmod 755 "$tmp/path/apt-get"
	planted() {
		! PATH="$tmp/path:$PATH" sh "$src/scripts/image/fetch-kernel.sh" "$tmp/dl" &&
			[ -z "$(find "$tmp/dl" -name planted)" ]
	}
	check "a planted kernel .deb in the download cache is refused, not unpacked" planted
fi

# ---- two image builds at once (make -j2 builds prod and test) ----
# apt-get replaced by one that takes a second and copies the real package
# from the cache: both runs must give the same complete tree.
if [ -n "$pkg" ] && [ -f "$src/dl/${file##*/}" ]; then
	mkdir -p "$tmp/dl2" "$tmp/path2"
	printf '#!/bin/sh\nsleep 1\ncp "%s" .\n' "$src/dl/${file##*/}" >"$tmp/path2/apt-get"
	chmod 755 "$tmp/path2/apt-get"
	PATH="$tmp/path2:$PATH" sh "$src/scripts/image/fetch-kernel.sh" "$tmp/dl2" >"$tmp/a" 2>&1 &
	a=$!
	PATH="$tmp/path2:$PATH" sh "$src/scripts/image/fetch-kernel.sh" "$tmp/dl2" >"$tmp/b" 2>&1 &
	b=$!
	both() {
		_ra=0 _rb=0
		wait "$a" || _ra=$?
		wait "$b" || _rb=$?
		cat "$tmp/a" "$tmp/b"
		_d=$(tail -n 1 "$tmp/a")
		[ "$_ra" -eq 0 ] && [ "$_rb" -eq 0 ] && [ "$_d" = "$(tail -n 1 "$tmp/b")" ] &&
			[ -f "$_d/.unpacked" ] && ls "$_d"/boot/vmlinuz-* >/dev/null
	}
	check "two fetch-kernel.sh at once on an empty cache: one complete tree" both
	rm -rf "$tmp/dl2"
else
	echo "skip concurrent fetch: no kernel package in $src/dl"
fi

# ---- modes in the image ----
if ! command -v cpio >/dev/null || ! command -v zstd >/dev/null || ! command -v depmod >/dev/null ||
	[ ! -x /bin/busybox ] || ! sh "$src/scripts/image/fetch-kernel.sh" "$src/dl" >/dev/null 2>&1; then
	echo "skip image modes: the image tier's tools or the kernel package are missing"
else
	mkdir -p "$tmp/root/usr/sbin"
	cp -a "$src/rootfs-overlay/." "$tmp/root/"
	cp /bin/true "$tmp/root/usr/sbin/suid"
	chmod 4755 "$tmp/root/usr/sbin/suid"
	chmod 666 "$tmp/root/etc/nas/raidd.ini"
	(umask 000; ZSTD_LEVEL=1 bash "$src/scripts/image/mkimage.sh" -v prod -b "$src/board/qemu-x86_64" \
		-r "$tmp/root" -d "$src/dl" -o "$tmp/img" -n modes) >"$tmp/mkimage.log" 2>&1
	zstd -dc "$tmp/img/modes-prod.cpio.zst" 2>/dev/null | cpio -itv --quiet 2>/dev/null >"$tmp/list"
	# mode, name: every entry but symlinks and /tmp
	awk '$1 !~ /^l/ && $NF != "tmp" { print $1, $NF }' "$tmp/list" >"$tmp/modes"
	nothing_writable() { [ -s "$tmp/modes" ] && ! grep -E '^.{5}w|^.{8}w' "$tmp/modes"; }
	nothing_setuid() { [ -s "$tmp/modes" ] && ! grep -E '^.{3}[sS]|^.{6}[sS]' "$tmp/modes"; }
	tmp_sticky() { grep -Eq '^drwxrwxrwt .* tmp$' "$tmp/list"; }
	check "built under umask 000: nothing but /tmp writable by group or world" nothing_writable
	check "a setuid program in the rootfs is not setuid in the image" nothing_setuid
	check "/tmp is 1777" tmp_sticky
fi

echo "image-builder: $(($(date +%s) - t0)) s"
echo "image-builder: $pass passed, $fail failed"
[ -n "${NAS_SUMMARY:-}" ] && echo "$pass $fail image-builder" >> "$NAS_SUMMARY"
[ "$fail" -eq 0 ]
