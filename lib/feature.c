/*
 * Kernel facilities: a daemon whose kernel lacks its subsystem still
 * starts and answers, and says what is missing instead of failing.
 */
#include <stdio.h>
#include <unistd.h>

#include "feature.h"

static const char *root = "";

void
nas_feature_set_root(const char *r)
{
	root = r;
}

int
nas_feature_present(const struct nas_feature *f)
{
	char path[512];

	for (int i = 0; f->paths[i]; i++) {
		snprintf(path, sizeof(path), "%s%s", root, f->paths[i]);
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
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
