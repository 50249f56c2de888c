/*
 * Addresses, routes and DNS: addr.list/add/del (CIDR only),
 * route.list, route.set_default, dns.set. resolv.conf is replaced
 * atomically (a new file synced, renamed over the old, the directory
 * synced), so a power cut leaves the old list or the new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netd.h"
#include "netconf.h"

#define DNS_MAX	3	/* resolv.conf's MAXNS: more are ignored by libc */

static char resolv_path[256] = "/etc/resolv.conf";

void
addr_set_resolv(const char *path)
{
	snprintf(resolv_path, sizeof(resolv_path), "%s", path);
}

static struct json_object *
addr_describe(const struct net_addr *a)
{
	struct json_object *o = json_object_new_object();
	char ip[64], cidr[80];

	ip_format(a->family, a->addr, ip, sizeof(ip));
	snprintf(cidr, sizeof(cidr), "%s/%d", ip, a->prefix);
	json_object_object_add(o, "link", json_object_new_string(a->link));
	json_object_object_add(o, "family", json_object_new_string(a->family == AF_INET ? "inet" : "inet6"));
	json_object_object_add(o, "address", json_object_new_string(cidr));
	json_object_object_add(o, "dynamic", json_object_new_boolean(a->dynamic));
	return o;
}

static void
m_addr_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a, *r;
	struct net_addr *as;
	const char *link = rpc_param_str(params, "link", NULL);
	int n;

	if (net->addr_list(&as, &n) == -1) {
		net_fail(c, "listing addresses");
		return;
	}
	a = json_object_new_array();
	for (int i = 0; i < n; i++)
		if (link == NULL || strcmp(link, as[i].link) == 0)
			json_object_array_add(a, addr_describe(&as[i]));
	free(as);
	r = json_object_new_object();
	json_object_object_add(r, "addresses", a);
	rpc_result(c, r);
}

/* The link and CIDR address of params; answers and returns -1 when bad. */
static int
get_addr(struct rpc_call *c, struct json_object *params, struct net_addr *a)
{
	const char *link = rpc_param_str(params, "link", "");
	struct net_link l;
	char why[128];
	int rc;

	if (cidr_parse(rpc_param_str(params, "address", ""), a, why, sizeof(why)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "%s", why);
		return -1;
	}
	if (!ifname_valid(link)) {
		rpc_error(c, RPC_INVALID_PARAMS, "link is not a valid interface name");
		return -1;
	}
	if ((rc = net->link_get(link, &l)) != 0) {
		if (rc == 1)
			rpc_error(c, NAS_ERR_NOT_FOUND, "no such link");
		else
			net_fail(c, "reading the link");
		return -1;
	}
	snprintf(a->link, sizeof(a->link), "%s", link);
	return 0;
}

/* Addresses of link that netd.ini would hold (not link-local, not the kernel's own); -1 unread. */
static int
configured_addrs(const char *link)
{
	struct net_addr *as;
	int n, k = 0;

	if (net->addr_list(&as, &n) == -1)
		return -1;
	for (int i = 0; i < n; i++)
		k += !strcmp(as[i].link, link) && !as[i].dynamic && !(as[i].family == AF_INET6 &&
		    as[i].addr[0] == 0xfe && (as[i].addr[1] & 0xc0) == 0x80);
	free(as);
	return k;
}

static void
m_addr_add(struct rpc_call *c, struct json_object *params)
{
	struct net_addr a;
	int k;

	if (get_addr(c, params, &a) == -1)
		return;
	/* One more than netd.ini holds would stop every later write-back. */
	if ((k = configured_addrs(a.link)) >= NC_ADDRS) {
		rpc_error(c, NAS_ERR_LIMIT, "%s has %d addresses, as many as netd.ini holds for a "
		    "link", a.link, k);
		return;
	}
	if (net->addr_add(&a) == -1) {
		net_fail(c, "adding the address");
		return;
	}
	netconf_changed();
	rpc_result(c, addr_describe(&a));
}

