/*
 * netd's DHCPv4 client on the simulated seam: a lease reported by the
 * script is applied through the seam and left out of the running state
 * (so never written back as static); a rogue server's leases (addresses
 * that are not unicast hosts, prefixes 0, 32 or 1, a subnet over the
 * management link's, a record with its keys twice) change nothing; a
 * router outside the subnet or an existing default route is left alone;
 * name servers set by hand stay; the fallback comes on leasefail and
 * goes when a lease binds; the diff engine starts and stops clients and
 * undoes it; and the script's pipe frames records, dropping one that is
 * too long whole (a real child: /bin/sh standing in for udhcpc), and a
 * client whose link is deleted is stopped, and a lease whose client hangs
 * is dropped by netd when it runs out.
 */
#include <check.h>
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "netd/dhcp.h"
#include "netd/netconf.h"
#include "netd/netd.h"
#include "netd/system-sim.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static const unsigned char mac1[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 1 };
static const unsigned char mac2[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 2 };
static char *dir, *resolv;

#define LEASE(ip, mask, router) "event=bound\nip=" ip "\nsubnet=" mask "\nrouter=" router \
	"\ndns=198.51.100.53 198.51.100.54\nlease=600\nserverid=198.51.100.1\n"

static void
setup(void)
{
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	net = &net_sim;
	sim_reset();
	dhcp_reset();
	dhcp_set_client("", "");
	ck_assert_int_eq(sim_add_port("lan1", mac1, 1000), 0);
	ck_assert_int_eq(sim_add_port("lan2", mac2, 1000), 0);
	dir = unit_tmpdir();
	resolv = unit_write(dir, "resolv.conf", "");
	addr_set_resolv(resolv);
	netconf_set_path("");
	srv = rpc_server_new("netd", "test");
	rpc_server_add_methods(srv, link_methods);
	rpc_server_add_methods(srv, addr_methods);
	rpc_server_add_methods(srv, dhcp_methods);
	rpc_server_add_methods(srv, bond_methods);
	/* lan1 up (dhcp_start would bring it up); lan2 the management link: 192.0.2.2/24. */
	json_object_put(unit_call_expect(srv, &root, "link.set", "{\"link\":\"lan1\",\"up\":true}", 0));
	json_object_put(unit_call_expect(srv, &root, "link.set", "{\"link\":\"lan2\",\"up\":true}", 0));
	json_object_put(unit_call_expect(srv, &root, "addr.add",
	    "{\"link\":\"lan2\",\"address\":\"192.0.2.2/24\"}", 0));
}

static void
teardown(void)
{
	dhcp_reset();
	dhcp_set_lease_floor(122., 10.);
	rpc_server_free(srv);
	unit_rmtree(dir);
	free(dir);
	free(resolv);
}

/* The addresses and routes of the simulated kernel, as text. */
static const char *
kernel(void)
{
	static char buf[2048];
	struct net_addr *as;
	struct net_route *rs;
	size_t off = 0;
	char ip[64];
	int n;

	buf[0] = '\0';
	ck_assert_int_eq(net->addr_list(&as, &n), 0);
	for (int i = 0; i < n; i++) {
		ip_format(as[i].family, as[i].addr, ip, sizeof(ip));
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s %s/%d; ", as[i].link, ip,
		    as[i].prefix);
	}
	free(as);
	ck_assert_int_eq(net->route_list(&rs, &n), 0);
	for (int i = 0; i < n; i++) {
		ip_format(rs[i].family, rs[i].gw, ip, sizeof(ip));
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "route %d via %s %s; ",
		    rs[i].dst_len, rs[i].has_gw ? ip : "-", rs[i].link);
	}
	free(rs);
	return buf;
}

