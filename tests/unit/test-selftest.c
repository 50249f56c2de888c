/*
 * Unit tests for nas-selftest's logic: the pattern and its verifier,
 * the engine on a plain file (a corrupted block fails), percentiles,
 * the knee, energy per phase, limits, the JSON record and the table.
 */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selftest/engine.h"
#include "selftest/pattern.h"
#include "selftest/selftest.h"
#include "selftest/stats.h"
#include "unit-util.h"

static volatile sig_atomic_t no_stop;

START_TEST(pattern_roundtrip)
{
	static char buf[64 * 1024];

	pattern_fill(buf, sizeof(buf), 42, 7, 1 << 20);
	ck_assert_int_eq(pattern_check(buf, sizeof(buf), 42, 7, 1 << 20), -1);
	/* Any other seed, file or offset reads as wrong data. */
	ck_assert_int_eq(pattern_check(buf, sizeof(buf), 43, 7, 1 << 20), 0);
	ck_assert_int_eq(pattern_check(buf, sizeof(buf), 42, 8, 1 << 20), 0);
	ck_assert_int_eq(pattern_check(buf, sizeof(buf), 42, 7, (1 << 20) + PATTERN_UNIT), 0);
}
END_TEST

START_TEST(pattern_every_bit)
{
	static char buf[4096];

	pattern_fill(buf, sizeof(buf), 1, 2, 0);
	/* One flipped bit anywhere is found, in the right unit. */
	for (size_t bit = 0; bit < sizeof(buf) * 8; bit += 61) {
		buf[bit / 8] ^= (char)(1 << (bit % 8));
		ck_assert_int_eq(pattern_check(buf, sizeof(buf), 1, 2, 0),
		    (int64_t)(bit / 8 / PATTERN_UNIT * PATTERN_UNIT));
		buf[bit / 8] ^= (char)(1 << (bit % 8));
	}
	ck_assert_int_eq(pattern_check(buf, sizeof(buf), 1, 2, 0), -1);
}
END_TEST

START_TEST(pattern_units_differ)
{
	static char a[PATTERN_UNIT], z[PATTERN_UNIT];

	/* Zeroes (a lost write on a fresh disk) and a swapped unit both fail. */
	ck_assert_int_eq(pattern_check(z, sizeof(z), 5, 5, 0), 0);
	pattern_fill(a, sizeof(a), 5, 5, PATTERN_UNIT);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 5, 5, 0), 0);
	ck_assert_int_ne(memcmp(a, z, sizeof(a)), 0);
}
END_TEST

/* A whole block written for another place, another file or another run
 * (the misplaced or stale block a disk or a filesystem can return) fails
 * in its first unit; one unit of it in place fails at that unit. */
START_TEST(pattern_misplaced_block)
{
	static char a[4096], b[4096];

	pattern_fill(a, sizeof(a), 9, 4, 7 * 4096);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 9, 4, 7 * 4096), -1);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 9, 4, 3 * 4096), 0);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 9, 5, 7 * 4096), 0);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 10, 4, 7 * 4096), 0);
	pattern_fill(b, sizeof(b), 9, 4, 3 * 4096);
	memcpy(a + 5 * PATTERN_UNIT, b + 5 * PATTERN_UNIT, PATTERN_UNIT);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 9, 4, 7 * 4096), 5 * PATTERN_UNIT);
	/* The last word of the last unit is checked too. */
	pattern_fill(a, sizeof(a), 9, 4, 7 * 4096);
	a[sizeof(a) - 1] ^= 0x40;
	ck_assert_int_eq(pattern_check(a, sizeof(a), 9, 4, 7 * 4096), 7 * PATTERN_UNIT);
}
END_TEST

/* A block of the same phase a whole period away (the same body) fails by
 * its stamps alone, in every unit. */
START_TEST(pattern_period_away)
{
	static char a[4096], b[4096];

	pattern_fill(a, sizeof(a), 3, 1, 5 * 4096);
	pattern_fill(b, sizeof(b), 3, 1, 5 * 4096 + PATTERN_PERIOD);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 3, 1, 5 * 4096 + PATTERN_PERIOD), 0);
	for (size_t u = 0; u < sizeof(a); u += PATTERN_UNIT) {
		/* The units differ in their first word only. */
		ck_assert_int_ne(memcmp(a + u, b + u, 8), 0);
		ck_assert_int_eq(memcmp(a + u + 8, b + u + 8, PATTERN_UNIT - 8), 0);
		memcpy(a + u, b + u, PATTERN_UNIT);
		ck_assert_int_eq(pattern_check(a, sizeof(a), 3, 1, 5 * 4096), (int64_t)u);
		pattern_fill(a, sizeof(a), 3, 1, 5 * 4096);
	}
}
END_TEST

/* pattern_into writes what pattern_fill would, rewriting the stamps only
 * where the buffer holds the phase's body, and all of it otherwise. */
START_TEST(pattern_into_restamps)
{
	static char a[8192], want[8192];
	struct pattern_buf pb = { 0 };
	uint64_t off = 3 * PATTERN_PERIOD + 4096;

	pattern_into(&pb, a, sizeof(a), 11, 2, 4096);
	pattern_fill(want, sizeof(want), 11, 2, 4096);
	ck_assert_int_eq(memcmp(a, want, sizeof(a)), 0);
	/* Same phase, another file and period: equal to a full fill. */
	pattern_into(&pb, a, sizeof(a), 11, 9, off);
	pattern_fill(want, sizeof(want), 11, 9, off);
	ck_assert_int_eq(memcmp(a, want, sizeof(a)), 0);
	/* Only the stamps were written: a body changed behind pb's back stays. */
	a[3 * PATTERN_UNIT + 100] ^= 1;
	pattern_into(&pb, a, sizeof(a), 11, 9, off + PATTERN_PERIOD);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 11, 9, off + PATTERN_PERIOD),
	    3 * PATTERN_UNIT);
	/* Forgotten (a read went into it), the whole buffer is written. */
	pb.held = 0;
	pattern_into(&pb, a, sizeof(a), 11, 9, off + PATTERN_PERIOD);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 11, 9, off + PATTERN_PERIOD), -1);
	/* Another phase, seed or length is a full fill. */
	a[100] ^= 1;
	a[sizeof(a) - 1] ^= 1;
	pattern_into(&pb, a, sizeof(a), 11, 9, off + PATTERN_UNIT);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 11, 9, off + PATTERN_UNIT), -1);
	a[100] ^= 1;
	pattern_into(&pb, a, sizeof(a), 12, 9, off + PATTERN_UNIT);
	ck_assert_int_eq(pattern_check(a, sizeof(a), 12, 9, off + PATTERN_UNIT), -1);
	a[100] ^= 1;
	pattern_into(&pb, a, 4096, 12, 9, off + PATTERN_UNIT);
	ck_assert_int_eq(pattern_check(a, 4096, 12, 9, off + PATTERN_UNIT), -1);
}
END_TEST

