/* daemon.c: what every daemon shares: command line, config, socket, signals. */
#ifndef NAS_DAEMON_H
#define NAS_DAEMON_H

#include <ev.h>
#include <json-c/json.h>

#include "config.h"
#include "rpc.h"
#include "spawn.h"

#define NAS_STR_(x)	#x
#define NAS_STR(x)	NAS_STR_(x)

struct nas_daemon {
	const char		*name;		/* raidd, cryptd ... */
	/* Its own API: method tables, NULL-terminated. */
	const struct rpc_method	*const *methods;
	const struct conf_key	*conf;		/* its own config keys */
	/* Default of [api] max_request_bytes; 0: CONFIG_NAS_MAX_REQUEST. */
	size_t			 max_request;
	/* Called once the config is loaded, before the socket opens. */
	int	(*init)(const struct conf *);
	/* SIGHUP with a valid new config. */
	int	(*reload)(const struct conf *);
	void	(*fini)(void);
	/* Adds kernel features and what is missing to system.version. */
	void	(*info)(struct json_object *);
};

/* Parses argv, loads the config, serves until SIGTERM; returns exit code. */
int	nas_daemon_main(const struct nas_daemon *, int argc, char **argv);
struct rpc_server *nas_daemon_server(void);
struct ev_loop *nas_loop(void);
/* The directory of the daemons' sockets (-S), for calls to another daemon. */
const char *nas_sockdir(void);
/* The config keys common to all daemons ([api], [log]). */
extern const struct conf_key nas_common_conf[];

#endif
