/*
 * Every sensor read, off the event loop. A sysfs read of an I2C or SMBus
 * sensor runs the driver's bus transfer in the reading thread and cannot
 * be interrupted: a hung bus holds it for seconds. powerd must answer
 * power.status, drive.list, run the standby timers and write its metrics
 * meanwhile, so the loop's timer only starts a worker and reads its
 * answer from a pipe (as diskio.c does for the disks).
 *
 * The worker gets a copy of every sensor and of the sysfs root, reads the
 * copies and hands them back whole (a pointer through the pipe); nothing
 * it touches is the loop's. At most one worker: when the timer comes
 * round and the last one has not answered, no other is started, the
 * sensors it is reading are shown "stalled" (never 0 W), and that sample
 * is finished without them. The late answer, when it comes, is shown in
 * sensor.list but finishes no sample (its time is past), and the
 * counters read in it start over: no energy is counted across a stall.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerd.h"

struct sample_req {
	unsigned	seq;
	double		now;
	int		n;
	char		top[PATH_MAX];
	struct sensor	s[];		/* n of them */
};

void (*sampler_reader)(const char *, struct sensor *, double) = sensor_read_in;

static int pipefd[2] = { -1, -1 };
static ev_io pipe_w;
static unsigned seq;		/* of the worker in flight */
static int busy, stalled;

static void *
worker(void *arg)
{
	struct sample_req *r = arg;
	ssize_t n;

	for (int i = 0; i < r->n; i++)
		sampler_reader(r->top, &r->s[i], r->now);
	/* One pointer: one atomic write. The read end is never closed. */
	do
		n = write(pipefd[1], &r, sizeof(r));
	while (n == -1 && errno == EINTR);
	return NULL;
}

/* What a read found, onto the loop's sensor of the same name and file. */
static void
take(const struct sensor *got, int stale)
{
	struct sensor *s = sensor_find(&power.sensors, got->name);

	/* Gone or replaced by a rescan meanwhile: not its reading. */
	if (s == NULL || strcmp(s->path, got->path) != 0 || s->kind != got->kind)
		return;
	sensor_take_reading(s, got);
	if (stale && (s->kind == SK_ENERGY || s->kind == SK_RAPL)) {
		/* Its rate spans the stall: the next count starts over. */
		s->count_at = 0;
		s->have_watts = 0;
	}
}

static void
answer(struct sample_req *r)
{
	struct sensor *src;
	double j0 = -1;
	int stale;

	if (!busy || r->seq != seq) {
		free(r);
		return;
	}
	stale = stalled;
	busy = stalled = 0;
	if ((src = sensor_find(&power.sensors, power.model.sensor)) != NULL)
		j0 = src->joules;
	for (int i = 0; i < r->n; i++)
		take(&r->s[i], stale);
	free(r);
	if (!stale)
		power_sample_done(j0);
}

static void
drain(void)
{
	struct sample_req *r;

	while (read(pipefd[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
		answer(r);
}

static void
pipe_cb(struct ev_loop *l, ev_io *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	drain();
}

int
worker_pipe(int fd[2], ev_io *w, void (*cb)(struct ev_loop *, ev_io *, int))
{
	if (fd[0] != -1)
		return 0;
	if (pipe2(fd, O_CLOEXEC) == -1)
		return -1;
	/* The loop never waits on the pipe; a worker may (PIPE_BUF is plenty). */
	if (fcntl(fd[0], F_SETFL, O_NONBLOCK) == -1) {
		close(fd[0]);
		close(fd[1]);
		fd[0] = fd[1] = -1;
		return -1;
	}
	ev_io_init(w, cb, fd[0], EV_READ);
	ev_io_start(nas_loop(), w);
	return 0;
}

int
worker_start(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	int e;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		free(arg);
		errno = e;
		return -1;
	}
	return 0;
}

int
sampler_start(double now)
{
	struct sample_req *r;

	if (busy) {
		errno = EBUSY;
		return -1;
	}
	if (worker_pipe(pipefd, &pipe_w, pipe_cb) == -1 || (r = malloc(sizeof(*r) +
	    (size_t)power.sensors.n * sizeof(r->s[0]))) == NULL)
		return -1;
	r->seq = seq + 1;
	r->now = now;
	r->n = power.sensors.n;
	memcpy(r->s, power.sensors.s, (size_t)r->n * sizeof(r->s[0]));
	if (pathf(r->top, sizeof(r->top), "%s", sensor_root()) == -1) {
		free(r);
		errno = ENAMETOOLONG;
		return -1;
	}
	if (worker_start(worker, r) == -1)
		return -1;	/* r freed */
	seq++;
	busy = 1;
	stalled = 0;
	return 0;
}

int
sampler_busy(void)
{
	return busy;
}

void
sampler_stall(void)
{
	if (!busy)
		return;
	stalled = 1;
	for (int i = 0; i < power.sensors.n; i++) {
		struct sensor *s = &power.sensors.s[i];

		s->status = RD_STALLED;
		s->value = NAN;
		s->have_watts = 0;
	}
}

void
sampler_wait(int ms)
{
	struct pollfd p;

	if (!busy || pipefd[0] == -1)
		return;
	p.fd = pipefd[0];
	p.events = POLLIN;
	if (poll(&p, 1, ms) == 1)
		drain();
}
