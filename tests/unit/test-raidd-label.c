/* Unit tests for raidd/label.c: format, validation, slots and generations. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test-raidd-le.h"
#include "raidd/label.h"
#include "raidd/plan-grow.h"

#define TB	1000000000000ULL

static char err[PLAN_ERRLEN];
static uint8_t s0[LABEL_SLOT_SIZE], s1[LABEL_SLOT_SIZE];
static struct plan plan;
static struct label_member members[PLAN_MAX_DISKS];
static uint8_t array_uuids[PLAN_MAX_TIERS][16];
static const uint8_t vol_uuid[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4,
	5, 6, 7, 8, 9, 10, 11, 12 };

/* Recompute the crc after an edit, so only the semantic checks can object. */
static void
reseal(uint8_t *b)
{
	wr32(b, 16, 0);
	wr32(b, 16, label_crc32c(0, b, LABEL_SLOT_SIZE));
}

/* An SHR volume on 2, 3, 4 and 4 TB: three tiers, disk 0 in only one. */
static void
setup_shr(void)
{
	static const uint64_t sizes[4] = { 2 * TB, 3 * TB, 4 * TB, 4 * TB };
	struct plan_disk d[4];
	int i, j;

	memset(d, 0, sizeof(d));
	memset(members, 0, sizeof(members));
	for (i = 0; i < 4; i++) {
		snprintf(d[i].id, sizeof(d[i].id), "bay%d", i + 1);
		d[i].size = sizes[i];
		for (j = 0; j < 16; j++)
			members[i].uuid[j] = 0x10 * (i + 1) + j;
		snprintf(members[i].serial, sizeof(members[i].serial),
		    "WD-SERIAL%04d", i);
		members[i].size = sizes[i];
	}
	for (i = 0; i < PLAN_MAX_TIERS; i++)
		for (j = 0; j < 16; j++)
			array_uuids[i][j] = 0xa0 + i + j;
	ck_assert_int_eq(plan_make(LEVEL_SHR, d, 4, &plan, err, sizeof(err)), 0);
	ck_assert_int_eq(plan.ntiers, 3);
}

static void
make_label(struct label *l, int pos)
{
	if (label_from_plan(l, &plan, pos, "media", vol_uuid,
	    (const uint8_t (*)[16])array_uuids, members, 1700000000, err,
	    sizeof(err)) != 0)
		ck_abort_msg("label_from_plan: %s", err);
}

static void
encode(const struct label *l, uint8_t *slot)
{
	if (label_encode(l, slot, LABEL_SLOT_SIZE, err, sizeof(err)) != 0)
		ck_abort_msg("label_encode: %s", err);
}

START_TEST(crc32c_vectors)
{
	static const uint8_t zeros[32];
	uint8_t ones[32];

	/* Published check values (RFC 3720 B.4 and the CRC catalogue). */
	ck_assert_uint_eq(label_crc32c(0, "123456789", 9), 0xe3069283);
	ck_assert_uint_eq(label_crc32c(0, zeros, 32), 0x8a9136aa);
	memset(ones, 0xff, sizeof(ones));
	ck_assert_uint_eq(label_crc32c(0, ones, 32), 0x62a8ab43);
	/* Incremental equals one pass. */
	ck_assert_uint_eq(label_crc32c(label_crc32c(0, "1234", 4), "56789", 5),
	    0xe3069283);
}
END_TEST

/* The GPT's crc32 is zlib's (IEEE), not the label's crc32c: its check value. */
START_TEST(gpt_crc32_vector)
{
	ck_assert_uint_eq(gpt_crc32(0, "123456789", 9), 0xcbf43926);
}
END_TEST

START_TEST(round_trip)
{
	struct label l, d;
	int pos;

	setup_shr();
	for (pos = 0; pos < 4; pos++) {
		make_label(&l, pos);
		l.fs = LABEL_FS_BTRFS;
		l.flags = LABEL_F_ENCRYPTED;
		l.intent.op = LABEL_OP_CREATING;
		l.intent.step = 3;
		l.intent.target = 2;
		for (int t = 0; t < l.ntiers; t++)
			if (l.tier[t].role != LABEL_NO_ROLE) {
				memset(l.tier[t].part_guid, 0x30 + t, 16);
				memcpy(l.tier[t].part_type, LABEL_GPT_TYPE, 16);
			}
		encode(&l, s0);
		if (label_decode(s0, sizeof(s0), &d, err, sizeof(err)) != 0)
			ck_abort_msg("decode: %s", err);
		ck_assert_mem_eq(&l, &d, sizeof(l));
	}
	/* Bare partitions (jbod) carry no array uuid. */
	ck_assert_int_eq(plan_make(LEVEL_JBOD, (struct plan_disk[2]){
	    { "a", TB }, { "b", 2 * TB } }, 2, &plan, err, sizeof(err)), 0);
	make_label(&l, 1);
	ck_assert_uint_eq(l.tier[1].role, 0);
	ck_assert_uint_eq(l.tier[0].role, LABEL_NO_ROLE);
	encode(&l, s0);
	ck_assert_int_eq(label_decode(s0, sizeof(s0), &d, err, sizeof(err)), 0);
	ck_assert_mem_eq(&l, &d, sizeof(l));
}
END_TEST

