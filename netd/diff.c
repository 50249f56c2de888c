/*
 * The diff engine: a wanted configuration and the running state (both
 * struct netconf) give the steps between them, each an operation with
 * the one that undoes it, in an order the kernel accepts:
 *
 *   DHCP clients that stop               (undo: started again)
 *   default routes whose link goes       (undo: the route again)
 *   addresses that go                    (undo: added again)
 *   VLANs, then bonds that go or change  (undo: made again as they were)
 *   up/MTU of links that stay
 *   bonds, then VLANs that come, with    (undo: deleted, the ports
 *   their up and MTU                      as they were)
 *   addresses that come                  (undo: deleted)
 *   default routes, name servers         (undo: the old ones)
 *   DHCP clients that start              (undo: stopped)
 *
 * Undone last step first, the steps give the running state back: that
 * is what net.apply's rollback and a failed apply rely on. netconf_diff
 * touches nothing; nc_op_run is the only part that calls the seam.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dhcp.h"
#include "lacp.h"
#include "netd.h"
#include "netconf.h"

struct plan {
	struct nc_step	*s;
	int		n, max;
};

static void
add(struct plan *p, const struct nc_op *op, const struct nc_op *undo)
{
	if (p->n < p->max) {
		p->s[p->n].op = *op;
		p->s[p->n].undo = *undo;
	}
	p->n++;
}

static const struct nc_link *
find_link(const struct netconf *c, const char *name)
{
	for (int i = 0; i < c->nlinks; i++)
		if (strcmp(c->link[i].name, name) == 0)
			return &c->link[i];
	return NULL;
}

static int
has_port(const struct nc_link *b, const char *name)
{
	for (int i = 0; i < b->nports; i++)
		if (strcmp(b->ports[i], name) == 0)
			return 1;
	return 0;
}

/* Whether a bond of want differs from the running one in what it was made with. */
static int
bond_differs(const struct nc_link *w, const struct nc_link *h)
{
	const struct net_bond_opts *a = &w->bond, *b = &h->bond;

	if (a->mode != b->mode || w->nports != h->nports ||
	    (a->miimon >= 0 && a->miimon != b->miimon) ||
	    (a->lacp_rate >= 0 && a->lacp_rate != b->lacp_rate) ||
	    (a->min_links >= 0 && a->min_links != b->min_links) ||
	    (a->ad_select >= 0 && a->ad_select != b->ad_select) ||
	    strcmp(a->primary, b->primary) ||
	    (a->xmit_hash_policy >= 0 && a->xmit_hash_policy != b->xmit_hash_policy))
		return 1;
	for (int i = 0; i < w->nports; i++)
		if (!has_port(h, w->ports[i]))
			return 1;
	return 0;
}

/* Whether the running link h goes (deleted, or deleted to be made again). */
static int
doomed(const struct netconf *want, const struct netconf *have, const struct nc_link *h)
{
	const struct nc_link *w, *p;

	if (h->kind == NC_PORT)
		return 0;
	if ((w = find_link(want, h->name)) == NULL || w->kind != h->kind)
		return 1;
	if (h->kind == NC_BOND)
		return bond_differs(w, h);
	if (strcmp(w->parent, h->parent) || w->vlan_id != h->vlan_id)
		return 1;
	/* A VLAN goes with its link. */
	return (p = find_link(have, h->parent)) != NULL && doomed(want, have, p);
}

static int
has_addr(const struct nc_link *l, const struct net_addr *a)
{
	for (int i = 0; i < l->naddr; i++)
		if (l->addr[i].family == a->family && l->addr[i].prefix == a->prefix &&
		    memcmp(l->addr[i].addr, a->addr, 16) == 0)
			return 1;
	return 0;
}

static void
op_link(struct nc_op *o, int kind, const struct nc_link *l)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->link = *l;
}

static void
op_addr(struct nc_op *o, int kind, const struct net_addr *a)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	snprintf(o->link.name, sizeof(o->link.name), "%s", a->link);
	o->link.naddr = 1;
	o->link.addr[0] = *a;
}

