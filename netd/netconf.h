/*
 * netd's configuration (/etc/nas/netd.ini, netd.conf(5)) in memory, the
 * running state in the same shape, and the diff engine between them:
 * a configuration and the running state give a list of steps, each an
 * operation with the one that undoes it.
 */
#ifndef NETD_NETCONF_H
#define NETD_NETCONF_H

#include <stdio.h>

#include "rpc.h"
#include "system.h"

/*
 * Links a netconf holds, grown as they come: a NAS with many VLANs or
 * containers' veths has hundreds. The bound only stops a file or a
 * client from making netd allocate without end; past it a clear error.
 */
#define NC_LINKS	4096
#define NC_ADDRS	8
#define NC_DNS		3
#define NC_IPLEN	46	/* INET6_ADDRSTRLEN */

enum nc_kind { NC_PORT, NC_BOND, NC_VLAN };

struct nc_link {
	char		name[NET_NAME_MAX];
	int		kind;		/* NC_* */
	int		up;		/* -1: not said */
	unsigned	mtu;		/* 0: not said */
	int		naddr;
	struct net_addr	addr[NC_ADDRS];
	struct net_bond_opts bond;	/* NC_BOND: mode and options (mac unused) */
	int		nports;
	char		ports[NET_BOND_PORTS][NET_NAME_MAX];
	char		parent[NET_NAME_MAX];	/* NC_VLAN */
	int		vlan_id;
	int		dhcp;		/* a DHCPv4 client runs on it (dhcp.c) */
	int		has_fallback;	/* its address while no lease is had */
	struct net_addr	fallback;
};

struct netconf {
	int		nlinks, cap;
	struct nc_link	*link;		/* nlinks of cap (netconf_grow); netconf_free */
	int		has_gw[2];	/* [0] IPv4, [1] IPv6 */
	unsigned char	gw[2][16];
	char		gw_link[2][NET_NAME_MAX];	/* running state: the route's link */
	int		gw_none[2];	/* no default route wanted (a rollback's target) */
	int		has_dns;
	int		ndns;
	char		dns[NC_DNS][NC_IPLEN];
};

/* netconf.c: reading and writing the configuration */
/*
 * A netconf's links are allocated: a netconf starts zeroed ({ 0 }); the
 * functions that fill one (netconf_load, netconf_from_json,
 * netconf_running) free what it held first, and netconf_free gives the
 * memory back, leaving it zeroed (safe to fill or free again).
 */
void	netconf_free(struct netconf *);
/* A netconf freed when it goes out of scope: struct netconf c NETCONF_AUTO = { 0 }; */
#define NETCONF_AUTO	__attribute__((cleanup(netconf_free)))
/* A new link at the end, zeroed; NULL with errno (E2BIG past NC_LINKS, ENOMEM). */
struct nc_link *netconf_grow(struct netconf *);
/* Whether an ini section (lower case) is one of netconf's, not the daemon's own. */
int	netconf_section(const char *);
/* One "section", "key" = "value"; 0, or -1 with why (nothing changed). */
int	netconf_set(struct netconf *, const char *section, const char *key,
	    const char *value, char *why, size_t len);
/*
 * Reads path: 0 (a missing file is an empty configuration, *found 0),
 * or -1 when the file cannot be read. A bad value is logged and left
 * out; the rest is kept.
 */
int	netconf_load(const char *path, struct netconf *, int *found);
/* A JSON object {"section": {"key": value}} into c; 0, or -1 with why. */
struct json_object;
int	netconf_from_json(struct json_object *, struct netconf *, char *why, size_t len);
/*
 * Checks what one key cannot (options the bond's mode does not use, a
 * port in two bonds or with addresses, a VLAN's link and id) and fills
 * in bond.create's defaults; 0, or -1 with why.
 */
int	netconf_check(struct netconf *, char *why, size_t len);
void	netconf_print(const struct netconf *, FILE *);
/* Writes c to path atomically (temp file, fsync, rename, directory fsync). */
int	netconf_save(const char *path, const struct netconf *);
/*
 * The running state in the configuration's shape; 0 or -1 (errno; E2BIG
 * when it has more links (NC_LINKS) or addresses on a link than a
 * netconf holds: a state cut short would be written back, or rolled back
 * to, without them).
 */
int	netconf_running(struct netconf *);

/* diff.c: the diff engine */
enum nc_op_kind { OP_ADDR_DEL, OP_ADDR_ADD, OP_LINK_DEL, OP_BOND_MAKE, OP_VLAN_MAKE,
	OP_LINK_SET, OP_ROUTE_SET, OP_ROUTE_DEL, OP_DNS_SET, OP_DHCP_START, OP_DHCP_STOP };

struct nc_op {
	int		kind;		/* OP_* */
	struct nc_link	link;		/* the link; addr[0] for OP_ADDR_*, up/mtu for OP_LINK_SET */
	int		family;		/* OP_ROUTE_* */
	unsigned char	gw[16];
	int		ndns;		/* OP_DNS_SET */
	char		dns[NC_DNS][NC_IPLEN];
};

struct nc_step {
	struct nc_op	op, undo;
};

/*
 * The steps that turn have (the running state) into want. Bonds and
 * VLANs not in want are deleted; the addresses of a link want names are
 * exactly want's; links want does not name, the default route of a
 * family want gives no gateway and the name servers when want gives none
 * are left as they are. Returns the number of steps; the first max of
 * them are written to steps (NULL and 0: only counted).
 */
int	netconf_diff(const struct netconf *want, const struct netconf *have,
	    struct nc_step *steps, int max);
/* The steps of netconf_diff, allocated (free them); NULL with errno. */
struct nc_step *netconf_plan(const struct netconf *want, const struct netconf *have, int *n);
/* A step in words, for the log and the unit tests. */
void	nc_op_format(const struct nc_op *, char *buf, size_t len);
/* Runs one operation through the seam: 0, or -1 (errno, net_errmsg()). */
int	nc_op_run(const struct nc_op *);
/*
 * Runs steps in order; when one fails, undoes the ones done (last
 * first) and returns -1 with *failed its index.
 */
int	netconf_run(const struct nc_step *, int n, int *failed);
/* Turns the running state into want: netconf_running, diff, run. */
int	netconf_apply(const struct netconf *want, char *why, size_t len);
/*
 * As netconf_apply, but a step the kernel refuses is left out and the
 * rest still run (start and rollback: the state before was nothing, or
 * one the user lost the unit in, so all or nothing would leave the
 * management port without its address). -1 with the first refusal in
 * why when any step was refused.
 */
int	netconf_apply_best(const struct netconf *want, char *why, size_t len);

/* guard.c */
/*
 * Whether turning the running state into want may cut the caller off
 * (an address deleted, a link carrying addresses or the default route
 * taken down, deleted, re-MTU'd or made a bond's port, the default route
 * deleted): 1 with the first such step in why, 0, or -1 (errno).
 */
int	netconf_cuts(const struct netconf *want, char *why, size_t len);

/* apply.c: the configuration file, net.apply and net.confirm */
extern const struct rpc_method netconf_methods[];
void	netconf_set_path(const char *);
/* At start: applies the file (if any) to the running state. */
void	netconf_start(void);
/* After an API change: the running state written back to the file. */
void	netconf_changed(void);

#endif
