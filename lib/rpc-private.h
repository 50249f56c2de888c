/* Internals shared by the rpc-*.c files; not for daemons. */
#ifndef NAS_RPC_PRIVATE_H
#define NAS_RPC_PRIVATE_H

#include <ev.h>

#include "rpc.h"

#define RPC_MAX_TABLES	8

/* A log line that a client could repeat at will: once per period, with a count. */
struct rpc_ratelog {
	ev_tstamp	 last;
	unsigned	 count;		/* events since the last line */
};

struct rpc_conn {
	struct rpc_server	*srv;
	int			 fd;
	struct rpc_peer		 peer;
	ev_io			 rio, wio;
	ev_timer		 timer;		/* started with a request's first byte */
	ev_timer		 wtimer;	/* queued output that makes no progress */
	struct json_tokener	*tok;
	size_t			 req_bytes;	/* bytes of the request being read */
	int			 in_request;	/* a request has started */
	/* What json-c will build of this request, counted before it does. */
	int			 in_string, escaped, depth, batch;
	int			 containers, items, elements;
	size_t			 req_mem;	/* its share of the memory budget */
	int			 hup_watched;	/* half-closed, in srv->hup_fd */
	int			 skip_line;	/* discarding the rest of a bad line */
	char			*out;		/* unsent output */
	size_t			 out_len, out_off, out_cap;
	struct json_object	*topics;	/* NULL: not subscribed */
	int			 batching;	/* a batch answer is being written */
	struct json_object	*deferred;	/* notifications held until it ends */
	int			 closing;	/* close once output is flushed */
	int			 nlater;	/* answers it waits for (rpc-later.c) */
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
	size_t			 mem_used;	/* of limits.memory_budget */
	int			 spare_fd;	/* given up to refuse at EMFILE */
	ev_timer		 accept_pause;
	struct rpc_ratelog	 starved_log;	/* out of descriptors */
	struct rpc_ratelog	 refused_log;	/* no place for a client */
	int			 hup_fd;	/* epoll: half-closed subscribers */
	ev_io			 hio;
	struct rpc_later_set	*later;		/* rpc-later.c; NULL until first used */
};

void	rpc_conn_free(struct rpc_conn *);
/* Closes c if it is closing and nothing more is due to it. */
void	rpc_conn_settle(struct rpc_conn *);
/* The answer a call made: result, error, or NULL for a notification. */
struct json_object *rpc_call_answer(struct rpc_call *);
/* rpc-later.c: c leaves (its answers will be dropped); the server closes. */
void	rpc_later_forget_conn(struct rpc_conn *);
void	rpc_later_close(struct rpc_server *);
/* The one error for a batch of more than RPC_MAX_BATCH elements. */
struct json_object *rpc_batch_too_large(void);
/* Queues bytes as they are (no newline); -1 when the client was cut off. */
int	rpc_conn_write(struct rpc_conn *, const char *, size_t);
/* Around a batch answer: notifications wait until its last byte is queued. */
void	rpc_conn_batch(struct rpc_conn *, int on);

#endif
