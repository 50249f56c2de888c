/*
 * netd's links, addresses, routes and DNS on the simulated seam, which
 * refuses what the kernel refuses: every refusal is checked to change
 * nothing, and link.state comes from the monitor descriptor alone.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netd/netd.h"
#include "netd/system-sim.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static char *dir;

static void
setup(void)
{
	struct board b = { .nports = 3 };
	unsigned char m1[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 1 }, m2[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 2 };

	for (int i = 0; i < 3; i++) {
		snprintf(b.port[i].name, sizeof(b.port[i].name), "lan%d", i + 1);
		snprintf(b.port[i].label, sizeof(b.port[i].label), "LAN %d", i + 1);
	}
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	net = &net_sim;
	sim_reset();
	ck_assert_int_eq(sim_add_port("lan2", m2, 1000), 0);
	ck_assert_int_eq(sim_add_port("lan1", m1, 1000), 0);
	ck_assert_int_eq(sim_add_veth("v0", "v1"), 0);
	link_set_board(&b);
	dir = unit_tmpdir();
	srv = rpc_server_new("netd", "test");
	rpc_server_add_methods(srv, link_methods);
	rpc_server_add_methods(srv, addr_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	unit_rmtree(dir);
	free(dir);
}

/* Calls and returns the answer; err: the error code expected (0: a result). */
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

/* The member path (a.b) of an answer's result as a string ("" if absent). */
static const char *
res_str(struct json_object *a, const char *k)
{
	struct json_object *r, *v;

	if (!json_object_object_get_ex(a, "result", &r) || !json_object_object_get_ex(r, k, &v))
		return "";
	return json_object_get_string(v);
}

static struct net_link
link_of(const char *name)
{
	struct net_link l;

	ck_assert_int_eq(net->link_get(name, &l), 0);
	return l;
}

START_TEST(list_board_ports_first)
{
	struct json_object *a = call("link.list", NULL, 0), *r, *ls, *e;

	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "links", &ls);
	/* lan1, lan2 in board order, then lan3 missing, then lo, v0, v1. */
	ck_assert_int_eq(json_object_array_length(ls), 6);
	e = json_object_array_get_idx(ls, 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "name")), "lan1");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "port")), "LAN 1");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "mac")), "52:54:00:4e:41:01");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(e, "speed_mbps")), 1000);
	e = json_object_array_get_idx(ls, 2);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "name")), "lan3");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "state")), "missing");
	e = json_object_array_get_idx(ls, 3);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "kind")), "loopback");
	json_object_put(a);
}
END_TEST

START_TEST(show_and_names)
{
	struct json_object *a = call("link.show", "{\"link\":\"v0\"}", 0);

	ck_assert_str_eq(res_str(a, "kind"), "veth");
	ck_assert_str_eq(res_str(a, "state"), "down");
	json_object_put(a);
	call0("link.show", "{\"link\":\"nope\"}", NAS_ERR_NOT_FOUND);
	call0("link.show", "{\"link\":\"a/b\"}", RPC_INVALID_PARAMS);
	call0("link.show", "{\"link\":\"..\"}", RPC_INVALID_PARAMS);
	call0("link.show", "{\"link\":\"a b\"}", RPC_INVALID_PARAMS);
	call0("link.show", "{\"link\":\"0123456789abcdef\"}", RPC_INVALID_PARAMS);
}
END_TEST

START_TEST(set_up_mtu)
{
	struct json_object *a;

	call0("link.set", "{\"link\":\"lan1\"}", RPC_INVALID_PARAMS);
	a = call("link.set", "{\"link\":\"lan1\",\"up\":true,\"mtu\":9000}", 0);
	ck_assert_str_eq(res_str(a, "state"), "up");
	json_object_put(a);
	ck_assert_int_eq(link_of("lan1").mtu, 9000);
	/* A veth whose peer is down has no carrier. */
	a = call("link.set", "{\"link\":\"v0\",\"up\":true}", 0);
	ck_assert_str_eq(res_str(a, "state"), "no-carrier");
	ck_assert_str_eq(res_str(a, "operstate"), "lowerlayerdown");
	json_object_put(a);
	call0("link.set", "{\"link\":\"lan1\",\"mtu\":67}", RPC_INVALID_PARAMS);
	call0("link.set", "{\"link\":\"lan1\",\"mtu\":65536}", RPC_INVALID_PARAMS);
	call0("link.set", "{\"link\":\"lan9\",\"up\":true}", NAS_ERR_NOT_FOUND);
	/* A cable pulled: up, but no carrier. */
	ck_assert_int_eq(sim_set_cable("lan1", 0), 0);
	ck_assert_int_eq(link_of("lan1").carrier, 0);
	ck_assert_int_eq(link_of("lan1").up, 1);
}
END_TEST

