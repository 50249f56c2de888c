/*
 * The board's pass/fail limits: board.ini [selftest] (docs/boards.md).
 * A limit missing or 0 is no limit; a negative or non-numeric one is an
 * error, not a limit that always passes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iniparser.h>

#include "selftest.h"

static const struct {
	const char	*key;
	size_t		 off;
} keys[] = {
	{ "seq_write_min_mbs", offsetof(struct st_limits, seq_write_min_mbs) },
	{ "seq_read_min_mbs", offsetof(struct st_limits, seq_read_min_mbs) },
	{ "rand_read_min_iops", offsetof(struct st_limits, rand_read_min_iops) },
	{ "rand_write_min_iops", offsetof(struct st_limits, rand_write_min_iops) },
	{ "net_min_mbits", offsetof(struct st_limits, net_min_mbits) },
	{ "idle_max_w", offsetof(struct st_limits, idle_max_w) },
	{ "idle_min_w", offsetof(struct st_limits, idle_min_w) },
	{ "file_mb", offsetof(struct st_limits, file_mb) },
	{ NULL, 0 }
};

int
st_limits_set(struct st_limits *l, const char *key, const char *val, const char *where,
    char *err, size_t errlen)
{
	char *end;
	double v;

	for (int i = 0; keys[i].key; i++) {
		if (strcmp(keys[i].key, key) != 0)
			continue;
		errno = 0;
		v = strtod(val, &end);
		if (errno || end == val || *end != '\0' || !(v >= 0 && v < 1e12)) {
			snprintf(err, errlen, "%s: [selftest] %s: not a number >= 0", where, key);
			return -1;
		}
		/* file_mb sizes the factory preset: beyond 64 GiB it runs for days. */
		if (strcmp(key, "file_mb") == 0 && v > 65536) {
			snprintf(err, errlen, "%s: [selftest] file_mb: at most 65536", where);
			return -1;
		}
		*(double *)((char *)l + keys[i].off) = v;
		return 0;
	}
	snprintf(err, errlen, "%s: [selftest] %s: no such limit", where, key);
	return -1;
}

int
st_limits_sane(const struct st_limits *l, const char *where, char *err, size_t errlen)
{
	/* A floor above the ceiling fails every unit: an error in the file, not a limit. */
	if (l->idle_min_w > 0 && (l->idle_max_w <= 0 || l->idle_min_w > l->idle_max_w)) {
		snprintf(err, errlen, "%s: [selftest] idle_min_w: needs an idle_max_w above it",
		    where);
		return -1;
	}
	return 0;
}

int
st_limits_load(const char *path, struct st_limits *l, char *err, size_t errlen)
{
	dictionary *d;
	char name[64];
	const char *s;

	memset(l, 0, sizeof(*l));
	if (access(path, R_OK) == -1 || (d = iniparser_load(path)) == NULL) {
		snprintf(err, errlen, "%s: cannot read the board description", path);
		return -1;
	}
	snprintf(l->board, sizeof(l->board), "%s", iniparser_getstring(d, "board:name", ""));
	snprintf(l->model, sizeof(l->model), "%s", iniparser_getstring(d, "board:model", ""));
	for (int i = 0; keys[i].key; i++) {
		snprintf(name, sizeof(name), "selftest:%s", keys[i].key);
		if ((s = iniparser_getstring(d, name, NULL)) == NULL || *s == '\0')
			continue;
		if (st_limits_set(l, keys[i].key, s, path, err, errlen) == -1) {
			iniparser_freedict(d);
			return -1;
		}
	}
	iniparser_freedict(d);
	return st_limits_sane(l, path, err, errlen);
}

const char *
st_limit_key(const char *test, enum st_op op)
{
	if (strcmp(test, "file-2g") == 0 || strcmp(test, "seq-max") == 0)
		return op == OP_WRITE ? "seq_write_min_mbs" : "seq_read_min_mbs";
	if (strncmp(test, "iops-", 5) == 0)
		return op == OP_WRITE ? "rand_write_min_iops" : "rand_read_min_iops";
	if (strcmp(test, "power") == 0)
		return "idle_max_w";
	if (strcmp(test, "net-1") == 0)
		return "net_min_mbits";
	return NULL;
}

double
st_limit_for(const struct st_limits *l, const char *test, enum st_op op)
{
	const char *key = st_limit_key(test, op);

	for (int i = 0; key && keys[i].key; i++)
		if (strcmp(keys[i].key, key) == 0)
			return *(const double *)((const char *)l + keys[i].off);
	return 0;
}

void
st_limits_apply(const struct st_limits *l, struct st_result *r)
{
	double v, lim = st_limit_for(l, r->test, r->op);

	if (r->verified == 0 || r->pass == ST_FAIL) {
		r->pass = ST_FAIL;
		r->has_limit = lim > 0;
		r->limit = lim;
		return;
	}
	if (lim <= 0 || r->pass == ST_UNAVAILABLE)
		return;
	r->has_limit = 1;
	r->limit = lim;
	switch (r->metric) {
	case ST_MB_S:
		v = st_mb_s(r);
		r->pass = v >= lim ? ST_PASS : ST_FAIL;
		break;
	case ST_IOPS:
		v = st_iops(r);
		r->pass = v >= lim ? ST_PASS : ST_FAIL;
		break;
	case ST_MBIT_S:
		v = st_mbit_s(r);
		r->pass = v >= lim ? ST_PASS : ST_FAIL;
		break;
	case ST_WATTS:
		/* A floor too: a draw below what the disks alone take is a broken
		 * sensor or model, or disks that are not there (Decision 102). */
		r->limit_min = l->idle_min_w;
		r->pass = r->watts <= lim && r->watts >= r->limit_min ? ST_PASS : ST_FAIL;
		break;
	case ST_NONE:
		break;
	}
}
