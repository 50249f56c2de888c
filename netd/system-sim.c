/*
 * The simulated kernel seam: links, addresses and routes in memory.
 * It refuses what the kernel refuses, with the kernel's errno: a name in
 * use (EEXIST), no such link (ENODEV), an MTU outside the link's range
 * (EINVAL; a VLAN above its parent's, ERANGE), a VLAN id above 4094
 * (ERANGE), an address already there (EEXIST) or absent
 * (EADDRNOTAVAIL), a gateway no up link reaches (ENETUNREACH), deleting
 * hardware (EOPNOTSUPP). Deleting a link takes its VLANs, addresses and
 * routes with it, and a link going down drops the routes through it, as
 * the kernel's fib does. A bond's MTU is its ports' (bond_change_mtu,
 * bond_enslave): one a port cannot take is refused (EINVAL), and a port
 * let go gets its own back.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system-sim.h"

#define SIM_LINKS	1024	/* the kernel has no bound; a test needs no more */
#define SIM_ADDRS	256

enum { K_LOOPBACK, K_PORT, K_VETH, K_VLAN, K_BOND };

struct sim_link {
	struct net_link	l;
	int		type;
	int		cable;		/* ports: plugged */
	int		peer;		/* veth: index of the other end */
	int		lower;		/* vlan: index of the parent */
	unsigned	min_mtu, max_mtu;
	unsigned char	perm_mac[6];
	int		master;		/* index of its bond, or -1 */
	unsigned	own_mtu;	/* a bond's port: its MTU before, given back on release */
	struct net_bond_opts bond;	/* bonds: the options */
	struct net_bond	ad;		/* bonds: AD info; ports: port[0] holds the LACP state */
};

static struct sim_link links[SIM_LINKS];
static int nlinks, next_ifindex;
static struct net_addr addrs[SIM_ADDRS];
static int naddrs;
static struct { int set; unsigned char gw[16]; int link; char proto[16]; } defroute[2];	/* v4, v6 */
static int fail_after = -1;
static int monitor_pipe[2] = { -1, -1 };

static int
fail(int e)
{
	errno = e;
	return -1;
}

/* Mutating steps fail with EIO once the budget is spent. */
static int
step(void)
{
	net_set_errmsg("");
	if (fail_after == 0) {
		fail_after = -1;	/* the kernel refuses one step, not all that follow */
		return fail(EIO);
	}
	if (fail_after > 0)
		fail_after--;
	return 0;
}

void
sim_fail_after(int n)
{
	fail_after = n;
}

static void
changed(void)
{
	char c = 1;

	if (monitor_pipe[1] != -1 && write(monitor_pipe[1], &c, 1) == -1) {
		/* Full: a wake-up is already pending. */
	}
}

static int
find(const char *name)
{
	for (int i = 0; i < nlinks; i++)
		if (strcmp(links[i].l.name, name) == 0)
			return i;
	return -1;
}

/* The kernel's dev_valid_name(). */
static int
valid_name(const char *s)
{
	if (*s == '\0' || strlen(s) >= NET_NAME_MAX || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return 0;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return 0;
	return 1;
}

/*
 * A bond has carrier when enough of its ports do: in 802.3ad mode those
 * of the active aggregator, at least min_links of them.
 */
static int
bond_has_carrier(int b)
{
	int n = 0, need = links[b].bond.min_links > 0 ? links[b].bond.min_links : 1;

	for (int i = 0; i < nlinks; i++) {
		if (links[i].master != b || !links[i].l.carrier)
			continue;
		if (links[b].bond.mode == 4 && (!links[b].ad.has_ad_info ||
		    links[i].ad.port[0].aggregator_id != links[b].ad.ad_aggregator))
			continue;
		n++;
	}
	return n >= need;
}

/* Carrier and operstate follow from the link's own state and what is below it. */
static void
update_carrier(void)
{
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < nlinks; i++) {
			struct sim_link *s = &links[i];
			int below = 1;

			if (s->type == K_PORT)
				below = s->cable;
			else if (s->type == K_VETH)
				below = links[s->peer].l.up;
			else if (s->type == K_VLAN)
				below = links[s->lower].l.carrier;
			else if (s->type == K_BOND)
				below = bond_has_carrier(i);
			s->l.master[0] = '\0';
			if (s->master != -1)
				snprintf(s->l.master, sizeof(s->l.master), "%s", links[s->master].l.name);
			s->l.carrier = s->l.up && below;
			snprintf(s->l.operstate, sizeof(s->l.operstate), "%s",
			    s->type == K_LOOPBACK ? "unknown" : !s->l.up ? "down" :
			    s->l.carrier ? "up" : s->type == K_PORT ? "down" :
			    "lowerlayerdown");
		}
	}
}

