/*
 * Unit tests for lib/client.c: calls against a real server in a forked
 * child, and against a hand-written peer for the answers a daemon would
 * never send.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client-private.h"
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

/* The next event is method with params (as plain JSON; NULL for none). */
static void
next_event_is(int timeout_ms, const char *method, const char *params)
{
	struct json_object *p;
	char *m;

	ck_assert_int_eq(rpc_client_next_event(cl, timeout_ms, &m, &p), 1);
	ck_assert_str_eq(m, method);
	if (params)
		ck_assert_str_eq(plain(p), params);
	else
		ck_assert_ptr_null(p);
	free(m);
	json_object_put(p);
}

/* A call answered "mine". */
static void
call_gets_mine(void)
{
	struct json_object *r;

	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), 0);
	ck_assert_str_eq(json_object_get_string(r), "mine");
	json_object_put(r);
}

START_TEST(answers_matched_by_id)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"result\":\"stale\",\"id\":999}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x.y\",\"params\":{\"k\":1}}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":\"mine\",\"id\":1}\n");

	call_gets_mine();
	next_event_is(0, "x.y", "{\"k\":1}");
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

/*
 * An answer json-c would spend gigabytes on (about 800 bytes a {}) is
 * refused before it is parsed: here one object past the cap, after
 * first (json-c also takes strings in single quotes, where a " hides
 * nothing).
 */
static void
too_complex_refused(const char *first)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"result\":[";
	static const char tail[] = "{}],\"id\":1}\n";
	size_t len = sizeof(head) + strlen(first) + 3 * (size_t)CLIENT_MAX_CONTAINERS +
	    sizeof(tail);
	char *text = malloc(len), *p;
	struct json_object *r;
	int fd;

	ck_assert_ptr_nonnull(text);
	p = stpcpy(stpcpy(text, head), first);
	/* With the answer itself and its array: past the cap by one. */
	for (int i = 0; i < CLIENT_MAX_CONTAINERS - 2; i++)
		p = stpcpy(p, "{},");
	strcpy(p, tail);
	fd = peer_says(text);
	ck_assert_int_eq(rpc_client_call(cl, "a.b", NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_CLIENT_IO);
	close(fd);
	free(text);
}

START_TEST(answer_too_complex)
{
	too_complex_refused("");
}
END_TEST

START_TEST(answer_too_complex_quoted)
{
	too_complex_refused("'\"',");
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

/*
 * A method that is not a string is no notification: a null one was
 * strdup'ed as NULL (a crash), a number came out as its text.
 */
START_TEST(notification_method_not_string)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"method\":null}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":5,\"params\":{}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":{\"a\":1}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x.y\",\"params\":{\"k\":1}}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":\"mine\",\"id\":1}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":null,\"params\":{}}\n"
	    "[{\"jsonrpc\":\"2.0\",\"method\":\"in.batch\"}]\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"after\"}\n");

	call_gets_mine();
	next_event_is(0, "x.y", "{\"k\":1}");
	/* Read while no call waits: the same rule. */
	next_event_is(10000, "after", NULL);
	close(fd);
}
END_TEST

/* n notifications "job.<what>" about job id, one per line. */
static char *
job_events(char *at, const char *what, int n)
{
	for (int i = 0; i < n; i++)
		at += sprintf(at, "{\"jsonrpc\":\"2.0\",\"method\":\"job.%s\","
		    "\"params\":{\"id\":%d}}\n", what, i);
	return at;
}

/* The peer sends text (written up to at), then the answer to a call made now. */
static int
events_then_answer(char *text, char *at)
{
	int fd;

	sprintf(at, "{\"jsonrpc\":\"2.0\",\"result\":\"mine\",\"id\":1}\n");
	fd = peer_says(text);
	free(text);
	call_gets_mine();
	return fd;
}

/*
 * A job.finished that came while a call waited behind a full queue of
 * progress events was dropped: nasctl then waited for it for ever.
 */
START_TEST(job_finished_kept_when_queue_full)
{
	char *text = malloc(1200 * 80), *at = text;
	struct json_object *p;
	int fd, finished = 0, n = 0;
	char *method;

	at = job_events(at, "progress", 1100);
	at = job_events(at, "finished", 1);
	at = job_events(at, "progress", 10);
	fd = events_then_answer(text, at);
	while (rpc_client_next_event(cl, 0, &method, &p) == 1) {
		finished += strcmp(method, "job.finished") == 0;
		n++;
		free(method);
		json_object_put(p);
	}
	ck_assert_int_eq(finished, 1);
	ck_assert_int_eq(n, 1024);
	close(fd);
}
END_TEST

