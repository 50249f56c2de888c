/*
 * Device-mapper through /dev/mapper/control.  Each request is one
 * struct dm_ioctl followed by its payload in one buffer; the kernel
 * answers in the same buffer.  We speak interface 4.0.0, which every
 * kernel since 2.6 accepts for the few commands used here.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <linux/dm-ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "dm.h"
#include "log.h"

#define DM_CONTROL	"/dev/mapper/control"
#define DM_MISC_DEV	"/sys/class/misc/device-mapper/dev"
#define DM_BUF		16384		/* first try for answers with data */
#define DM_BUF_MAX	(1024 * 1024)
#define DM_BUSY_TRIES	10		/* async remove: a closing opener lingers */
#define DM_BUSY_WAIT	0.1		/* seconds between tries */

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

static struct dm_hooks hooks;

void
dm_set_hooks(const struct dm_hooks *h)
{
	static const struct dm_hooks none;

	hooks = h != NULL ? *h : none;
}

/* For log lines: a refused name is not repeated. */
static const char *
shown(const char *name)
{
	return dm_name_ok(name) ? name : "(invalid name)";
}

static const char *
node_dir(void)
{
	return hooks.dir != NULL ? hooks.dir : "/dev/" DM_DIR;
}

/*
 * A name becomes /dev/mapper/<name>: nothing that leaves that directory
 * or names the control node.  The kernel refuses "/" too, but not
 * before we had built a path from it.
 */
int
dm_name_ok(const char *name)
{
	return name != NULL && name[0] != '\0' && strlen(name) < DM_NAME_LEN &&
	    strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	    strcmp(name, "..") != 0 && strcmp(name, "control") != 0;
}

/* Without udev nobody may have made the control node: make it from sysfs. */
static int
control_mknod(void)
{
	unsigned ma, mi;
	FILE *f;
	int n;

	if ((f = fopen(DM_MISC_DEV, "re")) == NULL)
		return -1;
	n = fscanf(f, "%u:%u", &ma, &mi);
	fclose(f);
	if (n != 2) {
		errno = ENODEV;
		return -1;
	}
	if (mkdir("/dev/" DM_DIR, 0755) == -1 && errno != EEXIST)
		return -1;
	if (mknod(DM_CONTROL, S_IFCHR | 0600, makedev(ma, mi)) == -1 &&
	    errno != EEXIST)
		return -1;
	return 0;
}

static int
control_open(void)
{
	int fd;

	if ((fd = open(DM_CONTROL, O_RDWR | O_CLOEXEC)) != -1)
		return fd;
	if (errno != ENOENT || control_mknod() == -1)
		return -1;
	return open(DM_CONTROL, O_RDWR | O_CLOEXEC);
}

/*
 * A request buffer of size bytes for the device called name, refused
 * before any ioctl if the name is not one we may use.  Only DM_VERSION
 * goes without a name.
 */
static struct dm_ioctl *
dm_new(unsigned long cmd, const char *name, size_t size)
{
	struct dm_ioctl *io;

	if (name == NULL ? cmd != DM_VERSION : !dm_name_ok(name)) {
		errno = EINVAL;
		return NULL;
	}
	if ((io = calloc(1, size)) == NULL)
		return NULL;
	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = size;
	io->data_start = sizeof(*io);
	if (name != NULL)
		strncpy(io->name, name, sizeof(io->name) - 1);
	return io;
}

/* Every buffer goes through here: it may hold a table with a key. */
static void
dm_free(struct dm_ioctl *io, size_t size)
{
	int saved = errno;

	if (io == NULL)
		return;
	explicit_bzero(io, size);
	if (hooks.release != NULL)
		hooks.release(io, size);
	else
		free(io);
	errno = saved;
}

static int
dm_call(unsigned long cmd, struct dm_ioctl *io)
{
	int fd, r, saved;

	if (hooks.ioctl != NULL)
		return hooks.ioctl(cmd, io);
	if ((fd = control_open()) == -1)
		return -1;
	r = ioctl(fd, cmd, io);
	saved = errno;
	close(fd);
	errno = saved;
	return r;
}

/* A request without payload; the answer's header lands in *out if given. */
static int
dm_simple(unsigned long cmd, const char *name, uint32_t flags,
    struct dm_ioctl *out)
{
	struct dm_ioctl *io;
	int r;

