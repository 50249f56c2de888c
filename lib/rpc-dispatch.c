/*
 * Request handling: validate the envelope, find the method, authorise
 * the caller, check the parameter policy, then run the handler. The
 * order matters: nothing a handler does can happen for a request that
 * fails an earlier step.
 */
#include <sys/resource.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "rpc-private.h"
#include "secret.h"

static void system_version(struct rpc_call *, struct json_object *);
static void system_methods(struct rpc_call *, struct json_object *);

static const struct rpc_method system_method_table[] = {
	{ "system.version", system_version, NULL, 0,
	  "daemon name, version and kernel features" },
	{ "system.methods", system_methods, NULL, 0,
	  "every method with its parameter policy" },
	{ NULL, NULL, NULL, 0, NULL }
};

struct rpc_server *
rpc_server_new(const char *daemon, const char *version)
{
	struct rpc_server *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->daemon = daemon;
	s->version = version;
	s->lfd = -1;
	s->spare_fd = -1;
	s->hup_fd = -1;
	s->auth.admin_gid = (gid_t)-1;
	s->auth.read_gid = (gid_t)-1;
	s->limits.max_request = CONFIG_NAS_MAX_REQUEST;
	s->limits.max_clients = CONFIG_NAS_MAX_CLIENTS;
	s->limits.client_timeout_ms = CONFIG_NAS_CLIENT_TIMEOUT_MS;
	s->limits.output_limit = CONFIG_NAS_OUTPUT_LIMIT;
	s->limits.max_clients_per_uid = CONFIG_NAS_MAX_CLIENTS_PER_UID;
	s->limits.reserved_clients = CONFIG_NAS_RESERVED_CLIENTS;
	s->limits.write_timeout_ms = CONFIG_NAS_WRITE_TIMEOUT_MS;
	s->limits.memory_budget = CONFIG_NAS_MEMORY_BUDGET;
	rpc_server_add_methods(s, system_method_table);
	rpc_server_add_methods(s, rpc_event_methods);
	rpc_server_add_methods(s, job_methods);
	return s;
}

void
rpc_server_free(struct rpc_server *s)
{
	if (s == NULL)
		return;
	rpc_server_close(s);
	free(s);
}

void
rpc_server_add_methods(struct rpc_server *s, const struct rpc_method *table)
{
	if (s->ntables == RPC_MAX_TABLES)
		fatalx("rpc: too many method tables");
	s->tables[s->ntables++] = table;
}

void
rpc_server_set_auth(struct rpc_server *s, const struct rpc_auth *a)
{
	s->auth = *a;
}

/* Descriptors a daemon needs besides its clients: listener, spare, logs, children. */
#define RPC_FD_RESERVE	32

/*
 * Every client holds a descriptor: a limit the process cannot reach
 * would only turn into EMFILE in accept. Raise the soft limit when the
 * hard one allows, else serve fewer clients.
 */
static void
clamp_clients(struct rpc_limits *l)
{
	rlim_t need = (rlim_t)l->max_clients + RPC_FD_RESERVE;
	struct rlimit rl;
	int fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return;
	/* As far as the hard limit goes; then it is either enough or all there is. */
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur >= need)
		return;
	fit = rl.rlim_cur > RPC_FD_RESERVE + 1 ? (int)(rl.rlim_cur - RPC_FD_RESERVE) : 1;
	log_warnx("max_clients %d lowered to %d: only %llu descriptors (RLIMIT_NOFILE)",
	    l->max_clients, fit, (unsigned long long)rl.rlim_cur);
	l->max_clients = fit;
}

void
rpc_server_set_limits(struct rpc_server *s, const struct rpc_limits *l)
{
	s->limits = *l;
	clamp_clients(&s->limits);
}

const struct rpc_limits *
rpc_server_limits(const struct rpc_server *s)
{
	return &s->limits;
}

