/*
 * netd.ini (netd.conf(5)) into struct netconf and back, and the running
 * state in the same shape. Nothing in the file is trusted: every value
 * is parsed as the API parses it, and one that is bad is logged and left
 * out while the rest is kept, so a hand edit gone wrong costs one key,
 * not the network.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <iniparser.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "dhcp.h"
#include "lacp.h"
#include "netd.h"
#include "netconf.h"

static const char *const kind_names[] = { "port", "bond", "vlan", NULL };

int
netconf_section(const char *s)
{
	return !strcmp(s, "route") || !strcmp(s, "dns") || !strncmp(s, "port ", 5) ||
	    !strncmp(s, "bond ", 5) || !strncmp(s, "vlan ", 5);
}

static int
fam_slot(int family)
{
	return family == AF_INET6;
}

void
netconf_free(struct netconf *c)
{
	free(c->link);
	memset(c, 0, sizeof(*c));
}

struct nc_link *
netconf_grow(struct netconf *c)
{
	struct nc_link *l;

	if (c->nlinks == NC_LINKS) {
		errno = E2BIG;
		return NULL;
	}
	if (c->nlinks == c->cap) {
		int cap = c->cap ? 2 * c->cap : 16;

		if (cap > NC_LINKS)
			cap = NC_LINKS;
		if ((l = reallocarray(c->link, (size_t)cap, sizeof(*l))) == NULL)
			return NULL;
		c->link = l;
		c->cap = cap;
	}
	l = &c->link[c->nlinks++];
	memset(l, 0, sizeof(*l));
	return l;
}

/* The link of section "KIND NAME", made when new; NULL with why. */
static struct nc_link *
section_link(struct netconf *c, const char *section, char *why, size_t len)
{
	char kind[8], name[NET_NAME_MAX];
	const char *sp = strchr(section, ' ');
	struct nc_link *l;
	int k;

	if (sp == NULL || (size_t)(sp - section) >= sizeof(kind) ||
	    strlen(sp + 1) >= sizeof(name)) {
		snprintf(why, len, "unknown section (port NAME, bond NAME, vlan NAME, route, dns)");
		return NULL;
	}
	memcpy(kind, section, (size_t)(sp - section));
	kind[sp - section] = '\0';
	snprintf(name, sizeof(name), "%s", sp + 1);
	if ((k = name_index(kind_names, kind)) < 0) {
		snprintf(why, len, "unknown section (port NAME, bond NAME, vlan NAME, route, dns)");
		return NULL;
	}
	if (!ifname_conf(name) || strcmp(name, "lo") == 0) {
		snprintf(why, len, "'%s' is not an interface name netd may configure (%s)", name,
		    IFNAME_CONF_RULE);
		return NULL;
	}
	for (int i = 0; i < c->nlinks; i++)
		if (strcmp(c->link[i].name, name) == 0) {
			if (c->link[i].kind != k) {
				snprintf(why, len, "%s is in two sections of different kinds", name);
				return NULL;
			}
			return &c->link[i];
		}
	if ((l = netconf_grow(c)) == NULL) {
		snprintf(why, len, errno == E2BIG ? "more than %d links" : "out of memory",
		    NC_LINKS);
		return NULL;
	}
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->kind = k;
	l->up = -1;
	l->vlan_id = -1;
	l->bond.mode = -1;
	l->bond.miimon = -1;
	l->bond.lacp_rate = -1;
	l->bond.xmit_hash_policy = -1;
	l->bond.min_links = -1;
	l->bond.ad_select = -1;
	return l;
}

/* A whole number in [min, max]; -1 when value is not one. */
static long
number(const char *v, long min, long max)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (*v == '\0' || *end || errno || n < min || n > max)
		return -1;
	return n;
}

static int
boolean(const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		return 1;
	if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		return 0;
	return -1;
}

/*
 * Splits a comma (or space) separated list into at most max items of
 * itemlen; the item count, or -1 when there are more or one is too long.
 */
static int
split(const char *v, char *items, int max, size_t itemlen)
{
	int n = 0;

	while (*v) {
		size_t k;

		v += strspn(v, ", \t");
		if ((k = strcspn(v, ", \t")) == 0)
			break;
		if (n == max || k >= itemlen)
			return -1;
		memcpy(items + (size_t)n * itemlen, v, k);
		items[(size_t)n * itemlen + k] = '\0';
		n++;
		v += k;
	}
	return n;
}

