/* Helpers shared by the unit suites; see unit-util.h. */
#include <check.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "rpc.h"
#include "unit-util.h"

#define WAIT_ROUNDS	4000	/* x 5 ms: only a hung server takes this long */

char *
unit_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	if (base == NULL || *base == '\0')
		base = "/tmp";
	ck_assert_int_ne(asprintf(&dir, "%s/nas-unit.XXXXXX", base), -1);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
unit_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *
unit_write(const char *dir, const char *name, const char *text)
{
	char *path;
	FILE *f;

	ck_assert_int_ne(asprintf(&path, "%s/%s", dir, name), -1);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

struct json_object *
unit_json(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	ck_assert_msg(o != NULL, "not JSON: %s", text);
	return o;
}

int
unit_err_code(struct json_object *answer)
{
	struct json_object *e, *c;

	if (!json_object_object_get_ex(answer, "error", &e))
		return 0;
	ck_assert(json_object_object_get_ex(e, "code", &c));
	return json_object_get_int(c);
}

const char *
unit_err_msg(struct json_object *answer)
{
	struct json_object *e, *m;

	if (!json_object_object_get_ex(answer, "error", &e) ||
	    !json_object_object_get_ex(e, "message", &m))
		return "";
	return json_object_get_string(m);
}

int
unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void
unit_pump(void)
{
	ev_run(EV_DEFAULT, EVRUN_NOWAIT);
}

int
unit_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	strcpy(sun.sun_path, path);
	ck_assert_int_ne(fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), -1);
	/* The backlog takes the connection before the loop accepts it. */
	ck_assert_msg(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
	    "connect %s: %s", path, strerror(errno));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	unit_pump();
	return fd;
}

/* Sends all of p, pumping the server meanwhile: 1, or 0 once the server hung up. */
int
unit_send_or_cut(int fd, const char *p, size_t len)
{
	ssize_t n;

	for (int round = 0; len > 0; round++) {
		ck_assert_msg(round < WAIT_ROUNDS, "server does not read");
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n == -1 && (errno == EPIPE || errno == ECONNRESET))
			return 0;
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			unit_pump();
			continue;
		}
		ck_assert_msg(n > 0, "send: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	unit_pump();
	return 1;
}

void
unit_send(int fd, const char *p, size_t len)
{
	ck_assert_msg(unit_send_or_cut(fd, p, len), "send: %s", strerror(errno));
}

/* One byte from fd: 1, 0 at EOF (or reset), -1 when none is there yet. */
static int
read_byte(int fd, char *c)
{
	ssize_t n = read(fd, c, 1);

	if (n == 1)
		return 1;
	if (n == 0 || (n == -1 && errno == ECONNRESET))
		return 0;
	ck_assert_msg(errno == EAGAIN || errno == EINTR, "read: %s", strerror(errno));
	return -1;
}

static void
wait_a_little(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	unit_pump();
	poll(&pfd, 1, 5);
	unit_pump();
}

char *
unit_read_line(int fd)
{
	char *buf = NULL, c;
	size_t len = 0, cap = 0;
	int r;

	for (int round = 0;;) {
		if ((r = read_byte(fd, &c)) == -1) {
			ck_assert_msg(++round < WAIT_ROUNDS, "no answer from the server");
			wait_a_little(fd);
			continue;
		}
		if (r == 0) {
			free(buf);
			return NULL;
		}
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 256;
			ck_assert_ptr_nonnull(buf = realloc(buf, cap));
		}
		if (c == '\n')
			break;
		buf[len++] = c;
	}
	buf[len] = '\0';
	return buf;
}

size_t
unit_read_to_eof(int fd)
{
	char buf[4096];
	size_t total = 0;
	ssize_t n;

	for (int round = 0;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == 0 || (n == -1 && errno == ECONNRESET))
			return total;
		if (n > 0) {
			total += (size_t)n;
			continue;
		}
		ck_assert_msg(++round < WAIT_ROUNDS, "server does not close");
		wait_a_little(fd);
	}
}

void
unit_assert_silent(int fd)
{
	char c;

	for (int i = 0; i < 4; i++)
		wait_a_little(fd);
	ck_assert_int_eq(read_byte(fd, &c), -1);
}

struct json_object *
unit_call(struct rpc_server *srv, const struct rpc_peer *peer, const char *method,
    const char *params)
{
	char req[2048], *ans;
	struct json_object *o;

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"%s%s}",
	    method, params ? ",\"params\":" : "", params ? params : "");
	ans = rpc_dispatch_text(srv, peer, req, strlen(req));
	ck_assert_ptr_nonnull(ans);
	o = json_tokener_parse(ans);
	free(ans);
	return o;
}

struct json_object *
unit_call_expect(struct rpc_server *srv, const struct rpc_peer *peer, const char *method,
    const char *params, int err)
{
	struct json_object *a = unit_call(srv, peer, method, params);

	ck_assert_msg(unit_err_code(a) == err, "%s %s: got %d (%s), want %d", method,
	    params ? params : "", unit_err_code(a), unit_err_msg(a), err);
	return a;
}

static int gate_in[2], gate_out[2];

void
unit_gate_init(void)
{
	ck_assert_int_eq(pipe2(gate_in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(gate_out, O_CLOEXEC), 0);
}

void
unit_gate_fini(void)
{
	close(gate_in[0]);
	close(gate_in[1]);
	close(gate_out[0]);
	close(gate_out[1]);
}

void
unit_gate_hold(void)
{
	char c = 'x';

	if (write(gate_in[1], &c, 1) != 1 || read(gate_out[0], &c, 1) != 1)
		abort();
}

void
unit_gate_wait(void)
{
	struct pollfd pfd = { .fd = gate_in[0], .events = POLLIN };
	char c;

	for (int round = 0; poll(&pfd, 1, 5) != 1; round++) {
		ck_assert_msg(round < WAIT_ROUNDS, "no work reached the gate");
		unit_pump();
	}
	ck_assert_int_eq(read(gate_in[0], &c, 1), 1);
}

void
unit_gate_release(void)
{
	ck_assert_int_eq(write(gate_out[1], "x", 1), 1);
}

void
unit_spin(void)
{
	poll(NULL, 0, 5);
	unit_pump();
}
