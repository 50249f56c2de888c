# Sourced by mkimage.sh (bash) for a board of another architecture
# (IMAGE_ARCH=arm64): every program and library of the image comes from that
# architecture's Debian packages, fetched with apt-get download and unpacked
# under DLDIR, never from the build host and never installed (Decision 76).
#   foreign_tool PATH          the package's file for the host's tool PATH
#   foreign_libs STAGE         the shared-library closure of STAGE's ELF files
# A package is found by asking the host's dpkg which package owns PATH (or a
# library of that soname): the image tier installs the native twin of every
# tool.  Each .deb is checked against the SHA256 of the signed index before
# it is unpacked, and every file taken from a package is resolved inside that
# package's own tree and must be an ELF of the board's machine.

farch=$IMAGE_ARCH
triplet=$(dpkg-architecture -a"$farch" -qDEB_HOST_MULTIARCH 2>/dev/null)
htriplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
case $farch in
arm64) fmachine=AArch64 ;;
*) echo "mkimage.sh: no image support for architecture '$farch'" >&2; exit 2 ;;
esac
fdebs=$dl/$farch-debs
mkdir -p "$fdebs"

# The other spelling of a path on a merged-/usr system (/sbin/x, /usr/sbin/x).
other_spelling() {
	case $1 in
	/usr/*) echo "${1#/usr}" ;;
	*) echo "/usr$1" ;;
	esac
}

# Every file the build host's packages own, "PATH<TAB>PACKAGE", read once
# (a dpkg-query -S per library scans the whole database each time).
fowners=$(mktemp "$fdebs/owners.XXXXXX")
# Programs, loaders and multiarch libraries only: the rest is most of it.
awk -v h="$htriplet" -v t="$triplet" '$0 ~ "^/(usr/)?(s?bin/|lib/(" h "/|" t "/|ld-))" {
	n = FILENAME; sub(/.*\//, "", n); sub(/(:[a-z0-9]+)?\.list$/, "", n); print $0 "\t" n }' \
	/var/lib/dpkg/info/*.list >"$fowners"

# Package (name only) that owns PATH on the build host, or nothing.
host_owner() {
	awk -F'\t' -v a="$1" -v b="$(other_spelling "$1")" \
		'$1 == a || $1 == b { print $2; found = 1; exit } END { exit !found }' "$fowners"
}

# The candidate version of every package fetched in this run, "PKG VER":
# apt-cache reads its whole index on each call (no pkgcache here), so
# packages are resolved and downloaded in batches.
fvers=$(mktemp "$fdebs/versions.XXXXXX")
trap 'rm -f "$fowners" "$fvers"' EXIT

# fdir PKG: the unpacked tree of PKG's candidate (after foreign_prefetch).
fdir() {
	local ver
	ver=$(awk -v p="$1" '$1 == p { print $2; exit }' "$fvers")
	[ -n "$ver" ] && [ -f "$fdebs/${1}_${ver//:/%3a}/.unpacked" ] || {
		echo "mkimage.sh: $1:$farch was not fetched" >&2
		return 1
	}
	echo "$fdebs/${1}_${ver//:/%3a}"
}

# foreign_prefetch PKG...: downloads and unpacks the $farch candidate of
# each PKG once.  A cached .deb is used only while it matches the index's
# SHA256 (a truncated or swapped file is fetched again), and dpkg-deb must
# agree on its name, version and architecture.  Under a lock: the prod and
# test images are built at once.
foreign_prefetch() (
	local p ver dir deb want='' get='' tmp
	exec 9>"$fdebs/.lock"
	flock 9
	for p; do
		awk -v p="$p" '$1 == p { f = 1 } END { exit !f }' "$fvers" || want="$want $p"
	done
	[ -n "$want" ] || exit 0
	# shellcheck disable=SC2046 # one word per package
	apt-cache policy $(printf "%s:$farch " $want) 2>/dev/null | awk '
		/^[^ ].*:$/ { p = $1; sub(/:[^:]*:$/, "", p) }
		/^  Candidate:/ { print p, $2 }' >>"$fvers"
	for p in $want; do
		ver=$(awk -v p="$p" '$1 == p { print $2; exit }' "$fvers")
		case $ver in '' | '(none)')
			echo "mkimage.sh: no $farch candidate for $p (dpkg --add-architecture $farch; apt-get update)" >&2
			exit 1 ;;
		esac
		[ -f "$fdebs/${p}_${ver//:/%3a}/.unpacked" ] || get="$get $p:$farch=$ver"
	done
	[ -n "$get" ] || exit 0
	tmp=$(mktemp -d "$fdebs/dl.XXXXXX")
	# shellcheck disable=SC2086
	apt-cache show $get 2>/dev/null | awk '
		/^Package:/ { p = $2 } /^Version:/ { v = $2 }
		/^SHA256:/ { print p, v, $2 }' >"$tmp/sums"
	fetch=
	while read -r p ver sha; do
		deb=$fdebs/${p}_${ver//:/%3a}_$farch.deb
		[ -f "$deb" ] && [ "$(sha256sum <"$deb" | cut -d' ' -f1)" = "$sha" ] && continue
		rm -f "$deb"
		fetch="$fetch $p:$farch=$ver"
	done <"$tmp/sums"
	if [ -n "$fetch" ]; then
		echo "mkimage.sh: downloading$fetch" >&2
		# shellcheck disable=SC2086
		(cd "$tmp" && apt-get download -q $fetch >/dev/null 2>&1) || {
			rm -rf "$tmp"
			echo "mkimage.sh: apt-get download$fetch failed" >&2
			exit 1
		}
	fi
	for p in $get; do
		ver=${p#*=} p=${p%%:*}
		deb=$fdebs/${p}_${ver//:/%3a}_$farch.deb
		sha=$(awk -v p="$p" -v v="$ver" '$1 == p && $2 == v { print $3; exit }' "$tmp/sums")
		[ -f "$deb" ] || mv "$tmp/${p}_${ver//:/%3a}_$farch.deb" "$deb" 2>/dev/null || true
		if [ -z "$sha" ] || [ ! -f "$deb" ] || [ "$(sha256sum <"$deb" | cut -d' ' -f1)" != "$sha" ]; then
			rm -rf "$tmp" "$deb"
			echo "mkimage.sh: $p:$farch $ver does not match the index's SHA256" >&2
			exit 1
		fi
		if [ "$(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')" != \
			"Package: $p Version: $ver Architecture: $farch " ]; then
			rm -rf "$tmp"
			echo "mkimage.sh: $deb is not $p $ver $farch" >&2
			exit 1
		fi
		dir=$fdebs/${p}_${ver//:/%3a}
		rm -rf "$dir.tmp"
		dpkg-deb -x "$deb" "$dir.tmp" || {
			rm -rf "$tmp" "$dir.tmp"
			echo "mkimage.sh: cannot unpack $deb" >&2
			exit 1
		}
		touch "$dir.tmp/.unpacked"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	done
	rm -rf "$tmp"
)

# in_tree TREE PATH: PATH resolved inside TREE (an absolute link is taken
# relative to TREE), printed when it is a regular file that stays inside.
in_tree() {
	local tree p n=0 t real
	tree=$(realpath "$1") p=$2
	while [ -L "$tree$p" ]; do
		n=$((n + 1))
		[ $n -le 16 ] || return 1
		t=$(readlink "$tree$p")
		case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
		p=$(realpath -m -s "/$p")
	done
	[ -f "$tree$p" ] || return 1
	real=$(realpath "$tree$p")
	case $real in "$tree"/*) echo "$real" ;; *) return 1 ;; esac
}

# check_elf FILE: an ELF for the board's machine.
check_elf() {
	readelf -h "$1" 2>/dev/null | grep -Eq "^ *Machine: *$fmachine\$" || {
		echo "mkimage.sh: $1 is not an $fmachine ELF" >&2
		return 1
	}
}

# foreign_tool PATH: prints the $farch file of the host's tool PATH.
foreign_tool() {
	local pkg dir f p
	pkg=$(host_owner "$1") || { echo "mkimage.sh: no package owns $1 on the build host" >&2; return 1; }
	foreign_prefetch "$pkg" || return 1
	dir=$(fdir "$pkg") || return 1
	for p in "$1" "$(other_spelling "$1")"; do
		f=$(in_tree "$dir" "$p") && check_elf "$f" && { echo "$f"; return 0; }
	done
	echo "mkimage.sh: $pkg:$farch has no $1" >&2
	return 1
}

# lib_owner NAME: the package of the host's library NAME (a soname in a
# multiarch directory of either architecture or one below it, as
# /usr/lib/<triplet>/ceph/ reached by RUNPATH; or the loader's path).
lib_owner() {
	case $1 in
	/*) host_owner "$1" ;;
	*) awk -F'\t' -v b="$1" -v h="$htriplet" -v t="$triplet" '
		function multiarch(d) {
			return d == "/lib/" h || d == "/usr/lib/" h || d == "/lib/" t || d == "/usr/lib/" t
		}
		{
			n = length($1) - length(b)
			if (n < 2 || substr($1, n) != "/" b) next
			d = substr($1, 1, n - 1); p = d; sub(/\/[^\/]+$/, "", p)
			if (multiarch(d) || multiarch(p)) { print $2; found = 1; exit }
		} END { exit !found }' "$fowners" ;;
	esac
}

# foreign_lib NAME: prints "FILE PATH": the package file of the library NAME
# (a soname or the loader's path) and where the package puts it, fetching
# the package the host's twin comes from.
foreign_lib() {
	local name=$1 pkg dir p f
	pkg=$(lib_owner "$name") || { echo "mkimage.sh: no package on the build host has $name" >&2; return 1; }
	foreign_prefetch "$pkg" || return 1
	dir=$(fdir "$pkg") || return 1
	case $name in
	/*) set -- "$name" "$(other_spelling "$name")" ;;
	*) set -- $(cd "$dir" && find lib/"$triplet" usr/lib/"$triplet" -maxdepth 2 -name "$name" 2>/dev/null |
		sed 's,^,/,' | sort) ;;
	esac
	for p in "$@"; do
		f=$(in_tree "$dir" "$p") && check_elf "$f" && { echo "$f $p"; return 0; }
	done
	echo "mkimage.sh: $pkg:$farch has no $name" >&2
	return 1
}

# have_lib STAGE NAME: STAGE holds the library NAME where the loader (or a
# RUNPATH one directory below the multiarch one) finds it.
have_lib() {
	case $2 in
	/*) [ -e "$1$2" ] ;;
	*) [ -n "$(find "$1/lib/$triplet" -maxdepth 2 -name "$2" 2>/dev/null | head -n 1)" ] ;;
	esac
}

# foreign_libs STAGE: every library an ELF of STAGE needs (DT_NEEDED and
# the program interpreter), transitively, into STAGE/lib/$triplet (where
# mkimage.sh puts /usr/lib/$triplet too); one batch of packages per level
# of the dependency tree.
foreign_libs() {
	local stage=$1 todo elf n need f p dst
	todo=$(find "$stage" -type f ! -path '*/lib/modules/*' -exec sh -c \
		'head -c 4 "$1" | grep -q "^.ELF"' _ {} \; -print)
	while [ -n "$todo" ]; do
		need=
		for elf in $todo; do
			check_elf "$elf" || return 1
			for n in $(readelf -d "$elf" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p') \
				$(readelf -l "$elf" 2>/dev/null | sed -n 's/.*program interpreter: \(.*\)\]$/\1/p'); do
				case $n in
				/*) [ "$(realpath -m -s "$n")" = "$n" ] || {
						echo "mkimage.sh: $elf asks for the loader '$n'" >&2; return 1; } ;;
				*/* | .* | '') echo "mkimage.sh: $elf needs a bad library name '$n'" >&2; return 1 ;;
				esac
				have_lib "$stage" "$n" || need="$need $n"
			done
		done
		need=$(printf '%s\n' $need | sort -u)
		# shellcheck disable=SC2046
		foreign_prefetch $(for n in $need; do lib_owner "$n"; done | sort -u) || return 1
		todo=
		for n in $need; do
			have_lib "$stage" "$n" && continue
			f=$(foreign_lib "$n") || return 1
			p=${f#* } f=${f%% *}
			case $n in
			/*) dst=$stage$n ;;
			*) p=${p#/usr}; dst=$stage$(dirname "$p")/$n ;;
			esac
			mkdir -p "$(dirname "$dst")"
			cp "$f" "$dst"
			todo="$todo $dst"
		done
	done
}

# The tools of the image in one batch (mkimage.sh's lists).
# shellcheck disable=SC2046
foreign_prefetch $(for t in /bin/busybox $FW_TOOLS $([ "$variant" = test ] && echo "$TEST_TOOLS"); do
	host_owner "$t"; done | sort -u)

# foreign_busybox: the package's busybox, whose applets are those the host's
# /bin/busybox lists: the same source version is required, so that no downloaded
# program is ever run on the build host.
foreign_busybox() {
	local f have
	f=$(foreign_tool /bin/busybox) || return 1
	# A binNMU (+bN) rebuilds the same source: the same applets.
	have=$(dpkg-query -W -f='${Version}' "$(host_owner /bin/busybox)")
	[ "$(awk -v p="$(host_owner /bin/busybox)" '$1 == p { sub(/\+b[0-9]+$/, "", $2); print $2; exit }' "$fvers")" = "${have%+b*}" ] || {
		echo "mkimage.sh: the host's busybox ($have) is not the $farch one: its applet list would not match" >&2
		return 1
	}
	echo "$f"
}
