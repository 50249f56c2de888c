/*
 * Is a labelled disk still what its label says?  A label survives a
 * re-partition on a PC (1 MiB alignment leaves its slots alone), so the
 * label alone proves nothing.  A disk is raidd's when its size and
 * serial are the label's, every signature on it is one raidd (or the
 * filesystem raidd made) puts there, its GPT holds exactly raidd's
 * partitions by place and name, and every md superblock on it carries
 * the label's array uuid in the label's role.  Missing pieces are fine
 * (a create or a delete may have been cut short); anything else makes
 * the disk foreign, and foreign disks are never written.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "mdsb.h"
#include "volume.h"

#define GPT_ENTRIES_MAX	128
#define GPT_ENTRY_SIZE	128
#define GPT_NAME_CHARS	36

/* plan_err() says why and returns -1; here the answer is "no" (0). */
#define why_not(why, len, ...)	(plan_err(why, len, __VA_ARGS__), 0)

/* The name raidd gives tier t's partition (create.c). */
static void
part_name(const struct label *l, int t, char *buf, size_t len)
{
	snprintf(buf, len, "raidd:%.*s:t%c", VOL_NAME_MAX, l->name, '1' + t);
}

/* GPT names are UTF-16LE; raidd's are ASCII. */
static void
entry_name(const uint8_t *e, char *buf)
{
	int i;

	for (i = 0; i < GPT_NAME_CHARS; i++) {
		uint16_t c = (uint16_t)(e[56 + 2 * i] | e[57 + 2 * i] << 8);

		if (c == 0)
			break;
		buf[i] = c < 0x80 ? (char)c : '?';
	}
	buf[i] = '\0';
}

/* The tier of l whose partition on this disk starts at byte start, or -1. */
static int
tier_at(const struct label *l, uint64_t start)
{
	for (int t = 0; t < l->ntiers; t++)
		if (l->tier[t].role != LABEL_NO_ROLE && l->tier[t].start == start)
			return t;
	return -1;
}

/* Tier t is new in a grow in flight: its array (and partitions) may not be there yet. */
int
grow_making(const struct label *l, int t)
{
	return l->intent.op == LABEL_OP_EXPANDING && t < 8 && (l->intent.covered & 1U << t);
}

/* Where a GPT is read: by name at a scan, or through a write's descriptor. */
struct src {
	const char	*name;
	const struct dfd *f;
	uint64_t	 lba;
};

/*
 * The label's size, or - while a grow is in flight - the smaller size
 * it had before: partitions only ever grow, from the same start.
 */
static int
part_size_ok(const struct label *l, int t, uint64_t size)
{
	if (size == l->tier[t].size)
		return 1;
	return l->intent.op == LABEL_OP_EXPANDING && size > 0 && size < l->tier[t].size;
}

static int
src_read(const struct src *s, uint64_t off, void *buf, size_t len)
{
	return s->f ? dfd_read(s->f, off, buf, len) : sys->read_at(s->name, off, buf, len);
}

/*
 * An entry's place in bytes, if it is one: a forged table can give any
 * first and last LBA, and their product with the block size must not
 * wrap into a place raidd did make.
 */
static int
entry_place(uint64_t first, uint64_t last, uint64_t lba, uint64_t *start, uint64_t *size)
{
	if (last < first || last >= UINT64_MAX / lba)
		return -1;
	*start = first * lba;
	*size = (last - first + 1) * lba;
	return 0;
}

/*
 * The kernel trusts a primary GPT only when its header and entry CRCs
 * hold; otherwise it takes the backup at the disk's end. A primary
 * with raidd's partitions and a broken CRC would prove one table while
 * the kernel (and md) use another: raidd proves only a primary the
 * kernel uses, as libfdisk writes it (a 92-byte header at LBA 1).
 */
static int
gpt_header_holds(const uint8_t *hdr)
{
	uint8_t h[92];
	uint32_t hsize, crc;
	uint64_t mine;

	memcpy(&hsize, hdr + 12, 4);
	memcpy(&crc, hdr + 16, 4);
	memcpy(&mine, hdr + 24, 8);
	memcpy(h, hdr, sizeof(h));
	memset(h + 16, 0, 4);
	return le32toh(hsize) == sizeof(h) && le64toh(mine) == 1 &&
	    gpt_crc32(0, h, sizeof(h)) == le32toh(crc);
}

