/* What raidd needs of the kernel: md for arrays, device-mapper for every volume. */
#include "raidd.h"

static const char *const md_paths[] = { "/proc/mdstat", NULL };
static const char *const dm_paths[] = { "/dev/mapper/control", "/sys/module/dm_mod", NULL };

const struct nas_feature raidd_features[] = {
	{ "md", md_paths, "load md_mod" },
	{ "device-mapper", dm_paths, "load dm_mod" },
	{ NULL, NULL, NULL }
};
