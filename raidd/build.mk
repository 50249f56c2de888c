# raidd: see raidd/Kconfig.
ifeq ($(CONFIG_RAIDD),y)
PROGS += raidd
SBIN_PROGS += raidd
MAN8 += docs/man/raidd.8
MAN5 += docs/man/raidd.conf.5
endif
raidd_SRCS := raidd/main.c raidd/api.c
raidd_LIBS :=
# The logic above the kernel seam (system.h).
RAIDD_LOGIC := raidd/disk.c raidd/wipe.c raidd/api-disk.c raidd/volume.c \
	raidd/label-io.c raidd/assemble.c raidd/teardown.c raidd/create.c \
	raidd/delete.c raidd/grow.c raidd/add.c raidd/api-volume.c raidd/plan.c raidd/plan-grow.c \
	raidd/mdsb.c raidd/label.c raidd/proof.c raidd/unit.c raidd/diskfd.c \
	raidd/features.c raidd/health.c raidd/watch.c raidd/led.c \
	raidd/scrub.c raidd/scrub-schedule.c raidd/repair.c raidd/spare.c \
	raidd/crypt.c raidd/crypt-cryptd.c raidd/crypt-auto.c raidd/dirty.c
RAIDD_SIM := raidd/system-sim.c raidd/system-sim-sync.c raidd/crypt-sim.c
raidd_SRCS += $(RAIDD_LOGIC) $(RAIDD_SIM) raidd/metrics.c

# Unit suites of raidd's pure-logic modules (no kernel, no disk I/O).
UNIT_TESTS += test-raidd-plan
test-raidd-plan_SRCS := tests/unit/test-raidd-plan.c raidd/plan.c
test-raidd-plan_LIBS =
UNIT_TESTS += test-raidd-plan-grow
test-raidd-plan-grow_SRCS := tests/unit/test-raidd-plan-grow.c raidd/plan-grow.c raidd/plan.c
test-raidd-plan-grow_LIBS =
UNIT_TESTS += test-raidd-mdsb
test-raidd-mdsb_SRCS := tests/unit/test-raidd-mdsb.c raidd/mdsb.c raidd/plan.c
test-raidd-mdsb_LIBS =
UNIT_TESTS += test-raidd-label
test-raidd-label_SRCS := tests/unit/test-raidd-label.c raidd/label.c raidd/plan.c
test-raidd-label_LIBS =
UNIT_TESTS += test-raidd-volume
test-raidd-volume_SRCS := tests/unit/test-raidd-volume.c $(RAIDD_LOGIC) $(RAIDD_SIM)
test-raidd-volume_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-grow
test-raidd-grow_SRCS := tests/unit/test-raidd-grow.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/unit-raidd.c
test-raidd-grow_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-add
test-raidd-add_SRCS := tests/unit/test-raidd-add.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/unit-raidd.c
test-raidd-add_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-health
test-raidd-health_SRCS := tests/unit/test-raidd-health.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/raidd-util.c
test-raidd-health_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-watch
test-raidd-watch_SRCS := tests/unit/test-raidd-watch.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	raidd/system-linux-led.c tests/unit/unit-util.c tests/unit/raidd-util.c
test-raidd-watch_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-scrub
test-raidd-scrub_SRCS := tests/unit/test-raidd-scrub.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/raidd-util.c
test-raidd-scrub_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-repair
test-raidd-repair_SRCS := tests/unit/test-raidd-repair.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/raidd-util.c
test-raidd-repair_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-spare
test-raidd-spare_SRCS := tests/unit/test-raidd-spare.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/raidd-util.c
test-raidd-spare_LIBS = $(CHECK_LIBS)

# The kernel seam on Linux (system-linux*.c); label_probe comes from label.c.
RAIDD_LINUX := raidd/system-linux.c raidd/system-linux-disk.c raidd/system-linux-fd.c \
	raidd/system-linux-sig.c raidd/system-linux-busy.c \
	raidd/system-linux-part.c raidd/system-linux-md.c \
	raidd/system-linux-mdstat.c raidd/system-linux-fs.c \
	raidd/system-linux-watch.c raidd/system-linux-mdsync.c \
	raidd/system-linux-led.c raidd/system-linux-grow.c \
	raidd/system-linux-reshape.c raidd/system-linux-dirty.c
raidd_SRCS += $(RAIDD_LINUX)
raidd_LIBS += -lblkid -lfdisk
# raidd-sysdrv: drives sys_linux from the shell, for tests/host/raidd-sys-loop.sh
# and the board scenario raidd-md-seam.sh; not installed by `make install`.
PROGS += raidd-sysdrv
raidd-sysdrv_SRCS := tests/host/sys-linux-drv.c $(RAIDD_LINUX) raidd/label.c \
	raidd/plan.c raidd/mdsb.c
raidd-sysdrv_LIBS := -lblkid -lfdisk
# raidd-mdsb-set: a member's superblock at another level and events, for
# the board scenario raidd-add-takeover-cut; test image only.
PROGS += raidd-mdsb-set
raidd-mdsb-set_SRCS := tests/host/mdsb-set.c raidd/mdsb.c raidd/plan.c
raidd-mdsb-set_LIBS :=
UNIT_TESTS += test-raidd-crypt
test-raidd-crypt_SRCS := tests/unit/test-raidd-crypt.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/raidd-util.c tests/unit/unit-raidd.c
test-raidd-crypt_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-raidd-dirty
test-raidd-dirty_SRCS := tests/unit/test-raidd-dirty.c $(RAIDD_LOGIC) $(RAIDD_SIM) \
	tests/unit/unit-util.c tests/unit/raidd-util.c
test-raidd-dirty_LIBS = $(CHECK_LIBS)
