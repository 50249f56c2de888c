/*
 * md v1.2 superblocks.  The kernel's struct mdp_superblock_1 is the layout
 * authority: fields are placed at its offsetof()s, byte by byte, so any
 * buffer alignment works and the asserts below catch a header that
 * disagrees with what every md tool has written since 2.6.
 */
#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <linux/raid/md_p.h>

#include "plan.h"
#include "mdsb.h"

#define OFF(f)	offsetof(struct mdp_superblock_1, f)

_Static_assert(sizeof(struct mdp_superblock_1) == 256, "sb size");
_Static_assert(OFF(set_uuid) == 16 && OFF(set_name) == 32, "sb ids");
_Static_assert(OFF(ctime) == 64 && OFF(size) == 80, "sb geometry");
_Static_assert(OFF(bitmap_offset) == 96, "sb bitmap_offset");
_Static_assert(OFF(data_offset) == 128 && OFF(dev_number) == 160, "sb dev");
_Static_assert(OFF(device_uuid) == 168 && OFF(bblog_offset) == 188, "sb bb");
_Static_assert(OFF(utime) == 192 && OFF(sb_csum) == 216, "sb state");
_Static_assert(OFF(max_dev) == 220 && OFF(pad3) == 224, "sb tail");
_Static_assert(OFF(dev_roles) == 256, "sb roles");
_Static_assert(MD_SB_MAGIC == MDSB_MAGIC, "sb magic");
_Static_assert(MDSB_MAX_DEV_LIMIT == (4096 - 256) / 2, "max_dev limit");

#define SB_FIXED	sizeof(struct mdp_superblock_1)
#define CTIME_MASK	((1ULL << 40) - 1)	/* low 40 bits: seconds */

static void
put16(uint8_t *b, size_t off, uint16_t v)
{
	v = htole16(v);
	memcpy(b + off, &v, sizeof(v));
}

static void
put32(uint8_t *b, size_t off, uint32_t v)
{
	v = htole32(v);
	memcpy(b + off, &v, sizeof(v));
}

static void
put64(uint8_t *b, size_t off, uint64_t v)
{
	v = htole64(v);
	memcpy(b + off, &v, sizeof(v));
}

static uint16_t
get16(const uint8_t *b, size_t off)
{
	uint16_t v;

	memcpy(&v, b + off, sizeof(v));
	return le16toh(v);
}

static uint32_t
get32(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return le32toh(v);
}

static uint64_t
get64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return le64toh(v);
}

/*
 * The kernel's checksum: the sum of the little-endian 32-bit words of the
 * first len bytes (sb_csum counted as zero; a trailing half word added as
 * 16 bits), its carries folded back once into 32 bits.
 */
uint32_t
mdsb_csum(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t sum = 0;
	size_t off;

	for (off = 0; off + 4 <= len; off += 4)
		if (off != OFF(sb_csum))
			sum += get32(b, off);
	if (len - off == 2)
		sum += get16(b, off);
	return (uint32_t)((sum & 0xffffffff) + (sum >> 32));
}

static int
level_known(int32_t level)
{
	switch (level) {
	case -4: case -1: case 0: case 1: case 4: case 5: case 6: case 10:
		return 1;
	default:
		return 0;
	}
}

