/* raidd: RAID volumes through md and device-mapper. */
#ifndef RAIDD_H
#define RAIDD_H

#include <json-c/json.h>

#include "board.h"
#include "daemon.h"
#include "feature.h"
#include "label.h"
#include "system.h"

/* One disk raidd sees, with where it sits on the board. */
struct disk {
	struct sys_disk	 sys;
	int		 bay;		/* 1-based; 0: not in a bay */
	int		 flash;		/* the firmware's own device */
	/* Its raidd label, read once per scan: label_read_disk()'s answer,
	   or 3: a valid label on a disk that is no longer what it says. */
	int		 label_rc;
	int		 label_next;
	struct label	 label;
	char		 label_why[160];	/* label_rc 3: why the disk is not raidd's */
	/* Its hot spare label, read once per scan (spare.c): 0 when read and
	   valid. A read-group client's volume.list describes spares from
	   here, so it never reads (or wakes) a disk. */
	int		 spare_rc;
	struct spare_label spare;
};

/* api.c */
extern const struct nas_daemon raidd_daemon;
extern const struct nas_feature raidd_features[];

/* disk.c */
void	 disk_set_board(const struct board *);
const struct board *disk_board(void);
int	 disk_board_known(void);
int	 disk_refresh(int announce);
int	 disk_refresh_named(char (*names)[SYS_NAME_MAX], int n);
int	 disk_refresh_one(const char *name);
int	 disk_count(void);
struct disk *disk_at(int);
struct disk *disk_find(const char *spec);
const char *disk_spec(const struct disk *, char *buf, size_t len);
struct json_object *disk_describe(const struct disk *);
int	 disk_has_foreign(const struct disk *, char *why, size_t len);
extern const struct rpc_method disk_methods[];

/* diskfd.c: a disk open for raidd's writes, checked against the scan. */
struct dfd {
	int		 fd;
	char		 name[SYS_NAME_MAX];
	unsigned	 major, minor;	/* what the open file is */
	uint64_t	 size, lba;
};
int	 dfd_open(struct dfd *, const struct sys_disk *, char *err, size_t errlen);
int	 dfd_recheck(const struct dfd *, char *err, size_t errlen);
int	 dfd_read(const struct dfd *, uint64_t off, void *buf, size_t len);
int	 dfd_close(struct dfd *, char *err, size_t errlen);
void	 dfd_abandon(struct dfd *);

/* wipe.c */
int	 wipe_disk(const struct disk *, char *err, size_t errlen);
/* Through f (open on the disk scanned as s, proven by the caller); closes f. */
int	 wipe_fd(struct dfd *, const struct sys_disk *, char *err, size_t errlen);

#endif
