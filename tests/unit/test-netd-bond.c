/*
 * netd's bonds: the RTM_NEWLINK bond-nl.c writes (every option with the
 * kernel's attribute type), kernel messages decoded into every
 * diagnosis, and bond.create/delete on the simulated seam, which refuses
 * what the bonding driver refuses (a port enslaved while up, an 802.3ad
 * option in another mode). A creation the kernel stops half-way leaves
 * nothing behind.
 */
#include <check.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netd/bond-nl.h"
#include "netd/lacp.h"
#include "netd/netd.h"
#include "netd/system-sim.h"
#include "tests/unit/netd-recorded.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static const unsigned char mac1[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 1 };
static const unsigned char mac2[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 2 };
static const unsigned char sw[6] = { 0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc };

/* ---- the creation message ---- */

/* The attribute of type t directly inside [a, a+len), or NULL. */
static const struct rtattr *
find_attr(const struct rtattr *a, int len, int t)
{
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if ((a->rta_type & ~NLA_F_NESTED) == t)
			return a;
	return NULL;
}

static const struct rtattr *
bond_data(const void *buf, const struct rtattr **info)
{
	const struct nlmsghdr *h = buf;
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	const struct rtattr *li;

	li = find_attr(IFLA_RTA(ifi), (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi))), IFLA_LINKINFO);
	ck_assert_ptr_nonnull(li);
	ck_assert(li->rta_type & NLA_F_NESTED);
	*info = li;
	return find_attr(RTA_DATA(li), (int)RTA_PAYLOAD(li), IFLA_INFO_DATA);
}

static void
assert_attr(const struct rtattr *data, int type, size_t size, unsigned value)
{
	const struct rtattr *a = find_attr(RTA_DATA(data), (int)RTA_PAYLOAD(data), type);
	unsigned v = 0;

	ck_assert_msg(a != NULL, "attribute %d missing", type);
	ck_assert_msg(RTA_PAYLOAD(a) == size, "attribute %d: %zu bytes, the kernel wants %zu",
	    type, (size_t)RTA_PAYLOAD(a), size);
	memcpy(&v, RTA_DATA(a), size);
	ck_assert_uint_eq(v, value);
}