static char *
tmpfile_of(size_t size)
{
	char *path = strdup("/tmp/test-selftest.XXXXXX");
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
	return path;
}

static void
job_on(struct io_job *j, int fd, int write, int random)
{
	memset(j, 0, sizeof(*j));
	j->fd = fd;
	j->seed = 99;
	j->file = 3;
	j->write = write;
	j->random = random;
	j->bs = 4096;
	j->span = 1 << 20;
	j->threads = 4;
	j->qd = 1;
	j->stop = &no_stop;
}

static void
engine_case(int qd)
{
	char *path = tmpfile_of(1 << 20);
	struct io_result r;
	struct io_job j;
	char junk[512];
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	job_on(&j, fd, 1, 0);
	j.qd = qd;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_int_eq(r.err, 0);
	ck_assert_uint_eq(r.bytes, 1 << 20);
	ck_assert_uint_eq(r.ops, 256);
	/* Random reads of a whole pass all verify. */
	job_on(&j, fd, 0, 1);
	j.qd = qd;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_int_eq(r.err, 0);
	ck_assert_uint_eq(r.ops, 256);
	ck_assert_uint_eq(r.bad_units, 0);
	ck_assert_uint_eq(r.lat.count, 256);
	/* io_uring: one submission per request, as fio's job (iodepth_batch_submit=1). */
	ck_assert_uint_eq(r.submits, qd > 1 ? 256 : 0);
	/* One corrupted unit: a sequential read finds it at its offset. */
	memset(junk, 0xa5, sizeof(junk));
	ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), 5 * 4096 + 1024), (ssize_t)sizeof(junk));
	job_on(&j, fd, 0, 0);
	j.qd = qd;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_uint_eq(r.bad_units, 1);
	ck_assert_int_eq(r.first_bad, 5 * 4096 + 1024);
	close(fd);
	unlink(path);
	free(path);
}

/*
 * One pread/pwrite thread with its pattern thread (seq-max's job): a
 * sequential write of 1 MiB blocks reads back whole; a block copied over
 * another (misplaced) and a flipped byte are both found, the first at
 * the lowest offset.
 */
START_TEST(engine_one_thread)
{
	const size_t mib = 1 << 20, size = 8 * mib;
	char *path = tmpfile_of(size), *blk = malloc(mib);
	struct io_result r;
	struct io_job j;
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(blk);
	job_on(&j, fd, 1, 0);
	j.threads = 1;
	j.bs = (uint32_t)mib;
	j.span = size;
	j.fsync_end = 1;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_int_eq(r.err, 0);
	ck_assert_uint_eq(r.bytes, size);
	ck_assert_uint_eq(r.ops, 8);
	j.write = 0;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_int_eq(r.err, 0);
	ck_assert_uint_eq(r.ops, 8);
	ck_assert_uint_eq(r.bad_units, 0);
	ck_assert_int_eq(r.first_bad, -1);
	/* block 2 written over block 6, one byte of blocks 4 and 7 flipped:
	   three bad, the first one told */
	ck_assert_int_eq(pread(fd, blk, mib, 2 * mib), (ssize_t)mib);
	ck_assert_int_eq(pwrite(fd, blk, mib, 6 * mib), (ssize_t)mib);
	ck_assert_int_eq(pread(fd, blk, 1, 4 * mib + 3000), 1);
	blk[0] ^= 1;
	ck_assert_int_eq(pwrite(fd, blk, 1, 4 * mib + 3000), 1);
	ck_assert_int_eq(pread(fd, blk, 1, 7 * mib + 10), 1);
	blk[0] ^= 1;
	ck_assert_int_eq(pwrite(fd, blk, 1, 7 * mib + 10), 1);
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_uint_eq(r.bad_units, 3);
	ck_assert_int_eq(r.first_bad, 4 * mib + 3000 / PATTERN_UNIT * PATTERN_UNIT);
	close(fd);
	unlink(path);
	free(path);
	free(blk);
}
END_TEST

START_TEST(engine_threads) { engine_case(1); }
END_TEST

START_TEST(engine_uring) { engine_case(16); }
END_TEST

/*
 * The random read run draws other blocks than the write run before it:
 * replaying the writes' offsets in their order reads what a disk's write
 * cache (or the host's page cache under a virtual disk) still holds, and
 * counted 3x fio's IOPS. A zero file, a random write pass over part of
 * it, then a random read pass of the same job: blocks the writes never
 * touched read as zeroes, so reads that did not verify prove the read
 * went elsewhere (with the writes' own sequence every read verified).
 */
static void
random_read_elsewhere(int qd)
{
	char *path = tmpfile_of(1 << 20);
	struct io_result r;
	struct io_job j;
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	job_on(&j, fd, 1, 1);
	j.threads = 1;
	j.qd = qd;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_uint_eq(r.ops, 256);
	job_on(&j, fd, 0, 1);
	j.threads = 1;
	j.qd = qd;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_uint_eq(r.ops, 256);
	ck_assert_uint_gt(r.bad_units, 0);
	close(fd);
	unlink(path);
	free(path);
}

START_TEST(engine_read_not_replayed) { random_read_elsewhere(1); random_read_elsewhere(16); }
END_TEST

/* The load curve's clients: a read/write mix on pread/pwrite threads,
 * every read checked (a write lays down the block's own pattern). */
