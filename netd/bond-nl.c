/*
 * The bond's rtnetlink messages with the kernel's headers alone. Types
 * follow drivers/net/bonding/bond_netlink.c: mode, lacp_rate, ad_select
 * and xmit_hash_policy are u8; miimon, min_links, primary and
 * active_slave (ifindexes) u32. The decoder
 * checks every attribute's length before it reads it: a message is
 * trusted no more than a disk.
 */
#include <linux/if_bonding.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "bond-nl.h"

#ifndef IFF_UP
#define IFF_UP		0x1
#endif
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP	0x10000
#endif

struct wbuf {
	char	*p;
	size_t	 len, cap;
	int	 full;
};

static struct rtattr *
put(struct wbuf *w, int type, const void *data, size_t n)
{
	struct rtattr *a;
	size_t need = RTA_SPACE(n);

	if (w->full || w->len + need > w->cap) {
		w->full = 1;
		return NULL;
	}
	a = (struct rtattr *)(w->p + w->len);
	a->rta_type = (unsigned short)type;
	a->rta_len = (unsigned short)RTA_LENGTH(n);
	if (n)
		memcpy(RTA_DATA(a), data, n);
	memset((char *)a + RTA_LENGTH(n), 0, need - RTA_LENGTH(n));
	w->len += need;
	return a;
}

static void
put_u8(struct wbuf *w, int type, int v)
{
	uint8_t b = (uint8_t)v;

	put(w, type, &b, 1);
}

static void
put_u32(struct wbuf *w, int type, int v)
{
	uint32_t u = (uint32_t)v;

	put(w, type, &u, 4);
}

/* Opens a nest; close_nest sets its length once the members are in. */
static size_t
open_nest(struct wbuf *w, int type)
{
	size_t at = w->len;

	put(w, type | NLA_F_NESTED, NULL, 0);
	return at;
}

static void
close_nest(struct wbuf *w, size_t at)
{
	if (!w->full)
		((struct rtattr *)(w->p + at))->rta_len = (unsigned short)(w->len - at);
}

size_t
bond_nl_newlink(const struct net_bond_opts *o, uint32_t seq, void *buf, size_t len)
{
	struct wbuf w = { buf, 0, len, 0 };
	struct nlmsghdr *h = buf;
	struct ifinfomsg *ifi;
	size_t info, data;

	if (len < NLMSG_SPACE(sizeof(*ifi)))
		return 0;
	memset(buf, 0, NLMSG_SPACE(sizeof(*ifi)));
	h->nlmsg_type = RTM_NEWLINK;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	h->nlmsg_seq = seq;
	ifi = NLMSG_DATA(h);
	ifi->ifi_family = AF_UNSPEC;
	w.len = NLMSG_SPACE(sizeof(*ifi));
	put(&w, IFLA_IFNAME, o->name, strlen(o->name) + 1);
	put(&w, IFLA_ADDRESS, o->mac, 6);
	info = open_nest(&w, IFLA_LINKINFO);
	put(&w, IFLA_INFO_KIND, "bond", 5);
	data = open_nest(&w, IFLA_INFO_DATA);
	/* The mode first: the kernel checks the other options against it. */
	put_u8(&w, IFLA_BOND_MODE, o->mode);
	if (o->miimon >= 0)
		put_u32(&w, IFLA_BOND_MIIMON, o->miimon);
	if (o->lacp_rate >= 0)
		put_u8(&w, IFLA_BOND_AD_LACP_RATE, o->lacp_rate);
	if (o->ad_select >= 0)
		put_u8(&w, IFLA_BOND_AD_SELECT, o->ad_select);
	if (o->xmit_hash_policy >= 0)
		put_u8(&w, IFLA_BOND_XMIT_HASH_POLICY, o->xmit_hash_policy);
	if (o->min_links >= 0)
		put_u32(&w, IFLA_BOND_MIN_LINKS, o->min_links);
	/* By ifindex: bond_changelink() takes the name of that device. */
	if (o->primary_ifindex > 0)
		put_u32(&w, IFLA_BOND_PRIMARY, o->primary_ifindex);
	close_nest(&w, data);
	close_nest(&w, info);
	if (w.full)
		return 0;
	h->nlmsg_len = (uint32_t)w.len;
	return w.len;
}

