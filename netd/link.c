/*
 * Links: the board's ports by their board.ini names, and every other
 * link the kernel has; up/down, MTU, VLANs, and link.state events from
 * the kernel's own notifications (link_watch runs when the RTNLGRP_LINK
 * socket becomes readable, never on a timer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp.h"
#include "netd.h"
#include "netconf.h"

static struct board board;

/* The last look at the links, for link.state. */
static struct net_link *seen;
static int nseen;

void
link_set_board(const struct board *b)
{
	board = *b;
}

const char *
link_board_label(const char *name)
{
	for (int i = 0; i < board.nports; i++)
		if (strcmp(board.port[i].name, name) == 0)
			return board.port[i].label;
	return NULL;
}

/* "up", "no-carrier" (up, nothing plugged or the peer down) or "down". */
static const char *
link_state(const struct net_link *l)
{
	return !l->up ? "down" : l->carrier ? "up" : "no-carrier";
}

static void
add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)(v > INT64_MAX ? INT64_MAX : v)));
}

static struct json_object *
counters(const struct net_link *l)
{
	struct json_object *c = json_object_new_object();

	add_u64(c, "rx_bytes", l->rx_bytes);
	add_u64(c, "tx_bytes", l->tx_bytes);
	add_u64(c, "rx_packets", l->rx_packets);
	add_u64(c, "tx_packets", l->tx_packets);
	add_u64(c, "rx_errors", l->rx_errors);
	add_u64(c, "tx_errors", l->tx_errors);
	add_u64(c, "rx_dropped", l->rx_dropped);
	add_u64(c, "tx_dropped", l->tx_dropped);
	return c;
}

struct json_object *
link_describe(const struct net_link *l)
{
	struct json_object *o = json_object_new_object();
	const char *label = link_board_label(l->name);
	char mac[32];

	mac_format(l->mac, mac, sizeof(mac));
	json_object_object_add(o, "name", json_object_new_string(l->name));
	json_object_object_add(o, "kind", json_object_new_string(*l->kind ? l->kind :
	    strcmp(l->name, "lo") == 0 ? "loopback" : "ether"));
	json_object_object_add(o, "port", label ? json_object_new_string(label) : NULL);
	json_object_object_add(o, "state", json_object_new_string(link_state(l)));
	json_object_object_add(o, "up", json_object_new_boolean(l->up));
	json_object_object_add(o, "carrier", json_object_new_boolean(l->carrier));
	json_object_object_add(o, "operstate", json_object_new_string(l->operstate));
	json_object_object_add(o, "mtu", json_object_new_int((int)l->mtu));
	json_object_object_add(o, "mac", json_object_new_string(mac));
	json_object_object_add(o, "speed_mbps", l->speed_mbps >= 0 ?
	    json_object_new_int(l->speed_mbps) : NULL);
	json_object_object_add(o, "duplex", json_object_new_string(l->duplex));
	json_object_object_add(o, "master", *l->master ? json_object_new_string(l->master) : NULL);
	if (l->vlan_id >= 0) {
		json_object_object_add(o, "parent", json_object_new_string(l->parent));
		json_object_object_add(o, "vlan_id", json_object_new_int(l->vlan_id));
	}
	json_object_object_add(o, "counters", counters(l));
	json_object_object_add(o, "dhcp", dhcp_describe(l->name));
	return o;
}

/* A board port the kernel does not have (no driver, renamed wrongly). */
static struct json_object *
missing_port(const struct board_slot *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "port", json_object_new_string(p->label));
	json_object_object_add(o, "state", json_object_new_string("missing"));
	return o;
}

static void
m_link_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a, *r;
	struct net_link *ls;
	int n;

	(void)params;
	if (net->link_list(&ls, &n) == -1) {
		net_fail(c, "listing links");
		return;
	}
	a = json_object_new_array();
	/* Board ports first, in board order, so the UI shows LAN 1, LAN 2 ... */
	for (int i = 0; i < board.nports; i++) {
		int j;

		for (j = 0; j < n && strcmp(ls[j].name, board.port[i].name) != 0; j++)
			;
		json_object_array_add(a, j < n ? link_describe(&ls[j]) : missing_port(&board.port[i]));
	}
	for (int j = 0; j < n; j++)
		if (link_board_label(ls[j].name) == NULL)
			json_object_array_add(a, link_describe(&ls[j]));
	free(ls);
	r = json_object_new_object();
	json_object_object_add(r, "links", a);
	rpc_result(c, r);
}

