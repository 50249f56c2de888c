/*
 * The raidd label: encoding, validation and the choice between the two
 * slots.  Fields are written in order through a cursor; the offsets this
 * produces are the table in docs/on-disk-format.md, and the unit tests
 * read them back from raw bytes to hold the two together.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "label.h"
#include "plan-grow.h"

#define HDR_CRC		16	/* offset of the crc32c field */
#define OFF_MEMBERS	256
#define OFF_TIERS	768
#define ENTRY_SIZE	64
#define OFF_PARTS	1280	/* this disk's GPT entry GUIDs, per tier */
#define OFF_MAP		1536	/* version 2: the dm map (OFF_PARTS + 8 * 32) */
#define OFF_SPARES	2048	/* hot spares: count, then member-list entries */

/* The GUIDs and the map must not overlap, nor run past the slot. */
_Static_assert(OFF_PARTS + PLAN_MAX_TIERS * 32 <= OFF_MAP, "GUIDs run into the map");
_Static_assert(OFF_MAP + 8 + PLAN_MAX_SEGS * 24 <= OFF_SPARES, "map into the spares");
_Static_assert(OFF_SPARES + 8 + LABEL_MAX_SPARES * ENTRY_SIZE <= LABEL_SLOT_SIZE,
    "spares past the slot");

/* A reflected crc32 with polynomial poly, initial and final inversion. */
static uint32_t
crc32_reflected(uint32_t poly, uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int k;

	crc = ~crc;
	while (len-- > 0) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (poly & (0U - (crc & 1)));
	}
	return ~crc;
}

/* crc32c (Castagnoli, reflected 0x82f63b78), as iSCSI, ext4 and btrfs. */
uint32_t
label_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return crc32_reflected(0x82f63b78U, crc, buf, len);
}

/* The GPT's crc32 (IEEE 802.3, reflected 0xedb88320), as zlib's. */
uint32_t
gpt_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_reflected(0xedb88320U, crc, buf, len);
}

/* ---- validation ---- */

static int
zero16(const uint8_t u[16])
{
	static const uint8_t z[16];

	return memcmp(u, z, 16) == 0;
}

int
label_role_of(const struct label *l, int t, int m)
{
	for (int r = 0; r < l->tier[t].nmembers && r < PLAN_MAX_DISKS; r++)
		if (l->tier[t].member[r] == m)
			return r;
	return -1;
}

int
label_is_join(const struct label *l)
{
	return l->intent.op == LABEL_OP_ADDING && l->intent.covered != 0;
}

int
label_joins(const struct label *l, int t)
{
	return l->intent.op == LABEL_OP_ADDING && t >= 0 && t < 8 &&
	    (l->intent.covered & 1U << t);
}

/*
 * A join's intent (Decision 133): an old member of an SHR volume, named
 * by the intent, takes the last role of each tier covered (bit t: tier
 * t, none past ntiers) and no other role there; its undo (label_drop_joined)
 * takes exactly that role away.  No level change: the tier's kind says it.
 */
static int
check_join(const struct label *l, char *err, size_t errlen)
{
	const struct label_intent *in = &l->intent;

	if (l->level != LEVEL_SHR || in->level != 0 || in->disk >= l->ndisks ||
	    (l->ntiers < 8 && (in->covered >> l->ntiers)))
		return plan_err(err, errlen, "a join's intent on a %u volume names disk %u "
		    "of %u and tiers 0x%x of %u", l->level, in->disk, l->ndisks,
		    in->covered, l->ntiers);
	for (int t = 0; t < l->ntiers && t < 8; t++) {
		const struct label_tier *lt = &l->tier[t];

		if (!(in->covered & 1U << t))
			continue;
		/* Read before check_tiers: the count is not proven yet. */
		if (lt->nmembers < 3 || lt->nmembers > PLAN_MAX_DISKS ||
		    lt->member[lt->nmembers - 1] != in->disk ||
		    label_role_of(l, t, in->disk) != lt->nmembers - 1)
			return plan_err(err, errlen, "a join's tier %d does not end with "
			    "disk %u", t + 1, in->disk);
	}
	return 0;
}

