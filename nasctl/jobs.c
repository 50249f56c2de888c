/*
 * Jobs: job ids are per daemon, so without --daemon nasctl asks every
 * daemon (list) or finds the one daemon that has the job (status,
 * cancel, wait). Waiting subscribes to job events before it looks at
 * the job, so an end that comes in between cannot be missed.
 */
#include <stdlib.h>
#include <string.h>

#include "nasctl.h"

static const struct column job_cols[] = {
	{ "DAEMON", "daemon", NULL, 0 },
	{ "ID", "id", NULL, 1 },
	{ "KIND", "kind", NULL, 0 },
	{ "TARGET", "target", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "PROGRESS", "percent", fmt_percent, 1 },
	{ "STEP", "step", NULL, 0 },
	{ NULL, NULL, NULL, 0 }
};

static const char *
local_str(struct json_object *local, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(local, key, &v) ? json_object_get_string(v) : NULL;
}

/* The job id in a start answer: 7, {"job": 7}, {"job": {"id": 7}}, {"job_id": 7}. */
int
job_id_of(struct json_object *r)
{
	static const char *const paths[] = { "job", "job.id", "job_id", "id", NULL };
	struct json_object *v;

	if (json_object_is_type(r, json_type_int))
		return json_object_get_int(r);
	for (int i = 0; paths[i]; i++)
		if ((v = json_path(r, paths[i])) && json_object_is_type(v, json_type_int))
			return json_object_get_int(v);
	return -1;
}

/* Every daemon's job.list, each job tagged with its daemon. */
static int
list_all(struct ctx *x, struct json_object *all)
{
	struct json_object *r, *job;
	int rc = EXIT_OK, one;

	for (int i = 0; nasctl_daemons[i]; i++) {
		one = call_once(x, nasctl_daemons[i], "job.list", NULL, &r);
		if (one != EXIT_OK) {
			rc = rc == EXIT_UNREACHABLE ? rc : one;
			continue;
		}
		for (size_t j = 0; j < json_object_array_length(r); j++) {
			job = json_object_get(json_object_array_get_idx(r, j));
			json_object_object_add(job, "daemon",
			    json_object_new_string(nasctl_daemons[i]));
			json_object_array_add(all, job);
		}
		json_object_put(r);
	}
	return rc;
}

int
run_job_list(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	const char *daemon = local_str(local, "daemon");
	struct json_object *r;
	int rc;

	(void)cmd;
	json_object_put(params);
	if (daemon)
		return call_and_print(x, daemon, "job.list", NULL, job_cols + 1, NULL);
	r = json_object_new_array();
	rc = list_all(x, r);
	if (x->json)
		json_print(x->out, r);
	else
		table_print(x->out, job_cols, r);
	json_object_put(r);
	return rc;
}

/* Asks daemon about job id without printing anything: 1 has it, 0 not. */
static int
has_job(struct ctx *x, const char *daemon, int id, int *unreachable)
{
	struct json_object *p = json_object_new_object(), *r = NULL;
	int code;

	json_object_object_add(p, "id", json_object_new_int(id));
	code = call_quiet(x, daemon, "job.status", p, &r);
	*unreachable += exit_code_for(code) == EXIT_UNREACHABLE;
	json_object_put(r);
	return code == 0;
}

/* The daemon that has job id, or NULL with *rc set and the reason printed. */
static const char *
find_job(struct ctx *x, struct json_object *local, int id, int *rc)
{
	const char *daemon = local_str(local, "daemon"), *found = NULL;
	int unreachable = 0, n = 0;

	*rc = EXIT_OK;
	if (daemon)
		return daemon;
	for (int i = 0; nasctl_daemons[i]; i++)
		if (has_job(x, nasctl_daemons[i], id, &unreachable) && n++ == 0)
			found = nasctl_daemons[i];
	if (n == 1)
		return found;
	if (n > 1) {
		fprintf(x->err, "nasctl: job %d exists on %d daemons: "
		    "choose one with --daemon\n", id, n);
		*rc = EXIT_USAGE;
	} else {
		fprintf(x->err, "nasctl: no daemon has job %d%s\n", id,
		    unreachable ? " (some are unreachable)" : "");
		*rc = unreachable ? EXIT_UNREACHABLE : EXIT_ERROR;
	}
	return NULL;
}

