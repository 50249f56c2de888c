/*
 * Unit tests for lib/spawn.c with real children (/bin/sh -c ...): the
 * callback does not wait for a pipe a grandchild holds, children start
 * with default signal handling, a timeout or the daemon's shutdown
 * kills the child's whole process group.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "job.h"
#include "unit-util.h"

#define BOUND	20.	/* seconds only a broken implementation waits */

static int called, status;
static char output[8200];

static void
done_cb(int st, const char *out, void *arg)
{
	(void)arg;
	called++;
	status = st;
	snprintf(output, sizeof(output), "%s", out);
}

static void
bound_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)revents;
	*(int *)w->data = 1;
}

/* Runs the loop until *flag (or the bound); returns *flag. */
static int
wait_for(int *flag)
{
	ev_timer t;
	int expired = 0;

	ev_timer_init(&t, bound_cb, BOUND, 0.);
	t.data = &expired;
	ev_timer_start(EV_DEFAULT, &t);
	while (!*flag && !expired)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ev_timer_stop(EV_DEFAULT, &t);
	return *flag;
}

/* Gone or a zombie: it runs no more. */
static int
dead(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int z;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return 1;
	z = p[1] == ' ' && p[2] == 'Z';
	return z;
}

static int
wait_dead(pid_t pid)
{
	int gone = dead(pid);
	ev_timer t;
	int expired = 0;

	ev_timer_init(&t, bound_cb, BOUND, 0.);
	t.data = &expired;
	ev_timer_start(EV_DEFAULT, &t);
	while (!gone && !expired) {
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		usleep(10000);
		gone = dead(pid);
	}
	ev_timer_stop(EV_DEFAULT, &t);
	return gone;
}

static pid_t
first_pid(const char *out)
{
	long pid = strtol(out, NULL, 10);

	ck_assert_msg(pid > 1, "no pid in \"%s\"", out);
	return (pid_t)pid;
}

/*
 * The script has reached the point it names (it made the file): a timeout
 * armed only then cannot fire before its trap or its background child, on a
 * machine too busy to run the shell in 0.2 s.
 */
static int
wait_ready(const char *path)
{
	ev_timer t;
	int expired = 0;

	ev_timer_init(&t, bound_cb, BOUND, 0.);
	t.data = &expired;
	ev_timer_start(EV_DEFAULT, &t);
	while (access(path, F_OK) != 0 && !expired) {
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		usleep(10000);
	}
	ev_timer_stop(EV_DEFAULT, &t);
	return access(path, F_OK) == 0;
}

static char *sh_argv[] = { "/bin/sh", "-c", NULL, NULL };

static char **
sh(const char *script)
{
	sh_argv[2] = (char *)script;
	return sh_argv;
}

static void
setup(void)
{
	called = status = 0;
	output[0] = '\0';
}

static void
teardown(void)
{
	nas_spawn_stop_all(1.);
}

START_TEST(output_and_status)
{
	ck_assert_int_eq(nas_spawn(sh("echo out; echo err >&2; exit 3"), done_cb, NULL), 0);
	ck_assert(wait_for(&called));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	ck_assert_str_eq(output, "out\nerr\n");
	ck_assert_int_eq(nas_child_count(), 0);
}
END_TEST

/* A grandchild keeps stdout open for 60 s: the callback must not wait for it. */
START_TEST(exit_without_eof)
{
	pid_t bg;

	ck_assert_int_eq(nas_spawn(sh("sleep 60 & echo $!; echo done"), done_cb, NULL), 0);
	ck_assert_msg(wait_for(&called), "callback waited for the grandchild's pipe");
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_ptr_nonnull(strstr(output, "\ndone\n"));
	bg = first_pid(output);
	ck_assert(!dead(bg));	/* it held the pipe all along */
	kill(bg, SIGKILL);
	ck_assert(wait_dead(bg));
}
END_TEST

/* The kernel's struct sigaction for SIG_IGN (x86_64, arm64 layout). */
static unsigned long *
ign_sa(void)
{
	static unsigned long ksa[8];

	ksa[0] = (unsigned long)SIG_IGN;
	return ksa;
}

/* What libev and the daemon set up (ignored SIGPIPE, blocked signals) stays behind. */
START_TEST(default_signals)
{
	unsigned long long blk = 1, ign = 1;
	sigset_t set;
	char *p;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* glibc's own signals, which its sigaction() will not touch. */
	syscall(SYS_rt_sigaction, 32, ign_sa(), NULL, (NSIG - 1) / 8);
	syscall(SYS_rt_sigaction, 33, ign_sa(), NULL, (NSIG - 1) / 8);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ck_assert_int_eq(nas_spawn(sh("exec grep -E '^Sig(Blk|Ign)' /proc/self/status"),
	    done_cb, NULL), 0);
	ck_assert(wait_for(&called));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", output);
	ck_assert_ptr_nonnull(p = strstr(output, "SigBlk:"));
	blk = strtoull(p + 7, NULL, 16);
	ck_assert_ptr_nonnull(p = strstr(output, "SigIgn:"));
	ign = strtoull(p + 7, NULL, 16);
	ck_assert_msg(blk == 0 && ign == 0, "child inherited: %s", output);
}
END_TEST

