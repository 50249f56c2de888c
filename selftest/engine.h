/*
 * engine.c: the I/O engine. One job is one direction of one workload on
 * one open file: threads of pread/pwrite at queue depth 1, or one thread
 * driving io_uring (liburing) at a deeper queue. Every write carries the
 * pattern; every read is checked against it.
 */
#ifndef SELFTEST_ENGINE_H
#define SELFTEST_ENGINE_H

#include <signal.h>
#include <stdint.h>

#include "stats.h"

#define ENGINE_MAX_THREADS	64
#define ENGINE_MAX_QD		256

struct io_job {
	int		 fd;
	uint64_t	 seed;
	uint64_t	 file;		/* the pattern's file number */
	int		 write;
	int		 write_pct;	/* 1..99: each request a write with this chance, else
					 * a read (threads at queue depth 1 only) */
	int		 random;	/* random block offsets, else sequential */
	uint32_t	 bs;		/* a multiple of PATTERN_UNIT */
	uint64_t	 span;		/* bytes of the file the job covers */
	int		 threads;	/* pread/pwrite threads (qd 1 each) */
	int		 qd;		/* > 1: one io_uring thread */
	double		 seconds;	/* random: run this long; 0: one pass */
	int		 fsync_end;	/* write: fsync before the clock stops */
	volatile sig_atomic_t *stop;	/* set by a signal: end early */
};

struct io_result {
	uint64_t	 bytes;
	uint64_t	 ops;
	uint64_t	 writes;	/* of the ops */
	double		 seconds;
	struct lat_hist	 lat;
	uint64_t	 bad_units;	/* reads that did not verify */
	uint64_t	 submits;	/* io_uring submissions (one per request, as fio) */
	int64_t		 first_bad;	/* file offset of the first, or -1 */
	int		 err;		/* errno of the first failed call, 0 */
	char		 what[64];	/* the call that failed */
};

/* 0 when the job ran (verification failures included), -1 on an
 * error of the engine itself (res->err set). */
int	io_run(const struct io_job *, struct io_result *);
/* Monotonic seconds. */
double	now_s(void);
/* CPU seconds (user + system) of the whole process so far. */
double	cpu_s(void);

#endif
