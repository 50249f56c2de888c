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

static int
call_usage(struct ctx *x, const char *what, const char *why)
{
	fprintf(x->err, "nasctl: call: %s%s%s\n", what, *why ? ": " : "", why);
	return EXIT_USAGE;
}

/*
 * The secrets named by --secret, then the params text (from the command
 * line, a file, or standard input after the secrets' lines), checked:
 * 0, or an exit code.
 */
static int
call_inputs(struct ctx *x, struct json_object *local, struct secrets *set,
    struct locked *p)
{
	struct json_object *names = json_path(local, "secrets");
	const char *reserved[SECRETS_MAX + 1] = { NULL }, *file, *text;
	size_t n = names ? json_object_array_length(names) : 0;
	char why[256];

	file = json_path(local, "params_file") ? json_str(local, "params_file") : NULL;
	text = json_path(local, "params") ? json_str(local, "params") : NULL;
	if (file && text)
		return call_usage(x, "PARAMS-JSON and --params-file: give one", "");
	if (n > SECRETS_MAX)
		return call_usage(x, "--secret", "at most 4");
	for (size_t i = 0; i < n; i++) {
		reserved[i] = json_object_get_string(json_object_array_get_idx(names, i));
		if (secrets_read(set, x->in, reserved[i], 0, NULL, why, sizeof(why)) == -1)
			return call_usage(x, why, "");
	}
	if (file && params_read(file, x->in, p, why, sizeof(why)) == -1)
		return call_usage(x, why, "");
	if (text && locked_add(p, text, strlen(text)) == -1)
		return call_usage(x, "PARAMS-JSON", "out of memory");
	if ((file || text) && params_check(p, reserved, why, sizeof(why)) == -1)
		return call_usage(x, file ? (strcmp(file, "-") ? file : "standard input") :
		    "PARAMS-JSON", why);
	return 0;
}

/*
 * Members of params given on argv that system.methods marks secret: the
 * harm is done (argv is public), but the user learns how to avoid it.
 */
static void
warn_secret_on_argv(struct ctx *x, const char *daemon, const char *method,
    const char *text)
{
	struct json_object *given = json_tokener_parse(text), *r, *m, *params;
	char name[TEXT_MAX];
	const char *k;

	if (given == NULL || call_quiet(x, daemon, "system.methods", NULL, &r) != 0) {
		json_object_put(given);
		return;
	}
	for (size_t i = 0; i < json_object_array_length(r); i++) {
		m = json_object_array_get_idx(r, i);
		if (strcmp(json_str(m, "name"), method) != 0 ||
		    (params = json_path(m, "params")) == NULL)
			continue;
		for (size_t j = 0; j < json_object_array_length(params); j++) {
			k = json_str(json_object_array_get_idx(params, j), "name");
			if (!json_object_get_boolean(json_path(json_object_array_get_idx(params,
			    j), "secret")) || !json_object_object_get_ex(given, k, NULL))
				continue;
			text_escape(k, name, sizeof(name));
			fprintf(x->err, "nasctl: call: %s is a secret, and the command line "
			    "is not: use --secret %s or --params-file\n", name, name);
		}
	}
	json_object_put(r);
	json_object_put(given);
}

/* The params never go through json-c: they may hold a secret. */
int
run_call(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	const char *daemon = json_str(local, "daemon");
	struct secrets set = { .method = json_str(local, "method") }, *saved = x->secrets;
	struct json_object *r = NULL;
	struct locked p = { 0 };
	struct rpc_client *c;
	int rc;

	(void)cmd;
	json_object_put(params);
	if ((rc = call_inputs(x, local, &set, &p)) == 0 && json_path(local, "params"))
		warn_secret_on_argv(x, daemon, set.method, json_str(local, "params"));
	if (rc == 0 && (c = session_open(x, daemon, &rc)) != NULL) {
		x->secrets = &set;
		rc = session_call_text(x, c, daemon, set.method, p.p, p.len, &r);
		x->secrets = saved;
		rpc_client_close(c);
	}
	if (rc == EXIT_OK)
		json_print(x->out, r);
	json_object_put(r);
	secrets_free(&set);
	locked_free(&p);
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