static struct sim_link *
new_link(const char *name, int type)
{
	struct sim_link *s;

	if (nlinks == SIM_LINKS) {
		errno = ENOBUFS;
		return NULL;
	}
	s = &links[nlinks++];
	memset(s, 0, sizeof(*s));
	snprintf(s->l.name, sizeof(s->l.name), "%s", name);
	s->l.ifindex = ++next_ifindex;
	s->type = type;
	s->l.mtu = 1500;
	s->min_mtu = 68;
	s->max_mtu = 65535;
	s->l.speed_mbps = -1;
	snprintf(s->l.duplex, sizeof(s->l.duplex), "unknown");
	s->l.vlan_id = -1;
	s->peer = s->lower = s->master = -1;
	return s;
}

void
sim_reset(void)
{
	struct sim_link *lo;

	nlinks = naddrs = next_ifindex = 0;
	memset(defroute, 0, sizeof(defroute));
	fail_after = -1;
	lo = new_link("lo", K_LOOPBACK);
	lo->l.mtu = 65536;
	lo->min_mtu = 0;
	lo->max_mtu = 65536;
	update_carrier();
}

int
sim_add_port(const char *name, const unsigned char mac[6], int speed_mbps)
{
	struct sim_link *s;

	if (find(name) != -1)
		return fail(EEXIST);
	if ((s = new_link(name, K_PORT)) == NULL)
		return -1;
	memcpy(s->l.mac, mac, 6);
	memcpy(s->perm_mac, mac, 6);
	s->cable = 1;
	s->l.speed_mbps = speed_mbps;
	snprintf(s->l.duplex, sizeof(s->l.duplex), "full");
	update_carrier();
	return 0;
}

int
sim_add_veth(const char *a, const char *b)
{
	struct sim_link *x, *y;

	if (find(a) != -1 || find(b) != -1)
		return fail(EEXIST);
	if ((x = new_link(a, K_VETH)) == NULL || (y = new_link(b, K_VETH)) == NULL)
		return -1;
	snprintf(x->l.kind, sizeof(x->l.kind), "veth");
	snprintf(y->l.kind, sizeof(y->l.kind), "veth");
	x->peer = (int)(y - links);
	y->peer = (int)(x - links);
	for (int i = 0; i < 6; i++) {
		x->l.mac[i] = (unsigned char)(0x02 + i + x->l.ifindex * 16);
		y->l.mac[i] = (unsigned char)(0x02 + i + y->l.ifindex * 16);
	}
	x->l.mac[0] = y->l.mac[0] = 0x02;
	memcpy(x->perm_mac, x->l.mac, 6);
	memcpy(y->perm_mac, y->l.mac, 6);
	x->l.speed_mbps = y->l.speed_mbps = 10000;
	snprintf(x->l.duplex, sizeof(x->l.duplex), "full");
	snprintf(y->l.duplex, sizeof(y->l.duplex), "full");
	update_carrier();
	return 0;
}

int
sim_set_cable(const char *name, int plugged)
{
	int i;

	if ((i = find(name)) == -1 || links[i].type != K_PORT)
		return fail(ENODEV);
	links[i].cable = plugged;
	update_carrier();
	changed();
	return 0;
}

