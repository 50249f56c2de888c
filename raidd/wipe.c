/*
 * Wiping a disk erases every signature raidd knows, so that neither the
 * kernel nor raidd nor blkid finds an old array, table or filesystem on
 * it again. Windows, not single blocks: md keeps superblocks at the
 * start (1.1), 4 KiB in (1.2) and near the end (0.90, 1.0) of a device;
 * LUKS2 has a second header up to 4 MiB after the first; GPT has a
 * backup in the last sectors. Zeroing 16 MiB from the aligned start of
 * every place a signature was found, plus the disk's first 16 MiB
 * (MBR, GPT, raidd label) and last MiB, covers them all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "raidd.h"

#define WIPE_HEAD	(16ULL << 20)
#define WIPE_TAIL	(1ULL << 20)
#define WIPE_ALIGN	(1ULL << 20)

static int
zero(const struct dfd *f, uint64_t off, uint64_t len)
{
	if (off >= f->size)
		return 0;
	if (len > f->size - off)
		len = f->size - off;
	return sys->fd_zero(f->fd, off, len);
}

/* Through one descriptor, opened on the disk as scanned (Decision 21). */
int
wipe_disk(const struct disk *d, char *err, size_t errlen)
{
	struct dfd f;

	if (dfd_open(&f, &d->sys, err, errlen) == -1)
		return -1;
	return wipe_fd(&f, &d->sys, err, errlen);
}

/*
 * Through f, open on s (its proof read through f by the caller); f is
 * closed (synced) or abandoned.
 */
int
wipe_fd(struct dfd *f, const struct sys_disk *s, char *err, size_t errlen)
{
	uint64_t tail = s->size > WIPE_TAIL ? s->size - WIPE_TAIL : 0;

	for (int i = 0; i < s->nsigs; i++) {
		uint64_t at = s->sig[i].offset & ~(WIPE_ALIGN - 1);

		/* A signature near a partition's end: md 0.90/1.0 sit there. */
		at = at >= WIPE_HEAD / 2 ? at - WIPE_HEAD / 2 : 0;
		if (zero(f, at, WIPE_HEAD) == -1)
			goto fail;
	}
	if (zero(f, 0, WIPE_HEAD) == -1 || zero(f, tail, WIPE_TAIL) == -1)
		goto fail;
	if (dfd_recheck(f, err, errlen) == -1)
		log_warnx("%s", err);
	else if (sys->reread_parts(s->name, f->fd) == -1)
		log_warnx("%s: the kernel kept its old partitions until the next boot",
		    s->name);
	if (dfd_close(f, err, errlen) == -1)
		return -1;
	log_info("%s: wiped", s->name);
	return 0;
fail:
	snprintf(err, errlen, "%s: writing zeros failed: %s", s->name, strerror(errno));
	dfd_abandon(f);
	return -1;
}