/* Whether the kernel has a on its link (a missing one gets the kernel's own answer). */
static int
addr_present(const struct net_addr *a)
{
	struct net_addr *as;
	int n, found = 0;

	if (net->addr_list(&as, &n) == -1)
		return 1;	/* unknown: guarded */
	for (int i = 0; i < n; i++)
		found |= !strcmp(as[i].link, a->link) && as[i].family == a->family &&
		    as[i].prefix == a->prefix && !memcmp(as[i].addr, a->addr, 16);
	free(as);
	return found;
}

static void
m_addr_del(struct rpc_call *c, struct json_object *params)
{
	struct net_addr a;

	if (get_addr(c, params, &a) == -1)
		return;
	/* Any address but IPv6 link-local may be the one the caller reaches us at. */
	if (!(a.family == AF_INET6 && a.addr[0] == 0xfe && (a.addr[1] & 0xc0) == 0x80) &&
	    !rpc_param_bool(params, "force", 0) && addr_present(&a)) {
		rpc_error(c, NAS_ERR_REFUSED, "the address may be how the caller reaches this "
		    "unit; say force, or use net.apply with confirm_s");
		return;
	}
	if (net->addr_del(&a) == -1) {
		net_fail(c, "deleting the address");
		return;
	}
	netconf_changed();
	rpc_result(c, json_object_new_object());
}

static struct json_object *
route_describe(const struct net_route *r)
{
	struct json_object *o = json_object_new_object();
	char ip[64], dst[80];

	ip_format(r->family, r->dst, ip, sizeof(ip));
	if (r->dst_len == 0)
		snprintf(dst, sizeof(dst), "default");
	else
		snprintf(dst, sizeof(dst), "%s/%d", ip, r->dst_len);
	json_object_object_add(o, "family", json_object_new_string(r->family == AF_INET ? "inet" : "inet6"));
	json_object_object_add(o, "destination", json_object_new_string(dst));
	if (r->has_gw)
		ip_format(r->family, r->gw, ip, sizeof(ip));
	json_object_object_add(o, "gateway", r->has_gw ? json_object_new_string(ip) : NULL);
	json_object_object_add(o, "link", *r->link ? json_object_new_string(r->link) : NULL);
	json_object_object_add(o, "proto", json_object_new_string(r->proto));
	return o;
}

static void
m_route_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a, *r;
	struct net_route *rs;
	int n;

	(void)params;
	if (net->route_list(&rs, &n) == -1) {
		net_fail(c, "listing routes");
		return;
	}
	a = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(a, route_describe(&rs[i]));
	free(rs);
	r = json_object_new_object();
	json_object_object_add(r, "routes", a);
	rpc_result(c, r);
}

/* Whether the main table has a default route of family through another gateway. */
static int
other_default(int family, const unsigned char *gw)
{
	struct net_route *rs;
	int n, found = 0;

	if (net->route_list(&rs, &n) == -1)
		return 1;	/* unknown: guarded */
	for (int i = 0; i < n; i++)
		found |= rs[i].family == family && rs[i].dst_len == 0 &&
		    (!rs[i].has_gw || memcmp(rs[i].gw, gw, family == AF_INET ? 4 : 16) != 0);
	free(rs);
	return found;
}

static void
m_route_set_default(struct rpc_call *c, struct json_object *params)
{
	unsigned char gw[16];
	int family;

	if ((family = ip_parse(rpc_param_str(params, "gateway", ""), gw)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "gateway is not an IPv4 or IPv6 address");
		return;
	}
	/* Another gateway may no longer reach a caller from another network (Decision 81). */
	if (!rpc_param_bool(params, "force", 0) && other_default(family, gw)) {
		rpc_error(c, NAS_ERR_REFUSED, "a default route through another gateway is in use "
		    "and may be how the caller reaches this unit; say force, or use net.apply "
		    "with confirm_s");
		return;
	}
	if (net->route_set_default(family, gw) == -1) {
		net_fail(c, "setting the default route");
		return;
	}
	netconf_changed();
	rpc_result(c, json_object_new_object());
}