START_TEST(encode_every_option)
{
	struct net_bond_opts o = { .name = "bond0", .mode = 4, .miimon = 100, .lacp_rate = 1,
		.xmit_hash_policy = 1, .min_links = 2, .ad_select = 0 };
	char buf[512];
	const struct nlmsghdr *h = (const void *)buf;
	const struct ifinfomsg *ifi;
	const struct rtattr *info, *data, *a;
	size_t len;

	memcpy(o.mac, mac1, 6);
	ck_assert_uint_gt(len = bond_nl_newlink(&o, 7, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(h->nlmsg_len, len);
	ck_assert_int_eq(h->nlmsg_type, RTM_NEWLINK);
	ck_assert_int_eq(h->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
	ifi = NLMSG_DATA(h);
	a = find_attr(IFLA_RTA(ifi), (int)(len - NLMSG_LENGTH(sizeof(*ifi))), IFLA_IFNAME);
	ck_assert_str_eq((const char *)RTA_DATA(a), "bond0");
	a = find_attr(IFLA_RTA(ifi), (int)(len - NLMSG_LENGTH(sizeof(*ifi))), IFLA_ADDRESS);
	ck_assert_int_eq(RTA_PAYLOAD(a), 6);
	ck_assert_mem_eq(RTA_DATA(a), mac1, 6);
	data = bond_data(buf, &info);
	ck_assert_ptr_nonnull(data);
	ck_assert(data->rta_type & NLA_F_NESTED);
	a = find_attr(RTA_DATA(info), (int)RTA_PAYLOAD(info), IFLA_INFO_KIND);
	ck_assert_str_eq((const char *)RTA_DATA(a), "bond");
	/* Types of drivers/net/bonding/bond_netlink.c's policy. */
	assert_attr(data, IFLA_BOND_MODE, 1, 4);
	assert_attr(data, IFLA_BOND_MIIMON, 4, 100);
	assert_attr(data, IFLA_BOND_AD_LACP_RATE, 1, 1);
	assert_attr(data, IFLA_BOND_XMIT_HASH_POLICY, 1, 1);
	assert_attr(data, IFLA_BOND_MIN_LINKS, 4, 2);
	assert_attr(data, IFLA_BOND_AD_SELECT, 1, 0);
	/* The mode comes first: the kernel checks the others against it. */
	ck_assert_int_eq(((const struct rtattr *)RTA_DATA(data))->rta_type, IFLA_BOND_MODE);
	/* Too small a buffer: nothing, not half a message. */
	ck_assert_uint_eq(bond_nl_newlink(&o, 7, buf, 60), 0);
}
END_TEST

START_TEST(encode_each_mode_leaves_unset_options_out)
{
	for (int mode = 0; mode <= 6; mode++) {
		struct net_bond_opts o = { .name = "b", .mode = mode, .miimon = -1, .lacp_rate = -1,
			.xmit_hash_policy = -1, .min_links = -1, .ad_select = -1 };
		char buf[512];
		const struct rtattr *info, *data;

		ck_assert_uint_gt(bond_nl_newlink(&o, 1, buf, sizeof(buf)), 0);
		data = bond_data(buf, &info);
		assert_attr(data, IFLA_BOND_MODE, 1, (unsigned)mode);
		ck_assert_ptr_null(find_attr(RTA_DATA(data), (int)RTA_PAYLOAD(data), IFLA_BOND_AD_LACP_RATE));
		ck_assert_ptr_null(find_attr(RTA_DATA(data), (int)RTA_PAYLOAD(data), IFLA_BOND_MIIMON));
	}
}
END_TEST

/* ---- kernel messages, shaped as rtnl_fill_ifinfo and bond_netlink.c write them ---- */

struct msg {
	char	buf[1024];
	size_t	len;
	size_t	nest[4];
	int	depth;
};

static void
m_put(struct msg *m, int type, const void *d, size_t n)
{
	struct rtattr *a = (struct rtattr *)(m->buf + m->len);

	a->rta_type = (unsigned short)type;
	a->rta_len = (unsigned short)RTA_LENGTH(n);
	if (n)
		memcpy(RTA_DATA(a), d, n);
	m->len += RTA_SPACE(n);
}

static void
m_u8(struct msg *m, int t, unsigned v) { uint8_t x = (uint8_t)v; m_put(m, t, &x, 1); }
static void
m_u16(struct msg *m, int t, unsigned v) { uint16_t x = (uint16_t)v; m_put(m, t, &x, 2); }
static void
m_u32(struct msg *m, int t, unsigned v) { uint32_t x = v; m_put(m, t, &x, 4); }

static void
m_open(struct msg *m, int t)
{
	m->nest[m->depth++] = m->len;
	m_put(m, t | NLA_F_NESTED, NULL, 0);
}

static void
m_close(struct msg *m)
{
	size_t at = m->nest[--m->depth];

	((struct rtattr *)(m->buf + at))->rta_len = (unsigned short)(m->len - at);
}

static void
m_begin(struct msg *m, int ifindex, const char *name, unsigned flags, const unsigned char mac[6])
{
	struct nlmsghdr *h = (void *)m->buf;
	struct ifinfomsg *ifi;

	memset(m, 0, sizeof(*m));
	h->nlmsg_type = RTM_NEWLINK;
	ifi = NLMSG_DATA(h);
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	m->len = NLMSG_SPACE(sizeof(*ifi));
	m_put(m, IFLA_IFNAME, name, strlen(name) + 1);
	m_put(m, IFLA_ADDRESS, mac, 6);
}

static void
m_end(struct msg *m)
{
	((struct nlmsghdr *)(void *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

#define UP_LOWER	(0x1 | 0x10000)

/* A bond in 802.3ad with an active aggregator (or none when agg is 0). */
static void
bond_msg(struct msg *m, int agg, int nports, const unsigned char partner[6])
{
	m_begin(m, 10, "bond0", UP_LOWER, mac1);
	m_open(m, IFLA_LINKINFO);
	m_put(m, IFLA_INFO_KIND, "bond", 5);
	m_open(m, IFLA_INFO_DATA);
	m_u8(m, IFLA_BOND_MODE, 4);
	m_u32(m, IFLA_BOND_MIIMON, 100);
	m_u8(m, IFLA_BOND_XMIT_HASH_POLICY, 1);
	m_u8(m, IFLA_BOND_AD_LACP_RATE, 1);
	m_u32(m, IFLA_BOND_MIN_LINKS, 1);
	if (agg) {
		m_open(m, IFLA_BOND_AD_INFO);
		m_u16(m, IFLA_BOND_AD_INFO_AGGREGATOR, (unsigned)agg);
		m_u16(m, IFLA_BOND_AD_INFO_NUM_PORTS, (unsigned)nports);
		m_u16(m, IFLA_BOND_AD_INFO_ACTOR_KEY, 9);
		m_u16(m, IFLA_BOND_AD_INFO_PARTNER_KEY, 9);
		m_put(m, IFLA_BOND_AD_INFO_PARTNER_MAC, partner, 6);
		m_close(m);
	}
	m_close(m);
	m_close(m);
	m_end(m);
}

static void
port_msg(struct msg *m, int ifindex, const char *name, int carrier, int agg, int actor,
    int partner, uint64_t rx, uint64_t tx)
{
	struct rtnl_link_stats64 st = { .rx_bytes = rx, .tx_bytes = tx };

	m_begin(m, ifindex, name, carrier ? UP_LOWER : 0x1, mac1);
	m_u32(m, IFLA_MASTER, 10);
	m_put(m, IFLA_STATS64, &st, sizeof(st));
	m_open(m, IFLA_LINKINFO);
	m_put(m, IFLA_INFO_SLAVE_KIND, "bond", 5);
	m_open(m, IFLA_INFO_SLAVE_DATA);
	m_u8(m, IFLA_BOND_SLAVE_STATE, 0);
	m_u8(m, IFLA_BOND_SLAVE_MII_STATUS, carrier ? 0 : 2);
	m_u32(m, IFLA_BOND_SLAVE_LINK_FAILURE_COUNT, 0);
	m_put(m, IFLA_BOND_SLAVE_PERM_HWADDR, ifindex == 2 ? mac1 : mac2, 6);
	m_u16(m, IFLA_BOND_SLAVE_QUEUE_ID, 0);
	m_u16(m, IFLA_BOND_SLAVE_AD_AGGREGATOR_ID, (unsigned)agg);
	m_u8(m, IFLA_BOND_SLAVE_AD_ACTOR_OPER_PORT_STATE, (unsigned)actor);
	m_u16(m, IFLA_BOND_SLAVE_AD_PARTNER_OPER_PORT_STATE, (unsigned)partner);
	m_close(m);
	m_close(m);
	m_end(m);
}

/* A bond and its two ports decoded from the kernel's messages. */
static void
decode(struct net_bond *b, const struct msg *bm, const struct msg *p1, const struct msg *p2,
    int speed1, int speed2)
{
	struct bond_nl_link l;

	ck_assert_int_eq(bond_nl_parse(bm->buf, bm->len, &l), 0);
	ck_assert(l.is_bond);
	*b = l.bond;
	ck_assert_int_eq(bond_nl_parse(p1->buf, p1->len, &l), 0);
	ck_assert(l.is_port && l.master == 10);
	b->port[0] = l.port;
	b->port[0].speed_mbps = speed1;
	snprintf(b->port[0].duplex, sizeof(b->port[0].duplex), "full");
	ck_assert_int_eq(bond_nl_parse(p2->buf, p2->len, &l), 0);
	b->port[1] = l.port;
	b->port[1].speed_mbps = speed2;
	snprintf(b->port[1].duplex, sizeof(b->port[1].duplex), "full");
	b->nports = 2;
}

/* The codes of a diagnosis, space-separated. */
static const char *
codes(const struct net_bond *b, const struct net_bond *before)
{
	static char s[256];
	struct bond_diag d[BOND_DIAG_MAX];
	int n = lacp_diagnose(b, before, d, BOND_DIAG_MAX);

	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		ck_assert_msg(strlen(d[i].message) > 20, "%s has no words", d[i].code);
		strcat(s, i ? " " : "");
		strcat(s, d[i].code);
	}
	return s;
}

#define BUNDLED	0x3d	/* activity aggregation sync collecting distributing */
#define LONELY	0x45	/* activity aggregation defaulted */

/* Cuts the attribute at path (types, outermost first) of m to one byte of payload. */
static void
cut_to_one_byte(struct msg *m, const int *path, int depth)
{
	struct ifinfomsg *ifi = NLMSG_DATA((struct nlmsghdr *)(void *)m->buf);
	const struct rtattr *a = IFLA_RTA(ifi);
	int len = (int)(m->len - NLMSG_LENGTH(sizeof(*ifi)));

	for (int i = 0; i < depth; i++) {
		ck_assert_ptr_nonnull(a = find_attr(a, len, path[i]));
		if (i + 1 < depth) {
			len = (int)RTA_PAYLOAD(a);
			a = RTA_DATA(a);
		}
	}
	((struct rtattr *)(uintptr_t)a)->rta_len = (unsigned short)RTA_LENGTH(1);
}

/*
 * A short aggregator id (one byte where the kernel puts a u16) on the
 * bond and on its ports is no aggregator: garbage never reads as two
 * ports "in" an active aggregator that no id names.
 */
START_TEST(decode_short_aggregator_is_none)
{
	static const int bond_agg[] = { IFLA_LINKINFO, IFLA_INFO_DATA, IFLA_BOND_AD_INFO,
		IFLA_BOND_AD_INFO_AGGREGATOR };
	static const int port_agg[] = { IFLA_LINKINFO, IFLA_INFO_SLAVE_DATA,
		IFLA_BOND_SLAVE_AD_AGGREGATOR_ID };
	struct msg bm, p1, p2;
	struct net_bond b;

	bond_msg(&bm, 1, 2, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 0, 0);
	port_msg(&p2, 3, "lan2", 1, 1, BUNDLED, BUNDLED, 0, 0);
	cut_to_one_byte(&bm, bond_agg, 4);
	cut_to_one_byte(&p1, port_agg, 3);
	cut_to_one_byte(&p2, port_agg, 3);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_int_eq(b.port[0].aggregator_id, -1);
	ck_assert(!b.has_ad_info);
	ck_assert(!lacp_in_bundle(&b, &b.port[0]) && !lacp_in_bundle(&b, &b.port[1]));
	ck_assert_ptr_nonnull(strstr(codes(&b, NULL), "no-partner"));
}
END_TEST

START_TEST(decode_aggregated)
{
	struct msg bm, p1, p2;
	struct net_bond b;
	struct json_object *j;

	bond_msg(&bm, 1, 2, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED | 0x02, BUNDLED, 100, 200);
	port_msg(&p2, 3, "lan2", 1, 1, BUNDLED | 0x02, BUNDLED, 300, 400);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(b.name, "bond0");
	ck_assert_int_eq(b.mode, 4);
	ck_assert_int_eq(b.lacp_rate, 1);
	ck_assert_int_eq(b.xmit_hash_policy, 1);
	ck_assert(b.has_ad_info);
	ck_assert_int_eq(b.ad_aggregator, 1);
	ck_assert_int_eq(b.ad_num_ports, 2);
	ck_assert_mem_eq(b.ad_partner_mac, sw, 6);
	ck_assert_str_eq(b.port[0].name, "lan1");
	ck_assert_int_eq(b.port[0].aggregator_id, 1);
	ck_assert_int_eq(b.port[1].tx_bytes, 400);
	ck_assert_mem_eq(b.port[1].perm_mac, mac2, 6);
	ck_assert(lacp_in_bundle(&b, &b.port[0]) && lacp_in_bundle(&b, &b.port[1]));
	ck_assert_str_eq(codes(&b, NULL), "");
	j = lacp_state_json(BUNDLED | 0x02);
	ck_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
	    "[\"activity\",\"timeout\",\"aggregation\",\"synchronization\",\"collecting\",\"distributing\"]");
	json_object_put(j);
}
END_TEST

START_TEST(diagnose_no_partner)
{
	static const unsigned char none[6];
	struct msg bm, p1, p2;
	struct net_bond b;

	/* The switch port is not in LACP mode: nothing heard, partner MAC zero. */
	bond_msg(&bm, 1, 1, none);
	port_msg(&p1, 2, "lan1", 1, 1, LONELY | 0x38, 0x02, 0, 0);
	port_msg(&p2, 3, "lan2", 1, 2, LONELY, 0x02, 0, 0);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(codes(&b, NULL), "no-partner");
	/* One port heard, the other not: that port is named. */
	bond_msg(&bm, 1, 1, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 0, 0);
	port_msg(&p2, 3, "lan2", 1, 2, LONELY, 0x02, 0, 0);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(codes(&b, NULL), "no-partner");
}
END_TEST

START_TEST(diagnose_port_not_aggregated)
{
	static const unsigned char sw2[6] = { 0x00, 0x1b, 0x21, 0xdd, 0xee, 0xff };
	struct msg bm, p1, p2;
	struct net_bond b;

	/* Switch ports in two groups: two aggregators, each partnered. */
	bond_msg(&bm, 1, 1, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 0, 0);
	port_msg(&p2, 3, "lan2", 1, 2, 0x0d, 0x0d, 0, 0);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	(void)sw2;
	ck_assert_str_eq(codes(&b, NULL), "port-not-aggregated");
}
END_TEST

START_TEST(diagnose_churn)
{
	struct msg bm, p1, p2;
	struct net_bond b;

	/* Same aggregator, the partner does not agree (no sync). */
	bond_msg(&bm, 1, 2, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 0, 0);
	port_msg(&p2, 3, "lan2", 1, 1, 0x05, 0x05, 0, 0);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(codes(&b, NULL), "churn");
}
END_TEST

START_TEST(diagnose_speed_mismatch)
{
	struct msg bm, p1, p2;
	struct net_bond b;

	bond_msg(&bm, 1, 1, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 0, 0);
	port_msg(&p2, 3, "lan2", 1, 2, 0x0d, 0x0d, 0, 0);
	decode(&b, &bm, &p1, &p2, 1000, 100);
	ck_assert_str_eq(codes(&b, NULL), "speed-mismatch port-not-aggregated");
	/* A port that reports no duplex (virtio without speed= and duplex=) never aggregates. */
	decode(&b, &bm, &p1, &p2, 1000, -1);
	snprintf(b.port[1].duplex, sizeof(b.port[1].duplex), "unknown");
	ck_assert_str_eq(codes(&b, NULL), "speed-mismatch port-not-aggregated");
	ck_assert(!lacp_in_bundle(&b, &b.port[1]));
}
END_TEST

START_TEST(diagnose_link_down)
{
	struct msg bm, p1, p2;
	struct net_bond b;

	bond_msg(&bm, 1, 1, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 0, 0);
	port_msg(&p2, 3, "lan2", 0, 2, 0x45, 0x02, 0, 0);
	decode(&b, &bm, &p1, &p2, 1000, -1);
	ck_assert_str_eq(codes(&b, NULL), "link-down");
	ck_assert(!lacp_in_bundle(&b, &b.port[1]));
}
END_TEST

START_TEST(diagnose_single_port_traffic)
{
	struct msg bm, p1, p2;
	struct net_bond before, b;

	bond_msg(&bm, 1, 2, sw);
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 1000, 1000);
	port_msg(&p2, 3, "lan2", 1, 1, BUNDLED, BUNDLED, 1000, 1000);
	decode(&before, &bm, &p1, &p2, 1000, 1000);
	/* 100 MB sent, 97 % on lan1. */
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 60000000, 97001000);
	port_msg(&p2, 3, "lan2", 1, 1, BUNDLED, BUNDLED, 40000000, 3001000);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(codes(&b, &before), "single-port-traffic");
	/* Spread 60/40, or too little to judge: nothing. */
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 60000000, 60001000);
	port_msg(&p2, 3, "lan2", 1, 1, BUNDLED, BUNDLED, 40000000, 40001000);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(codes(&b, &before), "");
	port_msg(&p1, 2, "lan1", 1, 1, BUNDLED, BUNDLED, 2000, 1001000);
	port_msg(&p2, 3, "lan2", 1, 1, BUNDLED, BUNDLED, 1000, 1000);
	decode(&b, &bm, &p1, &p2, 1000, 1000);
	ck_assert_str_eq(codes(&b, &before), "");
}
END_TEST

/* ---- states recorded on the board (netd-recorded.h) ---- */

/* A bond and its ports from recorded messages; speed and duplex as ethtool said there. */
static void
recorded(struct net_bond *b, const unsigned char *bm, size_t blen,
    const unsigned char *p1, size_t l1, const unsigned char *p2, size_t l2, int veth)
{
	const unsigned char *pm[2] = { p1, p2 };
	size_t pl[2] = { l1, l2 };
	struct bond_nl_link l;

	ck_assert_int_eq(bond_nl_parse(bm, blen, &l), 0);
	ck_assert(l.is_bond && !l.is_port);
	*b = l.bond;
	b->nports = 2;
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(bond_nl_parse(pm[i], pl[i], &l), 0);
		ck_assert(l.is_port);
		ck_assert_int_eq(l.master, b->ifindex);
		b->port[i] = l.port;
		b->port[i].speed_mbps = veth ? 10000 : -1;
		snprintf(b->port[i].duplex, sizeof(b->port[i].duplex), veth ? "full" : "unknown");
	}
}