static int
set_addresses(struct nc_link *l, const char *v, char *why, size_t len)
{
	char items[NC_ADDRS][64], w[128];
	int n = split(v, items[0], NC_ADDRS, sizeof(items[0]));

	if (n < 0) {
		snprintf(why, len, "at most %d addresses", NC_ADDRS);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct net_addr a;

		if (cidr_parse(items[i], &a, w, sizeof(w)) == -1) {
			snprintf(why, len, "'%.60s': %s", items[i], w);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (l->addr[j].family == a.family &&
			    memcmp(l->addr[j].addr, a.addr, 16) == 0) {
				snprintf(why, len, "'%.60s' is listed twice", items[i]);
				return -1;
			}
		snprintf(a.link, sizeof(a.link), "%s", l->name);
		l->addr[i] = a;
	}
	l->naddr = n;
	return 0;
}

static int
set_bond(struct nc_link *l, const char *key, const char *v, char *why, size_t len)
{
	struct net_bond_opts *o = &l->bond;
	int n;

	if (!strcmp(key, "mode")) {
		if ((o->mode = name_index(bond_mode_names, v)) < 0)
			goto bad;
	} else if (!strcmp(key, "lacp_rate")) {
		if ((o->lacp_rate = name_index(bond_rate_names, v)) < 0)
			goto bad;
	} else if (!strcmp(key, "xmit_hash_policy")) {
		if ((o->xmit_hash_policy = name_index(bond_hash_names, v)) < 0)
			goto bad;
	} else if (!strcmp(key, "miimon")) {
		if ((o->miimon = (int)number(v, 0, 60000)) < 0)
			goto bad;
	} else if (!strcmp(key, "min_links")) {
		if ((o->min_links = (int)number(v, 0, NET_BOND_PORTS)) < 0)
			goto bad;
	} else if (!strcmp(key, "ad_select")) {
		if ((o->ad_select = name_index(bond_select_names, v)) < 0)
			goto bad;
	} else if (!strcmp(key, "primary")) {
		if (!ifname_conf(v) || !strcmp(v, "lo"))
			goto bad;
		snprintf(o->primary, sizeof(o->primary), "%s", v);
	} else if (!strcmp(key, "ports")) {
		if ((n = split(v, l->ports[0], NET_BOND_PORTS, NET_NAME_MAX)) < 1) {
			snprintf(why, len, "ports: 1-%d interface names", NET_BOND_PORTS);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (!ifname_conf(l->ports[i]) || !strcmp(l->ports[i], "lo") ||
			    !strcmp(l->ports[i], l->name)) {
				snprintf(why, len, "ports: '%s' cannot be a port", l->ports[i]);
				return -1;
			}
			for (int j = 0; j < i; j++)
				if (!strcmp(l->ports[i], l->ports[j])) {
					snprintf(why, len, "ports: %s is listed twice", l->ports[i]);
					return -1;
				}
		}
		l->nports = n;
	} else {
		snprintf(why, len, "unknown key");
		return -1;
	}
	return 0;
bad:
	snprintf(why, len, "'%.60s' is not a valid %s", v, key);
	return -1;
}

int
netconf_set(struct netconf *c, const char *section, const char *key, const char *v,
    char *why, size_t len)
{
	struct nc_link *l, save;
	char items[NC_DNS + 2][64];
	int n, b, nlinks;
	long m;

	if (!strcmp(section, "dns")) {
		if (strcmp(key, "servers")) {
			snprintf(why, len, "unknown key");
			return -1;
		}
		if ((n = split(v, items[0], NC_DNS, sizeof(items[0]))) < 0) {
			snprintf(why, len, "at most %d servers", NC_DNS);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			unsigned char a[16];
			int f = ip_parse(items[i], a);

			if (f == -1) {
				snprintf(why, len, "'%.60s' is not an IPv4 or IPv6 address", items[i]);
				return -1;
			}
			ip_format(f, a, c->dns[i], sizeof(c->dns[i]));
		}
		c->ndns = n;
		c->has_dns = 1;
		return 0;
	}
	if (!strcmp(section, "route")) {
		unsigned char gw[2][16];
		int has[2] = { 0, 0 };

		if (strcmp(key, "gateway")) {
			snprintf(why, len, "unknown key");
			return -1;
		}
		if ((n = split(v, items[0], 2, sizeof(items[0]))) < 0) {
			snprintf(why, len, "one gateway per family");
			return -1;
		}
		for (int i = 0; i < n; i++) {
			unsigned char a[16];
			int f = ip_parse(items[i], a);

			if (f == -1 || has[fam_slot(f)]) {
				snprintf(why, len, "'%.60s' is not an IPv4 or IPv6 address, "
				    "or a second one of its family", items[i]);
				return -1;
			}
			has[fam_slot(f)] = 1;
			memcpy(gw[fam_slot(f)], a, 16);
		}
		for (int f = 0; f < 2; f++) {
			c->has_gw[f] = has[f];
			memcpy(c->gw[f], gw[f], 16);
		}
		return 0;
	}
	nlinks = c->nlinks;
	if ((l = section_link(c, section, why, len)) == NULL)
		return -1;
	save = *l;
	if (!strcmp(key, "up")) {
		if ((b = boolean(v)) < 0)
			goto bad;
		l->up = b;
	} else if (!strcmp(key, "mtu")) {
		if ((m = number(v, 68, 65535)) < 0)
			goto bad;
		l->mtu = (unsigned)m;
	} else if (!strcmp(key, "address")) {
		if (set_addresses(l, v, why, len) == -1)
			goto undo;
	} else if (!strcmp(key, "dhcp")) {
		if ((b = boolean(v)) < 0)
			goto bad;
		l->dhcp = b;
	} else if (!strcmp(key, "dhcp_fallback")) {
		if (dhcp_fallback_parse(v, &l->fallback, why, len) == -1)
			goto undo;
		snprintf(l->fallback.link, sizeof(l->fallback.link), "%s", l->name);
		l->has_fallback = 1;
	} else if (l->kind == NC_VLAN && !strcmp(key, "link")) {
		if (!ifname_conf(v) || !strcmp(v, "lo") || !strcmp(v, l->name))
			goto bad;
		snprintf(l->parent, sizeof(l->parent), "%s", v);
	} else if (l->kind == NC_VLAN && !strcmp(key, "id")) {
		if ((m = number(v, 1, 4094)) < 0)
			goto bad;
		l->vlan_id = (int)m;
	} else if (l->kind == NC_BOND) {
		if (set_bond(l, key, v, why, len) == -1)
			goto undo;
	} else {
		snprintf(why, len, "unknown key");
		goto undo;
	}
	return 0;
bad:
	snprintf(why, len, "'%.60s' is not a valid %s", v, key);
undo:
	*l = save;
	if (c->nlinks != nlinks) {
		/* A section that came with the bad key goes with it. */
		memset(l, 0, sizeof(*l));
		c->nlinks = nlinks;
	}
	return -1;
}

/* Drops link i (a section that cannot stand). */
static void
drop(struct netconf *c, int i)
{
	memmove(&c->link[i], &c->link[i + 1], (size_t)(c->nlinks - i - 1) * sizeof(c->link[0]));
	c->nlinks--;
}

static struct nc_link *
find(struct netconf *c, const char *name)
{
	for (int i = 0; i < c->nlinks; i++)
		if (!strcmp(c->link[i].name, name))
			return &c->link[i];
	return NULL;
}

static int
port_of(const struct nc_link *l, const char *name)
{
	for (int i = 0; i < l->nports; i++)
		if (!strcmp(l->ports[i], name))
			return 1;
	return 0;
}

/*
 * Fills a bond's defaults (those of bond.create) and checks what one key
 * cannot: options the mode does not use, a port in two bonds or with
 * addresses, a VLAN without its link and id. With lenient, a bad section
 * is logged and dropped (netd.ini); without, it is refused (net.apply).
 */
static int
finish(struct netconf *c, int lenient, char *why, size_t len)
{
	for (int i = 0; i < c->nlinks; i++) {
		struct nc_link *l = &c->link[i], *o;
		struct net_bond_opts *b = &l->bond;
		int lacp = b->mode == BOND_MODE_LACP, hashed = b->mode == 2 || lacp || b->mode == 5;

		*why = '\0';
		if (l->kind != NC_PORT && link_board_label(l->name) != NULL)
			snprintf(why, len, "%s %s: the name of the board's port %s", kind_names[l->kind],
			    l->name, link_board_label(l->name));
		else if (l->kind == NC_VLAN && (!*l->parent || l->vlan_id < 0))
			snprintf(why, len, "vlan %s: link and id are required", l->name);
		if (l->has_fallback && !l->dhcp)
			snprintf(why, len, "%s: dhcp_fallback without dhcp = yes", l->name);
		if (l->kind == NC_BOND) {
			if (b->mode < 0 || l->nports == 0)
				snprintf(why, len, "bond %s: mode and ports are required", l->name);
			else if (!lacp && (b->lacp_rate >= 0 || b->min_links >= 0 || b->ad_select >= 0))
				snprintf(why, len, "bond %s: lacp_rate, min_links and ad_select apply "
				    "to mode 802.3ad only", l->name);
			else if (*b->primary && !BOND_MODE_HAS_PRIMARY(b->mode))
				snprintf(why, len, "bond %s: primary applies to modes active-backup, "
				    "balance-tlb and balance-alb only", l->name);
			else if (*b->primary && !port_of(l, b->primary))
				snprintf(why, len, "bond %s: primary %s is not one of its ports",
				    l->name, b->primary);
			else if (!hashed && b->xmit_hash_policy >= 0)
				snprintf(why, len, "bond %s: xmit_hash_policy applies to modes "
				    "balance-xor, 802.3ad and balance-tlb only", l->name);
			for (int p = 0; p < l->nports && !*why; p++) {
				for (int j = 0; j < c->nlinks; j++)
					if (j != i && c->link[j].kind == NC_BOND)
						for (int q = 0; q < c->link[j].nports; q++)
							if (!strcmp(c->link[j].ports[q], l->ports[p]))
								snprintf(why, len, "%s is a port of two bonds",
								    l->ports[p]);
				if ((o = find(c, l->ports[p])) != NULL && o->kind != NC_PORT)
					snprintf(why, len, "bond %s: %s is a %s", l->name, l->ports[p],
					    kind_names[o->kind]);
				else if (o && (o->naddr || o->dhcp))
					snprintf(why, len, "bond %s: its port %s has addresses or DHCP "
					    "(give them to the bond)", l->name, l->ports[p]);
			}
		}
		if (*why) {
			if (!lenient)
				return -1;
			log_warnx("netd.ini: %s: section left out", why);
			drop(c, i--);
			continue;
		}
		if (l->kind != NC_BOND)
			continue;
		memcpy(b->name, l->name, sizeof(b->name));
		if (b->miimon < 0)
			b->miimon = 100;
		if (lacp) {
			if (b->lacp_rate < 0)
				b->lacp_rate = 1;
			if (b->min_links < 0)
				b->min_links = 1;
			if (b->ad_select < 0)
				b->ad_select = 0;
		}
		if (hashed && b->xmit_hash_policy < 0)
			b->xmit_hash_policy = name_index(bond_hash_names, "layer3+4");
	}
	return 0;
}

int
netconf_check(struct netconf *c, char *why, size_t len)
{
	return finish(c, 0, why, len);
}

int
netconf_load(const char *path, struct netconf *c, int *found)
{
	char err[512], why[160];
	dictionary *d;
	int missing, nsec;

	netconf_free(c);
	*found = 0;
	if ((d = conf_load_ini(path, 1, &missing, err, sizeof(err))) == NULL) {
		if (missing)
			return 0;
		log_warnx("%s", err);
		return -1;
	}
	*found = 1;
	nsec = iniparser_getnsec(d);
	for (int i = 0; i < nsec; i++) {
		const char *sec = iniparser_getsecname(d, i);
		int nk = iniparser_getsecnkeys(d, sec);
		const char **keys;

		if (!netconf_section(sec))
			continue;	/* the daemon's own: [api], [log], [netd] */
		/*
		 * A link's section with no keys names the link, as in net.apply
		 * (nasctl net apply sends it as {}): its addresses are none.
		 */
		if (nk <= 0 && strcmp(sec, "route") && strcmp(sec, "dns") &&
		    section_link(c, sec, why, sizeof(why)) == NULL)
			log_warnx("%s: [%s]: %s: left out", path, sec, why);
		if (nk <= 0 || (keys = calloc((size_t)nk, sizeof(*keys))) == NULL)
			continue;
		iniparser_getseckeys(d, sec, keys);
		for (int k = 0; k < nk; k++) {
			/* iniparser's keys are "section:key". */
			const char *key = keys[k] + strlen(sec) + 1;
			const char *v = iniparser_getstring(d, keys[k], "");

			if (netconf_set(c, sec, key, v, why, sizeof(why)) == -1)
				log_warnx("%s: [%s] %s: %s: left out", path, sec, key, why);
		}
		free(keys);
	}
	iniparser_freedict(d);
	(void)finish(c, 1, why, sizeof(why));
	return 0;
}

/* A JSON value as the text an ini file would hold; NULL when it has no such form. */
static const char *
json_text(struct json_object *v, char *buf, size_t len)
{
	size_t off = 0;

	switch (json_object_get_type(v)) {
	case json_type_string:
		return json_object_get_string(v);
	case json_type_int:
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(v));
		return buf;
	case json_type_boolean:
		return json_object_get_boolean(v) ? "yes" : "no";
	case json_type_array:
		*buf = '\0';
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *e = json_object_array_get_idx(v, i);

			if (!json_object_is_type(e, json_type_string) || off >= len)
				return NULL;
			off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "",
			    json_object_get_string(e));
		}
		return off < len ? buf : NULL;
	default:
		return NULL;
	}
}