START_TEST(vlans)
{
	struct json_object *a;

	a = call("vlan.create", "{\"link\":\"lan1\",\"id\":100}", 0);
	ck_assert_str_eq(res_str(a, "name"), "lan1.100");
	ck_assert_str_eq(res_str(a, "parent"), "lan1");
	ck_assert_str_eq(res_str(a, "vlan_id"), "100");
	json_object_put(a);
	/* The same id twice on one link, a name in use: refused. */
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":100,\"name\":\"other\"}", NAS_ERR_EXISTS);
	call0("vlan.create", "{\"link\":\"lan2\",\"id\":7,\"name\":\"lan1.100\"}", NAS_ERR_EXISTS);
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":4095}", RPC_INVALID_PARAMS);
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":0}", RPC_INVALID_PARAMS);
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":5,\"name\":\"a:b\"}", RPC_INVALID_PARAMS);
	call0("vlan.create", "{\"link\":\"lo\",\"id\":5}", NAS_ERR_INVALID);
	call0("vlan.create", "{\"link\":\"gone\",\"id\":5}", NAS_ERR_NOT_FOUND);
	/* A VLAN's MTU may not pass its parent's. */
	call0("link.set", "{\"link\":\"lan1.100\",\"mtu\":1501}", NAS_ERR_INVALID);
	ck_assert_int_eq(link_of("lan1.100").mtu, 1500);
	call0("link.set", "{\"link\":\"lan1.100\",\"mtu\":1400}", 0);
	/* Only a VLAN is deleted by vlan.delete. */
	call0("vlan.delete", "{\"name\":\"v0\"}", NAS_ERR_INVALID);
	call0("vlan.delete", "{\"name\":\"lan1\"}", NAS_ERR_INVALID);
	/* A VLAN with an address may be how the caller comes in: force (issue 11). */
	call0("addr.add", "{\"link\":\"lan1.100\",\"address\":\"192.0.2.5/24\"}", 0);
	call0("vlan.delete", "{\"name\":\"lan1.100\"}", NAS_ERR_REFUSED);
	call0("vlan.delete", "{\"name\":\"lan1.100\",\"force\":true}", 0);
	call0("link.show", "{\"link\":\"lan1.100\"}", NAS_ERR_NOT_FOUND);
}
END_TEST

static int
naddrs(void)
{
	struct net_addr *as;
	int n;

	ck_assert_int_eq(net->addr_list(&as, &n), 0);
	free(as);
	return n;
}

