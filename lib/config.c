/*
 * Configuration files: iniparser reads them, a schema per daemon says
 * what is allowed. Every key is checked once at load time, so getters
 * cannot fail and a typo in a file is an error, not a silent default.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <iniparser.h>

#include "config.h"
#include "log.h"

struct conf_val {
	const struct conf_key	*key;
	char			*value;
};

struct conf {
	char			*path;
	struct conf_val		*vals;
	size_t			 nvals;
};

static void
conf_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int
parse_int(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	return (errno || end == s || *end != '\0') ? -1 : 0;
}

static int
parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on", NULL };
	static const char *const no[] = { "0", "no", "false", "off", NULL };

	for (int i = 0; yes[i]; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = 1, 0;
		if (strcasecmp(s, no[i]) == 0)
			return *out = 0, 0;
	}
	return -1;
}

/* Checks one value against its key; "why" gets the reason on failure. */
static int
check_value(const struct conf_key *k, const char *v, char *why, size_t len)
{
	long long n;
	int b;
	size_t l;

	switch (k->type) {
	case CONF_INT:
		if (parse_int(v, &n) == -1)
			return conf_err(why, len, "'%s' is not an integer", v), -1;
		if ((k->min || k->max) && (n < k->min || n > k->max))
			return conf_err(why, len, "%lld is out of range %lld..%lld",
			    n, k->min, k->max), -1;
		return 0;
	case CONF_BOOL:
		if (parse_bool(v, &b) == -1)
			return conf_err(why, len, "'%s' is not yes/no", v), -1;
		return 0;
	case CONF_STRING:
		l = strlen(v);
		if ((k->min || k->max) && ((long long)l < k->min || (long long)l > k->max))
			return conf_err(why, len, "length %zu is out of range %lld..%lld",
			    l, k->min, k->max), -1;
		return 0;
	case CONF_ENUM:
		for (int i = 0; k->choices[i]; i++)
			if (strcmp(v, k->choices[i]) == 0)
				return 0;
		conf_err(why, len, "'%s' is not one of:", v);
		for (int i = 0; k->choices[i]; i++) {
			l = strlen(why);
			snprintf(why + l, len - l, " %s", k->choices[i]);
		}
		return -1;
	}
	return -1;
}

static const struct conf_key *
find_key(const struct conf_key *const *schemas, const char *sec, const char *key,
    int *sec_known)
{
	*sec_known = 0;
	for (int s = 0; schemas[s]; s++) {
		for (const struct conf_key *k = schemas[s]; k->section; k++) {
			if (strcasecmp(k->section, sec) != 0)
				continue;
			*sec_known = 1;
			if (key && strcasecmp(k->key, key) == 0)
				return k;
		}
	}
	return NULL;
}

/* iniparser files a key above the first section header as ":key". */
static const char *
key_outside_section(const dictionary *d)
{
	for (ssize_t i = 0; i < d->size; i++)
		if (d->key[i] && d->key[i][0] == ':')
			return d->key[i] + 1;
	return NULL;
}

/* Every section and key in the file must be one the schemas know. */
static int
check_file_keys(dictionary *d, const char *path,
    const struct conf_key *const *schemas, char *err, size_t errlen)
{
	int nsec = iniparser_getnsec(d), known;
	const char *orphan;

	if ((orphan = key_outside_section(d)) != NULL)
		return conf_err(err, errlen, "%s: %s: key outside any section",
		    path, orphan), -1;
	for (int i = 0; i < nsec; i++) {
		const char *sec = iniparser_getsecname(d, i);
		int nkeys = iniparser_getsecnkeys(d, sec);
		const char **keys;

		find_key(schemas, sec, NULL, &known);
		if (!known)
			return conf_err(err, errlen, "%s: [%s]: unknown section",
			    path, sec), -1;
		if (nkeys <= 0)
			continue;
		if ((keys = calloc((size_t)nkeys, sizeof(*keys))) == NULL)
			return conf_err(err, errlen, "%s: out of memory", path), -1;
		iniparser_getseckeys(d, sec, keys);
		for (int j = 0; j < nkeys; j++) {
			const char *key = strchr(keys[j], ':') + 1;

			if (find_key(schemas, sec, key, &known) == NULL) {
				conf_err(err, errlen, "%s: [%s] %s: unknown key",
				    path, sec, key);
				free(keys);
				return -1;
			}
		}
		free(keys);
	}
	return 0;
}

static size_t
count_keys(const struct conf_key *const *schemas)
{
	size_t n = 0;

	for (int s = 0; schemas[s]; s++)
		for (const struct conf_key *k = schemas[s]; k->section; k++)
			n++;
	return n;
}

