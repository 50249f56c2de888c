# netd: see netd/Kconfig.
ifeq ($(CONFIG_NETD),y)
PROGS += netd
SBIN_PROGS += netd
MAN8 += docs/man/netd.8
MAN5 += docs/man/netd.conf.5
endif
NL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libnl-route-3.0 2>/dev/null)
NL_LIBS := $(shell $(PKG_CONFIG) --libs libnl-route-3.0 2>/dev/null)
CFLAGS_netd := $(NL_CFLAGS)
# The logic above the kernel seam (system.h), and the simulated seam.
NETD_LOGIC := netd/seam.c netd/util.c netd/link.c netd/addr.c netd/bond.c netd/lacp.c \
	netd/bond-nl.c netd/system-sim.c netd/netconf.c netd/diff.c netd/apply.c \
	netd/dhcp.c netd/dhcp-api.c netd/guard.c
NETD_LINUX := netd/system-linux.c netd/system-linux-link.c netd/system-linux-addr.c \
	netd/system-linux-bond.c
netd_SRCS := netd/main.c netd/api.c netd/metrics.c $(NETD_LOGIC) $(NETD_LINUX)
netd_LIBS := $(NL_LIBS)

UNIT_TESTS += test-netd-link
test-netd-link_SRCS := tests/unit/test-netd-link.c $(NETD_LOGIC)\
	tests/unit/unit-util.c
test-netd-link_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-netd-bond
test-netd-bond_SRCS := tests/unit/test-netd-bond.c $(NETD_LOGIC) tests/unit/unit-util.c
test-netd-bond_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-netd-config
test-netd-config_SRCS := tests/unit/test-netd-config.c $(NETD_LOGIC) tests/unit/unit-util.c
test-netd-config_LIBS = $(CHECK_LIBS)
UNIT_TESTS += test-netd-dhcp
test-netd-dhcp_SRCS := tests/unit/test-netd-dhcp.c $(NETD_LOGIC) tests/unit/unit-util.c
test-netd-dhcp_LIBS = $(CHECK_LIBS)
# netd-nlrec: records kernel link messages on the board for the unit suite
# (tests/unit/netd-recorded.h); not installed by `make install`.
PROGS += netd-nlrec
netd-nlrec_SRCS := tests/host/netd-nlrec.c
netd-nlrec_LIBS :=
