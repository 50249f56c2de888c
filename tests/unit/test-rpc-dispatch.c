/*
 * Unit tests for lib/rpc-dispatch.c: the request envelope, batches,
 * notifications, standard error codes, and authorisation with fake peers.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc.h"
#include "unit-util.h"

#define ADMIN_GID	1000
#define READ_GID	2000
#define SECRET		"s3cret-passphrase-42"

static struct rpc_server *srv;
static int calls;		/* handler runs of any method */

static void
thing_get(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object();

	(void)params;
	calls++;
	json_object_object_add(r, "calls", json_object_new_int(calls));
	rpc_result(c, r);
}

static void
thing_set(struct rpc_call *c, struct json_object *params)
{
	calls++;
	rpc_result(c, json_object_new_int64(rpc_param_int(params, "value", -1)));
}

static void
thing_silent(struct rpc_call *c, struct json_object *params)
{
	(void)c;
	(void)params;
	calls++;
}

static void
thing_fail(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	calls++;
	rpc_error_data(c, NAS_ERR_BUSY, json_object_new_string("bay1"), "disk %s busy", "bay1");
}

static void
thing_login(struct rpc_call *c, struct json_object *params)
{
	calls++;
	rpc_result(c, json_object_new_boolean(
	    strcmp(rpc_param_str(params, "passphrase", ""), SECRET) == 0));
}

static const struct rpc_param set_params[] = {
	{ "value", RPC_INT, RPC_REQUIRED, 0, 10, NULL, "new value" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param login_params[] = {
	{ "user", RPC_STRING, 0, 0, 0, NULL, "who" },
	{ "passphrase", RPC_STRING, RPC_REQUIRED | RPC_SECRET, 1, 64, NULL, "key" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_method methods[] = {
	{ "thing.get", thing_get, NULL, 0, "read" },
	{ "thing.set", thing_set, set_params, RPC_MUTATES, "write" },
	{ "thing.silent", thing_silent, NULL, 0, "answers nothing" },
	{ "thing.fail", thing_fail, NULL, 0, "always fails" },
	{ "thing.login", thing_login, login_params, RPC_MUTATES, "takes a secret" },
	{ NULL, NULL, NULL, 0, NULL }
};

static const struct rpc_peer root = { .pid = 1, .uid = 0, .gid = 0 };
static const struct rpc_peer admin_primary = { .pid = 2, .uid = 1001, .gid = ADMIN_GID };
static const struct rpc_peer admin_supp = { .pid = 3, .uid = 1002, .gid = 100,
	.ngroups = 3, .groups = (gid_t []){ 100, 4711, ADMIN_GID } };
static const struct rpc_peer reader_primary = { .pid = 4, .uid = 1003, .gid = READ_GID };
static const struct rpc_peer reader_supp = { .pid = 5, .uid = 1004, .gid = 100,
	.ngroups = 2, .groups = (gid_t []){ 100, READ_GID } };
static const struct rpc_peer nobody = { .pid = 6, .uid = 65534, .gid = 65534,
	.ngroups = 1, .groups = (gid_t []){ 65534 } };
/* What read_peer leaves when SO_PEERCRED fails. */
static const struct rpc_peer unknown = { .uid = (uid_t)-1, .gid = (gid_t)-1 };

static void
setup(void)
{
	struct rpc_auth auth = { .admin_gid = ADMIN_GID, .read_gid = READ_GID };

	srv = rpc_server_new("testd", "9.9");
	ck_assert_ptr_nonnull(srv);
	rpc_server_add_methods(srv, methods);
	rpc_server_set_auth(srv, &auth);
	calls = 0;
}

static void
teardown(void)
{
	rpc_server_free(srv);
}

/* Dispatches text as peer; the answer parsed, or NULL when none is due. */
static struct json_object *
call_as(const struct rpc_peer *peer, const char *text)
{
	char *out = rpc_dispatch_text(srv, peer, text, strlen(text));
	struct json_object *a;

	if (out == NULL)
		return NULL;
	a = unit_json(out);
	free(out);
	return a;
}

static struct json_object *
call(const char *text)
{
	return call_as(&root, text);
}

/* Asserts text answers the error code with the id given as JSON text. */
static void
answers_error(const char *text, int code, const char *id)
{
	struct json_object *a = call(text), *v;

	ck_assert_msg(a != NULL, "no answer to %s", text);
	ck_assert_msg(unit_err_code(a) == code, "%s: got %s", text,
	    json_object_to_json_string(a));
	ck_assert(json_object_object_get_ex(a, "jsonrpc", &v));
	ck_assert_str_eq(json_object_get_string(v), "2.0");
	ck_assert(json_object_object_get_ex(a, "id", &v));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), id);
	ck_assert(!json_object_object_get_ex(a, "result", NULL));
	json_object_put(a);
}

static void
answers_text(const char *text, const char *want)
{
	struct json_object *a = call(text);

	ck_assert_msg(a != NULL, "no answer to %s", text);
	ck_assert_str_eq(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN), want);
	json_object_put(a);
}

START_TEST(simple_call)
{
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":1},\"id\":1}");
	ck_assert_int_eq(calls, 1);
}
END_TEST

