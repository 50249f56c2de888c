/*
 * powerd's commands that need more than a table: power history as a
 * small text sparkline.
 */
#include <math.h>
#include <string.h>

#include "nasctl.h"

#define SPARK_WIDTH	60	/* samples on one line */

/* Eight levels: block elements in a UTF-8 terminal, ASCII otherwise. */
static const char *const spark_utf8[] = {
	"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"
};
static const char spark_ascii[] = "_.-:=+*#";

/* The step that puts `seconds` of samples on one line. */
int
spark_step(int seconds)
{
	long long step = ((long long)seconds + SPARK_WIDTH - 1) / SPARK_WIDTH;

	/* The daemon judges the range; this only must not overflow. */
	return step < 1 ? 1 : step > 3600 ? 3600 : (int)step;
}

static int
watts_of(struct json_object *s, double *w)
{
	struct json_object *v = json_path(s, "watts");

	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return 0;
	*w = json_object_get_double(v);
	return isfinite(*w);
}

/* One line of levels for samples; a sample with no reading is a blank. */
void
spark_print(FILE *out, struct json_object *samples, int utf8)
{
	size_t n = json_object_is_type(samples, json_type_array) ?
	    json_object_array_length(samples) : 0;
	double w, lo = INFINITY, hi = -INFINITY, sum = 0;
	int nw = 0, level;

	for (size_t i = 0; i < n; i++)
		if (watts_of(json_object_array_get_idx(samples, i), &w)) {
			lo = w < lo ? w : lo;
			hi = w > hi ? w : hi;
			sum += w;
			nw++;
		}
	if (nw == 0) {
		fprintf(out, "no readings\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!watts_of(json_object_array_get_idx(samples, i), &w)) {
			fputc(' ', out);
			continue;
		}
		level = hi > lo ? (int)((w - lo) / (hi - lo) * 7.999) : 0;
		if (utf8)
			fputs(spark_utf8[level], out);
		else
			fputc(spark_ascii[level], out);
	}
	fprintf(out, "\nmin %.1f W  avg %.1f W  max %.1f W  (%d samples)\n", lo, sum / nw,
	    hi, nw);
}

int
run_power_history(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *r, *v;
	int seconds = 600, rc;

	(void)local;
	if (json_object_object_get_ex(params, "seconds", &v))
		seconds = json_object_get_int(v);
	else
		json_object_object_add(params, "seconds", json_object_new_int(seconds));
	json_object_object_add(params, "step", json_object_new_int(spark_step(seconds)));
	if ((rc = call_once(x, cmd->daemon, cmd->method, params, &r)) != EXIT_OK) {
		json_object_put(r);
		return rc;
	}
	if (x->json)
		json_print(x->out, r);
	else
		spark_print(x->out, json_path(r, "samples"), text_utf8);
	json_object_put(r);
	return EXIT_OK;
}
