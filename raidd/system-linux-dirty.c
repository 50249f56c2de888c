/*
 * A dirty degraded RAID 4/5/6 array (Decision 90): md refuses to start
 * one unless md_mod's start_dirty_degraded is set while md_run runs
 * (raid5.c run(): "cannot start dirty degraded array"). raidd sets it
 * for that one start only and starts the array read-only (array_state
 * "readonly": no write reaches a member, no resync, no recovery) until
 * the user says, with volume.start force, that it may be written.
 */
#include <sys/ioctl.h>
#include <sys/mount.h>

#include <linux/major.h>
#include <linux/raid/md_u.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "system-linux.h"

#define START_DIRTY	"/sys/module/md_mod/parameters/start_dirty_degraded"

static int
start_dirty_set(int on, char *was, size_t len)
{
	if (was != NULL && lnx_read_file(START_DIRTY, was, len) == -1)
		snprintf(was, len, "0");
	if (lnx_write_file(START_DIRTY, on ? "1" : "0") == -1) {
		log_warn("md: %s", START_DIRTY);
		return -1;
	}
	return 0;
}

/*
 * Runs an array whose members were added (fd: its node) with
 * SYS_MD_READONLY and/or SYS_MD_START_DIRTY; md_mod's own setting is put
 * back whatever happens.
 */
int
lnx_md_run_flagged(int fd, const struct sys_md *m)
{
	char path[PATH_MAX], was[16];
	int r, saved;

	if ((m->flags & SYS_MD_START_DIRTY) && start_dirty_set(1, was, sizeof(was)) == -1)
		return -1;
	if (m->flags & SYS_MD_READONLY) {
		/* An inactive array told "readonly" runs with ro = 1. */
		snprintf(path, sizeof(path), "/sys/block/%s/md/array_state", m->name);
		if ((r = lnx_write_file(path, "readonly")) == -1)
			log_warn("md %s: start read-only", m->name);
	} else if ((r = ioctl(fd, RUN_ARRAY, NULL)) == -1) {
		log_warn("md %s: RUN_ARRAY", m->name);
	} else {
		ioctl(fd, RESTART_ARRAY_RW, NULL);
	}
	saved = errno;
	if (m->flags & SYS_MD_START_DIRTY)
		start_dirty_set(strncmp(was, "0", 1) != 0, NULL, 0);
	errno = saved;
	return r;
}

/* A read-only array becomes writable; md then resyncs or recovers as it may. */
int
lnx_md_set_rw(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/') != NULL)
		return errno = EINVAL, -1;
	snprintf(path, sizeof(path), "/dev/%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		log_warn("md %s: open", name);
		return -1;
	}
	if (ioctl(fd, RESTART_ARRAY_RW, NULL) == -1 && errno != EBUSY) {
		log_warn("md %s: RESTART_ARRAY_RW", name);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * Read-only on a device md will not let write: a journal that needs
 * replaying cannot be, so the filesystem is mounted without replaying it
 * (what shows is as of its last checkpoint): 1 then.
 */
int
lnx_mount_ro(const char *dev, const char *dir, const char *fs)
{
	const char *skip = strcmp(fs, "btrfs") == 0 ? "rescue=nologreplay" : "noload";
	char node[PATH_MAX];

	if (lnx_devpath(dev, node, sizeof(node)) == -1 || lnx_mkdir_p(dir) == -1) {
		log_warn("mount %s on %s", dev, dir);
		return -1;
	}
	if (mount(node, dir, fs, MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) == 0)
		return 0;
	log_warn("mount %s (%s) read-only on %s; again without its journal", node, fs, dir);
	if (mount(node, dir, fs, MS_RDONLY | MS_NODEV | MS_NOSUID, skip) == -1) {
		log_warn("mount %s (%s, %s) read-only on %s", node, fs, skip, dir);
		return -1;
	}
	return 1;
}
