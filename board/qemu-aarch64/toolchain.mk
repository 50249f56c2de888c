# Cross toolchain for the aarch64 board (included by the top Makefile when
# BOARD=qemu-aarch64): Debian's gcc-aarch64-linux-gnu and the multiarch
# :arm64 -dev packages (scripts/install-deps.sh arm64).
CROSS_COMPILE ?= aarch64-linux-gnu-
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
# Unit suites run under qemu-user (binfmt is not assumed) with the loader of
# libc6:arm64, never -L /usr/aarch64-linux-gnu: that cross loader with the
# multiarch libc hangs every fork() (Decision 53).  timeout is a hang guard;
# setsid keeps Check's kill(-pgid) of a timed-out test away from make.
TEST_WRAPPER ?= setsid -w timeout 300 qemu-aarch64-static
# ASan works under qemu-user only with the cross libasan on LD_LIBRARY_PATH,
# which brings the cross libc with it: not wired, plain suites only.
UNIT_TIERS := plain
BUILD_DEPS := arm64
# The image: every program and library from Debian's arm64 packages
# (scripts/image/foreign.sh), the kernel from linux-image-arm64.
IMAGE_ARCH := arm64
KERNEL_META := linux-image-arm64:arm64