#define REC(s, b, p1, p2, veth) recorded(&bond, rec_##s##_##b, sizeof(rec_##s##_##b), \
	rec_##s##_##p1, sizeof(rec_##s##_##p1), rec_##s##_##p2, sizeof(rec_##s##_##p2), veth)

START_TEST(recorded_aggregated)
{
	static const unsigned char zero[6];
	struct net_bond bond;

	REC(aggregated, nbond, n1, n2, 1);
	ck_assert_str_eq(bond.name, "nbond");
	ck_assert_int_eq(bond.mode, 4);
	ck_assert_int_eq(bond.lacp_rate, 1);
	ck_assert_int_eq(bond.xmit_hash_policy, 1);
	ck_assert_int_eq(bond.miimon, 100);
	ck_assert_int_eq(bond.min_links, 1);
	ck_assert(bond.up && bond.carrier && bond.has_ad_info);
	ck_assert_int_eq(bond.ad_num_ports, 2);
	ck_assert(memcmp(bond.ad_partner_mac, zero, 6) != 0);
	ck_assert_str_eq(bond.port[0].name, "n1");
	ck_assert_int_eq(bond.port[0].aggregator_id, bond.ad_aggregator);
	ck_assert_int_eq(bond.port[1].aggregator_id, bond.ad_aggregator);
	ck_assert_int_eq(bond.port[0].actor_state & 0x3f, 0x3f);
	ck_assert_int_eq(bond.port[1].partner_state & 0x3d, 0x3d);
	ck_assert(lacp_in_bundle(&bond, &bond.port[0]) && lacp_in_bundle(&bond, &bond.port[1]));
	ck_assert_str_eq(codes(&bond, NULL), "");
}
END_TEST

