/*
 * raidd's seam on a real kernel: the ops table, the small sysfs and
 * device-node helpers the other system-linux-*.c files share, and the
 * dm-linear joins (lib/dm.c does the ioctls).
 *
 * Every op returns -1 with errno set on failure and logs what failed;
 * the appliance has no udev, so device nodes are made here when
 * devtmpfs has not (yet) made them.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dm.h"
#include "log.h"
#include "system-linux.h"

#define NODE_POLL_MS	50

void
lnx_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* One sysfs attribute, trailing newline removed. */
int
lnx_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n == -1)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

/* /sys/block/<dev>/<rel>, without the blanks SCSI pads strings with; "" if absent. */
void
lnx_block_attr(const char *dev, const char *rel, char *out, size_t len)
{
	char path[512];
	size_t lead;

	snprintf(path, sizeof(path), "/sys/block/%s/%s", dev, rel);
	if (lnx_read_file(path, out, len) == -1)
		out[0] = '\0';
	lead = strspn(out, " \t");
	memmove(out, out + lead, strlen(out + lead) + 1);
}

int
lnx_read_u64(const char *path, uint64_t *v)
{
	char buf[32], *end;

	if (lnx_read_file(path, buf, sizeof(buf)) == -1)
		return -1;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno != 0 || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int
lnx_write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, saved;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, val, len);
	saved = errno;
	close(fd);
	if (n == -1) {
		errno = saved;
		return -1;
	}
	if ((size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* Device number of a kernel block device name, or of a dm name. */
int
lnx_devnum(const char *dev, dev_t *out)
{
	char path[256], buf[32];
	struct stat st;
	unsigned ma, mi;

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", dev);
	if (lnx_read_file(path, buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%u:%u", &ma, &mi) == 2) {
		*out = makedev(ma, mi);
		return 0;
	}
	/* dm devices are dm-N in sysfs; their names live in /dev/mapper. */
	snprintf(path, sizeof(path), "/dev/mapper/%s", dev);
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		*out = st.st_rdev;
		return 0;
	}
	errno = ENODEV;
	return -1;
}

/* /dev/<dev>, made from sysfs if missing; within ms for a new device. */
int
lnx_node_wait(const char *dev, int ms)
{
	char path[256];
	struct stat st;
	dev_t num;
	int waited;

	for (waited = 0; lnx_devnum(dev, &num) == -1; waited += NODE_POLL_MS) {
		if (waited >= ms) {
			errno = ETIMEDOUT;
			return -1;
		}
		lnx_sleep_ms(NODE_POLL_MS);
	}
	snprintf(path, sizeof(path), "/dev/%s", dev);
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == num)
		return 0;
	/* devtmpfs is slow or absent, or the node is stale. */
	unlink(path);
	if (mknod(path, S_IFBLK | 0600, num) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* The node to open for a kernel name or a dm name. */
int
lnx_devpath(const char *dev, char *out, size_t len)
{
	struct stat st;

	if (strchr(dev, '/') != NULL || dev[0] == '.') {
		errno = EINVAL;
		return -1;
	}
	snprintf(out, len, "/dev/mapper/%s", dev);
	if (stat(out, &st) == 0 && S_ISBLK(st.st_mode))
		return 0;
	snprintf(out, len, "/dev/%s", dev);
	if (stat(out, &st) == 0 && S_ISBLK(st.st_mode))
		return 0;
	return lnx_node_wait(dev, 0);
}

/* Kernel names of disk's partitions, in directory order; at most max. */
int
lnx_partitions(const char *disk, char (*out)[SYS_NAME_MAX], int max)
{
	char path[512];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/block/%s", disk);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(dir)) != NULL && n < max) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= SYS_NAME_MAX)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/%s/partition",
		    disk, e->d_name);
		if (access(path, F_OK) == 0)
			snprintf(out[n++], SYS_NAME_MAX, "%s", e->d_name);
	}
	closedir(dir);
	return n;
}

/* Segments become linear targets naming devices by number. */
static int
join_targets(const char *name, const struct sys_seg *seg, int n, struct dm_target *t,
    char (*params)[64])
{
	uint64_t at = 0;
	dev_t num;
	int i;

	if (n < 1 || n > SYS_MAX_SEGS) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (seg[i].len == 0 || seg[i].len % 512 || seg[i].offset % 512) {
			log_warnx("dm %s: segment %d not in whole sectors", name, i);
			errno = EINVAL;
			return -1;
		}
		if (lnx_devnum(seg[i].dev, &num) == -1) {
			log_warn("dm %s: segment %d: %s", name, i, seg[i].dev);
			return -1;
		}
		snprintf(params[i], 64, "%u:%u %" PRIu64,
		    major(num), minor(num), seg[i].offset / 512);
		t[i].start = at;
		t[i].len = seg[i].len / 512;
		t[i].type = "linear";
		t[i].params = params[i];
		at += t[i].len;
	}
	return 0;
}

