/*
 * raidd's metrics for node_exporter's textfile collector
 * (docs/metrics.md): each volume's state, its members present and
 * missing, each syncing tier's progress. Built from volume_describe(),
 * what volume.list answers, so the file never says what the API does
 * not. Written by the monitor (every 5 s), after the states were checked.
 */
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "prom.h"
#include "volume.h"

static char metrics_dir[256];
static int failed;

void
raidd_metrics_set_dir(const char *dir)
{
	snprintf(metrics_dir, sizeof(metrics_dir), "%s", dir);
	failed = 0;
}

static const char *
str(struct json_object *o, const char *key)
{
	struct json_object *v = json_object_object_get(o, key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static void
states(struct metrics *m, struct json_object *vols)
{
	metrics_family(m, "nas_volume_state", "gauge",
	    "1 for each volume's state now (volume.list's state), 0 for the others.");
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		struct json_object *v = json_object_array_get_idx(vols, i);

		for (int s = 0; s < VOL_STATE_COUNT; s++)
			metrics_add(m, (const char *const[]){ "volume", str(v, "name"),
			    "state", volume_state_name(s), NULL },
			    strcmp(str(v, "state"), volume_state_name(s)) == 0);
	}
	metrics_family(m, "nas_volume_size_bytes", "gauge", "Each volume's usable size.");
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		struct json_object *v = json_object_array_get_idx(vols, i);

		metrics_add(m, (const char *const[]){ "volume", str(v, "name"), NULL },
		    (double)json_object_get_int64(json_object_object_get(v, "size_bytes")));
	}
}

static void
members(struct metrics *m, struct json_object *vols)
{
	metrics_family(m, "nas_volume_members", "gauge",
	    "Members of each volume whose disk is present or missing (all tiers).");
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		struct json_object *v = json_object_array_get_idx(vols, i);
		struct json_object *tiers = json_object_object_get(v, "tiers");
		int n[2] = { 0, 0 };

		for (size_t t = 0; t < json_object_array_length(tiers); t++) {
			struct json_object *mem = json_object_object_get(
			    json_object_array_get_idx(tiers, t), "members");

			for (size_t r = 0; r < json_object_array_length(mem); r++)
				n[json_object_object_get(json_object_array_get_idx(mem, r),
				    "disk") == NULL]++;
		}
		metrics_add(m, (const char *const[]){ "volume", str(v, "name"),
		    "state", "present", NULL }, n[0]);
		metrics_add(m, (const char *const[]){ "volume", str(v, "name"),
		    "state", "missing", NULL }, n[1]);
	}
}

static void
sync_progress(struct metrics *m, struct json_object *vols)
{
	metrics_family(m, "nas_volume_sync_progress_ratio", "gauge",
	    "How far each tier's resync, recovery or check is (0 to 1); only while one runs.");
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		struct json_object *v = json_object_array_get_idx(vols, i);
		struct json_object *tiers = json_object_object_get(v, "tiers");

		for (size_t t = 0; t < json_object_array_length(tiers); t++) {
			struct json_object *tr = json_object_array_get_idx(tiers, t);
			struct json_object *pct = json_object_object_get(tr, "sync_percent");
			char tier[24];

			if (pct == NULL || strcmp(str(tr, "sync_action"), "idle") == 0)
				continue;
			snprintf(tier, sizeof(tier), "%zu", t + 1);
			metrics_add(m, (const char *const[]){ "volume", str(v, "name"),
			    "tier", tier, "action", str(tr, "sync_action"), NULL },
			    json_object_get_double(pct) / 100.0);
		}
	}
}

void
raidd_metrics_write(void)
{
	struct json_object *vols;
	struct metrics *m;
	struct volume *v;

	if (metrics_dir[0] == '\0' || (m = metrics_new()) == NULL)
		return;
	vols = json_object_new_array();
	for (int i = 0; (v = volume_at(i)) != NULL; i++)
		json_object_array_add(vols, volume_describe(v));
	states(m, vols);
	members(m, vols);
	sync_progress(m, vols);
	json_object_put(vols);
	metrics_publish(m, metrics_dir, "raidd", &failed);
}
