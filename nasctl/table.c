/*
 * Human output: aligned tables with a header line, key/value listings
 * of objects, and sizes in powers of 1000 ("1.8 TB", like the label on
 * the disk). Every cell, key and value is escaped (text.c) before it is
 * printed. --json output bypasses all of this, JSON-escaped.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "nasctl.h"

#define CELL_MAX	256
#define COLS_MAX	32

void
humanise_bytes(long long n, char *buf, size_t len)
{
	static const char *const units[] = { "kB", "MB", "GB", "TB", "PB", "EB" };
	double v = (double)n;
	int u = -1;

	if (n < 1000) {
		snprintf(buf, len, "%lld B", n);
		return;
	}
	/* 999.96 would print as "1000.0": move up a unit first. */
	while (v >= 999.95 && u < 5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* A value as text; "-" for absent, null or empty. */
/*
 * An object inside a table cell (a tier's member, say): its values
 * joined with '/', nulls as '-', e.g. "0/NAS1-0001/sda".
 */
static void
fmt_object_cell(struct json_object *o, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	json_object_object_foreach(o, key, val) {
		(void)key;
		if (n >= len)
			break;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "/" : "",
		    val == NULL ? "-" : json_object_is_type(val, json_type_object) ||
		    json_object_is_type(val, json_type_array) ? "..." :
		    json_object_get_string(val));
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
}

void
fmt_plain(struct json_object *v, char *buf, size_t len)
{
	if (v == NULL) {
		snprintf(buf, len, "-");
		return;
	}
	if (json_object_is_type(v, json_type_array)) {
		fmt_list(v, buf, len);
		return;
	}
	if (json_object_is_type(v, json_type_boolean)) {
		fmt_yesno(v, buf, len);
		return;
	}
	if (json_object_is_type(v, json_type_object)) {
		fmt_object_cell(v, buf, len);
		return;
	}
	snprintf(buf, len, "%s", json_object_get_string(v));
	/* An empty cell would shift the eye to the next column. */
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
}

void
fmt_size(struct json_object *v, char *buf, size_t len)
{
	if (!json_object_is_type(v, json_type_int)) {
		fmt_plain(v, buf, len);
		return;
	}
	humanise_bytes(json_object_get_int64(v), buf, len);
}

void
fmt_yesno(struct json_object *v, char *buf, size_t len)
{
	if (v == NULL) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(buf, len, "%s", json_object_get_boolean(v) ? "yes" : "no");
}

void
fmt_percent(struct json_object *v, char *buf, size_t len)
{
	double p;

	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double)) {
		fmt_plain(v, buf, len);
		return;
	}
	p = json_object_get_double(v);
	if (p == (long long)p)
		snprintf(buf, len, "%lld%%", (long long)p);
	else
		snprintf(buf, len, "%.1f%%", p);
}

/* Array elements, each through one, joined with sep; "-" when empty. */
void
fmt_join(struct json_object *v, char *buf, size_t len, const char *sep, fmt_fn one)
{
	size_t n, used = 0;
	char cell[CELL_MAX];

	if (!json_object_is_type(v, json_type_array)) {
		fmt_plain(v, buf, len);
		return;
	}
	n = json_object_array_length(v);
	snprintf(buf, len, "-");
	for (size_t i = 0; i < n && used < len; i++) {
		one(json_object_array_get_idx(v, i), cell, sizeof(cell));
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? sep : "", cell);
	}
}

void
fmt_list(struct json_object *v, char *buf, size_t len)
{
	fmt_join(v, buf, len, ",", fmt_plain);
}

struct json_object *
json_path(struct json_object *o, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (o && *path) {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (dot != NULL);
	}
	return o;
}

/* The string at path, "" when absent. */
const char *
json_str(struct json_object *o, const char *path)
{
	struct json_object *v = json_path(o, path);

	return v ? json_object_get_string(v) : "";
}

static int
ncolumns(const struct column *cols)
{
	int n = 0;

	while (cols[n].header && n < COLS_MAX)
		n++;
	return n;
}

/* Cells are escaped text: widths count characters, not bytes. */
static void
pad(FILE *f, int n)
{
	while (n-- > 0)
		fputc(' ', f);
}

static void
print_row(FILE *f, const struct column *cols, int n, char cells[][CELL_MAX],
    const int *width)
{
	for (int c = 0; c < n; c++) {
		int last = c == n - 1, room = width[c] - (int)text_width(cells[c]);

		if (cols[c].right)
			pad(f, room);
		fputs(cells[c], f);
		if (!cols[c].right && !last)
			pad(f, room);
		fputs(last ? "\n" : "  ", f);
	}
}

/* The cells of one row, formatted and escaped, and the widths they need. */
static void
fill_row(const struct column *cols, int n, struct json_object *row,
    char cells[][CELL_MAX], int *width)
{
	char raw[CELL_MAX];
	fmt_fn fmt;
	int w;

	for (int c = 0; c < n; c++) {
		fmt = cols[c].fmt ? cols[c].fmt : fmt_plain;
		fmt(json_path(row, cols[c].path), raw, sizeof(raw));
		if ((w = (int)text_escape(raw, cells[c], CELL_MAX)) > width[c])
			width[c] = w;
	}
}

