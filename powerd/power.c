/*
 * One sample of the board: every sensor, the disks' and CPU's activity,
 * the board's draw (its sensor, or the model where it has none), the
 * state, the energy; and the methods that show them.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "powerd.h"

#define RESCAN_SECONDS	30.0	/* hot-plugged disks, chips that came or went */

struct power_ctx power;
void (*power_on_sample)(void);

int
power_load_board(const char *path, char *err, size_t errlen)
{
	struct power_model m;
	struct board b;

	if (board_load(path, &b, err, errlen) == -1 ||
	    model_load(path, &m, err, errlen) == -1)
		return -1;
	power.board = b;
	power.model = m;
	power.have_board = 1;
	power.last_scan = 0;	/* the bays may have moved: map them again */
	return 0;
}

static int
ports_up(void)
{
	char p[PATH_MAX];
	long long carrier;
	int n = 0;

	for (int i = 0; i < power.board.nports; i++) {
		const char *name = power.board.port[i].name;

		if (name[0] == '\0' || strchr(name, '/') != NULL || name[0] == '.')
			continue;
		pathf(p, sizeof(p), "%s/class/net/%s/carrier", sensor_root(), name);
		if (sysread_int(p, 0, 1, &carrier, NULL) == RD_OK && carrier == 1)
			n++;
	}
	return n;
}

/* The board's watts from its sensor, as last read; joules from a counter, or -1. */
static double
sensor_watts(double j0, double *joules)
{
	struct sensor *s = sensor_find(&power.sensors, power.model.sensor);

	if (s == NULL) {
		power.watts_error = "vanished";
		return NAN;
	}
	if (s->status != RD_OK) {
		power.watts_error = rd_status_name(s->status);
		return NAN;
	}
	if (!s->have_watts) {
		power.watts_error = "first count";	/* a counter needs two */
		return NAN;
	}
	if ((s->kind == SK_ENERGY || s->kind == SK_RAPL) && j0 >= 0 && s->joules >= j0)
		*joules = s->joules - j0;
	return s->watts;
}

/* The sample started by power_sample: its time, wall clock and state. */
static double pend_now, pend_wall;
static int start_failed;

/*
 * The sensors of the sample are in (or stalled): the
 * watts, the state, the energy. j0: the source counter's joules before
 * this sample's read, -1 when none.
 */
void
power_sample_done(double j0)
{
	struct model_input in;
	enum board_state st;
	double joules = -1;
	int model = power.have_board && strcmp(power.model.sensor, "model") == 0;

	thermal_check(&power.sensors);
	power.watts_error = NULL;
	if (!power.have_board) {
		power.watts = NAN;
		power.watts_error = "no board description";
		pathf(power.source, sizeof(power.source), "none");
	} else if (model) {
		activity_model_input(&power.act, &in);
		in.ports_up = ports_up();
		power.watts = model_watts(&power.model, &in);
		pathf(power.source, sizeof(power.source), "model");
	} else {
		power.watts = sensor_watts(j0, &joules);
		pathf(power.source, sizeof(power.source), "sensor:%s", power.model.sensor);
	}
	st = activity_state(&power.act);
	if (power.samples > 0 && st != power.state) {
		struct json_object *ev = json_object_new_object();

		json_object_object_add(ev, "state", json_object_new_string(board_state_name(st)));
		json_object_object_add(ev, "was",
		    json_object_new_string(board_state_name(power.state)));
		nas_event("power.state", ev);
	}
	power.state = st;
	power.watts_at = pend_wall;
	power.samples++;
	/*
	 * A stalled source has no watts (NAN): the interval is charged its
	 * seconds and no joules, and so is the first one after it.
	 */
	energy_add(&power.energy, pend_now, pend_wall, power.watts, joules, st);
	if (power_on_sample != NULL)
		power_on_sample();
}

/*
 * One sample: the disks and the CPU here on the loop (kernel counters,
 * no bus behind them), the sensors on the sampler's worker. The sample
 * is finished when the worker answers; when the last one has not, the
 * sensors are stalled and the sample finished at once without them.
 */