/* The link named by params' key into l; answers and returns -1 if none. */
int
get_link(struct rpc_call *c, struct json_object *params, const char *key,
    struct net_link *l)
{
	const char *name = rpc_param_str(params, key, "");
	int rc;

	if (!ifname_valid(name)) {
		rpc_error(c, RPC_INVALID_PARAMS, "%s is not a valid interface name", key);
		return -1;
	}
	if ((rc = net->link_get(name, l)) == -1) {
		net_fail(c, "reading the link");
		return -1;
	}
	if (rc == 1) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no such link");
		return -1;
	}
	return 0;
}

static void
m_link_show(struct rpc_call *c, struct json_object *params)
{
	struct net_link l;

	if (get_link(c, params, "link", &l) == 0)
		rpc_result(c, link_describe(&l));
}

static void
m_link_set(struct rpc_call *c, struct json_object *params)
{
	struct net_link l;
	struct json_object *v;
	int up = -1;
	unsigned mtu = 0;

	if (get_link(c, params, "link", &l) == -1)
		return;
	if (json_object_object_get_ex(params, "up", &v))
		up = json_object_get_boolean(v);
	if (json_object_object_get_ex(params, "mtu", &v))
		mtu = (unsigned)json_object_get_int(v);
	if (up == -1 && mtu == 0) {
		rpc_error(c, RPC_INVALID_PARAMS, "nothing to change: give up or mtu");
		return;
	}
	/*
	 * Down, or another MTU (a peer that keeps the old one drops the
	 * larger frames), on the link the caller may be reaching us
	 * through, or on a port of such a bond: refused without force
	 * (net.apply with confirm_s is the way that comes back by itself).
	 */
	if ((up == 0 || (mtu && mtu != l.mtu)) && !rpc_param_bool(params, "force", 0) &&
	    (management_link(l.name) || (*l.master && management_link(l.master)))) {
		rpc_error(c, NAS_ERR_REFUSED, "%s carries addresses or the default route (%s): "
		    "reaching this unit through it would lose it; say force, or use net.apply "
		    "with confirm_s", l.name, *l.master ? l.master : "itself");
		return;
	}
	if (net->link_set(l.name, up, mtu) == -1) {
		net_fail(c, "changing the link");
		return;
	}
	netconf_changed();
	if (net->link_get(l.name, &l) != 0) {
		net_fail(c, "reading the link");
		return;
	}
	rpc_result(c, link_describe(&l));
}

static void
m_vlan_create(struct rpc_call *c, struct json_object *params)
{
	struct net_link parent, l;
	int id = (int)rpc_param_int(params, "id", 0);
	char name[64];

	if (get_link(c, params, "link", &parent) == -1)
		return;
	snprintf(name, sizeof(name), "%s", rpc_param_str(params, "name", ""));
	if (*name == '\0')
		snprintf(name, sizeof(name), "%s.%d", parent.name, id);
	if (!ifname_conf(name) || !ifname_conf(parent.name)) {
		rpc_error(c, RPC_INVALID_PARAMS, "the VLAN's name or its link's is not an interface "
		    "name netd.ini can hold (1-15 characters, %s; give name when link.id is "
		    "longer)", IFNAME_CONF_RULE);
		return;
	}
	if (net->link_get(name, &l) == 0) {
		rpc_error(c, NAS_ERR_EXISTS, "a link of that name exists");
		return;
	}
	if (link_board_label(name) != NULL) {
		rpc_error(c, NAS_ERR_EXISTS, "%s is the name of the board's port %s", name,
		    link_board_label(name));
		return;
	}
	if (net->vlan_add(parent.name, id, name) == -1) {
		net_fail(c, "creating the VLAN");
		return;
	}
	netconf_changed();
	if (net->link_get(name, &l) != 0) {
		net_fail(c, "reading the VLAN");
		return;
	}
	rpc_result(c, link_describe(&l));
}