	if ((io = dm_new(cmd, name, sizeof(*io))) == NULL)
		return -1;
	io->flags = flags;
	r = dm_call(cmd, io);
	if (r == 0 && out != NULL)
		*out = *io;
	dm_free(io, sizeof(*io));
	return r;
}

int
dm_version(unsigned *major, unsigned *minor, unsigned *patch)
{
	struct dm_ioctl io;

	if (dm_simple(DM_VERSION, NULL, 0, &io) == -1) {
		log_warn("dm: version");
		return -1;
	}
	if (io.version[0] != DM_VERSION_MAJOR) {
		log_warnx("dm: kernel speaks interface %u, not %u",
		    io.version[0], DM_VERSION_MAJOR);
		errno = EPROTO;
		return -1;
	}
	if (major != NULL)
		*major = io.version[0];
	if (minor != NULL)
		*minor = io.version[1];
	if (patch != NULL)
		*patch = io.version[2];
	return 0;
}

/* The block major of device-mapper, from /proc/devices; -1 if none. */
static int
dm_block_major(void)
{
	char line[128], name[64];
	int major = -1, block = 0;
	unsigned m;
	FILE *f;

	if ((f = fopen("/proc/devices", "re")) == NULL)
		return -1;
	while (major == -1 && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Block devices:", 14) == 0)
			block = 1;
		else if (block && sscanf(line, "%u %63s", &m, name) == 2 &&
		    strcmp(name, "device-mapper") == 0)
			major = (int)m;
	}
	fclose(f);
	return major;
}

static void
node_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", node_dir(), name);
}

/*
 * /dev/mapper/<name> for dev.  What is there already is left alone
 * unless it is a node of device-mapper's (an earlier device of the same
 * name, replaced); a symlink means udev runs here and owns it; anything
 * else is not ours and the map gets no node.
 */
static int
node_make(const char *name, dev_t dev)
{
	char path[PATH_MAX];
	struct stat st;

	node_path(name, path, sizeof(path));
	if (mkdir(node_dir(), 0755) == -1 && errno != EEXIST)
		return -1;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode) ||
		    (S_ISBLK(st.st_mode) && st.st_rdev == dev))
			return 0;
		if (!S_ISBLK(st.st_mode) || major(st.st_rdev) != major(dev)) {
			errno = EEXIST;
			return -1;
		}
		if (unlink(path) == -1)
			return -1;
	}
	if (mknod(path, S_IFBLK | 0600, dev) == -1)
		return -1;
	return 0;
}

/* Only the node of the device just removed: a block node, dev itself. */
static void
node_remove(const char *name, dev_t dev)
{
	char path[PATH_MAX];
	struct stat st;

	node_path(name, path, sizeof(path));
	if (lstat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev &&
	    unlink(path) == -1)
		log_warn("dm: remove %s", path);
}

/* The device is gone already: a node of device-mapper's there is stale. */
static void
node_remove_stale(const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	int dm_major;

	node_path(name, path, sizeof(path));
	if (lstat(path, &st) == -1 || !S_ISBLK(st.st_mode))
		return;
	dm_major = hooks.block_major != 0 ? hooks.block_major : dm_block_major();
	if (dm_major != -1 && major(st.st_rdev) == (unsigned)dm_major &&
	    unlink(path) == -1)
		log_warn("dm: remove %s", path);
}

int
dm_dev_create(const char *name, const char *uuid, dev_t *devp)
{
	struct dm_ioctl *io;
	dev_t dev;
	int r;

	if ((io = dm_new(DM_DEV_CREATE, name, sizeof(*io))) == NULL) {
		log_warn("dm: create %s", shown(name));
		return -1;
	}
	if (uuid != NULL && strlen(uuid) >= DM_UUID_LEN) {
		dm_free(io, sizeof(*io));
		errno = ENAMETOOLONG;
		log_warn("dm: create %s: uuid", name);
		return -1;
	}
	if (uuid != NULL)
		strncpy(io->uuid, uuid, sizeof(io->uuid) - 1);
	r = dm_call(DM_DEV_CREATE, io);
	/* The kernel's huge_encode_dev agrees with glibc's makedev. */
	dev = (dev_t)io->dev;
	dm_free(io, sizeof(*io));
	if (r == -1) {
		log_warn("dm: create %s", name);
		return -1;
	}
	if (node_make(name, dev) == -1) {
		log_warn("dm: create %s: node %s/%s", name, node_dir(), name);
		dm_remove(name);
		return -1;
	}
	if (devp != NULL)
		*devp = dev;
	return 0;
}