static int
check_intent(const struct label *l, char *err, size_t errlen)
{
	const struct label_intent *in = &l->intent;

	if (in->op >= LABEL_OP_COUNT)
		return plan_err(err, errlen, "unknown intent %u", in->op);
	if (in->disk != LABEL_NO_DISK && in->disk >= l->ndisks)
		return plan_err(err, errlen, "intent names disk %u of %u",
		    in->disk, l->ndisks);
	/* An add's disk is the one it joins at the end (add.c: replan, roll_back
	   drops the last disk): naming an old member, its undo would drop that
	   member and every one after it.  A join (covered: the tiers it joins,
	   Decision 133) names the old member whose room joins them. */
	if (in->op == LABEL_OP_ADDING && in->covered == 0 &&
	    (l->ndisks < 2 || in->disk != l->ndisks - 1))
		return plan_err(err, errlen, "an add's intent names disk %u of %u, not the "
		    "last", in->disk, l->ndisks);
	if (in->op == LABEL_OP_ADDING && in->covered && check_join(l, err, errlen) == -1)
		return -1;
	if (in->op == LABEL_OP_NONE && (in->step || in->target || in->covered))
		return plan_err(err, errlen, "idle intent with a step or target");
	if (in->op != LABEL_OP_DELETING && in->op != LABEL_OP_EXPANDING &&
	    in->op != LABEL_OP_ADDING && in->covered)
		return plan_err(err, errlen, "members covered by a %u intent", in->op);
	/* The one level change an add makes (Decision 106): a raid1 becomes raid5. */
	if (in->level != 0 && (in->op != LABEL_OP_ADDING || in->level != LEVEL_RAID5 ||
	    (l->level != LEVEL_RAID1 && l->level != LEVEL_RAID5)))
		return plan_err(err, errlen, "intent to make a %u volume level %u",
		    l->level, in->level);
	if (in->op == LABEL_OP_DELETING && l->ndisks < 8 && (in->covered >> l->ndisks))
		return plan_err(err, errlen, "delete covers members past %u", l->ndisks);
	/* A grow's covered: bit t = tier t is new and its array not made yet. */
	if (in->op == LABEL_OP_EXPANDING && l->ntiers < 8 && (in->covered >> l->ntiers))
		return plan_err(err, errlen, "grow covers tiers past %u", l->ntiers);
	if (in->target > LABEL_GEN_MAX)
		return plan_err(err, errlen, "intent target generation %llu out of range",
		    (unsigned long long)in->target);
	if (in->op != LABEL_OP_NONE && in->target <= l->generation)
		return plan_err(err, errlen, "intent target generation %llu "
		    "not after %llu", (unsigned long long)in->target,
		    (unsigned long long)l->generation);
	return 0;
}

static int
check_members(const struct label *l, char *err, size_t errlen)
{
	int i, j;

	for (i = 0; i < l->ndisks; i++) {
		if (memchr(l->member[i].serial, '\0', LABEL_SERIAL_MAX) == NULL)
			return plan_err(err, errlen, "member %d: serial not "
			    "terminated", i);
		if (zero16(l->member[i].uuid))
			return plan_err(err, errlen, "member %d has no uuid", i);
		for (j = 0; j < i; j++)
			if (memcmp(l->member[i].uuid, l->member[j].uuid, 16) == 0)
				return plan_err(err, errlen, "members %d and %d "
				    "share a uuid", j, i);
	}
	return 0;
}

/* This disk's partition of tier t: aligned, after the head, on the disk. */
static int
check_part(const struct label *l, int t, char *err, size_t errlen)
{
	const struct label_tier *ti = &l->tier[t];
	uint64_t disk = l->member[l->position].size;

	if (ti->role == LABEL_NO_ROLE) {
		/* A grow's new tier: every disk's label says where its band is. */
		if (l->intent.op == LABEL_OP_EXPANDING && t < 8 && (l->intent.covered & 1U << t) &&
		    zero16(ti->part_guid) && zero16(ti->part_type))
			return 0;
		if (ti->start || ti->size || !zero16(ti->part_guid) ||
		    !zero16(ti->part_type))
			return plan_err(err, errlen, "tier %d: partition on a "
			    "disk that is not a member", t);
		return 0;
	}
	if (zero16(ti->part_guid) != zero16(ti->part_type))
		return plan_err(err, errlen, "tier %d: a partition GUID without "
		    "a type GUID, or a type without a GUID", t);
	if (ti->member[ti->role] != l->position)
		return plan_err(err, errlen, "tier %d: role %u is disk %u, not "
		    "this one (%u)", t, ti->role, ti->member[ti->role],
		    l->position);
	if (ti->start < PLAN_HEAD || ti->start % PLAN_ALIGN ||
	    ti->size == 0 || ti->size % PLAN_ALIGN ||
	    ti->size > UINT64_MAX - ti->start ||
	    (disk && ti->start + ti->size > disk))
		return plan_err(err, errlen, "tier %d: impossible partition "
		    "%llu+%llu", t, (unsigned long long)ti->start,
		    (unsigned long long)ti->size);
	return 0;
}

static int
check_tier(const struct label *l, int t, char *err, size_t errlen)
{
	const struct label_tier *ti = &l->tier[t];
	int r, s, in = 0;

	if (ti->kind >= TIER_KIND_COUNT)
		return plan_err(err, errlen, "tier %d: unknown kind %u", t,
		    ti->kind);
	if (ti->nmembers < 1 || ti->nmembers > l->ndisks ||
	    (ti->kind == TIER_NONE && ti->nmembers != 1))
		return plan_err(err, errlen, "tier %d: %u members", t,
		    ti->nmembers);
	if ((ti->kind == TIER_NONE) != zero16(ti->array_uuid))
		return plan_err(err, errlen, ti->kind == TIER_NONE ?
		    "tier %d: a bare partition with an array uuid" :
		    "tier %d: md tier without an array uuid", t);
	if (ti->role != LABEL_NO_ROLE && ti->role >= ti->nmembers)
		return plan_err(err, errlen, "tier %d: role %u of %u", t,
		    ti->role, ti->nmembers);
	for (r = 0; r < ti->nmembers; r++) {
		if (ti->member[r] >= l->ndisks)
			return plan_err(err, errlen, "tier %d: member %u of %u "
			    "disks", t, ti->member[r], l->ndisks);
		for (s = 0; s < r; s++)
			if (ti->member[s] == ti->member[r])
				return plan_err(err, errlen, "tier %d: disk %u "
				    "twice", t, ti->member[r]);
		in |= ti->member[r] == l->position;
	}
	if (in != (ti->role != LABEL_NO_ROLE))
		return plan_err(err, errlen, "tier %d: role disagrees with the "
		    "member list", t);
	return check_part(l, t, err, errlen);
}

