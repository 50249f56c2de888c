/*
 * Unit tests for lib/client.c: calls against a real server in a forked
 * child, and against a hand-written peer for the answers a daemon would
 * never send.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "rpc.h"
#include "unit-util.h"

static char *dir;
static pid_t server_pid;
static struct rpc_client *cl;
static struct rpc_client_error err;

static void
thing_echo(struct rpc_call *c, struct json_object *params)
{
	rpc_result(c, params ? json_object_get(params) : NULL);
}

static void
thing_fail(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	rpc_error_data(c, NAS_ERR_BUSY, json_object_new_string("bay1"), "disk busy");
}

/* Three events, then the answer: they reach the client during its call. */
static void
thing_events(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	for (int i = 1; i <= 3; i++) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "n", json_object_new_int(i));
		nas_event("test.tick", d);
	}
	rpc_result(c, json_object_new_string("ticked"));
}

static ev_timer later;

static void
later_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	nas_event("test.later", NULL);
}

static void
thing_later(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	ev_timer_init(&later, later_cb, 0.01, 0.);
	ev_timer_start(EV_DEFAULT, &later);
	rpc_result(c, NULL);
}

static void
thing_blob(struct rpc_call *c, struct json_object *params)
{
	size_t n = (size_t)rpc_param_int(params, "size", 0);
	char *s = malloc(n + 1);

	memset(s, 'b', n);
	s[n] = '\0';
	rpc_result(c, json_object_new_string(s));
	free(s);
}

