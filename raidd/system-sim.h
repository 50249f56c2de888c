/* system-sim.c: a simulated kernel for raidd's unit tests. */
#ifndef RAIDD_SYSTEM_SIM_H
#define RAIDD_SYSTEM_SIM_H

#include <stdint.h>

#include "system.h"

/* Adds a blank disk; syspath is what bay patterns match against. */
void	sim_add_disk(const char *name, uint64_t size, const char *serial,
	    const char *syspath);
void	sim_remove_disk(const char *name);
/* A disk pulled from its bay keeps its data; pushed back, it is the same disk. */
void	sim_pull_disk(const char *name);
void	sim_push_disk(const char *name);
/* Every I/O to the disk fails from now on (vmctl disk-error), or, on 0,
   works again; md's failed members stay failed. */
void	sim_disk_error(const char *name, int on);
/* md fails a member for I/O errors: faulty, its disk still there. */
void	sim_fail_member(const char *md, const char *dev);
/* md's recovery moves on by this many sectors on every member it rebuilds;
   one recovered in full is in sync. */
void	sim_md_recover(const char *md, uint64_t sectors);
/* md's reshape (volume.add_disk) moves on by this many sectors of each
   member; at the end the data sits at the new offset, the array is bigger. */
void	sim_md_reshape_step(const char *md, uint64_t sectors);
/* md holds MD_RECOVERY_RUNNING (on 1) with nothing shown in sync_action:
   md_reshape and md_set_level fail EBUSY, nothing started, until off. */
void	sim_md_recovery_running(const char *md, int on);
/* Moves two disks' contents (and serials) into each other's place. */
void	sim_swap_disks(const char *a, const char *b);
/* Makes /dev/a lead to disk b and /dev/b to disk a (a hostile udev, a
   stale node): sysfs and the scan still see each under its own name.
   Called again, it puts the nodes back. */
void	sim_node_swap(const char *a, const char *b);
/* fn runs once, just before the next mutating operation (a disk swapped
   between raidd's proof and its write). */
void	sim_before_step(void (*fn)(void));
/* The disk grows in place (a virtual disk resized); its data stays. */
void	sim_grow_disk(const char *name, uint64_t size);
/* The kernel holds partition disk<no> at start, size bytes, the GPT no entry for it. */
void	sim_kernel_part(const char *disk, int no, uint64_t start, uint64_t size);
/* Bytes the filesystem on dev spans (mkfs, then fs_grow); 0 if none. */
uint64_t sim_fs_size(const char *dev);
/* Mutating operations after the next n succeed fail with EIO, as if the
   power went at that point; -1 turns this off. */
void	sim_fail_after(int n);
/* Number of mutating operations so far (to enumerate cut points). */
int	sim_ops(void);
int	sim_md_bitmap_renew(const char *);
/* The power comes back: arrays, mappings and mounts are gone, disks stay. */
void	sim_power_cut(void);
/* md's safe mode: no write for a while, the array (NULL: every one) is
   marked clean again. */
void	sim_md_idle(const char *md);
/* 1 when md's superblocks say the array is dirty (written, not marked clean). */
int	sim_md_dirty(const char *md);
/* Drops everything (between tests). */
void	sim_reset(void);
int	sim_md_count(void);
int	sim_dm_count(void);
/* A dm map's first segment and its count of them; -1 no such map. */
int	sim_dm_seg(const char *name, struct sys_seg *);
int	sim_mount_count(void);
/* Disks probed for signatures so far (each probe would wake a sleeping disk). */
int	sim_probes(void);
/* Reads of a disk's bytes through the seam (read_at) so far. */
int	sim_reads(void);


/* system-sim-sync.c: md's sync actions and notifications. */
/* md moves its check, repair or recovery sectors further (the end: idle). */
void	sim_md_sync_step(const char *md, uint64_t sectors);
/* The copies of the 4 KiB block at sector differ (check counts, repair fixes). */
void	sim_md_corrupt(const char *md, uint64_t sector);
/* md recovers dev: in its role, not in sync, until the recovery ends. */
void	sim_md_rebuild(const char *md, const char *dev);
/* md corrected n read errors on dev (dev-X/errors). */
void	sim_member_errors(const char *md, const char *dev, unsigned n);
/* What the bay LED at dir was last set to (enum sys_led), -1 never. */
int	sim_led(const char *dir);
/* How often md woke a watcher so far. */
int	sim_md_wakes(void);

/* Between the simulator's files. */
void	sim_md_event(const char *md);
void	sim_md_gone(const char *md, int event);
void	sim_sync_reset(void);
void	sim_sync_forget(void);
void	sim_sync_status(const char *md, struct sys_md_status *);
/* A sync, check or recovery of md runs. */
int	sim_md_syncing(const char *md);
int	sim_md_sync(const char *md, const struct sys_md_sync *);
int	sim_watch_open(void);
int	sim_watch_arrays(int fd, char (*names)[SYS_NAME_MAX], int n);
int	sim_watch_read(int fd);
int	sim_led_set(const char *dir, enum sys_led);

#endif