START_TEST(addresses_cidr)
{
	static const char *const bad[] = { "10.0.0.1", "10.0.0.1/", "10.0.0.1/33",
		"10.0.0.1/0", "10.0.0.1/ 24", "10.0.0.1/24x", "10.0.0/24", "10.0.0.1/-1",
		"0.0.0.0/8", "224.0.0.1/4", "fd00::1/129", "ff02::1/64", "::/64",
		"lan1/24", "/24", "10.0.0.1/0024", "fe80::1%lan1/64", NULL };
	char p[128];

	for (int i = 0; bad[i]; i++) {
		snprintf(p, sizeof(p), "{\"link\":\"lan1\",\"address\":\"%s\"}", bad[i]);
		call0("addr.add", p, RPC_INVALID_PARAMS);
	}
	ck_assert_int_eq(naddrs(), 0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\"}", 0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"fd00::10/64\"}", 0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\"}", NAS_ERR_EXISTS);
	call0("addr.add", "{\"link\":\"nope\",\"address\":\"192.168.1.10/24\"}", NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(naddrs(), 2);
	call0("addr.del", "{\"link\":\"lan2\",\"address\":\"192.168.1.10/24\"}", NAS_ERR_NOT_FOUND);
	call0("addr.del", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\",\"force\":true}", 0);
	ck_assert_int_eq(naddrs(), 1);
	call0("addr.del", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\"}", NAS_ERR_NOT_FOUND);
}
END_TEST

static int
has_default(void)
{
	struct net_route *rs;
	int n, found = 0;

	ck_assert_int_eq(net->route_list(&rs, &n), 0);
	for (int i = 0; i < n; i++)
		if (rs[i].dst_len == 0)
			found = 1;
	free(rs);
	return found;
}

START_TEST(default_route)
{
	struct json_object *a;
	struct net_link l;

	call0("route.set_default", "{\"gateway\":\"192.168.1.1/24\"}", RPC_INVALID_PARAMS);
	call0("route.set_default", "{\"gateway\":\"192.168.1.1\"}", NAS_ERR_INVALID);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\"}", 0);
	/* The address alone is not enough: the link is down, no route reaches it. */
	call0("route.set_default", "{\"gateway\":\"192.168.1.1\"}", NAS_ERR_INVALID);
	ck_assert_int_eq(has_default(), 0);
	call0("link.set", "{\"link\":\"lan1\",\"up\":true}", 0);
	call0("route.set_default", "{\"gateway\":\"192.168.2.1\"}", NAS_ERR_INVALID);
	call0("route.set_default", "{\"gateway\":\"192.168.1.1\"}", 0);
	a = call("route.list", NULL, 0);
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN), "\"gateway\":\"192.168.1.1\""));
	json_object_put(a);
	/* Replaced, not added. */
	call0("route.set_default", "{\"gateway\":\"192.168.1.2\"}", NAS_ERR_REFUSED);
	call0("route.set_default", "{\"gateway\":\"192.168.1.1\"}", 0);	/* the same: cuts nothing */
	call0("route.set_default", "{\"gateway\":\"192.168.1.2\",\"force\":true}", 0);
	a = call("route.list", NULL, 0);
	ck_assert_ptr_null(strstr(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN), "192.168.1.1\""));
	json_object_put(a);
	/*
	 * lan1 carries the default route and an address: what would cut the
	 * caller off (down, another MTU, the address deleted) needs force
	 * (issue 11), and a refusal changes nothing.
	 */
	call0("link.set", "{\"link\":\"lan1\",\"up\":false}", NAS_ERR_REFUSED);
	call0("link.set", "{\"link\":\"lan1\",\"mtu\":9000}", NAS_ERR_REFUSED);
	call0("addr.del", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\"}", NAS_ERR_REFUSED);
	ck_assert_int_eq(has_default(), 1);
	ck_assert_int_eq(net->link_get("lan1", &l), 0);
	ck_assert(l.up && l.mtu == 1500);
	/* The same MTU, or up, cuts nothing. */
	call0("link.set", "{\"link\":\"lan1\",\"up\":true,\"mtu\":1500}", 0);
	/* The link going down takes its routes, as the fib does. */
	call0("link.set", "{\"link\":\"lan1\",\"up\":false,\"force\":true}", 0);
	ck_assert_int_eq(has_default(), 0);
	call0("addr.del", "{\"link\":\"lan1\",\"address\":\"192.168.1.10/24\",\"force\":true}", 0);
}
END_TEST

