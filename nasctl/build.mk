# nasctl: the command-line client.
ifeq ($(CONFIG_NASCTL),y)
PROGS += nasctl
BIN_PROGS += nasctl
MAN1 += docs/man/nasctl.1
endif
# Everything but main.c, so the unit suite links the real command table.
nasctl_LIB_SRCS := nasctl/args.c nasctl/table.c nasctl/session.c nasctl/text.c nasctl/secret.c \
	nasctl/commands.c nasctl/jobs.c nasctl/info.c nasctl/events.c \
	nasctl/power.c nasctl/scrub.c nasctl/spare.c nasctl/net.c
nasctl_SRCS := nasctl/main.c $(nasctl_LIB_SRCS)
nasctl_LIBS := -lm

UNIT_TESTS += test-nasctl
test-nasctl_SRCS := tests/unit/test-nasctl.c $(nasctl_LIB_SRCS)
test-nasctl_LIBS = $(CHECK_LIBS) -lm
