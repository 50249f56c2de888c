# powerd: see powerd/Kconfig.
ifeq ($(CONFIG_POWERD),y)
PROGS += powerd
SBIN_PROGS += powerd
MAN8 += docs/man/powerd.8
MAN5 += docs/man/powerd.conf.5
endif
# The sources, the model, the state, the energy and standby: sysfs and
# procfs under settable roots, and SG_IO behind drive_ops (sg.c).
POWERD_LOGIC := powerd/sysread.c powerd/sensor.c powerd/model.c powerd/activity.c \
	powerd/energy.c powerd/power.c powerd/drive.c powerd/sync.c \
	powerd/sg.c powerd/thermal.c powerd/diskio.c powerd/timers.c \
	powerd/sampler.c
powerd_SRCS := powerd/main.c powerd/api.c powerd/prom.c powerd/smart.c $(POWERD_LOGIC)
powerd_LIBS := -lm -latasmart -pthread

UNIT_TESTS += test-powerd
test-powerd_SRCS := tests/unit/test-powerd.c $(POWERD_LOGIC) tests/unit/unit-util.c
test-powerd_LIBS = $(CHECK_LIBS) -lm -pthread
