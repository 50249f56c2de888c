/*
 * Every signature on a disk: libblkid probes the whole disk and each of
 * its partitions for superblocks and partition tables, listing all it
 * finds (not only the winner, as wipefs does), and label_probe looks
 * for raidd's own label (even a damaged one) in the disk's head.
 */
#include <blkid/blkid.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "label.h"
#include "log.h"
#include "system-linux.h"

static void
sig_add(struct sys_disk *d, const char *type, const char *where,
    uint64_t off)
{
	struct sys_sig *s;

	for (int i = 0; i < d->nsigs; i++)
		if (d->sig[i].offset == off && strcmp(d->sig[i].type, type) == 0)
			return;
	if (d->nsigs >= SYS_MAX_SIGS)
		return;
	s = &d->sig[d->nsigs++];
	snprintf(s->type, sizeof(s->type), "%s", type);
	snprintf(s->where, sizeof(s->where), "%s", where);
	s->offset = off;
}

/* The value of a superblock or a partition-table answer, whichever. */
static const char *
value(blkid_probe pr, const char *a, const char *b)
{
	const char *v = NULL;

	if (blkid_probe_lookup_value(pr, a, &v, NULL) == 0 && v != NULL)
		return v;
	if (blkid_probe_lookup_value(pr, b, &v, NULL) == 0 && v != NULL)
		return v;
	return NULL;
}

/* Probes dev (the disk or a partition starting at base bytes). */
static void
probe(struct sys_disk *d, const char *dev, uint64_t base)
{
	const char *type, *off;
	char path[PATH_MAX];
	blkid_probe pr;

	if (lnx_devpath(dev, path, sizeof(path)) == -1 ||
	    (pr = blkid_new_probe_from_filename(path)) == NULL) {
		log_warn("%s: cannot probe for signatures", dev);
		/* Unknown is not blank. */
		sig_add(d, "unreadable", dev, base);
		return;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC |
	    BLKID_SUBLKS_TYPE | BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	while (blkid_do_probe(pr) == 0) {
		type = value(pr, "TYPE", "PTTYPE");
		off = value(pr, "SBMAGIC_OFFSET", "PTMAGIC_OFFSET");
		if (type == NULL)
			continue;
		sig_add(d, type, dev, base + (off ? strtoull(off, NULL, 10) : 0));
	}
	blkid_free_probe(pr);
}

/*
 * raidd's label: its two slots sit just below the first partition. Only
 * they are read (8 KiB): reading the whole first MiB of every disk at
 * every scan cost a daemon-lifetime MiB of heap.
 */
static void
probe_label(struct sys_disk *d)
{
	uint8_t slots[2 * LABEL_SLOT_SIZE];

	if (d->size < PLAN_HEAD || lnx_read_at(d->name, LABEL_SLOT0, slots, sizeof(slots)) == -1)
		return;
	if (memcmp(slots, LABEL_MAGIC, 8) == 0)
		sig_add(d, "raidd", d->name, LABEL_SLOT0);
	else if (memcmp(slots + LABEL_SLOT_SIZE, LABEL_MAGIC, 8) == 0)
		sig_add(d, "raidd", d->name, LABEL_SLOT1);
	else if (memcmp(slots, SPARE_MAGIC, 8) == 0 ||
	    memcmp(slots + LABEL_SLOT_SIZE, SPARE_MAGIC, 8) == 0)
		sig_add(d, "raidd-spare", d->name, LABEL_SLOT0);
}

void
lnx_probe_sigs(struct sys_disk *d)
{
	char (*part)[SYS_NAME_MAX];
	char path[PATH_MAX];
	uint64_t start;
	int i, n;

	d->nsigs = 0;
	probe(d, d->name, 0);
	probe_label(d);
	if ((part = calloc(LNX_MAX_PARTS, sizeof(*part))) == NULL)
		return;
	n = lnx_partitions(d->name, part, LNX_MAX_PARTS);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/%s/start",
		    d->name, part[i]);
		if (lnx_read_u64(path, &start) == -1)
			continue;
		probe(d, part[i], start * 512);
	}
	free(part);
}