/* Bytes of a DM_TABLE_LOAD request for these targets; 0 if one is invalid. */
static size_t
load_size(const struct dm_target *t, int n)
{
	size_t size = sizeof(struct dm_ioctl);
	int i;

	for (i = 0; i < n; i++) {
		if (t[i].type == NULL || t[i].params == NULL ||
		    strlen(t[i].type) >= DM_MAX_TYPE_NAME)
			return 0;
		size += sizeof(struct dm_target_spec) +
		    ALIGN8(strlen(t[i].params) + 1);
	}
	return size;
}

/*
 * The DM_TABLE_LOAD request: the header, then each target's spec and
 * parameter string.  Always with DM_SECURE_DATA_FLAG: a table may hold
 * a key (crypt, integrity's hmac), and the kernel then wipes its copies;
 * the cost is a memset.  Freed with dm_free, which wipes ours.
 */
static struct dm_ioctl *
load_request(const char *name, const struct dm_target *t, int n, size_t *sizep)
{
	struct dm_target_spec *spec;
	struct dm_ioctl *io;
	size_t size, plen;
	char *p;
	int i;

	if (n < 1 || (size = load_size(t, n)) == 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((io = dm_new(DM_TABLE_LOAD, name, size)) == NULL)
		return NULL;
	io->target_count = n;
	io->flags |= DM_SECURE_DATA_FLAG;
	p = (char *)io + io->data_start;
	for (i = 0; i < n; i++) {
		spec = (struct dm_target_spec *)p;
		spec->sector_start = t[i].start;
		spec->length = t[i].len;
		strncpy(spec->target_type, t[i].type,
		    sizeof(spec->target_type) - 1);
		plen = ALIGN8(strlen(t[i].params) + 1);
		memcpy(p + sizeof(*spec), t[i].params, strlen(t[i].params));
		spec->next = sizeof(*spec) + plen;
		p += spec->next;
	}
	*sizep = size;
	return io;
}

int
dm_load(const char *name, const struct dm_target *t, int n, int flags)
{
	struct dm_ioctl *io;
	size_t size;
	int r;

	(void)flags;	/* DM_LOAD_SECURE: every load is sent as secure */
	if ((io = load_request(name, t, n, &size)) == NULL) {
		log_warn("dm: load %s", shown(name));
		return -1;
	}
	r = dm_call(DM_TABLE_LOAD, io);
	dm_free(io, size);
	if (r == -1)
		log_warn("dm: load %s (%d targets, first %s)", name, n,
		    t[0].type);
	return r;
}

int
dm_resume(const char *name)
{
	if (dm_simple(DM_DEV_SUSPEND, name, 0, NULL) == -1) {
		log_warn("dm: resume %s", shown(name));
		return -1;
	}
	return 0;
}

/* The inactive table a load left, dropped (DM_TABLE_CLEAR). */
int
dm_clear(const char *name)
{
	if (dm_simple(DM_TABLE_CLEAR, name, 0, NULL) == -1) {
		log_warn("dm: clear %s", shown(name));
		return -1;
	}
	return 0;
}

/*
 * One try.  The node goes only if it is the removed device's own; when
 * the device was gone already, only a stale device-mapper node is.
 */
static int
remove_once(const char *name)
{
	struct dm_ioctl st;

	if (dm_simple(DM_DEV_STATUS, name, 0, &st) == -1 ||
	    dm_simple(DM_DEV_REMOVE, name, 0, NULL) == -1) {
		if (errno == ENXIO) {
			node_remove_stale(name);
			errno = ENXIO;
		}
		return -1;
	}
	node_remove(name, (dev_t)st.dev);
	return 0;
}

int
dm_remove(const char *name)
{
	if (remove_once(name) == 0)
		return 0;
	if (errno != ENXIO && errno != EBUSY)
		log_warn("dm: remove %s", shown(name));
	return -1;
}

struct dm_removal {
	ev_timer	 timer;
	char		 name[DM_NAME_LEN];
	int		 tries;
	dm_remove_cb	 cb;
	void		*arg;
};

static void
removal_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct dm_removal *rm = w->data;
	int err = 0;

	(void)revents;
	if (remove_once(rm->name) == -1)
		err = errno;
	if (err == EBUSY && ++rm->tries < DM_BUSY_TRIES) {
		ev_timer_set(w, DM_BUSY_WAIT, 0.);
		ev_timer_start(l, w);
		return;
	}
	if (err != 0 && err != ENXIO)
		log_warnx("dm: remove %s: %s", rm->name, strerror(err));
	if (rm->cb != NULL)
		rm->cb(err, rm->arg);
	free(rm);
}