static int
is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* What raidd is willing to write: the arrays it creates, nothing else. */
static int
check_new(const struct mdsb *m, char *err, size_t errlen)
{
	uint64_t bm_end;

	if (memchr(m->set_name, '\0', MDSB_NAME_MAX + 1) == NULL)
		return plan_err(err, errlen, "array name longer than %d bytes",
		    MDSB_NAME_MAX);
	if (m->level != 0 && m->level != 1 && m->level != 5 && m->level != 10)
		return plan_err(err, errlen, "md level %d is not one raidd creates",
		    (int)m->level);
	if (m->max_dev < 1 || m->max_dev > MDSB_MAX_DEV_LIMIT)
		return plan_err(err, errlen, "max_dev %u out of range", m->max_dev);
	if (m->raid_disks < 1 || m->raid_disks > m->max_dev)
		return plan_err(err, errlen, "raid_disks %u out of range 1..%u",
		    m->raid_disks, m->max_dev);
	if (m->dev_number >= m->max_dev)
		return plan_err(err, errlen, "dev_number %u beyond max_dev %u",
		    m->dev_number, m->max_dev);
	if (m->level != 1 && (!is_pow2(m->chunksize) || m->chunksize < 8))
		return plan_err(err, errlen, "chunk of %u sectors: need a power "
		    "of two, 4 KiB at least", m->chunksize);
	/* RECOVERY_OFFSET: md's own, on a member it rebuilds (the simulator
	   writes it as md does). */
	if (m->feature_map & ~(uint32_t)(MD_FEATURE_BITMAP_OFFSET |
	    MD_FEATURE_RAID0_LAYOUT | MD_FEATURE_RECOVERY_OFFSET))
		return plan_err(err, errlen, "feature bits %#x not written by raidd",
		    m->feature_map);
	if (m->super_offset != MDSB_SUPER_OFFSET)
		return plan_err(err, errlen, "superblock must sit at sector %d",
		    MDSB_SUPER_OFFSET);
	if (m->data_offset < m->super_offset + MDSB_BLOCK / 512)
		return plan_err(err, errlen, "data_offset %llu overlaps the "
		    "superblock", (unsigned long long)m->data_offset);
	if (m->size == 0 || m->size > m->data_size)
		return plan_err(err, errlen, "used size %llu not within data size "
		    "%llu", (unsigned long long)m->size,
		    (unsigned long long)m->data_size);
	if (m->feature_map & MD_FEATURE_BITMAP_OFFSET) {
		bm_end = m->super_offset + (uint64_t)m->bitmap_offset +
		    MDSB_BLOCK / 512;
		if (m->bitmap_offset < MDSB_BLOCK / 512 ||
		    bm_end > m->data_offset)
			return plan_err(err, errlen, "no room for a bitmap at +%d "
			    "before data at %llu", (int)m->bitmap_offset,
			    (unsigned long long)m->data_offset);
	}
	return 0;
}

/* Fill the first MDSB_BLOCK bytes of buf: what goes at sector 8. */
int
mdsb_encode(const struct mdsb *m, void *buf, size_t len, char *err,
    size_t errlen)
{
	uint8_t *b = buf;
	uint32_t i;
	size_t n;

	if (len < MDSB_BLOCK)
		return plan_err(err, errlen, "buffer of %zu bytes, need %d", len,
		    MDSB_BLOCK);
	if (check_new(m, err, errlen) == -1)
		return -1;
	memset(b, 0, MDSB_BLOCK);
	put32(b, OFF(magic), MDSB_MAGIC);
	put32(b, OFF(major_version), 1);
	put32(b, OFF(feature_map), m->feature_map);
	memcpy(b + OFF(set_uuid), m->set_uuid, 16);
	memcpy(b + OFF(set_name), m->set_name, strlen(m->set_name));
	put64(b, OFF(ctime), m->ctime & CTIME_MASK);
	put32(b, OFF(level), (uint32_t)m->level);
	put32(b, OFF(layout), m->layout);
	put64(b, OFF(size), m->size);
	put32(b, OFF(chunksize), m->chunksize);
	put32(b, OFF(raid_disks), m->raid_disks);
	put32(b, OFF(bitmap_offset), (uint32_t)m->bitmap_offset);
	put64(b, OFF(data_offset), m->data_offset);
	put64(b, OFF(data_size), m->data_size);
	put64(b, OFF(super_offset), m->super_offset);
	put64(b, OFF(recovery_offset), m->recovery_offset);
	put32(b, OFF(dev_number), m->dev_number);
	memcpy(b + OFF(device_uuid), m->device_uuid, 16);
	put64(b, OFF(utime), m->utime & CTIME_MASK);
	put64(b, OFF(events), m->events);
	put64(b, OFF(resync_offset), m->resync_offset);
	put32(b, OFF(max_dev), m->max_dev);
	for (i = 0; i < m->max_dev; i++)
		put16(b, SB_FIXED + 2 * i, m->dev_roles[i]);
	n = SB_FIXED + 2 * (size_t)m->max_dev;
	put32(b, OFF(sb_csum), mdsb_csum(b, n));
	return 0;
}