START_TEST(from_plan)
{
	struct label l;
	int t;

	setup_shr();
	make_label(&l, 0);
	ck_assert_uint_eq(l.generation, 1);
	ck_assert_uint_eq(l.ntiers, 3);
	ck_assert_uint_eq(l.ndisks, 4);
	ck_assert_uint_eq(l.size, plan.size);
	ck_assert_int_eq(l.intent.op, LABEL_OP_NONE);
	/* Disk 0 (2 TB) holds only the bottom band. */
	ck_assert_uint_eq(l.tier[0].role, 0);
	ck_assert_uint_eq(l.tier[0].start, PLAN_HEAD);
	ck_assert_uint_eq(l.tier[1].role, LABEL_NO_ROLE);
	ck_assert_uint_eq(l.tier[2].role, LABEL_NO_ROLE);
	ck_assert_uint_eq(l.tier[1].size, 0);
	make_label(&l, 3);
	for (t = 0; t < 3; t++) {
		ck_assert_uint_ne(l.tier[t].role, LABEL_NO_ROLE);
		ck_assert_uint_eq(l.tier[t].member[l.tier[t].role], 3);
		ck_assert_uint_eq(l.tier[t].start,
		    plan.tier[t].part[l.tier[t].role].start);
		ck_assert_mem_eq(l.tier[t].array_uuid, array_uuids[t], 16);
	}
	ck_assert_int_eq(label_from_plan(&l, &plan, 4, "media", vol_uuid,
	    (const uint8_t (*)[16])array_uuids, members, 0, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(label_from_plan(&l, &plan, 0,
	    "0123456789012345678901234567890123456789012345678901234567890123",
	    vol_uuid, (const uint8_t (*)[16])array_uuids, members, 0, err,
	    sizeof(err)), -1);
}
END_TEST

/* The byte offsets docs/on-disk-format.md promises. */
START_TEST(documented_offsets)
{
	struct label l;
	uint32_t crc;

	setup_shr();
	make_label(&l, 2);
	l.generation = 0x0000030405060708ULL;
	l.intent.op = LABEL_OP_REPLACING;
	l.intent.step = 7;
	l.intent.disk = 1;
	l.intent.target = l.generation + 1;
	l.created = 0x1122334455ULL;
	l.failed = 0x05;
	memset(l.unit, 0xab, 16);
	encode(&l, s0);
	ck_assert_mem_eq(s0, "raiddlbl", 8);
	ck_assert_uint_eq(rd32(s0, 8), 1);
	ck_assert_uint_eq(rd32(s0, 12), 4096);
	ck_assert_uint_eq(rd64(s0, 24), l.generation);
	ck_assert_mem_eq(s0 + 32, vol_uuid, 16);
	ck_assert_str_eq((char *)s0 + 48, "media");
	ck_assert_uint_eq(s0[112], LEVEL_SHR);
	ck_assert_uint_eq(s0[115], 4);			/* ndisks */
	ck_assert_uint_eq(s0[116], 2);			/* position */
	ck_assert_uint_eq(s0[117], 3);			/* ntiers */
	ck_assert_uint_eq(rd64(s0, 120), 0x1122334455ULL);
	ck_assert_uint_eq(rd64(s0, 128), plan.size);
	ck_assert_uint_eq(s0[136], LABEL_OP_REPLACING);
	ck_assert_uint_eq(s0[137], 7);
	ck_assert_uint_eq(s0[138], 1);
	ck_assert_uint_eq(rd64(s0, 144), l.generation + 1);
	ck_assert_uint_eq(s0[118], 0x05);		/* failed */
	ck_assert_mem_eq(s0 + 152, l.unit, 16);
	l.intent.op = LABEL_OP_DELETING;
	l.intent.covered = 0x0b;
	encode(&l, s0);
	ck_assert_uint_eq(s0[139], 0x0b);		/* covered */
	/* Member 1 at 256 + 64. */
	ck_assert_mem_eq(s0 + 320, members[1].uuid, 16);
	ck_assert_str_eq((char *)s0 + 336, "WD-SERIAL0001");
	ck_assert_uint_eq(rd64(s0, 376), 3 * TB);
	/* Tier 2 at 768 + 128: raid1 of disks 2 and 3, this disk role 0. */
	ck_assert_uint_eq(s0[896], TIER_RAID1);
	ck_assert_uint_eq(s0[897], 2);
	ck_assert_uint_eq(s0[898], 0);
	ck_assert_uint_eq(rd32(s0, 900), 0);
	ck_assert_uint_eq(s0[904], 2);
	ck_assert_uint_eq(s0[905], 3);
	ck_assert_uint_eq(rd64(s0, 912), plan.tier[2].part[0].start);
	ck_assert_uint_eq(rd64(s0, 920), plan.tier[2].part[0].size);
	ck_assert_uint_eq(rd64(s0, 928), plan.tier[2].size);
	ck_assert_mem_eq(s0 + 936, array_uuids[2], 16);
	/* Tier 2's GPT entry GUIDs at 1280 + 2 * 32: unique, then type. */
	memset(l.tier[2].part_guid, 0x6c, 16);
	memcpy(l.tier[2].part_type, LABEL_GPT_TYPE, 16);
	encode(&l, s0);
	ck_assert_mem_eq(s0 + 1344, l.tier[2].part_guid, 16);
	ck_assert_mem_eq(s0 + 1360, "\x0f\x88\x9d\xa1\xfc\x05\x3b\x4d", 8);
	ck_assert_mem_eq(s0 + 1280, (uint8_t[32]){ 0 }, 32);	/* tier 0: none recorded */
	/* The crc covers the whole slot with its own field as zero. */
	crc = rd32(s0, 16);
	reseal(s0);
	ck_assert_uint_eq(rd32(s0, 16), crc);
}
END_TEST

static void
decode_fails(const uint8_t *slot, size_t len, const char *want)
{
	struct label d;

	err[0] = '\0';
	if (label_decode(slot, len, &d, err, sizeof(err)) != -1)
		ck_abort_msg("decoded, wanted \"%s\"", want);
	if (strstr(err, want) == NULL)
		ck_abort_msg("error \"%s\" lacks \"%s\"", err, want);
}

START_TEST(corruptions)
{
	struct label l;
	size_t i;

	setup_shr();
	make_label(&l, 1);
	encode(&l, s0);
	decode_fails(s0, LABEL_SLOT_SIZE - 1, "truncated");
	decode_fails(s0, 0, "truncated");
	memset(s1, 0, sizeof(s1));
	decode_fails(s1, sizeof(s1), "empty slot");
	memset(s1, 0xff, sizeof(s1));
	decode_fails(s1, sizeof(s1), "no raidd label");
	memcpy(s1, s0, sizeof(s1));
	s1[0] = 'R';
	decode_fails(s1, sizeof(s1), "no raidd label");

	/* Any single flipped bit anywhere in the slot is caught. */
	for (i = 8; i < LABEL_SLOT_SIZE; i++) {
		memcpy(s1, s0, sizeof(s1));
		s1[i] ^= 1 << (i % 8);
		ck_assert_int_eq(label_decode(s1, sizeof(s1), &l, err,
		    sizeof(err)), -1);
	}
	memcpy(s1, s0, sizeof(s1));
	s1[3000] ^= 0x40;
	decode_fails(s1, sizeof(s1), "checksum mismatch");

	memcpy(s1, s0, sizeof(s1));
	wr32(s1, 8, 3), reseal(s1);
	decode_fails(s1, sizeof(s1), "version 3 is newer");
	memcpy(s1, s0, sizeof(s1));
	wr32(s1, 8, 2), reseal(s1);
	decode_fails(s1, sizeof(s1), "version 2 label without a map");
	memcpy(s1, s0, sizeof(s1));
	s1[1536] = 1, reseal(s1);
	decode_fails(s1, sizeof(s1), "version 1 label with a map");
	memcpy(s1, s0, sizeof(s1));
	wr32(s1, 8, 0), reseal(s1);
	decode_fails(s1, sizeof(s1), "impossible version 0");
	memcpy(s1, s0, sizeof(s1));
	wr32(s1, 12, 8192), reseal(s1);
	decode_fails(s1, sizeof(s1), "length 8192");
}
END_TEST

/* A grown volume's map: version 2, round trip, and what a map may not say. */
START_TEST(map_of_segments)
{
	struct label l, d;

	setup_shr();
	make_label(&l, 2);
	encode(&l, s0);
	ck_assert_uint_eq(rd32(s0, 8), 1);	/* no map: still version 1 */
	/* Tier 1's second half after tier 3. */
	l.nsegs = 4;
	l.seg[0] = (struct label_seg){ 0, 0, l.tier[0].tier_size / 2 };
	l.seg[1] = (struct label_seg){ 1, 0, l.tier[1].tier_size };
	l.seg[2] = (struct label_seg){ 2, 0, l.tier[2].tier_size };
	l.seg[3] = (struct label_seg){ 0, l.tier[0].tier_size / 2,
	    l.tier[0].tier_size - l.tier[0].tier_size / 2 };
	/* With this disk's GPT GUIDs (bytes 1280-1535): the map comes after them. */
	memset(l.tier[0].part_guid, 0x6c, 16);
	memcpy(l.tier[0].part_type, LABEL_GPT_TYPE, 16);
	encode(&l, s0);
	ck_assert_uint_eq(rd32(s0, 8), 2);
	ck_assert_mem_eq(s0 + 1280, l.tier[0].part_guid, 16);
	ck_assert_mem_eq(s0 + 1296, LABEL_GPT_TYPE, 16);
	ck_assert_uint_eq(s0[1536], 4);
	ck_assert_uint_eq(s0[1544 + 3 * 24], 0);
	ck_assert_uint_eq(rd64(s0, 1552 + 3 * 24), l.seg[3].offset);
	ck_assert_uint_eq(rd64(s0, 1560 + 3 * 24), l.seg[3].len);
	ck_assert_mem_eq(s0 + 1544 + PLAN_MAX_SEGS * 24, (uint8_t[64]){ 0 }, 64);
	ck_assert_int_eq(label_decode(s0, sizeof(s0), &d, err, sizeof(err)), 0);
	ck_assert_mem_eq(&l, &d, sizeof(l));
	/* A segment that skips bytes, repeats them, or leaves some out. */
	d = l, d.seg[3].offset += 512;
	ck_assert_int_eq(label_encode(&d, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "does not continue"));
	d = l, d.seg[3].len -= 512;
	ck_assert_int_eq(label_encode(&d, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "leaves out"));
	d = l, d.seg[1].tier = 5;
	ck_assert_int_eq(label_encode(&d, s1, sizeof(s1), err, sizeof(err)), -1);
	d = l, d.nsegs = PLAN_MAX_SEGS + 1;
	ck_assert_int_eq(label_encode(&d, s1, sizeof(s1), err, sizeof(err)), -1);
	/* On disk too: a resealed slot with a bad segment is refused. */
	memcpy(s1, s0, sizeof(s1));
	s1[1544 + 24 + 8] = 1, reseal(s1);
	decode_fails(s1, sizeof(s1), "does not continue");
}
END_TEST

/* Resealed edits that only the semantic checks can catch. */
START_TEST(impossible_contents)
{
	enum { SET, ADD, FILL, ZERO, COPY8 };
	static const struct {
		size_t off; int how; unsigned val; const char *want;
	} c[] = {
		{ 24, ZERO, 8, "generation 0" },
		{ 48, SET, 0, "name empty" },
		{ 112, SET, LEVEL_COUNT, "unknown level" },
		{ 113, SET, LABEL_FS_COUNT, "unknown level, fs" },
		{ 114, SET, 0x80, "flags" },
		{ 115, SET, 0, "of 0" },
		{ 115, SET, 9, "of 9" },
		{ 116, SET, 4, "disk 4 of 4" },
		{ 117, SET, 0, "0 tiers" },
		{ 117, SET, 9, "9 tiers" },
		{ 136, SET, LABEL_OP_COUNT, "unknown intent" },
		{ 137, SET, 1, "idle intent" },
		{ 138, SET, 7, "intent names disk 7" },
		{ 139, SET, 1, "idle intent" },		/* covered, no delete */
		{ 140, SET, LEVEL_RAID5, "intent to make" },	/* a level, no add */
		{ 118, SET, 0x10, "failed members past 4" },
		{ 256 + 64 + 16, FILL, 40, "serial not terminated" },
		{ 768, SET, TIER_KIND_COUNT, "unknown kind" },
		{ 768 + 1, SET, 5, "5 members" },
		{ 768 + 2, SET, 4, "role 4 of 4" },
		{ 768 + 8, SET, 2, "twice" },		/* member[0] = 2 */
		{ 768 + 8 + 3, SET, 9, "member 9 of 4" },
		{ 768 + 16, ADD, 1, "impossible partition" },	/* start */
		{ 768 + 64 + 2, SET, 0, "role 0 is disk 1" },
		{ 768 + 64 + 2, SET, 0xff, "role disagrees" },
		{ 768 + 128 + 16, COPY8, 768 + 64 + 16, "overlap" },
		{ 768 + 32, ADD, 1, "add up" },		/* tier_size */
		{ 768 + 40, ZERO, 16, "without an array uuid" },
		{ 1280 + 64, ZERO, 16, "GUID without a type" },
		{ 1280 + 64 + 16, ZERO, 16, "type without a GUID" },
	};
	struct label l, d;
	size_t i;

	setup_shr();
	make_label(&l, 2);
	memset(l.tier[2].part_guid, 0x6c, 16);
	memcpy(l.tier[2].part_type, LABEL_GPT_TYPE, 16);
	encode(&l, s0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memcpy(s1, s0, sizeof(s1));
		if (c[i].how == SET)
			s1[c[i].off] = c[i].val;
		else if (c[i].how == ADD)
			s1[c[i].off] += c[i].val;
		else if (c[i].how == FILL)
			memset(s1 + c[i].off, 'x', c[i].val);
		else if (c[i].how == ZERO)
			memset(s1 + c[i].off, 0, c[i].val);
		else
			memcpy(s1 + c[i].off, s1 + c[i].val, 8);
		reseal(s1);
		decode_fails(s1, sizeof(s1), c[i].want);
	}
	/* An add names the disk it joins at the end, never an old member. */
	l.intent.op = LABEL_OP_ADDING;
	l.intent.target = l.generation + 1;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "an add's intent names disk 255 of 4"));
	l.intent.disk = 1;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "names disk 1 of 4, not the last"));
	l.intent.disk = 3;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), 0);
	ck_assert_int_eq(label_decode(s1, sizeof(s1), &d, err, sizeof(err)), 0);
	s1[138] = 2, reseal(s1);
	decode_fails(s1, sizeof(s1), "names disk 2 of 4, not the last");
	/* Intent level (Decision 106): an add's, raid5, on a raid1 or raid5 label only. */
	l.intent.level = LEVEL_RAID5;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "intent to make a 6 volume level 4"));
	l.level = LEVEL_RAID1;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), 0);
	ck_assert_uint_eq(s1[140], LEVEL_RAID5);
	ck_assert_int_eq(label_decode(s1, sizeof(s1), &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.intent.level, LEVEL_RAID5);
	s1[140] = LEVEL_RAID10, reseal(s1);
	decode_fails(s1, sizeof(s1), "intent to make a 3 volume level 5");
	l.intent.level = LEVEL_RAID1;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	l.intent.op = LABEL_OP_REPLACING;
	l.intent.level = LEVEL_RAID5;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	l.intent.op = LABEL_OP_NONE;
	l.intent.disk = LABEL_NO_DISK;
	l.intent.level = 0;
	l.intent.target = 0;
	l.level = LEVEL_SHR;
	/* Intent: a target not after the current generation. */
	l.intent.op = LABEL_OP_DELETING;
	l.intent.target = l.generation;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not after"));
	/* Duplicate and missing member uuids. */
	make_label(&l, 2);
	memcpy(l.member[3].uuid, l.member[0].uuid, 16);
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "share a uuid"));
	memset(l.member[3].uuid, 0, 16);
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no uuid"));
	/* GUIDs of a partition on a tier this disk is not in. */
	make_label(&l, 0);
	for (i = 0; i < 3 && l.tier[i].role != LABEL_NO_ROLE; i++)
		;
	ck_assert_uint_lt(i, 3);
	memset(l.tier[i].part_guid, 1, 16);
	memset(l.tier[i].part_type, 1, 16);
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a member"));
	/* A partition past the end of the disk. */
	make_label(&l, 2);
	l.tier[2].size = l.member[2].size;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_int_eq(label_encode(&l, s1, 100, err, sizeof(err)), -1);
}
END_TEST