START_TEST(engine_mix)
{
	char *path = tmpfile_of(1 << 20);
	struct io_result r;
	struct io_job j;
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	job_on(&j, fd, 1, 0);
	ck_assert_int_eq(io_run(&j, &r), 0);
	job_on(&j, fd, 0, 1);
	j.write_pct = 20;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_int_eq(r.err, 0);
	ck_assert_uint_eq(r.ops, 256);
	ck_assert_uint_eq(r.bad_units, 0);
	/* about a fifth writes (51 expected; 4 sigma is 26) */
	ck_assert_uint_gt(r.writes, 25);
	ck_assert_uint_lt(r.writes, 77);
	ck_assert(lat_mean_us(&r.lat) > 0);
	/* the file still reads back whole */
	job_on(&j, fd, 0, 0);
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_uint_eq(r.bad_units, 0);
	ck_assert_uint_eq(r.writes, 0);
	/* a mix is for threads at queue depth 1; a share of 100 % is no mix */
	job_on(&j, fd, 0, 1);
	j.write_pct = 20;
	j.qd = 16;
	ck_assert_int_eq(io_run(&j, &r), -1);
	j.qd = 1;
	j.write_pct = 100;
	ck_assert_int_eq(io_run(&j, &r), -1);
	close(fd);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(engine_short_file)
{
	char *path = tmpfile_of(8192);
	struct io_result r;
	struct io_job j;
	int fd = open(path, O_RDONLY);

	/* Reading past the end is an error, never a pass with fewer bytes.
	 * One thread hands its reads to a pattern thread: the two blocks
	 * before the end (zeroes) are still checked, and nothing hangs. */
	job_on(&j, fd, 0, 0);
	j.threads = 1;
	ck_assert_int_eq(io_run(&j, &r), 0);
	ck_assert_int_ne(r.err, 0);
	ck_assert_str_eq(r.what, "short read");
	ck_assert_uint_eq(r.ops, 2);
	ck_assert_uint_eq(r.bad_units, 2);
	ck_assert_int_eq(r.first_bad, 0);
	j.bs = 1000;			/* not a whole pattern unit */
	ck_assert_int_eq(io_run(&j, &r), -1);
	close(fd);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(percentiles)
{
	static struct lat_hist h;

	memset(&h, 0, sizeof(h));
	ck_assert(lat_percentile_us(&h, 0.5) == 0);
	for (uint64_t v = 1; v <= 100000; v++)
		lat_add(&h, v * 1000);		/* 1 us .. 100 ms */
	ck_assert_uint_eq(h.count, 100000);
	/* Buckets are under 3.2 % wide: the middle is within 1.6 %. */
	ck_assert(fabs(lat_percentile_us(&h, 0.50) - 50000) / 50000 < 0.016);
	ck_assert(fabs(lat_percentile_us(&h, 0.99) - 99000) / 99000 < 0.016);
	ck_assert(fabs(lat_percentile_us(&h, 0.999) - 99900) / 99900 < 0.016);
	ck_assert(lat_percentile_us(&h, 1.0) <= 100000);
	/* Small values are exact. */
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 99; i++)
		lat_add(&h, 10);
	lat_add(&h, 1000000);
	ck_assert(lat_percentile_us(&h, 0.99) == 0.010);
	ck_assert(fabs(lat_percentile_us(&h, 0.999) - 1000) / 1000 < 0.016);
}
END_TEST

START_TEST(merge)
{
	static struct lat_hist a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	lat_add(&a, 100);
	lat_add(&b, 5000000);
	lat_merge(&a, &b);
	ck_assert_uint_eq(a.count, 2);
	ck_assert_uint_eq(a.max_ns, 5000000);
	ck_assert(fabs(lat_percentile_us(&a, 0.5) - 0.1) < 0.1 * 0.016);
	ck_assert(fabs(lat_percentile_us(&a, 1.0) - 5000) < 5000 * 0.016);
}
END_TEST

START_TEST(knee)
{
	/* NetBench-like: linear to 32 clients, then flat. */
	double x[] = { 1, 2, 4, 8, 16, 32, 48, 64 };
	double y[] = { 3, 6, 12, 24, 48, 96, 98, 99 };
	double line[] = { 1, 2, 4, 8, 16, 32, 48, 64 };

	ck_assert_int_eq(knee_index(x, y, 8), 5);
	ck_assert_int_eq(knee_index(x, line, 8), -1);	/* no knee on a straight line */
	ck_assert_int_eq(knee_index(x, y, 2), -1);
}
END_TEST

START_TEST(energy)
{
	double t[] = { 10, 11, 12, 13 };
	double w[] = { 10, 20, 20, 10 };

	/* Whole series: 15 + 20 + 15. */
	ck_assert(fabs(energy_joules(t, w, 4, 10, 13) - 50) < 1e-9);
	/* A phase between samples: interpolated at both ends. */
	ck_assert(fabs(energy_joules(t, w, 4, 10.5, 11) - 8.75) < 1e-9);
	/* Held flat outside the series. */
	ck_assert(fabs(energy_joules(t, w, 4, 8, 10) - 20) < 1e-9);
	ck_assert(fabs(energy_joules(t, w, 4, 13, 15) - 20) < 1e-9);
	ck_assert(energy_joules(t, w, 0, 0, 1) == -1);
	ck_assert(energy_joules(t, w, 4, 12, 11) == -1);
}
END_TEST

static void
result(struct st_result *r, const char *test, enum st_op op, enum st_metric m, uint64_t bytes,
    uint64_t ops, double s)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->test, sizeof(r->test), "%s", test);
	r->op = op;
	r->metric = m;
	r->bytes = bytes;
	r->ops = ops;
	r->seconds = s;
	r->verified = op == OP_IDLE ? -1 : 1;
	r->pass = ST_PASS;
}

static struct st_limits lim = {
	.board = "qemu-x86_64", .seq_write_min_mbs = 5, .seq_read_min_mbs = 5,
	.rand_read_min_iops = 100, .rand_write_min_iops = 50, .idle_max_w = 15
};

