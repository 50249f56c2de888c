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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dm.h"
#include "log.h"

#define DM_CONTROL	"/dev/mapper/control"
#define DM_MISC_DEV	"/sys/class/misc/device-mapper/dev"
#define DM_BUF		16384		/* first try for answers with data */
#define DM_BUF_MAX	(1024 * 1024)
#define DM_BUSY_TRIES	10		/* remove: a closing opener lingers */
#define DM_BUSY_WAIT_MS	100

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
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

/* A request buffer of size bytes for the device called name. */
static struct dm_ioctl *
dm_new(const char *name, size_t size)
{
	struct dm_ioctl *io;

	if (name != NULL && strlen(name) >= DM_NAME_LEN) {
		errno = ENAMETOOLONG;
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

static int
dm_call(unsigned long cmd, struct dm_ioctl *io)
{
	int fd, r, saved;

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
	int r, saved;

	if ((io = dm_new(name, sizeof(*io))) == NULL)
		return -1;
	io->flags = flags;
	r = dm_call(cmd, io);
	saved = errno;
	if (r == 0 && out != NULL)
		*out = *io;
	free(io);
	errno = saved;
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

/*
 * /dev/mapper/<name> for dev.  A stale node of an earlier device of the
 * same name is replaced; a symlink means udev runs here and owns it.
 */
static int
node_make(const char *name, dev_t dev)
{
	char path[sizeof("/dev/" DM_DIR "/") + DM_NAME_LEN];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/%s/%s", DM_DIR, name);
	if (mkdir("/dev/" DM_DIR, 0755) == -1 && errno != EEXIST)
		return -1;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode) ||
		    (S_ISBLK(st.st_mode) && st.st_rdev == dev))
			return 0;
		if (unlink(path) == -1)
			return -1;
	}
	if (mknod(path, S_IFBLK | 0600, dev) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

static void
node_remove(const char *name)
{
	char path[sizeof("/dev/" DM_DIR "/") + DM_NAME_LEN];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/%s/%s", DM_DIR, name);
	if (lstat(path, &st) == 0 && S_ISBLK(st.st_mode))
		unlink(path);
}

int
dm_dev_create(const char *name, const char *uuid, dev_t *devp)
{
	struct dm_ioctl *io;
	dev_t dev;

	if ((io = dm_new(name, sizeof(*io))) == NULL) {
		log_warn("dm: create %s", name);
		return -1;
	}
	if (uuid != NULL && strlen(uuid) >= DM_UUID_LEN) {
		free(io);
		errno = ENAMETOOLONG;
		log_warn("dm: create %s: uuid", name);
		return -1;
	}
	if (uuid != NULL)
		strncpy(io->uuid, uuid, sizeof(io->uuid) - 1);
	if (dm_call(DM_DEV_CREATE, io) == -1) {
		free(io);
		log_warn("dm: create %s", name);
		return -1;
	}
	/* The kernel's huge_encode_dev agrees with glibc's makedev. */
	dev = (dev_t)io->dev;
	free(io);
	if (node_make(name, dev) == -1) {
		log_warn("dm: create %s: node /dev/%s/%s", name, DM_DIR, name);
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

int
dm_load(const char *name, const struct dm_target *t, int n, int flags)
{
	struct dm_target_spec *spec;
	struct dm_ioctl *io;
	size_t size, plen;
	char *p;
	int i, r, saved;

	if (n < 1 || (size = load_size(t, n)) == 0) {
		errno = EINVAL;
		log_warn("dm: load %s", name);
		return -1;
	}
	if ((io = dm_new(name, size)) == NULL) {
		log_warn("dm: load %s", name);
		return -1;
	}
	io->target_count = n;
	if (flags & DM_LOAD_SECURE)
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
	r = dm_call(DM_TABLE_LOAD, io);
	saved = errno;
	/* Our copy of a key goes too, not only the kernel's. */
	explicit_bzero(io, size);
	free(io);
	errno = saved;
	if (r == -1)
		log_warn("dm: load %s (%d targets, first %s)", name, n,
		    t[0].type);
	return r;
}

int
dm_resume(const char *name)
{
	if (dm_simple(DM_DEV_SUSPEND, name, 0, NULL) == -1) {
		log_warn("dm: resume %s", name);
		return -1;
	}
	return 0;
}

int
dm_remove(const char *name)
{
	int try;

	for (try = 0; try < DM_BUSY_TRIES; try++) {
		if (dm_simple(DM_DEV_REMOVE, name, 0, NULL) == 0) {
			node_remove(name);
			return 0;
		}
		if (errno != EBUSY)
			break;
		sleep_ms(DM_BUSY_WAIT_MS);
	}
	/* Gone already: only a stale node may be left. */
	if (errno == ENXIO) {
		node_remove(name);
		errno = ENXIO;
		return -1;
	}
	log_warn("dm: remove %s", name);
	return -1;
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
			log_warn("dm: status %s", name);
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

/* The live table's answer, grown until it fits; caller frees. */
static struct dm_ioctl *
table_query(const char *name)
{
	struct dm_ioctl *io;
	size_t size;

	for (size = DM_BUF; size <= DM_BUF_MAX; size *= 2) {
		if ((io = dm_new(name, size)) == NULL)
			return NULL;
		io->flags = DM_STATUS_TABLE_FLAG;
		if (dm_call(DM_TABLE_STATUS, io) == -1) {
			int saved = errno;

			free(io);
			errno = saved;
			return NULL;
		}
		if (!(io->flags & DM_BUFFER_FULL_FLAG))
			return io;
		free(io);
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
	size_t used = 0;
	uint32_t i, off = 0;
	int n;

	if ((io = table_query(name)) == NULL) {
		log_warn("dm: table %s", name);
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
			free(io);
			errno = ENOBUFS;
			return -1;
		}
		used += n;
		off = spec->next;
	}
	free(io);
	return 0;
}