START_TEST(recorded_link_cut)
{
	struct net_bond bond;

	REC(cut, nbond, n1, n2, 1);
	ck_assert(!bond.port[1].carrier);
	ck_assert(lacp_in_bundle(&bond, &bond.port[0]) && !lacp_in_bundle(&bond, &bond.port[1]));
	ck_assert_str_eq(codes(&bond, NULL), "link-down");
}
END_TEST

START_TEST(recorded_two_groups)
{
	struct net_bond bond;

	REC(twogroups, sbond, n3, n4, 1);
	ck_assert_int_ne(bond.port[0].aggregator_id, bond.port[1].aggregator_id);
	ck_assert_str_eq(codes(&bond, NULL), "port-not-aggregated");
}
END_TEST

START_TEST(recorded_no_partner)
{
	struct net_bond bond;

	/* virtio ports that report no duplex, and nothing speaking LACP behind them. */
	REC(nopartner, lbond, lan1, lan2, 0);
	ck_assert(bond.port[0].carrier && bond.port[1].carrier);
	ck_assert_str_eq(codes(&bond, NULL), "speed-mismatch speed-mismatch no-partner");
	/* Given full duplex, no-partner alone. */
	for (int i = 0; i < 2; i++)
		snprintf(bond.port[i].duplex, sizeof(bond.port[i].duplex), "full");
	ck_assert_str_eq(codes(&bond, NULL), "no-partner");
}
END_TEST