int
sim_add_traffic(const char *name, uint64_t rx_bytes, uint64_t tx_bytes)
{
	int i;

	if ((i = find(name)) == -1)
		return fail(ENODEV);
	links[i].l.rx_bytes += rx_bytes;
	links[i].l.tx_bytes += tx_bytes;
	links[i].l.rx_packets += rx_bytes / 1500;
	links[i].l.tx_packets += tx_bytes / 1500;
	return 0;
}

static int
sim_link_list(struct net_link **out, int *n)
{
	if ((*out = calloc(nlinks ? nlinks : 1, sizeof(**out))) == NULL)
		return -1;
	for (int i = 0; i < nlinks; i++)
		(*out)[i] = links[i].l;
	*n = nlinks;
	return 0;
}

static int
sim_link_get(const char *name, struct net_link *out)
{
	int i;

	if ((i = find(name)) == -1)
		return 1;
	*out = links[i].l;
	return 0;
}

static int
family_slot(int family)
{
	return family == AF_INET6;
}

/* The fib forgets routes through a link that went down or lost its addresses. */
static void
drop_routes(int li)
{
	for (int f = 0; f < 2; f++)
		if (defroute[f].set && defroute[f].link == li)
			defroute[f].set = 0;
}

static int
has_addr(int li, int family)
{
	for (int i = 0; i < naddrs; i++)
		if (addrs[i].family == family && strcmp(addrs[i].link, links[li].l.name) == 0)
			return 1;
	return 0;
}

/* Whether link i's driver takes mtu (dev_validate_mtu): for a bond, each port's too. */
static int
mtu_ok(int i, unsigned mtu)
{
	if (mtu < links[i].min_mtu || mtu > links[i].max_mtu)
		return 0;
	for (int j = 0; links[i].type == K_BOND && j < nlinks; j++)
		if (links[j].master == i && (mtu < links[j].min_mtu || mtu > links[j].max_mtu))
			return 0;
	return 1;
}

/* Sets link i's MTU (a bond's ports with it); a VLAN cannot stay above its parent's. */
static void
set_mtu(int i, unsigned mtu)
{
	links[i].l.mtu = mtu;
	for (int j = 0; j < nlinks; j++) {
		if (links[j].type == K_VLAN && links[j].lower == i && links[j].l.mtu > mtu)
			set_mtu(j, mtu);
		if (links[i].type == K_BOND && links[j].master == i)
			set_mtu(j, mtu);
	}
}

static int
sim_link_set(const char *name, int up, unsigned mtu)
{
	struct sim_link *s;
	int i;

	if ((i = find(name)) == -1)
		return fail(ENODEV);
	s = &links[i];
	if (mtu) {
		if (s->type == K_VLAN && mtu > links[s->lower].l.mtu)
			return fail(ERANGE);
		if (!mtu_ok(i, mtu))
			return fail(EINVAL);
	}
	if (step() == -1)
		return -1;
	if (mtu)
		set_mtu(i, mtu);
	if (up == 0 && s->l.up)
		drop_routes(i);
	if (up != -1)
		s->l.up = up;
	update_carrier();
	changed();
	return 0;
}

static int
sim_vlan_add(const char *parent, int id, const char *name)
{
	struct sim_link *s;
	int p;

	if ((p = find(parent)) == -1)
		return fail(ENODEV);
	if (!valid_name(name))
		return fail(EINVAL);
	if (find(name) != -1)
		return fail(EEXIST);
	if (id < 0 || id > 4094)
		return fail(ERANGE);
	if (links[p].type == K_LOOPBACK)
		return fail(EOPNOTSUPP);
	for (int i = 0; i < nlinks; i++)
		if (links[i].type == K_VLAN && links[i].lower == p && links[i].l.vlan_id == id)
			return fail(EEXIST);
	if (step() == -1)
		return -1;
	if ((s = new_link(name, K_VLAN)) == NULL)
		return -1;
	snprintf(s->l.kind, sizeof(s->l.kind), "vlan");
	snprintf(s->l.parent, sizeof(s->l.parent), "%s", links[p].l.name);
	memcpy(s->l.mac, links[p].l.mac, 6);
	s->l.mtu = links[p].l.mtu;
	s->l.vlan_id = id;
	s->l.speed_mbps = links[p].l.speed_mbps;
	snprintf(s->l.duplex, sizeof(s->l.duplex), "%s", links[p].l.duplex);
	s->lower = p;
	update_carrier();
	changed();
	return 0;
}

