/* Helpers of the raidd suites that drive the volume.* methods. */
#include <check.h>
#include <stdio.h>

#include "job.h"
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