static int
param_id(struct json_object *params)
{
	return json_object_get_int(json_path(params, "id"));
}

int
run_job_one(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	const char *daemon;
	int rc;

	if ((daemon = find_job(x, local, param_id(params), &rc)) == NULL) {
		json_object_put(params);
		return rc;
	}
	return call_and_print(x, daemon, cmd->method, params, NULL, NULL);
}

static void
show_progress(struct ctx *x, struct json_object *job)
{
	char pct[32];

	if (x->json)
		return;
	fmt_percent(json_path(job, "percent"), pct, sizeof(pct));
	fprintf(x->out, "job %d ", job_id_of(job));
	text_print(x->out, json_str(job, "kind"));
	fputc(' ', x->out);
	text_print(x->out, json_str(job, "target"));
	fprintf(x->out, ": %s ", pct);
	text_print(x->out, json_str(job, "step"));
	fputc('\n', x->out);
	fflush(x->out);
}

/* How a job ended, as nasctl's exit status. */
static int
job_ended(struct ctx *x, const char *daemon, struct json_object *job)
{
	struct json_object *res = json_path(job, "result");
	char state[TEXT_MAX], msg[TEXT_MAX];

	text_escape(json_str(job, "state"), state, sizeof(state));
	text_escape(json_str(job, "error.message"), msg, sizeof(msg));
	if (strcmp(state, "done") == 0) {
		if (x->json)
			json_print(x->out, job);
		else if (res && json_object_is_type(res, json_type_object))
			object_print(x->out, res, 0);
		return EXIT_OK;
	}
	if (x->json)
		json_print(x->out, job);
	if (strcmp(state, "failed") == 0)
		fprintf(x->err, "nasctl: %s: job %d failed: %s (code %d)\n", daemon,
		    job_id_of(job), msg,
		    json_object_get_int(json_path(job, "error.code")));
	else
		fprintf(x->err, "nasctl: %s: job %d %s\n", daemon, job_id_of(job), state);
	return EXIT_ERROR;
}

static int
is_running(struct json_object *job)
{
	return strcmp(json_str(job, "state"), "running") == 0;
}

/* The next event about job id; -1 when the connection is lost. */
static int
next_job_event(struct rpc_client *c, int id, struct json_object **job)
{
	struct json_object *ev;
	char *method;
	int mine;

	for (;;) {
		if (rpc_client_next_event(c, -1, &method, &ev) != 1)
			return -1;
		mine = strncmp(method, "job.", 4) == 0 && job_id_of(ev) == id;
		free(method);
		if (mine) {
			*job = ev;
			return 0;
		}
		json_object_put(ev);
	}
}

/*
 * The job that carries on from a done one, or -1: volume.grow's joins
 * run one job each (raidd Decision 133), and an SHR add or a last join
 * hands the room above to a grow; each is started before the one before
 * ends, and the done one's volume names it.  "volume grow" and "volume
 * add-disk" wait for the volume to have grown, not for their first job.
 */
static int
chained_job(struct json_object *job, int id)
{
	struct json_object *next;

	if (strcmp(json_str(job, "state"), "done") != 0 ||
	    (strcmp(json_str(job, "kind"), "volume.grow") != 0 &&
	    strcmp(json_str(job, "kind"), "volume.add_disk") != 0) ||
	    !json_object_object_get_ex(json_path(job, "result"), "job", &next) ||
	    !json_object_is_type(next, json_type_int) || json_object_get_int(next) == id ||
	    json_object_get_int(next) <= 0)
		return -1;
	return json_object_get_int(next);
}

