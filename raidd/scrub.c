/*
 * Scrub (Decision 24): md's check or repair of every redundant tier of
 * a volume, one tier after the other, as a job. A run may stop early
 * (volume.scrub stop, job.cancel, the night's max_hours budget): md
 * then keeps where it stopped in sync_min, and raidd keeps that on the
 * flash, so the next run goes on from there instead of starting over.
 * raidd.ini [scrub] schedule starts checks (never repairs) by itself.
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"
#include "volume.h"

#define PENDING_MAX	MAX_VOLUMES

struct scrub {
	char		 name[LABEL_NAME_MAX];
	uint8_t		 uuid[16];
	char		 action[16];	/* check, repair */
	struct job	*job;
	int		 tier;		/* the tier md checks now */
	uint64_t	 from;		/* where this run started on its first tier */
	uint64_t	 mismatch;	/* sectors, tiers before this one and earlier nights */
	double		 started;
	int		 stop;		/* 1 asked, 2 budget spent */
	ev_timer	 tick;
};

/* Where an unfinished run stopped, per volume: kept on the flash. */
static struct pending {
	uint8_t		 uuid[16];
	int		 tier;
	char		 action[16];
	uint64_t	 sector, mismatch;
} pending[PENDING_MAX];
static int npending;

static struct scrub *runs[MAX_VOLUMES];
static char state_path[256];
static double budget_s, tick_s = 1.;
static unsigned speed_min, speed_max;

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the positions kept on the flash ---- */

/* One line: uuid tier action sector mismatch. Anything else is skipped. */
static int
pending_parse(const char *line, struct pending *p)
{
	char hex[40], action[16];
	unsigned v;

	memset(p, 0, sizeof(*p));
	if (sscanf(line, "%39s %d %15s %" SCNu64 " %" SCNu64, hex, &p->tier, action,
	    &p->sector, &p->mismatch) != 5 || strlen(hex) != 32 || p->tier < 0 ||
	    p->tier >= PLAN_MAX_TIERS || (strcmp(action, "check") && strcmp(action, "repair")))
		return -1;
	for (int i = 0; i < 16; i++) {
		if (!isxdigit((unsigned char)hex[2 * i]) || !isxdigit((unsigned char)hex[2 * i + 1]) ||
		    sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		p->uuid[i] = (uint8_t)v;
	}
	snprintf(p->action, sizeof(p->action), "%s", action);
	return volume_uuid_zero(p->uuid) ? -1 : 0;
}

static void
pending_load(void)
{
	char line[160];
	FILE *f;

	if (state_path[0] == '\0')
		return;	/* tests: kept in memory */
	npending = 0;
	if ((f = fopen(state_path, "re")) == NULL)
		return;
	while (npending < PENDING_MAX && fgets(line, sizeof(line), f))
		if (pending_parse(line, &pending[npending]) == 0)
			npending++;
	fclose(f);
}

static void
pending_save(void)
{
	char text[PENDING_MAX * 120 + 1] = "", hex[40];
	size_t n = 0;

	if (state_path[0] == '\0')
		return;	/* tests: kept in memory */
	for (int i = 0; i < npending; i++) {
		unit_hex(pending[i].uuid, hex, sizeof(hex));
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s %d %s %" PRIu64 " %" PRIu64 "\n",
		    hex, pending[i].tier, pending[i].action, pending[i].sector, pending[i].mismatch);
	}
	if (unit_file_replace(state_path, text) == -1)
		log_warn("scrub: %s", state_path);
}

static struct pending *
pending_of(const uint8_t uuid[16])
{
	for (int i = 0; i < npending; i++)
		if (memcmp(pending[i].uuid, uuid, 16) == 0)
			return &pending[i];
	return NULL;
}

static void
pending_set(const struct scrub *s, uint64_t sector)
{
	struct pending *p = pending_of(s->uuid);

	if (p == NULL) {
		if (npending == PENDING_MAX)
			memmove(&pending[0], &pending[1], --npending * sizeof(pending[0]));
		p = &pending[npending++];
	}
	memcpy(p->uuid, s->uuid, 16);
	p->tier = s->tier;
	snprintf(p->action, sizeof(p->action), "%s", s->action);
	p->sector = sector;
	p->mismatch = s->mismatch;
	pending_save();
}

