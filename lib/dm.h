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

/* dm_load and dm_create flags. */
#define DM_LOAD_SECURE	0x1	/* params hold a key: the kernel wipes its copy */

struct dm_info {
	dev_t		 dev;
	int		 open_count;
	int		 target_count;
	int		 suspended;
	int		 live;		/* a table is active */
};

int	dm_version(unsigned *major, unsigned *minor, unsigned *patch);
/* A new device with no table (suspended); *dev may be NULL. */
int	dm_dev_create(const char *name, const char *uuid, dev_t *dev);
int	dm_load(const char *name, const struct dm_target *, int n, int flags);
int	dm_resume(const char *name);
/* Removes the device and its node, retrying while it is briefly busy. */
int	dm_remove(const char *name);
/* Create, load, resume; removes what it made if a step fails. */
int	dm_create(const char *name, const char *uuid,
	    const struct dm_target *, int n, int flags);
/* 1 if the device exists, 0 if not, -1 on error. */
int	dm_exists(const char *name);
int	dm_status(const char *name, struct dm_info *);
/* The live table as `dmsetup table` prints it, one target a line. */
int	dm_table(const char *name, char *out, size_t len);

#endif
