/*
 * powerd's sources, model, state and energy on fixture trees: a sysfs
 * root and a proc root made in a temporary directory, read exactly as
 * the kernel's would be.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <iniparser.h>

#include "job.h"
#include "log.h"
#include "powerd/powerd.h"
#include "tests/unit/unit-util.h"

static char *tmp;

/* Writes text to tmp/rel, making the directories on the way. */
static void
put(const char *rel, const char *text)
{
	char path[1024], *slash;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	for (slash = strchr(path + strlen(tmp) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	free(unit_write(tmp, rel, text));
}

/* Writes len bytes (NULs too) to tmp/rel, which put() made or will make. */
static void
put_bytes(const char *rel, const char *bytes, size_t len)
{
	char path[1024];
	FILE *f;

	put(rel, "");
	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* tmp/rel, in a static buffer. */
static const char *
path_of(const char *rel)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	return path;
}

static char *slurp_rel(const char *rel);

static void
gone(const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_int_eq(unlink(path), 0);
}

static void
link_to(const char *target, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_int_eq(symlink(target, path), 0);
}

static void
setup(void)
{
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	tmp = unit_tmpdir();
	sensor_set_root(tmp);
	activity_set_proc_root(tmp);
	sysread_set_bound(5000);
}

static void
teardown(void)
{
	unit_rmtree(tmp);
	free(tmp);
}

static struct sensor_set set;

static struct sensor *
scan_find(const char *name)
{
	sensor_scan(&set);
	return sensor_find(&set, name);
}

/* ---- sources ---- */

START_TEST(hwmon_power_in_microwatts)
{
	struct sensor *s;

	put("class/hwmon/hwmon0/name", "ina219\n");
	put("class/hwmon/hwmon0/power1_input", "5300000\n");
	put("class/hwmon/hwmon0/power1_label", "board\n");
	ck_assert_ptr_nonnull(s = scan_find("hwmon:ina219/power1_input"));
	sensor_read(s, 1.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert_double_eq_tol(s->watts, 5.3, 1e-9);
	ck_assert(s->have_watts);
	ck_assert_str_eq(s->label, "board");
	ck_assert_str_eq(s->path, "class/hwmon/hwmon0/power1_input");
}
END_TEST

START_TEST(hwmon_energy_counter)
{
	struct sensor *s;

	put("class/hwmon/hwmon0/name", "acpi_power\n");
	put("class/hwmon/hwmon0/energy1_input", "1000000\n");
	ck_assert_ptr_nonnull(s = scan_find("hwmon:acpi_power/energy1_input"));
	sensor_read(s, 10.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert(!s->have_watts);	/* one count is no rate */
	put("class/hwmon/hwmon0/energy1_input", "5000000\n");
	sensor_read(s, 12.0);
	ck_assert(s->have_watts);
	ck_assert_double_eq_tol(s->watts, 2.0, 1e-9);
	ck_assert_double_eq_tol(s->joules, 4.0, 1e-9);
	/* A counter that goes back was reset: garbage, never negative energy. */
	put("class/hwmon/hwmon0/energy1_input", "100\n");
	sensor_read(s, 13.0);
	ck_assert_int_eq(s->status, RD_GARBAGE);
	ck_assert(!s->have_watts);
	ck_assert_double_eq_tol(s->joules, 4.0, 1e-9);
	put("class/hwmon/hwmon0/energy1_input", "3000100\n");
	sensor_read(s, 14.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert_double_eq_tol(s->watts, 3.0, 1e-9);
	ck_assert_double_eq_tol(s->joules, 7.0, 1e-9);
	/* A jump of 2^62 uJ in a second is no energy: the total stays. */
	put("class/hwmon/hwmon0/energy1_input", "4611686018427387904\n");
	sensor_read(s, 15.0);
	ck_assert_int_eq(s->status, RD_GARBAGE);
	ck_assert_double_eq_tol(s->joules, 7.0, 1e-9);
	put("class/hwmon/hwmon0/energy1_input", "4611686018430387904\n");
	sensor_read(s, 16.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert_double_eq_tol(s->joules, 10.0, 1e-9);
}
END_TEST

START_TEST(hwmon_volts_times_amps)
{
	struct sensor *s;

	put("class/hwmon/hwmon1/name", "ina3221\n");
	put("class/hwmon/hwmon1/in1_input", "12000\n");
	put("class/hwmon/hwmon1/curr1_input", "500\n");
	put("class/hwmon/hwmon1/curr1_label", "12V\n");
	put("class/hwmon/hwmon1/in4_input", "30\n");	/* shunt: no curr4 */
	ck_assert_ptr_nonnull(s = scan_find("hwmon:ina3221/in1_input*curr1_input"));
	ck_assert_ptr_null(sensor_find(&set, "hwmon:ina3221/in4_input*curr4_input"));
	ck_assert_int_eq(set.n, 1);
	sensor_read(s, 1.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert_double_eq_tol(s->watts, 6.0, 1e-9);
	ck_assert_str_eq(s->label, "12V");
	/* The current file vanishing is the pair vanishing. */
	gone("class/hwmon/hwmon1/curr1_input");
	sensor_read(s, 2.0);
	ck_assert_int_eq(s->status, RD_VANISHED);
	ck_assert(isnan(s->value));
}
END_TEST

START_TEST(rapl_wraps_in_mid_sample)
{
	struct sensor *s;
	char buf[32];
	long long max = 262143328850LL;

	put("class/powercap/intel-rapl/enabled", "1\n");
	put("class/powercap/intel-rapl:0/name", "package-0\n");
	snprintf(buf, sizeof(buf), "%lld\n", max);
	put("class/powercap/intel-rapl:0/max_energy_range_uj", buf);
	snprintf(buf, sizeof(buf), "%lld\n", max - 1000000);
	put("class/powercap/intel-rapl:0/energy_uj", buf);
	ck_assert_ptr_nonnull(s = scan_find("powercap:intel-rapl:0"));
	ck_assert_int_eq(set.n, 1);	/* the control type is no zone */
	ck_assert_str_eq(s->label, "package-0");
	ck_assert_int_eq(s->max_range, max);
	sensor_read(s, 100.0);
	ck_assert_int_eq(s->status, RD_OK);
	/* The counter passed max_energy_range_uj between the two reads. */
	put("class/powercap/intel-rapl:0/energy_uj", "500000\n");
	sensor_read(s, 101.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert_double_eq_tol(s->watts, 1.5, 1e-9);
	ck_assert_double_eq_tol(s->joules, 1.5, 1e-9);
	/* Above the range: garbage. */
	snprintf(buf, sizeof(buf), "%lld\n", max + 1);
	put("class/powercap/intel-rapl:0/energy_uj", buf);
	sensor_read(s, 102.0);
	ck_assert_int_eq(s->status, RD_GARBAGE);
	ck_assert_double_eq_tol(s->joules, 1.5, 1e-9);
}
END_TEST

START_TEST(garbage_is_never_a_number)
{
	static const char *const bad[] = {
		"", "\n", "abc\n", "12 34\n", "5000000x\n", " 5\n", "-5\n",
		"99999999999999999999999\n", "1\n2\n", NULL
	};
	struct sensor *s;

	put("class/hwmon/hwmon0/name", "ina226\n");
	put("class/hwmon/hwmon0/power1_input", "1\n");
	ck_assert_ptr_nonnull(s = scan_find("hwmon:ina226/power1_input"));
	for (int i = 0; bad[i] != NULL; i++) {
		put("class/hwmon/hwmon0/power1_input", bad[i]);
		sensor_read(s, 1.0 + i);
		ck_assert_msg(s->status == RD_GARBAGE, "\"%s\" read as %s", bad[i],
		    rd_status_name(s->status));
		ck_assert(isnan(s->value));
		ck_assert(!s->have_watts);
	}
	/* A NUL ends no value early; a file longer than the buffer is not its head. */
	put_bytes("class/hwmon/hwmon0/power1_input", "42\0junk\n", 8);
	sensor_read(s, 15.0);
	ck_assert_int_eq(s->status, RD_GARBAGE);
	put("class/hwmon/hwmon0/power1_input",
	    "0000000000000000000000000000000000000000000000000000000000000000000005\n");
	sensor_read(s, 16.0);
	ck_assert_int_eq(s->status, RD_GARBAGE);
	/* A chip name with a NUL is no name (it would pass as its head). */
	put_bytes("class/hwmon/hwmon1/name", "ina226\0\"x\n", 10);
	put("class/hwmon/hwmon1/power1_input", "1000000\n");
	ck_assert_ptr_null(scan_find("hwmon:ina226@hwmon1/power1_input"));
	ck_assert_ptr_nonnull(s = scan_find("hwmon:ina226/power1_input"));
	put("class/hwmon/hwmon0/power1_input", "7000000");	/* no newline is fine */
	sensor_read(s, 20.0);
	ck_assert_int_eq(s->status, RD_OK);
	ck_assert_double_eq_tol(s->watts, 7.0, 1e-9);
}
END_TEST

START_TEST(temp_fan_pwm)
{
	struct sensor *s;

	put("class/hwmon/hwmon0/name", "nct6775\n");
	put("class/hwmon/hwmon0/temp1_input", "41500\n");
	put("class/hwmon/hwmon0/fan2_input", "1200\n");
	put("class/hwmon/hwmon0/pwm2", "128\n");
	put("class/hwmon/hwmon0/pwm2_enable", "1\n");
	put("class/hwmon/hwmon0/temp1_max", "80000\n");
	sensor_scan(&set);
	ck_assert_int_eq(set.n, 3);
	for (int i = 0; i < set.n; i++)
		sensor_read(&set.s[i], 1.0);
	ck_assert_ptr_nonnull(s = sensor_find(&set, "hwmon:nct6775/temp1_input"));
	ck_assert_double_eq_tol(s->value, 41.5, 1e-9);
	ck_assert_str_eq(sensor_kind_unit(s->kind), "C");
	ck_assert_ptr_nonnull(s = sensor_find(&set, "hwmon:nct6775/fan2_input"));
	ck_assert_double_eq_tol(s->value, 1200, 1e-9);
	ck_assert_ptr_nonnull(s = sensor_find(&set, "hwmon:nct6775/pwm2"));
	ck_assert_double_eq_tol(s->value, 128, 1e-9);
	put("class/hwmon/hwmon0/pwm2", "256\n");
	sensor_read(s, 2.0);
	ck_assert_int_eq(s->status, RD_GARBAGE);
}
END_TEST

START_TEST(same_driver_twice_gets_told_apart)
{
	put("class/hwmon/hwmon2/name", "drivetemp\n");
	put("class/hwmon/hwmon2/temp1_input", "30000\n");
	put("class/hwmon/hwmon10/name", "drivetemp\n");
	put("class/hwmon/hwmon10/temp1_input", "31000\n");
	put("class/hwmon/hwmon3/name", "bad name\n");	/* not what sysfs says */
	put("class/hwmon/hwmon3/temp1_input", "1\n");
	sensor_scan(&set);
	ck_assert_int_eq(set.n, 2);
	/* Version order: hwmon2 before hwmon10. */
	ck_assert_str_eq(set.s[0].name, "hwmon:drivetemp/temp1_input");
	ck_assert_str_eq(set.s[1].name, "hwmon:drivetemp@hwmon10/temp1_input");
}
END_TEST

START_TEST(counter_survives_rescan)
{
	struct sensor *s;

	put("class/hwmon/hwmon0/name", "acpi_power\n");
	put("class/hwmon/hwmon0/energy1_input", "1000000\n");
	ck_assert_ptr_nonnull(s = scan_find("hwmon:acpi_power/energy1_input"));
	sensor_read(s, 1.0);
	put("class/hwmon/hwmon0/energy1_input", "2000000\n");
	ck_assert_ptr_nonnull(s = scan_find("hwmon:acpi_power/energy1_input"));
	sensor_read(s, 2.0);
	ck_assert(s->have_watts);
	ck_assert_double_eq_tol(s->joules, 1.0, 1e-9);
}
END_TEST

/* ---- the board: model, state, energy ---- */

static const char board_ini[] =
	"[board]\nname = t\nbays = 2\nports = 2\n"
	"[bay1]\npath = /sys/devices/pci0000:00/host*/target*:0:1/*:0:1:0\n"
	"[bay2]\npath = /sys/devices/pci0000:00/host*/target*:0:2/*:0:2:0\n"
	"[port1]\nname = lan1\npath = /sys/devices/x/net/*\n"
	"[port2]\nname = lan2\npath = /sys/devices/y/net/*\n"
	"[power]\nsensor = model\nidle_w = 8.0\ncpu_w_per_load = 4.0\n"
	"per_disk_active_w = 5.7\nper_disk_idle_w = 3.4\nper_disk_standby_w = 0.7\n"
	"per_port_up_w = 0.4\npsu_efficiency = 0.87\n";

START_TEST(model_watts_by_hand)
{
	struct power_model m;
	struct model_input in = { .cpu_load = 0.5, .ports_up = 1 };
	char err[256], *p = unit_write(tmp, "board.ini", board_ini);

	ck_assert_int_eq(model_load(p, &m, err, sizeof(err)), 0);
	ck_assert_str_eq(m.sensor, "model");
	in.disks[DP_ACTIVE] = 1;
	in.disks[DP_STANDBY] = 1;
	ck_assert_double_eq_tol(model_watts(&m, &in),
	    (8.0 + 2.0 + 5.7 + 0.7 + 0.4) / 0.87, 1e-9);
	in.disks[DP_ACTIVE] = 0;
	in.disks[DP_IDLE] = 2;
	in.disks[DP_STANDBY] = 0;
	in.cpu_load = 0;
	in.ports_up = 0;
	ck_assert_double_eq_tol(model_watts(&m, &in), (8.0 + 6.8) / 0.87, 1e-9);
	free(p);
}
END_TEST

START_TEST(model_refuses_bad_figures)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "[power]\nsensor = model\npsu_efficiency = 0.9\n", "[power] idle_w: missing" },
		{ "[power]\nidle_w = 8\npsu_efficiency = 0\n", "[power] psu_efficiency" },
		{ "[power]\nidle_w = nan\npsu_efficiency = 0.9\n", "[power] idle_w" },
		{ "[power]\nidle_w = 8W\npsu_efficiency = 0.9\n", "[power] idle_w" },
		{ "[power]\nidle_w = 8\npsu_efficiency = 0.9\nper_disk_idle_w = -1\n",
		  "[power] per_disk_idle_w" },
		{ "[power]\nsensor = /dev/sda\n", "[power] sensor" },
		{ NULL, NULL }
	};
	struct power_model m = { .idle_w = 42 };
	char err[256], *p;

	for (int i = 0; bad[i].text != NULL; i++) {
		p = unit_write(tmp, "b.ini", bad[i].text);
		ck_assert_int_eq(model_load(p, &m, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, bad[i].why) != NULL, "%s", err);
		ck_assert_double_eq(m.idle_w, 42);	/* unchanged */
		free(p);
	}
	/* A board with a sensor needs no model figures. */
	p = unit_write(tmp, "b.ini", "[power]\nsensor = hwmon:ina219/power1_input\n");
	ck_assert_int_eq(model_load(p, &m, err, sizeof(err)), 0);
	ck_assert_str_eq(m.sensor, "hwmon:ina219/power1_input");
	free(p);
}
END_TEST

/*
 * The virtual boards' power model against their own [selftest] idle
 * limits and the reference's two-bay box (12 W with the disks in
 * standby, 17 W with two spinning): idle (disks spinning, no I/O, a
 * little CPU) lies between the limits, and each way of getting the
 * model wrong lands outside them (Decision 102).
 */
static double
watts_with(const struct power_model *m, int active, int idle, int standby, double cpu)
{
	struct model_input in = { .cpu_load = cpu, .ports_up = 2 };

	in.disks[DP_ACTIVE] = active;
	in.disks[DP_IDLE] = idle;
	in.disks[DP_STANDBY] = standby;
	return model_watts(m, &in);
}

START_TEST(board_idle_between_selftest_limits)
{
	static const char *const boards[] = { "qemu-x86_64/board.ini", "qemu-aarch64/board.ini",
		"qemu-x86_64/board-4bay.ini", NULL };
	char path[1024], err[256];
	struct power_model m;
	dictionary *d;
	double lo, hi;
	int bays;

	for (int i = 0; boards[i]; i++) {
		/* __FILE__ is absolute (the build passes $(SRC)/...): the tree's own boards. */
		snprintf(path, sizeof(path), "%.*s/../../board/%s",
		    (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__, boards[i]);
		ck_assert_msg(model_load(path, &m, err, sizeof(err)) == 0, "%s", err);
		ck_assert_ptr_nonnull(d = iniparser_load(path));
		bays = iniparser_getint(d, "board:bays", 0);
		lo = iniparser_getdouble(d, "selftest:idle_min_w", 0);
		hi = iniparser_getdouble(d, "selftest:idle_max_w", 0);
		iniparser_freedict(d);
		ck_assert_msg(bays >= 2 && lo > 0 && hi > lo, "%s: bays, idle_min_w, idle_max_w",
		    path);
		/* idle: every disk spinning, no I/O, the daemons' bit of CPU */
		ck_assert(watts_with(&m, 0, bays, 0, 0) >= lo);
		ck_assert(watts_with(&m, 0, bays, 0, 0.25) <= hi);
		/* broken: a spinning disk counted active, a core held busy,
		 * the disks counted in standby, the disks left out */
		ck_assert(watts_with(&m, 1, bays - 1, 0, 0) > hi);
		ck_assert(watts_with(&m, 0, bays, 0, 1) > hi);
		ck_assert(watts_with(&m, 0, 0, bays, 0) < lo);
		ck_assert(watts_with(&m, 0, 0, 0, 0) < lo);
		if (bays != 2)
			continue;
		/* the reference's two-bay box, within a watt */
		ck_assert_double_eq_tol(watts_with(&m, 0, 0, 2, 0), 12.0, 1.0);
		ck_assert_double_eq_tol(watts_with(&m, 0, 2, 0, 0), 17.0, 1.0);
	}
}
END_TEST

/* VPD pages of the simulator's disks: A (sda), B (sdb), C (swapped in later). */
static const char pg80_a[12] = { 0, 0x80, 0, 8, 'N', 'A', 'S', '1', '-', '0', '0', '0' };
static const char pg83_a[12] = { 0, 0x83, 0, 8, 2, 1, 0, 4, 'd', 'i', 's', 'A' };
static const char pg83_b[12] = { 0, 0x83, 0, 8, 2, 1, 0, 4, 'd', 'i', 's', 'B' };
static const char pg80_c[12] = { 0, 0x80, 0, 8, 'N', 'A', 'S', '1', '-', '0', '0', '1' };
static const char pg83_c[12] = { 0, 0x83, 0, 8, 2, 1, 0, 4, 'd', 'i', 's', 'C' };

static void
fixture_disks(void)
{
	put("devices/pci0000:00/host0/target0:0:1/0:0:1:0/model", "x\n");
	put("devices/pci0000:00/host0/target0:0:2/0:0:2:0/model", "x\n");
	put("devices/virtual/block/loop0/model", "x\n");
	put("block/sda/size", "1\n");
	put("block/sdb/size", "1\n");
	put("block/loop0/size", "1\n");
	link_to("../../devices/pci0000:00/host0/target0:0:1/0:0:1:0", "block/sda/device");
	link_to("../../devices/pci0000:00/host0/target0:0:2/0:0:2:0", "block/sdb/device");
	link_to("../../devices/virtual/block/loop0", "block/loop0/device");
	put("block/sda/dev", "8:0\n");
	put("block/sdb/dev", "8:16\n");
	put("block/loop0/dev", "7:0\n");
	/* What the kernel keeps of each disk's VPD pages (sda: serial and id). */
	put_bytes("devices/pci0000:00/host0/target0:0:1/0:0:1:0/vpd_pg80", pg80_a, 12);
	put_bytes("devices/pci0000:00/host0/target0:0:1/0:0:1:0/vpd_pg83", pg83_a, 12);
	put_bytes("devices/pci0000:00/host0/target0:0:2/0:0:2:0/vpd_pg83", pg83_b, 12);
}

static struct board
fixture_board(void)
{
	struct board b;
	char err[256], *p = unit_write(tmp, "board.ini", board_ini);

	ck_assert_int_eq(board_load(p, &b, err, sizeof(err)), 0);
	free(p);
	return b;
}

/* diskstats lines for sda and sdb: reads, sectors read, writes, sectors written. */
static void
stats(struct activity *a, double now, unsigned r1, unsigned w1, unsigned r2, unsigned w2)
{
	char text[512];

	snprintf(text, sizeof(text),
	    "   7       0 loop0 9 0 9 0 9 0 9 0 0 0 0 0 0 0 0 0 0\n"
	    "   8       0 sda %u 0 %u 10 %u 0 %u 10 0 20 20 0 0 0 0 0 0\n"
	    "   8      16 sdb %u 0 %u 10 %u 0 %u 10 0 20 20 0 0 0 0 0 0\n",
	    r1, r1 * 8, w1, w1 * 8, r2, r2 * 8, w2, w2 * 8);
	ck_assert_int_eq(activity_diskstats(a, text, now), 0);
}

START_TEST(state_from_recorded_diskstats)
{
	struct board b = fixture_board();
	struct activity a;
	struct model_input in;

	fixture_disks();
	memset(&a, 0, sizeof(a));
	activity_scan_disks(&a, &b, 0);
	ck_assert_int_eq(a.ndisks, 2);	/* loop0 is in no bay */
	stats(&a, 1, 100, 50, 100, 50);		/* first: a baseline */
	ck_assert_int_eq(activity_state(&a), BS_IDLE);
	stats(&a, 2, 100, 50, 100, 50);
	ck_assert_int_eq(activity_state(&a), BS_IDLE);
	stats(&a, 3, 120, 50, 100, 50);
	ck_assert_int_eq(activity_state(&a), BS_READING);
	activity_model_input(&a, &in);
	ck_assert_int_eq(in.disks[DP_ACTIVE], 1);
	ck_assert_int_eq(in.disks[DP_IDLE], 1);
	stats(&a, 4, 120, 60, 100, 70);
	ck_assert_int_eq(activity_state(&a), BS_WRITING);
	stats(&a, 5, 130, 60, 100, 80);	/* one disk reads, the other writes */
	ck_assert_int_eq(activity_state(&a), BS_MIXED);
	stats(&a, 6, 130, 60, 100, 80);
	ck_assert_int_eq(activity_state(&a), BS_IDLE);
	ck_assert_double_eq(a.disk[0].idle_since, 5);
	/* Both disks sent to standby (drive.c): the board is in standby. */
	a.disk[0].power = a.disk[1].power = DP_STANDBY;
	stats(&a, 7, 130, 60, 100, 80);
	ck_assert_int_eq(activity_state(&a), BS_STANDBY);
	ck_assert_double_eq_tol(a.disk[0].standby_s, 1, 1e-9);
	/* A read wakes the disk it reached: one spin-up. */
	stats(&a, 8, 130, 60, 101, 80);
	ck_assert_int_eq(activity_state(&a), BS_READING);
	ck_assert_int_eq(a.disk[1].power, DP_ACTIVE);
	ck_assert_int_eq(a.disk[1].spinups, 1);
	ck_assert_int_eq(a.disk[0].power, DP_STANDBY);
	/* Counters that go back (another disk as sdb): a new baseline, no I/O. */
	stats(&a, 9, 130, 60, 1, 1);
	ck_assert_int_eq(activity_state(&a), BS_IDLE);
	/* A missing line for a known disk is said. */
	ck_assert_int_eq(activity_diskstats(&a, "   8 0 sda 1 0 1 0 1 0 1 0\n", 10), -1);
}
END_TEST

START_TEST(cpu_load_from_stat)
{
	struct activity a;

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(activity_cpustat(&a,
	    "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0\ncpu1 50 0 50 400 0 0 0\n"),
	    0);
	ck_assert_double_eq(a.cpu_load, 0);
	/* 100 busy of 200 on two cores: one core's worth. */
	ck_assert_int_eq(activity_cpustat(&a,
	    "cpu  150 0 150 900 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n"), 0);
	ck_assert_double_eq_tol(a.cpu_load, 1.0, 1e-9);
	/* iowait went back by 99 while busy went on by 100: at most both cores. */
	ck_assert_int_eq(activity_cpustat(&a,
	    "cpu  250 0 150 900 99 0 0 0 0 0\ncpu0 0\ncpu1 0\n"), 0);
	ck_assert_int_eq(activity_cpustat(&a,
	    "cpu  350 0 150 900 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n"), 0);
	ck_assert_double_eq_tol(a.cpu_load, 2.0, 1e-9);
	ck_assert_int_eq(activity_cpustat(&a, "intr 1 2 3\n"), -1);
}
END_TEST

static struct energy e;

START_TEST(energy_trapezoid_exact)
{
	/* A recorded trace: t (s), watts, state. */
	static const struct { double t, w; enum board_state st; } trace[] = {
		{ 0, 10, BS_IDLE }, { 1, 10, BS_IDLE }, { 2, 20, BS_READING },
		{ 3, 20, BS_READING }, { 4, NAN, BS_READING }, { 5, 14, BS_IDLE },
		{ 6.5, 16, BS_WRITING },
	};

	energy_reset(&e);
	for (size_t i = 0; i < sizeof(trace) / sizeof(trace[0]); i++)
		energy_add(&e, trace[i].t, 1000 + trace[i].t, trace[i].w, -1, trace[i].st);
	/* idle: (10+10)/2*1 = 10 J over 1 s, plus 1 s with a gap (t 4..5). */
	ck_assert_double_eq_tol(e.by_j[BS_IDLE], 10, 1e-12);
	ck_assert_double_eq_tol(e.by_s[BS_IDLE], 2, 1e-12);
	/* reading: (10+20)/2 + (20+20)/2 = 35 J; 4..5 has no reading at 4: 3 s. */
	ck_assert_double_eq_tol(e.by_j[BS_READING], 35, 1e-12);
	ck_assert_double_eq_tol(e.by_s[BS_READING], 3, 1e-12);
	/* writing: (14+16)/2 * 1.5 = 22.5 J. */
	ck_assert_double_eq_tol(e.by_j[BS_WRITING], 22.5, 1e-12);
	ck_assert_double_eq_tol(e.joules, 67.5, 1e-12);
	/* A counter's joules are taken as they are. */
	energy_add(&e, 7.5, 1007.5, 99, 3.25, BS_WRITING);
	ck_assert_double_eq_tol(e.by_j[BS_WRITING], 25.75, 1e-12);
	ck_assert_int_eq(e.count, 8);
}
END_TEST

START_TEST(history_ring_is_fixed_and_averaged)
{
	struct json_object *h, *s;

	energy_reset(&e);
	for (int i = 0; i < HISTORY_LEN + 100; i++)
		energy_add(&e, i, i, i % 2 ? 12 : 10, -1, BS_IDLE);
	ck_assert_int_eq(e.count, HISTORY_LEN);
	/* The last 10 s in steps of 2: five buckets of (10+12)/2. */
	h = energy_history(&e, 10, 2, HISTORY_LEN + 99);
	ck_assert_int_eq(json_object_array_length(h), 5);
	s = json_object_array_get_idx(h, 0);
	ck_assert_double_eq_tol(json_object_get_double(json_object_object_get(s, "watts")),
	    11, 1e-9);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(s, "state")), "idle");
	json_object_put(h);
	/* More than the ring holds: what it holds. */
	h = energy_history(&e, 86400, 1, HISTORY_LEN + 99);
	ck_assert_int_eq(json_object_array_length(h), HISTORY_LEN);
	json_object_put(h);
}
END_TEST

/* ---- power_sample: the whole of one sample on a fixture tree ---- */

static void
fixture_proc(unsigned r)
{
	char text[512];

	snprintf(text, sizeof(text),
	    "   8       0 sda %u 0 %u 10 0 0 0 0 0 20 20 0 0 0 0 0 0\n"
	    "   8      16 sdb 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", r, r * 8);
	put("diskstats", text);
	put("stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1\ncpu1 1\n");
}

/* A fresh powerd context on the board description text. */
static void
power_start(const char *board_text)
{
	char err[256], *p = unit_write(tmp, "board.ini", board_text);

	memset(&power, 0, sizeof(power));
	energy_reset(&power.energy);
	ck_assert_int_eq(power_load_board(p, err, sizeof(err)), 0);
	free(p);
}

/*
 * Waits for the sampler's worker and takes its answer (sampler.c), and
 * nothing else: the disks' workers are answered by settle() alone.
 */
static void
settle_sampler(void)
{
	while (sampler_busy())
		sampler_wait(-1);
}

/* One whole sample, its sensors read on the worker. */
static void
sample(double now, double wall)
{
	power_sample(now, wall);
	settle_sampler();
}

#define ONE_BAY	"[board]\nbays = 1\n[bay1]\npath = /sys/devices/none\n"

START_TEST(sample_model_board)
{

	fixture_disks();
	fixture_proc(1);
	put("class/net/lan1/carrier", "1\n");
	put("class/net/lan2/carrier", "0\n");
	power_start(board_ini);
	sample(1, 1001);
	ck_assert_str_eq(power.source, "model");
	ck_assert_int_eq(power.state, BS_IDLE);
	ck_assert_double_eq_tol(power.watts, (8.0 + 2 * 3.4 + 0.4) / 0.87, 1e-9);
	fixture_proc(9);
	sample(2, 1002);
	ck_assert_int_eq(power.state, BS_READING);
	ck_assert_double_eq_tol(power.watts, (8.0 + 5.7 + 3.4 + 0.4) / 0.87, 1e-9);
	ck_assert_double_eq_tol(power.energy.by_j[BS_READING],
	    ((8.0 + 2 * 3.4 + 0.4) + (8.0 + 5.7 + 3.4 + 0.4)) / 0.87 / 2, 1e-9);
}
END_TEST

START_TEST(sample_sensor_that_vanishes)
{
	double j;

	fixture_disks();
	fixture_proc(1);
	put("class/hwmon/hwmon0/name", "ina219\n");
	put("class/hwmon/hwmon0/power1_input", "12000000\n");
	power_start(ONE_BAY "[power]\nsensor = hwmon:ina219/power1_input\n");
	sample(1, 1001);
	sample(2, 1002);
	ck_assert_str_eq(power.source, "sensor:hwmon:ina219/power1_input");
	ck_assert_double_eq_tol(power.watts, 12.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, 12.0, 1e-9);
	gone("class/hwmon/hwmon0/power1_input");
	sample(3, 1003);
	ck_assert(isnan(power.watts));	/* never 0 W */
	ck_assert_str_eq(power.watts_error, "vanished");
	j = power.energy.joules;
	ck_assert_double_eq_tol(j, 12.0, 1e-9);	/* no energy for what nobody measured */
	put("class/hwmon/hwmon0/power1_input", "garbage\n");
	sample(4, 1004);
	ck_assert(isnan(power.watts));
	ck_assert_str_eq(power.watts_error, "garbage");
	put("class/hwmon/hwmon0/power1_input", "10000000\n");
	sample(5, 1005);
	ck_assert_double_eq_tol(power.watts, 10.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, j, 1e-9);	/* one end was a gap */
	sample(6, 1006);
	ck_assert_double_eq_tol(power.energy.joules, j + 10.0, 1e-9);
	/* The whole chip gone (rescan): the sensor is unknown, still not 0 W. */
	unit_rmtree(tmp);
	mkdir(tmp, 0700);
	power.last_scan = 0;
	sample(7, 1007);
	ck_assert(isnan(power.watts));
	ck_assert_str_eq(power.watts_error, "vanished");
}
END_TEST

START_TEST(sample_energy_counter_source)
{
	fixture_proc(1);
	put("class/powercap/intel-rapl:0/max_energy_range_uj", "1000000000\n");
	put("class/powercap/intel-rapl:0/energy_uj", "999000000\n");
	power_start(ONE_BAY "[power]\nsensor = powercap:intel-rapl:0\n");
	sample(10, 1010);
	ck_assert(isnan(power.watts));
	ck_assert_str_eq(power.watts_error, "first count");
	put("class/powercap/intel-rapl:0/energy_uj", "3000000\n");	/* wrapped */
	sample(12, 1012);
	ck_assert_double_eq_tol(power.watts, 2.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, 4.0, 1e-9);
}
END_TEST


/* ---- standby: the seam's commands, the timers, raidd's veto ---- */

START_TEST(sg_commands_encoded)
{
	static const uint8_t ata_standby[16] = { 0x85, 0x06, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0, 0xe0, 0 };
	static const uint8_t ata_check[16] = { 0x85, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0, 0xe5, 0 };
	static const uint8_t scsi_standby[6] = { 0x1b, 0, 0, 0, 0x30, 0 };
	static const uint8_t sense[6] = { 0x03, 0, 0, 0, 64, 0 };
	static const uint8_t inquiry[6] = { 0x12, 0x01, 0x83, 0x02, 0x00, 0 };
	uint8_t cdb[16];

	sg_cdb_ata_standby(cdb);
	ck_assert_mem_eq(cdb, ata_standby, 16);
	sg_cdb_ata_check_power(cdb);
	ck_assert_mem_eq(cdb, ata_check, 16);
	sg_cdb_scsi_standby(cdb);
	ck_assert_mem_eq(cdb, scsi_standby, 6);
	sg_cdb_request_sense(cdb, 64);
	ck_assert_mem_eq(cdb, sense, 6);
	sg_cdb_inquiry_vpd(cdb, 0x83, 512);
	ck_assert_mem_eq(cdb, inquiry, 6);
}
END_TEST

/*
 * The kernel sets DRIVER_SENSE with every CHECK CONDITION (scsi_ioctl.c):
 * that is how CHECK POWER MODE's registers come back, not a failure.
 */
START_TEST(sg_statuses)
{
	ck_assert_int_eq(sg_io_status(0, 0, 0), 0);
	ck_assert_int_eq(sg_io_status(0, 0x08, 0x02), 2);
	errno = 0;
	ck_assert_int_eq(sg_io_status(0x03, 0, 0), -1);	/* DID_TIME_OUT */
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_eq(sg_io_status(0x01, 0, 0), -1);	/* DID_NO_CONNECT */
	ck_assert_int_eq(errno, EIO);
	ck_assert_int_eq(sg_io_status(0, 0x06, 0), -1);	/* DRIVER_TIMEOUT */
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_eq(sg_io_status(0, 0x04, 0x02), -1);	/* DRIVER_ERROR */
	ck_assert_int_eq(errno, EIO);
}
END_TEST

/* A VPD answer is taken only for the page asked, from a device that is there. */
START_TEST(vpd_answers_checked)
{
	uint8_t pg[12];
	struct disk_id a, b;

	memcpy(pg, pg83_a, sizeof(pg));
	ck_assert_int_eq(pg[1], 0x83);
	ck_assert_int_eq(sg_vpd_length(pg, 12, 0x83), 12);
	ck_assert_int_eq(sg_vpd_length(pg, 9, 0x83), 9);	/* clipped to what came */
	ck_assert_int_eq(sg_vpd_length(pg, 12, 0x80), -1);	/* another page */
	ck_assert_int_eq(sg_vpd_length(pg, 3, 0x83), -1);
	pg[0] = 0x7f;		/* peripheral qualifier 3: no device */
	ck_assert_int_eq(sg_vpd_length(pg, 12, 0x83), -1);
	/* The kernel's copies, as the scan reads them (fixture_disks). */
	ck_assert_int_eq(disk_id_read("sda", &a), 0);
	ck_assert_uint_eq(a.maj, 8);
	ck_assert_uint_eq(a.min, 0);
	ck_assert_uint_eq(a.len80, 12);
	ck_assert_uint_eq(a.len83, 12);
	ck_assert_int_eq(disk_id_read("sdb", &b), 0);
	ck_assert_uint_eq(b.len80, 0);
	ck_assert(!disk_id_same(&a, &b));
	ck_assert_int_eq(disk_id_read("sda", &b), 0);
	ck_assert(disk_id_same(&a, &b));
	/* A page of another number under vpd_pg83, or none at all: no identity. */
	put_bytes("devices/pci0000:00/host0/target0:0:2/0:0:2:0/vpd_pg83", pg80_c, 12);
	ck_assert_int_eq(disk_id_read("sdb", &b), -1);
	ck_assert_int_eq(disk_id_read("sdz", &b), -1);
	put("block/sda/dev", "8:0x\n");
	ck_assert_int_eq(disk_id_read("sda", &b), -1);
}
END_TEST

/*
 * A character device under a disk's name is judged before it is opened:
 * its driver's open never runs (inotify sees no open; O_PATH makes none),
 * even when its number is the one recorded.
 */
START_TEST(char_device_under_the_name_not_opened)
{
	char buf[4096];
	struct stat st;
	int in;

	ck_assert_int_eq(stat("/dev/full", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	ck_assert_int_ge(in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), 0);
	ck_assert_int_ge(inotify_add_watch(in, "/dev/full", IN_OPEN), 0);
	errno = 0;
	ck_assert_int_eq(drive_linux.open("full", major(st.st_rdev), minor(st.st_rdev)), -1);
	ck_assert_int_eq(errno, ESTALE);
	ck_assert_int_eq(read(in, buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	close(in);
}
END_TEST

START_TEST(sense_power_states)
{
	/* Descriptor format with an ATA Status Return descriptor (09h). */
	uint8_t d[22] = { 0x72, 0x01, 0x00, 0x1d, 0, 0, 0, 14,
	    0x09, 0x0c, 0x00, 0x00, 0x00, 0xff, 0, 0, 0, 0, 0, 0, 0x40, 0x50 };
	/* Fixed format: ERROR, STATUS, DEVICE, COUNT at 3..6. */
	uint8_t f[18] = { 0x70, 0, 0x01, 0x00, 0x50, 0x40, 0x80, 0, 0, 0, 0, 0, 0x00, 0x1d };
	uint8_t scsi[18] = { 0x70, 0, 0x00, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x5e, 0x43 };

	ck_assert_int_eq(sg_ata_power_from_sense(d, sizeof(d)), DP_ACTIVE);
	d[13] = 0x00;
	ck_assert_int_eq(sg_ata_power_from_sense(d, sizeof(d)), DP_STANDBY);
	d[13] = 0x80;
	ck_assert_int_eq(sg_ata_power_from_sense(d, sizeof(d)), DP_IDLE);
	d[13] = 0x13;	/* no such mode */
	ck_assert_int_eq(sg_ata_power_from_sense(d, sizeof(d)), -1);
	d[7] = 200;	/* a length past the buffer is not followed */
	d[13] = 0x00;
	ck_assert_int_eq(sg_ata_power_from_sense(d, 12), -1);
	ck_assert_int_eq(sg_ata_power_from_sense(f, sizeof(f)), DP_IDLE);
	ck_assert_int_eq(sg_ata_power_from_sense(f, 4), -1);
	/* A bridge refusing the command: ILLEGAL REQUEST, no registers, no standby. */
	f[2] = 0x05;
	f[6] = 0x00;
	f[12] = 0x20;
	f[13] = 0x00;
	ck_assert_int_eq(sg_ata_power_from_sense(f, sizeof(f)), -1);
	ck_assert_int_eq(sg_ata_power_from_sense(f, 8), -1);
	d[1] = 0x05;
	d[2] = 0x24;
	d[3] = 0x00;
	d[7] = 14;
	ck_assert_int_eq(sg_ata_power_from_sense(d, sizeof(d)), -1);
	ck_assert_int_eq(sg_scsi_power_from_sense(scsi, sizeof(scsi)), DP_STANDBY);
	scsi[13] = 0x41;
	ck_assert_int_eq(sg_scsi_power_from_sense(scsi, sizeof(scsi)), DP_ACTIVE);
	/* No sense (what qemu's scsi-hd answers): the disk does not say. */
	scsi[12] = scsi[13] = 0;
	ck_assert_int_eq(sg_scsi_power_from_sense(scsi, sizeof(scsi)), -1);
}
END_TEST

/*
 * The simulator's disks behind the names, as strict as the kernel: /dev/sda
 * is always the block device 8:0, whichever disk is behind it now (a swap
 * changes the disk, not the name or the number); INQUIRY answers the disk's
 * own VPD pages. Descriptors are 100 + the disk (0: A, 1: B, 2: C).
 */
static const char *const fake_pg80[3] = { pg80_a, NULL, pg80_c };
static const char *const fake_pg83[3] = { pg83_a, pg83_b, pg83_c };
static int behind[2] = { 0, 1 };	/* sda, sdb; -1: pulled, no /dev node */
static int sim_standbys[4], sim_fail;
static int sim_said = -1;		/* like qemu: no power condition reported */
static int (*sim_hook)(int disk);	/* a disk that takes its time */
static volatile int sim_busy[3], sim_overlap, sim_queries[3];

static int
fake_open(const char *name, unsigned maj, unsigned min)
{
	int i = strcmp(name, "sda") == 0 ? 0 : strcmp(name, "sdb") == 0 ? 1 : -1;

	if (i == -1 || behind[i] == -1) {
		errno = ENOENT;
		return -1;
	}
	if (maj != 8 || min != (unsigned)i * 16) {
		errno = ESTALE;
		return -1;
	}
	return 100 + behind[i];
}

/* One command at a time per disk (the workers' rule); marks an overlap. */
static int
enter(int fd)
{
	if (__atomic_add_fetch(&sim_busy[fd - 100], 1, __ATOMIC_SEQ_CST) > 1)
		sim_overlap = 1;
	return fd - 100;
}

static void
leave(int disk)
{
	__atomic_sub_fetch(&sim_busy[disk], 1, __ATOMIC_SEQ_CST);
}

static int
fake_vpd(int fd, uint8_t page, uint8_t *buf, size_t len)
{
	int disk = enter(fd);
	const char *pg = page == 0x80 ? fake_pg80[disk] : page == 0x83 ? fake_pg83[disk] : NULL;

	leave(disk);
	if (pg == NULL || len < 12) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, pg, 12);
	return 12;
}

static int
sim_standby(int fd, int ata)
{
	int (*hook)(int) = __atomic_load_n(&sim_hook, __ATOMIC_SEQ_CST);
	int disk = enter(fd), rc = 0;

	(void)ata;
	if (hook != NULL)
		rc = hook(disk);
	if (sim_fail || rc == -1) {
		leave(disk);
		errno = EIO;
		return -1;
	}
	__atomic_add_fetch(&sim_standbys[disk + 1], 1, __ATOMIC_SEQ_CST);
	leave(disk);
	return 0;
}

static int
sim_power_mode(int fd, int ata)
{
	int (*hook)(int);
	int disk = enter(fd), said;

	(void)ata;
	__atomic_add_fetch(&sim_queries[disk], 1, __ATOMIC_SEQ_CST);
	/* What the disk says once it answers. */
	hook = __atomic_load_n(&sim_hook, __ATOMIC_SEQ_CST);
	said = hook != NULL && hook(disk) == -1 ? -1 : sim_said;
	leave(disk);
	return said;
}

static void
fake_close(int fd)
{
	(void)fd;
}

static const struct drive_ops sim_ops = {
	fake_open, fake_vpd, sim_standby, sim_power_mode, fake_close
};

/* Runs the loop until every worker has answered (diskio.c). */
static void
settle(void)
{
	while (dio_inflight() > 0)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
}
static const struct rpc_peer root_peer = { .uid = 0, .gid = 0 };

/* The job of drive.standby's answer a. */
static struct job *
job_of(struct json_object *a)
{
	struct job *j = job_find((unsigned)json_object_get_int(json_object_object_get(
	    json_object_object_get(a, "result"), "job")));

	ck_assert_ptr_nonnull(j);
	return j;
}

/* drive.list's answer a: drive i. */
static struct json_object *
drive_at(struct json_object *a, int i)
{
	return json_object_array_get_idx(json_object_object_get(json_object_object_get(a,
	    "result"), "drives"), (size_t)i);
}

static const int no_override[BOARD_MAX_BAYS] = {
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
};

static void
standby_setup(void)
{
	setup();
	drive_ops = &sim_ops;
	memset(sim_standbys, 0, sizeof(sim_standbys));
	memset((void *)sim_queries, 0, sizeof(sim_queries));
	sim_fail = sim_overlap = 0;
	sim_said = -1;
	__atomic_store_n(&sim_hook, NULL, __ATOMIC_SEQ_CST);
	behind[0] = 0;
	behind[1] = 1;
	fixture_disks();
	fixture_proc(1);
	power_start(board_ini);
	drive_set_syncing((const char *const[]){ NULL }, 0, 0);
	drive_set_state_file(path_of("state"));
}

START_TEST(standby_timer_per_bay)
{
	int per_bay[BOARD_MAX_BAYS];

	memcpy(per_bay, no_override, sizeof(per_bay));
	per_bay[1] = 0;			/* bay 2: never */
	drive_set_timers(1, per_bay);
	ck_assert_int_eq(drive_minutes(1), 1);
	ck_assert_int_eq(drive_minutes(2), 0);
	sample(1, 1001);		/* idle since 1 */
	drive_set_syncing((const char *const[]){ NULL }, 0, 59);
	sample(60, 1060);
	ck_assert_int_eq(sim_standbys[1], 0);
	sample(61, 1061);
	settle();
	ck_assert_int_eq(sim_standbys[1], 1);
	ck_assert_int_eq(power.act.disk[0].power, DP_STANDBY);
	ck_assert_int_eq(sim_standbys[2], 0);
	sample(62, 1062);
	ck_assert_int_eq(sim_standbys[1], 1);	/* once */
	/* A read of sda wakes it and starts its timer again. */
	fixture_proc(5);
	sample(63, 1063);
	ck_assert_int_eq(power.act.disk[0].power, DP_ACTIVE);
	ck_assert_int_eq(power.act.disk[0].spinups, 1);
	ck_assert_double_eq(power.act.disk[0].idle_since, 63);
}
END_TEST

START_TEST(standby_waits_for_raidd)
{
	drive_set_timers(1, no_override);
	sample(1, 1001);
	/* raidd never answered: whether a volume syncs is unknown. */
	drive_set_syncing(NULL, 0, 0);
	sample(120, 1120);
	ck_assert_int_eq(sim_standbys[1] + sim_standbys[2], 0);
	/* An answer 31 s old is no answer. */
	drive_set_syncing((const char *const[]){ NULL }, 0, 89);
	sample(121, 1121);
	ck_assert_int_eq(sim_standbys[1] + sim_standbys[2], 0);
	/* sdb's volume resyncs: only sda sleeps. */
	drive_set_syncing((const char *const[]){ "sdb" }, 1, 121);
	sample(122, 1122);
	settle();
	ck_assert_int_eq(sim_standbys[1], 1);
	ck_assert_int_eq(sim_standbys[2], 0);
}
END_TEST

START_TEST(raidd_volume_list_read)
{
	struct json_object *v = unit_json("["
	    "{\"name\":\"a\",\"state\":\"clean\",\"tiers\":[{\"sync_action\":\"idle\","
	    "  \"members\":[{\"disk\":\"sda\"}]}]},"
	    "{\"name\":\"b\",\"state\":\"degraded\",\"tiers\":[{\"state\":\"recover\","
	    "  \"sync_action\":\"recover\",\"members\":[{\"disk\":\"sdb\"},{\"disk\":null}]}]},"
	    "{\"name\":\"c\",\"state\":\"clean\",\"tiers\":[{\"sync_action\":\"check\","
	    "  \"members\":[{\"disk\":7}]}]}, 5, \"x\"]");

	drive_set_timers(1, no_override);
	sample(1, 1001);
	ck_assert_int_eq(sync_apply(v, 100), 0);
	sample(100, 1100);
	settle();
	ck_assert_int_eq(sim_standbys[1], 1);	/* sda: its volume is idle */
	ck_assert_int_eq(sim_standbys[2], 0);	/* sdb: rebuilding */
	json_object_put(v);
	v = unit_json("{\"error\":1}");
	ck_assert_int_eq(sync_apply(v, 101), -1);	/* not a list: unknown */
	json_object_put(v);
}
END_TEST

START_TEST(drive_methods_answer)
{
	static const struct rpc_peer root = { .uid = 0, .gid = 0 };
	struct rpc_server *srv = rpc_server_new("powerd", "test");
	struct json_object *a, *d;
	struct job *j;

	rpc_server_add_methods(srv, drive_methods);
	drive_set_timers(20, no_override);
	put("class/hwmon/hwmon0/name", "drivetemp\n");
	put("class/hwmon/hwmon0/temp1_input", "36000\n");
	link_to("../../../devices/pci0000:00/host0/target0:0:2/0:0:2:0",
	    "class/hwmon/hwmon0/device");
	sample(1, 1001);
	drive_set_syncing((const char *const[]){ NULL }, 0, 1);
	a = unit_call(srv, &root, "drive.list", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	d = drive_at(a, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(d, "disk")), "bay2");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(d, "power_state")),
	    "idle");
	ck_assert_ptr_null(json_object_object_get(d, "reported"));
	ck_assert_double_eq(json_object_get_double(json_object_object_get(d, "temperature")),
	    36);
	json_object_put(a);
	a = unit_call(srv, &root, "drive.standby", "{\"disk\":\"bay1\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	settle();
	ck_assert_int_eq(sim_standbys[1], 1);
	ck_assert_int_eq(power.act.disk[0].power, DP_STANDBY);
	json_object_put(a);
	a = unit_call(srv, &root, "drive.standby", "{\"disk\":\"bay9\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_NOT_FOUND);
	json_object_put(a);
	a = unit_call(srv, &root, "drive.standby", "{\"disk\":\"bay2x\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_NOT_FOUND);
	json_object_put(a);
	drive_set_syncing((const char *const[]){ "sdb" }, 1, 1);
	a = unit_call(srv, &root, "drive.standby", "{\"disk\":\"/dev/sdb\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_BUSY);
	ck_assert_int_eq(sim_standbys[2], 0);
	json_object_put(a);
	sim_fail = 1;
	drive_set_syncing((const char *const[]){ NULL }, 0, 1);
	a = unit_call(srv, &root, "drive.standby", "{\"disk\":\"sdb\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	j = job_of(a);
	settle();
	/* The command failed: the job says so, the state is unchanged. */
	ck_assert_int_eq(job_state(j), JOB_FAILED);
	ck_assert_int_eq(power.act.disk[1].power, DP_IDLE);
	json_object_put(a);
	a = unit_call(srv, &root, "drive.set", "{\"disk\":\"bay2\",\"standby_minutes\":5}");
	ck_assert_int_eq(unit_err_code(a), 0);
	ck_assert_int_eq(drive_minutes(2), 5);
	ck_assert_int_eq(drive_minutes(1), 20);
	json_object_put(a);
	a = unit_call(srv, &root, "drive.set", "{\"disk\":\"bay2\",\"standby_minutes\":2000}");
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
	ck_assert_int_eq(drive_minutes(2), 5);
	json_object_put(a);
	rpc_server_free(srv);
}
END_TEST

START_TEST(drive_set_is_kept)
{
	static const struct rpc_peer root = { .uid = 0, .gid = 0 };
	struct rpc_server *srv = rpc_server_new("powerd", "test");
	struct json_object *a;
	int per_bay[BOARD_MAX_BAYS];

	rpc_server_add_methods(srv, drive_methods);
	memcpy(per_bay, no_override, sizeof(per_bay));
	per_bay[1] = 7;			/* powerd.ini: bay2 = 7 */
	drive_set_timers(20, per_bay);
	sample(1, 1001);
	a = unit_call(srv, &root, "drive.set", "{\"disk\":\"bay2\",\"standby_minutes\":0}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	ck_assert_str_eq(slurp_rel("state"), "# powerd: standby minutes set by drive.set; "
	    "see powerd.conf(5)\nbay2 0\n");
	/* A restart: the file, not powerd.ini, has the last word. */
	drive_set_state_file("/nonexistent/x");
	ck_assert_int_eq(drive_minutes(2), 7);
	drive_set_state_file(path_of("state"));
	ck_assert_int_eq(drive_minutes(2), 0);
	/* -1 forgets drive.set's choice. */
	a = unit_call(srv, &root, "drive.set", "{\"disk\":\"bay2\",\"standby_minutes\":-1}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	ck_assert_int_eq(drive_minutes(2), 7);
	/* Where the file cannot be written, nothing changes. */
	drive_set_state_file("/nonexistent/x");
	a = unit_call(srv, &root, "drive.set", "{\"disk\":\"bay1\",\"standby_minutes\":3}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_FAILED);
	json_object_put(a);
	ck_assert_int_eq(drive_minutes(1), 20);
	/* A file from elsewhere that is not ours is ignored whole. */
	put("state", "bay1 3\nbay2 99999\n");
	drive_set_state_file(path_of("state"));
	ck_assert_int_eq(drive_minutes(1), 20);
	/* Nor is a FIFO (it would block) or a directory read. */
	unlink(path_of("state"));
	ck_assert_int_eq(mkfifo(path_of("state"), 0600), 0);
	drive_set_state_file(path_of("state"));
	ck_assert_int_eq(drive_minutes(1), 20);
	rpc_server_free(srv);
}
END_TEST

START_TEST(timers_file_is_strict)
{
	static const char *const bad[] = {
		"bay1 3", "bay0 3\n", "bay17 3\n", "bay1 1441\n", "bay1 -1\n", "bay1  3\n",
		"bay01 3\n", "bay1 3 4\n", "bay1 +3\n", "bay1 3\nbay1 4\n", "sda 3\n", NULL
	};
	int out[BOARD_MAX_BAYS];
	char err[128];

	ck_assert_int_eq(timers_parse("# x\n\nbay16 1440\nbay1 0\n", out, err, sizeof(err)), 0);
	ck_assert_int_eq(out[15], 1440);
	ck_assert_int_eq(out[0], 0);
	ck_assert_int_eq(out[1], -1);
	for (int i = 0; bad[i] != NULL; i++) {
		out[0] = 42;
		ck_assert_msg(timers_parse(bad[i], out, err, sizeof(err)) == -1, "%s", bad[i]);
		ck_assert_int_eq(out[0], 42);
	}
}
END_TEST

/* A disk that takes its time (or hangs): its worker waits on a gate. */
static int gate[2];

static int
gated(int disk)
{
	char c;

	(void)disk;
	return read(gate[0], &c, 1) == 1 ? 0 : -1;
}

/* The drive and power methods over disks that wait on the gate. */
static struct rpc_server *
gated_start(void)
{
	struct rpc_server *srv = rpc_server_new("powerd", "test");

	rpc_server_add_methods(srv, drive_methods);
	rpc_server_add_methods(srv, power_methods);
	ck_assert_int_eq(pipe(gate), 0);
	__atomic_store_n(&sim_hook, gated, __ATOMIC_SEQ_CST);
	drive_set_timers(20, no_override);
	sample(1, 1001);
	drive_set_syncing((const char *const[]){ NULL }, 0, 1);
	return srv;
}

static void
gated_end(struct rpc_server *srv)
{
	close(gate[0]);
	close(gate[1]);
	rpc_server_free(srv);
}

START_TEST(no_question_during_standby)
{
	struct rpc_server *srv = gated_start();
	struct json_object *a;
	/* drive.standby's own answer, then a read-group drive.list 10 s on. */
	a = unit_call(srv, &root_peer, "drive.standby", "{\"disk\":\"bay1\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	sample(11, 1011);
	a = unit_call(srv, &root_peer, "drive.list", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	/* bay1's STANDBY and bay2's question hold the gate: release both. */
	__atomic_store_n(&sim_hook, NULL, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(write(gate[1], "xx", 2), 2);
	settle();
	/* No question to bay1 while its STANDBY was in flight (one disk, one command). */
	ck_assert_int_eq(sim_standbys[1], 1);
	ck_assert_int_eq(sim_queries[1], 1);
	ck_assert(!sim_overlap);
	gated_end(srv);
}
END_TEST

/*
 * A disk that does not answer its power-mode question: the question hangs
 * on the bay's worker while power.status, drive.list and the samples (and
 * their timers) go on; the disk is not asked twice; the answer, once it
 * comes, is shown with the time it came.
 */
START_TEST(hung_disk_does_not_hold_the_loop)
{
	struct rpc_server *srv = gated_start();
	struct json_object *a, *d;
	struct job *j;
	a = unit_call(srv, &root_peer, "drive.list", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	d = drive_at(a, 0);
	/* Answered from the cache, with nothing in it yet, while the disk is asked. */
	ck_assert_ptr_null(json_object_object_get(d, "reported"));
	ck_assert_ptr_null(json_object_object_get(d, "checked_at"));
	ck_assert(json_object_get_boolean(json_object_object_get(d, "checking")));
	json_object_put(a);
	ck_assert_int_eq(dio_inflight(), 2);
	/* Both disks hang. Everything else answers, many times over. */
	for (int t = 2; t < 40; t++) {
		sample(t, 1000 + t);
		a = unit_call(srv, &root_peer, "power.status", NULL);
		ck_assert_int_eq(unit_err_code(a), 0);
		json_object_put(a);
		a = unit_call(srv, &root_peer, "drive.list", NULL);
		ck_assert_int_eq(unit_err_code(a), 0);
		json_object_put(a);
	}
	/* Still one question per disk: none started twice. */
	ck_assert_int_eq(dio_inflight(), 2);
	/* A standby for the hung bay waits for its question, not in the loop. */
	drive_set_syncing((const char *const[]){ NULL }, 0, 39);
	a = unit_call(srv, &root_peer, "drive.standby", "{\"disk\":\"bay1\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	j = job_of(a);
	json_object_put(a);
	ck_assert_int_eq(dio_inflight(), 2);
	ck_assert_int_eq(job_state(j), JOB_RUNNING);
	/* The disks answer at last (the questions, then bay1's STANDBY). */
	sim_said = DP_IDLE;
	__atomic_store_n(&sim_hook, NULL, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(write(gate[1], "xx", 2), 2);
	settle();
	/* bay1: the hung question, then one after its STANDBY (the job's answer). */
	ck_assert_int_eq(sim_queries[0], 2);
	ck_assert_int_eq(sim_queries[1], 1);
	ck_assert_int_eq(sim_standbys[1], 1);
	ck_assert_int_eq(job_state(j), JOB_DONE);
	ck_assert(!sim_overlap);
	a = unit_call(srv, &root_peer, "drive.list", NULL);
	d = drive_at(a, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(d, "reported")), "idle");
	/* The answer came while the last sample (wall clock 1039) was the latest. */
	ck_assert_double_eq(json_object_get_double(json_object_object_get(d, "checked_at")),
	    1039);
	ck_assert(!json_object_get_boolean(json_object_object_get(d, "checking")));
	json_object_put(a);
	gated_end(srv);
}
END_TEST

/* A sensor on a bus that hangs: the worker's read of it waits on sgate. */
static int sgate[2], sgated_reads;
static const char *sgated_name;

static void
gated_reader(const char *top, struct sensor *s, double now)
{
	char c;

	if (sgated_name != NULL && strcmp(s->name, sgated_name) == 0) {
		__atomic_add_fetch(&sgated_reads, 1, __ATOMIC_SEQ_CST);
		if (read(sgate[0], &c, 1) != 1)
			return;
	}
	sensor_read_in(top, s, now);
}

/* sensor.list's answer a: the sensor named name. */
static struct json_object *
listed(struct json_object *a, const char *name)
{
	struct json_object *arr = json_object_object_get(json_object_object_get(a, "result"),
	    "sensors");

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		if (strcmp(json_object_get_string(json_object_object_get(o, "name")), name) == 0)
			return o;
	}
	ck_abort_msg("%s not listed", name);
	return NULL;
}

static const char *
listed_status(struct rpc_server *srv, const char *name, int *has_value)
{
	static char st[32];
	struct json_object *a = unit_call(srv, &root_peer, "sensor.list", NULL), *o;

	ck_assert_int_eq(unit_err_code(a), 0);
	o = listed(a, name);
	snprintf(st, sizeof(st), "%s", json_object_get_string(json_object_object_get(o,
	    "status")));
	*has_value = json_object_object_get(o, "value") != NULL;
	json_object_put(a);
	return st;
}

#define INA	"hwmon:ina219/power1_input"
#define NCT	"hwmon:nct6775/temp1_input"

/*
 * The board's power sensor hangs in its driver: the sample that reads it
 * waits on the sampler's worker while power.status, sensor.list and
 * drive.list answer; the next samples start no other read, show the
 * sensors "stalled" (no value, never 0 W) and count no joules; the late
 * answer is shown, and the samples after it read the sensor again.
 */
START_TEST(hung_sensor_does_not_hold_the_loop)
{
	struct rpc_server *srv = rpc_server_new("powerd", "test");
	struct json_object *a, *r;
	int has;

	rpc_server_add_methods(srv, power_methods);
	rpc_server_add_methods(srv, drive_methods);
	drive_set_timers(20, no_override);
	put("class/hwmon/hwmon0/name", "ina219\n");
	put("class/hwmon/hwmon0/power1_input", "12000000\n");
	put("class/hwmon/hwmon1/name", "nct6775\n");
	put("class/hwmon/hwmon1/temp1_input", "41000\n");
	power_start("[board]\nbays = 2\n"
	    "[bay1]\npath = /sys/devices/pci0000:00/host*/target*:0:1/*:0:1:0\n"
	    "[bay2]\npath = /sys/devices/pci0000:00/host*/target*:0:2/*:0:2:0\n"
	    "[power]\nsensor = " INA "\n");
	ck_assert_int_eq(pipe(sgate), 0);
	sgated_name = INA;
	sampler_reader = gated_reader;
	ck_assert_int_eq(write(sgate[1], "xx", 2), 2);	/* the first two go through */
	sample(1, 1001);
	sample(2, 1002);
	ck_assert_double_eq_tol(power.watts, 12.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, 12.0, 1e-9);
	/* The third read hangs. */
	power_sample(3, 1003);
	ck_assert(sampler_busy());
	a = unit_call(srv, &root_peer, "power.status", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	ck_assert_str_eq(listed_status(srv, INA, &has), "ok");	/* the last reading */
	a = unit_call(srv, &root_peer, "drive.list", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	/* Its time is up: stalled, no second read, no watts, no joules. */
	for (int t = 4; t < 8; t++) {
		power_sample(t, 1000 + t);
		ck_assert(isnan(power.watts));
		ck_assert_str_eq(power.watts_error, "stalled");
		a = unit_call(srv, &root_peer, "power.status", NULL);
		ck_assert_int_eq(unit_err_code(a), 0);
		r = json_object_object_get(a, "result");
		ck_assert_ptr_null(json_object_object_get(r, "watts"));
		ck_assert_str_eq(json_object_get_string(json_object_object_get(r, "error")),
		    "stalled");
		ck_assert_double_eq(json_object_get_double(json_object_object_get(r,
		    "sampled_at")), 1000 + t);
		json_object_put(a);
		ck_assert_str_eq(listed_status(srv, INA, &has), "stalled");
		ck_assert(!has);
		/* Read by the same worker: stalled with it. */
		ck_assert_str_eq(listed_status(srv, NCT, &has), "stalled");
		ck_assert(!has);
		a = unit_call(srv, &root_peer, "drive.list", NULL);
		ck_assert_int_eq(unit_err_code(a), 0);
		json_object_put(a);
	}
	ck_assert_double_eq_tol(power.energy.joules, 12.0, 1e-9);
	/* Seconds go on being counted, to the state the board was in. */
	ck_assert_double_eq_tol(power.energy.by_s[BS_IDLE], 6.0, 1e-9);
	/* The bus comes back: the late answer is shown, and finishes no sample. */
	put("class/hwmon/hwmon0/power1_input", "10000000\n");
	ck_assert_int_eq(write(sgate[1], "xxx", 3), 3);
	settle_sampler();
	ck_assert_int_eq(sgated_reads, 3);	/* the hung read was the only one */
	ck_assert_str_eq(listed_status(srv, INA, &has), "ok");
	ck_assert(has);
	ck_assert(isnan(power.watts));
	ck_assert_double_eq(power.sampled_mono, 7);
	/* Read again from the next sample on. */
	sample(8, 1008);
	ck_assert_int_eq(sgated_reads, 4);
	ck_assert_double_eq_tol(power.watts, 10.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, 12.0, 1e-9);	/* one end was a gap */
	sample(9, 1009);
	ck_assert_double_eq_tol(power.energy.joules, 22.0, 1e-9);
	ck_assert_str_eq(listed_status(srv, NCT, &has), "ok");
	close(sgate[0]);
	close(sgate[1]);
	rpc_server_free(srv);
}
END_TEST

/*
 * An energy counter read late: the count it got spans the stall, so its
 * rate is not taken; the counter starts over and the board's joules
 * resume with two counts after the stall.
 */
START_TEST(hung_counter_starts_over)
{
	ck_assert_int_eq(pipe(sgate), 0);
	sgated_name = "powercap:intel-rapl:0";
	sampler_reader = gated_reader;
	put("class/powercap/intel-rapl:0/max_energy_range_uj", "1000000000\n");
	put("class/powercap/intel-rapl:0/energy_uj", "1000000\n");
	power_start(ONE_BAY "[power]\nsensor = powercap:intel-rapl:0\n");
	ck_assert_int_eq(write(sgate[1], "xx", 2), 2);
	sample(10, 1010);
	put("class/powercap/intel-rapl:0/energy_uj", "3000000\n");
	sample(11, 1011);
	ck_assert_double_eq_tol(power.watts, 2.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, 2.0, 1e-9);
	power_sample(12, 1012);		/* hangs */
	power_sample(13, 1013);		/* stalled */
	ck_assert(isnan(power.watts));
	put("class/powercap/intel-rapl:0/energy_uj", "50000000\n");
	ck_assert_int_eq(write(sgate[1], "xxx", 3), 3);
	settle_sampler();
	ck_assert_double_eq_tol(power.energy.joules, 2.0, 1e-9);
	put("class/powercap/intel-rapl:0/energy_uj", "53000000\n");
	sample(14, 1014);
	/* 47 J over the stall are not charged; the count starts over. */
	ck_assert(isnan(power.watts));
	ck_assert_str_eq(power.watts_error, "first count");
	put("class/powercap/intel-rapl:0/energy_uj", "56000000\n");
	sample(15, 1015);
	ck_assert_double_eq_tol(power.watts, 3.0, 1e-9);
	ck_assert_double_eq_tol(power.energy.joules, 5.0, 1e-9);
	close(sgate[0]);
	close(sgate[1]);
}
END_TEST

/*
 * Between the timer and its command, another disk is put in under the
 * same name (and the same 8:0): the worker proves the disk on the
 * descriptor it would send the command to, sends nothing, and the bay is
 * scanned again; the new disk starts with a timer of its own.
 */
START_TEST(swapped_disk_gets_no_standby)
{
	struct rpc_server *srv = rpc_server_new("powerd", "test");
	unsigned gen;
	int n, s2;

	rpc_server_add_methods(srv, drive_methods);
	drive_set_timers(1, no_override);
	sample(1, 1001);		/* sda (A) idle since 1 */
	drive_set_syncing((const char *const[]){ NULL }, 0, 59);
	gen = power.act.disk[0].gen;
	/* Disk C is now behind /dev/sda; the rescan (30 s) has not seen it yet. */
	behind[0] = 2;
	sample(61, 1061);
	settle();
	ck_assert_int_eq(sim_standbys[1], 0);	/* A is gone: nothing for it */
	ck_assert_int_eq(sim_standbys[3], 0);	/* C got nothing meant for A */
	ck_assert_int_eq(power.act.disk[0].power, DP_IDLE);
	ck_assert_double_eq(power.last_scan, 0);	/* a rescan asked for */
	/* The kernel's copy of C's pages: the rescan takes C as a new disk. */
	put_bytes("devices/pci0000:00/host0/target0:0:1/0:0:1:0/vpd_pg80", pg80_c, 12);
	put_bytes("devices/pci0000:00/host0/target0:0:1/0:0:1:0/vpd_pg83", pg83_c, 12);
	sample(62, 1062);
	ck_assert_uint_ne(power.act.disk[0].gen, gen);
	ck_assert_double_eq(power.act.disk[0].idle_since, 62);
	drive_set_syncing((const char *const[]){ NULL }, 0, 121);
	sample(122, 1122);
	settle();
	ck_assert_int_eq(sim_standbys[3], 1);	/* C, after its own minute */
	ck_assert_int_eq(power.act.disk[0].power, DP_STANDBY);
	/* A disk the kernel has no identity for is never commanded. */
	n = s2 = sim_standbys[2];
	gone("devices/pci0000:00/host0/target0:0:2/0:0:2:0/vpd_pg83");
	power.last_scan = 0;
	sample(123, 1123);
	drive_set_syncing((const char *const[]){ NULL }, 0, 189);
	sample(190, 1190);
	settle();
	ck_assert_int_eq(sim_standbys[2], n);
	ck_assert_int_eq(power.act.disk[1].power, DP_IDLE);
	/* No device number in sysfs: nothing is opened, not even to ask. */
	put("block/sdb/dev", "garbage\n");
	power.last_scan = 0;
	n = sim_queries[1];
	sample(191, 1191);
	power.act.disk[1].idle_since = 0;
	drive_set_syncing((const char *const[]){ NULL }, 0, 191);
	sample(192, 1192);	/* its timer is long past */
	settle();
	json_object_put(unit_call(srv, &root_peer, "drive.list", NULL));
	settle();
	ck_assert_int_eq(sim_queries[1], n);
	ck_assert_double_eq(power.last_scan, 191);	/* nor taken for a swap */
	ck_assert_int_eq(sim_standbys[2], s2);
	ck_assert_int_eq(power.act.disk[1].power, DP_IDLE);
	put("block/sdb/dev", "8:16\n");
	/* Pulled between the timer and the command: no node, nothing sent, C stays. */
	behind[0] = -1;
	power.act.disk[0].power = DP_IDLE;	/* C, awake again */
	n = sim_standbys[3];
	drive_set_syncing((const char *const[]){ NULL }, 0, 299);
	sample(300, 1300);
	settle();
	ck_assert_int_eq(sim_standbys[3], n);
	ck_assert_int_eq(power.act.disk[0].power, DP_IDLE);
	ck_assert_double_eq(power.act.disk[0].idle_since, 300);	/* not again at once */
	rpc_server_free(srv);
}
END_TEST

START_TEST(standby_off_the_loop)
{
	struct rpc_server *srv = gated_start();
	struct json_object *a, *d;
	struct job *j;
	/* The request answers at once, with the job that follows the command. */
	a = unit_call(srv, &root_peer, "drive.standby", "{\"disk\":\"bay1\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	j = job_of(a);
	json_object_put(a);
	ck_assert_int_eq(dio_inflight(), 1);
	/* While the disk spins down, powerd answers and samples. */
	a = unit_call(srv, &root_peer, "power.status", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	sample(2, 1002);
	a = unit_call(srv, &root_peer, "drive.list", NULL);
	ck_assert_int_eq(unit_err_code(a), 0);
	d = drive_at(a, 0);
	/* Not in standby before the disk took the command. */
	ck_assert_str_eq(json_object_get_string(json_object_object_get(d, "power_state")),
	    "idle");
	json_object_put(a);
	ck_assert_int_eq(job_state(j), JOB_RUNNING);
	/* One command per disk at a time. */
	a = unit_call(srv, &root_peer, "drive.standby", "{\"disk\":\"sda\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_BUSY);
	json_object_put(a);
	/* bay1's STANDBY and bay2's question (drive.list's) hold the gate. */
	__atomic_store_n(&sim_hook, NULL, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(write(gate[1], "xx", 2), 2);
	settle();
	ck_assert_int_eq(job_state(j), JOB_DONE);
	ck_assert_int_eq(power.act.disk[0].power, DP_STANDBY);
	gated_end(srv);
}
END_TEST

START_TEST(temp_alarm_with_hysteresis)
{
	struct sensor *d, *b;

	thermal_set_limits(55, 70);
	put("class/hwmon/hwmon0/name", "drivetemp\n");
	put("class/hwmon/hwmon0/temp1_input", "54000\n");
	put("class/hwmon/hwmon1/name", "nct6775\n");
	put("class/hwmon/hwmon1/temp1_input", "60000\n");
	sensor_scan(&set);
	ck_assert_ptr_nonnull(d = sensor_find(&set, "hwmon:drivetemp/temp1_input"));
	ck_assert_ptr_nonnull(b = sensor_find(&set, "hwmon:nct6775/temp1_input"));
	sensor_read(d, 1);
	sensor_read(b, 1);
	thermal_check(&set);
	ck_assert(!d->alarm && !b->alarm);
	/* 56 C is past the disk limit, not the board's. */
	put("class/hwmon/hwmon0/temp1_input", "56000\n");
	put("class/hwmon/hwmon1/temp1_input", "56000\n");
	sensor_read(d, 2);
	sensor_read(b, 2);
	thermal_check(&set);
	ck_assert(d->alarm && !b->alarm);
	/* 53 C: still within 3 degrees of the limit; 52 C ends it. */
	put("class/hwmon/hwmon0/temp1_input", "53000\n");
	sensor_read(d, 3);
	thermal_check(&set);
	ck_assert(d->alarm);
	/* A garbage reading neither raises nor ends an alarm. */
	put("class/hwmon/hwmon0/temp1_input", "x\n");
	sensor_read(d, 4);
	thermal_check(&set);
	ck_assert(d->alarm);
	put("class/hwmon/hwmon0/temp1_input", "52000\n");
	sensor_read(d, 5);
	thermal_check(&set);
	ck_assert(!d->alarm);
}
END_TEST

static char *
slurp_rel(const char *rel)
{
	static char buf[256];
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(fan_set_writes_pwm)
{
	static const struct rpc_peer root = { .uid = 0, .gid = 0 };
	struct rpc_server *srv = rpc_server_new("powerd", "test");
	struct json_object *a;

	rpc_server_add_methods(srv, thermal_methods);
	put("class/hwmon/hwmon0/name", "nct6775\n");
	put("class/hwmon/hwmon0/pwm2", "100\n");
	put("class/hwmon/hwmon0/pwm2_enable", "2\n");
	put("class/hwmon/hwmon0/temp1_input", "40000\n");
	memset(&power, 0, sizeof(power));
	sensor_scan(&power.sensors);
	a = unit_call(srv, &root, "fan.set",
	    "{\"fan\":\"hwmon:nct6775/pwm2\",\"mode\":\"manual\",\"pwm\":180}");
	ck_assert_int_eq(unit_err_code(a), 0);
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2_enable"), "1\n");
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2"), "180\n");
	json_object_put(a);
	a = unit_call(srv, &root, "fan.set", "{\"fan\":\"hwmon:nct6775/pwm2\",\"mode\":\"auto\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2_enable"), "2\n");
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2"), "180\n");
	json_object_put(a);
	/* Refused, nothing written: not a PWM, manual without pwm, pwm out of range. */
	a = unit_call(srv, &root, "fan.set",
	    "{\"fan\":\"hwmon:nct6775/temp1_input\",\"mode\":\"manual\",\"pwm\":1}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_NOT_FOUND);
	json_object_put(a);
	a = unit_call(srv, &root, "fan.set", "{\"fan\":\"hwmon:nct6775/pwm2\",\"mode\":\"manual\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_INVALID);
	json_object_put(a);
	a = unit_call(srv, &root, "fan.set",
	    "{\"fan\":\"hwmon:nct6775/pwm2\",\"mode\":\"manual\",\"pwm\":256}");
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
	json_object_put(a);
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2_enable"), "2\n");
	/* A duty cycle the driver refuses leaves the fan to the chip, not manual. */
	gone("class/hwmon/hwmon0/pwm2");
	put("class/hwmon/hwmon0/pwm2/x", "");
	a = unit_call(srv, &root, "fan.set",
	    "{\"fan\":\"hwmon:nct6775/pwm2\",\"mode\":\"manual\",\"pwm\":10}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_FAILED);
	json_object_put(a);
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2_enable"), "2\n");
	gone("class/hwmon/hwmon0/pwm2/x");
	ck_assert_int_eq(rmdir(path_of("class/hwmon/hwmon0/pwm2")), 0);
	put("class/hwmon/hwmon0/pwm2", "180\n");
	/* A board without the enable file: the error says so, pwm untouched. */
	gone("class/hwmon/hwmon0/pwm2_enable");
	a = unit_call(srv, &root, "fan.set",
	    "{\"fan\":\"hwmon:nct6775/pwm2\",\"mode\":\"manual\",\"pwm\":10}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_FAILED);
	ck_assert_str_eq(slurp_rel("class/hwmon/hwmon0/pwm2"), "180\n");
	json_object_put(a);
	rpc_server_free(srv);
}
END_TEST

static int smart_reads, smart_wrong, smart_disk = -1;

/* SMART of the disk on the descriptor (fake_open's), as libatasmart reads it. */
static int
sim_smart(int fd, double *temp_c, long long *cycles)
{
	if (fd < 100 || fd > 102)
		smart_wrong = 1;
	else
		__atomic_store_n(&smart_disk, fd - 100, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&smart_reads, 1, __ATOMIC_SEQ_CST);
	*temp_c = 38;
	*cycles = 1234;
	return 0;
}

/* Disk C is put behind sda once the disk there has answered its question. */
static int
swap_behind_sda(int disk)
{
	(void)disk;
	__atomic_store_n(&behind[0], 2, __ATOMIC_SEQ_CST);
	return 0;
}

START_TEST(smart_only_when_awake)
{
	put("devices/pci0000:00/host0/target0:0:1/0:0:1:0/vendor", "ATA     \n");
	power.last_scan = 0;		/* find sda's transport again */
	drive_smart = sim_smart;
	smart_reads = smart_wrong = 0;
	sim_said = DP_STANDBY;		/* spun down by its own timer */
	sample(1, 1001);
	settle();
	ck_assert(power.act.disk[0].ata);
	ck_assert(!power.act.disk[1].ata);
	ck_assert_int_eq(smart_reads, 0);
	/* The disk's own word counts: the model has it in standby. */
	ck_assert_int_eq(power.act.disk[0].power, DP_STANDBY);
	sim_said = DP_IDLE;
	fixture_proc(5);		/* a read wakes it */
	sample(2, 1002);
	settle();
	ck_assert_int_eq(power.act.disk[0].power, DP_ACTIVE);
	ck_assert_int_eq(smart_reads, 0);	/* asked at 1: not before 601 */
	sample(601, 1601);
	settle();
	ck_assert_int_eq(smart_reads, 1);
	ck_assert(!smart_wrong);
	ck_assert_double_eq(power.act.disk[0].smart_temp, 38);
	ck_assert_int_eq(power.act.disk[0].power_cycles, 1234);
	ck_assert_int_eq(smart_disk, 0);
	/*
	 * Another disk under the name between the question and the SMART
	 * read: SMART still reads the disk proven, on its descriptor.
	 */
	__atomic_store_n(&sim_hook, swap_behind_sda, __ATOMIC_SEQ_CST);
	sample(1201, 2201);
	settle();
	__atomic_store_n(&sim_hook, NULL, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(behind[0], 2);
	ck_assert_int_eq(smart_reads, 2);
	ck_assert_int_eq(smart_disk, 0);
	behind[0] = 0;
	/* In standby by powerd's own command: SMART is not even asked for. */
	power.act.disk[0].power = DP_STANDBY;
	sample(1300, 2300);
	settle();
	ck_assert_int_eq(smart_reads, 2);
	drive_smart = NULL;
}
END_TEST

START_TEST(diskstats_cut_line_is_not_read)
{
	struct board b = fixture_board();
	struct activity a;
	char *text, line[128];
	size_t len = 0;
	int n;

	fixture_disks();
	memset(&a, 0, sizeof(a));
	activity_scan_disks(&a, &b, 0);
	ck_assert_ptr_nonnull(text = malloc(70000));
	/* Filler up to 32 bytes short of the 64 KiB read, then sda's line. */
	while (len < 65535 - 32 - 60) {
		n = snprintf(line, sizeof(line), "   7 %5zu loop%zu 0 0 0 0 0 0 0 0 0 0 0\n",
		    len % 100000, len % 100000);
		memcpy(text + len, line, (size_t)n);
		len += (size_t)n;
	}
	memset(text + len, ' ', 65535 - 32 - len);
	len = 65535 - 32;
	text[len - 1] = '\n';
	snprintf(text + len, 70000 - len,
	    "   8 0 sda 100 0 800 10 500 0 4000 10 0 20 20 0 0 0 0 0 0\n"
	    "   8 16 sdb 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	put("diskstats", text);
	put("stat", "cpu  1 0 1 8 0 0 0 0 0 0\ncpu0 1\n");
	activity_sample(&a, 1);
	/* sda's line was cut at "...500 0 40": it must not count as 40 sectors. */
	ck_assert_int_eq(a.disk[0].seen, 0);
	ck_assert(a.disk[0].wr_sect != 40);
	free(text);
}
END_TEST

static Suite *
powerd_suite(void)
{
	Suite *s = suite_create("powerd");
	TCase *tc = tcase_create("sources");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, hwmon_power_in_microwatts);
	tcase_add_test(tc, hwmon_energy_counter);
	tcase_add_test(tc, hwmon_volts_times_amps);
	tcase_add_test(tc, rapl_wraps_in_mid_sample);
	tcase_add_test(tc, garbage_is_never_a_number);
	tcase_add_test(tc, temp_fan_pwm);
	tcase_add_test(tc, same_driver_twice_gets_told_apart);
	tcase_add_test(tc, counter_survives_rescan);
	tcase_add_test(tc, temp_alarm_with_hysteresis);
	tcase_add_test(tc, fan_set_writes_pwm);
	suite_add_tcase(s, tc);
	tc = tcase_create("board");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, model_watts_by_hand);
	tcase_add_test(tc, model_refuses_bad_figures);
	tcase_add_test(tc, board_idle_between_selftest_limits);
	tcase_add_test(tc, state_from_recorded_diskstats);
	tcase_add_test(tc, cpu_load_from_stat);
	tcase_add_test(tc, diskstats_cut_line_is_not_read);
	tcase_add_test(tc, energy_trapezoid_exact);
	tcase_add_test(tc, history_ring_is_fixed_and_averaged);
	tcase_add_test(tc, sample_model_board);
	tcase_add_test(tc, sample_sensor_that_vanishes);
	tcase_add_test(tc, sample_energy_counter_source);
	suite_add_tcase(s, tc);
	tc = tcase_create("standby");
	tcase_add_checked_fixture(tc, standby_setup, teardown);
	tcase_add_test(tc, sg_commands_encoded);
	tcase_add_test(tc, sense_power_states);
	tcase_add_test(tc, vpd_answers_checked);
	tcase_add_test(tc, char_device_under_the_name_not_opened);
	tcase_add_test(tc, sg_statuses);
	tcase_add_test(tc, standby_timer_per_bay);
	tcase_add_test(tc, standby_waits_for_raidd);
	tcase_add_test(tc, raidd_volume_list_read);
	tcase_add_test(tc, drive_methods_answer);
	tcase_add_test(tc, standby_off_the_loop);
	tcase_add_test(tc, no_question_during_standby);
	tcase_add_test(tc, hung_disk_does_not_hold_the_loop);
	tcase_add_test(tc, hung_sensor_does_not_hold_the_loop);
	tcase_add_test(tc, hung_counter_starts_over);
	tcase_add_test(tc, swapped_disk_gets_no_standby);
	tcase_add_test(tc, drive_set_is_kept);
	tcase_add_test(tc, timers_file_is_strict);
	tcase_add_test(tc, smart_only_when_awake);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(powerd_suite());
}