/* The bond lets a port go: its own MAC back, closed (the kernel's dev_close). */
static void
release(int p)
{
	links[p].master = -1;
	set_mtu(p, links[p].own_mtu);
	memcpy(links[p].l.mac, links[p].perm_mac, 6);
	links[p].l.up = 0;
	memset(&links[p].ad, 0, sizeof(links[p].ad));
}

/* Removes link i and fixes up the indexes that point past it. */
static void
remove_link(int i)
{
	for (int a = 0; a < naddrs; a++)
		if (strcmp(addrs[a].link, links[i].l.name) == 0) {
			/* In order: the first of a subnet is its primary. */
			memmove(&addrs[a], &addrs[a + 1], (size_t)(naddrs - a - 1) * sizeof(addrs[0]));
			naddrs--;
			a--;
		}
	drop_routes(i);
	for (int f = 0; f < 2; f++)
		if (defroute[f].set && defroute[f].link > i)
			defroute[f].link--;
	memmove(&links[i], &links[i + 1], (size_t)(nlinks - i - 1) * sizeof(links[0]));
	nlinks--;
	for (int j = 0; j < nlinks; j++) {
		if (links[j].peer > i)
			links[j].peer--;
		if (links[j].lower > i)
			links[j].lower--;
		if (links[j].master == i)
			links[j].master = SIM_LINKS;	/* let go below, once every index is right */
		else if (links[j].master > i)
			links[j].master--;
	}
	for (int j = 0; j < nlinks; j++)
		if (links[j].master == SIM_LINKS)
			release(j);
}

/* The kernel unregisters a link's VLANs (and a veth's peer) with it. */
static void
delete_cascade(int i)
{
	int doomed[SIM_LINKS] = { 0 }, more = 1;

	doomed[i] = 1;
	while (more) {
		more = 0;
		for (int j = 0; j < nlinks; j++) {
			if (doomed[j])
				continue;
			if ((links[j].type == K_VLAN && doomed[links[j].lower]) ||
			    (links[j].peer != -1 && doomed[links[j].peer]))
				doomed[j] = more = 1;
		}
	}
	for (int j = nlinks - 1; j >= 0; j--)
		if (doomed[j])
			remove_link(j);
}

static int
sim_link_del(const char *name)
{
	int i;

	if ((i = find(name)) == -1)
		return fail(ENODEV);
	if (links[i].type == K_LOOPBACK || links[i].type == K_PORT)
		return fail(EOPNOTSUPP);
	if (step() == -1)
		return -1;
	delete_cascade(i);
	update_carrier();
	changed();
	return 0;
}

