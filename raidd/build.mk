# raidd: see raidd/Kconfig.
ifeq ($(CONFIG_RAIDD),y)
PROGS += raidd
SBIN_PROGS += raidd
MAN8 += docs/man/raidd.8
MAN5 += docs/man/raidd.conf.5
endif
raidd_SRCS := raidd/main.c raidd/api.c
raidd_LIBS :=
