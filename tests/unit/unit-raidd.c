/* The simulated board of the raidd suites. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "unit-raidd.h"

void
unit_raidd_disk(int bay, const char *name, uint64_t size)
{
	char path[128], serial[32];

	snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", bay, bay);
	snprintf(serial, sizeof(serial), "SER%d", bay);
	sim_add_disk(name, size, serial, path);
}

struct rpc_server *
unit_raidd_setup(const uint8_t unit[16], const uint64_t *sizes, int n)
{
	struct board b = { .nbays = 4 };
	struct rpc_server *srv;
	char name[8];

	for (int i = 0; i < 4; i++)
		snprintf(b.bay[i].path, sizeof(b.bay[i].path),
		    "/sys/devices/sim/host0/target0:0:%d/*", i + 1);
	log_init("test", 1, 0);
	log_set_level(getenv("TEST_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	sys = &sys_sim;
	sim_reset();
	volume_reset();
	unit_reset();
	unit_set(unit);
	disk_set_board(&b);
	for (int i = 0; i < n && i < 4; i++) {
		snprintf(name, sizeof(name), "sd%c", 'a' + i);
		unit_raidd_disk(i + 1, name, sizes[i]);
	}
	disk_refresh(0);
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, disk_methods);
	rpc_server_add_methods(srv, volume_methods);
	return srv;
}

void
unit_raidd_pattern(const char *dev, uint64_t size, int write)
{
	uint8_t buf[4096], want[4096];

	for (uint64_t off = MIB; off + sizeof(buf) <= size; off += 8 * MIB) {
		for (size_t i = 0; i < sizeof(want); i += 8)
			memcpy(want + i, &off, 8);
		if (write) {
			ck_assert_int_eq(sys->write_at(dev, off, want, sizeof(want)), 0);
			continue;
		}
		ck_assert_int_eq(sys->read_at(dev, off, buf, sizeof(buf)), 0);
		ck_assert_msg(memcmp(buf, want, sizeof(buf)) == 0, "block at %llu moved",
		    (unsigned long long)off);
	}
}

uint64_t
unit_raidd_dm_size(const char *vol)
{
	char dm[SYS_NAME_MAX];
	uint64_t size = 0;

	volume_dm_name(vol, dm, sizeof(dm));
	ck_assert_int_eq(sys->dev_size(dm, &size), 0);
	return size;
}

/*
 * A power cut and a fresh start of raidd, then the loop until no job
 * runs, md moving each array of vol on by this many sectors a turn: its
 * recovery (0: it stalls) and its reshape.
 */
void
unit_raidd_reboot_md(const char *vol, uint64_t recover, uint64_t reshape)
{
	char md[SYS_NAME_MAX];

	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	add_set_poll(0);
	for (int i = 0; i < 2000 && job_running_count() > 0; i++) {
		const struct volume *v = volume_find(vol);

		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; v && t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			if (recover)
				sim_md_recover(md, recover);
			sim_md_reshape_step(md, reshape);
		}
	}
	ck_assert_int_eq(job_running_count(), 0);
}
