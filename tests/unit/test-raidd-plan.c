/* Unit tests for raidd/plan.c: capacity rules, layout invariants, refusals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "require.h"
#include "raidd/plan.h"

#define TB	1000000000000ULL

static struct plan_disk disks[PLAN_MAX_DISKS + 2];
static char err[PLAN_ERRLEN];

static void
set_disks(int n, const uint64_t *sizes)
{
	int i;

	memset(disks, 0, sizeof(disks));
	for (i = 0; i < n; i++) {
		snprintf(disks[i].id, sizeof(disks[i].id), "bay%d", i + 1);
		disks[i].size = sizes[i];
	}
}

/* Deterministic, so a failure can be replayed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
	return xorshift(&rng_state);
}

static uint64_t
area_of(int i)
{
	return plan_disk_area(disks[i].size);
}

START_TEST(level_names)
{
	enum vol_level l;
	int i;

	for (i = 0; i < LEVEL_COUNT; i++) {
		ck_assert_int_eq(plan_level_parse(plan_level_name(i), &l), 0);
		ck_assert_int_eq(l, i);
	}
	ck_assert_int_eq(plan_level_parse("raid6", &l), -1);
	ck_assert_int_eq(plan_level_parse("", &l), -1);
	ck_assert_str_eq(plan_level_name(LEVEL_COUNT), "unknown");
	ck_assert_str_eq(plan_tier_kind_name(TIER_RAID10), "raid10");
}
END_TEST

START_TEST(disk_area)
{
	/* Exactly N MiB: the backup GPT pushes the end down one MiB. */
	ck_assert_uint_eq(plan_disk_area(1024 * MIB), 1022 * MIB);
	/* Enough slack past the last MiB for the backup GPT. */
	ck_assert_uint_eq(plan_disk_area(1024 * MIB + 40 * 1024), 1023 * MIB);
	ck_assert_uint_eq(plan_disk_area(1024 * MIB + 32 * 1024), 1023 * MIB);
	ck_assert_uint_eq(plan_disk_area(1024 * MIB + 32 * 1024 - 1),
	    1022 * MIB);
	ck_assert_uint_eq(plan_disk_area(0), 0);
	ck_assert_uint_eq(plan_disk_area(MIB), 0);
	ck_assert_uint_eq(plan_disk_area(2 * MIB), 0);
	ck_assert_uint_eq(plan_disk_area(2 * MIB + 32 * 1024), MIB);
}
END_TEST

START_TEST(data_offset)
{
	/* Values Debian's mdadm shows as "Data Offset" for such members. */
	ck_assert_uint_eq(plan_data_offset(2ULL << 31, 0), 264192);	/* 1 TiB */
	ck_assert_uint_eq(plan_data_offset(4 * TB / 512, 1024), 264192);
	/* Small members: headroom shrinks to ~0.1%, 1 MiB at least... */
	ck_assert_uint_eq(plan_data_offset(64 * MIB / 512, 0), 2048);
	/* ... but striped levels keep 4 chunks of headroom. */
	ck_assert_uint_eq(plan_data_offset(64 * MIB / 512, 1024), 4096);
	/* 16 GiB: headroom 16 MiB + 64 KiB bitmap + 12 KiB -> 17 MiB. */
	ck_assert_uint_eq(plan_data_offset(16 * GIB / 512, 0), 34816);
	/* Always whole MiB. */
	ck_assert_uint_eq(plan_data_offset(123456789, 1024) % 2048, 0);
}
END_TEST