static char *
slurp(const char *p)
{
	static char buf[4096];
	FILE *f = fopen(p, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(lease_applied_and_kept_out_of_the_config)
{
	struct netconf c NETCONF_AUTO = { 0 };
	char k[2048];

	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")), 0);
	snprintf(k, sizeof(k), "%s", kernel());
	ck_assert_msg(strstr(k, "lan1 10.1.0.5/24") && strstr(k, "route 0 via 10.1.0.1 lan1"),
	    "%s", k);
	ck_assert_ptr_nonnull(strstr(slurp(resolv), "nameserver 198.51.100.53"));
	/* The running state: DHCP on lan1, but not its address, route or name servers. */
	ck_assert_int_eq(netconf_running(&c), 0);
	for (int i = 0; i < c.nlinks; i++)
		if (strcmp(c.link[i].name, "lan1") == 0) {
			ck_assert_int_eq(c.link[i].dhcp, 1);
			ck_assert_int_eq(c.link[i].naddr, 0);
		}
	ck_assert_int_eq(c.has_gw[0], 0);
	ck_assert_int_eq(c.has_dns, 0);
	/* A renewal with another address: the old one goes. */
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.6", "255.255.255.0", "10.1.0.1")), 0);
	snprintf(k, sizeof(k), "%s", kernel());
	ck_assert_msg(strstr(k, "10.1.0.6/24") && !strstr(k, "10.1.0.5"), "%s", k);
	/* A lost lease (deconfig): address, route and name servers go. */
	ck_assert_int_eq(dhcp_report("lan1", "event=deconfig\n"), 0);
	snprintf(k, sizeof(k), "%s", kernel());
	ck_assert_msg(!strstr(k, "10.1.0") && !strstr(k, "route 0"), "%s", k);
	ck_assert_ptr_null(strstr(slurp(resolv), "nameserver"));
}
END_TEST

START_TEST(rogue_leases_change_nothing)
{
	static const char *const rogue[] = {
		LEASE("0.0.0.0", "255.255.255.0", "10.1.0.1"),
		LEASE("255.255.255.255", "255.255.255.0", "10.1.0.1"),
		LEASE("127.0.0.5", "255.0.0.0", "127.0.0.1"),
		LEASE("224.0.0.5", "255.255.255.0", "10.1.0.1"),
		LEASE("240.0.0.5", "255.255.255.0", "10.1.0.1"),
		LEASE("169.254.3.4", "255.255.0.0", "169.254.0.1"),
		LEASE("10.1.0.5", "0.0.0.0", "10.1.0.1"),		/* prefix 0 */
		LEASE("10.1.0.5", "128.0.0.0", "10.1.0.1"),		/* prefix 1 */
		LEASE("10.1.0.5", "255.255.255.255", "10.1.0.1"),	/* prefix 32 */
		LEASE("10.1.0.5", "255.0.255.0", "10.1.0.1"),		/* not contiguous */
		LEASE("10.1.0.0", "255.255.255.0", "10.1.0.1"),		/* network address */
		LEASE("10.1.0.255", "255.255.255.0", "10.1.0.1"),	/* broadcast address */
		LEASE("192.0.2.77", "255.255.255.128", "192.0.2.1"),	/* inside lan2's subnet */
		LEASE("192.0.9.5", "255.255.0.0", "192.0.9.1"),		/* over lan2's subnet */
		LEASE("192.0.2.2", "255.255.255.0", "192.0.2.1"),	/* lan2's own address */
		LEASE("10.1.0.5; reboot", "255.255.255.0", "10.1.0.1"),
		LEASE("", "255.255.255.0", "10.1.0.1"),
		"event=bound\nsubnet=255.255.255.0\n",
		"ip=10.1.0.5\nsubnet=255.255.255.0\n",	/* no event */
	};
	char before[2048];

	snprintf(before, sizeof(before), "%s", kernel());
	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	for (size_t i = 0; i < sizeof(rogue) / sizeof(rogue[0]); i++) {
		ck_assert_msg(dhcp_report("lan1", rogue[i]) == -1, "taken: %s", rogue[i]);
		ck_assert_str_eq(kernel(), before);
	}
	ck_assert_ptr_null(strstr(slurp(resolv), "nameserver"));
	/* A key given twice: the first counts (the script writes each once, first). */
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")
	    "ip=192.0.2.9\nsubnet=255.255.255.252\n"), 0);
	ck_assert_ptr_nonnull(strstr(kernel(), "lan1 10.1.0.5/24"));
	ck_assert_ptr_null(strstr(kernel(), "192.0.2.9"));
}
END_TEST

