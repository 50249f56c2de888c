/*
 * raidd's API: the method table with its parameter policies. The common
 * methods (system.*, events.*, job.*) come from libnas.
 */
#include "raidd.h"

static const char *const md_paths[] = { "/proc/mdstat", NULL };
static const char *const dm_paths[] = { "/dev/mapper/control", "/sys/module/dm_mod", NULL };

const struct nas_feature raidd_features[] = {
	{ "md", md_paths, "load md_mod" },
	{ "device-mapper", dm_paths, "load dm_mod" },
	{ NULL, NULL, NULL }
};

static void
raidd_info(struct json_object *r)
{
	nas_feature_report(raidd_features, r);
}

static const struct rpc_method raidd_methods[] = {
	{ NULL, NULL, NULL, 0, NULL }
};

const struct nas_daemon raidd_daemon = {
	.name = "raidd",
	.methods = raidd_methods,
	.info = raidd_info,
};