/* Invariants every plan must hold, whatever the level. */
static void
check_layout(const struct plan *p)
{
	uint64_t off = 0, s, e, s2, e2;
	int t, m, t2, m2;

	REQUIRE_GE(p->ntiers, 1);
	REQUIRE_LE(p->ntiers, PLAN_MAX_TIERS);
	for (t = 0; t < p->ntiers; t++) {
		const struct plan_tier *ti = &p->tier[t];

		REQUIRE_GE(ti->nmembers, 1);
		REQUIRE_EQ(ti->offset, off);
		off += ti->size;
		REQUIRE_GT(ti->size, 0);
		for (m = 0; m < ti->nmembers; m++) {
			const struct plan_part *pp = &ti->part[m];

			REQUIRE_GE(pp->disk, 0);
			REQUIRE_LT(pp->disk, p->ndisks);
			REQUIRE_EQ(pp->start % PLAN_ALIGN, 0);
			REQUIRE_EQ(pp->size % PLAN_ALIGN, 0);
			REQUIRE_GE(pp->start, PLAN_HEAD);
			REQUIRE_LE(pp->start + pp->size,
			    p->disk[pp->disk].size - PLAN_TAIL);
			for (m2 = 0; m2 < m; m2++)
				REQUIRE_NE(ti->part[m2].disk, pp->disk);
			if (ti->kind != TIER_NONE)
				REQUIRE_LE((ti->data_offset +
				    ti->member_sectors) * 512, pp->size);
		}
		if (ti->kind != TIER_NONE) {
			REQUIRE_GT(ti->member_sectors, 0);
			REQUIRE_EQ(ti->member_sectors % 2048, 0);
			REQUIRE_LE(ti->data_offset * 512, 130 * MIB);
		}
	}
	REQUIRE_EQ(p->size, off);
	/* No two partitions on one disk overlap. */
	for (t = 0; t < p->ntiers; t++)
		for (m = 0; m < p->tier[t].nmembers; m++)
			for (t2 = 0; t2 < t; t2++)
				for (m2 = 0; m2 < p->tier[t2].nmembers; m2++) {
					if (p->tier[t].part[m].disk !=
					    p->tier[t2].part[m2].disk)
						continue;
					s = p->tier[t].part[m].start;
					e = s + p->tier[t].part[m].size;
					s2 = p->tier[t2].part[m2].start;
					e2 = s2 + p->tier[t2].part[m2].size;
					REQUIRE(e <= s2 || e2 <= s);
				}
}

/* Each md level's usable size, from its member size. */
static void
check_capacity(const struct plan_tier *t)
{
	uint64_t m = t->member_sectors * 512;

	switch (t->kind) {
	case TIER_NONE:
		REQUIRE_EQ(t->nmembers, 1);
		REQUIRE_EQ(t->size, t->part[0].size);
		REQUIRE_EQ(t->md_level, -1);
		break;
	case TIER_RAID0:
		REQUIRE_EQ(t->size, m * t->nmembers);
		REQUIRE_EQ(t->md_level, 0);
		break;
	case TIER_RAID1:
		REQUIRE_EQ(t->size, m);
		REQUIRE_EQ(t->md_level, 1);
		REQUIRE_EQ(t->redundant, t->nmembers >= 2);
		break;
	case TIER_RAID5:
		REQUIRE_GE(t->nmembers, 3);
		REQUIRE_EQ(t->size, m * (t->nmembers - 1));
		REQUIRE_EQ(t->md_level, 5);
		REQUIRE_EQ(t->layout, 2);
		break;
	case TIER_RAID10:
		REQUIRE_EQ(t->nmembers % 2, 0);
		REQUIRE_EQ(t->size, m * t->nmembers / 2);
		REQUIRE_EQ(t->md_level, 10);
		REQUIRE_EQ(t->layout, 0x102);
		break;
	default:
		ck_abort_msg("bad tier kind %d", t->kind);
	}
	if (t->kind == TIER_RAID0 || t->kind == TIER_RAID5 ||
	    t->kind == TIER_RAID10)
		REQUIRE_EQ(t->chunk, 1024);
	else
		REQUIRE_EQ(t->chunk, 0);
	if (t->kind != TIER_NONE)
		REQUIRE_EQ(t->data_offset,
		    plan_data_offset(t->part[0].size / 512, t->chunk));
}

static void
make_ok(enum vol_level l, int n, struct plan *p)
{
	int t;

	if (plan_make(l, disks, n, p, err, sizeof(err)) != 0)
		ck_abort_msg("%s on %d disks refused: %s", plan_level_name(l),
		    n, err);
	check_layout(p);
	for (t = 0; t < p->ntiers; t++)
		check_capacity(&p->tier[t]);
}

