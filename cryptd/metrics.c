/*
 * cryptd's metrics for node_exporter's textfile collector
 * (docs/metrics.md): the open dm-crypt mappings (what crypt.list
 * answers) with the device each sits on, and the devices with failed
 * unlock attempts since their last unlock (the back-off of volume.c).
 * cryptd has no timer: the file is written at start and after each
 * method that opens, closes or unlocks something. Never a key: a
 * mapping's table is read only for its device field, then wiped.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "cryptd.h"
#include "prom.h"
#include "system.h"

static char metrics_dir[256];
static int failed;

void
cryptd_metrics_set_dir(const char *dir)
{
	snprintf(metrics_dir, sizeof(metrics_dir), "%s", dir);
	failed = 0;
}

/*
 * The data device of a mapping: the 4th field of the crypt target's
 * parameters ("start len crypt cipher key iv_offset device offset ...").
 * The table may hold a key in hex (a mapping another tool made): it is
 * wiped before return.
 */
static void
mapping_device(const char *name, char *dev, size_t len)
{
	char table[1024], *f, *save = NULL;
	int i;

	snprintf(dev, len, "unknown");
	if (sys->map_table(name, table, sizeof(table)) != 0) {
		explicit_bzero(table, sizeof(table));
		return;
	}
	for (i = 0, f = strtok_r(table, " ", &save); f != NULL && i < 6;
	    i++, f = strtok_r(NULL, " ", &save))
		if (i == 2 && strcmp(f, "crypt") != 0)
			break;
	if (i == 6 && f != NULL)
		snprintf(dev, len, "%s", f);
	explicit_bzero(table, sizeof(table));
}

static void
mappings(struct metrics *m)
{
	struct json_object *a = json_object_new_array(), *v;
	char dev[300];
	size_t i, n;

	if (a == NULL)
		return;
	sys->map_list(a);
	n = json_object_array_length(a);
	metrics_family(m, "nas_crypt_mapping_open", "gauge",
	    "1 for each open dm-crypt mapping (crypt.list) and the device it decrypts.");
	for (i = 0; i < n; i++) {
		if (!json_object_object_get_ex(json_object_array_get_idx(a, i), "name", &v))
			continue;
		mapping_device(json_object_get_string(v), dev, sizeof(dev));
		metrics_add(m, (const char *const[]){ "name", json_object_get_string(v),
		    "device", dev, NULL }, 1);
	}
	metrics_family(m, "nas_crypt_mappings_open", "gauge",
	    "Open dm-crypt mappings.");
	metrics_add(m, NULL, (double)n);
	json_object_put(a);
}

static void
one_failure(const char *dev, unsigned fails, void *arg)
{
	metrics_add(arg, (const char *const[]){ "device", dev, NULL }, fails);
}

void
cryptd_metrics_write(void)
{
	struct metrics *m;

	if (metrics_dir[0] == '\0' || (m = metrics_new()) == NULL)
		return;
	mappings(m);
	metrics_family(m, "nas_crypt_unlock_failures", "gauge",
	    "Failed unlock attempts on a device since its last unlock (each doubles the wait).");
	ratelimit_each(one_failure, m);
	metrics_publish(m, metrics_dir, "cryptd", &failed);
}
