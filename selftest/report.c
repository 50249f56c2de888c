/*
 * The results: the JSON record (schema in docs/selftest.md) and the
 * table laid out like the reviews' (a row per test, write = upload and
 * read = download side by side).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "selftest.h"

double
st_mb_s(const struct st_result *r)
{
	return r->seconds > 0 ? (double)r->bytes / 1e6 / r->seconds : 0;
}

double
st_mbit_s(const struct st_result *r)
{
	return r->seconds > 0 ? (double)r->bytes * 8 / 1e6 / r->seconds : 0;
}

double
st_iops(const struct st_result *r)
{
	return r->seconds > 0 ? (double)r->ops / r->seconds : 0;
}

/* A port's bytes in the row's direction: what the NAS sent up, received down. */
static unsigned long long
port_bytes(const struct st_result *r, int i)
{
	return r->op == OP_WRITE ? r->ports[i].tx : r->ports[i].rx;
}

int
st_ports_used(const struct st_result *r)
{
	double total = 0;
	int used = 0;

	for (int i = 0; i < r->nports; i++)
		total += (double)port_bytes(r, i);
	/* A tenth: the other direction's ACKs and stray frames stay under it. */
	for (int i = 0; total > 0 && i < r->nports; i++)
		used += (double)port_bytes(r, i) * 10 >= total;
	return used;
}

const char *
st_busiest_port(const struct st_result *r)
{
	int best = -1;

	for (int i = 0; i < r->nports; i++)
		if (best < 0 || port_bytes(r, i) > port_bytes(r, best))
			best = i;
	return best < 0 ? "" : r->ports[best].name;
}

static const char *
op_name(enum st_op op)
{
	return op == OP_WRITE ? "write" : op == OP_READ ? "read" : op == OP_MIXED ? "mixed" : "idle";
}

static const char *const metric_names[] = {
	[ST_MB_S] = "mb_s", [ST_IOPS] = "iops", [ST_WATTS] = "watts", [ST_NONE] = "none",
	[ST_MBIT_S] = "mbit_s"
};

/* A double rounded for the record: 3 decimals are more than any meter gives. */
static struct json_object *
num(double v)
{
	return json_object_new_double(round(v * 1000) / 1000);
}

/* The network rows' own fields: Mbit/s, the ratio to net-1, bytes per port. */
static void
net_json(struct json_object *o, const struct st_result *r)
{
	struct json_object *a = json_object_new_array();

	json_object_object_add(o, "mbit_s", r->seconds > 0 ? num(st_mbit_s(r)) : NULL);
	json_object_object_add(o, "ratio_to_net1", r->ratio > 0 ? num(r->ratio) : NULL);
	for (int i = 0; i < r->nports; i++) {
		struct json_object *p = json_object_new_object();

		json_object_object_add(p, "name", json_object_new_string(r->ports[i].name));
		json_object_object_add(p, "tx_bytes", json_object_new_int64((int64_t)r->ports[i].tx));
		json_object_object_add(p, "rx_bytes", json_object_new_int64((int64_t)r->ports[i].rx));
		json_object_array_add(a, p);
	}
	json_object_object_add(o, "ports", a);
	json_object_object_add(o, "ports_used", json_object_new_int(r->ports_used));
	/* Several flows only: whether they all took one port, and the tries. */
	json_object_object_add(o, "flows", json_object_new_int(r->flows));
	json_object_object_add(o, "one_port", r->flows > 1 ? json_object_new_boolean(r->one_port) :
	    NULL);
	json_object_object_add(o, "tries", r->flows > 1 ? json_object_new_int(r->tries) : NULL);
}

/* load-curve: its steps and the clients at its knee. */
static void
load_json(struct json_object *o, const struct st_result *r)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < r->nsteps; i++) {
		const struct st_step *s = &r->steps[i];
		struct json_object *p = json_object_new_object(), *lat = json_object_new_object();

		json_object_object_add(p, "clients", json_object_new_int(s->clients));
		json_object_object_add(p, "seconds", num(s->seconds));
		json_object_object_add(p, "mb_s", num(s->mb_s));
		json_object_object_add(p, "iops", num(s->iops));
		json_object_object_add(p, "write_share", num(s->write_share));
		json_object_object_add(lat, "mean", num(s->mean_ms));
		json_object_object_add(lat, "p50", num(s->p50_ms));
		json_object_object_add(lat, "p99", num(s->p99_ms));
		json_object_object_add(p, "lat_ms", lat);
		json_object_array_add(a, p);
	}
	json_object_object_add(o, "steps", a);
	json_object_object_add(o, "knee_clients", r->knee >= 0 && r->knee < r->nsteps ?
	    json_object_new_int(r->steps[r->knee].clients) : NULL);
}

