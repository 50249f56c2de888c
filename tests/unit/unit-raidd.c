/* The simulated board of the raidd suites. */
#include <stdio.h>
#include <stdlib.h>

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
