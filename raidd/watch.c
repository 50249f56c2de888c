/*
 * Failure detection without a timer (Decision 23): md's attributes that
 * notify, and /proc/mdstat, wake the event loop through one fd of the
 * seam (an epoll set on Linux: libev's ev_io asks only for EPOLLIN,
 * and sysfs files are always "readable"). Each wake re-reads the
 * arrays' states, announces what changed, and re-registers: members
 * and arrays come and go. While md syncs, a one-second timer reports
 * progress (volume.progress); it runs only then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volume.h"

#define TRACK_MAX	(MAX_VOLUMES * 4)

static ev_io watch_w;
static ev_timer progress_w;
static int watch_fd = -1;

/* What was last said of each array's sync and each member's health. */
static struct {
	char		md[SYS_NAME_MAX];
	char		action[16];
} synced[TRACK_MAX];

static struct {
	char		md[SYS_NAME_MAX];
	char		dev[SYS_NAME_MAX];
	unsigned	errors;
	int		faulty;
} health[TRACK_MAX * 2];

static void
watch_cb(struct ev_loop *l, ev_io *w, int revents)
{
	(void)l;
	(void)revents;
	if (sys->watch_read(w->fd) == 0)
		return;
	volume_check_states();
}

/* md's sync_action as the API names it (frozen and the like: idle). */
static const char *
action_name(const struct sys_md_status *st)
{
	static const char *const known[] = { "resync", "recover", "check", "repair",
	    "reshape", NULL };

	for (int i = 0; known[i] != NULL; i++)
		if (strcmp(st->sync_action, known[i]) == 0)
			return known[i];
	return "idle";
}

/* done of total as a percent with one decimal, rounded down and written as
 * such (not 18.899999999999999): what volume.show and the events say. */
struct json_object *
watch_percent(uint64_t done, uint64_t total)
{
	char pct[16];

	if (total == 0)
		return json_object_new_double_s(0.0, "0.0");
	if (done > total)
		done = total;
	snprintf(pct, sizeof(pct), "%.1f", (double)(1000 * done / total) / 10.0);
	return json_object_new_double_s(atof(pct), pct);
}

/* A tier's sync: action, progress, eta_s, speed_kbs, mismatch_cnt. */
void
watch_sync_fields(struct json_object *o, const struct sys_md_status *st)
{
	const char *action = action_name(st);
	int busy = strcmp(action, "idle") != 0 && st->sync_total > 0;
	uint64_t done = st->sync_done < st->sync_total ? st->sync_done : st->sync_total;
	uint64_t left = busy ? st->sync_total - done : 0;

	json_object_object_add(o, "action", json_object_new_string(action));
	json_object_object_add(o, "progress", busy ? watch_percent(done, st->sync_total) :
	    NULL);
	json_object_object_add(o, "speed_kbs", busy ?
	    json_object_new_int64((int64_t)st->sync_speed) : NULL);
	json_object_object_add(o, "eta_s", busy && st->sync_speed ?
	    json_object_new_int64((int64_t)(left / 2 / st->sync_speed)) : NULL);
	json_object_object_add(o, "mismatch_cnt", json_object_new_int64((int64_t)st->mismatch_cnt));
}

static int
track(const char *md)
{
	int free_slot = -1;

	for (int i = 0; i < TRACK_MAX; i++) {
		if (strcmp(synced[i].md, md) == 0)
			return i;
		if (synced[i].md[0] == '\0' && free_slot == -1)
			free_slot = i;
	}
	if (free_slot >= 0)
		snprintf(synced[free_slot].md, sizeof(synced[0].md), "%s", md);
	return free_slot;
}

static void
progress_event(const struct volume *v, int t, const struct sys_md_status *st)
{
	struct json_object *ev = json_object_new_object();
	char md[SYS_NAME_MAX];

	volume_md_name(v, t, md, sizeof(md));
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "tier", json_object_new_int(t + 1));
	json_object_object_add(ev, "md_device", json_object_new_string(md));
	watch_sync_fields(ev, st);
	json_object_object_add(ev, "percent", json_object_get(json_object_object_get(ev,
	    "progress")));
	nas_event("volume.progress", ev);
}

/*
 * Every array that syncs says how far it is, once a second at most
 * (this timer); one that stopped says so once. Returns how many sync.
 */
static int
progress_all(int announce)
{
	struct sys_md_status st;
	struct volume *v;
	char md[SYS_NAME_MAX];
	int busy = 0, k;

	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		for (int t = 0; v->assembled && t < v->label.ntiers; t++) {
			const char *action;

			if (v->label.tier[t].kind == TIER_NONE)
				continue;
			volume_md_name(v, t, md, sizeof(md));
			if (sys->md_status(md, &st) == -1 || (k = track(md)) < 0)
				continue;
			action = action_name(&st);
			if (strcmp(action, "idle") != 0) {
				busy++;
				if (announce || strcmp(synced[k].action, action) != 0)
					progress_event(v, t, &st);
			} else if (synced[k].action[0] && strcmp(synced[k].action, "idle") != 0)
				progress_event(v, t, &st);
			snprintf(synced[k].action, sizeof(synced[k].action), "%s", action);
		}
	}
	return busy;
}

