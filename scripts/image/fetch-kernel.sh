#!/bin/sh
# Fetches Debian's kernel package by name and unpacks it once into a cache.
# Usage: fetch-kernel.sh DLDIR [META]
#   META defaults to linux-image-amd64; its Depends names the real package
#   (linux-image-6.1.0-NN-amd64).  Another board's META names its
#   architecture: linux-image-arm64:arm64.  Prints the unpacked directory, which holds
#   boot/vmlinuz-KVER and lib/modules/KVER.  A second run with the same
#   package version touches neither the network nor the disk.
set -eu
dl=${1:?usage: fetch-kernel.sh DLDIR [META]}
meta=${2:-linux-image-amd64}
mkdir -p "$dl"

pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
	# No apt metadata (offline machine): use what the cache already holds.
	# Only this flavour's: dl/ may hold another board's kernel.
	flavour=${meta#linux-image-}
	dir=$(find "$dl" -maxdepth 1 -type d -name "linux-image-*-${flavour%%:*}_*" | sort | tail -n 1)
	[ -n "$dir" ] && [ -f "$dir/.unpacked" ] && { echo "$dir"; exit 0; }
	echo "fetch-kernel.sh: cannot resolve $meta (run apt-get update)" >&2
	exit 1
fi
ver=$(apt-cache show "$pkg" | awk '/^Version:/ {print $2; exit}')
name=${pkg%%:*}
dir=$dl/${name}_$ver
if [ -f "$dir/.unpacked" ]; then
	echo "$dir"
	exit 0
fi

deb=$(find "$dl" -maxdepth 1 -name "${name}_$(echo "$ver" | sed 's/:/%3a/')_*.deb" | head -n 1)
if [ -z "$deb" ]; then
	echo "fetch-kernel.sh: downloading $pkg $ver" >&2
	(cd "$dl" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) || {
		echo "fetch-kernel.sh: apt-get download $pkg=$ver failed" >&2
		exit 1
	}
	deb=$(find "$dl" -maxdepth 1 -name "${name}_*.deb" | head -n 1)
fi
rm -rf "$dir.tmp"
dpkg-deb -x "$deb" "$dir.tmp"
touch "$dir.tmp/.unpacked"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
