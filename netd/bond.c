/*
 * Bonds: bond.create/delete/list/show and the bond.port and
 * bond.diagnosis events. A bond is made in the order the driver needs:
 * the bond with every option and the first board port's MAC (a MAC that
 * changes later breaks LACP with the switch), each port down, enslaved
 * (the driver opens it again), then the bond up. A step the kernel
 * refuses undoes the ones before it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "dhcp.h"
#include "lacp.h"
#include "netd.h"
#include "netconf.h"

#define BOND_WATCH	8	/* bonds whose last state is kept for events */
#define SAMPLE_AGE	5	/* seconds a traffic baseline is kept */

struct seen_bond {
	char		name[NET_NAME_MAX];
	struct net_bond	last;		/* for bond.port */
	char		codes[128];	/* for bond.diagnosis */
	struct net_bond	sample;		/* for single-port-traffic */
	time_t		sample_at;
};

static struct seen_bond seen[BOND_WATCH];

static struct seen_bond *
seen_of(const char *name, int make)
{
	struct seen_bond *free_slot = NULL;

	for (int i = 0; i < BOND_WATCH; i++) {
		if (strcmp(seen[i].name, name) == 0)
			return &seen[i];
		if (seen[i].name[0] == '\0' && free_slot == NULL)
			free_slot = &seen[i];
	}
	if (!make || free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
	return free_slot;
}

static void
forget(const char *name)
{
	struct seen_bond *s = seen_of(name, 0);

	if (s)
		memset(s, 0, sizeof(*s));
}

void
bond_reset(void)
{
	memset(seen, 0, sizeof(seen));
}

static time_t
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static const char *
bond_state(const struct net_bond *b)
{
	int in = 0;

	if (!b->up)
		return "down";
	if (!b->carrier)
		return "no-carrier";
	if (b->mode != BOND_MODE_LACP)
		return "up";
	for (int i = 0; i < b->nports; i++)
		in += lacp_in_bundle(b, &b->port[i]);
	return in == b->nports ? "aggregated" : "degraded";
}

static struct json_object *
mac_json(const unsigned char m[6])
{
	char buf[32];

	mac_format(m, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static struct json_object *
port_describe(const struct net_bond *b, const struct net_bond_port *p)
{
	struct json_object *o = json_object_new_object();
	int lacp = b->mode == BOND_MODE_LACP, in = lacp_in_bundle(b, p);

	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "carrier", json_object_new_boolean(p->carrier));
	json_object_object_add(o, "speed_mbps", p->speed_mbps >= 0 ? json_object_new_int(p->speed_mbps) : NULL);
	json_object_object_add(o, "duplex", json_object_new_string(p->duplex));
	json_object_object_add(o, "link_failures", json_object_new_int64(p->link_failures));
	json_object_object_add(o, "perm_mac", mac_json(p->perm_mac));
	if (lacp) {
		json_object_object_add(o, "in_aggregator", json_object_new_boolean(in));
		json_object_object_add(o, "aggregator_id", p->aggregator_id >= 0 ?
		    json_object_new_int(p->aggregator_id) : NULL);
		json_object_object_add(o, "actor_state", lacp_state_json(p->actor_state));
		json_object_object_add(o, "partner_state", lacp_state_json(p->partner_state));
		/* The kernel reports the partner of the active aggregator only. */
		json_object_object_add(o, "partner_mac", b->has_ad_info &&
		    p->aggregator_id == b->ad_aggregator ? mac_json(b->ad_partner_mac) : NULL);
	} else
		json_object_object_add(o, "backup", json_object_new_boolean(p->backup));
	json_object_object_add(o, "rx_bytes", json_object_new_int64((int64_t)p->rx_bytes));
	json_object_object_add(o, "tx_bytes", json_object_new_int64((int64_t)p->tx_bytes));
	return o;
}

static struct json_object *
diag_json(const struct bond_diag *d, int n)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "code", json_object_new_string(d[i].code));
		json_object_object_add(o, "message", json_object_new_string(d[i].message));
		json_object_array_add(a, o);
	}
	return a;
}

/* The traffic baseline of b: the last sample, renewed once it is old. */
static const struct net_bond *
baseline(const struct net_bond *b)
{
	struct seen_bond *s = seen_of(b->name, 1);
	static struct net_bond before;
	time_t now = mono();

	if (s == NULL)
		return NULL;
	if (s->sample_at == 0) {
		s->sample = *b;
		s->sample_at = now;
		return NULL;
	}
	before = s->sample;
	if (now - s->sample_at >= SAMPLE_AGE) {
		s->sample = *b;
		s->sample_at = now;
	}
	return &before;
}

