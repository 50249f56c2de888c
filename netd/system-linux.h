/* Shared by the system-linux*.c files: the rtnetlink socket and requests. */
#ifndef NETD_SYSTEM_LINUX_H
#define NETD_SYSTEM_LINUX_H

#include <netlink/netlink.h>
#include <netlink/cache.h>
#include <netlink/route/link.h>

#include "system.h"

/* The request socket, connected on first use; NULL with errno set. */
struct nl_sock *nl_route(void);
/*
 * Sends msg (freed here) and waits for the kernel's answer: 0, or -1
 * with errno the kernel's own and its extended-ack text in net_errmsg().
 */
int	nl_request(struct nl_msg *msg);
/* A libnl error code as an errno (for failures before the kernel answered). */
int	nl_errno(int nlerr);
/* A fresh cache of every link; NULL with errno set. */
struct nl_cache *nl_links(void);
/* Fills a net_link from a libnl link (counters, kind, master, VLAN). */
void	nl_fill_link(struct nl_cache *, struct rtnl_link *, struct net_link *);

/* system-linux-link.c */
int	linux_link_list(struct net_link **, int *);
int	linux_link_get(const char *, struct net_link *);
int	linux_link_set(const char *, int, unsigned);
int	linux_vlan_add(const char *, int, const char *);
int	linux_link_del(const char *);
/* RTM_NEWLINK for the named link with what chg says. */
int	linux_link_change(const char *name, struct rtnl_link *chg);
/* Speed and duplex of l->name from the ethtool ioctl. */
void	linux_ethtool(struct net_link *l);

/* system-linux-bond.c */
int	linux_bond_create(const struct net_bond_opts *);
int	linux_bond_get(const char *, struct net_bond *);
int	linux_link_set_master(const char *, const char *);

/* system-linux-addr.c */
int	linux_addr_list(struct net_addr **, int *);
int	linux_addr_add(const struct net_addr *);
int	linux_addr_del(const struct net_addr *);
int	linux_route_list(struct net_route **, int *);
int	linux_route_set_default(int, const unsigned char *);
int	linux_route_del_default(int);

#endif
