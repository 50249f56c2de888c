/*
 * Energy per board state, and the ring of recent samples for graphs.
 * Watts are integrated with the trapezoid rule between two readings;
 * an interval with no reading at one end adds seconds but no joules,
 * since any figure for it would be invented. The ring is a fixed array:
 * memory does not grow with uptime.
 */
#include <math.h>
#include <string.h>

#include "powerd.h"

void
energy_reset(struct energy *e)
{
	memset(e, 0, sizeof(*e));
	e->last_w = NAN;
}

static void
ring_push(struct energy *e, double wall, double watts, enum board_state st)
{
	struct sample *s = &e->ring[e->head];

	s->t = wall;
	s->watts = (float)watts;
	s->state = (uint8_t)st;
	e->head = (e->head + 1) % HISTORY_LEN;
	if (e->count < HISTORY_LEN)
		e->count++;
}

void
energy_add(struct energy *e, double mono, double wall, double watts, double joules,
    enum board_state st)
{
	double dt, j = -1;

	if ((unsigned)st >= BS_NSTATES)
		st = BS_IDLE;
	if (e->have_last && mono > e->last_mono) {
		dt = mono - e->last_mono;
		e->by_s[st] += dt;
		if (joules >= 0 && isfinite(joules))
			j = joules;
		else if (!isnan(watts) && !isnan(e->last_w))
			j = (watts + e->last_w) / 2 * dt;
		if (j >= 0) {
			e->by_j[st] += j;
			e->joules += j;
		}
	}
	e->have_last = 1;
	e->last_mono = mono;
	e->last_w = watts;
	ring_push(e, wall, watts, st);
}

/* The i-th newest sample (0: the newest). */
static const struct sample *
nth_newest(const struct energy *e, int i)
{
	return &e->ring[(e->head - 1 - i + 2 * HISTORY_LEN) % HISTORY_LEN];
}

/* The state most samples of a bucket were in. */
static enum board_state
bucket_state(const int n[BS_NSTATES])
{
	int best = BS_IDLE;

	for (int s = 0; s < BS_NSTATES; s++)
		if (n[s] > n[best])
			best = s;
	return best;
}

static void
bucket_emit(struct json_object *arr, double t, double sum, int nw, const int n[])
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "t", json_object_new_double(t));
	json_object_object_add(o, "watts", nw > 0 ? json_object_new_double(sum / nw) : NULL);
	json_object_object_add(o, "state",
	    json_object_new_string(board_state_name(bucket_state(n))));
	json_object_array_add(arr, o);
}

struct json_object *
energy_history(const struct energy *e, int seconds, int step, double now_wall)
{
	struct json_object *arr = json_object_new_array();
	double from = now_wall - seconds, bstart = 0, sum = 0;
	int n[BS_NSTATES] = { 0 }, nw = 0, open = 0;

	if (step < 1)
		step = 1;
	/* Oldest first; a bucket covers [bstart, bstart + step). */
	for (int i = e->count - 1; i >= 0; i--) {
		const struct sample *s = nth_newest(e, i);

		if (s->t <= from)
			continue;
		if (open && s->t >= bstart + step) {
			bucket_emit(arr, bstart, sum, nw, n);
			open = 0;
		}
		if (!open) {
			bstart = s->t;
			sum = 0;
			nw = 0;
			memset(n, 0, sizeof(n));
			open = 1;
		}
		if (!isnan(s->watts)) {
			sum += s->watts;
			nw++;
		}
		n[s->state < BS_NSTATES ? s->state : BS_IDLE]++;
	}
	if (open)
		bucket_emit(arr, bstart, sum, nw, n);
	return arr;
}
