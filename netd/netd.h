/* netd: links, addresses and LACP bonds through rtnetlink. */
#ifndef NETD_H
#define NETD_H

#include "board.h"
#include "daemon.h"
#include "feature.h"
#include "system.h"

/* api.c */
extern const struct nas_daemon netd_daemon;
extern const struct nas_feature netd_features[];

/* util.c: names, addresses, errors */
/* The kernel's rule for an interface name (dev_valid_name). */
int	ifname_valid(const char *);
/*
 * A name netd.ini can hold as written, which netd alone makes and
 * configures: no capitals (iniparser lowers section names), none of
 * [ ] ; # = " ' \ (a section's end, a comment, a quoted value, a line
 * continued). Said in IFNAME_CONF_RULE.
 */
int	ifname_conf(const char *);
#define IFNAME_CONF_RULE "lower case, without [ ] ; # = \" ' \\"
/* "10.0.0.2/24" or "fd00::2/64" into a; 0, or -1 with why. */
int	cidr_parse(const char *s, struct net_addr *a, char *why, size_t len);
/* A bare address (no prefix): family, or -1. */
int	ip_parse(const char *s, unsigned char out[16]);
void	ip_format(int family, const unsigned char *a, char *buf, size_t len);
void	mac_format(const unsigned char mac[6], char *buf, size_t len);
/* Answers the failed seam call: errno mapped to an API code, the kernel's words. */
void	net_fail(struct rpc_call *, const char *what);

/* link.c */
extern const struct rpc_method link_methods[];
void	link_set_board(const struct board *);
/* The board port's label ("LAN 1") of a link name, or NULL. */
const char *link_board_label(const char *name);
struct json_object *link_describe(const struct net_link *);
/* The link named by params' key into l; answers and returns -1 if none. */
int	get_link(struct rpc_call *, struct json_object *params, const char *key,
	    struct net_link *l);
/* Compares the links with the last look and announces link.state. */
void	link_watch(void);
void	link_watch_reset(void);

/* bond.c */
extern const struct rpc_method bond_methods[];
/* Compares every bond with the last look: bond.port, bond.diagnosis. */
void	bond_watch(void);
void	bond_reset(void);
/* Makes a bond over ports (see bond.c); -1 with errno and *step on failure, undone. */
int	bond_make(const struct net_bond_opts *, char (*ports)[NET_NAME_MAX], int n,
	    const char **step);
/* Deletes a bond, its ports up again. */
int	bond_unmake(const struct net_bond *);
/*
 * Whether the link carries what the caller is likely reaching the unit
 * through (an address other than IPv6 link-local, or the default route,
 * on it or on a VLAN of it): changes that would cut it need force.
 */
int	management_link(const char *name);

/* addr.c */
extern const struct rpc_method addr_methods[];
void	addr_set_resolv(const char *path);
/* Writes text to path: temp file, fsync, rename, directory fsync. */
int	write_atomic(const char *path, const char *text);
/* The name servers of resolv.conf (at most max), or -1. */
int	dns_read(char (*ip)[46], int max);
/* Replaces resolv.conf with n name servers (already parsed and formatted). */
int	dns_write(const char (*ip)[46], int n);

#endif