static struct json_object *
row_json(const struct st_result *r, double origin)
{
	struct json_object *o = json_object_new_object(), *lat = NULL;
	int measured = r->op != OP_IDLE;

	json_object_object_add(o, "test", json_object_new_string(r->test));
	json_object_object_add(o, "op", json_object_new_string(op_name(r->op)));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(o, "seconds", num(r->seconds));
	json_object_object_add(o, "start_s", num(r->t1 > 0 ? r->t0 - origin : 0));
	json_object_object_add(o, "end_s", num(r->t1 > 0 ? r->t1 - origin : 0));
	json_object_object_add(o, "mb_s", measured ? num(st_mb_s(r)) : NULL);
	json_object_object_add(o, "iops", measured ? num(st_iops(r)) : NULL);
	if (r->metric == ST_MBIT_S)
		net_json(o, r);
	if (r->op == OP_MIXED)
		load_json(o, r);
	if (r->metric == ST_WATTS) {
		json_object_object_add(o, "limit_min", r->limit_min > 0 ? num(r->limit_min) : NULL);
		json_object_object_add(o, "busy_share", r->has_activity ? num(r->busy_share) : NULL);
		json_object_object_add(o, "cpu_load", r->has_activity ? num(r->cpu_load) : NULL);
		json_object_object_add(o, "settle_s", num(r->settle_s));
	}
	if (r->files) {
		json_object_object_add(o, "files", json_object_new_int64((int64_t)r->files));
		json_object_object_add(o, "files_s",
		    num(r->seconds > 0 ? (double)r->files / r->seconds : 0));
	}
	if (r->has_lat) {
		lat = json_object_new_object();
		json_object_object_add(lat, "p50", num(r->p50));
		json_object_object_add(lat, "p99", num(r->p99));
		json_object_object_add(lat, "p999", num(r->p999));
	}
	json_object_object_add(o, "lat_us", lat);
	json_object_object_add(o, "cpu_s", num(r->cpu_s));
	json_object_object_add(o, "watts", r->has_power ? num(r->watts) : NULL);
	json_object_object_add(o, "joules", r->has_power ? num(r->joules) : NULL);
	json_object_object_add(o, "verified",
	    r->verified < 0 ? NULL : json_object_new_boolean(r->verified));
	json_object_object_add(o, "direct", json_object_new_boolean(r->direct));
	json_object_object_add(o, "metric", json_object_new_string(metric_names[r->metric]));
	json_object_object_add(o, "limit", r->has_limit ? num(r->limit) : NULL);
	json_object_object_add(o, "pass",
	    r->pass == ST_UNAVAILABLE ? NULL : json_object_new_boolean(r->pass == ST_PASS));
	json_object_object_add(o, "note", r->note[0] ? json_object_new_string(r->note) : NULL);
	json_object_object_add(o, "verdict", json_object_new_string(st_row_verdict(r)));
	return o;
}

int
st_exit_code(const struct st_result *r, int n)
{
	for (int i = 0; i < n; i++)
		if (r[i].pass == ST_FAIL || r[i].verified == 0)
			return ST_EXIT_FAIL;
	return ST_EXIT_PASS;
}

