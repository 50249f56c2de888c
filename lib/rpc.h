/*
 * JSON-RPC 2.0 over a Unix stream socket, one request per line.
 *   rpc-policy.c    parameter policies, checked before any handler runs
 *   rpc-dispatch.c  request/batch handling, method tables, auth
 *   rpc-server.c    sockets, framing, limits, slow-client cut-off
 *   rpc-events.c    events.subscribe and notifications
 *   job.c           long operations: job.list/status/cancel
 */
#ifndef NAS_RPC_H
#define NAS_RPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "log.h"

/* Standard JSON-RPC 2.0 codes. */
#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603
/* Application codes, documented in docs/api.md. */
#define NAS_ERR_FAILED		-32000	/* the operation failed; message says why */
#define NAS_ERR_DENIED		-32001	/* caller not authorised */
#define NAS_ERR_UNSUPPORTED	-32002	/* the kernel lacks the subsystem */
#define NAS_ERR_NOT_FOUND	-32003	/* no such disk, volume, job ... */
#define NAS_ERR_BUSY		-32004	/* in use, or another operation runs */
#define NAS_ERR_EXISTS		-32005	/* name already in use */
#define NAS_ERR_REFUSED		-32006	/* would destroy data: needs force/confirm */
#define NAS_ERR_LIMIT		-32007	/* too many connections, jobs ... */
#define NAS_ERR_INVALID		-32008	/* request impossible (too few disks ...) */

enum rpc_type { RPC_STRING, RPC_INT, RPC_BOOL, RPC_ARRAY, RPC_OBJECT };

#define RPC_REQUIRED	0x01
#define RPC_SECRET	0x02	/* never logged, wiped after the call */

/* One parameter of a method; a policy ends with .name == NULL. */
struct rpc_param {
	const char		*name;
	enum rpc_type		 type;
	unsigned		 flags;
	int64_t			 min, max;	/* RPC_INT value, RPC_STRING/ARRAY length;
						   both 0 = unchecked */
	const char *const	*choices;	/* RPC_STRING enum, NULL-terminated */
	const char		*help;
};

struct rpc_call;
typedef void (*rpc_handler)(struct rpc_call *, struct json_object *params);

#define RPC_MUTATES	0x01	/* needs root or the admin group */
#define RPC_NEEDS_CONN	0x02	/* needs a live connection (subscriptions) */

/* One method; a table ends with .name == NULL. */
struct rpc_method {
	const char		*name;		/* noun.verb */
	rpc_handler		 handler;
	const struct rpc_param	*params;	/* NULL: takes no parameters */
	unsigned		 flags;
	const char		*help;
};

struct rpc_peer {
	pid_t	pid;
	uid_t	uid;
	gid_t	gid;
	int	ngroups;
	gid_t	*groups;	/* supplementary groups, as many as the caller has */
};

struct rpc_conn;
struct rpc_server;

struct rpc_call {
	struct rpc_server	*srv;
	struct rpc_conn		*conn;		/* NULL when not from a socket */
	const struct rpc_method	*method;
	const struct rpc_peer	*peer;
	struct json_object	*result;	/* set by rpc_result */
	int			 err_code;	/* set by rpc_error */
	char			 err_msg[256];
	struct json_object	*err_data;
	struct json_object	*id;		/* the request's, not owned */
	int			 has_id;	/* 0: a notification */
	int			 later;		/* answered later (rpc_call_later) */
};

/* Handlers answer with exactly one of these; both take ownership. */
void	rpc_result(struct rpc_call *, struct json_object *);
void	rpc_error(struct rpc_call *, int code, const char *fmt, ...) NAS_PRINTF(3, 4);
void	rpc_error_data(struct rpc_call *, int code, struct json_object *data,
	    const char *fmt, ...) NAS_PRINTF(4, 5);

/* Typed access to parameters that the policy has already checked. */
const char *rpc_param_str(struct json_object *, const char *name, const char *def);
int64_t	rpc_param_int(struct json_object *, const char *name, int64_t def);
int	rpc_param_bool(struct json_object *, const char *name, int def);

/* rpc-policy.c */
const char *rpc_type_name(enum rpc_type);
/* 0 when params (object or NULL) satisfy the policy; else a message in err. */
int	rpc_policy_check(const struct rpc_param *, struct json_object *params,
	    char *err, size_t errlen);
/* A copy of params with every secret value replaced, for logging. */
struct json_object *rpc_policy_redact(const struct rpc_param *, struct json_object *);
/* Overwrites secret string values in place before params are freed. */
void	rpc_policy_wipe(const struct rpc_param *, struct json_object *);
struct json_object *rpc_policy_describe(const struct rpc_method *);