START_TEST(limits)
{
	struct st_result r;
	char dir[] = "/tmp/test-selftest.XXXXXX", path[64], err[256];
	struct st_limits l;
	FILE *f;

	result(&r, "seq-max", OP_READ, ST_MB_S, 4000000, 4, 1.0);	/* 4 MB/s */
	st_limits_apply(&lim, &r);
	ck_assert_int_eq(r.pass, ST_FAIL);
	ck_assert(r.has_limit && r.limit == 5);
	result(&r, "iops-4k-t8", OP_WRITE, ST_IOPS, 4096 * 60, 60, 1.0);
	st_limits_apply(&lim, &r);
	ck_assert_int_eq(r.pass, ST_PASS);
	/* Wrong data fails whatever its speed. */
	result(&r, "file-2g", OP_READ, ST_MB_S, 1000000000, 1000, 1.0);
	r.verified = 0;
	st_limits_apply(&lim, &r);
	ck_assert_int_eq(r.pass, ST_FAIL);
	/* Power: a ceiling; unavailable is neither pass nor fail. */
	result(&r, "power", OP_IDLE, ST_WATTS, 0, 0, 1);
	r.has_power = 1;
	r.watts = 16;
	st_limits_apply(&lim, &r);
	ck_assert_int_eq(r.pass, ST_FAIL);
	result(&r, "power", OP_IDLE, ST_WATTS, 0, 0, 1);
	r.pass = ST_UNAVAILABLE;
	st_limits_apply(&lim, &r);
	ck_assert_int_eq(r.pass, ST_UNAVAILABLE);
	ck_assert_int_eq(st_exit_code(&r, 1), ST_EXIT_PASS);
	/* and a floor: below it the sensor or model is broken, or a disk is missing */
	l = lim;
	l.idle_max_w = 20;
	l.idle_min_w = 14;
	result(&r, "power", OP_IDLE, ST_WATTS, 0, 0, 1);
	r.has_power = 1;
	r.watts = 11.7;
	st_limits_apply(&l, &r);
	ck_assert_int_eq(r.pass, ST_FAIL);
	ck_assert(r.has_limit && r.limit == 20 && r.limit_min == 14);
	r.pass = ST_PASS;
	r.watts = 17.9;
	st_limits_apply(&l, &r);
	ck_assert_int_eq(r.pass, ST_PASS);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/board.ini", dir);
	f = fopen(path, "w");
	fputs("[board]\nname = b\n[selftest]\nseq_read_min_mbs = 7.5\nidle_max_w = 9\n", f);
	fclose(f);
	ck_assert_int_eq(st_limits_load(path, &l, err, sizeof(err)), 0);
	ck_assert(l.seq_read_min_mbs == 7.5 && l.idle_max_w == 9 && l.seq_write_min_mbs == 0);
	ck_assert_str_eq(l.board, "b");
	f = fopen(path, "w");
	fputs("[selftest]\nseq_read_min_mbs = -1\n", f);
	fclose(f);
	ck_assert_int_eq(st_limits_load(path, &l, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "seq_read_min_mbs"));
	f = fopen(path, "w");
	fputs("[selftest]\nrand_read_min_iops = 10k\n", f);
	fclose(f);
	ck_assert_int_eq(st_limits_load(path, &l, err, sizeof(err)), -1);
	/* a floor above the ceiling (or without one) would fail every unit */
	f = fopen(path, "w");
	fputs("[selftest]\nidle_min_w = 21\nidle_max_w = 20\n", f);
	fclose(f);
	ck_assert_int_eq(st_limits_load(path, &l, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "idle_min_w: needs an idle_max_w above it"));
	f = fopen(path, "w");
	fputs("[selftest]\nidle_min_w = 14\n", f);
	fclose(f);
	ck_assert_int_eq(st_limits_load(path, &l, err, sizeof(err)), -1);
	unlink(path);
	rmdir(dir);
}
END_TEST

static struct st_result rows[5];

static int
sample_rows(void)
{
	result(&rows[0], "file-2g", OP_WRITE, ST_MB_S, 108000000, 103, 1.0);
	result(&rows[1], "file-2g", OP_READ, ST_MB_S, 111000000, 106, 1.0);
	result(&rows[2], "iops-4k-t8", OP_WRITE, ST_IOPS, 4096ULL * 4668, 4668, 1.0);
	result(&rows[3], "iops-4k-t8", OP_READ, ST_IOPS, 4096ULL * 16014, 16014, 1.0);
	rows[3].has_lat = 1;
	rows[3].p50 = 450;
	rows[3].p99 = 1800;
	rows[3].p999 = 4000.4;
	result(&rows[4], "power", OP_IDLE, ST_WATTS, 0, 0, 10);
	rows[4].pass = ST_UNAVAILABLE;
	for (int i = 0; i < 5; i++)
		st_limits_apply(&lim, &rows[i]);
	return 5;
}

START_TEST(record_schema)
{
	struct st_run run = { .preset = "quick", .scale = 0.5, .seed = 3 };
	struct st_target tg = { .dir = "/x" };
	struct json_object *rec, *a, *row, *v, *lat;
	static const char *const top[] = { "schema", "board", "firmware", "kernel", "volume",
		"preset", "scale", "results", "pass", "exit", NULL };
	static const char *const per[] = { "test", "op", "bytes", "seconds", "mb_s", "iops",
		"lat_us", "cpu_s", "watts", "joules", "verified", "limit", "pass", NULL };
	int n = sample_rows();

	snprintf(run.tests, sizeof(run.tests), "file-2g");
	rec = st_record(&run, &lim, &tg, rows, n, st_exit_code(rows, n), 0, NULL);
	for (int i = 0; top[i]; i++)
		ck_assert_msg(json_object_object_get_ex(rec, top[i], NULL), "no %s", top[i]);
	json_object_object_get_ex(rec, "schema", &v);
	ck_assert_str_eq(json_object_get_string(v), ST_SCHEMA);
	json_object_object_get_ex(rec, "results", &a);
	ck_assert_int_eq((int)json_object_array_length(a), n);
	for (int k = 0; k < n; k++) {
		row = json_object_array_get_idx(a, (size_t)k);
		for (int i = 0; per[i]; i++)
			ck_assert_msg(json_object_object_get_ex(row, per[i], NULL), "row %d: no %s", k,
			    per[i]);
	}
	row = json_object_array_get_idx(a, 3);
	json_object_object_get_ex(row, "iops", &v);
	ck_assert(json_object_get_double(v) == 16014);
	json_object_object_get_ex(row, "lat_us", &lat);
	json_object_object_get_ex(lat, "p999", &v);
	ck_assert(json_object_get_double(v) == 4000.4);
	json_object_object_get_ex(row, "limit", &v);
	ck_assert(json_object_get_double(v) == 100);
	/* Unavailable power: null watts and pass, never 0 W. */
	row = json_object_array_get_idx(a, 4);
	json_object_object_get_ex(row, "watts", &v);
	ck_assert_ptr_null(v);
	json_object_object_get_ex(row, "pass", &v);
	ck_assert_ptr_null(v);
	json_object_object_get_ex(rec, "pass", &v);
	ck_assert(json_object_get_boolean(v));
	json_object_put(rec);
}
END_TEST