/* More job.finished than the queue holds: the stream says so, then ends. */
START_TEST(job_finished_overflow_reported)
{
	char *text = malloc(1100 * 80), *at = text;
	struct json_object *p;
	char *method;
	int fd;

	at = job_events(at, "finished", 1025);
	fd = events_then_answer(text, at);
	for (int i = 0; i < 1024; i++) {
		ck_assert_int_eq(rpc_client_next_event(cl, 0, &method, &p), 1);
		ck_assert_str_eq(method, "job.finished");
		ck_assert_int_eq(json_object_get_int(json_object_object_get(p, "id")), i);
		free(method);
		json_object_put(p);
	}
	errno = 0;
	ck_assert_int_eq(rpc_client_next_event(cl, 0, &method, &p), -1);
	ck_assert_int_eq(errno, ENOBUFS);
	close(fd);
}
END_TEST

/* An answer whose id is a string is no answer to a call with that number. */
START_TEST(string_id_is_not_ours)
{
	int fd = peer_says("{\"jsonrpc\":\"2.0\",\"result\":\"theirs\",\"id\":\"1\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":\"mine\",\"id\":1}\n");

	call_gets_mine();
	close(fd);
}
END_TEST

/* ---- the non-blocking mode, on the libev default loop ---- */

static struct rpc_client *ec;
static int pfd = -1;

struct answer {
	int			 calls;		/* times the callback ran */
	int			 code;
	char			 message[512];
	char			 result[256];
	int			 close_client;
};

static void
answer_cb(struct json_object *result, const struct rpc_client_error *e, void *arg)
{
	struct answer *a = arg;

	a->calls++;
	a->code = e ? e->code : 0;
	snprintf(a->message, sizeof(a->message), "%s", e ? e->message : "");
	snprintf(a->result, sizeof(a->result), "%s", result ? plain(result) : "");
	ck_assert((result == NULL) != (e == NULL));
	if (a->close_client) {
		rpc_client_close(ec);
		ec = NULL;
	}
}

static char events_seen[512];

static void
event_cb(const char *method, struct json_object *params, void *arg)
{
	size_t l = strlen(events_seen);

	(void)arg;
	snprintf(events_seen + l, sizeof(events_seen) - l, "%s%s ", method,
	    params ? plain(params) : "");
}

static void
ev_setup(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	dir = unit_tmpdir();
	memset(&err, 0, sizeof(err));
	events_seen[0] = '\0';
	snprintf(ppath, sizeof(ppath), "%s/peer.sock", dir);
	strcpy(sun.sun_path, ppath);
	ck_assert_int_ne(lfd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ec = rpc_client_open_ev(EV_DEFAULT, ppath, &err);
	ck_assert_msg(ec != NULL, "%s", err.message);
	rpc_client_on_event(ec, event_cb, NULL);
	ck_assert_int_ne(pfd = accept(lfd, NULL, NULL), -1);
}

static void
ev_teardown(void)
{
	rpc_client_close(ec);
	ec = NULL;
	rpc_client_error_clear(&err);
	if (pfd != -1)
		close(pfd);
	close(lfd);
	unit_rmtree(dir);
	free(dir);
}

/* Runs the loop until the answer came; only a hung client makes it wait. */
static void
run_until(const struct answer *a)
{
	while (a->calls == 0)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
}

static void
peer_write(const char *text)
{
	ck_assert_int_eq(write(pfd, text, strlen(text)), (ssize_t)strlen(text));
}

/* The request the client wrote, once the loop has written it. */
static char *
peer_request(void)
{
	char *line;

	while ((line = unit_read_line(pfd)) == NULL)
		ck_abort_msg("the client closed");
	return line;
}

/* Calls a.one (id 1) and a.two (id 2). */
static void
two_calls(struct answer *a1, struct answer *a2)
{
	ck_assert_int_eq(rpc_client_call_ev(ec, "a.one", NULL, 10000, answer_cb, a1), 0);
	ck_assert_int_eq(rpc_client_call_ev(ec, "a.two", NULL, -1, answer_cb, a2), 0);
}

START_TEST(ev_call_answered)
{
	struct answer a = { 0 };
	char *line;
	int flags;

	ck_assert_int_eq(rpc_client_call_ev(ec, "disk.list", unit_json("{\"bay\":2}"),
	    10000, answer_cb, &a), 0);
	/* Nothing runs inside the call: the caller's state may not be set up yet. */
	ck_assert_int_eq(a.calls, 0);
	flags = fcntl(pfd, F_GETFL);
	ck_assert_int_eq(fcntl(pfd, F_SETFL, flags | O_NONBLOCK), 0);
	unit_pump();
	line = peer_request();
	ck_assert_str_eq(line, "{\"jsonrpc\":\"2.0\",\"method\":\"disk.list\","
	    "\"params\":{\"bay\":2},\"id\":1}");
	free(line);
	peer_write("{\"jsonrpc\":\"2.0\",\"result\":{\"ok\":true},\"id\":1}\n");
	run_until(&a);
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.code, 0);
	ck_assert_str_eq(a.result, "{\"ok\":true}");
}
END_TEST