START_TEST(ids_of_every_valid_type)
{
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":3},"
	    "\"id\":\"abc\"}", "{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":\"abc\"}");
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":3},"
	    "\"id\":2.5}", "{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":2.5}");
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":3},"
	    "\"id\":-7}", "{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":-7}");
	/* id null is an odd request, but a request: it gets an answer. */
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":3},"
	    "\"id\":null}", "{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":null}");
}
END_TEST

START_TEST(parse_errors)
{
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":", RPC_PARSE_ERROR, "null");
	answers_error("{\"jsonrpc\":\"2.0\" \"method\":\"thing.get\"}", RPC_PARSE_ERROR, "null");
	answers_error("", RPC_PARSE_ERROR, "null");
	answers_error("garbage", RPC_PARSE_ERROR, "null");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1} x",
	    RPC_PARSE_ERROR, "null");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}{}",
	    RPC_PARSE_ERROR, "null");
	/* Not JSON, even if a lenient parser would take it. */
	answers_error("{'jsonrpc':'2.0','method':'thing.get','id':1}", RPC_PARSE_ERROR, "null");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1,}",
	    RPC_PARSE_ERROR, "null");
	ck_assert_int_eq(calls, 0);
}
END_TEST

/* JSON allows white space around the value: a line with its newline is fine. */
START_TEST(white_space_around_value)
{
	answers_text("  {\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":1},\"id\":1}");
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1} \r\n",
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":2},\"id\":1}");
}
END_TEST

START_TEST(non_object_requests)
{
	answers_error("1", RPC_INVALID_REQUEST, "null");
	answers_error("\"thing.get\"", RPC_INVALID_REQUEST, "null");
	answers_error("null", RPC_INVALID_REQUEST, "null");
	answers_error("true", RPC_INVALID_REQUEST, "null");
	answers_error("[]", RPC_INVALID_REQUEST, "null");
}
END_TEST

START_TEST(bad_version)
{
	answers_error("{\"method\":\"thing.get\",\"id\":4}", RPC_INVALID_REQUEST, "4");
	answers_error("{\"jsonrpc\":\"1.0\",\"method\":\"thing.get\",\"id\":4}",
	    RPC_INVALID_REQUEST, "4");
	answers_error("{\"jsonrpc\":2.0,\"method\":\"thing.get\",\"id\":4}",
	    RPC_INVALID_REQUEST, "4");
	ck_assert_int_eq(calls, 0);
}
END_TEST

