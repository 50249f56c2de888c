/*
 * Unit tests for lib/rpc-server.c over a real socket in a temporary
 * directory; the test drives the libev default loop itself.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <ev.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
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

static void
thing_emit(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	nas_event("test.emitted", json_object_new_object());
	rpc_result(c, json_object_new_boolean(1));
}

static const struct rpc_method methods[] = {
	{ "thing.emit", thing_emit, NULL, 0, "raises an event" },
	{ "thing.get", thing_get, NULL, 0, "read" },
	{ "thing.set", thing_set, NULL, RPC_MUTATES, "write" },
	{ "thing.blob", thing_blob, blob_params, 0, "a large answer" },
	{ NULL, NULL, NULL, 0, NULL }
};

/*
 * The limits of setup(); the other fields 0: not enforced. The request
 * timeout is far beyond any stall of a loaded machine: a test that
 * sends a request in parts must not race it (request_timeout sets a
 * short one of its own).
 */
static struct rpc_limits
base_limits(void)
{
	struct rpc_limits lim = { .max_request = 1024, .max_clients = 4,
	    .client_timeout_ms = 600000, .output_limit = 65536 };

	return lim;
}

static void
setup(void)
{
	struct rpc_limits lim = base_limits();

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
	struct rpc_limits lim = base_limits();
	int fd, other;

	lim.client_timeout_ms = 200;
	rpc_server_set_limits(srv, &lim);
	fd = unit_connect(path);
	other = unit_connect(path);
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

/* ---- bounded resources (issue 7) ---- */

#define ELEM	"{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1}"
#define BLOB(n)	"{\"jsonrpc\":\"2.0\",\"method\":\"thing.blob\",\"params\":{\"size\":" #n "},\"id\":2}"

/* head, then n copies of piece separated by sep, then tail (caller frees). */
static char *
repeat(const char *head, const char *piece, const char *sep, int n, const char *tail)
{
	size_t len = strlen(head) + (strlen(piece) + strlen(sep)) * (size_t)n + strlen(tail) + 1;
	char *s = malloc(len);

	ck_assert_ptr_nonnull(s);
	strcpy(s, head);
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(s, sep);
		strcat(s, piece);
	}
	strcat(s, tail);
	return s;
}

static void
set_limits(size_t max_request, size_t output_limit, size_t budget)
{
	struct rpc_limits lim = base_limits();

	lim.max_request = max_request;
	lim.output_limit = output_limit;
	lim.memory_budget = budget;
	rpc_server_set_limits(srv, &lim);
}

/* Runs the loop until the server holds n connections; false after a bound. */
static int
pump_until_nconns(int n)
{
	for (int i = 0; i < 4000 && rpc_server_nconns(srv) != n; i++) {
		unit_pump();
		usleep(1000);
	}
	return rpc_server_nconns(srv) == n;
}

START_TEST(batch_cap)
{
	char *big = repeat("[", ELEM, ",", RPC_MAX_BATCH + 1, "]\n");
	char *full = repeat("[", ELEM, ",", RPC_MAX_BATCH, "]\n"), *got;
	struct json_object *a;
	int fd;

	set_limits(65536, 65536, 0);
	fd = unit_connect(path);
	unit_send(fd, big, strlen(big));
	expect_error_msg(fd, RPC_INVALID_REQUEST, "batch too large: at most 64 requests");
	unit_read_to_eof(fd);
	close(fd);
	ck_assert_int_eq(calls, 0);
	/* 64 are fine. */
	fd = unit_connect(path);
	unit_send(fd, full, strlen(full));
	ck_assert_ptr_nonnull(got = unit_read_line(fd));
	a = unit_json(got);
	ck_assert(json_object_is_type(a, json_type_array));
	ck_assert_uint_eq(json_object_array_length(a), RPC_MAX_BATCH);
	ck_assert_int_eq(calls, RPC_MAX_BATCH);
	json_object_put(a);
	free(got);
	close(fd);
	free(big);
	free(full);
}
END_TEST