static int
from_json(struct json_object *o, struct netconf *c, char *why, size_t len)
{
	char buf[1024], w[160];

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(why, len, "config must be an object of sections");
		return -1;
	}
	json_object_object_foreach(o, sec, keys) {
		if (!json_object_is_type(keys, json_type_object) || !netconf_section(sec)) {
			snprintf(why, len, "[%.40s]: not a section of netd.conf(5) (port NAME, "
			    "bond NAME, vlan NAME, route, dns) with an object of keys", sec);
			return -1;
		}
		json_object_object_foreach(keys, key, val) {
			const char *v = json_text(val, buf, sizeof(buf));

			if (v == NULL) {
				snprintf(why, len, "[%.40s] %.40s: a string, number, boolean or "
				    "list of strings", sec, key);
				return -1;
			}
			if (netconf_set(c, sec, key, v, w, sizeof(w)) == -1) {
				snprintf(why, len, "[%.40s] %.40s: %s", sec, key, w);
				return -1;
			}
		}
	}
	return finish(c, 0, why, len);
}

int
netconf_from_json(struct json_object *o, struct netconf *c, char *why, size_t len)
{
	netconf_free(c);
	if (from_json(o, c, why, len) == 0)
		return 0;
	netconf_free(c);
	return -1;
}

static void
print_addrs(const struct nc_link *l, FILE *f)
{
	char ip[64];

	if (l->naddr == 0)
		return;
	fprintf(f, "address = ");
	for (int i = 0; i < l->naddr; i++) {
		ip_format(l->addr[i].family, l->addr[i].addr, ip, sizeof(ip));
		fprintf(f, "%s%s/%d", i ? ", " : "", ip, l->addr[i].prefix);
	}
	fprintf(f, "\n");
}

