# Cross toolchain for the aarch64 board (included by the top Makefile when
# BOARD=qemu-aarch64): Debian's gcc-aarch64-linux-gnu and the multiarch
# :arm64 -dev packages (scripts/install-deps.sh arm64).
CROSS_COMPILE ?= aarch64-linux-gnu-
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
# Unit suites run under qemu-user (binfmt is not assumed).
TEST_WRAPPER ?= qemu-aarch64-static -L /usr/aarch64-linux-gnu
BUILD_DEPS := arm64