static int
sim_bond_create(const struct net_bond_opts *o)
{
	struct sim_link *s;

	if (!valid_name(o->name))
		return fail(EINVAL);
	if (find(o->name) != -1)
		return fail(EEXIST);
	if (o->mode < 0 || o->mode > 6 || o->miimon < -1 || o->min_links < -1 ||
	    o->lacp_rate > 1 || o->xmit_hash_policy > 5 || o->ad_select > 2)
		return fail(EINVAL);
	/*
	 * bond_opt_check_deps(), as the board's 6.1 driver answered iproute2
	 * (netd-lacp scenario): lacp_rate outside 802.3ad and primary outside
	 * active-backup, tlb and alb are refused; ad_select is taken in any
	 * mode (used in 802.3ad only). The seam names the primary by ifindex:
	 * it must exist.
	 */
	if ((o->lacp_rate >= 0 && o->mode != 4) ||
	    (*o->primary && o->mode != 1 && o->mode != 5 && o->mode != 6)) {
		net_set_errmsg("option not supported in mode");
		return fail(EACCES);
	}
	if (*o->primary && find(o->primary) == -1)
		return fail(ENODEV);
	if (step() == -1)
		return -1;
	if ((s = new_link(o->name, K_BOND)) == NULL)
		return -1;
	snprintf(s->l.kind, sizeof(s->l.kind), "bond");
	s->bond = *o;
	s->bond.miimon = o->miimon >= 0 ? o->miimon : 0;
	s->bond.lacp_rate = o->lacp_rate >= 0 ? o->lacp_rate : 0;
	s->bond.xmit_hash_policy = o->xmit_hash_policy >= 0 ? o->xmit_hash_policy : 0;
	s->bond.min_links = o->min_links >= 0 ? o->min_links : 0;
	s->bond.ad_select = o->ad_select >= 0 ? o->ad_select : 0;
	memcpy(s->l.mac, o->mac, 6);
	memcpy(s->perm_mac, o->mac, 6);
	s->min_mtu = 68;
	update_carrier();
	changed();
	return 0;
}

/*
 * bond_fill_info(): the primary while it is a port of the bond; in
 * active-backup, tlb and alb the port in use (the primary when it has
 * carrier, else the first port that has).
 */
static void
sim_active_port(int i, struct net_bond *b)
{
	const struct net_bond_opts *o = &links[i].bond;
	int p = *o->primary ? find(o->primary) : -1, act = -1;

	b->primary[0] = b->active_port[0] = '\0';
	b->primary_ifindex = b->active_ifindex = 0;
	if (p != -1 && links[p].master == i) {
		snprintf(b->primary, sizeof(b->primary), "%s", links[p].l.name);
		b->primary_ifindex = links[p].l.ifindex;
		if (links[p].l.carrier)
			act = p;
	}
	if (o->mode != 1 && o->mode != 5 && o->mode != 6)
		return;
	for (int j = 0; j < nlinks && act == -1; j++)
		if (links[j].master == i && links[j].l.carrier)
			act = j;
	if (act != -1 && links[i].l.up) {
		snprintf(b->active_port, sizeof(b->active_port), "%s", links[act].l.name);
		b->active_ifindex = links[act].l.ifindex;
	}
}

static int
sim_bond_get(const char *name, struct net_bond *b)
{
	struct sim_link *s;
	int i;

	if ((i = find(name)) == -1 || links[i].type != K_BOND)
		return 1;
	s = &links[i];
	*b = s->ad;
	snprintf(b->name, sizeof(b->name), "%s", s->l.name);
	b->ifindex = s->l.ifindex;
	b->up = s->l.up;
	b->carrier = s->l.carrier;
	memcpy(b->mac, s->l.mac, 6);
	b->mode = s->bond.mode;
	b->miimon = s->bond.miimon;
	b->lacp_rate = s->bond.lacp_rate;
	b->xmit_hash_policy = s->bond.xmit_hash_policy;
	b->min_links = s->bond.min_links;
	b->ad_select = s->bond.ad_select;
	if (b->mode != 4 || !b->up)
		b->has_ad_info = 0;
	sim_active_port(i, b);
	b->nports = 0;
	for (int j = 0; j < nlinks && b->nports < NET_BOND_PORTS; j++) {
		struct net_bond_port *p;

		if (links[j].master != i)
			continue;
		p = &b->port[b->nports++];
		*p = links[j].ad.port[0];
		memcpy(p->name, links[j].l.name, sizeof(p->name));
		p->up = links[j].l.up;
		p->carrier = links[j].l.carrier;
		p->mii_up = links[j].l.carrier;
		p->speed_mbps = links[j].l.speed_mbps;
		snprintf(p->duplex, sizeof(p->duplex), "%s", links[j].l.duplex);
		memcpy(p->perm_mac, links[j].perm_mac, 6);
		p->rx_bytes = links[j].l.rx_bytes;
		p->tx_bytes = links[j].l.tx_bytes;
		if (b->mode != 4)
			p->aggregator_id = p->actor_state = p->partner_state = -1;
	}
	return 0;
}

