/*
 * DHCPv4 on a link: busybox udhcpc as a supervised child whose script
 * reports each event to netd on a pipe (descriptor 9); netd checks the
 * lease and applies it itself through the seam (Decision 68).
 */
#ifndef NETD_DHCP_H
#define NETD_DHCP_H

#include <stddef.h>

#include "rpc.h"
#include "system.h"

#define DHCP_LINKS	8	/* links with a client at once */

extern const struct rpc_method dhcp_methods[];

/*
 * The client's program and script; an empty client runs no process (the
 * unit suites, a simulation): leases then come through dhcp_report only.
 */
void	dhcp_set_client(const char *client, const char *script);
/*
 * A lease silent past max(lease, floor_s) + grace_s is dropped (122 s
 * and 10 s: udhcpc's floor; the unit suites set shorter ones).
 */
void	dhcp_set_lease_floor(double floor_s, double grace_s);
/*
 * Starts a client on link (fallback: an IPv4 address applied while no
 * lease is had, or NULL). 0, or -1 with errno (EBUSY: already running,
 * ENOSPC: DHCP_LINKS clients run).
 */
int	dhcp_start(const char *link, const struct net_addr *fallback);
/* A fallback address: IPv4 CIDR, a host address, prefix 8-30; 0, or -1 with why. */
int	dhcp_fallback_parse(const char *s, struct net_addr *a, char *why, size_t len);
/* Stops it; the lease's address, route and name servers go. 0, or -1 (ESRCH: none). */
int	dhcp_stop(const char *link);
/* Asks the client to renew now: 0, or -1 (ESRCH: none runs, EAGAIN: between restarts). */
int	dhcp_renew(const char *link);
/* A client runs on link. */
int	dhcp_active(const char *link);
/* A lease or the fallback address is on link. */
int	dhcp_bound(const char *link);
/* Stops every client (daemon shutdown, unit suites). */
void	dhcp_reset(void);
/*
 * One report of the script ("event=bound\nip=...\n"); what netd makes of
 * it. 0 applied (or nothing to do), -1 refused (logged, the lease kept
 * out: dhcp_describe's "error" says why).
 */
int	dhcp_report(const char *link, const char *record);
/*
 * Bytes as if read from the script's pipe of link's client (framed into
 * records as pipe_cb does); for a link with no child (the fuzz target,
 * the unit suites). 0, or -1 (ESRCH: no client, EBUSY: a child runs).
 */
int	dhcp_feed(const char *link, const void *data, size_t n);

/* For the running state (netconf_running): a client runs on link; *fallback filled. */
int	dhcp_running(const char *link, struct net_addr *fallback, int *has_fallback);
/* The address is a lease's or the fallback's (not the configuration's). */
int	dhcp_owns_addr(const struct net_addr *);
/* The default route via gw on link is a lease's. */
int	dhcp_owns_route(int family, const unsigned char *gw, const char *link);
/* The name servers are those a lease wrote. */
int	dhcp_owns_dns(const char (*ip)[46], int n);

struct json_object;
/* link.show's "dhcp": the client's state and lease, or NULL when none runs. */
struct json_object *dhcp_describe(const char *link);

#endif