START_TEST(uniform_levels)
{
	static const struct { enum vol_level l; int n; enum tier_kind k;
	    int data; } c[] = {
		{ LEVEL_RAID0, 2, TIER_RAID0, 2 }, { LEVEL_RAID0, 5, TIER_RAID0, 5 },
		{ LEVEL_RAID1, 2, TIER_RAID1, 1 }, { LEVEL_RAID1, 3, TIER_RAID1, 1 },
		{ LEVEL_RAID5, 3, TIER_RAID5, 2 }, { LEVEL_RAID5, 8, TIER_RAID5, 7 },
		{ LEVEL_RAID10, 4, TIER_RAID10, 2 },
		{ LEVEL_RAID10, 8, TIER_RAID10, 4 },
	};
	uint64_t sizes[8], min, a;
	struct plan p;
	size_t i;
	int d;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		/* Mixed sizes: every member is cut to the smallest. */
		for (d = 0; d < c[i].n; d++)
			sizes[d] = (2 + d % 3) * TB;
		set_disks(c[i].n, sizes);
		make_ok(c[i].l, c[i].n, &p);
		ck_assert_int_eq(p.ntiers, 1);
		ck_assert_int_eq(p.tier[0].kind, c[i].k);
		ck_assert_int_eq(p.tier[0].nmembers, c[i].n);
		min = plan_disk_area(2 * TB);
		a = 0;
		for (d = 0; d < c[i].n; d++) {
			ck_assert_int_eq(p.tier[0].part[d].disk, d);
			ck_assert_uint_eq(p.tier[0].part[d].start, PLAN_HEAD);
			ck_assert_uint_eq(p.tier[0].part[d].size, min);
			a += area_of(d) - min;
		}
		ck_assert_uint_eq(p.unused, a);
		ck_assert_uint_eq(p.size, (uint64_t)c[i].data *
		    (min - 264192 * 512ULL) / MIB * MIB);
		ck_assert_int_eq(p.redundant, c[i].l != LEVEL_RAID0);
	}
}
END_TEST

START_TEST(single_and_jbod)
{
	uint64_t sizes[3] = { 3 * TB, 1 * TB, 2 * TB };
	struct plan p;
	int i;

	set_disks(1, sizes);
	make_ok(LEVEL_SINGLE, 1, &p);
	ck_assert_int_eq(p.ntiers, 1);
	ck_assert_int_eq(p.tier[0].kind, TIER_NONE);
	ck_assert_uint_eq(p.size, area_of(0));
	ck_assert_int_eq(p.redundant, 0);
	ck_assert_ptr_nonnull(p.note);

	set_disks(3, sizes);
	make_ok(LEVEL_JBOD, 3, &p);
	ck_assert_int_eq(p.ntiers, 3);
	for (i = 0; i < 3; i++) {
		/* Joined in the order given, each disk whole. */
		ck_assert_int_eq(p.tier[i].part[0].disk, i);
		ck_assert_uint_eq(p.tier[i].size, area_of(i));
	}
	ck_assert_uint_eq(p.size, area_of(0) + area_of(1) + area_of(2));
	ck_assert_uint_eq(p.unused, 0);
	ck_assert_int_eq(p.redundant, 0);
}
END_TEST