/*
 * An SHR grow's intent: covered is a mask of the new tiers (none past
 * ntiers), and only a covered tier's entry on a disk not in it may give
 * the tier's band (no GUIDs).
 */
START_TEST(grow_covered)
{
	struct label l, back;
	int t;

	setup_shr();
	make_label(&l, 0);
	for (t = 0; t < 3 && l.tier[t].role != LABEL_NO_ROLE; t++)
		;
	ck_assert_uint_lt(t, 3);
	l.tier[t].start = plan.tier[t].part[0].start;
	l.tier[t].size = plan.tier[t].part[0].size;
	l.intent.op = LABEL_OP_EXPANDING;
	l.intent.target = l.generation + 2;
	l.intent.covered = (uint8_t)(1U << t);
	encode(&l, s0);
	ck_assert_int_eq(label_decode(s0, sizeof(s0), &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.intent.covered, 1U << t);
	ck_assert_uint_eq(back.tier[t].start, plan.tier[t].part[0].start);
	ck_assert_uint_eq(back.tier[t].role, LABEL_NO_ROLE);
	/* No GUIDs on it. */
	memset(l.tier[t].part_guid, 1, 16);
	memset(l.tier[t].part_type, 1, 16);
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a member"));
	memset(l.tier[t].part_guid, 0, 16);
	memset(l.tier[t].part_type, 0, 16);
	/* Past the tiers. */
	l.intent.covered = 1U << 3;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "grow covers tiers past"));
	/* Not covered: a band on a disk not in the tier is no label raidd writes. */
	l.intent.covered = 0;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a member"));
	/* Covered only with a delete or a grow. */
	l.intent.op = LABEL_OP_REPLACING;
	l.intent.disk = 1;
	l.intent.covered = (uint8_t)(1U << t);
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "covered by a"));
}
END_TEST

