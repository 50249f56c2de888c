/*
 * Whole disks from /sys/block, and byte I/O on any block device.
 * What sits on a disk (signatures) and what holds it (busy) are found
 * by system-linux-sig.c and system-linux-busy.c.
 */
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

#include <linux/fs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "system-linux.h"

/*
 * Real hardware has a "device" link; loop, ram, md, dm, zram and nbd
 * do not.  Loop devices are disks only for host tests (RAIDD_SCAN_LOOP=1)
 * and only while attached.  Optical drives are never disks.
 */
static int
is_disk(const char *name)
{
	char path[PATH_MAX];
	const char *env;
	uint64_t size;

	if (name[0] == '.' || strncmp(name, "sr", 2) == 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/block/%s/size", name);
	if (lnx_read_u64(path, &size) == -1 || size == 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/block/%s/device", name);
	if (access(path, F_OK) == 0)
		return 1;
	env = getenv("RAIDD_SCAN_LOOP");
	if (strncmp(name, "loop", 4) != 0 || env == NULL || strcmp(env, "1"))
		return 0;
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	return access(path, F_OK) == 0;
}

static unsigned
attr_uint(const char *name, const char *rel)
{
	char path[PATH_MAX];
	uint64_t v;

	snprintf(path, sizeof(path), "/sys/block/%s/%s", name, rel);
	return lnx_read_u64(path, &v) == 0 ? (unsigned)v : 0;
}

/* SCSI VPD page 0x80: 4-byte header, byte 3 the length of the serial. */
static int
vpd_serial(const char *name, char *out, size_t len)
{
	unsigned char page[256];
	char path[PATH_MAX];
	size_t n;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/sys/block/%s/device/vpd_pg80", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	got = read(fd, page, sizeof(page));
	close(fd);
	if (got < 4 || page[1] != 0x80)
		return -1;
	n = page[3];
	if (n > (size_t)got - 4)
		n = got - 4;
	if (n >= len)
		n = len - 1;
	memcpy(out, page + 4, n);
	out[n] = '\0';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
	n = strspn(out, " ");
	memmove(out, out + n, strlen(out + n) + 1);
	return out[0] != '\0' ? 0 : -1;
}

static void
serial(const char *name, char *out, size_t len)
{
	static const char *const rel[] = { "device/serial", "serial",
	    "device/wwid", NULL };

	if (vpd_serial(name, out, len) == 0)
		return;
	for (int i = 0; rel[i] != NULL; i++) {
		lnx_block_attr(name, rel[i], out, len);
		if (out[0] != '\0')
			return;
	}
}

static int
fill(struct sys_disk *d, const char *name)
{
	char path[PATH_MAX], real[PATH_MAX], buf[32];

	memset(d, 0, sizeof(*d));
	if (strlen(name) >= sizeof(d->name))
		return -1;
	strcpy(d->name, name);
	/* The board's bay patterns name the controller position. */
	snprintf(path, sizeof(path), "/sys/block/%s/device", name);
	if (realpath(path, real) == NULL) {
		snprintf(path, sizeof(path), "/sys/block/%s", name);
		if (realpath(path, real) == NULL)
			return -1;
	}
	/* Cut short it would match no bay pattern: better no disk. */
	if (strlen(real) >= sizeof(d->syspath)) {
		log_warnx("%s: sysfs path too long: %s", name, real);
		return -1;
	}
	memcpy(d->syspath, real, strlen(real) + 1);
	lnx_block_attr(name, "dev", buf, sizeof(buf));
	if (sscanf(buf, "%u:%u", &d->major, &d->minor) != 2)
		return -1;
	snprintf(path, sizeof(path), "/sys/block/%s/size", name);
	if (lnx_read_u64(path, &d->size) == -1)
		return -1;
	d->size *= 512;		/* sysfs counts 512-byte sectors always */
	lnx_block_attr(name, "device/model", d->model, sizeof(d->model));
	serial(name, d->serial, sizeof(d->serial));
	d->rotational = attr_uint(name, "queue/rotational");
	d->logical_block = attr_uint(name, "queue/logical_block_size");
	d->physical_block = attr_uint(name, "queue/physical_block_size");
	d->removable = attr_uint(name, "removable");
	lnx_busy(d);
	lnx_probe_sigs(d);
	return 0;
}

static int
by_name(const void *a, const void *b)
{
	const struct sys_disk *x = a, *y = b;

	return strcmp(x->name, y->name);
}

int
lnx_scan_disks(struct sys_disk **out, int *n)
{
	struct sys_disk *d = NULL, *grown;
	struct dirent *e;
	DIR *dir;
	int count = 0;

	if ((dir = opendir("/sys/block")) == NULL) {
		log_warn("/sys/block");
		return -1;
	}
	while ((e = readdir(dir)) != NULL) {
		if (!is_disk(e->d_name))
			continue;
		if ((grown = realloc(d, (count + 1) * sizeof(*d))) == NULL) {
			log_warn("scan disks");
			free(d);
			closedir(dir);
			return -1;
		}
		d = grown;
		if (fill(&d[count], e->d_name) == 0)
			count++;
	}
	closedir(dir);
	if (count > 1)
		qsort(d, count, sizeof(*d), by_name);
	*out = d;
	*n = count;
	return 0;
}

/* One disk, probed alone: a uevent must not wake every other disk. */
int
lnx_scan_disk(const char *name, struct sys_disk *d)
{
	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) >= sizeof(d->name)) {
		errno = EINVAL;
		return -1;
	}
	if (!is_disk(name))
		return 1;
	return fill(d, name) == 0 ? 0 : 1;
}

static int
dev_open(const char *dev, int flags)
{
	char path[PATH_MAX];
	int fd;

	if (lnx_devpath(dev, path, sizeof(path)) == -1) {
		log_warn("%s: no device node", dev);
		return -1;
	}
	if ((fd = open(path, flags | O_CLOEXEC)) == -1)
		log_warn("%s", path);
	return fd;
}

/* By name: open, one operation through the descriptor, close. */
int
lnx_read_at(const char *dev, uint64_t off, void *buf, size_t len)
{
	int fd, r;

	if ((fd = dev_open(dev, O_RDONLY)) == -1)
		return -1;
	if ((r = lnx_fd_read(fd, off, buf, len)) == -1)
		log_warn("%s", dev);
	close(fd);
	return r;
}

int
lnx_write_at(const char *dev, uint64_t off, const void *buf, size_t len)
{
	int fd;

	if ((fd = dev_open(dev, O_RDWR)) == -1)
		return -1;
	if (lnx_fd_write(fd, off, buf, len) == -1) {
		close(fd);
		return -1;
	}
	return lnx_fd_close(fd);
}

int
lnx_zero_at(const char *dev, uint64_t off, uint64_t len)
{
	int fd;

	if ((fd = dev_open(dev, O_RDWR)) == -1)
		return -1;
	if (lnx_fd_zero(fd, off, len) == -1) {
		close(fd);
		return -1;
	}
	return lnx_fd_close(fd);
}

int
lnx_dev_size(const char *dev, uint64_t *size)
{
	int fd, r;

	if ((fd = dev_open(dev, O_RDONLY)) == -1)
		return -1;
	r = ioctl(fd, BLKGETSIZE64, size);
	if (r == -1)
		log_warn("%s: size", dev);
	close(fd);
	return r;
}
