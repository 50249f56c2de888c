/*
 * GPT partitions with libfdisk, and getting the kernel to see them.
 * Without udev nobody settles for us: after writing the table we make
 * the kernel re-read it (BLKRRPART; BLKPG one partition at a time if
 * the disk is busy) and wait, bounded, for every partition's node.
 */
#include <sys/ioctl.h>

#include <linux/blkpg.h>
#include <linux/fs.h>

#include <errno.h>
#include <fcntl.h>
#include <libfdisk/libfdisk.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "system-linux.h"

#define RAID_GUID	"A19D880F-05FC-4D3B-A006-743F0F84911E"	/* Linux RAID */
#define PART_WAIT_MS	5000
#define PART_POLL_MS	50
#define RRPART_TRIES	5	/* a prober may hold a partition open briefly */

/* A GUID as GPT stores it (first three fields little-endian), as text. */
static int
guid_text(const uint8_t *g, char *out, size_t len)
{
	static const uint8_t zero[16];

	if (memcmp(g, zero, 16) == 0)
		return 0;
	snprintf(out, len, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-"
	    "%02X%02X%02X%02X%02X%02X", g[3], g[2], g[1], g[0], g[5], g[4],
	    g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
	return 1;
}

static int
add_part(struct fdisk_context *cxt, const struct sys_part *p, size_t partno)
{
	struct fdisk_label *lb = fdisk_get_label(cxt, NULL);
	unsigned long ss = fdisk_get_sector_size(cxt);
	struct fdisk_partition *pa;
	struct fdisk_parttype *type;
	char guid[40], tguid[40];
	int r;

	if (p->start % ss || p->size % ss || p->size == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((pa = fdisk_new_partition()) == NULL)
		return -1;
	type = fdisk_label_get_parttype_from_string(lb,
	    guid_text(p->type, tguid, sizeof(tguid)) ? tguid : RAID_GUID);
	/* Exact placement: the plan has aligned it already. */
	fdisk_partition_set_start(pa, p->start / ss);
	fdisk_partition_set_size(pa, p->size / ss);
	fdisk_partition_size_explicit(pa, 1);
	fdisk_partition_set_partno(pa, partno);
	fdisk_partition_set_name(pa, p->name);
	if (type != NULL)
		fdisk_partition_set_type(pa, type);
	/* raidd's own GUID, recorded in its label first: the proof checks it. */
	if (guid_text(p->guid, guid, sizeof(guid)) &&
	    (r = fdisk_partition_set_uuid(pa, guid)) < 0) {
		fdisk_unref_partition(pa);
		fdisk_unref_parttype(type);
		errno = -r;
		return -1;
	}
	r = fdisk_add_partition(cxt, pa, NULL);
	fdisk_unref_partition(pa);
	fdisk_unref_parttype(type);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* Written through fd, which raidd proved (Decision 21); never reopened. */
static int
write_gpt(const char *disk, int fd, const char *path, const struct sys_part *p, int n)
{
	struct fdisk_context *cxt;
	int i, r;

	if ((cxt = fdisk_new_context()) == NULL)
		return -1;
	fdisk_disable_dialogs(cxt, 1);
	if ((r = fdisk_assign_device_by_fd(cxt, fd, path, 0)) < 0 ||
	    (r = fdisk_create_disklabel(cxt, "gpt")) < 0) {
		errno = -r;
		log_warn("%s: new GPT", disk);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if (add_part(cxt, &p[i], i) == -1) {
			log_warn("%s: partition %d at %llu, %llu bytes", disk,
			    i + 1, (unsigned long long)p[i].start,
			    (unsigned long long)p[i].size);
			goto fail;
		}
	}
	if ((r = fdisk_write_disklabel(cxt)) < 0) {
		errno = -r;
		log_warn("%s: write GPT", disk);
		goto fail;
	}
	/* nosync 0: fsync (fd stays open: it is the caller's); the kernel
	   is told below. */
	if ((r = fdisk_deassign_device(cxt, 0)) < 0) {
		errno = -r;
		log_warn("%s: sync GPT", disk);
		fdisk_unref_context(cxt);
		return -1;
	}
	fdisk_unref_context(cxt);
	return 0;
fail:
	/* Nothing written; fd stays the caller's. */
	r = errno;
	fdisk_unref_context(cxt);
	errno = r;
	return -1;
}

static int
blkpg(int fd, int op, int pno, uint64_t start, uint64_t len)
{
	struct blkpg_partition part = { .start = start, .length = len,
	    .pno = pno };
	struct blkpg_ioctl_arg arg = { .op = op, .datalen = sizeof(part),
	    .data = &part };

	return ioctl(fd, BLKPG, &arg);
}

/* BLKRRPART failed as busy: drop what is not busy, add what is new. */
static int
blkpg_sync(int fd, const char *disk, const struct sys_part *p, int n)
{
	char (*old)[SYS_NAME_MAX];
	char path[PATH_MAX];
	uint64_t pno;
	int i, count;

	if ((old = calloc(LNX_MAX_PARTS, sizeof(*old))) == NULL)
		return -1;
	count = lnx_partitions(disk, old, LNX_MAX_PARTS);
	for (i = 0; i < count; i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/%s/partition",
		    disk, old[i]);
		if (lnx_read_u64(path, &pno) == 0)
			blkpg(fd, BLKPG_DEL_PARTITION, pno, 0, 0);
	}
	free(old);
	for (i = 0; i < n; i++) {
		if (blkpg(fd, BLKPG_ADD_PARTITION, i + 1, p[i].start,
		    p[i].size) == -1 && errno != EBUSY) {
			log_warn("%s: tell the kernel of partition %d", disk,
			    i + 1);
			return -1;
		}
	}
	return 0;
}

/* Does the kernel show exactly the partitions of p (none if n is 0)? */
static int
kernel_agrees(const char *disk, const struct sys_part *p, int n)
{
	char (*have)[SYS_NAME_MAX];
	char name[SYS_NAME_MAX];
	int i, count;

	if ((have = calloc(LNX_MAX_PARTS, sizeof(*have))) == NULL)
		return 0;
	count = lnx_partitions(disk, have, LNX_MAX_PARTS);
	free(have);
	if (count != n)
		return 0;
	for (i = 0; i < n; i++)
		if (lnx_part_dev(disk, p[i].start, name, sizeof(name)) == -1)
			return 0;
	return 1;
}

/*
 * The kernel's view of the table; p == NULL: just drop old partitions.
 * BLKRRPART can fail as busy, and some kernels answer 0 without
 * rescanning (seen on loop devices): then BLKPG, one partition at a time.
 */
static int
reread(const char *disk, int fd, const struct sys_part *p, int n)
{
	int try, r = -1;

	for (try = 0; try < RRPART_TRIES; try++) {
		if ((r = ioctl(fd, BLKRRPART)) == 0 || errno != EBUSY)
			break;
		lnx_sleep_ms(PART_POLL_MS * 2);
	}
	if (r == -1 && errno != EBUSY) {
		log_warn("%s: re-read partition table", disk);
		return -1;
	}
	if (r == -1 || !kernel_agrees(disk, p, n))
		r = blkpg_sync(fd, disk, p, n);
	if (r == 0 && !kernel_agrees(disk, p, n)) {
		log_warnx("%s: the kernel keeps partitions in use", disk);
		errno = EBUSY;
		return -1;
	}
	return r;
}

/*
 * For wiped disks: afterwards the kernel shows no partition at all, even
 * if it had to be told one by one (BLKPG) because it did not rescan.
 */
int
lnx_reread_parts(const char *disk, int fd)
{
	return reread(disk, fd, NULL, 0);
}

/* Waits until the kernel shows partition p and its node exists. */
static int
part_wait(const char *disk, const struct sys_part *p, int *waited)
{
	char name[SYS_NAME_MAX];

	while (lnx_part_dev(disk, p->start, name, sizeof(name)) == -1) {
		if (*waited >= PART_WAIT_MS) {
			errno = ETIMEDOUT;
			return -1;
		}
		lnx_sleep_ms(PART_POLL_MS);
		*waited += PART_POLL_MS;
	}
	return lnx_node_wait(name, PART_WAIT_MS - *waited);
}

int
lnx_partition(const char *disk, int fd, const struct sys_part *p, int n)
{
	char path[PATH_MAX];
	int i, waited = 0;

	if (n < 1 || n > SYS_MAX_PARTS) {
		errno = EINVAL;
		return -1;
	}
	if (lnx_devpath(disk, path, sizeof(path)) == -1) {
		log_warn("%s", disk);
		return -1;
	}
	if (write_gpt(disk, fd, path, p, n) == -1 || reread(disk, fd, p, n) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (part_wait(disk, &p[i], &waited) == -1) {
			log_warn("%s: partition %d did not appear", disk, i + 1);
			return -1;
		}
	}
	return 0;
}

int
lnx_part_dev(const char *disk, uint64_t start, char *out, size_t len)
{
	char (*part)[SYS_NAME_MAX];
	char path[PATH_MAX];
	uint64_t s;
	int i, n, found = -1;

	if ((part = calloc(LNX_MAX_PARTS, sizeof(*part))) == NULL)
		return -1;
	n = lnx_partitions(disk, part, LNX_MAX_PARTS);
	for (i = 0; i < n && found == -1; i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/%s/start", disk,
		    part[i]);
		if (lnx_read_u64(path, &s) == 0 && s * 512 == start) {
			snprintf(out, len, "%s", part[i]);
			found = 0;
		}
	}
	free(part);
	if (found == -1)
		errno = ENOENT;
	return found;
}

/*
 * libfdisk's view of fd's GPT: 1 when an entry starts at start (its
 * size in *size, its number in *no), 0 when none (*no: the first unused
 * entry, or SIZE_MAX), -1 when one overlaps [start, start + len) (EBUSY)
 * or the table cannot be read.
 */
static int
gpt_place(struct fdisk_context *cxt, uint64_t start, uint64_t len, uint64_t *size,
    size_t *no)
{
	struct fdisk_table *tb = NULL;
	unsigned long ss = fdisk_get_sector_size(cxt);
	int r, found = 0;

	*no = SIZE_MAX;
	for (size_t i = 0; i < fdisk_get_npartitions(cxt) && *no == SIZE_MAX; i++)
		if (!fdisk_is_partition_used(cxt, i))
			*no = i;
	if ((r = fdisk_get_partitions(cxt, &tb)) < 0)
		return errno = -r, -1;
	for (size_t i = 0; i < fdisk_table_get_nents(tb) && found != -1; i++) {
		struct fdisk_partition *pa = fdisk_table_get_partition(tb, i);
		uint64_t s, n;

		if (!fdisk_partition_has_start(pa) || !fdisk_partition_has_size(pa))
			continue;
		s = fdisk_partition_get_start(pa) * ss;
		n = fdisk_partition_get_size(pa) * ss;
		if (s == start && found == 0) {
			*size = n;
			*no = fdisk_partition_get_partno(pa);
			found = 1;
		} else if (s < start + len && start < s + n) {
			found = -1;
		}
	}
	fdisk_unref_table(tb);
	if (found == -1)
		errno = EBUSY;
	return found;
}

/*
 * The kernel's partitions of disk against [start, start + size): 1 when
 * one is exactly there, 0 when none touches it, -1 (EBUSY) when one
 * overlaps it or starts there with another size (sysfs start and size,
 * in sectors).
 */
static int
kernel_place(const char *disk, uint64_t start, uint64_t size)
{
	char (*part)[SYS_NAME_MAX];
	char path[PATH_MAX];
	uint64_t s, n;
	int i, cnt, found = 0;

	if ((part = calloc(LNX_MAX_PARTS, sizeof(*part))) == NULL)
		return -1;
	cnt = lnx_partitions(disk, part, LNX_MAX_PARTS);
	for (i = 0; i < cnt && found != -1; i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/%s/start", disk, part[i]);
		if (lnx_read_u64(path, &s) == -1) {
			found = -1;
			break;
		}
		snprintf(path, sizeof(path), "/sys/block/%s/%s/size", disk, part[i]);
		if (lnx_read_u64(path, &n) == -1) {
			found = -1;
			break;
		}
		s *= 512;
		n *= 512;
		if (s == start && n == size)
			found = 1;
		else if (s < start + size && start < s + n)
			found = -1;
	}
	free(part);
	if (found == -1)
		errno = EBUSY;
	return found;
}

/* libfdisk on the GPT read through fd (a proven handle on disk); NULL: errno. */
static struct fdisk_context *
gpt_open(const char *disk, int fd)
{
	struct fdisk_context *cxt;
	char path[PATH_MAX];
	int r;

	if (lnx_devpath(disk, path, sizeof(path)) == -1 ||
	    (cxt = fdisk_new_context()) == NULL)
		return NULL;
	fdisk_disable_dialogs(cxt, 1);
	if ((r = fdisk_assign_device_by_fd(cxt, fd, path, 0)) < 0) {
		fdisk_unref_context(cxt);
		errno = -r;
		return NULL;
	}
	if (!fdisk_is_labeltype(cxt, FDISK_DISKLABEL_GPT)) {
		fdisk_unref_context(cxt);
		errno = EINVAL;
		return NULL;
	}
	return cxt;
}

/*
 * One more partition while the others are in use (volume.grow's new
 * tier): libfdisk adds the entry to the table read through fd, and
 * BLKPG_ADD_PARTITION tells the kernel.  The place must be free on both
 * (EBUSY): no entry of the table and no partition the kernel has may
 * overlap it, except one exactly there (start and size).  A re-read is
 * no option: the disk is busy.  Run again after a power cut it adds
 * what is missing.  check: only the proof that the place is free.
 */
static int
part_add(const char *disk, int fd, const struct sys_part *p, int check)
{
	struct fdisk_context *cxt;
	char name[SYS_NAME_MAX];
	uint64_t have = 0;
	size_t no;
	int r, k, waited = 0;

	if ((cxt = gpt_open(disk, fd)) == NULL)
		return -1;
	if ((r = gpt_place(cxt, p->start, p->size, &have, &no)) == -1)
		goto fail;
	if (r == 1 && have != p->size) {
		errno = EBUSY;
		goto fail;
	}
	if ((k = kernel_place(disk, p->start, p->size)) == -1)
		goto fail;
	if (check) {
		fdisk_deassign_device(cxt, 1);
		fdisk_unref_context(cxt);
		return 0;
	}
	if (r == 0 && no == SIZE_MAX) {
		errno = ENOSPC;
		goto fail;
	}
	if (r == 0 && add_part(cxt, p, no) == -1)
		goto fail;
	if (r == 0 && (r = fdisk_write_disklabel(cxt)) < 0) {
		errno = -r;
		goto fail;
	}
	/* nosync: BLKRRPART would fail on the busy disk; fd's close syncs. */
	if (fdisk_deassign_device(cxt, 1) < 0)
		log_warnx("%s: closing after the GPT write", disk);
	fdisk_unref_context(cxt);
	/* Exactly there already (start and size, kernel_place). */
	if (k == 1 && lnx_part_dev(disk, p->start, name, sizeof(name)) == 0)
		return lnx_node_wait(name, PART_WAIT_MS);
	/* The kernel's number for it is the GPT entry's. */
	if (blkpg(fd, BLKPG_ADD_PARTITION, (int)no + 1, p->start, p->size) == -1) {
		log_warn("%s: telling the kernel of partition %zu", disk, no + 1);
		return -1;
	}
	return part_wait(disk, p, &waited);
fail:
	r = errno;
	log_warn("%s: adding the partition at %llu", disk, (unsigned long long)p->start);
	fdisk_unref_context(cxt);
	errno = r;
	return -1;
}

int
lnx_part_add(const char *disk, int fd, const struct sys_part *p)
{
	return part_add(disk, fd, p, 0);
}

int
lnx_part_free(const char *disk, int fd, const struct sys_part *p)
{
	return part_add(disk, fd, p, 1);
}

/* The kernel's number of its partition name on disk (sysfs), -1 if none. */
static int
kernel_partno(const char *disk, const char *name, uint64_t *pno)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/%s/partition", disk, name);
	return lnx_read_u64(path, pno);
}