/* The network rows: --peers checked, Mbit/s against net_min_mbits on
 * net-1 only, and the record's mbit_s, ratio and bytes per port. */
START_TEST(net_rows)
{
	char peers[ST_MAX_PEERS][64], err[128];
	struct st_limits l = lim;
	struct st_result r[2];
	struct st_run run = { .preset = "quick", .scale = 1 };
	struct st_target tg = { .dir = "/x" };
	struct json_object *rec, *a, *row, *v, *p;

	ck_assert_int_eq(st_peers_parse("10.77.0.11,10.77.0.12,fe80::1,line-pc", peers,
	    ST_MAX_PEERS, err, sizeof(err)), 4);
	ck_assert_str_eq(peers[2], "fe80::1");
	ck_assert_int_eq(st_peers_parse("a,b,c,d,e", peers, ST_MAX_PEERS, err, sizeof(err)), -1);
	ck_assert_int_eq(st_peers_parse("10.0.0.1,", peers, ST_MAX_PEERS, err, sizeof(err)), 1);
	ck_assert_int_eq(st_peers_parse("10.0.0.1,,x", peers, ST_MAX_PEERS, err, sizeof(err)), -1);
	ck_assert_int_eq(st_peers_parse("-c", peers, ST_MAX_PEERS, err, sizeof(err)), -1);
	ck_assert_int_eq(st_peers_parse("a b", peers, ST_MAX_PEERS, err, sizeof(err)), -1);
	ck_assert_int_eq(st_peers_parse("", peers, ST_MAX_PEERS, err, sizeof(err)), -1);

	l.net_min_mbits = 50;
	result(&r[0], "net-1", OP_WRITE, ST_MBIT_S, 6000000, 0, 1.0);	/* 48 Mbit/s */
	st_limits_apply(&l, &r[0]);
	ck_assert_int_eq(r[0].pass, ST_FAIL);
	ck_assert(st_mbit_s(&r[0]) == 48);
	result(&r[1], "lacp-4", OP_WRITE, ST_MBIT_S, 12000000, 0, 1.0);
	r[1].ratio = 2;
	r[1].nports = 1;
	snprintf(r[1].ports[0].name, sizeof(r[1].ports[0].name), "lan1");
	r[1].ports[0].tx = 12345;
	st_limits_apply(&l, &r[1]);
	ck_assert_int_eq(r[1].pass, ST_PASS);
	ck_assert(!r[1].has_limit);
	rec = st_record(&run, &l, &tg, r, 2, st_exit_code(r, 2), 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 1);
	json_object_object_get_ex(row, "metric", &v);
	ck_assert_str_eq(json_object_get_string(v), "mbit_s");
	json_object_object_get_ex(row, "mbit_s", &v);
	ck_assert(json_object_get_double(v) == 96);
	json_object_object_get_ex(row, "ratio_to_net1", &v);
	ck_assert(json_object_get_double(v) == 2);
	json_object_object_get_ex(row, "ports", &v);
	ck_assert_int_eq((int)json_object_array_length(v), 1);
	p = json_object_array_get_idx(v, 0);
	json_object_object_get_ex(p, "tx_bytes", &v);
	ck_assert_int_eq(json_object_get_int64(v), 12345);
	/* net-1 has no ratio */
	row = json_object_array_get_idx(a, 0);
	json_object_object_get_ex(row, "ratio_to_net1", &v);
	ck_assert_ptr_null(v);
	json_object_put(rec);
}
END_TEST

/* The column where text starts in line, or -1. */
static int col(const char *line, const char *text);

/* lacp-4's spread over the bond's ports, from the ports' counters: a run
 * whose flows all took one port is flagged, carries no ratio to net-1
 * and is no LACP figure (the table says "1 port"). */
static void
port(struct st_result *r, const char *name, unsigned long long tx, unsigned long long rx)
{
	struct st_port_bytes *p = &r->ports[r->nports++];

	snprintf(p->name, sizeof(p->name), "%s", name);
	p->tx = tx;
	p->rx = rx;
}

START_TEST(lacp_spread)
{
	struct st_run run = { .preset = "quick", .scale = 1 };
	struct st_target tg = { .dir = "/x" };
	struct json_object *rec, *a, *row, *v;
	struct st_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	/* up: what the NAS sent; lan2's ACK-sized tx and big rx do not count */
	result(&r, "lacp-4", OP_WRITE, ST_MBIT_S, 40000000, 0, 10);
	port(&r, "lan1", 40500000, 900000);
	port(&r, "lan2", 600000, 50000000);
	ck_assert_int_eq(st_ports_used(&r), 1);
	ck_assert_str_eq(st_busiest_port(&r), "lan1");
	/* down: what it received; lan1's 0.9 MB of 50.9 is under a tenth */
	r.op = OP_READ;
	ck_assert_int_eq(st_ports_used(&r), 1);
	ck_assert_str_eq(st_busiest_port(&r), "lan2");
	r.ports[1].rx = 4000000;	/* 0.9 of 4.9 MB: 18 %, both ports */
	ck_assert_int_eq(st_ports_used(&r), 2);
	r.ports[0].rx = 300000;		/* 0.3 of 4.3 MB: 7 % */
	ck_assert_int_eq(st_ports_used(&r), 1);
	r.nports = 0;
	ck_assert_int_eq(st_ports_used(&r), 0);
	ck_assert_str_eq(st_busiest_port(&r), "");

	/* the record and the table of a one-port lacp-4 row */
	result(&r, "lacp-4", OP_WRITE, ST_MBIT_S, 40000000, 0, 10);
	port(&r, "lan1", 40500000, 900000);
	port(&r, "lan2", 600000, 50000000);
	r.flows = 4;
	r.tries = 4;
	r.ports_used = st_ports_used(&r);
	r.one_port = 1;
	r.pass = ST_UNAVAILABLE;
	rec = st_record(&run, &lim, &tg, &r, 1, st_exit_code(&r, 1), 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 0);
	json_object_object_get_ex(row, "one_port", &v);
	ck_assert(json_object_get_boolean(v));
	json_object_object_get_ex(row, "ports_used", &v);
	ck_assert_int_eq(json_object_get_int(v), 1);
	json_object_object_get_ex(row, "tries", &v);
	ck_assert_int_eq(json_object_get_int(v), 4);
	ck_assert(json_object_object_get_ex(row, "ratio_to_net1", &v) && v == NULL);
	json_object_object_get_ex(row, "verdict", &v);
	ck_assert_str_eq(json_object_get_string(v), "SKIP");
	json_object_put(rec);
	f = open_memstream(&buf, &len);
	st_table(f, &r, 1, st_exit_code(&r, 1));
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "32.0 Mbit/s 1 port"));
	free(buf);
	/* one flow: no one_port flag, no tries */
	result(&r, "net-1", OP_WRITE, ST_MBIT_S, 40000000, 0, 10);
	port(&r, "lan1", 40500000, 900000);
	r.flows = 1;
	r.ports_used = 1;
	rec = st_record(&run, &lim, &tg, &r, 1, st_exit_code(&r, 1), 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 0);
	ck_assert(json_object_object_get_ex(row, "one_port", &v) && v == NULL);
	json_object_put(rec);
}
END_TEST



