/*
 * The HTML report: one file, no scripts, no links out (a line PC or a
 * web UI shows it as it is), made from the JSON record alone so any
 * stored record can be shown again. Every string from the record is
 * escaped: a board model or a volume name is text, never markup.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "selftest.h"

#define CHART_W		720
#define LABEL_W		190
#define ROW_H		22

static void
esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

static struct json_object *
get(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *
sget(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* A number, or NAN for null and anything that is not one. */
static double
nget(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	if (v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return json_object_get_double(v);
	return NAN;
}

static const char *
colour(struct json_object *row)
{
	struct json_object *p = get(row, "pass");

	if (p == NULL)
		return "#999";
	return json_object_get_boolean(p) ? "#3a7" : "#c33";
}

/* Horizontal bars of one metric, each with its limit as a tick. */
static void
bars(FILE *f, struct json_object *results, const char *metric, const char *unit)
{
	size_t n = json_object_array_length(results), rows = 0;
	double top = 0;
	int y;

	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(results, i);
		double v = nget(r, metric), l = nget(r, "limit");

		if (strcmp(sget(r, "metric"), metric) || isnan(v))
			continue;
		rows++;
		top = fmax(top, fmax(v, isnan(l) ? 0 : l));
	}
	if (rows == 0 || !(top > 0))
		return;
	fprintf(f, "<h2>%s</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
	    "class=\"chart\" data-chart=\"%s\">\n", unit, CHART_W, rows * ROW_H + 24, metric);
	y = 4;
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_array_get_idx(results, i);
		double v = nget(r, metric), l = nget(r, "limit"), scale = (CHART_W - LABEL_W - 90) / top;

		if (strcmp(sget(r, "metric"), metric) || isnan(v))
			continue;
		fprintf(f, "<text x=\"0\" y=\"%d\">", y + 15);
		esc(f, sget(r, "test"));
		fputc(' ', f);
		esc(f, sget(r, "op"));
		fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
		    "<text x=\"%.1f\" y=\"%d\">%.1f</text>\n", LABEL_W, y + 3, v * scale, ROW_H - 6,
		    colour(r), LABEL_W + v * scale + 4, y + 15, v);
		if (!isnan(l))
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" "
			    "stroke-width=\"2\" class=\"limit\"/>\n", LABEL_W + l * scale,
			    LABEL_W + l * scale, y, y + ROW_H);
		y += ROW_H;
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"axis\">black tick: the board's limit</text>\n",
	    LABEL_W, y + 16);
	fputs("</svg>\n", f);
}

/* Power over time, each test's phases shaded under the curve. */
static void
power_chart(FILE *f, struct json_object *rec, struct json_object *results)
{
	struct json_object *pw = get(rec, "power_w");
	size_t n = pw && json_object_is_type(pw, json_type_array) ? json_object_array_length(pw) : 0;
	double tmax = 0, wmax = 0, t, w;
	const int h = 200, x0 = 40;

	fputs("<h2>Power</h2>\n", f);
	if (n == 0) {
		fputs("<p class=\"na\">Power unavailable: powerd did not answer power.status.</p>\n", f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(pw, i);

		tmax = fmax(tmax, json_object_get_double(json_object_array_get_idx(p, 0)));
		wmax = fmax(wmax, json_object_get_double(json_object_array_get_idx(p, 1)));
	}
	for (size_t i = 0; i < json_object_array_length(results); i++)
		tmax = fmax(tmax, nget(json_object_array_get_idx(results, i), "end_s"));
	if (!(tmax > 0) || !(wmax > 0))
		return;
	wmax *= 1.1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" class=\"chart\" "
	    "data-chart=\"power\">\n", CHART_W, h + 30);
	for (size_t i = 0; i < json_object_array_length(results); i++) {
		struct json_object *r = json_object_array_get_idx(results, i);
		double a = nget(r, "start_s"), b = nget(r, "end_s");
		double xa = x0 + a / tmax * (CHART_W - x0), xb = x0 + b / tmax * (CHART_W - x0);

		if (isnan(a) || isnan(b) || b <= a)
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
		    "opacity=\"0.15\"/><text x=\"%.1f\" y=\"%d\" class=\"phase\">", xa, xb - xa, h,
		    strcmp(sget(r, "op"), "write") == 0 ? "#c60" :
		    strcmp(sget(r, "op"), "read") == 0 ? "#06c" : "#666", xa + 2, 12 + (int)(i % 4) * 12);
		esc(f, sget(r, "test"));
		fputc(' ', f);
		esc(f, sget(r, "op"));
		fputs("</text>\n", f);
	}
	fputs("<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" points=\"", f);
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(pw, i);

		t = json_object_get_double(json_object_array_get_idx(p, 0));
		w = json_object_get_double(json_object_array_get_idx(p, 1));
		fprintf(f, "%.1f,%.1f ", x0 + t / tmax * (CHART_W - x0), h - w / wmax * h);
	}
	fprintf(f, "\"/>\n<text x=\"0\" y=\"12\">%.0f W</text><text x=\"0\" y=\"%d\">0</text>"
	    "<text x=\"%d\" y=\"%d\" class=\"axis\">%.0f s</text>\n</svg>\n", wmax, h,
	    CHART_W - 60, h + 20, tmax);
}

