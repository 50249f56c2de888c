/*
 * Reading and writing raidd labels on disks. A label has volume-wide
 * fields (generation, intent, members, tiers) and this disk's own (its
 * position, roles and partitions); writing the volume's label to all
 * members keeps each disk's own part.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan-grow.h"
#include "volume.h"

/* 1 when neither slot holds anything that looks like a label. */
static int
blank(const uint8_t *s0, const uint8_t *s1)
{
	return memcmp(s0, LABEL_MAGIC, 8) != 0 && memcmp(s1, LABEL_MAGIC, 8) != 0;
}

static int
choose(const uint8_t *s0, const uint8_t *s1, struct label *l, int *next_slot,
    char *err, size_t errlen)
{
	if (blank(s0, s1))
		return 1;
	return label_choose(s0, s1, LABEL_SLOT_SIZE, l, next_slot, err, errlen) == 0 ? 0 : 2;
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
	return choose(s0, s1, l, next_slot, err, errlen);
}

/* The same, through the descriptor a write will go through. */
int
label_read_fd(const struct dfd *f, struct label *l, int *next_slot, char *err,
    size_t errlen)
{
	static uint8_t s0[LABEL_SLOT_SIZE], s1[LABEL_SLOT_SIZE];

	if (dfd_read(f, LABEL_SLOT0, s0, sizeof(s0)) == -1 ||
	    dfd_read(f, LABEL_SLOT1, s1, sizeof(s1)) == -1) {
		snprintf(err, errlen, "%s: reading the label: %s", f->name, strerror(errno));
		return -1;
	}
	return choose(s0, s1, l, next_slot, err, errlen);
}