/* Answers in any order, by id; events in between, bad ones skipped. */
START_TEST(ev_answers_by_id)
{
	struct answer a1 = { 0 }, a2 = { 0 };

	two_calls(&a1, &a2);
	peer_write("{\"jsonrpc\":\"2.0\",\"result\":2,\"id\":2}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":null}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":7,\"params\":{}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x.y\",\"params\":{\"k\":1}}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":\"late\",\"id\":\"1\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32001,\"message\":\"busy\","
	    "\"data\":\"bay1\"},\"id\":1}\n");
	run_until(&a1);
	ck_assert_int_eq(a2.calls, 1);
	ck_assert_str_eq(a2.result, "2");
	ck_assert_int_eq(a1.calls, 1);
	ck_assert_int_eq(a1.code, -32001);
	ck_assert_str_eq(a1.message, "busy");
	ck_assert_str_eq(events_seen, "x.y{\"k\":1} ");
}
END_TEST

/* A null-id error (a limit) answers the oldest call. */
START_TEST(ev_null_id_error)
{
	struct answer a1 = { 0 }, a2 = { 0 };

	two_calls(&a1, &a2);
	peer_write("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32007,"
	    "\"message\":\"too many connections\"},\"id\":null}\n");
	run_until(&a1);
	ck_assert_int_eq(a1.code, NAS_ERR_LIMIT);
	ck_assert_int_eq(a2.calls, 0);
}
END_TEST

/* A silent peer: the call times out, the loop was never held, a late answer is dropped. */
START_TEST(ev_timeout)
{
	struct answer a1 = { 0 }, a2 = { 0 };

	ck_assert_int_eq(rpc_client_call_ev(ec, "a.b", NULL, 20, answer_cb, &a1), 0);
	run_until(&a1);
	ck_assert_int_eq(a1.code, RPC_CLIENT_IO);
	ck_assert_ptr_nonnull(strstr(a1.message, "waiting for a.b"));
	ck_assert_ptr_nonnull(strstr(a1.message, "timed out"));
	ck_assert_int_eq(rpc_client_call_ev(ec, "c.d", NULL, 10000, answer_cb, &a2), 0);
	peer_write("{\"jsonrpc\":\"2.0\",\"result\":\"late\",\"id\":1}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":\"two\",\"id\":2}\n");
	run_until(&a2);
	ck_assert_str_eq(a2.result, "\"two\"");
	ck_assert_int_eq(a1.calls, 1);
}
END_TEST

/* The peer goes away: every outstanding call learns it, new ones are refused. */
START_TEST(ev_peer_closes)
{
	struct answer a1 = { 0 }, a2 = { 0 };

	two_calls(&a1, &a2);
	close(pfd);
	pfd = -1;
	run_until(&a2);
	ck_assert_int_eq(a1.calls, 1);
	ck_assert_int_eq(a1.code, RPC_CLIENT_IO);
	ck_assert_int_eq(a2.code, RPC_CLIENT_IO);
	errno = 0;
	ck_assert_int_eq(rpc_client_call_ev(ec, "a.three", NULL, 10, answer_cb, &a1), -1);
	ck_assert_int_eq(errno, ENOTCONN);
	ck_assert_int_eq(a1.calls, 1);
}
END_TEST

/* A line that is not JSON ends the connection for every call. */
START_TEST(ev_garbage_ends_connection)
{
	struct answer a = { 0 };

	ck_assert_int_eq(rpc_client_call_ev(ec, "a.b", NULL, 10000, answer_cb, &a), 0);
	peer_write("this is not json\n");
	run_until(&a);
	ck_assert_int_eq(a.code, RPC_CLIENT_IO);
}
END_TEST

/* Closing from inside a callback: the other answer is not delivered, nothing is used after free. */
START_TEST(ev_close_in_callback)
{
	struct answer a1 = { .close_client = 1 }, a2 = { 0 };

	two_calls(&a1, &a2);
	peer_write("{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}\n"
	    "{\"jsonrpc\":\"2.0\",\"result\":2,\"id\":2}\n");
	run_until(&a1);
	ck_assert_ptr_null(ec);
	/* The loop runs on with nothing of the client left on it. */
	unit_pump();
	ck_assert_int_eq(a2.calls, 0);
}
END_TEST

