/*
 * netd's configuration: netd.ini parsed without trusting it (a bad value
 * costs its key, never the rest), the diff engine (every kind of change
 * run on the simulated seam, then every step undone, last first, gives
 * the running state back), a step failing mid-apply undoing the ones
 * before it, every API change written back to the file, and net.apply
 * rolled back unless net.confirm comes in time.
 */
#include <check.h>
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "netd/netconf.h"
#include "netd/netd.h"
#include "netd/system-sim.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static const unsigned char mac1[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 1 };
static const unsigned char mac2[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 2 };
static char *dir, *ini, *resolv;

static void
setup(void)
{
	struct board b = { .nports = 2 };

	for (int i = 0; i < 2; i++) {
		snprintf(b.port[i].name, sizeof(b.port[i].name), "lan%d", i + 1);
		snprintf(b.port[i].label, sizeof(b.port[i].label), "LAN %d", i + 1);
	}
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	net = &net_sim;
	sim_reset();
	bond_reset();
	ck_assert_int_eq(sim_add_port("lan1", mac1, 1000), 0);
	ck_assert_int_eq(sim_add_port("lan2", mac2, 1000), 0);
	ck_assert_int_eq(sim_add_veth("v0", "v1"), 0);
	link_set_board(&b);
	dir = unit_tmpdir();
	ini = unit_write(dir, "netd.ini", "; the daemon's own\n[netd]\nboard = /etc/board.ini\n");
	resolv = unit_write(dir, "resolv.conf", "nameserver 192.0.2.53\n");
	addr_set_resolv(resolv);
	netconf_set_path(ini);
	srv = rpc_server_new("netd", "test");
	rpc_server_add_methods(srv, link_methods);
	rpc_server_add_methods(srv, addr_methods);
	rpc_server_add_methods(srv, bond_methods);
	rpc_server_add_methods(srv, netconf_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	netconf_set_path("");
	unit_rmtree(dir);
	free(dir);
	free(ini);
	free(resolv);
}

static void
call0(const char *method, const char *params, int err)
{
	json_object_put(unit_call_expect(srv, &root, method, params, err));
}

/* Sets section/key = value in c, which must be accepted. */
static void
set(struct netconf *c, const char *sec, const char *key, const char *v)
{
	char why[160];

	ck_assert_msg(netconf_set(c, sec, key, v, why, sizeof(why)) == 0, "[%s] %s = %s: %s",
	    sec, key, v, why);
}

static void
refused(const char *sec, const char *key, const char *v)
{
	struct netconf c NETCONF_AUTO = { 0 };
	struct netconf before;
	struct nc_link link0;
	char why[160] = "";

	set(&c, "port lan1", "mtu", "1500");
	before = c;
	link0 = c.link[0];
	ck_assert_msg(netconf_set(&c, sec, key, v, why, sizeof(why)) == -1, "[%s] %s = %s taken",
	    sec, key, v);
	ck_assert_msg(*why, "no reason given");
	/* The links are the netconf's memory: compared as well as the rest. */
	ck_assert_msg(memcmp(&c, &before, sizeof(c)) == 0 &&
	    memcmp(&c.link[0], &link0, sizeof(link0)) == 0, "[%s] %s = %s changed the config",
	    sec, key, v);
}

/* The number of steps between the running state and c. */
static int
distance(const struct netconf *c)
{
	struct netconf have NETCONF_AUTO = { 0 };
	struct nc_step *s;
	int n;

	ck_assert_int_eq(netconf_running(&have), 0);
	ck_assert_ptr_nonnull(s = netconf_plan(c, &have, &n));
	for (int i = 0; i < n; i++) {
		char what[128];

		nc_op_format(&s[i].op, what, sizeof(what));
		fprintf(stderr, "  left: %s\n", what);
	}
	free(s);
	return n;
}

/*
 * Turns the running state into want step by step, checks it got there,
 * then undoes every step, last first, and checks the state is back.
 * Returns the number of steps (the change must be one).
 */
static int
roundtrip(struct netconf *want)
{
	struct netconf before NETCONF_AUTO = { 0 };
	struct nc_step *s;
	char why[160];
	int n, failed = -1;

	ck_assert_msg(netconf_check(want, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(netconf_running(&before), 0);
	ck_assert_ptr_nonnull(s = netconf_plan(want, &before, &n));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(netconf_run(s, n, &failed), 0);
	ck_assert_int_eq(distance(want), 0);
	for (int i = n - 1; i >= 0; i--) {
		char what[128];

		nc_op_format(&s[i].undo, what, sizeof(what));
		ck_assert_msg(nc_op_run(&s[i].undo) == 0, "undo %s: %s", what, strerror(errno));
	}
	ck_assert_int_eq(distance(&before), 0);
	free(s);
	return n;
}

static void
empty(struct netconf *c)
{
	netconf_free(c);
}

START_TEST(parse_every_key)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char why[160];

	empty(&c);
	set(&c, "port lan1", "up", "yes");
	set(&c, "port lan1", "mtu", "9000");
	set(&c, "bond bond0", "mode", "802.3ad");
	set(&c, "bond bond0", "ports", "lan1, lan2");
	set(&c, "bond bond0", "lacp_rate", "slow");
	set(&c, "bond bond0", "xmit_hash_policy", "layer2+3");
	set(&c, "bond bond0", "miimon", "50");
	set(&c, "bond bond0", "min_links", "2");
	set(&c, "bond bond0", "address", "192.0.2.2/24,fd00::2/64");
	set(&c, "vlan bond0.10", "link", "bond0");
	set(&c, "vlan bond0.10", "id", "10");
	set(&c, "route", "gateway", "192.0.2.1, fd00::1");
	set(&c, "dns", "servers", "192.0.2.53 2001:db8::53");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), 0);
	ck_assert_int_eq(c.nlinks, 3);
	ck_assert_uint_eq(c.link[0].mtu, 9000);
	ck_assert_int_eq(c.link[1].nports, 2);
	ck_assert_int_eq(c.link[1].bond.lacp_rate, 0);
	ck_assert_int_eq(c.link[1].bond.miimon, 50);
	ck_assert_int_eq(c.link[1].naddr, 2);
	ck_assert_int_eq(c.link[2].vlan_id, 10);
	ck_assert(c.has_gw[0] && c.has_gw[1]);
	ck_assert_int_eq(c.ndns, 2);
	ck_assert_str_eq(c.dns[1], "2001:db8::53");
}
END_TEST