static void
print_link(const struct nc_link *l, FILE *f)
{
	const struct net_bond_opts *b = &l->bond;

	fprintf(f, "\n[%s %s]\n", kind_names[l->kind], l->name);
	if (l->kind == NC_VLAN)
		fprintf(f, "link = %s\nid = %d\n", l->parent, l->vlan_id);
	if (l->kind == NC_BOND) {
		fprintf(f, "mode = %s\nports = ", bond_mode_names[b->mode]);
		for (int i = 0; i < l->nports; i++)
			fprintf(f, "%s%s", i ? ", " : "", l->ports[i]);
		fprintf(f, "\n");
		if (b->miimon >= 0)
			fprintf(f, "miimon = %d\n", b->miimon);
		if (b->mode == BOND_MODE_LACP && b->lacp_rate >= 0)
			fprintf(f, "lacp_rate = %s\n", bond_rate_names[b->lacp_rate]);
		if (b->mode == BOND_MODE_LACP && b->min_links >= 0)
			fprintf(f, "min_links = %d\n", b->min_links);
		if (b->mode == BOND_MODE_LACP && b->ad_select >= 0)
			fprintf(f, "ad_select = %s\n", bond_select_names[b->ad_select]);
		if (*b->primary)
			fprintf(f, "primary = %s\n", b->primary);
		if ((b->mode == 2 || b->mode == BOND_MODE_LACP || b->mode == 5) &&
		    b->xmit_hash_policy >= 0)
			fprintf(f, "xmit_hash_policy = %s\n", bond_hash_names[b->xmit_hash_policy]);
	}
	if (l->up >= 0)
		fprintf(f, "up = %s\n", l->up ? "yes" : "no");
	if (l->mtu)
		fprintf(f, "mtu = %u\n", l->mtu);
	print_addrs(l, f);
	if (l->dhcp)
		fprintf(f, "dhcp = yes\n");
	if (l->has_fallback) {
		char ip[64];

		ip_format(AF_INET, l->fallback.addr, ip, sizeof(ip));
		fprintf(f, "dhcp_fallback = %s/%d\n", ip, l->fallback.prefix);
	}
}