/* A message cut short or lying about its lengths decodes to nothing it does not hold. */
START_TEST(decode_hostile)
{
	struct msg bm;
	struct bond_nl_link l;
	struct rtattr *a;

	bond_msg(&bm, 1, 2, sw);
	for (size_t cut = 0; cut < bm.len; cut++) {
		((struct nlmsghdr *)(void *)bm.buf)->nlmsg_len = (uint32_t)cut;
		(void)bond_nl_parse(bm.buf, bm.len, &l);
		ck_assert(!l.bond.has_ad_info || cut >= bm.len - 40);
	}
	bond_msg(&bm, 1, 2, sw);
	ck_assert_int_eq(bond_nl_parse(bm.buf, 10, &l), -1);
	/* Every recorded message cut at every length (ASan watches the reads). */
	{
		static const struct { const unsigned char *p; size_t n; } recs[] = {
			{ rec_aggregated_nbond, sizeof(rec_aggregated_nbond) },
			{ rec_aggregated_n1, sizeof(rec_aggregated_n1) },
			{ rec_nopartner_lan1, sizeof(rec_nopartner_lan1) },
		};

		for (size_t r = 0; r < sizeof(recs) / sizeof(recs[0]); r++)
			for (size_t cut = 0; cut <= recs[r].n; cut++) {
				unsigned char *copy = malloc(cut ? cut : 1);

				memcpy(copy, recs[r].p, cut);
				(void)bond_nl_parse(copy, cut, &l);
				free(copy);
			}
	}
	/* An attribute claiming more than the message has stops the walk. */
	a = (struct rtattr *)(bm.buf + NLMSG_SPACE(sizeof(struct ifinfomsg)));
	a->rta_len = 2000;
	ck_assert_int_eq(bond_nl_parse(bm.buf, bm.len, &l), 0);
	ck_assert(!l.is_bond);
	ck_assert_str_eq(l.name, "");
}
END_TEST

/* ---- the API on the simulated kernel ---- */

static void
setup(void)
{
	struct board b = { .nports = 2 };

	snprintf(b.port[0].name, sizeof(b.port[0].name), "lan1");
	snprintf(b.port[1].name, sizeof(b.port[1].name), "lan2");
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	net = &net_sim;
	sim_reset();
	bond_reset();
	ck_assert_int_eq(sim_add_port("lan1", mac1, 1000), 0);
	ck_assert_int_eq(sim_add_port("lan2", mac2, 1000), 0);
	ck_assert_int_eq(sim_add_veth("v0", "v1"), 0);
	link_set_board(&b);
	srv = rpc_server_new("netd", "test");
	rpc_server_add_methods(srv, link_methods);
	rpc_server_add_methods(srv, addr_methods);
	rpc_server_add_methods(srv, bond_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
}

static struct json_object *
call(const char *method, const char *params, int err)
{
	struct json_object *a = unit_call(srv, &root, method, params);

	ck_assert_msg(unit_err_code(a) == err, "%s %s: got %d (%s), want %d", method,
	    params ? params : "", unit_err_code(a), unit_err_msg(a), err);
	return a;
}

static void
call0(const char *method, const char *params, int err)
{
	json_object_put(call(method, params, err));
}

static struct net_link
link_of(const char *name)
{
	struct net_link l;

	ck_assert_int_eq(net->link_get(name, &l), 0);
	return l;
}

static int
exists(const char *name)
{
	struct net_link l;

	return net->link_get(name, &l) == 0;
}

static const char *
plain(struct json_object *a)
{
	return json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
}

#define LACP2 "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],\"mode\":\"802.3ad\"}"

START_TEST(create_lacp_bond)
{
	struct json_object *a = call("bond.create", LACP2, 0);
	struct net_bond b;

	ck_assert_ptr_nonnull(strstr(plain(a), "\"mode\":\"802.3ad\""));
	ck_assert_ptr_nonnull(strstr(plain(a), "\"lacp_rate\":\"fast\""));
	ck_assert_ptr_nonnull(strstr(plain(a), "\"xmit_hash_policy\":\"layer3+4\""));
	/* The bond has the first port's MAC, and so do its ports. */
	ck_assert_ptr_nonnull(strstr(plain(a), "\"mac\":\"52:54:00:4e:41:01\""));
	json_object_put(a);
	ck_assert_mem_eq(link_of("lan2").mac, mac1, 6);
	ck_assert_str_eq(link_of("lan1").master, "bond0");
	ck_assert_int_eq(link_of("lan1").up, 1);
	ck_assert_int_eq(link_of("bond0").up, 1);
	ck_assert_int_eq(net->bond_get("bond0", &b), 0);
	ck_assert_int_eq(b.miimon, 100);
	ck_assert_int_eq(b.min_links, 1);
	ck_assert_int_eq(b.nports, 2);
	/* No partner yet: the simulated switch does not speak LACP. */
	a = call("bond.show", "{\"name\":\"bond0\"}", 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "\"code\":\"no-partner\""));
	ck_assert_ptr_nonnull(strstr(plain(a), "\"defaulted\""));
	json_object_put(a);
	/* The partner answers on both ports: one aggregator, both in it. */
	ck_assert_int_eq(sim_set_lacp("lan1", 1, BUNDLED | 2, BUNDLED), 0);
	ck_assert_int_eq(sim_set_lacp("lan2", 1, BUNDLED | 2, BUNDLED), 0);
	ck_assert_int_eq(sim_set_ad_info("bond0", 1, 2, sw), 0);
	a = call("bond.show", "{\"name\":\"bond0\"}", 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "\"state\":\"aggregated\""));
	ck_assert_ptr_nonnull(strstr(plain(a), "\"active_aggregator\":{\"id\":1,\"partner_mac\":\"00:1b:21:aa:bb:cc\",\"ports\":2"));
	ck_assert_ptr_nonnull(strstr(plain(a), "\"diagnosis\":[]"));
	json_object_put(a);
	a = call("bond.list", NULL, 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "\"name\":\"bond0\""));
	json_object_put(a);
}
END_TEST

/* The bond's MAC is the first board port's, wherever it is listed. */
START_TEST(mac_of_first_board_port)
{
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"v0\",\"lan2\",\"lan1\"],"
	    "\"mode\":\"802.3ad\"}", 0);
	ck_assert_mem_eq(link_of("bond0").mac, mac2, 6);
	ck_assert_mem_eq(link_of("v0").mac, mac2, 6);
	call0("bond.delete", "{\"name\":\"bond0\"}", 0);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"v0\"],\"mode\":\"802.3ad\"}", 0);
	ck_assert_mem_eq(link_of("bond0").mac, link_of("v0").mac, 6);
}
END_TEST