static void
cell_num(FILE *f, struct json_object *r, const char *key, const char *fmt)
{
	double v = nget(r, key);

	fputs("<td>", f);
	if (isnan(v))
		fputs("-", f);
	else
		fprintf(f, fmt, v);
	fputs("</td>", f);
}

static void
table(FILE *f, struct json_object *results)
{
	fputs("<h2>Results</h2>\n<table><tr><th>test</th><th>op</th><th>MB/s</th><th>IOPS</th>"
	    "<th>p50 / p99 / p99.9 us</th><th>CPU s</th><th>W</th><th>J</th><th>verified</th>"
	    "<th>limit</th><th>result</th><th>note</th></tr>\n", f);
	for (size_t i = 0; i < json_object_array_length(results); i++) {
		struct json_object *r = json_object_array_get_idx(results, i), *lat = get(r, "lat_us");
		struct json_object *v = get(r, "verified"), *p = get(r, "pass");

		fputs("<tr><td>", f);
		esc(f, sget(r, "test"));
		fputs("</td><td>", f);
		esc(f, sget(r, "op"));
		fputs("</td>", f);
		cell_num(f, r, "mb_s", "%.2f");
		cell_num(f, r, "iops", "%.0f");
		if (lat)
			fprintf(f, "<td>%.0f / %.0f / %.0f</td>", nget(lat, "p50"), nget(lat, "p99"),
			    nget(lat, "p999"));
		else
			fputs("<td>-</td>", f);
		cell_num(f, r, "cpu_s", "%.2f");
		cell_num(f, r, "watts", "%.1f");
		cell_num(f, r, "joules", "%.0f");
		fprintf(f, "<td>%s</td>", v ? (json_object_get_boolean(v) ? "yes" : "<b>NO</b>") : "-");
		cell_num(f, r, "limit", "%g");
		fprintf(f, "<td style=\"color:%s\">%s</td><td>", colour(r),
		    p ? (json_object_get_boolean(p) ? "pass" : "FAIL") : "n/a");
		esc(f, sget(r, "note"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/*
 * The load curve: MB/s (solid) and mean response time (dashed, its own
 * scale) over the clients, the knee marked; from load-curve's steps.
 */
static void
load_chart(FILE *f, struct json_object *results)
{
	struct json_object *row = NULL, *steps, *st;
	double xmax = 1, ymax = 0, tmax = 0, c, x, y, knee;
	const int W = CHART_W - 120, H = 200, X0 = 60, Y0 = 20;
	size_t n;

	for (size_t i = 0; i < json_object_array_length(results) && row == NULL; i++)
		if (strcmp(sget(json_object_array_get_idx(results, i), "test"), "load-curve") == 0)
			row = json_object_array_get_idx(results, i);
	fputs("<h2>Load curve</h2>\n", f);
	if (row == NULL || (steps = get(row, "steps")) == NULL ||
	    !json_object_is_type(steps, json_type_array) ||
	    (n = json_object_array_length(steps)) == 0) {
		fputs("<p class=\"na\">load-curve did not run.</p>\n", f);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		st = json_object_array_get_idx(steps, i);
		xmax = fmax(xmax, nget(st, "clients"));
		ymax = fmax(ymax, nget(st, "mb_s"));
		tmax = fmax(tmax, nget(get(st, "lat_ms"), "mean"));
	}
	if (!(ymax > 0) || !(tmax > 0) || !isfinite(xmax))
		return;
	knee = nget(row, "knee_clients");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "class=\"chart\" data-chart=\"load-curve\">\n", CHART_W, H + Y0 + 40);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>"
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
	    X0, Y0, X0, Y0 + H, X0, Y0 + H, X0 + W, Y0 + H);
	for (int pass = 0; pass < 2; pass++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
		    pass ? "#c60" : "#36c", pass ? " stroke-dasharray=\"5,3\"" : "");
		for (size_t i = 0; i < n; i++) {
			st = json_object_array_get_idx(steps, i);
			c = nget(st, "clients");
			x = X0 + W * (c - 1) / fmax(xmax - 1, 1);
			y = Y0 + H - H * (pass ? nget(get(st, "lat_ms"), "mean") / tmax :
			    nget(st, "mb_s") / ymax);
			if (isfinite(x) && isfinite(y))
				fprintf(f, "%.1f,%.1f ", x, y);
		}
		fputs("\"/>\n", f);
	}
	for (size_t i = 0; i < n; i++) {
		st = json_object_array_get_idx(steps, i);
		c = nget(st, "clients");
		x = X0 + W * (c - 1) / fmax(xmax - 1, 1);
		y = Y0 + H - H * nget(st, "mb_s") / ymax;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"%s/>"
		    "<text x=\"%.1f\" y=\"%d\">%.0f</text>\n", x, y, c == knee ? 6 : 3,
		    c == knee ? "#c33" : "#36c", c == knee ? " class=\"knee\"" : "", x - 4,
		    Y0 + H + 16, c);
	}
	fprintf(f, "<text x=\"0\" y=\"%d\">%.1f MB/s</text><text x=\"%d\" y=\"%d\">"
	    "clients (blue: MB/s; dashed: mean response, top %.1f ms)", Y0 + 4, ymax, X0,
	    Y0 + H + 34, tmax);
	if (isfinite(knee))
		fprintf(f, "; red: the knee at %.0f clients", knee);
	fputs("</text>\n</svg>\n", f);
}

