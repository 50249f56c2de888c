/*
 * Bonds on Linux. libnl 3.7 can neither set a bond's options nor read
 * its 802.3ad state, so the creation message is built by bond-nl.c and
 * sent through the request helper, and bond_get reads a raw RTM_GETLINK
 * dump that bond-nl.c decodes; only the port's master is set with libnl.
 */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/msg.h>

#include "bond-nl.h"
#include "system-linux.h"

int
linux_bond_create(const struct net_bond_opts *o)
{
	struct net_bond_opts k = *o;
	char buf[512];
	struct nl_msg *msg;
	size_t len;

	if (*k.primary && (k.primary_ifindex = (int)if_nametoindex(k.primary)) == 0) {
		errno = ENODEV;
		return -1;
	}
	if ((len = bond_nl_newlink(&k, 0, buf, sizeof(buf))) == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((msg = nlmsg_convert((struct nlmsghdr *)buf)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return nl_request(msg);
}

struct dump {
	struct bond_nl_link	*l;
	int			 n, cap;
};

static int
on_link(struct nl_msg *msg, void *arg)
{
	struct dump *d = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct bond_nl_link *grown;

	if (d->n == d->cap) {
		if ((grown = reallocarray(d->l, (size_t)d->cap * 2 + 16, sizeof(*grown))) == NULL)
			return NL_STOP;
		d->l = grown;
		d->cap = d->cap * 2 + 16;
	}
	if (bond_nl_parse(h, h->nlmsg_len, &d->l[d->n]) == 0)
		d->n++;
	return NL_OK;
}

/* Every link as bond-nl.c reads it; caller frees d->l. */
static int
dump_links(struct dump *d)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_sock *sk;
	struct nl_cb *cb;
	int err;

	memset(d, 0, sizeof(*d));
	if ((sk = nl_route()) == NULL)
		return -1;
	if ((cb = nl_cb_clone(nl_socket_get_cb(sk))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_link, d);
	if ((err = nl_send_simple(sk, RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi))) >= 0)
		err = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	if (err < 0) {
		free(d->l);
		d->l = NULL;
		errno = nl_errno(err);
		return -1;
	}
	return 0;
}

int
linux_bond_get(const char *name, struct net_bond *out)
{
	struct dump d;
	struct net_link l;
	int bi = -1;

	if (dump_links(&d) == -1)
		return -1;
	for (int i = 0; i < d.n; i++)
		if (d.l[i].is_bond && strcmp(d.l[i].name, name) == 0)
			bi = i;
	if (bi == -1) {
		free(d.l);
		return 1;
	}
	*out = d.l[bi].bond;
	out->nports = 0;
	/* Ports in ifindex order: the kernel's dump order, stable across calls. */
	for (int i = 0; i < d.n && out->nports < NET_BOND_PORTS; i++) {
		struct net_bond_port *p;

		if (!d.l[i].is_port || d.l[i].master != out->ifindex)
			continue;
		p = &out->port[out->nports++];
		*p = d.l[i].port;
		memset(&l, 0, sizeof(l));
		snprintf(l.name, sizeof(l.name), "%s", p->name);
		linux_ethtool(&l);
		p->speed_mbps = l.speed_mbps;
		snprintf(p->duplex, sizeof(p->duplex), "%s", l.duplex);
	}
	/* The kernel names the primary and active port by ifindex. */
	for (int i = 0; i < d.n; i++) {
		if (out->primary_ifindex && d.l[i].ifindex == out->primary_ifindex)
			snprintf(out->primary, sizeof(out->primary), "%s", d.l[i].name);
		if (out->active_ifindex && d.l[i].ifindex == out->active_ifindex)
			snprintf(out->active_port, sizeof(out->active_port), "%s", d.l[i].name);
	}
	free(d.l);
	return 0;
}

int
linux_link_set_master(const char *port, const char *master)
{
	struct rtnl_link *chg;
	int m = 0, rc;

	if (*master && (m = (int)if_nametoindex(master)) == 0) {
		errno = ENODEV;
		return -1;
	}
	if ((chg = rtnl_link_alloc()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rtnl_link_set_master(chg, m);
	rc = linux_link_change(port, chg);
	rtnl_link_put(chg);
	return rc;
}
