# NAS firmware: top-level Makefile.
#   make                      build every program for the host (default config)
#   make <board>_defconfig    start from configs/<board>_defconfig
#   make menuconfig           edit the configuration
#   make O=dir                build out of tree (default: build/)
#   make install DESTDIR=dir  lay out a root filesystem
#   make check | check-unit | check-host | check-fuzz | check-system
#   make check-long | fuzz-long   the reliability campaign (tests/build.mk)
#   make bench                measure and write docs/benchmarks.md
# Each directory adds its programs and tests in its build.mk.

SRC := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# make BOARD=<board>: that board's defconfig, its own build tree and its
# toolchain (board/<board>/toolchain.mk: CROSS_COMPILE, PKG_CONFIG).
ifneq ($(filter-out qemu-x86_64,$(BOARD)),)
DEFCONFIG ?= $(subst -,_,$(BOARD))_defconfig
O ?= build/$(BOARD)
-include $(SRC)/board/$(BOARD)/toolchain.mk
endif
O ?= build
override O := $(abspath $(O))
DESTDIR ?= $(O)/rootfs
DEFCONFIG ?= qemu_x86_64_defconfig
VERSION := $(shell cat $(SRC)/VERSION)
GITREV := $(shell git -C $(SRC) describe --always --dirty 2>/dev/null)

CC ?= cc
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin AR),default)
AR := $(CROSS_COMPILE)ar
endif
PKG_CONFIG ?= pkg-config
BUILD_DEPS ?= build
PKGS := json-c
CFLAGS_BASE := -std=gnu11 -D_GNU_SOURCE -O2 -g -pipe \
	-Wall -Wextra -Werror -Wmissing-prototypes -Wshadow -Wformat=2 \
	-Wformat-security -Wno-format-nonliteral \
	-fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE \
	-I$(SRC)/lib -I$(SRC) -I$(O)/include \
	-include $(O)/include/generated/autoconf.h \
	-DNAS_VERSION='"$(VERSION)"' -DNAS_GITREV='"$(GITREV)"' \
	-I/usr/include/iniparser
LDFLAGS_BASE := -pie -Wl,-z,relro,-z,now -Wl,--as-needed
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -U_FORTIFY_SOURCE
LDFLAGS_BASE += -fsanitize=address,undefined
endif
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS)
ALL_LDFLAGS = $(LDFLAGS_BASE) $(LDFLAGS)

KCONF_ENV := KCONFIG_CONFIG=$(O)/.config srctree=$(SRC)
AUTOCONF := $(O)/include/generated/autoconf.h

.DEFAULT_GOAL := all
# check-host, check-fuzz (tests/build.mk), image, run, boot-check and
# check-system (board/build.mk) are defined by the fragments.
.PHONY: all deps deps-check install clean distclean menuconfig oldconfig \
	savedefconfig check check-unit check-unit-plain check-unit-san

# ---- dependencies: installed by the build itself when missing ----
DEPS_TIER ?= build
deps:
	@sh $(SRC)/scripts/install-deps.sh $(DEPS_TIER)
deps-check:
	@sh $(SRC)/scripts/install-deps.sh check

# ---- configuration ----
$(O)/.config:
	@mkdir -p $(O)
	@sh $(SRC)/scripts/install-deps.sh $(BUILD_DEPS)
	@cd $(O) && $(KCONF_ENV) kconfig-conf --defconfig=$(SRC)/configs/$(DEFCONFIG) $(SRC)/Kconfig >/dev/null

%_defconfig:
	@mkdir -p $(O)
	@test -f $(SRC)/configs/$@ || { echo "no such board config: configs/$@" >&2; exit 2; }
	@cd $(O) && $(KCONF_ENV) kconfig-conf --defconfig=$(SRC)/configs/$@ $(SRC)/Kconfig

menuconfig: $(O)/.config
	@cd $(O) && $(KCONF_ENV) kconfig-mconf $(SRC)/Kconfig

oldconfig: $(O)/.config
	@cd $(O) && $(KCONF_ENV) kconfig-conf --oldconfig $(SRC)/Kconfig

savedefconfig: $(O)/.config
	@cd $(O) && $(KCONF_ENV) kconfig-conf --savedefconfig=$(O)/defconfig $(SRC)/Kconfig
	@echo "wrote $(O)/defconfig"

$(AUTOCONF) $(O)/include/config/auto.conf: $(O)/.config $(shell find $(SRC) -name Kconfig -not -path '$(O)/*')
	@mkdir -p $(O)/include/config $(O)/include/generated
	@# A symbol added since the .config was made takes its default: the
	@# build never stops to ask (make menuconfig changes it).
	@cd $(O) && $(KCONF_ENV) kconfig-conf --olddefconfig $(SRC)/Kconfig >/dev/null
	@cd $(O) && $(KCONF_ENV) kconfig-conf --silentoldconfig $(SRC)/Kconfig

-include $(O)/include/config/auto.conf

