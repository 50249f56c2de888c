/*
 * raidd: the daemon around the modules. Start-up finds the disks and
 * assembles every volume found on them; hotplug events and a monitor
 * timer keep the tables and volume states current.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prom.h"
#include "system-sim.h"
#include "volume.h"
#include "crypt.h"

#define MONITOR_SECONDS	5

static const struct conf_key raidd_conf[] = {
	{ "raidd", "board", CONF_STRING, "/etc/board.ini", 1, 255, NULL,
	  "board description: bays and the firmware's flash device" },
	{ "raidd", "mount_root", CONF_STRING, "/volumes", 1, 100, NULL,
	  "volumes are mounted at <mount_root>/<name>" },
	{ "raidd", "degraded_wait", CONF_INT, "5", 0, 300, NULL,
	  "seconds a volume missing a member waits at start-up for late disks before it starts degraded" },
	{ "raidd", "unit_id_file", CONF_STRING, "/etc/nas/raidd-unit-id", 1, 200, NULL,
	  "this unit's id, made at the first start; written into every label" },
	{ "raidd", "metrics_dir", CONF_STRING, "/run/nas/metrics", 0, 255, NULL,
	  "node_exporter textfile directory for raidd.prom; empty: none" },
	{ "raidd", "deleted_file", CONF_STRING, "/etc/nas/raidd-deleted", 1, 200, NULL,
	  "volumes deleted here while a member was absent" },
	{ "crypt", "keyfile_dir", CONF_STRING, "", 0, 199, NULL,
	  "encrypted volume NAME unlocks at start with <dir>/NAME.key when it is there (root's, mode 600); empty: never" },
	{ "scrub", "schedule", CONF_STRING, "monthly 1 2", 1, 63, NULL,
	  "when checks start: off, daily HOUR, weekly sun..sat HOUR, monthly 1-28 HOUR" },
	{ "scrub", "max_hours", CONF_INT, "4", 0, 720, NULL,
	  "a night's scrub stops after this many hours and goes on the next night (0: no limit)" },
	{ "scrub", "sync_speed_min", CONF_INT, "0", 0, 10000000, NULL,
	  "kB/s md keeps a scrub at even while the disks are busy (0: md's default)" },
	{ "scrub", "sync_speed_max", CONF_INT, "0", 0, 10000000, NULL,
	  "kB/s a scrub never passes (0: md's default)" },
	{ "scrub", "state_file", CONF_STRING, "/etc/nas/raidd-scrub", 1, 200, NULL,
	  "where an unfinished scrub stopped, to go on from there" },
	{ "volume", "auto_repair", CONF_BOOL, "yes", 0, 0, NULL,
	  "a blank disk inserted in a degraded volume's missing member's bay is made that member" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static ev_io hotplug_w;
static ev_timer monitor_w, grace_w;
static double assembly_seconds;	/* start-up: labels read, volumes up */

static void
raidd_info(struct json_object *r)
{
	struct json_object *a = json_object_new_object();

	nas_feature_report(raidd_features, r);
	json_object_object_add(a, "volumes", json_object_new_int(volume_count()));
	json_object_object_add(a, "seconds", json_object_new_double(assembly_seconds));
	json_object_object_add(r, "assembly", a);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A disk came or went: rescan it, assemble what may now be complete, and
 * say at once what changed (a member pulled for a moment would
 * otherwise fall between two monitor ticks).
 */
static void
hotplug_cb(struct ev_loop *l, ev_io *w, int revents)
{
	char names[8][SYS_NAME_MAX];
	int n;

	(void)l;
	(void)revents;
	if ((n = sys->hotplug_read(w->fd, names, 8)) == 0)
		return;
	if (n > 0)
		disk_refresh_named(names, n);
	else
		disk_refresh(1);
	volume_scan();
	volume_check_states();
	if (n > 0)
		repair_auto(names, n);
}

/* md changes state on its own too (a member fails, a resync ends). */
static void
monitor_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	volume_check_states();
	raidd_metrics_write();
}

/* The start-up grace period is over: what still lacks a member starts degraded. */
static void
grace_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	volume_set_degraded_start(1);
	volume_scan();
	volume_check_states();
}

static void
load_scrub(const struct conf *c)
{
	struct scrub_sched s;
	char err[160];

	scrub_set_options(conf_str(c, "scrub", "state_file"),
	    3600. * (double)conf_int(c, "scrub", "max_hours"),
	    (unsigned)conf_int(c, "scrub", "sync_speed_min"),
	    (unsigned)conf_int(c, "scrub", "sync_speed_max"), 1.);
	if (scrub_sched_parse(conf_str(c, "scrub", "schedule"), &s, err, sizeof(err)) == -1)
		log_warnx("[scrub] %s: no scrub is scheduled", err);
	scrub_sched_set(&s);
}

