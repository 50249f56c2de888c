/*
 * The I/O engine. Sequential jobs share one offset counter; random jobs
 * draw block numbers from a per-thread xorshift generator. Latency is
 * the time of the system call (or from submission to completion on
 * io_uring); filling and checking the pattern is outside it but inside
 * the job's wall time and CPU seconds, as a copy tool's work would be.
 * A job of one pread/pwrite thread hands the pattern to a second thread
 * (pipe_worker), so its one request in flight follows the last as
 * closely as fio's psync job's do.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "engine.h"
#include "pattern.h"

#define END	UINT64_MAX

struct worker {
	const struct io_job	*job;
	_Atomic uint64_t	*next;		/* sequential offset / random op count */
	uint64_t		 rng;
	uint64_t		 mix;		/* write_pct's own generator */
	uint64_t		 t_end_ns;
	struct io_result	 r;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double
now_s(void)
{
	return (double)now_ns() / 1e9;
}

double
cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void
fail(struct io_result *r, int err, const char *what)
{
	if (r->err)
		return;
	r->err = err ? err : EIO;
	snprintf(r->what, sizeof(r->what), "%s", what);
}

/* The next offset to do, or END. */
static uint64_t
next_offset(struct worker *w)
{
	const struct io_job *j = w->job;
	uint64_t nblocks = j->span / j->bs, n;

	if (*j->stop || w->r.err)
		return END;
	if (!j->random) {
		n = atomic_fetch_add(w->next, j->bs);
		return n + j->bs <= j->span ? n : END;
	}
	if (j->seconds > 0) {
		if (now_ns() >= w->t_end_ns)
			return END;
	} else if (atomic_fetch_add(w->next, 1) >= nblocks)
		return END;
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (w->rng % nblocks) * j->bs;
}

/* Whether the next request is a write: the job's direction, or a draw. */
static int
next_is_write(struct worker *w)
{
	const struct io_job *j = w->job;

	if (j->write_pct <= 0)
		return j->write;
	w->mix ^= w->mix << 13;
	w->mix ^= w->mix >> 7;
	w->mix ^= w->mix << 17;
	return (int)(w->mix % 100) < j->write_pct;
}

/* Counts one finished transfer of len bytes taking ns: 0 when whole. */
static int
count(struct worker *w, int wr, ssize_t len, uint64_t ns)
{
	const struct io_job *j = w->job;

	if (len < 0) {
		fail(&w->r, (int)-len, wr ? "write" : "read");
		return -1;
	}
	if ((size_t)len != j->bs) {
		fail(&w->r, EIO, wr ? "short write" : "short read");
		return -1;
	}
	lat_add(&w->r.lat, ns);
	w->r.bytes += j->bs;
	w->r.ops++;
	w->r.writes += (uint64_t)wr;
	return 0;
}

/* Checks the block read at off into r. A write lays down the block's own
 * pattern, so a read racing it on another thread gets the same bytes,
 * old or new. */
static void
verify(const struct io_job *j, struct io_result *r, const void *buf, uint64_t off)
{
	int64_t bad;

	if ((bad = pattern_check(buf, j->bs, j->seed, j->file, off)) < 0)
		return;
	if (r->first_bad < 0 || (int64_t)off + bad < r->first_bad)
		r->first_bad = (int64_t)off + bad;
	r->bad_units++;
}

/* count(), then verify() a whole read in line. */
static void
account(struct worker *w, int wr, const void *buf, ssize_t len, uint64_t off, uint64_t ns)
{
	if (count(w, wr, len, ns) == 0 && !wr)
		verify(w->job, &w->r, buf, off);
}

static void *
sync_worker(void *arg)
{
	struct worker *w = arg;
	const struct io_job *j = w->job;
	struct pattern_buf pb = { 0 };
	uint64_t off, t0;
	ssize_t n;
	void *buf;
	int wr;

	if (posix_memalign(&buf, 4096, j->bs) != 0) {
		fail(&w->r, ENOMEM, "buffer");
		return NULL;
	}
	while ((off = next_offset(w)) != END) {
		if ((wr = next_is_write(w)))
			pattern_into(&pb, buf, j->bs, j->seed, j->file, off);
		else
			pb.held = 0;	/* the read overwrites it */
		t0 = now_ns();
		n = wr ? pwrite(j->fd, buf, j->bs, (off_t)off) :
		    pread(j->fd, buf, j->bs, (off_t)off);
		account(w, wr, buf, n < 0 ? -errno : n, off, now_ns() - t0);
	}
	free(buf);
	return NULL;
}

