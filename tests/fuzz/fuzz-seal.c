/* Checksums for the on-disk fuzz targets and their seed generator. */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/raid/md_p.h>

#include "fuzz-seal.h"
#include "raidd/label.h"
#include "raidd/mdsb.h"

#define LABEL_CRC_OFF	16	/* label.c: HDR_CRC */
#define SB_FIXED	sizeof(struct mdp_superblock_1)

static void
put32(uint8_t *b, size_t off, uint32_t v)
{
	v = htole32(v);
	memcpy(b + off, &v, sizeof(v));
}

void
fuzz_seal_label(uint8_t *slot)
{
	put32(slot, LABEL_CRC_OFF, 0);
	put32(slot, LABEL_CRC_OFF, label_crc32c(0, slot, LABEL_SLOT_SIZE));
}

void
fuzz_seal_mdsb(uint8_t *sb, size_t len)
{
	uint32_t max_dev;
	size_t n;

	if (len < SB_FIXED)
		return;
	memcpy(&max_dev, sb + offsetof(struct mdp_superblock_1, max_dev), 4);
	max_dev = le32toh(max_dev);
	n = SB_FIXED + 2 * (size_t)max_dev;
	if (max_dev > MDSB_MAX_DEV_LIMIT || n > len)
		return;
	put32(sb, offsetof(struct mdp_superblock_1, sb_csum), mdsb_csum(sb, n));
}

void
fuzz_fail(const char *what, const char *err)
{
	fprintf(stderr, "%s: %s\n", what, err);
	abort();
}
