/*
 * Filesystems (mkfs as a child on the event loop, mount, umount) and
 * disk hotplug from the kernel's uevent netlink socket: without udev the
 * kernel's own messages (group 1) are what there is.
 */
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/netlink.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "system-linux.h"

#define UEVENT_GROUP	1	/* the kernel's; udev rebroadcasts on 2 */
#define UEVENT_BUF	8192
/* Lazy init makes mkfs quick at any size: an hour means it hangs. */
#define MKFS_TIMEOUT	3600.

/* Full paths: busybox applets of similar names come first in PATH. */
static const char *
mkfs_path(const char *fs)
{
	static char path[64];
	const char *dir[] = { "/usr/sbin", "/sbin", NULL };

	for (int i = 0; dir[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/mkfs.%s", dir[i], fs);
		if (access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

int
lnx_mkfs(const char *fs, const char *dev, const char *label, sys_done_cb cb,
    void *arg)
{
	char node[PATH_MAX], lbl[256];
	struct nas_child *ch;
	const char *prog;
	char *argv[12];
	int n = 0;

	if (strcmp(fs, "ext4") != 0 && strcmp(fs, "btrfs") != 0) {
		errno = EINVAL;
		log_warnx("mkfs %s: unsupported filesystem", fs);
		return -1;
	}
	if ((prog = mkfs_path(fs)) == NULL) {
		errno = ENOENT;
		log_warn("mkfs.%s", fs);
		return -1;
	}
	if (lnx_devpath(dev, node, sizeof(node)) == -1) {
		log_warn("mkfs %s", dev);
		return -1;
	}
	snprintf(lbl, sizeof(lbl), "%s", label);
	argv[n++] = (char *)prog;
	argv[n++] = strcmp(fs, "ext4") == 0 ? "-F" : "-f";
	argv[n++] = "-q";
	argv[n++] = "-L";
	argv[n++] = lbl;
	if (strcmp(fs, "ext4") == 0) {
		/* The inode tables and journal are zeroed in the background. */
		argv[n++] = "-E";
		argv[n++] = "lazy_itable_init=1,lazy_journal_init=1";
	}
	argv[n++] = node;
	argv[n] = NULL;
	if ((ch = nas_child_start(argv, cb, arg)) == NULL) {
		log_warn("mkfs %s on %s", fs, dev);
		return -1;
	}
	nas_child_timeout(ch, MKFS_TIMEOUT, NAS_CHILD_GRACE);
	return 0;
}

/* The mount point and its parents (/volumes may not exist yet). */
int
lnx_mkdir_p(const char *dir)
{
	char path[PATH_MAX], *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

int
lnx_mount(const char *dev, const char *dir, const char *fs)
{
	char node[PATH_MAX];

	if (lnx_devpath(dev, node, sizeof(node)) == -1) {
		log_warn("mount %s", dev);
		return -1;
	}
	if (lnx_mkdir_p(dir) == -1) {
		log_warn("mount: %s", dir);
		return -1;
	}
	if (mount(node, dir, fs, MS_NODEV | MS_NOSUID, NULL) == -1) {
		log_warn("mount %s (%s) on %s", node, fs, dir);
		return -1;
	}
	return 0;
}

/* Idempotent: a directory that is not a mount point is fine. */
int
lnx_umount(const char *dir)
{
	if (umount2(dir, 0) == 0 || errno == EINVAL || errno == ENOENT)
		return 0;
	log_warn("umount %s", dir);
	return -1;
}

/* mountinfo writes blanks and backslashes as \ooo. */
static void
unescape(char *s)
{
	char *d = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') * 64 + (s[2] - '0') * 8 + s[3] - '0';
			s += 3;
		} else
			*d++ = *s;
	}
	*d = '\0';
}

int
lnx_is_mounted(const char *dir)
{
	char line[4096], mp[PATH_MAX], real[PATH_MAX];
	FILE *f;
	int found = 0;

	if (realpath(dir, real) == NULL)
		return 0;
	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*u %*u %*s %*s %4095s", mp) != 1)
			continue;
		unescape(mp);
		found = strcmp(mp, real) == 0;
	}
	fclose(f);
	return found;
}

int
lnx_hotplug_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
	    .nl_groups = UEVENT_GROUP };
	int fd;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    NETLINK_KOBJECT_UEVENT);
	if (fd == -1) {
		log_warn("uevent socket");
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		log_warn("uevent bind");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * "ACTION@DEVPATH\0KEY=VALUE\0...": a whole disk came, went or changed
 * its capacity (a LUN grown in place: "change" with RESIZE=1, from
 * set_capacity_and_notify)? md and dm devices are "disks" too, under
 * /devices/virtual: raidd's own arrays and maps come and go with every
 * assembly, and a rescan for them would probe (and wake) every disk for
 * nothing.
 */
static int
disk_event(const char *msg, size_t len, char *name, size_t namelen)
{
	int add_rm = 0, change = 0, resize = 0, block = 0, disk = 0, virt = 0;
	const char *p;

	name[0] = '\0';
	for (p = msg; p < msg + len; p += strlen(p) + 1) {
		if (strcmp(p, "ACTION=add") == 0 ||
		    strcmp(p, "ACTION=remove") == 0)
			add_rm = 1;
		else if (strcmp(p, "ACTION=change") == 0)
			change = 1;
		else if (strcmp(p, "RESIZE=1") == 0)
			resize = 1;
		else if (strcmp(p, "SUBSYSTEM=block") == 0)
			block = 1;
		else if (strcmp(p, "DEVTYPE=disk") == 0)
			disk = 1;
		else if (strncmp(p, "DEVPATH=/devices/virtual/", 25) == 0 &&
		    strncmp(p + 25, "block/loop", 10) != 0)
			virt = 1;
		else if (strncmp(p, "DEVNAME=", 8) == 0)
			snprintf(name, namelen, "%s", p + 8);
	}
	return (add_rm || (change && resize)) && block && disk && !virt;
}

/* Adds name to names once; -1 when it does not fit (rescan all). */
static int
note(char (*names)[SYS_NAME_MAX], int n, int max, const char *name)
{
	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) >= SYS_NAME_MAX)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return n;
	if (n == max)
		return -1;
	snprintf(names[n], SYS_NAME_MAX, "%s", name);
	return n + 1;
}

int
lnx_hotplug_read(int fd, char (*names)[SYS_NAME_MAX], int max)
{
	char buf[UEVENT_BUF + 1], name[SYS_NAME_MAX + 1];
	struct sockaddr_nl sa;
	struct iovec iov = { buf, UEVENT_BUF };
	struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa),
	    .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;
	int count = 0;

	for (;;) {
		n = recvmsg(fd, &mh, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			/* ENOBUFS: we missed some; a rescan catches up. */
			if (errno == ENOBUFS)
				count = -1;
			break;
		}
		/* Port 0 is the kernel; anyone may send on this family. */
		if (sa.nl_pid != 0 || n == 0)
			continue;
		buf[n] = '\0';
		if (disk_event(buf, n, name, sizeof(name)) && count != -1)
			count = note(names, count, max, name);
	}
	return count;
}
