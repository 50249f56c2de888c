/*
 * mdsb.c: md v1.2 superblocks and internal-bitmap superblocks, encoded
 * and decoded over buffers.  The kernel will not import a v1.x member
 * without a valid superblock, so raidd writes them itself, exactly as
 * mdadm would (docs/on-disk-format.md).  No I/O here.
 */
#ifndef RAIDD_MDSB_H
#define RAIDD_MDSB_H

#include <stddef.h>
#include <stdint.h>

struct plan_tier;

#define MDSB_MAGIC		0xa92b4efcU
#define MDSB_SUPER_OFFSET	8	/* sectors: v1.2 sits 4 KiB in */
#define MDSB_BLOCK		4096	/* bytes written at MDSB_SUPER_OFFSET */
#define MDSB_MAX_DEV		128	/* dev_roles[] slots we write, as mdadm */
#define MDSB_MAX_DEV_LIMIT	1920	/* the kernel's limit: (4096-256)/2 */
#define MDSB_NAME_MAX		31	/* set_name chars; mdadm keeps a NUL */
#define MDSB_ROLE_SPARE		0xffff
#define MDSB_ROLE_FAULTY	0xfffe
#define MDSB_RESYNC_CLEAN	UINT64_MAX	/* resync_offset: "in sync" */

#define MDSB_BITMAP_MAGIC	0x6d746962U	/* "bitm" */
#define MDSB_BITMAP_VERSION	4		/* BITMAP_MAJOR_HI, mdadm's default */
#define MDSB_BITMAP_OFFSET	8	/* sectors after the superblock */
#define MDSB_BITMAP_SB		256	/* bytes of the bitmap superblock */
#define MDSB_BITMAP_CHUNK	(64U << 20)	/* bytes per bit, at least */
#define MDSB_BITMAP_ROOM	256	/* sectors: at most 128 KiB of bitmap */
#define MDSB_BITMAP_DELAY	5	/* seconds between bitmap flushes */

#define MDSB_ERRLEN		160

/* The fields of struct mdp_superblock_1 raidd uses, in host order. */
struct mdsb {
	uint32_t	feature_map;
	uint8_t		set_uuid[16];
	char		set_name[MDSB_NAME_MAX + 2];
	uint64_t	ctime;		/* seconds */
	int32_t		level;
	uint32_t	layout;
	uint64_t	size;		/* sectors used on each member */
	uint32_t	chunksize;	/* sectors */
	uint32_t	raid_disks;
	int32_t		bitmap_offset;	/* sectors from the superblock */
	uint64_t	data_offset;
	uint64_t	data_size;
	uint64_t	super_offset;
	uint64_t	recovery_offset;
	uint32_t	dev_number;
	uint8_t		device_uuid[16];
	uint64_t	utime;		/* seconds */
	uint64_t	events;
	uint64_t	resync_offset;
	uint32_t	max_dev;
	uint16_t	dev_roles[MDSB_MAX_DEV_LIMIT];
};

/* The internal write-intent bitmap's superblock (bitmap_super_t). */
struct mdsb_bitmap {
	uint32_t	version;
	uint8_t		uuid[16];
	uint64_t	events;
	uint64_t	events_cleared;
	uint64_t	sync_size;	/* sectors: mdsb_sync_sectors() */
	uint32_t	state;
	uint32_t	chunksize;	/* bytes per bit */
	uint32_t	daemon_sleep;
	uint32_t	write_behind;
	uint32_t	sectors_reserved;
};

uint32_t mdsb_csum(const void *buf, size_t len);
int	 mdsb_encode(const struct mdsb *, void *buf, size_t len,
	    char *err, size_t errlen);
int	 mdsb_decode(const void *buf, size_t len, uint64_t found_at,
	    struct mdsb *, char *err, size_t errlen);
int	 mdsb_set_level(void *buf, size_t len, uint64_t found_at,
	    int32_t level, uint32_t layout, uint32_t chunk, char *err,
	    size_t errlen);
int	 mdsb_init_tier(struct mdsb *, const struct plan_tier *, int role,
	    const uint8_t set_uuid[16], const char *set_name, uint64_t now,
	    char *err, size_t errlen);

uint64_t mdsb_sync_sectors(const struct mdsb *);
size_t	 mdsb_bitmap_bytes(const struct mdsb_bitmap *);
int	 mdsb_bitmap_init(struct mdsb_bitmap *, const struct mdsb *,
	    char *err, size_t errlen);
int	 mdsb_bitmap_encode(const struct mdsb_bitmap *, int dirty, void *buf,
	    size_t len, char *err, size_t errlen);
int	 mdsb_bitmap_decode(const void *buf, size_t len, struct mdsb_bitmap *,
	    char *err, size_t errlen);

#endif
