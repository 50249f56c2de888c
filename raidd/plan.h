/*
 * plan.c: the tier planner.  Given a level and a set of disks, decide the
 * partitions on every disk, the md array of every tier and how the tiers
 * are joined with dm-linear.  Pure arithmetic: nothing here touches a disk.
 * The layout rules are documented in docs/on-disk-format.md.
 */
#ifndef RAIDD_PLAN_H
#define RAIDD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define MIB			(1024ULL * 1024)
#define GIB			(1024ULL * MIB)

/* Every partition starts and ends on this boundary. */
#define PLAN_ALIGN		MIB
/* Bytes at the start of a disk that no partition uses: MBR, primary GPT,
   the two raidd label slots (label.h). */
#define PLAN_HEAD		MIB
/* Bytes kept free at the end for the backup GPT (20 KiB on 4Kn disks). */
#define PLAN_TAIL		(32 * 1024ULL)
/* Smallest usable area a disk may have, and smallest SHR band worth an
   md array of its own; narrower bands are left unused. */
#define PLAN_MIN_AREA		(64 * MIB)
#define PLAN_MIN_BAND		(64 * MIB)

#define PLAN_MAX_DISKS		8
#define PLAN_MAX_TIERS		8
#define PLAN_MAX_SEGS		16	/* dm-linear segments of a grown volume */
#define PLAN_ID_MAX		64	/* disk id, NUL included */
#define PLAN_ERRLEN		160

/* md chunk for raid0/5/10, in 512-byte sectors (512 KiB, mdadm's default). */
#define PLAN_CHUNK_SECTORS	1024
/* md layouts (see md_p.h users in mdadm and the kernel). */
#define PLAN_LAYOUT_RAID0	1	/* "original" zone layout */
#define PLAN_LAYOUT_RAID5	2	/* left-symmetric */
#define PLAN_LAYOUT_RAID10	0x102	/* near=2, far=1 */

enum vol_level {
	LEVEL_SINGLE, LEVEL_JBOD, LEVEL_RAID0, LEVEL_RAID1,
	LEVEL_RAID5, LEVEL_RAID10, LEVEL_SHR, LEVEL_COUNT
};

/* What a tier is made of.  TIER_NONE: a bare partition joined directly. */
enum tier_kind {
	TIER_NONE, TIER_RAID0, TIER_RAID1, TIER_RAID5, TIER_RAID10,
	TIER_KIND_COUNT
};

struct plan_disk {
	char		id[PLAN_ID_MAX];
	uint64_t	size;		/* whole disk, bytes */
};

struct plan_part {
	int		disk;		/* index into plan.disk[] */
	uint64_t	start;		/* bytes from the start of the disk */
	uint64_t	size;		/* bytes */
};

struct plan_tier {
	enum tier_kind	kind;
	int		md_level;	/* kernel level number; -1 for TIER_NONE */
	int		nmembers;
	struct plan_part part[PLAN_MAX_DISKS];	/* index = md role */
	uint64_t	data_offset;	/* sectors into each member; 0 if no md */
	uint64_t	member_sectors;	/* data sectors used per member (sb size) */
	uint32_t	chunk;		/* sectors; 0 for raid1 and none */
	uint32_t	layout;
	int		redundant;	/* survives the loss of one member */
	uint64_t	offset;		/* bytes: where the tier starts in the volume */
	uint64_t	size;		/* bytes the tier adds to the volume */
};

/* One dm-linear segment: len bytes of tier `tier` from byte `offset`. */
struct plan_seg {
	int		tier;
	uint64_t	offset, len;
};

struct plan {
	enum vol_level	level;
	int		ndisks;
	struct plan_disk disk[PLAN_MAX_DISKS];
	int		ntiers;
	struct plan_tier tier[PLAN_MAX_TIERS];	/* dm-linear joins them in order */
	uint64_t	size;		/* usable bytes of the joined volume */
	/* The map: each tier whole, in order, until a grown tier's new end
	   is appended after what the volume held (plan-grow.c). */
	int		nsegs;
	struct plan_seg	seg[PLAN_MAX_SEGS];
	uint64_t	unused;		/* bytes of disk area no partition uses */
	int		redundant;	/* every tier survives the loss of a disk */
	const char	*note;		/* caveat for the UI, or NULL */
};

const char	*plan_level_name(enum vol_level);
int		 plan_level_parse(const char *, enum vol_level *);
const char	*plan_tier_kind_name(enum tier_kind);
int		 plan_level_min_disks(enum vol_level);

uint64_t	 plan_disk_area(uint64_t disk_size);
uint64_t	 plan_data_offset(uint64_t member_sectors, uint32_t chunk);
uint64_t	 plan_tier_size(enum tier_kind, int nmembers, uint64_t member_sectors);

int		 plan_err(char *err, size_t errlen, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

int		 plan_make(enum vol_level, const struct plan_disk *, int ndisks,
		    struct plan *, char *err, size_t errlen);
void		 plan_default_map(struct plan *);
int		 plan_usable(enum vol_level, const struct plan_disk *, int ndisks,
		    uint64_t *size, char *err, size_t errlen);

#endif
