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
void
label_for_member(const struct volume *v, int m, struct label *out)
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
		/* A member behind takes its roles from the newest label: a join
		   rolled back while it was away (Decision 133) took it off the
		   joined tier's list, which its own label still gives it. */
		if (own->generation < v->label.generation && t < own->ntiers &&
		    own->tier[t].role != LABEL_NO_ROLE && label_role_of(&v->label, t, m) < 0) {
			out->tier[t].role = LABEL_NO_ROLE;
			memset(out->tier[t].part_guid, 0, 16);
			memset(out->tier[t].part_type, 0, 16);
		}
		if (out->tier[t].role == LABEL_NO_ROLE) {
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

int
member_through(const struct volume *v, int m,
    int (*fn)(struct dfd *, void *arg, char *err, size_t errlen), void *arg,
    char *err, size_t errlen)
{
	struct dfd f;

	if (member_open(v, m, &f, err, errlen) == -1)
		return -1;
	if (dfd_recheck(&f, err, errlen) == -1 || fn(&f, arg, err, errlen) == -1 ||
	    dfd_recheck(&f, err, errlen) == -1) {
		dfd_abandon(&f);
		return -1;
	}
	return dfd_close(&f, err, errlen);
}

struct del_at {
	const char	*disk;
	uint64_t	 start, size;
};

static int
del_through(struct dfd *f, void *arg, char *err, size_t errlen)
{
	const struct del_at *d = arg;

	if (sys->part_del(d->disk, f->fd, d->start, d->size) == -1)
		return plan_err(err, errlen, "%s: removing the partition at %llu: %s", d->disk,
		    (unsigned long long)d->start, strerror(errno));
	return 0;
}

int
member_part_del(const struct volume *v, int m, uint64_t start, uint64_t size, char *err,
    size_t errlen)
{
	struct del_at d = { v->disk[m], start, size };

	return member_through(v, m, del_through, &d, err, errlen);
}

struct table {
	const char		*disk;
	const struct sys_part	*parts;
	int			 n;
};

static int
table_write(struct dfd *f, void *arg, char *err, size_t errlen)
{
	const struct table *t = arg;

	if (sys->partition(t->disk, f->fd, t->parts, t->n) == -1)
		return plan_err(err, errlen, "%s: partitioning: %s", t->disk, strerror(errno));
	return 0;
}

int
member_partition(const struct volume *v, int m, const struct sys_part *parts, int n,
    char *err, size_t errlen)
{
	struct table t = { v->disk[m], parts, n };

	return member_through(v, m, table_write, &t, err, errlen);
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
 * Member m's own label l, at the generation the others hold already (a
 * join's, Decision 133), through its proven descriptor; never over a
 * label of that generation it holds (two slots of one generation must be
 * identical).
 */
int
label_write_own(struct volume *v, int m, const struct label *l, char *err, size_t errlen)
{
	if (v->mlabel[m].generation >= l->generation)
		return 0;
	if (member_write(v, m, l, err, errlen) == -1)
		return -1;
	v->mlabel[m] = *l;
	v->next_slot[m] ^= 1;
	return 0;
}

/*
 * Before member m's label l, taken from the newest (label_for_member),
 * is written: a partition its own label gave it in a tier l gives it
 * none in goes from its disk, through its proven descriptor.  A join
 * rolled back while m was away (Decision 133) left its new partition
 * there; the proof of l would find a partition too many and drop m from
 * every tier it serves.  part_del refuses (EBUSY) one md holds.
 */
static int
parts_left_out(const struct volume *v, int m, const struct label *l, char *err,
    size_t errlen)
{
	const struct label *own = &v->mlabel[m];

	for (int t = 0; t < own->ntiers && t < l->ntiers; t++) {
		const struct label_tier *ot = &own->tier[t];

		if (ot->role == LABEL_NO_ROLE || ot->size == 0 || l->tier[t].role != LABEL_NO_ROLE)
			continue;
		if (member_part_del(v, m, ot->start, ot->size, err, errlen) == -1)
			return -1;
		/* Said whether it was there (a join undone while m was away) or
		 * already gone (the roll back removed it): part_del is 0 for both. */
		log_info("volume %s: %s holds no partition of tier %d now, as the newest "
		    "label gives it none there", v->name, v->disk[m], t + 1);
	}
	return 0;
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
		label_for_member(v, m, &l);
		if (parts_left_out(v, m, &l, err, errlen) == -1 ||
		    label_write_own(v, m, &l, err, errlen) == -1)
			return -1;
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

	label_for_member(v, m, &l);
	return label_encode(&l, a, sizeof(a), err, sizeof(err)) == 0 &&
	    label_encode(&v->mlabel[m], b, sizeof(b), err, sizeof(err)) == 0 &&
	    memcmp(a, b, sizeof(a)) == 0;
}

int
label_write_all(struct volume *v, char *err, size_t errlen)
{
	return label_write_some(v, ~0U, err, errlen);
}
