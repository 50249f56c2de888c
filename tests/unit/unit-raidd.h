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

/* 4 KiB every 8 MiB of dev past 1 MiB, each saying where it is: written, or checked. */
void	 unit_raidd_pattern(const char *dev, uint64_t size, int write);
/* Bytes of volume vol's dm map. */
uint64_t unit_raidd_dm_size(const char *vol);
/* A power cut, a fresh start, the jobs run: md recovers and reshapes by these a turn. */
void	 unit_raidd_reboot_md(const char *vol, uint64_t recover, uint64_t reshape);

#endif
