/*
 * Configuration files: iniparser reads them, a schema per daemon says
 * what is allowed. Every key is checked once at load time, so getters
 * cannot fail and a typo in a file is an error, not a silent default.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
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

static int (*foreign_section)(const char *);

void
conf_set_foreign(int (*is_foreign)(const char *section))
{
	foreign_section = is_foreign;
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

		if (foreign_section && foreign_section(sec))
			continue;	/* the daemon checks these itself */
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

/*
 * What iniparser cannot tell: it gives no line numbers, lets a second
 * key or section silently win or merge, and files "[a:b]" where no
 * section lookup finds it (it keys entries "section:key"). So a pre-scan
 * reads the lines as iniparser will (comments, "[section]", "key = ...",
 * a trailing backslash continuing a line) and checks the names; the
 * parsing itself stays iniparser's. Lines it cannot classify are left
 * for iniparser to report.
 */
struct scan_name {
	char	*sec;		/* lower case, as iniparser keeps it */
	char	*key;		/* NULL for a section header */
	int	 line;
};

struct scan {
	const char		*path;
	struct scan_name	*names;
	size_t			 n, cap;
	char			*sec;	/* current section; NULL above the first */
	char			*err;
	size_t			 errlen;
};

/* Trims blanks at both ends in place and lowers the case. */
static char *
name_trim(char *s, char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return s;
}

static int
scan_add(struct scan *sc, const char *sec, const char *key, int line)
{
	struct scan_name *nm;

	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 32;

		if ((nm = reallocarray(sc->names, cap, sizeof(*nm))) == NULL)
			return -1;
		sc->names = nm;
		sc->cap = cap;
	}
	nm = &sc->names[sc->n];
	nm->sec = strdup(sec);
	nm->key = key ? strdup(key) : NULL;
	nm->line = line;
	if (nm->sec == NULL || (key && nm->key == NULL)) {
		free(nm->sec);
		free(nm->key);
		return -1;
	}
	sc->n++;
	return 0;
}

/* One logical line (continuations joined), stripped of its ends. */
static int
scan_line(struct scan *sc, char *l, int line)
{
	size_t len = strlen(l);
	char *eq, *name;

	l = name_trim(l, l + len);	/* lowering the case is harmless here */
	len = strlen(l);
	if (len == 0 || l[0] == '#' || l[0] == ';')
		return 0;
	if (l[0] == '[' && l[len - 1] == ']') {
		char *close = strchr(l, ']');

		name = name_trim(l + 1, close);
		if (strchr(name, ':'))
			return conf_err(sc->err, sc->errlen, "%s:%d: [%s]: "
			    "':' is not allowed in a section name", sc->path,
			    line, name), -1;
		free(sc->sec);
		if ((sc->sec = strdup(name)) == NULL)
			return -1;
		return scan_add(sc, name, NULL, line);
	}
	if ((eq = strchr(l, '=')) == NULL)
		return 0;	/* a syntax error: iniparser says so */
	name = name_trim(l, eq);
	if (sc->sec == NULL)
		return conf_err(sc->err, sc->errlen, "%s:%d: %s: key outside "
		    "any section", sc->path, line, name), -1;
	if (strchr(name, ':'))
		return conf_err(sc->err, sc->errlen, "%s:%d: [%s] %s: "
		    "':' is not allowed in a key", sc->path, line, sc->sec,
		    name), -1;
	return scan_add(sc, sc->sec, name, line);
}

static int
name_cmp(const void *a, const void *b)
{
	const struct scan_name *x = a, *y = b;
	int c = strcmp(x->sec, y->sec);

	if (c == 0 && (x->key == NULL || y->key == NULL))
		c = (x->key != NULL) - (y->key != NULL);
	if (c == 0 && x->key)
		c = strcmp(x->key, y->key);
	return c ? c : x->line - y->line;
}

static int
same_name(const struct scan_name *x, const struct scan_name *y)
{
	if (strcmp(x->sec, y->sec) != 0 || (x->key == NULL) != (y->key == NULL))
		return 0;
	return x->key == NULL || strcmp(x->key, y->key) == 0;
}

/*
 * A section or key named twice. Sorted, equal names sit together in
 * line order; of all the second occurrences the earliest is reported.
 * In a section the daemon checks itself (netd's network) it is logged and
 * iniparser's reading kept (the last key wins, a section's keys merge):
 * a hand edit there must not stop the daemon that brings up the network.
 */
