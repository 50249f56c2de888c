/*
 * What the board is doing, from counters the kernel keeps anyway: the
 * bay disks' /proc/diskstats (reads and writes since the last sample)
 * and /proc/stat (busy CPU time). Reading them wakes no disk.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "powerd.h"

static char proc_root[PATH_MAX] = "/proc";

void
activity_set_proc_root(const char *r)
{
	pathf(proc_root, sizeof(proc_root), "%s", r);
}

const char *
board_state_name(enum board_state s)
{
	static const char *const names[] = {
		"standby", "idle", "reading", "writing", "mixed"
	};

	return (unsigned)s < BS_NSTATES ? names[s] : "?";
}

static struct disk_io *
disk_named(struct activity *a, const char *name)
{
	for (int i = 0; i < a->ndisks; i++)
		if (strcmp(a->disk[i].name, name) == 0)
			return &a->disk[i];
	return NULL;
}

/* The bay of <root>/block/<name>, or 0; sys gets its device's /sys path. */
static int
bay_of_block(const struct board *b, const char *name, char *sys, size_t syslen)
{
	char p[PATH_MAX], real[PATH_MAX];
	const char *root = sensor_root();
	size_t n = strlen(root);

	pathf(p, sizeof(p), "%s/block/%s/device", root, name);
	if (realpath(p, real) == NULL)
		return 0;
	if (strcmp(root, "/") == 0)
		pathf(sys, syslen, "%s", real);
	else if (strncmp(real, root, n) == 0 && real[n] == '/')
		pathf(sys, syslen, "/sys%s", real + n);
	else
		return 0;
	return board_bay_of(b, sys);
}

static int
by_bay(const void *x, const void *y)
{
	return ((const struct disk_io *)x)->bay - ((const struct disk_io *)y)->bay;
}

void
activity_scan_disks(struct activity *a, const struct board *b, double now)
{
	static struct activity old;	/* 26 KiB: not on the stack */
	static unsigned gen;
	char p[PATH_MAX], sys[PATH_MAX], vendor[16];
	struct disk_id id;
	struct dirent *e;
	struct disk_io *d, *was;
	DIR *dir;
	int bay;

	old = *a;
	a->ndisks = 0;
	pathf(p, sizeof(p), "%s/block", sensor_root());
	if ((dir = opendir(p)) == NULL)
		return;
	while ((e = readdir(dir)) != NULL && a->ndisks < BOARD_MAX_BAYS) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(d->name))
			continue;
		if ((bay = bay_of_block(b, e->d_name, sys, sizeof(sys))) == 0)
			continue;
		d = &a->disk[a->ndisks++];
		/*
		 * The same disk in the same bay keeps its counters and state;
		 * another one under the old name (swapped) starts afresh, its
		 * identity read from the kernel's copy, no command to the disk.
		 */
		(void)disk_id_read(e->d_name, &id);
		if ((was = disk_named(&old, e->d_name)) != NULL && was->bay == bay &&
		    disk_id_same(&id, &was->id)) {
			*d = *was;
			continue;
		}
		memset(d, 0, sizeof(*d));
		if (++gen == 0)
			gen = 1;
		d->gen = gen;
		d->id = id;
		pathf(d->name, sizeof(d->name), "%s", e->d_name);
		pathf(d->device, sizeof(d->device), "%s", sys);
		/* libata's SCSI layer says "ATA" as the vendor. */
		pathf(p, sizeof(p), "%s/block/%s/device/vendor", sensor_root(), e->d_name);
		d->ata = sysread_line(p, vendor, sizeof(vendor)) == RD_OK &&
		    strncmp(vendor, "ATA", 3) == 0;
		d->bay = bay;
		d->smart_temp = -1000;
		d->power_cycles = -1;
		d->power = DP_IDLE;
		d->idle_since = now;
	}
	closedir(dir);
	/* Bay order, whatever order readdir gave. */
	qsort(a->disk, (size_t)a->ndisks, sizeof(a->disk[0]), by_bay);
}

static void
disk_update(struct disk_io *d, uint64_t rd_ios, uint64_t rd_sect, uint64_t wr_ios,
    uint64_t wr_sect, double dt, double now)
{
	int first = !d->seen;

	d->seen = 1;
	d->reading = d->writing = 0;
	/* Counters that went back: another disk under that name; start over. */
	if (!first && rd_ios >= d->rd_ios && rd_sect >= d->rd_sect &&
	    wr_ios >= d->wr_ios && wr_sect >= d->wr_sect) {
		d->reading = rd_ios > d->rd_ios || rd_sect > d->rd_sect;
		d->writing = wr_ios > d->wr_ios || wr_sect > d->wr_sect;
	}
	d->rd_ios = rd_ios;
	d->rd_sect = rd_sect;
	d->wr_ios = wr_ios;
	d->wr_sect = wr_sect;
	if (d->power == DP_STANDBY && dt > 0)
		d->standby_s += dt;
	if (d->reading || d->writing) {
		if (d->power == DP_STANDBY)
			d->spinups++;
		d->power = DP_ACTIVE;
		d->idle_since = now;
	} else if (d->power == DP_ACTIVE)
		d->power = DP_IDLE;
}