/* Spares: a known count, each named, terminated and listed once. */
static int
check_spares(const struct label *l, char *err, size_t errlen)
{
	if (l->nspares > LABEL_MAX_SPARES)
		return plan_err(err, errlen, "%u spares", l->nspares);
	for (int i = 0; i < LABEL_MAX_SPARES; i++) {
		const struct label_member *sp = &l->spare[i];

		if (i >= l->nspares) {
			if (!zero16(sp->uuid) || sp->serial[0] || sp->size)
				return plan_err(err, errlen, "spare %d past the count", i);
			continue;
		}
		if (zero16(sp->uuid) || memchr(sp->serial, '\0', LABEL_SERIAL_MAX) == NULL ||
		    sp->size == 0)
			return plan_err(err, errlen, "spare %d: no uuid, serial or size", i);
		for (int k = 0; k < i; k++)
			if (memcmp(l->spare[k].uuid, sp->uuid, 16) == 0)
				return plan_err(err, errlen, "spare %d listed twice", i);
	}
	return 0;
}

/* A map continues each tier where it left off and ends with every tier whole. */
static int
check_map(const struct label *l, char *err, size_t errlen)
{
	uint64_t done[PLAN_MAX_TIERS] = { 0 };
	int i;

	if (l->nsegs > PLAN_MAX_SEGS)
		return plan_err(err, errlen, "%u map segments", l->nsegs);
	for (i = 0; i < l->nsegs; i++) {
		const struct label_seg *s = &l->seg[i];

		if (s->tier >= l->ntiers || s->len == 0 || s->offset != done[s->tier] ||
		    s->len > l->tier[s->tier].tier_size - done[s->tier])
			return plan_err(err, errlen, "map segment %d does not continue "
			    "tier %u", i, s->tier);
		done[s->tier] += s->len;
	}
	for (i = 0; l->nsegs && i < l->ntiers; i++)
		if (done[i] != l->tier[i].tier_size)
			return plan_err(err, errlen, "the map leaves out part of tier %d", i);
	return 0;
}

/* No two partitions of this disk overlap; the tiers add up to the volume. */
static int
check_tiers(const struct label *l, char *err, size_t errlen)
{
	const struct label_tier *a, *b;
	uint64_t sum = 0;
	int t, u;

	for (t = 0; t < l->ntiers; t++) {
		if (check_tier(l, t, err, errlen) == -1)
			return -1;
		a = &l->tier[t];
		for (u = 0; u < t; u++) {
			b = &l->tier[u];
			if (a->size && b->size && a->start < b->start + b->size &&
			    b->start < a->start + a->size)
				return plan_err(err, errlen, "tiers %d and %d "
				    "overlap", u, t);
		}
		if (a->tier_size > UINT64_MAX - sum)
			return plan_err(err, errlen, "tier sizes overflow");
		sum += a->tier_size;
	}
	if (sum != l->size)
		return plan_err(err, errlen, "tiers add up to %llu bytes, the "
		    "volume has %llu", (unsigned long long)sum,
		    (unsigned long long)l->size);
	return check_map(l, err, errlen);
}

/* Everything a label must satisfy, whether about to be written or read. */
int
label_check(const struct label *l, char *err, size_t errlen)
{
	if (l->generation == 0 || l->generation > LABEL_GEN_MAX)
		return plan_err(err, errlen, "generation %llu out of range",
		    (unsigned long long)l->generation);
	if (memchr(l->name, '\0', LABEL_NAME_MAX) == NULL || l->name[0] == '\0')
		return plan_err(err, errlen, "volume name empty or unterminated");
	if (l->level >= LEVEL_COUNT || l->fs >= LABEL_FS_COUNT ||
	    (l->flags & ~LABEL_F_ENCRYPTED))
		return plan_err(err, errlen, "unknown level, fs or flags "
		    "(%u, %u, %#x)", l->level, l->fs, l->flags);
	if (l->ndisks < 1 || l->ndisks > PLAN_MAX_DISKS ||
	    l->position >= l->ndisks)
		return plan_err(err, errlen, "disk %u of %u", l->position,
		    l->ndisks);
	if (l->ntiers < 1 || l->ntiers > PLAN_MAX_TIERS)
		return plan_err(err, errlen, "%u tiers", l->ntiers);
	if (l->ndisks < 8 && (l->failed >> l->ndisks))
		return plan_err(err, errlen, "failed members past %u", l->ndisks);
	for (int m = 0; m < PLAN_MAX_DISKS; m++)
		if (l->joined[m] > l->generation || (m >= l->ndisks && l->joined[m]))
			return plan_err(err, errlen, "member %d joined at generation %llu",
			    m, (unsigned long long)l->joined[m]);
	if (check_intent(l, err, errlen) == -1 ||
	    check_members(l, err, errlen) == -1 ||
	    check_spares(l, err, errlen) == -1)
		return -1;
	return check_tiers(l, err, errlen);
}

/* ---- encoding: a cursor writes fields in on-disk order ---- */

struct wcur {
	uint8_t	*b;
	size_t	 off;
};

static void
wbytes(struct wcur *c, const void *p, size_t n)
{
	memcpy(c->b + c->off, p, n);
	c->off += n;
}

static void
w8(struct wcur *c, uint8_t v)
{
	wbytes(c, &v, 1);
}

static void
w32(struct wcur *c, uint32_t v)
{
	v = htole32(v);
	wbytes(c, &v, 4);
}