static int
scan_duplicates(struct scan *sc)
{
	const struct scan_name *dup = NULL, *first = NULL;
	size_t i = 0, j;

	if (sc->n > 1)	/* an empty file has no names: qsort(NULL) is undefined */
		qsort(sc->names, sc->n, sizeof(*sc->names), name_cmp);
	for (; i < sc->n; i = j) {
		for (j = i + 1; j < sc->n && same_name(&sc->names[i], &sc->names[j]); j++)
			;
		if (j - i > 1 && foreign_section && foreign_section(sc->names[i].sec)) {
			log_warnx("%s:%d: [%s]%s%s: given again (first on line %d): the last is used",
			    sc->path, sc->names[i + 1].line, sc->names[i].sec,
			    sc->names[i].key ? " " : "", sc->names[i].key ? sc->names[i].key : "",
			    sc->names[i].line);
			continue;
		}
		if (j - i > 1 && (dup == NULL || sc->names[i + 1].line < dup->line)) {
			first = &sc->names[i];
			dup = &sc->names[i + 1];
		}
	}
	if (dup == NULL)
		return 0;
	if (dup->key == NULL)
		return conf_err(sc->err, sc->errlen, "%s:%d: [%s]: duplicate section "
		    "(first on line %d)", sc->path, dup->line, dup->sec, first->line), -1;
	return conf_err(sc->err, sc->errlen, "%s:%d: [%s] %s: duplicate key "
	    "(first on line %d)", sc->path, dup->line, dup->sec, dup->key,
	    first->line), -1;
}

static void
scan_free(struct scan *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		free(sc->names[i].sec);
		free(sc->names[i].key);
	}
	free(sc->names);
	free(sc->sec);
}

/* Joins continued lines as iniparser does: a last backslash joins the next. */
static int
scan_file(FILE *f, struct scan *sc)
{
	char *raw = NULL, *logical = NULL;
	size_t rawcap = 0, llen = 0;
	ssize_t n;
	int line = 0, start = 0, rc = 0;

	while (rc == 0 && (n = getline(&raw, &rawcap, f)) != -1) {
		char *p;

		line++;
		while (n > 0 && isspace((unsigned char)raw[n - 1]))
			raw[--n] = '\0';
		if (llen == 0)
			start = line;
		if ((p = realloc(logical, llen + (size_t)n + 1)) == NULL) {
			rc = -1;
			break;
		}
		logical = p;
		memcpy(logical + llen, raw, (size_t)n + 1);
		llen += (size_t)n;
		if (n > 0 && raw[n - 1] == '\\') {
			logical[--llen] = '\0';
			continue;
		}
		rc = scan_line(sc, logical, start);
		llen = 0;
	}
	if (rc == 0 && llen > 0)
		rc = scan_line(sc, logical, start);
	if (rc == 0 && ferror(f)) {
		conf_err(sc->err, sc->errlen, "%s: %s", sc->path, strerror(errno));
		rc = -1;
	}
	free(raw);
	free(logical);
	return rc;
}

/*
 * Opens path and checks it is a regular file (a directory reads as an
 * empty file, a FIFO would block the daemon) before scanning its lines.
 * 1: scanned, 0: missing and allowed, -1: err filled.
 */
static int
prescan(const char *path, int may_be_missing, char *err, size_t errlen)
{
	struct scan sc = { .path = path, .err = err, .errlen = errlen };
	struct stat st;
	FILE *f;
	int fd, rc;

	err[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) == -1) {
		if (errno == ENOENT && may_be_missing)
			return 0;
		return conf_err(err, errlen, "%s: %s", path, strerror(errno)), -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return conf_err(err, errlen, "%s: not a regular file", path), -1;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return conf_err(err, errlen, "%s: %s", path, strerror(errno)), -1;
	}
	rc = scan_file(f, &sc);
	if (rc == 0)
		rc = scan_duplicates(&sc);
	fclose(f);
	scan_free(&sc);
	if (rc == -1 && err[0] == '\0')
		conf_err(err, errlen, "%s: out of memory", path);
	return rc == -1 ? -1 : 1;
}

dictionary *
conf_load_ini(const char *path, int may_be_missing, int *missing, char *err, size_t errlen)
{
	char why[512] = "";
	dictionary *d;

	*missing = 0;
	switch (prescan(path, may_be_missing, err, errlen)) {
	case 0:
		return *missing = 1, NULL;
	case -1:
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

	d = conf_load_ini(path, may_be_missing, &missing, err, errlen);
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
