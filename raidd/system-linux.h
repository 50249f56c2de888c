/*
 * The Linux side of raidd's seam (system.h), split by subject:
 * system-linux.c (the ops table, sysfs and device-node helpers, dm-linear),
 * system-linux-disk.c (scan, byte I/O by name), -fd.c (byte I/O through
 * a descriptor), -sig.c (libblkid signatures), -busy.c (holders, mounts), -part.c (GPT), -md.c (md ioctls), -mdstat.c
 * (md sysfs), -fs.c (mkfs, mount, uevents).  Private to those files.
 */
#ifndef RAIDD_SYSTEM_LINUX_H
#define RAIDD_SYSTEM_LINUX_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "system.h"

/* system-linux.c */
void	lnx_sleep_ms(long);
int	lnx_read_file(const char *path, char *buf, size_t len);
int	lnx_read_u64(const char *path, uint64_t *);
void	lnx_block_attr(const char *dev, const char *rel, char *out, size_t len);
int	lnx_write_file(const char *path, const char *val);
/* An array's sysfs attribute, rel below /sys/block/NAME/md/ (system-linux-md.c). */
int	lnx_md_attr_read(const char *name, const char *rel, char *buf, size_t len);
int	lnx_md_attr_write(const char *name, const char *rel, const char *val);
int	lnx_devnum(const char *dev, dev_t *);
int	lnx_devpath(const char *dev, char *out, size_t len);
int	lnx_node_wait(const char *dev, int ms);
int	lnx_partitions(const char *disk, char (*out)[SYS_NAME_MAX], int max);
#define LNX_MAX_PARTS	128	/* GPT's usual table size */

/* system-linux-disk.c */
int	lnx_scan_disks(struct sys_disk **, int *);
int	lnx_scan_disk(const char *, struct sys_disk *);
int	lnx_read_at(const char *, uint64_t, void *, size_t);
int	lnx_write_at(const char *, uint64_t, const void *, size_t);
int	lnx_zero_at(const char *, uint64_t, uint64_t);
int	lnx_dev_size(const char *, uint64_t *);

/* system-linux-fd.c */
int	lnx_dev_open(const char *, unsigned *, unsigned *);
int	lnx_node_devnum(const char *, unsigned *, unsigned *);
int	lnx_fd_read(int, uint64_t, void *, size_t);
int	lnx_fd_write(int, uint64_t, const void *, size_t);
int	lnx_fd_zero(int, uint64_t, uint64_t);
int	lnx_fd_size(int, uint64_t *);
int	lnx_fd_sync(int);
int	lnx_fd_close(int);

/* system-linux-sig.c */
void	lnx_probe_sigs(struct sys_disk *);

/* system-linux-busy.c */
void	lnx_busy(struct sys_disk *);

/* system-linux-part.c */
int	lnx_reread_parts(const char *, int);
int	lnx_partition(const char *, int, const struct sys_part *, int);
int	lnx_part_add(const char *, int, const struct sys_part *);
int	lnx_part_free(const char *, int, const struct sys_part *);
int	lnx_part_del(const char *, int, uint64_t, uint64_t);
int	lnx_part_dev(const char *, uint64_t, char *, size_t);

/* system-linux-md.c */
int	lnx_md_create(const struct sys_md *);
int	lnx_md_assemble(const struct sys_md *);
int	lnx_md_stop(const char *);
int	lnx_md_readd(const char *, const char *, int);
int	lnx_md_fail(const char *, const char *);
int	lnx_md_add_new(const struct sys_md *);

/* system-linux-mdstat.c */
int	lnx_md_status(const char *, struct sys_md_status *);

/* system-linux-fs.c */
int	lnx_mkfs(const char *, const char *, const char *, sys_done_cb, void *);
int	lnx_mount(const char *, const char *, const char *);
int	lnx_mkdir_p(const char *dir);
/* system-linux-dirty.c */
int	lnx_md_run_flagged(int fd, const struct sys_md *);
int	lnx_md_set_rw(const char *);
int	lnx_mount_ro(const char *, const char *, const char *);
int	lnx_umount(const char *);
int	lnx_is_mounted(const char *);
int	lnx_hotplug_open(void);
int	lnx_hotplug_read(int, char (*)[SYS_NAME_MAX], int);

/* system-linux-watch.c */
int	lnx_watch_open(void);
int	lnx_watch_arrays(int, char (*)[SYS_NAME_MAX], int);
int	lnx_watch_read(int);

/* system-linux-led.c */
int	lnx_led_set(const char *, enum sys_led);

/* system-linux-mdsync.c */
int	lnx_md_sync(const char *, const struct sys_md_sync *);

/* system-linux-grow.c */
int	lnx_part_resize(const char *, int, uint64_t, uint64_t);
int	lnx_md_grow(const char *, uint64_t);
int	lnx_fs_grow(const char *, const char *, const char *, sys_done_cb, void *);

/* system-linux-reshape.c */
int	lnx_md_reshape(const char *, int, uint64_t);
int	lnx_md_set_level(const char *, const char *);
int	lnx_md_freeze(const char *, int);

#endif
