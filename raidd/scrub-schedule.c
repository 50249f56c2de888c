/*
 * When scrubs start by themselves (raidd.ini [scrub] schedule): "off",
 * "daily HOUR", "weekly DAY HOUR" (sun..sat) or "monthly DAY HOUR"
 * (1-28, so every month has it). At HOUR every night a run that
 * stopped on its budget goes on; on the scheduled day every redundant
 * volume without one starts a check. Repairs are never scheduled: what
 * differs is for a user to judge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volume.h"

static const char *const days[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static struct scrub_sched sched;
static int last_yday = -1, last_year = -1;
static ev_timer sched_w;

static int
number(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

int
scrub_sched_parse(const char *text, struct scrub_sched *out, char *err, size_t len)
{
	char buf[64], *w[4] = { NULL }, *save = NULL;
	int n = 0;

	memset(out, 0, sizeof(*out));
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 3)
			goto bad;
		w[n++] = t;
	}
	if (n == 1 && strcmp(w[0], "off") == 0)
		return 0;
	if (n == 2 && strcmp(w[0], "daily") == 0 && number(w[1], 0, 23, &out->hour) == 0) {
		out->every = 1;
		return 0;
	}
	if (n == 3 && strcmp(w[0], "weekly") == 0 && number(w[2], 0, 23, &out->hour) == 0) {
		for (int d = 0; days[d]; d++)
			if (strcmp(w[1], days[d]) == 0) {
				out->every = 2;
				out->day = d;
				return 0;
			}
	}
	if (n == 3 && strcmp(w[0], "monthly") == 0 && number(w[1], 1, 28, &out->day) == 0 &&
	    number(w[2], 0, 23, &out->hour) == 0) {
		out->every = 3;
		return 0;
	}
bad:
	memset(out, 0, sizeof(*out));
	snprintf(err, len, "schedule: off, daily HOUR, weekly sun..sat HOUR or monthly 1-28 HOUR");
	return -1;
}

/* Whether the day of tm is a scheduled one. */
int
scrub_sched_day(const struct scrub_sched *s, const struct tm *tm)
{
	switch (s->every) {
	case 1:
		return 1;
	case 2:
		return tm->tm_wday == s->day;
	case 3:
		return tm->tm_mday == s->day;
	default:
		return 0;
	}
}

/* Once a night at the hour: unfinished runs go on, the day's checks start. */
void
scrub_sched_tick(const struct tm *tm)
{
	struct volume *v;
	char err[256];
	int code;

	if (sched.every == 0 || tm->tm_hour != sched.hour ||
	    (tm->tm_yday == last_yday && tm->tm_year == last_year))
		return;
	last_yday = tm->tm_yday;
	last_year = tm->tm_year;
	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		const char *action = scrub_pending(v);

		if (action == NULL && !scrub_sched_day(&sched, tm))
			continue;
		if (scrub_job(v->name) || (action == NULL && (v->foreign || !v->assembled)))
			continue;
		if (scrub_start(v, action ? action : "check", &code, err, sizeof(err)) == NULL)
			log_info("scheduled scrub: %s", err);
	}
}

static void
sched_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	time_t now = time(NULL);
	struct tm tm;

	(void)l;
	(void)w;
	(void)revents;
	if (localtime_r(&now, &tm))
		scrub_sched_tick(&tm);
}

/* A minute's resolution is plenty for an hour of the night. */
void
scrub_sched_set(const struct scrub_sched *s)
{
	sched = *s;
	ev_timer_stop(nas_loop(), &sched_w);
	if (sched.every == 0)
		return;
	ev_timer_init(&sched_w, sched_cb, 60., 60.);
	ev_timer_start(nas_loop(), &sched_w);
}
