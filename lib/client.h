/* client.c: blocking JSON-RPC client for nasctl and daemon-to-daemon calls. */
#ifndef NAS_CLIENT_H
#define NAS_CLIENT_H

#include <json-c/json.h>

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
 * 0 and *result (caller frees) or -1 with err filled.
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
 * with *method and *params set (caller frees *params), 0 on timeout, -1 on
 * error or end of stream.
 */
int	rpc_client_next_event(struct rpc_client *, int timeout_ms,
	    char **method, struct json_object **params);
int	rpc_client_fd(const struct rpc_client *);
void	rpc_client_error_clear(struct rpc_client_error *);

#endif
