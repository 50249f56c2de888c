# raidd: see raidd/Kconfig.
ifeq ($(CONFIG_RAIDD),y)
PROGS += raidd
SBIN_PROGS += raidd
MAN8 += docs/man/raidd.8
MAN5 += docs/man/raidd.conf.5
endif
raidd_SRCS := raidd/main.c raidd/api.c
raidd_LIBS :=

# Unit suites of raidd's pure-logic modules (no kernel, no disk I/O).
UNIT_TESTS += test-raidd-plan
test-raidd-plan_SRCS := tests/unit/test-raidd-plan.c raidd/plan.c
test-raidd-plan_LIBS =
UNIT_TESTS += test-raidd-mdsb
test-raidd-mdsb_SRCS := tests/unit/test-raidd-mdsb.c raidd/mdsb.c raidd/plan.c
test-raidd-mdsb_LIBS =
