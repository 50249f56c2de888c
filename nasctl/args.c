/*
 * Command-line arguments to JSON-RPC params, driven by a command's
 * argument list: positionals fill in order, --options may come anywhere
 * (as "--opt value" or "--opt=value"), "--" ends the options.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nasctl.h"

int
why_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
is_option(const struct arg *a)
{
	return a->name[0] == '-';
}

static const struct arg *
find_option(const struct arg *args, const char *name, size_t len)
{
	for (const struct arg *a = args; a && a->name; a++)
		if (is_option(a) && strlen(a->name) == len &&
		    strncmp(a->name, name, len) == 0)
			return a;
	return NULL;
}

/* The n-th positional, or the last one when it repeats. */
static const struct arg *
find_positional(const struct arg *args, int n)
{
	const struct arg *last = NULL;

	for (const struct arg *a = args; a && a->name; a++) {
		if (is_option(a))
			continue;
		if (n-- == 0)
			return a;
		last = a;
	}
	return last && (last->flags & ARG_REPEAT) ? last : NULL;
}

static int
split_list(struct json_object *into, const char *s, const char *name,
    char *why, size_t len)
{
	const char *comma, *whole = s;
	size_t n;

	for (;;) {
		comma = strchr(s, ',');
		n = comma ? (size_t)(comma - s) : strlen(s);
		if (n == 0)
			return why_fail(why, len, "%s: empty element in '%s'", name, whole);
		json_object_array_add(into, json_object_new_string_len(s, (int)n));
		if (comma == NULL)
			return 0;
		s = comma + 1;
	}
}

static struct json_object *
convert(const struct arg *a, const char *v, char *why, size_t len)
{
	struct json_object *o;
	enum json_tokener_error jerr;
	long long n;
	char *end;

	switch (a->type) {
	case ARG_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (*v == '\0' || *end != '\0' || errno) {
			why_fail(why, len, "%s: '%s' is not a number", a->name, v);
			return NULL;
		}
		return json_object_new_int64(n);
	case ARG_JSON:
		if ((o = json_tokener_parse_verbose(v, &jerr)) == NULL)
			why_fail(why, len, "%s: not valid JSON: %s", a->name,
			    json_tokener_error_desc(jerr));
		return o;
	case ARG_BOOL:
		return json_object_new_boolean(!(a->flags & ARG_OFF));
	default:
		return json_object_new_string(v);
	}
}

/* Stores one value of a; lists and repeats gather into an array. */
static int
store(const struct arg *a, const char *v, struct json_object *dst,
    char *why, size_t len)
{
	struct json_object *o, *arr;

	if (a->type != ARG_LIST && !(a->flags & ARG_REPEAT)) {
		if (json_object_object_get_ex(dst, a->key, NULL) && a->type == ARG_BOOL)
			return why_fail(why, len, "%s repeats or contradicts an option before it",
			    a->name);
		if (json_object_object_get_ex(dst, a->key, NULL))
			return why_fail(why, len, "%s given twice", a->name);
		if ((o = convert(a, v, why, len)) == NULL)
			return -1;
		json_object_object_add(dst, a->key, o);
		return 0;
	}
	if (!json_object_object_get_ex(dst, a->key, &arr)) {
		arr = json_object_new_array();
		json_object_object_add(dst, a->key, arr);
	} else if (!(a->flags & ARG_REPEAT))
		return why_fail(why, len, "%s given twice", a->name);
	if (a->type == ARG_LIST)
		return split_list(arr, v, a->name, why, len);
	if ((o = convert(a, v, why, len)) == NULL)
		return -1;
	json_object_array_add(arr, o);
	return 0;
}

/* A secret's option names its file, which is nasctl's own business. */
static struct json_object *
dest(const struct arg *a, struct json_object *params, struct json_object *local)
{
	return (a->flags & (ARG_LOCAL | ARG_SECRET)) ? local : params;
}