void
table_print(FILE *f, const struct column *cols, struct json_object *rows)
{
	int n = ncolumns(cols), width[COLS_MAX] = { 0 };
	size_t nrows = 0;
	char (*cells)[COLS_MAX][CELL_MAX];
	char head[COLS_MAX][CELL_MAX];

	if (json_object_is_type(rows, json_type_array))
		nrows = json_object_array_length(rows);
	if ((cells = calloc(nrows + 1, sizeof(*cells))) == NULL)
		return;
	for (int c = 0; c < n; c++)
		width[c] = (int)text_escape(cols[c].header, head[c], CELL_MAX);
	for (size_t r = 0; r < nrows; r++)
		fill_row(cols, n, json_object_array_get_idx(rows, r), cells[r], width);
	print_row(f, cols, n, head, width);
	for (size_t r = 0; r < nrows; r++)
		print_row(f, cols, n, cells[r], width);
	free(cells);
}

/* "size_bytes" is shown as "size", its value humanised. */
static int
is_bytes_key(const char *k)
{
	size_t n = strlen(k);

	return n > 6 && strcmp(k + n - 6, "_bytes") == 0;
}

/* "eta_s": seconds shown as 1h02m, 3m05s or 42s; null as "-". */
static void
fmt_duration(struct json_object *v, char *buf, size_t len)
{
	long long t;

	if (!json_object_is_type(v, json_type_int)) {
		fmt_plain(v, buf, len);
		return;
	}
	t = json_object_get_int64(v);
	if (t >= 3600)
		snprintf(buf, len, "%lldh%02lldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
	else
		snprintf(buf, len, "%llds", t);
}

/* How a member's value is shown, by its key's name. */
static fmt_fn
key_fmt(const char *k)
{
	size_t n = strlen(k);

	if (is_bytes_key(k))
		return fmt_size;
	if (n > 2 && strcmp(k + n - 2, "_s") == 0)
		return fmt_duration;
	if (strcmp(k, "progress") == 0 || strcmp(k, "percent") == 0)
		return fmt_percent;
	return fmt_plain;
}

static void
display_key(const char *k, char *buf, size_t len, int upper)
{
	size_t n = strlen(k) - (is_bytes_key(k) ? 6 : 0);

	snprintf(buf, len, "%.*s", (int)n, k);
	for (char *p = buf; *p && upper; p++)
		*p = (char)toupper((unsigned char)*p);
}

static int
is_object_array(struct json_object *v)
{
	return json_object_is_type(v, json_type_array) &&
	    json_object_array_length(v) > 0 &&
	    json_object_is_type(json_object_array_get_idx(v, 0), json_type_object);
}

/* Columns from the first row's members, for arrays nobody described. */
static void
auto_table(FILE *f, struct json_object *rows, int indent)
{
	struct column cols[COLS_MAX + 1] = { { 0 } };
	char heads[COLS_MAX][64], *buf = NULL;
	size_t blen = 0;
	FILE *m;
	int n = 0;

	json_object_object_foreach(json_object_array_get_idx(rows, 0), k, v) {
		(void)v;
		if (n == COLS_MAX)
			break;
		display_key(k, heads[n], sizeof(heads[n]), 1);
		cols[n] = (struct column){ heads[n], k, key_fmt(k), is_bytes_key(k) };
		n++;
	}
	if ((m = open_memstream(&buf, &blen)) == NULL)
		return;
	table_print(m, cols, rows);
	fclose(m);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		fprintf(f, "%*s%s\n", indent, "", line);
	free(buf);
}

/* The key as shown: "size_bytes" as "size", escaped; its width. */
static int
shown_key(const char *key, char *buf, size_t len)
{
	char k[128];

	display_key(key, k, sizeof(k), 0);
	return (int)text_escape(k, buf, len);
}

static int
key_width(struct json_object *o)
{
	char k[TEXT_MAX];
	int w = 0, n;

	json_object_object_foreach(o, key, v) {
		(void)v;
		if ((n = shown_key(key, k, sizeof(k))) > w)
			w = n;
	}
	return w;
}

/* Every member as "key: value"; nested objects and arrays indented. */
void
object_print(FILE *f, struct json_object *o, int indent)
{
	char k[TEXT_MAX], raw[CELL_MAX], val[TEXT_MAX];
	int w = key_width(o) + 1, kw;

	json_object_object_foreach(o, key, v) {
		kw = shown_key(key, k, sizeof(k) - 1) + 1;
		strcat(k, ":");
		if (json_object_is_type(v, json_type_object)) {
			fprintf(f, "%*s%s\n", indent, "", k);
			object_print(f, v, indent + 2);
			continue;
		}
		if (is_object_array(v)) {
			fprintf(f, "%*s%s\n", indent, "", k);
			auto_table(f, v, indent + 2);
			continue;
		}
		key_fmt(key)(v, raw, sizeof(raw));
		text_escape(raw, val, sizeof(val));
		fprintf(f, "%*s%s", indent, "", k);
		pad(f, w - kw);
		fprintf(f, " %s\n", val);
	}
}

void
json_print(FILE *f, struct json_object *o)
{
	json_safe_print(f, json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
	fputc('\n', f);
}