struct json_object *
st_record(const struct st_run *run, const struct st_limits *l, const struct st_target *tg,
    const struct st_result *res, int n, int exit_code, double origin, struct json_object *power)
{
	struct json_object *o = json_object_new_object(), *b, *fw, *a;
	struct utsname u;
	char when[32];
	time_t t = time(NULL);
	int powered = 0;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	json_object_object_add(o, "schema", json_object_new_string(ST_SCHEMA));
	json_object_object_add(o, "finished", json_object_new_string(when));
	b = json_object_new_object();
	json_object_object_add(b, "name", json_object_new_string(l->board[0] ? l->board : "unknown"));
	json_object_object_add(b, "model", json_object_new_string(l->model));
	json_object_object_add(o, "board", b);
	fw = json_object_new_object();
	json_object_object_add(fw, "version", json_object_new_string(NAS_VERSION));
	json_object_object_add(fw, "gitrev", json_object_new_string(NAS_GITREV));
	json_object_object_add(o, "firmware", fw);
	json_object_object_add(o, "kernel",
	    json_object_new_string(uname(&u) == 0 ? u.release : "unknown"));
	json_object_object_add(o, "volume", tg->info ? json_object_get(tg->info) : NULL);
	json_object_object_add(o, "preset", json_object_new_string(run->preset));
	json_object_object_add(o, "scale", json_object_new_double(run->scale));
	json_object_object_add(o, "tests", json_object_new_string(run->tests));
	json_object_object_add(o, "seed", json_object_new_int64((int64_t)run->seed));
	a = json_object_new_array();
	for (int i = 0; i < n; i++) {
		json_object_array_add(a, row_json(&res[i], origin));
		powered |= res[i].has_power;
	}
	json_object_object_add(o, "power", json_object_new_string(powered ? "powerd" : "unavailable"));
	json_object_object_add(o, "power_w", power);
	json_object_object_add(o, "results", a);
	json_object_object_add(o, "pass", json_object_new_boolean(exit_code == ST_EXIT_PASS));
	json_object_object_add(o, "exit", json_object_new_int(exit_code));
	return o;
}

/* ---- the table ---- */

#define W_TEST	16
#define W_VAL	24
#define W_LIMIT	20

/* The figure of a row as the reviews print it. */
static void
figure(const struct st_result *r, char *buf, size_t len)
{
	if (r == NULL) {
		snprintf(buf, len, "-");
		return;
	}
	/* measured, but one port's figure: shown as such, never as the bond's */
	if (r->pass == ST_UNAVAILABLE && r->metric != ST_WATTS && !r->one_port) {
		snprintf(buf, len, "unavailable");
		return;
	}
	switch (r->metric) {
	case ST_IOPS:
		snprintf(buf, len, "%.0f IOPS", st_iops(r));
		break;
	case ST_WATTS:
		if (r->has_power)
			snprintf(buf, len, "%.1f W", r->watts);
		else
			snprintf(buf, len, "unavailable");
		break;
	case ST_MB_S:
		if (r->files)
			snprintf(buf, len, "%.2f MB/s %.0f f/s", st_mb_s(r),
			    r->seconds > 0 ? (double)r->files / r->seconds : 0);
		else
			snprintf(buf, len, "%.1f MB/s", st_mb_s(r));
		break;
	case ST_MBIT_S:
		if (r->one_port)
			snprintf(buf, len, "%.1f Mbit/s 1 port", st_mbit_s(r));
		else if (r->ratio > 0)
			snprintf(buf, len, "%.1f Mbit/s %.2fx", st_mbit_s(r), r->ratio);
		else
			snprintf(buf, len, "%.1f Mbit/s", st_mbit_s(r));
		break;
	case ST_NONE:
		if (r->knee >= 0 && r->knee < r->nsteps)
			snprintf(buf, len, "knee at %d clients", r->steps[r->knee].clients);
		else if (r->nsteps > 0)
			snprintf(buf, len, "no knee, %d steps", r->nsteps);
		else
			snprintf(buf, len, "-");
		break;
	}
}

/* The load curve's steps under its row: clients, MB/s, response times. */
static void
steps_text(FILE *f, const struct st_result *r)
{
	char a[64], b[64];

	for (int i = 0; i < r->nsteps; i++) {
		const struct st_step *s = &r->steps[i];

		snprintf(a, sizeof(a), "%.1f MB/s %.0f IOPS", s->mb_s, s->iops);
		snprintf(b, sizeof(b), "%.1f/%.1f ms%s", s->mean_ms, s->p99_ms,
		    i == r->knee ? " knee" : "");
		fprintf(f, "  %3d client%-*s%-*s%s\n", s->clients, W_TEST - 12,
		    s->clients > 1 ? "s" : "", W_VAL, a, b);
	}
}

static const char *
unit_of(enum st_metric m)
{
	return m == ST_IOPS ? "IOPS" : m == ST_WATTS ? "W" : m == ST_MBIT_S ? "Mbit/s" : "MB/s";
}

