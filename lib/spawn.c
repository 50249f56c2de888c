/*
 * Child processes on the event loop: a job that runs mkfs or similar
 * gets its exit status and what the child printed, without blocking.
 *
 * Each child leads a process group of its own, so a timeout or the
 * daemon's shutdown reaches whatever it started too (kill(-pgid)).  The
 * daemon is a child subreaper: a grandchild whose parent died becomes
 * ours, libev's SIGCHLD handler reaps it, and shutdown can wait for a
 * whole group with waitpid(-pgid).
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

#define OUTPUT_KEPT	8192	/* the tail of the child's output we keep */

struct nas_child {
	ev_child	 cw;
	ev_io		 io;
	ev_timer	 deadline;	/* timeout, then the SIGKILL grace */
	nas_child_cb	 cb;
	void		*arg;
	pid_t		 pid;		/* also its process group */
	int		 killing;	/* 0, SIGTERM or SIGKILL sent */
	int		 exited;	/* cb is running: nothing more to kill */
	double		 grace;
	char		 why[64];	/* appended to the output when killed */
	char		 out[OUTPUT_KEPT + 1];
	size_t		 len;
	struct nas_child *next;
};

static struct nas_child *children;

static void
unlink_child(struct nas_child *ch)
{
	struct nas_child **pp;

	for (pp = &children; *pp != NULL; pp = &(*pp)->next)
		if (*pp == ch) {
			*pp = ch->next;
			return;
		}
}

/* Keeps the tail: errors come last. */
static void
keep(struct nas_child *ch, const char *buf, size_t n)
{
	size_t k = n > OUTPUT_KEPT ? OUTPUT_KEPT : n;

	if (ch->len + k > OUTPUT_KEPT) {
		size_t drop = ch->len + k - OUTPUT_KEPT;

		memmove(ch->out, ch->out + drop, ch->len - drop);
		ch->len -= drop;
	}
	memcpy(ch->out + ch->len, buf + n - k, k);
	ch->len += k;
}

/* Reads what is there now; 1 at EOF or error, 0 when it would block. */
static int
drain(struct nas_child *ch)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(ch->io.fd, buf, sizeof(buf));
		if (n > 0) {
			keep(ch, buf, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		return !(n == -1 && errno == EAGAIN);
	}
}

static void
close_pipe(struct nas_child *ch)
{
	if (ch->io.fd == -1)
		return;
	ev_io_stop(nas_loop(), &ch->io);
	close(ch->io.fd);
	ch->io.fd = -1;
}

static void
child_free(struct nas_child *ch)
{
	ev_child_stop(nas_loop(), &ch->cw);
	ev_timer_stop(nas_loop(), &ch->deadline);
	close_pipe(ch);
	unlink_child(ch);
	free(ch);
}

/* ESRCH is the only proof that nobody is left (EPERM: someone is). */
static int
group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno != ESRCH;
}

static void
child_io_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct nas_child *ch = w->data;

	(void)l;
	(void)revents;
	if (drain(ch))
		close_pipe(ch);
}

/*
 * The child has exited: what it wrote is in the pipe by now.  A
 * grandchild may hold the pipe open for ever; we do not wait for it.
 */
static void
child_exit_cb(struct ev_loop *l, ev_child *w, int revents)
{
	struct nas_child *ch = w->data;
	char note[80];
	int n;

	(void)l;
	(void)revents;
	if (ch->io.fd != -1)
		drain(ch);
	/* The rest of a group we were killing gets no further grace. */
	if (ch->killing)
		kill(-ch->pid, SIGKILL);
	if (ch->why[0] != '\0') {
		n = snprintf(note, sizeof(note), "%s%s",
		    ch->len && ch->out[ch->len - 1] != '\n' ? "\n" : "", ch->why);
		keep(ch, note, (size_t)n);
	}
	ch->out[ch->len] = '\0';
	ch->exited = 1;
	close_pipe(ch);
	ev_timer_stop(nas_loop(), &ch->deadline);
	ev_child_stop(nas_loop(), &ch->cw);
	unlink_child(ch);
	if (ch->cb != NULL)
		ch->cb(w->rstatus, ch->out, ch->arg);
	free(ch);
}

static void
signal_group(struct nas_child *ch, int sig)
{
	if (kill(-ch->pid, sig) == -1 && errno != ESRCH)
		log_warn("child %ld: kill", (long)ch->pid);
	ch->killing = sig;
}

static void
arm(struct nas_child *ch, double seconds)
{
	ev_timer_stop(nas_loop(), &ch->deadline);
	ev_timer_set(&ch->deadline, seconds, 0.);
	ev_timer_start(nas_loop(), &ch->deadline);
}

static void
deadline_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct nas_child *ch = w->data;

	(void)l;
	(void)revents;
	if (ch->killing == 0) {
		log_warnx("child %ld: timed out, terminating its process group",
		    (long)ch->pid);
		snprintf(ch->why, sizeof(ch->why), "killed: timed out");
		signal_group(ch, SIGTERM);
		arm(ch, ch->grace);
		return;
	}
	log_warnx("child %ld: still running after SIGTERM, killing it", (long)ch->pid);
	signal_group(ch, SIGKILL);
}

/*
 * In the child, before exec: nothing of the daemon's signal set-up
 * stays.  Signals are blocked from before fork until the handlers are
 * gone: a SIGTERM meant for the child must not run libev's handler in
 * it, which would write to the loop's pipe it shares with the daemon.
 */