void
rpc_server_set_info(struct rpc_server *s, void (*fill)(struct json_object *, void *),
    void *arg)
{
	s->info = fill;
	s->info_arg = arg;
}

const char *
rpc_server_daemon(const struct rpc_server *s)
{
	return s->daemon;
}

static const struct rpc_method *
find_method(const struct rpc_server *s, const char *name)
{
	for (int t = 0; t < s->ntables; t++)
		for (const struct rpc_method *m = s->tables[t]; m->name; m++)
			if (strcmp(m->name, name) == 0)
				return m;
	return NULL;
}

static int
peer_in_group(const struct rpc_peer *p, gid_t g)
{
	if (g == (gid_t)-1)
		return 0;
	if (p->gid == g)
		return 1;
	for (int i = 0; i < p->ngroups; i++)
		if (p->groups[i] == g)
			return 1;
	return 0;
}

int
rpc_peer_may(const struct rpc_server *s, const struct rpc_peer *p, unsigned flags)
{
	if (p->uid == 0 || peer_in_group(p, s->auth.admin_gid))
		return 1;
	if (flags & RPC_MUTATES)
		return 0;
	return peer_in_group(p, s->auth.read_gid);
}

void
rpc_result(struct rpc_call *c, struct json_object *r)
{
	json_object_put(c->result);
	c->result = r ? r : json_object_new_object();
}

void
rpc_error_data(struct rpc_call *c, int code, struct json_object *data,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof(c->err_msg), fmt, ap);
	va_end(ap);
	c->err_code = code;
	json_object_put(c->err_data);
	c->err_data = data;
}

void
rpc_error(struct rpc_call *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof(c->err_msg), fmt, ap);
	va_end(ap);
	c->err_code = code;
}

const char *
rpc_param_str(struct json_object *params, const char *name, const char *def)
{
	struct json_object *v;

	if (params && json_object_object_get_ex(params, name, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return def;
}

int64_t
rpc_param_int(struct json_object *params, const char *name, int64_t def)
{
	struct json_object *v;

	if (params && json_object_object_get_ex(params, name, &v) &&
	    json_object_is_type(v, json_type_int))
		return json_object_get_int64(v);
	return def;
}

int
rpc_param_bool(struct json_object *params, const char *name, int def)
{
	struct json_object *v;

	if (params && json_object_object_get_ex(params, name, &v) &&
	    json_object_is_type(v, json_type_boolean))
		return json_object_get_boolean(v);
	return def;
}

struct json_object *
rpc_make_error(struct json_object *id, int code, const char *msg,
    struct json_object *data)
{
	struct json_object *r = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	if (data)
		json_object_object_add(e, "data", data);
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "error", e);
	json_object_object_add(r, "id", id ? json_object_get(id) : NULL);
	return r;
}

struct json_object *
rpc_batch_too_large(void)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "batch too large: at most %d requests", RPC_MAX_BATCH);
	return rpc_make_error(NULL, RPC_INVALID_REQUEST, msg, NULL);
}

static struct json_object *
make_result(struct json_object *id, struct json_object *result)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "result", result);
	json_object_object_add(r, "id", json_object_get(id));
	return r;
}

static void
log_call(const struct rpc_method *m, const struct rpc_peer *peer,
    struct json_object *params)
{
	struct json_object *shown;

	if (log_get_level() < LOG_LVL_DEBUG)
		return;
	shown = rpc_policy_redact(m->params, params);
	log_debug("call %s uid %u params %s", m->name, (unsigned)peer->uid,
	    shown ? json_object_to_json_string_ext(shown, JSON_C_TO_STRING_PLAIN) : "{}");
	json_object_put(shown);
}