START_TEST(every_mode)
{
	static const char *const modes[] = { "balance-rr", "active-backup", "balance-xor",
		"broadcast", "802.3ad", "balance-tlb", "balance-alb", NULL };
	char p[160];

	for (int i = 0; modes[i]; i++) {
		struct net_bond b;

		snprintf(p, sizeof(p), "{\"name\":\"b%d\",\"ports\":[\"lan1\",\"lan2\"],\"mode\":\"%s\"}",
		    i, modes[i]);
		call0("bond.create", p, 0);
		snprintf(p, sizeof(p), "b%d", i);
		ck_assert_int_eq(net->bond_get(p, &b), 0);
		ck_assert_int_eq(b.mode, i);
		snprintf(p, sizeof(p), "{\"name\":\"b%d\"}", i);
		call0("bond.delete", p, 0);
		ck_assert_str_eq(link_of("lan1").master, "");
	}
}
END_TEST

START_TEST(refusals_change_nothing)
{
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan9\"],\"mode\":\"802.3ad\"}",
	    NAS_ERR_NOT_FOUND);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"lacp\"}",
	    RPC_INVALID_PARAMS);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"active-backup\","
	    "\"lacp_rate\":\"fast\"}", NAS_ERR_INVALID);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"balance-rr\","
	    "\"xmit_hash_policy\":\"layer2\"}", NAS_ERR_INVALID);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"balance-alb\","
	    "\"min_links\":1}", NAS_ERR_INVALID);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\","
	    "\"xmit_hash_policy\":\"layer5\"}", RPC_INVALID_PARAMS);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan1\"],\"mode\":\"802.3ad\"}",
	    RPC_INVALID_PARAMS);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[],\"mode\":\"802.3ad\"}", RPC_INVALID_PARAMS);
	call0("bond.create", "{\"name\":\"bo/nd\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\"}",
	    RPC_INVALID_PARAMS);
	call0("bond.create", "{\"name\":\"lan2\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\"}",
	    NAS_ERR_EXISTS);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lo\"],\"mode\":\"802.3ad\"}",
	    NAS_ERR_INVALID);
	/* The port the caller may be reaching us through. */
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\"}", 0);
	call0("bond.create", LACP2, NAS_ERR_REFUSED);
	ck_assert(!exists("bond0"));
	ck_assert_str_eq(link_of("lan1").master, "");
	ck_assert_mem_eq(link_of("lan2").mac, mac2, 6);
	/* A port of another bond. */
	call0("bond.create", "{\"name\":\"bond1\",\"ports\":[\"lan2\"],\"mode\":\"active-backup\"}", 0);
	call0("bond.create", "{\"name\":\"bond2\",\"ports\":[\"v0\",\"lan2\"],\"mode\":\"802.3ad\"}",
	    NAS_ERR_BUSY);
	ck_assert(!exists("bond2"));
	ck_assert_str_eq(link_of("lan2").master, "bond1");
	ck_assert_int_eq(link_of("v0").up, 0);
	call0("bond.create", "{\"name\":\"bond2\",\"ports\":[\"bond1\"],\"mode\":\"802.3ad\"}",
	    NAS_ERR_INVALID);
	/* A port whose VLAN carries the address counts as well. */
	call0("vlan.create", "{\"link\":\"v0\",\"id\":10}", 0);
	call0("addr.add", "{\"link\":\"v0.10\",\"address\":\"10.10.0.2/24\"}", 0);
	call0("bond.create", "{\"name\":\"bond3\",\"ports\":[\"v0\"],\"mode\":\"802.3ad\"}",
	    NAS_ERR_REFUSED);
	ck_assert(!exists("bond3"));
	/* With force, the addressed port is bonded. */
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\",\"force\":true}", 0);
	call0("bond.delete", "{\"name\":\"lan1\"}", NAS_ERR_NOT_FOUND);
	call0("bond.delete", "{\"name\":\"nope\"}", NAS_ERR_NOT_FOUND);
}
END_TEST

/* The kernel refuses each step in turn: the bond is gone, the ports as they were. */
START_TEST(failure_at_every_step_undone)
{
	for (int k = 0; k < 9; k++) {
		struct json_object *a;

		call0("link.set", "{\"link\":\"lan1\",\"up\":true}", 0);
		sim_fail_after(k);
		a = unit_call(srv, &root, "bond.create", LACP2);
		sim_fail_after(-1);
		if (unit_err_code(a) == 0) {
			json_object_put(a);
			ck_assert_int_eq(k, 8);	/* the eight steps, each refused once, then none */
			break;
		}
		ck_assert_int_eq(unit_err_code(a), NAS_ERR_FAILED);
		json_object_put(a);
		ck_assert_msg(!exists("bond0"), "step %d left the bond", k);
		ck_assert_str_eq(link_of("lan1").master, "");
		ck_assert_str_eq(link_of("lan2").master, "");
		ck_assert_int_eq(link_of("lan1").up, 1);
		ck_assert_int_eq(link_of("lan2").up, 0);
		ck_assert_mem_eq(link_of("lan2").mac, mac2, 6);
	}
}
END_TEST

START_TEST(delete_releases_ports)
{
	struct json_object *a;

	call0("bond.create", LACP2, 0);
	a = call("bond.delete", "{\"name\":\"bond0\"}", 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"]}"));
	json_object_put(a);
	ck_assert(!exists("bond0"));
	ck_assert_mem_eq(link_of("lan2").mac, mac2, 6);
	ck_assert_str_eq(link_of("lan2").master, "");
	ck_assert_int_eq(link_of("lan2").up, 1);
	/* A bond holding the management address needs force to go. */
	call0("bond.create", LACP2, 0);
	call0("addr.add", "{\"link\":\"bond0\",\"address\":\"192.168.1.10/24\"}", 0);
	call0("bond.delete", "{\"name\":\"bond0\"}", NAS_ERR_REFUSED);
	ck_assert(exists("bond0"));
	call0("bond.delete", "{\"name\":\"bond0\",\"force\":true}", 0);
}
END_TEST