/* The power row: its floor and ceiling in the record, the table and the
 * line's reason; what powerd saw (disk I/O share, CPU) in the record. */
START_TEST(power_row)
{
	struct st_limits l = lim;
	struct st_result r;
	struct st_run run = { .preset = "quick", .scale = 1 };
	struct st_target tg = { .dir = "/x" };
	struct json_object *rec, *a, *row, *v;
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *f;

	l.idle_min_w = 14;
	l.idle_max_w = 20;
	result(&r, "power", OP_IDLE, ST_WATTS, 0, 0, 3);
	r.has_power = 1;
	r.watts = 11.7;
	r.has_activity = 1;
	r.busy_share = 0.125;
	r.cpu_load = 0.2;
	r.settle_s = 4.5;
	st_limits_apply(&l, &r);
	ck_assert_int_eq(r.pass, ST_FAIL);
	ck_assert_int_eq(st_factory_verdict(&r, 1, "power", "", why, sizeof(why)), ST_EXIT_FAIL);
	ck_assert_str_eq(why, "power idle: 11.7 W, limit >= 14 W");
	r.watts = 20.6;
	r.pass = ST_PASS;
	st_limits_apply(&l, &r);
	ck_assert_int_eq(st_factory_verdict(&r, 1, "power", "", why, sizeof(why)), ST_EXIT_FAIL);
	ck_assert_str_eq(why, "power idle: 20.6 W, limit <= 20 W");
	f = open_memstream(&buf, &len);
	st_table(f, &r, 1, st_exit_code(&r, 1));
	fclose(f);
	ck_assert_int_eq(col(strchr(buf, '\n') + 1, "14-20 W"), col(buf, "limit"));
	free(buf);
	rec = st_record(&run, &l, &tg, &r, 1, st_exit_code(&r, 1), 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 0);
	json_object_object_get_ex(row, "limit_min", &v);
	ck_assert(json_object_get_double(v) == 14);
	json_object_object_get_ex(row, "limit", &v);
	ck_assert(json_object_get_double(v) == 20);
	json_object_object_get_ex(row, "busy_share", &v);
	ck_assert(json_object_get_double(v) == 0.125);
	json_object_object_get_ex(row, "cpu_load", &v);
	ck_assert(json_object_get_double(v) == 0.2);
	json_object_object_get_ex(row, "settle_s", &v);
	ck_assert(json_object_get_double(v) == 4.5);
	json_object_put(rec);
	/* without what powerd saw: null, not 0 (no disk I/O claimed) */
	r.has_activity = 0;
	rec = st_record(&run, &l, &tg, &r, 1, st_exit_code(&r, 1), 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 0);
	ck_assert(json_object_object_get_ex(row, "busy_share", &v) && v == NULL);
	json_object_put(rec);
}
END_TEST


static int
col(const char *line, const char *text)
{
	const char *p = strstr(line, text);

	return p ? (int)(p - line) : -1;
}

START_TEST(table_layout)
{
	char *buf = NULL, *lines[16], *save = NULL;
	size_t len = 0;
	int n = sample_rows(), nl = 0;
	FILE *f = open_memstream(&buf, &len);

	rows[1].verified = 0;
	st_limits_apply(&lim, &rows[1]);
	st_table(f, rows, n, st_exit_code(rows, n));
	fclose(f);
	for (char *l = strtok_r(buf, "\n", &save); l && nl < 16; l = strtok_r(NULL, "\n", &save))
		lines[nl++] = l;
	ck_assert_int_ge(nl, 6);
	/* The reviews' layout: write (up) and read (down) side by side. */
	ck_assert_int_eq(col(lines[0], "test"), 0);
	ck_assert_int_eq(col(lines[1], "file-2g"), 0);
	ck_assert_int_eq(col(lines[1], "108.0 MB/s"), col(lines[0], "write (up)"));
	ck_assert_int_eq(col(lines[1], "111.0 MB/s"), col(lines[0], "read (down)"));
	ck_assert_int_eq(col(lines[1], "5 / 5 MB/s"), col(lines[0], "limit"));
	ck_assert_int_eq(col(lines[1], "FAIL (data)"), col(lines[0], "result"));
	ck_assert_int_eq(col(lines[2], "4668 IOPS"), col(lines[0], "write (up)"));
	ck_assert_int_eq(col(lines[2], "16014 IOPS"), col(lines[0], "read (down)"));
	ck_assert_int_eq(col(lines[2], "pass"), col(lines[0], "result"));
	ck_assert_int_eq(col(lines[3], "450/1800/4000 us"), col(lines[0], "read (down)"));
	ck_assert_int_eq(col(lines[4], "power"), 0);
	ck_assert_int_eq(col(lines[4], "unavailable"), col(lines[0], "write (up)"));
	ck_assert_int_eq(col(lines[4], "n/a"), col(lines[0], "result"));
	ck_assert_int_eq(col(lines[nl - 1], "result: FAIL"), 0);
	free(buf);
}
END_TEST

/* One factory row: test, op, measured, its pass. */
static struct st_result
frow(const char *test, enum st_op op, int pass, int verified)
{
	struct st_result r;

	memset(&r, 0, sizeof(r));
	snprintf(r.test, sizeof(r.test), "%s", test);
	r.op = op;
	r.metric = ST_MB_S;
	r.bytes = 10000000;
	r.seconds = 2;
	r.pass = pass;
	r.verified = verified;
	return r;
}