START_TEST(bad_ids)
{
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":{}}",
	    RPC_INVALID_REQUEST, "null");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":[1]}",
	    RPC_INVALID_REQUEST, "null");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":true}",
	    RPC_INVALID_REQUEST, "null");
	answers_error("{\"jsonrpc\":\"1.0\",\"method\":\"thing.get\",\"id\":{}}",
	    RPC_INVALID_REQUEST, "null");
	/* json-c takes these; echoed back they would not be JSON. */
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":NaN}",
	    RPC_INVALID_REQUEST, "null");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":-Infinity}",
	    RPC_INVALID_REQUEST, "null");
	ck_assert_int_eq(calls, 0);
}
END_TEST

START_TEST(bad_method_member)
{
	answers_error("{\"jsonrpc\":\"2.0\",\"id\":5}", RPC_INVALID_REQUEST, "5");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":7,\"id\":5}", RPC_INVALID_REQUEST, "5");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":null,\"id\":5}", RPC_INVALID_REQUEST, "5");
}
END_TEST

START_TEST(unknown_method)
{
	struct json_object *a = call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.nope\",\"id\":6}");

	ck_assert_int_eq(unit_err_code(a), RPC_METHOD_NOT_FOUND);
	ck_assert_str_eq(unit_err_msg(a), "no method thing.nope");
	json_object_put(a);
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"\",\"id\":6}", RPC_METHOD_NOT_FOUND, "6");
}
END_TEST

START_TEST(params_shapes)
{
	/* An empty array means no parameters. */
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"params\":[],\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":1},\"id\":1}");
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"params\":{},\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":2},\"id\":1}");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":[3],\"id\":1}",
	    RPC_INVALID_PARAMS, "1");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"params\":\"x\",\"id\":1}",
	    RPC_INVALID_REQUEST, "1");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"params\":3,\"id\":1}",
	    RPC_INVALID_REQUEST, "1");
	ck_assert_int_eq(calls, 2);
}
END_TEST

START_TEST(invalid_params_before_handler)
{
	struct json_object *a;

	a = call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":11},\"id\":1}");
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
	ck_assert_str_eq(unit_err_msg(a), "parameter 'value' is out of range 0..10");
	json_object_put(a);
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"id\":1}",
	    RPC_INVALID_PARAMS, "1");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\","
	    "\"params\":{\"value\":1,\"more\":2},\"id\":1}", RPC_INVALID_PARAMS, "1");
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\","
	    "\"params\":{\"value\":1},\"id\":1}", RPC_INVALID_PARAMS, "1");
	ck_assert_int_eq(calls, 0);
}
END_TEST

START_TEST(handler_without_answer)
{
	struct json_object *a = call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.silent\",\"id\":1}");

	ck_assert_int_eq(unit_err_code(a), RPC_INTERNAL_ERROR);
	ck_assert_str_eq(unit_err_msg(a), "thing.silent gave no answer");
	ck_assert_int_eq(calls, 1);
	json_object_put(a);
}
END_TEST

START_TEST(handler_error_with_data)
{
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"thing.fail\",\"id\":\"x\"}",
	    "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32004,\"message\":\"disk bay1 busy\","
	    "\"data\":\"bay1\"},\"id\":\"x\"}");
}
END_TEST

START_TEST(notifications_get_no_answer)
{
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\"}"));
	ck_assert_int_eq(calls, 1);
	/* Errors of a notification are not answered either... */
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.nope\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.fail\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.silent\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\","
	    "\"params\":{\"value\":99}}"));
	ck_assert_int_eq(calls, 3);
	/* ...but a request that is not valid cannot be known as one. */
	answers_error("{\"jsonrpc\":\"1.0\",\"method\":\"thing.get\"}", RPC_INVALID_REQUEST, "null");
}
END_TEST

START_TEST(batch_of_requests)
{
	answers_text("[{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":4},\"id\":2},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":3}]",
	    "[{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":1},\"id\":1},"
	    "{\"jsonrpc\":\"2.0\",\"result\":4,\"id\":2},"
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":3},\"id\":3}]");
}
END_TEST

