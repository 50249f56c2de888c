/*
 * cryptd's API: the method table with its parameter policies. The common
 * methods (system.*, events.*, job.*) come from libnas.
 */
#include "cryptd.h"

static const char *const dm_paths[] = { "/dev/mapper/control", "/sys/module/dm_mod", NULL };
static const char *const crypt_paths[] = { "/sys/module/dm_crypt", NULL };
static const char *const keys_paths[] = { "/proc/keys", NULL };

const struct nas_feature cryptd_features[] = {
	{ "device-mapper", dm_paths, "load dm_mod" },
	{ "dm-crypt", crypt_paths, "load dm_crypt" },
	{ "keyring", keys_paths, "kernel built without CONFIG_KEYS" },
	{ NULL, NULL, NULL }
};

static void
cryptd_info(struct json_object *r)
{
	nas_feature_report(cryptd_features, r);
}

static const struct rpc_method cryptd_methods[] = {
	{ NULL, NULL, NULL, 0, NULL }
};

static const struct rpc_method *const cryptd_tables[] = { cryptd_methods, NULL };

const struct nas_daemon cryptd_daemon = {
	.name = "cryptd",
	.methods = cryptd_tables,
	/* Passphrases and key material: more room than the others need. */
	.max_request = 131072,
	.info = cryptd_info,
};