/* Runs a checked call; returns the result or sets err fields in c. */
static void
run_method(struct rpc_call *c, struct json_object *params)
{
	char why[256];

	if (!rpc_peer_may(c->srv, c->peer, c->method->flags)) {
		rpc_error(c, NAS_ERR_DENIED, "%s needs %s", c->method->name,
		    (c->method->flags & RPC_MUTATES) ? "root or the admin group" :
		    "the read group");
		return;
	}
	if (rpc_policy_check(c->method->params, params, why, sizeof(why)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "%s", why);
		return;
	}
	if ((c->method->flags & RPC_NEEDS_CONN) && c->conn == NULL) {
		rpc_error(c, RPC_INVALID_REQUEST, "%s needs a connection", c->method->name);
		return;
	}
	log_call(c->method, c->peer, params);
	c->method->handler(c, params);
	if (c->later)
		return;
	if (c->result == NULL && c->err_code == 0)
		rpc_error(c, RPC_INTERNAL_ERROR, "%s gave no answer", c->method->name);
}

/* json-c parses NaN and Infinity even when strict; echoed, they are not JSON. */
static int
valid_id(struct json_object *id)
{
	return id == NULL || json_object_is_type(id, json_type_string) ||
	    json_object_is_type(id, json_type_int) ||
	    (json_object_is_type(id, json_type_double) &&
	    isfinite(json_object_get_double(id)));
}

/* One request object; returns its answer, or NULL for a notification. */
static struct json_object *
dispatch_one(struct rpc_server *s, struct rpc_conn *conn,
    const struct rpc_peer *peer, struct json_object *req)
{
	struct json_object *ver, *meth, *params = NULL, *id = NULL;
	struct rpc_call c = { .srv = s, .conn = conn, .peer = peer };
	int has_id;

	if (!json_object_is_type(req, json_type_object))
		return rpc_make_error(NULL, RPC_INVALID_REQUEST,
		    "a request must be an object", NULL);
	has_id = json_object_object_get_ex(req, "id", &id);
	if (!json_object_object_get_ex(req, "jsonrpc", &ver) ||
	    !json_object_is_type(ver, json_type_string) ||
	    strcmp(json_object_get_string(ver), "2.0") != 0)
		return rpc_make_error(valid_id(id) ? id : NULL, RPC_INVALID_REQUEST,
		    "jsonrpc must be \"2.0\"", NULL);
	if (!valid_id(id))
		return rpc_make_error(NULL, RPC_INVALID_REQUEST,
		    "id must be a string, number or null", NULL);
	if (!json_object_object_get_ex(req, "method", &meth) ||
	    !json_object_is_type(meth, json_type_string))
		return rpc_make_error(id, RPC_INVALID_REQUEST,
		    "method must be a string", NULL);
	json_object_object_get_ex(req, "params", &params);
	if (params && !json_object_is_type(params, json_type_object) &&
	    !json_object_is_type(params, json_type_array))
		return rpc_make_error(id, RPC_INVALID_REQUEST,
		    "params must be an object or an array", NULL);

	c.id = id;
	c.has_id = has_id;
	c.method = find_method(s, json_object_get_string(meth));
	if (c.method == NULL)
		rpc_error(&c, RPC_METHOD_NOT_FOUND, "no method %s",
		    json_object_get_string(meth));
	else if (params && json_object_is_type(params, json_type_array) &&
	    json_object_array_length(params) > 0)
		rpc_error(&c, RPC_INVALID_PARAMS, "params must be named (an object)");
	else
		run_method(&c, json_object_is_type(params, json_type_array) ? NULL : params);

	if (c.method)
		rpc_policy_wipe(c.method->params, params);
	/* Handed over: the answer goes out when the work is done. */
	if (c.later)
		return NULL;
	return rpc_call_answer(&c);
}

struct json_object *
rpc_call_answer(struct rpc_call *c)
{
	if (!c->has_id) {
		json_object_put(c->result);
		json_object_put(c->err_data);
		return NULL;
	}
	if (c->err_code) {
		json_object_put(c->result);
		return rpc_make_error(c->id, c->err_code, c->err_msg, c->err_data);
	}
	return make_result(c->id, c->result);
}