START_TEST(router_and_default_route_guarded)
{
	char k[2048];

	/* A router outside the subnet, or the broadcast address: bound, no route. */
	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.9.0.1")), 0);
	ck_assert_ptr_null(strstr(kernel(), "route 0"));
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.255")), 0);
	ck_assert_ptr_null(strstr(kernel(), "route 0"));
	ck_assert_int_eq(dhcp_stop("lan1"), 0);
	/* The management link's default route stays: the lease's router is not installed. */
	json_object_put(unit_call_expect(srv, &root, "route.set_default",
	    "{\"gateway\":\"192.0.2.1\"}", 0));
	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")), 0);
	snprintf(k, sizeof(k), "%s", kernel());
	ck_assert_msg(strstr(k, "route 0 via 192.0.2.1 lan2") && !strstr(k, "via 10.1.0.1"), "%s", k);
	/* ... and stays when the lease goes. */
	ck_assert_int_eq(dhcp_stop("lan1"), 0);
	ck_assert_ptr_nonnull(strstr(kernel(), "route 0 via 192.0.2.1 lan2"));
}
END_TEST

START_TEST(name_servers_set_by_hand_stay)
{
	json_object_put(unit_call_expect(srv, &root, "dns.set",
	    "{\"servers\":[\"192.0.2.53\"]}", 0));
	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")), 0);
	ck_assert_ptr_null(strstr(slurp(resolv), "198.51.100"));
	ck_assert_int_eq(dhcp_stop("lan1"), 0);
	ck_assert_ptr_nonnull(strstr(slurp(resolv), "192.0.2.53"));
}
END_TEST

/*
 * Two links with leases: the first lease's name servers stay while it is
 * bound (a server on the second port does not take name resolution
 * over, at its bind nor at its renewals); when it goes, the second's
 * take their place, and go with it.
 */
START_TEST(name_servers_of_a_second_link_wait)
{
	static const unsigned char mac3[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 3 };
	const char *rogue = "event=bound\nip=10.3.0.5\nsubnet=255.255.255.0\nrouter=10.3.0.1\n"
	    "dns=203.0.113.66\nlease=600\nserverid=10.3.0.1\n";

	ck_assert_int_eq(sim_add_port("lan3", mac3, 1000), 0);
	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	ck_assert_int_eq(dhcp_start("lan3", NULL), 0);
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")), 0);
	ck_assert_int_eq(dhcp_report("lan3", rogue), 0);
	ck_assert_int_eq(dhcp_report("lan3", rogue), 0);	/* a renewal */
	ck_assert_ptr_nonnull(strstr(slurp(resolv), "nameserver 198.51.100.53"));
	ck_assert_ptr_null(strstr(slurp(resolv), "203.0.113.66"));
	ck_assert_int_eq(dhcp_report("lan1", "event=deconfig\n"), 0);
	ck_assert_ptr_nonnull(strstr(slurp(resolv), "nameserver 203.0.113.66"));
	ck_assert_ptr_null(strstr(slurp(resolv), "198.51.100.53"));
	ck_assert_int_eq(dhcp_report("lan3", "event=deconfig\n"), 0);
	ck_assert_ptr_null(strstr(slurp(resolv), "nameserver"));
}
END_TEST

START_TEST(fallback_until_a_lease)
{
	struct net_addr fb;
	struct netconf c NETCONF_AUTO = { 0 };
	char why[160];

	ck_assert_int_eq(dhcp_fallback_parse("192.168.250.2/24", &fb, why, sizeof(why)), 0);
	ck_assert_int_eq(dhcp_fallback_parse("192.168.250.0/24", &fb, why, sizeof(why)), -1);
	ck_assert_int_eq(dhcp_fallback_parse("192.168.250.2/32", &fb, why, sizeof(why)), -1);
	ck_assert_int_eq(dhcp_fallback_parse("127.0.0.2/8", &fb, why, sizeof(why)), -1);
	ck_assert_int_eq(dhcp_fallback_parse("fd00::2/64", &fb, why, sizeof(why)), -1);
	ck_assert_int_eq(dhcp_fallback_parse("192.168.250.2/24", &fb, why, sizeof(why)), 0);
	ck_assert_int_eq(dhcp_start("lan1", &fb), 0);
	ck_assert_int_eq(dhcp_report("lan1", "event=deconfig\n"), 0);
	ck_assert_ptr_null(strstr(kernel(), "192.168.250.2"));
	ck_assert_int_eq(dhcp_report("lan1", "event=leasefail\n"), 0);
	ck_assert_ptr_nonnull(strstr(kernel(), "lan1 192.168.250.2/24"));
	/* Kept in the running state as the fallback, not as an address. */
	ck_assert_int_eq(netconf_running(&c), 0);
	for (int i = 0; i < c.nlinks; i++)
		if (strcmp(c.link[i].name, "lan1") == 0) {
			ck_assert_int_eq(c.link[i].naddr, 0);
			ck_assert_int_eq(c.link[i].has_fallback, 1);
		}
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")), 0);
	ck_assert_ptr_null(strstr(kernel(), "192.168.250.2"));
	ck_assert_ptr_nonnull(strstr(kernel(), "lan1 10.1.0.5/24"));
}
END_TEST