/* The same cap without a socket (rpc_dispatch_text, the fuzz targets). */
START_TEST(batch_cap_text)
{
	struct rpc_peer root = { .uid = 0 };
	char *big = repeat("[", ELEM, ",", RPC_MAX_BATCH + 1, "]");
	char *ans = rpc_dispatch_text(srv, &root, big, strlen(big));
	struct json_object *a = unit_json(ans);

	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_REQUEST);
	ck_assert_int_eq(calls, 0);
	json_object_put(a);
	free(ans);
	free(big);
}
END_TEST

/* Counted before json-c builds them; braces in strings do not count. */
START_TEST(object_cap)
{
	char *deep = repeat("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1,"
	    "\"params\":{\"a\":[", "[]", ",", RPC_MAX_CONTAINERS, "]}}\n");
	char *wide = repeat("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1,"
	    "\"params\":{\"a\":[", "0", ",", RPC_MAX_ITEMS + 1, "]}}\n");
	static const char open_str[] = "{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\","
	    "\"id\":1,\"params\":{\"a\":\"x\\";
	char *quoted = repeat("\"{{{{[[[[,,,,", "{[,", "", 1000, "\"}}\n");
	int fd;

	set_limits(65536, 65536, 0);
	fd = unit_connect(path);
	unit_send(fd, deep, strlen(deep));
	expect_error_msg(fd, RPC_INVALID_REQUEST,
	    "request too complex: more than 512 objects and arrays");
	unit_read_to_eof(fd);
	close(fd);
	fd = unit_connect(path);
	unit_send(fd, wide, strlen(wide));
	expect_error_msg(fd, RPC_INVALID_REQUEST, "request too complex: more than 4096 values");
	unit_read_to_eof(fd);
	close(fd);
	/* An escaped quote cut from its backslash does not end the string. */
	fd = unit_connect(path);
	unit_send(fd, open_str, strlen(open_str));
	unit_send(fd, quoted, strlen(quoted));
	free(expect_error(fd, RPC_INVALID_PARAMS));
	close(fd);
	ck_assert_int_eq(calls, 0);
	free(deep);
	free(wide);
	free(quoted);
}
END_TEST

/* An event raised inside a batch comes after its answer, not inside the array. */
START_TEST(batch_event_after_answer)
{
	static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"thing.emit\",\"id\":2}]\n";
	int fd = unit_connect(path);
	struct json_object *a;
	char *got;

	unit_send(fd, batch, strlen(batch));
	ck_assert_ptr_nonnull(got = unit_read_line(fd));
	a = unit_json(got);
	ck_assert(json_object_is_type(a, json_type_array));
	ck_assert_uint_eq(json_object_array_length(a), 2);
	json_object_put(a);
	free(got);
	ck_assert_ptr_nonnull(got = unit_read_line(fd));
	ck_assert_ptr_nonnull(strstr(got, "\"method\":\"test.emitted\""));
	free(got);
	close(fd);
}
END_TEST

/* Past the output limit a batch stops: the rest does not run. */
START_TEST(batch_stops_at_output_limit)
{
	static const char batch[] = "[" BLOB(100000) "," ELEM "," ELEM "]\n";
	int fd = unit_connect(path);

	unit_send(fd, batch, strlen(batch));
	unit_read_to_eof(fd);
	ck_assert_int_eq(calls, 0);
	ck_assert(pump_until_nconns(0));
	close(fd);
}
END_TEST

/* Streamed: a client that reads gets a batch answer larger than the limit. */
START_TEST(batch_streamed)
{
	static const char batch[] = "[" BLOB(20000) "," BLOB(20000) "," BLOB(20000) ","
	    BLOB(20000) "," BLOB(20000) "]\n";
	int fd = unit_connect(path);
	struct json_object *a;
	char *got;

	unit_send(fd, batch, strlen(batch));
	ck_assert_ptr_nonnull(got = unit_read_line(fd));
	ck_assert_uint_gt(strlen(got), 65536);
	a = unit_json(got);
	ck_assert_uint_eq(json_object_array_length(a), 5);
	json_object_put(a);
	free(got);
	close(fd);
}
END_TEST

