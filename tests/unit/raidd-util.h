/* Helpers of the raidd suites that drive the volume.* methods. */
#ifndef NAS_RAIDD_UTIL_H
#define NAS_RAIDD_UTIL_H

struct rpc_server;
struct volume;

/* volume.create as root, its job run to the end, states checked. */
struct volume *raidd_create(struct rpc_server *, const char *name, const char *level,
	    const char *disks);

#endif