/*
 * One pread/pwrite thread and a pattern thread over PIPE_BUFS buffers
 * taken in turn. The I/O thread gives each buffer its offset; for a
 * write the pattern thread fills it first, for a read it checks it
 * after. The device still sees fio's psync job, one request at a time
 * in the same order; what changes is that no request waits for the
 * pattern of the one before (under qemu TCG that wait cost a third of
 * seq-max's figure, Decision 130). The job's wall time still ends after
 * the last check.
 */
#define PIPE_BUFS	3

enum { B_FREE, B_FILL, B_READY, B_CHECK };

struct pipe {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct worker	*w;
	void		*buf[PIPE_BUFS];
	struct pattern_buf pb[PIPE_BUFS];	/* a write's: what buf holds */
	uint64_t	 off[PIPE_BUFS];
	int		 state[PIPE_BUFS];
	int		 done;		/* the I/O thread hands out no more */
	struct io_result checked;	/* the pattern thread's bad_units, first_bad */
};

/* Waits until buffer i is in state st; 0 when done came first. */
static int
pipe_wait(struct pipe *p, int i, int st)
{
	pthread_mutex_lock(&p->mu);
	while (p->state[i] != st && !p->done)
		pthread_cond_wait(&p->cv, &p->mu);
	st = p->state[i] == st;
	pthread_mutex_unlock(&p->mu);
	return st;
}

static void
pipe_set(struct pipe *p, int i, int st)
{
	pthread_mutex_lock(&p->mu);
	p->state[i] = st;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* The pattern thread: buffers in the I/O thread's order. */
static void *
pattern_worker(void *arg)
{
	struct pipe *p = arg;
	const struct io_job *j = p->w->job;

	for (uint64_t n = 0;; n++) {
		int i = (int)(n % PIPE_BUFS);

		if (!pipe_wait(p, i, j->write ? B_FILL : B_CHECK))
			break;
		if (j->write) {
			pattern_into(&p->pb[i], p->buf[i], j->bs, j->seed, j->file, p->off[i]);
			pipe_set(p, i, B_READY);
		} else {
			verify(j, &p->checked, p->buf[i], p->off[i]);
			pipe_set(p, i, B_FREE);
		}
	}
	return NULL;
}

/* One transfer of buffer i at off, counted: 0 when whole. */
static int
pipe_transfer(struct pipe *p, int i, uint64_t off)
{
	const struct io_job *j = p->w->job;
	uint64_t t0 = now_ns();
	ssize_t n;

	n = j->write ? pwrite(j->fd, p->buf[i], j->bs, (off_t)off) :
	    pread(j->fd, p->buf[i], j->bs, (off_t)off);
	return count(p->w, j->write, n < 0 ? -errno : n, now_ns() - t0);
}

/* Write: buffers get their offsets up to PIPE_BUFS ahead, and each is
 * written once filled. */
static void
pipe_write(struct pipe *p)
{
	uint64_t head = 0, tail = 0, off;
	int i;

	for (;; head++) {
		while (tail - head < PIPE_BUFS && (off = next_offset(p->w)) != END) {
			p->off[tail % PIPE_BUFS] = off;
			pipe_set(p, (int)(tail++ % PIPE_BUFS), B_FILL);
		}
		if (head == tail)
			return;
		i = (int)(head % PIPE_BUFS);
		pipe_wait(p, i, B_READY);
		if (pipe_transfer(p, i, p->off[i]) == -1)
			return;
		pipe_set(p, i, B_FREE);
	}
}

/* Read: each read goes to the next buffer the pattern thread freed. */
static void
pipe_read(struct pipe *p)
{
	uint64_t off;
	int i;

	for (uint64_t head = 0; (off = next_offset(p->w)) != END; head++) {
		i = (int)(head % PIPE_BUFS);
		pipe_wait(p, i, B_FREE);
		if (pipe_transfer(p, i, off) == -1)
			return;
		p->off[i] = off;
		pipe_set(p, i, B_CHECK);
	}
}

/* A lone pread/pwrite thread with its pattern thread; in line without. */
static void *
pipe_worker(void *arg)
{
	struct worker *w = arg;
	struct pipe p;
	pthread_t tid;
	int i;

	memset(&p, 0, sizeof(p));
	p.w = w;
	p.checked.first_bad = -1;
	for (i = 0; i < PIPE_BUFS; i++)
		if (posix_memalign(&p.buf[i], 4096, w->job->bs) != 0)
			break;
	if (i < PIPE_BUFS || pthread_mutex_init(&p.mu, NULL) != 0) {
		while (i-- > 0)
			free(p.buf[i]);
		return sync_worker(w);
	}
	pthread_cond_init(&p.cv, NULL);
	if (pthread_create(&tid, NULL, pattern_worker, &p) != 0) {
		for (i = 0; i < PIPE_BUFS; i++)
			free(p.buf[i]);
		pthread_cond_destroy(&p.cv);
		pthread_mutex_destroy(&p.mu);
		return sync_worker(w);
	}
	if (w->job->write)
		pipe_write(&p);
	else
		pipe_read(&p);
	pthread_mutex_lock(&p.mu);
	p.done = 1;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.mu);
	pthread_join(tid, NULL);
	w->r.bad_units += p.checked.bad_units;
	if (p.checked.first_bad >= 0)
		w->r.first_bad = p.checked.first_bad;
	for (i = 0; i < PIPE_BUFS; i++)
		free(p.buf[i]);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	return NULL;
}

