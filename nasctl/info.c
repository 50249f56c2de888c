/*
 * Commands about the API itself: call any method, every daemon's
 * version, one daemon's methods.
 */
#include <string.h>

#include "nasctl.h"

/* "id:integer" or, when optional, "[force:boolean]". */
static void
fmt_param(struct json_object *p, char *buf, size_t len)
{
	int req = json_object_get_boolean(json_path(p, "required"));

	snprintf(buf, len, "%s%s:%s%s", req ? "" : "[", json_str(p, "name"),
	    json_str(p, "type"), req ? "" : "]");
}

void
fmt_params(struct json_object *v, char *buf, size_t len)
{
	fmt_join(v, buf, len, " ", fmt_param);
}

static void
fmt_semicolons(struct json_object *v, char *buf, size_t len)
{
	fmt_join(v, buf, len, "; ", fmt_plain);
}

static const struct column version_cols[] = {
	{ "DAEMON", "daemon", NULL, 0 },
	{ "VERSION", "version", NULL, 0 },
	{ "MISSING", "missing", fmt_semicolons, 0 },
	{ NULL, NULL, NULL, 0 }
};

static const struct column method_cols[] = {
	{ "METHOD", "name", NULL, 0 },
	{ "MUTATES", "mutates", fmt_yesno, 0 },
	{ "PARAMS", "params", fmt_params, 0 },
	{ "DESCRIPTION", "help", NULL, 0 },
	{ NULL, NULL, NULL, 0 }
};

int
run_call(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *p = json_object_get(json_path(local, "params")), *r;
	int rc;

	(void)cmd;
	json_object_put(params);
	if (p && !json_object_is_type(p, json_type_object) &&
	    !json_object_is_type(p, json_type_array)) {
		fprintf(x->err, "nasctl: PARAMS-JSON must be an object or an array\n");
		json_object_put(p);
		return EXIT_USAGE;
	}
	rc = call_once(x, json_str(local, "daemon"), json_str(local, "method"), p, &r);
	if (rc == EXIT_OK)
		json_print(x->out, r);
	json_object_put(r);
	return rc;
}

/* One row of the version table; what an unreachable daemon looks like. */
static struct json_object *
version_row(const char *daemon, int rc, struct json_object *r, int json)
{
	struct json_object *row;

	if (rc == EXIT_OK)
		return json_object_get(r);
	row = json_object_new_object();
	json_object_object_add(row, "daemon", json_object_new_string(daemon));
	if (json)
		json_object_object_add(row, rc == EXIT_UNREACHABLE ? "unreachable" : "failed",
		    json_object_new_boolean(1));
	else
		json_object_object_add(row, "version", json_object_new_string(
		    rc == EXIT_UNREACHABLE ? "unreachable" : "error"));
	return row;
}

int
run_version(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *rows = json_object_new_array(), *r;
	int rc = EXIT_OK, one;

	(void)cmd;
	(void)local;
	json_object_put(params);
	for (int i = 0; nasctl_daemons[i]; i++) {
		one = call_once(x, nasctl_daemons[i], "system.version", NULL, &r);
		json_object_array_add(rows, version_row(nasctl_daemons[i], one, r, x->json));
		json_object_put(r);
		if (one != EXIT_OK && rc != EXIT_UNREACHABLE)
			rc = one;
	}
	if (x->json)
		json_print(x->out, rows);
	else
		table_print(x->out, version_cols, rows);
	json_object_put(rows);
	return rc;
}

int
run_methods(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	(void)cmd;
	json_object_put(params);
	return call_and_print(x, json_str(local, "daemon"), "system.methods", NULL,
	    method_cols, NULL);
}
