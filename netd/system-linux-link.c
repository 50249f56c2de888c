/*
 * Links on Linux: listed from an RTM_GETLINK dump (libnl's link cache),
 * changed with RTM_NEWLINK; speed and duplex come from the ethtool
 * ioctl, which rtnetlink does not carry.
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/route/link/vlan.h>

#include "system-linux.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP	0x10000	/* <linux/if.h>, which clashes with <net/if.h> */
#endif

/* Speed and duplex as the driver reports them (veth: 10000, full). */
void
linux_ethtool(struct net_link *l)
{
	struct ethtool_cmd cmd = { .cmd = ETHTOOL_GSET };
	struct ifreq ifr;
	uint32_t speed;
	int fd;

	l->speed_mbps = -1;
	snprintf(l->duplex, sizeof(l->duplex), "unknown");
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", l->name);
	ifr.ifr_data = (void *)&cmd;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
		speed = ethtool_cmd_speed(&cmd);
		if (speed != 0 && speed != (uint32_t)SPEED_UNKNOWN)
			l->speed_mbps = (int)speed;
		if (cmd.duplex == DUPLEX_FULL || cmd.duplex == DUPLEX_HALF)
			snprintf(l->duplex, sizeof(l->duplex), "%s",
			    cmd.duplex == DUPLEX_FULL ? "full" : "half");
	}
	close(fd);
}

void
nl_fill_link(struct nl_cache *c, struct rtnl_link *k, struct net_link *l)
{
	struct nl_addr *mac;
	const char *kind;
	unsigned flags = rtnl_link_get_flags(k);

	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", rtnl_link_get_name(k));
	l->ifindex = rtnl_link_get_ifindex(k);
	if ((kind = rtnl_link_get_type(k)) != NULL)
		snprintf(l->kind, sizeof(l->kind), "%s", kind);
	l->up = !!(flags & IFF_UP);
	l->carrier = !!(flags & IFF_LOWER_UP);
	rtnl_link_operstate2str(rtnl_link_get_operstate(k), l->operstate, sizeof(l->operstate));
	l->mtu = rtnl_link_get_mtu(k);
	if ((mac = rtnl_link_get_addr(k)) != NULL && nl_addr_get_len(mac) == 6)
		memcpy(l->mac, nl_addr_get_binary_addr(mac), 6);
	l->rx_bytes = rtnl_link_get_stat(k, RTNL_LINK_RX_BYTES);
	l->tx_bytes = rtnl_link_get_stat(k, RTNL_LINK_TX_BYTES);
	l->rx_packets = rtnl_link_get_stat(k, RTNL_LINK_RX_PACKETS);
	l->tx_packets = rtnl_link_get_stat(k, RTNL_LINK_TX_PACKETS);
	l->rx_errors = rtnl_link_get_stat(k, RTNL_LINK_RX_ERRORS);
	l->tx_errors = rtnl_link_get_stat(k, RTNL_LINK_TX_ERRORS);
	l->rx_dropped = rtnl_link_get_stat(k, RTNL_LINK_RX_DROPPED);
	l->tx_dropped = rtnl_link_get_stat(k, RTNL_LINK_TX_DROPPED);
	if (rtnl_link_get_master(k) > 0)
		rtnl_link_i2name(c, rtnl_link_get_master(k), l->master, sizeof(l->master));
	l->vlan_id = -1;
	if (rtnl_link_is_vlan(k)) {
		l->vlan_id = rtnl_link_vlan_get_id(k);
		rtnl_link_i2name(c, rtnl_link_get_link(k), l->parent, sizeof(l->parent));
	}
	linux_ethtool(l);
}

int
linux_link_list(struct net_link **out, int *n)
{
	struct nl_cache *c;
	struct nl_object *o;
	int i = 0;

	if ((c = nl_links()) == NULL)
		return -1;
	if ((*out = calloc((size_t)nl_cache_nitems(c) + 1, sizeof(**out))) == NULL) {
		nl_cache_free(c);
		return -1;
	}
	for (o = nl_cache_get_first(c); o; o = nl_cache_get_next(o))
		nl_fill_link(c, (struct rtnl_link *)o, &(*out)[i++]);
	*n = i;
	nl_cache_free(c);
	return 0;
}

int
linux_link_get(const char *name, struct net_link *out)
{
	struct nl_cache *c;
	struct rtnl_link *k;

	if ((c = nl_links()) == NULL)
		return -1;
	if ((k = rtnl_link_get_by_name(c, name)) == NULL) {
		nl_cache_free(c);
		return 1;
	}
	nl_fill_link(c, k, out);
	rtnl_link_put(k);
	nl_cache_free(c);
	return 0;
}

/* RTM_NEWLINK for the link with what chg says. */
int
linux_link_change(const char *name, struct rtnl_link *chg)
{
	struct rtnl_link *orig;
	struct nl_msg *msg;
	int ifindex, err;

	if ((ifindex = (int)if_nametoindex(name)) == 0) {
		errno = ENODEV;
		return -1;
	}
	if ((orig = rtnl_link_alloc()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rtnl_link_set_ifindex(orig, ifindex);
	err = rtnl_link_build_change_request(orig, chg, 0, &msg);
	rtnl_link_put(orig);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}

int
linux_link_set(const char *name, int up, unsigned mtu)
{
	struct rtnl_link *chg;
	int rc;

	if ((chg = rtnl_link_alloc()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (mtu)
		rtnl_link_set_mtu(chg, mtu);
	if (up == 1)
		rtnl_link_set_flags(chg, IFF_UP);
	else if (up == 0)
		rtnl_link_unset_flags(chg, IFF_UP);
	rc = linux_link_change(name, chg);
	rtnl_link_put(chg);
	return rc;
}

int
linux_vlan_add(const char *parent, int id, const char *name)
{
	struct rtnl_link *v;
	struct nl_msg *msg;
	int ifindex, err;

	if (id < 0 || id > 0xffff) {
		errno = ERANGE;	/* the kernel's answer to any id above 4094 */
		return -1;
	}
	if ((ifindex = (int)if_nametoindex(parent)) == 0) {
		errno = ENODEV;
		return -1;
	}
	if ((v = rtnl_link_vlan_alloc()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rtnl_link_set_link(v, ifindex);
	rtnl_link_set_name(v, name);
	rtnl_link_vlan_set_id(v, (uint16_t)id);
	err = rtnl_link_build_add_request(v, NLM_F_CREATE | NLM_F_EXCL, &msg);
	rtnl_link_put(v);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}

int
linux_link_del(const char *name)
{
	struct rtnl_link *k;
	struct nl_msg *msg;
	int err;

	if ((k = rtnl_link_alloc()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rtnl_link_set_name(k, name);
	err = rtnl_link_build_delete_request(k, &msg);
	rtnl_link_put(k);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}