int
activity_diskstats(struct activity *a, const char *text, double now)
{
	unsigned long long v[7];
	unsigned maj, min;
	char name[32];
	const char *line = text;
	int found = 0;
	double dt = a->last_at > 0 && now > a->last_at ? now - a->last_at : 0;
	struct disk_io *d;

	a->last_at = now;
	while (line != NULL && *line != '\0') {
		/* major minor name reads rmerged rsect rms writes wmerged wsect */
		if (sscanf(line, "%u %u %31s %llu %llu %llu %llu %llu %llu %llu",
		    &maj, &min, name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 10 &&
		    (d = disk_named(a, name)) != NULL) {
			disk_update(d, v[0], v[2], v[4], v[6], dt, now);
			found++;
		}
		if ((line = strchr(line, '\n')) != NULL)
			line++;
	}
	return found == a->ndisks ? 0 : -1;
}

int
activity_cpustat(struct activity *a, const char *text)
{
	unsigned long long u, n, s, idle, iow, irq, sirq, steal = 0;
	uint64_t busy, total;
	const char *line;
	int ncpu = 0;

	if (sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &u, &n, &s, &idle,
	    &iow, &irq, &sirq, &steal) < 7)
		return -1;
	for (line = strchr(text, '\n'); line != NULL; line = strchr(line + 1, '\n'))
		if (strncmp(line + 1, "cpu", 3) == 0 && line[4] >= '0' && line[4] <= '9')
			ncpu++;
	if (ncpu == 0)
		return -1;
	busy = u + n + s + irq + sirq + steal;
	total = busy + idle + iow;
	a->cpu_load = 0;
	if (a->cpu_seen && total > a->cpu_total && busy >= a->cpu_busy)
		a->cpu_load = (double)(busy - a->cpu_busy) /
		    (double)(total - a->cpu_total) * ncpu;
	/* iowait (so idle) may go back under NO_HZ: never more than every core busy. */
	if (a->cpu_load > ncpu)
		a->cpu_load = ncpu;
	a->cpu_busy = busy;
	a->cpu_total = total;
	a->ncpu = ncpu;
	a->cpu_seen = 1;
	return 0;
}

/* Reads a whole /proc file (they are small) into a malloc'ed string. */
static char *
slurp(const char *name)
{
	char p[PATH_MAX];
	char *buf = NULL, *cut;
	size_t len = 0;
	FILE *f;

	pathf(p, sizeof(p), "%s/%s", proc_root, name);
	if ((f = fopen(p, "re")) == NULL)
		return NULL;
	buf = malloc(65536);
	if (buf != NULL) {
		len = fread(buf, 1, 65535, f);
		buf[len] = '\0';
		/* A line cut by the buffer's end would read as smaller counters. */
		if (len == 65535 && (cut = strrchr(buf, '\n')) != NULL)
			cut[1] = '\0';
	}
	fclose(f);
	return buf;
}

void
activity_sample(struct activity *a, double now)
{
	char *t;

	if ((t = slurp("diskstats")) != NULL) {
		if (activity_diskstats(a, t, now) == -1)
			log_debug("diskstats: a bay disk has no line");
		free(t);
	}
	if ((t = slurp("stat")) != NULL) {
		if (activity_cpustat(a, t) == -1)
			log_debug("stat: no cpu line");
		free(t);
	}
}

enum board_state
activity_state(const struct activity *a)
{
	int rd = 0, wr = 0, standby = 0;

	for (int i = 0; i < a->ndisks; i++) {
		rd |= a->disk[i].reading;
		wr |= a->disk[i].writing;
		standby += a->disk[i].power == DP_STANDBY;
	}
	if (rd && wr)
		return BS_MIXED;
	if (rd)
		return BS_READING;
	if (wr)
		return BS_WRITING;
	if (a->ndisks > 0 && standby == a->ndisks)
		return BS_STANDBY;
	return BS_IDLE;
}

void
activity_model_input(const struct activity *a, struct model_input *in)
{
	memset(in->disks, 0, sizeof(in->disks));
	for (int i = 0; i < a->ndisks; i++)
		in->disks[a->disk[i].power]++;
	in->cpu_load = a->cpu_load;
}