static const struct rpc_param echo_params[] = {
	{ "a", RPC_INT, 0, 0, 0, NULL, "anything" },
	{ "b", RPC_STRING, 0, 0, 0, NULL, "anything" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param blob_params[] = {
	{ "size", RPC_INT, RPC_REQUIRED, 0, 1 << 22, NULL, "bytes" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_method methods[] = {
	{ "thing.echo", thing_echo, echo_params, 0, "echo" },
	{ "thing.fail", thing_fail, NULL, 0, "fails" },
	{ "thing.events", thing_events, NULL, 0, "events then answer" },
	{ "thing.later", thing_later, NULL, 0, "an event after the answer" },
	{ "thing.blob", thing_blob, blob_params, 0, "a large answer" },
	{ NULL, NULL, NULL, 0, NULL }
};

/* The child: serves dir/testd.sock until killed; says so on ready. */
static void
serve(int ready)
{
	struct rpc_server *s = rpc_server_new("testd", "2.0");
	struct rpc_limits lim = { .max_request = 65536, .max_clients = 8,
	    .client_timeout_ms = 10000, .output_limit = 16 << 20 };
	char path[512];

	rpc_server_add_methods(s, methods);
	rpc_server_set_limits(s, &lim);
	rpc_events_init(s);
	snprintf(path, sizeof(path), "%s/testd.sock", dir);
	if (rpc_server_listen(s, path, (gid_t)-1) == -1)
		_exit(1);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	close(ready);
	ev_run(EV_DEFAULT, 0);
	_exit(0);
}

static void
setup(void)
{
	int p[2];
	char c;

	dir = unit_tmpdir();
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ne(server_pid = fork(), -1);
	if (server_pid == 0) {
		close(p[0]);
		serve(p[1]);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	cl = rpc_client_open(dir, "testd", &err);
	ck_assert_msg(cl != NULL, "%s", err.message);
}

static void
teardown(void)
{
	rpc_client_close(cl);
	rpc_client_error_clear(&err);
	kill(server_pid, SIGKILL);
	waitpid(server_pid, NULL, 0);
	unit_rmtree(dir);
	free(dir);
}

static const char *
plain(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

START_TEST(call_ok)
{
	struct json_object *r;

	ck_assert_int_eq(rpc_client_call(cl, "system.version", NULL, &r, &err), 0);
	ck_assert_int_eq(err.code, 0);
	ck_assert_str_eq(plain(r), "{\"daemon\":\"testd\",\"version\":\"2.0\","
	    "\"api\":\"jsonrpc-2.0\"}");
	json_object_put(r);
	ck_assert_int_eq(rpc_client_call(cl, "thing.echo",
	    unit_json("{\"a\":1,\"b\":\"x\"}"), &r, &err), 0);
	ck_assert_str_eq(plain(r), "{\"a\":1,\"b\":\"x\"}");
	json_object_put(r);
	ck_assert_int_ge(rpc_client_fd(cl), 0);
}
END_TEST

START_TEST(many_calls_one_connection)
{
	struct json_object *r;
	char want[64];

	for (int i = 0; i < 200; i++) {
		struct json_object *p = json_object_new_object();

		json_object_object_add(p, "a", json_object_new_int(i));
		ck_assert_int_eq(rpc_client_call(cl, "thing.echo", p, &r, &err), 0);
		snprintf(want, sizeof(want), "{\"a\":%d}", i);
		ck_assert_str_eq(plain(r), want);
		json_object_put(r);
	}
}
END_TEST

START_TEST(error_mapping)
{
	struct json_object *r = (struct json_object *)1;

	ck_assert_int_eq(rpc_client_call(cl, "thing.nope", NULL, &r, &err), -1);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(err.code, RPC_METHOD_NOT_FOUND);
	ck_assert_str_eq(err.message, "no method thing.nope");
	ck_assert_ptr_null(err.data);
	ck_assert_int_eq(rpc_client_call(cl, "thing.fail", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, NAS_ERR_BUSY);
	ck_assert_str_eq(err.message, "disk busy");
	ck_assert_str_eq(json_object_get_string(err.data), "bay1");
	ck_assert_int_eq(rpc_client_call(cl, "thing.echo", unit_json("{\"a\":\"x\"}"),
	    &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_INVALID_PARAMS);
	ck_assert_str_eq(err.message, "parameter 'a' must be of type integer");
	ck_assert_ptr_null(err.data);
	/* A later success leaves the error alone; the caller clears it. */
	ck_assert_int_eq(rpc_client_call(cl, "system.version", NULL, &r, &err), 0);
	json_object_put(r);
}
END_TEST

START_TEST(large_answer)
{
	struct json_object *r;

	ck_assert_int_eq(rpc_client_call(cl, "thing.blob",
	    unit_json("{\"size\":3000000}"), &r, &err), 0);
	ck_assert_int_eq(json_object_get_string_len(r), 3000000);
	json_object_put(r);
}
END_TEST

START_TEST(events_queued_during_call)
{
	struct json_object *r, *p;
	char *method;

	ck_assert_int_eq(rpc_client_call(cl, "events.subscribe", NULL, &r, &err), 0);
	json_object_put(r);
	ck_assert_int_eq(rpc_client_call(cl, "thing.events", NULL, &r, &err), 0);
	ck_assert_str_eq(json_object_get_string(r), "ticked");
	json_object_put(r);
	for (int i = 1; i <= 3; i++) {
		struct json_object *n;

		ck_assert_int_eq(rpc_client_next_event(cl, 0, &method, &p), 1);
		ck_assert_str_eq(method, "test.tick");
		ck_assert(json_object_object_get_ex(p, "n", &n));
		ck_assert_int_eq(json_object_get_int(n), i);
		free(method);
		json_object_put(p);
	}
	ck_assert_int_eq(rpc_client_next_event(cl, 0, &method, &p), 0);
}
END_TEST

START_TEST(event_after_answer)
{
	struct json_object *r, *p;
	char *method;

	ck_assert_int_eq(rpc_client_call(cl, "events.subscribe",
	    unit_json("{\"topics\":[\"test.later\"]}"), &r, &err), 0);
	json_object_put(r);
	ck_assert_int_eq(rpc_client_call(cl, "thing.later", NULL, &r, &err), 0);
	json_object_put(r);
	ck_assert_int_eq(rpc_client_next_event(cl, 10000, &method, &p), 1);
	ck_assert_str_eq(method, "test.later");
	free(method);
	json_object_put(p);
}
END_TEST

START_TEST(server_goes_away)
{
	struct json_object *r;
	char *method;

	kill(server_pid, SIGKILL);
	waitpid(server_pid, NULL, 0);
	ck_assert_int_eq(rpc_client_call(cl, "system.version", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_CLIENT_IO);
	ck_assert_int_eq(rpc_client_next_event(cl, 1000, &method, &r), -1);
}
END_TEST

START_TEST(unreachable)
{
	struct rpc_client *c;
	char longname[200];

	c = rpc_client_open(dir, "nosuchd", &err);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(err.code, RPC_CLIENT_UNREACHABLE);
	ck_assert_ptr_nonnull(strstr(err.message, "nosuchd.sock"));
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_ptr_null(rpc_client_open(dir, longname, &err));
	ck_assert_int_eq(err.code, RPC_CLIENT_UNREACHABLE);
	ck_assert_ptr_null(rpc_client_open("/nonexistent/dir", "testd", NULL));
}
END_TEST

/* ---- a hand-written peer ---- */

static int lfd;
static char ppath[300];

static void
peer_setup(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	dir = unit_tmpdir();
	memset(&err, 0, sizeof(err));
	snprintf(ppath, sizeof(ppath), "%s/peer.sock", dir);
	strcpy(sun.sun_path, ppath);
	ck_assert_int_ne(lfd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	cl = rpc_client_open_path(ppath, &err);
	ck_assert_msg(cl != NULL, "%s", err.message);
}

static void
peer_teardown(void)
{
	rpc_client_close(cl);
	rpc_client_error_clear(&err);
	close(lfd);
	unit_rmtree(dir);
	free(dir);
}

/* Accepts the client and queues lines for it before it asks. */
static int
peer_says(const char *lines)
{
	int fd = accept(lfd, NULL, NULL);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, lines, strlen(lines)), (ssize_t)strlen(lines));
	return fd;
}

START_TEST(answers_matched_by_id)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"result\":\"stale\",\"id\":999}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x.y\",\"params\":{\"k\":1}}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":\"mine\",\"id\":1}\n");
	struct json_object *r, *p;
	char *method;

	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), 0);
	ck_assert_str_eq(json_object_get_string(r), "mine");
	json_object_put(r);
	ck_assert_int_eq(rpc_client_next_event(cl, 0, &method, &p), 1);
	ck_assert_str_eq(method, "x.y");
	ck_assert_str_eq(plain(p), "{\"k\":1}");
	free(method);
	json_object_put(p);
	close(fd);
}
END_TEST

/* An error with id null (connection limit, parse error) answers any call. */
START_TEST(null_id_error_answers)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32007,"
	    "\"message\":\"too many connections\"},\"id\":null}\n");
	struct json_object *r;

	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, NAS_ERR_LIMIT);
	ck_assert_str_eq(err.message, "too many connections");
	close(fd);
}
END_TEST

START_TEST(malformed_answers)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"id\":1}\nthis is not json\n");
	struct json_object *r;

	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_INTERNAL_ERROR);
	ck_assert_str_eq(err.message, "malformed answer");
	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_CLIENT_IO);
	close(fd);
}
END_TEST

