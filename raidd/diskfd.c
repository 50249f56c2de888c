/*
 * One descriptor per write (Decision 21). raidd proves a disk by name
 * at a scan, but a name is not a disk: a node can be made to lead
 * elsewhere, and a disk pulled and another inserted can take the same
 * name and even the same device number. So every write raidd makes to
 * a disk it holds its own goes: open the node; compare what the open
 * file is (fstat st_rdev) and its size with the device that was
 * proven; read the proof again through that descriptor; write through
 * it; sync and close. A disk that goes meanwhile fails the I/O (its
 * descriptor is dead) instead of letting the write reach its successor.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "volume.h"

int
dfd_open(struct dfd *f, const struct sys_disk *s, char *err, size_t errlen)
{
	uint64_t size;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if ((f->fd = sys->dev_open(s->name, &f->major, &f->minor)) == -1) {
		snprintf(err, errlen, "%s: opening: %s", s->name, strerror(errno));
		return -1;
	}
	snprintf(f->name, sizeof(f->name), "%s", s->name);
	f->lba = s->logical_block ? s->logical_block : 512;
	f->size = s->size;
	if (f->major != s->major || f->minor != s->minor) {
		snprintf(err, errlen, "%s: its node leads to device %u:%u, not to the disk "
		    "raidd checked (%u:%u): not written", s->name, f->major, f->minor,
		    s->major, s->minor);
		dfd_abandon(f);
		return errno = ESTALE, -1;
	}
	if (sys->fd_size(f->fd, &size) == -1 || size != s->size) {
		snprintf(err, errlen, "%s: the disk open is not the one raidd checked "
		    "(its size changed): not written", s->name);
		dfd_abandon(f);
		return errno = ESTALE, -1;
	}
	return 0;
}

/*
 * For the kernel calls that take a name or a device number (libfdisk's
 * re-read, md's ADD_NEW_DISK of a partition): before and after them,
 * the node still leads to the descriptor's device and that device is
 * still there with its size.
 */
int
dfd_recheck(const struct dfd *f, char *err, size_t errlen)
{
	unsigned ma, mi;
	uint64_t size;

	if (sys->node_devnum(f->name, &ma, &mi) == -1 || ma != f->major || mi != f->minor) {
		snprintf(err, errlen, "%s: its node no longer leads to the disk raidd "
		    "opened (%u:%u)", f->name, f->major, f->minor);
		return errno = ESTALE, -1;
	}
	if (sys->fd_size(f->fd, &size) == -1 || size != f->size) {
		snprintf(err, errlen, "%s: the disk raidd opened went away", f->name);
		return errno = ESTALE, -1;
	}
	return 0;
}

int
dfd_read(const struct dfd *f, uint64_t off, void *buf, size_t len)
{
	return sys->fd_read(f->fd, off, buf, len);
}

/* Syncs: 0 only when what was written is on the disk. */
int
dfd_close(struct dfd *f, char *err, size_t errlen)
{
	int fd = f->fd;

	f->fd = -1;
	if (fd == -1)
		return 0;
	if (sys->fd_close(fd) == -1) {
		snprintf(err, errlen, "%s: syncing: %s", f->name, strerror(errno));
		return -1;
	}
	return 0;
}

/* On a path that already failed: the first error is the one to say. */
void
dfd_abandon(struct dfd *f)
{
	int saved = errno;

	if (f->fd != -1)
		sys->fd_close(f->fd);
	f->fd = -1;
	errno = saved;
}

/*
 * md re-adds a member by its partition's device number, and then writes
 * to it: the member's disk is proven through a descriptor first, and
 * its node checked right before and after. A disk that changed during
 * the call is failed out of the array again.
 */
int
member_readd(struct volume *v, int m, const char *md, const char *dev, int role,
    char *err, size_t errlen)
{
	struct dfd f;

	if (member_open(v, m, &f, err, errlen) == -1)
		return -1;
	if (dfd_recheck(&f, err, errlen) == -1)
		goto fail;
	if (sys->md_readd(md, dev, role) == -1) {
		snprintf(err, errlen, "%s: %s", dev, strerror(errno));
		goto fail;
	}
	if (dfd_recheck(&f, err, errlen) == -1) {
		if (sys->md_fail(md, dev) == -1)
			log_warn("%s: failing %s again", md, dev);
		goto fail;
	}
	return dfd_close(&f, err, errlen);
fail:
	dfd_abandon(&f);
	return -1;
}