/*
 * A newer expanding label's covered tiers against an older label
 * (Decision 110): only tiers the older lacks (or covers too) may be
 * covered, and each tier it lacks must be; else an old tier would be
 * skipped at start and its members given new GUIDs, or a tier no one
 * asked for added.
 */
START_TEST(grow_covered_against_older)
{
	struct label a, b;

	setup_shr();
	/* a: before the grow, tiers 1 and 2 only; b: the grow's first label. */
	make_label(&a, 2);
	make_label(&b, 2);
	a.ntiers = 2;
	a.size = a.tier[0].tier_size + a.tier[1].tier_size;
	a.nsegs = 0;
	b.nsegs = 0;
	b.generation = a.generation + 1;
	b.intent.op = LABEL_OP_EXPANDING;
	b.intent.covered = 1U << 2;
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	/* An old tier covered too. */
	b.intent.covered = (1U << 2) | 1U;
	ck_assert_int_eq(label_same_members(&a, &b), 0);
	b.intent.covered = 1U << 1;
	ck_assert_int_eq(label_same_members(&a, &b), 0);
	/* The new tier not covered: an array made without the labels saying so. */
	b.intent.covered = 0;
	ck_assert_int_eq(label_same_members(&a, &b), 0);
	/* a from the same grow (covers tier 3), b after the arrays were made. */
	a.ntiers = 3;
	a.size = b.size;
	a.intent.op = LABEL_OP_EXPANDING;
	a.intent.covered = 1U << 2;
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	b.intent.covered = 1U << 2;
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	b.intent.covered = (1U << 2) | (1U << 1);
	ck_assert_int_eq(label_same_members(&a, &b), 0);
	/* a committed with three tiers: b may cover none of them. */
	a.intent.op = LABEL_OP_NONE;
	a.intent.covered = 0;
	b.intent.covered = 1U << 2;
	ck_assert_int_eq(label_same_members(&a, &b), 0);
	b.intent.covered = 0;
	ck_assert_int_eq(label_same_members(&a, &b), 1);
}
END_TEST

