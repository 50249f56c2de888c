/*
 * Unit tests for raidd/mdsb.c.  The checksum is recomputed here a second,
 * independent way; tests/host/mdsb-examine.sh has stock mdadm read what
 * "test-raidd-mdsb --image" writes.
 */
#include <check.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test-raidd-le.h"
#include "raidd/plan.h"
#include "raidd/mdsb.h"

#include <linux/raid/md_p.h>

#define SB_CSUM_AT	216
#define TB_BYTES	1000000000000ULL
#define SB_LEN(maxdev)	(256 + 2 * (size_t)(maxdev))

static char err[MDSB_ERRLEN];
static uint8_t blk[MDSB_BLOCK];
static const uint8_t uuid[16] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff
};

/* Byte at a time, carries folded by hand: shares no code with mdsb_csum. */
static uint32_t
csum_bytes(const uint8_t *b, size_t len)
{
	unsigned long long lo = 0, hi;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i >= SB_CSUM_AT && i < SB_CSUM_AT + 4)
			continue;
		if (len % 4 == 2 && i >= len - 2)	/* trailing half word */
			lo += (unsigned long long)b[i] << (8 * (i - (len - 2)));
		else
			lo += (unsigned long long)b[i] << (8 * (i % 4));
	}
	hi = lo / 4294967296ULL;
	return (uint32_t)(lo % 4294967296ULL + hi);
}

static void
reseal(uint8_t *b)
{
	wr32(b, SB_CSUM_AT, csum_bytes(b, SB_LEN(rd32(b, 220))));
}

static void
plan_disks(enum vol_level l, int n, uint64_t size, struct plan *p)
{
	struct plan_disk d[PLAN_MAX_DISKS];
	int i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		snprintf(d[i].id, sizeof(d[i].id), "d%d", i);
		d[i].size = size;
	}
	if (plan_make(l, d, n, p, err, sizeof(err)) != 0)
		ck_abort_msg("plan: %s", err);
}

/* A valid raid5 member superblock in blk; returns it decoded. */
static void
make_raid5(struct mdsb *m)
{
	struct plan p;

	plan_disks(LEVEL_RAID5, 3, 256 * MIB, &p);
	ck_assert_int_eq(mdsb_init_tier(m, &p.tier[0], 1, uuid, "nas:vol1-t0",
	    1700000000, err, sizeof(err)), 0);
	ck_assert_int_eq(mdsb_encode(m, blk, sizeof(blk), err, sizeof(err)), 0);
}

static void
decode_fails(const char *want)
{
	struct mdsb m;

	err[0] = '\0';
	ck_assert_int_eq(mdsb_decode(blk, sizeof(blk), 8, &m, err,
	    sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		ck_abort_msg("error \"%s\" lacks \"%s\"", err, want);
}

START_TEST(csum_matches_independent)
{
	struct mdsb m;
	size_t len;
	int i;

	make_raid5(&m);
	ck_assert_uint_eq(rd32(blk, SB_CSUM_AT), csum_bytes(blk, SB_LEN(128)));
	/* Fixture: this exact superblock, checked "correct" by mdadm 4.2. */
	ck_assert_uint_eq(rd32(blk, SB_CSUM_AT), 0x46152849);
	/* Random buffers and lengths, odd half-words included. */
	srand(1);
	for (i = 0; i < 2000; i++) {
		for (len = 0; len < 1024; len++)
			blk[len] = rand();
		len = 256 + 2 * (rand() % 385);
		ck_assert_uint_eq(mdsb_csum(blk, len), csum_bytes(blk, len));
	}
	/* All ones: the carries must be folded back in. */
	memset(blk, 0xff, sizeof(blk));
	ck_assert_uint_eq(mdsb_csum(blk, 1024), csum_bytes(blk, 1024));
}
END_TEST

START_TEST(round_trip_every_kind)
{
	static const struct { enum vol_level l; int n; int level; } c[] = {
		{ LEVEL_RAID0, 2, 0 }, { LEVEL_RAID1, 2, 1 }, { LEVEL_RAID5, 4, 5 },
		{ LEVEL_RAID10, 4, 10 }, { LEVEL_SHR, 1, 1 },
	};
	struct mdsb m, d;
	struct plan p;
	size_t i;
	int role, r;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		plan_disks(c[i].l, c[i].n, 2000 * GIB, &p);
		for (role = 0; role < c[i].n; role++) {
			ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], role,
			    uuid, "nas:v-t0", 1700000000, err, sizeof(err)), 0);
			m.device_uuid[0] = role + 1;
			m.events = 42;
			ck_assert_int_eq(mdsb_encode(&m, blk, sizeof(blk), err,
			    sizeof(err)), 0);
			if (mdsb_decode(blk, sizeof(blk), 8, &d, err,
			    sizeof(err)) != 0)
				ck_abort_msg("decode: %s", err);
			ck_assert_mem_eq(&m, &d, sizeof(m));
			ck_assert_int_eq(d.level, c[i].level);
			ck_assert_uint_eq(d.raid_disks, c[i].n);
			ck_assert_uint_eq(d.dev_number, role);
			ck_assert_uint_eq(d.data_offset, p.tier[0].data_offset);
			ck_assert_uint_eq(d.size, p.tier[0].member_sectors);
			ck_assert_uint_eq(d.data_offset + d.data_size,
			    p.tier[0].part[role].size / 512);
			for (r = 0; r < 128; r++)
				ck_assert_uint_eq(d.dev_roles[r],
				    r < c[i].n ? r : 0xffff);
			ck_assert_str_eq(d.set_name, "nas:v-t0");
			/* Bytes after the roles are zero, as mdadm leaves them. */
			for (r = SB_LEN(128); r < MDSB_BLOCK; r++)
				ck_assert_uint_eq(blk[r], 0);
		}
	}
}
END_TEST

