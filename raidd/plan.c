/*
 * The tier planner.  A volume is one or more tiers joined end to end with
 * dm-linear; a tier is one partition on each of its member disks, bound
 * into an md array (or used bare for single and jbod).  Every level but
 * shr has one tier per volume (jbod: one per disk); shr has one per size
 * band, so disks of mixed sizes lose only the largest disk to redundancy.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

static const char *const level_names[LEVEL_COUNT] = {
	"single", "jbod", "raid0", "raid1", "raid5", "raid10", "shr"
};
static const int level_min[LEVEL_COUNT] = { 1, 1, 2, 2, 3, 4, 1 };
static const char *const kind_names[TIER_KIND_COUNT] = {
	"none", "raid0", "raid1", "raid5", "raid10"
};

const char *
plan_level_name(enum vol_level l)
{
	if ((unsigned)l >= LEVEL_COUNT)
		return "unknown";
	return level_names[l];
}

int
plan_level_parse(const char *s, enum vol_level *l)
{
	int i;

	for (i = 0; i < LEVEL_COUNT; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*l = i;
			return 0;
		}
	}
	return -1;
}

const char *
plan_tier_kind_name(enum tier_kind k)
{
	if ((unsigned)k >= TIER_KIND_COUNT)
		return "unknown";
	return kind_names[k];
}

int
plan_level_min_disks(enum vol_level l)
{
	if ((unsigned)l >= LEVEL_COUNT)
		return -1;
	return level_min[l];
}

/* Bytes of a disk that partitions may use: after PLAN_HEAD, before the
   backup GPT, both ends on PLAN_ALIGN. */
uint64_t
plan_disk_area(uint64_t disk_size)
{
	uint64_t end;

	if (disk_size < PLAN_HEAD + PLAN_TAIL)
		return 0;
	end = (disk_size - PLAN_TAIL) / PLAN_ALIGN * PLAN_ALIGN;
	if (end <= PLAN_HEAD)
		return 0;
	return end - PLAN_HEAD;
}

/* Internal bitmap space mdadm reserves for a member of this size. */
static uint64_t
bitmap_space(uint64_t sectors)
{
	if (sectors < 128)
		return 0;
	if (sectors - 128 >= 200 * GIB / 512)
		return 256;
	if (sectors - 8 > 8 * GIB / 512)
		return 128;
	return 8;
}

/*
 * Sectors before the data on each md member.  The same value mdadm picks
 * by default for a v1.2 member of this size, so stock tools and our
 * arrays agree: 12 KiB (pad, superblock) + bitmap space + reshape headroom
 * of about 0.1% of the member (at most 128 MiB, at least 4 chunks when
 * striped), rounded up to 1 MiB.
 */
uint64_t
plan_data_offset(uint64_t member_sectors, uint32_t chunk)
{
	uint64_t headroom = 128 * MIB / 512, off, one_mib = MIB / 512;

	while (headroom * 1024 > member_sectors &&
	    (chunk == 0 || headroom / 2 >= (uint64_t)chunk * 2))
		headroom /= 2;
	off = 24 + bitmap_space(member_sectors) + headroom;
	return (off + one_mib - 1) / one_mib * one_mib;
}

/* Format an error into the caller's buffer; returns -1 for `return plan_err()`. */
int
plan_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
check_ids(const struct plan_disk *d, int n, char *err, size_t errlen)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (memchr(d[i].id, '\0', PLAN_ID_MAX) == NULL)
			return plan_err(err, errlen, "disk %d: id too long", i + 1);
		if (d[i].id[0] == '\0')
			return plan_err(err, errlen, "disk %d has no id", i + 1);
		for (j = 0; j < i; j++)
			if (strcmp(d[i].id, d[j].id) == 0)
				return plan_err(err, errlen,
				    "disk %s is listed twice", d[i].id);
	}
	return 0;
}