/* Writes text to path through a synced temporary file and a rename. */
int
write_atomic(const char *path, const char *text)
{
	char tmp[300], dir[256];
	size_t len = strlen(text);
	int fd, dfd;

	snprintf(tmp, sizeof(tmp), "%s.netd-new", path);
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)) == -1)
		return -1;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) == -1) {
		int e = errno ? errno : EIO;

		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		int e = errno;

		unlink(tmp);
		errno = e;
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}

int
dns_read(char (*ip)[46], int max)
{
	char line[256], word[16], a[64];
	unsigned char b[16];
	FILE *f;
	int n = 0, family;

	if ((f = fopen(resolv_path, "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (fgets(line, sizeof(line), f) && n < max)
		if (sscanf(line, "%15s %63s", word, a) == 2 && strcmp(word, "nameserver") == 0 &&
		    (family = ip_parse(a, b)) != -1)
			ip_format(family, b, ip[n++], 46);
	fclose(f);
	return n;
}

int
dns_write(const char (*ip)[46], int n)
{
	char text[512];
	size_t off;

	off = (size_t)snprintf(text, sizeof(text), "# written by netd (dns.set)\n");
	for (int i = 0; i < n && i < DNS_MAX; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "nameserver %s\n", ip[i]);
	return write_atomic(resolv_path, text);
}

static void
m_dns_set(struct rpc_call *c, struct json_object *params)
{
	struct json_object *servers, *r;
	char ip[DNS_MAX][46];
	unsigned char a[16];
	size_t n;
	int family;

	json_object_object_get_ex(params, "servers", &servers);
	n = json_object_array_length(servers);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(servers, i);

		if (!json_object_is_type(s, json_type_string) ||
		    (family = ip_parse(json_object_get_string(s), a)) == -1) {
			rpc_error(c, RPC_INVALID_PARAMS, "servers[%zu] is not an IPv4 or IPv6 address", i);
			return;
		}
		/* Written as parsed, so nothing of the caller's text reaches the file. */
		ip_format(family, a, ip[i], sizeof(ip[i]));
	}
	if (dns_write((const char (*)[46])ip, (int)n) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "writing %s: %s", resolv_path, strerror(errno));
		return;
	}
	netconf_changed();
	r = json_object_new_object();
	json_object_object_add(r, "servers", json_object_get(servers));
	rpc_result(c, r);
}

static const struct rpc_param p_addr_list[] = {
	{ "link", RPC_STRING, 0, 1, 15, NULL, "only this link's addresses" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_addr[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "interface name" },
	{ "address", RPC_STRING, RPC_REQUIRED, 3, 49, NULL, "ADDRESS/PREFIX, IPv4 or IPv6" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_addr_del[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "interface name" },
	{ "address", RPC_STRING, RPC_REQUIRED, 3, 49, NULL, "ADDRESS/PREFIX, IPv4 or IPv6" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "delete an address other than IPv6 link-local" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_route_default[] = {
	{ "gateway", RPC_STRING, RPC_REQUIRED, 2, 45, NULL, "the gateway's IPv4 or IPv6 address" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "replace a default route through another gateway" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_dns[] = {
	{ "servers", RPC_ARRAY, RPC_REQUIRED, 0, DNS_MAX, NULL,
	  "name servers' addresses, at most 3 (an empty list clears them)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method addr_methods[] = {
	{ "addr.list", m_addr_list, p_addr_list, 0, "addresses of every link, or of one" },
	{ "addr.add", m_addr_add, p_addr, RPC_MUTATES, "add an address (CIDR) to a link" },
	{ "addr.del", m_addr_del, p_addr_del, RPC_MUTATES, "delete an address (CIDR) from a link" },
	{ "route.list", m_route_list, NULL, 0, "routes of the main table" },
	{ "route.set_default", m_route_set_default, p_route_default, RPC_MUTATES,
	  "make or replace the default route of the gateway's family" },
	{ "dns.set", m_dns_set, p_dns, RPC_MUTATES, "replace the name servers (resolv.conf)" },
	{ NULL, NULL, NULL, 0, NULL }
};
