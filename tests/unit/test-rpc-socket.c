/*
 * Unit tests for lib/rpc-socket.c: the socket directory's checks and the
 * socket file's group, in a temporary directory. They run as root (the
 * daemons do): chown to a spare group id needs it.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <ev.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "rpc.h"
#include "rpc-socket.h"
#include "unit-util.h"

/* Group ids no test machine gives anyone: chown takes any number as root. */
#define SPARE_GID	47011
#define SPARE_GID2	47012

static char *dir;
static char err[512], path[300];
static struct nas_sockfile sf = { .fd = -1 };
static int sfd = -1;

static void
setup(void)
{
	dir = unit_tmpdir();
	err[0] = '\0';
	snprintf(path, sizeof(path), "%s/t.sock", dir);
}

static void
teardown(void)
{
	nas_sockfile_close(&sf);
	if (sfd != -1)
		close(sfd);
	unit_rmtree(dir);
	free(dir);
}

static struct stat
stat_of(const char *p)
{
	struct stat st;

	ck_assert_msg(lstat(p, &st) == 0, "%s", p);
	return st;
}

/* A socket bound at path as rpc_server_listen binds it: 0660. */
static void
bind_socket(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;

	strcpy(sun.sun_path, path);
	ck_assert_int_ne(sfd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	old = umask(0117);
	ck_assert_int_eq(bind(sfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	umask(old);
}

/* Asserts dir/name, made with mode (and owner uid), is refused with why. */
static void
dir_refused(const char *name, mode_t mode, uid_t uid, const char *why)
{
	char d[300], want[600];

	snprintf(d, sizeof(d), "%s/%s", dir, name);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	ck_assert_int_eq(chmod(d, mode), 0);
	ck_assert_int_eq(chown(d, uid, (gid_t)-1), 0);
	ck_assert_int_eq(nas_sockdir_check(d, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "socket directory %s: %s", d, why);
	ck_assert_str_eq(err, want);
}

static void
dir_accepted(const char *name, mode_t mode)
{
	char d[300];

	snprintf(d, sizeof(d), "%s/%s", dir, name);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	ck_assert_int_eq(chmod(d, mode), 0);
	ck_assert_msg(nas_sockdir_check(d, err, sizeof(err)) == 0, "%s", err);
}

/* A missing directory is made 0755 whatever the umask: clients must search it. */
START_TEST(missing_dir_created_0755)
{
	char d[300];
	mode_t old = umask(077);
	int rc;

	snprintf(d, sizeof(d), "%s/run", dir);
	rc = nas_sockdir_check(d, err, sizeof(err));
	umask(old);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_eq(stat_of(d).st_mode & 07777, 0755);
	ck_assert(S_ISDIR(stat_of(d).st_mode));
}
END_TEST

START_TEST(writable_dir_refused)
{
	dir_refused("g", 0775, 0, "mode 0775 lets others replace the socket "
	    "(writable by group or others, not sticky)");
	dir_refused("o", 0757, 0, "mode 0757 lets others replace the socket "
	    "(writable by group or others, not sticky)");
	/* Sticky: others may not remove or rename what is ours. */
	dir_accepted("t", 01777);
	dir_accepted("p", 0755);
	dir_accepted("q", 0700);
}
END_TEST

START_TEST(foreign_owner_refused)
{
	char why[128];

	snprintf(why, sizeof(why), "owned by uid 12345, not by root or uid %u",
	    (unsigned)geteuid());
	dir_refused("u", 0755, 12345, why);
}
END_TEST

START_TEST(symlink_or_file_refused)
{
	char d[300], l[300], want[700];

	snprintf(d, sizeof(d), "%s/real", dir);
	snprintf(l, sizeof(l), "%s/link", dir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	ck_assert_int_eq(symlink(d, l), 0);
	ck_assert_int_eq(nas_sockdir_check(l, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "socket directory %s: not a directory (or a symlink)", l);
	ck_assert_str_eq(err, want);
	free(unit_write(dir, "file", "x"));
	snprintf(d, sizeof(d), "%s/file", dir);
	ck_assert_int_eq(nas_sockdir_check(d, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "socket directory %s: not a directory (or a symlink)", d);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(group_set_and_changed)
{
	struct stat st;

	bind_socket();
	ck_assert_msg(nas_sockfile_open(&sf, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(nas_sockfile_set_group(&sf, SPARE_GID, err, sizeof(err)), 1);
	st = stat_of(path);
	ck_assert_uint_eq(st.st_gid, SPARE_GID);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	/* The same again changes nothing. */
	ck_assert_int_eq(nas_sockfile_set_group(&sf, SPARE_GID, err, sizeof(err)), 0);
	/* What a SIGHUP with another read_group does. */
	ck_assert_int_eq(nas_sockfile_set_group(&sf, SPARE_GID2, err, sizeof(err)), 1);
	st = stat_of(path);
	ck_assert_uint_eq(st.st_gid, SPARE_GID2);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	/* No group at all: back to our own. */
	ck_assert_int_eq(nas_sockfile_set_group(&sf, (gid_t)-1, err, sizeof(err)), 1);
	ck_assert_uint_eq(stat_of(path).st_gid, getegid());
}
END_TEST

/* A mode someone widened is mended with the group. */
START_TEST(mode_mended)
{
	bind_socket();
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_msg(nas_sockfile_open(&sf, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(nas_sockfile_set_group(&sf, SPARE_GID, err, sizeof(err)), 1);
	ck_assert_uint_eq(stat_of(path).st_mode & 07777, 0660);
}
END_TEST

/* What is at the path when we take hold must be our socket, not a link to one. */
START_TEST(open_refuses_symlink_and_file)
{
	char real[300], want[600];

	snprintf(real, sizeof(real), "%s/real.sock", dir);
	snprintf(want, sizeof(want), "%s: not the socket we bound", path);
	ck_assert_int_eq(symlink(real, path), 0);
	ck_assert_int_eq(nas_sockfile_open(&sf, path, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(sf.fd, -1);
	unlink(path);
	free(unit_write(dir, "t.sock", "not a socket"));
	ck_assert_int_eq(nas_sockfile_open(&sf, path, err, sizeof(err)), -1);
	ck_assert_str_eq(err, want);
}
END_TEST

/*
 * The name swapped for a symlink to another file after bind: chown(path)
 * would have given that file to the group. Nothing changes, on either.
 */
START_TEST(swapped_path_left_alone)
{
	char moved[300], *victim;
	struct stat before;

	bind_socket();
	ck_assert_msg(nas_sockfile_open(&sf, path, err, sizeof(err)) == 0, "%s", err);
	victim = unit_write(dir, "shadow", "secret");
	ck_assert_int_eq(chmod(victim, 0640), 0);
	before = stat_of(victim);
	snprintf(moved, sizeof(moved), "%s/moved.sock", dir);
	ck_assert_int_eq(rename(path, moved), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(nas_sockfile_set_group(&sf, SPARE_GID, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no longer the socket we bound"));
	ck_assert_uint_eq(stat_of(victim).st_gid, before.st_gid);
	ck_assert_uint_eq(stat_of(victim).st_mode, before.st_mode);
	ck_assert_uint_ne(stat_of(moved).st_gid, SPARE_GID);
	free(victim);
}
END_TEST

/* The identity is the file's, taken from the path: the socket's own fstat differs. */
START_TEST(socket_fd_is_not_the_file)
{
	struct stat fdst, st;

	bind_socket();
	ck_assert_int_eq(fstat(sfd, &fdst), 0);
	st = stat_of(path);
	ck_assert(fdst.st_dev != st.st_dev || fdst.st_ino != st.st_ino);
	ck_assert_msg(nas_sockfile_open(&sf, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(sf.dev, st.st_dev);
	ck_assert_uint_eq(sf.ino, st.st_ino);
}
END_TEST

/* ---- the caller's groups, as SO_PEERGROUPS gives them ---- */

#define MANY_GROUPS	100
#define FIRST_GID	50000
#define CLIENT_UID	47013

static void
thing_get(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	rpc_result(c, json_object_new_string("got"));
}

static const struct rpc_method read_methods[] = {
	{ "thing.get", thing_get, NULL, 0, "read-only" },
	{ NULL, NULL, NULL, 0, NULL }
};

/* The child: a plain user in MANY_GROUPS groups calls; exit 0 when allowed. */
static void
call_with_many_groups(void)
{
	struct rpc_client_error e = { 0 };
	struct json_object *r;
	struct rpc_client *c;
	gid_t groups[MANY_GROUPS];

	for (int i = 0; i < MANY_GROUPS; i++)
		groups[i] = FIRST_GID + i;
	if (setgroups(MANY_GROUPS, groups) == -1 || setgid(CLIENT_UID) == -1 ||
	    setuid(CLIENT_UID) == -1)
		_exit(3);
	if ((c = rpc_client_open_path(path, &e)) == NULL)
		_exit(4);
	_exit(rpc_client_call(c, "thing.get", NULL, &r, &e) == 0 ? 0 :
	    e.code == NAS_ERR_DENIED ? 2 : 5);
}

/*
 * With more than 64 groups SO_PEERGROUPS answered ERANGE into a 64-slot
 * buffer and the caller was taken to be in no group at all: the web UI's
 * user, in the read group as its 100th, was refused.
 */
START_TEST(more_than_64_groups)
{
	struct rpc_server *srv = rpc_server_new("testd", "1");
	struct rpc_auth auth = { .admin_gid = (gid_t)-1,
	    .read_gid = FIRST_GID + MANY_GROUPS - 1 };
	struct rpc_limits lim = { .max_request = 65536, .max_clients = 8,
	    .client_timeout_ms = 10000, .output_limit = 1 << 20 };
	int status;
	pid_t pid;

	rpc_server_add_methods(srv, read_methods);
	rpc_server_set_auth(srv, &auth);
	rpc_server_set_limits(srv, &lim);
	ck_assert_int_eq(rpc_server_listen(srv, path, (gid_t)-1), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0)
		call_with_many_groups();
	/* Serve until the caller is done; a hung server hits Check's timeout. */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		unit_pump();
		poll(NULL, 0, 1);
	}
	rpc_server_free(srv);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static Suite *
socket_suite(void)
{
	Suite *s = suite_create("rpc-socket");
	TCase *tc = tcase_create("socket");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, missing_dir_created_0755);
	tcase_add_test(tc, writable_dir_refused);
	tcase_add_test(tc, foreign_owner_refused);
	tcase_add_test(tc, symlink_or_file_refused);
	tcase_add_test(tc, group_set_and_changed);
	tcase_add_test(tc, mode_mended);
	tcase_add_test(tc, open_refuses_symlink_and_file);
	tcase_add_test(tc, swapped_path_left_alone);
	tcase_add_test(tc, socket_fd_is_not_the_file);
	tcase_add_test(tc, more_than_64_groups);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(socket_suite());
}