static void
w64(struct wcur *c, uint64_t v)
{
	v = htole64(v);
	wbytes(c, &v, 8);
}

static void
encode_tier(struct wcur *c, const struct label_tier *t)
{
	w8(c, t->kind);
	w8(c, t->nmembers);
	w8(c, t->role);
	c->off += 1;
	w32(c, t->chunk);
	wbytes(c, t->member, PLAN_MAX_DISKS);
	w64(c, t->start);
	w64(c, t->size);
	w64(c, t->tier_size);
	wbytes(c, t->array_uuid, 16);
	c->off += 8;
}

int
label_encode(const struct label *l, void *buf, size_t len, char *err,
    size_t errlen)
{
	struct wcur c = { buf, 0 };
	int i;

	if (len < LABEL_SLOT_SIZE)
		return plan_err(err, errlen, "buffer of %zu bytes, a slot has "
		    "%d", len, LABEL_SLOT_SIZE);
	if (label_check(l, err, errlen) == -1)
		return -1;
	memset(buf, 0, LABEL_SLOT_SIZE);
	wbytes(&c, LABEL_MAGIC, 8);
	/* Version 1 readers know no map: only a grown volume says 2. */
	w32(&c, l->nsegs ? 2 : 1);
	w32(&c, LABEL_SLOT_SIZE);
	c.off += 8;				/* crc, header flags */
	w64(&c, l->generation);
	wbytes(&c, l->volume_uuid, 16);
	wbytes(&c, l->name, LABEL_NAME_MAX);
	w8(&c, l->level), w8(&c, l->fs), w8(&c, l->flags);
	w8(&c, l->ndisks), w8(&c, l->position), w8(&c, l->ntiers);
	w8(&c, l->failed);
	c.off += 1;
	w64(&c, l->created);
	w64(&c, l->size);
	w8(&c, l->intent.op), w8(&c, l->intent.step), w8(&c, l->intent.disk);
	w8(&c, l->intent.covered);
	w8(&c, l->intent.level);
	c.off += 3;
	w64(&c, l->intent.target);
	wbytes(&c, l->unit, 16);
	for (i = 0; i < PLAN_MAX_DISKS; i++)
		w64(&c, l->joined[i]);
	for (i = 0, c.off = OFF_MEMBERS; i < l->ndisks; i++) {
		wbytes(&c, l->member[i].uuid, 16);
		wbytes(&c, l->member[i].serial, LABEL_SERIAL_MAX);
		w64(&c, l->member[i].size);
	}
	for (i = 0, c.off = OFF_TIERS; i < l->ntiers; i++)
		encode_tier(&c, &l->tier[i]);
	for (i = 0, c.off = OFF_PARTS; i < l->ntiers; i++) {
		wbytes(&c, l->tier[i].part_guid, 16);
		wbytes(&c, l->tier[i].part_type, 16);
	}
	c.off = OFF_MAP;
	w8(&c, l->nsegs);
	for (i = 0, c.off = OFF_MAP + 8; i < l->nsegs; i++) {
		w8(&c, l->seg[i].tier);
		c.off += 7;
		w64(&c, l->seg[i].offset);
		w64(&c, l->seg[i].len);
	}
	c.off = OFF_SPARES;
	w8(&c, l->nspares);
	for (i = 0, c.off = OFF_SPARES + 8; i < l->nspares; i++) {
		wbytes(&c, l->spare[i].uuid, 16);
		wbytes(&c, l->spare[i].serial, LABEL_SERIAL_MAX);
		w64(&c, l->spare[i].size);
	}
	c.off = HDR_CRC;
	w32(&c, label_crc32c(0, buf, LABEL_SLOT_SIZE));
	return 0;
}

/* ---- decoding ---- */

struct rcur {
	const uint8_t	*b;
	size_t		 off;
};

static void
rbytes(struct rcur *c, void *p, size_t n)
{
	memcpy(p, c->b + c->off, n);
	c->off += n;
}

static uint8_t
r8(struct rcur *c)
{
	return c->b[c->off++];
}

static uint32_t
r32(struct rcur *c)
{
	uint32_t v;

	rbytes(c, &v, 4);
	return le32toh(v);
}

static uint64_t
r64(struct rcur *c)
{
	uint64_t v;

	rbytes(c, &v, 8);
	return le64toh(v);
}

static void
decode_tier(struct rcur *c, struct label_tier *t)
{
	t->kind = r8(c);
	t->nmembers = r8(c);
	t->role = r8(c);
	c->off += 1;
	t->chunk = r32(c);
	rbytes(c, t->member, PLAN_MAX_DISKS);
	t->start = r64(c);
	t->size = r64(c);
	t->tier_size = r64(c);
	rbytes(c, t->array_uuid, 16);
	c->off += 8;
}