/* Half-sent requests of all clients together are held to the budget. */
START_TEST(memory_budget_requests)
{
	char *head = repeat("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1,"
	    "\"params\":{\"a\":[", "0", ",", 1000, ",");
	int a, b, c;

	set_limits(65536, 65536, 200000);
	a = unit_connect(path);
	b = unit_connect(path);
	unit_send(a, head, strlen(head));
	unit_send(b, head, strlen(head));
	expect_error_msg(b, NAS_ERR_LIMIT, "server busy: request over the memory budget");
	unit_read_to_eof(b);
	close(b);
	unit_send(a, "0]}}\n", 5);
	free(expect_error(a, RPC_INVALID_PARAMS));
	/* What was used is given back. */
	c = unit_connect(path);
	unit_send(c, head, strlen(head));
	unit_send(c, "0]}}\n", 5);
	free(expect_error(c, RPC_INVALID_PARAMS));
	close(a);
	close(c);
	ck_assert(pump_until_nconns(0));
	ck_assert_uint_eq(rpc_server_mem_used(srv), 0);
	free(head);
}
END_TEST

/* Queued output counts too: an answer that would pass the budget cuts its client. */
START_TEST(memory_budget_output)
{
	static const char blob[] = BLOB(40000) "\n";
	int fd, other;

	set_limits(1024, 65536, 50000);
	fd = unit_connect(path);
	other = unit_connect(path);
	unit_send(fd, blob, strlen(blob));
	ck_assert_uint_eq(unit_read_to_eof(fd), 0);
	close(fd);
	unit_send(other, REQ, strlen(REQ));
	expect_answer(other, 1);
	close(other);
	ck_assert(pump_until_nconns(0));
	ck_assert_uint_eq(rpc_server_mem_used(srv), 0);
}
END_TEST

/*
 * Every way a connection can end gives its share of the budget back:
 * refused half-way through a request, cut off in a streamed batch, refused by a cap or
 * the byte limit, after a parse error, with unread output, half-closed
 * as a subscriber.
 */
START_TEST(memory_budget_balanced)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1}\n";
	static const char cut[] = "[" BLOB(40000) "," BLOB(40000) "," BLOB(40000) "]\n";
	static const char big[] = BLOB(40000) "\n";
	char *head = repeat("{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":1,"
	    "\"params\":{\"a\":[", "0", ",", 1000, ",");
	char *many = repeat("[", ELEM, ",", RPC_MAX_BATCH + 1, "]\n");
	char *huge = repeat("[\"", "x", "", 40000, "\"]\n");
	struct rpc_limits lim = base_limits();
	int fd[8];

	/* Writes to the clients that closed: ignored, as nas_daemon_main does. */
	signal(SIGPIPE, SIG_IGN);
	lim.max_request = 32768;
	lim.max_clients = 8;
	lim.memory_budget = 8 << 20;
	rpc_server_set_limits(srv, &lim);
	for (int i = 0; i < 8; i++)
		fd[i] = unit_connect(path);
	/* Counted, then too large: refused with its share still held. */
	unit_send(fd[0], head, strlen(head));
	unit_send(fd[0], huge, strlen(huge));
	unit_send(fd[1], cut, strlen(cut));
	unit_send(fd[2], big, strlen(big));
	unit_send(fd[3], many, strlen(many));
	unit_send(fd[4], huge, strlen(huge));
	unit_send(fd[5], "{\"x\":]", 6);
	unit_send(fd[6], sub, strlen(sub));
	shutdown(fd[6], SHUT_WR);
	unit_send(fd[7], "[" ELEM, strlen("[" ELEM));
	for (int i = 0; i < 20; i++)
		unit_pump();
	ck_assert_uint_gt(rpc_server_mem_used(srv), 0);
	for (int i = 0; i < 8; i++)
		close(fd[i]);
	ck_assert(pump_until_nconns(0));
	ck_assert_uint_eq(rpc_server_mem_used(srv), 0);
	free(head);
	free(many);
	free(huge);
}
END_TEST

