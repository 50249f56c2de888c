/*
 * Unit tests for lib/rpc-server.c over a real socket in a temporary
 * directory; the test drives the libev default loop itself.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <ev.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "rpc.h"
#include "unit-util.h"

#define REQ	"{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}\n"
#define ANS	"{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":%d},\"id\":1}"

static struct rpc_server *srv;
static char *dir, path[256];
static int calls;

static void
thing_get(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object();

	(void)params;
	json_object_object_add(r, "calls", json_object_new_int(++calls));
	rpc_result(c, r);
}

static void
thing_set(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	calls++;
	rpc_result(c, json_object_new_boolean(1));
}

/* Answers with as many bytes as asked: for filling a client's queue. */
static void
thing_blob(struct rpc_call *c, struct json_object *params)
{
	size_t n = (size_t)rpc_param_int(params, "size", 0);
	char *s = malloc(n + 1);

	memset(s, 'x', n);
	s[n] = '\0';
	rpc_result(c, json_object_new_string(s));
	free(s);
}

static const struct rpc_param blob_params[] = {
	{ "size", RPC_INT, RPC_REQUIRED, 0, 1 << 20, NULL, "bytes" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_method methods[] = {
	{ "thing.get", thing_get, NULL, 0, "read" },
	{ "thing.set", thing_set, NULL, RPC_MUTATES, "write" },
	{ "thing.blob", thing_blob, blob_params, 0, "a large answer" },
	{ NULL, NULL, NULL, 0, NULL }
};

static void
setup(void)
{
	struct rpc_limits lim = { .max_request = 1024, .max_clients = 4,
	    .client_timeout_ms = 200, .output_limit = 65536 };

	dir = unit_tmpdir();
	snprintf(path, sizeof(path), "%s/t.sock", dir);
	srv = rpc_server_new("testd", "1.0");
	rpc_server_add_methods(srv, methods);
	rpc_server_set_limits(srv, &lim);
	rpc_events_init(srv);
	ck_assert_int_eq(rpc_server_listen(srv, path, (gid_t)-1), 0);
	calls = 0;
}

static void
teardown(void)
{
	rpc_server_free(srv);
	unit_rmtree(dir);
	free(dir);
}

static void
expect_line(int fd, const char *want)
{
	char *got = unit_read_line(fd);

	ck_assert_msg(got != NULL, "EOF instead of %s", want);
	ck_assert_str_eq(got, want);
	free(got);
}

static void
expect_answer(int fd, int n)
{
	char want[128];

	snprintf(want, sizeof(want), ANS, n);
	expect_line(fd, want);
}

/* The next line is an error with this code; returns its message (freed by caller). */
static char *
expect_error(int fd, int code)
{
	char *got = unit_read_line(fd), *msg;
	struct json_object *a;

	ck_assert_msg(got != NULL, "EOF instead of error %d", code);
	a = unit_json(got);
	ck_assert_msg(unit_err_code(a) == code, "want %d: %s", code, got);
	msg = strdup(unit_err_msg(a));
	json_object_put(a);
	free(got);
	return msg;
}

static void
expect_error_msg(int fd, int code, const char *want)
{
	char *msg = expect_error(fd, code);

	ck_assert_str_eq(msg, want);
	free(msg);
}

START_TEST(one_request)
{
	int fd = unit_connect(path);

	unit_send(fd, REQ, strlen(REQ));
	expect_answer(fd, 1);
	ck_assert_int_eq(rpc_server_nconns(srv), 1);
	close(fd);
}
END_TEST

/* A request may arrive cut at any byte: it is answered once, when complete. */
START_TEST(split_at_every_byte)
{
	size_t len = strlen(REQ);
	int fd = unit_connect(path);

	for (size_t cut = 1; cut < len; cut++) {
		unit_send(fd, REQ, cut);
		/* Before its closing brace a request is not complete. */
		if (cut < len - 1)
			unit_assert_silent(fd);
		unit_send(fd, REQ + cut, len - cut);
		expect_answer(fd, (int)cut);
	}
	close(fd);
}
END_TEST

START_TEST(byte_by_byte)
{
	int fd = unit_connect(path);

	for (int round = 1; round <= 2; round++) {
		for (const char *p = REQ; *p; p++)
			unit_send(fd, p, 1);
		expect_answer(fd, round);
	}
	close(fd);
}
END_TEST

START_TEST(several_in_one_write)
{
	static const char many[] = REQ
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\"}\n"
	    "\n  \n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}  \r\n"
	    "[{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}]\n"
	    REQ;
	int fd = unit_connect(path);

	unit_send(fd, many, strlen(many));
	expect_answer(fd, 1);
	/* the notification was call 2 */
	expect_answer(fd, 3);
	expect_line(fd, "[{\"jsonrpc\":\"2.0\",\"result\":{\"calls\":4},\"id\":1}]");
	expect_answer(fd, 5);
	unit_assert_silent(fd);
	close(fd);
}
END_TEST

/* One line split across writes that each hold the end of one request. */
START_TEST(requests_across_writes)
{
	static const char two[] = REQ REQ;
	size_t half = strlen(REQ) + 7;
	int fd = unit_connect(path);

	unit_send(fd, two, half);
	expect_answer(fd, 1);
	unit_send(fd, two + half, strlen(two) - half);
	expect_answer(fd, 2);
	close(fd);
}
END_TEST

START_TEST(truncated_request)
{
	static const char bad[] = "{\"jsonrpc\":\"2.0\",\"method\"\n";
	int fd = unit_connect(path);

	unit_send(fd, bad, strlen(bad));
	expect_error_msg(fd, RPC_PARSE_ERROR, "parse error: request ends early");
	/* The connection goes on. */
	unit_send(fd, REQ, strlen(REQ));
	expect_answer(fd, 1);
	close(fd);
}
END_TEST

START_TEST(garbage_then_good)
{
	static const char bad[] = "not json at all\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1} trailing\n"
	    "{\"a\":1}{\"b\":2}\n"
	    "}\n";
	int fd = unit_connect(path);

	unit_send(fd, bad, strlen(bad));
	for (int i = 0; i < 4; i++)
		free(expect_error(fd, RPC_PARSE_ERROR));
	unit_send(fd, REQ, strlen(REQ));
	expect_answer(fd, 1);
	ck_assert_int_eq(calls, 1);
	close(fd);
}
END_TEST

START_TEST(non_object_lines)
{
	static const char odd[] = "1\nnull\n\"x\"\n[]\n";
	int fd = unit_connect(path);

	unit_send(fd, odd, strlen(odd));
	for (int i = 0; i < 4; i++)
		free(expect_error(fd, RPC_INVALID_REQUEST));
	close(fd);
}
END_TEST

/* A parse error cut in the middle of a line discards the rest of that line only. */
START_TEST(bad_line_split)
{
	int fd = unit_connect(path);

	unit_send(fd, "{\"x\":]", 6);
	free(expect_error(fd, RPC_PARSE_ERROR));
	unit_send(fd, "more junk \"", 11);
	unit_send(fd, "}\n" REQ, 2 + strlen(REQ));
	expect_answer(fd, 1);
	unit_assert_silent(fd);
	close(fd);
}
END_TEST

START_TEST(oversized_request)
{
	char big[2048];
	int fd = unit_connect(path);

	snprintf(big, sizeof(big), "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\","
	    "\"params\":{\"pad\":\"%01500d\"},\"id\":1}\n", 0);
	unit_send(fd, big, strlen(big));
	expect_error_msg(fd, RPC_INVALID_REQUEST, "request too large");
	unit_read_to_eof(fd);
	ck_assert_int_eq(calls, 0);
	ck_assert_int_eq(rpc_server_nconns(srv), 0);
	close(fd);
}
END_TEST

/* The limit counts the request, not each write. */
START_TEST(oversized_in_small_writes)
{
	static const char pad[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	int fd = unit_connect(path);

	unit_send(fd, "{\"pad\":\"", 8);
	/* 8 + 16 * 64 bytes: the last write crosses the limit of 1024. */
	for (int i = 0; i < 16; i++)
		unit_send(fd, pad, strlen(pad));
	expect_error_msg(fd, RPC_INVALID_REQUEST, "request too large");
	unit_read_to_eof(fd);
	close(fd);
}
END_TEST

/* Many small requests in one write add up to more than the limit: all fine. */
START_TEST(many_small_not_oversized)
{
	char buf[4096] = "";
	int fd = unit_connect(path), n = 0;

	while (strlen(buf) + strlen(REQ) < sizeof(buf)) {
		strcat(buf, REQ);
		n++;
	}
	unit_send(fd, buf, strlen(buf));
	for (int i = 1; i <= n; i++)
		expect_answer(fd, i);
	close(fd);
}
END_TEST

START_TEST(request_timeout)
{
	int fd = unit_connect(path), other = unit_connect(path);

	unit_send(fd, "{\"jsonrpc\":", 11);
	/* Another client is served while this one dawdles. */
	unit_send(other, REQ, strlen(REQ));
	expect_answer(other, 1);
	expect_error_msg(fd, RPC_INVALID_REQUEST, "request timed out");
	unit_read_to_eof(fd);
	ck_assert_int_eq(rpc_server_nconns(srv), 1);
	unit_send(other, REQ, strlen(REQ));
	expect_answer(other, 2);
	close(fd);
	close(other);
}
END_TEST

START_TEST(connection_limit)
{
	int fds[4], extra;

	for (int i = 0; i < 4; i++)
		fds[i] = unit_connect(path);
	ck_assert_int_eq(rpc_server_nconns(srv), 4);
	extra = unit_connect(path);
	expect_error_msg(extra, NAS_ERR_LIMIT, "too many connections");
	ck_assert_ptr_null(unit_read_line(extra));
	close(extra);
	/* The ones inside are still served; a freed place can be taken. */
	unit_send(fds[3], REQ, strlen(REQ));
	expect_answer(fds[3], 1);
	close(fds[0]);
	unit_send(fds[1], REQ, strlen(REQ));
	expect_answer(fds[1], 2);
	extra = unit_connect(path);
	unit_send(extra, REQ, strlen(REQ));
	expect_answer(extra, 3);
	close(extra);
	for (int i = 1; i < 4; i++)
		close(fds[i]);
}
END_TEST

/* A client that never reads is cut off; the others are served meanwhile. */
START_TEST(slow_reader_cut_off)
{
	static const char blob[] = "{\"jsonrpc\":\"2.0\",\"method\":\"thing.blob\","
	    "\"params\":{\"size\":16384},\"id\":1}\n";
	int stuck = unit_connect(path), good = unit_connect(path), sent;

	for (sent = 0; sent < 1000 && rpc_server_nconns(srv) == 2; sent++) {
		unit_send(stuck, blob, strlen(blob));
		unit_send(good, REQ, strlen(REQ));
		expect_answer(good, sent + 1);
	}
	ck_assert_msg(rpc_server_nconns(srv) == 1, "never cut off after %d answers", sent);
	/* It gets what was sent before, then the end. */
	ck_assert_uint_gt(unit_read_to_eof(stuck), 16384);
	unit_send(good, REQ, strlen(REQ));
	expect_answer(good, sent + 1);
	close(stuck);
	close(good);
}
END_TEST

/* The same for an events subscriber that stops reading. */
START_TEST(slow_subscriber_cut_off)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1}\n";
	char pad[8192];
	int stuck = unit_connect(path), good = unit_connect(path), n;

	unit_send(stuck, sub, strlen(sub));
	expect_line(stuck, "{\"jsonrpc\":\"2.0\",\"result\":{\"subscribed\":[]},\"id\":1}");
	memset(pad, 'e', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (n = 0; n < 1000 && rpc_server_nconns(srv) == 2; n++) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "pad", json_object_new_string(pad));
		nas_event("test.flood", d);
		unit_pump();
	}
	ck_assert_msg(rpc_server_nconns(srv) == 1, "never cut off after %d events", n);
	unit_send(good, REQ, strlen(REQ));
	expect_answer(good, 1);
	unit_read_to_eof(stuck);
	close(stuck);
	close(good);
}
END_TEST