static void
load_board(const char *path)
{
	struct board b;
	char err[256];

	if (board_load(path, &b, err, sizeof(err)) == -1) {
		log_warnx("%s: disks are listed without bays and none may be erased", err);
		memset(&b, 0, sizeof(b));
		/* Simulated disks sit in simulated bays (see simulate()). */
		for (int i = 0; sys == &sys_sim && i < 4; i++) {
			snprintf(b.bay[i].path, sizeof(b.bay[i].path),
			    "/sys/devices/sim/host0/target0:0:%d/*", i + 1);
			snprintf(b.bay[i].label, sizeof(b.bay[i].label), "Bay %d", i + 1);
			b.nbays = i + 1;
		}
	}
	disk_set_board(&b);
	led_set_off();
}

/*
 * RAIDD_SIMULATE="sda:4G,sdb:8G" runs raidd on simulated disks, the way
 * netifd's system-dummy lets a UI be developed on any machine.
 */
static void
simulate(const char *spec)
{
	char buf[512], *tok, *save = NULL, *colon, path[128], serial[32];
	int n = 0;

	sys = &sys_sim;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long gib;

		if ((colon = strchr(tok, ':')) == NULL || (gib = strtoull(colon + 1, NULL, 10)) == 0)
			fatalx("RAIDD_SIMULATE: '%s' is not name:GiB", tok);
		*colon = '\0';
		n++;
		snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", n, n);
		snprintf(serial, sizeof(serial), "SIM%d", n);
		sim_add_disk(tok, gib << 30, serial, path);
	}
	log_warnx("simulating %d disks: nothing real is touched", n);
}

static int
raidd_init(const struct conf *c)
{
	double t0;
	long long wait;
	int fd;

	sys = &sys_linux;
	if (getenv("RAIDD_SIMULATE"))
		simulate(getenv("RAIDD_SIMULATE"));
	load_board(conf_str(c, "raidd", "board"));
	volume_set_options(conf_str(c, "raidd", "mount_root"));
	load_scrub(c);
	raidd_metrics_set_dir(conf_str(c, "raidd", "metrics_dir"));
	repair_set_auto(conf_bool(c, "volume", "auto_repair"));
	crypt_auto_start(conf_str(c, "crypt", "keyfile_dir"));
	if (unit_load(conf_str(c, "raidd", "unit_id_file")) == -1 && sys == &sys_sim) {
		uint8_t u[16] = { 0x51, 0x4d };	/* "SM": simulated disks, a unit for this run */

		unit_set(u);
	}
	if (unit_deleted_load(conf_str(c, "raidd", "deleted_file")) == -1)
		log_warn("%s", conf_str(c, "raidd", "deleted_file"));
	/* Before the scan: a disk that arrives during it is not missed. */
	if ((fd = sys->hotplug_open()) != -1) {
		ev_io_init(&hotplug_w, hotplug_cb, fd, EV_READ);
		ev_io_start(nas_loop(), &hotplug_w);
	}
	/* Disks spin up one after another: give late ones a moment. */
	wait = conf_int(c, "raidd", "degraded_wait");
	volume_set_degraded_start(wait == 0);
	if (wait > 0) {
		ev_timer_init(&grace_w, grace_cb, (double)wait, 0.);
		ev_timer_start(nas_loop(), &grace_w);
	}
	t0 = now();
	disk_refresh(0);
	if (sys == &sys_sim || (nas_feature_present(&raidd_features[0]) &&
	    nas_feature_present(&raidd_features[1]))) {
		volume_scan();
		assembly_seconds = now() - t0;
		log_info("%d volume(s) found and assembled in %.3f s", volume_count(),
		    assembly_seconds);
	} else
		log_warnx("no md or device-mapper in this kernel: volumes are not assembled");
	/* md's own changes wake raidd (Decision 23); the tick is a backstop
	   for what md does not notify (dev-X/errors). */
	watch_start();
	ev_timer_init(&monitor_w, monitor_cb, MONITOR_SECONDS, MONITOR_SECONDS);
	ev_timer_start(nas_loop(), &monitor_w);
	return 0;
}

/* SIGHUP: the board file and the disks again; what became whole is assembled. */
static int
raidd_reload(const struct conf *c)
{
	load_board(conf_str(c, "raidd", "board"));
	volume_set_options(conf_str(c, "raidd", "mount_root"));
	load_scrub(c);
	raidd_metrics_set_dir(conf_str(c, "raidd", "metrics_dir"));
	repair_set_auto(conf_bool(c, "volume", "auto_repair"));
	crypt_auto_start(conf_str(c, "crypt", "keyfile_dir"));
	disk_refresh(1);
	volume_scan();
	return 0;
}

static const struct rpc_method *const raidd_tables[] = { disk_methods, volume_methods,
	scrub_methods, crypt_methods, spare_methods, NULL };

const struct nas_daemon raidd_daemon = {
	.name = "raidd",
	.methods = raidd_tables,
	.conf = raidd_conf,
	.init = raidd_init,
	.reload = raidd_reload,
	.info = raidd_info,
};
