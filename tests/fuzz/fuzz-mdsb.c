/*
 * libFuzzer target: an md v1.2 superblock and its internal bitmap's
 * superblock as found on a disk from another box.  The first byte is a
 * mode; the next MDSB_BLOCK bytes (or fewer) are the 4 KiB at sector 8,
 * the rest is what sits at the bitmap offset.
 *   bit 0: recompute sb_csum, so the checks behind it are reached
 *   bit 1: the block was found at sector 0, not at sector 8
 * Each part is decoded from a heap copy of exactly its bytes, so a read
 * past them is caught.  What decodes and raidd would also write must
 * encode and decode back to the same bytes; a bitmap planned for a
 * decoded superblock must fit between the superblock and the data.  The
 * takeover mend's patch (mdsb_set_level, Decision 136) of the same bytes
 * stays inside them and changes level, layout, chunk and checksum only.
 */
#include <linux/raid/md_p.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-seal.h"
#include "raidd/mdsb.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define BITMAP_MAX	(1 << 20)	/* encode bitmaps up to this here */

static uint8_t *
copy(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);

	if (b == NULL)
		abort();
	memcpy(b, data, size);
	return b;
}

/* A superblock raidd would write reads back as the same bytes. */
static void
sb_round_trip(const struct mdsb *m)
{
	static uint8_t a[MDSB_BLOCK], b[MDSB_BLOCK];
	char err[MDSB_ERRLEN];
	struct mdsb again;

	if (mdsb_encode(m, a, sizeof(a), err, sizeof(err)) != 0)
		return;		/* foreign: raidd reads it, never writes it */
	if (mdsb_decode(a, sizeof(a), m->super_offset, &again, err,
	    sizeof(err)) != 0)
		fuzz_fail("encoded superblock does not decode", err);
	if (mdsb_encode(&again, b, sizeof(b), err, sizeof(err)) != 0 ||
	    memcmp(a, b, sizeof(a)) != 0)
		fuzz_fail("superblock round trip differs", err);
}

static void
bm_round_trip(const struct mdsb_bitmap *bm)
{
	uint8_t head[MDSB_BITMAP_SB];
	char err[MDSB_ERRLEN];
	struct mdsb_bitmap again;
	size_t n = mdsb_bitmap_bytes(bm);
	uint8_t *b;

	if (n == 0 || n > BITMAP_MAX)
		return;
	if ((b = malloc(n)) == NULL)
		abort();
	if (mdsb_bitmap_encode(bm, 1, b, n, err, sizeof(err)) != 0)
		fuzz_fail("decoded bitmap does not encode", err);
	memcpy(head, b, sizeof(head));
	if (mdsb_bitmap_decode(b, n, &again, err, sizeof(err)) != 0)
		fuzz_fail("encoded bitmap does not decode", err);
	if (mdsb_bitmap_encode(&again, 1, b, n, err, sizeof(err)) != 0 ||
	    memcmp(head, b, sizeof(head)) != 0)
		fuzz_fail("bitmap round trip differs", err);
	free(b);
}

/*
 * The bitmap raidd would plan for this superblock stays in its room and
 * its bits cover what md resyncs (mdsb_sync_sectors) (for sizes a disk can have: 2^54 sectors is
 * 8 EiB; beyond that the byte count no longer fits 64 bits).
 */
static void
bitmap_plan(const struct mdsb *m)
{
	struct mdsb_bitmap bm;
	char err[MDSB_ERRLEN];
	uint64_t room, bytes, sync = mdsb_sync_sectors(m);

	if (mdsb_bitmap_init(&bm, m, err, sizeof(err)) != 0)
		return;
	/* In sectors: a foreign data_offset may be near 2^64 / 512. */
	room = m->data_offset - m->super_offset - (uint64_t)m->bitmap_offset;
	bytes = mdsb_bitmap_bytes(&bm);
	if ((bytes + 511) / 512 > room || bytes < MDSB_BITMAP_SB)
		fuzz_fail("planned bitmap overruns the data", "");
	/* What md resyncs: one member for raid1/5, the array for raid10. */
	if (sync <= 1ULL << 54 && (unsigned __int128)(bytes - MDSB_BITMAP_SB) *
	    8 * bm.chunksize < (unsigned __int128)sync * 512)
		fuzz_fail("planned bitmap does not cover the array", "");
	bm_round_trip(&bm);
}

#define SB_OFF(f)	offsetof(struct mdp_superblock_1, f)

/* Byte i of a superblock belongs to what mdsb_set_level writes. */
static int
set_level_field(size_t i)
{
	return (i >= SB_OFF(level) && i < SB_OFF(level) + 4) ||
	    (i >= SB_OFF(layout) && i < SB_OFF(layout) + 4) ||
	    (i >= SB_OFF(chunksize) && i < SB_OFF(chunksize) + 4) ||
	    (i >= SB_OFF(sb_csum) && i < SB_OFF(sb_csum) + 4);
}

/*
 * The mend's patch of the n bytes at b (found at sector at; before: what
 * they decoded to, or NULL): only the four fields change, and what
 * decoded still decodes, the same but for level, layout and chunk.
 */
static void
set_level(const uint8_t *b, size_t n, uint64_t at, const struct mdsb *before)
{
	char err[MDSB_ERRLEN];
	struct mdsb after;
	uint8_t *c = copy(b, n);

	if (mdsb_set_level(c, n, at, 5, 2, 128, err, sizeof(err)) != 0) {
		if (memcmp(b, c, n) != 0)
			fuzz_fail("a refused set_level wrote", err);
		free(c);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (c[i] != b[i] && !set_level_field(i))
			fuzz_fail("set_level wrote outside its fields", "");
	if (before != NULL) {
		if (mdsb_decode(c, n, at, &after, err, sizeof(err)) != 0)
			fuzz_fail("set_level's block does not decode", err);
		if (after.level != 5 || after.layout != 2 || after.chunksize != 128)
			fuzz_fail("set_level's fields do not read back", "");
		after.level = before->level;
		after.layout = before->layout;
		after.chunksize = before->chunksize;
		if (memcmp(&after, before, sizeof(after)) != 0)
			fuzz_fail("set_level changed another field", "");
	}
	free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mdsb_bitmap bm;
	struct mdsb m;
	char err[MDSB_ERRLEN];
	size_t n;
	uint8_t *b;
	int mode;

	if (size < 1 || size > MDSB_BLOCK + 2 * MDSB_BITMAP_SB + 1)
		return 0;
	mode = data[0];
	data++, size--;
	n = size < MDSB_BLOCK ? size : MDSB_BLOCK;
	b = copy(data, n);
	if (mode & 1)
		fuzz_seal_mdsb(b, n);
	if (mdsb_decode(b, n, (mode & 2) ? 0 : MDSB_SUPER_OFFSET, &m, err,
	    sizeof(err)) == 0) {
		sb_round_trip(&m);
		bitmap_plan(&m);
		set_level(b, n, (mode & 2) ? 0 : MDSB_SUPER_OFFSET, &m);
	} else {
		set_level(b, n, (mode & 2) ? 0 : MDSB_SUPER_OFFSET, NULL);
	}
	free(b);
	if (size <= MDSB_BLOCK)
		return 0;
	b = copy(data + MDSB_BLOCK, size - MDSB_BLOCK);
	if (mdsb_bitmap_decode(b, size - MDSB_BLOCK, &bm, err, sizeof(err)) == 0)
		bm_round_trip(&bm);
	free(b);
	return 0;
}