/* A request whose last line has no newline is still answered at EOF. */
START_TEST(answer_at_half_close)
{
	int fd = unit_connect(path);

	unit_send(fd, REQ, strlen(REQ) - 1);
	shutdown(fd, SHUT_WR);
	expect_answer(fd, 1);
	ck_assert_ptr_null(unit_read_line(fd));
	close(fd);
	fd = unit_connect(path);
	unit_send(fd, "42", 2);
	shutdown(fd, SHUT_WR);
	free(expect_error(fd, RPC_INVALID_REQUEST));
	ck_assert_ptr_null(unit_read_line(fd));
	close(fd);
	fd = unit_connect(path);
	unit_send(fd, "{\"jsonrpc\"", 10);
	shutdown(fd, SHUT_WR);
	free(expect_error(fd, RPC_PARSE_ERROR));
	ck_assert_ptr_null(unit_read_line(fd));
	close(fd);
}
END_TEST

/* A subscriber that closes (not half-closes) is forgotten without an event. */
START_TEST(closed_subscriber_freed)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1}\n";
	int fd = unit_connect(path), other = unit_connect(path);

	unit_send(fd, sub, strlen(sub));
	free(unit_read_line(fd));
	close(fd);
	unit_send(other, REQ, strlen(REQ));
	expect_answer(other, 1);
	ck_assert_int_eq(rpc_server_nconns(srv), 1);
	close(other);
}
END_TEST