/*
 * A join's label (Decision 133): disk 1, swapped for a 4 TB disk, has
 * its room join tier 3 (a raid1 of disks 2 and 3) as its last role; the intent names disk 1 and covers
 * tier 3.  Accepted only so: the joiner last in each covered tier, on an
 * SHR volume, no level, no tier past the label's.
 */
static void
make_join(struct label *l, int pos)
{
	make_label(l, pos);
	l->member[1].size = 4 * TB;	/* swapped for a bigger disk */
	ck_assert_int_eq(l->tier[2].nmembers, 2);
	ck_assert_int_eq(label_role_of(l, 2, 1), -1);
	l->tier[2].member[2] = 1;
	l->tier[2].nmembers = 3;
	if (pos == 1) {
		l->tier[2].role = 2;
		l->tier[2].start = plan.tier[2].part[0].start;
		l->tier[2].size = plan.tier[2].part[0].size;
	}
	l->intent.op = LABEL_OP_ADDING;
	l->intent.disk = 1;
	l->intent.covered = 1U << 2;
	l->intent.target = l->generation + 3;
}

START_TEST(join_intent)
{
	struct label l, back;

	setup_shr();
	make_join(&l, 1);
	encode(&l, s0);
	ck_assert_int_eq(label_decode(s0, sizeof(s0), &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.intent.covered, 1U << 2);
	ck_assert_int_eq(label_is_join(&back), 1);
	ck_assert_int_eq(label_joins(&back, 2), 1);
	ck_assert_int_eq(label_joins(&back, 1), 0);
	/* A tier that does not end with the joiner. */
	l.intent.covered = 1U << 1;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "join's tier 2 does not end with disk 1"));
	/* Past the tiers. */
	l.intent.covered = 1U << 3;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "a join's intent"));
	/* A covered tier's count read before the tiers are checked: never past the list. */
	l.intent.covered = 1U << 2;
	l.tier[2].nmembers = 200;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "join's tier 3 does not end with disk 1"));
	l.tier[2].nmembers = 3;
	/* Another disk named than the one the tier took. */
	l.intent.covered = 1U << 2;
	l.intent.disk = 0;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "does not end with disk 0"));
	/* A join makes no level change. */
	l.intent.disk = 1;
	l.intent.level = LEVEL_RAID5;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	l.intent.level = 0;
	/* A plain add (nothing covered) still names the last disk only. */
	l.intent.covered = 0;
	ck_assert_int_eq(label_encode(&l, s1, sizeof(s1), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "names disk 1 of 4, not the last"));
	/* Undone: disk 1 leaves tier 3 and its place there. */
	l.intent.covered = 1U << 2;
	label_drop_joined(&l);
	ck_assert_int_eq(l.tier[2].nmembers, 2);
	ck_assert_int_eq(l.tier[2].role, LABEL_NO_ROLE);
	ck_assert_uint_eq(l.tier[2].start, 0);
	ck_assert_int_eq(l.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(l.intent.disk, LABEL_NO_DISK);
	encode(&l, s1);
}
END_TEST