/* The simulated driver is as strict as the real one. */
START_TEST(sim_like_the_driver)
{
	struct net_bond_opts o = { .name = "bx", .mode = 1, .miimon = 100, .lacp_rate = 1,
		.xmit_hash_policy = -1, .min_links = -1, .ad_select = -1 };

	ck_assert_int_eq(net->bond_create(&o), -1);
	ck_assert_int_eq(errno, EACCES);
	o.lacp_rate = -1;
	ck_assert_int_eq(net->bond_create(&o), 0);
	ck_assert_int_eq(net->bond_create(&o), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(net->link_set("lan1", 1, 0), 0);
	ck_assert_int_eq(net->link_set_master("lan1", "bx"), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_str_eq(net_errmsg(), "Device can not be enslaved while up");
	ck_assert_int_eq(net->link_set_master("lan1", "lan2"), -1);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(net->link_set_master("bx", "bx"), -1);
	ck_assert_int_eq(errno, EPERM);
}
END_TEST

/*
 * A bond's MTU is its ports' (bond_change_mtu, bond_enslave): the ports
 * follow it, one a port's driver cannot take is refused and changes
 * nothing, and a port let go gets its own MTU back.
 */
START_TEST(sim_bond_mtu_is_its_ports)
{
	struct net_bond_opts o = { .name = "bx", .mode = 0, .miimon = -1, .lacp_rate = -1,
		.xmit_hash_policy = -1, .min_links = -1, .ad_select = -1 };
	struct net_link l;

	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],"
	    "\"mode\":\"balance-rr\"}", 0);
	call0("link.set", "{\"link\":\"bond0\",\"mtu\":9000}", 0);
	ck_assert_int_eq(net->link_get("lan1", &l), 0);
	ck_assert_uint_eq(l.mtu, 9000);
	ck_assert_int_eq(sim_set_max_mtu("lan2", 1500), 0);
	ck_assert_int_eq(net->link_set("bond0", -1, 9100), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(net->link_get("lan1", &l), 0);
	ck_assert_uint_eq(l.mtu, 9000);
	call0("bond.delete", "{\"name\":\"bond0\",\"force\":true}", 0);
	ck_assert_int_eq(net->link_get("lan1", &l), 0);
	ck_assert_uint_eq(l.mtu, 1500);
	ck_assert_int_eq(net->bond_create(&o), 0);
	ck_assert_int_eq(net->link_set("bx", -1, 9000), 0);
	ck_assert_int_eq(net->link_set("lan2", 0, 0), 0);
	ck_assert_int_eq(net->link_set_master("lan2", "bx"), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(net->link_get("lan2", &l), 0);
	ck_assert_str_eq(l.master, "");
}
END_TEST

/*
 * ad_select and primary: encoded with the kernel's types (primary is the
 * port's ifindex), decoded back by name, refused outside their modes by
 * netd and by the simulated driver alike, shown by bond.show.
 */
START_TEST(encode_decode_ad_select_and_primary)
{
	struct net_bond_opts o = { .name = "b", .mode = 1, .miimon = -1, .lacp_rate = -1,
		.xmit_hash_policy = -1, .min_links = -1, .ad_select = -1, .primary_ifindex = 7 };
	char buf[512];
	const struct rtattr *info, *data;
	struct bond_nl_link l;
	struct msg m;

	ck_assert_uint_gt(bond_nl_newlink(&o, 1, buf, sizeof(buf)), 0);
	data = bond_data(buf, &info);
	assert_attr(data, IFLA_BOND_PRIMARY, 4, 7);
	o.mode = 4;
	o.primary_ifindex = 0;
	o.ad_select = 1;
	ck_assert_uint_gt(bond_nl_newlink(&o, 1, buf, sizeof(buf)), 0);
	data = bond_data(buf, &info);
	assert_attr(data, IFLA_BOND_AD_SELECT, 1, 1);
	ck_assert_ptr_null(find_attr(RTA_DATA(data), (int)RTA_PAYLOAD(data), IFLA_BOND_PRIMARY));
	/* The kernel's answer: primary and active port by ifindex. */
	m_begin(&m, 10, "bond0", UP_LOWER, mac1);
	m_open(&m, IFLA_LINKINFO);
	m_put(&m, IFLA_INFO_KIND, "bond", 5);
	m_open(&m, IFLA_INFO_DATA);
	m_u8(&m, IFLA_BOND_MODE, 1);
	m_u32(&m, IFLA_BOND_PRIMARY, 12);
	m_u32(&m, IFLA_BOND_ACTIVE_SLAVE, 11);
	m_u8(&m, IFLA_BOND_AD_SELECT, 2);
	m_close(&m);
	m_close(&m);
	m_end(&m);
	ck_assert_int_eq(bond_nl_parse(m.buf, m.len, &l), 0);
	ck_assert_int_eq(l.bond.primary_ifindex, 12);
	ck_assert_int_eq(l.bond.active_ifindex, 11);
	ck_assert_int_eq(l.bond.ad_select, 2);
}
END_TEST

START_TEST(ad_select_and_primary_by_mode)
{
	struct net_bond_opts o = { .name = "bx", .mode = 4, .miimon = 100, .lacp_rate = -1,
		.xmit_hash_policy = -1, .min_links = -1, .ad_select = -1, .primary = "lan1" };
	struct json_object *a;

	/*
	 * As the board's driver answered iproute2: primary in 802.3ad is
	 * refused, ad_select in active-backup taken (and ignored); a primary
	 * that does not exist has no ifindex.
	 */
	ck_assert_int_eq(net->bond_create(&o), -1);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_str_eq(net_errmsg(), "option not supported in mode");
	o.mode = 1;
	o.ad_select = 1;
	ck_assert_int_eq(net->bond_create(&o), 0);
	ck_assert_int_eq(net->link_del("bx"), 0);
	snprintf(o.primary, sizeof(o.primary), "lan9");
	ck_assert_int_eq(net->bond_create(&o), -1);
	ck_assert_int_eq(errno, ENODEV);
	ck_assert(!exists("bx"));
	/* netd refuses first, with words. */
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],\"mode\":\"802.3ad\","
	    "\"primary\":\"lan1\"}", NAS_ERR_INVALID);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],"
	    "\"mode\":\"active-backup\",\"ad_select\":\"count\"}", NAS_ERR_INVALID);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"active-backup\","
	    "\"primary\":\"lan2\"}", NAS_ERR_INVALID);
	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\","
	    "\"ad_select\":\"fastest\"}", RPC_INVALID_PARAMS);
	ck_assert(!exists("bond0"));
	ck_assert_str_eq(link_of("lan1").master, "");
	/* In their modes: set, and shown. */
	a = call("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],"
	    "\"mode\":\"active-backup\",\"primary\":\"lan2\"}", 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "\"primary\":\"lan2\",\"active_port\":\"lan2\""));
	ck_assert_ptr_nonnull(strstr(plain(a), "\"ad_select\":null"));
	json_object_put(a);
	/* The primary loses its cable: the other port takes over. */
	ck_assert_int_eq(sim_set_cable("lan2", 0), 0);
	a = call("bond.show", "{\"name\":\"bond0\"}", 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "\"active_port\":\"lan1\""));
	json_object_put(a);
	call0("bond.delete", "{\"name\":\"bond0\"}", 0);
	a = call("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\","
	    "\"ad_select\":\"bandwidth\"}", 0);
	ck_assert_ptr_nonnull(strstr(plain(a), "\"ad_select\":\"bandwidth\",\"primary\":null"));
	json_object_put(a);
}
END_TEST

