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
/* 802.3ad state of a bond's port, as the kernel would report it. */
int	sim_set_lacp(const char *port, int aggregator_id, int actor_state, int partner_state);
/* The bond's active aggregator (0: none), its ports and partner. */
int	sim_set_ad_info(const char *bond, int aggregator, int nports, const unsigned char partner[6]);
/* The largest MTU the link's driver takes (a NIC without jumbo frames). */
int	sim_set_max_mtu(const char *name, unsigned max);
/*
 * What the kernel does on a router advertisement: an IPv6 address with a
 * lifetime on link, and a default route (proto ra) through the router's
 * link-local address.
 */
int	sim_add_autoconf(const char *link, const unsigned char addr[16], int prefix,
	    const unsigned char router[16]);
/* The mutating operation after the next n fails with EIO (once); -1: none. */
void	sim_fail_after(int n);

#endif