int
dm_remove_async(const char *name, dm_remove_cb cb, void *arg)
{
	struct dm_removal *rm;

	if (!dm_name_ok(name)) {
		errno = EINVAL;
		log_warn("dm: remove %s", shown(name));
		return -1;
	}
	if ((rm = calloc(1, sizeof(*rm))) == NULL)
		return -1;
	snprintf(rm->name, sizeof(rm->name), "%s", name);
	rm->cb = cb;
	rm->arg = arg;
	/* The first try from the loop too: cb never runs inside our caller. */
	ev_timer_init(&rm->timer, removal_cb, 0., 0.);
	rm->timer.data = rm;
	ev_timer_start(nas_loop(), &rm->timer);
	return 0;
}

int
dm_create(const char *name, const char *uuid, const struct dm_target *t,
    int n, int flags)
{
	int saved;

	if (dm_dev_create(name, uuid, NULL) == -1)
		return -1;
	if (dm_load(name, t, n, flags) == 0 && dm_resume(name) == 0)
		return 0;
	saved = errno;
	/* Just made, so nobody holds it open: one try is enough. */
	dm_remove(name);
	errno = saved;
	return -1;
}

int
dm_status(const char *name, struct dm_info *info)
{
	struct dm_ioctl io;

	if (dm_simple(DM_DEV_STATUS, name, 0, &io) == -1) {
		if (errno != ENXIO)
			log_warn("dm: status %s", shown(name));
		return -1;
	}
	if (info != NULL) {
		info->dev = (dev_t)io.dev;
		info->open_count = io.open_count;
		info->target_count = io.target_count;
		info->suspended = (io.flags & DM_SUSPEND_FLAG) != 0;
		info->live = (io.flags & DM_ACTIVE_PRESENT_FLAG) != 0;
	}
	return 0;
}

int
dm_exists(const char *name)
{
	if (dm_status(name, NULL) == 0)
		return 1;
	return errno == ENXIO ? 0 : -1;
}

/*
 * The live table's answer, grown until it fits; caller frees with
 * dm_free(io, *sizep).  DM_SECURE_DATA_FLAG: a crypt table's answer
 * holds the key, and the kernel wipes its copy of it.
 */
static struct dm_ioctl *
table_query(const char *name, size_t *sizep)
{
	struct dm_ioctl *io;
	size_t size;

	for (size = DM_BUF; size <= DM_BUF_MAX; size *= 2) {
		if ((io = dm_new(DM_TABLE_STATUS, name, size)) == NULL)
			return NULL;
		io->flags = DM_STATUS_TABLE_FLAG | DM_SECURE_DATA_FLAG;
		if (dm_call(DM_TABLE_STATUS, io) == -1) {
			dm_free(io, size);
			return NULL;
		}
		if (!(io->flags & DM_BUFFER_FULL_FLAG)) {
			*sizep = size;
			return io;
		}
		dm_free(io, size);
	}
	errno = ENOBUFS;
	return NULL;
}

int
dm_table(const char *name, char *out, size_t len)
{
	struct dm_target_spec *spec;
	struct dm_ioctl *io;
	const char *data;
	size_t size, used = 0;
	uint32_t i, off = 0;
	int n;

	if ((io = table_query(name, &size)) == NULL) {
		log_warn("dm: table %s", shown(name));
		return -1;
	}
	data = (const char *)io + io->data_start;
	out[0] = '\0';
	for (i = 0; i < io->target_count; i++) {
		spec = (struct dm_target_spec *)(data + off);
		n = snprintf(out + used, len - used, "%llu %llu %.*s %s\n",
		    (unsigned long long)spec->sector_start,
		    (unsigned long long)spec->length,
		    (int)sizeof(spec->target_type), spec->target_type,
		    (const char *)(spec + 1));
		if (n < 0 || (size_t)n >= len - used) {
			dm_free(io, size);
			explicit_bzero(out, len);
			errno = ENOBUFS;
			return -1;
		}
		used += n;
		off = spec->next;
	}
	dm_free(io, size);
	return 0;
}
