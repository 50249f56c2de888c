/*
 * The workloads: what each named test writes and reads, scaled. Sizes
 * are binary (a "2 MB" file is 2 MiB) so every transfer is a whole
 * number of pattern units and O_DIRECT blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "pattern.h"
#include "selftest.h"

#define KiB	1024ULL
#define MiB	(1024 * KiB)
#define GiB	(1024 * MiB)

enum kind { K_ONEFILE, K_MANY, K_SEQ, K_IOPS, K_POWER, K_NET, K_LOAD };

struct tdef {
	const char	*name;
	enum kind	 kind;
	uint64_t	 size;		/* of the file, or of each file */
	uint64_t	 count;		/* files */
	uint32_t	 bs;
	int		 threads, qd, direct;
	double		 seconds;
};

static const struct tdef tdefs[] = {
	{ "file-2g", K_ONEFILE, 2 * GiB, 1, 1 * MiB, 1, 1, 0, 0 },
	{ "files-1000x2m", K_MANY, 2 * MiB, 1000, 1 * MiB, 1, 1, 0, 0 },
	{ "files-10000x2k", K_MANY, 2 * KiB, 10000, 2 * KiB, 1, 1, 0, 0 },
	{ "seq-max", K_SEQ, 4 * GiB, 1, 1 * MiB, 1, 1, 1, 0 },
	{ "iops-4k-t8", K_IOPS, 4 * GiB, 1, 4 * KiB, 8, 1, 1, 120 },
	{ "iops-4k-q16", K_IOPS, 4 * GiB, 1, 4 * KiB, 1, 16, 1, 120 },
	{ "power", K_POWER, 0, 0, 0, 0, 0, 0, 10 },
	{ "net-1", K_NET, 0, 0, 0, 1, 0, 0, 20 },
	{ "lacp-4", K_NET, 0, 0, 0, 4, 0, 0, 20 },
	/* the IOPS tests' file; up to 32 clients, 30 s a step */
	{ "load-curve", K_LOAD, 4 * GiB, 1, 64 * KiB, 32, 1, 1, 30 },
	{ NULL, K_LOAD, 0, 0, 0, 0, 0, 0, 0 }
};

#define DISK_TESTS "file-2g,files-1000x2m,files-10000x2k,seq-max,iops-4k-t8,iops-4k-q16," \
	"load-curve,power"
/* Without --peers their rows say unavailable. */
#define NET_TESTS "net-1,lacp-4"

static const struct tdef *
tdef_find(const char *name, size_t len)
{
	for (const struct tdef *t = tdefs; t->name; t++)
		if (strlen(t->name) == len && strncmp(t->name, name, len) == 0)
			return t;
	return NULL;
}

int
st_preset(const char *name, double file_mb, const char **tests, double *scale)
{
	if (strcmp(name, "review") == 0) {
		*tests = DISK_TESTS "," NET_TESTS;
		*scale = 1;
	} else if (strcmp(name, "quick") == 0) {
		*tests = DISK_TESTS "," NET_TESTS;
		*scale = 1.0 / 32;
	} else if (strcmp(name, "factory") == 0) {
		/* The board's file_mb sizes the sequential file; the rest follow. */
		*tests = "file-2g,seq-max,iops-4k-t8,power";
		*scale = (file_mb > 0 ? file_mb : 64) / 2048;
	} else
		return -1;
	return 0;
}

int
st_tests_check(const char *tests, char *err, size_t errlen)
{
	const char *p = tests, *e;

	if (*tests == '\0') {
		snprintf(err, errlen, "no tests named");
		return -1;
	}
	for (; *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		if (tdef_find(p, (size_t)(e - p)) == NULL) {
			snprintf(err, errlen, "unknown test \"%.*s\"", (int)(e - p > 32 ? 32 : e - p), p);
			return -1;
		}
	}
	return 0;
}

