/*
 * nasctl volume scrub NAME [--repair|--stop] [--wait]: the flags become
 * volume.scrub's action; a check or repair prints its job id, or with
 * --wait follows it to the end like volume create.
 */
#include <string.h>

#include "nasctl.h"

int
run_scrub(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	int repair = json_path(local, "repair") != NULL, stop = json_path(local, "stop") != NULL;

	if (repair && stop) {
		fprintf(x->err, "nasctl: volume scrub: --repair and --stop exclude each other\n");
		json_object_put(params);
		return EXIT_USAGE;
	}
	json_object_object_add(params, "action",
	    json_object_new_string(stop ? "stop" : repair ? "repair" : "check"));
	if (stop)
		return run_generic(x, cmd, params, local);
	if (json_path(local, "wait") == NULL)
		json_object_object_add(local, "no_wait", json_object_new_boolean(1));
	return run_started_job(x, cmd, params, local);
}
