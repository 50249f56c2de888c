# nas-selftest: see selftest/Kconfig and docs/selftest.md.
ifeq ($(CONFIG_SELFTEST),y)
PROGS += nas-selftest
SBIN_PROGS += nas-selftest
MAN8 += docs/man/nas-selftest.8
endif
# Everything but main.c, so the unit suite links the real modules.
SELFTEST_CORE := selftest/pattern.c selftest/stats.c selftest/engine.c selftest/report.c \
	selftest/limits.c selftest/html.c
nas-selftest_SRCS := selftest/main.c selftest/workload.c selftest/power.c selftest/target.c \
	selftest/serve.c \
	$(SELFTEST_CORE)
nas-selftest_LIBS := -luring -lpthread -lm

UNIT_TESTS += test-selftest
test-selftest_SRCS := tests/unit/test-selftest.c tests/unit/unit-util.c $(SELFTEST_CORE)
test-selftest_LIBS = -luring -lpthread -lm