static struct json_object *
bond_describe(const struct net_bond *b)
{
	struct json_object *o = json_object_new_object(), *ports = json_object_new_array(), *agg;
	struct bond_diag d[BOND_DIAG_MAX];
	int lacp = b->mode == BOND_MODE_LACP, n;

	json_object_object_add(o, "name", json_object_new_string(b->name));
	json_object_object_add(o, "mode", json_object_new_string(name_at(bond_mode_names, b->mode)));
	json_object_object_add(o, "state", json_object_new_string(bond_state(b)));
	json_object_object_add(o, "up", json_object_new_boolean(b->up));
	json_object_object_add(o, "carrier", json_object_new_boolean(b->carrier));
	json_object_object_add(o, "mac", mac_json(b->mac));
	json_object_object_add(o, "miimon", json_object_new_int(b->miimon));
	json_object_object_add(o, "xmit_hash_policy", json_object_new_string(
	    name_at(bond_hash_names, b->xmit_hash_policy)));
	json_object_object_add(o, "lacp_rate", lacp ?
	    json_object_new_string(name_at(bond_rate_names, b->lacp_rate)) : NULL);
	json_object_object_add(o, "min_links", json_object_new_int(b->min_links));
	json_object_object_add(o, "ad_select", lacp ?
	    json_object_new_string(name_at(bond_select_names, b->ad_select)) : NULL);
	json_object_object_add(o, "primary", *b->primary ? json_object_new_string(b->primary) : NULL);
	json_object_object_add(o, "active_port", *b->active_port ?
	    json_object_new_string(b->active_port) : NULL);
	for (int i = 0; i < b->nports; i++)
		json_object_array_add(ports, port_describe(b, &b->port[i]));
	json_object_object_add(o, "ports", ports);
	agg = NULL;
	if (lacp && b->has_ad_info) {
		agg = json_object_new_object();
		json_object_object_add(agg, "id", json_object_new_int(b->ad_aggregator));
		json_object_object_add(agg, "partner_mac", mac_json(b->ad_partner_mac));
		json_object_object_add(agg, "ports", json_object_new_int(b->ad_num_ports));
		json_object_object_add(agg, "actor_key", json_object_new_int(b->ad_actor_key));
		json_object_object_add(agg, "partner_key", json_object_new_int(b->ad_partner_key));
	}
	json_object_object_add(o, "active_aggregator", agg);
	n = lacp_diagnose(b, baseline(b), d, BOND_DIAG_MAX);
	json_object_object_add(o, "diagnosis", diag_json(d, n));
	return o;
}

/* The bond named by params' name; answers and returns -1 when there is none. */
static int
get_bond(struct rpc_call *c, struct json_object *params, struct net_bond *b)
{
	const char *name = rpc_param_str(params, "name", "");
	int rc;

	if (!ifname_valid(name)) {
		rpc_error(c, RPC_INVALID_PARAMS, "name is not a valid interface name");
		return -1;
	}
	if ((rc = net->bond_get(name, b)) == -1) {
		net_fail(c, "reading the bond");
		return -1;
	}
	if (rc == 1) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no bond of that name");
		return -1;
	}
	return 0;
}

static void
m_bond_show(struct rpc_call *c, struct json_object *params)
{
	struct net_bond b;

	if (get_bond(c, params, &b) == 0)
		rpc_result(c, bond_describe(&b));
}

static void
m_bond_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a = json_object_new_array(), *r;
	struct net_link *ls;
	struct net_bond b;
	int n;

	(void)params;
	if (net->link_list(&ls, &n) == -1) {
		json_object_put(a);
		net_fail(c, "listing links");
		return;
	}
	for (int i = 0; i < n; i++)
		if (strcmp(ls[i].kind, "bond") == 0 && net->bond_get(ls[i].name, &b) == 0)
			json_object_array_add(a, bond_describe(&b));
	free(ls);
	r = json_object_new_object();
	json_object_object_add(r, "bonds", a);
	rpc_result(c, r);
}

