/*
 * powerd's API: the method table with its parameter policies, the
 * configuration schema and the sampling timer. The common methods
 * (system.*, events.*, job.*) come from libnas.
 */
#include <time.h>

#include "powerd.h"

static const char *const hwmon_paths[] = { "/sys/class/hwmon", NULL };
static const char *const rapl_paths[] = { "/sys/class/powercap/intel-rapl:0", NULL };

const struct nas_feature powerd_features[] = {
	{ "hwmon", hwmon_paths, "no hwmon class: sensors unavailable" },
	{ "powercap", rapl_paths, "no RAPL: the board power model is used" },
	{ NULL, NULL, NULL }
};

static const struct conf_key powerd_conf[] = {
	{ "powerd", "board", CONF_STRING, "/etc/board.ini", 1, 255, NULL,
	  "board description: bays, ports, [power] sensor or model" },
	{ "powerd", "sysfs_root", CONF_STRING, "/sys", 1, 255, NULL,
	  "where sysfs is (tests point it at a fixture tree)" },
	{ "powerd", "proc_root", CONF_STRING, "/proc", 1, 255, NULL,
	  "where procfs is (diskstats, stat)" },
	{ "powerd", "interval_ms", CONF_INT, "1000", 100, 60000, NULL,
	  "one sample of every source this often" },
	{ "powerd", "read_timeout_ms", CONF_INT, "200", 10, 5000, NULL,
	  "a sensor read that takes longer is skipped for a minute" },
	{ "powerd", "metrics_dir", CONF_STRING, "/run/nas/metrics", 0, 255, NULL,
	  "node_exporter textfile directory for powerd.prom; empty: none" },
	{ "powerd", "raidd_socket", CONF_STRING, "/run/nas/raidd.sock", 1, 255, NULL,
	  "raidd's socket: which volumes sync (no standby for their disks)" },
	{ "standby", "minutes", CONF_INT, "20", 0, 1440, NULL,
	  "idle minutes before a bay's disk is sent to standby; 0: never" },
	{ "standby", "state_file", CONF_STRING, "/etc/nas/powerd-standby", 1, 255, NULL,
	  "drive.set's minutes per bay, kept across restarts (above bayN)" },
	{ "temp", "disk_max_c", CONF_INT, "55", 20, 100, NULL,
	  "temp.alarm when a disk (drivetemp) reaches this" },
	{ "temp", "board_max_c", CONF_INT, "70", 20, 125, NULL,
	  "temp.alarm when any other hwmon temperature reaches this" },
#define BAY_KEY(n) { "standby", "bay" #n, CONF_INT, "-1", -1, 1440, NULL, \
	  "bay " #n "'s own minutes; -1: [standby] minutes" }
	BAY_KEY(1), BAY_KEY(2), BAY_KEY(3), BAY_KEY(4), BAY_KEY(5), BAY_KEY(6),
	BAY_KEY(7), BAY_KEY(8), BAY_KEY(9), BAY_KEY(10), BAY_KEY(11), BAY_KEY(12),
	BAY_KEY(13), BAY_KEY(14), BAY_KEY(15), BAY_KEY(16),
#undef BAY_KEY
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static ev_timer sample_w;
static char metrics_dir[256];
static int metrics_failed;

static void
powerd_info(struct json_object *r)
{
	nas_feature_report(powerd_features, r);
}

static double
clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each finished sample's metrics (power_on_sample). */
static void
write_prom(void)
{
	/* Said once, not every second; said again after it worked. */
	if (prom_write(metrics_dir) == -1) {
		if (!metrics_failed)
			log_warn("%s/powerd.prom", metrics_dir);
		metrics_failed = 1;
	} else
		metrics_failed = 0;
}

static void
sample_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	double now = clock_s(CLOCK_MONOTONIC);

	(void)l;
	(void)w;
	(void)revents;
	power_sample(now, clock_s(CLOCK_REALTIME));
	sync_poll(now);
}

static void
apply(const struct conf *c)
{
	int per_bay[BOARD_MAX_BAYS];
	char err[512];

	/* Without a board there is no model: sensors only, watts unknown. */
	if (power_load_board(conf_str(c, "powerd", "board"), err, sizeof(err)) == -1)
		log_warnx("%s%s", err, power.have_board ? ": the previous one is kept" :
		    ": no bays, no model, watts unknown");
	sensor_set_root(conf_str(c, "powerd", "sysfs_root"));
	activity_set_proc_root(conf_str(c, "powerd", "proc_root"));
	sysread_set_bound((int)conf_int(c, "powerd", "read_timeout_ms"));
	pathf(metrics_dir, sizeof(metrics_dir), "%s", conf_str(c, "powerd", "metrics_dir"));
	sync_set_socket(conf_str(c, "powerd", "raidd_socket"));
	for (int i = 0; i < BOARD_MAX_BAYS; i++) {
		char key[16];

		pathf(key, sizeof(key), "bay%d", i + 1);
		per_bay[i] = (int)conf_int(c, "standby", key);
	}
	drive_set_timers((int)conf_int(c, "standby", "minutes"), per_bay);
	drive_set_state_file(conf_str(c, "standby", "state_file"));
	thermal_set_limits((double)conf_int(c, "temp", "disk_max_c"),
	    (double)conf_int(c, "temp", "board_max_c"));
	metrics_failed = 0;
	ev_timer_stop(nas_loop(), &sample_w);
	ev_timer_init(&sample_w, sample_cb, 0.,
	    (double)conf_int(c, "powerd", "interval_ms") / 1000.);
	ev_timer_again(nas_loop(), &sample_w);
}

static int
powerd_init(const struct conf *c)
{
	drive_smart = smart_linux;
	power_on_sample = write_prom;
	energy_reset(&power.energy);
	apply(c);
	/*
	 * A first sample before the socket opens: power.status answers at
	 * once, unless a sensor hangs (then "no sample yet" until it answers
	 * or the next sample stalls it).
	 */
	sample_cb(nas_loop(), &sample_w, 0);
	sampler_wait(1000);
	return 0;
}

static int
powerd_reload(const struct conf *c)
{
	apply(c);
	return 0;
}

static void
powerd_fini(void)
{
	ev_timer_stop(nas_loop(), &sample_w);
}

static const struct rpc_method *const powerd_tables[] = {
	power_methods, drive_methods, thermal_methods, NULL
};

const struct nas_daemon powerd_daemon = {
	.name = "powerd",
	.methods = powerd_tables,
	.conf = powerd_conf,
	.init = powerd_init,
	.reload = powerd_reload,
	.fini = powerd_fini,
	.info = powerd_info,
};