START_TEST(timeout_kills_group)
{
	struct nas_child *ch;
	pid_t bg;

	char script[128], ready[64];

	snprintf(ready, sizeof(ready), "/tmp/test-spawn-ready.%ld", (long)getpid());
	unlink(ready);
	snprintf(script, sizeof(script), "sleep 60 & echo $!; : > %s; wait", ready);
	ck_assert_ptr_nonnull(ch = nas_child_start(sh(script), done_cb, NULL));
	ck_assert(wait_ready(ready));
	unlink(ready);
	nas_child_timeout(ch, 0.2, 10.);
	ck_assert(wait_for(&called));
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
	ck_assert_msg(strstr(output, "killed: timed out") != NULL, "%s", output);
	bg = first_pid(output);
	ck_assert_msg(wait_dead(bg), "grandchild %ld survived", (long)bg);
}
END_TEST

/* SIGTERM ignored by the whole group: SIGKILL after the grace. */
START_TEST(timeout_escalates)
{
	struct nas_child *ch;
	pid_t bg;

	char script[128], ready[64];

	snprintf(ready, sizeof(ready), "/tmp/test-spawn-ready.%ld", (long)getpid());
	unlink(ready);
	snprintf(script, sizeof(script),
	    "trap '' TERM; sleep 60 & echo $!; : > %s; wait; wait", ready);
	ck_assert_ptr_nonnull(ch = nas_child_start(sh(script), done_cb, NULL));
	ck_assert(wait_ready(ready));
	unlink(ready);
	nas_child_timeout(ch, 0.2, 0.3);
	ck_assert(wait_for(&called));
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
	bg = first_pid(output);
	ck_assert_msg(wait_dead(bg), "grandchild %ld survived", (long)bg);
}
END_TEST

/* The file holds the grandchild's pid once the group is complete. */
static pid_t
started_group(const char *file)
{
	char buf[32] = "";
	FILE *f;

	for (int i = 0; i < 2000; i++) {
		if ((f = fopen(file, "re")) != NULL) {
			char *p = fgets(buf, sizeof(buf), f);

			fclose(f);
			if (p != NULL && strchr(buf, '\n') != NULL)
				return first_pid(buf);
		}
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		usleep(10000);
	}
	ck_abort_msg("the child never started its grandchild");
	return -1;
}

static void
stop_all_case(const char *trap, double grace)
{
	char script[1200], *dir = unit_tmpdir(), file[300];
	struct nas_child *ch;
	pid_t pid, bg;

	snprintf(file, sizeof(file), "%s/pid", dir);
	snprintf(script, sizeof(script), "%s sleep 60 & echo $! > %s.tmp; mv %s.tmp %s; wait",
	    trap, file, file, file);
	ck_assert_ptr_nonnull(ch = nas_child_start(sh(script), done_cb, NULL));
	pid = nas_child_pid(ch);
	bg = started_group(file);
	ck_assert_int_eq(nas_spawn_stop_all(grace), 0);
	ck_assert_int_eq(called, 0);
	ck_assert_int_eq(nas_child_count(), 0);
	/* Every member of the group is gone and reaped, not merely signalled. */
	ck_assert_int_eq(kill(-pid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	ck_assert(dead(bg));
	ck_assert_int_eq(kill(pid, 0), -1);
	unit_rmtree(dir);
	free(dir);
}

START_TEST(stop_all_terminates)
{
	stop_all_case("", 10.);
}
END_TEST

START_TEST(stop_all_kills)
{
	stop_all_case("trap '' TERM;", 0.3);
}
END_TEST

START_TEST(abandon_never_calls_back)
{
	struct nas_child *ch;
	pid_t pid;

	ck_assert_ptr_nonnull(ch = nas_child_start(sh("sleep 60"), done_cb, NULL));
	pid = nas_child_pid(ch);
	nas_child_abandon(ch, 10.);
	ck_assert(wait_dead(pid));
	/* Reaped by its watcher, which has nothing left to call. */
	for (int i = 0; i < 2000 && nas_child_count() > 0; i++) {
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		usleep(10000);
	}
	ck_assert_int_eq(nas_child_count(), 0);
	ck_assert_int_eq(called, 0);
}
END_TEST

static struct nas_child *self;

static void
terminate_self_cb(int st, const char *out, void *arg)
{
	done_cb(st, out, arg);
	/* Still valid here, and too late to kill: must do nothing. */
	nas_child_terminate(self, 0.1);
	nas_child_timeout(self, 0.1, 0.1);
}

START_TEST(terminate_in_callback)
{
	ck_assert_ptr_nonnull(self = nas_child_start(sh("exit 0"), terminate_self_cb, NULL));
	ck_assert(wait_for(&called));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(nas_child_count(), 0);
	/* A timer armed on the freed handle would fire here. */
	for (int i = 0; i < 30; i++) {
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		usleep(10000);
	}
	ck_assert_int_eq(called, 1);
}
END_TEST

START_TEST(exec_failure)
{
	char *argv[] = { "/nonexistent/prog", NULL };

	ck_assert_int_eq(nas_spawn(argv, done_cb, NULL), 0);
	ck_assert(wait_for(&called));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}
END_TEST

/*
 * A whole daemon: its init starts a child whose group outlives a plain
 * exit (sleep in the background, SIGTERM ignored) and a job owning it;
 * SIGTERM stops the daemon.  By fini the group must be gone, and the
 * job's state is released only after that.
 */
static char *d_dir, d_file[300];
static pid_t d_pid, d_bg;
static int d_group_gone_at_fini, d_group_gone_at_release, d_released;
static ev_timer d_poll;

static void
d_release(void *arg)
{
	(void)arg;
	d_released++;
	d_group_gone_at_release = kill(-d_pid, 0) == -1 && errno == ESRCH;
}

static const struct job_ops d_ops = { NULL, d_release };

static void
d_poll_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	FILE *f;
	char buf[32];

	(void)revents;
	if ((f = fopen(d_file, "re")) != NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL && strchr(buf, '\n') != NULL) {
			d_bg = (pid_t)strtol(buf, NULL, 10);
			ev_timer_stop(l, w);
			raise(SIGTERM);
		}
		fclose(f);
	}
}