static void
pending_clear(const uint8_t uuid[16])
{
	struct pending *p = pending_of(uuid);

	if (p == NULL)
		return;
	*p = pending[--npending];
	pending_save();
}

/* ---- a run ---- */

static int
redundant(enum tier_kind k)
{
	return k == TIER_RAID1 || k == TIER_RAID5 || k == TIER_RAID10;
}

/* The first redundant tier at or after t, or -1. */
static int
next_tier(const struct volume *v, int t)
{
	for (; t < v->label.ntiers; t++)
		if (redundant(v->label.tier[t].kind))
			return t;
	return -1;
}

static struct scrub **
run_slot(const char *name)
{
	for (int i = 0; i < MAX_VOLUMES; i++)
		if (runs[i] && strcmp(runs[i]->name, name) == 0)
			return &runs[i];
	return NULL;
}

static int
tier_start(struct scrub *s, const struct volume *v, uint64_t from, char *err, size_t len)
{
	struct sys_md_sync req = { .from = from, .speed_min = speed_min, .speed_max = speed_max };
	char md[SYS_NAME_MAX];

	snprintf(req.action, sizeof(req.action), "%s", s->action);
	volume_md_name(v, s->tier, md, sizeof(md));
	if (sys->md_sync(md, &req) == -1) {
		snprintf(err, len, "%s: %s cannot start: %s", md, s->action, strerror(errno));
		return -1;
	}
	log_info("volume %s: %s of %s from sector %" PRIu64, v->name, s->action, md, from);
	return 0;
}

static struct json_object *
result(const struct scrub *s, int complete, uint64_t resume)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "name", json_object_new_string(s->name));
	json_object_object_add(r, "action", json_object_new_string(s->action));
	json_object_object_add(r, "mismatch_cnt", json_object_new_int64((int64_t)s->mismatch));
	json_object_object_add(r, "complete", json_object_new_boolean(complete));
	if (s->from)
		json_object_object_add(r, "resumed_sector", json_object_new_int64((int64_t)s->from));
	if (!complete) {
		json_object_object_add(r, "tier", json_object_new_int(s->tier + 1));
		json_object_object_add(r, "resume_sector", json_object_new_int64((int64_t)resume));
	}
	return r;
}

/* md went idle on the tier: it finished it, or stopped where sync_min says. */
static void
tier_ended(struct scrub *s, struct volume *v, const struct sys_md_status *st)
{
	struct sys_md_sync idle = { .action = "idle" };
	char err[256], md[SYS_NAME_MAX];
	int next;

	/* md's own speeds again, for a rebuild that may come. */
	volume_md_name(v, s->tier, md, sizeof(md));
	if (sys->md_sync(md, &idle) == -1)
		log_warn("volume %s: %s: md's speed window", s->name, md);
	s->mismatch += st->mismatch_cnt;
	if (s->stop || st->sync_min != 0) {
		pending_set(s, st->sync_min);
		if (s->stop == 0) {
			job_fail(s->job, NAS_ERR_FAILED, "md stopped the %s of tier %d at sector %"
			    PRIu64 " (volume %s): it goes on from there next time", s->action,
			    s->tier + 1, st->sync_min, volume_state_name(volume_state_now(v)));
			return;
		}
		log_info("volume %s: %s stopped at tier %d sector %" PRIu64 "%s", s->name,
		    s->action, s->tier + 1, st->sync_min, s->stop == 2 ? " (max_hours)" : "");
		job_done(s->job, result(s, 0, st->sync_min));
		return;
	}
	if ((next = next_tier(v, s->tier + 1)) >= 0) {
		s->tier = next;
		pending_set(s, 0);
		if (tier_start(s, v, 0, err, sizeof(err)) == -1)
			job_fail(s->job, NAS_ERR_FAILED, "%s", err);
		return;
	}
	pending_clear(s->uuid);
	log_info("volume %s: %s done, %" PRIu64 " sectors mismatched", s->name, s->action,
	    s->mismatch);
	job_done(s->job, result(s, 1, 0));
}

