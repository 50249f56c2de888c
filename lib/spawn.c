/*
 * Child processes on the event loop: a job that runs mkfs or similar
 * gets its exit status and what the child printed, without blocking.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

#define OUTPUT_KEPT	8192	/* the tail of the child's output we keep */

struct child {
	ev_child	 cw;
	ev_io		 io;
	nas_child_cb	 cb;
	void		*arg;
	int		 status, exited, eof;
	char		 out[OUTPUT_KEPT + 1];
	size_t		 len;
};

static void
child_finish(struct child *ch)
{
	if (!ch->exited || !ch->eof)
		return;
	ch->out[ch->len] = '\0';
	ch->cb(ch->status, ch->out, ch->arg);
	free(ch);
}

static void
child_io_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct child *ch = w->data;
	char buf[4096];
	ssize_t n;
	size_t keep;

	(void)revents;
	n = read(w->fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		/* Keep the tail: errors come last. */
		keep = (size_t)n > OUTPUT_KEPT ? OUTPUT_KEPT : (size_t)n;
		if (ch->len + keep > OUTPUT_KEPT) {
			size_t drop = ch->len + keep - OUTPUT_KEPT;
			memmove(ch->out, ch->out + drop, ch->len - drop);
			ch->len -= drop;
		}
		memcpy(ch->out + ch->len, buf + n - keep, keep);
		ch->len += keep;
		return;
	}
	ev_io_stop(l, w);
	close(w->fd);
	ch->eof = 1;
	child_finish(ch);
}

static void
child_exit_cb(struct ev_loop *l, ev_child *w, int revents)
{
	struct child *ch = w->data;

	(void)revents;
	ev_child_stop(l, w);
	ch->status = w->rstatus;
	ch->exited = 1;
	child_finish(ch);
}

int
nas_spawn(char *const argv[], nas_child_cb cb, void *arg)
{
	struct child *ch;
	int p[2];
	pid_t pid;

	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return -1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(ch);
		return -1;
	}
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		free(ch);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, STDIN_FILENO);
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ch->cb = cb;
	ch->arg = arg;
	ev_child_init(&ch->cw, child_exit_cb, pid, 0);
	ev_io_init(&ch->io, child_io_cb, p[0], EV_READ);
	ch->cw.data = ch->io.data = ch;
	ev_child_start(nas_loop(), &ch->cw);
	ev_io_start(nas_loop(), &ch->io);
	return 0;
}