static void
decode_body(struct rcur *c, struct label *l)
{
	int i;

	c->off = 24;
	l->generation = r64(c);
	rbytes(c, l->volume_uuid, 16);
	rbytes(c, l->name, LABEL_NAME_MAX);
	l->level = r8(c), l->fs = r8(c), l->flags = r8(c);
	l->ndisks = r8(c), l->position = r8(c), l->ntiers = r8(c);
	l->failed = r8(c);
	c->off += 1;
	l->created = r64(c);
	l->size = r64(c);
	l->intent.op = r8(c), l->intent.step = r8(c), l->intent.disk = r8(c);
	l->intent.covered = r8(c);
	l->intent.level = r8(c);
	c->off += 3;
	l->intent.target = r64(c);
	rbytes(c, l->unit, 16);
	for (i = 0; i < PLAN_MAX_DISKS; i++)
		l->joined[i] = r64(c);
	for (i = 0, c->off = OFF_MEMBERS; i < PLAN_MAX_DISKS; i++) {
		rbytes(c, l->member[i].uuid, 16);
		rbytes(c, l->member[i].serial, LABEL_SERIAL_MAX);
		l->member[i].size = r64(c);
	}
	for (i = 0, c->off = OFF_TIERS; i < PLAN_MAX_TIERS; i++)
		decode_tier(c, &l->tier[i]);
	for (i = 0, c->off = OFF_PARTS; i < PLAN_MAX_TIERS; i++) {
		rbytes(c, l->tier[i].part_guid, 16);
		rbytes(c, l->tier[i].part_type, 16);
	}
	c->off = OFF_MAP;
	l->nsegs = r8(c);
	for (i = 0, c->off = OFF_MAP + 8; i < PLAN_MAX_SEGS; i++) {
		l->seg[i].tier = r8(c);
		c->off += 7;
		l->seg[i].offset = r64(c);
		l->seg[i].len = r64(c);
	}
	c->off = OFF_SPARES;
	l->nspares = r8(c);
	for (i = 0, c->off = OFF_SPARES + 8; i < LABEL_MAX_SPARES; i++) {
		rbytes(c, l->spare[i].uuid, 16);
		rbytes(c, l->spare[i].serial, LABEL_SERIAL_MAX);
		l->spare[i].size = r64(c);
	}
}

static int
all_zero(const uint8_t *b, size_t n)
{
	while (n-- > 0)
		if (*b++)
			return 0;
	return 1;
}

/* Read one slot; the error says why it cannot be used. */
int
label_decode(const void *buf, size_t len, struct label *l, char *err,
    size_t errlen)
{
	struct rcur c = { buf, 8 };
	uint32_t version, length, crc;
	uint8_t tmp[LABEL_SLOT_SIZE];

	if (len < LABEL_SLOT_SIZE)
		return plan_err(err, errlen, "truncated: %zu bytes, a slot "
		    "has %d", len, LABEL_SLOT_SIZE);
	if (memcmp(buf, LABEL_MAGIC, 8) != 0)
		return plan_err(err, errlen, all_zero(buf, LABEL_SLOT_SIZE) ?
		    "empty slot" : "no raidd label");
	version = r32(&c);
	length = r32(&c);
	crc = r32(&c);
	if (version > LABEL_VERSION)
		return plan_err(err, errlen, "label version %u is newer than "
		    "this raidd (%d)", version, LABEL_VERSION);
	if (version < 1 || length != LABEL_SLOT_SIZE)
		return plan_err(err, errlen, "impossible version %u or length "
		    "%u", version, length);
	memcpy(tmp, buf, LABEL_SLOT_SIZE);
	memset(tmp + HDR_CRC, 0, 4);
	if (label_crc32c(0, tmp, LABEL_SLOT_SIZE) != crc)
		return plan_err(err, errlen, "checksum mismatch (torn or "
		    "corrupt write)");
	memset(l, 0, sizeof(*l));
	decode_body(&c, l);
	/* Version 1 had no map: whatever its bytes hold is no map. */
	if (version == 1 && l->nsegs != 0)
		return plan_err(err, errlen, "a version 1 label with a map");
	if (version == 2 && l->nsegs == 0)
		return plan_err(err, errlen, "a version 2 label without a map");
	if (label_check(l, err, errlen) == -1)
		return -1;
	if (l->generation > LABEL_GEN_READ_MAX)
		return plan_err(err, errlen, "generation %llu is beyond any real use",
		    (unsigned long long)l->generation);
	return 0;
}

/*
 * Pick the slot to trust: the valid one with the higher generation.  The
 * other slot is where the next write goes, so the winner is never
 * overwritten.  Two valid slots of one generation must be byte-identical;
 * if not, something other than raidd wrote them and nothing is trusted.
 * Returns 0 (the winner is slot 1 - *next_slot) or -1; then *next_slot
 * is 0 when neither slot is valid, -1 when both are but disagree.
 */
int
label_choose(const void *slot0, const void *slot1, size_t len,
    struct label *out, int *next_slot, char *err, size_t errlen)
{
	char e0[PLAN_ERRLEN], e1[PLAN_ERRLEN];
	struct label l0, l1;
	int ok0, ok1;

	ok0 = label_decode(slot0, len, &l0, e0, sizeof(e0)) == 0;
	ok1 = label_decode(slot1, len, &l1, e1, sizeof(e1)) == 0;
	*next_slot = 0;
	if (!ok0 && !ok1)
		return plan_err(err, errlen, "slot 0: %s; slot 1: %s", e0, e1);
	if (ok0 && ok1 && l0.generation == l1.generation &&
	    memcmp(slot0, slot1, LABEL_SLOT_SIZE) != 0) {
		*next_slot = -1;
		return plan_err(err, errlen, "both slots hold generation %llu "
		    "with different contents", (unsigned long long)l0.generation);
	}
	if (ok0 && (!ok1 || l0.generation >= l1.generation)) {
		*out = l0;
		*next_slot = 1;
	} else {
		*out = l1;
		*next_slot = 0;
	}
	return 0;
}