struct slot {
	void		*buf;
	struct pattern_buf pb;		/* a write's: what buf holds */
	uint64_t	 off;
	uint64_t	 t0;
};

/* Queues slot s for its next offset; 0 when there is none. */
static int
uring_queue(struct io_uring *ring, struct worker *w, struct slot *s)
{
	const struct io_job *j = w->job;
	struct io_uring_sqe *sqe;

	if ((s->off = next_offset(w)) == END || (sqe = io_uring_get_sqe(ring)) == NULL)
		return 0;
	if (j->write) {
		pattern_into(&s->pb, s->buf, j->bs, j->seed, j->file, s->off);
		io_uring_prep_write(sqe, j->fd, s->buf, j->bs, s->off);
	} else
		io_uring_prep_read(sqe, j->fd, s->buf, j->bs, s->off);
	io_uring_sqe_set_data(sqe, s);
	s->t0 = now_ns();
	return 1;
}

/* Submits the one request queued: 1 when it went in flight.  Like fio's
 * commit, the same system call runs the completions deferred so far. */
static int
uring_submit(struct io_uring *ring, struct worker *w)
{
	int rc;

	while ((rc = io_uring_submit_and_get_events(ring)) == -EINTR)
		;
	if (rc < 0) {
		fail(&w->r, -rc, "io_uring_submit");
		return 0;
	}
	w->r.submits++;
	return rc;
}

/*
 * The ring as fio's io_uring engine sets it up (fio 3.33, seen with
 * strace): a CQ as deep as the queue, completions run only when this
 * thread enters the kernel (COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN),
 * each dropped in turn where the kernel refuses it.  Completion work
 * deferred to the reaper instead of interrupting it is part of the job:
 * without it the self-test read 1.6x fio's IOPS under emulation.
 */
static int
uring_init(struct io_uring *ring, unsigned qd)
{
	static const unsigned drop[] = {
		0,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_CQSIZE,
	};
	unsigned flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN |
	    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	struct io_uring_params p;
	int rc = -EINVAL;

	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]) && rc == -EINVAL; i++) {
		flags &= ~drop[i];
		memset(&p, 0, sizeof(p));
		p.flags = flags;
		p.cq_entries = qd;
		rc = io_uring_queue_init_params(qd, ring, &p);
	}
	return rc;
}

