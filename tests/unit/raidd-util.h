/* Helpers of the raidd suites that drive the volume.* methods. */
#ifndef NAS_RAIDD_UTIL_H
#define NAS_RAIDD_UTIL_H

#include <stdint.h>

struct rpc_server;
struct volume;

/* volume.create as root, its job run to the end, states checked. */
struct volume *raidd_create(struct rpc_server *, const char *name, const char *level,
	    const char *disks);

/*
 * raidd on the simulated kernel: a four-bay board (bay N's LED named
 * bayN when leds), disks sda-sdd of size bytes with serials
 * PREFIX1-4, a unit id, every table empty.
 */
void	 raidd_sim_setup(uint64_t size, const char *serial_prefix, int leds);

/* Runs the loop until job id ends, md recovering vol's arrays at full speed. */
int	 raidd_drive(unsigned id, const char *vol);
/* A disk came or went (uevent); a power cut and a fresh start of raidd. */
int	 raidd_uevent(void);	/* volume_check_states()'s answer */
int	 raidd_uevent_of(const char *disk);	/* only that disk probed again */
void	 raidd_reboot(void);
/* 64 KiB of a pattern at 1 MiB into the volume, the arrays idle after it
   (md marked them clean), or still being written (dirty); checked back. */
void	 raidd_fill(const char *vol, uint8_t seed);
void	 raidd_fill_busy(const char *vol, uint8_t seed);
void	 raidd_check_fill(const char *vol, uint8_t seed);

#endif