static int
sim_link_set_master(const char *port, const char *master)
{
	int p, m = -1;

	if ((p = find(port)) == -1)
		return fail(ENODEV);
	if (*master && (m = find(master)) == -1)
		return fail(ENODEV);
	if (m == -1) {
		if (step() == -1)
			return -1;
		if (links[p].master != -1)
			release(p);
		update_carrier();
		changed();
		return 0;
	}
	if (links[m].type != K_BOND)
		return fail(EOPNOTSUPP);
	if (links[p].master == m)
		return 0;
	if (p == m) {
		net_set_errmsg("Cannot enslave bond to itself.");
		return fail(EPERM);
	}
	if (links[p].l.up) {
		net_set_errmsg("Device can not be enslaved while up");
		return fail(EPERM);
	}
	/* bond_enslave() gives the port the bond's MTU. */
	if (links[m].l.mtu < links[p].min_mtu || links[m].l.mtu > links[p].max_mtu)
		return fail(EINVAL);
	if (step() == -1)
		return -1;
	/* do_set_master(): a port of another bond leaves it first. */
	if (links[p].master != -1)
		release(p);
	links[p].own_mtu = links[p].l.mtu;
	set_mtu(p, links[m].l.mtu);
	links[p].master = m;
	links[p].l.up = 1;	/* bond_enslave() opens the port */
	if (links[m].bond.mode != 5 && links[m].bond.mode != 6)
		memcpy(links[p].l.mac, links[m].l.mac, 6);
	memset(&links[p].ad, 0, sizeof(links[p].ad));
	if (links[m].bond.mode == 4) {
		/* Alone until a partner answers: an aggregator of its own, defaulted. */
		links[p].ad.port[0].aggregator_id = links[p].l.ifindex;
		links[p].ad.port[0].actor_state = 0x45 | (links[m].bond.lacp_rate ? 0x02 : 0);
		links[p].ad.port[0].partner_state = 0x01;
	}
	update_carrier();
	changed();
	return 0;
}

int
sim_set_lacp(const char *port, int aggregator_id, int actor_state, int partner_state)
{
	int p;

	if ((p = find(port)) == -1 || links[p].master == -1)
		return fail(ENODEV);
	links[p].ad.port[0].aggregator_id = aggregator_id;
	links[p].ad.port[0].actor_state = actor_state;
	links[p].ad.port[0].partner_state = partner_state;
	update_carrier();
	changed();
	return 0;
}

int
sim_set_ad_info(const char *bond, int aggregator, int nports, const unsigned char partner[6])
{
	int b;

	if ((b = find(bond)) == -1 || links[b].type != K_BOND)
		return fail(ENODEV);
	links[b].ad.has_ad_info = aggregator > 0;
	links[b].ad.ad_aggregator = aggregator;
	links[b].ad.ad_num_ports = nports;
	memcpy(links[b].ad.ad_partner_mac, partner, 6);
	update_carrier();
	changed();
	return 0;
}

static int
sim_addr_list(struct net_addr **out, int *n)
{
	if ((*out = calloc(naddrs ? naddrs : 1, sizeof(**out))) == NULL)
		return -1;
	memcpy(*out, addrs, (size_t)naddrs * sizeof(addrs[0]));
	*n = naddrs;
	return 0;
}

static size_t
alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static int
addr_index(const struct net_addr *a)
{
	for (int i = 0; i < naddrs; i++)
		if (addrs[i].family == a->family && strcmp(addrs[i].link, a->link) == 0 &&
		    memcmp(addrs[i].addr, a->addr, alen(a->family)) == 0 &&
		    (a->family == AF_INET6 || addrs[i].prefix == a->prefix))
			return i;
	return -1;
}

