/* Internals shared by the rpc-*.c files; not for daemons. */
#ifndef NAS_RPC_PRIVATE_H
#define NAS_RPC_PRIVATE_H

#include <ev.h>

#include "rpc.h"

#define RPC_MAX_TABLES	8

struct rpc_conn {
	struct rpc_server	*srv;
	int			 fd;
	struct rpc_peer		 peer;
	ev_io			 rio, wio;
	ev_timer		 timer;		/* started with a request's first byte */
	struct json_tokener	*tok;
	size_t			 req_bytes;	/* bytes of the request being read */
	int			 in_request;	/* a request has started */
	int			 skip_line;	/* discarding the rest of a bad line */
	char			*out;		/* unsent output */
	size_t			 out_len, out_off, out_cap;
	struct json_object	*topics;	/* NULL: not subscribed */
	int			 closing;	/* close once output is flushed */
	struct rpc_conn		*next;
};

struct rpc_server {
	const char		*daemon;
	const char		*version;
	const struct rpc_method	*tables[RPC_MAX_TABLES];
	int			 ntables;
	struct rpc_auth		 auth;
	struct rpc_limits	 limits;
	void			(*info)(struct json_object *, void *);
	void			*info_arg;
	int			 lfd;
	char			*path;
	ev_io			 lio;
	struct rpc_conn		*conns;
	int			 nconns;
};

void	rpc_conn_free(struct rpc_conn *);

#endif