static void
op_set(struct nc_op *o, const char *name, int up, unsigned mtu)
{
	memset(o, 0, sizeof(*o));
	o->kind = OP_LINK_SET;
	snprintf(o->link.name, sizeof(o->link.name), "%s", name);
	o->link.up = up;
	o->link.mtu = mtu;
}

static void
op_route(struct nc_op *o, int kind, int slot, const unsigned char *gw)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->family = slot ? AF_INET6 : AF_INET;
	if (gw)
		memcpy(o->gw, gw, 16);
}

static void
op_dns(struct nc_op *o, const struct netconf *c)
{
	memset(o, 0, sizeof(*o));
	o->kind = OP_DNS_SET;
	o->ndns = c->ndns;
	memcpy(o->dns, c->dns, sizeof(o->dns));
}

/* up/MTU of a link that stays, where want says something else. */
static void
diff_set(struct plan *p, const struct nc_link *w, const struct nc_link *h)
{
	struct nc_op op, undo;
	int up = w->up >= 0 && w->up != h->up ? w->up : -1;
	unsigned mtu = w->mtu && w->mtu != h->mtu ? w->mtu : 0;

	if (up == -1 && mtu == 0)
		return;
	op_set(&op, w->name, up, mtu);
	op_set(&undo, w->name, up >= 0 ? h->up : -1, mtu ? h->mtu : 0);
	add(p, &op, &undo);
}

static int
in_a_bond(const struct netconf *c, const char *name)
{
	for (int i = 0; i < c->nlinks; i++)
		if (c->link[i].kind == NC_BOND && has_port(&c->link[i], name))
			return 1;
	return 0;
}

static void
diff_make(struct plan *p, const struct netconf *want, const struct netconf *have, int kind)
{
	struct nc_op op, undo;

	for (int i = 0; i < want->nlinks; i++) {
		const struct nc_link *w = &want->link[i], *h = find_link(have, w->name);

		if (w->kind != kind || (h && h->kind == kind && !doomed(want, have, h)))
			continue;
		/*
		 * A bond deleted lets its ports go up: undone, each port is
		 * put back as it was (a step that does nothing forward).
		 */
		for (int k = 0; kind == NC_BOND && k < w->nports; k++) {
			const struct nc_link *port = find_link(have, w->ports[k]);

			if (port == NULL || port->up < 0)
				continue;
			op_set(&op, port->name, -1, 0);
			op_set(&undo, port->name, port->up, 0);
			add(p, &op, &undo);
		}
		op_link(&op, kind == NC_BOND ? OP_BOND_MAKE : OP_VLAN_MAKE, w);
		op_link(&undo, OP_LINK_DEL, w);
		add(p, &op, &undo);
	}
}

static int
same_fallback(const struct nc_link *a, const struct nc_link *b)
{
	return a->has_fallback == b->has_fallback && (!a->has_fallback ||
	    (a->fallback.prefix == b->fallback.prefix &&
	    memcmp(a->fallback.addr, b->fallback.addr, 4) == 0));
}

/*
 * DHCP clients: those that stop (starting: 0), or those that start (1).
 * A client whose link goes or whose fallback changes stops and starts
 * again; links want does not name keep theirs.
 */
