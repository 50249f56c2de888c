/*
 * Kernel facilities: a daemon whose kernel lacks its subsystem still
 * starts and answers, and says what is missing instead of failing.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "feature.h"

#define CACHE_SLOTS	16

static const char *root = "";

/*
 * system.version is what monitors poll; probing the filesystem for
 * every call showed up as a third of its cost. A module loaded at run
 * time is still seen within a second.
 */
static struct {
	const struct nas_feature	*f;
	time_t				 when;
	int				 present;
} cache[CACHE_SLOTS];

void
nas_feature_set_root(const char *r)
{
	root = r;
	for (int i = 0; i < CACHE_SLOTS; i++)
		cache[i].f = NULL;
}

static int
probe(const struct nas_feature *f)
{
	char path[512];

	for (int i = 0; f->paths[i]; i++) {
		snprintf(path, sizeof(path), "%s%s", root, f->paths[i]);
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
}

int
nas_feature_present(const struct nas_feature *f)
{
	struct timespec ts;
	int i, free_slot = -1;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	for (i = 0; i < CACHE_SLOTS; i++) {
		if (cache[i].f == f && cache[i].when == ts.tv_sec)
			return cache[i].present;
		if (cache[i].f == f || (cache[i].f == NULL && free_slot == -1))
			free_slot = i;
	}
	if (free_slot == -1)
		return probe(f);
	cache[free_slot].f = f;
	cache[free_slot].when = ts.tv_sec;
	cache[free_slot].present = probe(f);
	return cache[free_slot].present;
}

void
nas_feature_report(const struct nas_feature *table, struct json_object *r)
{
	struct json_object *have = json_object_new_object(), *miss = json_object_new_array();
	char line[256];

	for (const struct nas_feature *f = table; f->name; f++) {
		int ok = nas_feature_present(f);

		json_object_object_add(have, f->name, json_object_new_boolean(ok));
		if (ok)
			continue;
		snprintf(line, sizeof(line), "%s: %s", f->name, f->hint);
		json_object_array_add(miss, json_object_new_string(line));
	}
	json_object_object_add(r, "features", have);
	json_object_object_add(r, "missing", miss);
}

int
nas_feature_require(struct rpc_call *c, const struct nas_feature *f)
{
	if (nas_feature_present(f))
		return 0;
	rpc_error(c, NAS_ERR_UNSUPPORTED, "the kernel has no %s support (%s)",
	    f->name, f->hint);
	return -1;
}
