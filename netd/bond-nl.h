/*
 * bond-nl.c: the bond's rtnetlink messages, encoded and decoded with the
 * kernel's own headers and no library (libnl 3.7 neither writes nor reads
 * IFLA_INFO_DATA of a bond, and drops IFLA_INFO_SLAVE_DATA), so the unit
 * suite checks every attribute against the kernel's types and decodes
 * recorded kernel messages.
 */
#ifndef NETD_BOND_NL_H
#define NETD_BOND_NL_H

#include <stddef.h>
#include <stdint.h>

#include "system.h"

/* One RTM_NEWLINK as the kernel sends it, the parts netd reads. */
struct bond_nl_link {
	int		ifindex;
	char		name[NET_NAME_MAX];
	unsigned	flags;		/* ifi_flags */
	int		master;		/* ifindex of its bond, 0 none */
	char		kind[16];	/* IFLA_INFO_KIND */
	char		slave_kind[16];	/* IFLA_INFO_SLAVE_KIND */
	unsigned char	mac[6];
	uint64_t	rx_bytes, tx_bytes;
	int		is_bond;	/* bond below holds the options and AD info */
	struct net_bond	bond;
	int		is_port;	/* port below holds the slave data */
	struct net_bond_port port;
};

/*
 * Writes the RTM_NEWLINK that creates o (NLM_F_CREATE | NLM_F_EXCL,
 * NLM_F_ACK) into buf: IFLA_IFNAME, IFLA_ADDRESS, IFLA_LINKINFO { KIND
 * "bond", DATA { MODE, then each option set } }. Returns its length, 0
 * when len is too small.
 */
size_t	bond_nl_newlink(const struct net_bond_opts *o, uint32_t seq, void *buf, size_t len);
/* Decodes one RTM_NEWLINK; 0, or -1 when it is not one or is malformed. */
int	bond_nl_parse(const void *msg, size_t len, struct bond_nl_link *out);

#endif