/* The test's sizes at scale. */
static struct tdef
scaled(const struct tdef *t, double scale)
{
	struct tdef s = *t;
	uint64_t unit = t->bs ? (t->bs > MiB ? t->bs : MiB) : 0;

	switch (t->kind) {
	case K_ONEFILE:
	case K_SEQ:
	case K_IOPS:
	case K_LOAD:
		s.size = (uint64_t)llround((double)t->size * scale / (double)unit) * unit;
		if (s.size < (t->kind == K_IOPS || t->kind == K_LOAD ? 16 : t->kind == K_SEQ ? 8 : 1) *
		    unit)
			s.size = (t->kind == K_IOPS || t->kind == K_LOAD ? 16 : t->kind == K_SEQ ? 8 : 1) *
			    unit;
		break;
	case K_MANY:
		s.count = (uint64_t)llround((double)t->count * scale);
		if (s.count < 1)
			s.count = 1;
		break;
	default:
		break;
	}
	if (t->seconds > 0) {
		s.seconds = t->seconds * scale;
		/* iperf3 runs whole seconds; under 3 its slow start is most of it */
		double least = t->kind == K_POWER ? 3 : t->kind == K_NET ? 3 : 0.5;

		if (s.seconds < least)
			s.seconds = least;
	}
	return s;
}

uint64_t
st_space_needed(const char *tests, double scale)
{
	uint64_t most = 0, iops = 0, one;
	const char *p = tests, *e;

	for (; *p; p = *e ? e + 1 : e) {
		const struct tdef *t;
		struct tdef s;

		e = p + strcspn(p, ",");
		if ((t = tdef_find(p, (size_t)(e - p))) == NULL)
			continue;
		s = scaled(t, scale);
		/* A 2 KiB file takes a 4 KiB block and an inode. */
		one = t->kind == K_MANY ? s.count * (s.size > 4 * KiB ? s.size : 4 * KiB) :
		    s.size;
		if (t->kind == K_IOPS || t->kind == K_LOAD)
			iops = s.size;		/* one file, kept for the IOPS tests and the curve */
		else if (one > most)
			most = one;
	}
	/* Room for the filesystem's own metadata and reserve. */
	return (most + iops) + (most + iops) / 16 + 16 * MiB;
}

/* ---- helpers ---- */

struct ctx {
	const struct st_run	*run;
	const struct st_target	*tg;
	struct st_result	*res;
	int			 n, max;
	int			 index, total;
	char			*err;
	size_t			 errlen;
	int			 iops_ready;
};

static struct st_result *
row(struct ctx *c, const char *test, enum st_op op)
{
	struct st_result *r;

	if (c->n >= c->max)
		return NULL;
	r = &c->res[c->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->test, sizeof(r->test), "%s", test);
	r->op = op;
	r->verified = -1;
	r->metric = ST_MB_S;
	r->pass = ST_PASS;
	return r;
}

static void
progress(struct ctx *c, const char *test, const char *what)
{
	char line[256];
	int n;

	/* The step for nas-selftest serve's job progress, replaced in place. */
	if (c->run->progress_fd >= 0) {
		n = snprintf(line, sizeof(line), "%d %d %s: %s\n", c->index, c->total, test, what);
		if (n > 0 && (size_t)n < sizeof(line) && ftruncate(c->run->progress_fd, 0) == 0 &&
		    pwrite(c->run->progress_fd, line, (size_t)n, 0) != n)
			log_debug("progress file: short write");
	}
	if (c->run->progress_tty)
		fprintf(stderr, "\r\033[K[%d/%d] %s: %s", c->index, c->total, test, what);
	else
		fprintf(stderr, "[%d/%d] %s: %s\n", c->index, c->total, test, what);
}

static void
progress_done(struct ctx *c, const struct st_result *r)
{
	char what[160];

	const char *op = r->op == OP_WRITE ? "write" : r->op == OP_READ ? "read" :
	    r->op == OP_MIXED ? "mixed" : "idle";
	const char *bad = r->verified == 0 ? ", DATA DID NOT VERIFY" : "";

	if (r->metric == ST_IOPS)
		snprintf(what, sizeof(what), "%s %.0f IOPS, %.2f s%s", op, st_iops(r), r->seconds, bad);
	else if (r->metric == ST_MBIT_S)
		snprintf(what, sizeof(what), "%s %.1f Mbit/s, %.2f s", r->op == OP_WRITE ? "up" : "down",
		    st_mbit_s(r), r->seconds);
	else if (r->op == OP_IDLE)
		snprintf(what, sizeof(what), "%s %.2f s%s", op, r->seconds,
		    r->has_power ? "" : ", power unavailable");
	else
		snprintf(what, sizeof(what), "%s %.1f MB/s, %.2f s%s", op, st_mb_s(r), r->seconds, bad);
	progress(c, r->test, what);
	if (c->run->progress_tty)
		fputc('\n', stderr);
}

