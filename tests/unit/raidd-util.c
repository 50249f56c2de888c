/* Helpers of the raidd suites that drive the volume.* methods. */
#include <check.h>
#include <stdio.h>

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