static char *
slurp(const char *path)
{
	static char buf[1024];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(dns)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/resolv.conf", dir);
	addr_set_resolv(path);
	call0("dns.set", "{\"servers\":[\"192.168.1.1\",\"2001:db8::53\"]}", 0);
	ck_assert_str_eq(slurp(path), "# written by netd (dns.set)\n"
	    "nameserver 192.168.1.1\nnameserver 2001:db8::53\n");
	/* One bad server: nothing written. */
	call0("dns.set", "{\"servers\":[\"9.9.9.9\",\"9.9.9.9\\nsearch evil\"]}", RPC_INVALID_PARAMS);
	call0("dns.set", "{\"servers\":[\"1.1.1.1\",2]}", RPC_INVALID_PARAMS);
	call0("dns.set", "{\"servers\":[\"1.1.1.1\",\"1.1.1.2\",\"1.1.1.3\",\"1.1.1.4\"]}",
	    RPC_INVALID_PARAMS);
	ck_assert_ptr_nonnull(strstr(slurp(path), "2001:db8::53"));
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/resolv.conf.netd-new", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* An unwritable place fails and says so. */
	addr_set_resolv("/nonexistent-dir/resolv.conf");
	call0("dns.set", "{\"servers\":[]}", NAS_ERR_FAILED);
}
END_TEST

/* A refused step of the kernel's changes nothing. */
START_TEST(kernel_failure)
{
	sim_fail_after(0);
	call0("link.set", "{\"link\":\"lan1\",\"up\":true}", NAS_ERR_FAILED);
	sim_fail_after(0);
	call0("addr.add", "{\"link\":\"lan1\",\"address\":\"10.0.0.1/8\"}", NAS_ERR_FAILED);
	sim_fail_after(0);
	call0("vlan.create", "{\"link\":\"lan1\",\"id\":9}", NAS_ERR_FAILED);
	ck_assert_int_eq(link_of("lan1").up, 0);
	ck_assert_int_eq(naddrs(), 0);
	call0("link.show", "{\"link\":\"lan1.9\"}", NAS_ERR_NOT_FOUND);
}
END_TEST

/* ---- link.state over a socket, driven by the monitor descriptor ---- */

static char sock[300];

static int
subscriber(void)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
	    "\"params\":{\"topics\":[\"link\"]},\"id\":1}\n";
	int fd;
	char *line;

	snprintf(sock, sizeof(sock), "%s/n.sock", dir);
	rpc_events_init(srv);
	ck_assert_int_eq(rpc_server_listen(srv, sock, (gid_t)-1), 0);
	fd = unit_connect(sock);
	unit_send(fd, sub, strlen(sub));
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	free(line);
	return fd;
}

/* What netd's monitor callback does when the descriptor is readable. */
static int
monitor_fire(int mfd)
{
	int changed = net->monitor_read(mfd);

	if (changed)
		link_watch();
	return changed;
}

START_TEST(link_state_events)
{
	int fd = subscriber(), mfd = net->monitor_open();
	struct json_object *n, *p;
	char *line;

	ck_assert_int_ge(mfd, 0);
	link_watch_reset();
	ck_assert_int_eq(monitor_fire(mfd), 0);
	ck_assert_int_eq(sim_set_cable("lan2", 0), 0);
	ck_assert_int_eq(monitor_fire(mfd), 1);
	/* lan2 is down already: no state of it changed, nothing is said. */
	unit_assert_silent(fd);
	call0("link.set", "{\"link\":\"lan2\",\"up\":true}", 0);
	ck_assert_int_eq(monitor_fire(mfd), 1);
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	n = unit_json(line);
	ck_assert(json_object_object_get_ex(n, "params", &p));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(n, "method")), "link.state");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(p, "link")), "lan2");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(p, "state")), "no-carrier");
	json_object_put(n);
	free(line);
	ck_assert_int_eq(sim_set_cable("lan2", 1), 0);
	ck_assert_int_eq(monitor_fire(mfd), 1);
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	ck_assert_ptr_nonnull(strstr(line, "\"state\":\"up\""));
	free(line);
	unit_assert_silent(fd);
	close(fd);
	link_watch_reset();
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("netd-link");
	TCase *t = tcase_create("links");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, list_board_ports_first);
	tcase_add_test(t, show_and_names);
	tcase_add_test(t, set_up_mtu);
	tcase_add_test(t, vlans);
	tcase_add_test(t, addresses_cidr);
	tcase_add_test(t, default_route);
	tcase_add_test(t, dns);
	tcase_add_test(t, kernel_failure);
	tcase_add_test(t, link_state_events);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