/* Follows job id on c (already subscribed to "job") until it ends. */
static int
follow(struct ctx *x, struct rpc_client *c, const char *daemon, int id)
{
	struct json_object *p = json_object_new_object(), *job;
	char step[128];
	double last, pct;
	int rc, next;

	json_object_object_add(p, "id", json_object_new_int(id));
	if ((rc = session_call(x, c, daemon, "job.status", p, &job)) != EXIT_OK)
		return rc;
	show_progress(x, job);
	last = json_object_get_double(json_path(job, "percent"));
	snprintf(step, sizeof(step), "%s", json_str(job, "step"));
	while (is_running(job)) {
		json_object_put(job);
		if (next_job_event(c, id, &job) == -1) {
			fprintf(x->err, "nasctl: %s: unreachable: connection lost\n", daemon);
			return EXIT_UNREACHABLE;
		}
		/* Events queued before job.status answered repeat or precede it. */
		pct = json_object_get_double(json_path(job, "percent"));
		if (!is_running(job) || pct < last ||
		    (pct == last && strcmp(step, json_str(job, "step")) == 0) ||
		    strcmp(json_str(job, "step"), "starting") == 0)
			continue;
		show_progress(x, job);
		last = pct;
		snprintf(step, sizeof(step), "%s", json_str(job, "step"));
	}
	if ((next = chained_job(job, id)) > 0) {
		json_object_put(job);
		return follow(x, c, daemon, next);
	}
	rc = job_ended(x, daemon, job);
	json_object_put(job);
	return rc;
}

static int
subscribe_jobs(struct ctx *x, struct rpc_client *c, const char *daemon)
{
	struct json_object *p = json_object_new_object(), *t = json_object_new_array(), *r;
	int rc;

	json_object_array_add(t, json_object_new_string("job"));
	json_object_object_add(p, "topics", t);
	rc = session_call(x, c, daemon, "events.subscribe", p, &r);
	json_object_put(r);
	return rc;
}

int
run_job_wait(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	int id = param_id(params), rc;
	struct rpc_client *c;
	const char *daemon;

	(void)cmd;
	json_object_put(params);
	if ((daemon = find_job(x, local, id, &rc)) == NULL)
		return rc;
	if ((c = session_open(x, daemon, &rc)) == NULL)
		return rc;
	if ((rc = subscribe_jobs(x, c, daemon)) == EXIT_OK)
		rc = follow(x, c, daemon, id);
	rpc_client_close(c);
	return rc;
}

/* A method that starts a job (volume.create): call, then follow the job. */
int
run_started_job(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	int wait = json_path(local, "no_wait") == NULL, rc, id;
	struct json_object *r = NULL;
	struct rpc_client *c;

	if ((c = session_open(x, cmd->daemon, &rc)) == NULL) {
		json_object_put(params);
		return rc;
	}
	if (wait && (rc = subscribe_jobs(x, c, cmd->daemon)) != EXIT_OK) {
		json_object_put(params);
		goto out;
	}
	if ((rc = session_call(x, c, cmd->daemon, cmd->method, params, &r)) != EXIT_OK)
		goto out;
	if (!wait || (id = job_id_of(r)) < 0) {
		print_result(x, cmd->cols, cmd->rows, r);
		goto out;
	}
	rc = follow(x, c, cmd->daemon, id);
out:
	json_object_put(r);
	rpc_client_close(c);
	return rc;
}

/*
 * volume grow, volume add-disk: an encrypted volume grows only with its
 * passphrase (Decision 115), read as volume unlock reads it (the file
 * --passphrase-file names, else the terminal without echo, else a line
 * of standard input), and only when volume.show says it is encrypted.
 */
int
run_volume_grow(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *p, *r = NULL, *enc;
	char why[256];
	int rc, encrypted;

	if (x->secrets != NULL && x->secrets->n == 0) {
		p = json_object_new_object();
		json_object_object_add(p, "name", json_object_get(json_path(params, "name")));
		if ((rc = call_once(x, cmd->daemon, "volume.show", p, &r)) != EXIT_OK) {
			json_object_put(params);
			return rc;
		}
		encrypted = json_object_object_get_ex(r, "encrypted", &enc) &&
		    json_object_get_boolean(enc);
		json_object_put(r);
		if (encrypted && secrets_read(x->secrets, x->in, "passphrase", 0, NULL, why,
		    sizeof(why)) == -1) {
			fprintf(x->err, "nasctl: %s\n", why);
			json_object_put(params);
			return EXIT_USAGE;
		}
	}
	return run_started_job(x, cmd, params, local);
}