static void
diff_dhcp(struct plan *p, const struct netconf *want, const struct netconf *have, int starting)
{
	struct nc_op op, undo;

	for (int i = 0; i < have->nlinks && !starting; i++) {
		const struct nc_link *h = &have->link[i], *w = find_link(want, h->name);

		/* A link that becomes a bond's port loses its client: the bond has the address. */
		if (!h->dhcp || (w == NULL && !doomed(want, have, h) && !in_a_bond(want, h->name)))
			continue;
		if (w && w->dhcp && w->kind == h->kind && !doomed(want, have, h) &&
		    same_fallback(w, h) && !in_a_bond(want, h->name))
			continue;
		op_link(&op, OP_DHCP_STOP, h);
		op_link(&undo, OP_DHCP_START, h);
		add(p, &op, &undo);
	}
	for (int i = 0; i < want->nlinks && starting; i++) {
		const struct nc_link *w = &want->link[i], *h = find_link(have, w->name);

		if (!w->dhcp || (h == NULL && w->kind == NC_PORT))
			continue;	/* no DHCP, or a port that is not there (yet) */
		if (h && h->dhcp && h->kind == w->kind && !doomed(want, have, h) &&
		    same_fallback(w, h))
			continue;
		op_link(&op, OP_DHCP_START, w);
		op_link(&undo, OP_DHCP_STOP, w);
		add(p, &op, &undo);
	}
}

int
netconf_diff(const struct netconf *want, const struct netconf *have, struct nc_step *steps,
    int max)
{
	struct plan p = { steps, 0, max };
	struct nc_op op, undo;
	int gone[2] = { 0, 0 };

	/* DHCP clients that stop, before their link can go. */
	diff_dhcp(&p, want, have, 0);
	/* Default routes through a link that goes: the rollback must put them back. */
	for (int f = 0; f < 2; f++) {
		const struct nc_link *h = find_link(have, have->gw_link[f]);

		if (!have->has_gw[f])
			continue;
		if ((h && doomed(want, have, h)) || want->gw_none[f] || (want->has_gw[f] &&
		    memcmp(want->gw[f], have->gw[f], 16))) {
			op_route(&op, OP_ROUTE_DEL, f, NULL);
			op_route(&undo, OP_ROUTE_SET, f, have->gw[f]);
			add(&p, &op, &undo);
			gone[f] = 1;
		}
	}
	/* Addresses that go, including those of links that go. */
	for (int i = 0; i < have->nlinks; i++) {
		const struct nc_link *h = &have->link[i], *w = find_link(want, h->name);
		int all = doomed(want, have, h);

		if (w == NULL && !all)
			continue;
		/* Last first: an IPv4 primary would take its secondaries with it. */
		for (int a = h->naddr - 1; a >= 0; a--)
			if (all || !has_addr(w, &h->addr[a])) {
				op_addr(&op, OP_ADDR_DEL, &h->addr[a]);
				op_addr(&undo, OP_ADDR_ADD, &h->addr[a]);
				add(&p, &op, &undo);
			}
	}
	/* VLANs first: a bond that goes takes its VLANs with it. */
	for (int kind = NC_VLAN; kind >= NC_BOND; kind--)
		for (int i = 0; i < have->nlinks; i++) {
			const struct nc_link *h = &have->link[i];

			if (h->kind != kind || !doomed(want, have, h))
				continue;
			op_link(&op, OP_LINK_DEL, h);
			op_link(&undo, kind == NC_BOND ? OP_BOND_MAKE : OP_VLAN_MAKE, h);
			add(&p, &op, &undo);
		}
	/* Links that stay: up and MTU (a bond's ports are the bond's). */
	for (int i = 0; i < want->nlinks; i++) {
		const struct nc_link *w = &want->link[i], *h = find_link(have, w->name);

		if (h && !doomed(want, have, h) && !in_a_bond(want, w->name))
			diff_set(&p, w, h);
	}
	diff_make(&p, want, have, NC_BOND);
	diff_make(&p, want, have, NC_VLAN);
	/* Addresses that come. */
	for (int i = 0; i < want->nlinks; i++) {
		const struct nc_link *w = &want->link[i], *h = find_link(have, w->name);
		int fresh = h == NULL || h->kind != w->kind || doomed(want, have, h);

		if (h == NULL && w->kind == NC_PORT)
			continue;	/* a port that is not there (yet) */
		for (int a = 0; a < w->naddr; a++)
			if (fresh || !has_addr(h, &w->addr[a])) {
				op_addr(&op, OP_ADDR_ADD, &w->addr[a]);
				op_addr(&undo, OP_ADDR_DEL, &w->addr[a]);
				add(&p, &op, &undo);
			}
	}
	for (int f = 0; f < 2; f++)
		if (want->has_gw[f] && (!have->has_gw[f] || gone[f])) {
			op_route(&op, OP_ROUTE_SET, f, want->gw[f]);
			op_route(&undo, OP_ROUTE_DEL, f, NULL);
			add(&p, &op, &undo);
		}
	if (want->has_dns && (!have->has_dns || want->ndns != have->ndns ||
	    memcmp(want->dns, have->dns, sizeof(want->dns[0]) * (size_t)want->ndns))) {
		op_dns(&op, want);
		op_dns(&undo, have);
		add(&p, &op, &undo);
	}
	diff_dhcp(&p, want, have, 1);
	return p.n;
}

