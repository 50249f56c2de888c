/*
 * Jobs: an API call that takes long returns a job id at once; the work
 * goes on in the event loop (timers, child processes) and reports
 * progress as job.progress events. Finished jobs are kept for a while
 * so a client that reconnects can still ask how it ended.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"
#include "rpc.h"

#define JOBS_KEPT	32	/* finished jobs remembered */

struct job {
	unsigned		 id;
	char			 kind[32];
	char			 target[64];
	enum job_state		 state;
	double			 percent;
	char			 step[128];
	time_t			 started, ended;
	struct json_object	*result;
	int			 sensitive;	/* result only for root and admins */
	int			 err_code;
	char			 err_msg[256];
	const struct job_ops	*ops;
	void			*arg;
	int			 cancel_asked;
	struct job		*next;
};

static struct job *jobs;
static unsigned next_id = 1;

static const char *const state_names[] = {
	[JOB_RUNNING] = "running", [JOB_DONE] = "done",
	[JOB_FAILED] = "failed", [JOB_CANCELLED] = "cancelled",
};

static void
job_free(struct job *j)
{
	if (j->ops && j->ops->release && j->state == JOB_RUNNING)
		j->ops->release(j->arg);
	json_object_put(j->result);
	free(j);
}

/*
 * The list runs from the latest change to the oldest: a job that ends
 * moves to the front, so pruning forgets the jobs that ended longest ago
 * and never the one that just ended (its caller may still hold it).
 */
static void
move_to_front(struct job *j)
{
	struct job **pp;

	for (pp = &jobs; *pp != j; pp = &(*pp)->next)
		;
	*pp = j->next;
	j->next = jobs;
	jobs = j;
}

/* Forgets the oldest finished jobs beyond JOBS_KEPT. */
static void
prune(void)
{
	struct job **pp, *j;
	int kept = 0;

	for (pp = &jobs; (j = *pp) != NULL;) {
		if (j->state != JOB_RUNNING && ++kept > JOBS_KEPT) {
			*pp = j->next;
			job_free(j);
			continue;
		}
		pp = &j->next;
	}
}

/*
 * The read group may list jobs and subscribe to their events, so a
 * sensitive result goes only into answers to callers who may mutate.
 */
static struct json_object *
describe(const struct job *j, int show_sensitive)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int64(j->id));
	json_object_object_add(o, "kind", json_object_new_string(j->kind));
	json_object_object_add(o, "target", json_object_new_string(j->target));
	json_object_object_add(o, "state", json_object_new_string(state_names[j->state]));
	json_object_object_add(o, "percent", json_object_new_double(j->percent));
	json_object_object_add(o, "step", json_object_new_string(j->step));
	json_object_object_add(o, "started", json_object_new_int64(j->started));
	if (j->state != JOB_RUNNING)
		json_object_object_add(o, "ended", json_object_new_int64(j->ended));
	if (j->sensitive)
		json_object_object_add(o, "sensitive", json_object_new_boolean(1));
	if (j->result && (!j->sensitive || show_sensitive))
		json_object_object_add(o, "result", json_object_get(j->result));
	if (j->state == JOB_FAILED) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "code", json_object_new_int(j->err_code));
		json_object_object_add(e, "message", json_object_new_string(j->err_msg));
		json_object_object_add(o, "error", e);
	}
	return o;
}

struct json_object *
job_describe(const struct job *j)
{
	return describe(j, 0);
}

/* What this caller of job.status or job.list may see. */
static struct json_object *
describe_for(struct rpc_call *c, const struct job *j)
{
	return describe(j, rpc_peer_may(c->srv, c->peer, RPC_MUTATES));
}

static void
announce(const struct job *j, const char *topic)
{
	nas_event(topic, job_describe(j));
}

struct job *
job_start(const char *kind, const char *target, const struct job_ops *ops, void *arg)
{
	struct job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->id = next_id++;
	snprintf(j->kind, sizeof(j->kind), "%s", kind);
	snprintf(j->target, sizeof(j->target), "%s", target ? target : "");
	snprintf(j->step, sizeof(j->step), "starting");
	j->state = JOB_RUNNING;
	j->started = time(NULL);
	j->ops = ops;
	j->arg = arg;
	j->next = jobs;
	jobs = j;
	announce(j, "job.started");
	return j;
}

unsigned
job_id(const struct job *j)
{
	return j->id;
}

enum job_state
job_state(const struct job *j)
{
	return j->state;
}