static int
gpt_is_ours(const struct src *src, const uint8_t *hdr, const struct label *l, char *why,
    size_t len)
{
	static uint8_t ent[GPT_ENTRIES_MAX * GPT_ENTRY_SIZE];
	uint64_t lba = src->lba, at;
	uint32_t n, size, crc, seen = 0;
	int found = 0, want = 0;
	char name[GPT_NAME_CHARS + 1], expect[GPT_NAME_CHARS + 1];

	memcpy(&at, hdr + 72, 8);
	memcpy(&n, hdr + 80, 4);
	memcpy(&size, hdr + 84, 4);
	at = le64toh(at), n = le32toh(n), size = le32toh(size);
	memcpy(&crc, hdr + 88, 4);
	if (!gpt_header_holds(hdr) || size != GPT_ENTRY_SIZE || n == 0 ||
	    n > GPT_ENTRIES_MAX || at < 2 || at > LABEL_SLOT0 / lba ||
	    src_read(src, at * lba, ent, (size_t)n * GPT_ENTRY_SIZE) == -1 ||
	    gpt_crc32(0, ent, (size_t)n * GPT_ENTRY_SIZE) != le32toh(crc))
		return why_not(why, len, "its GPT is not one raidd writes (or its CRCs do "
		    "not hold, and the kernel uses its backup)");
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = ent + (size_t)i * GPT_ENTRY_SIZE;
		static const uint8_t zero[16];
		uint64_t first, last, start, bytes;
		int t;

		if (memcmp(e, zero, 16) == 0)
			continue;
		memcpy(&first, e + 32, 8);
		memcpy(&last, e + 40, 8);
		first = le64toh(first), last = le64toh(last);
		entry_name(e, name);
		if (entry_place(first, last, lba, &start, &bytes) == -1)
			return why_not(why, len, "its partition %u (\"%s\") has no possible place",
			    i + 1, name);
		t = tier_at(l, start);
		if (t >= 0)
			part_name(l, t, expect, sizeof(expect));
		if (t < 0 || !part_size_ok(l, t, bytes) || strcmp(name, expect) != 0)
			return why_not(why, len, "its partition %u (\"%s\" at byte %llu) is not "
			    "one raidd made", i + 1, name, (unsigned long long)start);
		/* A label from before GUIDs were recorded proves by place and name. */
		if (!volume_uuid_zero(l->tier[t].part_guid) &&
		    (memcmp(e, l->tier[t].part_type, 16) != 0 ||
		    memcmp(e + 16, l->tier[t].part_guid, 16) != 0))
			return why_not(why, len, "its partition %u (\"%s\") has another GUID "
			    "than raidd gave it: it was made again", i + 1, name);
		/* A forged table may list one partition twice in place of another. */
		if (seen & 1U << t)
			return why_not(why, len, "its partition %u (\"%s\") is listed twice",
			    i + 1, name);
		seen |= 1U << t;
		found++;
	}
	/* A grow's new tier (intent.covered) gets its partition after the label,
	   and so does the joiner's place in a tier it joins, on its own disk
	   only, while the join's intent stands (Decision 133). */
	for (int t = 0; t < l->ntiers; t++)
		want += l->tier[t].role != LABEL_NO_ROLE && !((grow_making(l, t) ||
		    (label_joins(l, t) && l->position == l->intent.disk)) && !(seen & 1U << t));
	if (found != want)
		return why_not(why, len, "its GPT has %d partitions, raidd made %d", found, want);
	return 1;
}

/* The GPT blkid found on d at the scan: raidd's partitions exactly. */
static int
scanned_gpt_is_ours(const struct disk *d, const struct label *l, char *why, size_t len)
{
	struct src src = { .name = d->sys.name,
	    .lba = d->sys.logical_block ? d->sys.logical_block : 512 };
	uint8_t hdr[92];

	if (src_read(&src, src.lba, hdr, sizeof(hdr)) == -1)
		return why_not(why, len, "its GPT cannot be read");
	if (memcmp(hdr, "EFI PART", 8) != 0)
		return why_not(why, len, "its partition table is not a GPT");
	return gpt_is_ours(&src, hdr, l, why, len);
}

/*
 * Again before a write, through its descriptor: no GPT (a create or a
 * delete between steps) or raidd's, by l, the label read through f.
 */