START_TEST(client_goes_away)
{
	static const char blob[] = "{\"jsonrpc\":\"2.0\",\"method\":\"thing.blob\","
	    "\"params\":{\"size\":100000},\"id\":1}\n";
	int fd = unit_connect(path), good = unit_connect(path);

	unit_send(fd, blob, strlen(blob));
	close(fd);
	for (int i = 0; i < 10; i++)
		unit_pump();
	unit_send(good, REQ, strlen(REQ));
	expect_answer(good, 1);
	ck_assert_int_eq(rpc_server_nconns(srv), 1);
	close(good);
}
END_TEST

START_TEST(socket_mode)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
}
END_TEST

START_TEST(socket_group)
{
	struct rpc_server *other = rpc_server_new("otherd", "1.0");
	char p2[300];
	struct stat st;

	snprintf(p2, sizeof(p2), "%s/o.sock", dir);
	ck_assert_int_eq(rpc_server_listen(other, p2, 65534), 0);
	ck_assert_int_eq(stat(p2, &st), 0);
	ck_assert_uint_eq(st.st_gid, 65534);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	rpc_server_free(other);
	ck_assert_int_eq(access(p2, F_OK), -1);
}
END_TEST

START_TEST(live_socket_not_taken)
{
	struct rpc_server *other = rpc_server_new("otherd", "1.0");
	int fd;

	ck_assert_int_eq(rpc_server_listen(other, path, (gid_t)-1), -1);
	ck_assert_int_eq(errno, EADDRINUSE);
	rpc_server_free(other);
	/* ...and the first server still answers on it. */
	fd = unit_connect(path);
	unit_send(fd, REQ, strlen(REQ));
	expect_answer(fd, 1);
	close(fd);
}
END_TEST

