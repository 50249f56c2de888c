/*
 * powerd's API: the method table with its parameter policies. The common
 * methods (system.*, events.*, job.*) come from libnas.
 */
#include "powerd.h"

static const char *const hwmon_paths[] = { "/sys/class/hwmon", NULL };
static const char *const rapl_paths[] = { "/sys/class/powercap/intel-rapl:0", NULL };

const struct nas_feature powerd_features[] = {
	{ "hwmon", hwmon_paths, "no hwmon class: sensors unavailable" },
	{ "powercap", rapl_paths, "no RAPL: the board power model is used" },
	{ NULL, NULL, NULL }
};

static void
powerd_info(struct json_object *r)
{
	nas_feature_report(powerd_features, r);
}

static const struct rpc_method powerd_methods[] = {
	{ NULL, NULL, NULL, 0, NULL }
};

static const struct rpc_method *const powerd_tables[] = { powerd_methods, NULL };

const struct nas_daemon powerd_daemon = {
	.name = "powerd",
	.methods = powerd_tables,
	.info = powerd_info,
};
