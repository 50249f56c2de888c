/*
 * libFuzzer target: what netd reads from outside itself. The first byte
 * picks the reader:
 *   0  a netlink dump (RTM_NEWLINK messages back to back, as the kernel
 *      sends one), each decoded by bond-nl.c as bond_get does; every bond
 *      with the ports whose master it is, then diagnosed (lacp.c) against
 *      itself and against the dump's first bond as an earlier look
 *   1  netd.ini, loaded as at start (netconf_load)
 *   2  net.apply's config as JSON (netconf_from_json)
 *   3  resolv.conf as dns_read reads it
 *   4  (the first byte's low three bits 100) the bytes of udhcpc's script
 *      on netd's pipe (dhcp_feed: framing, then each record as a lease
 *      on lan1 of the simulated seam, with lan2 the management link):
 *      whatever they say, lan2 keeps its address, lan1 holds only
 *      unicast host addresses of prefix 8-30 clear of lan2's subnet, a
 *      default route is via a host of lan1's subnet, and resolv.conf
 *      holds at most three name servers
 * A configuration that loads must print, and what it prints must load to
 * the same configuration: the file netd writes is the file it reads back
 * at the next start.
 */
#include <sys/mman.h>

#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "netd/bond-nl.h"
#include "netd/dhcp.h"
#include "netd/lacp.h"
#include "netd/netconf.h"
#include "netd/netd.h"
#include "netd/system-sim.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define DUMP_LINKS	64

/* A memfd holding data, and its /proc path in path. */
static int
memfile(const void *data, size_t size, char *path, size_t len)
{
	int fd;

	if ((fd = memfd_create("fuzz-netd", MFD_CLOEXEC)) == -1)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static void
diagnose(const struct net_bond *b, const struct net_bond *before)
{
	struct bond_diag d[BOND_DIAG_MAX];
	int n = lacp_diagnose(b, before, d, BOND_DIAG_MAX);

	if (n < 0 || n > BOND_DIAG_MAX)
		abort();
	for (int i = 0; i < n; i++)
		if (d[i].code == NULL || strlen(d[i].message) >= sizeof(d[i].message))
			abort();
	for (int i = 0; i < b->nports; i++) {
		json_object_put(lacp_state_json(b->port[i].actor_state));
		json_object_put(lacp_state_json(b->port[i].partner_state));
		(void)lacp_in_bundle(b, &b->port[i]);
	}
	(void)name_at(bond_mode_names, b->mode);
	(void)name_at(bond_hash_names, b->xmit_hash_policy);
	(void)name_at(bond_rate_names, b->lacp_rate);
}

static void
dump(const uint8_t *data, size_t size)
{
	static struct bond_nl_link l[DUMP_LINKS];
	static struct net_bond b, first;
	/* Messages start aligned, as in the socket's buffer. */
	void *buf = malloc(size ? size : 1);
	size_t off = 0;
	int n = 0, bonds = 0;

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	/* As libnl hands a dump over: one message at a time, with its length. */
	while (size - off >= sizeof(struct nlmsghdr) && n < DUMP_LINKS) {
		const struct nlmsghdr *h = (const void *)((char *)buf + off);

		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > size - off)
			break;
		if (bond_nl_parse(h, h->nlmsg_len, &l[n]) == 0)
			n++;
		if (NLMSG_ALIGN(h->nlmsg_len) >= size - off)
			break;
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	for (int i = 0; i < n; i++) {
		if (!l[i].is_bond)
			continue;
		b = l[i].bond;
		b.nports = 0;
		for (int j = 0; j < n && b.nports < NET_BOND_PORTS; j++)
			if (l[j].is_port && l[j].master == b.ifindex)
				b.port[b.nports++] = l[j].port;
		if (bonds++ == 0)
			first = b;
		diagnose(&b, NULL);
		diagnose(&b, &first);
	}
	free(buf);
}

/* c printed into a new string (caller frees). */
static char *
print(const struct netconf *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&text, &len)) == NULL)
		abort();
	netconf_print(c, f);
	if (fclose(f) != 0)
		abort();
	return text;
}

/* What c prints loads back to what prints the same. */
static void
round_trip(const struct netconf *c)
{
	static struct netconf again;
	char *text = print(c), *text2, path[64];
	int fd, found;

	fd = memfile(text, strlen(text), path, sizeof(path));
	if (netconf_load(path, &again, &found) != 0) {
		fprintf(stderr, "netd's own file does not load:\n%s", text);
		abort();
	}
	close(fd);
	text2 = print(&again);
	if (strcmp(text, text2) != 0) {
		fprintf(stderr, "written:\n%s\nread back and written:\n%s", text, text2);
		abort();
	}
	free(text);
	free(text2);
}

static void
ini(const uint8_t *data, size_t size)
{
	static struct netconf c;
	char path[64];
	int fd = memfile(data, size, path, sizeof(path)), found;

	if (netconf_load(path, &c, &found) == 0)
		round_trip(&c);
	close(fd);
}