START_TEST(empty_batch)
{
	struct json_object *a = call("[]");

	ck_assert(json_object_is_type(a, json_type_object));
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_REQUEST);
	json_object_put(a);
}
END_TEST

START_TEST(batch_of_notifications)
{
	ck_assert_ptr_null(call("[{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\"}]"));
	ck_assert_int_eq(calls, 2);
}
END_TEST

START_TEST(batch_of_invalid)
{
	struct json_object *a = call("[1,2,3]");

	ck_assert(json_object_is_type(a, json_type_array));
	ck_assert_uint_eq(json_object_array_length(a), 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, i)),
		    RPC_INVALID_REQUEST);
	json_object_put(a);
}
END_TEST

START_TEST(mixed_batch)
{
	struct json_object *a = call("["
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":\"a\"},"
	    "{\"foo\":\"boo\"},"
	    "[{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":\"nested\"}],"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.nope\",\"id\":\"b\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":\"x\"},\"id\":\"c\"}"
	    "]"), *v;

	ck_assert_uint_eq(json_object_array_length(a), 5);
	v = json_object_array_get_idx(a, 0);
	ck_assert_int_eq(unit_err_code(v), 0);
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":2},\"id\":\"a\"}");
	ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, 1)), RPC_INVALID_REQUEST);
	ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, 2)), RPC_INVALID_REQUEST);
	ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, 3)), RPC_METHOD_NOT_FOUND);
	ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, 4)), RPC_INVALID_PARAMS);
	ck_assert_int_eq(calls, 2);
	json_object_put(a);
}
END_TEST

START_TEST(subscribe_needs_a_connection)
{
	answers_error("{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1}",
	    RPC_INVALID_REQUEST, "1");
}
END_TEST

START_TEST(system_methods)
{
	struct json_object *a = call("{\"jsonrpc\":\"2.0\",\"method\":\"system.version\",\"id\":1}");

	ck_assert_str_eq(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"daemon\":\"testd\",\"version\":\"9.9\","
	    "\"api\":\"jsonrpc-2.0\"},\"id\":1}");
	json_object_put(a);
	a = call("{\"jsonrpc\":\"2.0\",\"method\":\"system.methods\",\"id\":1}");
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a), "\"thing.login\""));
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a), "\"job.cancel\""));
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a), "\"events.subscribe\""));
	ck_assert_ptr_null(strstr(json_object_to_json_string(a), "s3cret"));
	json_object_put(a);
}
END_TEST

static void
add_info(struct json_object *r, void *arg)
{
	json_object_object_add(r, "extra", json_object_new_string(arg));
}

START_TEST(system_version_info)
{
	rpc_server_set_info(srv, add_info, "md: missing");
	answers_text("{\"jsonrpc\":\"2.0\",\"method\":\"system.version\",\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"result\":{\"daemon\":\"testd\",\"version\":\"9.9\","
	    "\"api\":\"jsonrpc-2.0\",\"extra\":\"md: missing\"},\"id\":1}");
	ck_assert_str_eq(rpc_server_daemon(srv), "testd");
}
END_TEST

/* ---- authorisation ---- */

START_TEST(peer_may_matrix)
{
	ck_assert(rpc_peer_may(srv, &root, RPC_MUTATES));
	ck_assert(rpc_peer_may(srv, &root, 0));
	ck_assert(rpc_peer_may(srv, &admin_primary, RPC_MUTATES));
	ck_assert(rpc_peer_may(srv, &admin_primary, 0));
	ck_assert(rpc_peer_may(srv, &admin_supp, RPC_MUTATES));
	ck_assert(rpc_peer_may(srv, &admin_supp, 0));
	ck_assert(!rpc_peer_may(srv, &reader_primary, RPC_MUTATES));
	ck_assert(rpc_peer_may(srv, &reader_primary, 0));
	ck_assert(!rpc_peer_may(srv, &reader_supp, RPC_MUTATES));
	ck_assert(rpc_peer_may(srv, &reader_supp, 0));
	ck_assert(!rpc_peer_may(srv, &nobody, RPC_MUTATES));
	ck_assert(!rpc_peer_may(srv, &nobody, 0));
	ck_assert(!rpc_peer_may(srv, &unknown, RPC_MUTATES));
	ck_assert(!rpc_peer_may(srv, &unknown, 0));
}
END_TEST

