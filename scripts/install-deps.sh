#!/bin/sh
# Installs the Debian packages the build and the tests need, once.
# Idempotent: asks dpkg first, calls apt-get only for what is missing.
# Usage: install-deps.sh [build|check|image|arm64|all]
set -eu
tier=${1:-build}

build="make gcc pkg-config kconfig-frontends-nox libev-dev libjson-c-dev \
libiniparser-dev libnl-3-dev libnl-route-3-dev libblkid-dev libfdisk-dev \
liburing-dev libssl-dev libargon2-dev libatasmart-dev libiperf-dev"
check="check socat jq clang libclang-rt-14-dev python3 mandoc cryptsetup-bin iputils-ping"
# promtool (tests/host/powerd-fixture.sh checks the .prom files) comes only
# with the whole server: ~96 MB, no smaller Debian package has it.
check="$check prometheus"
image="qemu-system-x86 busybox-static cpio xz-utils zstd kmod python3 e2fsprogs \
mdadm cryptsetup-bin dmsetup fio iperf3 jq socat util-linux iproute2 strace btrfs-progs iputils-ping gdisk"
# BOARD=qemu-aarch64: the cross compiler, the :arm64 libraries it links,
# qemu-user for the unit suites and qemu-system-arm for the board.
arm64="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static binfmt-support \
qemu-system-arm check:arm64"
for p in libev-dev libjson-c-dev libiniparser-dev libnl-3-dev libnl-route-3-dev \
	libblkid-dev libfdisk-dev liburing-dev libssl-dev libargon2-dev libatasmart-dev libiperf-dev; do
	arm64="$arm64 $p:arm64"
done

case "$tier" in
build) want="$build" ;;
check) want="$build $check" ;;
image) want="$build $image" ;;
arm64) want="$build $arm64" ;;
all)   want="$build $check $image" ;;
*) echo "install-deps.sh: unknown tier '$tier'" >&2; exit 2 ;;
esac

missing=
arch=$(dpkg --print-architecture)
for p in $want; do
	# One line per installed architecture (a cross build adds :arm64 ones):
	# the one asked for (pkg:arm64), else the native or arch-independent one.
	a=$arch
	case "$p" in *:*) a=${p#*:} ;; esac
	dpkg-query -W -f='${db:Status-Status}:${Architecture}\n' "$p" 2>/dev/null |
		grep -Eqx "installed:($a|all)" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: missing packages:$missing (run as root to install)" >&2
	exit 1
fi
echo "install-deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
case "$missing" in *:arm64*) dpkg --add-architecture arm64 ;; esac
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