START_TEST(parse_refuses_bad_values)
{
	refused("port lan1", "mtu", "67");
	refused("port lan1", "mtu", "1500x");
	refused("port lan1", "mtu", "99999999999999999999");
	refused("port lan1", "up", "maybe");
	/* Names the file could not give back as written (iniparser's syntax). */
	refused("port LAN1", "mtu", "1500");
	refused("port lan]1", "mtu", "1500");
	refused("bond bond0", "ports", "lan1, x;y");
	refused("bond bond0", "ports", "lan1#2");
	refused("vlan v7", "link", "lan1\\");
	refused("vlan v7", "link", "\"lan1\"");
	refused("port lan1", "address", "192.0.2.2");
	refused("port lan1", "address", "192.0.2.2/33");
	refused("port lan1", "address", "224.0.0.1/4");
	refused("port lan1", "address", "192.0.2.2/24, 192.0.2.2/24");
	refused("port lan1", "address", "1.1.1.1/8,1.1.1.2/8,1.1.1.3/8,1.1.1.4/8,1.1.1.5/8,"
	    "1.1.1.6/8,1.1.1.7/8,1.1.1.8/8,1.1.1.9/8");
	refused("port lan1", "nosuch", "1");
	refused("port lan1", "id", "5");
	refused("port a/b", "mtu", "1500");
	refused("port waytoolongname01", "mtu", "1500");
	refused("port lo", "up", "yes");
	refused("bond lan1", "mode", "802.3ad");	/* lan1 is a port above */
	refused("bond bond0", "mode", "fastest");
	refused("bond bond0", "ports", "lan1,lan1");
	refused("bond bond0", "ports", "bond0");
	refused("bond bond0", "ports", "a,b,c,d,e,f,g,h,i");
	refused("bond bond0", "miimon", "-1");
	refused("bond bond0", "xmit_hash_policy", "layer9");
	refused("vlan v.5", "id", "4095");
	refused("vlan v.5", "link", "lo");
	refused("route", "gateway", "192.0.2.1, 192.0.2.254");
	refused("route", "gateway", "gateway.example");
	refused("route", "metric", "5");
	refused("dns", "servers", "1.1.1.1 1.1.1.2 1.1.1.3 1.1.1.4");
	refused("dns", "servers", "ns.example");
	refused("firewall", "on", "yes");
}
END_TEST

START_TEST(check_refuses_what_one_key_cannot_see)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char why[160];

	empty(&c);
	set(&c, "bond bond0", "mode", "balance-rr");
	set(&c, "bond bond0", "ports", "lan1");
	set(&c, "bond bond0", "lacp_rate", "fast");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "802.3ad"));
	empty(&c);
	set(&c, "bond bond0", "mode", "active-backup");
	set(&c, "bond bond0", "ports", "lan1");
	set(&c, "bond bond1", "mode", "active-backup");
	set(&c, "bond bond1", "ports", "lan1");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	empty(&c);
	set(&c, "bond bond0", "ports", "lan1");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	empty(&c);
	set(&c, "bond bond0", "mode", "active-backup");
	set(&c, "bond bond0", "ports", "lan1");
	set(&c, "port lan1", "address", "192.0.2.2/24");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	empty(&c);
	set(&c, "vlan x.5", "id", "5");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
}
END_TEST

