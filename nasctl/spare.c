/*
 * nasctl volume spare add|remove NAME --disk D: the action picks the
 * method (volume.spare_add, volume.spare_remove); --force is add's only.
 */
#include <string.h>

#include "nasctl.h"

int
run_spare(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *a = json_path(local, "action");
	const char *action = a ? json_object_get_string(a) : "";
	struct command c = *cmd;

	if (strcmp(action, "add") == 0)
		c.method = "volume.spare_add";
	else if (strcmp(action, "remove") == 0 && json_path(params, "force") == NULL)
		c.method = "volume.spare_remove";
	else {
		fprintf(x->err, "nasctl: volume spare: add NAME --disk D [--force], or "
		    "remove NAME --disk D\n");
		json_object_put(params);
		return EXIT_USAGE;
	}
	return run_generic(x, &c, params, local);
}