/*
 * A partition leaves while the disk's others are in use (a join rolled
 * back, Decision 133): both the table read through fd and the kernel
 * must have exactly [start, start + size) or nothing there (EBUSY
 * otherwise); BLKPG_DEL_PARTITION first, which the kernel refuses
 * (EBUSY) while the partition is open (md, dm, a mount), so nothing is
 * written then; the GPT entry next.  A power cut between leaves the
 * entry, which the next call removes (a reboot brings the partition back
 * and the call removes both).
 */
int
lnx_part_del(const char *disk, int fd, uint64_t start, uint64_t size)
{
	struct fdisk_context *cxt;
	char name[SYS_NAME_MAX];
	uint64_t have = 0, pno;
	size_t no;
	int r, g, k;

	if ((cxt = gpt_open(disk, fd)) == NULL)
		return -1;
	if ((g = gpt_place(cxt, start, size, &have, &no)) == -1)
		goto fail;
	if (g == 1 && have != size) {
		errno = EBUSY;
		goto fail;
	}
	if ((k = kernel_place(disk, start, size)) == -1)
		goto fail;
	if (k == 1 && (lnx_part_dev(disk, start, name, sizeof(name)) == -1 ||
	    kernel_partno(disk, name, &pno) == -1 ||
	    blkpg(fd, BLKPG_DEL_PARTITION, (int)pno, 0, 0) == -1))
		goto fail;
	if (g == 1 && (r = fdisk_delete_partition(cxt, no)) < 0) {
		errno = -r;
		goto fail;
	}
	if (g == 1 && (r = fdisk_write_disklabel(cxt)) < 0) {
		errno = -r;
		goto fail;
	}
	/* nosync: BLKRRPART would fail on the busy disk; fd's close syncs. */
	if (fdisk_deassign_device(cxt, 1) < 0)
		log_warnx("%s: closing after the GPT write", disk);
	fdisk_unref_context(cxt);
	return 0;
fail:
	r = errno;
	log_warn("%s: removing the partition at %llu", disk, (unsigned long long)start);
	fdisk_unref_context(cxt);
	errno = r;
	return -1;
}