/* rpc-dispatch.c */
struct rpc_auth {
	gid_t	admin_gid;	/* (gid_t)-1: root only */
	gid_t	read_gid;	/* (gid_t)-1: root and admin only */
};
/*
 * Per request, whatever the byte limit: json-c builds a hash table of
 * about 800 bytes for every {} and about 100 bytes for every value, so
 * the framing layer counts them before json-c sees them.
 */
#define RPC_MAX_BATCH		64	/* elements of a batch */
#define RPC_MAX_CONTAINERS	512	/* objects and arrays */
#define RPC_MAX_ITEMS		4096	/* values separated by commas */

/* A field left 0 is not enforced (except max_request and max_clients). */
struct rpc_limits {
	size_t	max_request;	/* bytes in one request line */
	int	max_clients;
	int	client_timeout_ms;	/* to finish a started request */
	size_t	output_limit;	/* unsent bytes before a client is cut off */
	int	max_clients_per_uid;
	int	reserved_clients;	/* of max_clients, kept for root and admins */
	int	write_timeout_ms;	/* queued output without progress: cut off */
	size_t	memory_budget;	/* requests being read plus queued output, all
				   clients together */
	/* Answers given later (rpc_call_later); 0 here takes the defaults. */
	int	max_later;	/* waiting or running, all clients together */
	int	max_later_per_conn;
	int	later_threads;	/* worker threads running at once */
};

struct rpc_server *rpc_server_new(const char *daemon, const char *version);
void	rpc_server_free(struct rpc_server *);
void	rpc_server_add_methods(struct rpc_server *, const struct rpc_method *);
void	rpc_server_set_auth(struct rpc_server *, const struct rpc_auth *);
/* Lowers max_clients to what RLIMIT_NOFILE allows (logged). */
void	rpc_server_set_limits(struct rpc_server *, const struct rpc_limits *);
const struct rpc_limits *rpc_server_limits(const struct rpc_server *);
/* Extra members of the system.version answer (e.g. kernel features). */
void	rpc_server_set_info(struct rpc_server *,
	    void (*fill)(struct json_object *, void *), void *arg);
const char *rpc_server_daemon(const struct rpc_server *);
int	rpc_peer_may(const struct rpc_server *, const struct rpc_peer *, unsigned flags);
/*
 * Handles one parsed request (object or batch array). Returns the
 * answer to send (NULL when nothing is due: notifications only).
 */
struct json_object *rpc_dispatch(struct rpc_server *, struct rpc_conn *,
	    const struct rpc_peer *, struct json_object *request);
/* Parses and dispatches one text request; answer as a NUL-terminated line. */
char	*rpc_dispatch_text(struct rpc_server *, const struct rpc_peer *,
	    const char *, size_t);
struct json_object *rpc_make_error(struct json_object *id, int code,
	    const char *msg, struct json_object *data);

/* rpc-server.c: sockets on the libev default loop. */
int	rpc_server_listen(struct rpc_server *, const char *path, gid_t sock_gid);
void	rpc_server_close(struct rpc_server *);
int	rpc_server_nconns(const struct rpc_server *);
/* Bytes of the memory budget in use: requests being read, queued output. */
size_t	rpc_server_mem_used(const struct rpc_server *);
/* Queues a JSON value as one line; cuts the client off past the limit. */
int	rpc_conn_send(struct rpc_conn *, struct json_object *);
void	rpc_conn_set_subscription(struct rpc_conn *, struct json_object *topics);
struct json_object *rpc_conn_subscription(struct rpc_conn *);

/*
 * rpc-later.c: an answer given later. work runs on a worker thread and
 * must touch nothing the loop does (no log, no rpc_* call, no global
 * state); then done runs on the loop and answers the call with
 * rpc_result or rpc_error, the answer going out then (or dropped, the
 * client having left). ran is 0 when work never ran (the server is
 * closing): done only frees arg. Returns 0 with the call handed over,
 * or -1 with the call answered (no connection, in a batch, or the
 * limits reached) and arg still the caller's.
 */
typedef void (*rpc_work_fn)(void *arg);
typedef void (*rpc_done_fn)(struct rpc_call *, void *arg, int ran);
int	rpc_call_later(struct rpc_call *, rpc_work_fn, rpc_done_fn, void *arg);
/* Answers waiting or being worked on (all clients). */
int	rpc_server_nlater(const struct rpc_server *);

/* rpc-events.c */
void	rpc_events_init(struct rpc_server *);
/* Sends a notification {method: topic, params: data} to subscribers. */
void	nas_event(const char *topic, struct json_object *data);
int	rpc_topic_matches(struct json_object *topics, const char *topic);
extern const struct rpc_method rpc_event_methods[];

#endif