START_TEST(timeout)
{
	int fd = peer_says("");
	struct json_object *r;

	rpc_client_set_timeout(cl, 50);
	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_CLIENT_IO);
	ck_assert_ptr_nonnull(strstr(err.message, "waiting for a.b"));
	close(fd);
}
END_TEST

/* What the client sends is one JSON-RPC request per line. */
START_TEST(request_on_the_wire)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":1}\n");
	struct json_object *r;
	char buf[512];
	ssize_t n;

	ck_assert_int_eq(rpc_client_call(cl, "disk.list", unit_json("{\"bay\":2}"),
	    &r, &err), 0);
	json_object_put(r);
	n = read(fd, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "{\"jsonrpc\":\"2.0\",\"method\":\"disk.list\","
	    "\"params\":{\"bay\":2},\"id\":1}\n");
	close(fd);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("server"), *tp = tcase_create("peer");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, call_ok);
	tcase_add_test(tc, many_calls_one_connection);
	tcase_add_test(tc, error_mapping);
	tcase_add_test(tc, large_answer);
	tcase_add_test(tc, events_queued_during_call);
	tcase_add_test(tc, event_after_answer);
	tcase_add_test(tc, server_goes_away);
	tcase_add_test(tc, unreachable);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tp, peer_setup, peer_teardown);
	tcase_add_test(tp, answers_matched_by_id);
	tcase_add_test(tp, null_id_error_answers);
	tcase_add_test(tp, malformed_answers);
	tcase_add_test(tp, timeout);
	tcase_add_test(tp, request_on_the_wire);
	suite_add_tcase(s, tp);
	return s;
}

int
main(void)
{
	return unit_run(client_suite());
}