static void
progress_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)revents;
	if (progress_all(1) == 0)
		ev_timer_stop(l, w);
}

/* disk.health: a member md counts errors on, or failed, once per change. */
static void
health_note(const struct volume *v, int m, const char *md, const struct sys_md_status *st,
    int i)
{
	int faulty = strstr(st->member[i].state, "faulty") != NULL, k, free_slot = -1;
	struct json_object *ev;

	for (k = 0; k < TRACK_MAX * 2; k++) {
		if (strcmp(health[k].md, md) == 0 && strcmp(health[k].dev, st->member[i].dev) == 0)
			break;
		if (health[k].md[0] == '\0' && free_slot == -1)
			free_slot = k;
	}
	if (k == TRACK_MAX * 2) {
		if (free_slot == -1 || (st->member[i].errors == 0 && !faulty))
			return;
		k = free_slot;
		snprintf(health[k].md, sizeof(health[k].md), "%s", md);
		snprintf(health[k].dev, sizeof(health[k].dev), "%s", st->member[i].dev);
	}
	if (health[k].errors == st->member[i].errors && health[k].faulty == faulty)
		return;
	health[k].errors = st->member[i].errors;
	health[k].faulty = faulty;
	ev = json_object_new_object();
	json_object_object_add(ev, "disk", json_object_new_string(v->disk[m]));
	json_object_object_add(ev, "serial", json_object_new_string(v->label.member[m].serial));
	json_object_object_add(ev, "volume", json_object_new_string(v->name));
	json_object_object_add(ev, "md_device", json_object_new_string(md));
	json_object_object_add(ev, "member", json_object_new_string(st->member[i].dev));
	json_object_object_add(ev, "errors", json_object_new_int64(st->member[i].errors));
	json_object_object_add(ev, "faulty", json_object_new_boolean(faulty));
	nas_event("disk.health", ev);
}

static void
health_all(void)
{
	struct sys_md_status st;
	struct volume *v;
	char md[SYS_NAME_MAX];
	int idx;

	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		for (int t = 0; v->assembled && t < v->label.ntiers; t++) {
			const struct label_tier *lt = &v->label.tier[t];

			if (lt->kind == TIER_NONE)
				continue;
			volume_md_name(v, t, md, sizeof(md));
			if (sys->md_status(md, &st) == -1)
				continue;
			for (int r = 0; r < lt->nmembers; r++) {
				volume_member_state(v, t, r, &st, &idx);
				if (idx >= 0 && v->disk[lt->member[r]][0])
					health_note(v, lt->member[r], md, &st, idx);
			}
		}
	}
}

/*
 * After every look at the arrays: watch exactly the running ones, start
 * the progress timer when one syncs, report member health, set LEDs.
 */
void
watch_update(void)
{
	char names[TRACK_MAX][SYS_NAME_MAX];
	struct volume *v;
	int n = 0;

	for (int i = 0; (v = volume_at(i)) != NULL; i++)
		for (int t = 0; v->assembled && t < v->label.ntiers && n < TRACK_MAX; t++)
			if (v->label.tier[t].kind != TIER_NONE)
				volume_md_name(v, t, names[n++], SYS_NAME_MAX);
	if (watch_fd != -1 && sys->watch_arrays(watch_fd, names, n) == -1)
		log_warn("md watch");
	if (progress_all(0) > 0 && !ev_is_active(&progress_w)) {
		ev_timer_init(&progress_w, progress_cb, 1., 1.);
		ev_timer_start(nas_loop(), &progress_w);
	}
	health_all();
	led_update();
}

/* Opens the seam's watch fd and hangs it on the loop; -1 without one. */
int
watch_start(void)
{
	watch_stop();
	if ((watch_fd = sys->watch_open()) == -1) {
		log_warnx("md changes are seen only at the next disk event or monitor tick");
		return -1;
	}
	ev_io_init(&watch_w, watch_cb, watch_fd, EV_READ);
	ev_io_start(nas_loop(), &watch_w);
	watch_update();
	return 0;
}

/* Tests: forget the fd (the simulator closes it) and what was said. */
void
watch_stop(void)
{
	if (watch_fd != -1)
		ev_io_stop(nas_loop(), &watch_w);
	ev_timer_stop(nas_loop(), &progress_w);
	watch_fd = -1;
	memset(synced, 0, sizeof(synced));
	memset(health, 0, sizeof(health));
}