/* Groups that do not exist are (gid_t)-1: root alone may call anything. */
START_TEST(no_groups_root_only)
{
	struct rpc_auth none = { .admin_gid = (gid_t)-1, .read_gid = (gid_t)-1 };

	rpc_server_set_auth(srv, &none);
	ck_assert(rpc_peer_may(srv, &root, RPC_MUTATES));
	ck_assert(!rpc_peer_may(srv, &admin_primary, 0));
	ck_assert(!rpc_peer_may(srv, &reader_supp, 0));
	ck_assert(!rpc_peer_may(srv, &unknown, 0));
}
END_TEST

static void
denied(const struct rpc_peer *peer, const char *text)
{
	struct json_object *a = call_as(peer, text);

	ck_assert_msg(unit_err_code(a) == NAS_ERR_DENIED, "%s", json_object_to_json_string(a));
	json_object_put(a);
}

START_TEST(denied_before_handler)
{
	denied(&nobody, "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}");
	denied(&reader_primary, "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\","
	    "\"params\":{\"value\":1},\"id\":1}");
	denied(&reader_supp, "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\","
	    "\"params\":{\"value\":1},\"id\":1}");
	denied(&nobody, "{\"jsonrpc\":\"2.0\",\"method\":\"system.methods\",\"id\":1}");
	/* The denial comes before the policy: a stranger learns nothing of it. */
	denied(&nobody, "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\","
	    "\"params\":{\"value\":\"wrong\"},\"id\":1}");
	ck_assert_int_eq(calls, 0);
	/* Denied notifications run nothing either. */
	ck_assert_ptr_null(call_as(&reader_primary, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"thing.set\",\"params\":{\"value\":1}}"));
	ck_assert_int_eq(calls, 0);
}
END_TEST

START_TEST(allowed_callers_run)
{
	struct json_object *a;

	a = call_as(&reader_supp, "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	a = call_as(&admin_supp, "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\","
	    "\"params\":{\"value\":1},\"id\":1}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	a = call_as(&admin_primary, "{\"jsonrpc\":\"2.0\",\"method\":\"job.cancel\","
	    "\"params\":{\"id\":1},\"id\":1}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_NOT_FOUND);
	json_object_put(a);
	denied(&reader_primary, "{\"jsonrpc\":\"2.0\",\"method\":\"job.cancel\","
	    "\"params\":{\"id\":1},\"id\":1}");
	ck_assert_int_eq(calls, 2);
}
END_TEST

START_TEST(denied_in_batch)
{
	struct json_object *a = call_as(&reader_primary, "["
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.set\",\"params\":{\"value\":1},\"id\":2}]");

	ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, 0)), 0);
	ck_assert_int_eq(unit_err_code(json_object_array_get_idx(a, 1)), NAS_ERR_DENIED);
	ck_assert_int_eq(calls, 1);
	json_object_put(a);
}
END_TEST

/* ---- secrets ---- */

/* Runs text at debug level with stderr caught; returns what was logged. */
static char *
logged_while(const char *text)
{
	char path[] = "/tmp/nas-unit-log.XXXXXX", *buf;
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct json_object *a;
	ssize_t n;

	ck_assert_int_ne(fd, -1);
	unlink(path);
	log_init("testd", 1, 0);
	log_set_level(LOG_LVL_DEBUG);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	a = call(text);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	log_set_level(LOG_LVL_INFO);
	json_object_put(a);
	ck_assert_ptr_nonnull(buf = calloc(1, 65536));
	n = pread(fd, buf, 65535, 0);
	ck_assert_int_ge(n, 0);
	close(fd);
	return buf;
}