START_TEST(level_specifics)
{
	struct mdsb m;
	struct plan p;

	plan_disks(LEVEL_RAID0, 3, 10 * GIB, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 0, uuid, "a", 5, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(m.feature_map, 4096);		/* raid0 layout */
	ck_assert_uint_eq(m.layout, 1);
	ck_assert_uint_eq(m.resync_offset, UINT64_MAX);	/* nothing to sync */
	ck_assert_uint_eq(m.chunksize, 1024);

	plan_disks(LEVEL_RAID10, 4, 10 * GIB, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 3, uuid, "a", 5, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(m.feature_map, 1);		/* bitmap */
	ck_assert_int_eq(m.bitmap_offset, 8);
	ck_assert_uint_eq(m.layout, 0x102);
	ck_assert_uint_eq(m.resync_offset, 0);		/* must resync */

	plan_disks(LEVEL_RAID1, 2, 10 * GIB, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 1, uuid, "a", 5, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(m.chunksize, 0);
	ck_assert_uint_eq(m.layout, 0);
	/* The 40-bit time field. */
	m.ctime = (1ULL << 40) + 7;
	ck_assert_int_eq(mdsb_encode(&m, blk, sizeof(blk), err, sizeof(err)), 0);
	ck_assert_uint_eq(rd32(blk, 64), 7);
	ck_assert_uint_eq(rd32(blk, 68), 0);
}
END_TEST

START_TEST(every_byte_guarded)
{
	struct mdsb m, d;
	size_t i, len;

	make_raid5(&m);
	len = SB_LEN(m.max_dev);
	for (i = 0; i < len; i++) {
		blk[i] ^= 0x5a;
		ck_assert_int_eq(mdsb_decode(blk, sizeof(blk), 8, &d, err,
		    sizeof(err)), -1);
		blk[i] ^= 0x5a;
	}
	/* Past dev_roles[max_dev] nothing is covered, nothing is read. */
	for (i = len; i < MDSB_BLOCK; i += 97) {
		blk[i] ^= 0x5a;
		ck_assert_int_eq(mdsb_decode(blk, sizeof(blk), 8, &d, err,
		    sizeof(err)), 0);
		blk[i] ^= 0x5a;
	}
}
END_TEST

/*
 * Decision 136: a raid1 member's superblock md's takeover never reached
 * takes raid5's level, layout and chunk; every other byte stays, a
 * reshape's fields struct mdsb does not carry too, and the checksum is
 * md's.  A superblock that does not decode is left as it was.
 */
START_TEST(set_level_keeps_every_other_byte)
{
	static uint8_t was[MDSB_BLOCK];
	struct mdsb m, d;
	struct plan p;
	size_t i;

	plan_disks(LEVEL_RAID1, 2, 256 * MIB, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 1, uuid, "nas:r-t0", 1700000000,
	    err, sizeof(err)), 0);
	m.events = 41;
	ck_assert_int_eq(mdsb_encode(&m, blk, sizeof(blk), err, sizeof(err)), 0);
	wr32(blk, offsetof(struct mdp_superblock_1, new_level), 1);
	wr32(blk, offsetof(struct mdp_superblock_1, delta_disks), 7);
	reseal(blk);
	memcpy(was, blk, sizeof(blk));
	ck_assert_msg(mdsb_set_level(blk, sizeof(blk), 8, 5, 2, 128, err, sizeof(err)) == 0,
	    "%s", err);
	for (i = 0; i < sizeof(blk); i++) {
		if (i >= 72 && i < 80)		/* level, layout */
			continue;
		if ((i >= 88 && i < 92) || (i >= SB_CSUM_AT && i < SB_CSUM_AT + 4))
			continue;		/* chunksize, sb_csum */
		ck_assert_msg(blk[i] == was[i], "byte %zu changed", i);
	}
	ck_assert_uint_eq(rd32(blk, SB_CSUM_AT), csum_bytes(blk, SB_LEN(128)));
	ck_assert_msg(mdsb_decode(blk, sizeof(blk), 8, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(d.level, 5);
	ck_assert_uint_eq(d.layout, 2);
	ck_assert_uint_eq(d.chunksize, 128);
	ck_assert_uint_eq(d.events, 41);
	ck_assert_uint_eq(d.raid_disks, 2);

	memcpy(blk, was, sizeof(blk));
	blk[SB_CSUM_AT] ^= 1;
	memcpy(was, blk, sizeof(blk));
	ck_assert_int_eq(mdsb_set_level(blk, sizeof(blk), 8, 5, 2, 128, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "checksum mismatch"));
	ck_assert_mem_eq(blk, was, sizeof(blk));
	blk[SB_CSUM_AT] ^= 1;
	ck_assert_int_eq(mdsb_set_level(blk, sizeof(blk), 8, 3, 2, 128, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown level"));
}
END_TEST

START_TEST(decode_refusals)
{
	struct mdsb m, d;

	make_raid5(&m);
	ck_assert_int_eq(mdsb_decode(blk, 255, 8, &d, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	ck_assert_int_eq(mdsb_decode(blk, SB_LEN(128) - 1, 8, &d, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	ck_assert_int_eq(mdsb_decode(blk, SB_LEN(128), 8, &d, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(mdsb_decode(blk, sizeof(blk), 0, &d, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "belongs at 8"));

	blk[SB_CSUM_AT] ^= 1;
	decode_fails("checksum mismatch");
	make_raid5(&m);
	wr32(blk, 0, 0xa92b4efd);
	decode_fails("no md superblock");
	memset(blk, 0, sizeof(blk));
	decode_fails("no md superblock");

	/* Each of these is resealed so only the named check can catch it. */
	make_raid5(&m);
	wr32(blk, 4, 2), reseal(blk);
	decode_fails("major version 2");
	make_raid5(&m);
	wr32(blk, 220, 1921);		/* caught before the checksum */
	decode_fails("max_dev 1921");
	make_raid5(&m);
	wr32(blk, 8, 1 << 20), reseal(blk);
	decode_fails("unknown feature bits");
	make_raid5(&m);
	blk[12] = 1, reseal(blk);
	decode_fails("reserved");
	make_raid5(&m);
	blk[255] = 1, reseal(blk);
	decode_fails("reserved");
	make_raid5(&m);
	wr32(blk, 72, 3), reseal(blk);
	decode_fails("unknown md level 3");
	make_raid5(&m);
	wr32(blk, 92, 0), reseal(blk);
	decode_fails("raid_disks");
	make_raid5(&m);
	wr32(blk, 128, 4), reseal(blk);			/* data_offset 4 */
	decode_fails("overlaps the superblock");
	make_raid5(&m);
	wr32(blk, 84, 1), reseal(blk);			/* size >= 2^32 */
	decode_fails("beyond data size");
	make_raid5(&m);
	wr32(blk, 96, 0), reseal(blk);
	decode_fails("bitmap flagged at offset 0");
}
END_TEST

START_TEST(encode_refusals)
{
	struct mdsb m, good;
	struct plan p;

	make_raid5(&good);
#define BAD(stmt, want) do {						\
	m = good;							\
	stmt;								\
	ck_assert_int_eq(mdsb_encode(&m, blk, sizeof(blk), err,	\
	    sizeof(err)), -1);						\
	ck_assert_ptr_nonnull(strstr(err, want));			\
} while (0)
	BAD(memset(m.set_name, 'x', 32), "longer than 31");
	BAD(m.level = 6, "not one raidd creates");
	BAD(m.raid_disks = 0, "raid_disks 0");
	BAD(m.raid_disks = 129, "raid_disks 129");
	BAD(m.dev_number = 128, "dev_number 128");
	BAD(m.chunksize = 1000, "power of two");
	BAD(m.chunksize = 4, "power of two");
	BAD(m.feature_map |= 4, "not written by raidd");	/* reshape */
	BAD(m.super_offset = 0, "sector 8");
	BAD(m.data_offset = 8, "overlaps");
	BAD(m.size = m.data_size + 1, "not within");
	BAD(m.size = 0, "not within");
	BAD(m.data_offset = 16, "no room for a bitmap");
	BAD(m.max_dev = 0, "max_dev 0");
#undef BAD
	ck_assert_int_eq(mdsb_encode(&good, blk, MDSB_BLOCK - 1, err,
	    sizeof(err)), -1);

	plan_disks(LEVEL_JBOD, 2, GIB, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 0, uuid, "a", 0, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no md array"));
	plan_disks(LEVEL_RAID1, 2, GIB, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 2, uuid, "a", 0, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], -1, uuid, "a", 0, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 0, uuid,
	    "nas:a-very-long-volume-name-t0xx", 0, err, sizeof(err)), -1);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 0, uuid,
	    "nas:a-very-long-volume-name-t0x", 0, err, sizeof(err)), 0);
}
END_TEST

START_TEST(bitmap_round_trip)
{
	static uint8_t bb[128 * 1024];
	struct mdsb_bitmap bm, d;
	struct mdsb m;
	struct plan p;
	size_t n, i;

	plan_disks(LEVEL_RAID1, 2, 4 * TB_BYTES, &p);
	ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 0, uuid, "a", 0, err,
	    sizeof(err)), 0);
	m.events = 9;
	ck_assert_int_eq(mdsb_bitmap_init(&bm, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(bm.chunksize, 64 << 20);
	ck_assert_uint_eq(bm.sync_size, m.size);
	ck_assert_uint_eq(bm.events, 9);
	ck_assert_mem_eq(bm.uuid, uuid, 16);
	/* One bit per started 64 MiB, after 256 bytes, in whole 4 KiB. */
	n = 256 + ((m.size * 512 + (64 << 20) - 1) / (64 << 20) + 7) / 8;
	ck_assert_uint_eq(mdsb_bitmap_bytes(&bm), (n + 4095) / 4096 * 4096);
	n = mdsb_bitmap_bytes(&bm);
	/* It fits between the bitmap offset and the data. */
	ck_assert_uint_le(8 + 8 + n / 512, m.data_offset);

	memset(bb, 0x33, sizeof(bb));
	ck_assert_int_eq(mdsb_bitmap_encode(&bm, 1, bb, sizeof(bb), err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(rd32(bb, 0), 0x6d746962);
	ck_assert_uint_eq(rd32(bb, 4), 4);
	for (i = 256; i < n; i++)
		ck_assert_uint_eq(bb[i], 0xff);
	ck_assert_uint_eq(bb[n], 0x33);		/* nothing past its size */
	ck_assert_int_eq(mdsb_bitmap_decode(bb, n, &d, err, sizeof(err)), 0);
	ck_assert_mem_eq(&bm, &d, sizeof(bm));
	ck_assert_int_eq(mdsb_bitmap_encode(&bm, 0, bb, sizeof(bb), err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(bb[256], 0);
	ck_assert_int_eq(mdsb_bitmap_encode(&bm, 0, bb, n - 1, err,
	    sizeof(err)), -1);

	/* A member too large for 4 KiB of 64 MiB bits: bigger chunks. */
	m.data_offset = 24;
	m.size = 1ULL << 36;				/* 32 TiB */
	ck_assert_int_eq(mdsb_bitmap_init(&bm, &m, err, sizeof(err)), 0);
	ck_assert_uint_gt(bm.chunksize, 64 << 20);
	ck_assert_uint_le(mdsb_bitmap_bytes(&bm), 4096);
	ck_assert_uint_gt(mdsb_bitmap_bytes(&(struct mdsb_bitmap){
	    .sync_size = bm.sync_size, .chunksize = bm.chunksize / 2 }), 4096);

	m.data_offset = 16 + 7;				/* not even 4 KiB */
	ck_assert_int_eq(mdsb_bitmap_init(&bm, &m, err, sizeof(err)), -1);
	m.feature_map = 0;
	ck_assert_int_eq(mdsb_bitmap_init(&bm, &m, err, sizeof(err)), -1);
}
END_TEST

/*
 * The bitmap covers what md resyncs: a member for raid1 and raid5, the
 * whole array for raid10 (mdadm's Create: size * raid_disks / copies).
 * Sized for one member, a raid10 bitmap over 2 TB members left the
 * second half of the array's bits clear: never resynced.
 */
/* A foreign raid10 superblock's fields may multiply past 64 bits: the
   product saturates instead of wrapping to a small array (fuzz-mdsb). */
START_TEST(sync_sectors_saturate)
{
	struct mdsb m = { .level = 10, .layout = 0x102, .chunksize = 1024,
	    .raid_disks = 1U << 30, .size = 1ULL << 62 };

	ck_assert_uint_eq(mdsb_sync_sectors(&m), UINT64_MAX);
	m.raid_disks = 4;
	m.size = 1ULL << 20;
	ck_assert_uint_eq(mdsb_sync_sectors(&m), 2ULL << 20);
}
END_TEST

START_TEST(bitmap_covers_what_md_resyncs)
{
	static uint8_t bb[128 * 1024];
	static const struct { enum vol_level l; int n; int copies; } c[] = {
		{ LEVEL_RAID1, 2, 0 }, { LEVEL_RAID5, 3, 0 }, { LEVEL_RAID5, 4, 0 },
		{ LEVEL_RAID10, 4, 2 },
	};
	struct mdsb_bitmap bm;
	struct mdsb m;
	struct plan p;
	uint64_t want, bits, b;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		plan_disks(c[i].l, c[i].n, 2 * TB_BYTES, &p);
		ck_assert_int_eq(mdsb_init_tier(&m, &p.tier[0], 0, uuid, "a", 0,
		    err, sizeof(err)), 0);
		ck_assert_int_eq(mdsb_bitmap_init(&bm, &m, err, sizeof(err)), 0);
		want = c[i].copies ? m.size * (uint64_t)c[i].n / c[i].copies : m.size;
		ck_assert_uint_eq(bm.sync_size, want);
		ck_assert_uint_eq(mdsb_sync_sectors(&m), want);
		ck_assert_uint_eq(bm.chunksize, 64 << 20);
		/* Every bit of the covered sectors dirty, so all of it syncs. */
		bits = (want * 512 + bm.chunksize - 1) / bm.chunksize;
		ck_assert_uint_ge(mdsb_bitmap_bytes(&bm), 256 + (bits + 7) / 8);
		ck_assert_int_eq(mdsb_bitmap_encode(&bm, 1, bb, sizeof(bb), err,
		    sizeof(err)), 0);
		for (b = 0; b < bits && (bb[256 + b / 8] & (1 << (b % 8))); b++)
			;
		ck_assert_msg(b == bits, "case %zu: bit %llu of %llu clear", i,
		    (unsigned long long)b, (unsigned long long)bits);
		/* The room before the data holds it. */
		ck_assert_uint_le(16 + mdsb_bitmap_bytes(&bm) / 512, m.data_offset);
	}
}
END_TEST

START_TEST(bitmap_refusals)
{
	static uint8_t bb[4096];
	struct mdsb_bitmap bm, d;
	struct mdsb m;

	make_raid5(&m);
	ck_assert_int_eq(mdsb_bitmap_init(&bm, &m, err, sizeof(err)), 0);
#define BAD(stmt, want) do {						\
	ck_assert_int_eq(mdsb_bitmap_encode(&bm, 1, bb, sizeof(bb), err, \
	    sizeof(err)), 0);						\
	stmt;								\
	ck_assert_int_eq(mdsb_bitmap_decode(bb, sizeof(bb), &d, err,	\
	    sizeof(err)), -1);						\
	ck_assert_ptr_nonnull(strstr(err, want));			\
} while (0)
	BAD(bb[0] ^= 1, "no bitmap");
	BAD(wr32(bb, 4, 5), "version 5");
	BAD(wr32(bb, 4, 2), "version 2");
	BAD(wr32(bb, 52, 3 << 20), "power of two");
	BAD(wr32(bb, 52, 256), "power of two");
	BAD(wr32(bb, 56, 0), "daemon sleep");
#undef BAD
	ck_assert_int_eq(mdsb_bitmap_decode(bb, 255, &d, err, sizeof(err)), -1);
	bm.chunksize = 3;
	ck_assert_int_eq(mdsb_bitmap_encode(&bm, 1, bb, sizeof(bb), err,
	    sizeof(err)), -1);
}
END_TEST

/*
 * --image LEVEL NDISKS DISK_MIB ROLE FILE: write the partition of member
 * ROLE of tier 0 (superblock and bitmap, the rest sparse) and print what
 * mdadm --examine should report, as key=value lines.
 */
static int
write_image(char **av)
{
	static uint8_t bb[128 * 1024];
	struct plan_disk d[PLAN_MAX_DISKS];
	struct mdsb_bitmap bm;
	enum vol_level l;
	struct plan p;
	struct mdsb m;
	int n = atoi(av[1]), role = atoi(av[3]), fd, i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < n && i < PLAN_MAX_DISKS; i++) {
		snprintf(d[i].id, sizeof(d[i].id), "d%d", i);
		d[i].size = strtoull(av[2], NULL, 10) * MIB;
	}
	if (plan_level_parse(av[0], &l) == -1 ||
	    plan_make(l, d, n, &p, err, sizeof(err)) == -1 ||
	    mdsb_init_tier(&m, &p.tier[0], role, uuid, "nas:vol1-t0",
	    1700000000, err, sizeof(err)) == -1 ||
	    mdsb_encode(&m, blk, sizeof(blk), err, sizeof(err)) == -1) {
		fprintf(stderr, "image: %s\n", err);
		return 2;
	}
	if ((fd = open(av[4], O_RDWR | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    ftruncate(fd, p.tier[0].part[role].size) == -1 ||
	    pwrite(fd, blk, sizeof(blk), 4096) != sizeof(blk))
		return 2;
	printf("level=%s\ndevices=%d\ndata_offset=%llu\navail=%llu\n"
	    "used=%llu\narray_kib=%llu\nrole=%d\ncsum=%08x\n",
	    plan_tier_kind_name(p.tier[0].kind), n,
	    (unsigned long long)m.data_offset,
	    (unsigned long long)m.data_size, (unsigned long long)m.size,
	    (unsigned long long)(p.tier[0].size / 1024), role,
	    rd32(blk, SB_CSUM_AT));
	if (m.feature_map & 1) {
		if (mdsb_bitmap_init(&bm, &m, err, sizeof(err)) == -1 ||
		    mdsb_bitmap_encode(&bm, 1, bb, sizeof(bb), err,
		    sizeof(err)) == -1 ||
		    pwrite(fd, bb, mdsb_bitmap_bytes(&bm), 8192) !=
		    (ssize_t)mdsb_bitmap_bytes(&bm))
			return 2;
		printf("bitmap_chunk_mib=%u\n", bm.chunksize >> 20);
	}
	return close(fd) == 0 ? 0 : 2;
}

static Suite *
mdsb_suite(void)
{
	Suite *s = suite_create("raidd-mdsb");
	TCase *tc = tcase_create("mdsb");

	tcase_add_test(tc, csum_matches_independent);
	tcase_add_test(tc, round_trip_every_kind);
	tcase_add_test(tc, level_specifics);
	tcase_add_test(tc, every_byte_guarded);
	tcase_add_test(tc, set_level_keeps_every_other_byte);
	tcase_add_test(tc, decode_refusals);
	tcase_add_test(tc, encode_refusals);
	tcase_add_test(tc, bitmap_round_trip);
	tcase_add_test(tc, bitmap_refusals);
	tcase_add_test(tc, bitmap_covers_what_md_resyncs);
	tcase_add_test(tc, sync_sectors_saturate);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc == 7 && strcmp(argv[1], "--image") == 0)
		return write_image(argv + 2);
	sr = srunner_create(mdsb_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
