/*
 * label.c: the raidd label.  Every member disk carries one, in two 4 KiB
 * slots just below the first partition; it names the volume, this disk's
 * place in it, every tier and the intent record of an operation in
 * flight.  Writers alternate slots, so a torn write leaves the other
 * slot, one generation older, intact.  Byte layout: docs/on-disk-format.md.
 * Pure functions over buffers; reading and writing the slots is the disk
 * seam's job.
 */
#ifndef RAIDD_LABEL_H
#define RAIDD_LABEL_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

#define LABEL_SLOT_SIZE		4096
#define LABEL_SLOT0		(PLAN_HEAD - 16 * 1024)	/* byte offset on the disk */
#define LABEL_SLOT1		(PLAN_HEAD - 8 * 1024)
#define LABEL_MAGIC		"raiddlbl"
#define SPARE_MAGIC		"raiddspr"	/* a hot spare's label (spare.c) */
#define LABEL_VERSION		2	/* 2: a map of segments (a grown volume) */
#define LABEL_NAME_MAX		64	/* volume name, NUL included */
#define LABEL_SERIAL_MAX	40	/* disk serial, NUL included */
#define LABEL_NO_ROLE		0xff	/* this disk is not in that tier */
#define LABEL_NO_DISK		0xff
#define LABEL_MAX_SPARES	4
/* GPT type of raidd's partitions: Linux RAID, A19D880F-05FC-4D3B-A006-743F0F84911E. */
#define LABEL_GPT_TYPE	"\x0f\x88\x9d\xa1\xfc\x05\x3b\x4d\xa0\x06\x74\x3f\x0f\x84\x91\x1e"
/*
 * No volume gets near these: one rewrite a second takes 8 million years
 * to reach 2^48.  A label read with a higher generation is damaged (a
 * disk's hostile or corrupt label must not make a volume undeletable);
 * the margin above it leaves room for the writes of a delete.
 */
#define LABEL_GEN_READ_MAX	(1ULL << 48)
#define LABEL_GEN_MAX		(LABEL_GEN_READ_MAX + 1024)

enum label_fs { LABEL_FS_NONE, LABEL_FS_EXT4, LABEL_FS_BTRFS, LABEL_FS_COUNT };

#define LABEL_F_ENCRYPTED	0x01

/* What was in flight when the label was written. */
enum label_op {
	LABEL_OP_NONE, LABEL_OP_CREATING, LABEL_OP_DELETING,
	LABEL_OP_REPLACING, LABEL_OP_EXPANDING, LABEL_OP_ADDING, LABEL_OP_COUNT
};

struct label_intent {
	uint8_t		op;		/* enum label_op */
	uint8_t		step;		/* last step begun */
	uint8_t		disk;		/* member concerned, or LABEL_NO_DISK */
	uint8_t		covered;	/* delete: bit m = member m was present;
					   grow: bit t = tier t's array is yet to be made */
	uint8_t		level;		/* add: the level after (enum vol_level), 0 kept */
	uint64_t	target;		/* generation once the op is done */
};

struct label_member {
	uint8_t		uuid[16];	/* given by raidd when the disk joins */
	char		serial[LABEL_SERIAL_MAX];
	uint64_t	size;		/* bytes, whole disk */
};

struct label_tier {
	uint8_t		kind;		/* enum tier_kind */
	uint8_t		nmembers;
	uint8_t		role;		/* this disk's md role, or LABEL_NO_ROLE */
	uint8_t		member[PLAN_MAX_DISKS];	/* role -> index in member[] */
	uint32_t	chunk;		/* sectors */
	uint64_t	start;		/* this disk's partition, bytes; 0 if none */
	uint64_t	size;
	uint64_t	tier_size;	/* bytes the tier adds to the volume */
	uint8_t		array_uuid[16];	/* md set_uuid; zero for TIER_NONE */
	/* This disk's GPT entry of the tier, in GPT byte order; zero in
	   labels written before raidd recorded them (place and name only). */
	uint8_t		part_guid[16];	/* unique partition GUID */
	uint8_t		part_type[16];	/* partition type GUID */
};

