# cryptd: see cryptd/Kconfig.
ifeq ($(CONFIG_CRYPTD),y)
PROGS += cryptd
SBIN_PROGS += cryptd
MAN8 += docs/man/cryptd.8
MAN5 += docs/man/cryptd.conf.5
endif
cryptd_SRCS := cryptd/main.c cryptd/api.c cryptd/metrics.c
cryptd_LIBS :=
# The methods above the kernel seam (system.h), and both sides of it.
CRYPTD_LOGIC := cryptd/api-crypt.c cryptd/volume.c cryptd/system-sim.c \
	cryptd/ratelimit-state.c cryptd/kdf-job.c
cryptd_SRCS += $(CRYPTD_LOGIC) cryptd/system-linux.c
# The LUKS2 library (no daemon state): headers, keyslots, format.
CRYPTD_LUKS2 := cryptd/luks2-hdr.c cryptd/luks2-json.c cryptd/luks2-crypto.c \
	cryptd/luks2-keyslot.c
CRYPTD_CRYPTO_LIBS := -lcrypto -largon2
UNIT_TESTS += test-luks2
test-luks2_SRCS := tests/unit/test-luks2.c $(CRYPTD_LUKS2)
test-luks2_LIBS = $(CHECK_LIBS) $(CRYPTD_CRYPTO_LIBS)
cryptd_SRCS += $(CRYPTD_LUKS2)
cryptd_LIBS += $(CRYPTD_CRYPTO_LIBS)
UNIT_TESTS += test-cryptd
test-cryptd_SRCS := tests/unit/test-cryptd.c tests/unit/unit-util.c cryptd/api.c cryptd/metrics.c \
	$(CRYPTD_LOGIC) cryptd/system-linux.c $(CRYPTD_LUKS2)
test-cryptd_LIBS = $(CHECK_LIBS) $(CRYPTD_CRYPTO_LIBS)
# luks2-tool: drives the library from the shell for tests/host/luks2.sh
# (cryptsetup on loop files); not installed.
PROGS += luks2-tool
luks2-tool_SRCS := tests/host/luks2-tool.c $(CRYPTD_LUKS2)
luks2-tool_LIBS := $(CRYPTD_CRYPTO_LIBS)
UNIT_TESTS += test-cryptd-backoff
test-cryptd-backoff_SRCS := tests/unit/test-cryptd-backoff.c tests/unit/unit-util.c cryptd/api.c \
	cryptd/metrics.c $(CRYPTD_LOGIC) cryptd/system-linux.c $(CRYPTD_LUKS2)
test-cryptd-backoff_LIBS = $(CHECK_LIBS) $(CRYPTD_CRYPTO_LIBS)
UNIT_TESTS += test-cryptd-later
test-cryptd-later_SRCS := tests/unit/test-cryptd-later.c tests/unit/unit-util.c cryptd/api.c \
	cryptd/metrics.c $(CRYPTD_LOGIC) cryptd/system-linux.c $(CRYPTD_LUKS2)
test-cryptd-later_LIBS = $(CHECK_LIBS) $(CRYPTD_CRYPTO_LIBS)