int
gpt_proven(const struct dfd *f, const struct label *l, char *why, size_t len)
{
	struct src src = { .name = f->name, .f = f, .lba = f->lba };
	uint8_t hdr[92];

	if (src_read(&src, src.lba, hdr, sizeof(hdr)) == -1)
		return why_not(why, len, "its GPT cannot be read");
	if (memcmp(hdr, "EFI PART", 8) == 0)
		return gpt_is_ours(&src, hdr, l, why, len);
	/* Without a primary the kernel takes the backup in the last block:
	   raidd erases both, so a backup left is someone else's table. */
	if (src_read(&src, f->size - src.lba, hdr, sizeof(hdr)) == -1)
		return why_not(why, len, "its backup GPT cannot be read");
	if (memcmp(hdr, "EFI PART", 8) == 0)
		return why_not(why, len, "it has a backup GPT and no primary one, which "
		    "raidd never leaves");
	return 1;
}

/* An md superblock at byte off: the label's array, in this disk's role. */
static int
md_is_ours(const struct disk *d, const struct label *l, uint64_t off, char *why, size_t len)
{
	static uint8_t buf[MDSB_BLOCK];
	static struct mdsb sb;
	char err[MDSB_ERRLEN];
	int t = tier_at(l, off - MDSB_SUPER_OFFSET * 512);
	const struct label_tier *lt;

	if (t < 0 || (lt = &l->tier[t])->kind == TIER_NONE)
		return why_not(why, len, "an md superblock at byte %llu, where raidd put none",
		    (unsigned long long)off);
	if (sys->read_at(d->sys.name, off, buf, sizeof(buf)) == -1 ||
	    mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, &sb, err, sizeof(err)) == -1)
		return why_not(why, len, "the md superblock of tier %d does not decode", t + 1);
	if (memcmp(sb.set_uuid, lt->array_uuid, 16) != 0)
		return why_not(why, len, "the md array on tier %d's partition is another one "
		    "(its uuid is not the label's)", t + 1);
	/* A spare: what a repair writes before md puts the member in its role. */
	if (sb.dev_number >= sb.max_dev || (sb.dev_roles[sb.dev_number] != lt->role &&
	    sb.dev_roles[sb.dev_number] != MDSB_ROLE_SPARE))
		return why_not(why, len, "the md superblock of tier %d gives another role", t + 1);
	return 1;
}

/* A filesystem (or LUKS) on a bare partition raidd made for it. */
static int
fs_is_ours(const struct label *l, uint64_t off)
{
	for (int t = 0; t < l->ntiers; t++) {
		const struct label_tier *lt = &l->tier[t];

		if (lt->kind == TIER_NONE && lt->role != LABEL_NO_ROLE &&
		    off >= lt->start && off - lt->start < lt->size)
			return 1;
	}
	return 0;
}

int
disk_proven(const struct disk *d, const struct label *l, char *why, size_t len)
{
	const struct label_member *me = &l->member[l->position];

	/* Bigger is a disk that grew in place (decision 30); smaller never is. */
	if (d->sys.size < me->size)
		return why_not(why, len, "its size (%llu) is less than the label's (%llu)",
		    (unsigned long long)d->sys.size, (unsigned long long)me->size);
	if (strncmp(d->sys.serial, me->serial, LABEL_SERIAL_MAX - 1) != 0)
		return why_not(why, len, "its serial is not the label's (%s)", me->serial);
	for (int i = 0; i < d->sys.nsigs; i++) {
		const struct sys_sig *s = &d->sys.sig[i];

		if (strcmp(s->type, "raidd") == 0)
			continue;
		if (strcmp(s->type, "gpt") == 0 && strcmp(s->where, d->sys.name) == 0) {
			if (!scanned_gpt_is_ours(d, l, why, len))
				return 0;
			continue;
		}
		if (strcmp(s->type, "linux_raid_member") == 0 &&
		    strcmp(s->where, d->sys.name) != 0) {
			if (!md_is_ours(d, l, s->offset, why, len))
				return 0;
			continue;
		}
		if (strcmp(s->where, d->sys.name) != 0 && fs_is_ours(l, s->offset))
			continue;
		return why_not(why, len, "it holds %s at byte %llu, which raidd did not write",
		    s->type, (unsigned long long)s->offset);
	}
	return 1;
}