/* A dm-linear segment of a grown volume (plan_seg). */
struct label_seg {
	uint8_t		tier;
	uint64_t	offset, len;	/* bytes of the tier */
};

struct label {
	uint64_t	generation;	/* 1 on creation, +1 per rewrite */
	uint8_t		volume_uuid[16];
	char		name[LABEL_NAME_MAX];
	uint8_t		level;		/* enum vol_level */
	uint8_t		fs;		/* enum label_fs */
	uint8_t		flags;		/* LABEL_F_* */
	uint8_t		ndisks;
	uint8_t		position;	/* this disk's index in member[] */
	uint8_t		ntiers;
	uint8_t		failed;		/* bit m: md failed member m for errors */
	uint64_t	created;	/* seconds since the epoch */
	uint64_t	size;		/* usable bytes of the volume */
	struct label_intent intent;
	uint8_t		unit[16];	/* the unit that made it; zero: unknown */
	/* Generation at which member m's disk took its place (volume.repair);
	   0: since the volume was made. */
	uint64_t	joined[PLAN_MAX_DISKS];
	struct label_member member[PLAN_MAX_DISKS];
	struct label_tier tier[PLAN_MAX_TIERS];
	/* 0: the tiers whole, in order (version 1); else the map (version 2). */
	uint8_t		nsegs;
	struct label_seg seg[PLAN_MAX_SEGS];
	/* Hot spares of the volume (spare.c): each disk carries a spare
	   label with the same uuid; one a member took is no spare. */
	uint8_t		nspares;
	struct label_member spare[LABEL_MAX_SPARES];
};

/* A hot spare's label (spare.c): the disk serves one volume. */
struct spare_label {
	uint8_t		 volume_uuid[16];	/* the volume it serves */
	uint8_t		 uuid[16];		/* the spare, as the volume lists it */
	char		 serial[LABEL_SERIAL_MAX];
	uint64_t	 size;
	uint8_t		 unit[16];
	char		 name[LABEL_NAME_MAX];	/* the volume's, for people */
};

uint32_t label_crc32c(uint32_t crc, const void *, size_t);
uint32_t gpt_crc32(uint32_t crc, const void *, size_t);
int	 label_check(const struct label *, char *err, size_t errlen);
int	 label_encode(const struct label *, void *buf, size_t len,
	    char *err, size_t errlen);
int	 label_decode(const void *buf, size_t len, struct label *,
	    char *err, size_t errlen);
int	 label_choose(const void *slot0, const void *slot1, size_t len,
	    struct label *, int *next_slot, char *err, size_t errlen);
int	 label_probe(const void *head, size_t len, uint64_t *off);
void	 label_map_from_plan(struct label *, const struct plan *);
int	 label_bump(struct label *, char *err, size_t errlen);
int	 label_from_plan(struct label *, const struct plan *, int position,
	    const char *name, const uint8_t volume_uuid[16],
	    const uint8_t array_uuid[][16], const struct label_member *,
	    uint64_t now, char *err, size_t errlen);

/* Member m's role in l's tier t (its member list), or -1. */
int	label_role_of(const struct label *, int t, int m);
/* l's intent is a join (Decision 133): an add of an old member's room. */
int	label_is_join(const struct label *);
/* ... and tier t is one it joins. */
int	label_joins(const struct label *, int t);
/* b (the newer label) describes the disks and arrays a does (volume.grow, add_disk, repair aside). */
int	label_same_members(const struct label *a, const struct label *b);
void	label_drop_added(struct label *);
void	label_drop_joined(struct label *);
/* l's own member entry was replaced in newest since l was written (volume.repair). */
int	label_replaced(const struct label *l, const struct label *newest);

#endif
