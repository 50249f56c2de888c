/*
 * Every command to a disk, off the event loop. SG_IO blocks for the
 * whole command: a spin-down flushes the disk's cache (up to 15 s), and a
 * disk that does not answer holds its caller for the timeout and then
 * for the kernel's error handling. powerd must answer power.status,
 * drive.list and send events meanwhile, so the loop only starts workers
 * and reads their answers from a pipe; methods answer from what the last
 * worker found (drive.c).
 *
 * A worker thread gets a copy of what it needs (name, transport, the
 * identity recorded for the disk), opens /dev/<name> once, proves on
 * that descriptor that it is the disk the timer was for (block device
 * with the recorded dev_t, the VPD pages the kernel recorded for it),
 * and only then sends its commands to that same descriptor. At most one
 * worker per bay, so a disk is never asked twice at once and a SMART
 * read never overtakes a STANDBY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerd.h"

struct dio_req {
	struct dio_result	 res;
	int			 ata;
	struct disk_id		 id;
};

static int pipefd[2] = { -1, -1 };
static ev_io pipe_w;
static int inflight;
static int busy[BOARD_MAX_BAYS];

/* ---- identity ---- */

/* A binary sysfs file, whole (clipped to len): its length, or -1. */
static int
read_blob(const char *path, uint8_t *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return -1;
	while (got < len && (n = read(fd, buf + got, len - got)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	close(fd);
	return (int)got;
}

static int
page_of(const char *name, const char *file, uint8_t page, uint8_t *buf, uint16_t *len)
{
	char p[512];
	int n;

	*len = 0;
	if (pathf(p, sizeof(p), "%s/block/%s/device/%s", sensor_root(), name, file) == -1 ||
	    (n = read_blob(p, buf, DISK_ID_MAX)) <= 0 ||
	    (n = sg_vpd_length(buf, (size_t)n, page)) <= 4)
		return -1;
	*len = (uint16_t)n;
	return 0;
}

int
disk_id_read(const char *name, struct disk_id *id)
{
	char p[512], line[32], end;
	unsigned maj, min;

	memset(id, 0, sizeof(*id));
	if (pathf(p, sizeof(p), "%s/block/%s/dev", sensor_root(), name) == -1 ||
	    sysread_line(p, line, sizeof(line)) != RD_OK ||
	    sscanf(line, "%u:%u%c", &maj, &min, &end) != 2 || maj == 0)
		return -1;
	id->maj = maj;
	id->min = min;
	(void)page_of(name, "vpd_pg80", 0x80, id->pg80, &id->len80);
	(void)page_of(name, "vpd_pg83", 0x83, id->pg83, &id->len83);
	return id->len80 > 0 || id->len83 > 0 ? 0 : -1;
}

int
disk_id_same(const struct disk_id *a, const struct disk_id *b)
{
	return a->maj == b->maj && a->min == b->min && a->len80 == b->len80 &&
	    a->len83 == b->len83 && memcmp(a->pg80, b->pg80, a->len80) == 0 &&
	    memcmp(a->pg83, b->pg83, a->len83) == 0;
}

/* One page from the disk against the kernel's copy; 0 when the same. */
static int
page_same(int fd, uint8_t page, const uint8_t *want, uint16_t wlen)
{
	uint8_t got[DISK_ID_MAX];
	int n;

	if ((n = drive_ops->vpd(fd, page, got, sizeof(got))) == -1)
		return -1;
	if (n != wlen || memcmp(got, want, wlen) != 0) {
		errno = ESTALE;
		return -1;
	}
	return 0;
}

int
dio_prove(int fd, const struct disk_id *want)
{
	/* Nothing to prove it by: no command that changes anything. */
	if (want->len80 == 0 && want->len83 == 0) {
		errno = ENODATA;
		return -1;
	}
	if (want->len80 > 0 && page_same(fd, 0x80, want->pg80, want->len80) == -1)
		return -1;
	if (want->len83 > 0 && page_same(fd, 0x83, want->pg83, want->len83) == -1)
		return -1;
	return 0;
}

/* ---- the worker ---- */

static void
work(struct dio_req *r)
{
	struct dio_result *res = &r->res;
	int fd;

	res->said = -1;
	/* No device number recorded: nothing to open it against. */
	if (r->id.maj == 0) {
		res->err = ENODATA;
		return;
	}
	if ((fd = drive_ops->open(res->name, r->id.maj, r->id.min)) == -1) {
		res->err = errno;
		return;
	}
	if (dio_prove(fd, &r->id) == -1 && (res->op == DIO_STANDBY || errno != ENODATA)) {
		/*
		 * Not the disk, or it does not answer: nothing is sent. A disk
		 * with no identity at all may still be asked (a question
		 * changes nothing); it is never commanded.
		 */
		res->err = errno;
	} else if (res->op == DIO_STANDBY) {
		res->err = drive_ops->standby(fd, r->ata) == -1 ? errno : 0;
	} else {
		res->said = drive_ops->power_mode(fd, r->ata);
		/* Only a disk that says it spins: SMART would wake it. */
		if (res->smart && drive_smart != NULL &&
		    (res->said == DP_ACTIVE || res->said == DP_IDLE))
			res->smart = drive_smart(fd, &res->temp, &res->cycles) == 0;
		else
			res->smart = 0;
	}
	drive_ops->close(fd);
}

static void *
worker(void *arg)
{
	struct dio_req *r = arg;
	ssize_t n;

	work(r);
	/* The read end is never closed before the process exits. */
	do
		n = write(pipefd[1], &r->res, sizeof(r->res));
	while (n == -1 && errno == EINTR);
	free(r);
	return NULL;
}

static void
pipe_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct dio_result r;

	(void)l;
	(void)w;
	(void)revents;
	while (read(pipefd[0], &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		if (r.bay < 1 || r.bay > BOARD_MAX_BAYS || !busy[r.bay - 1])
			continue;
		busy[r.bay - 1] = 0;
		inflight--;
		r.name[sizeof(r.name) - 1] = '\0';
		drive_io_done(&r);
	}
}

int
dio_start(const struct disk_io *d, enum dio_op op, int smart)
{
	struct dio_req *r;

	if (d->bay < 1 || d->bay > BOARD_MAX_BAYS) {
		errno = EINVAL;
		return -1;
	}
	if (busy[d->bay - 1]) {
		errno = EBUSY;
		return -1;
	}
	if (worker_pipe(pipefd, &pipe_w, pipe_cb) == -1 || (r = calloc(1, sizeof(*r))) == NULL)
		return -1;
	r->res.bay = d->bay;
	r->res.gen = d->gen;
	r->res.op = op;
	r->res.smart = smart;
	r->res.temp = -1000;
	r->res.cycles = -1;
	r->ata = d->ata;
	r->id = d->id;
	if (pathf(r->res.name, sizeof(r->res.name), "%s", d->name) == -1) {
		free(r);
		errno = ENAMETOOLONG;
		return -1;
	}
	if (worker_start(worker, r) == -1)
		return -1;	/* r freed */
	busy[d->bay - 1] = 1;
	inflight++;
	return 0;
}

int
dio_busy(int bay)
{
	return bay >= 1 && bay <= BOARD_MAX_BAYS && busy[bay - 1];
}

int
dio_inflight(void)
{
	return inflight;
}
