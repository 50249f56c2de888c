/*
 * Power while the tests run: powerd's power.status sampled twice a
 * second by a thread of its own (the engine's threads never wait for
 * it), integrated per phase. Without an answer from powerd the phases
 * say "unavailable", never 0 W. Each reading also keeps what powerd
 * saw the board doing (disk I/O, busy CPU cores): the idle phase is
 * only an idle figure when the disks were quiet (Decision 102).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "engine.h"
#include "selftest.h"

#define POWER_MAX_SAMPLES	(1 << 16)
#define POWER_PERIOD_US		500000

static struct {
	pthread_mutex_t		 lock;
	pthread_t		 tid;
	int			 running, quit;
	struct rpc_client	*client;
	double			*t, *w, *cpu;
	unsigned char		*busy;		/* powerd saw disk I/O */
	size_t			 n;
} pw = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct reading {
	double	w, cpu;
	int	busy;
};

static int
is_number(struct json_object *v)
{
	return json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int);
}

/*
 * One reading; w is -1 when there is none (a result without a number
 * "watts"). A state other than idle or standby, or none, counts as busy
 * disks: an idle figure is never made of readings powerd did not vouch for.
 */
static struct reading
read_watts(struct rpc_client *c)
{
	struct rpc_client_error err = { 0 };
	struct json_object *r = NULL, *v;
	struct reading x = { -1, 0, 1 };
	const char *s;

	if (rpc_client_call(c, "power.status", NULL, &r, &err) == 0 &&
	    json_object_object_get_ex(r, "watts", &v) && is_number(v)) {
		x.w = json_object_get_double(v);
		if (!(x.w >= 0 && x.w < 100000))
			x.w = -1;
		if (json_object_object_get_ex(r, "cpu_load", &v) && is_number(v)) {
			x.cpu = json_object_get_double(v);
			if (!(x.cpu >= 0 && x.cpu < 4096))
				x.cpu = 0;
		}
		if (json_object_object_get_ex(r, "state", &v) &&
		    (s = json_object_get_string(v)) != NULL)
			x.busy = strcmp(s, "idle") != 0 && strcmp(s, "standby") != 0;
	}
	json_object_put(r);
	rpc_client_error_clear(&err);
	return x;
}

static void
record(const struct reading *x)
{
	pthread_mutex_lock(&pw.lock);
	if (pw.n < POWER_MAX_SAMPLES) {
		pw.t[pw.n] = now_s();
		pw.w[pw.n] = x->w;
		pw.cpu[pw.n] = x->cpu;
		pw.busy[pw.n] = (unsigned char)x->busy;
		pw.n++;
	}
	pthread_mutex_unlock(&pw.lock);
}

static void *
sampler(void *arg)
{
	struct reading x;
	int quit;

	(void)arg;
	for (;;) {
		usleep(POWER_PERIOD_US);
		pthread_mutex_lock(&pw.lock);
		quit = pw.quit;
		pthread_mutex_unlock(&pw.lock);
		if (quit)
			break;
		if ((x = read_watts(pw.client)).w >= 0)
			record(&x);
	}
	return NULL;
}

int
power_start(const char *sockdir)
{
	struct rpc_client_error err = { 0 };
	struct reading x;

	if ((pw.client = rpc_client_open(sockdir, "powerd", &err)) == NULL) {
		rpc_client_error_clear(&err);
		return -1;
	}
	rpc_client_set_timeout(pw.client, 1000);
	pw.t = calloc(POWER_MAX_SAMPLES, sizeof(double));
	pw.w = calloc(POWER_MAX_SAMPLES, sizeof(double));
	pw.cpu = calloc(POWER_MAX_SAMPLES, sizeof(double));
	pw.busy = calloc(POWER_MAX_SAMPLES, 1);
	if (pw.t == NULL || pw.w == NULL || pw.cpu == NULL || pw.busy == NULL ||
	    (x = read_watts(pw.client)).w < 0)
		goto fail;
	record(&x);
	if (pthread_create(&pw.tid, NULL, sampler, NULL) != 0)
		goto fail;
	pw.running = 1;
	return 0;
fail:
	rpc_client_close(pw.client);
	pw.client = NULL;
	free(pw.t);
	free(pw.w);
	free(pw.cpu);
	free(pw.busy);
	pw.t = pw.w = pw.cpu = NULL;
	pw.busy = NULL;
	pw.n = 0;
	return -1;
}

void
power_stop(void)
{
	if (!pw.running)
		return;
	pthread_mutex_lock(&pw.lock);
	pw.quit = 1;
	pthread_mutex_unlock(&pw.lock);
	pthread_join(pw.tid, NULL);
	pw.running = 0;
	rpc_client_close(pw.client);
	pw.client = NULL;
}

int
power_phase(double t0, double t1, double *watts, double *joules)
{
	double j;
	int rc = -1;

	*watts = *joules = 0;
	pthread_mutex_lock(&pw.lock);
	/* A phase needs a reading inside it or one on each side. */
	if (pw.n > 0 && pw.t[pw.n - 1] >= t0 - 1 &&
	    (j = energy_joules(pw.t, pw.w, pw.n, t0, t1)) >= 0) {
		*joules = j;
		*watts = t1 > t0 ? j / (t1 - t0) : pw.w[pw.n - 1];
		rc = 0;
	}
	pthread_mutex_unlock(&pw.lock);
	return rc;
}

/* The readings from t0 to t1: how many, how many saw disk I/O, their CPU load summed. */
static size_t
window(double t0, double t1, size_t *busy, double *cpu)
{
	size_t k = 0;

	*busy = 0;
	*cpu = 0;
	pthread_mutex_lock(&pw.lock);
	for (size_t i = 0; i < pw.n; i++)
		if (pw.t[i] >= t0 && pw.t[i] <= t1) {
			k++;
			*busy += pw.busy[i];
			*cpu += pw.cpu[i];
		}
	pthread_mutex_unlock(&pw.lock);
	return k;
}

int
power_activity(double t0, double t1, double *busy_share, double *cpu_load)
{
	size_t k, busy;
	double cpu;

	*busy_share = *cpu_load = 0;
	if ((k = window(t0, t1, &busy, &cpu)) == 0)
		return -1;
	*busy_share = (double)busy / (double)k;
	*cpu_load = cpu / (double)k;
	return 0;
}

int
power_running(void)
{
	return pw.running;
}

int
power_quiet(double seconds)
{
	double now = now_s(), cpu;
	size_t busy, k = window(now - seconds, now, &busy, &cpu);

	/* Readings come twice a second: most of the window's, none busy. */
	return busy == 0 && (double)k >= seconds * 1e6 / POWER_PERIOD_US - 1;
}

struct json_object *
power_series(double origin, int max)
{
	struct json_object *a = NULL, *pt;
	size_t stride;

	pthread_mutex_lock(&pw.lock);
	if (pw.n > 0 && max > 0) {
		a = json_object_new_array();
		stride = (pw.n + (size_t)max - 1) / (size_t)max;
		for (size_t i = 0; i < pw.n; i += stride) {
			pt = json_object_new_array();
			json_object_array_add(pt, json_object_new_double(
			    round((pw.t[i] - origin) * 1000) / 1000));
			json_object_array_add(pt, json_object_new_double(round(pw.w[i] * 1000) / 1000));
			json_object_array_add(a, pt);
		}
	}
	pthread_mutex_unlock(&pw.lock);
	return a;
}