/* A file with bad lines: each is left out, the rest is read; a broken file is not applied. */
START_TEST(load_keeps_the_rest)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char *p;
	int found;

	p = unit_write(dir, "bad.ini",
	    "[api]\nadmin_group = nasadmin\n"
	    "[port lan1]\nmtu = 70000\naddress = 192.0.2.2/24\n"
	    "[port lan2]\nup = perhaps\nmtu = 1400\n"
	    "[bond bond9]\nmode = balance-rr\nports = v0\nlacp_rate = fast\n"
	    "[vlan lan2.7]\nlink = lan2\nid = 7\n"
	    "[dns]\nservers = 1.1.1.1, not-an-ip\n"
	    "[route]\ngateway = 192.0.2.1\n");
	ck_assert_int_eq(netconf_load(p, &c, &found), 0);
	ck_assert_int_eq(found, 1);
	ck_assert_int_eq(c.nlinks, 3);	/* bond9 is left out: lacp_rate in balance-rr */
	ck_assert_str_eq(c.link[0].name, "lan1");
	ck_assert_uint_eq(c.link[0].mtu, 0);
	ck_assert_int_eq(c.link[0].naddr, 1);
	ck_assert_int_eq(c.link[1].up, -1);
	ck_assert_uint_eq(c.link[1].mtu, 1400);
	ck_assert_int_eq(c.has_dns, 0);
	ck_assert_int_eq(c.has_gw[0], 1);
	free(p);
	/* As in netd (main.c): a repeated key or section of the network is logged, the last kept. */
	conf_set_foreign(netconf_section);
	p = unit_write(dir, "dup.ini", "[port lan1]\nmtu = 1400\nmtu = 1500\n[port lan1]\n"
	    "address = 192.0.2.2/24\n");
	ck_assert_int_eq(netconf_load(p, &c, &found), 0);
	ck_assert_int_eq(c.nlinks, 1);
	ck_assert_uint_eq(c.link[0].mtu, 1500);
	ck_assert_int_eq(c.link[0].naddr, 1);
	conf_set_foreign(NULL);
	free(p);
	p = unit_write(dir, "syntax.ini", "[port lan1\nmtu = 1400\n");
	ck_assert_int_eq(netconf_load(p, &c, &found), -1);
	free(p);
	/* A section with no keys names its link, as net.apply's {} does (nasctl net apply). */
	p = unit_write(dir, "empty.ini", "[port lan1]\n[route]\n");
	ck_assert_int_eq(netconf_load(p, &c, &found), 0);
	ck_assert_int_eq(c.nlinks, 1);
	ck_assert_str_eq(c.link[0].name, "lan1");
	ck_assert_int_eq(c.link[0].naddr, 0);
	ck_assert_int_eq(c.has_gw[0], 0);
	free(p);
	ck_assert_int_eq(netconf_load("/nonexistent/netd.ini", &c, &found), 0);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(c.nlinks, 0);
}
END_TEST

START_TEST(diff_link_mtu_and_up)
{
	struct netconf c NETCONF_AUTO = { 0 };

	empty(&c);
	set(&c, "port lan1", "mtu", "9000");
	set(&c, "port lan2", "up", "yes");
	ck_assert_int_eq(roundtrip(&c), 2);
}
END_TEST

START_TEST(diff_addresses_come_and_go)
{
	struct netconf c NETCONF_AUTO = { 0 };

	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.9/24\"}", 0);
	call0("addr.add", "{\"link\":\"lan2\",\"address\":\"198.51.100.9/24\"}", 0);
	empty(&c);
	/* lan1: one goes, two come; lan2 is not named: its address stays. */
	set(&c, "port lan1", "address", "192.0.2.2/24, fd00::2/64");
	ck_assert_int_eq(roundtrip(&c), 3);
}
END_TEST

/* As the kernel does, an IPv4 primary takes its secondaries: they go first. */
START_TEST(diff_secondaries_go_first)
{
	struct netconf c NETCONF_AUTO = { 0 };
	struct net_addr a;
	char why[64];

	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.1/24\"}", 0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.9/24\"}", 0);
	empty(&c);
	set(&c, "port lan1", "mtu", "1500");
	ck_assert_int_eq(roundtrip(&c), 2);
	/* The simulated kernel: the primary deleted, the secondary is gone too. */
	ck_assert_int_eq(cidr_parse("192.0.2.1/24", &a, why, sizeof(why)), 0);
	snprintf(a.link, sizeof(a.link), "lan1");
	ck_assert_int_eq(net->addr_del(&a), 0);
	ck_assert_int_eq(cidr_parse("192.0.2.9/24", &a, why, sizeof(why)), 0);
	snprintf(a.link, sizeof(a.link), "lan1");
	ck_assert_int_eq(net->addr_del(&a), -1);
	ck_assert_int_eq(errno, EADDRNOTAVAIL);
}
END_TEST

START_TEST(diff_bond_made_and_deleted)
{
	struct netconf c NETCONF_AUTO = { 0 };

	empty(&c);
	set(&c, "bond bond0", "mode", "802.3ad");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "bond bond0", "address", "192.0.2.2/24");
	set(&c, "bond bond0", "mtu", "9000");
	set(&c, "route", "gateway", "192.0.2.1");
	/* the ports' state for the undo, make (with the MTU), address, route */
	ck_assert_int_eq(roundtrip(&c), 5);
	/* And the other way: a running bond with its address and route goes. */
	ck_assert_int_eq(netconf_apply(&c, (char[160]){ 0 }, 160), 5);
	empty(&c);
	ck_assert_int_eq(roundtrip(&c), 3);	/* route-del, addr-del, link-del */
}
END_TEST

START_TEST(diff_bond_changed_is_made_again)
{
	struct netconf c NETCONF_AUTO = { 0 };

	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],\"mode\":\"802.3ad\"}", 0);
	call0("vlan.create", "{\"link\":\"bond0\",\"id\":10}", 0);
	call0("addr.add", "{\"link\":\"bond0.10\",\"address\":\"192.0.2.2/24\"}", 0);
	empty(&c);
	set(&c, "bond bond0", "mode", "active-backup");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "vlan bond0.10", "link", "bond0");
	set(&c, "vlan bond0.10", "id", "10");
	set(&c, "vlan bond0.10", "address", "192.0.2.2/24");
	/* addr-del, vlan-del, bond-del, bond-make, vlan-make (up), addr-add */
	ck_assert_int_eq(roundtrip(&c), 6);
	/* Options alone differ: made again too. */
	empty(&c);
	set(&c, "bond bond0", "mode", "802.3ad");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "bond bond0", "lacp_rate", "slow");
	ck_assert_int_gt(roundtrip(&c), 1);
}
END_TEST

static char	*slurp(const char *);

