/*
 * The standby command off the event loop. A disk takes up to
 * SG_TIMEOUT_MS (15 s) to flush its cache and spin down, and powerd
 * must answer power.status, drive.list and events meanwhile. One worker
 * thread per command owns only a copy of the disk's name (it opens and
 * closes the device itself, through drive_ops) and reports back through
 * a pipe that the loop watches; everything else stays on the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerd.h"

/* What a worker writes back: one write, smaller than PIPE_BUF (atomic). */
struct standby_req {
	int	bay;
	int	ata;
	int	err;		/* 0: the disk took the command */
	char	name[32];
};

static int pipefd[2] = { -1, -1 };
static ev_io pipe_w;
static int inflight;

static void *
worker(void *arg)
{
	struct standby_req *r = arg;
	ssize_t n;

	r->err = drive_ops->standby(r->name, r->ata) == -1 ? errno : 0;
	/* The read end is never closed before the process exits. */
	do
		n = write(pipefd[1], r, sizeof(*r));
	while (n == -1 && errno == EINTR);
	free(r);
	return NULL;
}

static void
pipe_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct standby_req r;
	ssize_t n;

	(void)l;
	(void)w;
	(void)revents;
	while ((n = read(pipefd[0], &r, sizeof(r))) == (ssize_t)sizeof(r)) {
		inflight--;
		r.name[sizeof(r.name) - 1] = '\0';
		drive_standby_done(r.bay, r.name, r.err);
	}
}

static int
pipe_open(void)
{
	if (pipefd[0] != -1)
		return 0;
	if (pipe2(pipefd, O_CLOEXEC) == -1)
		return -1;
	/* The loop never waits on the pipe; a worker may (PIPE_BUF is plenty). */
	if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) == -1) {
		close(pipefd[0]);
		close(pipefd[1]);
		pipefd[0] = pipefd[1] = -1;
		return -1;
	}
	ev_io_init(&pipe_w, pipe_cb, pipefd[0], EV_READ);
	ev_io_start(nas_loop(), &pipe_w);
	return 0;
}

int
standby_start(int bay, const char *name, int ata)
{
	struct standby_req *r;
	pthread_attr_t attr;
	pthread_t t;
	int e;

	if (pipe_open() == -1)
		return -1;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return -1;
	r->bay = bay;
	r->ata = ata;
	if (pathf(r->name, sizeof(r->name), "%s", name) == -1) {
		free(r);
		errno = ENAMETOOLONG;
		return -1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, worker, r);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		free(r);
		errno = e;
		return -1;
	}
	inflight++;
	return 0;
}

int
standby_inflight(void)
{
	return inflight;
}