static int
zero(const uint8_t *b, size_t off, size_t n)
{
	while (n-- > 0)
		if (b[off++] != 0)
			return 0;
	return 1;
}

/* Checks that need nothing but the fixed 256 bytes. */
static int
check_header(const uint8_t *b, size_t len, uint64_t found_at, char *err,
    size_t errlen)
{
	uint32_t v, max_dev;
	uint64_t so;

	if (len < SB_FIXED)
		return plan_err(err, errlen, "truncated: %zu bytes, a superblock "
		    "has %zu", len, SB_FIXED);
	if ((v = get32(b, OFF(magic))) != MDSB_MAGIC)
		return plan_err(err, errlen, "no md superblock (magic %08x)", v);
	if ((v = get32(b, OFF(major_version))) != 1)
		return plan_err(err, errlen, "md superblock major version %u, "
		    "only 1 is understood", v);
	max_dev = get32(b, OFF(max_dev));
	if (max_dev > MDSB_MAX_DEV_LIMIT)
		return plan_err(err, errlen, "max_dev %u beyond %d", max_dev,
		    MDSB_MAX_DEV_LIMIT);
	if (len < SB_FIXED + 2 * (size_t)max_dev)
		return plan_err(err, errlen, "truncated: %zu bytes, max_dev %u "
		    "needs %zu", len, max_dev, SB_FIXED + 2 * (size_t)max_dev);
	v = mdsb_csum(b, SB_FIXED + 2 * (size_t)max_dev);
	if (v != get32(b, OFF(sb_csum)))
		return plan_err(err, errlen, "checksum mismatch: stored %08x, "
		    "computed %08x", get32(b, OFF(sb_csum)), v);
	if ((so = get64(b, OFF(super_offset))) != found_at)
		return plan_err(err, errlen, "superblock found at sector %llu says "
		    "it belongs at %llu", (unsigned long long)found_at,
		    (unsigned long long)so);
	if ((v = get32(b, OFF(feature_map))) & ~(uint32_t)MD_FEATURE_ALL)
		return plan_err(err, errlen, "unknown feature bits %#x",
		    v & ~(uint32_t)MD_FEATURE_ALL);
	if (!zero(b, OFF(pad0), 4) || !zero(b, OFF(pad3), SB_FIXED - OFF(pad3)))
		return plan_err(err, errlen, "reserved fields are not zero");
	return 0;
}

/*
 * The superblock in buf (read at sector found_at) takes level, layout and
 * chunk, its checksum recomputed; every other byte stays as md wrote it,
 * the fields struct mdsb does not carry (a reshape's) too.  Decision 136.
 */
int
mdsb_set_level(void *buf, size_t len, uint64_t found_at, int32_t level,
    uint32_t layout, uint32_t chunk, char *err, size_t errlen)
{
	uint8_t *b = buf;

	if (check_header(b, len, found_at, err, errlen) == -1)
		return -1;
	if (!level_known(level))
		return plan_err(err, errlen, "unknown level %d", level);
	put32(b, OFF(level), (uint32_t)level);
	put32(b, OFF(layout), layout);
	put32(b, OFF(chunksize), chunk);
	put32(b, OFF(sb_csum), mdsb_csum(b, SB_FIXED + 2 * (size_t)get32(b, OFF(max_dev))));
	return 0;
}

static void
unpack(const uint8_t *b, struct mdsb *m)
{
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->feature_map = get32(b, OFF(feature_map));
	memcpy(m->set_uuid, b + OFF(set_uuid), 16);
	memcpy(m->set_name, b + OFF(set_name), 32);
	m->ctime = get64(b, OFF(ctime)) & CTIME_MASK;
	m->level = (int32_t)get32(b, OFF(level));
	m->layout = get32(b, OFF(layout));
	m->size = get64(b, OFF(size));
	m->chunksize = get32(b, OFF(chunksize));
	m->raid_disks = get32(b, OFF(raid_disks));
	m->bitmap_offset = (int32_t)get32(b, OFF(bitmap_offset));
	m->data_offset = get64(b, OFF(data_offset));
	m->data_size = get64(b, OFF(data_size));
	m->super_offset = get64(b, OFF(super_offset));
	m->recovery_offset = get64(b, OFF(recovery_offset));
	m->dev_number = get32(b, OFF(dev_number));
	memcpy(m->device_uuid, b + OFF(device_uuid), 16);
	m->utime = get64(b, OFF(utime)) & CTIME_MASK;
	m->events = get64(b, OFF(events));
	m->resync_offset = get64(b, OFF(resync_offset));
	m->max_dev = get32(b, OFF(max_dev));
	for (i = 0; i < m->max_dev; i++)
		m->dev_roles[i] = get16(b, SB_FIXED + 2 * i);
}

