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
# The prod and test images are built at once (make -j2): one fetch and
# one unpack at a time, or both unpack into the same $dir.tmp.
exec 9>"$dl/.fetch-kernel.lock"
flock 9

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

# The .deb is used only while it matches the SHA256 of the signed index
# (apt's own check covers a download, not a file already in DLDIR): a
# truncated, swapped or planted file is fetched again, and dpkg-deb must
# agree on its name and version.
info=$(apt-cache show "$pkg=$ver" 2>/dev/null |
	awk '/^Filename:/ { f = $2 } /^SHA256:/ { s = $2 } /^$/ { exit } END { print f, s }')
file=${info%% *} sha=${info#* }
file=${file##*/}
case $file in
"${name}_"*.deb) ;;
*) echo "fetch-kernel.sh: the index names no file and SHA256 for $pkg $ver" >&2; exit 1 ;;
esac
[ -n "$sha" ] || { echo "fetch-kernel.sh: no SHA256 for $pkg $ver in the index" >&2; exit 1; }
deb=$dl/$file
sum() { sha256sum <"$1" | cut -d' ' -f1; }
if [ -f "$deb" ] && [ "$(sum "$deb")" != "$sha" ]; then
	echo "fetch-kernel.sh: $deb does not match the index's SHA256: fetched again" >&2
	rm -f "$deb"
fi
if [ ! -f "$deb" ]; then
	echo "fetch-kernel.sh: downloading $pkg $ver" >&2
	tmp=$(mktemp -d "$dl/dl.XXXXXX")
	(cd "$tmp" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) && [ -f "$tmp/$file" ] || {
		rm -rf "$tmp"
		echo "fetch-kernel.sh: apt-get download $pkg=$ver failed" >&2
		exit 1
	}
	mv "$tmp/$file" "$deb"
	rm -rf "$tmp"
fi
if [ "$(sum "$deb")" != "$sha" ]; then
	rm -f "$deb"
	echo "fetch-kernel.sh: $file does not match the index's SHA256" >&2
	exit 1
fi
if [ "$(dpkg-deb -f "$deb" Package Version | tr '\n' ' ')" != "Package: $name Version: $ver " ]; then
	echo "fetch-kernel.sh: $deb is not $name $ver" >&2
	exit 1
fi
rm -rf "$dir.tmp"
dpkg-deb -x "$deb" "$dir.tmp"
touch "$dir.tmp/.unpacked"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