/*
 * What socat does with the README's events one-liner: half-close, keep
 * reading events, then close. The place is free without an event.
 */
START_TEST(half_closed_subscriber)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1}\n";
	int fd = unit_connect(path);
	char *got;

	unit_send(fd, sub, strlen(sub));
	free(unit_read_line(fd));
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 20; i++)
		unit_pump();
	ck_assert_int_eq(rpc_server_nconns(srv), 1);
	nas_event("test.ping", json_object_new_object());
	ck_assert_ptr_nonnull(got = unit_read_line(fd));
	ck_assert_ptr_nonnull(strstr(got, "test.ping"));
	free(got);
	close(fd);
	ck_assert_msg(pump_until_nconns(0), "closed subscriber still holds its place");
}
END_TEST

/* A client whose queued answers make no progress is cut off after write_timeout_ms. */
START_TEST(write_timeout)
{
	static const char blob[] = BLOB(60000) "\n";
	struct rpc_limits lim = base_limits();
	int fd;

	lim.output_limit = 1 << 20;
	lim.write_timeout_ms = 200;
	rpc_server_set_limits(srv, &lim);
	fd = unit_connect(path);
	/* More than the socket buffer holds, less than the output limit. A
	   slow machine (ASan, load) may take longer than the timeout to send
	   it all: the cut then comes while sending, which is as good. */
	for (int i = 0; i < 12 && unit_send_or_cut(fd, blob, strlen(blob)); i++)
		;
	ck_assert_msg(pump_until_nconns(0), "a client that reads nothing is never cut off");
	ck_assert_uint_gt(unit_read_to_eof(fd), 0);
	close(fd);
}
END_TEST

/* A connection as nobody: the socket in nobody's group, readable by it. */
static void
listen_for_nobody(const struct rpc_limits *lim)
{
	struct rpc_auth auth = { .admin_gid = (gid_t)-1, .read_gid = 65534 };

	rpc_server_close(srv);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	rpc_server_set_auth(srv, &auth);
	rpc_server_set_limits(srv, lim);
	ck_assert_int_eq(rpc_server_listen(srv, path, 65534), 0);
}

/* A blocking client for children (the test's helpers would run the loop). */
static int
raw_call(const char *p, int *fdp)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[512];
	size_t len = 0;
	ssize_t n;
	int fd;

	strcpy(sun.sun_path, p);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    write(fd, REQ, strlen(REQ)) != (ssize_t)strlen(REQ))
		return -1;
	while (len < sizeof(buf) - 1 && memchr(buf, '\n', len) == NULL) {
		if ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*fdp = fd;
	if (strstr(buf, "\"result\""))
		return 1;
	return strstr(buf, "-32007") ? 0 : -1;
}

/*
 * As nobody, opens n connections, holds them, tells the parent how many
 * were served (a byte on ready), and waits until release closes.
 */
static int
child_connections(int n, int ready, int release)
{
	int fds[64], served = 0, r;
	char byte;

	if (setgroups(0, NULL) == -1 || setgid(65534) == -1 || setuid(65534) == -1)
		return 10;
	for (int i = 0; i < n; i++) {
		if ((r = raw_call(path, &fds[i])) == -1)
			return 11;
		served += r;
	}
	byte = (char)served;
	if (write(ready, &byte, 1) != 1)
		return 12;
	if (read(release, &byte, 1) == -1)
		return 13;
	return 0;
}

static int child_status = -1;

