/*
 * The expansion planner.  A volume grows three ways, and only these:
 *
 *  - a tier's partitions grow in place (they are the top partitions of
 *    their disks and the disks are bigger now): md's component size
 *    follows, the tier adds the difference;
 *  - disks join a tier (md reshape to more raid_disks; a two-disk raid1
 *    becomes raid5 first): the tier's band must be free on the disk;
 *  - a new tier on free space above the existing ones.
 *
 * What a tier gains is appended to the dm map, so nothing already in the
 * volume moves.  SHR keeps its bands: a band exists on every disk at
 * least as large as its top, so a disk that reaches a band's top joins
 * its tier, and bands above the old top are cut as plan_shr() cuts them.
 * The result is total - largest again, except for a disk whose new size
 * ends inside a band it is not in: md cannot split an array, so that
 * disk gives only what lies below the band until it grows past it.
 */
#include <string.h>

#include "plan-grow.h"

/* A tier's band on each member: [lo, hi) of the disk's area. */
static uint64_t
band_lo(const struct plan_tier *t)
{
	return t->part[0].start - PLAN_HEAD;
}

static uint64_t
band_hi(const struct plan_tier *t)
{
	return t->part[0].start - PLAN_HEAD + t->part[0].size;
}

static int
in_tier(const struct plan_tier *t, int disk)
{
	for (int r = 0; r < t->nmembers; r++)
		if (t->part[r].disk == disk)
			return 1;
	return 0;
}

/* Is [start, start + size) of disk free of every partition of p, and on the disk? */
static int
room_free(const struct plan *p, int disk, uint64_t start, uint64_t size)
{
	if (start < PLAN_HEAD || size > plan_disk_area(p->disk[disk].size) ||
	    start - PLAN_HEAD > plan_disk_area(p->disk[disk].size) - size)
		return 0;
	for (int t = 0; t < p->ntiers; t++)
		for (int r = 0; r < p->tier[t].nmembers; r++) {
			const struct plan_part *q = &p->tier[t].part[r];

			if (q->disk == disk && start < q->start + q->size &&
			    q->start < start + size)
				return 0;
		}
	return 1;
}

/*
 * A layout read back from disks is checked as much as one freshly made:
 * partitions aligned, on their disks, not overlapping; one size per tier;
 * members' data inside their partitions; the map covering each tier's
 * bytes once, in order, and adding up to the volume.
 */