START_TEST(stale_socket_replaced)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct rpc_server *other = rpc_server_new("otherd", "1.0");
	char p2[300];
	int fd;

	snprintf(p2, sizeof(p2), "%s/stale.sock", dir);
	strcpy(sun.sun_path, p2);
	/* Bound and closed: what a daemon killed by SIGKILL leaves. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	ck_assert_int_eq(rpc_server_listen(other, p2, (gid_t)-1), 0);
	rpc_server_free(other);
}
END_TEST

START_TEST(close_removes_socket)
{
	int fd = unit_connect(path);

	rpc_server_close(srv);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(rpc_server_nconns(srv), 0);
	ck_assert_ptr_null(unit_read_line(fd));
	close(fd);
}
END_TEST

/*
 * SO_PEERCRED for real: a child that is nobody (in the socket's group)
 * may read but not change; the parent drives the loop meanwhile.
 */
static int
child_as_nobody(void)
{
	struct rpc_client_error err = { 0 };
	struct rpc_client *cl;
	struct json_object *r;
	int rc;

	/* Not the test's helpers: they would run the loop inherited here. */
	if (setgroups(0, NULL) == -1 || setgid(65534) == -1 || setuid(65534) == -1)
		return 10;
	if ((cl = rpc_client_open_path(path, &err)) == NULL)
		return 11;
	if (rpc_client_call(cl, "thing.get", NULL, &r, &err) == -1)
		return 12;
	json_object_put(r);
	rc = rpc_client_call(cl, "thing.set", NULL, &r, &err);
	rpc_client_close(cl);
	return rc == -1 && err.code == NAS_ERR_DENIED ? 0 : 13;
}