START_TEST(api_refusals)
{
	json_object_put(unit_call_expect(srv, &root, "dhcp.start", "{\"link\":\"nosuch\"}",
	    NAS_ERR_NOT_FOUND));
	json_object_put(unit_call_expect(srv, &root, "dhcp.start", "{\"link\":\"lo\"}",
	    RPC_INVALID_PARAMS));
	json_object_put(unit_call_expect(srv, &root, "dhcp.start",
	    "{\"link\":\"lan1\",\"fallback\":\"0.0.0.0/8\"}", RPC_INVALID_PARAMS));
	json_object_put(unit_call_expect(srv, &root, "dhcp.stop", "{\"link\":\"lan1\"}",
	    NAS_ERR_NOT_FOUND));
	json_object_put(unit_call_expect(srv, &root, "dhcp.start", "{\"link\":\"lan1\"}", 0));
	json_object_put(unit_call_expect(srv, &root, "dhcp.start", "{\"link\":\"lan1\"}",
	    NAS_ERR_BUSY));
	ck_assert_int_eq(dhcp_report("lan1", LEASE("10.1.0.5", "255.255.255.0", "10.1.0.1")), 0);
	/* A bound lease may be how the caller reaches us. */
	json_object_put(unit_call_expect(srv, &root, "dhcp.stop", "{\"link\":\"lan1\"}",
	    NAS_ERR_REFUSED));
	ck_assert_ptr_nonnull(strstr(kernel(), "10.1.0.5"));
	json_object_put(unit_call_expect(srv, &root, "dhcp.stop",
	    "{\"link\":\"lan1\",\"force\":true}", 0));
	ck_assert_ptr_null(strstr(kernel(), "10.1.0.5"));
}
END_TEST