int
plan_check_layout(const struct plan *p, char *err, size_t errlen)
{
	uint64_t covered[PLAN_MAX_TIERS] = { 0 }, sum = 0;

	if (p->ndisks < 1 || p->ndisks > PLAN_MAX_DISKS || p->ntiers < 1 ||
	    p->ntiers > PLAN_MAX_TIERS || p->nsegs < 1 || p->nsegs > PLAN_MAX_SEGS)
		return plan_err(err, errlen, "%d disks, %d tiers, %d segments", p->ndisks,
		    p->ntiers, p->nsegs);
	for (int t = 0; t < p->ntiers; t++) {
		const struct plan_tier *ti = &p->tier[t];

		if (ti->nmembers < 1 || ti->nmembers > p->ndisks)
			return plan_err(err, errlen, "tier %d: %d members", t + 1, ti->nmembers);
		for (int r = 0; r < ti->nmembers; r++) {
			const struct plan_part *q = &ti->part[r];

			if (q->disk < 0 || q->disk >= p->ndisks || q->size != ti->part[0].size ||
			    q->start != ti->part[0].start || q->size == 0 ||
			    q->start % PLAN_ALIGN || q->size % PLAN_ALIGN)
				return plan_err(err, errlen, "tier %d: role %d's partition", t + 1, r);
			for (int s = 0; s < r; s++)
				if (ti->part[s].disk == q->disk)
					return plan_err(err, errlen, "tier %d: disk %d twice", t + 1,
					    q->disk + 1);
			for (int u = 0; u < t; u++)
				for (int s = 0; s < p->tier[u].nmembers; s++) {
					const struct plan_part *o = &p->tier[u].part[s];

					if (o->disk == q->disk && q->start < o->start + o->size &&
					    o->start < q->start + q->size)
						return plan_err(err, errlen, "tiers %d and %d overlap on "
						    "disk %d", u + 1, t + 1, q->disk + 1);
				}
			if (q->start < PLAN_HEAD || q->start - PLAN_HEAD > plan_disk_area(
			    p->disk[q->disk].size) || q->size > plan_disk_area(
			    p->disk[q->disk].size) - (q->start - PLAN_HEAD))
				return plan_err(err, errlen, "tier %d: a partition past the end of "
				    "disk %d", t + 1, q->disk + 1);
		}
		if (ti->kind != TIER_NONE && (ti->data_offset + ti->member_sectors) * 512 >
		    ti->part[0].size)
			return plan_err(err, errlen, "tier %d: md data past its partitions", t + 1);
	}
	for (int i = 0; i < p->nsegs; i++) {
		const struct plan_seg *sg = &p->seg[i];

		if (sg->tier < 0 || sg->tier >= p->ntiers || sg->len == 0 ||
		    sg->offset != covered[sg->tier] ||
		    sg->len > p->tier[sg->tier].size - covered[sg->tier])
			return plan_err(err, errlen, "map segment %d does not continue tier %d",
			    i + 1, sg->tier + 1);
		covered[sg->tier] += sg->len;
		sum += sg->len;
	}
	for (int t = 0; t < p->ntiers; t++)
		if (covered[t] != p->tier[t].size)
			return plan_err(err, errlen, "the map holds %llu of tier %d's %llu bytes",
			    (unsigned long long)covered[t], t + 1,
			    (unsigned long long)p->tier[t].size);
	if (sum != p->size)
		return plan_err(err, errlen, "the map adds up to %llu, the volume has %llu",
		    (unsigned long long)sum, (unsigned long long)p->size);
	return 0;
}

/* Tier t's partitions become part bytes; md keeps its data offset. */
static void
tier_resize(struct plan_tier *t, uint64_t part)
{
	uint64_t one_mib = MIB / 512;

	for (int r = 0; r < t->nmembers; r++)
		t->part[r].size = part;
	if (t->kind == TIER_NONE) {
		t->size = part;
		return;
	}
	t->member_sectors = (part / 512 - t->data_offset) / one_mib * one_mib;
	t->size = plan_tier_size(t->kind, t->nmembers, t->member_sectors);
}

/* Disk joins tier t in the next role; with to_raid5 a raid1 of two becomes raid5 on the way. */
static void
tier_join(struct plan_tier *t, int disk, int to_raid5)
{
	t->part[t->nmembers].disk = disk;
	t->part[t->nmembers].start = t->part[0].start;
	t->part[t->nmembers].size = t->part[0].size;
	t->nmembers++;
	if (to_raid5 && t->kind == TIER_RAID1 && t->nmembers >= 3) {
		t->kind = TIER_RAID5;
		t->md_level = 5;
		t->chunk = PLAN_TAKEOVER_CHUNK;
		t->layout = PLAN_LAYOUT_RAID5;
	}
	t->size = plan_tier_size(t->kind, t->nmembers, t->member_sectors);
	t->redundant = t->nmembers >= 2;
}

