/*
 * client.c: blocking JSON-RPC client for nasctl; client-ev.c: its
 * non-blocking mode for daemon-to-daemon calls on a libev loop.
 */
#ifndef NAS_CLIENT_H
#define NAS_CLIENT_H

#include <json-c/json.h>

struct ev_loop;

struct rpc_client;

/* Error of the last call: code is 0 on success, a JSON-RPC code, or
 * RPC_CLIENT_UNREACHABLE / RPC_CLIENT_IO for transport failures. */
#define RPC_CLIENT_UNREACHABLE	1
#define RPC_CLIENT_IO		2

struct rpc_client_error {
	int			 code;
	char			 message[512];
	struct json_object	*data;		/* owned by the client */
};

/* Connects to dir/<daemon>.sock; NULL with err filled when unreachable. */
struct rpc_client *rpc_client_open(const char *sockdir, const char *daemon,
	    struct rpc_client_error *err);
struct rpc_client *rpc_client_open_path(const char *path,
	    struct rpc_client_error *err);
void	rpc_client_close(struct rpc_client *);
void	rpc_client_set_timeout(struct rpc_client *, int ms);
/*
 * Calls method with params (ownership taken; NULL for none). Returns
 * 0 and *result (caller frees) or -1 with err filled. Notifications
 * that arrive meanwhile are kept for rpc_client_next_event(), at most
 * 1024: past that the oldest that is not a job.finished is dropped, and
 * a job.finished is never dropped silently (see rpc_client_next_event).
 */
int	rpc_client_call(struct rpc_client *, const char *method,
	    struct json_object *params, struct json_object **result,
	    struct rpc_client_error *err);
/*
 * The same with params given as JSON text of plen bytes (an object, not
 * checked; NULL for none) that stays the caller's. The request line made
 * of it is wiped once written, so params may hold a secret.
 */
int	rpc_client_call_text(struct rpc_client *, const char *method,
	    const char *params, size_t plen, struct json_object **result,
	    struct rpc_client_error *err);
/*
 * Waits for the next notification (timeout_ms < 0: forever). Returns 1
 * with *method and *params set (caller frees both), 0 on timeout, -1 on
 * error or end of stream; -1 with errno ENOBUFS once the queued events
 * are given out if a job.finished found the queue full of others.
 * A message whose method is not a string is no notification: skipped.
 */
int	rpc_client_next_event(struct rpc_client *, int timeout_ms,
	    char **method, struct json_object **params);
int	rpc_client_fd(const struct rpc_client *);

/*
 * Non-blocking mode, for a daemon: connects without waiting (a Unix
 * socket connects or fails at once) and serves the connection from
 * loop. rpc_client_call and rpc_client_next_event refuse such a client.
 */
struct rpc_client *rpc_client_open_ev(struct ev_loop *loop, const char *path,
	    struct rpc_client_error *err);
/*
 * The answer to one call: result (borrowed: take a reference to keep it)
 * with err NULL, or result NULL and err set (a JSON-RPC error, or
 * RPC_CLIENT_IO for a timeout or the end of the connection).
 */
typedef void (*rpc_client_cb)(struct json_object *result,
	    const struct rpc_client_error *err, void *arg);
/*
 * Queues a call (params: ownership taken) and returns at once; cb runs
 * from the loop exactly once, never inside this function, unless the
 * client is closed first (then never). timeout_ms < 0: no timeout.
 * -1 with errno set when the call cannot be queued (cb never runs).
 * Callbacks may call again or close the client.
 */
int	rpc_client_call_ev(struct rpc_client *, const char *method,
	    struct json_object *params, int timeout_ms, rpc_client_cb cb, void *arg);
/* Notifications of a non-blocking client (params borrowed, may be NULL);
 * without a callback they are dropped. */
typedef void (*rpc_client_event_cb)(const char *method,
	    struct json_object *params, void *arg);
void	rpc_client_on_event(struct rpc_client *, rpc_client_event_cb, void *arg);
void	rpc_client_error_clear(struct rpc_client_error *);

#endif