struct nc_step *
netconf_plan(const struct netconf *want, const struct netconf *have, int *n)
{
	struct nc_step *s;

	/* Counted first: a state of many links has as many steps as it needs. */
	*n = netconf_diff(want, have, NULL, 0);
	if ((s = calloc((size_t)*n + 1, sizeof(*s))) == NULL)
		return NULL;
	netconf_diff(want, have, s, *n);
	return s;
}

void
nc_op_format(const struct nc_op *o, char *buf, size_t len)
{
	static const char *const names[] = { "addr-del", "addr-add", "link-del", "bond-make",
		"vlan-make", "link-set", "route-set", "route-del", "dns-set", "dhcp-start", "dhcp-stop" };
	char ip[64];

	switch (o->kind) {
	case OP_ADDR_DEL:
	case OP_ADDR_ADD:
		ip_format(o->link.addr[0].family, o->link.addr[0].addr, ip, sizeof(ip));
		snprintf(buf, len, "%s %s %s/%d", names[o->kind], o->link.name, ip,
		    o->link.addr[0].prefix);
		break;
	case OP_LINK_SET:
		snprintf(buf, len, "link-set %s up=%d mtu=%u", o->link.name, o->link.up, o->link.mtu);
		break;
	case OP_ROUTE_SET:
		ip_format(o->family, o->gw, ip, sizeof(ip));
		snprintf(buf, len, "route-set %s", ip);
		break;
	case OP_ROUTE_DEL:
		snprintf(buf, len, "route-del %s", o->family == AF_INET ? "inet" : "inet6");
		break;
	case OP_DNS_SET:
		snprintf(buf, len, "dns-set %d", o->ndns);
		break;
	default:
		snprintf(buf, len, "%s %s", names[o->kind], o->link.name);
	}
}