/* Attributes of a nest by type, each checked to lie inside it. */
static void
index_attrs(const struct rtattr *a, size_t len, const struct rtattr **tb, int max)
{
	int n = (int)len;

	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	for (; RTA_OK(a, n); a = RTA_NEXT(a, n)) {
		int type = a->rta_type & ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER);

		if (type <= max)
			tb[type] = a;
	}
}

static int
get_u(const struct rtattr *a, size_t size, uint64_t *v)
{
	if (a == NULL || RTA_PAYLOAD(a) < size)
		return -1;
	switch (size) {
	case 1: *v = *(const uint8_t *)RTA_DATA(a); break;
	case 2: { uint16_t x; memcpy(&x, RTA_DATA(a), 2); *v = x; break; }
	case 4: { uint32_t x; memcpy(&x, RTA_DATA(a), 4); *v = x; break; }
	default: memcpy(v, RTA_DATA(a), 8); break;
	}
	return 0;
}

/* An attribute's number of size bytes as an int, or def when absent or short. */
static int
int_of(const struct rtattr *a, size_t size, int def)
{
	uint64_t v;

	return get_u(a, size, &v) == 0 ? (int)v : def;
}

static void
str_of(const struct rtattr *a, char *out, size_t len)
{
	size_t n;

	out[0] = '\0';
	if (a == NULL || (n = RTA_PAYLOAD(a)) == 0)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(out, RTA_DATA(a), n);
	out[n] = '\0';
}

static void
mac_of(const struct rtattr *a, unsigned char mac[6])
{
	if (a && RTA_PAYLOAD(a) >= 6)
		memcpy(mac, RTA_DATA(a), 6);
}

static void
parse_ad_info(const struct rtattr *a, struct net_bond *b)
{
	const struct rtattr *tb[IFLA_BOND_AD_INFO_MAX + 1];

	index_attrs(RTA_DATA(a), RTA_PAYLOAD(a), tb, IFLA_BOND_AD_INFO_MAX);
	/* The driver numbers aggregators from 1; a short or zero id names none. */
	if (int_of(tb[IFLA_BOND_AD_INFO_AGGREGATOR], 2, 0) <= 0)
		return;
	b->has_ad_info = 1;
	b->ad_aggregator = int_of(tb[IFLA_BOND_AD_INFO_AGGREGATOR], 2, -1);
	b->ad_num_ports = int_of(tb[IFLA_BOND_AD_INFO_NUM_PORTS], 2, 0);
	b->ad_actor_key = int_of(tb[IFLA_BOND_AD_INFO_ACTOR_KEY], 2, 0);
	b->ad_partner_key = int_of(tb[IFLA_BOND_AD_INFO_PARTNER_KEY], 2, 0);
	mac_of(tb[IFLA_BOND_AD_INFO_PARTNER_MAC], b->ad_partner_mac);
}

static void
parse_bond(const struct rtattr *data, struct net_bond *b)
{
	const struct rtattr *tb[IFLA_BOND_MAX + 1];

	index_attrs(RTA_DATA(data), RTA_PAYLOAD(data), tb, IFLA_BOND_MAX);
	b->mode = int_of(tb[IFLA_BOND_MODE], 1, -1);
	b->miimon = int_of(tb[IFLA_BOND_MIIMON], 4, -1);
	b->lacp_rate = int_of(tb[IFLA_BOND_AD_LACP_RATE], 1, -1);
	b->xmit_hash_policy = int_of(tb[IFLA_BOND_XMIT_HASH_POLICY], 1, -1);
	b->min_links = int_of(tb[IFLA_BOND_MIN_LINKS], 4, -1);
	b->ad_select = int_of(tb[IFLA_BOND_AD_SELECT], 1, -1);
	b->primary_ifindex = int_of(tb[IFLA_BOND_PRIMARY], 4, 0);
	b->active_ifindex = int_of(tb[IFLA_BOND_ACTIVE_SLAVE], 4, 0);
	if (tb[IFLA_BOND_AD_INFO])
		parse_ad_info(tb[IFLA_BOND_AD_INFO], b);
}