/*
 * Read a superblock found at sector found_at of a member.  Any md v1.x
 * array is accepted, foreign ones too; corrupt or impossible ones are
 * refused with the reason.
 */
int
mdsb_decode(const void *buf, size_t len, uint64_t found_at, struct mdsb *m,
    char *err, size_t errlen)
{
	const uint8_t *b = buf;

	if (check_header(b, len, found_at, err, errlen) == -1)
		return -1;
	unpack(b, m);
	if (!level_known(m->level))
		return plan_err(err, errlen, "unknown md level %d", (int)m->level);
	if (m->raid_disks < 1 || m->raid_disks > MDSB_MAX_DEV_LIMIT)
		return plan_err(err, errlen, "raid_disks %u out of range",
		    m->raid_disks);
	if (m->data_size > UINT64_MAX - m->data_offset ||
	    (m->data_offset < m->super_offset + MDSB_BLOCK / 512 &&
	    m->data_offset + m->data_size > m->super_offset))
		return plan_err(err, errlen, "data area overlaps the superblock");
	if (m->size > m->data_size)
		return plan_err(err, errlen, "used size %llu beyond data size %llu",
		    (unsigned long long)m->size,
		    (unsigned long long)m->data_size);
	if ((m->feature_map & MD_FEATURE_BITMAP_OFFSET) &&
	    m->bitmap_offset == 0)
		return plan_err(err, errlen, "bitmap flagged at offset 0");
	return 0;
}

/*
 * The superblock of member `role` of a new array for a planned tier.
 * Arrays with redundancy get an internal write-intent bitmap 4 KiB after
 * the superblock, as mdadm --create does; raid0 gets mdadm's explicit
 * zone layout (kernels since 5.4 want one).  A new redundant array starts
 * at resync_offset 0, so the kernel syncs it in the background.
 */
int
mdsb_init_tier(struct mdsb *m, const struct plan_tier *t, int role,
    const uint8_t set_uuid[16], const char *set_name, uint64_t now,
    char *err, size_t errlen)
{
	int i;

	if (t->kind == TIER_NONE || t->md_level < 0)
		return plan_err(err, errlen, "tier has no md array");
	if (role < 0 || role >= t->nmembers)
		return plan_err(err, errlen, "role %d outside 0..%d", role,
		    t->nmembers - 1);
	if (strlen(set_name) > MDSB_NAME_MAX)
		return plan_err(err, errlen, "array name \"%s\" longer than %d "
		    "bytes", set_name, MDSB_NAME_MAX);
	memset(m, 0, sizeof(*m));
	memcpy(m->set_uuid, set_uuid, 16);
	memcpy(m->set_name, set_name, strlen(set_name));
	m->ctime = m->utime = now;
	m->level = t->md_level;
	m->layout = t->layout;
	m->size = t->member_sectors;
	m->chunksize = t->chunk;
	m->raid_disks = t->nmembers;
	if (t->kind == TIER_RAID0) {
		m->feature_map |= MD_FEATURE_RAID0_LAYOUT;
	} else {
		m->feature_map |= MD_FEATURE_BITMAP_OFFSET;
		m->bitmap_offset = MDSB_BITMAP_OFFSET;
	}
	m->data_offset = t->data_offset;
	m->data_size = t->part[role].size / 512 - t->data_offset;
	/*
	 * raid0 sizes itself from data_size, not size: keep it to the
	 * planned sectors so the array is exactly the tier the dm map and
	 * docs/recovery.md expect.
	 */
	if (t->kind == TIER_RAID0)
		m->data_size = t->member_sectors;
	m->super_offset = MDSB_SUPER_OFFSET;
	m->dev_number = role;
	m->resync_offset = t->redundant ? 0 : MDSB_RESYNC_CLEAN;
	m->max_dev = MDSB_MAX_DEV;
	for (i = 0; i < MDSB_MAX_DEV; i++)
		m->dev_roles[i] = i < t->nmembers ? i : MDSB_ROLE_SPARE;
	return check_new(m, err, errlen);
}

