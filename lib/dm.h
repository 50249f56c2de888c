/*
 * dm.c: device-mapper through its ioctls on /dev/mapper/control, for
 * raidd (dm-linear joins) and cryptd (dm-crypt).  No udev on the
 * appliance, so /dev/mapper/<name> is made and removed here, as
 * libdevmapper does when it runs without udev.
 * Every call returns -1 with errno set (and a log_warn) on failure.
 */
#ifndef NAS_DM_H
#define NAS_DM_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* One line of a table: len sectors at start, e.g. "linear" "/dev/md_x 0". */
struct dm_target {
	uint64_t	 start, len;	/* 512-byte sectors */
	const char	*type;
	const char	*params;
};

/*
 * dm_load and dm_create flags.  Every load and table query is sent with
 * DM_SECURE_DATA_FLAG whatever the flags (the kernel wipes its copies),
 * and our buffers are wiped before they are freed.
 */
#define DM_LOAD_SECURE	0x1	/* params hold a key; implied, kept for callers */

struct dm_info {
	dev_t		 dev;
	int		 open_count;
	int		 target_count;
	int		 suspended;
	int		 live;		/* a table is active */
};

/*
 * 1 if name may name a device: 1-127 bytes, no "/", not ".", ".." or
 * "control".  Every call below refuses (EINVAL) any other before any
 * ioctl.
 */
int	dm_name_ok(const char *name);
int	dm_version(unsigned *major, unsigned *minor, unsigned *patch);
/* A new device with no table (suspended); *dev may be NULL. */
int	dm_dev_create(const char *name, const char *uuid, dev_t *dev);
int	dm_load(const char *name, const struct dm_target *, int n, int flags);
int	dm_resume(const char *name);
/* Drops the inactive table a load left (a swap that failed). */
int	dm_clear(const char *name);
/*
 * Removes the device and its node, in one try: EBUSY while someone has
 * it open, ENXIO (and no log) if it was gone.  The node is unlinked only
 * if it is that device's block node (when the device was gone already:
 * a stale node of device-mapper's major).
 */
int	dm_remove(const char *name);
/*
 * The same, retried on the event loop while the device is busy (10
 * tries, 100 ms apart).  cb gets 0, or the errno of the last try (EBUSY,
 * ENXIO ...), always from the loop, never from inside this call (cb
 * may be NULL); -1 if it could not start (a bad name: EINVAL).
 */
typedef void (*dm_remove_cb)(int err, void *arg);
int	dm_remove_async(const char *name, dm_remove_cb, void *arg);
/* Create, load, resume; removes what it made if a step fails. */
int	dm_create(const char *name, const char *uuid,
	    const struct dm_target *, int n, int flags);
/* 1 if the device exists, 0 if not, -1 on error. */
int	dm_exists(const char *name);
int	dm_status(const char *name, struct dm_info *);
/*
 * The live table as `dmsetup table` prints it, one target a line.  It
 * may hold a key: the caller wipes out after use.
 */
int	dm_table(const char *name, char *out, size_t len);

/*
 * For tests: ioctl replaces the call on /dev/mapper/control, release
 * receives every request buffer (already wiped) instead of free(), dir
 * replaces /dev/mapper, block_major device-mapper's block major.  NULL
 * puts the real ones back.
 */
struct dm_ioctl;
struct dm_hooks {
	int		 (*ioctl)(unsigned long cmd, struct dm_ioctl *);
	void		 (*release)(struct dm_ioctl *, size_t size);
	const char	  *dir;
	int		   block_major;
};
void	dm_set_hooks(const struct dm_hooks *);

#endif