static void
new_tier(struct plan *p, enum tier_kind k, const int *disks, int n, uint64_t lo,
    uint64_t size)
{
	struct plan_tier *t = &p->tier[p->ntiers++];
	uint64_t sectors = size / 512, one_mib = MIB / 512;

	memset(t, 0, sizeof(*t));
	t->kind = k;
	t->md_level = k == TIER_NONE ? -1 : k == TIER_RAID1 ? 1 : 5;
	t->nmembers = n;
	for (int i = 0; i < n; i++) {
		t->part[i].disk = disks[i];
		t->part[i].start = PLAN_HEAD + lo;
		t->part[i].size = size;
	}
	if (k == TIER_NONE) {
		t->size = size;
		return;
	}
	if (k == TIER_RAID5) {
		t->chunk = PLAN_CHUNK_SECTORS;
		t->layout = PLAN_LAYOUT_RAID5;
	}
	t->data_offset = plan_data_offset(sectors, t->chunk);
	t->member_sectors = (sectors - t->data_offset) / one_mib * one_mib;
	t->size = plan_tier_size(k, n, t->member_sectors);
	t->redundant = n >= 2;
}

/*
 * The map of after: before's segments, then what each old tier gained
 * (continuing the last segment when it is that tier's end), then each
 * new tier.  The volume's old bytes keep their place.
 */
static int
extend_map(struct plan_change *c, char *err, size_t errlen)
{
	struct plan *a = &c->after;
	const struct plan *b = &c->before;
	struct plan_seg *last;

	a->nsegs = b->nsegs;
	memcpy(a->seg, b->seg, sizeof(a->seg));
	a->size = b->size;
	for (int t = 0; t < a->ntiers; t++) {
		uint64_t had = t < b->ntiers ? b->tier[t].size : 0;

		if (a->tier[t].size < had)
			return plan_err(err, errlen, "tier %d would shrink", t + 1);
		if (a->tier[t].size == had)
			continue;
		last = &a->seg[a->nsegs - 1];
		if (last->tier == t && last->offset + last->len == had) {
			last->len += a->tier[t].size - had;
		} else {
			if (a->nsegs == PLAN_MAX_SEGS)
				return plan_err(err, errlen, "the volume's map would need more "
				    "than %d segments", PLAN_MAX_SEGS);
			a->seg[a->nsegs++] = (struct plan_seg){ t, had, a->tier[t].size - had };
		}
		a->size += a->tier[t].size - had;
	}
	return 0;
}

/* Record what each tier does, and refuse an expansion that gains nothing. */
static int
finish_change(struct plan_change *c, char *err, size_t errlen)
{
	const struct plan *b = &c->before;
	struct plan *a = &c->after;

	memset(c->what, 0, sizeof(c->what));
	for (int t = 0; t < a->ntiers; t++) {
		if (t >= b->ntiers) {
			c->what[t] = PLAN_CH_NEW;
			continue;
		}
		if (a->tier[t].part[0].size != b->tier[t].part[0].size)
			c->what[t] |= PLAN_CH_PART;
		if (a->tier[t].nmembers != b->tier[t].nmembers)
			c->what[t] |= PLAN_CH_MEMBERS;
		if (a->tier[t].kind != b->tier[t].kind)
			c->what[t] |= PLAN_CH_LEVEL;
	}
	a->redundant = 1;
	for (int t = 0; t < a->ntiers; t++)
		if (!a->tier[t].redundant)
			a->redundant = 0;
	a->note = NULL;
	if (extend_map(c, err, errlen) == -1)
		return -1;
	if (a->size == b->size && memcmp(c->what, (unsigned[PLAN_MAX_TIERS]){ 0 },
	    sizeof(c->what)) == 0)
		return plan_err(err, errlen, "nothing to grow: the disks offer no room the "
		    "volume could use");
	return plan_check_layout(a, err, errlen);
}

/* The highest band top of the tiers, i.e. where free space starts on a full disk. */
static uint64_t
top_of(const struct plan *p)
{
	uint64_t top = 0;

	for (int t = 0; t < p->ntiers; t++)
		if (band_hi(&p->tier[t]) > top)
			top = band_hi(&p->tier[t]);
	return top;
}

/*
 * SHR after disks grew or one joined: every disk reaching a tier's top
 * joins it; the top tier grows in place when exactly its members reach
 * above it; the bands above become new tiers.  reach, when given, caps
 * what each disk's area counts for (plan_grow_join).
 */
