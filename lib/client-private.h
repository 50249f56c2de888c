/* client.c and client-ev.c: what the blocking and non-blocking modes share. */
#ifndef NAS_CLIENT_PRIVATE_H
#define NAS_CLIENT_PRIVATE_H

#include <stddef.h>

#include <json-c/json.h>

#include "client.h"

#define CLIENT_MAX_LINE		(64u << 20)
/*
 * What json-c may build of one line: it holds about 800 bytes for every
 * {} and 100 for every value, so 64 MiB of "{}," would cost it some
 * 16 GiB. Far beyond any answer or event of a daemon.
 */
#define CLIENT_MAX_CONTAINERS	16384
#define CLIENT_MAX_VALUES	262144
/* Notifications kept while a call waits; see client_queue_event(). */
#define CLIENT_EVENTS_KEPT	1024

struct client_ev;

struct rpc_client {
	int			 fd;
	int			 timeout_ms;
	long long		 next_id;
	char			*buf;
	size_t			 len, cap;
	struct json_object	*events;	/* queued notifications */
	int			 events_lost;	/* a job.finished had no room */
	struct client_ev	*ev;		/* non-blocking mode; else NULL */
};

struct rpc_client *client_new(int fd);
/* A connected socket to path (flags: SOCK_NONBLOCK or 0); -1 with err filled. */
int	client_connect(const char *path, int flags, struct rpc_client_error *err);
void	client_set_err(struct rpc_client_error *, int code, const char *fmt,
	    const char *arg);
/* Makes room to read 4096 more bytes; -1 (EMSGSIZE) past the line limit. */
int	client_buf_room(struct rpc_client *);
/* The next whole line as JSON: 1 taken, 0 none yet, -1 not JSON (EPROTO). */
int	client_take_line(struct rpc_client *, struct json_object **out);
/* A notification: no id and a method that is a string. */
int	client_is_notification(struct json_object *);
/*
 * Whether m answers a call: 0 not an answer, 1 with *id set, 2 for an
 * error with id null (a limit or parse error: it answers whatever was
 * asked).
 */
int	client_answer_id(struct json_object *m, long long *id);
/* *result (caller frees) and 0, or -1 with err filled from m. */
int	client_take_answer(struct json_object *m, struct json_object **result,
	    struct rpc_client_error *err);
/* The request as one line ending in '\n' (caller frees); NULL on no memory. */
char	*client_request(const char *method, struct json_object *params,
	    long long id, size_t *len);
void	client_ev_free(struct rpc_client *);

#endif
