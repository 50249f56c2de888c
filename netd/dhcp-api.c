/*
 * dhcp.start, dhcp.stop and dhcp.renew: a DHCPv4 client on a port, a
 * bond or a VLAN (dhcp.c). The lease shows in link.show's "dhcp".
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "dhcp.h"
#include "netd.h"
#include "netconf.h"

/* The link of params: one netd may configure. -1 answered. */
static int
dhcp_link(struct rpc_call *c, struct json_object *params, struct net_link *l)
{
	const char *name = rpc_param_str(params, "link", "");

	if (strcmp(name, "lo") == 0) {
		rpc_error(c, RPC_INVALID_PARAMS, "netd does not configure lo");
		return -1;
	}
	/* Its client goes to netd.ini: a name the file cannot hold is refused. */
	if (!ifname_conf(name)) {
		rpc_error(c, RPC_INVALID_PARAMS, "link is not an interface name netd.ini can hold");
		return -1;
	}
	return get_link(c, params, "link", l);
}

static void
answer(struct rpc_call *c, const char *name)
{
	struct json_object *r = json_object_new_object(), *d = dhcp_describe(name);

	json_object_object_add(r, "link", json_object_new_string(name));
	json_object_object_add(r, "dhcp", d);
	rpc_result(c, r);
}

static void
m_dhcp_start(struct rpc_call *c, struct json_object *params)
{
	const char *fb = rpc_param_str(params, "fallback", NULL);
	struct net_addr fallback;
	struct net_link l;
	char why[128];

	if (dhcp_link(c, params, &l) == -1)
		return;
	if (*l.master) {
		rpc_error(c, NAS_ERR_INVALID, "%s is a port of %s: run DHCP on the bond", l.name,
		    l.master);
		return;
	}
	if (fb && dhcp_fallback_parse(fb, &fallback, why, sizeof(why)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "fallback: %s", why);
		return;
	}
	if (dhcp_start(l.name, fb ? &fallback : NULL) == -1) {
		if (errno == EBUSY)
			rpc_error(c, NAS_ERR_BUSY, "a DHCP client runs on %s", l.name);
		else if (errno == ENOSPC)
			rpc_error(c, NAS_ERR_LIMIT, "DHCP clients run on %d links", DHCP_LINKS);
		else
			net_fail(c, "bringing the link up");
		return;
	}
	netconf_changed();
	answer(c, l.name);
}

static void
m_dhcp_stop(struct rpc_call *c, struct json_object *params)
{
	struct net_link l;

	if (dhcp_link(c, params, &l) == -1)
		return;
	if (dhcp_bound(l.name) && !rpc_param_bool(params, "force", 0)) {
		rpc_error(c, NAS_ERR_REFUSED, "%s has a lease: a client reaching this unit through "
		    "its address would lose it; say force to stop DHCP anyway", l.name);
		return;
	}
	if (dhcp_stop(l.name) == -1) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no DHCP client runs on %s", l.name);
		return;
	}
	netconf_changed();
	answer(c, l.name);
}

static void
m_dhcp_renew(struct rpc_call *c, struct json_object *params)
{
	struct net_link l;

	if (dhcp_link(c, params, &l) == -1)
		return;
	if (dhcp_renew(l.name) == -1) {
		if (errno == ESRCH)
			rpc_error(c, NAS_ERR_NOT_FOUND, "no DHCP client runs on %s", l.name);
		else
			rpc_error(c, NAS_ERR_BUSY, "the client on %s is between restarts", l.name);
		return;
	}
	answer(c, l.name);
}

static const struct rpc_param p_dhcp_start[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "a port, bond or VLAN" },
	{ "fallback", RPC_STRING, 0, 1, 18, NULL,
	  "an IPv4 CIDR address applied while no lease is had" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_dhcp_stop[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the link" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "stop even when a lease is bound" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param p_dhcp_link[] = {
	{ "link", RPC_STRING, RPC_REQUIRED, 1, 15, NULL, "the link" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method dhcp_methods[] = {
	{ "dhcp.start", m_dhcp_start, p_dhcp_start, RPC_MUTATES,
	  "run a DHCPv4 client on a link; its lease shows in link.show" },
	{ "dhcp.stop", m_dhcp_stop, p_dhcp_stop, RPC_MUTATES,
	  "stop it; the lease's address, route and name servers go" },
	{ "dhcp.renew", m_dhcp_renew, p_dhcp_link, RPC_MUTATES, "renew the lease now" },
	{ NULL, NULL, NULL, 0, NULL }
};