static void
json(const uint8_t *data, size_t size)
{
	static struct netconf c;
	struct json_tokener *t = json_tokener_new_ex(32);
	struct json_object *o;
	char why[300];

	if (t == NULL)
		abort();
	o = json_tokener_parse_ex(t, (const char *)data, (int)size);
	json_tokener_free(t);
	if (o == NULL)
		return;
	why[0] = '\0';
	if (netconf_from_json(o, &c, why, sizeof(why)) == 0)
		round_trip(&c);
	else if (why[0] == '\0')
		abort();
	json_object_put(o);
}

static void
resolv(const uint8_t *data, size_t size)
{
	char path[64], ip[NC_DNS][46];
	int fd = memfile(data, size, path, sizeof(path)), n;

	addr_set_resolv(path);
	if ((n = dns_read(ip, NC_DNS)) > NC_DNS)
		abort();
	for (int i = 0; i < n; i++)
		if (memchr(ip[i], '\0', sizeof(ip[i])) == NULL)
			abort();
	close(fd);
}

/* What a lease left on lan1 and lan2: the invariants of mode 4. */
static void
lease_checked(const char *path)
{
	struct net_addr *as, lan2;
	struct net_route *rs;
	char why[64], line[128];
	int n, lan2_there = 0, ok, servers = 0;
	FILE *f;

	if (cidr_parse("192.0.2.2/24", &lan2, why, sizeof(why)) == -1 ||
	    net->addr_list(&as, &n) == -1)
		abort();
	for (int i = 0; i < n; i++) {
		uint32_t a = (uint32_t)as[i].addr[0] << 24 | (uint32_t)as[i].addr[1] << 16 |
		    (uint32_t)as[i].addr[2] << 8 | as[i].addr[3];

		if (strcmp(as[i].link, "lan2") == 0) {
			lan2_there |= as[i].prefix == 24 && memcmp(as[i].addr, lan2.addr, 4) == 0;
			continue;
		}
		if (as[i].family != AF_INET)
			continue;
		ok = as[i].prefix >= 8 && as[i].prefix <= 30 && as[i].addr[0] != 0 &&
		    as[i].addr[0] != 127 && as[i].addr[0] < 224 &&
		    (a & ~(0xffffffffu << (32 - as[i].prefix))) != 0 &&
		    (a >> 8) != (192u << 16 | 2) &&
		    !(as[i].prefix <= 24 && (a >> (32 - as[i].prefix)) ==
		    ((192u << 24 | 2 << 8) >> (32 - as[i].prefix)));
		if (!ok)
			abort();
	}
	free(as);
	if (!lan2_there || net->route_list(&rs, &n) == -1)
		abort();
	for (int i = 0; i < n; i++)
		if (rs[i].family == AF_INET && rs[i].dst_len == 0 &&
		    (!rs[i].has_gw || rs[i].gw[0] == 0 || rs[i].gw[0] >= 224))
			abort();
	free(rs);
	/* Each line netd's own, each name server one netd formatted. */
	if ((f = fopen(path, "r")) == NULL)
		abort();
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned char b[16];
		char *nl = strchr(line, '\n');

		if (nl == NULL)
			abort();
		*nl = '\0';
		if (line[0] == '#')
			continue;
		if (strncmp(line, "nameserver ", 11) != 0 || ip_parse(line + 11, b) != AF_INET ||
		    ++servers > 3)
			abort();
	}
	fclose(f);
}

static void
lease(const uint8_t *data, size_t size)
{
	static const unsigned char mac1[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 1 };
	static const unsigned char mac2[6] = { 0x52, 0x54, 0, 0x4e, 0x41, 2 };
	static char dir[] = "/tmp/fuzz-netd-XXXXXX", path[64];
	struct net_addr a, fallback;
	char why[64];
	FILE *f;

	if (path[0] == '\0') {
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(path, sizeof(path), "%s/resolv.conf", dir);
		net = &net_sim;
		dhcp_set_client("", "");
	}
	if ((f = fopen(path, "w")) == NULL || fclose(f) != 0)
		abort();
	addr_set_resolv(path);
	sim_reset();
	if (sim_add_port("lan1", mac1, 1000) == -1 || sim_add_port("lan2", mac2, 1000) == -1 ||
	    cidr_parse("192.0.2.2/24", &a, why, sizeof(why)) == -1 ||
	    cidr_parse("10.9.0.2/24", &fallback, why, sizeof(why)) == -1)
		abort();
	snprintf(a.link, sizeof(a.link), "lan2");
	if (net->addr_add(&a) == -1 || dhcp_start("lan1", &fallback) == -1 ||
	    dhcp_feed("lan1", data, size) == -1)
		abort();
	lease_checked(path);
	json_object_put(dhcp_describe("lan1"));
	dhcp_reset();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;

	if (!quiet) {
		log_init("fuzz-netd", 1, 0);
		log_set_level(LOG_LVL_ERR);
		quiet = 1;
	}
	if (size < 1 || size > 65536)
		return 0;
	if ((data[0] & 7) == 4) {
		lease(data + 1, size - 1);
		return 0;
	}
	switch (data[0] & 3) {
	case 0:
		dump(data + 1, size - 1);
		break;
	case 1:
		ini(data + 1, size - 1);
		break;
	case 2:
		json(data + 1, size - 1);
		break;
	default:
		resolv(data + 1, size - 1);
	}
	return 0;
}
