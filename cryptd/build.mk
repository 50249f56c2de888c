# cryptd: see cryptd/Kconfig.
ifeq ($(CONFIG_CRYPTD),y)
PROGS += cryptd
SBIN_PROGS += cryptd
MAN8 += docs/man/cryptd.8
MAN5 += docs/man/cryptd.conf.5
endif
cryptd_SRCS := cryptd/main.c cryptd/api.c
cryptd_LIBS :=
