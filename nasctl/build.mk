# nasctl: the command-line client.
ifeq ($(CONFIG_NASCTL),y)
PROGS += nasctl
BIN_PROGS += nasctl
MAN1 += docs/man/nasctl.1
endif
nasctl_SRCS := nasctl/main.c nasctl/table.c nasctl/commands.c
nasctl_LIBS :=