START_TEST(factory_verdict)
{
	struct st_result r[4];
	char why[256];

	r[0] = frow("seq-max", OP_WRITE, ST_PASS, 1);
	r[1] = frow("seq-max", OP_READ, ST_PASS, 1);
	r[2] = frow("power", OP_IDLE, ST_PASS, -1);
	r[2].metric = ST_WATTS;
	ck_assert_int_eq(st_factory_verdict(r, 3, "seq-max,power", "", why, sizeof(why)),
	    ST_EXIT_PASS);
	ck_assert_str_eq(why, "");
	ck_assert_str_eq(st_row_verdict(&r[2]), "PASS");
	/* A test asked for that left no row is not a pass. */
	ck_assert_int_eq(st_factory_verdict(r, 2, "seq-max,power", "", why, sizeof(why)),
	    ST_EXIT_NORUN);
	ck_assert_str_eq(why, "power did not run");
	ck_assert_int_eq(st_factory_verdict(r, 0, "", "", why, sizeof(why)), ST_EXIT_NORUN);
	/* Nothing measured (no powerd, no peer) is a SKIP, and the run INCOMPLETE. */
	r[2].pass = ST_UNAVAILABLE;
	snprintf(r[2].note, sizeof(r[2].note), "powerd does not answer power.status");
	ck_assert_str_eq(st_row_verdict(&r[2]), "SKIP");
	ck_assert_int_eq(st_factory_verdict(r, 3, "seq-max,power", "", why, sizeof(why)),
	    ST_EXIT_NORUN);
	ck_assert_str_eq(why, "power idle skipped: powerd does not answer power.status");
	ck_assert_str_eq(st_verdict_word(ST_EXIT_NORUN), "INCOMPLETE");
	/* A run that could not go on says why, */
	ck_assert_int_eq(st_factory_verdict(r, 2, "seq-max", "raidd: no blank disks", why,
	    sizeof(why)), ST_EXIT_NORUN);
	ck_assert_str_eq(why, "could not run: raidd: no blank disks");
	/* but a missed limit or wrong data is the unit's FAIL whatever else happened. */
	r[1].pass = ST_FAIL;
	r[1].has_limit = 1;
	r[1].limit = 6;
	ck_assert_str_eq(st_row_verdict(&r[1]), "FAIL");
	ck_assert_int_eq(st_factory_verdict(r, 3, "seq-max,power", "interrupted", why,
	    sizeof(why)), ST_EXIT_FAIL);
	ck_assert_str_eq(why, "seq-max read: 5 MB/s, limit >= 6 MB/s");
	r[1].pass = ST_PASS;
	r[0].verified = 0;
	snprintf(r[0].note, sizeof(r[0].note), "1 reads did not verify, first at byte 4096");
	ck_assert_str_eq(st_row_verdict(&r[0]), "FAIL");
	ck_assert_int_eq(st_factory_verdict(r, 3, "seq-max,power", "", why, sizeof(why)),
	    ST_EXIT_FAIL);
	ck_assert_str_eq(why, "seq-max write: data did not verify: 1 reads did not verify, "
	    "first at byte 4096");
}
END_TEST