static int child_status = -1;

static void
child_cb(struct ev_loop *l, ev_child *w, int revents)
{
	(void)revents;
	ev_child_stop(l, w);
	child_status = w->rstatus;
}

START_TEST(peer_credentials)
{
	struct rpc_auth auth = { .admin_gid = (gid_t)-1, .read_gid = 65534 };
	struct rpc_server *other = rpc_server_new("otherd", "1.0");
	ev_child cw;
	pid_t pid;

	if (geteuid() != 0)
		return;
	rpc_server_close(srv);
	rpc_server_free(other);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	rpc_server_set_auth(srv, &auth);
	ck_assert_int_eq(rpc_server_listen(srv, path, 65534), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0)
		_exit(child_as_nobody());
	/* libev reaps every child of the default loop: ask it for the status. */
	ev_child_init(&cw, child_cb, pid, 0);
	ev_child_start(EV_DEFAULT, &cw);
	for (int i = 0; i < 100000 && child_status == -1; i++) {
		unit_pump();
		if (child_status == -1)
			usleep(1000);
	}
	ck_assert_msg(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0,
	    "child status %d", child_status);
	ck_assert_int_eq(calls, 1);
}
END_TEST

static Suite *
server_suite(void)
{
	Suite *s = suite_create("rpc-server");
	TCase *tf = tcase_create("framing"), *tl = tcase_create("limits");
	TCase *ts = tcase_create("socket");

	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tf, one_request);
	tcase_add_test(tf, split_at_every_byte);
	tcase_add_test(tf, byte_by_byte);
	tcase_add_test(tf, several_in_one_write);
	tcase_add_test(tf, requests_across_writes);
	tcase_add_test(tf, truncated_request);
	tcase_add_test(tf, garbage_then_good);
	tcase_add_test(tf, non_object_lines);
	tcase_add_test(tf, bad_line_split);
	tcase_add_test(tf, answer_at_half_close);
	suite_add_tcase(s, tf);
	tcase_add_checked_fixture(tl, setup, teardown);
	tcase_set_timeout(tl, 60);
	tcase_add_test(tl, oversized_request);
	tcase_add_test(tl, oversized_in_small_writes);
	tcase_add_test(tl, many_small_not_oversized);
	tcase_add_test(tl, request_timeout);
	tcase_add_test(tl, connection_limit);
	tcase_add_test(tl, slow_reader_cut_off);
	tcase_add_test(tl, slow_subscriber_cut_off);
	tcase_add_test(tl, client_goes_away);
	tcase_add_test(tl, closed_subscriber_freed);
	suite_add_tcase(s, tl);
	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_add_test(ts, socket_mode);
	tcase_add_test(ts, socket_group);
	tcase_add_test(ts, live_socket_not_taken);
	tcase_add_test(ts, stale_socket_replaced);
	tcase_add_test(ts, close_removes_socket);
	tcase_add_test(ts, peer_credentials);
	suite_add_tcase(s, ts);
	return s;
}

int
main(void)
{
	return unit_run(server_suite());
}
