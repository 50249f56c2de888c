/*
 * raidd's one kernel seam. Everything raidd asks of the kernel goes
 * through struct sys_ops: system-linux*.c implement it with sysfs,
 * libblkid, libfdisk, md and dm ioctls; system-sim.c simulates disks
 * in memory so the logic above can be tested on any machine.
 */
#ifndef RAIDD_SYSTEM_H
#define RAIDD_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#define SYS_NAME_MAX	64
#define SYS_MAX_SIGS	16
#define SYS_MAX_MEMBERS	8
#define SYS_MAX_SEGS	16
#define SYS_MAX_PARTS	8

/* A signature libblkid (or raidd itself) found on a disk or partition. */
struct sys_sig {
	char		type[32];	/* "gpt", "ext4", "linux_raid_member", "crypto_LUKS", "raidd" */
	char		where[SYS_NAME_MAX];	/* "sda" or "sda1" */
	uint64_t	offset;		/* bytes from the start of the disk */
};

/* A whole disk as the kernel shows it. */
struct sys_disk {
	char		name[SYS_NAME_MAX];	/* kernel name: sda */
	char		syspath[256];	/* resolved /sys/devices/... path */
	unsigned	major, minor;
	uint64_t	size;		/* bytes */
	char		model[64];
	char		serial[64];
	int		rotational;
	unsigned	logical_block, physical_block;
	int		removable;
	char		busy[128];	/* "" or why it may not be touched */
	int		nsigs;
	struct sys_sig	sig[SYS_MAX_SIGS];
};

/* One partition to create; start and size in bytes, 1 MiB aligned. */
struct sys_part {
	uint64_t	start, size;
	char		name[36];	/* GPT partition name */
	uint8_t		guid[16];	/* unique GUID, GPT byte order; zero: any */
	uint8_t		type[16];	/* type GUID; zero: Linux RAID */
};

/*
 * md_assemble flags. md refuses to start a RAID 4/5/6 array that is both
 * dirty (the power went while it was written) and degraded, unless md_mod's
 * start_dirty_degraded is set while it starts: SYS_MD_START_DIRTY sets it
 * for this start only. SYS_MD_READONLY starts the array read-only (array_state
 * "readonly": no write, no resync) until md_set_rw.
 */
#define SYS_MD_READONLY		0x1
#define SYS_MD_START_DIRTY	0x2

/* One md array to create or assemble. */
struct sys_md {
	char		name[SYS_NAME_MAX];	/* md_<volume>_t<N>: /dev/<name> */
	int		raid_disks;		/* the array's size, present or not */
	int		flags;			/* assemble: SYS_MD_* */
	int		nmembers;		/* members given below */
	struct {
		char	dev[SYS_NAME_MAX];	/* partition: sda1 */
		int	role;			/* slot, or -1 for spare */
		const void *sb;			/* create: superblock to write; NULL: written */
		size_t	sb_len;			/* at 4 KiB (v1.2) */
		const void *bitmap;		/* create: bitmap area after it */
		size_t	bitmap_len;
	} member[SYS_MAX_MEMBERS];
};

struct sys_md_status {
	char		level[16];	/* raid1 ... */
	char		array_state[32];	/* clean, active, inactive ... */
	char		sync_action[16];	/* idle, resync, recover ... */
	uint64_t	sync_done, sync_total;	/* sectors; total 0 when idle */
	uint64_t	sync_speed;	/* kB/s now, 0 when idle */
	uint64_t	mismatch_cnt;	/* sectors the last check or repair found differing */
	uint64_t	sync_min;	/* sectors: where an interrupted check stopped */
	int		degraded;
	int		raid_disks;
	uint64_t	size;		/* bytes */
	int		nmembers;
	struct {
		char	dev[SYS_NAME_MAX];
		int	slot;		/* -1: none */
		char	state[64];	/* in_sync, faulty, spare ... */
		int	present;	/* its block device still exists */
		unsigned errors;	/* read errors md corrected (dev-X/errors) */
	} member[SYS_MAX_MEMBERS];
};

/*
 * A sync action to start on an array: check or repair from sector
 * from (md's sync_min; 0 is the start), within a speed window in kB/s
 * (0 leaves md's value); "idle" stops a check or repair that runs (not
 * a recovery) and gives md its own speeds back.
 */
struct sys_md_sync {
	char		action[16];	/* check, repair, idle */
	uint64_t	from;		/* sectors */
	unsigned	speed_min, speed_max;	/* kB/s */
};

/* One dm-linear segment: len bytes of dev from offset. */
struct sys_seg {
	char		dev[SYS_NAME_MAX];	/* md_vol_t1 or sda1 */
	uint64_t	offset, len;		/* bytes, 512 aligned */
};

/* What a bay's LED shows. */
enum sys_led { SYS_LED_OFF, SYS_LED_FAULT, SYS_LED_REBUILD };

typedef void (*sys_done_cb)(int status, const char *output, void *arg);

