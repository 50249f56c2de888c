/*
 * Reading and writing raidd labels on disks. A label has volume-wide
 * fields (generation, intent, members, tiers) and this disk's own (its
 * position, roles and partitions); writing the volume's label to all
 * members keeps each disk's own part.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "volume.h"

/* 1 when neither slot holds anything that looks like a label. */
static int
blank(const uint8_t *s0, const uint8_t *s1)
{
	return memcmp(s0, LABEL_MAGIC, 8) != 0 && memcmp(s1, LABEL_MAGIC, 8) != 0;
}

/* 0 found, 1 no label, 2 a damaged label, -1 unreadable (err says why). */
int
label_read_disk(const char *disk, struct label *l, int *next_slot,
    char *err, size_t errlen)
{
	static uint8_t s0[LABEL_SLOT_SIZE], s1[LABEL_SLOT_SIZE];

	if (sys->read_at(disk, LABEL_SLOT0, s0, sizeof(s0)) == -1 ||
	    sys->read_at(disk, LABEL_SLOT1, s1, sizeof(s1)) == -1) {
		snprintf(err, errlen, "%s: reading the label: %s", disk, strerror(errno));
		return -1;
	}
	if (blank(s0, s1))
		return 1;
	return label_choose(s0, s1, sizeof(s0), l, next_slot, err, errlen) == 0 ? 0 : 2;
}

int
label_write_disk(const char *disk, const struct label *l, int slot, char *err,
    size_t errlen)
{
	static uint8_t buf[LABEL_SLOT_SIZE];

	if (label_encode(l, buf, sizeof(buf), err, errlen) == -1)
		return -1;
	if (sys->write_at(disk, slot ? LABEL_SLOT1 : LABEL_SLOT0, buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "%s: writing the label: %s", disk, strerror(errno));
		return -1;
	}
	return 0;
}

/* The volume's label with member m's own fields. */
static void
member_label(const struct volume *v, int m, struct label *out)
{
	const struct label *own = &v->mlabel[m];

	*out = v->label;
	out->position = own->position;
	for (int t = 0; t < out->ntiers; t++) {
		out->tier[t].role = own->tier[t].role;
		out->tier[t].start = own->tier[t].start;
		out->tier[t].size = own->tier[t].size;
	}
}

/* Writes v->label (generation, intent ...) to every present member. */
int
label_write_all(struct volume *v, char *err, size_t errlen)
{
	struct label l;

	for (int m = 0; m < v->label.ndisks; m++) {
		if (v->disk[m][0] == '\0')
			continue;
		member_label(v, m, &l);
		if (label_write_disk(v->disk[m], &l, v->next_slot[m], err, errlen) == -1)
			return -1;
		v->mlabel[m] = l;
		v->next_slot[m] ^= 1;
	}
	return 0;
}
