/*
 * cryptd's API: the method table with its parameter policies. The common
 * methods (system.*, events.*, job.*) come from libnas.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cryptd.h"
#include "prom.h"
#include "system.h"

const struct cryptd_sys *sys = &sys_linux;

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

static const struct rpc_method *const cryptd_tables[] = { cryptd_crypt_methods, NULL };

static const char *const kdf_types[] = { "argon2id", "argon2i", "pbkdf2", NULL };

static const struct conf_key cryptd_conf[] = {
	{ "kdf", "type", CONF_ENUM, "argon2id", 0, 0, kdf_types,
	  "KDF of new keyslots" },
	{ "kdf", "max_memory_kib", CONF_INT, "65536", 32, 4194304, NULL,
	  "argon2 memory of a new keyslot at most (KiB): several volumes unlock at once on 512 MiB" },
	{ "kdf", "time_ms", CONF_INT, "1000", 10, 60000, NULL,
	  "time one unlock should take on this board, calibrated at the first use" },
	{ "kdf", "cpus", CONF_INT, "1", 1, 4, NULL, "argon2 threads" },
	{ "crypt", "file_dirs", CONF_STRING, "/volumes /media /mnt", 1, 255, NULL,
	  "directories header backups are written to and restored from" },
	{ "cryptd", "backoff_file", CONF_STRING, "/etc/nas/cryptd-backoff", 0, 200, NULL,
	  "the unlock back-off, kept across restarts (empty: in memory only)" },
	{ "cryptd", "metrics_dir", CONF_STRING, "/run/nas/metrics", 0, 255, NULL,
	  "directory of cryptd.prom for node_exporter's textfile collector (empty: none)" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static int
cryptd_configure(const struct conf *c)
{
	const char *t = conf_str(c, "kdf", "type");
	struct kdf_conf k = {
		.type = t[0] == 'p' ? KDF_PBKDF2 : t[6] == 'i' && t[7] == 'd' ?
		    KDF_ARGON2ID : KDF_ARGON2I,
		.max_memory_kib = (uint32_t)conf_int(c, "kdf", "max_memory_kib"),
		.time_ms = (uint32_t)conf_int(c, "kdf", "time_ms"),
		.cpus = (uint32_t)conf_int(c, "kdf", "cpus"),
	};

	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	kdf_configure(&k);
	/* Half of RAM at most for an unlock, whatever a header asks. */
	if (pages > 0 && psize > 0)
		luks2_set_memory_cap((uint32_t)((uint64_t)pages * (uint64_t)psize / 2048 >
		    4U * 1024 * 1024 ? 4U * 1024 * 1024 :
		    (uint64_t)pages * (uint64_t)psize / 2048));
	crypt_set_file_dirs(conf_str(c, "crypt", "file_dirs"));
	ratelimit_load(conf_str(c, "cryptd", "backoff_file"));
	/* A new metrics_dir gets its file now, not at the next open or close. */
	cryptd_metrics_set_dir(conf_str(c, "cryptd", "metrics_dir"));
	cryptd_metrics_write();
	return 0;
}

/*
 * CRYPTD_SIMULATE=1: the keyring and device-mapper in memory, devices
 * may be plain files; nothing real is touched.
 */
static int
cryptd_init(const struct conf *c)
{
	if (getenv("CRYPTD_SIMULATE")) {
		sys = &sys_sim;
		log_warnx("simulating the keyring and device-mapper");
	}
	return cryptd_configure(c);
}

const struct nas_daemon cryptd_daemon = {
	.name = "cryptd",
	.methods = cryptd_tables,
	.conf = cryptd_conf,
	.init = cryptd_init,
	.reload = cryptd_configure,
	/* Passphrases and key material: more room than the others need. */
	.max_request = 131072,
	.info = cryptd_info,
};
