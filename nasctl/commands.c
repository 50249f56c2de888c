/*
 * The command table: what each "nasctl NOUN VERB" calls, which
 * arguments it takes and how its answer is shown. Most commands need no
 * code of their own: run_generic builds the params, calls, renders.
 */
#include <string.h>

#include "nasctl.h"

#define END_ARGS	{ NULL, NULL, 0, 0, NULL }
#define END_COLS	{ NULL, NULL, NULL, 0 }

static void
fmt_media(struct json_object *v, char *buf, size_t len)
{
	if (!json_object_is_type(v, json_type_boolean)) {
		fmt_plain(v, buf, len);
		return;
	}
	snprintf(buf, len, "%s", json_object_get_boolean(v) ? "hdd" : "ssd");
}

static const struct arg no_args[] = { END_ARGS };

static const struct arg disk_args[] = {
	{ "DISK", "disk", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg disk_wipe_args[] = {
	{ "DISK", "disk", ARG_STRING, 0, NULL },
	{ "--confirm", "confirm", ARG_STRING, ARG_REQUIRED, "DISK" },
	END_ARGS
};

static const struct arg volume_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg volume_create_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--level", "level", ARG_STRING, ARG_REQUIRED, NULL },
	{ "--disks", "disks", ARG_LIST, ARG_REQUIRED, "D1,D2[,...]" },
	{ "--fs", "fs", ARG_STRING, 0, "ext4|btrfs|none" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg volume_delete_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--confirm", "confirm", ARG_STRING, ARG_REQUIRED, "NAME" },
	END_ARGS
};

static const struct arg volume_repair_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--disk", "disk", ARG_STRING, ARG_REQUIRED, "D" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg job_list_args[] = {
	{ "--daemon", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg job_id_args[] = {
	{ "ID", "id", ARG_INT, 0, NULL },
	{ "--daemon", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg call_args[] = {
	{ "DAEMON", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	{ "METHOD", "method", ARG_STRING, ARG_LOCAL, NULL },
	{ "PARAMS-JSON", "params", ARG_STRING, ARG_LOCAL | ARG_OPTIONAL, NULL },
	{ "--params-file", "params_file", ARG_STRING, ARG_LOCAL, "FILE|-" },
	{ "--secret", "secrets", ARG_STRING, ARG_LOCAL | ARG_REPEAT, "NAME" },
	END_ARGS
};

static const struct arg events_args[] = {
	{ "DAEMON", "daemons", ARG_STRING, ARG_LOCAL | ARG_OPTIONAL | ARG_REPEAT, NULL },
	{ "--topic", "topics", ARG_STRING, ARG_LOCAL | ARG_REPEAT, "PREFIX" },
	END_ARGS
};

static const struct arg methods_args[] = {
	{ "DAEMON", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	END_ARGS
};

/* The kinds of signature found: "gpt,ext4". */
static void
fmt_sig_type(struct json_object *v, char *buf, size_t len)
{
	fmt_plain(json_object_is_type(v, json_type_object) ? json_path(v, "type") : v,
	    buf, len);
}

static void
fmt_sigs(struct json_object *v, char *buf, size_t len)
{
	fmt_join(v, buf, len, ",", fmt_sig_type);
}

/* Keys as raidd's disk_describe() and volume_describe() write them. */
static const struct column disk_cols[] = {
	{ "DISK", "name", NULL, 0 },
	{ "DEVICE", "device", NULL, 0 },
	{ "SIZE", "size_bytes", fmt_size, 1 },
	{ "TYPE", "rotational", fmt_media, 0 },
	{ "MODEL", "model", NULL, 0 },
	{ "SERIAL", "serial", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "SIGNATURES", "signatures", fmt_sigs, 0 },
	END_COLS
};

static const struct column volume_cols[] = {
	{ "NAME", "name", NULL, 0 },
	{ "LEVEL", "level", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "SIZE", "size_bytes", fmt_size, 1 },
	{ "FS", "fs", NULL, 0 },
	{ "MOUNTPOINT", "mountpoint", NULL, 0 },
	{ "PROBLEM", "problem", NULL, 0 },
	END_COLS
};

#define R "raidd"
const struct command nasctl_commands[] = {
	{ "disk", "list", R, "disk.list", no_args, disk_cols, "disks", NULL,
	  "disks in the bays" },
	{ "disk", "show", R, "disk.show", disk_args, NULL, NULL, NULL,
	  "one disk in detail; DISK is a bay (bay1) or a kernel name (sda)" },
	{ "disk", "wipe", R, "disk.wipe", disk_wipe_args, NULL, NULL, NULL,
	  "erase every signature on a disk not in use" },
	{ "volume", "create", R, "volume.create", volume_create_args, NULL, NULL,
	  run_started_job, "create a volume and wait for the job" },
	{ "volume", "list", R, "volume.list", no_args, volume_cols, "volumes", NULL,
	  "volumes and their state" },
	{ "volume", "show", R, "volume.show", volume_args, NULL, NULL, NULL,
	  "one volume with its tiers" },
	{ "volume", "delete", R, "volume.delete", volume_delete_args, NULL, NULL, NULL,
	  "stop a volume and wipe its members" },
	{ "volume", "mount", R, "volume.mount", volume_args, NULL, NULL, NULL,
	  "mount a volume's filesystem" },
	{ "volume", "unmount", R, "volume.unmount", volume_args, NULL, NULL, NULL,
	  "unmount a volume's filesystem" },
	{ "volume", "import", R, "volume.import", volume_args, NULL, NULL, NULL,
	  "make a foreign (or deleted) volume this unit's and assemble it" },
	{ "volume", "clear", R, "volume.clear", volume_args, NULL, NULL, NULL,
	  "let members md failed for errors rejoin" },
	{ "volume", "repair", R, "volume.repair", volume_repair_args, NULL, NULL,
	  run_started_job, "rebuild the missing or failed member on disk D and wait" },
	{ "job", "list", NULL, "job.list", job_list_args, NULL, NULL, run_job_list,
	  "running and recent jobs (of every daemon without --daemon)" },
	{ "job", "status", NULL, "job.status", job_id_args, NULL, NULL, run_job_one,
	  "one job's state and progress" },
	{ "job", "cancel", NULL, "job.cancel", job_id_args, NULL, NULL, run_job_one,
	  "ask a job to stop" },
	{ "job", "wait", NULL, "job.status", job_id_args, NULL, NULL, run_job_wait,
	  "wait for a job to end, showing progress" },
	{ "call", NULL, NULL, NULL, call_args, NULL, NULL, run_call,
	  "call any method with params from the command line, a file or stdin; "
	  "--secret NAME asks for member NAME; the result is printed as JSON" },
	{ "events", NULL, NULL, "events.subscribe", events_args, NULL, NULL, run_events,
	  "stream events (of every daemon when none is named) until interrupted" },
	{ "methods", NULL, NULL, "system.methods", methods_args, NULL, NULL, run_methods,
	  "a daemon's methods and their parameters" },
	{ "version", NULL, NULL, "system.version", no_args, NULL, NULL, run_version,
	  "every daemon's version and missing kernel features" },
	{ "system", "version", NULL, "system.version", no_args, NULL, NULL, run_version,
	  "same as nasctl version" },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }
};
#undef R

/* words: how many of the two words name the command (1 or 2). */
const struct command *
command_find(const char *noun, const char *verb, int *words)
{
	for (const struct command *c = nasctl_commands; c->noun; c++) {
		if (strcmp(c->noun, noun) != 0)
			continue;
		if (c->verb == NULL) {
			*words = 1;
			return c;
		}
		if (verb && strcmp(c->verb, verb) == 0) {
			*words = 2;
			return c;
		}
	}
	return NULL;
}

int
noun_known(const char *noun)
{
	for (const struct command *c = nasctl_commands; c->noun; c++)
		if (strcmp(c->noun, noun) == 0)
			return 1;
	return 0;
}

/* The rows of a list answer: the array itself or its member key. */
static struct json_object *
rows_of(const char *key, struct json_object *r)
{
	struct json_object *rows = r;

	if (key && json_object_is_type(r, json_type_object))
		json_object_object_get_ex(r, key, &rows);
	return json_object_is_type(rows, json_type_array) ? rows : NULL;
}

void
print_result(struct ctx *x, const struct column *cols, const char *key,
    struct json_object *r)
{
	struct json_object *rows;
	char buf[256];

	if (x->json) {
		json_print(x->out, r);
		return;
	}
	if (cols && (rows = rows_of(key, r)) != NULL) {
		table_print(x->out, cols, rows);
		return;
	}
	if (json_object_is_type(r, json_type_object)) {
		object_print(x->out, r, 0);
		return;
	}
	if (r == NULL)
		return;
	fmt_plain(r, buf, sizeof(buf));
	text_print(x->out, buf);
	fputc('\n', x->out);
}

/* Calls, then shows the answer: a table of cols when it is a list. */
int
call_and_print(struct ctx *x, const char *daemon, const char *method,
    struct json_object *params, const struct column *cols, const char *key)
{
	struct json_object *r;
	int rc;

	if ((rc = call_once(x, daemon, method, params, &r)) == EXIT_OK)
		print_result(x, cols, key, r);
	json_object_put(r);
	return rc;
}

/*
 * Parses argv for c, reads the secrets its table marks, runs it, and
 * wipes the secrets whatever happened.
 */
int
command_exec(struct ctx *x, const struct command *c, int argc, char **argv)
{
	struct secrets set = { .method = c->method };
	struct json_object *params, *local;
	char why[256];
	int rc;

	if (args_parse(c->args, argc, argv, &params, &local, why, sizeof(why)) == -1) {
		fprintf(x->err, "nasctl: %s %s%s%s\nusage: ", c->noun,
		    c->verb ? c->verb : "", c->verb ? ": " : "", why);
		args_usage(x->err, c);
		return EXIT_USAGE;
	}
	if (secrets_from_args(&set, x->in, c->args, local, why, sizeof(why)) == -1) {
		fprintf(x->err, "nasctl: %s\n", why);
		rc = EXIT_USAGE;
		json_object_put(params);
	} else {
		x->secrets = &set;
		rc = (c->run ? c->run : run_generic)(x, c, params, local);
		x->secrets = NULL;
	}
	secrets_free(&set);
	json_object_put(local);
	return rc;
}

int
run_generic(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	(void)local;
	return call_and_print(x, cmd->daemon, cmd->method, params, cmd->cols, cmd->rows);
}