static int
check_input(enum vol_level l, const struct plan_disk *d, int n, char *err,
    size_t errlen)
{
	const char *name = plan_level_name(l);
	uint64_t area;
	int i;

	if ((unsigned)l >= LEVEL_COUNT)
		return plan_err(err, errlen, "unknown level %d", (int)l);
	if (n < 1)
		return plan_err(err, errlen, "%s needs at least one disk", name);
	if (n > PLAN_MAX_DISKS)
		return plan_err(err, errlen, "%s: at most %d disks, got %d", name,
		    PLAN_MAX_DISKS, n);
	if (l == LEVEL_SINGLE && n != 1)
		return plan_err(err, errlen, "%s takes exactly one disk, got %d",
		    name, n);
	if (n < level_min[l])
		return plan_err(err, errlen, "%s needs at least %d disks, got %d",
		    name, level_min[l], n);
	if (l == LEVEL_RAID10 && n % 2 != 0)
		return plan_err(err, errlen,
		    "%s needs an even number of disks, got %d", name, n);
	if (check_ids(d, n, err, errlen) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		area = plan_disk_area(d[i].size);
		if (area < PLAN_MIN_AREA)
			return plan_err(err, errlen, "disk %s is too small: %llu MiB "
			    "usable, at least %llu MiB needed", d[i].id,
			    (unsigned long long)(area / MIB),
			    (unsigned long long)(PLAN_MIN_AREA / MIB));
	}
	return 0;
}

static const int kind_md_level[TIER_KIND_COUNT] = { -1, 0, 1, 5, 10 };

/* Bytes a tier of this kind adds, from the data sectors of each member. */
uint64_t
plan_tier_size(enum tier_kind k, int n, uint64_t member_sectors)
{
	uint64_t b = member_sectors * 512;

	switch (k) {
	case TIER_RAID0:
		return b * n;
	case TIER_RAID1:
		return b;
	case TIER_RAID5:
		return b * (n - 1);
	case TIER_RAID10:
		return b * (n / 2);
	default:
		return 0;
	}
}

/*
 * Append a tier made of disks[0..n-1], each contributing `size` bytes at
 * `start[]`.  The md geometry follows from the partition size alone.
 */
static void
add_tier(struct plan *p, enum tier_kind k, const int *disks, int n,
    const uint64_t *start, uint64_t size)
{
	struct plan_tier *t = &p->tier[p->ntiers];
	uint64_t sectors = size / 512, one_mib = MIB / 512;
	int i;

	memset(t, 0, sizeof(*t));
	t->kind = k;
	t->md_level = kind_md_level[k];
	t->nmembers = n;
	for (i = 0; i < n; i++) {
		t->part[i].disk = disks[i];
		t->part[i].start = start[i];
		t->part[i].size = size;
	}
	if (k == TIER_NONE) {
		t->size = size;
	} else {
		if (k != TIER_RAID1)
			t->chunk = PLAN_CHUNK_SECTORS;
		if (k == TIER_RAID0)
			t->layout = PLAN_LAYOUT_RAID0;
		else if (k == TIER_RAID5)
			t->layout = PLAN_LAYOUT_RAID5;
		else if (k == TIER_RAID10)
			t->layout = PLAN_LAYOUT_RAID10;
		t->data_offset = plan_data_offset(sectors, t->chunk);
		/* Whole MiB, hence whole chunks: no level rounds further. */
		t->member_sectors = (sectors - t->data_offset) / one_mib *
		    one_mib;
		t->size = plan_tier_size(k, n, t->member_sectors);
		t->redundant = (k == TIER_RAID1 && n >= 2) ||
		    k == TIER_RAID5 || k == TIER_RAID10;
	}
	t->offset = p->size;
	p->size += t->size;
	p->ntiers++;
}

static void
plan_one_per_disk(struct plan *p)
{
	uint64_t start = PLAN_HEAD;
	int i;

	for (i = 0; i < p->ndisks; i++)
		add_tier(p, TIER_NONE, &i, 1, &start,
		    plan_disk_area(p->disk[i].size));
}

/* raid0/1/5/10: one tier, every member cut to the smallest disk. */
static void
plan_uniform(struct plan *p, enum tier_kind k)
{
	int disks[PLAN_MAX_DISKS], i;
	uint64_t start[PLAN_MAX_DISKS], min = UINT64_MAX, a;

	for (i = 0; i < p->ndisks; i++) {
		a = plan_disk_area(p->disk[i].size);
		if (a < min)
			min = a;
	}
	for (i = 0; i < p->ndisks; i++) {
		disks[i] = i;
		start[i] = PLAN_HEAD;
		p->unused += plan_disk_area(p->disk[i].size) - min;
	}
	add_tier(p, k, disks, p->ndisks, start, min);
}