# ---- per-directory fragments ----
PROGS :=
SBIN_PROGS :=
BIN_PROGS :=
LIBS_A :=
UNIT_TESTS :=
FUZZERS :=
MAN8 :=
MAN5 :=
MAN1 :=
include $(SRC)/lib/build.mk
include $(SRC)/raidd/build.mk
include $(SRC)/cryptd/build.mk
include $(SRC)/netd/build.mk
include $(SRC)/powerd/build.mk
include $(SRC)/nasctl/build.mk
include $(SRC)/selftest/build.mk
include $(SRC)/tests/build.mk
include $(SRC)/bench/build.mk
-include $(SRC)/board/build.mk

# ---- generic rules ----
$(O)/obj/%.o: $(SRC)/%.c $(AUTOCONF)
	@mkdir -p $(dir $@)
	@echo "  CC      $*.c"
	@$(CC) $(ALL_CFLAGS) $(CFLAGS_$(firstword $(subst /, ,$*))) -MMD -MP -c -o $@ $<

objs = $(patsubst %.c,$(O)/obj/%.o,$(1))

# $(1) program name; sources in $(1)_SRCS, extra libraries in $(1)_LIBS
define PROG_template
$(O)/bin/$(1): $(call objs,$($(1)_SRCS)) $(O)/lib/libnas.a
	@mkdir -p $$(dir $$@)
	@echo "  LD      $(1)"
	@$$(CC) $$(ALL_LDFLAGS) -o $$@ $$(filter %.o,$$^) $(O)/lib/libnas.a $($(1)_LIBS) $$(shell $(PKG_CONFIG) --libs $(PKGS)) -lev -liniparser
endef
$(foreach p,$(PROGS) $(UNIT_TESTS),$(eval $(call PROG_template,$(p))))

$(O)/lib/libnas.a: $(call objs,$(libnas_SRCS))
	@mkdir -p $(dir $@)
	@echo "  AR      libnas.a"
	@rm -f $@ && $(AR) rcs $@ $^

all: $(addprefix $(O)/bin/,$(PROGS))

# Short names: `make nasctl`, `make test-config`, `make build/bin/raidd`.
.PHONY: libnas $(PROGS) $(UNIT_TESTS)
libnas: $(O)/lib/libnas.a
$(PROGS) $(UNIT_TESTS): %: $(O)/bin/%
ifneq ($(patsubst $(CURDIR)/%,%,$(O)),$(O))
$(patsubst $(CURDIR)/%,%,$(O))/bin/%: $(O)/bin/% ;
endif

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

install: all
	@echo "  INSTALL $(DESTDIR)"
	@install -d $(DESTDIR)/usr/sbin $(DESTDIR)/usr/bin $(DESTDIR)/etc/nas \
		$(DESTDIR)/usr/share/man/man8 $(DESTDIR)/usr/share/man/man5 $(DESTDIR)/usr/share/man/man1
	@for p in $(SBIN_PROGS); do install -m 0755 $(O)/bin/$$p $(DESTDIR)/usr/sbin/$$p; done
	@for p in $(BIN_PROGS); do install -m 0755 $(O)/bin/$$p $(DESTDIR)/usr/bin/$$p; done
	@cp -a $(SRC)/rootfs-overlay/. $(DESTDIR)/
	@for m in $(MAN8); do install -m 0644 $(SRC)/$$m $(DESTDIR)/usr/share/man/man8/; done
	@for m in $(MAN5); do install -m 0644 $(SRC)/$$m $(DESTDIR)/usr/share/man/man5/; done
	@for m in $(MAN1); do install -m 0644 $(SRC)/$$m $(DESTDIR)/usr/share/man/man1/; done

clean:
	rm -rf $(O)/obj $(O)/bin $(O)/lib $(O)/san

distclean:
	rm -rf $(O)

# ---- tests ----
# check-unit runs every suite twice: plain, then under ASan + UBSan.
# A board's toolchain.mk may drop the sanitizer tier (UNIT_TIERS).
UNIT_TIERS ?= plain san
# The ASan build is a second build of everything: on all CPUs unless this
# make already shares a jobserver (make -jN).
UNIT_BUILD_JOBS := $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
check-unit: $(addprefix check-unit-,$(UNIT_TIERS))

# Check and the sanitizer runtimes must be there before a test is compiled.
$(call objs,$(foreach t,$(UNIT_TESTS),$($(t)_SRCS))): | deps-check

check-unit-plain: $(addprefix $(O)/bin/,$(UNIT_TESTS))
	@TEST_WRAPPER="$(TEST_WRAPPER)" sh $(SRC)/tests/run-unit.sh "plain" $(O)/bin $(UNIT_TESTS)

check-unit-san:
	@test -f $(O)/san/.config || { mkdir -p $(O)/san && cp $(O)/.config $(O)/san/.config; }
	@$(MAKE) --no-print-directory $(UNIT_BUILD_JOBS) -f $(SRC)/Makefile O=$(O)/san SANITIZE=1 san-run-unit

.PHONY: san-run-unit
san-run-unit: $(addprefix $(O)/bin/,$(UNIT_TESTS))
	@# Timeouts catch hangs; under ASan on a busy machine a suite may need four times as long.
	@CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-4} \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		TEST_WRAPPER="$(TEST_WRAPPER)" sh $(SRC)/tests/run-unit.sh "asan+ubsan" $(O)/bin $(UNIT_TESTS)

check: all
	@mkdir -p $(O)
	@NAS_SUMMARY=$(O)/check-summary.txt sh $(SRC)/tests/run-all.sh \
		$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O)