static int
sim_addr_add(const struct net_addr *a)
{
	if (a->family != AF_INET && a->family != AF_INET6)
		return fail(EAFNOSUPPORT);
	if (find(a->link) == -1)
		return fail(ENODEV);
	if (a->prefix < 0 || a->prefix > (a->family == AF_INET ? 32 : 128))
		return fail(EINVAL);
	if (addr_index(a) != -1)
		return fail(EEXIST);
	if (naddrs == SIM_ADDRS)
		return fail(ENOBUFS);
	if (step() == -1)
		return -1;
	addrs[naddrs] = *a;
	addrs[naddrs++].dynamic = 0;	/* an address added without a lifetime is permanent */
	return 0;
}

static int
in_prefix(const unsigned char *x, const unsigned char *net_, int prefix)
{
	int bytes = prefix / 8, bits = prefix % 8;

	if (memcmp(x, net_, (size_t)bytes) != 0)
		return 0;
	if (bits == 0)
		return 1;
	return ((x[bytes] ^ net_[bytes]) & (0xff << (8 - bits))) == 0;
}

static int
same_subnet(const struct net_addr *p, const struct net_addr *q)
{
	return p->family == AF_INET && q->family == AF_INET && strcmp(p->link, q->link) == 0 &&
	    p->prefix == q->prefix && in_prefix(p->addr, q->addr, p->prefix);
}

/* Whether IPv4 address i has a primary: one of its subnet on its link before it. */
static int
secondary(int i)
{
	for (int j = 0; j < i; j++)
		if (same_subnet(&addrs[j], &addrs[i]))
			return 1;
	return 0;
}

static int
sim_addr_del(const struct net_addr *a)
{
	int i, li;

	if ((li = find(a->link)) == -1)
		return fail(ENODEV);
	if ((i = addr_index(a)) == -1)
		return fail(EADDRNOTAVAIL);
	if (step() == -1)
		return -1;
	/*
	 * An IPv4 primary takes its secondaries (the same subnet, added
	 * after it) with it: the kernel's default, promote_secondaries off.
	 * Order is kept, as the kernel lists primaries first.
	 */
	if (a->family == AF_INET && !secondary(i))
		for (int j = naddrs - 1; j > i; j--)
			if (same_subnet(&addrs[i], &addrs[j])) {
				memmove(&addrs[j], &addrs[j + 1], (size_t)(naddrs - j - 1) * sizeof(addrs[0]));
				naddrs--;
			}
	memmove(&addrs[i], &addrs[i + 1], (size_t)(naddrs - i - 1) * sizeof(addrs[0]));
	naddrs--;
	if (!has_addr(li, a->family) && defroute[family_slot(a->family)].link == li)
		defroute[family_slot(a->family)].set = 0;
	return 0;
}

/* The up link whose connected prefix holds gw, or -1. */
static int
reach(int family, const unsigned char *gw)
{
	for (int i = 0; i < naddrs; i++) {
		int li = find(addrs[i].link);

		if (addrs[i].family == family && links[li].l.up &&
		    in_prefix(gw, addrs[i].addr, addrs[i].prefix))
			return li;
	}
	return -1;
}

static void
add_route(struct net_route *r, int family, int li, const unsigned char *dst,
    int dst_len, const unsigned char *gw, const char *proto)
{
	memset(r, 0, sizeof(*r));
	r->family = family;
	r->dst_len = dst_len;
	for (int b = 0; dst && b < dst_len; b++)
		if (dst[b / 8] & (0x80 >> (b % 8)))
			r->dst[b / 8] |= (unsigned char)(0x80 >> (b % 8));
	if (gw) {
		r->has_gw = 1;
		memcpy(r->gw, gw, alen(family));
	}
	snprintf(r->link, sizeof(r->link), "%s", links[li].l.name);
	snprintf(r->proto, sizeof(r->proto), "%s", proto);
}