/* ad_select and primary: checked against the mode and ports, made, written, compared. */
START_TEST(bond_ad_select_and_primary)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char why[160];

	empty(&c);
	set(&c, "bond bond0", "mode", "802.3ad");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "bond bond0", "primary", "lan1");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "primary applies to"));
	empty(&c);
	set(&c, "bond bond0", "mode", "active-backup");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "bond bond0", "ad_select", "count");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	empty(&c);
	set(&c, "bond bond0", "mode", "active-backup");
	set(&c, "bond bond0", "ports", "lan1");
	set(&c, "bond bond0", "primary", "lan2");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "not one of its ports"));
	empty(&c);
	set(&c, "bond bond0", "mode", "active-backup");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "bond bond0", "primary", "lan2");
	ck_assert_int_eq(roundtrip(&c), 3);	/* the ports' state for the undo, make */
	ck_assert_int_eq(netconf_apply(&c, why, sizeof(why)), 3);
	/* The running state says primary, and netd.ini will too. */
	call0("link.set", "{\"link\":\"bond0\",\"mtu\":1500}", 0);
	ck_assert_ptr_nonnull(strstr(slurp(ini), "primary = lan2"));
	/* Another primary: the bond is made again. */
	set(&c, "bond bond0", "primary", "lan1");
	ck_assert_int_eq(distance(&c), 2);	/* link-del, bond-make */
	empty(&c);
	set(&c, "bond bond0", "mode", "802.3ad");
	set(&c, "bond bond0", "ports", "lan1,lan2");
	set(&c, "bond bond0", "ad_select", "bandwidth");
	ck_assert_int_gt(roundtrip(&c), 1);
	ck_assert_int_gt(netconf_apply(&c, why, sizeof(why)), 1);
	call0("link.set", "{\"link\":\"bond0\",\"mtu\":1500}", 0);
	ck_assert_ptr_nonnull(strstr(slurp(ini), "ad_select = bandwidth"));
}
END_TEST

START_TEST(diff_vlan_made_and_moved)
{
	struct netconf c NETCONF_AUTO = { 0 };

	empty(&c);
	set(&c, "vlan lan1.5", "link", "lan1");
	set(&c, "vlan lan1.5", "id", "5");
	ck_assert_int_eq(roundtrip(&c), 1);	/* made up */
	ck_assert_int_eq(netconf_apply(&c, (char[160]){ 0 }, 160), 1);
	empty(&c);
	set(&c, "vlan lan1.5", "link", "lan2");
	set(&c, "vlan lan1.5", "id", "5");
	ck_assert_int_eq(roundtrip(&c), 2);	/* del, make */
}
END_TEST

START_TEST(diff_route_and_dns)
{
	struct netconf c NETCONF_AUTO = { 0 };
	struct netconf have NETCONF_AUTO = { 0 };

	call0("link.set", "{\"link\":\"lan1\",\"up\":true}", 0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.2/24\"}", 0);
	ck_assert_int_eq(netconf_running(&have), 0);
	empty(&c);
	set(&c, "port lan1", "address", "192.0.2.2/24");
	set(&c, "route", "gateway", "192.0.2.1");
	set(&c, "dns", "servers", "192.0.2.53, 192.0.2.54");
	ck_assert_int_eq(roundtrip(&c), 2);
	call0("route.set_default", "{\"gateway\":\"192.0.2.1\"}", 0);
	set(&c, "route", "gateway", "192.0.2.254");
	ck_assert_int_eq(roundtrip(&c), 3);	/* route-del, route-set, dns-set */
	/* A rollback's target (the state before the route) says "no route": the route goes. */
	ck_assert_int_eq(roundtrip(&have), 1);
}
END_TEST

