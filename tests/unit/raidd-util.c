/* Helpers of the raidd suites that drive the volume.* methods. */
#include <check.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"

struct volume *
raidd_create(struct rpc_server *srv, const char *name, const char *level, const char *disks)
{
	static const struct rpc_peer root = { .uid = 0, .gid = 0 };
	char params[256];
	struct json_object *a, *r, *id;
	struct job *j;

	snprintf(params, sizeof(params), "{\"name\":\"%s\",\"level\":\"%s\",\"disks\":[%s]}",
	    name, level, disks);
	a = unit_call(srv, &root, "volume.create", params);
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	j = job_find((unsigned)json_object_get_int(id));
	json_object_put(a);
	for (int i = 0; i < 1000 && j && job_state(j) == JOB_RUNNING; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_eq(job_state(j), JOB_DONE);
	volume_check_states();
	return volume_find(name);
}

void
raidd_sim_setup(uint64_t size, const char *prefix, int leds)
{
	static const uint8_t unit_here[16] = { 0x53, 0x49, 0x4d };
	struct board b = { .nbays = 4 };

	for (int i = 0; i < 4; i++) {
		snprintf(b.bay[i].path, sizeof(b.bay[i].path),
		    "/sys/devices/sim/host0/target0:0:%d/*", i + 1);
		if (leds)
			snprintf(b.bay[i].led, sizeof(b.bay[i].led), "bay%d", i + 1);
	}
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	sys = &sys_sim;
	sim_reset();
	volume_reset();
	unit_reset();
	unit_set(unit_here);
	volume_set_degraded_start(1);
	disk_set_board(&b);
	led_set_sysfs("/sys");
	for (int i = 1; i <= 4; i++) {
		char path[128], serial[32], name[8];

		snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", i, i);
		snprintf(serial, sizeof(serial), "%s%d", prefix, i);
		snprintf(name, sizeof(name), "sd%c", 'a' + i - 1);
		sim_add_disk(name, size, serial, path);
	}
	disk_refresh(0);
}

int
raidd_drive(unsigned id, const char *vol)
{
	struct job *j = job_find(id);
	struct volume *v;
	char md[SYS_NAME_MAX];

	ck_assert_ptr_nonnull(j);
	for (int i = 0; i < 2000 && job_state(j) == JOB_RUNNING; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		if ((v = volume_find(vol)) == NULL)
			continue;
		for (int t = 0; t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_recover(md, UINT64_MAX / 2);
		}
	}
	return job_state(j);
}

int
raidd_uevent(void)
{
	disk_refresh(1);
	volume_scan();
	return volume_check_states();
}

/* What raidd's hotplug_cb does for a uevent naming one disk: only that
   disk is probed again, as on the kernel (raidd_uevent probes all). */
int
raidd_uevent_of(const char *disk)
{
	char names[1][SYS_NAME_MAX];

	snprintf(names[0], sizeof(names[0]), "%s", disk);
	disk_refresh_named(names, 1);
	volume_scan();
	return volume_check_states();
}

void
raidd_reboot(void)
{
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	volume_check_states();
}

static void
pattern(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + seed);
}

void
raidd_fill_busy(const char *vol, uint8_t seed)
{
	uint8_t buf[65536];
	char dm[SYS_NAME_MAX];

	pattern(buf, sizeof(buf), seed);
	volume_dm_name(vol, dm, sizeof(dm));
	ck_assert_int_eq(sys->write_at(dm, 1 << 20, buf, sizeof(buf)), 0);
}

void
raidd_fill(const char *vol, uint8_t seed)
{
	raidd_fill_busy(vol, seed);
	/* What the tests do next comes long after: md's safe mode marked it clean. */
	sim_md_idle(NULL);
}

void
raidd_check_fill(const char *vol, uint8_t seed)
{
	uint8_t buf[65536], want[65536];
	char dm[SYS_NAME_MAX];

	pattern(want, sizeof(want), seed);
	volume_dm_name(vol, dm, sizeof(dm));
	ck_assert_int_eq(sys->read_at(dm, 1 << 20, buf, sizeof(buf)), 0);
	ck_assert(memcmp(buf, want, sizeof(buf)) == 0);
}