/* ---- events ---- */

static char dir_sock[300];

static int
subscriber(void)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
	    "\"params\":{\"topics\":[\"bond\"]},\"id\":1}\n";
	char *dir = unit_tmpdir(), *line;
	int fd;

	snprintf(dir_sock, sizeof(dir_sock), "%s/b.sock", dir);
	free(dir);
	rpc_events_init(srv);
	ck_assert_int_eq(rpc_server_listen(srv, dir_sock, (gid_t)-1), 0);
	fd = unit_connect(dir_sock);
	unit_send(fd, sub, strlen(sub));
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	free(line);
	return fd;
}

static char *
next_event(int fd, const char *topic)
{
	char *line = unit_read_line(fd);

	ck_assert_ptr_nonnull(line);
	ck_assert_msg(strstr(line, topic) != NULL, "%s instead of %s", line, topic);
	return line;
}

START_TEST(events_port_and_diagnosis)
{
	int fd = subscriber();
	char *l;

	call0("bond.create", LACP2, 0);
	bond_watch();
	/* First look: each port, then the diagnosis. */
	free(next_event(fd, "bond.port"));
	free(next_event(fd, "bond.port"));
	l = next_event(fd, "bond.diagnosis");
	ck_assert_ptr_nonnull(strstr(l, "no-partner"));
	free(l);
	bond_watch();
	unit_assert_silent(fd);
	/* The partner answers: both ports join, the diagnosis clears. */
	sim_set_lacp("lan1", 1, BUNDLED, BUNDLED);
	sim_set_lacp("lan2", 1, BUNDLED, BUNDLED);
	sim_set_ad_info("bond0", 1, 2, sw);
	bond_watch();
	l = next_event(fd, "bond.port");
	ck_assert_ptr_nonnull(strstr(l, "\"in_aggregator\":true"));
	free(l);
	free(next_event(fd, "bond.port"));
	l = next_event(fd, "bond.diagnosis");
	ck_assert_ptr_nonnull(strstr(l, "\"diagnosis\":[]"));
	free(l);
	/* A cable pulled: the port leaves, link-down. */
	sim_set_cable("lan2", 0);
	bond_watch();
	l = next_event(fd, "bond.port");
	ck_assert_ptr_nonnull(strstr(l, "\"port\":\"lan2\""));
	ck_assert_ptr_nonnull(strstr(l, "\"in_aggregator\":false"));
	free(l);
	l = next_event(fd, "bond.diagnosis");
	ck_assert_ptr_nonnull(strstr(l, "link-down"));
	free(l);
	unit_assert_silent(fd);
	/* More bonds than netd keeps, each deleted behind its back: the new one is still watched. */
	call0("bond.delete", "{\"name\":\"bond0\"}", 0);
	for (int i = 0; i < 12; i++) {
		char p[96];

		snprintf(p, sizeof(p), "{\"name\":\"t%d\",\"ports\":[\"v0\"],\"mode\":\"802.3ad\"}", i);
		call0("bond.create", p, 0);
		bond_watch();
		free(next_event(fd, "bond.port"));
		free(next_event(fd, "bond.diagnosis"));
		snprintf(p, sizeof(p), "t%d", i);
		ck_assert_int_eq(net->link_del(p), 0);
		ck_assert_int_eq(net->link_set("v0", 0, 0), 0);
	}
	close(fd);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("netd-bond");
	TCase *t = tcase_create("netlink");

	tcase_add_test(t, encode_every_option);
	tcase_add_test(t, encode_decode_ad_select_and_primary);
	tcase_add_test(t, encode_each_mode_leaves_unset_options_out);
	tcase_add_test(t, decode_aggregated);
	tcase_add_test(t, decode_short_aggregator_is_none);
	tcase_add_test(t, diagnose_no_partner);
	tcase_add_test(t, diagnose_port_not_aggregated);
	tcase_add_test(t, diagnose_churn);
	tcase_add_test(t, diagnose_speed_mismatch);
	tcase_add_test(t, diagnose_link_down);
	tcase_add_test(t, diagnose_single_port_traffic);
	tcase_add_test(t, decode_hostile);
	tcase_add_test(t, recorded_aggregated);
	tcase_add_test(t, recorded_link_cut);
	tcase_add_test(t, recorded_two_groups);
	tcase_add_test(t, recorded_no_partner);
	suite_add_tcase(s, t);
	t = tcase_create("api");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, create_lacp_bond);
	tcase_add_test(t, ad_select_and_primary_by_mode);
	tcase_add_test(t, mac_of_first_board_port);
	tcase_add_test(t, every_mode);
	tcase_add_test(t, refusals_change_nothing);
	tcase_add_test(t, failure_at_every_step_undone);
	tcase_add_test(t, delete_releases_ports);
	tcase_add_test(t, sim_like_the_driver);
	tcase_add_test(t, sim_bond_mtu_is_its_ports);
	tcase_add_test(t, events_port_and_diagnosis);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