/* An address other than IPv6 link-local, or the default route, on the link. */
static int
management_link_itself(const char *name)
{
	struct net_addr *as;
	struct net_route *rs;
	int n, found = 0;

	if (net->addr_list(&as, &n) == 0) {
		for (int i = 0; i < n; i++)
			if (strcmp(as[i].link, name) == 0 && !(as[i].family == AF_INET6 &&
			    as[i].addr[0] == 0xfe && (as[i].addr[1] & 0xc0) == 0x80))
				found = 1;
		free(as);
	}
	if (net->route_list(&rs, &n) == 0) {
		for (int i = 0; i < n; i++)
			if (rs[i].dst_len == 0 && strcmp(rs[i].link, name) == 0)
				found = 1;
		free(rs);
	}
	return found;
}

/*
 * Whether the link carries what the caller is likely reaching us
 * through: an address other than IPv6 link-local, or the default route,
 * on the link itself or on a VLAN of it.
 */
int
management_link(const char *name)
{
	struct net_link *ls;
	int n, found = 0;

	if (net->link_list(&ls, &n) == 0) {
		for (int i = 0; i < n; i++)
			if (strcmp(ls[i].parent, name) == 0 && ls[i].vlan_id >= 0)
				found |= management_link_itself(ls[i].name);
		free(ls);
	}
	return found || management_link_itself(name);
}

/* Options given that the mode does not use are refused, not ignored. */
static int
check_mode_options(struct rpc_call *c, struct json_object *params, int mode)
{
	int hashed = mode == 2 || mode == BOND_MODE_LACP || mode == 5;

	if (mode != BOND_MODE_LACP && json_object_object_get_ex(params, "lacp_rate", NULL)) {
		rpc_error(c, NAS_ERR_INVALID, "lacp_rate applies to mode 802.3ad only");
		return -1;
	}
	if (mode != BOND_MODE_LACP && json_object_object_get_ex(params, "min_links", NULL)) {
		rpc_error(c, NAS_ERR_INVALID, "min_links applies to mode 802.3ad only");
		return -1;
	}
	if (mode != BOND_MODE_LACP && json_object_object_get_ex(params, "ad_select", NULL)) {
		rpc_error(c, NAS_ERR_INVALID, "ad_select applies to mode 802.3ad only");
		return -1;
	}
	if (!BOND_MODE_HAS_PRIMARY(mode) && json_object_object_get_ex(params, "primary", NULL)) {
		rpc_error(c, NAS_ERR_INVALID, "primary applies to modes active-backup, balance-tlb "
		    "and balance-alb only");
		return -1;
	}
	if (!hashed && json_object_object_get_ex(params, "xmit_hash_policy", NULL)) {
		rpc_error(c, NAS_ERR_INVALID, "xmit_hash_policy applies to modes balance-xor, "
		    "802.3ad and balance-tlb only");
		return -1;
	}
	return 0;
}

/* The ports of params into names, each checked; answers and returns -1 when one is bad. */
static int
check_ports(struct rpc_call *c, struct json_object *params, const char *bond,
    char (*names)[NET_NAME_MAX], struct net_link *ls)
{
	struct json_object *ports;
	int n, force = rpc_param_bool(params, "force", 0);

	json_object_object_get_ex(params, "ports", &ports);
	n = (int)json_object_array_length(ports);
	for (int i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(ports, i);
		const char *p = json_object_get_string(v);
		int rc;

		if (!json_object_is_type(v, json_type_string) || !ifname_conf(p)) {
			rpc_error(c, RPC_INVALID_PARAMS, "ports[%d] is not an interface name netd.ini "
			    "can hold (%s)", i, IFNAME_CONF_RULE);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(names[j], p) == 0) {
				rpc_error(c, RPC_INVALID_PARAMS, "ports[%d] repeats %s", i, p);
				return -1;
			}
		snprintf(names[i], NET_NAME_MAX, "%s", p);
		if ((rc = net->link_get(p, &ls[i])) != 0) {
			if (rc == 1)
				rpc_error(c, NAS_ERR_NOT_FOUND, "no such port: %s", p);
			else
				net_fail(c, "reading a port");
			return -1;
		}
		if (strcmp(p, bond) == 0 || strcmp(ls[i].kind, "bond") == 0 ||
		    strcmp(p, "lo") == 0) {
			rpc_error(c, NAS_ERR_INVALID, "%s cannot be a port of a bond", p);
			return -1;
		}
		if (*ls[i].master) {
			rpc_error(c, NAS_ERR_BUSY, "%s is already a port of %s", p, ls[i].master);
			return -1;
		}
		if (dhcp_active(p)) {
			rpc_error(c, NAS_ERR_BUSY, "a DHCP client runs on %s: stop it (dhcp.stop) and "
			    "run DHCP on the bond", p);
			return -1;
		}
		if (!force && management_link(p)) {
			rpc_error(c, NAS_ERR_REFUSED, "%s has addresses or the default route: a client "
			    "reaching this unit through it would lose it; say force (and give the "
			    "bond the address) to bond it anyway", p);
			return -1;
		}
	}
	return n;
}

