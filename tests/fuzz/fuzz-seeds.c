/*
 * Seeds for fuzz-label and fuzz-mdsb, written by raidd's own encoders at
 * build time, so they follow the on-disk format as it changes: the
 * labels of every level and disk position (one generation, then a
 * creating intent in the other slot), and the superblock and bitmap of
 * every member of every md tier.  Each seed starts with the target's
 * mode byte (0: checksums as written; 4 for a label: both slots).
 * For fuzz-netd (mode 0), each bond recorded on the board by netd-nlrec
 * (tests/unit/netd-recorded.h) as one dump: the bond, then its ports.
 * Usage: fuzz-seeds DIR   (writes the files of DIR/label, DIR/mdsb, DIR/netd)
 */
#include <sys/stat.h>

#include <linux/raid/md_p.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raidd/label.h"
#include "raidd/plan-grow.h"
#include "raidd/mdsb.h"
#include "tests/unit/netd-recorded.h"

static const char *dir;

static void
put(const char *sub, const char *name, int mode, const void *a, size_t alen,
    const void *b, size_t blen)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	if ((f = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	if (fputc(mode, f) == EOF || fwrite(a, 1, alen, f) != alen ||
	    (blen && fwrite(b, 1, blen, f) != blen) || fclose(f) == EOF)
		err(1, "%s", path);
}

static void
make_plan(enum vol_level level, int ndisks, struct plan *p)
{
	static const uint64_t sizes[] = { 2 * GIB, 3 * GIB, 4 * GIB, 4 * GIB };
	struct plan_disk d[4];
	char e[PLAN_ERRLEN];

	memset(d, 0, sizeof(d));
	for (int i = 0; i < ndisks; i++) {
		snprintf(d[i].id, sizeof(d[i].id), "bay%d", i + 1);
		d[i].size = sizes[i];
	}
	if (plan_make(level, d, ndisks, p, e, sizeof(e)) != 0)
		errx(1, "plan %s: %s", plan_level_name(level), e);
}

/* Disk pos's label of the volume p plans, as create.c writes it. */
static void
label_at(const struct plan *p, int pos, struct label *l)
{
	static const uint8_t vol_uuid[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };
	struct label_member mem[PLAN_MAX_DISKS];
	uint8_t au[PLAN_MAX_TIERS][16];
	char e[PLAN_ERRLEN];

	memset(mem, 0, sizeof(mem));
	for (int t = 0; t < PLAN_MAX_TIERS; t++)
		memset(au[t], 0xa0 + t, 16);
	for (int i = 0; i < p->ndisks; i++) {
		memset(mem[i].uuid, 0x10 * (i + 1), 16);
		snprintf(mem[i].serial, sizeof(mem[i].serial), "QM%05d", i);
		mem[i].size = p->disk[i].size;
	}
	if (label_from_plan(l, p, pos, "media", vol_uuid,
	    (const uint8_t (*)[16])au, mem, 1700000000, e, sizeof(e)) != 0)
		errx(1, "label: %s", e);
	/* This disk's GPT entries, as create.c records them. */
	for (int t = 0; t < l->ntiers; t++)
		if (l->tier[t].role != LABEL_NO_ROLE) {
			memset(l->tier[t].part_guid, 0x40 + 0x10 * pos + t, 16);
			memcpy(l->tier[t].part_type, LABEL_GPT_TYPE, 16);
		}
}

/* a in slot 0, b in slot 1, each as written (mode 4: both through label_choose). */
static void
put_pair(const char *name, const struct label *a, const struct label *b)
{
	static uint8_t s0[LABEL_SLOT_SIZE], s1[LABEL_SLOT_SIZE];
	char e[PLAN_ERRLEN];

	if (label_encode(a, s0, sizeof(s0), e, sizeof(e)) != 0 ||
	    label_encode(b, s1, sizeof(s1), e, sizeof(e)) != 0)
		errx(1, "label %s: %s", name, e);
	put("label", name, 4, s0, sizeof(s0), s1, sizeof(s1));
}

static void
labels(const char *tag, const struct plan *p)
{
	uint8_t s0[LABEL_SLOT_SIZE], s1[LABEL_SLOT_SIZE];
	char e[PLAN_ERRLEN], name[64];
	struct label l;

	for (int pos = 0; pos < p->ndisks; pos++) {
		label_at(p, pos, &l);
		if (label_encode(&l, s0, sizeof(s0), e, sizeof(e)) != 0)
			errx(1, "label: %s", e);
		/* The other slot: the next generation, a delete begun. */
		l.fs = LABEL_FS_EXT4;
		l.intent.op = LABEL_OP_DELETING;
		l.intent.step = 1;
		l.intent.target = 3;
		if (label_bump(&l, e, sizeof(e)) != 0 ||
		    label_encode(&l, s1, sizeof(s1), e, sizeof(e)) != 0)
			errx(1, "label: %s", e);
		snprintf(name, sizeof(name), "%s-disk%d", tag, pos);
		put("label", name, 0, s0, sizeof(s0), s1, sizeof(s1));
		/* Mode 4: both slots through label_choose. */
		strncat(name, "-pair", sizeof(name) - strlen(name) - 1);
		put("label", name, 4, s0, sizeof(s0), s1, sizeof(s1));
	}
}

/*
 * An SHR join (Decision 133) as another disk's label may claim one:
 * disk 1 takes the last role of the raid1 tier (disks 2 and 3), first
 * begun over the plain label, then rolled back, so that label_same_members
 * meets both.  pos 0's labels serve no joined tier; pos 1's are the
 * joiner's own, its new role, band and GUIDs there (label_drop_joined
 * takes them away again).
 */
static void
shr_join_at(const struct plan *p, int pos, const char *begun, const char *rolled)
{
	struct label plain, join, undone;
	char e[PLAN_ERRLEN];
	int t = p->ntiers - 1;

	label_at(p, pos, &plain);
	join = plain;
	if (pos == 1) {
		struct label_tier *own = &join.tier[t];

		/* its disk swapped for one as big as the tier's (Decision 125) */
		join.member[1].size = p->disk[p->tier[t].part[0].disk].size;
		own->role = join.tier[t].nmembers;
		own->start = p->tier[t].part[0].start;
		own->size = p->tier[t].part[0].size;
		memset(own->part_guid, 0x7a, 16);
		memcpy(own->part_type, LABEL_GPT_TYPE, 16);
	}
	join.tier[t].member[join.tier[t].nmembers++] = 1;
	join.intent.op = LABEL_OP_ADDING;
	join.intent.disk = 1;
	join.intent.covered = (uint8_t)(1U << t);
	join.intent.target = plain.generation + 4;
	undone = join;
	label_drop_joined(&undone);
	if (label_bump(&join, e, sizeof(e)) != 0 || (undone.generation = join.generation,
	    label_bump(&undone, e, sizeof(e))) != 0)
		errx(1, "join label: %s", e);
	/* States raidd takes, or the seeds would only reach the refusals. */
	if (!label_same_members(&plain, &join) || !label_same_members(&join, &undone))
		errx(1, "%s: not taken as the same members", begun);
	put_pair(begun, &plain, &join);
	put_pair(rolled, &join, &undone);
}

static void
shr_join(const struct plan *p)
{
	shr_join_at(p, 0, "shr-join-begun", "shr-join-undone");
	shr_join_at(p, 1, "shr-join-own-begun", "shr-join-own-undone");
}

/* A jbod whose first disk grew: its labels carry a map (version 2). */
static void
grown_jbod(void)
{
	static struct plan_change c;
	uint64_t size[2];
	char e[PLAN_ERRLEN];
	struct plan p;

	make_plan(LEVEL_JBOD, 2, &p);
	size[0] = p.disk[0].size * 2;
	size[1] = p.disk[1].size;
	if (plan_grow(&p, size, &c, e, sizeof(e)) != 0)
		errx(1, "plan_grow: %s", e);
	labels("jbod-grown", &c.after);
}

static void
superblocks(enum vol_level level, const struct plan *p)
{
	static uint8_t sb[MDSB_BLOCK], bm[128 * 1024];
	static const uint8_t set_uuid[16] = { 0x5e, 0x70 };
	struct mdsb_bitmap b;
	struct mdsb m;
	char e[MDSB_ERRLEN], name[64];

	for (int t = 0; t < p->ntiers; t++) {
		if (p->tier[t].kind == TIER_NONE)
			continue;
		for (int r = 0; r < p->tier[t].nmembers; r++) {
			if (mdsb_init_tier(&m, &p->tier[t], r, set_uuid, "media-t1",
			    1700000000, e, sizeof(e)) != 0 ||
			    mdsb_encode(&m, sb, sizeof(sb), e, sizeof(e)) != 0)
				errx(1, "superblock: %s", e);
			snprintf(name, sizeof(name), "%s-t%d-r%d",
			    plan_level_name(level), t + 1, r);
			if (!(m.feature_map & MD_FEATURE_BITMAP_OFFSET)) {
				put("mdsb", name, 0, sb, sizeof(sb), NULL, 0);
				continue;
			}
			if (mdsb_bitmap_init(&b, &m, e, sizeof(e)) != 0 ||
			    mdsb_bitmap_encode(&b, 1, bm, sizeof(bm), e, sizeof(e)) != 0)
				errx(1, "bitmap: %s", e);
			/* The bitmap's superblock and the first bits. */
			put("mdsb", name, 0, sb, sizeof(sb), bm, 2 * MDSB_BITMAP_SB);
		}
	}
}

static void
netd_dumps(void)
{
	static const struct {
		const char *name;
		const unsigned char *bond, *p1, *p2;
		size_t blen, l1, l2;
	} rec[] = {
		{ "aggregated", rec_aggregated_nbond, rec_aggregated_n1, rec_aggregated_n2,
		  sizeof(rec_aggregated_nbond), sizeof(rec_aggregated_n1), sizeof(rec_aggregated_n2) },
		{ "cut", rec_cut_nbond, rec_cut_n1, rec_cut_n2,
		  sizeof(rec_cut_nbond), sizeof(rec_cut_n1), sizeof(rec_cut_n2) },
		{ "twogroups", rec_twogroups_sbond, rec_twogroups_n3, rec_twogroups_n4,
		  sizeof(rec_twogroups_sbond), sizeof(rec_twogroups_n3), sizeof(rec_twogroups_n4) },
		{ "nopartner", rec_nopartner_lbond, rec_nopartner_lan1, rec_nopartner_lan2,
		  sizeof(rec_nopartner_lbond), sizeof(rec_nopartner_lan1), sizeof(rec_nopartner_lan2) },
	};
	char path[512];
	FILE *f;

	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		snprintf(path, sizeof(path), "%s/netd/rec-%s", dir, rec[i].name);
		if ((f = fopen(path, "w")) == NULL)
			err(1, "%s", path);
		/* Mode 0; the messages are 4-byte aligned lengths already. */
		if (fputc(0, f) == EOF || fwrite(rec[i].bond, 1, rec[i].blen, f) != rec[i].blen ||
		    fwrite(rec[i].p1, 1, rec[i].l1, f) != rec[i].l1 ||
		    fwrite(rec[i].p2, 1, rec[i].l2, f) != rec[i].l2 || fclose(f) == EOF)
			err(1, "%s", path);
	}
}

int
main(int argc, char **argv)
{
	static const int ndisks[LEVEL_COUNT] = {
		[LEVEL_SINGLE] = 1, [LEVEL_JBOD] = 2, [LEVEL_RAID0] = 2,
		[LEVEL_RAID1] = 2, [LEVEL_RAID5] = 3, [LEVEL_RAID10] = 4,
		[LEVEL_SHR] = 4,
	};
	char path[512];
	struct plan p;

	if (argc != 2)
		errx(2, "usage: fuzz-seeds DIR");
	dir = argv[1];
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, (const char *[]){ "label", "mdsb",
		    "netd" }[i]);
		if (mkdir(dir, 0755) == -1 && errno != EEXIST)
			err(1, "%s", dir);
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			err(1, "%s", path);
	}
	for (int lv = 0; lv < LEVEL_COUNT; lv++) {
		make_plan((enum vol_level)lv, ndisks[lv], &p);
		labels(plan_level_name((enum vol_level)lv), &p);
		superblocks((enum vol_level)lv, &p);
	}
	grown_jbod();
	make_plan(LEVEL_SHR, 4, &p);
	shr_join(&p);
	netd_dumps();
	return 0;
}