/*
 * Whether the file can hold l as it is, so that what is written reads
 * back the same: a link of the running state made outside netd ("Eth0",
 * "a;b") would be read back as another link, or break the lines after
 * it, so it is not written.
 */
static int
printable(const struct nc_link *l)
{
	if (!ifname_conf(l->name) || (l->kind == NC_VLAN && !ifname_conf(l->parent)))
		return 0;
	for (int i = 0; l->kind == NC_BOND && i < l->nports; i++)
		if (!ifname_conf(l->ports[i]))
			return 0;
	return 1;
}

void
netconf_print(const struct netconf *c, FILE *f)
{
	char ip[64];

	/* Ports first, then bonds, then VLANs: the order they are made in. */
	for (int k = NC_PORT; k <= NC_VLAN; k++)
		for (int i = 0; i < c->nlinks; i++)
			if (c->link[i].kind == k && printable(&c->link[i]))
				print_link(&c->link[i], f);
	if (c->has_gw[0] || c->has_gw[1]) {
		fprintf(f, "\n[route]\ngateway = ");
		for (int i = 0, n = 0; i < 2; i++)
			if (c->has_gw[i]) {
				ip_format(i ? AF_INET6 : AF_INET, c->gw[i], ip, sizeof(ip));
				fprintf(f, "%s%s", n++ ? ", " : "", ip);
			}
		fprintf(f, "\n");
	}
	if (c->has_dns) {
		fprintf(f, "\n[dns]\nservers =");
		for (int i = 0; i < c->ndns; i++)
			fprintf(f, "%s %s", i ? "," : "", c->dns[i]);
		fprintf(f, "\n");
	}
}

