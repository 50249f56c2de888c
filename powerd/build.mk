# powerd: see powerd/Kconfig.
ifeq ($(CONFIG_POWERD),y)
PROGS += powerd
SBIN_PROGS += powerd
MAN8 += docs/man/powerd.8
MAN5 += docs/man/powerd.conf.5
endif
powerd_SRCS := powerd/main.c powerd/api.c
powerd_LIBS :=