static int
shr_extend(struct plan *a, const uint64_t *reach, char *err, size_t errlen)
{
	uint64_t area[PLAN_MAX_DISKS], lo, hi, top;
	int disks[PLAN_MAX_DISKS], k, above, same, t, T = -1;

	for (int i = 0; i < a->ndisks; i++) {
		area[i] = plan_disk_area(a->disk[i].size);
		if (reach && reach[i] < area[i])
			area[i] = reach[i];
	}
	for (t = 0; t < a->ntiers; t++) {
		struct plan_tier *ti = &a->tier[t];

		for (int i = 0; i < a->ndisks; i++)
			if (!in_tier(ti, i) && area[i] >= band_hi(ti) &&
			    room_free(a, i, ti->part[0].start, ti->part[0].size))
				tier_join(ti, i, 1);
		if (T == -1 || band_hi(ti) > band_hi(&a->tier[T]))
			T = t;
	}
	/* The top tier grows in place up to the next disk size, if its
	   members are exactly the disks reaching above it. */
	top = band_hi(&a->tier[T]);
	hi = UINT64_MAX;
	above = same = 0;
	for (int i = 0; i < a->ndisks; i++) {
		if (area[i] <= top)
			continue;
		above++;
		same += in_tier(&a->tier[T], i);
		if (area[i] < hi)
			hi = area[i];
	}
	if (above >= 1 && same == above && above == a->tier[T].nmembers &&
	    hi - top >= PLAN_MIN_BAND)
		tier_resize(&a->tier[T], hi - band_lo(&a->tier[T]));
	for (lo = top_of(a);; lo = hi) {
		hi = UINT64_MAX;
		for (int i = 0; i < a->ndisks; i++)
			if (area[i] > lo && area[i] < hi)
				hi = area[i];
		if (hi == UINT64_MAX)
			break;
		k = 0;
		for (int i = 0; i < a->ndisks; i++)
			if (area[i] >= hi && room_free(a, i, PLAN_HEAD + lo, hi - lo))
				disks[k++] = i;
		if (k < 2 || hi - lo < PLAN_MIN_BAND)
			continue;
		if (a->ntiers == PLAN_MAX_TIERS)
			return plan_err(err, errlen, "the volume would need more than %d tiers",
			    PLAN_MAX_TIERS);
		new_tier(a, k == 2 ? TIER_RAID1 : TIER_RAID5, disks, k, lo, hi - lo);
	}
	return 0;
}

/*
 * The disks whose room joins old tier t of c (after's members that were
 * not before's), in the roles they take; how many.  A tier's old
 * members keep their roles, so the joiners are after's last ones.
 */
int
plan_joiners(const struct plan_change *c, int t, int *disks)
{
	const struct plan_tier *a = &c->after.tier[t], *b = &c->before.tier[t];
	int n = 0;

	if (t >= c->before.ntiers || t >= c->after.ntiers)
		return 0;
	for (int r = b->nmembers; r < a->nmembers; r++)
		disks[n++] = a->part[r].disk;
	return n;
}

static int
check_before(const struct plan *p, char *err, size_t errlen)
{
	if ((unsigned)p->level >= LEVEL_COUNT)
		return plan_err(err, errlen, "unknown level %d", (int)p->level);
	return plan_check_layout(p, err, errlen);
}

/*
 * volume.grow: disk i is now disk_size[i] bytes (never smaller).  Bare
 * tiers and uniform arrays grow their partitions to what the disks
 * allow; SHR as shr_extend() says, each disk's area capped at reach[i]
 * when reach is given.  raid0 cannot: md has no way to grow a raid0's
 * members (mdadm goes through raid4 and back).
 */
static int
grow_within(const struct plan *cur, const uint64_t *disk_size, const uint64_t *reach,
    struct plan_change *c, char *err, size_t errlen)
{
	struct plan *a = &c->after;
	uint64_t min = UINT64_MAX;