/*
 * shr: cut every disk at each distinct disk size.  The band between two
 * consecutive sizes exists on every disk at least that large; a band on
 * k >= 2 disks becomes raid1 (k = 2) or raid5 (k >= 3), giving (k-1) x
 * band.  Summed over the bands that is total - largest.  The top band of
 * a lone largest disk, and bands under PLAN_MIN_BAND, stay unused.
 */
static void
plan_shr(struct plan *p)
{
	uint64_t area[PLAN_MAX_DISKS], start[PLAN_MAX_DISKS], lo = 0, hi;
	int disks[PLAN_MAX_DISKS], i, k;

	for (i = 0; i < p->ndisks; i++)
		area[i] = plan_disk_area(p->disk[i].size);
	if (p->ndisks == 1) {
		/* raid1 of one: a second disk later makes it redundant in
		   place, without moving the data. */
		k = 0;
		start[0] = PLAN_HEAD;
		add_tier(p, TIER_RAID1, &k, 1, start, area[0]);
		return;
	}
	for (;;) {
		hi = UINT64_MAX;
		for (i = 0; i < p->ndisks; i++)
			if (area[i] > lo && area[i] < hi)
				hi = area[i];
		if (hi == UINT64_MAX)
			break;
		k = 0;
		for (i = 0; i < p->ndisks; i++) {
			if (area[i] < hi)
				continue;
			disks[k] = i;
			start[k++] = PLAN_HEAD + lo;
		}
		if (k >= 2 && hi - lo >= PLAN_MIN_BAND)
			add_tier(p, k == 2 ? TIER_RAID1 : TIER_RAID5, disks, k,
			    start, hi - lo);
		else
			p->unused += (hi - lo) * k;
		lo = hi;
	}
}

static const char *
plan_note(const struct plan *p)
{
	if (p->level == LEVEL_SHR && p->ndisks == 1)
		return "one disk: no redundancy until a second disk is added";
	if (!p->redundant)
		return "no redundancy: losing a disk loses the volume";
	if (p->unused >= PLAN_MIN_BAND)
		return "disks of unequal size: part of the larger disks is unused";
	return NULL;
}

int
plan_make(enum vol_level l, const struct plan_disk *d, int n, struct plan *p,
    char *err, size_t errlen)
{
	static const enum tier_kind uniform[LEVEL_COUNT] = {
		[LEVEL_RAID0] = TIER_RAID0, [LEVEL_RAID1] = TIER_RAID1,
		[LEVEL_RAID5] = TIER_RAID5, [LEVEL_RAID10] = TIER_RAID10,
	};
	int i;

	if (check_input(l, d, n, err, errlen) == -1)
		return -1;
	memset(p, 0, sizeof(*p));
	p->level = l;
	p->ndisks = n;
	memcpy(p->disk, d, n * sizeof(*d));
	if (l == LEVEL_SINGLE || l == LEVEL_JBOD)
		plan_one_per_disk(p);
	else if (l == LEVEL_SHR)
		plan_shr(p);
	else
		plan_uniform(p, uniform[l]);
	p->redundant = 1;
	for (i = 0; i < p->ntiers; i++)
		if (!p->tier[i].redundant)
			p->redundant = 0;
	p->note = plan_note(p);
	plan_default_map(p);
	return 0;
}

/* Every tier whole, in tier order: the map of a volume never grown. */
void
plan_default_map(struct plan *p)
{
	int t;

	p->nsegs = p->ntiers;
	for (t = 0; t < p->ntiers; t++) {
		p->seg[t].tier = t;
		p->seg[t].offset = 0;
		p->seg[t].len = p->tier[t].size;
	}
}

int
plan_usable(enum vol_level l, const struct plan_disk *d, int n,
    uint64_t *size, char *err, size_t errlen)
{
	struct plan p;

	if (plan_make(l, d, n, &p, err, errlen) == -1)
		return -1;
	*size = p.size;
	return 0;
}
