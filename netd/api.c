/*
 * netd's API: the method table with its parameter policies. The common
 * methods (system.*, events.*, job.*) come from libnas.
 */
#include "netd.h"

static const char *const bond_paths[] = { "/sys/class/net/bonding_masters",
	"/sys/module/bonding", NULL };

const struct nas_feature netd_features[] = {
	{ "bonding", bond_paths, "load bonding" },
	{ NULL, NULL, NULL }
};

static void
netd_info(struct json_object *r)
{
	nas_feature_report(netd_features, r);
}

static const struct rpc_method netd_methods[] = {
	{ NULL, NULL, NULL, 0, NULL }
};

static const struct rpc_method *const netd_tables[] = { netd_methods, NULL };

const struct nas_daemon netd_daemon = {
	.name = "netd",
	.methods = netd_tables,
	.info = netd_info,
};