static void
child_cb(struct ev_loop *l, ev_child *w, int revents)
{
	(void)revents;
	ev_child_stop(l, w);
	child_status = w->rstatus;
}

/* Runs the loop until the child exits; asserts it exited 0. */
static void
wait_child(pid_t pid)
{
	ev_child cw;

	child_status = -1;
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
}

/* Nobody opens n connections; returns how many were served. The child holds them. */
static int
nobody_holds(int n, pid_t *pid, int *release)
{
	int ready[2], rel[2];
	char byte = -1;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(rel), 0);
	ck_assert_int_ne(*pid = fork(), -1);
	if (*pid == 0) {
		close(ready[0]);
		close(rel[1]);
		_exit(child_connections(n, ready[1], rel[0]));
	}
	close(ready[1]);
	close(rel[0]);
	fcntl(ready[0], F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 20000 && read(ready[0], &byte, 1) != 1; i++) {
		unit_pump();
		usleep(1000);
	}
	close(ready[0]);
	*release = rel[1];
	return byte;
}

/* The read group fills its share; root still connects. */
START_TEST(reserved_for_admins)
{
	struct rpc_limits lim = base_limits();
	int fds[3], release;
	pid_t pid;

	if (geteuid() != 0)
		return;
	lim.reserved_clients = 2;
	listen_for_nobody(&lim);
	ck_assert_int_eq(nobody_holds(4, &pid, &release), 2);
	for (int i = 0; i < 2; i++) {
		fds[i] = unit_connect(path);
		unit_send(fds[i], REQ, strlen(REQ));
		expect_answer(fds[i], 3 + i);
	}
	ck_assert_int_eq(rpc_server_nconns(srv), 4);
	fds[2] = unit_connect(path);
	expect_error_msg(fds[2], NAS_ERR_LIMIT, "too many connections");
	close(release);
	wait_child(pid);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}
END_TEST

START_TEST(per_uid_cap)
{
	struct rpc_limits lim = base_limits();
	int fd, release;
	pid_t pid;

	if (geteuid() != 0)
		return;
	lim.max_clients = 8;
	lim.max_clients_per_uid = 3;
	listen_for_nobody(&lim);
	ck_assert_int_eq(nobody_holds(4, &pid, &release), 3);
	fd = unit_connect(path);
	unit_send(fd, REQ, strlen(REQ));
	expect_answer(fd, 4);
	close(release);
	wait_child(pid);
	close(fd);
}
END_TEST

/* A caller in more than 64 groups: its read group is the last of 100. */
static int
child_many_groups(void)
{
	struct rpc_client_error err = { 0 };
	struct rpc_client *cl;
	struct json_object *r;
	gid_t groups[100];

	for (int i = 0; i < 99; i++)
		groups[i] = (gid_t)(3000 + i);
	groups[99] = 65534;
	if (setgroups(100, groups) == -1 || setgid(3000) == -1 || setuid(65534) == -1)
		return 10;
	if ((cl = rpc_client_open_path(path, &err)) == NULL)
		return 11;
	if (rpc_client_call(cl, "thing.get", NULL, &r, &err) == -1)
		return 12;
	json_object_put(r);
	rpc_client_close(cl);
	return 0;
}

START_TEST(many_groups)
{
	struct rpc_limits lim = base_limits();
	pid_t pid;

	if (geteuid() != 0)
		return;
	listen_for_nobody(&lim);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0)
		_exit(child_many_groups());
	wait_child(pid);
	ck_assert_int_eq(calls, 1);
}
END_TEST

/* Runs the loop (of a child) until fd is readable; 0 when it never is. */
static int
child_pump_until_readable(int fd, double seconds)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	for (int i = 0; i < seconds * 1000; i++) {
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		if (poll(&pfd, 1, 1) == 1)
			return 1;
	}
	return 0;
}

/*
 * Out of descriptors: the pending client is taken with the spare
 * descriptor and refused (not left to spin the loop), and once
 * descriptors are free again new clients are served.
 */