static int
check_required(const struct arg *args, struct json_object *params,
    struct json_object *local, char *why, size_t len)
{
	for (const struct arg *a = args; a && a->name; a++) {
		if (json_object_object_get_ex(dest(a, params, local), a->key, NULL))
			continue;
		/* A required secret is asked for, not required on argv. */
		if (a->flags & ARG_SECRET)
			continue;
		if (is_option(a) && (a->flags & ARG_REQUIRED))
			return why_fail(why, len, "%s is required", a->name);
		if (!is_option(a) && !(a->flags & ARG_OPTIONAL))
			return why_fail(why, len, "missing %s", a->name);
	}
	return 0;
}

/* Handles argv[*i], an option; advances *i past its value. */
static int
parse_option(const struct arg *args, int argc, char **argv, int *i,
    struct json_object *params, struct json_object *local, char *why, size_t len)
{
	const char *s = argv[*i], *eq = strchr(s, '='), *v;
	const struct arg *a;

	a = find_option(args, s, eq ? (size_t)(eq - s) : strlen(s));
	if (a == NULL)
		return why_fail(why, len, "unknown option %.*s", eq ? (int)(eq - s) :
		    (int)strlen(s), s);
	if (a->type == ARG_BOOL) {
		if (eq)
			return why_fail(why, len, "%s takes no value", a->name);
		v = "";
	} else if (eq)
		v = eq + 1;
	else if (*i + 1 < argc)
		v = argv[++*i];
	else
		return why_fail(why, len, "%s needs a value", a->name);
	return store(a, v, dest(a, params, local), why, len);
}

/* "-5" is a value, "-x" and "--x" are options. */
static int
looks_like_option(const char *s)
{
	return s[0] == '-' && s[1] != '\0' && !isdigit((unsigned char)s[1]);
}

int
args_parse(const struct arg *args, int argc, char **argv,
    struct json_object **params, struct json_object **local, char *why, size_t len)
{
	const struct arg *a;
	int npos = 0, dashdash = 0, rc = 0;

	*params = json_object_new_object();
	*local = json_object_new_object();
	for (int i = 0; i < argc && rc == 0; i++) {
		if (!dashdash && strcmp(argv[i], "--") == 0) {
			dashdash = 1;
			continue;
		}
		if (!dashdash && looks_like_option(argv[i])) {
			rc = parse_option(args, argc, argv, &i, *params, *local, why, len);
			continue;
		}
		if ((a = find_positional(args, npos++)) == NULL)
			rc = why_fail(why, len, "unexpected argument '%s'", argv[i]);
		else
			rc = store(a, argv[i], dest(a, *params, *local), why, len);
	}
	if (rc == 0)
		rc = check_required(args, *params, *local, why, len);
	if (rc == 0)
		return 0;
	json_object_put(*params);
	json_object_put(*local);
	*params = *local = NULL;
	return -1;
}

static void
usage_arg(FILE *f, const struct arg *a)
{
	char meta[64];
	int opt = is_option(a), optional;

	optional = opt ? !(a->flags & ARG_REQUIRED) || (a->flags & ARG_SECRET) :
	    (a->flags & ARG_OPTIONAL);
	fprintf(f, " %s", optional ? "[" : "");
	if (!opt) {
		fprintf(f, "%s%s", a->name, (a->flags & ARG_REPEAT) ? " ..." : "");
	} else if (a->type == ARG_BOOL) {
		fprintf(f, "%s", a->name);
	} else {
		snprintf(meta, sizeof(meta), "%s", a->meta ? a->meta : a->key);
		for (char *p = meta; *p && !a->meta; p++)
			*p = (char)toupper((unsigned char)*p);
		fprintf(f, "%s %s", a->name, meta);
	}
	fprintf(f, "%s", optional ? "]" : "");
	if (opt && (a->flags & ARG_REPEAT))
		fprintf(f, " ...");
}

/* One line: "nasctl volume create NAME --level LEVEL ...". */
void
args_usage(FILE *f, const struct command *c)
{
	fprintf(f, "nasctl %s%s%s", c->noun, c->verb ? " " : "", c->verb ? c->verb : "");
	for (const struct arg *a = c->args; a && a->name; a++)
		usage_arg(f, a);
	fputc('\n', f);
}