static void
limit_text(const struct st_result *w, const struct st_result *r, char *buf, size_t len)
{
	const struct st_result *one = w && w->has_limit ? w : r;

	if (w && r && w->has_limit && r->has_limit)
		snprintf(buf, len, "%g / %g %s", w->limit, r->limit, unit_of(w->metric));
	else if (one && one->has_limit && one->limit_min > 0)
		snprintf(buf, len, "%g-%g %s", one->limit_min, one->limit, unit_of(one->metric));
	else if (one && one->has_limit)
		snprintf(buf, len, "%s %g %s", one->metric == ST_WATTS ? "<=" : ">=", one->limit,
		    unit_of(one->metric));
	else
		snprintf(buf, len, "-");
}

static const char *
verdict(const struct st_result *w, const struct st_result *r)
{
	int unavailable = 1;

	for (int i = 0; i < 2; i++) {
		const struct st_result *x = i ? r : w;

		if (x == NULL)
			continue;
		if (x->verified == 0)
			return "FAIL (data)";
		if (x->pass == ST_FAIL)
			return "FAIL";
		unavailable &= x->pass == ST_UNAVAILABLE;
	}
	return unavailable ? "n/a" : "pass";
}

static void
lat_text(const struct st_result *r, char *buf, size_t len)
{
	if (r && r->has_lat)
		snprintf(buf, len, "%.0f/%.0f/%.0f us", r->p50, r->p99, r->p999);
	else
		snprintf(buf, len, "-");
}

static void
power_text(const struct st_result *r, char *buf, size_t len)
{
	if (r && r->has_power)
		snprintf(buf, len, "%.1f W %.0f J", r->watts, r->joules);
	else
		snprintf(buf, len, "-");
}

void
st_table(FILE *f, const struct st_result *res, int n, int exit_code)
{
	char a[64], b[64], lim[64];
	int done[ST_MAX_RESULTS] = { 0 }, any_power = 0;

	for (int i = 0; i < n; i++)
		any_power |= res[i].has_power;
	fprintf(f, "%-*s%-*s%-*s%-*s%s\n", W_TEST, "test", W_VAL, "write (up)", W_VAL,
	    "read (down)", W_LIMIT, "limit", "result");
	for (int i = 0; i < n && i < ST_MAX_RESULTS; i++) {
		const struct st_result *w = NULL, *r = NULL, *idle = NULL;

		if (done[i])
			continue;
		for (int k = i; k < n && k < ST_MAX_RESULTS; k++) {
			if (done[k] || strcmp(res[k].test, res[i].test) != 0)
				continue;
			done[k] = 1;
			if (res[k].op == OP_WRITE)
				w = &res[k];
			else if (res[k].op == OP_READ)
				r = &res[k];
			else
				idle = &res[k];
		}
		if (idle) {
			figure(idle, a, sizeof(a));
			limit_text(idle, NULL, lim, sizeof(lim));
			fprintf(f, "%-*s%-*s%-*s%-*s%s\n", W_TEST, idle->test, W_VAL, a, W_VAL,
			    idle->nsteps ? "mean/p99 response" : "", W_LIMIT, lim, verdict(idle, NULL));
			steps_text(f, idle);
			continue;
		}
		figure(w, a, sizeof(a));
		figure(r, b, sizeof(b));
		limit_text(w, r, lim, sizeof(lim));
		fprintf(f, "%-*s%-*s%-*s%-*s%s\n", W_TEST, res[i].test, W_VAL, a, W_VAL, b,
		    W_LIMIT, lim, verdict(w, r));
		if ((w && w->has_lat) || (r && r->has_lat)) {
			lat_text(w, a, sizeof(a));
			lat_text(r, b, sizeof(b));
			fprintf(f, "%-*s%-*s%-*s\n", W_TEST, "  p50/p99/p99.9", W_VAL, a, W_VAL, b);
		}
		if (any_power) {
			power_text(w, a, sizeof(a));
			power_text(r, b, sizeof(b));
			fprintf(f, "%-*s%-*s%-*s\n", W_TEST, "  power", W_VAL, a, W_VAL, b);
		}
	}
	for (int i = 0; i < n; i++)
		if (res[i].note[0])
			fprintf(f, "note: %s %s: %s\n", res[i].test, op_name(res[i].op), res[i].note);
	fprintf(f, "result: %s\n", st_verdict_word(exit_code));
}
