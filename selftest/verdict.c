/*
 * The verdict of a self-test run as the production line reads it
 * (nas-selftest factory): strict, so a run that measured nothing is
 * never a pass. A row is PASS, FAIL or SKIP; the run is PASS only when
 * every test it was asked for has rows and every row passed.
 */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

const char *
st_row_verdict(const struct st_result *r)
{
	if (r->verified == 0 || r->pass == ST_FAIL)
		return "FAIL";
	return r->pass == ST_UNAVAILABLE ? "SKIP" : "PASS";
}

const char *
st_verdict_word(int exit_code)
{
	return exit_code == ST_EXIT_PASS ? "PASS" : exit_code == ST_EXIT_FAIL ? "FAIL" :
	    "INCOMPLETE";
}

static const char *
op_word(enum st_op op)
{
	return op == OP_WRITE ? "write" : op == OP_READ ? "read" : op == OP_MIXED ? "mixed" : "idle";
}

/* Why a row failed, in the words a line operator reads. */
static void
fail_reason(const struct st_result *r, char *why, size_t len)
{
	double v = r->metric == ST_IOPS ? st_iops(r) : r->metric == ST_MBIT_S ? st_mbit_s(r) :
	    r->metric == ST_WATTS ? r->watts : st_mb_s(r);
	const char *unit = r->metric == ST_IOPS ? "IOPS" : r->metric == ST_MBIT_S ? "Mbit/s" :
	    r->metric == ST_WATTS ? "W" : "MB/s";

	if (r->verified == 0)
		snprintf(why, len, "%s %s: data did not verify: %s", r->test, op_word(r->op),
		    r->note[0] ? r->note : "a read failed");
	else if (r->note[0])
		snprintf(why, len, "%s %s: %s", r->test, op_word(r->op), r->note);
	else if (r->has_limit && r->metric == ST_WATTS && v < r->limit_min)
		snprintf(why, len, "%s %s: %.4g W, limit >= %g W", r->test, op_word(r->op), v,
		    r->limit_min);
	else if (r->has_limit)
		snprintf(why, len, "%s %s: %.4g %s, limit %s %g %s", r->test, op_word(r->op), v,
		    unit, r->metric == ST_WATTS ? "<=" : ">=", r->limit, unit);
	else
		snprintf(why, len, "%s %s: failed", r->test, op_word(r->op));
}

/* 1 when a row of test is among res. */
static int
has_rows(const struct st_result *res, int n, const char *test, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(res[i].test) == len && strncmp(res[i].test, test, len) == 0)
			return 1;
	return 0;
}

int
st_factory_verdict(const struct st_result *res, int n, const char *tests, const char *norun,
    char *why, size_t whylen)
{
	const char *p, *e;

	why[0] = '\0';
	/* Wrong data or a missed limit is the unit's fault, whatever else happened. */
	for (int i = 0; i < n; i++)
		if (strcmp(st_row_verdict(&res[i]), "FAIL") == 0) {
			fail_reason(&res[i], why, whylen);
			return ST_EXIT_FAIL;
		}
	if (norun && *norun) {
		snprintf(why, whylen, "could not run: %s", norun);
		return ST_EXIT_NORUN;
	}
	for (int i = 0; i < n; i++)
		if (res[i].pass == ST_UNAVAILABLE) {
			snprintf(why, whylen, "%s %s skipped: %s", res[i].test, op_word(res[i].op),
			    res[i].note[0] ? res[i].note : "nothing was measured");
			return ST_EXIT_NORUN;
		}
	for (p = tests; *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		if (!has_rows(res, n, p, (size_t)(e - p))) {
			snprintf(why, whylen, "%.*s did not run", (int)(e - p > 32 ? 32 : e - p), p);
			return ST_EXIT_NORUN;
		}
	}
	if (n == 0) {
		snprintf(why, whylen, "no test ran");
		return ST_EXIT_NORUN;
	}
	return ST_EXIT_PASS;
}
