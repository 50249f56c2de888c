/*
 * Unit tests for raidd/plan-grow.c: what volume.grow and volume.add_disk
 * do to every level and size mix; SHR keeps usable = total - largest
 * after every step; nothing already in the volume moves.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "require.h"
#include "raidd/plan-grow.h"

#define UNIT	(64 * GIB)	/* disk sizes are whole units: no tiny bands */

static char err[PLAN_ERRLEN];

/* Deterministic, so a failure can be replayed. */
static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t
rng(void)
{
	return xorshift(&rng_state);
}

/* A disk of u units plus a little, so that areas are whole units. */
static uint64_t
disk_of(uint64_t units)
{
	return units * UNIT + PLAN_HEAD + PLAN_ALIGN;
}

static void
make(enum vol_level l, int n, const uint64_t *units, struct plan *p)
{
	struct plan_disk d[PLAN_MAX_DISKS];

	memset(d, 0, sizeof(d));
	for (int i = 0; i < n; i++) {
		snprintf(d[i].id, sizeof(d[i].id), "bay%d", i + 1);
		d[i].size = disk_of(units[i]);
	}
	if (plan_make(l, d, n, p, err, sizeof(err)) == -1)
		ck_abort_msg("plan_make: %s", err);
	if (plan_check_layout(p, err, sizeof(err)) == -1)
		ck_abort_msg("fresh plan: %s", err);
}

static struct plan_disk
new_disk(const char *id, uint64_t units)
{
	struct plan_disk d;

	memset(&d, 0, sizeof(d));
	snprintf(d.id, sizeof(d.id), "%s", id);
	d.size = disk_of(units);
	return d;
}

/* Bytes of redundancy-free partition space: (k - 1) x band per tier. */
static uint64_t
raw_of(const struct plan *p)
{
	uint64_t raw = 0;

	for (int t = 0; t < p->ntiers; t++)
		raw += (uint64_t)(p->tier[t].nmembers - 1) * p->tier[t].part[0].size;
	return raw;
}

static uint64_t
total_minus_largest(const struct plan *p)
{
	uint64_t sum = 0, max = 0, a;

	for (int i = 0; i < p->ndisks; i++) {
		a = plan_disk_area(p->disk[i].size);
		sum += a;
		if (a > max)
			max = a;
	}
	return sum - max;
}

/* Does some disk end strictly inside a band it is not in (md cannot split it)? */
static int
stuck_inside(const struct plan *p)
{
	for (int i = 0; i < p->ndisks; i++) {
		uint64_t a = plan_disk_area(p->disk[i].size);

		for (int t = 0; t < p->ntiers; t++) {
			const struct plan_tier *ti = &p->tier[t];
			uint64_t lo = ti->part[0].start - PLAN_HEAD, hi = lo + ti->part[0].size;
			int in = 0;

			for (int r = 0; r < ti->nmembers; r++)
				in |= ti->part[r].disk == i;
			if (!in && a > lo && a < hi)
				return 1;
		}
	}
	return 0;
}

/* Nothing the volume held moves: old tiers keep arrays, roles, starts, map. */
static void
check_kept(const struct plan_change *c)
{
	const struct plan *b = &c->before, *a = &c->after;

	REQUIRE_GE(a->ntiers, b->ntiers);
	REQUIRE_GE(a->size, b->size);
	REQUIRE_GE(a->nsegs, b->nsegs);
	for (int t = 0; t < b->ntiers; t++) {
		const struct plan_tier *x = &b->tier[t], *y = &a->tier[t];

		REQUIRE_GE(y->nmembers, x->nmembers);
		REQUIRE_GE(y->size, x->size);
		REQUIRE_GE(y->part[0].size, x->part[0].size);
		REQUIRE_EQ(y->data_offset, x->data_offset);
		for (int r = 0; r < x->nmembers; r++) {
			REQUIRE_EQ(y->part[r].disk, x->part[r].disk);
			REQUIRE_EQ(y->part[r].start, x->part[r].start);
		}
		REQUIRE_EQ(!!(c->what[t] & PLAN_CH_PART), y->part[0].size != x->part[0].size);
		REQUIRE_EQ(!!(c->what[t] & PLAN_CH_MEMBERS), y->nmembers != x->nmembers);
		REQUIRE_EQ(!!(c->what[t] & PLAN_CH_LEVEL), y->kind != x->kind);
		if (y->kind != x->kind) {
			REQUIRE_EQ(x->kind, TIER_RAID1);
			REQUIRE_EQ(y->kind, TIER_RAID5);
			REQUIRE_EQ(y->chunk, PLAN_TAKEOVER_CHUNK);
		}
	}
	for (int t = b->ntiers; t < a->ntiers; t++)
		REQUIRE_EQ(c->what[t], PLAN_CH_NEW);
	for (int s = 0; s < b->nsegs; s++) {
		REQUIRE_EQ(a->seg[s].tier, b->seg[s].tier);
		REQUIRE_EQ(a->seg[s].offset, b->seg[s].offset);
		if (s < b->nsegs - 1)
			REQUIRE_EQ(a->seg[s].len, b->seg[s].len);
		else
			REQUIRE_GE(a->seg[s].len, b->seg[s].len);
	}
	if (plan_check_layout(a, err, sizeof(err)) == -1)
		ck_abort_msg("after: %s", err);
}

