/* feature.c: which kernel facilities a daemon needs, and whether they are here. */
#ifndef NAS_FEATURE_H
#define NAS_FEATURE_H

#include <json-c/json.h>

#include "rpc.h"

/* A facility is present when any of its paths exists; a table ends with .name NULL. */
struct nas_feature {
	const char		*name;		/* "md", "device-mapper", "bonding" ... */
	const char *const	*paths;		/* proc/sysfs/dev entries that prove it */
	const char		*hint;		/* what to load when it is missing */
};

/* Root for the paths above; tests point it at a fake tree. */
void	nas_feature_set_root(const char *);
int	nas_feature_present(const struct nas_feature *);
/* {"features": {name: bool}, "missing": ["md: load md_mod", ...]} into r. */
void	nas_feature_report(const struct nas_feature *table, struct json_object *r);
/* 0 when present; else answers NAS_ERR_UNSUPPORTED and returns -1. */
int	nas_feature_require(struct rpc_call *, const struct nas_feature *);

#endif