static void
parse_port(const struct rtattr *data, struct net_bond_port *p)
{
	const struct rtattr *tb[IFLA_BOND_SLAVE_MAX + 1];

	index_attrs(RTA_DATA(data), RTA_PAYLOAD(data), tb, IFLA_BOND_SLAVE_MAX);
	p->backup = int_of(tb[IFLA_BOND_SLAVE_STATE], 1, 0);
	p->mii_up = int_of(tb[IFLA_BOND_SLAVE_MII_STATUS], 1, 0) == 0;	/* BOND_LINK_UP is 0 */
	p->link_failures = (uint32_t)int_of(tb[IFLA_BOND_SLAVE_LINK_FAILURE_COUNT], 4, 0);
	mac_of(tb[IFLA_BOND_SLAVE_PERM_HWADDR], p->perm_mac);
	p->aggregator_id = int_of(tb[IFLA_BOND_SLAVE_AD_AGGREGATOR_ID], 2, -1);
	p->actor_state = int_of(tb[IFLA_BOND_SLAVE_AD_ACTOR_OPER_PORT_STATE], 1, -1);
	p->partner_state = int_of(tb[IFLA_BOND_SLAVE_AD_PARTNER_OPER_PORT_STATE], 2, -1);
}

static void
parse_linkinfo(const struct rtattr *li, struct bond_nl_link *l)
{
	const struct rtattr *tb[IFLA_INFO_MAX + 1];

	index_attrs(RTA_DATA(li), RTA_PAYLOAD(li), tb, IFLA_INFO_MAX);
	str_of(tb[IFLA_INFO_KIND], l->kind, sizeof(l->kind));
	str_of(tb[IFLA_INFO_SLAVE_KIND], l->slave_kind, sizeof(l->slave_kind));
	if (strcmp(l->kind, "bond") == 0) {
		l->is_bond = 1;
		l->bond.mode = -1;
		if (tb[IFLA_INFO_DATA])
			parse_bond(tb[IFLA_INFO_DATA], &l->bond);
	}
	if (strcmp(l->slave_kind, "bond") == 0 && tb[IFLA_INFO_SLAVE_DATA]) {
		l->is_port = 1;
		parse_port(tb[IFLA_INFO_SLAVE_DATA], &l->port);
	}
}

int
bond_nl_parse(const void *msg, size_t len, struct bond_nl_link *l)
{
	const struct nlmsghdr *h = msg;
	const struct ifinfomsg *ifi;
	const struct rtattr *tb[IFLA_MAX + 1];

	memset(l, 0, sizeof(*l));
	if (len < NLMSG_HDRLEN || !NLMSG_OK(h, len) || h->nlmsg_type != RTM_NEWLINK ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return -1;
	ifi = NLMSG_DATA(h);
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	index_attrs(IFLA_RTA(ifi), h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)), tb, IFLA_MAX);
	str_of(tb[IFLA_IFNAME], l->name, sizeof(l->name));
	l->master = int_of(tb[IFLA_MASTER], 4, 0);
	mac_of(tb[IFLA_ADDRESS], l->mac);
	if (tb[IFLA_STATS64] && RTA_PAYLOAD(tb[IFLA_STATS64]) >= sizeof(struct rtnl_link_stats64)) {
		struct rtnl_link_stats64 st;

		memcpy(&st, RTA_DATA(tb[IFLA_STATS64]), sizeof(st));
		l->rx_bytes = st.rx_bytes;
		l->tx_bytes = st.tx_bytes;
	}
	if (tb[IFLA_LINKINFO])
		parse_linkinfo(tb[IFLA_LINKINFO], l);
	if (l->is_bond) {
		snprintf(l->bond.name, sizeof(l->bond.name), "%s", l->name);
		l->bond.ifindex = l->ifindex;
		l->bond.up = !!(l->flags & IFF_UP);
		l->bond.carrier = !!(l->flags & IFF_LOWER_UP);
		memcpy(l->bond.mac, l->mac, 6);
	}
	if (l->is_port) {
		snprintf(l->port.name, sizeof(l->port.name), "%s", l->name);
		l->port.up = !!(l->flags & IFF_UP);
		l->port.carrier = !!(l->flags & IFF_LOWER_UP);
		l->port.rx_bytes = l->rx_bytes;
		l->port.tx_bytes = l->tx_bytes;
		l->port.speed_mbps = -1;
		snprintf(l->port.duplex, sizeof(l->port.duplex), "unknown");
	}
	return 0;
}