/*
 * A percentage outside 0-100 is clamped; NaN or an infinity is refused
 * and changes nothing: it would reach every client as invalid JSON.
 */
void
job_progress(struct job *j, double percent, const char *step)
{
	if (j->state != JOB_RUNNING)
		return;
	if (!isfinite(percent)) {
		log_warnx("job %u (%s %s): progress %f refused", j->id, j->kind,
		    j->target, percent);
		return;
	}
	j->percent = percent < 0 ? 0 : percent > 100 ? 100 : percent;
	if (step)
		snprintf(j->step, sizeof(j->step), "%s", step);
	announce(j, "job.progress");
}

static void
job_end(struct job *j, enum job_state st)
{
	if (j->state != JOB_RUNNING)
		return;
	if (j->ops && j->ops->release)
		j->ops->release(j->arg);
	j->arg = NULL;
	j->state = st;
	j->ended = time(NULL);
	if (st == JOB_DONE)
		j->percent = 100;
	announce(j, "job.finished");
	move_to_front(j);
	prune();
}

void
job_done(struct job *j, struct json_object *result)
{
	if (j->state != JOB_RUNNING) {
		json_object_put(result);
		return;
	}
	j->result = result;
	snprintf(j->step, sizeof(j->step), "done");
	job_end(j, JOB_DONE);
}

void
job_done_sensitive(struct job *j, struct json_object *result)
{
	if (j->state == JOB_RUNNING)
		j->sensitive = 1;
	job_done(j, result);
}

void
job_fail(struct job *j, int code, const char *fmt, ...)
{
	va_list ap;

	if (j->state != JOB_RUNNING)
		return;
	va_start(ap, fmt);
	vsnprintf(j->err_msg, sizeof(j->err_msg), fmt, ap);
	va_end(ap);
	j->err_code = code;
	log_warnx("job %u (%s %s) failed: %s", j->id, j->kind, j->target, j->err_msg);
	job_end(j, JOB_FAILED);
}

void
job_cancelled(struct job *j)
{
	if (j->state != JOB_RUNNING)
		return;
	snprintf(j->step, sizeof(j->step), "cancelled");
	job_end(j, JOB_CANCELLED);
}

struct job *
job_find(unsigned id)
{
	for (struct job *j = jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

int
job_running_count(void)
{
	int n = 0;

	for (struct job *j = jobs; j; j = j->next)
		n += j->state == JOB_RUNNING;
	return n;
}

void
job_reset(void)
{
	struct job *j;

	while ((j = jobs) != NULL) {
		jobs = j->next;
		job_free(j);
	}
	next_id = 1;
}

static void
job_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a = json_object_new_array();

	(void)params;
	for (struct job *j = jobs; j; j = j->next)
		json_object_array_add(a, describe_for(c, j));
	rpc_result(c, a);
}

static struct job *
job_param(struct rpc_call *c, struct json_object *params)
{
	unsigned id = (unsigned)rpc_param_int(params, "id", 0);
	struct job *j = job_find(id);

	if (j == NULL)
		rpc_error(c, NAS_ERR_NOT_FOUND, "no job %u", id);
	return j;
}

static void
job_status(struct rpc_call *c, struct json_object *params)
{
	struct job *j = job_param(c, params);

	if (j)
		rpc_result(c, describe_for(c, j));
}

static void
job_cancel(struct rpc_call *c, struct json_object *params)
{
	struct job *j = job_param(c, params);

	if (j == NULL)
		return;
	if (j->state != JOB_RUNNING) {
		rpc_error(c, NAS_ERR_INVALID, "job %u has already ended (%s)", j->id,
		    state_names[j->state]);
		return;
	}
	if (j->ops == NULL || j->ops->cancel == NULL) {
		rpc_error(c, NAS_ERR_REFUSED, "job %u (%s) cannot be cancelled safely",
		    j->id, j->kind);
		return;
	}
	j->cancel_asked = 1;
	j->ops->cancel(j, j->arg);
	rpc_result(c, job_describe(j));
}

static const struct rpc_param job_id_params[] = {
	{ "id", RPC_INT, RPC_REQUIRED, 1, 0x7fffffff, NULL, "job id" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method job_methods[] = {
	{ "job.list", job_list, NULL, 0, "running and recently finished jobs" },
	{ "job.status", job_status, job_id_params, 0, "one job's state and progress" },
	{ "job.cancel", job_cancel, job_id_params, RPC_MUTATES, "ask a job to stop" },
	{ NULL, NULL, NULL, 0, NULL }
};