int
label_write_fd(const struct dfd *f, const struct label *l, int slot, char *err,
    size_t errlen)
{
	static uint8_t buf[LABEL_SLOT_SIZE];

	if (label_encode(l, buf, sizeof(buf), err, errlen) == -1)
		return -1;
	if (sys->fd_write(f->fd, slot ? LABEL_SLOT1 : LABEL_SLOT0, buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "%s: writing the label: %s", f->name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * raidd picks its partitions' GUIDs, so the first label records them
 * before the GPT is written (the proof checks them: docs/on-disk-format.md).
 * Random, as RFC 4122 version 4 in GPT's mixed byte order.
 */
int
label_new_guids(struct label *l)
{
	for (int t = 0; t < l->ntiers; t++)
		if (label_tier_guids(&l->tier[t]) == -1)
			return -1;
	return 0;
}

/* One tier's: a random unique GUID (version 4) and raidd's type, if the disk is in it. */
int
label_tier_guids(struct label_tier *lt)
{
	memset(lt->part_guid, 0, 16);
	memset(lt->part_type, 0, 16);
	if (lt->role == LABEL_NO_ROLE)
		return 0;
	if (getrandom(lt->part_guid, 16, 0) != 16)
		return -1;
	lt->part_guid[7] = (lt->part_guid[7] & 0x0f) | 0x40;
	lt->part_guid[8] = (lt->part_guid[8] & 0x3f) | 0x80;
	memcpy(lt->part_type, LABEL_GPT_TYPE, 16);
	return 0;
}

/*
 * A disk's first label (volume.create, volume.repair), through the
 * descriptor it goes through (Decision 21): still the device checked,
 * and still wiped (no label).
 */
int
label_write_blank(const struct sys_disk *s, const struct label *l, char *err, size_t errlen)
{
	struct label old;
	struct dfd f;
	int next, rc;

	if (dfd_open(&f, s, err, errlen) == -1)
		return -1;
	if ((rc = label_read_fd(&f, &old, &next, err, errlen)) != 1) {
		if (rc != -1)
			snprintf(err, errlen, "%s carries a label again since it was erased: "
			    "not written", s->name);
		dfd_abandon(&f);
		return -1;
	}
	if (label_write_fd(&f, l, 0, err, errlen) == -1) {
		dfd_abandon(&f);
		return -1;
	}
	return dfd_close(&f, err, errlen);
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
		memcpy(out->tier[t].part_guid, own->tier[t].part_guid, 16);
		memcpy(out->tier[t].part_type, own->tier[t].part_type, 16);
		if (own->tier[t].role == LABEL_NO_ROLE) {
			/* A grow's new tier's band, on every disk until its array is made. */
			if (!grow_making(&v->label, t))
				out->tier[t].start = out->tier[t].size = 0;
			continue;
		}
		/* A tier's partitions are all one size: one that grew (volume.grow)
		   grew on every member, so a member behind takes the newest size. */
		for (int k = 0; k < v->label.ndisks; k++)
			if (v->disk[k][0] && v->mlabel[k].generation == v->label.generation &&
			    v->mlabel[k].tier[t].role != LABEL_NO_ROLE &&
			    v->mlabel[k].tier[t].size > out->tier[t].size)
				out->tier[t].size = v->mlabel[k].tier[t].size;
	}
}

/*
 * Is this label member m of v?  Its own per-member uuid says so, not
 * the kernel name and not the serial alone: "" is the serial of every
 * disk behind many USB bridges.
 */
static int
label_is_member(const struct label *l, const struct volume *v, int m)
{
	return memcmp(l->volume_uuid, v->label.volume_uuid, 16) == 0 && l->position == m &&
	    m < v->label.ndisks &&
	    memcmp(l->member[m].uuid, v->label.member[m].uuid, 16) == 0;
}

/*
 * l, read again from member m's disk, places its partitions where raidd
 * knows it put them, with the GUIDs it gave them. The proof by place
 * and name is for labels that never had GUIDs, not for one that lost
 * them (a downgrade) or moved its partitions since raidd read it. While
 * a grow stands, a partition may still be smaller than raidd now says.
 */
static int
layout_is_known(const struct label *l, const struct volume *v, int m)
{
	const struct label *own = &v->mlabel[m];

	if (l->ntiers != own->ntiers)
		return 0;
	for (int t = 0; t < l->ntiers; t++) {
		const struct label_tier *a = &l->tier[t], *b = &own->tier[t];

		/* A grow writes the grown sizes over labels that still say the old ones. */
		if (a->role != b->role || a->start != b->start || a->size > b->size ||
		    (a->size != b->size && v->label.intent.op != LABEL_OP_EXPANDING) ||
		    memcmp(a->part_guid, b->part_guid, 16) != 0 ||
		    memcmp(a->part_type, b->part_type, 16) != 0)
			return 0;
	}
	return 1;
}

static int
sys_is_member(const struct sys_disk *s, const struct volume *v, int m)
{
	const struct label_member *me = &v->label.member[m];

	/* A disk may have grown since (a virtual disk, a LUN): volume.grow takes the room. */
	return s->size >= me->size && strncmp(s->serial, me->serial, LABEL_SERIAL_MAX - 1) == 0;
}

/* d, as read at the last scan, is member m of v. */
int
member_is(const struct disk *d, const struct volume *v, int m)
{
	return d->label_rc == 0 && !d->flash && label_is_member(&d->label, v, m) &&
	    sys_is_member(&d->sys, v, m);
}

static const struct disk *
disk_named(const char *name)
{
	struct disk *d;

	for (int i = 0; (d = disk_at(i)) != NULL; i++)
		if (strcmp(d->sys.name, name) == 0)
			return d;
	return NULL;
}

/*
 * Before raidd writes to member m: the disk under its kernel name is
 * opened, checked to be the device the scan saw, and proven again
 * through that descriptor - its label is this member's and its GPT is
 * raidd's - as a disk may have been swapped since. The write goes
 * through f; dfd_close syncs it.
 */
int
member_open(const struct volume *v, int m, struct dfd *f, char *err, size_t errlen)
{
	const struct disk *d = disk_named(v->disk[m]);
	struct label l;
	char why[192];
	int next;

	f->fd = -1;
	if (d == NULL || !sys_is_member(&d->sys, v, m)) {
		snprintf(err, errlen, "%s is no longer member %d (serial %s) of %s: not written",
		    v->disk[m], m + 1, v->label.member[m].serial, v->name);
		return -1;
	}
	if (dfd_open(f, &d->sys, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s (member %d of %s)", why, m + 1, v->name);
		return -1;
	}
	if (label_read_fd(f, &l, &next, why, sizeof(why)) != 0 || !label_is_member(&l, v, m) ||
	    !layout_is_known(&l, v, m)) {
		snprintf(err, errlen, "%s no longer carries member %d's label of %s: not written",
		    v->disk[m], m + 1, v->name);
		dfd_abandon(f);
		return -1;
	}
	if (!gpt_proven(f, &l, why, sizeof(why))) {
		snprintf(err, errlen, "%s (member %d of %s) is no longer raidd's: %s: not written",
		    v->disk[m], m + 1, v->name, why);
		dfd_abandon(f);
		return -1;
	}
	return 0;
}

/* One member's label, through its proven descriptor, synced. */
static int
member_write(struct volume *v, int m, const struct label *l, char *err, size_t errlen)
{
	struct dfd f;

	if (member_open(v, m, &f, err, errlen) == -1)
		return -1;
	if (label_write_fd(&f, l, v->next_slot[m], err, errlen) == -1) {
		dfd_abandon(&f);
		return -1;
	}
	return dfd_close(&f, err, errlen);
}

/*
 * Writes v->label (generation, intent ...) to the present members in
 * mask, each checked first; a member already at this generation is
 * never written again (two slots of one generation must be identical).
 */
int
label_write_some(struct volume *v, unsigned mask, char *err, size_t errlen)
{
	struct label l;

	for (int m = 0; m < v->label.ndisks; m++) {
		if (v->disk[m][0] == '\0' || !(mask & (1U << m)) ||
		    v->mlabel[m].generation >= v->label.generation)
			continue;
		member_label(v, m, &l);
		if (member_write(v, m, &l, err, errlen) == -1)
			return -1;
		v->mlabel[m] = l;
		v->next_slot[m] ^= 1;
	}
	return 0;
}

/*
 * The next generation of v's label. A label from before unit ids is
 * this unit's (it was assembled here): it gets this unit's id now.
 */
int
label_next(struct volume *v, char *err, size_t errlen)
{
	const uint8_t *unit = unit_id(NULL);

	if (label_bump(&v->label, err, errlen) == -1)
		return -1;
	if (volume_uuid_zero(v->label.unit) && unit)
		memcpy(v->label.unit, unit, 16);
	return 0;
}

/*
 * v's label, changed from was, at the next generation on the members
 * in mask. When a write fails after some member took the new
 * generation, that generation stays v's (a reboot adopts it too): the
 * next change gets a newer one, and never writes other content at a
 * generation a member already holds. Otherwise v's label is was again.
 */
int
label_change(struct volume *v, unsigned mask, const struct label *was, char *err,
    size_t errlen)
{
	if (label_next(v, err, errlen) == 0 && label_write_some(v, mask, err, errlen) == 0)
		return 0;
	for (int m = 0; m < v->label.ndisks; m++)
		if (v->disk[m][0] && v->mlabel[m].generation == v->label.generation &&
		    v->label.generation != was->generation)
			return -1;
	v->label = *was;
	return -1;
}

/* Member m's own label says what the volume's newest label says. */
int
label_agrees(const struct volume *v, int m)
{
	static uint8_t a[LABEL_SLOT_SIZE], b[LABEL_SLOT_SIZE];
	struct label l;
	char err[160];

	member_label(v, m, &l);
	return label_encode(&l, a, sizeof(a), err, sizeof(err)) == 0 &&
	    label_encode(&v->mlabel[m], b, sizeof(b), err, sizeof(err)) == 0 &&
	    memcmp(a, b, sizeof(a)) == 0;
}

/* The same disk in an older and a newer label; volume.grow may only enlarge it. */
static int
member_kept(const struct label_member *older, const struct label_member *newer)
{
	return memcmp(older->uuid, newer->uuid, 16) == 0 && older->size <= newer->size &&
	    strncmp(older->serial, newer->serial, LABEL_SERIAL_MAX) == 0;
}

/*
 * Member m is the same disk in a and b, or the newer label says it
 * took its place (volume.repair) after the older one was written.
 */
static int
same_member(const struct label *a, const struct label *b, int m)
{
	const struct label *older = a->generation <= b->generation ? a : b;
	const struct label *newer = older == a ? b : a;

	return member_kept(&older->member[m], &newer->member[m]) ||
	    newer->joined[m] > older->generation;
}

/* l's own member entry was replaced in v's label since l was written. */
int
label_replaced(const struct label *l, const struct label *newest)
{
	int m = l->position;

	return m < newest->ndisks && l->generation < newest->generation &&
	    newest->joined[m] > l->generation &&
	    !member_kept(&l->member[m], &newest->member[m]);
}

/* Segment k of l's map: the map's, or tier k whole (a map of version 1). */
static struct label_seg
seg_of(const struct label *l, int k)
{
	struct label_seg s = { (uint8_t)k, 0, l->tier[k].tier_size };

	return l->nsegs ? l->seg[k] : s;
}

/*
 * Every byte of a's volume is where b's map puts it (volume.grow only
 * appends, and never moves what the volume held): a map reordered
 * elsewhere would put the data at other offsets.
 */
static int
map_kept(const struct label *a, const struct label *b)
{
	int na = a->nsegs ? a->nsegs : a->ntiers, nb = b->nsegs ? b->nsegs : b->ntiers;
	uint64_t ao = 0, bo = 0, n;
	int i = 0, j = 0;

	while (i < na) {
		struct label_seg x = seg_of(a, i), y;

		if (x.len == 0) {
			i++;
			continue;
		}
		if (j >= nb)
			return 0;
		if ((y = seg_of(b, j)).len == 0) {
			j++;
			continue;
		}
		if (x.tier != y.tier || x.offset + ao != y.offset + bo)
			return 0;
		n = x.len - ao < y.len - bo ? x.len - ao : y.len - bo;
		ao += n;
		bo += n;
		if (ao == x.len)
			i++, ao = 0;
		if (bo == y.len)
			j++, bo = 0;
	}
	return 1;
}

/*
 * Disks b has past a's: each joined (volume.add_disk) after a was
 * written, so b must be the newer label.
 */
static int
members_added(const struct label *a, const struct label *b)
{
	if (b->ndisks == a->ndisks)
		return 1;
	if (a->generation >= b->generation)
		return 0;
	for (int m = a->ndisks; m < b->ndisks; m++)
		if (b->joined[m] <= a->generation)
			return 0;
	return 1;
}

/* A tier keeps its roles; the roles it gained are held by disks that joined (above). */
static int
roles_kept(const struct label_tier *x, const struct label_tier *y, int olddisks)
{
	if (x->nmembers > y->nmembers || x->nmembers > PLAN_MAX_DISKS ||
	    y->nmembers > PLAN_MAX_DISKS || memcmp(x->member, y->member, x->nmembers) != 0)
		return 0;
	for (int r = x->nmembers; r < y->nmembers; r++)
		if (y->member[r] < olddisks)
			return 0;
	return 1;
}

/*
 * The one level change between generations (volume.add_disk, Decision
 * 106): a raid1 of two that disks joined after a became raid5, with the
 * chunk md's takeover gave it: a raid5 of three.
 */
static int
level_kept(const struct label *a, const struct label *b)
{
	const struct label_tier *x = &a->tier[0], *y = &b->tier[0];

	if (a->level == b->level)
		return 1;
	return a->level == LEVEL_RAID1 && b->level == LEVEL_RAID5 && a->ntiers == 1 &&
	    b->ntiers == 1 && b->ndisks == 3 && x->kind == TIER_RAID1 && x->chunk == 0 &&
	    y->kind == TIER_RAID5 && y->chunk == PLAN_TAKEOVER_CHUNK && y->nmembers == 3;
}

/*
 * Tier t of a and of b are the same kind of array, or the level change
 * above, or an SHR tier's alike (Decision 118): a raid1 that a disk
 * joined after a (the last of b's) is a raid5 of three with md's
 * takeover chunk.
 */
static int
kind_kept(const struct label *a, const struct label *b, int t)
{
	const struct label_tier *x = &a->tier[t], *y = &b->tier[t];

	if (x->kind == y->kind && x->chunk == y->chunk)
		return 1;
	if (a->level == LEVEL_SHR && b->level == LEVEL_SHR)
		return x->kind == TIER_RAID1 && x->chunk == 0 && x->nmembers <= 3 &&
		    y->kind == TIER_RAID5 && y->chunk == PLAN_TAKEOVER_CHUNK &&
		    y->nmembers == 3 && y->member[2] == b->ndisks - 1 &&
		    (x->nmembers == 3 || b->joined[b->ndisks - 1] > a->generation);
	return a->level != b->level && level_kept(a, b);
}

/*
 * b (the newer) describes the disks and arrays a (the older) does. No
 * operation here but a repair (one member's disk, after the older label)
 * changes these between generations, so a label that differs from an
 * older member's in them was not written by raidd to this volume: a
 * copy from elsewhere, widened or reshaped, is never obeyed. Sizes alone
 * may grow (volume.grow: disks, tiers), the map only append (map_kept),
 * and disks only join at the end, into new roles or new tiers of their
 * own (volume.add_disk); an SHR grow's newer label, while its intent
 * stands, has new tiers on the old disks (Decision 109).
 */
int
label_same_members(const struct label *a, const struct label *b)
{
	/* An SHR grow in flight in b, written after a, gives old disks new tiers. */
	int grown = b->level == LEVEL_SHR && b->intent.op == LABEL_OP_EXPANDING &&
	    a->generation < b->generation;

	if (!level_kept(a, b) || a->ndisks > b->ndisks || a->ntiers > b->ntiers ||
	    a->size > b->size || b->ndisks > PLAN_MAX_DISKS || b->ntiers > PLAN_MAX_TIERS ||
	    !members_added(a, b) || (b->ntiers > a->ntiers && b->ndisks == a->ndisks && !grown))
		return 0;
	/* A tier of its own for each added disk (jbod): on added disks only. */
	for (int t = a->ntiers; t < b->ntiers; t++)
		if (!roles_kept(&(struct label_tier){ .nmembers = 0 }, &b->tier[t],
		    grown ? 0 : a->ndisks))
			return 0;
	for (int m = 0; m < a->ndisks; m++)
		if (!same_member(a, b, m))
			return 0;
	for (int t = 0; t < a->ntiers; t++) {
		const struct label_tier *x = &a->tier[t], *y = &b->tier[t];

		if (!kind_kept(a, b, t) ||
		    x->tier_size > y->tier_size || memcmp(x->array_uuid, y->array_uuid, 16) != 0 ||
		    !roles_kept(x, y, a->ndisks))
			return 0;
	}
	return map_kept(a, b);
}

int
label_write_all(struct volume *v, char *err, size_t errlen)
{
	return label_write_some(v, ~0U, err, errlen);
}