/* The kernel refusing any step: what was done before it is undone. */
START_TEST(failure_mid_apply_undoes_everything)
{
	struct netconf c NETCONF_AUTO = { 0 };
	struct netconf before NETCONF_AUTO = { 0 };
	char why[300];
	int n, failures = 0;

	empty(&c);
	set(&c, "port lan1", "mtu", "9000");
	set(&c, "bond bond0", "mode", "802.3ad");
	set(&c, "bond bond0", "ports", "lan2,v0");
	set(&c, "bond bond0", "address", "192.0.2.2/24");
	set(&c, "vlan bond0.7", "link", "bond0");
	set(&c, "vlan bond0.7", "id", "7");
	set(&c, "route", "gateway", "192.0.2.1");
	set(&c, "dns", "servers", "192.0.2.99");
	ck_assert_int_eq(netconf_check(&c, why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_running(&before), 0);
	for (int k = 0; k < 40; k++) {
		sim_fail_after(k);
		n = netconf_apply(&c, why, sizeof(why));
		sim_fail_after(-1);
		if (n >= 0) {
			ck_assert_int_eq(distance(&c), 0);
			break;
		}
		failures++;
		ck_assert_ptr_nonnull(strstr(why, "undone"));
		ck_assert_msg(distance(&before) == 0, "failure after %d operations left changes", k);
	}
	ck_assert_int_gt(failures, 8);
}
END_TEST

/* The file after an API change: the daemon's own section kept, the change in. */
static char *
slurp(const char *p)
{
	FILE *f = fopen(p, "r");
	static char buf[8192];
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(api_changes_written_back)
{
	struct netconf c NETCONF_AUTO = { 0 };
	int found;

	call0("bond.create", "{\"name\":\"bond0\",\"ports\":[\"lan1\",\"lan2\"],\"mode\":\"802.3ad\","
	    "\"lacp_rate\":\"slow\"}", 0);
	call0("addr.add", "{\"link\":\"bond0\",\"address\":\"192.0.2.2/24\"}", 0);
	call0("route.set_default", "{\"gateway\":\"192.0.2.1\"}", 0);
	call0("dns.set", "{\"servers\":[\"192.0.2.53\"]}", 0);
	call0("link.set", "{\"link\":\"v0\",\"mtu\":1400}", 0);
	call0("addr.add", "{\"link\":\"v0\",\"address\":\"198.51.100.1/24\"}", 0);
	call0("addr.del", "{\"link\":\"v0\",\"address\":\"198.51.100.1/24\",\"force\":true}", 0);
	call0("vlan.create", "{\"link\":\"bond0\",\"id\":20}", 0);
	ck_assert_ptr_nonnull(strstr(slurp(ini), "; the daemon's own\n[netd]\nboard = /etc/board.ini\n"));
	ck_assert_ptr_nonnull(strstr(slurp(ini), "[bond bond0]\nmode = 802.3ad\nports = lan1, lan2\n"));
	ck_assert_ptr_null(strstr(slurp(ini), "198.51.100.1"));
	ck_assert_int_eq(netconf_load(ini, &c, &found), 0);
	/* What the file says is what runs: a reboot comes back to it. */
	ck_assert_int_eq(distance(&c), 0);
	/* A reboot: links made by hand are gone, the file brings them back. */
	sim_reset();
	bond_reset();
	ck_assert_int_eq(sim_add_port("lan1", mac1, 1000), 0);
	ck_assert_int_eq(sim_add_port("lan2", mac2, 1000), 0);
	ck_assert_int_eq(sim_add_veth("v0", "v1"), 0);
	ck_assert_int_gt(distance(&c), 0);
	netconf_start();
	ck_assert_int_eq(distance(&c), 0);
	call0("bond.delete", "{\"name\":\"bond0\",\"force\":true}", 0);
	ck_assert_ptr_null(strstr(slurp(ini), "bond0"));
	ck_assert_ptr_nonnull(strstr(slurp(ini), "[netd]"));
}
END_TEST

static const char *cfg_bond =
	"{\"config\":{\"bond bond0\":{\"mode\":\"802.3ad\",\"ports\":[\"lan1\",\"lan2\"],"
	"\"address\":\"192.0.2.2/24\"},\"route\":{\"gateway\":\"192.0.2.1\"}},\"confirm_s\":1}";

START_TEST(apply_unconfirmed_rolls_back)
{
	struct netconf before NETCONF_AUTO = { 0 };
	char *file;

	ck_assert_int_eq(netconf_running(&before), 0);
	file = strdup(slurp(ini));
	call0("net.apply", cfg_bond, 0);
	ck_assert_int_gt(distance(&before), 0);
	/* The file keeps the old network until confirmed: a reboot now comes back to it. */
	ck_assert_str_eq(slurp(ini), file);
	call0("net.apply", cfg_bond, NAS_ERR_BUSY);
	/* Nothing else runs on the loop: it ends when the timer has fired. */
	ev_run(EV_DEFAULT, 0);
	ck_assert_int_eq(distance(&before), 0);
	ck_assert_str_eq(slurp(ini), file);
	call0("net.confirm", NULL, NAS_ERR_NOT_FOUND);
	free(file);
}
END_TEST

START_TEST(apply_confirmed_is_kept)
{
	struct netconf c NETCONF_AUTO = { 0 };
	int found;

	call0("net.apply", cfg_bond, 0);
	call0("net.confirm", NULL, 0);
	ev_run(EV_DEFAULT, EVRUN_NOWAIT);
	ck_assert_int_eq(netconf_load(ini, &c, &found), 0);
	ck_assert_int_eq(distance(&c), 0);
	ck_assert_ptr_nonnull(strstr(slurp(ini), "[bond bond0]"));
	ck_assert_ptr_nonnull(strstr(slurp(ini), "gateway = 192.0.2.1"));
}
END_TEST

START_TEST(apply_refusals_change_nothing)
{
	struct netconf before NETCONF_AUTO = { 0 };

	ck_assert_int_eq(netconf_running(&before), 0);
	call0("net.apply", "{\"config\":{\"bond bond0\":{\"mode\":\"802.3ad\"}}}", RPC_INVALID_PARAMS);
	call0("net.apply", "{\"config\":{\"port lan1\":{\"mtu\":\"huge\"}}}", RPC_INVALID_PARAMS);
	call0("net.apply", "{\"config\":{\"port lan1\":5}}", RPC_INVALID_PARAMS);
	call0("net.apply", "{\"config\":{\"port lan1\":{\"mtu\":{}}}}", RPC_INVALID_PARAMS);
	call0("net.apply", "{\"config\":{\"nonsense\":{}}}", RPC_INVALID_PARAMS);
	/* The kernel refuses (no such port): everything undone. */
	call0("net.apply", "{\"config\":{\"port lan1\":{\"mtu\":9000},\"bond bond0\":{\"mode\":"
	    "\"802.3ad\",\"ports\":\"lan1,nope\"}}}", NAS_ERR_FAILED);
	ck_assert_int_eq(distance(&before), 0);
}
END_TEST

/*
 * A name the file cannot hold as written is refused where netd makes the
 * link, and a link of the running state made outside netd with one is
 * not written: read back, "[port Up0]" would be up0, and "ports = a;b"
 * would be "a".
 */
START_TEST(names_the_file_cannot_hold)
{
	struct netconf c NETCONF_AUTO = { 0 };
	int found;

	call0("bond.create", "{\"name\":\"Bond0\",\"ports\":[\"lan1\"],\"mode\":\"balance-rr\"}",
	    RPC_INVALID_PARAMS);
	call0("bond.create", "{\"name\":\"b;0\",\"ports\":[\"lan1\"],\"mode\":\"balance-rr\"}",
	    RPC_INVALID_PARAMS);
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":5,\"name\":\"v#5\"}", RPC_INVALID_PARAMS);
	ck_assert_int_eq(sim_add_veth("Up0", "a;b"), 0);
	call0("bond.create", "{\"name\":\"bond1\",\"ports\":[\"a;b\"],\"mode\":\"balance-rr\"}",
	    RPC_INVALID_PARAMS);
	call0("link.set", "{\"link\":\"Up0\",\"mtu\":1400}", 0);
	call0("addr.add", "{\"link\":\"a;b\",\"address\":\"192.0.2.7/24\"}", 0);
	ck_assert_ptr_null(strstr(slurp(ini), "Up0"));
	ck_assert_ptr_null(strstr(slurp(ini), "up0"));
	ck_assert_ptr_null(strstr(slurp(ini), "a;b"));
	ck_assert_ptr_nonnull(strstr(slurp(ini), "[port lan1]"));
	ck_assert_int_eq(netconf_load(ini, &c, &found), 0);
	for (int i = 0; i < c.nlinks; i++)
		ck_assert(strcmp(c.link[i].name, "up0") && strcmp(c.link[i].name, "a"));
}
END_TEST

/*
 * A bond or VLAN may not take the name of a board port that is missing
 * now (its driver not loaded yet): the port would find its name taken
 * and come up under another, outside the configuration.
 */
START_TEST(board_port_names_are_kept_for_the_ports)
{
	struct board b = { .nports = 3 };

	for (int i = 0; i < 3; i++) {
		snprintf(b.port[i].name, sizeof(b.port[i].name), "lan%d", i + 1);
		snprintf(b.port[i].label, sizeof(b.port[i].label), "LAN %d", i + 1);
	}
	link_set_board(&b);
	call0("bond.create", "{\"name\":\"lan3\",\"ports\":[\"lan1\"],\"mode\":\"balance-rr\"}",
	    NAS_ERR_EXISTS);
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":5,\"name\":\"lan3\"}", NAS_ERR_EXISTS);
	call0("net.apply", "{\"config\":{\"vlan lan3\":{\"link\":\"lan1\",\"id\":5}}}",
	    RPC_INVALID_PARAMS);
	ck_assert_int_eq(net->link_get("lan3", &(struct net_link){ 0 }), 1);
}
END_TEST