/*
 * Does a buffer read from the start of a disk hold a raidd label, valid
 * or not?  For signature scans: even a damaged label marks a disk that
 * belonged to a volume.  Returns 1 and the slot's offset, or 0.
 */
int
label_probe(const void *head, size_t len, uint64_t *off)
{
	const uint8_t *b = head;

	if (len >= LABEL_SLOT0 + 8 && memcmp(b + LABEL_SLOT0, LABEL_MAGIC, 8) == 0) {
		*off = LABEL_SLOT0;
		return 1;
	}
	if (len >= LABEL_SLOT1 + 8 && memcmp(b + LABEL_SLOT1, LABEL_MAGIC, 8) == 0) {
		*off = LABEL_SLOT1;
		return 1;
	}
	return 0;
}

/* The generation of the next write; it never wraps. */
int
label_bump(struct label *l, char *err, size_t errlen)
{
	if (l->generation >= LABEL_GEN_MAX)
		return plan_err(err, errlen, "label generation exhausted");
	l->generation++;
	return 0;
}

/* This disk's partition of a planned tier, if it is a member. */
static void
tier_from_plan(struct label_tier *lt, const struct plan_tier *pt, int pos,
    const uint8_t array_uuid[16])
{
	int r;

	lt->kind = pt->kind;
	lt->nmembers = pt->nmembers;
	lt->role = LABEL_NO_ROLE;
	lt->chunk = pt->chunk;
	lt->tier_size = pt->size;
	if (pt->kind != TIER_NONE)
		memcpy(lt->array_uuid, array_uuid, 16);
	for (r = 0; r < pt->nmembers; r++) {
		lt->member[r] = pt->part[r].disk;
		if (pt->part[r].disk != pos)
			continue;
		lt->role = r;
		lt->start = pt->part[r].start;
		lt->size = pt->part[r].size;
	}
}

/* The plan's map; none (version 1) while it is every tier whole in order. */
void
label_map_from_plan(struct label *l, const struct plan *p)
{
	int i, plain = p->nsegs == p->ntiers;

	for (i = 0; plain && i < p->nsegs; i++)
		plain = p->seg[i].tier == i && p->seg[i].offset == 0 &&
		    p->seg[i].len == p->tier[i].size;
	memset(l->seg, 0, sizeof(l->seg));
	l->nsegs = plain ? 0 : (uint8_t)p->nsegs;
	for (i = 0; i < l->nsegs; i++) {
		l->seg[i].tier = (uint8_t)p->seg[i].tier;
		l->seg[i].offset = p->seg[i].offset;
		l->seg[i].len = p->seg[i].len;
	}
}

/*
 * The label of disk `position` of a planned volume, at generation 1 with
 * no intent.  members[] follows the plan's disk order.
 */
int
label_from_plan(struct label *l, const struct plan *p, int position,
    const char *name, const uint8_t volume_uuid[16],
    const uint8_t array_uuid[][16], const struct label_member *members,
    uint64_t now, char *err, size_t errlen)
{
	int i;

	if (position < 0 || position >= p->ndisks)
		return plan_err(err, errlen, "disk %d of %d", position,
		    p->ndisks);
	if (strlen(name) >= LABEL_NAME_MAX)
		return plan_err(err, errlen, "volume name longer than %d bytes",
		    LABEL_NAME_MAX - 1);
	memset(l, 0, sizeof(*l));
	l->generation = 1;
	memcpy(l->volume_uuid, volume_uuid, 16);
	memcpy(l->name, name, strlen(name));
	l->level = p->level;
	l->ndisks = p->ndisks;
	l->position = position;
	l->ntiers = p->ntiers;
	l->created = now;
	l->size = p->size;
	l->intent.disk = LABEL_NO_DISK;
	memcpy(l->member, members, p->ndisks * sizeof(*members));
	for (i = 0; i < p->ntiers; i++)
		tier_from_plan(&l->tier[i], &p->tier[i], position,
		    array_uuid[i]);
	label_map_from_plan(l, p);
	return label_check(l, err, errlen);
}

/* ---- an older and a newer label of one volume compared ---- */

/* The same disk in an older and a newer label; volume.grow may only enlarge it. */
static int
member_kept(const struct label_member *older, const struct label_member *newer)
{
	return memcmp(older->uuid, newer->uuid, 16) == 0 && older->size <= newer->size &&
	    strncmp(older->serial, newer->serial, LABEL_SERIAL_MAX) == 0;
}

/*
 * Member m is the same disk in a and b, or the newer label says it
 * took its place (volume.repair) after the older one was written.
 */
static int
same_member(const struct label *a, const struct label *b, int m)
{
	const struct label *older = a->generation <= b->generation ? a : b;
	const struct label *newer = older == a ? b : a;

	return member_kept(&older->member[m], &newer->member[m]) ||
	    newer->joined[m] > older->generation;
}

/* l's own member entry was replaced in v's label since l was written. */
int
label_replaced(const struct label *l, const struct label *newest)
{
	int m = l->position;

	return m < newest->ndisks && l->generation < newest->generation &&
	    newest->joined[m] > l->generation &&
	    !member_kept(&l->member[m], &newest->member[m]);
}

/* Segment k of l's map: the map's, or tier k whole (a map of version 1). */
static struct label_seg
seg_of(const struct label *l, int k)
{
	struct label_seg s = { (uint8_t)k, 0, l->tier[k].tier_size };

	return l->nsegs ? l->seg[k] : s;
}