START_TEST(limit_keys)
{
	struct st_limits l;
	char err[256];

	memset(&l, 0, sizeof(l));
	ck_assert_str_eq(st_limit_key("file-2g", OP_READ), "seq_read_min_mbs");
	ck_assert_str_eq(st_limit_key("iops-4k-q16", OP_WRITE), "rand_write_min_iops");
	ck_assert_str_eq(st_limit_key("power", OP_IDLE), "idle_max_w");
	ck_assert_ptr_null(st_limit_key("lacp-4", OP_READ));
	ck_assert_int_eq(st_limits_set(&l, "rand_read_min_iops", "250", "f.ini", err,
	    sizeof(err)), 0);
	ck_assert(st_limit_for(&l, "iops-4k-t8", OP_READ) == 250);
	/* Garbage is an error naming the key, and changes nothing. */
	ck_assert_int_eq(st_limits_set(&l, "rand_read_min_iops", "-1", "f.ini", err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "f.ini: [selftest] rand_read_min_iops: not a number >= 0");
	ck_assert_int_eq(st_limits_set(&l, "rand_read_min_iops", "", "f.ini", err, sizeof(err)), -1);
	ck_assert_int_eq(st_limits_set(&l, "rand_read_min_iops", "1e400", "f.ini", err,
	    sizeof(err)), -1);
	ck_assert_int_eq(st_limits_set(&l, "rand_read_min_iops", "nan", "f.ini", err,
	    sizeof(err)), -1);
	ck_assert_int_eq(st_limits_set(&l, "bogus", "1", "f.ini", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "f.ini: [selftest] bogus: no such limit");
	ck_assert_int_eq(st_limits_set(&l, "file_mb", "65536", "f.ini", err, sizeof(err)), 0);
	ck_assert_int_eq(st_limits_set(&l, "file_mb", "1e9", "f.ini", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "f.ini: [selftest] file_mb: at most 65536");
	ck_assert(l.file_mb == 65536);
	ck_assert(st_limit_for(&l, "iops-4k-t8", OP_READ) == 250);
}
END_TEST

/* load-curve's row: its steps and knee in the record, the table and the report. */
START_TEST(load_curve_row)
{
	static const double mbs[] = { 10, 19, 35, 40, 41, 41 };
	struct st_run run = { .preset = "quick", .scale = 1 };
	struct st_target tg = { .dir = "/x" };
	struct json_object *rec, *a, *row, *v, *st;
	double x[6], y[6];
	struct st_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	result(&r, "load-curve", OP_MIXED, ST_NONE, 0, 0, 6);
	r.verified = 1;
	for (int i = 0; i < 6; i++) {
		struct st_step *s = &r.steps[r.nsteps++];

		s->clients = 1 << i;
		s->seconds = 1;
		s->mb_s = mbs[i];
		s->iops = mbs[i] * 1e6 / 65536;
		s->write_share = 0.2;
		s->mean_ms = 1.5 * (i + 1);
		s->p50_ms = 1.4 * (i + 1);
		s->p99_ms = 4.0 * (i + 1);
		x[i] = s->clients;
		y[i] = s->mb_s;
		r.bytes += (uint64_t)(mbs[i] * 1e6);
	}
	r.knee = knee_index(x, y, 6);
	ck_assert_int_eq(r.knee, 3);		/* 8 clients */
	st_limits_apply(&lim, &r);
	ck_assert_int_eq(r.pass, ST_PASS);
	ck_assert(!r.has_limit);
	rec = st_record(&run, &lim, &tg, &r, 1, st_exit_code(&r, 1), 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 0);
	json_object_object_get_ex(row, "op", &v);
	ck_assert_str_eq(json_object_get_string(v), "mixed");
	json_object_object_get_ex(row, "knee_clients", &v);
	ck_assert_int_eq(json_object_get_int(v), 8);
	json_object_object_get_ex(row, "steps", &v);
	ck_assert_int_eq((int)json_object_array_length(v), 6);
	st = json_object_array_get_idx(v, 5);
	json_object_object_get_ex(st, "clients", &v);
	ck_assert_int_eq(json_object_get_int(v), 32);
	json_object_object_get_ex(st, "mb_s", &v);
	ck_assert(json_object_get_double(v) == 41);
	json_object_object_get_ex(st, "lat_ms", &v);
	json_object_object_get_ex(v, "p99", &v);
	ck_assert(json_object_get_double(v) == 24);
	/* the report draws it with the knee */
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(st_html(f, rec), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "data-chart=\"load-curve\""));
	ck_assert_ptr_nonnull(strstr(buf, "class=\"knee\""));
	ck_assert_ptr_nonnull(strstr(buf, "the knee at 8 clients"));
	free(buf);
	json_object_put(rec);
	/* the table: the row, then a line per step with the knee marked */
	buf = NULL;
	f = open_memstream(&buf, &len);
	st_table(f, &r, 1, st_exit_code(&r, 1));
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\nload-curve      knee at 8 clients"));
	ck_assert_ptr_nonnull(strstr(buf, "\n    1 client    10.0 MB/s 153 IOPS"));
	ck_assert_ptr_nonnull(strstr(buf, "\n    8 clients   40.0 MB/s 610 IOPS      6.0/16.0 ms knee\n"));
	ck_assert_ptr_nonnull(strstr(buf, "result: PASS"));
	free(buf);
	/* no steps (nothing ran): no knee, null */
	r.nsteps = 0;
	r.knee = -1;
	rec = st_record(&run, &lim, &tg, &r, 1, 0, 0, NULL);
	json_object_object_get_ex(rec, "results", &a);
	row = json_object_array_get_idx(a, 0);
	ck_assert(json_object_object_get_ex(row, "knee_clients", &v) && v == NULL);
	json_object_put(rec);
}
END_TEST

START_TEST(html_report)
{
	struct st_run run = { .preset = "quick", .scale = 0.5, .seed = 3 };
	struct st_target tg = { .dir = "/x" };
	struct st_limits hostile = lim;
	struct json_object *rec, *pw = json_object_new_array();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int n = sample_rows();

	/* A board model from a hostile board.ini is text, not markup. */
	snprintf(hostile.model, sizeof(hostile.model), "<script>alert(1)</script>&\"");
	for (int i = 0; i < 10; i++) {
		struct json_object *pt = json_object_new_array();

		json_object_array_add(pt, json_object_new_double(i));
		json_object_array_add(pt, json_object_new_double(10 + i));
		json_object_array_add(pw, pt);
	}
	rows[0].t0 = 100;
	rows[0].t1 = 104;
	rec = st_record(&run, &hostile, &tg, rows, n, st_exit_code(rows, n), 99, pw);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(st_html(f, rec), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(buf, "<script"));
	ck_assert_ptr_nonnull(strstr(buf, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;"));
	/* Self-contained: no script, no link, no image or style fetched. */
	ck_assert_ptr_null(strstr(buf, "src="));
	ck_assert_ptr_null(strstr(buf, "href="));
	/* Bars per metric with the limits as ticks, power with its phases. */
	ck_assert_ptr_nonnull(strstr(buf, "data-chart=\"mb_s\""));
	ck_assert_ptr_nonnull(strstr(buf, "data-chart=\"iops\""));
	ck_assert_ptr_nonnull(strstr(buf, "class=\"limit\""));
	ck_assert_ptr_nonnull(strstr(buf, "data-chart=\"power\""));
	ck_assert_ptr_nonnull(strstr(buf, "<polyline"));
	ck_assert_ptr_nonnull(strstr(buf, "class=\"phase\">file-2g write</text>"));
	free(buf);
	json_object_put(rec);

	/* Without power readings the report says so instead of drawing 0 W. */
	rec = st_record(&run, &lim, &tg, rows, n, 0, 0, NULL);
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(st_html(f, rec), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(buf, "data-chart=\"power\""));
	ck_assert_ptr_nonnull(strstr(buf, "Power unavailable"));
	free(buf);
	json_object_put(rec);
	/* A record without results is refused. */
	rec = json_object_new_object();
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(st_html(f, rec), -1);
	fclose(f);
	free(buf);
	json_object_put(rec);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("selftest");
	TCase *t = tcase_create("core");

	tcase_add_test(t, pattern_roundtrip);
	tcase_add_test(t, pattern_every_bit);
	tcase_add_test(t, pattern_units_differ);
	tcase_add_test(t, pattern_misplaced_block);
	tcase_add_test(t, pattern_period_away);
	tcase_add_test(t, pattern_into_restamps);
	tcase_add_test(t, engine_threads);
	tcase_add_test(t, engine_one_thread);
	tcase_add_test(t, engine_uring);
	tcase_add_test(t, engine_short_file);
	tcase_add_test(t, engine_read_not_replayed);
	tcase_add_test(t, percentiles);
	tcase_add_test(t, merge);
	tcase_add_test(t, knee);
	tcase_add_test(t, energy);
	tcase_add_test(t, limits);
	tcase_add_test(t, record_schema);
	tcase_add_test(t, net_rows);
	tcase_add_test(t, table_layout);
	tcase_add_test(t, power_row);
	tcase_add_test(t, lacp_spread);
	tcase_add_test(t, load_curve_row);
	tcase_add_test(t, engine_mix);
	tcase_add_test(t, html_report);
	tcase_add_test(t, factory_verdict);
	tcase_add_test(t, limit_keys);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