static void
tick_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct scrub *s = (struct scrub *)((char *)w - offsetof(struct scrub, tick));
	struct volume *v = volume_find(s->name);
	struct sys_md_status st;
	char md[SYS_NAME_MAX], step[64];
	int ntiers = 0, before = 0;

	(void)l;
	(void)revents;
	if (v && v->assembled)
		volume_md_name(v, s->tier, md, sizeof(md));
	if (v == NULL || !v->assembled || sys->md_status(md, &st) == -1) {
		job_fail(s->job, NAS_ERR_FAILED, "volume %s stopped during its %s", s->name,
		    s->action);
		return;
	}
	if (strcmp(st.sync_action, s->action) != 0) {
		tier_ended(s, v, &st);
		return;
	}
	if (budget_s > 0 && !s->stop && mono() - s->started >= budget_s) {
		struct sys_md_sync idle = { .action = "idle" };

		s->stop = 2;
		if (sys->md_sync(md, &idle) == -1)
			log_warn("volume %s: stopping the %s of %s", s->name, s->action, md);
		return;
	}
	for (int t = next_tier(v, 0); t >= 0; t = next_tier(v, t + 1)) {
		ntiers++;
		before += t < s->tier;
	}
	snprintf(step, sizeof(step), "tier %d: %s", s->tier + 1, s->action);
	job_progress(s->job, 100.0 * (before + (st.sync_total ? (double)st.sync_done /
	    st.sync_total : 0)) / (ntiers ? ntiers : 1), step);
}

static void
run_stop(struct scrub *s)
{
	struct volume *v = volume_find(s->name);
	struct sys_md_sync idle = { .action = "idle" };
	char md[SYS_NAME_MAX];

	if (s->stop || v == NULL)
		return;
	s->stop = 1;
	volume_md_name(v, s->tier, md, sizeof(md));
	if (sys->md_sync(md, &idle) == -1)
		log_warn("volume %s: stopping the %s of %s", s->name, s->action, md);
}

static void
run_cancel(struct job *j, void *arg)
{
	(void)j;
	run_stop(arg);
}

static void
run_release(void *arg)
{
	struct scrub *s = arg, **slot = run_slot(s->name);

	ev_timer_stop(nas_loop(), &s->tick);
	if (slot)
		*slot = NULL;
	free(s);
}

static const struct job_ops scrub_ops = { run_cancel, run_release };

/* Why v cannot be scrubbed now, or NULL. */
static const char *
refusal(const struct volume *v, int *code)
{
	struct sys_md_status st;

	*code = NAS_ERR_INVALID;
	if (v->foreign || v->inconsistent || !v->assembled)
		return "it is not running";
	if (next_tier(v, 0) < 0)
		return "it has no redundant tier (single, JBOD and RAID 0 keep one copy)";
	*code = NAS_ERR_BUSY;
	if (v->job)
		return "a job runs on it";
	for (int t = next_tier(v, 0); t >= 0; t = next_tier(v, t + 1))
		if (volume_tier_state(v, t, &st) != VOL_CLEAN)
			return "a tier is not clean (degraded, rebuilding or resyncing): md has "
			    "nothing to compare or is busy";
	return NULL;
}