/*
 * A join's label against older and newer ones: the tier may gain its
 * joiner as the last role; a join's label behind one that rolled it back
 * is that label with the join undone; the finished tier (raid5 of three
 * with md's takeover chunk) follows the join's label; and no other old
 * disk may take a role.
 */
START_TEST(join_against_older)
{
	struct label a, b, c;

	setup_shr();
	make_label(&a, 0);
	make_join(&b, 0);
	b.generation = a.generation + 1;
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	/* Another old disk in the joined role, or a role added without a join. */
	c = b, c.tier[2].member[2] = 0;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	c = b, c.intent.op = LABEL_OP_NONE, c.intent.covered = 0, c.intent.disk = LABEL_NO_DISK;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	c = b, c.intent.covered = 1U << 1;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	/* Finished: raid5 of three, the intent gone. */
	c = b;
	c.tier[2].kind = TIER_RAID5;
	c.tier[2].chunk = PLAN_TAKEOVER_CHUNK;
	c.intent.op = LABEL_OP_NONE, c.intent.covered = 0, c.intent.disk = LABEL_NO_DISK;
	c.intent.target = 0;
	c.generation = b.generation + 3;
	ck_assert_int_eq(label_same_members(&b, &c), 1);
	/* The label from before the join never saw it begin. */
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	/* Rolled back since: b is c less the join. */
	c = b;
	label_drop_joined(&c);
	c.generation = b.generation + 1;
	ck_assert_int_eq(label_same_members(&b, &c), 1);
	c.tier[0].array_uuid[0] ^= 1;
	ck_assert_int_eq(label_same_members(&b, &c), 0);
}
END_TEST

