/*
 * Which disks belong to a volume that is resyncing, rebuilding or being
 * scrubbed: raidd knows (volume.list), and powerd asks it over its
 * socket without blocking the loop (lib/client-ev.c). An answer older
 * than 30 s counts as none (drive.c), so a raidd that is gone keeps
 * every disk awake rather than letting one sleep under a rebuild.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "powerd.h"

#define SYNC_EVERY	10.0
#define SYNC_TIMEOUT_MS	5000

static char sock[256] = "/run/nas/raidd.sock";
static struct rpc_client *cl;
static double asked_at;
static int in_flight;

void
sync_set_socket(const char *path)
{
	pathf(sock, sizeof(sock), "%s", path);
}

/* md's sync_action values that mean the array is reading every member. */
static int
action_busy(const char *a)
{
	return a != NULL && strcmp(a, "idle") != 0 && strcmp(a, "frozen") != 0;
}

static int
volume_busy(struct json_object *v)
{
	struct json_object *tiers, *t, *x;
	const char *state = NULL;

	if (json_object_object_get_ex(v, "state", &x))
		state = json_object_get_string(x);
	if (state != NULL && (strcmp(state, "resyncing") == 0 || strcmp(state, "creating") == 0))
		return 1;
	if (!json_object_object_get_ex(v, "tiers", &tiers) ||
	    !json_object_is_type(tiers, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(tiers); i++) {
		t = json_object_array_get_idx(tiers, i);
		if (json_object_object_get_ex(t, "sync_action", &x) &&
		    json_object_is_type(x, json_type_string) &&
		    action_busy(json_object_get_string(x)))
			return 1;
	}
	return 0;
}

/* Adds the member disks of every tier of v to names. */
static int
add_members(struct json_object *v, const char **names, int n, int max)
{
	struct json_object *tiers, *mem, *d;

	if (!json_object_object_get_ex(v, "tiers", &tiers) ||
	    !json_object_is_type(tiers, json_type_array))
		return n;
	for (size_t i = 0; i < json_object_array_length(tiers); i++) {
		if (!json_object_object_get_ex(json_object_array_get_idx(tiers, i), "members",
		    &mem) || !json_object_is_type(mem, json_type_array))
			continue;
		for (size_t j = 0; j < json_object_array_length(mem) && n < max; j++)
			if (json_object_object_get_ex(json_object_array_get_idx(mem, j), "disk",
			    &d) && json_object_is_type(d, json_type_string))
				names[n++] = json_object_get_string(d);
	}
	return n;
}

int
sync_apply(struct json_object *volumes, double now)
{
	const char *names[BOARD_MAX_BAYS * 4];
	int n = 0;

	if (!json_object_is_type(volumes, json_type_array)) {
		drive_set_syncing(NULL, 0, now);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(volumes); i++) {
		struct json_object *v = json_object_array_get_idx(volumes, i);

		if (volume_busy(v))
			n = add_members(v, names, n, (int)(sizeof(names) / sizeof(names[0])));
	}
	drive_set_syncing(names, n, now);
	return 0;
}

static double answered_mono;

static void
answer_cb(struct json_object *result, const struct rpc_client_error *err, void *arg)
{
	(void)arg;
	in_flight = 0;
	if (err != NULL) {
		log_debug("raidd volume.list: %s", err->message);
		rpc_client_close(cl);
		cl = NULL;
		return;
	}
	if (sync_apply(result, answered_mono) == -1)
		log_warnx("raidd volume.list: not a list of volumes");
}

void
sync_poll(double now)
{
	struct rpc_client_error err = { 0 };

	if (in_flight || (asked_at > 0 && now - asked_at < SYNC_EVERY))
		return;
	asked_at = now;
	if (cl == NULL && (cl = rpc_client_open_ev(nas_loop(), sock, &err)) == NULL) {
		log_debug("%s: %s", sock, err.message);
		rpc_client_error_clear(&err);
		return;
	}
	/* The answer is dated when asked: it is at least that fresh. */
	answered_mono = now;
	if (rpc_client_call_ev(cl, "volume.list", NULL, SYNC_TIMEOUT_MS, answer_cb, NULL) == -1) {
		rpc_client_close(cl);
		cl = NULL;
		return;
	}
	in_flight = 1;
}