static int
sim_route_list(struct net_route **out, int *n)
{
	int k = 0;

	if ((*out = calloc((size_t)naddrs + 2, sizeof(**out))) == NULL)
		return -1;
	for (int f = 0; f < 2; f++)
		if (defroute[f].set)
			add_route(&(*out)[k++], f ? AF_INET6 : AF_INET, defroute[f].link,
			    NULL, 0, defroute[f].gw, defroute[f].proto);
	for (int i = 0; i < naddrs; i++) {
		int li = find(addrs[i].link);

		if (links[li].l.up)
			add_route(&(*out)[k++], addrs[i].family, li, addrs[i].addr,
			    addrs[i].prefix, NULL, "kernel");
	}
	*n = k;
	return 0;
}

static int
sim_route_set_default(int family, const unsigned char *gw)
{
	int li, f = family_slot(family);

	if (family != AF_INET && family != AF_INET6)
		return fail(EAFNOSUPPORT);
	if ((li = reach(family, gw)) == -1) {
		net_set_errmsg("Nexthop has invalid gateway");
		return fail(family == AF_INET ? ENETUNREACH : EHOSTUNREACH);
	}
	if (step() == -1)
		return -1;
	defroute[f].set = 1;
	defroute[f].link = li;
	memcpy(defroute[f].gw, gw, alen(family));
	snprintf(defroute[f].proto, sizeof(defroute[f].proto), "static");
	return 0;
}

static int
sim_route_del_default(int family)
{
	int f = family_slot(family);

	if (family != AF_INET && family != AF_INET6)
		return fail(EAFNOSUPPORT);
	if (!defroute[f].set)
		return fail(ESRCH);
	if (step() == -1)
		return -1;
	defroute[f].set = 0;
	return 0;
}

int
sim_set_max_mtu(const char *name, unsigned max)
{
	int i;

	if ((i = find(name)) == -1)
		return fail(ENODEV);
	links[i].max_mtu = max;
	return 0;
}

int
sim_add_autoconf(const char *link, const unsigned char addr[16], int prefix,
    const unsigned char router[16])
{
	int li;

	if ((li = find(link)) == -1)
		return fail(ENODEV);
	if (naddrs == SIM_ADDRS)
		return fail(ENOBUFS);
	memset(&addrs[naddrs], 0, sizeof(addrs[0]));
	snprintf(addrs[naddrs].link, sizeof(addrs[0].link), "%s", link);
	addrs[naddrs].family = AF_INET6;
	memcpy(addrs[naddrs].addr, addr, 16);
	addrs[naddrs].prefix = prefix;
	addrs[naddrs++].dynamic = 1;
	defroute[1].set = 1;
	defroute[1].link = li;
	memcpy(defroute[1].gw, router, 16);
	snprintf(defroute[1].proto, sizeof(defroute[1].proto), "ra");
	return 0;
}

static int
sim_monitor_open(void)
{
	if (monitor_pipe[0] == -1 && pipe2(monitor_pipe, O_NONBLOCK | O_CLOEXEC) == -1)
		return -1;
	return monitor_pipe[0];
}

static int
sim_monitor_read(int fd)
{
	char buf[64];
	ssize_t r;
	int any = 0;

	while ((r = read(fd, buf, sizeof(buf))) > 0)
		any = 1;
	return any;
}

const struct net_ops net_sim = {
	.link_list = sim_link_list,
	.link_get = sim_link_get,
	.link_set = sim_link_set,
	.vlan_add = sim_vlan_add,
	.link_del = sim_link_del,
	.addr_list = sim_addr_list,
	.addr_add = sim_addr_add,
	.addr_del = sim_addr_del,
	.route_list = sim_route_list,
	.route_set_default = sim_route_set_default,
	.route_del_default = sim_route_del_default,
	.bond_create = sim_bond_create,
	.bond_get = sim_bond_get,
	.link_set_master = sim_link_set_master,
	.monitor_open = sim_monitor_open,
	.monitor_read = sim_monitor_read,
};
