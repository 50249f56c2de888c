/*
 * lib/rpc-later.c: answers given later, over a real socket on the libev
 * default loop that the test drives. The work waits on a pipe until the
 * test lets it go: orders are proven, never timed.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ev.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc.h"
#include "unit-util.h"

static struct rpc_server *srv;
static char *dir, path[256];
static int worked, done_ran, done_not_ran;

/* On the worker: holds at the gate until the test lets it go. */
static void
slow_work(void *arg)
{
	(void)arg;
	unit_gate_hold();
	worked++;	/* read by the loop only after the join */
}

static void
slow_done(struct rpc_call *c, void *arg, int ran)
{
	free(arg);
	if (!ran) {
		done_not_ran++;
		return;
	}
	done_ran++;
	rpc_result(c, json_object_new_string("done"));
}

static void
thing_slow(struct rpc_call *c, struct json_object *params)
{
	void *arg = malloc(16);

	(void)params;
	/* Refused: arg is still ours. */
	if (rpc_call_later(c, slow_work, slow_done, arg) != 0)
		free(arg);
}

static void
thing_get(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	rpc_result(c, json_object_new_string("now"));
}

static const struct rpc_method methods[] = {
	{ "thing.slow", thing_slow, NULL, 0, "answered later" },
	{ "thing.get", thing_get, NULL, 0, "answered now" },
	{ NULL, NULL, NULL, 0, NULL }
};

#define SLOW	"{\"jsonrpc\":\"2.0\",\"method\":\"thing.slow\",\"id\":1}\n"
#define GET	"{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":2}\n"

static void
setup(void)
{
	struct rpc_limits lim = { .max_request = 1024, .max_clients = 8,
	    .client_timeout_ms = 600000, .output_limit = 65536,
	    .max_later = 2, .max_later_per_conn = 1, .later_threads = 1 };

	dir = unit_tmpdir();
	snprintf(path, sizeof(path), "%s/t.sock", dir);
	/* As the daemons: an answer to a client that left must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	srv = rpc_server_new("testd", "1.0");
	rpc_server_add_methods(srv, methods);
	rpc_server_set_limits(srv, &lim);
	ck_assert_int_eq(rpc_server_listen(srv, path, (gid_t)-1), 0);
	unit_gate_init();
	worked = done_ran = done_not_ran = 0;
}

static void
teardown(void)
{
	rpc_server_free(srv);
	unit_gate_fini();
	unit_rmtree(dir);
	free(dir);
}

static void
expect_line(int fd, const char *want)
{
	char *line = unit_read_line(fd);

	ck_assert_ptr_nonnull(line);
	ck_assert_msg(strstr(line, want), "%s: no %s", line, want);
	free(line);
}

START_TEST(answer_later_in_order)
{
	int a = unit_connect(path), b = unit_connect(path);

	unit_send(a, SLOW, strlen(SLOW));
	unit_gate_wait();
	/* The work holds: a's next request and b are answered meanwhile. */
	unit_send(a, GET, strlen(GET));
	expect_line(a, "\"now\"");
	unit_send(b, GET, strlen(GET));
	expect_line(b, "\"now\"");
	unit_gate_release();
	expect_line(a, "\"done\"");
	ck_assert_int_eq(done_ran, 1);
	close(a);
	close(b);
}
END_TEST

/* A client that half-closes still gets the answer it waits for. */
START_TEST(half_closed_client_answered)
{
	int a = unit_connect(path);

	unit_send(a, SLOW, strlen(SLOW));
	unit_gate_wait();
	ck_assert_int_eq(shutdown(a, SHUT_WR), 0);
	for (int i = 0; i < 10; i++)
		unit_spin();
	unit_gate_release();
	expect_line(a, "\"done\"");
	ck_assert_uint_eq(unit_read_to_eof(a), 0);
	close(a);
}
END_TEST