/*
 * An add rolled back (add.c roll_back) while a member was absent: that
 * member's older label has the added disk; the newer one does not.  The
 * same volume only when the newer is the older with the add undone.
 */
START_TEST(add_rolled_back_against_older)
{
	struct label a, b, c;

	setup_shr();
	make_label(&a, 1);
	a.intent.op = LABEL_OP_ADDING;
	a.intent.disk = 3;
	a.intent.target = a.generation + 2;
	a.joined[3] = a.generation;
	b = a;
	label_drop_added(&b);
	b.generation = a.generation + 2;
	ck_assert_int_eq(b.ndisks, 3);
	ck_assert_int_eq(b.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	/* Not older: no add of a's was rolled back in b. */
	c = b, c.generation = a.generation;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	/* A disk dropped that no add named. */
	c = a, c.intent.op = LABEL_OP_NONE, c.intent.disk = LABEL_NO_DISK;
	ck_assert_int_eq(label_same_members(&c, &b), 0);
	c = b, c.ndisks = 2;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	/* An old member or array not a's. */
	c = b, c.member[1].uuid[0] ^= 1;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
	c = b, c.tier[0].array_uuid[0] ^= 1;
	ck_assert_int_eq(label_same_members(&a, &c), 0);
}
END_TEST

START_TEST(choose_slots)
{
	struct label l, w;
	int next;

	setup_shr();
	make_label(&l, 0);
	/* Fresh disk after creation: only slot 0 written. */
	encode(&l, s0);
	memset(s1, 0, sizeof(s1));
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(next, 1);
	ck_assert_uint_eq(w.generation, 1);

	/* Each rewrite bumps the generation and goes to the other slot. */
	ck_assert_int_eq(label_bump(&l, err, sizeof(err)), 0);
	encode(&l, s1);
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(next, 0);		/* slot 1 won */
	ck_assert_uint_eq(w.generation, 2);
	ck_assert_int_eq(label_bump(&l, err, sizeof(err)), 0);
	encode(&l, s0);
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(next, 1);
	ck_assert_uint_eq(w.generation, 3);

	/* Same generation, same bytes: fine, slot 0. */
	memcpy(s1, s0, sizeof(s1));
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(next, 1);
	/* Same generation, different bytes: trust neither. */
	l.fs = LABEL_FS_EXT4;
	encode(&l, s1);
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(next, -1);
	ck_assert_ptr_nonnull(strstr(err, "generation 3"));

	/* Neither valid: both reasons reported, next write to slot 0. */
	memset(s0, 0, sizeof(s0));
	memset(s1, 0xee, sizeof(s1));
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(next, 0);
	ck_assert_ptr_nonnull(strstr(err, "slot 0: empty slot"));
	ck_assert_ptr_nonnull(strstr(err, "slot 1: no raidd label"));
	ck_assert_int_eq(label_choose(s0, s1, 10, &w, &next, err,
	    sizeof(err)), -1);
}
END_TEST

/*
 * A write torn at any 512-byte sector boundary, in either slot: the
 * survivor is the previous generation, and the next write goes to the
 * torn slot, never over the survivor.
 */
START_TEST(torn_writes)
{
	uint8_t old[LABEL_SLOT_SIZE], new[LABEL_SLOT_SIZE];
	struct label l, w;
	int torn, cut, next, got;

	setup_shr();
	make_label(&l, 1);
	l.generation = 41;
	encode(&l, old);
	l.generation = 42;
	l.intent.op = LABEL_OP_EXPANDING;
	l.intent.target = 43;
	encode(&l, new);
	for (torn = 0; torn < 2; torn++) {
		for (cut = 0; cut < LABEL_SLOT_SIZE; cut += 512) {
			uint8_t *t = torn ? s1 : s0, *keep = torn ? s0 : s1;

			memcpy(keep, old, LABEL_SLOT_SIZE);
			/* The torn slot held generation 40: rubbish now. */
			memset(t, 0x5c, LABEL_SLOT_SIZE);
			memcpy(t, new, cut);
			got = label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next,
			    err, sizeof(err));
			ck_assert_int_eq(got, 0);
			ck_assert_int_eq(next, torn);	/* the torn one */
			ck_assert_uint_eq(w.generation, 41);
			ck_assert_int_eq(w.intent.op, LABEL_OP_NONE);
		}
		/* Completed, the new one wins. */
		memcpy(torn ? s1 : s0, new, LABEL_SLOT_SIZE);
		ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w,
		    &next, err, sizeof(err)), 0);
		ck_assert_int_eq(next, !torn);
		ck_assert_uint_eq(w.generation, 42);
		ck_assert_int_eq(w.intent.op, LABEL_OP_EXPANDING);
	}
}
END_TEST