	if (check_before(cur, err, errlen) == -1)
		return -1;
	memset(c, 0, sizeof(*c));
	c->before = *cur;
	*a = *cur;
	for (int i = 0; i < cur->ndisks; i++) {
		if (disk_size[i] < cur->disk[i].size)
			return plan_err(err, errlen, "disk %s is smaller than the volume's "
			    "member (%llu < %llu bytes)", cur->disk[i].id,
			    (unsigned long long)disk_size[i],
			    (unsigned long long)cur->disk[i].size);
		a->disk[i].size = disk_size[i];
		if (plan_disk_area(disk_size[i]) < min)
			min = plan_disk_area(disk_size[i]);
	}
	switch (cur->level) {
	case LEVEL_RAID0:
		return plan_err(err, errlen, "raid0 cannot grow: md cannot grow the members "
		    "of a raid0 array");
	case LEVEL_SINGLE:
	case LEVEL_JBOD:
		for (int t = 0; t < a->ntiers; t++) {
			struct plan_tier *ti = &a->tier[t];
			uint64_t area = plan_disk_area(a->disk[ti->part[0].disk].size);

			/* Each disk holds one partition: it grows to the disk's end. */
			if (area - band_lo(ti) >= ti->part[0].size + PLAN_MIN_BAND)
				tier_resize(ti, area - band_lo(ti));
		}
		break;
	case LEVEL_RAID1:
	case LEVEL_RAID5:
	case LEVEL_RAID10:
		if (a->ntiers != 1 || band_lo(&a->tier[0]) != 0)
			return plan_err(err, errlen, "a %s volume has one tier at the start of "
			    "its disks", plan_level_name(cur->level));
		if (min >= a->tier[0].part[0].size + PLAN_MIN_BAND)
			tier_resize(&a->tier[0], min);
		break;
	case LEVEL_SHR:
		if (shr_extend(a, reach, err, errlen) == -1)
			return -1;
		break;
	default:
		break;
	}
	return finish_change(c, err, errlen);
}

int
plan_grow(const struct plan *cur, const uint64_t *disk_size, struct plan_change *c,
    char *err, size_t errlen)
{
	return grow_within(cur, disk_size, NULL, c, err, errlen);
}

/* The top of the bands disk serves in p; 0 if none. */
static uint64_t
served_top(const struct plan *p, int disk)
{
	uint64_t top = 0;

	for (int t = 0; t < p->ntiers; t++)
		if (in_tier(&p->tier[t], disk) && band_hi(&p->tier[t]) > top)
			top = band_hi(&p->tier[t]);
	return top;
}

/*
 * One join of the ones plan_grow() makes (Decision 133): member m's room
 * joins the old tiers in the mask `tiers` and nothing else changes.
 * Each disk counts only as far as it already serves, m as far as the
 * highest of those tiers too: no other room joins a tier, no tier grows
 * in place (m is the one disk above the others' tops) and no new tier
 * is cut (it would need two).  The plan is a function of the bands, so
 * the same call from the labels (add_join_replan) gives the same plan
 * whatever sizes the disks report, as long as each reaches its cap.
 */
int
plan_grow_join(const struct plan *cur, const uint64_t *disk_size, int m, unsigned tiers,
    struct plan_change *c, char *err, size_t errlen)
{
	uint64_t reach[PLAN_MAX_DISKS];

	if (check_before(cur, err, errlen) == -1)
		return -1;
	if (cur->level != LEVEL_SHR)
		return plan_err(err, errlen, "only an SHR volume's tiers take a member's room");
	if (m < 0 || m >= cur->ndisks || tiers == 0 || tiers >> cur->ntiers != 0)
		return plan_err(err, errlen, "member %d joining tiers 0x%x of %d", m + 1, tiers,
		    cur->ntiers);
	for (int i = 0; i < cur->ndisks; i++)
		reach[i] = served_top(cur, i);
	for (int t = 0; t < cur->ntiers; t++)
		if ((tiers & (1U << t)) && band_hi(&cur->tier[t]) > reach[m])
			reach[m] = band_hi(&cur->tier[t]);
	return grow_within(cur, disk_size, reach, c, err, errlen);
}

