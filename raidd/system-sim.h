/* system-sim.c: a simulated kernel for raidd's unit tests. */
#ifndef RAIDD_SYSTEM_SIM_H
#define RAIDD_SYSTEM_SIM_H

#include <stdint.h>

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
/* Moves two disks' contents (and serials) into each other's place. */
void	sim_swap_disks(const char *a, const char *b);
/* Mutating operations after the next n succeed fail with EIO, as if the
   power went at that point; -1 turns this off. */
void	sim_fail_after(int n);
/* Number of mutating operations so far (to enumerate cut points). */
int	sim_ops(void);
/* The power comes back: arrays, mappings and mounts are gone, disks stay. */
void	sim_power_cut(void);
/* Drops everything (between tests). */
void	sim_reset(void);
int	sim_md_count(void);
int	sim_dm_count(void);
int	sim_mount_count(void);
/* Disks probed for signatures so far (each probe would wake a sleeping disk). */
int	sim_probes(void);

#endif