static int
join_create(const char *name, const char *uuid, const struct sys_seg *seg,
    int n)
{
	struct dm_target t[SYS_MAX_SEGS];
	char params[SYS_MAX_SEGS][64];

	if (join_targets(name, seg, n, t, params) == -1)
		return -1;
	return dm_create(name, uuid, t, n, 0);
}

/* A new table for a live map: loaded, then resumed (dm suspends the old one). */
static int
join_reload(const char *name, const struct sys_seg *seg, int n)
{
	struct dm_target t[SYS_MAX_SEGS];
	char params[SYS_MAX_SEGS][64];

	if (join_targets(name, seg, n, t, params) == -1 ||
	    dm_load(name, t, n, 0) == -1)
		return -1;
	return dm_resume(name);
}

/*
 * Idempotent: a device already gone is fine (crash recovery).  One try,
 * never a sleep in the loop: a busy map (a share still holds it, a tool
 * on the console) is EBUSY and the caller's stop changes nothing, so the
 * user can try again.  Not DM_DEFERRED_REMOVE: the map would then vanish
 * later, whenever the holder closes it, under a volume raidd has just
 * reported as still running (delete puts it back), and md cannot stop
 * its arrays while the map exists anyway.
 */
static int
join_remove(const char *name)
{
	if (dm_remove(name) == 0 || errno == ENXIO)
		return 0;
	return -1;
}

static int
join_exists(const char *name)
{
	return dm_exists(name);
}

const struct sys_ops sys_linux = {
	.scan_disks = lnx_scan_disks,
	.scan_disk = lnx_scan_disk,
	.read_at = lnx_read_at,
	.write_at = lnx_write_at,
	.zero_at = lnx_zero_at,
	.dev_open = lnx_dev_open,
	.fd_read = lnx_fd_read,
	.fd_write = lnx_fd_write,
	.fd_zero = lnx_fd_zero,
	.fd_size = lnx_fd_size,
	.fd_sync = lnx_fd_sync,
	.fd_close = lnx_fd_close,
	.node_devnum = lnx_node_devnum,
	.reread_parts = lnx_reread_parts,
	.partition = lnx_partition,
	.part_dev = lnx_part_dev,
	.md_create = lnx_md_create,
	.md_assemble = lnx_md_assemble,
	.md_set_rw = lnx_md_set_rw,
	.md_stop = lnx_md_stop,
	.md_readd = lnx_md_readd,
	.md_add_new = lnx_md_add_new,
	.md_status = lnx_md_status,
	.md_fail = lnx_md_fail,
	.dm_create = join_create,
	.dm_remove = join_remove,
	.dm_exists = join_exists,
	.dev_size = lnx_dev_size,
	.mkfs = lnx_mkfs,
	.mount = lnx_mount,
	.mount_ro = lnx_mount_ro,
	.umount = lnx_umount,
	.is_mounted = lnx_is_mounted,
	.part_resize = lnx_part_resize,
	.part_add = lnx_part_add,
	.part_free = lnx_part_free,
	.part_del = lnx_part_del,
	.md_grow = lnx_md_grow,
	.dm_reload = join_reload,
	.fs_grow = lnx_fs_grow,
	.hotplug_open = lnx_hotplug_open,
	.hotplug_read = lnx_hotplug_read,
	.watch_open = lnx_watch_open,
	.watch_arrays = lnx_watch_arrays,
	.watch_read = lnx_watch_read,
	.md_sync = lnx_md_sync,
	.led_set = lnx_led_set,
	.md_reshape = lnx_md_reshape,
	.md_set_level = lnx_md_set_level,
	.md_freeze = lnx_md_freeze,
};