START_TEST(generation_limits)
{
	struct label l, w;
	int next;

	setup_shr();
	make_label(&l, 0);
	/* Generations are compared as plain 64-bit numbers: no wrap. */
	l.generation = LABEL_GEN_READ_MAX - 1;
	encode(&l, s0);
	ck_assert_int_eq(label_bump(&l, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.generation, LABEL_GEN_READ_MAX);
	encode(&l, s1);
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(next, 0);
	ck_assert_uint_eq(w.generation, LABEL_GEN_READ_MAX);
	/* Past the read limit a delete can still write its few labels ... */
	ck_assert_int_eq(label_bump(&l, err, sizeof(err)), 0);
	encode(&l, s1);
	/* ... but such a label is damaged when read: its disk can be wiped. */
	ck_assert_int_eq(label_decode(s1, LABEL_SLOT_SIZE, &w, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "beyond any real use"));
	l.generation = LABEL_GEN_MAX;
	ck_assert_int_eq(label_bump(&l, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "exhausted"));
	ck_assert_uint_eq(l.generation, LABEL_GEN_MAX);
	/* UINT64_MAX (a hostile disk) is no label at all. */
	l.generation = UINT64_MAX;
	ck_assert_int_eq(label_encode(&l, s1, LABEL_SLOT_SIZE, err, sizeof(err)), -1);
	/* Generation 1 never beats a higher one, whatever the slot. */
	l.generation = 1;
	encode(&l, s1);
	ck_assert_int_eq(label_choose(s0, s1, LABEL_SLOT_SIZE, &w, &next, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(next, 1);
	ck_assert_uint_eq(w.generation, LABEL_GEN_READ_MAX - 1);
}
END_TEST

START_TEST(probe)
{
	static uint8_t head[PLAN_HEAD];
	struct label l;
	uint64_t off = 7;

	setup_shr();
	make_label(&l, 0);
	ck_assert_int_eq(label_probe(head, sizeof(head), &off), 0);
	ck_assert_uint_eq(off, 7);
	encode(&l, head + LABEL_SLOT1);
	ck_assert_int_eq(label_probe(head, sizeof(head), &off), 1);
	ck_assert_uint_eq(off, LABEL_SLOT1);
	/* Too short a read to reach the slot. */
	ck_assert_int_eq(label_probe(head, LABEL_SLOT1 + 7, &off), 0);
	/* A damaged label still marks the disk. */
	memset(head + LABEL_SLOT1 + 100, 0x77, 50);
	head[LABEL_SLOT0] = 'r';
	memcpy(head + LABEL_SLOT0, "raiddlbl", 8);
	ck_assert_int_eq(label_probe(head, sizeof(head), &off), 1);
	ck_assert_uint_eq(off, LABEL_SLOT0);
	ck_assert_uint_eq(LABEL_SLOT0, 1032192);
	ck_assert_uint_eq(LABEL_SLOT1, 1040384);
}
END_TEST

static Suite *
label_suite(void)
{
	Suite *s = suite_create("raidd-label");
	TCase *tc = tcase_create("label");

	tcase_add_test(tc, crc32c_vectors);
	tcase_add_test(tc, gpt_crc32_vector);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, from_plan);
	tcase_add_test(tc, documented_offsets);
	tcase_add_test(tc, corruptions);
	tcase_add_test(tc, impossible_contents);
	tcase_add_test(tc, grow_covered);
	tcase_add_test(tc, grow_covered_against_older);
	tcase_add_test(tc, add_rolled_back_against_older);
	tcase_add_test(tc, join_intent);
	tcase_add_test(tc, join_against_older);
	tcase_add_test(tc, map_of_segments);
	tcase_add_test(tc, choose_slots);
	tcase_add_test(tc, torn_writes);
	tcase_add_test(tc, generation_limits);
	tcase_add_test(tc, probe);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(label_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