START_TEST(secret_never_logged)
{
	char *log = logged_while("{\"jsonrpc\":\"2.0\",\"method\":\"thing.login\","
	    "\"params\":{\"user\":\"alice\",\"passphrase\":\"" SECRET "\"},\"id\":1}");

	ck_assert_msg(strstr(log, "alice") != NULL, "the call was not logged: %s", log);
	ck_assert_msg(strstr(log, "s3cret") == NULL, "secret logged: %s", log);
	ck_assert_int_eq(calls, 1);
	free(log);
}
END_TEST

START_TEST(secret_not_in_error_answers)
{
	static const char *const bad[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"thing.login\",\"params\":{\"passphrase\":"
		    "\"" SECRET "\",\"bogus\":1},\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"thing.login\",\"params\":{\"passphrase\":"
		    "[\"" SECRET "\"]},\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"thing.login\",\"params\":{\"passphrase\":"
		    "\"" SECRET "\",\"user\":7},\"id\":1}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *a = call(bad[i]);

		ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
		ck_assert_ptr_null(strstr(json_object_to_json_string(a), "s3cret"));
		json_object_put(a);
	}
}
END_TEST

/* After the call the request's copy of the secret is zeroed. */
START_TEST(secret_wiped_after_call)
{
	struct json_object *req = unit_json("{\"jsonrpc\":\"2.0\",\"method\":\"thing.login\","
	    "\"params\":{\"passphrase\":\"" SECRET "\"},\"id\":1}"), *p, *v, *a;
	const char *s;

	ck_assert(json_object_object_get_ex(req, "params", &p));
	ck_assert(json_object_object_get_ex(p, "passphrase", &v));
	s = json_object_get_string(v);
	a = rpc_dispatch(srv, NULL, &root, req);
	ck_assert_str_eq(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
	    "{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":1}");
	for (size_t i = 0; i < strlen(SECRET); i++)
		ck_assert_msg(s[i] == '\0', "byte %zu not wiped", i);
	json_object_put(a);
	json_object_put(req);
}
END_TEST

static Suite *
dispatch_suite(void)
{
	Suite *s = suite_create("rpc-dispatch");
	TCase *tc = tcase_create("envelope"), *ta = tcase_create("auth");
	TCase *ts = tcase_create("secrets");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, simple_call);
	tcase_add_test(tc, ids_of_every_valid_type);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, white_space_around_value);
	tcase_add_test(tc, non_object_requests);
	tcase_add_test(tc, bad_version);
	tcase_add_test(tc, bad_ids);
	tcase_add_test(tc, bad_method_member);
	tcase_add_test(tc, unknown_method);
	tcase_add_test(tc, params_shapes);
	tcase_add_test(tc, invalid_params_before_handler);
	tcase_add_test(tc, handler_without_answer);
	tcase_add_test(tc, handler_error_with_data);
	tcase_add_test(tc, notifications_get_no_answer);
	tcase_add_test(tc, batch_of_requests);
	tcase_add_test(tc, empty_batch);
	tcase_add_test(tc, batch_of_notifications);
	tcase_add_test(tc, batch_of_invalid);
	tcase_add_test(tc, mixed_batch);
	tcase_add_test(tc, subscribe_needs_a_connection);
	tcase_add_test(tc, system_methods);
	tcase_add_test(tc, system_version_info);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(ta, setup, teardown);
	tcase_add_test(ta, peer_may_matrix);
	tcase_add_test(ta, no_groups_root_only);
	tcase_add_test(ta, denied_before_handler);
	tcase_add_test(ta, allowed_callers_run);
	tcase_add_test(ta, denied_in_batch);
	suite_add_tcase(s, ta);
	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_add_test(ts, secret_never_logged);
	tcase_add_test(ts, secret_not_in_error_answers);
	tcase_add_test(ts, secret_wiped_after_call);
	suite_add_tcase(s, ts);
	return s;
}

int
main(void)
{
	return unit_run(dispatch_suite());
}
