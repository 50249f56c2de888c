/*
 * The management guard (issue 11, Decision 81): netd's clients reach
 * it through a web UI or a shell on the network, so a change that would
 * cut the link they come through locks the user out. netd cannot see
 * the remote end (its socket is local), so it guards every link that
 * could carry it: one with an address other than IPv6 link-local or the
 * default route (management_link, bond.c). Single-step methods refuse
 * such a change without force; net.apply refuses it unless it comes with
 * a confirmation window (confirm_s: rolled back by itself if the user is
 * lost) or force.
 */
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "netd.h"
#include "netconf.h"

static int
link_local(const struct net_addr *a)
{
	return a->family == AF_INET6 && a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
}

/* Whether the link, or the bond it is a port of, may carry the caller. */
static int
carries(const char *name)
{
	struct net_link l;

	if (management_link(name))
		return 1;
	return net->link_get(name, &l) == 0 && *l.master && management_link(l.master);
}

/* Whether running op may cut the caller off; what in why. */
static int
op_cuts(const struct nc_op *o, char *why, size_t len)
{
	const struct nc_link *l = &o->link;
	char what[128];

	switch (o->kind) {
	case OP_ADDR_DEL:
		if (link_local(&l->addr[0]))
			return 0;
		break;
	case OP_LINK_DEL:
	case OP_DHCP_STOP:
		if (!carries(l->name))
			return 0;
		break;
	case OP_LINK_SET:
		if ((l->up != 0 && l->mtu == 0) || !carries(l->name))
			return 0;
		break;
	case OP_BOND_MAKE:
		for (int i = 0; i < l->nports; i++)
			if (carries(l->ports[i])) {
				snprintf(why, len, "bond-make %s takes %s, which carries addresses or "
				    "the default route", l->name, l->ports[i]);
				return 1;
			}
		return 0;
	case OP_ROUTE_DEL:
		break;
	default:
		return 0;
	}
	nc_op_format(o, what, sizeof(what));
	snprintf(why, len, "%s may cut the connection the caller reaches this unit through", what);
	return 1;
}

int
netconf_cuts(const struct netconf *want, char *why, size_t len)
{
	struct netconf have NETCONF_AUTO = { 0 };
	struct nc_step *s;
	int n, cut = 0;

	if (netconf_running(&have) == -1 || (s = netconf_plan(want, &have, &n)) == NULL)
		return -1;
	for (int i = 0; i < n && !cut; i++)
		cut = op_cuts(&s[i].op, why, len);
	free(s);
	return cut;
}
