/*
 * cryptd's key derivations on a worker thread, answered later (Decision
 * 94), over a real socket on the simulated keyring and device-mapper. A
 * hook holds every job's work until the test lets it go, so the order is
 * proven, not timed: another client is answered while a KDF provably
 * still runs; a client that hangs up mid-KDF leaves nothing dangling and
 * its attempt still counts; the limits give a clear error.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit-util.h"
#include "rpc.h"
#include "cryptd/cryptd.h"
#include "cryptd/system.h"

static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static struct rpc_server *srv;
static char *dir, dev[512], sock[512], req[2048];
static double fake_now;

static double
fake_clock(void)
{
	return fake_now;
}

static void
setup(void)
{
	struct kdf_conf k = { KDF_ARGON2ID, 32, 10, 1 };
	struct rpc_auth auth = { .admin_gid = getgid(), .read_gid = (gid_t)-1 };
	struct rpc_limits lim;
	struct json_object *a;
	int fd;

	sys = &sys_sim;
	sim_reset();
	kdf_configure(&k);
	fake_now = 1000;
	ratelimit_set_clock(fake_clock);
	ratelimit_clear();
	dir = unit_tmpdir();
	crypt_set_file_dirs(dir);
	snprintf(dev, sizeof(dev), "%s/disk", dir);
	ck_assert_int_ge(fd = open(dev, O_RDWR | O_CREAT, 0600), 0);
	ck_assert_int_eq(ftruncate(fd, (LUKS2_DATA_OFFSET + (4 << 20))), 0);
	close(fd);
	/* As the daemons: an answer to a client that left must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	srv = rpc_server_new("cryptd", "test");
	rpc_server_add_methods(srv, cryptd_crypt_methods);
	rpc_server_set_auth(srv, &auth);
	lim = *rpc_server_limits(srv);
	lim.max_later = 3;
	lim.max_later_per_conn = 1;
	lim.later_threads = 2;
	rpc_server_set_limits(srv, &lim);
	snprintf(sock, sizeof(sock), "%s/c.sock", dir);
	ck_assert_int_eq(rpc_server_listen(srv, sock, (gid_t)-1), 0);
	/* Formatted without the hook (no connection: at once). */
	snprintf(req, sizeof(req), "{\"device\":\"%s\",\"passphrase\":\"right\"}", dev);
	a = unit_call_expect(srv, &root, "crypt.format", req, 0);
	json_object_put(a);
	unit_gate_init();
	kdf_job_set_hook(unit_gate_hold);
}

static void
teardown(void)
{
	kdf_job_set_hook(NULL);
	rpc_server_free(srv);
	unit_gate_fini();
	unit_rmtree(dir);
	free(dir);
}

/* Sends method with params on fd (id 7). */
static void
send_call(int fd, const char *method, const char *params)
{
	char line[2400];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s\","
	    "\"params\":%s}\n", method, params);
	unit_send(fd, line, strlen(line));
}

/* The next answer on fd: its error code (0: a result); msg gets the message. */
static int
answer_code(int fd, char *msg, size_t len)
{
	char *line = unit_read_line(fd);
	struct json_object *a;
	int c;

	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_nonnull(a = json_tokener_parse(line));
	free(line);
	c = unit_err_code(a);
	if (msg)
		snprintf(msg, len, "%s", unit_err_msg(a));
	json_object_put(a);
	return c;
}

static void
open_params(char *buf, size_t len, const char *name, const char *pass)
{
	snprintf(buf, len, "{\"device\":\"%s\",\"name\":\"%s\",\"passphrase\":\"%s\"}",
	    dev, name, pass);
}

START_TEST(others_answered_during_kdf)
{
	char p[1200];
	int a = unit_connect(sock), b = unit_connect(sock);

	open_params(p, sizeof(p), "v1", "right");
	send_call(a, "crypt.open", p);
	unit_gate_wait();
	/* The KDF holds in the hook: the loop still answers b. */
	send_call(b, "crypt.list", "{}");
	ck_assert_int_eq(answer_code(b, NULL, 0), 0);
	snprintf(p, sizeof(p), "{\"device\":\"%s\"}", dev);
	send_call(b, "crypt.show", p);
	ck_assert_int_eq(answer_code(b, NULL, 0), 0);
	ck_assert_int_eq(rpc_server_nlater(srv), 1);
	unit_assert_silent(a);
	unit_gate_release();
	ck_assert_int_eq(answer_code(a, NULL, 0), 0);
	ck_assert_int_eq(rpc_server_nlater(srv), 0);
	send_call(b, "crypt.close", "{\"name\":\"v1\"}");
	ck_assert_int_eq(answer_code(b, NULL, 0), 0);
	close(a);
	close(b);
}
END_TEST