/*
 * volume.add_disk: d joins as disk number ndisks.  jbod: a new bare
 * tier; shr: shr_extend() (the disk must reach the top of every tier, or
 * it could not keep usable = total - largest); raid5: one more member;
 * raid1: one more mirror, or raid5 of three when `want` says raid5.
 * single, raid0 and raid10 refuse: md reshapes none of them in place
 * without a level change raidd does not make.
 */
int
plan_add_disk(const struct plan *cur, const struct plan_disk *d, enum vol_level want,
    struct plan_change *c, char *err, size_t errlen)
{
	struct plan *a = &c->after;
	const char *name = plan_level_name(cur->level);
	uint64_t area = plan_disk_area(d->size);
	int n = cur->ndisks;

	if (check_before(cur, err, errlen) == -1)
		return -1;
	if (want != cur->level && !(cur->level == LEVEL_RAID1 && want == LEVEL_RAID5))
		return plan_err(err, errlen, "a %s volume cannot become %s", name,
		    plan_level_name(want));
	if (n >= PLAN_MAX_DISKS)
		return plan_err(err, errlen, "%s: at most %d disks", name, PLAN_MAX_DISKS);
	if (memchr(d->id, '\0', PLAN_ID_MAX) == NULL || d->id[0] == '\0')
		return plan_err(err, errlen, "the new disk has no id");
	for (int i = 0; i < n; i++)
		if (strcmp(cur->disk[i].id, d->id) == 0)
			return plan_err(err, errlen, "disk %s is already a member", d->id);
	if (area < PLAN_MIN_AREA)
		return plan_err(err, errlen, "disk %s is too small", d->id);
	memset(c, 0, sizeof(*c));
	c->before = *cur;
	*a = *cur;
	a->disk[n] = *d;
	a->ndisks = n + 1;
	a->level = want;
	switch (cur->level) {
	case LEVEL_JBOD:
		if (a->ntiers == PLAN_MAX_TIERS)
			return plan_err(err, errlen, "jbod: at most %d tiers", PLAN_MAX_TIERS);
		new_tier(a, TIER_NONE, &n, 1, 0, area);
		break;
	case LEVEL_SHR:
		if (area < top_of(cur))
			return plan_err(err, errlen, "disk %s is smaller than the largest band "
			    "in use (%llu MiB < %llu MiB): it could join only part of the "
			    "volume", d->id, (unsigned long long)(area / MIB),
			    (unsigned long long)(top_of(cur) / MIB));
		if (shr_extend(a, NULL, err, errlen) == -1)
			return -1;
		break;
	case LEVEL_RAID1:
	case LEVEL_RAID5:
		if (a->ntiers != 1 || area < band_hi(&a->tier[0]))
			return plan_err(err, errlen, "disk %s is smaller than the members' "
			    "partitions (%llu MiB < %llu MiB)", d->id,
			    (unsigned long long)(area / MIB),
			    (unsigned long long)(band_hi(&a->tier[0]) / MIB));
		if (want == LEVEL_RAID5 && cur->level == LEVEL_RAID1 &&
		    a->tier[0].nmembers != 2)
			return plan_err(err, errlen, "only a raid1 of two disks becomes raid5 "
			    "(this one has %d)", a->tier[0].nmembers);
		tier_join(&a->tier[0], n, want == LEVEL_RAID5);
		break;
	default:
		return plan_err(err, errlen, "%s cannot take a disk: md cannot reshape it in "
		    "place", name);
	}
	return finish_change(c, err, errlen);
}