/* Whether link has address a/prefix in the running state. */
static int
running_has(const char *link, const char *cidr)
{
	struct net_addr a, *as;
	char w[128];
	int n, found = 0;

	ck_assert_int_eq(cidr_parse(cidr, &a, w, sizeof(w)), 0);
	ck_assert_int_eq(net->addr_list(&as, &n), 0);
	for (int i = 0; i < n; i++)
		found |= !strcmp(as[i].link, link) && as[i].family == a.family &&
		    as[i].prefix == a.prefix && !memcmp(as[i].addr, a.addr, 16);
	free(as);
	return found;
}

/*
 * At start the state before is nothing: a step the kernel refuses (a bond
 * port not there yet, a gateway nothing reaches) must not take the
 * management port's address with it.
 */
START_TEST(start_keeps_what_the_kernel_takes)
{
	char *p = unit_write(dir, "boot.ini",
	    "[netd]\nboard = /etc/board.ini\n"
	    "[port lan1]\naddress = 192.0.2.2/24\n"
	    "[bond bond0]\nmode = active-backup\nports = lan2, usb0\naddress = 198.51.100.2/24\n"
	    "[route]\ngateway = 203.0.113.1\n");

	netconf_set_path(p);
	netconf_start();
	ck_assert(running_has("lan1", "192.0.2.2/24"));
	free(p);
}
END_TEST

/* Many links with many addresses: every step fits, the management port gets its address. */
START_TEST(start_applies_a_big_file_whole)
{
	FILE *f;
	char *p = unit_write(dir, "big.ini", "[port lan1]\naddress = 192.0.2.2/24\n");
	struct net_link *ls;
	int n, vlans = 0;

	ck_assert_ptr_nonnull(f = fopen(p, "a"));
	for (int v = 1; v <= 36; v++) {
		fprintf(f, "[vlan lan2.%d]\nlink = lan2\nid = %d\naddress = ", v, v);
		for (int a = 1; a <= 7; a++)
			fprintf(f, "%s10.%d.%d.1/24", a > 1 ? ", " : "", v, a);
		fprintf(f, "\n");
	}
	ck_assert_int_eq(fclose(f), 0);
	netconf_set_path(p);
	netconf_start();
	ck_assert(running_has("lan1", "192.0.2.2/24"));
	ck_assert(running_has("lan2.36", "10.36.7.1/24"));
	ck_assert_int_eq(net->link_list(&ls, &n), 0);
	for (int i = 0; i < n; i++)
		vlans += ls[i].vlan_id > 0;
	free(ls);
	ck_assert_int_eq(vlans, 36);
	free(p);
}
END_TEST