struct sys_ops {
	/* Every whole disk (no partitions, loop, md, dm); caller frees *out. */
	int	(*scan_disks)(struct sys_disk **out, int *n);
	/* One of them by kernel name: 0 found, 1 no such disk, -1 error. */
	int	(*scan_disk)(const char *name, struct sys_disk *out);
	/*
	 * Byte I/O on a disk or partition by kernel name (its node); writes
	 * are durable. raidd reads with these; it writes only through a
	 * handle (below). The writes by name are for tests and tools.
	 */
	int	(*read_at)(const char *dev, uint64_t off, void *buf, size_t len);
	int	(*write_at)(const char *dev, uint64_t off, const void *buf, size_t len);
	int	(*zero_at)(const char *dev, uint64_t off, uint64_t len);
	/*
	 * A handle on a disk for raidd's own writes (Decision 21): opened
	 * by node once, *major:*minor is what the open file is (fstat
	 * st_rdev), and its I/O reaches that device or fails (ENXIO once
	 * it is gone), whatever the node or the name lead to later.
	 * fd_close syncs first: -1 when the writes may not be on the disk.
	 */
	int	(*dev_open)(const char *dev, unsigned *major, unsigned *minor);
	int	(*fd_read)(int fd, uint64_t off, void *buf, size_t len);
	int	(*fd_write)(int fd, uint64_t off, const void *buf, size_t len);
	int	(*fd_zero)(int fd, uint64_t off, uint64_t len);
	int	(*fd_size)(int fd, uint64_t *size);
	int	(*fd_sync)(int fd);
	int	(*fd_close)(int fd);
	/* The device dev's node leads to now (stat st_rdev of the path). */
	int	(*node_devnum)(const char *dev, unsigned *major, unsigned *minor);
	/* Makes the kernel re-read (and so drop) a wiped disk's partitions. */
	int	(*reread_parts)(const char *disk, int fd);
	/* A fresh GPT with exactly these partitions, written through fd (a
	   dev_open handle on disk); waits for their nodes. */
	int	(*partition)(const char *disk, int fd, const struct sys_part *, int n);
	/* Kernel name of the partition of disk starting at start (bytes). */
	int	(*part_dev)(const char *disk, uint64_t start, char *out, size_t len);
	/* Writes each member's superblock and bitmap, then starts the array. */
	int	(*md_create)(const struct sys_md *);
	/* Starts an array from members that carry superblocks (degraded ok;
	   dirty and degraded RAID 4/5/6: EIO unless SYS_MD_START_DIRTY). */
	int	(*md_assemble)(const struct sys_md *);
	/* A read-only array becomes writable (RESTART_ARRAY_RW). */
	int	(*md_set_rw)(const char *name);
	int	(*md_stop)(const char *name);
	/*
	 * A member back after it was pulled (it carries the array's
	 * superblock) rejoins a running array in its role: faulty leftovers
	 * are removed first, md recovers what the bitmap marks, or all of it.
	 */
	int	(*md_readd)(const char *name, const char *dev, int role);
	/*
	 * A new member of a running array (volume.repair, a hot spare):
	 * member[0]'s superblock (this array's, role spare) and bitmap are
	 * written, it is hot-added as a spare and, for role >= 0, put in that
	 * role, where md rebuilds it; role -1 leaves it a spare.
	 */
	int	(*md_add_new)(const struct sys_md *);
	int	(*md_status)(const char *name, struct sys_md_status *);
	/*
	 * A member whose disk is gone is failed and removed now, as mdadm
	 * -If does from udev: md itself notices only at the next I/O.
	 * 1: md kept it, as the last copy of some data (the array is broken).
	 */
	int	(*md_fail)(const char *name, const char *dev);
	int	(*dm_create)(const char *name, const char *uuid,
		    const struct sys_seg *, int n);
	int	(*dm_remove)(const char *name);
	int	(*dm_exists)(const char *name);
	/* Bytes of a block device by kernel or dm name. */
	int	(*dev_size)(const char *dev, uint64_t *size);
	/* Asynchronous: cb runs from the event loop when mkfs has ended. */
	int	(*mkfs)(const char *fs, const char *dev, const char *label,
		    sys_done_cb, void *arg);
	int	(*mount)(const char *dev, const char *dir, const char *fs);
	/*
	 * Read-only, on a device that takes no write: a journal that needs
	 * replaying is not replayed (ext4 noload, btrfs rescue=nologreplay);
	 * 1 when that was needed, so what shows is as of the journal's last
	 * checkpoint.
	 */
	int	(*mount_ro)(const char *dev, const char *dir, const char *fs);
	int	(*umount)(const char *dir);
	int	(*is_mounted)(const char *dir);
	/*
	 * Growing in place (volume.grow); each is idempotent.  The partition
	 * of disk at start becomes size bytes while in use (GPT and the
	 * kernel's view), written through fd (a dev_open handle on disk,
	 * proven: Decision 21) and never reopened by name; an array's members take what their devices allow
	 * and its component size becomes `sectors`; a live map gets a new
	 * table; a mounted filesystem grows to its device (asynchronous).
	 */
	int	(*part_resize)(const char *disk, int fd, uint64_t start, uint64_t size);
	/*
	 * One more partition in disk's GPT, the others kept (in use), written
	 * through fd (proven) and told to the kernel (BLKPG); waits for its
	 * node.  EBUSY when it would overlap any entry of the table or any
	 * partition the kernel has, except one exactly there (start and
	 * size); 0 at once when both the table and the kernel have it.
	 */
	int	(*part_add)(const char *disk, int fd, const struct sys_part *);
	/* What part_add would take: 0 when the place is free on both (or
	   exactly p), -1 EBUSY otherwise; nothing written. */
	int	(*part_free)(const char *disk, int fd, const struct sys_part *);
	/*
	 * The partition of disk at start, size bytes, leaves the kernel
	 * (BLKPG_DEL_PARTITION) and then the GPT (its entry cleared),
	 * through fd (proven), the others kept in use.  EBUSY while anything
	 * holds it open (md, even as a failed member not yet removed; a dm
	 * map; a mount), as the kernel refuses, and when what starts there
	 * has another size; nothing is written then.  0 at once when neither
	 * has it: run again after a power cut it removes what is left.
	 */
	int	(*part_del)(const char *disk, int fd, uint64_t start, uint64_t size);
	int	(*md_grow)(const char *name, uint64_t sectors);
	int	(*dm_reload)(const char *name, const struct sys_seg *, int n);
	int	(*fs_grow)(const char *fs, const char *dev, const char *dir,
		    sys_done_cb, void *arg);
	/* A socket that becomes readable on block-device hotplug; -1 if none. */
	int	(*hotplug_open)(void);
	/*
	 * Drains it: the kernel names of the whole disks added or removed
	 * (at most max, each once), their count, or -1 when events were
	 * lost or more disks changed: then everything is rescanned.
	 */
	int	(*hotplug_read)(int fd, char (*names)[SYS_NAME_MAX], int max);
	/*
	 * md's attributes that notify (sysfs_notify): an fd that becomes
	 * readable when one of them changed; -1 if none. watch_arrays
	 * watches exactly these arrays (array_state, degraded, sync_action,
	 * each member's state) and /proc/mdstat; watch_read drains it,
	 * re-reading each attribute that woke (its count, -1 on error).
	 */
	int	(*watch_open)(void);
	int	(*watch_arrays)(int fd, char (*names)[SYS_NAME_MAX], int n);
	int	(*watch_read)(int fd);
	/* Starts or stops md's check or repair (sync_min, speed window, sync_action). */
	int	(*md_sync)(const char *name, const struct sys_md_sync *);
	/* A bay's LED (a sysfs LED directory, board.ini): off, on, blinking. */
	int	(*led_set)(const char *dir, enum sys_led);
	/*
	 * volume.add_disk: a raid5 array grows to raid_disks, its spares
	 * taking the new roles, as mdadm --grow --raid-devices does with a
	 * data offset change: every member's data moves down to new_offset
	 * (sectors, below its data offset), so md reshapes forwards into
	 * that room and needs no backup file; md checkpoints reshape_position
	 * in the superblocks and resumes by itself after a power cut.  0 at
	 * once when the array has raid_disks already (reshaping or done).
	 * EBUSY: md refused, nothing started (MD_RECOVERY_RUNNING, asked
	 * again a while first).  Failing, it leaves md frozen as it found it,
	 * though md lets go of a freeze as start_reshape refuses (EINVAL, ENOSPC).
	 */
	int	(*md_reshape)(const char *name, int raid_disks, uint64_t new_offset);
	/*
	 * volume.add_disk with a level: md's personality changes in place
	 * (md/level, as mdadm --grow --level does), "raid5" over a raid1 of
	 * two raid disks (raid5_takeover_raid1: left-symmetric, the largest
	 * chunk up to 64 KiB that divides the array).  0 at once when the
	 * array has that level already; EBUSY while md syncs or reshapes,
	 * EINVAL for a takeover md has not (raid_disks not 2 ...), EROFS
	 * read-only.  md records the new level in the superblocks itself.
	 */
	int	(*md_set_level)(const char *name, const char *level);
	/*
	 * md's recovery frozen (1, sync_action "frozen", MD_RECOVERY_FROZEN)
	 * or let go (0, "idle"), as mdadm --grow holds it while it adds a
	 * spare, takes an array over and sets raid_disks: while frozen md
	 * starts no recovery, so a member failing leaves the array degraded
	 * and a spare a spare.  raidd refuses to freeze (EBUSY) unless md is
	 * idle or frozen already: md itself would take "frozen" and interrupt
	 * the running sync.  Letting go is 0 at
	 * once unless frozen (an "idle" would interrupt a reshape), and md
	 * then recovers onto a spare at once.  md_set_level keeps it frozen,
	 * md_reshape's "reshape" lets go.  Held in memory only: a stop or a
	 * power cut ends it.
	 */
	int	(*md_freeze)(const char *name, int frozen);
};

extern const struct sys_ops sys_linux;
extern const struct sys_ops sys_sim;

/* The seam raidd runs on; set once at start (tests pick sys_sim). */
extern const struct sys_ops *sys;

#endif