/*
 * The lines of path outside netconf's sections (the daemon's own [api],
 * [log], [netd] with their comments), trailing blank lines dropped.
 */
static void
copy_own_sections(const char *path, FILE *out)
{
	char *line = NULL, sec[64];
	size_t cap = 0;
	FILE *in;
	int skip = 0, blank = 0;

	if ((in = fopen(path, "re")) == NULL)
		return;
	while (getline(&line, &cap, in) > 0) {
		const char *p = line + strspn(line, " \t");

		if (*p == '[' && sscanf(p + 1, "%63[^]]", sec) == 1) {
			for (char *q = sec; *q; q++)
				*q = (char)tolower((unsigned char)*q);
			skip = netconf_section(sec);
		}
		if (skip)
			continue;
		/* Blank lines wait until a line that is not blank follows. */
		if (p[strspn(p, "\r\n")] == '\0') {
			blank++;
			continue;
		}
		for (; blank > 0; blank--)
			fputc('\n', out);
		fputs(line, out);
	}
	free(line);
	fclose(in);
}

int
netconf_save(const char *path, const struct netconf *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if ((f = open_memstream(&text, &len)) == NULL)
		return -1;
	copy_own_sections(path, f);
	netconf_print(c, f);
	if (fclose(f) != 0) {
		free(text);
		return -1;
	}
	rc = write_atomic(path, text);
	free(text);
	return rc;
}

static int
link_local(const struct net_addr *a)
{
	return a->family == AF_INET6 && a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
}