/* Brackets one measured phase: power and CPU seconds. */
struct phase {
	double	t0, c0;
};

static void
phase_begin(struct phase *p)
{
	p->t0 = now_s();
	p->c0 = cpu_s();
}

static void
phase_end(const struct phase *p, struct st_result *r)
{
	double t1 = now_s();

	r->cpu_s = cpu_s() - p->c0;
	r->t0 = p->t0;
	r->t1 = t1;
	if (r->seconds <= 0)
		r->seconds = t1 - p->t0;
	r->has_power = power_phase(p->t0, t1, &r->watts, &r->joules) == 0;
}

/* Cold cache: the file's pages and, where we may, every clean page. */
static void
drop_caches(int fd)
{
	int d;

	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	sync();
	if ((d = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(d, "3\n", 2) != 2)
			log_debug("drop_caches refused");
		close(d);
	}
}

/* Physical byte offset of the file's first extent, or -1. */
static long long
first_extent(const char *path)
{
	struct {
		struct fiemap		fm;
		struct fiemap_extent	ext[1];
	} q;
	int fd;
	long long phys = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	memset(&q, 0, sizeof(q));
	q.fm.fm_length = FIEMAP_MAX_OFFSET;
	q.fm.fm_flags = FIEMAP_FLAG_SYNC;
	q.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) == 0 && q.fm.fm_mapped_extents == 1 &&
	    !(q.ext[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_ENCODED)))
		phys = (long long)q.ext[0].fe_physical;
	close(fd);
	return phys;
}

/*
 * --exec-between: a command run after a test's writes and before its
 * reads; --exec-after: after its reads, the file still there.  Either is
 * told the file and where its first extent lies on the device.  The
 * tests corrupt a block with the first; the fio comparison runs fio on
 * the test's own file before or after the test's reads (Decision 131);
 * a line PC could pull a disk.
 */