/* The options of params with a NAS's defaults for the rest. */
static void
make_opts(struct json_object *params, int mode, struct net_bond_opts *o)
{
	int lacp = mode == BOND_MODE_LACP, hashed = mode == 2 || lacp || mode == 5;
	const char *s;

	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", rpc_param_str(params, "name", ""));
	o->mode = mode;
	o->miimon = (int)rpc_param_int(params, "miimon", 100);
	o->lacp_rate = -1;
	o->xmit_hash_policy = -1;
	o->min_links = -1;
	o->ad_select = -1;
	if (lacp) {
		s = rpc_param_str(params, "lacp_rate", "fast");
		o->lacp_rate = name_index(bond_rate_names, s);
		o->min_links = (int)rpc_param_int(params, "min_links", 1);
		/* stable: the aggregator changes only when it fails */
		o->ad_select = name_index(bond_select_names, rpc_param_str(params, "ad_select",
		    "stable"));
	}
	snprintf(o->primary, sizeof(o->primary), "%s", rpc_param_str(params, "primary", ""));
	if (hashed)
		o->xmit_hash_policy = name_index(bond_hash_names,
		    rpc_param_str(params, "xmit_hash_policy", "layer3+4"));
}

/* Undoes a creation cut short: the bond goes (releasing its ports), ports as they were. */
static void
undo_create(const char *bond, struct net_link *ls, int n)
{
	int e = errno;
	char msg[256];

	snprintf(msg, sizeof(msg), "%s", net_errmsg());
	if (net->link_del(bond) == -1)
		log_warn("bond %s: undoing the creation", bond);
	for (int i = 0; i < n; i++)
		if (net->link_set(ls[i].name, ls[i].up, 0) == -1)
			log_warn("bond %s: restoring %s", bond, ls[i].name);
	net_set_errmsg(msg);
	errno = e;
}

/*
 * Makes bond o over ports in the driver's order: the bond down with the
 * first board port's MAC (so it keeps one the switch knows), each port
 * down, enslaved, up, then the bond up. A step refused undoes the ones
 * before it; *step then says which (errno and net_errmsg() say why).
 */
int
bond_make(const struct net_bond_opts *opts, char (*ports)[NET_NAME_MAX], int n,
    const char **step)
{
	struct net_link ls[NET_BOND_PORTS];
	struct net_bond_opts o = *opts;
	int mac, rc;

	*step = "reading a port";
	if (n < 1 || n > NET_BOND_PORTS) {
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < n; i++)
		if ((rc = net->link_get(ports[i], &ls[i])) != 0) {
			if (rc == 1)
				errno = ENODEV;
			return -1;
		}
	for (mac = 0; mac < n && link_board_label(ports[mac]) == NULL; mac++)
		;
	memcpy(o.mac, ls[mac < n ? mac : 0].mac, 6);
	*step = "creating the bond";
	if (net->bond_create(&o) == -1)
		return -1;
	for (int i = 0; i < n; i++) {
		*step = "taking a port down";
		if (net->link_set(ports[i], 0, 0) == -1)
			goto undo;
		*step = "making a port part of the bond";
		if (net->link_set_master(ports[i], o.name) == -1)
			goto undo;
		*step = "bringing a port up";
		if (net->link_set(ports[i], 1, 0) == -1)
			goto undo;
	}
	*step = "bringing the bond up";
	if (net->link_set(o.name, 1, 0) == -1)
		goto undo;
	forget(o.name);
	log_info("bond %s made (%s, %d ports)", o.name, bond_mode_names[o.mode], n);
	return 0;
undo:
	undo_create(o.name, ls, n);
	return -1;
}