/*
 * A batch on a connection: each answer is queued as soon as it is made,
 * so a client that does not read is cut off at the output limit and the
 * rest of the batch does not run; no answer array is built.
 */
static void
dispatch_batch_conn(struct rpc_server *s, struct rpc_conn *conn,
    const struct rpc_peer *peer, struct json_object *req, size_t n)
{
	struct json_object *a;
	const char *text;
	size_t len, sent = 0;
	int cut = 0;

	rpc_conn_batch(conn, 1);
	for (size_t i = 0; i < n && !cut; i++) {
		if ((a = dispatch_one(s, conn, peer, json_object_array_get_idx(req, i))) == NULL)
			continue;
		text = json_object_to_json_string_length(a, JSON_C_TO_STRING_PLAIN, &len);
		cut = rpc_conn_write(conn, sent ? "," : "[", 1) == -1 ||
		    rpc_conn_write(conn, text, len) == -1;
		json_object_put(a);
		sent++;
	}
	if (sent && !cut)
		rpc_conn_write(conn, "]\n", 2);
	rpc_conn_batch(conn, 0);
}

struct json_object *
rpc_dispatch(struct rpc_server *s, struct rpc_conn *conn,
    const struct rpc_peer *peer, struct json_object *req)
{
	struct json_object *answers, *a;
	size_t n;

	if (!json_object_is_type(req, json_type_array))
		return dispatch_one(s, conn, peer, req);
	if ((n = json_object_array_length(req)) == 0)
		return rpc_make_error(NULL, RPC_INVALID_REQUEST, "empty batch", NULL);
	if (n > RPC_MAX_BATCH)
		return rpc_batch_too_large();
	if (conn) {
		dispatch_batch_conn(s, conn, peer, req, n);
		return NULL;
	}
	answers = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		if ((a = dispatch_one(s, conn, peer, json_object_array_get_idx(req, i))))
			json_object_array_add(answers, a);
	if (json_object_array_length(answers) == 0) {
		json_object_put(answers);
		return NULL;
	}
	return answers;
}

char *
rpc_dispatch_text(struct rpc_server *s, const struct rpc_peer *peer,
    const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req, *ans;
	char *out = NULL;
	size_t end;

	/* The same strict JSON the socket takes. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	req = json_tokener_parse_ex(tok, text, (int)len);
	end = json_tokener_get_parse_end(tok);
	/* A bare number is complete only at its terminator; the text ends here. */
	if (req == NULL && json_tokener_get_error(tok) == json_tokener_continue) {
		req = json_tokener_parse_ex(tok, "\n", 1);
		end = len;
	}
	/* A NULL req from a successful parse is the JSON value null. */
	if (json_tokener_get_error(tok) != json_tokener_success || end < len)
		ans = rpc_make_error(NULL, RPC_PARSE_ERROR, "parse error", NULL);
	else
		ans = rpc_dispatch(s, NULL, peer, req);
	json_object_put(req);
	secret_tokener_free(tok);
	if (ans) {
		out = strdup(json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN));
		json_object_put(ans);
	}
	secret_scrub_stack();
	return out;
}

static void
system_version(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object();

	(void)params;
	json_object_object_add(r, "daemon", json_object_new_string(c->srv->daemon));
	json_object_object_add(r, "version", json_object_new_string(c->srv->version));
	json_object_object_add(r, "api", json_object_new_string("jsonrpc-2.0"));
	if (c->srv->info)
		c->srv->info(r, c->srv->info_arg);
	rpc_result(c, r);
}

static void
system_methods(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a = json_object_new_array();

	(void)params;
	for (int t = 0; t < c->srv->ntables; t++)
		for (const struct rpc_method *m = c->srv->tables[t]; m->name; m++)
			json_object_array_add(a, rpc_policy_describe(m));
	rpc_result(c, a);
}