START_TEST(diff_starts_and_stops_clients)
{
	static struct nc_step s[8];
	struct netconf want NETCONF_AUTO = { 0 };
	struct netconf have NETCONF_AUTO = { 0 };
	struct netconf back NETCONF_AUTO = { 0 };
	char why[160], what[128];
	int n, failed;

	netconf_free(&want);
	ck_assert_int_eq(netconf_set(&want, "port lan1", "dhcp", "yes", why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_set(&want, "port lan1", "dhcp_fallback", "192.168.250.2/24",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_check(&want, why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_running(&have), 0);
	ck_assert_int_eq(n = netconf_diff(&want, &have, s, 8), 1);
	nc_op_format(&s[0].op, what, sizeof(what));
	ck_assert_str_eq(what, "dhcp-start lan1");
	ck_assert_int_eq(netconf_run(s, n, &failed), 0);
	ck_assert_int_eq(netconf_running(&back), 0);
	ck_assert_int_eq(netconf_diff(&want, &back, s, 8), 0);
	/* Another fallback: stopped and started again. */
	ck_assert_int_eq(netconf_set(&want, "port lan1", "dhcp_fallback", "192.168.251.2/24",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_diff(&want, &back, s, 8), 2);
	/* Back to the state before: the client stops. */
	ck_assert_int_eq(n = netconf_diff(&have, &back, s, 8), 1);
	ck_assert_int_eq(netconf_run(s, n, &failed), 0);
	ck_assert_ptr_null(dhcp_describe("lan1"));
	/*
	 * A port that becomes a bond's loses its client first (the file
	 * could not hold both); bond.create refuses such a port outright.
	 */
	ck_assert_int_eq(dhcp_start("lan1", NULL), 0);
	json_object_put(unit_call_expect(srv, &root, "bond.create",
	    "{\"name\":\"bond0\",\"ports\":[\"lan1\"],\"mode\":\"802.3ad\"}", NAS_ERR_BUSY));
	ck_assert_int_eq(netconf_running(&back), 0);
	netconf_free(&want);
	ck_assert_int_eq(netconf_set(&want, "bond bond0", "mode", "802.3ad", why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_set(&want, "bond bond0", "ports", "lan1", why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_check(&want, why, sizeof(why)), 0);
	ck_assert_int_ge(n = netconf_diff(&want, &back, s, 8), 2);
	nc_op_format(&s[0].op, what, sizeof(what));
	ck_assert_str_eq(what, "dhcp-stop lan1");
	ck_assert_int_eq(netconf_run(s, n, &failed), 0);
	ck_assert_ptr_null(dhcp_describe("lan1"));
	ck_assert_int_eq(netconf_running(&back), 0);
	for (int i = 0; i < back.nlinks; i++)
		ck_assert_int_eq(back.link[i].dhcp, 0);
	/* dhcp_fallback without dhcp, and a bond port with DHCP, are refused. */
	netconf_free(&want);
	ck_assert_int_eq(netconf_set(&want, "port lan1", "dhcp_fallback", "192.168.250.2/24",
	    why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_check(&want, why, sizeof(why)), -1);
	netconf_free(&want);
	ck_assert_int_eq(netconf_set(&want, "port lan1", "dhcp", "yes", why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_set(&want, "bond bond0", "mode", "802.3ad", why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_set(&want, "bond bond0", "ports", "lan1", why, sizeof(why)), 0);
	ck_assert_int_eq(netconf_check(&want, why, sizeof(why)), -1);
}
END_TEST

static void
give_up(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

/* A shell script in place of udhcpc, started on link (the caller frees the path). */
static char *
fake_client(const char *link, const char *script)
{
	char *client = unit_write(dir, "fake-udhcpc", script);

	ck_assert_int_eq(chmod(client, 0755), 0);
	dhcp_set_client(client, "/nonexistent");
	ck_assert_int_eq(dhcp_start(link, NULL), 0);
	return client;
}

/* Runs the loop until cb (every 50 ms, with data) breaks it, or 20 s. */
static void
run_until(void (*cb)(struct ev_loop *, ev_timer *, int), void *data)
{
	ev_timer poll, limit;

	ev_timer_init(&poll, cb, 0.05, 0.05);
	poll.data = data;
	ev_timer_init(&limit, give_up, 20., 0.);
	ev_timer_start(nas_loop(), &poll);
	ev_timer_start(nas_loop(), &limit);
	ev_run(nas_loop(), 0);
	ev_timer_stop(nas_loop(), &poll);
	ev_timer_stop(nas_loop(), &limit);
}

static void
poll_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct json_object *d = dhcp_describe("lan1"), *st;

	(void)revents;
	(void)w;
	if (d && json_object_object_get_ex(d, "state", &st) &&
	    strcmp(json_object_get_string(st), "bound") == 0)
		ev_break(l, EVBREAK_ALL);
	json_object_put(d);
}

/*
 * A real child in place of udhcpc: a record too long for netd's buffer
 * (a server's bloated option) is dropped whole, with no part of it taken
 * for a record of its own; the record after it is applied.
 */
START_TEST(pipe_drops_an_overlong_record)
{
	char *client, script[1024];
	int n;

	n = snprintf(script, sizeof(script), "#!/bin/sh\n"
	    "{ printf 'event=bound\\nip=192.0.2.66\\nsubnet=255.255.255.252\\npad='\n"
	    "  i=0; while [ $i -lt 150 ]; do printf 'event=bound\\nip=10.6.6.6\\nsubnet=255.255.255.0\\ndns=10.6.6.53\\n'; i=$((i+1)); done\n"
	    "  printf '\\n\\nevent=bound\\nip=10.1.0.5\\nsubnet=255.255.255.0\\n\\n'; } >&9\n"
	    "exec sleep 30\n");
	ck_assert_int_lt(n, (int)sizeof(script));
	client = fake_client("lan1", script);
	run_until(poll_cb, NULL);
	ck_assert_ptr_nonnull(strstr(kernel(), "lan1 10.1.0.5/24"));
	ck_assert_ptr_null(strstr(kernel(), "10.6.6.6"));
	ck_assert_ptr_null(strstr(kernel(), "192.0.2.66"));
	/* The record after it has no name servers: had the tail been taken, its would be there. */
	ck_assert_ptr_null(strstr(slurp(resolv), "10.6.6.53"));
	dhcp_reset();
	free(client);
}
END_TEST

/*
 * A record with a NUL byte in it is dropped, and the records after it
 * are still taken: netd's framing once searched for the end of a record
 * as a C string, so one NUL hid every later report until 2 KiB piled up.
 */
START_TEST(pipe_takes_the_record_after_a_nul)
{
	char *client;

	client = fake_client("lan1", "#!/bin/sh\n"
	    "printf 'event=bound\\nip=10.6.6.6\\000\\nsubnet=255.255.255.0\\n\\n' >&9\n"
	    "printf 'event=bound\\nip=10.1.0.5\\nsubnet=255.255.255.0\\n\\n' >&9\n"
	    "exec sleep 30\n");
	run_until(poll_cb, NULL);
	ck_assert_ptr_nonnull(strstr(kernel(), "lan1 10.1.0.5/24"));
	ck_assert_ptr_null(strstr(kernel(), "10.6.6.6"));
	dhcp_reset();
	free(client);
}
END_TEST

static void
gone_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct json_object *d = dhcp_describe("v0");

	(void)revents;
	(void)w;
	if (d == NULL)
		ev_break(l, EVBREAK_ALL);
	json_object_put(d);
}

/* A client whose link was deleted behind it is stopped, not started again for ever. */
START_TEST(client_of_a_deleted_link_stops)
{
	char *client;

	ck_assert_int_eq(sim_add_veth("v0", "v1"), 0);
	client = unit_write(dir, "fake-udhcpc", "#!/bin/sh\nexit 0\n");
	ck_assert_int_eq(chmod(client, 0755), 0);
	dhcp_set_client(client, "/nonexistent");
	ck_assert_int_eq(dhcp_start("v0", NULL), 0);
	ck_assert_int_eq(net->link_del("v0"), 0);
	run_until(gone_cb, NULL);
	ck_assert_ptr_null(dhcp_describe("v0"));
	free(client);
}
END_TEST

/* Bound once, then the lease gone and the client reaped (killed). */
static void
expired_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct json_object *d = dhcp_describe("lan1"), *cl;
	int *seen = w->data;

	(void)revents;
	if (strstr(kernel(), "lan1 10.1.0.5/24"))
		*seen = 1;
	else if (*seen && d && json_object_object_get_ex(d, "client", &cl) &&
	    !json_object_get_boolean(cl))
		ev_break(l, EVBREAK_ALL);
	json_object_put(d);
}

/*
 * A udhcpc that hangs after a lease (no renewal, no deconfig at its
 * end): netd drops the address itself when the lease has run out and
 * kills the client, which is then started again.
 */
START_TEST(lease_of_a_hung_client_runs_out)
{
	char *client;
	struct json_object *d, *e;
	int seen = 0;

	dhcp_set_lease_floor(0., 0.2);
	client = fake_client("lan1", "#!/bin/sh\n"
	    "printf 'event=bound\\nip=10.1.0.5\\nsubnet=255.255.255.0\\nlease=1\\n\\n' >&9\n"
	    "exec sleep 30\n");
	run_until(expired_cb, &seen);
	ck_assert_int_eq(seen, 1);
	ck_assert_ptr_null(strstr(kernel(), "10.1.0.5"));
	ck_assert_ptr_nonnull(d = dhcp_describe("lan1"));
	ck_assert(json_object_object_get_ex(d, "error", &e));
	ck_assert_ptr_nonnull(strstr(json_object_get_string(e), "ran out"));
	json_object_put(d);
	dhcp_reset();
	free(client);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("netd-dhcp");
	TCase *t = tcase_create("dhcp");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, lease_applied_and_kept_out_of_the_config);
	tcase_add_test(t, rogue_leases_change_nothing);
	tcase_add_test(t, router_and_default_route_guarded);
	tcase_add_test(t, name_servers_set_by_hand_stay);
	tcase_add_test(t, name_servers_of_a_second_link_wait);
	tcase_add_test(t, fallback_until_a_lease);
	tcase_add_test(t, api_refusals);
	tcase_add_test(t, diff_starts_and_stops_clients);
	tcase_add_test(t, pipe_drops_an_overlong_record);
	tcase_add_test(t, client_of_a_deleted_link_stops);
	tcase_add_test(t, lease_of_a_hung_client_runs_out);
	tcase_add_test(t, pipe_takes_the_record_after_a_nul);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