START_TEST(shr_examples)
{
	uint64_t sizes[4] = { 2 * TB, 3 * TB, 4 * TB, 4 * TB };
	uint64_t two[2] = { 4 * TB, 3 * TB };
	struct plan p, r5;
	int i;

	/* The reference example: 2+3+4+4 TB gives about 9 TB. */
	set_disks(4, sizes);
	make_ok(LEVEL_SHR, 4, &p);
	ck_assert_int_eq(p.ntiers, 3);
	ck_assert_int_eq(p.tier[0].kind, TIER_RAID5);
	ck_assert_int_eq(p.tier[0].nmembers, 4);
	ck_assert_int_eq(p.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(p.tier[1].nmembers, 3);
	ck_assert_int_eq(p.tier[2].kind, TIER_RAID1);
	ck_assert_int_eq(p.tier[2].nmembers, 2);
	ck_assert_int_eq(p.tier[2].part[0].disk, 2);
	ck_assert_int_eq(p.tier[2].part[1].disk, 3);
	ck_assert_uint_le(p.size, 9 * TB);
	ck_assert_uint_ge(p.size, 9 * TB - 6 * 130 * MIB);
	ck_assert_int_eq(p.redundant, 1);
	/* The second band starts where the first ends, on each disk. */
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(p.tier[1].part[i].start,
		    PLAN_HEAD + area_of(0));

	/* Two disks: raid1 of the smaller; the rest waits for a third. */
	set_disks(2, two);
	make_ok(LEVEL_SHR, 2, &p);
	ck_assert_int_eq(p.ntiers, 1);
	ck_assert_int_eq(p.tier[0].kind, TIER_RAID1);
	ck_assert_uint_eq(p.tier[0].part[0].size, area_of(1));
	ck_assert_uint_eq(p.unused, area_of(0) - area_of(1));
	ck_assert_ptr_nonnull(p.note);

	/* One disk: a raid1 of one, and the caller is told. */
	make_ok(LEVEL_SHR, 1, &p);
	ck_assert_int_eq(p.ntiers, 1);
	ck_assert_int_eq(p.tier[0].kind, TIER_RAID1);
	ck_assert_int_eq(p.tier[0].nmembers, 1);
	ck_assert_int_eq(p.redundant, 0);
	ck_assert_ptr_nonnull(p.note);
	ck_assert_ptr_nonnull(strstr(p.note, "redundancy"));

	/* Equal disks: shr is exactly raid5. */
	sizes[0] = sizes[1] = sizes[2] = sizes[3] = 3 * TB;
	set_disks(4, sizes);
	make_ok(LEVEL_SHR, 4, &p);
	make_ok(LEVEL_RAID5, 4, &r5);
	ck_assert_int_eq(p.ntiers, 1);
	ck_assert_uint_eq(p.size, r5.size);
}
END_TEST

START_TEST(shr_tiny_band_skipped)
{
	/* Disks a few MiB apart: no tier of a few MiB. */
	uint64_t sizes[4] = { 1 * TB, 1 * TB + 10 * MIB, 2 * TB, 2 * TB };
	struct plan p;

	set_disks(4, sizes);
	make_ok(LEVEL_SHR, 4, &p);
	ck_assert_int_eq(p.ntiers, 2);
	ck_assert_int_eq(p.tier[0].kind, TIER_RAID5);
	ck_assert_int_eq(p.tier[1].kind, TIER_RAID1);
	/* The raid1 band starts above the skipped one. */
	ck_assert_int_eq(p.tier[1].part[0].disk, 2);
	ck_assert_uint_eq(p.tier[1].part[0].start, PLAN_HEAD + area_of(1));
	ck_assert_uint_eq(p.tier[1].part[0].size, area_of(2) - area_of(1));
	ck_assert_uint_eq(p.unused, 3 * (area_of(1) - area_of(0)));
}
END_TEST

/*
 * Random mixes of 2-8 disks.  SHR: the partitions hold exactly
 * total - largest of the usable areas when no band is tiny; md then
 * costs each tier's (k - 1) x data_offset.
 */
START_TEST(shr_random)
{
	static const uint64_t common[] = { 500, 1000, 2000, 3000, 4000, 8000 };
	uint64_t sizes[8], sum, max, raw, md, a, lo;
	struct plan p;
	int iter, n, i, t, tiny, j;

	for (iter = 0; iter < 20000; iter++) {
		n = 2 + rng() % 7;
		for (i = 0; i < n; i++) {
			if (rng() % 2)
				sizes[i] = common[rng() % 6] * 1000000000ULL;
			else
				sizes[i] = 70 * MIB + rng() % (16 * TB);
		}
		set_disks(n, sizes);
		make_ok(LEVEL_SHR, n, &p);
		sum = max = raw = md = 0;
		for (i = 0; i < n; i++) {
			sum += area_of(i);
			if (area_of(i) > max)
				max = area_of(i);
		}
		for (t = 0; t < p.ntiers; t++) {
			const struct plan_tier *ti = &p.tier[t];

			REQUIRE(ti->kind == TIER_RAID1 || ti->kind == TIER_RAID5);
			REQUIRE_EQ(ti->kind == TIER_RAID1, ti->nmembers == 2);
			raw += (ti->nmembers - 1) * ti->part[0].size;
			md += (ti->nmembers - 1) * (ti->part[0].size -
			    ti->member_sectors * 512);
			/* Bands are stacked from the bottom, in order. */
			if (t > 0)
				REQUIRE_GE(ti->part[0].start,
				    p.tier[t - 1].part[0].start +
				    p.tier[t - 1].part[0].size);
		}
		/* Is any band (between distinct areas) below the threshold? */
		tiny = 0;
		for (i = 0; i < n; i++) {
			a = area_of(i);
			lo = 0;
			for (j = 0; j < n; j++)
				if (area_of(j) < a && area_of(j) > lo)
					lo = area_of(j);
			if (a - lo < PLAN_MIN_BAND)
				tiny = 1;
		}
		REQUIRE_LE(raw, sum - max);
		if (!tiny)
			REQUIRE_EQ(raw, sum - max);
		else
			REQUIRE_LT(sum - max - raw,
			    (uint64_t)(n - 1) * (n - 1) * PLAN_MIN_BAND);
		REQUIRE_EQ(p.size, raw - md);
		REQUIRE_LE(md, (uint64_t)(n - 1) * p.ntiers * 130 * MIB);
		REQUIRE_EQ(p.redundant, 1);
	}
}
END_TEST

START_TEST(every_level_random)
{
	uint64_t sizes[8], min, sum;
	struct plan p;
	int iter, n, i, l;

	for (iter = 0; iter < 5000; iter++) {
		n = 1 + rng() % 8;
		for (i = 0; i < n; i++)
			sizes[i] = 66 * MIB + rng() % (20 * TB);
		set_disks(n, sizes);
		min = UINT64_MAX, sum = 0;
		for (i = 0; i < n; i++) {
			sum += area_of(i);
			if (area_of(i) < min)
				min = area_of(i);
		}
		for (l = 0; l < LEVEL_COUNT; l++) {
			if (n < plan_level_min_disks(l) ||
			    (l == LEVEL_SINGLE && n != 1) ||
			    (l == LEVEL_RAID10 && n % 2)) {
				REQUIRE_EQ(plan_make(l, disks, n, &p, err,
				    sizeof(err)), -1);
				continue;
			}
			make_ok(l, n, &p);
			if (l == LEVEL_JBOD || l == LEVEL_SINGLE)
				REQUIRE_EQ(p.size, sum);
			else if (l != LEVEL_SHR)
				REQUIRE_EQ(p.unused, sum - n * min);
		}
	}
}
END_TEST

static void
refused(enum vol_level l, int n, const char *want)
{
	struct plan p;
	uint64_t size = 1;

	memset(&p, 0xa5, sizeof(p));
	err[0] = '\0';
	ck_assert_int_eq(plan_make(l, disks, n, &p, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		ck_abort_msg("error \"%s\" lacks \"%s\"", err, want);
	ck_assert_int_eq(plan_usable(l, disks, n, &size, err, sizeof(err)), -1);
	ck_assert_uint_eq(size, 1);
}

START_TEST(refusals)
{
	uint64_t sizes[10];
	int i;

	for (i = 0; i < 10; i++)
		sizes[i] = TB;
	set_disks(10, sizes);
	refused(LEVEL_RAID0, 1, "at least 2 disks, got 1");
	refused(LEVEL_RAID1, 1, "at least 2 disks");
	refused(LEVEL_RAID5, 2, "raid5 needs at least 3 disks, got 2");
	refused(LEVEL_RAID10, 3, "at least 4");
	refused(LEVEL_RAID10, 5, "even number");
	refused(LEVEL_SINGLE, 2, "exactly one");
	refused(LEVEL_JBOD, 0, "at least one disk");
	refused(LEVEL_SHR, 9, "at most 8 disks, got 9");
	refused(LEVEL_COUNT, 2, "unknown level");
	refused((enum vol_level)-1, 2, "unknown level");

	strcpy(disks[2].id, "bay1");
	refused(LEVEL_RAID5, 3, "disk bay1 is listed twice");
	strcpy(disks[2].id, "");
	refused(LEVEL_RAID5, 3, "disk 3 has no id");
	memset(disks[2].id, 'x', PLAN_ID_MAX);
	refused(LEVEL_RAID5, 3, "id too long");
	strcpy(disks[2].id, "bay3");

	disks[1].size = 64 * MIB;
	refused(LEVEL_JBOD, 3, "disk bay2 is too small: 62 MiB usable");
	/* The smallest disk that passes. */
	disks[1].size = PLAN_HEAD + PLAN_MIN_AREA + PLAN_TAIL;
	ck_assert_int_eq(plan_make(LEVEL_RAID5, disks, 3, &(struct plan){0},
	    err, sizeof(err)), 0);
	disks[1].size--;
	refused(LEVEL_RAID5, 3, "too small");
}
END_TEST

START_TEST(usable_preview)
{
	uint64_t sizes[4] = { 2 * TB, 3 * TB, 4 * TB, 4 * TB }, size;
	struct plan p;
	int l;

	set_disks(4, sizes);
	for (l = 0; l < LEVEL_COUNT; l++) {
		if (l == LEVEL_SINGLE)
			continue;
		ck_assert_int_eq(plan_usable(l, disks, 4, &size, err,
		    sizeof(err)), 0);
		make_ok(l, 4, &p);
		ck_assert_uint_eq(size, p.size);
	}
}
END_TEST

static Suite *
plan_suite(void)
{
	Suite *s = suite_create("raidd-plan");
	TCase *tc = tcase_create("plan");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, level_names);
	tcase_add_test(tc, disk_area);
	tcase_add_test(tc, data_offset);
	tcase_add_test(tc, uniform_levels);
	tcase_add_test(tc, single_and_jbod);
	tcase_add_test(tc, shr_examples);
	tcase_add_test(tc, shr_tiny_band_skipped);
	tcase_add_test(tc, shr_random);
	tcase_add_test(tc, every_level_random);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, usable_preview);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(plan_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