static void *
uring_worker(void *arg)
{
	struct worker *w = arg;
	const struct io_job *j = w->job;
	struct slot slot[ENGINE_MAX_QD];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int inflight = 0, rc, qd = j->qd;

	memset(slot, 0, sizeof(slot));
	if ((rc = uring_init(&ring, (unsigned)qd)) < 0) {
		fail(&w->r, -rc, "io_uring_queue_init");
		return NULL;
	}
	for (int i = 0; i < qd; i++)
		if (posix_memalign(&slot[i].buf, 4096, j->bs) != 0) {
			fail(&w->r, ENOMEM, "buffer");
			goto out;
		}
	/*
	 * As fio's io_uring engine with its defaults (iodepth_batch_submit=1,
	 * iodepth_batch_complete_min=1): each request is submitted as soon as
	 * it is ready, one io_uring_enter each, and the loop waits for one
	 * completion and reaps what has completed. Submitting the refills of a
	 * reap in one call saves a system call per request, which under
	 * emulation counted 3x fio's IOPS: a different job, not a faster disk.
	 */
	for (int i = 0; i < qd && uring_queue(&ring, w, &slot[i]); i++)
		inflight += uring_submit(&ring, w);
	while (inflight > 0) {
		if ((rc = io_uring_wait_cqe(&ring, &cqe)) < 0) {
			if (rc == -EINTR)
				continue;
			fail(&w->r, -rc, "io_uring_wait_cqe");
			break;
		}
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			struct slot *s = io_uring_cqe_get_data(cqe);

			account(w, j->write, s->buf, cqe->res, s->off, now_ns() - s->t0);
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
			if (uring_queue(&ring, w, s))
				inflight += uring_submit(&ring, w);
		}
	}
	/* An error above may leave requests in flight: they finish first. */
	while (inflight > 0 && io_uring_wait_cqe(&ring, &cqe) == 0) {
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
out:
	io_uring_queue_exit(&ring);
	for (int i = 0; i < qd; i++)
		free(slot[i].buf);
	return NULL;
}

int
io_run(const struct io_job *j, struct io_result *res)
{
	struct worker *w;
	pthread_t tid[ENGINE_MAX_THREADS];
	_Atomic uint64_t next = 0;
	int n = j->qd > 1 ? 1 : j->threads, started = 0;
	uint64_t t0;

	memset(res, 0, sizeof(*res));
	res->first_bad = -1;
	if (n < 1 || n > ENGINE_MAX_THREADS || j->qd > ENGINE_MAX_QD || j->bs == 0 ||
	    j->bs % PATTERN_UNIT || j->span < j->bs || j->write_pct < 0 || j->write_pct > 99 ||
	    (j->write_pct > 0 && j->qd > 1)) {
		fail(res, EINVAL, "job");
		return -1;
	}
	if ((w = calloc((size_t)n, sizeof(*w))) == NULL) {
		fail(res, ENOMEM, "workers");
		return -1;
	}
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		w[i].job = j;
		w[i].next = &next;
		/* Reads draw other offsets than the writes before them: the
		 * writes' own sequence would read back what a write cache
		 * (the disk's, or the host's under a virtual disk) still holds. */
		w[i].rng = (0x2545f4914f6cdd1dULL * (uint64_t)(i + 1) ^ j->seed) +
		    (j->write ? 0 : 0x9e3779b97f4a7c15ULL);
		if (w[i].rng == 0)
			w[i].rng = 1;	/* xorshift stays at 0 */
		w[i].mix = w[i].rng ^ 0xd1b54a32d192ed03ULL;
		if (w[i].mix == 0)
			w[i].mix = 1;
		w[i].t_end_ns = t0 + (uint64_t)(j->seconds * 1e9);
		w[i].r.first_bad = -1;
		if (pthread_create(&tid[i], NULL, j->qd > 1 ? uring_worker :
		    n == 1 && j->write_pct == 0 ? pipe_worker : sync_worker, &w[i]) != 0) {
			fail(res, EAGAIN, "pthread_create");
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
		res->bytes += w[i].r.bytes;
		res->ops += w[i].r.ops;
		res->writes += w[i].r.writes;
		res->bad_units += w[i].r.bad_units;
		res->submits += w[i].r.submits;
		lat_merge(&res->lat, &w[i].r.lat);
		if (w[i].r.first_bad >= 0 &&
		    (res->first_bad < 0 || w[i].r.first_bad < res->first_bad))
			res->first_bad = w[i].r.first_bad;
		if (w[i].r.err)
			fail(res, w[i].r.err, w[i].r.what);
	}
	if (j->write && j->fsync_end && !res->err && fsync(j->fd) == -1)
		fail(res, errno, "fsync");
	res->seconds = (double)(now_ns() - t0) / 1e9;
	free(w);
	return 0;
}
