/* system-sim.c: the simulated kernel seam and the hooks tests drive it with. */
#ifndef NETD_SYSTEM_SIM_H
#define NETD_SYSTEM_SIM_H

#include "system.h"

/* Empties the simulated kernel: only lo is left. */
void	sim_reset(void);
/* A hardware port (virtio-like: MTU 68-65535), its cable plugged in. */
int	sim_add_port(const char *name, const unsigned char mac[6], int speed_mbps);
/* A veth pair (MTU 68-65535, 10000 Mb/s full duplex). */
int	sim_add_veth(const char *a, const char *b);
/* Plugs or pulls a port's cable; the monitor descriptor becomes readable. */
int	sim_set_cable(const char *name, int plugged);
/* Counters of a link, as if traffic had passed. */
int	sim_add_traffic(const char *name, uint64_t rx_bytes, uint64_t tx_bytes);
/* Mutating operations left before every one fails with EIO; -1: no limit. */
void	sim_fail_after(int n);

#endif