int
nc_op_run(const struct nc_op *o)
{
	const struct nc_link *l = &o->link;
	struct net_bond b;
	const char *step;
	int rc;

	switch (o->kind) {
	case OP_ADDR_DEL:
		return net->addr_del(&l->addr[0]);
	case OP_ADDR_ADD:
		return net->addr_add(&l->addr[0]);
	case OP_LINK_DEL:
		if (l->kind != NC_BOND)
			return net->link_del(l->name);
		if ((rc = net->bond_get(l->name, &b)) != 0) {
			if (rc == 1)
				errno = ENODEV;
			return -1;
		}
		return bond_unmake(&b);
	case OP_BOND_MAKE:
		if (bond_make(&l->bond, (char (*)[NET_NAME_MAX])l->ports, l->nports, &step) == -1)
			return -1;
		/* Up from bond_make; down or another MTU in the same step. */
		if ((l->up == 0 || l->mtu) && net->link_set(l->name, l->up == 0 ? 0 : -1, l->mtu) == -1) {
			int e = errno;

			if (net->bond_get(l->name, &b) == 0)
				(void)bond_unmake(&b);
			errno = e;
			return -1;
		}
		return 0;
	case OP_VLAN_MAKE:
		/* Made down by the kernel; up unless said otherwise, as one step. */
		if (net->vlan_add(l->parent, l->vlan_id, l->name) == -1)
			return -1;
		if ((l->up != 0 || l->mtu) && net->link_set(l->name, l->up != 0, l->mtu) == -1) {
			int e = errno;

			(void)net->link_del(l->name);
			errno = e;
			return -1;
		}
		return 0;
	case OP_LINK_SET:
		if (l->up < 0 && l->mtu == 0)
			return 0;
		return net->link_set(l->name, l->up, l->mtu);
	case OP_ROUTE_SET:
		return net->route_set_default(o->family, o->gw);
	case OP_ROUTE_DEL:
		/* Gone already (with its link or address) is what was asked. */
		if (net->route_del_default(o->family) == -1 && errno != ESRCH)
			return -1;
		return 0;
	case OP_DNS_SET:
		return dns_write((const char (*)[46])o->dns, o->ndns);
	case OP_DHCP_START:
		return dhcp_start(l->name, l->has_fallback ? &l->fallback : NULL);
	case OP_DHCP_STOP:
		/* Stopped already (its link went) is what was asked. */
		if (dhcp_stop(l->name) == -1 && errno != ESRCH)
			return -1;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

int
netconf_run(const struct nc_step *s, int n, int *failed)
{
	char what[128];

	for (int i = 0; i < n; i++) {
		nc_op_format(&s[i].op, what, sizeof(what));
		if (nc_op_run(&s[i].op) == 0) {
			log_info("net: %s", what);
			continue;
		}
		int e = errno;
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", net_errmsg());
		log_warn("net: %s%s%s: undoing the %d steps before it", what, *msg ? ": " : "",
		    msg, i);
		*failed = i;
		for (int j = i - 1; j >= 0; j--)
			if (nc_op_run(&s[j].undo) == -1) {
				nc_op_format(&s[j].undo, what, sizeof(what));
				log_warn("net: undoing: %s", what);
			}
		net_set_errmsg(msg);
		errno = e;
		return -1;
	}
	return 0;
}

/*
 * Runs every step, whatever fails: a step refused is logged and the
 * next one runs. Returns the number refused; the first one's words are
 * left in why.
 */
static int
run_best(const struct nc_step *s, int n, char *why, size_t len)
{
	char what[128];
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int e;

		nc_op_format(&s[i].op, what, sizeof(what));
		if (nc_op_run(&s[i].op) == 0) {
			log_info("net: %s", what);
			continue;
		}
		e = errno;
		if (bad++ == 0)
			snprintf(why, len, "%s: %s%s%s", what, strerror(e),
			    *net_errmsg() ? ": " : "", net_errmsg());
		errno = e;
		log_warn("net: %s%s%s: left out, the other steps go on", what,
		    *net_errmsg() ? ": " : "", net_errmsg());
	}
	return bad;
}

static int
apply(const struct netconf *want, int best, char *why, size_t len)
{
	struct netconf have = { 0 };
	struct nc_step *s = NULL;
	char what[128];
	int n, failed, rc = -1;

	if (netconf_running(&have) == -1) {
		snprintf(why, len, "reading the running state: %s", strerror(errno));
		goto out;
	}
	if ((s = netconf_plan(want, &have, &n)) == NULL) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	if (best) {
		*why = '\0';
		rc = run_best(s, n, why, len) ? -1 : n;
		goto out;
	}
	if (netconf_run(s, n, &failed) == -1) {
		int e = errno;

		nc_op_format(&s[failed].op, what, sizeof(what));
		snprintf(why, len, "%s: %s%s%s (everything before it undone)", what, strerror(e),
		    *net_errmsg() ? ": " : "", net_errmsg());
		errno = e;
		goto out;
	}
	rc = n;
out:
	netconf_free(&have);
	free(s);
	return rc;
}

int
netconf_apply(const struct netconf *want, char *why, size_t len)
{
	return apply(want, 0, why, len);
}

int
netconf_apply_best(const struct netconf *want, char *why, size_t len)
{
	return apply(want, 1, why, len);
}