/* The blocking calls would read the loop's socket under it: refused. */
START_TEST(ev_blocking_calls_refused)
{
	struct rpc_client *b;
	struct json_object *r, *p;
	char *method;

	ck_assert_int_eq(rpc_client_call(ec, "a.b", json_object_new_object(), &r, &err), -1);
	ck_assert_int_eq(err.code, RPC_CLIENT_IO);
	ck_assert_int_eq(rpc_client_next_event(ec, 0, &method, &p), -1);
	/* ...and the other way round: a blocking client has no loop to call on. */
	ck_assert_ptr_nonnull(b = rpc_client_open_path(ppath, &err));
	rpc_client_on_event(b, event_cb, NULL);
	errno = 0;
	ck_assert_int_eq(rpc_client_call_ev(b, "a.b", NULL, 10, answer_cb, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	rpc_client_close(b);
}
END_TEST

START_TEST(ev_unreachable)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/none.sock", dir);
	ck_assert_ptr_null(rpc_client_open_ev(EV_DEFAULT, path, &err));
	ck_assert_int_eq(err.code, RPC_CLIENT_UNREACHABLE);
	ck_assert_ptr_nonnull(strstr(err.message, "none.sock"));
}
END_TEST

/* Against a real server: a call and an event. */
START_TEST(ev_real_server)
{
	struct answer a = { 0 }, b = { 0 };
	char path[512];

	events_seen[0] = '\0';
	snprintf(path, sizeof(path), "%s/testd.sock", dir);
	ec = rpc_client_open_ev(EV_DEFAULT, path, &err);
	ck_assert_msg(ec != NULL, "%s", err.message);
	rpc_client_on_event(ec, event_cb, NULL);
	ck_assert_int_eq(rpc_client_call_ev(ec, "events.subscribe", NULL, 10000,
	    answer_cb, &a), 0);
	run_until(&a);
	ck_assert_int_eq(a.code, 0);
	ck_assert_int_eq(rpc_client_call_ev(ec, "thing.events", NULL, 10000,
	    answer_cb, &b), 0);
	run_until(&b);
	ck_assert_str_eq(b.result, "\"ticked\"");
	ck_assert_str_eq(events_seen, "test.tick{\"n\":1,\"daemon\":\"testd\"} "
	    "test.tick{\"n\":2,\"daemon\":\"testd\"} "
	    "test.tick{\"n\":3,\"daemon\":\"testd\"} ");
	rpc_client_close(ec);
	ec = NULL;
}
END_TEST

static Suite *
client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("server"), *tp = tcase_create("peer"), *te;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, call_ok);
	tcase_add_test(tc, many_calls_one_connection);
	tcase_add_test(tc, error_mapping);
	tcase_add_test(tc, large_answer);
	tcase_add_test(tc, events_queued_during_call);
	tcase_add_test(tc, event_after_answer);
	tcase_add_test(tc, server_goes_away);
	tcase_add_test(tc, unreachable);
	tcase_add_test(tc, ev_real_server);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tp, peer_setup, peer_teardown);
	tcase_add_test(tp, answers_matched_by_id);
	tcase_add_test(tp, null_id_error_answers);
	tcase_add_test(tp, malformed_answers);
	tcase_add_test(tp, answer_too_complex);
	tcase_add_test(tp, answer_too_complex_quoted);
	tcase_add_test(tp, timeout);
	tcase_add_test(tp, request_on_the_wire);
	tcase_add_test(tp, notification_method_not_string);
	tcase_add_test(tp, job_finished_kept_when_queue_full);
	tcase_add_test(tp, job_finished_overflow_reported);
	tcase_add_test(tp, string_id_is_not_ours);
	suite_add_tcase(s, tp);
	te = tcase_create("ev");
	tcase_add_checked_fixture(te, ev_setup, ev_teardown);
	tcase_add_test(te, ev_call_answered);
	tcase_add_test(te, ev_answers_by_id);
	tcase_add_test(te, ev_null_id_error);
	tcase_add_test(te, ev_timeout);
	tcase_add_test(te, ev_peer_closes);
	tcase_add_test(te, ev_garbage_ends_connection);
	tcase_add_test(te, ev_close_in_callback);
	tcase_add_test(te, ev_blocking_calls_refused);
	tcase_add_test(te, ev_unreachable);
	suite_add_tcase(s, te);
	return s;
}

int
main(void)
{
	return unit_run(client_suite());
}
