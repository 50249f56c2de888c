# netd: see netd/Kconfig.
ifeq ($(CONFIG_NETD),y)
PROGS += netd
SBIN_PROGS += netd
MAN8 += docs/man/netd.8
MAN5 += docs/man/netd.conf.5
endif
netd_SRCS := netd/main.c netd/api.c
netd_LIBS :=