/* ---- internal bitmap ---- */

#define BM_OFF_MAGIC		0
#define BM_OFF_VERSION		4
#define BM_OFF_UUID		8
#define BM_OFF_EVENTS		24
#define BM_OFF_CLEARED		32
#define BM_OFF_SYNC_SIZE	40
#define BM_OFF_STATE		48
#define BM_OFF_CHUNKSIZE	52
#define BM_OFF_SLEEP		56
#define BM_OFF_BEHIND		60
#define BM_OFF_RESERVED		64
#define BM_OFF_NODES		68

static uint64_t
bitmap_bits(uint64_t sync_sectors, uint32_t chunk)
{
	return (sync_sectors * 512 + chunk - 1) / chunk;
}

/* Bytes the bitmap occupies on each member: superblock + bits, whole 4 KiB. */
size_t
mdsb_bitmap_bytes(const struct mdsb_bitmap *bm)
{
	uint64_t n;

	if (bm->chunksize == 0)
		return 0;
	n = MDSB_BITMAP_SB + (bitmap_bits(bm->sync_size, bm->chunksize) + 7) / 8;
	return (n + 4095) / 4096 * 4096;
}

/*
 * Sectors the bitmap covers: the kernel sizes it by the array's
 * resync_max_sectors, which is one member's size for raid1 and raid5
 * but the array's capacity for raid10 (raid10_size(): whole chunks of a
 * member, divided by the far copies, times the disks, divided by the
 * near copies).  mdadm's Create writes the same sync_size.
 */
uint64_t
mdsb_sync_sectors(const struct mdsb *m)
{
	uint32_t near = m->layout & 0xff, far = (m->layout >> 8) & 0xff;
	unsigned __int128 sectors;

	if (m->level != 10 || m->chunksize == 0 || near == 0 || far == 0)
		return m->size;
	/* A foreign superblock's fields may multiply past 64 bits. */
	sectors = (unsigned __int128)(m->size / m->chunksize / far) * m->raid_disks / near *
	    m->chunksize;
	return sectors > UINT64_MAX ? UINT64_MAX : (uint64_t)sectors;
}

/*
 * Bitmap superblock for an array's superblock.  One bit covers 64 MiB,
 * or more when the bits would not fit the room between the bitmap and
 * the data (at most 128 KiB, as mdadm).
 */
int
mdsb_bitmap_init(struct mdsb_bitmap *bm, const struct mdsb *m, char *err,
    size_t errlen)
{
	uint64_t room, max_bits, sync = mdsb_sync_sectors(m);
	uint32_t chunk = MDSB_BITMAP_CHUNK;

	if (!(m->feature_map & MD_FEATURE_BITMAP_OFFSET) ||
	    m->bitmap_offset <= 0)
		return plan_err(err, errlen, "superblock has no internal bitmap");
	if (m->data_offset < m->super_offset + (uint64_t)m->bitmap_offset + 8)
		return plan_err(err, errlen, "no room for a bitmap before the data");
	room = m->data_offset - m->super_offset - m->bitmap_offset;
	if (room > MDSB_BITMAP_ROOM)
		room = MDSB_BITMAP_ROOM;
	/* Whole 4 KiB only: the bitmap is written rounded up to 4 KiB. */
	room &= ~7ULL;
	max_bits = (room * 512 - MDSB_BITMAP_SB) * 8;
	while (bitmap_bits(sync, chunk) > max_bits) {
		if (chunk >= 1U << 31)
			return plan_err(err, errlen, "array too large for a bitmap");
		chunk *= 2;
	}
	memset(bm, 0, sizeof(*bm));
	bm->version = MDSB_BITMAP_VERSION;
	memcpy(bm->uuid, m->set_uuid, 16);
	bm->events = bm->events_cleared = m->events;
	bm->sync_size = sync;
	bm->chunksize = chunk;
	bm->daemon_sleep = MDSB_BITMAP_DELAY;
	return 0;
}