/* Deletes a bond; the driver closed its ports as it let them go: they come up again. */
int
bond_unmake(const struct net_bond *b)
{
	if (net->link_del(b->name) == -1)
		return -1;
	forget(b->name);
	for (int i = 0; i < b->nports; i++)
		if (net->link_set(b->port[i].name, 1, 0) == -1)
			log_warn("bond %s deleted: bringing %s up", b->name, b->port[i].name);
	log_info("bond %s deleted", b->name);
	return 0;
}

static int
is_port(const char *name, char (*ports)[NET_NAME_MAX], int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ports[i], name) == 0)
			return 1;
	return 0;
}

static void
m_bond_create(struct rpc_call *c, struct json_object *params)
{
	const char *name = rpc_param_str(params, "name", "");
	int mode = name_index(bond_mode_names, rpc_param_str(params, "mode", "")), n;
	char ports[NET_BOND_PORTS][NET_NAME_MAX];
	struct net_link ls[NET_BOND_PORTS], l;
	struct net_bond_opts o;
	struct net_bond b;
	const char *step;

	if (!ifname_conf(name)) {
		rpc_error(c, RPC_INVALID_PARAMS, "name is not an interface name netd.ini can hold "
		    "(%s)", IFNAME_CONF_RULE);
		return;
	}
	if (net->link_get(name, &l) == 0) {
		rpc_error(c, NAS_ERR_EXISTS, "a link named %s exists", name);
		return;
	}
	/* Missing now (no driver yet), the port would find its name taken. */
	if (link_board_label(name) != NULL) {
		rpc_error(c, NAS_ERR_EXISTS, "%s is the name of the board's port %s", name,
		    link_board_label(name));
		return;
	}
	if (check_mode_options(c, params, mode) == -1 ||
	    (n = check_ports(c, params, name, ports, ls)) == -1)
		return;
	make_opts(params, mode, &o);
	if (*o.primary && !is_port(o.primary, ports, n)) {
		rpc_error(c, NAS_ERR_INVALID, "primary must be one of the ports");
		return;
	}
	if (bond_make(&o, ports, n, &step) == -1) {
		net_fail(c, step);
		return;
	}
	netconf_changed();
	if (net->bond_get(name, &b) != 0) {
		net_fail(c, "reading the bond");
		return;
	}
	rpc_result(c, bond_describe(&b));
}

static void
m_bond_delete(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r, *a;
	struct net_bond b;

	if (get_bond(c, params, &b) == -1)
		return;
	if (!rpc_param_bool(params, "force", 0) && management_link(b.name)) {
		rpc_error(c, NAS_ERR_REFUSED, "%s has addresses or the default route: a client "
		    "reaching this unit through it would lose it; say force to delete it anyway",
		    b.name);
		return;
	}
	if (bond_unmake(&b) == -1) {
		net_fail(c, "deleting the bond");
		return;
	}
	netconf_changed();
	/* The ports have their own MACs again. */
	a = json_object_new_array();
	for (int i = 0; i < b.nports; i++)
		json_object_array_add(a, json_object_new_string(b.port[i].name));
	r = json_object_new_object();
	json_object_object_add(r, "name", json_object_new_string(b.name));
	json_object_object_add(r, "ports", a);
	rpc_result(c, r);
}

static void
port_event(const struct net_bond *b, const struct net_bond_port *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "bond", json_object_new_string(b->name));
	json_object_object_add(o, "port", json_object_new_string(p->name));
	json_object_object_add(o, "in_aggregator", json_object_new_boolean(lacp_in_bundle(b, p)));
	json_object_object_add(o, "carrier", json_object_new_boolean(p->carrier));
	json_object_object_add(o, "aggregator_id", p->aggregator_id >= 0 ?
	    json_object_new_int(p->aggregator_id) : NULL);
	json_object_object_add(o, "actor_state", lacp_state_json(p->actor_state));
	json_object_object_add(o, "partner_state", lacp_state_json(p->partner_state));
	nas_event("bond.port", o);
}

static const struct net_bond_port *
port_in(const struct net_bond *b, const char *name)
{
	for (int i = 0; i < b->nports; i++)
		if (strcmp(b->port[i].name, name) == 0)
			return &b->port[i];
	return NULL;
}

