/* The simulated four-bay board the raidd suites run on (system-sim.c). */
#ifndef NAS_UNIT_RAIDD_H
#define NAS_UNIT_RAIDD_H

#include <stdint.h>

struct rpc_server;

/* A blank disk in bay (1-4), serial SER<bay>. */
void	 unit_raidd_disk(int bay, const char *name, uint64_t size);
/*
 * A fresh simulator, no volumes, this unit's id, the board's four bays;
 * the disks given (sizes[i] bytes as sda, sdb ...) are scanned; returns
 * a server with the disk and volume methods (rpc_server_free it).
 */
struct rpc_server *unit_raidd_setup(const uint8_t unit[16], const uint64_t *sizes, int n);

#endif
