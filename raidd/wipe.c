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
zero(const char *dev, uint64_t size, uint64_t off, uint64_t len)
{
	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	return sys->zero_at(dev, off, len);
}

int
wipe_disk(const struct disk *d, char *err, size_t errlen)
{
	const struct sys_disk *s = &d->sys;
	uint64_t tail = s->size > WIPE_TAIL ? s->size - WIPE_TAIL : 0;

	for (int i = 0; i < s->nsigs; i++) {
		uint64_t at = s->sig[i].offset & ~(WIPE_ALIGN - 1);

		/* A signature near a partition's end: md 0.90/1.0 sit there. */
		at = at >= WIPE_HEAD / 2 ? at - WIPE_HEAD / 2 : 0;
		if (zero(s->name, s->size, at, WIPE_HEAD) == -1)
			goto fail;
	}
	if (zero(s->name, s->size, 0, WIPE_HEAD) == -1 ||
	    zero(s->name, s->size, tail, WIPE_TAIL) == -1)
		goto fail;
	if (sys->reread_parts(s->name) == -1)
		log_warnx("%s: the kernel kept its old partitions until the next boot",
		    s->name);
	log_info("%s: wiped", s->name);
	return 0;
fail:
	snprintf(err, errlen, "%s: writing zeros failed: %s", s->name, strerror(errno));
	return -1;
}
