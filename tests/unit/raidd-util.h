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

#endif
