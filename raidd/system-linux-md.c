/*
 * md arrays through the md ioctls, with names chosen by raidd
 * (/sys/module/md_mod/parameters/new_array), never md127.  Creating
 * differs from assembling only in that raidd writes the members' v1.2
 * superblocks and bitmaps first: the kernel imports a v1.x member only
 * from its superblock, whatever ADD_NEW_DISK says.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <linux/major.h>
#include <linux/raid/md_p.h>
#include <linux/raid/md_u.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mdsb.h"
#include "system-linux.h"

#define NEW_ARRAY	"/sys/module/md_mod/parameters/new_array"
#define MD_WAIT_MS	5000
#define STOP_TRIES	20	/* a prober or closing opener may linger */
#define STOP_WAIT_MS	100

#define SB_AT		(MDSB_SUPER_OFFSET * 512ULL)
#define BITMAP_AT	((MDSB_SUPER_OFFSET + MDSB_BITMAP_OFFSET) * 512ULL)

/* The named array's node, made if missing; an existing one must be idle. */
static int
array_open_once(const char *name)
{
	char path[PATH_MAX];
	mdu_array_info_t info;
	int fd, saved;

	if (lnx_write_file(NEW_ARRAY, name) == -1 && errno != EEXIST) {
		log_warn("md %s: create the device", name);
		return -1;
	}
	if (lnx_node_wait(name, MD_WAIT_MS) == -1) {
		log_warn("md %s: no device node", name);
		return -1;
	}
	snprintf(path, sizeof(path), "/dev/%s", name);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) == -1) {
		log_warn("md %s: open", name);
		return -1;
	}
	/* ENODEV: set up but not running, which is what we want. */
	if (ioctl(fd, GET_ARRAY_INFO, &info) == 0) {
		log_warnx("md %s: already running", name);
		close(fd);
		errno = EALREADY;
		return -1;
	}
	if (errno != ENODEV) {
		log_warn("md %s: GET_ARRAY_INFO", name);
		close(fd);
		return -1;
	}
	memset(&info, 0, sizeof(info));
	info.major_version = 1;		/* v1.2: the version alone, no geometry */
	info.minor_version = 2;
	if (ioctl(fd, SET_ARRAY_INFO, &info) == -1) {
		saved = errno;
		if (saved != EBUSY)
			log_warn("md %s: SET_ARRAY_INFO 1.2", name);
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/*
 * EBUSY from SET_ARRAY_INFO: an inactive array of this name still holds
 * members (an earlier attempt died half-way).  It runs nothing, so it is
 * stopped and made afresh, once.
 */
static int
array_open(const struct sys_md *m)
{
	const char *name = m->name;
	int fd;

	if (m->nmembers < 1 || m->nmembers > SYS_MAX_MEMBERS) {
		errno = EINVAL;
		log_warnx("md %s: %d members", name, m->nmembers);
		return -1;
	}
	if (strncmp(name, "md_", 3) != 0 || strchr(name, '/') != NULL) {
		errno = EINVAL;
		log_warnx("md %s: not an md_ name", name);
		return -1;
	}
	if ((fd = array_open_once(name)) != -1 || errno != EBUSY)
		return fd;
	log_info("md %s: stopping an inactive leftover", name);
	if (lnx_md_stop(name) == -1)
		return -1;
	if ((fd = array_open_once(name)) == -1 && errno == EBUSY)
		log_warn("md %s: SET_ARRAY_INFO 1.2", name);
	return fd;
}

/* Superblock then bitmap, durable, with nobody else holding the member. */
static int
write_member(const char *md, const char *dev, const void *sb, size_t sb_len,
    const void *bm, size_t bm_len)
{
	char path[PATH_MAX];
	int fd;

	if (sb == NULL || sb_len == 0 || sb_len > BITMAP_AT - SB_AT) {
		errno = EINVAL;
		log_warnx("md %s: %s: no superblock to write", md, dev);
		return -1;
	}
	if (lnx_devpath(dev, path, sizeof(path)) == -1 ||
	    (fd = open(path, O_RDWR | O_EXCL | O_CLOEXEC)) == -1) {
		log_warn("md %s: %s", md, dev);
		return -1;
	}
	if (pwrite(fd, sb, sb_len, SB_AT) != (ssize_t)sb_len ||
	    (bm_len > 0 && pwrite(fd, bm, bm_len, BITMAP_AT) !=
	    (ssize_t)bm_len) || fdatasync(fd) == -1) {
		if (errno == 0)
			errno = EIO;
		log_warn("md %s: %s: write superblock", md, dev);
		close(fd);
		return -1;
	}
	return close(fd);
}

/* As mdadm adds a v1 member: its role, active and in sync unless spare. */
static int
add_member(int fd, const char *md, const char *dev, int role)
{
	mdu_disk_info_t disk;
	dev_t num;

	if (lnx_devnum(dev, &num) == -1) {
		log_warn("md %s: %s", md, dev);
		return -1;
	}
	memset(&disk, 0, sizeof(disk));
	disk.major = major(num);
	disk.minor = minor(num);
	disk.number = role >= 0 ? role : 0;
	disk.raid_disk = role;
	if (role >= 0)
		disk.state = (1 << MD_DISK_ACTIVE) | (1 << MD_DISK_SYNC);
	if (ioctl(fd, ADD_NEW_DISK, &disk) == -1) {
		log_warn("md %s: ADD_NEW_DISK %s (role %d)", md, dev, role);
		return -1;
	}
	return 0;
}

static int
run(int fd, const char *md)
{
	mdu_param_t param;

	memset(&param, 0, sizeof(param));
	if (ioctl(fd, RUN_ARRAY, &param) == -1) {
		log_warn("md %s: RUN_ARRAY", md);
		return -1;
	}
	/* start_ro would leave it auto-read-only, with no resync. */
	ioctl(fd, RESTART_ARRAY_RW, NULL);
	return 0;
}

/* Undoes a half-made array; errno stays the first failure's. */
static int
abandon(int fd, const char *md)
{
	int saved = errno;

	if (ioctl(fd, STOP_ARRAY, NULL) == -1)
		log_warn("md %s: STOP_ARRAY after failure", md);
	close(fd);
	errno = saved;
	return -1;
}

int
lnx_md_create(const struct sys_md *m)
{
	int i, fd;

	if ((fd = array_open(m)) == -1)
		return -1;
	for (i = 0; i < m->nmembers; i++) {
		/* raidd writes its members' blocks through its proven disk
		   descriptors and passes none (Decision 21); tools pass them. */
		if ((m->member[i].sb != NULL && write_member(m->name,
		    m->member[i].dev, m->member[i].sb, m->member[i].sb_len,
		    m->member[i].bitmap, m->member[i].bitmap_len) == -1) ||
		    add_member(fd, m->name, m->member[i].dev,
		    m->member[i].role) == -1)
			return abandon(fd, m->name);
	}
	if (run(fd, m->name) == -1)
		return abandon(fd, m->name);
	close(fd);
	return 0;
}

/* Members whose partition is gone are left out; md decides if it runs. */
int
lnx_md_assemble(const struct sys_md *m)
{
	dev_t num;
	int i, fd, added = 0;

	if ((fd = array_open(m)) == -1)
		return -1;
	for (i = 0; i < m->nmembers; i++) {
		if (lnx_devnum(m->member[i].dev, &num) == -1) {
			log_info("md %s: %s missing", m->name, m->member[i].dev);
			continue;
		}
		/* A member md refuses (stale, foreign) is left out too. */
		if (add_member(fd, m->name, m->member[i].dev,
		    m->member[i].role) == 0)
			added++;
	}
	if (added == 0) {
		errno = ENODEV;
		log_warnx("md %s: no member could be added", m->name);
		return abandon(fd, m->name);
	}
	if ((m->flags ? lnx_md_run_flagged(fd, m) : run(fd, m->name)) == -1)
		return abandon(fd, m->name);
	close(fd);
	return 0;
}

static int
md_gone(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s", name);
	return access(path, F_OK) == -1;
}

/* Stops the array and lets its device go; an absent array is fine. */
int
lnx_md_stop(const char *name)
{
	char path[PATH_MAX];
	int fd, try, r = -1, waited;

	if (md_gone(name))
		return 0;
	if (lnx_node_wait(name, 0) == -1)
		return md_gone(name) ? 0 : -1;
	snprintf(path, sizeof(path), "/dev/%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENXIO || errno == ENODEV)
			return 0;
		log_warn("md %s: open", name);
		return -1;
	}
	for (try = 0; try < STOP_TRIES; try++) {
		if ((r = ioctl(fd, STOP_ARRAY, NULL)) == 0 || errno != EBUSY)
			break;
		lnx_sleep_ms(STOP_WAIT_MS);
	}
	if (r == -1) {
		log_warn("md %s: STOP_ARRAY", name);
		close(fd);
		return -1;
	}
	close(fd);
	/* A named array goes away once stopped and closed; make sure. */
	for (waited = 0; !md_gone(name) && waited < MD_WAIT_MS;
	    waited += STOP_WAIT_MS) {
		snprintf(path, sizeof(path), "/sys/block/%s/md/array_state",
		    name);
		lnx_write_file(path, "clear");
		lnx_sleep_ms(STOP_WAIT_MS);
	}
	snprintf(path, sizeof(path), "/dev/%s", name);
	unlink(path);
	return 0;
}

/* Members md marked faulty (a pulled disk) leave the array's slots free. */
static void
remove_faulty(const char *name)
{
	char path[PATH_MAX], state[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/block/%s/md", name);
	if ((dir = opendir(path)) == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (strncmp(e->d_name, "dev-", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/md/%s/state", name, e->d_name);
		if (lnx_read_file(path, state, sizeof(state)) == 0 && strstr(state, "faulty") &&
		    lnx_write_file(path, "remove") == -1)
			log_warn("md %s: removing faulty %s", name, e->d_name + 4);
	}
	closedir(dir);
}

/* As mdadm --fail then --remove: faulty, then out (retried while busy). */
int
lnx_md_fail(const char *name, const char *dev)
{
	char path[PATH_MAX], state[64];
	int try;

	if (strchr(dev, '/') != NULL || strchr(name, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/block/%s/md/dev-%s/state", name, dev);
	if (lnx_write_file(path, "faulty") == -1) {
		log_warn("md %s: failing %s", name, dev);
		return -1;
	}
	/* md keeps the last copy of the data in (the array is broken). */
	if (lnx_read_file(path, state, sizeof(state)) == 0 && !strstr(state, "faulty"))
		return 1;
	for (try = 0; try < STOP_TRIES; try++) {
		if (lnx_write_file(path, "remove") == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		lnx_sleep_ms(STOP_WAIT_MS / 10);
	}
	/* Failed but still listed: the array is degraded all the same. */
	log_warn("md %s: removing %s", name, dev);
	return 0;
}

int
lnx_md_readd(const char *name, const char *dev, int role)
{
	char path[PATH_MAX];
	int fd, r;

	remove_faulty(name);
	snprintf(path, sizeof(path), "/dev/%s", name);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) == -1) {
		log_warn("md %s: open", name);
		return -1;
	}
	/* In its old role when the bitmap covers what it missed; else as a
	   spare that md rebuilds in full into the free slot. */
	if ((r = add_member(fd, name, dev, role)) == -1)
		r = add_member(fd, name, dev, -1);
	close(fd);
	return r;
}

/* sysfs attribute of an array (rel: "sync_action", "dev-sdb1/slot"). */
int
lnx_md_attr_write(const char *name, const char *rel, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/md/%s", name, rel);
	return lnx_write_file(path, val);
}

int
lnx_md_attr_read(const char *name, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/md/%s", name, rel);
	return lnx_read_file(path, buf, len);
}

/*
 * Whether md's recovery is frozen already (raidd's md_freeze, or mdadm's):
 * an "idle" would let go of that freeze too (action_store clears
 * MD_RECOVERY_FROZEN), so it is left as found.
 */
static int
held_frozen(const char *name)
{
	char buf[32];

	return lnx_md_attr_read(name, "sync_action", buf, sizeof(buf)) == 0 &&
	    strncmp(buf, "frozen", 6) == 0;
}

/*
 * As mdadm --add with a slot: the superblock raidd wrote calls the new
 * member a spare, so the kernel imports it as one; recovery is frozen
 * while it is bound and its slot set (md would pick the lowest free
 * slot itself, not always the role the label gives), then let go,
 * unless it was frozen before (held_frozen).
 */
int
lnx_md_add_new(const struct sys_md *m)
{
	char path[PATH_MAX], rel[NAME_MAX + 16], val[16];
	const char *dev = m->member[0].dev;
	int fd, r = -1, try, set, held;

	if (m->nmembers != 1 || strchr(dev, '/') != NULL || strchr(m->name, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	/* raidd writes them through its proven descriptor and passes none. */
	if (m->member[0].sb != NULL && write_member(m->name, dev, m->member[0].sb,
	    m->member[0].sb_len, m->member[0].bitmap, m->member[0].bitmap_len) == -1)
		return -1;
	remove_faulty(m->name);
	snprintf(path, sizeof(path), "/dev/%s", m->name);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) == -1) {
		log_warn("md %s: open", m->name);
		return -1;
	}
	held = held_frozen(m->name);
	if (m->member[0].role >= 0 && !held &&
	    lnx_md_attr_write(m->name, "sync_action", "frozen") == -1)
		log_warn("md %s: freezing recovery", m->name);
	if (add_member(fd, m->name, dev, -1) == -1)
		goto out;
	r = 0;
	if (m->member[0].role < 0)
		goto out;
	snprintf(rel, sizeof(rel), "dev-%s/slot", dev);
	snprintf(val, sizeof(val), "%d", m->member[0].role);
	/* EBUSY while a recovery that was running winds down. */
	for (try = 0, set = -1; try < STOP_TRIES && set == -1; try++) {
		if ((set = lnx_md_attr_write(m->name, rel, val)) == -1 && errno != EBUSY)
			break;
		if (set == -1)
			lnx_sleep_ms(STOP_WAIT_MS);
	}
	if (set == -1)
		log_warn("md %s: %s into slot %s (md picks a free one)", m->name, dev, val);
out:
	if (m->member[0].role >= 0 && !held &&
	    lnx_md_attr_write(m->name, "sync_action", "idle") == -1)
		log_warn("md %s: resuming recovery", m->name);
	close(fd);
	return r;
}