static int
child_emfile(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct rlimit rl;
	char buf[512] = "";
	int pending, fill[256], nfill = 0, fd;

	/* The loop makes its descriptors again after a fork: before they run out. */
	ev_loop_fork(EV_DEFAULT);
	ev_run(EV_DEFAULT, EVRUN_NOWAIT);
	strcpy(sun.sun_path, path);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 64;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		return 10;
	if ((pending = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(pending, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		return 11;
	while (nfill < 256 && (fd = dup(0)) != -1)
		fill[nfill++] = fd;
	if (errno != EMFILE)
		return 12;
	if (!child_pump_until_readable(pending, 10) || read(pending, buf, sizeof(buf) - 1) <= 0)
		return 13;
	if (strstr(buf, "out of file descriptors") == NULL)
		return 14;
	while (nfill > 0)
		close(fill[--nfill]);
	/* The listener rests a while, then serves again. */
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    write(fd, REQ, strlen(REQ)) != (ssize_t)strlen(REQ))
		return 15;
	memset(buf, 0, sizeof(buf));
	if (!child_pump_until_readable(fd, 10) || read(fd, buf, sizeof(buf) - 1) <= 0 ||
	    strstr(buf, "\"result\"") == NULL)
		return 16;
	return 0;
}

static int
fork_and_wait(int (*fn)(void))
{
	int status;
	pid_t pid;

	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0)
		_exit(fn());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(accept_emfile)
{
	ck_assert_int_eq(fork_and_wait(child_emfile), 0);
}
END_TEST

/*
 * With RLIMIT_NOFILE 64/hard: max_clients 128 gets what fits. Returns
 * the max_clients in force; *soft the soft limit then.
 */
static int
clamped(rlim_t hard, rlim_t *soft)
{
	struct rpc_limits lim = base_limits();
	struct rlimit rl = { 64, hard };

	lim.max_clients = 128;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	rpc_server_set_limits(srv, &lim);
	getrlimit(RLIMIT_NOFILE, &rl);
	*soft = rl.rlim_cur;
	return rpc_server_limits(srv)->max_clients;
}

/* Lowered when the hard limit is too low; else the soft limit is raised. */
static int
child_clamp(void)
{
	rlim_t soft;

	/* The raise first: a hard limit once lowered stays. */
	if (clamped(1024, &soft) != 128 || soft < 128 + 32)
		return 11;
	/* Soft 64, hard 100: raised to 100, still short. */
	if (clamped(100, &soft) != 100 - 32 || soft != 100)
		return 12;
	return clamped(64, &soft) == 64 - 32 && soft == 64 ? 0 : 13;
}

START_TEST(clients_clamped_to_nofile)
{
	ck_assert_int_eq(fork_and_wait(child_clamp), 0);
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
	/*
	 * split_at_every_byte waits ~200 times for silence (a 5 ms poll
	 * each): about 1 s on an idle machine, past Check's default 4 s
	 * on a loaded one.
	 */
	tcase_set_timeout(tf, 60);
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
	tcase_add_test(tl, batch_cap);
	tcase_add_test(tl, batch_cap_text);
	tcase_add_test(tl, object_cap);
	tcase_add_test(tl, batch_stops_at_output_limit);
	tcase_add_test(tl, batch_streamed);
	tcase_add_test(tl, batch_event_after_answer);
	tcase_add_test(tl, memory_budget_requests);
	tcase_add_test(tl, memory_budget_output);
	tcase_add_test(tl, memory_budget_balanced);
	tcase_add_test(tl, half_closed_subscriber);
	tcase_add_test(tl, write_timeout);
	tcase_add_test(tl, reserved_for_admins);
	tcase_add_test(tl, per_uid_cap);
	tcase_add_test(tl, many_groups);
	tcase_add_test(tl, accept_emfile);
	tcase_add_test(tl, clients_clamped_to_nofile);
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