/* A rollback that cannot make one step still makes the others. */
START_TEST(rollback_keeps_what_the_kernel_takes)
{
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.2/24\"}", 0);
	call0("addr.add", "{\"link\":\"v0\",\"address\":\"198.51.100.1/24\"}", 0);
	call0("net.apply", "{\"config\":{\"port lan1\":{\"address\":[]},\"port v0\":"
	    "{\"address\":[]}},\"confirm_s\":1}", 0);
	ck_assert(!running_has("lan1", "192.0.2.2/24"));
	/* The rollback's second step (v0's address) is refused. */
	sim_fail_after(1);
	ev_run(EV_DEFAULT, 0);
	ck_assert(running_has("lan1", "192.0.2.2/24"));
	ck_assert(!running_has("v0", "198.51.100.1/24"));
}
END_TEST

/*
 * What the kernel makes from router advertisements (SLAAC and privacy
 * addresses with lifetimes, a default route through the router's
 * link-local address) is not configuration: not written to the file
 * (back from it after a reboot, the route has no link and the addresses
 * outlive the prefix), not counted against a link's addresses, and not
 * deleted by an apply that names the link.
 */
START_TEST(autoconf_is_not_configuration)
{
	unsigned char a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	unsigned char router[16] = { 0xfe, 0x80, [15] = 1 };
	struct net_route *rs;
	struct netconf c NETCONF_AUTO = { 0 };
	int n, ra = 0;

	for (int i = 1; i <= NC_ADDRS + 1; i++) {
		a[15] = (unsigned char)i;
		ck_assert_int_eq(sim_add_autoconf("lan1", a, 64, router), 0);
	}
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.2/24\"}", 0);
	ck_assert_ptr_null(strstr(slurp(ini), "2001:db8"));
	ck_assert_ptr_null(strstr(slurp(ini), "fe80::1"));
	ck_assert_ptr_nonnull(strstr(slurp(ini), "192.0.2.2/24"));
	ck_assert_int_eq(netconf_running(&c), 0);
	ck_assert_int_eq(c.has_gw[1], 0);
	ck_assert_str_eq(c.link[0].name, "lan1");
	ck_assert_int_eq(c.link[0].naddr, 1);
	call0("net.apply", "{\"config\":{\"port lan1\":{\"address\":\"192.0.2.9/24\"}},"
	    "\"force\":true}", 0);
	ck_assert(running_has("lan1", "192.0.2.9/24"));
	ck_assert(running_has("lan1", "2001:db8::1/64"));
	ck_assert_int_eq(net->route_list(&rs, &n), 0);
	for (int i = 0; i < n; i++)
		ra |= rs[i].family == AF_INET6 && rs[i].dst_len == 0 && !strcmp(rs[i].proto, "ra");
	free(rs);
	ck_assert(ra);
}
END_TEST

/* More than a netconf holds is refused, never cut short (a rollback would delete the rest). */
START_TEST(running_state_too_big_is_refused)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char p[96];

	struct net_addr a;

	for (int i = 1; i <= NC_ADDRS + 1; i++) {
		snprintf(p, sizeof(p), "{\"link\":\"lan1\",\"address\":\"192.0.%d.1/24\"}", i);
		/* The API stops where the file does: one more would stop every write-back. */
		call0("addr.add", p, i > NC_ADDRS ? NAS_ERR_LIMIT : 0);
	}
	ck_assert_ptr_nonnull(strstr(slurp(ini), "192.0.8.1"));
	ck_assert_int_eq(netconf_running(&c), 0);
	/* One more made outside netd. */
	ck_assert_int_eq(cidr_parse("192.0.9.1/24", &a, p, sizeof(p)), 0);
	snprintf(a.link, sizeof(a.link), "lan1");
	ck_assert_int_eq(net->addr_add(&a), 0);
	ck_assert_int_eq(netconf_running(&c), -1);
	ck_assert_int_eq(errno, E2BIG);
	call0("net.apply", cfg_bond, NAS_ERR_FAILED);
	ck_assert_ptr_null(strstr(slurp(ini), "192.0.9.1"));
}
END_TEST

/*
 * Issue 11: a NAS with many VLANs or containers' veths has more links
 * than the 64 a netconf once held; the running state then could not be
 * read, so net.apply and every write-back failed. 60 veth pairs (120
 * links): read whole, applied, rolled back, written back.
 */
START_TEST(many_links_are_read_and_applied)
{
	struct netconf c NETCONF_AUTO = { 0 };
	struct net_link l;
	char a[NET_NAME_MAX], b[NET_NAME_MAX];

	for (int i = 0; i < 60; i++) {
		snprintf(a, sizeof(a), "ve%da", i);
		snprintf(b, sizeof(b), "ve%db", i);
		ck_assert_int_eq(sim_add_veth(a, b), 0);
	}
	ck_assert_int_eq(netconf_running(&c), 0);
	ck_assert_int_eq(c.nlinks, 2 + 2 + 120);	/* lan1, lan2, v0, v1 and the pairs */
	ck_assert_str_eq(c.link[c.nlinks - 1].name, "ve59b");
	call0("addr.add", "{\"link\":\"ve59b\",\"address\":\"192.0.2.7/24\"}", 0);
	ck_assert_ptr_nonnull(strstr(slurp(ini), "[port ve59b]"));
	call0("net.apply", "{\"config\":{\"port ve59b\":{\"mtu\":1400},\"vlan ve59b.5\":"
	    "{\"link\":\"ve59b\",\"id\":5}},\"confirm_s\":1}", 0);
	ck_assert(running_has("ve59b", "192.0.2.7/24") == 0);
	ck_assert_int_eq(net->link_get("ve59b.5", &l), 0);
	/* Nothing else runs on the loop: it ends when the rollback has run. */
	ev_run(EV_DEFAULT, 0);
	ck_assert(running_has("ve59b", "192.0.2.7/24"));
	ck_assert_int_eq(net->link_get("ve59b.5", &l), 1);
	ck_assert_int_eq(netconf_running(&c), 0);
	ck_assert_int_eq(c.nlinks, 124);
}
END_TEST

