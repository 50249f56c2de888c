# libnas: the core every daemon and nasctl link.
libnas_SRCS := lib/log.c lib/config.c lib/rpc-policy.c lib/rpc-dispatch.c \
	lib/rpc-server.c lib/rpc-events.c lib/job.c lib/client.c lib/daemon.c \
	lib/spawn.c lib/feature.c lib/board.c lib/secret.c
libnas_SRCS += lib/client-ev.c lib/rpc-socket.c
libnas_SRCS += lib/dm.c
libnas_SRCS += lib/metrics.c
libnas_SRCS += lib/rpc-later.c
libnas_SRCS += lib/keyfile.c