void
power_sample(double now, double wall)
{
	enum disk_power prev[BOARD_MAX_BAYS];

	/* An answer already in the pipe is on time: the loop was late, not it. */
	sampler_wait(0);
	if (power.last_scan == 0 || now - power.last_scan >= RESCAN_SECONDS) {
		sensor_scan(&power.sensors);
		activity_scan_disks(&power.act, &power.board, now);
		power.last_scan = now;
	}
	for (int i = 0; i < power.act.ndisks; i++)
		prev[i] = power.act.disk[i].power;
	activity_sample(&power.act, now);
	drive_note_wakes(prev, power.act.ndisks);
	if (power.have_board) {
		drive_tick(now);
		drive_smart_tick(now);
	}
	pend_now = now;
	pend_wall = wall;
	/* The loop's clock for drive.c: the disks are sampled as of now. */
	power.sampled_at = wall;
	power.sampled_mono = now;
	if (sampler_busy()) {
		sampler_stall();
		power_sample_done(-1);
	} else if (sampler_start(now) == -1) {
		/* No thread (memory): no reading, said once until one starts. */
		if (!start_failed)
			log_warn("sensor sampler");
		start_failed = 1;
		for (int i = 0; i < power.sensors.n; i++) {
			power.sensors.s[i].status = RD_ERROR;
			power.sensors.s[i].value = NAN;
			power.sensors.s[i].have_watts = 0;
			power.sensors.s[i].count_at = 0;
		}
		power_sample_done(-1);
	} else
		start_failed = 0;
}

/* ---- methods ---- */

static struct json_object *
num_or_null(double v)
{
	return isnan(v) ? NULL : json_object_new_double(v);
}

static void
power_status(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object(), *by = json_object_new_object();
	const struct energy *e = &power.energy;

	(void)params;
	if (power.samples == 0) {
		json_object_put(r);
		json_object_put(by);
		rpc_error(c, NAS_ERR_BUSY, "no sample yet");
		return;
	}
	json_object_object_add(r, "watts", num_or_null(power.watts));
	if (power.watts_error != NULL)
		json_object_object_add(r, "error", json_object_new_string(power.watts_error));
	json_object_object_add(r, "source", json_object_new_string(power.source));
	json_object_object_add(r, "state",
	    json_object_new_string(board_state_name(power.state)));
	json_object_object_add(r, "energy_j", json_object_new_double(e->joules));
	for (int s = 0; s < BS_NSTATES; s++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "joules", json_object_new_double(e->by_j[s]));
		json_object_object_add(o, "seconds", json_object_new_double(e->by_s[s]));
		json_object_object_add(by, board_state_name(s), o);
	}
	json_object_object_add(r, "by_state", by);
	json_object_object_add(r, "cpu_load", json_object_new_double(power.act.cpu_load));
	json_object_object_add(r, "sampled_at", json_object_new_double(power.watts_at));
	rpc_result(c, r);
}

static void
power_history(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object();
	int seconds = (int)rpc_param_int(params, "seconds", 3600);
	int step = (int)rpc_param_int(params, "step", 1);

	json_object_object_add(r, "seconds", json_object_new_int(seconds));
	json_object_object_add(r, "step", json_object_new_int(step));
	json_object_object_add(r, "samples",
	    energy_history(&power.energy, seconds, step, power.sampled_at));
	rpc_result(c, r);
}

static void
sensor_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object(), *arr = json_object_new_array();

	(void)params;
	for (int i = 0; i < power.sensors.n; i++)
		json_object_array_add(arr, sensor_describe(&power.sensors.s[i]));
	json_object_object_add(r, "sensors", arr);
	rpc_result(c, r);
}

static const struct rpc_param history_params[] = {
	{ "seconds", RPC_INT, 0, 1, 86400, NULL, "how far back (default 3600)" },
	{ "step", RPC_INT, 0, 1, 3600, NULL, "seconds averaged into one sample (default 1)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method power_methods[] = {
	{ "power.status", power_status, NULL, 0,
	  "watts now, their source, the board's state, energy per state" },
	{ "power.history", power_history, history_params, 0,
	  "recent samples (watts, state), averaged per step" },
	{ "sensor.list", sensor_list, NULL, 0,
	  "every hwmon and powercap sensor with its value and status" },
	{ NULL, NULL, NULL, 0, NULL }
};