static void
reset_signals(void)
{
	/*
	 * The kernel's struct sigaction, all zero, is SIG_DFL with no flags
	 * on every architecture.  Through the system call, because glibc's
	 * sigaction() refuses the two signals it keeps for itself (32, 33),
	 * which an ignoring parent would otherwise pass on.
	 */
	unsigned long ksa[8] = { 0 };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)	/* SIGKILL, SIGSTOP: EINVAL */
		syscall(SYS_rt_sigaction, sig, ksa, NULL, (NSIG - 1) / 8);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void
child_exec(char *const argv[], int out, int fd, int as)
{
	int null;

	reset_signals();
	setpgid(0, 0);
	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1)
		dup2(null, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	/* dup2 onto itself keeps close-on-exec: cleared by hand then. */
	if (fd >= 0 && fd == as)
		fcntl(as, F_SETFD, 0);
	else if (fd >= 0)
		dup2(fd, as);
	execv(argv[0], argv);
	_exit(127);
}

struct nas_child *
nas_child_start_fd(char *const argv[], int fd, int as, nas_child_cb cb, void *arg)
{
	static pid_t subreaper;	/* the process that is one */
	struct nas_child *ch;
	sigset_t all, old;
	int p[2];
	pid_t pid;

	/* Not inherited by fork (daemon(3)): set in the process we are now. */
	if (subreaper != getpid() && prctl(PR_SET_CHILD_SUBREAPER, 1) == 0)
		subreaper = getpid();
	/* The default loop catches SIGCHLD from its creation on: before fork. */
	(void)nas_loop();
	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return NULL;
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(ch);
		return NULL;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if ((pid = fork()) == 0)
		child_exec(argv, p[1], fd, as);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		close(p[0]);
		close(p[1]);
		free(ch);
		return NULL;
	}
	/* Both sides set the group: a kill may come before the child runs. */
	setpgid(pid, pid);
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ch->pid = pid;
	ch->cb = cb;
	ch->arg = arg;
	ev_child_init(&ch->cw, child_exit_cb, pid, 0);
	ev_io_init(&ch->io, child_io_cb, p[0], EV_READ);
	ev_timer_init(&ch->deadline, deadline_cb, 0., 0.);
	ch->cw.data = ch->io.data = ch->deadline.data = ch;
	ev_child_start(nas_loop(), &ch->cw);
	ev_io_start(nas_loop(), &ch->io);
	ch->next = children;
	children = ch;
	return ch;
}

struct nas_child *
nas_child_start(char *const argv[], nas_child_cb cb, void *arg)
{
	return nas_child_start_fd(argv, -1, -1, cb, arg);
}

int
nas_spawn(char *const argv[], nas_child_cb cb, void *arg)
{
	return nas_child_start(argv, cb, arg) == NULL ? -1 : 0;
}

pid_t
nas_child_pid(const struct nas_child *ch)
{
	return ch->pid;
}

int
nas_child_count(void)
{
	int n = 0;

	for (struct nas_child *ch = children; ch != NULL; ch = ch->next)
		n++;
	return n;
}

void
nas_child_timeout(struct nas_child *ch, double seconds, double grace)
{
	if (ch->killing || ch->exited)
		return;
	ch->grace = grace;
	arm(ch, seconds);
}

void
nas_child_terminate(struct nas_child *ch, double grace)
{
	if (ch->killing || ch->exited)
		return;
	snprintf(ch->why, sizeof(ch->why), "killed: terminated");
	signal_group(ch, SIGTERM);
	arm(ch, grace);
}

void
nas_child_abandon(struct nas_child *ch, double grace)
{
	ch->cb = NULL;
	nas_child_terminate(ch, grace);
}

/* Reaps what has ended of each group; 1 when every group is gone. */
static int
reap_groups(void)
{
	struct nas_child *ch;
	int status, all = 1;

	for (ch = children; ch != NULL; ch = ch->next) {
		while (waitpid(-ch->pid, &status, WNOHANG) > 0)
			;
		if (group_alive(ch->pid))
			all = 0;
	}
	return all;
}

/* Polls every 10 ms for at most the grace; 1 when every group is gone. */
static int
wait_groups(double grace)
{
	struct timespec ts = { 0, 10 * 1000000L };

	for (long round = 0; !reap_groups(); round++) {
		if (round >= (long)(grace * 100))
			return 0;
		nanosleep(&ts, NULL);
	}
	return 1;
}

int
nas_spawn_stop_all(double grace)
{
	struct nas_child *ch;
	int left = 0;

	if (children == NULL)
		return 0;
	log_info("stopping %d child process%s", nas_child_count(),
	    nas_child_count() == 1 ? "" : "es");
	for (ch = children; ch != NULL; ch = ch->next)
		signal_group(ch, SIGTERM);
	if (!wait_groups(grace)) {
		for (ch = children; ch != NULL; ch = ch->next)
			signal_group(ch, SIGKILL);
		if (!wait_groups(grace))
			for (ch = children; ch != NULL; ch = ch->next)
				if (group_alive(ch->pid)) {
					log_warnx("child %ld: its process group "
					    "outlives SIGKILL", (long)ch->pid);
					left++;
				}
	}
	while ((ch = children) != NULL)
		child_free(ch);
	return left;
}