/* One bond against its last look: bond.port per port that joined or left, bond.diagnosis. */
static void
watch_one(const struct net_bond *b)
{
	struct seen_bond *s = seen_of(b->name, 1);
	struct bond_diag d[BOND_DIAG_MAX];
	char codes[128] = "";
	int n, fresh;

	if (s == NULL)
		return;
	fresh = s->last.name[0] == '\0';
	for (int i = 0; i < b->nports; i++) {
		const struct net_bond_port *p = &b->port[i], *q = fresh ? NULL : port_in(&s->last, p->name);

		if (q == NULL || lacp_in_bundle(b, p) != lacp_in_bundle(&s->last, q) ||
		    p->carrier != q->carrier)
			port_event(b, p);
	}
	n = lacp_diagnose(b, NULL, d, BOND_DIAG_MAX);
	for (int i = 0; i < n; i++)
		if (strstr(codes, d[i].code) == NULL) {
			strncat(codes, d[i].code, sizeof(codes) - strlen(codes) - 2);
			strcat(codes, " ");
		}
	if (fresh || strcmp(codes, s->codes) != 0) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "bond", json_object_new_string(b->name));
		json_object_object_add(o, "state", json_object_new_string(bond_state(b)));
		json_object_object_add(o, "diagnosis", diag_json(d, n));
		nas_event("bond.diagnosis", o);
		snprintf(s->codes, sizeof(s->codes), "%s", codes);
	}
	s->last = *b;
}

void
bond_watch(void)
{
	struct net_link *ls;
	struct net_bond b;
	int n;

	if (net->link_list(&ls, &n) == -1) {
		log_warn("bond monitor: listing links");
		return;
	}
	/* Bonds deleted behind netd's back give their slots back. */
	for (int k = 0; k < BOND_WATCH; k++) {
		int found = 0;

		for (int i = 0; i < n && seen[k].name[0]; i++)
			found |= strcmp(ls[i].name, seen[k].name) == 0 && strcmp(ls[i].kind, "bond") == 0;
		if (!found)
			memset(&seen[k], 0, sizeof(seen[k]));
	}
	for (int i = 0; i < n; i++)
		if (strcmp(ls[i].kind, "bond") == 0 && net->bond_get(ls[i].name, &b) == 0)
			watch_one(&b);
	free(ls);
}

static const char *const mode_choices[] = { "balance-rr", "active-backup", "balance-xor",
	"broadcast", "802.3ad", "balance-tlb", "balance-alb", NULL };
static const char *const hash_choices[] = { "layer2", "layer2+3", "layer3+4", "encap2+3",
	"encap3+4", NULL };
static const char *const rate_choices[] = { "slow", "fast", NULL };
static const char *const select_choices[] = { "stable", "bandwidth", "count", NULL };

static const struct rpc_param p_bond_create[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the bond's interface name (bond0)" },
	{ "ports", RPC_ARRAY, RPC_REQUIRED, 1, NET_BOND_PORTS, NULL,
	  "its ports; the first board port's MAC (else the first port's) becomes the bond's" },
	{ "mode", RPC_STRING, RPC_REQUIRED, 0, 0, mode_choices, "bonding mode" },
	{ "lacp_rate", RPC_STRING, 0, 0, 0, rate_choices, "802.3ad: LACPDU rate asked of the partner (fast)" },
	{ "xmit_hash_policy", RPC_STRING, 0, 0, 0, hash_choices,
	  "balance-xor, 802.3ad, balance-tlb: how flows map to ports (layer3+4)" },
	{ "miimon", RPC_INT, 0, 0, 10000, NULL, "link check interval in ms (100)" },
	{ "min_links", RPC_INT, 0, 0, NET_BOND_PORTS, NULL, "802.3ad: ports needed for carrier (1)" },
	{ "ad_select", RPC_STRING, 0, 0, 0, select_choices,
	  "802.3ad: how the active aggregator is chosen (stable)" },
	{ "primary", RPC_STRING, 0, 1, 15, NULL,
	  "active-backup, balance-tlb, balance-alb: the port used while it has carrier" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "bond ports that carry addresses or the default route" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_bond_name[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the bond" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_bond_delete[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the bond" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "delete a bond that carries addresses or the default route" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method bond_methods[] = {
	{ "bond.list", m_bond_list, NULL, 0, "every bond, as bond.show" },
	{ "bond.show", m_bond_show, p_bond_name, 0, "a bond: options, ports, LACP state, diagnosis" },
	{ "bond.create", m_bond_create, p_bond_create, RPC_MUTATES, "make a bond of ports" },
	{ "bond.delete", m_bond_delete, p_bond_delete, RPC_MUTATES,
	  "delete a bond; its ports get their own MACs back" },
	{ NULL, NULL, NULL, 0, NULL }
};
