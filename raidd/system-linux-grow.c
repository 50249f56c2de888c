/*
 * Growing in place, for volume.grow: a partition in use made longer
 * (libfdisk for the GPT, which also moves the backup GPT to the end of
 * a disk that grew; BLKPG_RESIZE_PARTITION for the kernel, since a busy
 * disk cannot be re-read), md's members and component size through
 * sysfs as mdadm --grow --size=max does, and the filesystem grown online.
 * Each one first looks whether it is done already: grow.c runs them
 * again after a power cut.
 */
#include <sys/ioctl.h>

#include <linux/blkpg.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <libfdisk/libfdisk.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "system-linux.h"

/* resize2fs on a big volume takes a while; an hour means it hangs. */
#define FS_GROW_TIMEOUT	3600.

/*
 * The GPT entry starting at start (bytes) becomes size bytes long,
 * written through fd, which raidd proved (Decision 21); never reopened.
 */
static int
gpt_resize(int fd, const char *path, uint64_t start, uint64_t size)
{
	struct fdisk_context *cxt;
	struct fdisk_table *tb = NULL;
	struct fdisk_partition *pa, *grow = NULL;
	unsigned long ss;
	uint64_t now = 0;
	size_t partno = SIZE_MAX;
	int r;

	if ((cxt = fdisk_new_context()) == NULL)
		return -1;
	fdisk_disable_dialogs(cxt, 1);
	if ((r = fdisk_assign_device_by_fd(cxt, fd, path, 0)) < 0 ||
	    !fdisk_is_labeltype(cxt, FDISK_DISKLABEL_GPT) ||
	    (r = fdisk_get_partitions(cxt, &tb)) < 0)
		goto fail;
	ss = fdisk_get_sector_size(cxt);
	for (size_t i = 0; i < fdisk_table_get_nents(tb) && partno == SIZE_MAX; i++) {
		pa = fdisk_table_get_partition(tb, i);
		if (fdisk_partition_has_start(pa) &&
		    fdisk_partition_get_start(pa) * ss == start) {
			partno = fdisk_partition_get_partno(pa);
			now = fdisk_partition_get_size(pa) * ss;
		}
	}
	if (partno != SIZE_MAX && now == size) {
		r = 0;		/* done already */
		goto out;
	}
	if (partno == SIZE_MAX || start % ss || size % ss) {
		r = -ENOENT;
		goto fail;
	}
	if ((grow = fdisk_new_partition()) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	fdisk_partition_set_size(grow, size / ss);
	fdisk_partition_size_explicit(grow, 1);
	if ((r = fdisk_set_partition(cxt, partno, grow)) < 0 ||
	    (r = fdisk_write_disklabel(cxt)) < 0)
		goto fail;
out:
	fdisk_unref_partition(grow);
	fdisk_unref_table(tb);
	/* nosync: the disk is busy, BLKRRPART would fail; BLKPG follows,
	   and the caller's close of fd syncs. fd stays the caller's. */
	if (fdisk_deassign_device(cxt, 1) < 0)
		log_warnx("%s: closing after the GPT write", path);
	fdisk_unref_context(cxt);
	return r;
fail:
	fdisk_unref_partition(grow);
	fdisk_unref_table(tb);
	fdisk_unref_context(cxt);
	errno = r < 0 ? -r : EINVAL;
	return -1;
}

/* The sysfs reads go by name: the caller rechecks fd's node around this. */
int
lnx_part_resize(const char *disk, int fd, uint64_t start, uint64_t size)
{
	struct blkpg_partition part = { .start = (long long)start,
	    .length = (long long)size };
	struct blkpg_ioctl_arg arg = { .op = BLKPG_RESIZE_PARTITION,
	    .datalen = sizeof(part), .data = &part };
	char path[PATH_MAX], dev[SYS_NAME_MAX], attr[PATH_MAX];
	uint64_t pno, now;
	int r;

	if (lnx_devpath(disk, path, sizeof(path)) == -1 ||
	    lnx_part_dev(disk, start, dev, sizeof(dev)) == -1)
		return -1;
	if (gpt_resize(fd, path, start, size) == -1) {
		log_warn("%s: growing the partition at %" PRIu64 " in the GPT", disk, start);
		return -1;
	}
	snprintf(attr, sizeof(attr), "/sys/block/%s/%s/size", disk, dev);
	if (lnx_read_u64(attr, &now) == 0 && now * 512 == size)
		return 0;
	snprintf(attr, sizeof(attr), "/sys/block/%s/%s/partition", disk, dev);
	if (lnx_read_u64(attr, &pno) == -1)
		return -1;
	part.pno = (int)pno;
	if ((r = ioctl(fd, BLKPG, &arg)) == -1)
		log_warn("%s: BLKPG_RESIZE_PARTITION %s", disk, dev);
	return r == -1 ? -1 : 0;
}

int
lnx_md_grow(const char *name, uint64_t sectors)
{
	char path[PATH_MAX], val[32];
	struct dirent *e;
	uint64_t kib;
	DIR *dir;
	int rc = 0;

	snprintf(path, sizeof(path), "/sys/block/%s/md/component_size", name);
	if (lnx_read_u64(path, &kib) == -1)
		return -1;
	if (kib * 2 == sectors)
		return 0;
	/* Each member first takes what its (grown) partition allows: "0" is max. */
	snprintf(path, sizeof(path), "/sys/block/%s/md", name);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(dir)) != NULL) {
		if (strncmp(e->d_name, "dev-", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/md/%s/size", name, e->d_name);
		if (lnx_write_file(path, "0") == -1) {
			log_warn("%s: %s size", name, e->d_name);
			rc = -1;
		}
	}
	closedir(dir);
	if (rc == -1)
		return -1;
	snprintf(path, sizeof(path), "/sys/block/%s/md/component_size", name);
	snprintf(val, sizeof(val), "%" PRIu64, sectors / 2);
	if (lnx_write_file(path, val) == -1) {
		log_warn("%s: component_size %s KiB", name, val);
		return -1;
	}
	return 0;
}

static const char *
tool_path(const char *const *cand)
{
	for (int i = 0; cand[i] != NULL; i++)
		if (access(cand[i], X_OK) == 0)
			return cand[i];
	return NULL;
}

/* resize2fs DEV (online while mounted), or btrfs filesystem resize max DIR. */
int
lnx_fs_grow(const char *fs, const char *dev, const char *dir, sys_done_cb cb, void *arg)
{
	static const char *const resize2fs[] = { "/usr/sbin/resize2fs", "/sbin/resize2fs", NULL };
	static const char *const btrfs[] = { "/usr/bin/btrfs", "/bin/btrfs", "/usr/sbin/btrfs",
		"/sbin/btrfs", NULL };
	char node[PATH_MAX], where[PATH_MAX];
	struct nas_child *ch;
	const char *prog;
	char *argv[8];

	if (strcmp(fs, "ext4") == 0) {
		if ((prog = tool_path(resize2fs)) == NULL || lnx_devpath(dev, node,
		    sizeof(node)) == -1)
			return errno = ENOENT, -1;
		argv[0] = (char *)prog, argv[1] = node, argv[2] = NULL;
	} else if (strcmp(fs, "btrfs") == 0) {
		if ((prog = tool_path(btrfs)) == NULL)
			return errno = ENOENT, -1;
		snprintf(where, sizeof(where), "%s", dir);
		argv[0] = (char *)prog, argv[1] = "filesystem", argv[2] = "resize";
		argv[3] = "max", argv[4] = where, argv[5] = NULL;
	} else {
		return errno = EINVAL, -1;
	}
	if ((ch = nas_child_start(argv, cb, arg)) == NULL) {
		log_warn("growing %s on %s", fs, dev);
		return -1;
	}
	nas_child_timeout(ch, FS_GROW_TIMEOUT, NAS_CHILD_GRACE);
	return 0;
}
