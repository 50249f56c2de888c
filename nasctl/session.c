/*
 * Talking to one daemon: open its socket, call, and turn what went
 * wrong into the message and exit status nasctl(1) promises.
 */
#include <string.h>

#include "nasctl.h"

const char *const nasctl_daemons[NASCTL_NDAEMONS + 1] = {
	"raidd", "cryptd", "netd", "powerd", NULL
};

/* Transport failures mean the daemon is not there to answer. */
int
exit_code_for(int client_code)
{
	if (client_code == 0)
		return EXIT_OK;
	if (client_code == RPC_CLIENT_UNREACHABLE || client_code == RPC_CLIENT_IO)
		return EXIT_UNREACHABLE;
	return EXIT_ERROR;
}

static int
report(struct ctx *x, const char *daemon, struct rpc_client_error *e)
{
	int rc = exit_code_for(e->code);
	char msg[TEXT_MAX];

	/* The message is the daemon's: it may not drive the terminal. */
	text_escape(e->message, msg, sizeof(msg));
	if (rc == EXIT_UNREACHABLE)
		fprintf(x->err, "nasctl: %s: unreachable: %s\n", daemon, msg);
	else
		fprintf(x->err, "nasctl: %s: %s (code %d)\n", daemon, msg, e->code);
	rpc_client_error_clear(e);
	return rc;
}

struct rpc_client *
session_open(struct ctx *x, const char *daemon, int *rc)
{
	struct rpc_client_error e = { 0 };
	struct rpc_client *c;

	if ((c = rpc_client_open(x->sockdir, daemon, &e)) == NULL) {
		*rc = report(x, daemon, &e);
		return NULL;
	}
	if (x->timeout_ms >= 0)
		rpc_client_set_timeout(c, x->timeout_ms);
	*rc = EXIT_OK;
	return c;
}

int
session_call(struct ctx *x, struct rpc_client *c, const char *daemon,
    const char *method, struct json_object *params, struct json_object **result)
{
	const char *text = NULL;
	size_t len = 0;
	int rc;

	if (params)
		text = json_object_to_json_string_length(params, JSON_C_TO_STRING_PLAIN, &len);
	rc = session_call_text(x, c, daemon, method, text, len, result);
	json_object_put(params);
	return rc;
}

/*
 * The secrets go only with the call of their method (not with the
 * events.subscribe or job.status around it), spliced into the text in a
 * locked buffer wiped at once.
 */
int
session_call_text(struct ctx *x, struct rpc_client *c, const char *daemon,
    const char *method, const char *params, size_t len, struct json_object **result)
{
	struct rpc_client_error e = { 0 };
	struct locked line = { 0 };
	int rc;

	if (x->secrets && x->secrets->n > 0 && x->secrets->method &&
	    strcmp(method, x->secrets->method) == 0) {
		if (secrets_splice(x->secrets, params, len, &line) == -1) {
			locked_free(&line);
			*result = NULL;
			fprintf(x->err, "nasctl: %s: params with secrets must be an object\n",
			    method);
			return EXIT_USAGE;
		}
		params = line.p;
		len = line.len;
	}
	rc = rpc_client_call_text(c, method, params, len, result, &e);
	locked_free(&line);
	return rc == -1 ? report(x, daemon, &e) : EXIT_OK;
}

/* Opens, calls once, closes, reports nothing: 0 or the client's code. */
int
call_quiet(struct ctx *x, const char *daemon, const char *method,
    struct json_object *params, struct json_object **result)
{
	struct rpc_client_error e = { 0 };
	struct rpc_client *c;
	int code;

	*result = NULL;
	if ((c = rpc_client_open(x->sockdir, daemon, &e)) == NULL) {
		json_object_put(params);
		rpc_client_error_clear(&e);
		return RPC_CLIENT_UNREACHABLE;
	}
	if (x->timeout_ms >= 0)
		rpc_client_set_timeout(c, x->timeout_ms);
	rpc_client_call(c, method, params, result, &e);
	code = e.code;
	rpc_client_error_clear(&e);
	rpc_client_close(c);
	return code;
}

/* Opens, calls once, closes. */
int
call_once(struct ctx *x, const char *daemon, const char *method,
    struct json_object *params, struct json_object **result)
{
	struct rpc_client *c;
	int rc;

	*result = NULL;
	if ((c = session_open(x, daemon, &rc)) == NULL) {
		json_object_put(params);
		return rc;
	}
	rc = session_call(x, c, daemon, method, params, result);
	rpc_client_close(c);
	return rc;
}