static int
d_init(const struct conf *c)
{
	char script[1200];
	struct nas_child *ch;

	(void)c;
	snprintf(script, sizeof(script),
	    "trap '' TERM; sleep 60 & echo $! > %s.tmp; mv %s.tmp %s; wait",
	    d_file, d_file, d_file);
	if ((ch = nas_child_start(sh(script), done_cb, NULL)) == NULL)
		return -1;
	d_pid = nas_child_pid(ch);
	job_start("test", "child", &d_ops, NULL);
	ev_timer_init(&d_poll, d_poll_cb, 0.01, 0.01);
	ev_timer_start(nas_loop(), &d_poll);
	return 0;
}

static void
d_fini(void)
{
	d_group_gone_at_fini = kill(-d_pid, 0) == -1 && errno == ESRCH;
}

static const struct nas_daemon test_daemon = {
	.name = "spawntestd", .init = d_init, .fini = d_fini,
};

START_TEST(daemon_stops_children_on_sigterm)
{
	char conf[400], *argv[] = { "spawntestd", "-f", "-S", NULL, "-c", conf, NULL };
	char *path;

	d_dir = unit_tmpdir();
	snprintf(d_file, sizeof(d_file), "%s/pid", d_dir);
	path = unit_write(d_dir, "spawntestd.ini", "[log]\nsyslog = no\n");
	snprintf(conf, sizeof(conf), "%s", path);
	free(path);
	argv[3] = d_dir;
	ck_assert_int_eq(nas_daemon_main(&test_daemon, 6, argv), 0);
	ck_assert(d_bg > 1);
	ck_assert_msg(d_group_gone_at_fini, "the child's group still ran at fini");
	ck_assert_int_eq(d_released, 1);
	ck_assert(d_group_gone_at_release);
	ck_assert(dead(d_bg));
	ck_assert_int_eq(called, 0);
	unit_rmtree(d_dir);
	free(d_dir);
}
END_TEST

/*
 * Children started after the daemon forks (daemon(3) when it goes to
 * the background) still have it as their subreaper: PR_SET_CHILD_SUBREAPER
 * is not inherited by fork, so what an earlier spawn set before the
 * fork does not count.
 */
START_TEST(subreaper_after_fork)
{
	int st, sub = 0;
	pid_t pid;

	ck_assert_int_eq(nas_spawn(sh("exit 0"), done_cb, NULL), 0);
	ck_assert(wait_for(&called));
	if ((pid = fork()) == 0) {
		ev_loop_fork(EV_DEFAULT);
		called = 0;
		if (nas_spawn(sh("exit 0"), done_cb, NULL) == -1 ||
		    prctl(PR_GET_CHILD_SUBREAPER, &sub) == -1 || !wait_for(&called))
			_exit(2);
		_exit(sub == 1 ? 0 : 1);
	}
	ck_assert_int_ne(pid, -1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "forked process: not the subreaper of its children (status %#x)", st);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("spawn");
	TCase *tc = tcase_create("children");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, output_and_status);
	tcase_add_test(tc, exit_without_eof);
	tcase_add_test(tc, default_signals);
	tcase_add_test(tc, timeout_kills_group);
	tcase_add_test(tc, timeout_escalates);
	tcase_add_test(tc, stop_all_terminates);
	tcase_add_test(tc, stop_all_kills);
	tcase_add_test(tc, abandon_never_calls_back);
	tcase_add_test(tc, exec_failure);
	tcase_add_test(tc, terminate_in_callback);
	tcase_add_test(tc, daemon_stops_children_on_sigterm);
	tcase_add_test(tc, subreaper_after_fork);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