/*
 * Every byte of a's volume is where b's map puts it (volume.grow only
 * appends, and never moves what the volume held): a map reordered
 * elsewhere would put the data at other offsets.
 */
static int
map_kept(const struct label *a, const struct label *b)
{
	int na = a->nsegs ? a->nsegs : a->ntiers, nb = b->nsegs ? b->nsegs : b->ntiers;
	uint64_t ao = 0, bo = 0, n;
	int i = 0, j = 0;

	while (i < na) {
		struct label_seg x = seg_of(a, i), y;

		if (x.len == 0) {
			i++;
			continue;
		}
		if (j >= nb)
			return 0;
		if ((y = seg_of(b, j)).len == 0) {
			j++;
			continue;
		}
		if (x.tier != y.tier || x.offset + ao != y.offset + bo)
			return 0;
		n = x.len - ao < y.len - bo ? x.len - ao : y.len - bo;
		ao += n;
		bo += n;
		if (ao == x.len)
			i++, ao = 0;
		if (bo == y.len)
			j++, bo = 0;
	}
	return 1;
}

/*
 * Disks b has past a's: each joined (volume.add_disk) after a was
 * written, so b must be the newer label.
 */
static int
members_added(const struct label *a, const struct label *b)
{
	if (b->ndisks == a->ndisks)
		return 1;
	if (a->generation >= b->generation)
		return 0;
	for (int m = a->ndisks; m < b->ndisks; m++)
		if (b->joined[m] <= a->generation)
			return 0;
	return 1;
}

/*
 * A tier keeps its roles; the roles it gained are held by disks that
 * joined (above), or the last by the old member a join names (joiner,
 * -1 for none: Decision 133).
 */
static int
roles_kept(const struct label_tier *x, const struct label_tier *y, int olddisks, int joiner)
{
	if (x->nmembers > y->nmembers || x->nmembers > PLAN_MAX_DISKS ||
	    y->nmembers > PLAN_MAX_DISKS || memcmp(x->member, y->member, x->nmembers) != 0)
		return 0;
	for (int r = x->nmembers; r < y->nmembers; r++)
		if (y->member[r] < olddisks && (y->member[r] != joiner || r != y->nmembers - 1))
			return 0;
	return 1;
}

/* The old member a's or b's join names for tier t (Decision 133), or -1. */
static int
joiner(const struct label *a, const struct label *b, int t)
{
	if (label_joins(b, t))
		return b->intent.disk;
	if (label_joins(a, t))
		return a->intent.disk;
	return -1;
}

/*
 * The one level change between generations (volume.add_disk, Decision
 * 106): a raid1 of two that disks joined after a became raid5, with the
 * chunk md's takeover gave it: a raid5 of three.
 */
static int
level_kept(const struct label *a, const struct label *b)
{
	const struct label_tier *x = &a->tier[0], *y = &b->tier[0];

	if (a->level == b->level)
		return 1;
	return a->level == LEVEL_RAID1 && b->level == LEVEL_RAID5 && a->ntiers == 1 &&
	    b->ntiers == 1 && b->ndisks == 3 && x->kind == TIER_RAID1 && x->chunk == 0 &&
	    y->kind == TIER_RAID5 && y->chunk == PLAN_TAKEOVER_CHUNK && y->nmembers == 3;
}

/*
 * Tier t of a and of b are the same kind of array, or the level change
 * above, or an SHR tier's alike (Decision 118): a raid1 that a disk
 * joined after a (the last of b's) is a raid5 of three with md's
 * takeover chunk.
 */
static int
kind_kept(const struct label *a, const struct label *b, int t)
{
	const struct label_tier *x = &a->tier[t], *y = &b->tier[t];

	if (x->kind == y->kind && x->chunk == y->chunk)
		return 1;
	if (a->level == LEVEL_SHR && b->level == LEVEL_SHR)
		return x->kind == TIER_RAID1 && x->chunk == 0 && x->nmembers <= 3 &&
		    y->kind == TIER_RAID5 && y->chunk == PLAN_TAKEOVER_CHUNK &&
		    y->nmembers == 3 && ((y->member[2] == b->ndisks - 1 &&
		    (x->nmembers == 3 || b->joined[b->ndisks - 1] > a->generation)) ||
		    y->member[2] == joiner(a, b, t));
	return a->level != b->level && level_kept(a, b);
}

/*
 * An expanding b's covered tiers (Decision 110) against the older a:
 * each is new since a (a lacks it, or covers it too: the same grow),
 * and each tier a lacks is covered, its array not made yet (a grow
 * makes tiers only after every member present carries its first
 * label).  Otherwise b would have start_tier skip an old tier, give
 * its members new GUIDs (grow_decide), or add a tier no one asked for.
 */
static int
covered_kept(const struct label *a, const struct label *b)
{
	unsigned ac = a->intent.op == LABEL_OP_EXPANDING ? a->intent.covered : 0;

	if (b->intent.op != LABEL_OP_EXPANDING)
		return 1;
	for (int t = 0; t < b->ntiers; t++) {
		int bit = t < 8 && (b->intent.covered & 1U << t);

		if (t < a->ntiers ? bit && !(t < 8 && (ac & 1U << t)) : !bit)
			return 0;
	}
	return 1;
}

/*
 * l with its join undone (Decision 133): the old member the intent names
 * leaves the last role of each tier it joined (and its own label's place
 * there, when l is its), and the intent clears.  The generation is the
 * caller's to set.
 */