/* Starts (or resumes, where the last run stopped) a check or repair. */
struct job *
scrub_start(struct volume *v, const char *action, int *code, char *err, size_t len)
{
	struct scrub *s, **slot = NULL;
	const char *why;
	struct pending *p;
	uint64_t from = 0;
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	if (run_slot(v->name)) {
		*code = NAS_ERR_BUSY;
		snprintf(err, len, "volume %s: a scrub runs already", v->name);
		return NULL;
	}
	if ((why = refusal(v, code)) != NULL) {
		snprintf(err, len, "volume %s cannot be scrubbed: %s", v->name, why);
		return NULL;
	}
	for (int i = 0; i < MAX_VOLUMES && slot == NULL; i++)
		if (runs[i] == NULL)
			slot = &runs[i];
	*code = NAS_ERR_LIMIT;
	if (slot == NULL || (s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, len, "no room for another scrub");
		return NULL;
	}
	snprintf(s->name, sizeof(s->name), "%s", v->name);
	memcpy(s->uuid, v->label.volume_uuid, 16);
	snprintf(s->action, sizeof(s->action), "%s", action);
	s->tier = next_tier(v, 0);
	/* The same action goes on where it stopped, if md still has that much. */
	p = pending_of(s->uuid);
	if (p && strcmp(p->action, action) == 0 && p->tier < v->label.ntiers &&
	    redundant(v->label.tier[p->tier].kind)) {
		volume_md_name(v, p->tier, md, sizeof(md));
		if (sys->md_status(md, &st) == 0 && p->sector < st.size / 512) {
			s->tier = p->tier;
			from = p->sector;
			s->mismatch = p->mismatch;
		}
	}
	*code = NAS_ERR_FAILED;
	err[0] = '\0';
	if (tier_start(s, v, from, err, len) == -1 && from > 0) {
		/* A kept place md refuses (the array changed since) is no place. */
		s->tier = next_tier(v, 0);
		s->mismatch = 0;
		from = 0;
		if (tier_start(s, v, from, err, len) == 0)
			err[0] = '\0';
	}
	if (err[0]) {
		free(s);
		return NULL;
	}
	s->started = mono();
	s->from = from;
	if ((s->job = job_start("volume.scrub", v->name, &scrub_ops, s)) == NULL) {
		struct sys_md_sync idle = { .action = "idle" };

		volume_md_name(v, s->tier, md, sizeof(md));
		sys->md_sync(md, &idle);
		free(s);
		*code = NAS_ERR_LIMIT;
		snprintf(err, len, "too many jobs");
		return NULL;
	}
	*slot = s;
	pending_set(s, from);
	ev_timer_init(&s->tick, tick_cb, tick_s, tick_s);
	ev_timer_start(nas_loop(), &s->tick);
	return s->job;
}

/* volume.scrub stop: the running one stops and keeps its place. */
int
scrub_stop(const char *name)
{
	struct scrub **slot = run_slot(name);

	if (slot == NULL)
		return -1;
	run_stop(*slot);
	return 0;
}

/* The action an unfinished run of v left (to go on with), or NULL. */
const char *
scrub_pending(const struct volume *v)
{
	const struct pending *p = pending_of(v->label.volume_uuid);

	return p ? p->action : NULL;
}

/* The job of the scrub running on a volume, or NULL. */
struct job *
scrub_job(const char *name)
{
	struct scrub **slot = run_slot(name);

	return slot ? (*slot)->job : NULL;
}

void
scrub_set_options(const char *path, double budget, unsigned smin, unsigned smax, double tick)
{
	snprintf(state_path, sizeof(state_path), "%s", path ? path : "");
	budget_s = budget;
	speed_min = smin;
	speed_max = smax;
	tick_s = tick > 0 ? tick : 1.;
	pending_load();
}

/* Tests: no run, nothing pending. */
void
scrub_reset(void)
{
	for (int i = 0; i < MAX_VOLUMES; i++)
		runs[i] = NULL;
	npending = 0;
}

/* ---- volume.scrub ---- */

static void
volume_scrub(struct rpc_call *c, struct json_object *params)
{
	const char *name = rpc_param_str(params, "name", "");
	const char *action = rpc_param_str(params, "action", "check");
	struct volume *v = volume_find(name);
	struct json_object *o;
	struct job *j;
	char err[256];
	int code;

	if (v == NULL) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no volume %s", name);
		return;
	}
	if (strcmp(action, "stop") == 0) {
		if ((j = scrub_job(v->name)) == NULL) {
			rpc_error(c, NAS_ERR_INVALID, "volume %s: no scrub runs", v->name);
			return;
		}
		scrub_stop(v->name);
	} else if ((j = scrub_start(v, action, &code, err, sizeof(err))) == NULL) {
		rpc_error(c, code, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_int((int)job_id(j)));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	json_object_object_add(o, "action", json_object_new_string(action));
	rpc_result(c, o);
}

static const char *const scrub_actions[] = { "check", "repair", "stop", NULL };

static const struct rpc_param scrub_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" },
	{ "action", RPC_STRING, 0, 0, 0, scrub_actions,
	  "check (default), repair (rewrite what differs) or stop" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method scrub_methods[] = {
	{ "volume.scrub", volume_scrub, scrub_params, RPC_MUTATES,
	  "check or repair a volume's redundancy with md; returns a job id" },
	{ NULL, NULL, NULL, 0, NULL }
};
