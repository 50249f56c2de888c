/*
 * netd's one kernel seam. Everything netd asks of the kernel goes
 * through struct net_ops: system-linux*.c implement it with rtnetlink
 * (libnl-3 route) and the ethtool ioctl; system-sim.c keeps links,
 * addresses and routes in memory, refusing what the kernel refuses, so
 * the logic above can be tested on any machine.
 *
 * Every operation returns 0, or -1 with errno set to what the kernel
 * answered; net_errmsg() then holds the kernel's extended-ack text when
 * it gave one ("" otherwise).
 */
#ifndef NETD_SYSTEM_H
#define NETD_SYSTEM_H

#include <stdint.h>

#define NET_NAME_MAX	16	/* IFNAMSIZ, with the NUL */

struct net_link {
	char		name[NET_NAME_MAX];
	int		ifindex;
	char		kind[16];	/* rtnl kind: "veth", "vlan", "bond"; "" for hardware */
	int		up;		/* administratively (IFF_UP) */
	int		carrier;	/* IFF_LOWER_UP */
	char		operstate[16];	/* up, down, lowerlayerdown, unknown ... */
	unsigned	mtu;
	unsigned char	mac[6];
	int		speed_mbps;	/* -1: unknown */
	char		duplex[8];	/* full, half, unknown */
	uint64_t	rx_bytes, tx_bytes, rx_packets, tx_packets;
	uint64_t	rx_errors, tx_errors, rx_dropped, tx_dropped;
	char		master[NET_NAME_MAX];	/* the bond it is a port of, or "" */
	char		parent[NET_NAME_MAX];	/* a VLAN's lower link, or "" */
	int		vlan_id;	/* -1 unless a VLAN */
};

/* An address on a link: family AF_INET or AF_INET6. */
struct net_addr {
	char		link[NET_NAME_MAX];
	int		family;
	unsigned char	addr[16];
	int		prefix;
	int		dynamic;	/* a lifetime, the kernel's (SLAAC, privacy, a lease): not configuration */
};

/* A route of the main table. */
struct net_route {
	int		family;
	unsigned char	dst[16];
	int		dst_len;	/* 0: default */
	int		has_gw;
	unsigned char	gw[16];
	char		link[NET_NAME_MAX];	/* "" when it has no single device */
	char		proto[16];	/* kernel, static, boot, dhcp ... */
};

#define NET_BOND_PORTS	8

/* What bond_create sets; -1 leaves an option at the kernel's default. */
struct net_bond_opts {
	char		name[NET_NAME_MAX];
	int		mode;		/* BOND_MODE_*: 0 balance-rr ... 4 802.3ad ... 6 balance-alb */
	int		miimon;		/* ms */
	int		lacp_rate;	/* 0 slow, 1 fast */
	int		xmit_hash_policy;	/* BOND_XMIT_POLICY_* */
	int		min_links;
	int		ad_select;	/* 0 stable, 1 bandwidth, 2 count */
	unsigned char	mac[6];		/* the bond's MAC, set at creation */
	char		primary[NET_NAME_MAX];	/* the preferred port, or "" */
	int		primary_ifindex;	/* the seam's: primary's ifindex for the kernel */
};

/* One port of a bond as the kernel reports it (IFLA_INFO_SLAVE_DATA). */
struct net_bond_port {
	char		name[NET_NAME_MAX];
	int		up, carrier;
	int		speed_mbps;	/* -1: unknown */
	char		duplex[8];
	int		backup;		/* IFLA_BOND_SLAVE_STATE: 0 active, 1 backup */
	int		mii_up;
	uint32_t	link_failures;
	unsigned char	perm_mac[6];
	int		aggregator_id;	/* -1: none reported */
	int		actor_state;	/* LACP port state bits; -1: none reported */
	int		partner_state;
	uint64_t	rx_bytes, tx_bytes;
};

/* A bond with its options, 802.3ad state and ports (IFLA_INFO_DATA). */
struct net_bond {
	char		name[NET_NAME_MAX];
	int		ifindex;
	int		up, carrier;
	unsigned char	mac[6];
	int		mode, miimon, lacp_rate, xmit_hash_policy, min_links, ad_select;
	char		primary[NET_NAME_MAX];	/* reported while that port is enslaved; "" */
	char		active_port[NET_NAME_MAX];	/* active-backup, tlb, alb: the port in use */
	int		primary_ifindex, active_ifindex;	/* as the kernel reports them; 0 */
	int		has_ad_info;	/* IFLA_BOND_AD_INFO: an active aggregator */
	int		ad_aggregator, ad_num_ports, ad_actor_key, ad_partner_key;
	unsigned char	ad_partner_mac[6];
	int		nports;
	struct net_bond_port port[NET_BOND_PORTS];
};

struct net_ops {
	/* Every link; caller frees *out. */
	int	(*link_list)(struct net_link **out, int *n);
	/* One link by name: 0 found, 1 no such link, -1 error. */
	int	(*link_get)(const char *name, struct net_link *out);
	/* up: 1, 0, or -1 unchanged; mtu: 0 unchanged. */
	int	(*link_set)(const char *name, int up, unsigned mtu);
	/* An 802.1Q link name on parent with id, created down. */
	int	(*vlan_add)(const char *parent, int id, const char *name);
	int	(*link_del)(const char *name);
	int	(*addr_list)(struct net_addr **out, int *n);
	int	(*addr_add)(const struct net_addr *);
	int	(*addr_del)(const struct net_addr *);
	int	(*route_list)(struct net_route **out, int *n);
	/* Makes (or replaces) the main table's default route of gw's family. */
	int	(*route_set_default)(int family, const unsigned char *gw);
	/* Deletes the main table's default route of family (ESRCH: none). */
	int	(*route_del_default)(int family);
	/* A bond, down, with every option of o; the ports come after. */
	int	(*bond_create)(const struct net_bond_opts *o);
	/* 0 found, 1 no bond of that name (absent, or not a bond), -1 error. */
	int	(*bond_get)(const char *name, struct net_bond *out);
	/* Makes port a port of master (the port must be down); "" releases. */
	int	(*link_set_master)(const char *port, const char *master);
	/*
	 * A descriptor that becomes readable when a link changes (the
	 * RTNLGRP_LINK multicast group); -1 if none. monitor_read drains it:
	 * 1 when some link changed, 0 when nothing did.
	 */
	int	(*monitor_open)(void);
	int	(*monitor_read)(int fd);
};

extern const struct net_ops net_linux;
extern const struct net_ops net_sim;

/* The seam netd runs on; set once at start (tests pick net_sim). */
extern const struct net_ops *net;

/* The kernel's own words about the last failure, or "". */
const char *net_errmsg(void);
void	net_set_errmsg(const char *);

#endif