static void
m_vlan_delete(struct rpc_call *c, struct json_object *params)
{
	struct net_link l;

	if (get_link(c, params, "name", &l) == -1)
		return;
	if (l.vlan_id < 0) {
		rpc_error(c, NAS_ERR_INVALID, "%s is not a VLAN", l.name);
		return;
	}
	if (!rpc_param_bool(params, "force", 0) && management_link(l.name)) {
		rpc_error(c, NAS_ERR_REFUSED, "%s carries addresses or the default route: reaching "
		    "this unit through it would lose it; say force, or use net.apply with confirm_s",
		    l.name);
		return;
	}
	if (net->link_del(l.name) == -1) {
		net_fail(c, "deleting the VLAN");
		return;
	}
	netconf_changed();
	rpc_result(c, json_object_new_object());
}

static struct json_object *
state_event(const struct net_link *l, int gone)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "link", json_object_new_string(l->name));
	json_object_object_add(o, "state", json_object_new_string(gone ? "gone" : link_state(l)));
	json_object_object_add(o, "up", json_object_new_boolean(!gone && l->up));
	json_object_object_add(o, "carrier", json_object_new_boolean(!gone && l->carrier));
	json_object_object_add(o, "operstate", json_object_new_string(gone ? "gone" : l->operstate));
	json_object_object_add(o, "speed_mbps", !gone && l->speed_mbps >= 0 ?
	    json_object_new_int(l->speed_mbps) : NULL);
	return o;
}

static const struct net_link *
find_in(const struct net_link *ls, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ls[i].name, name) == 0)
			return &ls[i];
	return NULL;
}

void
link_watch(void)
{
	struct net_link *now;
	const struct net_link *was;
	int n;

	if (net->link_list(&now, &n) == -1) {
		log_warn("link monitor: listing links");
		return;
	}
	for (int i = 0; i < n; i++) {
		was = find_in(seen, nseen, now[i].name);
		if (was == NULL || was->up != now[i].up || was->carrier != now[i].carrier ||
		    strcmp(was->operstate, now[i].operstate) != 0 ||
		    was->speed_mbps != now[i].speed_mbps)
			nas_event("link.state", state_event(&now[i], 0));
	}
	for (int i = 0; i < nseen; i++)
		if (find_in(now, n, seen[i].name) == NULL)
			nas_event("link.state", state_event(&seen[i], 1));
	free(seen);
	seen = now;
	nseen = n;
}

/* Forgets the last look; the next link_watch takes one silently. */
void
link_watch_reset(void)
{
	free(seen);
	seen = NULL;
	nseen = 0;
	if (net->link_list(&seen, &nseen) == -1) {
		seen = NULL;
		nseen = 0;
	}
}

static const struct rpc_param p_link[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "interface name (lan1, bond0 ...)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_link_set[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "interface name" },
	{ "up", RPC_BOOL, 0, 0, 0, NULL, "bring the link up (true) or down (false)" },
	{ "mtu", RPC_INT, 0, 68, 65535, NULL, "MTU in bytes; the driver may allow less" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL,
	  "take down or change the MTU of a link that carries addresses or the default route" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_vlan_create[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the parent link" },
	{ "id", RPC_INT, RPC_REQUIRED, 1, 4094, NULL, "802.1Q VLAN id" },
	{ "name", RPC_STRING, 0, 1, 15, NULL, "the VLAN link's name; default LINK.ID" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_vlan_delete[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the VLAN link" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "delete a VLAN that carries addresses or the default route" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method link_methods[] = {
	{ "link.list", m_link_list, NULL, 0, "the board's ports, then every other link" },
	{ "link.show", m_link_show, p_link, 0, "one link: state, speed, counters" },
	{ "link.set", m_link_set, p_link_set, RPC_MUTATES, "bring a link up or down, set its MTU" },
	{ "vlan.create", m_vlan_create, p_vlan_create, RPC_MUTATES, "an 802.1Q VLAN on a link" },
	{ "vlan.delete", m_vlan_delete, p_vlan_delete, RPC_MUTATES, "delete a VLAN link" },
	{ NULL, NULL, NULL, 0, NULL }
};