/* A file or a client cannot make netd allocate without end: a clear error past NC_LINKS. */
START_TEST(links_past_the_bound_are_refused)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char sec[32], why[160];

	for (int i = 0; i < NC_LINKS; i++) {
		snprintf(sec, sizeof(sec), "port p%d", i);
		set(&c, sec, "mtu", "1500");
	}
	ck_assert_int_eq(netconf_set(&c, "port one.more", "mtu", "1500", why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "more than 4096 links"));
	ck_assert_int_eq(c.nlinks, NC_LINKS);
}
END_TEST

/*
 * Issue 11: a change that may cut the caller off (the link it comes
 * through re-addressed, taken down, re-MTU'd, made a bond's port, the
 * default route deleted) is refused unless it comes with a way back
 * (confirm_s) or force; a refusal changes nothing, file included.
 */
START_TEST(apply_that_cuts_needs_a_window_or_force)
{
	static const char *const cuts[] = {
		"{\"config\":{\"port lan1\":{\"address\":\"192.0.2.9/24\"}}}",
		"{\"config\":{\"port lan1\":{\"address\":\"192.0.2.2/24\",\"mtu\":9000}}}",
		"{\"config\":{\"port lan1\":{\"address\":\"192.0.2.2/24\",\"up\":false}}}",
		"{\"config\":{\"bond bond0\":{\"mode\":\"active-backup\",\"ports\":[\"lan1\","
		    "\"lan2\"],\"address\":\"192.0.2.2/24\"},\"port lan1\":{}}}",
		"{\"config\":{\"route\":{\"gateway\":\"192.0.2.254\"}}}",
	};
	struct netconf before NETCONF_AUTO = { 0 };
	char *file;

	call0("link.set", "{\"link\":\"lan1\",\"up\":true}", 0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.0.2.2/24\"}", 0);
	call0("route.set_default", "{\"gateway\":\"192.0.2.1\"}", 0);
	ck_assert_int_eq(netconf_running(&before), 0);
	file = strdup(slurp(ini));
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		call0("net.apply", cuts[i], NAS_ERR_REFUSED);
		ck_assert_int_eq(distance(&before), 0);
		ck_assert_str_eq(slurp(ini), file);
	}
	/* What cannot cut goes through: another link, lan1 as it is, a link-local address. */
	call0("net.apply", "{\"config\":{\"port lan2\":{\"address\":\"198.51.100.2/24\"},"
	    "\"port lan1\":{\"address\":\"192.0.2.2/24\",\"mtu\":1500}}}", 0);
	ck_assert(running_has("lan2", "198.51.100.2/24"));
	/* With a way back, or with force. */
	call0("net.apply", cuts[0] , NAS_ERR_REFUSED);
	call0("net.apply", "{\"config\":{\"port lan1\":{\"address\":\"192.0.2.9/24\"}},"
	    "\"confirm_s\":30}", 0);
	call0("net.confirm", NULL, 0);
	ck_assert(running_has("lan1", "192.0.2.9/24"));
	call0("net.apply", "{\"config\":{\"port lan1\":{\"address\":\"192.0.2.2/24\"}},"
	    "\"force\":true}", 0);
	ck_assert(running_has("lan1", "192.0.2.2/24") && !running_has("lan1", "192.0.2.9/24"));
	free(file);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("netd-config");
	TCase *t = tcase_create("config");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, parse_every_key);
	tcase_add_test(t, parse_refuses_bad_values);
	tcase_add_test(t, check_refuses_what_one_key_cannot_see);
	tcase_add_test(t, load_keeps_the_rest);
	tcase_add_test(t, diff_link_mtu_and_up);
	tcase_add_test(t, diff_addresses_come_and_go);
	tcase_add_test(t, diff_secondaries_go_first);
	tcase_add_test(t, diff_bond_made_and_deleted);
	tcase_add_test(t, diff_bond_changed_is_made_again);
	tcase_add_test(t, diff_vlan_made_and_moved);
	tcase_add_test(t, bond_ad_select_and_primary);
	tcase_add_test(t, diff_route_and_dns);
	tcase_add_test(t, failure_mid_apply_undoes_everything);
	tcase_add_test(t, api_changes_written_back);
	tcase_add_test(t, apply_unconfirmed_rolls_back);
	tcase_add_test(t, apply_confirmed_is_kept);
	tcase_add_test(t, apply_refusals_change_nothing);
	tcase_add_test(t, running_state_too_big_is_refused);
	tcase_add_test(t, many_links_are_read_and_applied);
	tcase_add_test(t, links_past_the_bound_are_refused);
	tcase_add_test(t, apply_that_cuts_needs_a_window_or_force);
	tcase_add_test(t, start_keeps_what_the_kernel_takes);
	tcase_add_test(t, start_applies_a_big_file_whole);
	tcase_add_test(t, rollback_keeps_what_the_kernel_takes);
	tcase_add_test(t, autoconf_is_not_configuration);
	tcase_add_test(t, names_the_file_cannot_hold);
	tcase_add_test(t, board_port_names_are_kept_for_the_ports);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