/* Fills a link of the running state from the kernel's link. */
static int
running_link(const struct net_link *k, struct nc_link *l)
{
	struct net_bond b;

	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", k->name);
	l->up = k->up;
	l->mtu = k->mtu;
	l->vlan_id = -1;
	l->kind = NC_PORT;
	if (*k->master) {
		/* The bond owns its ports' state. */
		l->up = -1;
		l->mtu = 0;
	}
	/* A bond's port has no client of its own (netd stops it first); the file never says so. */
	if (!*k->master)
		l->dhcp = dhcp_running(k->name, &l->fallback, &l->has_fallback);
	if (k->vlan_id >= 0) {
		l->kind = NC_VLAN;
		l->vlan_id = k->vlan_id;
		snprintf(l->parent, sizeof(l->parent), "%s", k->parent);
	}
	if (strcmp(k->kind, "bond") == 0) {
		if (net->bond_get(k->name, &b) != 0)
			return -1;
		l->kind = NC_BOND;
		l->bond.mode = b.mode;
		l->bond.miimon = b.miimon;
		l->bond.lacp_rate = b.mode == BOND_MODE_LACP ? b.lacp_rate : -1;
		l->bond.min_links = b.mode == BOND_MODE_LACP ? b.min_links : -1;
		l->bond.ad_select = b.mode == BOND_MODE_LACP ? b.ad_select : -1;
		snprintf(l->bond.primary, sizeof(l->bond.primary), "%s", b.primary);
		l->bond.xmit_hash_policy = b.mode == 2 || b.mode == BOND_MODE_LACP || b.mode == 5 ?
		    b.xmit_hash_policy : -1;
		snprintf(l->bond.name, sizeof(l->bond.name), "%s", b.name);
		l->nports = b.nports;
		for (int i = 0; i < b.nports; i++)
			snprintf(l->ports[i], NET_NAME_MAX, "%s", b.port[i].name);
	}
	return 0;
}

int
netconf_running(struct netconf *c)
{
	struct net_link *ls = NULL;
	struct net_addr *as = NULL;
	struct net_route *rs = NULL;
	struct nc_link *k;
	int nl, na, nr, rc = -1;

	netconf_free(c);
	if (net->link_list(&ls, &nl) == -1 || net->addr_list(&as, &na) == -1 ||
	    net->route_list(&rs, &nr) == -1)
		goto out;
	for (int i = 0; i < nl; i++) {
		if (strcmp(ls[i].name, "lo") == 0)
			continue;
		if ((k = netconf_grow(c)) == NULL || running_link(&ls[i], k) == -1)
			goto out;
	}
	for (int i = 0; i < na; i++) {
		struct nc_link *l = find(c, as[i].link);

		/* The kernel's own (SLAAC, privacy addresses) come and go with their
		   lifetimes; a lease's address is the client's. Neither is configuration. */
		if (l == NULL || link_local(&as[i]) || as[i].dynamic || dhcp_owns_addr(&as[i]))
			continue;
		if (l->naddr == NC_ADDRS) {
			errno = E2BIG;
			goto out;
		}
		l->addr[l->naddr++] = as[i];
	}
	for (int i = 0; i < nr; i++) {
		int f = fam_slot(rs[i].family);

		/*
		 * A route from a router advertisement or a DHCP client is not
		 * configuration: written back, its link-local gateway has no
		 * link in the file, and a static copy outlives the router.
		 */
		if (rs[i].dst_len != 0 || !rs[i].has_gw || c->has_gw[f] ||
		    (strcmp(rs[i].proto, "static") != 0 && strcmp(rs[i].proto, "boot") != 0) ||
		    dhcp_owns_route(rs[i].family, rs[i].gw, rs[i].link))
			continue;
		c->has_gw[f] = 1;
		memcpy(c->gw[f], rs[i].gw, 16);
		snprintf(c->gw_link[f], sizeof(c->gw_link[f]), "%s", rs[i].link);
	}
	/* As a rollback's target, the running state has no route where it has none. */
	for (int f = 0; f < 2; f++)
		c->gw_none[f] = !c->has_gw[f];
	c->ndns = dns_read(c->dns, NC_DNS);
	c->has_dns = c->ndns >= 0 && !dhcp_owns_dns((const char (*)[46])c->dns, c->ndns);
	if (c->ndns < 0)
		c->ndns = 0;
	rc = 0;
out:
	if (rc == -1) {
		int e = errno;

		netconf_free(c);
		errno = e;
	}
	free(ls);
	free(as);
	free(rs);
	return rc;
}