static int
fill_values(struct conf *c, dictionary *d, const struct conf_key *const *schemas,
    char *err, size_t errlen)
{
	char name[256], why[512];
	size_t i = 0;

	for (int s = 0; schemas[s]; s++) {
		for (const struct conf_key *k = schemas[s]; k->section; k++, i++) {
			const char *v = k->def;

			snprintf(name, sizeof(name), "%s:%s", k->section, k->key);
			if (d)
				v = iniparser_getstring(d, name, k->def);
			if (v == NULL)
				v = "";
			if (check_value(k, v, why, sizeof(why)) == -1)
				return conf_err(err, errlen, "%s: [%s] %s: %s",
				    c->path, k->section, k->key, why), -1;
			c->vals[i].key = k;
			if ((c->vals[i].value = strdup(v)) == NULL)
				return conf_err(err, errlen, "out of memory"), -1;
		}
	}
	return 0;
}

/* iniparser reports syntax errors through this; we keep the first. */
static char *ini_errbuf;
static size_t ini_errlen;

static int
ini_error(const char *fmt, ...)
{
	va_list ap;

	if (ini_errbuf == NULL || ini_errbuf[0])
		return 0;
	va_start(ap, fmt);
	vsnprintf(ini_errbuf, ini_errlen, fmt, ap);
	va_end(ap);
	/* One line: iniparser puts the offending text after a newline. */
	for (char *p = ini_errbuf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return 0;
}

static dictionary *
load_dict(const char *path, int may_be_missing, int *missing, char *err, size_t errlen)
{
	char why[512] = "";
	dictionary *d;

	*missing = 0;
	if (access(path, R_OK) == -1) {
		if (errno == ENOENT && may_be_missing)
			return *missing = 1, NULL;
		conf_err(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	ini_errbuf = why;
	ini_errlen = sizeof(why);
	iniparser_set_error_callback(ini_error);
	d = iniparser_load(path);
	iniparser_set_error_callback(NULL);
	ini_errbuf = NULL;
	if (d == NULL || why[0]) {
		conf_err(err, errlen, "%s: %s", path, why[0] ? why : "cannot parse");
		if (d)
			iniparser_freedict(d);
		return NULL;
	}
	return d;
}

struct conf *
conf_load(const char *path, const struct conf_key *const *schemas,
    int may_be_missing, char *err, size_t errlen)
{
	struct conf *c;
	dictionary *d;
	int missing;

	d = load_dict(path, may_be_missing, &missing, err, errlen);
	if (d == NULL && !missing)
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->path = strdup(path)) == NULL ||
	    (c->vals = calloc(count_keys(schemas) + 1, sizeof(*c->vals))) == NULL) {
		conf_err(err, errlen, "out of memory");
		goto fail;
	}
	c->nvals = count_keys(schemas);
	if (d && check_file_keys(d, path, schemas, err, errlen) == -1)
		goto fail;
	if (fill_values(c, d, schemas, err, errlen) == -1)
		goto fail;
	if (d)
		iniparser_freedict(d);
	return c;
fail:
	if (d)
		iniparser_freedict(d);
	conf_free(c);
	return NULL;
}

void
conf_free(struct conf *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; c->vals && i < c->nvals; i++)
		free(c->vals[i].value);
	free(c->vals);
	free(c->path);
	free(c);
}

static const struct conf_val *
lookup(const struct conf *c, const char *sec, const char *key)
{
	for (size_t i = 0; i < c->nvals; i++)
		if (strcmp(c->vals[i].key->section, sec) == 0 &&
		    strcmp(c->vals[i].key->key, key) == 0)
			return &c->vals[i];
	/* A getter for a key no schema declares is a programming error. */
	fatalx("config: no key [%s] %s in the schema", sec, key);
}

long long
conf_int(const struct conf *c, const char *sec, const char *key)
{
	long long n = 0;

	parse_int(lookup(c, sec, key)->value, &n);
	return n;
}

int
conf_bool(const struct conf *c, const char *sec, const char *key)
{
	int b = 0;

	parse_bool(lookup(c, sec, key)->value, &b);
	return b;
}

const char *
conf_str(const struct conf *c, const char *sec, const char *key)
{
	return lookup(c, sec, key)->value;
}

const char *
conf_path(const struct conf *c)
{
	return c->path;
}

void
conf_print(const struct conf *c, FILE *f)
{
	const char *sec = NULL;

	fprintf(f, "# effective configuration from %s\n", c->path);
	for (size_t i = 0; i < c->nvals; i++) {
		const struct conf_key *k = c->vals[i].key;

		if (sec == NULL || strcmp(sec, k->section) != 0) {
			sec = k->section;
			fprintf(f, "\n[%s]\n", sec);
		}
		fprintf(f, "%s = %s\n", k->key, c->vals[i].value);
	}
}