static void
grow_ok(const struct plan *p, const uint64_t *units, struct plan_change *c)
{
	uint64_t sizes[PLAN_MAX_DISKS];

	for (int i = 0; i < p->ndisks; i++)
		sizes[i] = disk_of(units[i]);
	if (plan_grow(p, sizes, c, err, sizeof(err)) == -1)
		ck_abort_msg("plan_grow: %s", err);
	check_kept(c);
}

static void
grow_refused(const struct plan *p, const uint64_t *units, const char *want)
{
	uint64_t sizes[PLAN_MAX_DISKS];
	struct plan_change c;

	for (int i = 0; i < p->ndisks; i++)
		sizes[i] = disk_of(units[i]);
	err[0] = '\0';
	ck_assert_int_eq(plan_grow(p, sizes, &c, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		ck_abort_msg("error \"%s\" lacks \"%s\"", err, want);
}

static void
add_refused(const struct plan *p, const struct plan_disk *d, enum vol_level l,
    const char *want)
{
	struct plan_change c;

	err[0] = '\0';
	ck_assert_int_eq(plan_add_disk(p, d, l, &c, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		ck_abort_msg("error \"%s\" lacks \"%s\"", err, want);
}

START_TEST(grow_uniform)
{
	static const enum vol_level lv[] = { LEVEL_RAID1, LEVEL_RAID5, LEVEL_RAID10 };
	uint64_t u[4] = { 2, 2, 2, 2 }, g[4] = { 4, 5, 4, 6 };
	struct plan_change c;
	struct plan p;

	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		make(lv[i], 4, u, &p);
		grow_ok(&p, g, &c);
		REQUIRE_EQ(c.after.ntiers, 1);
		REQUIRE_EQ(c.what[0], PLAN_CH_PART);
		/* Cut to the smallest disk, as at creation. */
		REQUIRE_EQ(c.after.tier[0].part[0].size, 4 * UNIT);
		REQUIRE_EQ(c.after.nsegs, 1);
		REQUIRE_EQ(c.after.seg[0].len, c.after.size);
		REQUIRE_EQ(c.after.tier[0].member_sectors,
		    (4 * UNIT / 512 - p.tier[0].data_offset) / 2048 * 2048);
		/* One disk still small: nothing to gain. */
		g[2] = 2;
		grow_refused(&p, g, "nothing to grow");
		g[2] = 4;
	}
	make(LEVEL_RAID0, 2, u, &p);
	grow_refused(&p, g, "raid0 cannot grow");
	make(LEVEL_RAID5, 3, u, &p);
	g[1] = 1;
	grow_refused(&p, g, "disk bay2 is smaller");
}
END_TEST

START_TEST(grow_jbod_single)
{
	uint64_t u[3] = { 1, 2, 3 }, g[3] = { 4, 2, 5 };
	struct plan_change c;
	struct plan p;

	make(LEVEL_JBOD, 3, u, &p);
	grow_ok(&p, g, &c);
	REQUIRE_EQ(c.what[0], PLAN_CH_PART);
	REQUIRE_EQ(c.what[1], 0);
	REQUIRE_EQ(c.what[2], PLAN_CH_PART);
	/* The old map, then disk 1's new end, then disk 3's. */
	REQUIRE_EQ(c.after.nsegs, 5);
	REQUIRE_EQ(c.after.seg[3].tier, 0);
	REQUIRE_EQ(c.after.seg[3].offset, 1 * UNIT);
	REQUIRE_EQ(c.after.seg[3].len, 3 * UNIT);
	REQUIRE_EQ(c.after.seg[4].tier, 2);
	REQUIRE_EQ(c.after.size, 11 * UNIT);
	make(LEVEL_SINGLE, 1, u, &p);
	grow_ok(&p, g, &c);
	/* The last segment is the tier's end: it just gets longer. */
	REQUIRE_EQ(c.after.nsegs, 1);
	REQUIRE_EQ(c.after.size, 4 * UNIT);
}
END_TEST

/* 1,1,2,2 with the small ones swapped for 3s: the raid1 band becomes a raid5 of four. */
START_TEST(grow_shr_example)
{
	uint64_t u[4] = { 1, 1, 2, 2 }, g[4] = { 3, 3, 2, 2 };
	struct plan_change c;
	struct plan p;

	make(LEVEL_SHR, 4, u, &p);
	REQUIRE_EQ(p.ntiers, 2);
	grow_ok(&p, g, &c);
	REQUIRE_EQ(c.after.ntiers, 3);
	REQUIRE_EQ(c.what[0], 0);
	REQUIRE_EQ(c.what[1], PLAN_CH_MEMBERS | PLAN_CH_LEVEL);
	REQUIRE_EQ(c.what[2], PLAN_CH_NEW);
	REQUIRE_EQ(c.after.tier[1].nmembers, 4);
	REQUIRE_EQ(c.after.tier[1].part[2].disk, 0);
	REQUIRE_EQ(c.after.tier[1].part[3].disk, 1);
	REQUIRE_EQ(c.after.tier[2].kind, TIER_RAID1);
	REQUIRE_EQ(c.after.tier[2].part[0].start, PLAN_HEAD + 2 * UNIT);
	REQUIRE_EQ(raw_of(&c.after), 7 * UNIT);
	REQUIRE_EQ(raw_of(&c.after), total_minus_largest(&c.after));
	/* Map: t1, t2, t2's gain, t3. */
	REQUIRE_EQ(c.after.nsegs, 3);
	REQUIRE_EQ(c.after.seg[1].tier, 1);
	REQUIRE_EQ(c.after.seg[2].tier, 2);

	/* Two disks of 1 swapped for 2s: the mirror grows in place. */
	{
		uint64_t u2[2] = { 1, 1 }, g2[2] = { 2, 2 };

		make(LEVEL_SHR, 2, u2, &p);
		grow_ok(&p, g2, &c);
		REQUIRE_EQ(c.after.ntiers, 1);
		REQUIRE_EQ(c.what[0], PLAN_CH_PART);
		/* Only one of them: nothing yet. */
		g2[1] = 1;
		grow_refused(&p, g2, "nothing to grow");
	}
}
END_TEST

START_TEST(add_disk_levels)
{
	uint64_t u[4] = { 2, 2, 2, 2 };
	struct plan_disk d = new_disk("bay9", 3), small = new_disk("bay9", 1);
	struct plan_change c;
	struct plan p;

	make(LEVEL_RAID5, 3, u, &p);
	ck_assert_int_eq(plan_add_disk(&p, &d, LEVEL_RAID5, &c, err, sizeof(err)), 0);
	check_kept(&c);
	REQUIRE_EQ(c.what[0], PLAN_CH_MEMBERS);
	REQUIRE_EQ(c.after.tier[0].nmembers, 4);
	REQUIRE_EQ(c.after.tier[0].part[3].disk, 3);
	REQUIRE_EQ(c.after.size, p.size / 2 * 3);
	add_refused(&p, &small, LEVEL_RAID5, "smaller than the members' partitions");
	add_refused(&p, &d, LEVEL_RAID1, "cannot become raid1");
	d.id[3] = '1';
	add_refused(&p, &d, LEVEL_RAID5, "already a member");
	d.id[3] = '9';

	make(LEVEL_RAID1, 2, u, &p);
	ck_assert_int_eq(plan_add_disk(&p, &d, LEVEL_RAID1, &c, err, sizeof(err)), 0);
	check_kept(&c);
	REQUIRE_EQ(c.after.tier[0].kind, TIER_RAID1);
	REQUIRE_EQ(c.after.size, p.size);
	ck_assert_int_eq(plan_add_disk(&p, &d, LEVEL_RAID5, &c, err, sizeof(err)), 0);
	check_kept(&c);
	REQUIRE_EQ(c.what[0], PLAN_CH_MEMBERS | PLAN_CH_LEVEL);
	REQUIRE_EQ(c.after.level, LEVEL_RAID5);
	REQUIRE_EQ(c.after.size, 2 * p.size);
	make(LEVEL_RAID1, 3, u, &p);
	add_refused(&p, &d, LEVEL_RAID5, "only a raid1 of two disks");

	make(LEVEL_RAID0, 2, u, &p);
	add_refused(&p, &d, LEVEL_RAID0, "cannot take a disk");
	make(LEVEL_RAID10, 4, u, &p);
	add_refused(&p, &d, LEVEL_RAID10, "cannot take a disk");
	make(LEVEL_SINGLE, 1, u, &p);
	add_refused(&p, &d, LEVEL_SINGLE, "cannot take a disk");
	add_refused(&p, &d, LEVEL_SHR, "cannot become shr");

	make(LEVEL_JBOD, 2, u, &p);
	ck_assert_int_eq(plan_add_disk(&p, &d, LEVEL_JBOD, &c, err, sizeof(err)), 0);
	check_kept(&c);
	REQUIRE_EQ(c.after.size, 7 * UNIT);
	REQUIRE_EQ(c.what[2], PLAN_CH_NEW);

	{
		uint64_t e[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };

		make(LEVEL_SHR, 8, e, &p);
		add_refused(&p, &d, LEVEL_SHR, "at most 8 disks");
	}
	{
		uint64_t s[3] = { 1, 3, 3 };

		make(LEVEL_SHR, 3, s, &p);
		small = new_disk("bay9", 2);
		add_refused(&p, &small, LEVEL_SHR, "smaller than the largest band");
	}
}
END_TEST

/* A layout from disks is checked: nothing hostile reaches the planner's arithmetic. */
START_TEST(hostile_layout)
{
	uint64_t u[3] = { 2, 2, 2 }, g[3] = { 3, 3, 3 };
	struct plan_change c;
	struct plan p, q;

	make(LEVEL_RAID5, 3, u, &p);
	q = p;
	q.tier[0].part[1].start += PLAN_ALIGN;
	grow_refused(&q, g, "partition");
	q = p;
	q.tier[0].part[1].size = 3 * UNIT;
	grow_refused(&q, g, "partition");
	q = p;
	q.seg[0].len -= 512;
	grow_refused(&q, g, "map");
	q = p;
	q.tier[0].part[2].disk = 0;
	grow_refused(&q, g, "twice");
	q = p;
	q.nsegs = 0;
	grow_refused(&q, g, "segments");
	q = p;
	q.tier[0].member_sectors = 4 * UNIT / 512;
	grow_refused(&q, g, "md data past");
	q = p;
	q.ntiers = 9;
	grow_refused(&q, g, "tiers");
	(void)c;
}
END_TEST

/* plan_grow to disks of u; on a refusal the disks are bigger anyway. */
static int
grow_step(struct plan *p, const uint64_t *u, int n, struct plan_change *c)
{
	uint64_t sizes[PLAN_MAX_DISKS];

	for (int j = 0; j < n; j++)
		sizes[j] = disk_of(u[j]);
	if (plan_grow(p, sizes, c, err, sizeof(err)) == 0)
		return 0;
	REQUIRE(strstr(err, "nothing to grow") || strstr(err, "more than"));
	for (int j = 0; j < n; j++)
		p->disk[j].size = sizes[j];
	return -1;
}

/*
 * SHR through random lives: disks swapped for bigger ones (then grow)
 * and disks added, in any order.  After every step: the layout is
 * sound, nothing moved, and usable = total - largest unless a disk
 * ends inside a band it is not in.
 */
START_TEST(shr_random_lives)
{
	struct plan_change c;
	struct plan p, fresh;
	uint64_t u[PLAN_MAX_DISKS];
	int n, steps = 0, equal = 0;

	for (int life = 0; life < 3000; life++) {
		n = 1 + rng() % 4;
		for (int i = 0; i < n; i++)
			u[i] = 1 + rng() % 8;
		make(LEVEL_SHR, n, u, &p);
		for (int step = 0; step < 8; step++) {
			if (n < PLAN_MAX_DISKS && rng() % 3 == 0) {
				uint64_t top = 0, units;
				char id[16];
				struct plan_disk d;

				for (int t = 0; t < p.ntiers; t++)
					if (p.tier[t].part[0].start - PLAN_HEAD +
					    p.tier[t].part[0].size > top)
						top = p.tier[t].part[0].start - PLAN_HEAD +
						    p.tier[t].part[0].size;
				units = top / UNIT + rng() % 4;
				snprintf(id, sizeof(id), "new%d", n + 1);
				d = new_disk(id, units);
				if (plan_add_disk(&p, &d, LEVEL_SHR, &c, err, sizeof(err)) == -1) {
					REQUIRE(strstr(err, "nothing to grow") ||
					    strstr(err, "more than"));
					continue;
				}
				u[n++] = units;
			} else {
				int i = rng() % n;

				u[i] += 1 + rng() % 4;
				if (grow_step(&p, u, n, &c) == -1)
					continue;
			}
			check_kept(&c);
			p = c.after;
			steps++;
			REQUIRE_LE(raw_of(&p), total_minus_largest(&p));
			if (!stuck_inside(&p)) {
				REQUIRE_EQ(raw_of(&p), total_minus_largest(&p));
				/* As much as a volume made on these disks today. */
				make(LEVEL_SHR, n, u, &fresh);
				REQUIRE_EQ(raw_of(&fresh), raw_of(&p));
				equal++;
			}
			for (int t = 0; t < p.ntiers; t++) {
				REQUIRE(p.tier[t].kind == TIER_RAID1 || p.tier[t].kind == TIER_RAID5);
				REQUIRE((p.tier[t].kind == TIER_RAID5) == (p.tier[t].nmembers >= 3));
			}
		}
	}
	/* The rule was checked, not skipped. */
	REQUIRE_GE(equal, steps / 2);
}
END_TEST

/*
 * The SHR expansion people make: bigger disks replace the smaller ones
 * one at a time.  Four 1s with bays 1-3 swapped for 2s: one replacement
 * gives nothing, two give a mirror of the room above, three (grown at
 * once) a raid5 of three; the partitions hold total - largest each time.
 */
START_TEST(shr_replacements_add_tier)
{
	uint64_t u[4] = { 1, 1, 1, 1 }, g1[4] = { 2, 1, 1, 1 }, g2[4] = { 2, 2, 1, 1 },
	    g3[4] = { 2, 2, 2, 1 };
	struct plan_change c, c2;
	struct plan p;

	make(LEVEL_SHR, 4, u, &p);
	REQUIRE_EQ(p.ntiers, 1);
	grow_refused(&p, g1, "nothing to grow");
	grow_ok(&p, g2, &c);
	REQUIRE_EQ(c.after.ntiers, 2);
	REQUIRE_EQ(c.what[0], 0);
	REQUIRE_EQ(c.what[1], PLAN_CH_NEW);
	REQUIRE_EQ(c.after.tier[1].kind, TIER_RAID1);
	REQUIRE_EQ(c.after.tier[1].nmembers, 2);
	REQUIRE_EQ(c.after.tier[1].part[0].disk, 0);
	REQUIRE_EQ(c.after.tier[1].part[1].disk, 1);
	REQUIRE_EQ(c.after.tier[1].part[0].start, PLAN_HEAD + UNIT);
	REQUIRE_EQ(c.after.tier[1].part[0].size, UNIT);
	REQUIRE_EQ(raw_of(&c.after), total_minus_largest(&c.after));
	/* Appended: the volume's bytes keep their place. */
	REQUIRE_EQ(c.after.nsegs, 2);
	REQUIRE_EQ(c.after.seg[1].tier, 1);
	REQUIRE_EQ(c.after.size, p.size + c.after.tier[1].size);
	/* The third disk then reaches the mirror: md must reshape it to raid5. */
	grow_ok(&c.after, g3, &c2);
	REQUIRE_EQ(c2.what[1], PLAN_CH_MEMBERS | PLAN_CH_LEVEL);
	REQUIRE_EQ(raw_of(&c2.after), total_minus_largest(&c2.after));
	/* All three before one grow: a raid5 of three above. */
	grow_ok(&p, g3, &c);
	REQUIRE_EQ(c.after.ntiers, 2);
	REQUIRE_EQ(c.what[1], PLAN_CH_NEW);
	REQUIRE_EQ(c.after.tier[1].kind, TIER_RAID5);
	REQUIRE_EQ(c.after.tier[1].nmembers, 3);
	REQUIRE_EQ(c.after.tier[1].chunk, PLAN_CHUNK_SECTORS);
	REQUIRE_EQ(raw_of(&c.after), 5 * UNIT);
	REQUIRE_EQ(raw_of(&c.after), total_minus_largest(&c.after));
}
END_TEST

/*
 * Issue 9: an SHR of three, its bays swapped one at a time for disks
 * twice as big.  Two swaps give a mirror above; the third disk's room
 * then joins that mirror, which md takes over as raid5 of two and
 * reshapes to three (PLAN_CH_MEMBERS | PLAN_CH_LEVEL): the band keeps
 * its start and size, the members their roles, and what the tier gains
 * continues its segment of the map.
 */
START_TEST(shr_swaps_join_mirror)
{
	uint64_t u[3] = { 1, 1, 1 }, g1[3] = { 2, 1, 1 }, g2[3] = { 2, 2, 1 },
	    g3[3] = { 2, 2, 2 };
	struct plan_change c, c2;
	struct plan p;
	int joins[PLAN_MAX_DISKS];

	make(LEVEL_SHR, 3, u, &p);
	REQUIRE_EQ(p.ntiers, 1);
	REQUIRE_EQ(p.tier[0].kind, TIER_RAID5);
	grow_refused(&p, g1, "nothing to grow");
	grow_ok(&p, g2, &c);
	REQUIRE_EQ(c.after.ntiers, 2);
	REQUIRE_EQ(c.what[1], PLAN_CH_NEW);
	REQUIRE_EQ(c.after.tier[1].kind, TIER_RAID1);
	REQUIRE_EQ(c.after.tier[1].nmembers, 2);
	REQUIRE_EQ(plan_joiners(&c, 0, joins), 0);
	REQUIRE_EQ(plan_joiners(&c, 1, joins), 0);	/* new, not joined */
	grow_ok(&c.after, g3, &c2);
	REQUIRE_EQ(c2.after.ntiers, 2);
	REQUIRE_EQ(c2.what[0], 0);
	REQUIRE_EQ(c2.what[1], PLAN_CH_MEMBERS | PLAN_CH_LEVEL);
	REQUIRE_EQ(plan_joiners(&c2, 0, joins), 0);
	REQUIRE_EQ(plan_joiners(&c2, 1, joins), 1);
	REQUIRE_EQ(joins[0], 2);
	REQUIRE_EQ(c2.after.tier[1].kind, TIER_RAID5);
	REQUIRE_EQ(c2.after.tier[1].md_level, 5);
	REQUIRE_EQ(c2.after.tier[1].chunk, PLAN_TAKEOVER_CHUNK);
	REQUIRE_EQ(c2.after.tier[1].nmembers, 3);
	REQUIRE_EQ(c2.after.tier[1].part[2].start, c.after.tier[1].part[0].start);
	REQUIRE_EQ(c2.after.tier[1].part[2].size, c.after.tier[1].part[0].size);
	REQUIRE_EQ(c2.after.tier[1].member_sectors, c.after.tier[1].member_sectors);
	REQUIRE_EQ(c2.after.tier[1].data_offset, c.after.tier[1].data_offset);
	REQUIRE_EQ(c2.after.tier[1].size, 2 * c.after.tier[1].size);
	/* The mirror's gain continues its segment: t1, t2. */
	REQUIRE_EQ(c2.after.nsegs, 2);
	REQUIRE_EQ(c2.after.seg[1].tier, 1);
	REQUIRE_EQ(c2.after.seg[1].len, c2.after.tier[1].size);
	REQUIRE_EQ(c2.after.size, c.after.size + c.after.tier[1].size);
	REQUIRE_EQ(raw_of(&c2.after), total_minus_largest(&c2.after));
	/* Two joiners in one tier: the 1,1,2,2 example's mirror takes both. */
	{
		uint64_t v[4] = { 1, 1, 2, 2 }, w[4] = { 3, 3, 2, 2 };

		make(LEVEL_SHR, 4, v, &p);
		grow_ok(&p, w, &c);
		REQUIRE_EQ(plan_joiners(&c, 1, joins), 2);
		REQUIRE_EQ(joins[0], 0);
		REQUIRE_EQ(joins[1], 1);
		REQUIRE_EQ(plan_joiners(&c, 2, joins), 0);
	}
}
END_TEST

/* Each new tier: above every partition, on exactly the disks reaching its top. */
static void
check_new_tiers(const struct plan_change *c)
{
	const struct plan *a = &c->after;

	for (int t = c->before.ntiers; t < a->ntiers; t++) {
		const struct plan_tier *ti = &a->tier[t];
		uint64_t lo = ti->part[0].start - PLAN_HEAD, hi = lo + ti->part[0].size;
		int reach = 0;

		REQUIRE_GE(ti->nmembers, 2);
		REQUIRE_EQ(ti->kind, ti->nmembers == 2 ? TIER_RAID1 : TIER_RAID5);
		for (int i = 0; i < a->ndisks; i++)
			reach += plan_disk_area(a->disk[i].size) >= hi;
		REQUIRE_EQ(reach, ti->nmembers);
		for (int u = 0; u < c->before.ntiers; u++)
			REQUIRE_LE(c->before.tier[u].part[0].start - PLAN_HEAD +
			    c->before.tier[u].part[0].size, lo);
	}
}

/*
 * Size mixes of 2-6 disks, their disks replaced by bigger ones one at a
 * time in any order, the volume grown after each: new tiers only where
 * two or more disks reach, raid1 of two and raid5 of more, and the
 * partitions hold total - largest whenever no disk ends inside a band.
 */
START_TEST(shr_replacement_mixes)
{
	struct plan_change c;
	struct plan p;
	uint64_t u[PLAN_MAX_DISKS];
	int n, steps = 0, equal = 0, added = 0;

	for (int life = 0; life < 2000; life++) {
		n = 2 + rng() % 5;
		for (int i = 0; i < n; i++)
			u[i] = 1 + rng() % 4;
		make(LEVEL_SHR, n, u, &p);
		for (int k = 0; k < n; k++) {
			int i = (int)((k + life) % n);

			u[i] += 1 + rng() % 3;
			if (grow_step(&p, u, n, &c) == -1)
				continue;
			check_kept(&c);
			check_new_tiers(&c);
			added += c.after.ntiers > c.before.ntiers;
			p = c.after;
			steps++;
			REQUIRE_LE(raw_of(&p), total_minus_largest(&p));
			if (!stuck_inside(&p)) {
				REQUIRE_EQ(raw_of(&p), total_minus_largest(&p));
				equal++;
			}
		}
	}
	REQUIRE_GE(equal, steps / 2);
	REQUIRE_GE(added, steps / 4);
}
END_TEST

/* The first joiner of c's lowest joined tier and the tiers it joins; -1 if none. */
static int
first_join(const struct plan_change *c, unsigned *tiers)
{
	int disks[PLAN_MAX_DISKS], m = -1, n;

	*tiers = 0;
	for (int t = 0; t < c->before.ntiers && m < 0; t++)
		if (plan_joiners(c, t, disks) > 0)
			m = disks[0];
	for (int t = 0; m >= 0 && t < c->before.ntiers; t++) {
		n = plan_joiners(c, t, disks);
		for (int i = 0; i < n; i++)
			if (disks[i] == m)
				*tiers |= 1U << t;
	}
	return m;
}

/*
 * plan_grow_join (Decision 133): through random SHR lives whose disks
 * are swapped for bigger ones, several at a time, each grow done as
 * volume.grow does it: while plan_grow has rooms join old tiers, the
 * first joiner's join alone (one new member in exactly the tiers it
 * joins, a raid1 of two taken over, no tier grown in place or new, the
 * bands kept), then what is left.  A join's plan is the same with every
 * disk bigger still (add_join_replan plans from the sizes the labels
 * record), and the chain ends at the size plan_grow gave at once.
 */
START_TEST(shr_joins_one_at_a_time)
{
	struct plan_change full, one, more;
	struct plan p;
	uint64_t u[PLAN_MAX_DISKS], sizes[PLAN_MAX_DISKS], bigger[PLAN_MAX_DISKS], want;
	int n, m, disks[PLAN_MAX_DISKS], chains = 0, twos = 0, k;
	unsigned tiers;

	for (int life = 0; life < 1500; life++) {
		n = 2 + rng() % 5;
		for (int i = 0; i < n; i++)
			u[i] = 1 + rng() % 3;
		make(LEVEL_SHR, n, u, &p);
		for (int step = 0; step < 3; step++) {
			for (int i = 0; i < n; i++)
				if (rng() % 2)
					u[i] += 1 + rng() % 2;
			for (int i = 0; i < n; i++) {
				sizes[i] = disk_of(u[i]);
				bigger[i] = disk_of(u[i] + 5);
			}
			if (plan_grow(&p, sizes, &full, err, sizeof(err)) == -1) {
				for (int i = 0; i < n; i++)
					p.disk[i].size = sizes[i];
				continue;
			}
			want = full.after.size;
			for (k = 0; (m = first_join(&full, &tiers)) >= 0; k++) {
				REQUIRE_LT(k, n);
				if (plan_grow_join(&p, sizes, m, tiers, &one, err, sizeof(err)) == -1)
					ck_abort_msg("plan_grow_join: %s", err);
				check_kept(&one);
				REQUIRE_EQ(one.after.ntiers, p.ntiers);
				for (int t = 0; t < p.ntiers; t++) {
					if (!(tiers & (1U << t))) {
						REQUIRE_EQ(one.what[t], 0);
						continue;
					}
					REQUIRE_EQ(one.what[t] & ~PLAN_CH_LEVEL, PLAN_CH_MEMBERS);
					REQUIRE_EQ(plan_joiners(&one, t, disks), 1);
					REQUIRE_EQ(disks[0], m);
				}
				if (plan_grow_join(&p, bigger, m, tiers, &more, err, sizeof(err)) == -1)
					ck_abort_msg("plan_grow_join, bigger disks: %s", err);
				REQUIRE_EQ(more.after.size, one.after.size);
				REQUIRE_EQ(memcmp(more.after.tier, one.after.tier, sizeof(one.after.tier)), 0);
				REQUIRE_EQ(memcmp(more.after.seg, one.after.seg, sizeof(one.after.seg)), 0);
				p = one.after;
				if (plan_grow(&p, sizes, &full, err, sizeof(err)) == -1) {
					REQUIRE(strstr(err, "nothing to grow"));
					break;
				}
			}
			/* what no join does: a grow's (new tiers, a tier in place) */
			if (m < 0)
				p = full.after;
			REQUIRE_EQ(p.size, want);
			twos += k >= 2;
			chains += k >= 1;
		}
	}
	REQUIRE_GE(chains, 1000);
	REQUIRE_GE(twos, 300);
}
END_TEST

/* Every level, random sizes: grow never moves data and cuts uniform tiers to the smallest. */
START_TEST(every_level_grow)
{
	static const int min[LEVEL_COUNT] = { 1, 1, 2, 2, 3, 4, 1 };
	struct plan_change c;
	struct plan p;
	uint64_t u[PLAN_MAX_DISKS], sizes[PLAN_MAX_DISKS], m;

	for (int iter = 0; iter < 2000; iter++) {
		for (int l = 0; l < LEVEL_COUNT; l++) {
			int n = min[l] + (l == LEVEL_SINGLE ? 0 : (int)(rng() % (9 - min[l])));

			if (l == LEVEL_RAID10)
				n &= ~1;
			for (int i = 0; i < n; i++)
				u[i] = 1 + rng() % 6;
			make(l, n, u, &p);
			m = UINT64_MAX;
			for (int i = 0; i < n; i++) {
				sizes[i] = disk_of(u[i] + rng() % 3);
				if (plan_disk_area(sizes[i]) < m)
					m = plan_disk_area(sizes[i]);
			}
			if (plan_grow(&p, sizes, &c, err, sizeof(err)) == -1) {
				REQUIRE(strstr(err, "nothing to grow") || l == LEVEL_RAID0);
				continue;
			}
			REQUIRE(l != LEVEL_RAID0);
			check_kept(&c);
			if (l == LEVEL_RAID1 || l == LEVEL_RAID5 || l == LEVEL_RAID10)
				REQUIRE_EQ(c.after.tier[0].part[0].size, m);
			if (l == LEVEL_JBOD || l == LEVEL_SINGLE) {
				uint64_t sum = 0;

				for (int i = 0; i < n; i++)
					sum += plan_disk_area(sizes[i]);
				REQUIRE_EQ(c.after.size, sum);
			}
		}
	}
}
END_TEST

static Suite *
grow_suite(void)
{
	Suite *s = suite_create("raidd-plan-grow");
	TCase *tc = tcase_create("grow");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, grow_uniform);
	tcase_add_test(tc, grow_jbod_single);
	tcase_add_test(tc, grow_shr_example);
	tcase_add_test(tc, add_disk_levels);
	tcase_add_test(tc, hostile_layout);
	tcase_add_test(tc, shr_random_lives);
	tcase_add_test(tc, shr_replacements_add_tier);
	tcase_add_test(tc, shr_swaps_join_mirror);
	tcase_add_test(tc, shr_joins_one_at_a_time);
	tcase_add_test(tc, shr_replacement_mixes);
	tcase_add_test(tc, every_level_grow);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(grow_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
