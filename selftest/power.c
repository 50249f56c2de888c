/*
 * Power while the tests run: powerd's power.status sampled twice a
 * second by a thread of its own (the engine's threads never wait for
 * it), integrated per phase. Without an answer from powerd the phases
 * say "unavailable", never 0 W.
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
	double			*t, *w;
	size_t			 n;
} pw = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* One reading in watts, or -1. A result without a number "watts" is none. */
static double
read_watts(struct rpc_client *c)
{
	struct rpc_client_error err = { 0 };
	struct json_object *r = NULL, *v;
	double w = -1;

	if (rpc_client_call(c, "power.status", NULL, &r, &err) == 0 &&
	    json_object_object_get_ex(r, "watts", &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
		w = json_object_get_double(v);
		if (!(w >= 0 && w < 100000))
			w = -1;
	}
	json_object_put(r);
	rpc_client_error_clear(&err);
	return w;
}

static void
record(double w)
{
	pthread_mutex_lock(&pw.lock);
	if (pw.n < POWER_MAX_SAMPLES) {
		pw.t[pw.n] = now_s();
		pw.w[pw.n] = w;
		pw.n++;
	}
	pthread_mutex_unlock(&pw.lock);
}

static void *
sampler(void *arg)
{
	double w;
	int quit;

	(void)arg;
	for (;;) {
		usleep(POWER_PERIOD_US);
		pthread_mutex_lock(&pw.lock);
		quit = pw.quit;
		pthread_mutex_unlock(&pw.lock);
		if (quit)
			break;
		if ((w = read_watts(pw.client)) >= 0)
			record(w);
	}
	return NULL;
}

int
power_start(const char *sockdir)
{
	struct rpc_client_error err = { 0 };
	double w;

	if ((pw.client = rpc_client_open(sockdir, "powerd", &err)) == NULL) {
		rpc_client_error_clear(&err);
		return -1;
	}
	rpc_client_set_timeout(pw.client, 1000);
	pw.t = calloc(POWER_MAX_SAMPLES, sizeof(double));
	pw.w = calloc(POWER_MAX_SAMPLES, sizeof(double));
	if (pw.t == NULL || pw.w == NULL || (w = read_watts(pw.client)) < 0)
		goto fail;
	record(w);
	if (pthread_create(&pw.tid, NULL, sampler, NULL) != 0)
		goto fail;
	pw.running = 1;
	return 0;
fail:
	rpc_client_close(pw.client);
	pw.client = NULL;
	free(pw.t);
	free(pw.w);
	pw.t = pw.w = NULL;
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