/*
 * The bytes to write at super_offset + bitmap_offset.  dirty sets every
 * bit, so the first assembly syncs the whole array (mdadm does this for
 * a new array); a clean bitmap claims all regions in sync.
 */
int
mdsb_bitmap_encode(const struct mdsb_bitmap *bm, int dirty, void *buf,
    size_t len, char *err, size_t errlen)
{
	size_t n = mdsb_bitmap_bytes(bm);
	uint8_t *b = buf;

	if (n == 0 || !is_pow2(bm->chunksize) || bm->chunksize < 512)
		return plan_err(err, errlen, "bitmap chunk %u is not a power of two",
		    bm->chunksize);
	if (len < n)
		return plan_err(err, errlen, "buffer of %zu bytes, bitmap needs %zu",
		    len, n);
	memset(b, 0, MDSB_BITMAP_SB);
	memset(b + MDSB_BITMAP_SB, dirty ? 0xff : 0, n - MDSB_BITMAP_SB);
	put32(b, BM_OFF_MAGIC, MDSB_BITMAP_MAGIC);
	put32(b, BM_OFF_VERSION, bm->version);
	memcpy(b + BM_OFF_UUID, bm->uuid, 16);
	put64(b, BM_OFF_EVENTS, bm->events);
	put64(b, BM_OFF_CLEARED, bm->events_cleared);
	put64(b, BM_OFF_SYNC_SIZE, bm->sync_size);
	put32(b, BM_OFF_STATE, bm->state);
	put32(b, BM_OFF_CHUNKSIZE, bm->chunksize);
	put32(b, BM_OFF_SLEEP, bm->daemon_sleep);
	put32(b, BM_OFF_BEHIND, bm->write_behind);
	put32(b, BM_OFF_RESERVED, bm->sectors_reserved);
	put32(b, BM_OFF_NODES, 0);
	return 0;
}

/* Read a bitmap superblock; the checks mirror the kernel's. */
int
mdsb_bitmap_decode(const void *buf, size_t len, struct mdsb_bitmap *bm,
    char *err, size_t errlen)
{
	const uint8_t *b = buf;
	uint32_t v;

	if (len < MDSB_BITMAP_SB)
		return plan_err(err, errlen, "truncated bitmap superblock: %zu "
		    "bytes", len);
	if ((v = get32(b, BM_OFF_MAGIC)) != MDSB_BITMAP_MAGIC)
		return plan_err(err, errlen, "no bitmap (magic %08x)", v);
	memset(bm, 0, sizeof(*bm));
	bm->version = get32(b, BM_OFF_VERSION);
	memcpy(bm->uuid, b + BM_OFF_UUID, 16);
	bm->events = get64(b, BM_OFF_EVENTS);
	bm->events_cleared = get64(b, BM_OFF_CLEARED);
	bm->sync_size = get64(b, BM_OFF_SYNC_SIZE);
	bm->state = get32(b, BM_OFF_STATE);
	bm->chunksize = get32(b, BM_OFF_CHUNKSIZE);
	bm->daemon_sleep = get32(b, BM_OFF_SLEEP);
	bm->write_behind = get32(b, BM_OFF_BEHIND);
	bm->sectors_reserved = get32(b, BM_OFF_RESERVED);
	if (bm->version < 3 || bm->version > 4)
		return plan_err(err, errlen, "bitmap version %u not supported",
		    bm->version);
	if (bm->chunksize < 512 || !is_pow2(bm->chunksize))
		return plan_err(err, errlen, "bitmap chunk %u is not a power of two "
		    "of 512 or more", bm->chunksize);
	if (bm->daemon_sleep < 1)
		return plan_err(err, errlen, "bitmap daemon sleep %u out of range",
		    bm->daemon_sleep);
	return 0;
}
