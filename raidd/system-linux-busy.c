/*
 * Why a disk must not be touched: the kernel holds it or one of its
 * partitions (md member, dm table), or it or a partition is mounted or
 * swapped on.  The first reason found goes into sys_disk.busy, worded
 * for the user.
 */
#include <sys/sysmacros.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system-linux.h"

/* A holder by the name people know: md_vol_t1, or a dm name. */
static void
holder_describe(const char *holder, char *out, size_t len)
{
	char path[PATH_MAX], name[128];

	snprintf(path, sizeof(path), "/sys/block/%s/dm/name", holder);
	if (lnx_read_file(path, name, sizeof(name)) == 0) {
		snprintf(out, len, "used by device-mapper %.64s", name);
		return;
	}
	snprintf(out, len, "member of %.64s", holder);
}

/* dir is /sys/block/<disk>[/<part>]. */
static int
held(const char *dir, char *out, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/holders", dir);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		holder_describe(e->d_name, out, len);
		closedir(d);
		return 1;
	}
	closedir(d);
	return 0;
}

/*
 * mountinfo: "id parent maj:min root mountpoint opts ... - fstype source".
 * btrfs reports an anonymous maj:min, so the source is compared too.
 */
static int
mounted(dev_t dev, const char *name, char *out, size_t len)
{
	char line[4096], mp[PATH_MAX], src[PATH_MAX], node[PATH_MAX];
	unsigned ma, mi;
	const char *sep;
	FILE *f;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return 0;
	snprintf(node, sizeof(node), "/dev/%s", name);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, mp) != 3)
			continue;
		src[0] = '\0';
		if ((sep = strstr(line, " - ")) != NULL)
			sscanf(sep, " - %*s %4095s", src);
		if (makedev(ma, mi) == dev || strcmp(src, node) == 0) {
			snprintf(out, len, "mounted at %.96s", mp);
			fclose(f);
			return 1;
		}
	}
	fclose(f);
	return 0;
}

static int
swapped(const char *name, char *out, size_t len)
{
	char line[512], node[PATH_MAX], src[PATH_MAX];
	FILE *f;

	if ((f = fopen("/proc/swaps", "re")) == NULL)
		return 0;
	snprintf(node, sizeof(node), "/dev/%s", name);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%4095s", src) == 1 && strcmp(src, node) == 0) {
			snprintf(out, len, "swap space");
			fclose(f);
			return 1;
		}
	}
	fclose(f);
	return 0;
}

/* One block device (the disk or a partition) by kernel name. */
static int
busy_one(const char *dir, const char *name, char *out, size_t len)
{
	dev_t dev;

	if (held(dir, out, len))
		return 1;
	if (lnx_devnum(name, &dev) == 0 && mounted(dev, name, out, len))
		return 1;
	return swapped(name, out, len);
}

void
lnx_busy(struct sys_disk *d)
{
	char (*part)[SYS_NAME_MAX];
	char dir[PATH_MAX], why[96];
	int i, n;

	d->busy[0] = '\0';
	snprintf(dir, sizeof(dir), "/sys/block/%s", d->name);
	if (busy_one(dir, d->name, d->busy, sizeof(d->busy)))
		return;
	if ((part = calloc(LNX_MAX_PARTS, sizeof(*part))) == NULL) {
		/* Unknown is not free. */
		snprintf(d->busy, sizeof(d->busy), "partitions unreadable");
		return;
	}
	n = lnx_partitions(d->name, part, LNX_MAX_PARTS);
	for (i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "/sys/block/%s/%s", d->name, part[i]);
		if (busy_one(dir, part[i], why, sizeof(why))) {
			snprintf(d->busy, sizeof(d->busy), "%.24s: %.96s", part[i], why);
			break;
		}
	}
	free(part);
}