START_TEST(client_leaves_mid_kdf)
{
	char p[1200], msg[256];
	int a = unit_connect(sock), b;

	open_params(p, sizeof(p), "v1", "wrong");
	send_call(a, "crypt.open", p);
	unit_gate_wait();
	close(a);
	for (int i = 0; i < 20 && rpc_server_nconns(srv) > 0; i++)
		unit_spin();
	/* Gone, while its call waits: the job holds nothing of the connection. */
	ck_assert_int_eq(rpc_server_nconns(srv), 0);
	ck_assert_int_eq(rpc_server_nlater(srv), 1);
	unit_gate_release();
	for (int i = 0; i < 4000 && rpc_server_nlater(srv) > 0; i++)
		unit_spin();
	ck_assert_int_eq(rpc_server_nlater(srv), 0);
	/* The wrong guess counted: hanging up does not dodge the back-off. */
	b = unit_connect(sock);
	open_params(p, sizeof(p), "v1", "right");
	send_call(b, "crypt.open", p);
	ck_assert_int_eq(answer_code(b, msg, sizeof(msg)), NAS_ERR_BUSY);
	ck_assert_msg(strstr(msg, "too many wrong passphrases"), "%s", msg);
	close(b);
}
END_TEST

START_TEST(limits_clear_errors)
{
	char p[1200], msg[256];
	int a = unit_connect(sock), b = unit_connect(sock), c = unit_connect(sock);
	struct json_object *r;

	snprintf(req, sizeof(req), "{\"device\":\"%s\",\"file\":\"%s/hdr\"}", dev, dir);
	r = unit_call_expect(srv, &root, "header.backup", req, 0);
	json_object_put(r);
	open_params(p, sizeof(p), "v1", "right");
	send_call(a, "crypt.open", p);
	unit_gate_wait();
	/* One per connection here. */
	send_call(a, "crypt.benchmark", "{}");
	ck_assert_int_eq(answer_code(a, msg, sizeof(msg)), NAS_ERR_LIMIT);
	ck_assert_msg(strstr(msg, "this connection"), "%s", msg);
	/* One job per device: a second guess cannot pass the back-off alongside. */
	open_params(p, sizeof(p), "v2", "right");
	send_call(b, "crypt.open", p);
	ck_assert_int_eq(answer_code(b, msg, sizeof(msg)), NAS_ERR_BUSY);
	ck_assert_msg(strstr(msg, "key derivation runs"), "%s", msg);
	snprintf(p, sizeof(p), "{\"device\":\"%s\",\"confirm\":\"%s\"}", dev, dev);
	send_call(b, "crypt.erase", p);
	ck_assert_int_eq(answer_code(b, NULL, 0), NAS_ERR_BUSY);
	/* Nor is a header restored, or backed up, under it. */
	snprintf(req, sizeof(req), "{\"device\":\"%s\",\"file\":\"%s/hdr\",\"confirm\":\"%s\"}",
	    dev, dir, dev);
	send_call(b, "header.restore", req);
	ck_assert_int_eq(answer_code(b, msg, sizeof(msg)), NAS_ERR_BUSY);
	ck_assert_msg(strstr(msg, "key derivation runs"), "%s", msg);
	snprintf(p, sizeof(p), "{\"device\":\"%s\",\"file\":\"%s/hdr2\"}", dev, dir);
	send_call(b, "header.backup", p);
	ck_assert_int_eq(answer_code(b, msg, sizeof(msg)), NAS_ERR_BUSY);
	/* Not in a batch: its one answer cannot wait. */
	snprintf(req, sizeof(req), "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"crypt.benchmark\",\"params\":{}}]\n");
	unit_send(b, req, strlen(req));
	{
		char *line = unit_read_line(b);

		ck_assert_ptr_nonnull(strstr(line, "not in a batch"));
		free(line);
	}
	/* The second thread takes b's; c's waits; then the server is full. */
	send_call(b, "crypt.benchmark", "{}");
	unit_gate_wait();
	send_call(c, "crypt.benchmark", "{}");
	unit_assert_silent(c);
	ck_assert_int_eq(rpc_server_nlater(srv), 3);
	{
		int d = unit_connect(sock);

		send_call(d, "crypt.benchmark", "{}");
		ck_assert_int_eq(answer_code(d, msg, sizeof(msg)), NAS_ERR_LIMIT);
		ck_assert_msg(strstr(msg, "server busy"), "%s", msg);
		close(d);
	}
	unit_gate_release();
	unit_gate_release();
	ck_assert_int_eq(answer_code(a, NULL, 0), 0);
	ck_assert_int_eq(answer_code(b, NULL, 0), 0);
	unit_gate_wait();
	unit_gate_release();
	ck_assert_int_eq(answer_code(c, NULL, 0), 0);
	ck_assert_int_eq(rpc_server_nlater(srv), 0);
	close(a);
	close(b);
	close(c);
}
END_TEST

static Suite *
later_suite(void)
{
	Suite *s = suite_create("cryptd-later");
	TCase *tc = tcase_create("later");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, others_answered_during_kdf);
	tcase_add_test(tc, client_leaves_mid_kdf);
	tcase_add_test(tc, limits_clear_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(later_suite());
}