/* Waiting behind a running call, then the client left: never worked on. */
START_TEST(waiting_call_of_gone_client_not_run)
{
	int a = unit_connect(path), b = unit_connect(path);

	unit_send(a, SLOW, strlen(SLOW));
	unit_gate_wait();
	unit_send(b, SLOW, strlen(SLOW));
	ck_assert_int_eq(rpc_server_nlater(srv), 2);
	close(b);
	for (int i = 0; i < 4000 && rpc_server_nconns(srv) > 1; i++)
		unit_spin();
	ck_assert_int_eq(rpc_server_nconns(srv), 1);
	unit_gate_release();
	expect_line(a, "\"done\"");
	for (int i = 0; i < 4000 && rpc_server_nlater(srv) > 0; i++)
		unit_spin();
	ck_assert_int_eq(rpc_server_nlater(srv), 0);
	ck_assert_int_eq(worked, 1);
	ck_assert_int_eq(done_not_ran, 1);
	close(a);
}
END_TEST

/* Closing the server joins the running work; no answer, nothing leaks. */
START_TEST(close_joins_running_work)
{
	int a = unit_connect(path);

	unit_send(a, SLOW, strlen(SLOW));
	unit_gate_wait();
	unit_gate_release();
	rpc_server_close(srv);
	ck_assert_int_eq(worked, 1);
	ck_assert_int_eq(done_ran, 1);
	ck_assert_uint_eq(unit_read_to_eof(a), 0);
	close(a);
}
END_TEST

static int
plain_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(sun.sun_path))
		_exit(14);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
		_exit(13);
	return fd;
}

/*
 * The read group takes half the places at most: a child of another uid
 * in the read group waits for one answer, and its second call is refused.
 */
START_TEST(read_group_share)
{
	struct rpc_auth auth = { .admin_gid = (gid_t)-1, .read_gid = 4242 };
	struct pollfd pfd;
	int res[2];
	char verdict = 0;
	pid_t pid;

	if (getuid() != 0)
		return;		/* needs to make a child of another uid */
	rpc_server_set_auth(srv, &auth);
	/* The socket is the read group's, as the daemons make it. */
	ck_assert_int_eq(chmod(dir, 0711), 0);
	ck_assert_int_eq(chown(path, (uid_t)-1, 4242), 0);
	/* The verdict through a pipe: libev's SIGCHLD handler reaps the child. */
	ck_assert_int_eq(pipe(res), 0);
	if ((pid = fork()) == 0) {
		int x, y;
		char buf[512];
		ssize_t n;

		if (setgroups(0, NULL) != 0 || setgid(4242) != 0 || setuid(65534) != 0)
			_exit(10);
		/* Not unit_connect: the child must not run the server's loop. */
		x = plain_connect();
		y = plain_connect();
		if (write(x, SLOW, strlen(SLOW)) < 0 || write(y, SLOW, strlen(SLOW)) < 0)
			_exit(11);
		/* Whichever the server read second is refused, at once. */
		{
			struct pollfd pf[2] = { { .fd = x, .events = POLLIN },
			    { .fd = y, .events = POLLIN } };

			if (poll(pf, 2, -1) < 1)
				_exit(15);
			n = read(pf[0].revents ? x : y, buf, sizeof(buf) - 1);
		}
		buf[n > 0 ? n : 0] = '\0';
		verdict = strstr(buf, "read group's share") && strstr(buf, "-32007") ? 'y' : 'n';
		_exit(write(res[1], &verdict, 1) == 1 ? 0 : 16);
	}
	ck_assert_int_gt(pid, 0);
	unit_gate_wait();
	close(res[1]);
	pfd.fd = res[0];
	pfd.events = POLLIN;
	for (int i = 0; i < 4000 && poll(&pfd, 1, 0) == 0; i++)
		unit_spin();
	ck_assert_int_eq(read(res[0], &verdict, 1), 1);
	close(res[0]);
	ck_assert_msg(verdict == 'y', "the read group's second call was not refused");
	unit_gate_release();
	for (int i = 0; i < 4000 && rpc_server_nlater(srv) > 0; i++)
		unit_spin();
	/* The root caller (admin) still has its place. */
	{
		int a = unit_connect(path);

		unit_send(a, SLOW, strlen(SLOW));
		unit_gate_wait();
		unit_gate_release();
		expect_line(a, "\"done\"");
		close(a);
	}
}
END_TEST

static Suite *
later_suite(void)
{
	Suite *s = suite_create("rpc-later");
	TCase *tc = tcase_create("later");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, answer_later_in_order);
	tcase_add_test(tc, half_closed_client_answered);
	tcase_add_test(tc, waiting_call_of_gone_client_not_run);
	tcase_add_test(tc, close_joins_running_work);
	tcase_add_test(tc, read_group_share);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(later_suite());
}