int
st_html(FILE *f, struct json_object *rec)
{
	struct json_object *results = get(rec, "results"), *b = get(rec, "board");
	struct json_object *fw = get(rec, "firmware"), *vol = get(rec, "volume"), *pass;

	if (results == NULL || !json_object_is_type(results, json_type_array))
		return -1;
	pass = get(rec, "pass");
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nas-selftest: ", f);
	esc(f, sget(b, "name"));
	fputs("</title>\n<style>body{font:14px sans-serif;margin:2em;max-width:60em}"
	    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
	    "svg text{font:12px sans-serif}.na{color:#777}.pass{color:#3a7}.fail{color:#c33}</style>"
	    "</head><body>\n<h1>nas-selftest: ", f);
	esc(f, sget(b, "name"));
	fputs(" <small>", f);
	esc(f, sget(b, "model"));
	fprintf(f, "</small></h1>\n<p class=\"%s\"><b>%s</b></p>\n<p>firmware ",
	    pass && json_object_get_boolean(pass) ? "pass" : "fail",
	    pass && json_object_get_boolean(pass) ? "PASS" : "FAIL");
	esc(f, sget(fw, "version"));
	fputs(" (", f);
	esc(f, sget(fw, "gitrev"));
	fputs("), kernel ", f);
	esc(f, sget(rec, "kernel"));
	fputs(", volume ", f);
	esc(f, vol && get(vol, "name") ? sget(vol, "name") : sget(vol, "dir"));
	fputs(" ", f);
	esc(f, sget(vol, "level"));
	fputs(" ", f);
	esc(f, sget(vol, "fs_type"));
	fputs(", preset ", f);
	esc(f, sget(rec, "preset"));
	fprintf(f, " (scale %g), finished ", nget(rec, "scale"));
	esc(f, sget(rec, "finished"));
	fputs("</p>\n", f);
	bars(f, results, "mb_s", "Throughput (MB/s)");
	bars(f, results, "iops", "IOPS (4 KiB)");
	bars(f, results, "mbit_s", "Network (Mbit/s)");
	power_chart(f, rec, results);
	load_chart(f, results);
	table(f, results);
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}