void
label_drop_joined(struct label *l)
{
	int n = l->intent.disk;

	for (int t = 0; t < l->ntiers; t++) {
		struct label_tier *lt = &l->tier[t];

		if (!label_joins(l, t) || lt->nmembers == 0 || lt->member[lt->nmembers - 1] != n)
			continue;
		lt->member[--lt->nmembers] = 0;
		if (l->position != n)
			continue;
		lt->role = LABEL_NO_ROLE;
		lt->start = lt->size = 0;
		memset(lt->part_guid, 0, sizeof(lt->part_guid));
		memset(lt->part_type, 0, sizeof(lt->part_type));
	}
	memset(&l->intent, 0, sizeof(l->intent));
	l->intent.disk = LABEL_NO_DISK;
}

/* A join in a rolled back since: b, newer, lacks its member in a tier it joined. */
static int
join_undone(const struct label *a, const struct label *b)
{
	if (a->intent.op != LABEL_OP_ADDING || a->intent.covered == 0 ||
	    a->generation >= b->generation)
		return 0;
	for (int t = 0; t < a->ntiers && t < b->ntiers; t++)
		if (label_joins(a, t) && label_role_of(b, t, a->intent.disk) < 0)
			return 1;
	return 0;
}

/*
 * l with its add undone (add.c's roll back): the disk the adding intent
 * names leaves every tier's list, a jbod's tier of its own on it goes
 * with its bytes of the map, and the intent clears.  The generation is
 * the caller's to set.
 */
void
label_drop_added(struct label *l)
{
	int n = l->intent.disk;

	for (int t = 0; t < l->ntiers; t++) {
		struct label_tier *lt = &l->tier[t];

		while (lt->nmembers > 0 && lt->member[lt->nmembers - 1] == n)
			lt->member[--lt->nmembers] = 0;
	}
	while (l->ntiers > 1 && l->tier[l->ntiers - 1].nmembers == 0) {
		int t = --l->ntiers;

		l->size -= l->tier[t].tier_size;
		memset(&l->tier[t], 0, sizeof(l->tier[t]));
		while (l->nsegs > 0 && l->seg[l->nsegs - 1].tier == t)
			memset(&l->seg[--l->nsegs], 0, sizeof(l->seg[0]));
	}
	if (n < PLAN_MAX_DISKS) {
		memset(&l->member[n], 0, sizeof(l->member[n]));
		l->joined[n] = 0;
		l->ndisks = (uint8_t)n;
	}
	l->intent.op = LABEL_OP_NONE;
	l->intent.step = 0;
	l->intent.disk = LABEL_NO_DISK;
	l->intent.target = 0;
	l->intent.level = 0;
}

/*
 * b (the newer) describes the disks and arrays a (the older) does. No
 * operation here but a repair (one member's disk, after the older label)
 * changes these between generations, so a label that differs from an
 * older member's in them was not written by raidd to this volume: a
 * copy from elsewhere, widened or reshaped, is never obeyed. Sizes alone
 * may grow (volume.grow: disks, tiers), the map only append (map_kept),
 * and disks only join at the end, into new roles or new tiers of their
 * own (volume.add_disk); an SHR grow's newer label, while its intent
 * stands, has new tiers on the old disks (Decision 109).
 */
int
label_same_members(const struct label *a, const struct label *b)
{
	/* An SHR grow in flight in b, written after a, gives old disks new tiers. */
	int grown = b->level == LEVEL_SHR && b->intent.op == LABEL_OP_EXPANDING &&
	    a->generation < b->generation;

	/* An add in flight in a, rolled back since (b lacks its disk): a member
	   absent at the roll back still holds a; it describes b's disks less
	   the added one, or it is no label of this volume.  A join's alike:
	   less the role its member took. */
	if (a->intent.op == LABEL_OP_ADDING && a->generation < b->generation &&
	    (b->ndisks < a->ndisks || join_undone(a, b))) {
		struct label undone = *a;

		if (a->intent.covered)
			label_drop_joined(&undone);
		else
			label_drop_added(&undone);
		return label_same_members(&undone, b);
	}
	if (!level_kept(a, b) || a->ndisks > b->ndisks || a->ntiers > b->ntiers ||
	    a->size > b->size || b->ndisks > PLAN_MAX_DISKS || b->ntiers > PLAN_MAX_TIERS ||
	    !members_added(a, b) || (b->ntiers > a->ntiers && b->ndisks == a->ndisks && !grown) ||
	    (a->generation < b->generation && !covered_kept(a, b)))
		return 0;
	/* A tier of its own for each added disk (jbod): on added disks only. */
	for (int t = a->ntiers; t < b->ntiers; t++)
		if (!roles_kept(&(struct label_tier){ .nmembers = 0 }, &b->tier[t],
		    grown ? 0 : a->ndisks, -1))
			return 0;
	for (int m = 0; m < a->ndisks; m++)
		if (!same_member(a, b, m))
			return 0;
	for (int t = 0; t < a->ntiers; t++) {
		const struct label_tier *x = &a->tier[t], *y = &b->tier[t];

		if (!kind_kept(a, b, t) ||
		    x->tier_size > y->tier_size || memcmp(x->array_uuid, y->array_uuid, 16) != 0 ||
		    !roles_kept(x, y, a->ndisks, joiner(a, b, t)))
			return 0;
	}
	return map_kept(a, b);
}
