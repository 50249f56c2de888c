/*
 * libFuzzer target: the raidd label as read from a disk another box may
 * have written.  The first byte is a mode; the rest is slot 0 then slot 1.
 *   bit 0, bit 1: recompute the crc32c of slot 0 (1), of slot 1 (2), so
 *                 that the fuzzer reaches the checks behind the checksum
 *   bit 2:        both slots (zero-padded) through label_choose; else
 *                 slot 0 alone, decoded from a heap copy of exactly the
 *                 bytes given, so that a read past them is caught
 * (One or the other: a crc32c over 4 KiB per slot is most of the time.)  A label that decodes must encode, and decoding that
 * again must give the same bytes: the reader and the writer agree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-seal.h"
#include "raidd/label.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* encode(l) -> decode -> encode gives the same slot. */
static void
round_trip(const struct label *l)
{
	static uint8_t a[LABEL_SLOT_SIZE], b[LABEL_SLOT_SIZE];
	char err[PLAN_ERRLEN];
	struct label again;

	if (label_encode(l, a, sizeof(a), err, sizeof(err)) != 0)
		fuzz_fail("decoded label does not encode", err);
	if (label_decode(a, sizeof(a), &again, err, sizeof(err)) != 0)
		fuzz_fail("encoded label does not decode", err);
	if (label_encode(&again, b, sizeof(b), err, sizeof(err)) != 0 ||
	    memcmp(a, b, sizeof(a)) != 0)
		fuzz_fail("label round trip differs", err);
}

static void
one_slot(const uint8_t *data, size_t size, int reseal)
{
	char err[PLAN_ERRLEN];
	struct label l;
	uint8_t *buf;

	if ((buf = malloc(size ? size : 1)) == NULL)
		abort();
	memcpy(buf, data, size);
	if (reseal && size >= LABEL_SLOT_SIZE)
		fuzz_seal_label(buf);
	if (label_decode(buf, size, &l, err, sizeof(err)) == 0)
		round_trip(&l);
	free(buf);
}

static void
two_slots(const uint8_t *data, size_t size, int mode)
{
	static uint8_t s[2][LABEL_SLOT_SIZE];
	char err[PLAN_ERRLEN];
	struct label l, w;
	int next, i;

	for (i = 0; i < 2; i++) {
		size_t off = (size_t)i * LABEL_SLOT_SIZE;
		size_t n = size > off ? size - off : 0;

		if (n > LABEL_SLOT_SIZE)
			n = LABEL_SLOT_SIZE;
		memset(s[i], 0, LABEL_SLOT_SIZE);
		memcpy(s[i], data + off, n);
		if (mode & (1 << i))
			fuzz_seal_label(s[i]);
	}
	/* Two disks' labels judged against each other (assembly: an older
	   label behind the newest, a join's or an add's undone in it). */
	if (label_decode(s[0], LABEL_SLOT_SIZE, &l, err, sizeof(err)) == 0 &&
	    label_decode(s[1], LABEL_SLOT_SIZE, &w, err, sizeof(err)) == 0) {
		(void)label_same_members(&l, &w);
		(void)label_same_members(&w, &l);
	}
	if (label_choose(s[0], s[1], LABEL_SLOT_SIZE, &l, &next, err,
	    sizeof(err)) != 0) {
		if (next != 0 && next != -1)
			fuzz_fail("label_choose failed with a next slot", err);
		return;
	}
	/* The winner is the other slot, and it is what that slot decodes to. */
	if ((next != 0 && next != 1) ||
	    label_decode(s[1 - next], LABEL_SLOT_SIZE, &w, err, sizeof(err)) != 0 ||
	    memcmp(&w, &l, sizeof(l)) != 0)
		fuzz_fail("label_choose picked a slot that is not the winner", err);
	round_trip(&l);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t off;
	int mode;

	if (size < 1 || size > 2 * LABEL_SLOT_SIZE + 1)
		return 0;
	mode = data[0];
	data++, size--;
	if (mode & 4)
		two_slots(data, size, mode);
	else
		one_slot(data, size < LABEL_SLOT_SIZE ? size : LABEL_SLOT_SIZE,
		    mode & 1);
	(void)label_probe(data, size, &off);
	return 0;
}