static void
hook(struct ctx *c, const char *cmd, const char *name, const char *test, const char *path)
{
	char phys[32];
	pid_t pid;
	int status;

	if (cmd == NULL || *c->run->stop)
		return;
	snprintf(phys, sizeof(phys), "%lld", first_extent(path));
	if ((pid = fork()) == -1) {
		log_warn("fork");
		return;
	}
	if (pid == 0) {
		setenv("NAS_SELFTEST_TEST", test, 1);
		setenv("NAS_SELFTEST_FILE", path, 1);
		setenv("NAS_SELFTEST_PHYS", phys, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_warnx("--%s command failed for %s", name, test);
}

static void
between(struct ctx *c, const char *test, const char *path)
{
	hook(c, c->run->between, "exec-between", test, path);
}

static void
after(struct ctx *c, const char *test, const char *path)
{
	hook(c, c->run->after, "exec-after", test, path);
}

/* O_DIRECT where the test asks and the filesystem allows (tmpfs does not). */
static int
open_file(const char *path, int flags, int direct, int *got_direct)
{
	int fd;

	*got_direct = 0;
	if (direct) {
		fd = open(path, flags | O_DIRECT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0 || errno != EINVAL) {
			*got_direct = fd >= 0;
			return fd;
		}
	}
	return open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/*
 * The O_DIRECT tests' files are allocated before the clock starts, as
 * fio lays out its files (fallocate=native): the block allocator is not
 * what seq-max or the IOPS tests measure.
 */
static void
preallocate(int fd, uint64_t size)
{
	int e = posix_fallocate(fd, 0, (off_t)size);

	if (e && e != EOPNOTSUPP && e != EINVAL)
		log_debug("fallocate: %s", strerror(e));
}

static void
io_failed(struct st_result *r, const struct io_result *io, const char *path)
{
	snprintf(r->note, sizeof(r->note), "%.200s: %s: %s", path, io->what, strerror(io->err));
	r->pass = ST_FAIL;
	if (r->op == OP_READ)
		r->verified = 0;
}

static void
read_verdict(struct st_result *r, const struct io_result *io)
{
	r->verified = io->bad_units == 0 && io->err == 0;
	if (io->bad_units)
		snprintf(r->note, sizeof(r->note), "%llu reads did not verify, first at byte %lld",
		    (unsigned long long)io->bad_units, (long long)io->first_bad);
}

static void
fill_io(struct st_result *r, const struct io_result *io, int lat)
{
	r->bytes = io->bytes;
	r->ops = io->ops;
	r->seconds = io->seconds;
	if (lat && io->lat.count) {
		r->has_lat = 1;
		r->p50 = lat_percentile_us(&io->lat, 0.50);
		r->p99 = lat_percentile_us(&io->lat, 0.99);
		r->p999 = lat_percentile_us(&io->lat, 0.999);
	}
}

/* One job on path, measured into a new row. -1: the run cannot go on. */
static int
one_job(struct ctx *c, const struct tdef *t, const char *path, struct io_job *j,
    enum st_op op, enum st_metric metric, struct st_result **out)
{
	struct st_result *r = row(c, t->name, op);
	struct io_result io;
	struct phase ph;
	int fd, direct;

	*out = r;
	if (r == NULL)
		return -1;
	r->metric = metric;
	progress(c, t->name, op == OP_WRITE ? "writing" : "reading");
	fd = open_file(path, op == OP_WRITE ? O_WRONLY | O_CREAT : O_RDONLY, t->direct, &direct);
	if (fd == -1) {
		snprintf(c->err, c->errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (op == OP_READ && !direct)
		drop_caches(fd);
	if (op == OP_WRITE && t->direct)
		preallocate(fd, j->span);
	j->fd = fd;
	j->write = op == OP_WRITE;
	j->stop = c->run->stop;
	phase_begin(&ph);
	io_run(j, &io);
	phase_end(&ph, r);
	close(fd);
	r->direct = direct;
	fill_io(r, &io, t->kind != K_ONEFILE);
	if (op == OP_READ)
		read_verdict(r, &io);
	if (io.err)
		io_failed(r, &io, path);
	progress_done(c, r);
	return 0;
}

static void
path_of(struct ctx *c, char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", c->tg->dir, name);
}

/* ---- the tests ---- */

static int
run_seqfile(struct ctx *c, const struct tdef *t)
{
	struct st_result *w, *r;
	struct io_job j;
	char path[600];

	path_of(c, path, sizeof(path), t->kind == K_SEQ ? "seq-max.dat" : "file-2g.dat");
	memset(&j, 0, sizeof(j));
	j.seed = c->run->seed;
	j.file = t->kind == K_SEQ ? 2 : 1;
	j.bs = t->bs;
	j.span = t->size;
	j.threads = 1;
	j.qd = 1;
	j.fsync_end = 1;
	if (one_job(c, t, path, &j, OP_WRITE, ST_MB_S, &w) == -1) {
		unlink(path);
		return -1;
	}
	between(c, t->name, path);
	if (!*c->run->stop && one_job(c, t, path, &j, OP_READ, ST_MB_S, &r) == -1) {
		unlink(path);
		return -1;
	}
	if (!*c->run->stop)
		w->verified = r->verified;
	after(c, t->name, path);
	unlink(path);
	return 0;
}

static int
prepare_iops(struct ctx *c, const struct tdef *t, const char *path)
{
	struct io_result io;
	struct io_job j;
	int fd, direct;

	if (c->iops_ready)
		return 0;
	progress(c, t->name, "laying out the file");
	if ((fd = open_file(path, O_WRONLY | O_CREAT | O_TRUNC, 1, &direct)) == -1) {
		snprintf(c->err, c->errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	preallocate(fd, t->size);
	memset(&j, 0, sizeof(j));
	j.fd = fd;
	j.seed = c->run->seed;
	j.file = 3;
	j.write = 1;
	j.bs = (uint32_t)MiB;
	j.span = t->size;
	j.threads = 1;
	j.qd = 1;
	j.fsync_end = 1;
	j.stop = c->run->stop;
	io_run(&j, &io);
	close(fd);
	if (io.err) {
		snprintf(c->err, c->errlen, "%s: %s: %s", path, io.what, strerror(io.err));
		return -1;
	}
	c->iops_ready = !*c->run->stop;
	return 0;
}

static int
run_iops(struct ctx *c, const struct tdef *t)
{
	struct st_result *w, *r;
	struct io_job j;
	char path[600];

	path_of(c, path, sizeof(path), "iops.dat");
	if (prepare_iops(c, t, path) == -1)
		return -1;
	memset(&j, 0, sizeof(j));
	j.seed = c->run->seed;
	j.file = 3;
	j.random = 1;
	j.bs = t->bs;
	j.span = t->size;
	j.threads = t->threads;
	j.qd = t->qd;
	j.seconds = t->seconds;
	if (one_job(c, t, path, &j, OP_WRITE, ST_IOPS, &w) == -1)
		return -1;
	between(c, t->name, path);
	if (*c->run->stop || one_job(c, t, path, &j, OP_READ, ST_IOPS, &r) == -1)
		return *c->run->stop ? 0 : -1;
	w->verified = r->verified;
	after(c, t->name, path);
	return 0;
}

/* Writes file i of a many-file test from buf (pb says what it holds); -1 with errno. */
static int
write_small(const char *path, struct pattern_buf *pb, void *buf, uint64_t size, uint64_t seed,
    uint64_t file)
{
	int fd, e;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return -1;
	for (uint64_t off = 0; off < size; off += MiB) {
		size_t len = size - off < MiB ? size - off : MiB;

		pattern_into(pb, buf, len, seed, file, off);
		if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len) {
			e = errno ? errno : EIO;
			close(fd);
			errno = e;
			return -1;
		}
	}
	return close(fd);
}

/* Reads file i back: 1 verified, 0 not, -1 with errno. */
static int
read_small(const char *path, void *buf, uint64_t size, uint64_t seed, uint64_t file)
{
	int fd, ok = 1, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	for (uint64_t off = 0; off < size; off += MiB) {
		size_t len = size - off < MiB ? size - off : MiB;

		if (pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
			e = errno ? errno : EIO;
			close(fd);
			errno = e;
			return -1;
		}
		if (pattern_check(buf, len, seed, file, off) >= 0)
			ok = 0;
	}
	close(fd);
	return ok;
}

static void
many_path(struct ctx *c, char *buf, size_t len, uint64_t i)
{
	snprintf(buf, len, "%s/many/f%06llu", c->tg->dir, (unsigned long long)i);
}

/* Drops the cache of each file so the read back is cold. */
static void
many_cold(struct ctx *c, uint64_t count)
{
	char path[600];
	int fd;

	for (uint64_t i = 0; i < count; i++) {
		many_path(c, path, sizeof(path), i);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
	drop_caches(-1);
}

static void
many_remove(struct ctx *c, uint64_t count)
{
	char path[600];

	for (uint64_t i = 0; i < count; i++) {
		many_path(c, path, sizeof(path), i);
		unlink(path);
	}
	path_of(c, path, sizeof(path), "many");
	rmdir(path);
}

static int
run_many(struct ctx *c, const struct tdef *t)
{
	struct pattern_buf pb = { 0 };	/* buf: written from, then read into */
	struct st_result *w, *r;
	struct phase ph;
	char path[600];
	uint64_t i, bad = 0, done;
	void *buf;
	int fd, rc = -1, v;

	if ((buf = malloc(t->size < MiB ? t->size : MiB)) == NULL) {
		snprintf(c->err, c->errlen, "out of memory");
		return -1;
	}
	path_of(c, path, sizeof(path), "many");
	if (mkdir(path, 0700) == -1 || (fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(c->err, c->errlen, "%s: %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	if ((w = row(c, t->name, OP_WRITE)) == NULL)
		goto out;
	progress(c, t->name, "writing");
	phase_begin(&ph);
	for (i = 0; i < t->count && !*c->run->stop; i++) {
		many_path(c, path, sizeof(path), i);
		if (write_small(path, &pb, buf, t->size, c->run->seed, 1000 + i) == -1)
			break;
	}
	done = i;
	if (i == t->count && syncfs(fd) == -1)
		done = 0;
	phase_end(&ph, w);
	w->files = done;
	w->bytes = done * t->size;
	if (done < t->count && !*c->run->stop) {
		snprintf(w->note, sizeof(w->note), "%.200s: %s", path, strerror(errno));
		w->pass = ST_FAIL;
	}
	progress_done(c, w);
	between(c, t->name, path);
	many_cold(c, done);
	if (*c->run->stop || (r = row(c, t->name, OP_READ)) == NULL)
		goto clean;
	progress(c, t->name, "reading");
	phase_begin(&ph);
	for (i = 0; i < done && !*c->run->stop; i++) {
		many_path(c, path, sizeof(path), i);
		if ((v = read_small(path, buf, t->size, c->run->seed, 1000 + i)) == -1)
			break;
		bad += v == 0;
	}
	phase_end(&ph, r);
	r->files = i;
	r->bytes = i * t->size;
	r->verified = bad == 0 && i == done;
	w->verified = r->verified;
	if (i < done && !*c->run->stop) {
		snprintf(r->note, sizeof(r->note), "%.200s: %s", path, strerror(errno));
		r->pass = ST_FAIL;
	} else if (bad)
		snprintf(r->note, sizeof(r->note), "%llu of %llu files did not verify",
		    (unsigned long long)bad, (unsigned long long)done);
	progress_done(c, r);
	after(c, t->name, path);
clean:
	rc = 0;
out:
	many_remove(c, t->count);
	close(fd);
	free(buf);
	return rc;
}

/*
 * Idle is the disks spinning with no I/O (review protocol A's "two
 * disks spinning"). A scratch RAID 1 may still be resyncing, which
 * under emulation comes in bursts with quiet seconds between, and md's
 * bitmap is flushed a few seconds after the last write: the phase
 * starts once powerd has seen POWER_QUIET_S of quiet disks, and a phase
 * whose readings saw disk I/O more than a quarter of the time is
 * measured again, until POWER_SETTLE_S have passed. The last one's
 * figure is kept; if its disks were busy it is no idle figure (SKIP).
 */
#define POWER_QUIET_S	5.0
#define POWER_SETTLE_S	240.0
#define POWER_BUSY_MAX	0.25

static void
power_phase_once(struct ctx *c, const struct tdef *t, struct st_result *r, double deadline)
{
	struct phase ph;
	double end;

	/* Without powerd there is nothing to wait for: the row says so. */
	while (power_running() && !*c->run->stop && now_s() < deadline &&
	    !power_quiet(POWER_QUIET_S))
		usleep(250000);
	progress(c, t->name, "idle");
	phase_begin(&ph);
	end = ph.t0 + t->seconds;
	while (!*c->run->stop && now_s() < end)
		usleep(100000);
	phase_end(&ph, r);
	r->has_activity = power_activity(r->t0, r->t1, &r->busy_share, &r->cpu_load) == 0;
}

static int
run_power(struct ctx *c, const struct tdef *t)
{
	struct st_result *r = row(c, t->name, OP_IDLE);
	double w0;

	if (r == NULL)
		return -1;
	progress(c, t->name, "waiting for quiet disks");
	r->metric = ST_WATTS;
	sync();
	w0 = now_s();
	for (;;) {
		r->seconds = 0;
		power_phase_once(c, t, r, w0 + POWER_SETTLE_S);
		r->settle_s = r->t0 - w0;
		if (!r->has_power || (r->has_activity && r->busy_share <= POWER_BUSY_MAX) ||
		    *c->run->stop || now_s() >= w0 + POWER_SETTLE_S)
			break;
		progress(c, t->name, "the disks were busy: waiting again");
	}
	if (!r->has_power) {
		r->pass = ST_UNAVAILABLE;
		snprintf(r->note, sizeof(r->note), "powerd does not answer power.status");
	} else if (!r->has_activity || r->busy_share > POWER_BUSY_MAX) {
		r->pass = ST_UNAVAILABLE;
		snprintf(r->note, sizeof(r->note), "not an idle figure: the disks were busy "
		    "%.0f %% of the phase after %.0f s of waiting (md resync, another writer)",
		    r->busy_share * 100, r->settle_s);
	}
	progress_done(c, r);
	return 0;
}

/* The ports' bytes during the phase: counters after minus before. */
static void
net_ports(struct st_result *r, const struct st_port_bytes *b0, int n0,
    const struct st_port_bytes *b1, int n1)
{
	for (int i = 0; i < n1 && r->nports < ST_MAX_PORTS; i++)
		for (int k = 0; k < n0; k++) {
			struct st_port_bytes *p = &r->ports[r->nports];

			if (strcmp(b0[k].name, b1[i].name) != 0)
				continue;
			*p = b1[i];
			p->tx = b1[i].tx >= b0[k].tx ? b1[i].tx - b0[k].tx : 0;
			p->rx = b1[i].rx >= b0[k].rx ? b1[i].rx - b0[k].rx : 0;
			r->nports++;
			break;
		}
}

/*
 * One measured attempt of a network row: the flows, then the ports'
 * bytes during it and how many ports carried them. 0, or -1 when the
 * flows failed (the row says why).
 */
static int
net_attempt(const struct tdef *t, struct st_result *r, char peers[][64], int np, int down,
    int secs)
{
	struct st_port_bytes b0[ST_MAX_PORTS], b1[ST_MAX_PORTS];
	struct phase ph;
	char err[200];
	int n0, rc = 0;

	r->bytes = 0;
	r->seconds = 0;
	r->nports = 0;
	n0 = st_net_ports(b0, ST_MAX_PORTS);
	phase_begin(&ph);
	if (st_net_flows(peers, np, t->threads, down, secs, &r->bytes, &r->seconds,
	    err, sizeof(err)) == -1) {
		r->pass = ST_FAIL;
		snprintf(r->note, sizeof(r->note), "%s", err);
		rc = -1;
	}
	phase_end(&ph, r);
	net_ports(r, b0, n0, b1, st_net_ports(b1, ST_MAX_PORTS));
	r->ports_used = st_ports_used(r);
	/* Several flows over a bond of several ports that all took one port. */
	r->one_port = t->threads > 1 && r->nports >= 2 && r->ports_used == 1;
	return rc;
}

/*
 * net-1 and lacp-4: t->threads iperf3 flows at once to the peers, up
 * (the NAS sends) then down (iperf3's reverse mode, the NAS receives).
 * layer3+4 puts four flows on one of two ports one time in eight: such
 * a run is a one-port figure, not the bond's, so lacp-4 runs again
 * (new source ports, a new draw) up to NET_TRIES times, and a row that
 * used one port every time says so and gives no LACP figure (Decision 103).
 */
#define NET_TRIES	4

static int
run_net(struct ctx *c, const struct tdef *t)
{
	char peers[ST_MAX_PEERS][64], err[200];
	int np = -1, secs = (int)lround(t->seconds);

	if (c->run->peers)
		np = st_peers_parse(c->run->peers, peers, ST_MAX_PEERS, err, sizeof(err));
	for (int down = 0; down < 2 && !*c->run->stop; down++) {
		struct st_result *r = row(c, t->name, down ? OP_READ : OP_WRITE);

		if (r == NULL)
			return -1;
		r->metric = ST_MBIT_S;
		r->flows = t->threads;
		if (np < 0) {
			r->pass = c->run->peers ? ST_FAIL : ST_UNAVAILABLE;
			snprintf(r->note, sizeof(r->note), "%s", c->run->peers ? err :
			    "no --peers: nothing to send to (docs/selftest.md, the line PC)");
			progress(c, t->name, c->run->peers ? "bad --peers" : "unavailable");
			if (c->run->progress_tty)
				fputc('\n', stderr);
			continue;
		}
		progress(c, t->name, down ? "download" : "upload");
		for (;;) {
			r->tries++;
			if (net_attempt(t, r, peers, np, down, secs) == -1 || !r->one_port ||
			    r->tries >= NET_TRIES || *c->run->stop)
				break;
			progress(c, t->name, "every flow took one port: again");
		}
		if (r->one_port && r->pass != ST_FAIL) {
			r->pass = ST_UNAVAILABLE;
			snprintf(r->note, sizeof(r->note), "every flow took one port (%s) in %d "
			    "tries: a one-port figure, not the bond's", st_busiest_port(r), r->tries);
		}
		/* lacp-4 against net-1 in the same direction, when both ran */
		for (int i = 0; t->threads > 1 && !r->one_port && i < c->n - 1; i++)
			if (strcmp(c->res[i].test, "net-1") == 0 && c->res[i].op == r->op &&
			    st_mbit_s(&c->res[i]) > 0)
				r->ratio = st_mbit_s(r) / st_mbit_s(&c->res[i]);
		progress_done(c, r);
	}
	return 0;
}

/*
 * load-curve (review protocol B, NetBench-style): 1, 2, 4 ... 32
 * simulated clients, each a thread with one request in flight (a client
 * waits for its answer), each running a file server's mix on the IOPS
 * tests' file: 64 KiB at random offsets, a fifth of them writes. Every
 * read is checked. Per step MB/s, IOPS and response times; the knee of
 * MB/s over clients (Kneedle, stats.c). Decision 104.
 */
#define LOAD_WRITE_PCT	20

static void
load_step(struct st_result *r, int clients, const struct io_result *io)
{
	struct st_step *s = &r->steps[r->nsteps++];

	s->clients = clients;
	s->seconds = io->seconds;
	s->mb_s = io->seconds > 0 ? (double)io->bytes / 1e6 / io->seconds : 0;
	s->iops = io->seconds > 0 ? (double)io->ops / io->seconds : 0;
	s->write_share = io->ops ? (double)io->writes / (double)io->ops : 0;
	s->mean_ms = lat_mean_us(&io->lat) / 1000;
	s->p50_ms = lat_percentile_us(&io->lat, 0.50) / 1000;
	s->p99_ms = lat_percentile_us(&io->lat, 0.99) / 1000;
	r->bytes += io->bytes;
	r->ops += io->ops;
}

static int
run_load(struct ctx *c, const struct tdef *t)
{
	struct st_result *r;
	struct io_result io;
	struct io_job j;
	struct phase ph;
	double x[ST_MAX_STEPS], y[ST_MAX_STEPS];
	char path[600], what[64];
	int fd, direct;

	path_of(c, path, sizeof(path), "iops.dat");
	if (prepare_iops(c, t, path) == -1 || (r = row(c, t->name, OP_MIXED)) == NULL)
		return -1;
	r->metric = ST_NONE;
	r->knee = -1;
	if ((fd = open_file(path, O_RDWR, t->direct, &direct)) == -1) {
		snprintf(c->err, c->errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	r->direct = direct;
	memset(&j, 0, sizeof(j));
	j.fd = fd;
	j.seed = c->run->seed;
	j.file = 3;
	j.random = 1;
	j.bs = t->bs;
	j.span = t->size;
	j.qd = 1;
	j.write_pct = LOAD_WRITE_PCT;
	j.seconds = t->seconds;
	j.stop = c->run->stop;
	r->verified = 1;
	phase_begin(&ph);
	for (int n = 1; n <= t->threads && r->nsteps < ST_MAX_STEPS && !*c->run->stop; n *= 2) {
		snprintf(what, sizeof(what), "%d client%s", n, n > 1 ? "s" : "");
		progress(c, t->name, what);
		j.threads = n;
		io_run(&j, &io);
		if (io.err || io.bad_units) {
			read_verdict(r, &io);
			if (io.err)
				io_failed(r, &io, path);
			r->pass = ST_FAIL;
			break;
		}
		x[r->nsteps] = n;
		y[r->nsteps] = io.seconds > 0 ? (double)io.bytes / 1e6 / io.seconds : 0;
		load_step(r, n, &io);
	}
	phase_end(&ph, r);
	close(fd);
	if (r->nsteps >= 3)
		r->knee = knee_index(x, y, (size_t)r->nsteps);
	progress_done(c, r);
	return 0;
}

int
st_run_tests(const struct st_run *run, const struct st_target *tg, struct st_result *res,
    int max, char *err, size_t errlen)
{
	struct ctx c = { run, tg, res, 0, max, 0, 0, err, errlen, 0 };
	const char *p, *e;
	char path[600];
	int rc = 0;

	for (p = run->tests; *p; p = *e ? e + 1 : e, c.total++)
		e = p + strcspn(p, ",");
	for (p = run->tests; *p && rc == 0 && !*run->stop; p = *e ? e + 1 : e) {
		const struct tdef *t;
		struct tdef s;

		e = p + strcspn(p, ",");
		if ((t = tdef_find(p, (size_t)(e - p))) == NULL)
			continue;
		s = scaled(t, run->scale);
		c.index++;
		switch (t->kind) {
		case K_ONEFILE:
		case K_SEQ:
			rc = run_seqfile(&c, &s);
			break;
		case K_MANY:
			rc = run_many(&c, &s);
			break;
		case K_IOPS:
			rc = run_iops(&c, &s);
			break;
		case K_POWER:
			rc = run_power(&c, &s);
			break;
		case K_NET:
			rc = run_net(&c, &s);
			break;
		case K_LOAD:
			rc = run_load(&c, &s);
			break;
		}
	}
	path_of(&c, path, sizeof(path), "iops.dat");
	unlink(path);
	if (*run->stop && rc == 0) {
		snprintf(err, errlen, "interrupted");
		rc = -1;
	}
	return rc == 0 ? c.n : -1;
}
