/*
 * raidd's volume logic on the simulated kernel: create, find again
 * after a reboot, refusals that write nothing, delete, and a power cut
 * at every mutating step of create and delete.
 */
#include <check.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "raidd/mdsb.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"


#define CUT_POINTS	40

static struct rpc_server *srv;
static const uint8_t unit_a[16] = { 0xa1, 0xa2, 0xa3 };
static const uint8_t unit_b[16] = { 0xb1, 0xb2, 0xb3 };
static const struct rpc_peer root = { .uid = 0, .gid = 0 };

static void
add_disk(int bay, const char *name, uint64_t size)
{
	char path[128], serial[32];

	snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", bay, bay);
	snprintf(serial, sizeof(serial), "SER%d", bay);
	sim_add_disk(name, size, serial, path);
}

static void
setup(void)
{
	struct board b = { .nbays = 4 };

	for (int i = 0; i < 4; i++)
		snprintf(b.bay[i].path, sizeof(b.bay[i].path),
		    "/sys/devices/sim/host0/target0:0:%d/*", i + 1);
	log_init("test", 1, 0);
	log_set_level(getenv("TEST_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_ERR);
	sys = &sys_sim;
	sim_reset();
	volume_reset();
	unit_reset();
	unit_set(unit_a);
	disk_set_board(&b);
	add_disk(1, "sda", 4 * GIB);
	add_disk(2, "sdb", 4 * GIB);
	disk_refresh(0);
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, disk_methods);
	rpc_server_add_methods(srv, volume_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
}

/* Calls a method; returns the answer (caller frees). */
static struct json_object *
call(const char *method, const char *params)
{
	char req[1024], *ans;
	struct json_object *o;

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":%s}",
	    method, params);
	ans = rpc_dispatch_text(srv, &root, req, strlen(req));
	ck_assert_ptr_nonnull(ans);
	o = json_tokener_parse(ans);
	free(ans);
	return o;
}

static int
err_code(struct json_object *a)
{
	struct json_object *e, *c;

	if (!json_object_object_get_ex(a, "error", &e))
		return 0;
	json_object_object_get_ex(e, "code", &c);
	return json_object_get_int(c);
}

/* Runs the loop until every job has ended; returns the last job's state. */
static enum job_state
run_jobs(unsigned id)
{
	struct job *j = job_find(id);

	for (int i = 0; i < 1000 && j && job_state(j) == JOB_RUNNING; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_ptr_nonnull(j);
	return job_state(j);
}

static unsigned
create(const char *params)
{
	struct json_object *a = call("volume.create", params), *r, *id;
	unsigned n;

	ck_assert_msg(err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	n = (unsigned)json_object_get_int(id);
	json_object_put(a);
	return n;
}

/* The power goes and comes back: raidd starts again from the disks. */
static void
reboot(void)
{
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
}

/* A cheap fingerprint of everything a disk holds where signatures live. */
static uint64_t
fingerprint(const char *disk, uint64_t size)
{
	static uint8_t buf[1 << 20];
	uint64_t h = 1469598103934665603ULL;
	uint64_t spots[] = { 0, 1 << 20, 2 << 20, size - (1 << 20) };

	for (size_t s = 0; s < sizeof(spots) / sizeof(spots[0]); s++) {
		ck_assert_int_eq(sys->read_at(disk, spots[s], buf, sizeof(buf)), 0);
		for (size_t i = 0; i < sizeof(buf); i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	}
	return h;
}

static const char *
disk_state(const char *name)
{
	struct disk *d = disk_find(name);
	struct json_object *o = disk_describe(d), *s;
	static char st[32];

	json_object_object_get_ex(o, "state", &s);
	snprintf(st, sizeof(st), "%s", json_object_get_string(s));
	json_object_put(o);
	return st;
}

START_TEST(create_raid1_and_find_it_again)
{
	struct volume *v;
	uint64_t size;

	ck_assert_int_eq(run_jobs(create("{\"name\":\"vol1\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	v = volume_find("vol1");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(v->label.generation, 2);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(sim_md_count(), 1);
	ck_assert_int_eq(sim_dm_count(), 1);
	ck_assert_int_eq(sim_mount_count(), 1);
	ck_assert_str_eq(disk_state("bay1"), "member");
	size = v->label.size;
	ck_assert_uint_gt(size, 3 * GIB);

	reboot();
	ck_assert_int_eq(sim_mount_count(), 1);
	v = volume_find("vol1");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_uint_eq(v->label.size, size);
	ck_assert_str_eq(v->problem, "");
}
END_TEST

START_TEST(disks_swapped_between_bays)
{
	ck_assert_int_eq(run_jobs(create("{\"name\":\"vol1\",\"level\":\"raid1\","
	    "\"disks\":[\"sda\",\"sdb\"]}")), JOB_DONE);
	sim_power_cut();
	/* Bay 1's disk now sits in bay 2 and the other way round. */
	sim_swap_disks("sda", "sdb");
	volume_reset();
	disk_refresh(0);
	ck_assert_str_eq(disk_find("bay1")->sys.serial, "SER2");
	volume_scan();
	ck_assert_int_eq(volume_count(), 1);
	ck_assert_int_eq(volume_find("vol1")->state, VOL_CLEAN);
	ck_assert_str_eq(volume_find("vol1")->disk[0], "sdb");
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

START_TEST(refusals_write_nothing)
{
	uint64_t fa, fb;
	struct json_object *a;
	static const struct { const char *params; int code; } bad[] = {
		{ "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[\"bay1\"]}", NAS_ERR_INVALID },
		{ "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay1\"]}", NAS_ERR_INVALID },
		{ "{\"name\":\"v\",\"level\":\"raid5\",\"disks\":[\"bay1\",\"bay2\"]}", NAS_ERR_INVALID },
		{ "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay9\"]}", NAS_ERR_NOT_FOUND },
		{ "{\"name\":\"Bad Name\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}", NAS_ERR_INVALID },
		{ "{\"name\":\"v\",\"level\":\"raid7\",\"disks\":[\"bay1\",\"bay2\"]}", RPC_INVALID_PARAMS },
		{ "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[]}", RPC_INVALID_PARAMS },
		{ "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"],\"x\":1}", RPC_INVALID_PARAMS },
	};

	/* bay2 carries someone's ext4: refused without force. */
	ck_assert_int_eq(sys->write_at("sdb", 1080, "\x53\xef", 2), 0);
	disk_refresh(0);
	fa = fingerprint("sda", 4 * GIB);
	fb = fingerprint("sdb", 4 * GIB);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = call("volume.create", bad[i].params);
		ck_assert_msg(err_code(a) == bad[i].code, "%s -> %s", bad[i].params,
		    json_object_to_json_string(a));
		json_object_put(a);
	}
	a = call("volume.create", "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}");
	ck_assert_int_eq(err_code(a), NAS_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a), "ext4"));
	json_object_put(a);
	ck_assert_uint_eq(fingerprint("sda", 4 * GIB), fa);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), fb);
	ck_assert_int_eq(volume_count(), 0);
	ck_assert_int_eq(sim_ops(), 1);	/* only the test's own write */

	/* With force the foreign disk is erased and used. */
	ck_assert_int_eq(run_jobs(create("{\"name\":\"v\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"],\"force\":true}")), JOB_DONE);
}
END_TEST

START_TEST(damaged_label_is_not_free)
{
	static uint8_t junk[LABEL_SLOT_SIZE];
	struct json_object *a;

	memcpy(junk, LABEL_MAGIC, 8);
	memset(junk + 8, 0x5a, sizeof(junk) - 8);
	ck_assert_int_eq(sys->write_at("sda", LABEL_SLOT0, junk, sizeof(junk)), 0);
	disk_refresh(0);
	volume_scan();
	ck_assert_int_eq(volume_count(), 0);
	ck_assert_str_eq(disk_state("bay1"), "foreign");
	a = call("volume.create", "{\"name\":\"v\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}");
	ck_assert_int_eq(err_code(a), NAS_ERR_REFUSED);
	json_object_put(a);
}
END_TEST

START_TEST(name_in_use_and_disk_in_use)
{
	struct json_object *a;

	add_disk(3, "sdc", 4 * GIB);
	add_disk(4, "sdd", 4 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"a\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	a = call("volume.create", "{\"name\":\"a\",\"level\":\"raid1\",\"disks\":[\"bay3\",\"bay4\"]}");
	ck_assert_int_eq(err_code(a), NAS_ERR_EXISTS);
	json_object_put(a);
	a = call("volume.create", "{\"name\":\"b\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay3\"],\"force\":true}");
	ck_assert_int_eq(err_code(a), NAS_ERR_BUSY);
	json_object_put(a);
	a = call("disk.wipe", "{\"disk\":\"bay1\",\"confirm\":\"bay1\"}");
	ck_assert_int_eq(err_code(a), NAS_ERR_BUSY);
	json_object_put(a);
}
END_TEST

START_TEST(every_level)
{
	static const char *const levels[] = { "single", "jbod", "raid0", "raid1", "raid5",
		"raid10", "shr" };
	static const int ndisks[] = { 1, 3, 2, 2, 3, 4, 4 };
	char params[256];

	add_disk(3, "sdc", 6 * GIB);
	add_disk(4, "sdd", 8 * GIB);
	for (int i = 0; i < 7; i++) {
		struct volume *v;
		struct json_object *a;

		disk_refresh(0);
		snprintf(params, sizeof(params), "{\"name\":\"v%d\",\"level\":\"%s\","
		    "\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"]}", i, levels[i]);
		/* Cut the disk list to the level's count. */
		char *cut = params;
		for (int k = 0; k < ndisks[i]; k++)
			cut = strstr(cut, "\"bay") + 1;
		snprintf(strchr(cut, '"') + 1, 4, "]}");
		ck_assert_int_eq(run_jobs(create(params)), JOB_DONE);
		snprintf(params, sizeof(params), "v%d", i);
		v = volume_find(params);
		ck_assert_ptr_nonnull(v);
		ck_assert_int_eq(v->label.level, i);
		reboot();
		ck_assert_ptr_nonnull(volume_find(params));
		ck_assert_int_eq(volume_find(params)->state, VOL_CLEAN);
		snprintf(params, sizeof(params), "{\"name\":\"v%d\",\"confirm\":\"v%d\"}", i, i);
		a = call("volume.delete", params);
		ck_assert_msg(err_code(a) == 0, "%s", json_object_to_json_string(a));
		json_object_put(a);
		ck_assert_int_eq(volume_count(), 0);
		ck_assert_int_eq(sim_md_count(), 0);
	}
}
END_TEST

START_TEST(shr_mixed_sizes)
{
	struct volume *v;

	add_disk(3, "sdc", 8 * GIB);
	add_disk(4, "sdd", 6 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"h\",\"level\":\"shr\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"]}")), JOB_DONE);
	v = volume_find("h");
	/* 4+4+8+6: total - largest = 14 GiB, less partitions and md headroom;
	   a RAID 5 band over four disks, a RAID 1 band over two. */
	ck_assert_uint_gt(v->label.size, 14 * GIB - 64 * (1ULL << 20));
	ck_assert_uint_le(v->label.size, 14 * GIB);
	ck_assert_int_eq(v->label.ntiers, 2);
	ck_assert_int_eq(v->label.tier[0].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID1);
}
END_TEST

START_TEST(degraded_after_a_disk_is_pulled)
{
	struct json_object *o;
	struct volume *v;

	ck_assert_int_eq(run_jobs(create("{\"name\":\"m\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	sim_power_cut();
	sim_remove_disk("sdb");
	volume_reset();
	disk_refresh(0);
	volume_scan();
	v = volume_find("m");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	o = volume_describe(v);
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(o), "member 2 (serial SER2) is missing"));
	json_object_put(o);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

/* Power cut after k mutating steps of a create, for every k. */
START_TEST(power_cut_during_create)
{
	int total, k = _i;

	/* How many steps a whole create takes. */
	ck_assert_int_eq(run_jobs(create("{\"name\":\"p\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	total = sim_ops();
	/* The loop below must reach past the last step. */
	ck_assert_int_lt(total, CUT_POINTS);
	ck_assert_int_gt(total, 4);
	if (k > total)
		return;
	teardown();
	setup();
	sim_fail_after(k);
	run_jobs(create("{\"name\":\"p\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}"));
	reboot();
	if (volume_find("p")) {
		ck_assert_msg(volume_find("p")->state == VOL_CLEAN, "k=%d state %d: %s", k,
		    volume_find("p")->state, volume_find("p")->problem);
		ck_assert_int_eq(sim_mount_count(), 1);
	} else {
		ck_assert_int_eq(volume_count(), 0);
		ck_assert_str_eq(disk_state("bay1"), "free");
		ck_assert_str_eq(disk_state("bay2"), "free");
		ck_assert_int_eq(sim_md_count(), 0);
	}
}
END_TEST

START_TEST(power_cut_during_delete)
{
	int before, k = _i;
	struct json_object *a;

	ck_assert_int_eq(run_jobs(create("{\"name\":\"d\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	before = sim_ops();
	sim_fail_after(k);
	a = call("volume.delete", "{\"name\":\"d\",\"confirm\":\"d\"}");
	json_object_put(a);
	if (sim_ops() - before <= k)
		return;		/* the delete needed fewer steps than k */
	reboot();
	if (volume_find("d")) {
		ck_assert_int_eq(volume_find("d")->state, VOL_CLEAN);
	} else {
		ck_assert_str_eq(disk_state("bay1"), "free");
		ck_assert_str_eq(disk_state("bay2"), "free");
	}
}
END_TEST

START_TEST(delete_needs_confirm)
{
	struct json_object *a;

	ck_assert_int_eq(run_jobs(create("{\"name\":\"c\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	a = call("volume.delete", "{\"name\":\"c\",\"confirm\":\"x\"}");
	ck_assert_int_eq(err_code(a), NAS_ERR_REFUSED);
	json_object_put(a);
	ck_assert_ptr_nonnull(volume_find("c"));
	a = call("volume.delete", "{\"name\":\"c\",\"confirm\":\"c\"}");
	ck_assert_int_eq(err_code(a), 0);
	json_object_put(a);
	ck_assert_str_eq(disk_state("bay1"), "free");
}
END_TEST


START_TEST(delete_while_creating_is_refused)
{
	struct json_object *a;
	unsigned id = create("{\"name\":\"c\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}");

	a = call("volume.delete", "{\"name\":\"c\",\"confirm\":\"c\"}");
	ck_assert_int_eq(err_code(a), NAS_ERR_BUSY);
	json_object_put(a);
	ck_assert_int_eq(run_jobs(id), JOB_DONE);
	ck_assert_int_eq(volume_find("c")->state, VOL_CLEAN);
}
END_TEST

/* A pulled member's kernel name given to another disk: that disk is not touched. */
START_TEST(stale_member_name_is_not_erased)
{
	struct json_object *a;
	uint64_t before;

	ck_assert_int_eq(run_jobs(create("{\"name\":\"s\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	sim_remove_disk("sdb");
	sim_add_disk("sdb", 4 * GIB, "STRANGER", "/sys/devices/sim/host0/target0:0:9/0:0:9:0");
	ck_assert_int_eq(sys->write_at("sdb", 1080, "\x53\xef", 2), 0);
	disk_refresh(1);
	ck_assert_str_eq(volume_find("s")->disk[1], "");
	ck_assert_str_eq(disk_state("sdb"), "foreign");
	before = fingerprint("sdb", 4 * GIB);
	a = call("volume.delete", "{\"name\":\"s\",\"confirm\":\"s\"}");
	ck_assert_int_eq(err_code(a), 0);
	json_object_put(a);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
}
END_TEST

/* Two volumes named "a" (the first one's disks moved to bays 3 and 4). */
static void
two_named_a(void)
{
	add_disk(3, "sdc", 4 * GIB);
	add_disk(4, "sdd", 4 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"a\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	sim_power_cut();
	sim_swap_disks("sda", "sdc");
	sim_swap_disks("sdb", "sdd");
	volume_reset();
	disk_refresh(0);
	/* The first one's disks are not scanned yet: a second "a" is made. */
	ck_assert_int_eq(run_jobs(create("{\"name\":\"a\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	reboot();
}

/* Disks carry a volume of the same name as one here. */
START_TEST(same_name_from_another_unit_is_held)
{
	int held = 0;

	two_named_a();
	ck_assert_int_eq(volume_count(), 2);
	ck_assert_int_eq(sim_md_count(), 1);
	ck_assert_int_eq(sim_dm_count(), 1);
	for (int i = 0; i < 2; i++) {
		struct volume *v = volume_at(i);

		if (v->held) {
			held++;
			ck_assert_ptr_nonnull(strstr(v->problem, "another volume"));
			ck_assert_ptr_nonnull(strchr(v->name, '~'));
		}
	}
	ck_assert_int_eq(held, 1);
}
END_TEST

/* A member pulled from a running RAID 1 and put back rejoins it. */
START_TEST(pulled_member_rejoins)
{
	struct volume *v;

	ck_assert_int_eq(run_jobs(create("{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	v = volume_find("r");
	ck_assert_int_eq(volume_state_now(v), VOL_DEGRADED);
	ck_assert_str_eq(v->disk[1], "");
	sim_push_disk("sdb");
	disk_refresh(1);
	volume_scan();
	ck_assert_str_eq(v->disk[1], "sdb");
	/* md recovers what its bitmap holds dirty first (nothing: one step). */
	ck_assert_int_eq(volume_state_now(v), VOL_REBUILDING);
	sim_md_recover("md_r_t1", 1);
	ck_assert_int_eq(volume_state_now(v), VOL_CLEAN);
	/* Nothing else changed: the same volume, mounted, one array. */
	ck_assert_int_eq(sim_md_count(), 1);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

/* On large members md's data starts ~129 MiB in: delete erases the
   filesystem superblock there too, not just the first 16 MiB. */
START_TEST(delete_erases_past_the_data_offset)
{
	uint8_t got[2];
	uint64_t at;
	struct json_object *a;
	struct volume *v;

	sim_reset();
	add_disk(1, "sda", 300 * GIB);
	add_disk(2, "sdb", 300 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"big\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
	v = volume_find("big");
	at = v->mlabel[0].tier[0].start +
	    plan_data_offset(v->mlabel[0].tier[0].size / 512, v->mlabel[0].tier[0].chunk) * 512;
	ck_assert_uint_gt(at, 100ULL << 20);
	/* ext4's magic where md's data begins on the member */
	ck_assert_int_eq(sys->write_at("sda", at + 1080, "\x53\xef", 2), 0);
	a = call("volume.delete", "{\"name\":\"big\",\"confirm\":\"big\"}");
	ck_assert_int_eq(err_code(a), 0);
	json_object_put(a);
	ck_assert_int_eq(sys->read_at("sda", at + 1080, got, 2), 0);
	ck_assert_int_eq(got[0] | got[1], 0);
}
END_TEST


/* ---- issue 8: never act on a disk raidd has not proven its own ---- */

static void
call_ok(const char *method, const char *params)
{
	struct json_object *a = call(method, params);

	ck_assert_msg(err_code(a) == 0, "%s %s -> %s", method, params,
	    json_object_to_json_string(a));
	json_object_put(a);
}

/* Raw access to one label slot of a disk. */
static void
slot_rw(const char *disk, int slot, struct label *l, int write)
{
	static uint8_t buf[LABEL_SLOT_SIZE];
	char err[160];

	if (write) {
		ck_assert_int_eq(label_encode(l, buf, sizeof(buf), err, sizeof(err)), 0);
		ck_assert_int_eq(sys->write_at(disk, slot ? LABEL_SLOT1 : LABEL_SLOT0, buf,
		    sizeof(buf)), 0);
	} else {
		ck_assert_int_eq(sys->read_at(disk, slot ? LABEL_SLOT1 : LABEL_SLOT0, buf,
		    sizeof(buf)), 0);
		ck_assert_int_eq(label_decode(buf, sizeof(buf), l, err, sizeof(err)), 0);
	}
}

static void
make_r(void)
{
	ck_assert_int_eq(run_jobs(create("{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_DONE);
}

/* A stock tool's partitioning, through a descriptor as the seam wants. */
static int
pc_partition(const char *disk, const struct sys_part *p, int n)
{
	unsigned ma, mi;
	int fd, r;

	if ((fd = sys->dev_open(disk, &ma, &mi)) == -1)
		return -1;
	r = sys->partition(disk, fd, p, n);
	return sys->fd_close(fd) == -1 ? -1 : r;
}

/* Item 1: a disk pulled during a create, re-partitioned and formatted on a PC. */
START_TEST(interrupted_create_repartitioned_disk_is_untouched)
{
	struct sys_part pc = { .start = 1 << 20, .size = 3 * GIB, .name = "Linux filesystem" };
	uint64_t before;
	int total;

	make_r();
	total = sim_ops();
	teardown();
	setup();
	/* The power goes before the commit: both labels say "creating". */
	sim_fail_after(total - 4);
	run_jobs(create("{\"name\":\"r\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}"));
	sim_power_cut();
	ck_assert_int_eq(pc_partition("sdb", &pc, 1), 0);
	ck_assert_int_eq(sys->write_at("sdb", (1 << 20) + 1080, "\x53\xef", 2), 0);
	ck_assert_int_eq(sys->write_at("sdb", (1 << 20) + 4096, "photos", 6), 0);
	before = fingerprint("sdb", 4 * GIB);
	volume_reset();
	disk_refresh(0);
	volume_scan();
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
	ck_assert_str_eq(disk_state("bay2"), "foreign");
	/* sda alone cannot decide the create: nothing is erased there either. */
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_INCONSISTENT);
	ck_assert_int_eq(sim_md_count(), 0);
}
END_TEST

/* Items 1 and 5: a member absent at a delete never brings the volume back. */
START_TEST(delete_with_member_absent)
{
	struct volume *v;
	uint64_t before;

	make_r();
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	call_ok("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}");
	ck_assert_str_eq(disk_state("bay1"), "free");
	sim_power_cut();
	sim_push_disk("sdb");
	before = fingerprint("sdb", 4 * GIB);
	volume_reset();
	disk_refresh(0);
	volume_scan();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(volume_state_now(v), VOL_INCONSISTENT);
	ck_assert_ptr_nonnull(strstr(v->problem, "volume.import"));
	ck_assert_int_eq(sim_mount_count(), 0);
	ck_assert_int_eq(sim_md_count(), 0);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
	/* The user wants it back after all. */
	call_ok("volume.import", "{\"name\":\"r\"}");
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_DEGRADED);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

/* Item 1: an interrupted delete's label, on a disk put into a running volume. */
START_TEST(torn_delete_erases_only_what_it_covered)
{
	struct label l;
	uint64_t before;

	make_r();
	sim_pull_disk("sda");
	disk_refresh(1);
	volume_scan();
	/* sdb alone gets the delete's label; then the power goes. */
	sim_fail_after(1);
	json_object_put(call("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}"));
	sim_power_cut();
	slot_rw("sdb", 0, &l, 0);
	ck_assert_int_eq(l.intent.op, LABEL_OP_DELETING);
	ck_assert_int_eq(l.intent.covered, 0x2);
	sim_push_disk("sda");
	before = fingerprint("sda", 4 * GIB);
	volume_reset();
	disk_refresh(0);
	volume_scan();
	/* sdb is erased as the user asked; sda, absent then, is not. */
	ck_assert_str_eq(disk_state("bay2"), "free");
	ck_assert_uint_eq(fingerprint("sda", 4 * GIB), before);
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_INCONSISTENT);
	ck_assert_int_eq(sim_mount_count(), 0);
}
END_TEST

/* Item 5: a delete torn before a member's label, finished without that member. */
START_TEST(torn_delete_finished_without_a_member)
{
	make_r();
	/* sda gets the delete's label, sdb does not: the power goes. */
	sim_fail_after(1);
	json_object_put(call("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}"));
	sim_power_cut();
	sim_pull_disk("sdb");
	reboot();
	ck_assert_str_eq(disk_state("bay1"), "free");
	sim_push_disk("sdb");
	reboot();
	/* sdb still says the volume exists; the unit knows it was deleted. */
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_INCONSISTENT);
	ck_assert_int_eq(sim_mount_count(), 0);
}
END_TEST

/* Item 5: a torn commit, then a boot without the committed member. */
START_TEST(torn_commit_without_the_committed_member)
{
	uint64_t before;

	make_r();
	sim_power_cut();
	/* sdb missed the commit: only its "creating" generation 1 is left. */
	ck_assert_int_eq(sys->zero_at("sdb", LABEL_SLOT1, LABEL_SLOT_SIZE), 0);
	sim_pull_disk("sda");
	before = fingerprint("sdb", 4 * GIB);
	volume_reset();
	disk_refresh(0);
	volume_scan();
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_INCONSISTENT);
	/* With sda back the create is known to be committed. */
	sim_push_disk("sda");
	reboot();
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
	ck_assert_int_eq(volume_find("r")->mlabel[1].generation, 2);
}
END_TEST

/* Item 2: a member md failed for errors stays out, across uevents and boots. */
START_TEST(failed_member_stays_out)
{
	struct volume *v;

	make_r();
	sim_fail_member("md_r_t1", "sdb1");
	disk_refresh(1);
	volume_scan();
	volume_scan();
	v = volume_find("r");
	ck_assert_int_eq(volume_state_now(v), VOL_DEGRADED);
	ck_assert_uint_eq(v->label.failed, 0x2);
	reboot();
	volume_scan();
	v = volume_find("r");
	ck_assert_int_eq(volume_state_now(v), VOL_DEGRADED);
	call_ok("volume.clear", "{\"name\":\"r\"}");
	/* Back in its role, recovered where the bitmap is dirty (one step). */
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_REBUILDING);
	sim_md_recover("md_r_t1", 1);
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
}
END_TEST

/* Item 2: both halves of a mirror used on their own: never joined again. */
START_TEST(split_brain_is_not_readded)
{
	struct volume *v;

	make_r();
	sim_power_cut();
	sim_pull_disk("sda");
	reboot();			/* sdb runs alone */
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_DEGRADED);
	sim_power_cut();
	sim_pull_disk("sdb");
	sim_push_disk("sda");
	reboot();			/* sda runs alone */
	sim_push_disk("sdb");
	disk_refresh(1);
	volume_scan();
	v = volume_find("r");
	ck_assert_int_eq(volume_state_now(v), VOL_DEGRADED);
	ck_assert_uint_eq(v->split, 0x2);
	ck_assert_ptr_nonnull(strstr(v->problem, "split brain"));
}
END_TEST

/* Item 2: the disk of a pulled member reused in someone's md array. */
START_TEST(member_reused_elsewhere_is_foreign)
{
	static uint8_t sb[MDSB_BLOCK];
	struct mdsb m;
	struct volume *v;
	uint64_t before;
	char err[160];

	make_r();
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	sim_push_disk("sdb");
	/* mdadm --create elsewhere: same partition, another array's superblock. */
	ck_assert_int_eq(sys->read_at("sdb1", 4096, sb, sizeof(sb)), 0);
	ck_assert_int_eq(mdsb_decode(sb, sizeof(sb), 8, &m, err, sizeof(err)), 0);
	m.set_uuid[0] ^= 0xff;
	ck_assert_int_eq(mdsb_encode(&m, sb, sizeof(sb), err, sizeof(err)), 0);
	ck_assert_int_eq(sys->write_at("sdb1", 4096, sb, sizeof(sb)), 0);
	before = fingerprint("sdb", 4 * GIB);
	disk_refresh(1);
	volume_scan();
	v = volume_find("r");
	ck_assert_str_eq(v->disk[1], "");
	ck_assert_str_eq(disk_state("bay2"), "foreign");
	ck_assert_int_eq(volume_state_now(v), VOL_DEGRADED);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
}
END_TEST

/* Item 3: serial-less disks; a stranger in a pulled member's place. */
START_TEST(serialless_stranger_is_not_written)
{
	uint64_t before;

	sim_reset();
	sim_add_disk("sda", 4 * GIB, "", "/sys/devices/sim/host0/target0:0:1/0:0:1:0");
	sim_add_disk("sdb", 4 * GIB, "", "/sys/devices/sim/host0/target0:0:2/0:0:2:0");
	disk_refresh(0);
	make_r();
	sim_remove_disk("sdb");
	sim_add_disk("sdb", 4 * GIB, "", "/sys/devices/sim/host0/target0:0:2/0:0:2:0");
	ck_assert_int_eq(sys->write_at("sdb", 1080, "\x53\xef", 2), 0);
	disk_refresh(1);
	ck_assert_str_eq(volume_find("r")->disk[1], "");
	before = fingerprint("sdb", 4 * GIB);
	call_ok("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}");
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
}
END_TEST

/* Item 4: a volume made on another unit is listed, not assembled, until imported. */
START_TEST(volume_of_another_unit_is_foreign)
{
	struct json_object *o, *origin;
	struct volume *v;

	make_r();
	sim_power_cut();
	unit_set(unit_b);
	reboot();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(volume_state_now(v), VOL_FOREIGN);
	ck_assert_int_eq(sim_md_count(), 0);
	ck_assert_int_eq(sim_mount_count(), 0);
	o = volume_describe(v);
	ck_assert(json_object_object_get_ex(o, "origin", &origin));
	ck_assert_str_eq(json_object_get_string(origin), "a1a2a300000000000000000000000000");
	json_object_put(o);
	/* A delete, a uevent, a reboot: nothing is written. */
	volume_scan();
	ck_assert_int_eq(sim_md_count(), 0);
	call_ok("volume.import", "{\"name\":\"r\"}");
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
	ck_assert_int_eq(sim_mount_count(), 1);
	ck_assert_mem_eq(volume_find("r")->label.unit, unit_b, 16);
	reboot();
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
}
END_TEST

/* Item 4: labels from before unit ids are this unit's; the next write stamps them. */
/* r made, the power cut, and both slots of both labels edited in place. */
static void
r_with_labels_edited(void (*edit)(struct label *))
{
	struct label l;

	make_r();
	sim_power_cut();
	for (int d = 0; d < 2; d++)
		for (int slot = 0; slot < 2; slot++) {
			slot_rw(d ? "sdb" : "sda", slot, &l, 0);
			edit(&l);
			slot_rw(d ? "sdb" : "sda", slot, &l, 1);
		}
}

static void
no_unit(struct label *l)
{
	memset(l->unit, 0, 16);
}

START_TEST(labels_without_unit_id_are_adopted)
{
	struct label l;

	r_with_labels_edited(no_unit);
	unit_set(unit_b);
	reboot();
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
	ck_assert_int_eq(sim_mount_count(), 1);
	sim_fail_member("md_r_t1", "sdb1");
	volume_scan();		/* marks sdb failed: a label write */
	slot_rw("sda", 0, &l, 0);
	ck_assert_mem_eq(l.unit, unit_b, 16);
}
END_TEST

/* Item 4: the held one of two same-named volumes gets its name when the rival goes. */
START_TEST(held_volume_takes_its_name_when_the_rival_goes)
{
	two_named_a();
	ck_assert_int_eq(volume_count(), 2);
	call_ok("volume.delete", "{\"name\":\"a\",\"confirm\":\"a\"}");
	volume_scan();
	ck_assert_int_eq(volume_count(), 1);
	ck_assert_ptr_nonnull(volume_find("a"));
	ck_assert_int_eq(volume_state_now(volume_find("a")), VOL_CLEAN);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

/* Item 6: a failed commit does not leave "committed" in memory. */
START_TEST(failed_commit_is_not_committed)
{
	int total;

	make_r();
	total = sim_ops();
	teardown();
	setup();
	/* The commit reaches sda, fails on sdb, and so does the undo. */
	sim_fail_after(total - 3);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}")), JOB_FAILED);
	ck_assert_ptr_nonnull(volume_find("r"));
	ck_assert_int_eq(volume_find("r")->label.intent.op, LABEL_OP_CREATING);
	/* The disks work again; the next uevent undoes the create. */
	sim_fail_after(-1);
	disk_refresh(1);
	volume_scan();
	ck_assert_ptr_null(volume_find("r"));
	ck_assert_str_eq(disk_state("bay1"), "free");
	ck_assert_str_eq(disk_state("bay2"), "free");
}
END_TEST

/* Item 6: a label at generation UINT64_MAX: the disk can still be wiped. */
START_TEST(generation_max_is_wipeable)
{
	static uint8_t buf[LABEL_SLOT_SIZE];
	uint64_t max = UINT64_MAX;
	uint32_t crc;

	make_r();
	sim_power_cut();
	for (int slot = 0; slot < 2; slot++) {
		uint64_t at = slot ? LABEL_SLOT1 : LABEL_SLOT0;

		ck_assert_int_eq(sys->read_at("sda", at, buf, sizeof(buf)), 0);
		memcpy(buf + 24, &max, 8);
		memset(buf + 16, 0, 4);
		crc = label_crc32c(0, buf, sizeof(buf));
		memcpy(buf + 16, &crc, 4);
		ck_assert_int_eq(sys->write_at("sda", at, buf, sizeof(buf)), 0);
	}
	reboot();
	ck_assert_str_ne(disk_state("bay1"), "member");
	call_ok("disk.wipe", "{\"disk\":\"bay1\",\"confirm\":\"bay1\"}");
	ck_assert_str_eq(disk_state("bay1"), "free");
}
END_TEST

/* Item 6: members that disagree at one generation: nothing is rewritten. */
START_TEST(disagreeing_members_are_not_rewritten)
{
	struct label l;
	int next;
	char err[160];

	add_disk(3, "sdc", 4 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"t\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}")), JOB_DONE);
	sim_power_cut();
	/* sdb's generation 2 says something else; sdc is behind. */
	slot_rw("sdb", 1, &l, 0);
	l.created ^= 1;
	slot_rw("sdb", 1, &l, 1);
	ck_assert_int_eq(sys->zero_at("sdc", LABEL_SLOT1, LABEL_SLOT_SIZE), 0);
	reboot();
	ck_assert_int_eq(label_read_disk("sdb", &l, &next, err, sizeof(err)), 0);
	ck_assert_int_eq(label_read_disk("sda", &l, &next, err, sizeof(err)), 0);
	ck_assert_int_eq(volume_state_now(volume_find("t")), VOL_INCONSISTENT);
}
END_TEST

/*
 * A disk from elsewhere carrying a copy of a member's label, made newer
 * and widened to a third member (itself) with a delete covering all:
 * the real members' labels describe another set of members, so the
 * forged one is not obeyed and nothing is erased.
 */
START_TEST(forged_wider_label_is_not_obeyed)
{
	struct label l;
	uint64_t a, b;

	make_r();
	sim_power_cut();
	add_disk(3, "sdc", 4 * GIB);
	slot_rw("sda", 1, &l, 0);
	l.ndisks = 3;
	l.position = 2;
	memset(l.member[2].uuid, 0x5a, 16);
	snprintf(l.member[2].serial, sizeof(l.member[2].serial), "SER3");
	l.member[2].size = 4 * GIB;
	for (int t = 0; t < l.ntiers; t++) {
		l.tier[t].role = LABEL_NO_ROLE;
		l.tier[t].start = 0;
		l.tier[t].size = 0;
		memset(l.tier[t].part_guid, 0, 16);
		memset(l.tier[t].part_type, 0, 16);
	}
	l.generation += 5;
	l.intent.op = LABEL_OP_DELETING;
	l.intent.covered = 0x7;
	l.intent.target = l.generation + 1;
	slot_rw("sdc", 0, &l, 1);
	a = fingerprint("sda", 4 * GIB);
	b = fingerprint("sdb", 4 * GIB);
	reboot();
	ck_assert_uint_eq(fingerprint("sda", 4 * GIB), a);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), b);
	ck_assert_ptr_nonnull(volume_find("r"));
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_INCONSISTENT);
	ck_assert_int_eq(sim_mount_count(), 0);
}
END_TEST

/* A running volume's pulled member's place is not taken by a label naming other disks. */
START_TEST(forged_member_of_running_volume_is_left_out)
{
	struct label l;

	make_r();
	slot_rw("sdb", 1, &l, 0);
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	add_disk(3, "sdc", 4 * GIB);
	snprintf(l.member[1].serial, sizeof(l.member[1].serial), "SER3");
	slot_rw("sdc", 0, &l, 1);
	disk_refresh(1);
	volume_scan();
	ck_assert_str_eq(volume_find("r")->disk[1], "");
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_DEGRADED);
}
END_TEST

/*
 * A failing disk: md kicks it, the next state check sees it, then it
 * drops off the bus and comes back (a flap). It is not a pulled member
 * back: it stays out.
 */
START_TEST(failed_member_that_flaps_stays_out)
{
	struct volume *v;

	make_r();
	sim_fail_member("md_r_t1", "sdb1");
	volume_check_states();
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	sim_push_disk("sdb");
	disk_refresh(1);
	volume_scan();
	v = volume_find("r");
	ck_assert_uint_eq(v->label.failed, 0x2);
	ck_assert_int_eq(volume_state_now(v), VOL_DEGRADED);
}
END_TEST

/*
 * A label write that reached some members and then failed: the next
 * change must not write other content at the generation those members
 * already hold (a reboot would find the members disagreeing).
 */
START_TEST(partial_label_write_then_another_change)
{
	add_disk(3, "sdc", 4 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"t\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}")), JOB_DONE);
	sim_fail_member("md_t_t1", "sdc1");
	volume_scan();
	ck_assert_uint_eq(volume_find("t")->label.failed, 0x4);
	/* volume.clear reaches sda, then sdb's write fails. */
	sim_fail_after(1);
	json_object_put(call("volume.clear", "{\"name\":\"t\"}"));
	sim_fail_after(-1);
	/* Then md fails sdb for errors. */
	sim_fail_member("md_t_t1", "sdb1");
	volume_scan();
	volume_scan();
	reboot();
	ck_assert_int_ne(volume_state_now(volume_find("t")), VOL_INCONSISTENT);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

/*
 * A member absent at a delete, put back after a new volume took the
 * name: the deleted volume's disk comes first in disk order, yet the
 * live volume keeps its name and is mounted.
 */
START_TEST(deleted_volume_never_takes_a_live_ones_name)
{
	add_disk(3, "sdc", 4 * GIB);
	disk_refresh(0);
	make_r();
	sim_pull_disk("sda");
	disk_refresh(1);
	volume_scan();
	call_ok("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}");
	ck_assert_int_eq(run_jobs(create("{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay2\",\"bay3\"]}")), JOB_DONE);
	sim_push_disk("sda");
	reboot();
	ck_assert_ptr_nonnull(volume_find("r"));
	ck_assert_str_eq(volume_find("r")->disk[0], "sdb");
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

/*
 * Decision 21: writes go through one descriptor checked against the
 * device that was proven. A hostile node (/dev/sdc leading to sdb, a
 * member of r) must not let a wipe of sdc reach sdb.
 */
static uint64_t
r_and_a_node_to_sdb(void)
{
	uint64_t before;

	make_r();
	add_disk(3, "sdc", 4 * GIB);
	disk_refresh(0);
	before = fingerprint("sdb", 4 * GIB);
	sim_node_swap("sdc", "sdb");
	return before;
}

START_TEST(wipe_through_a_swapped_node_is_refused)
{
	struct json_object *a;
	uint64_t before = r_and_a_node_to_sdb();

	a = call("disk.wipe", "{\"disk\":\"bay3\",\"confirm\":\"bay3\"}");
	ck_assert_int_eq(err_code(a), NAS_ERR_FAILED);
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a), "not to the disk raidd checked"));
	json_object_put(a);
	/* fingerprint reads by node too: undo the swap to read sdb itself. */
	sim_node_swap("sdc", "sdb");
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
}
END_TEST

/* A create's first write (its wipe) through a node that leads elsewhere. */
START_TEST(create_through_a_swapped_node_writes_nothing)
{
	uint64_t before = r_and_a_node_to_sdb();

	ck_assert_int_eq(run_jobs(create("{\"name\":\"x\",\"level\":\"single\","
	    "\"disks\":[\"bay3\"]}")), JOB_FAILED);
	sim_node_swap("sdc", "sdb");
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
	ck_assert_ptr_nonnull(volume_find("r"));
}
END_TEST

static int swap_countdown;

/* Another disk takes sdb's place (sdc's disk, now under the name sdb). */
static void
swap_at_countdown(void)
{
	if (--swap_countdown > 0) {
		sim_before_step(swap_at_countdown);
		return;
	}
	sim_swap_disks("sdb", "sdc");
}

/*
 * sdb is proven, then pulled and another disk put in under its name
 * before the write: the write must fail, not reach the newcomer - even
 * though the newcomer would pass a label check made after the write
 * (the old code wrote the delete's label onto it, then erased it).
 */
START_TEST(disk_replaced_between_proof_and_write_is_not_written)
{
	struct json_object *a;
	uint64_t before;

	make_r();
	add_disk(3, "sdc", 4 * GIB);
	ck_assert_int_eq(sys->write_at("sdc", 1 << 20, "stranger", 8), 0);
	disk_refresh(0);
	before = fingerprint("sdc", 4 * GIB);
	/* The delete writes sda's label, then sdb's: the swap comes between. */
	swap_countdown = 2;
	sim_before_step(swap_at_countdown);
	a = call("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}");
	ck_assert_int_ne(err_code(a), 0);
	json_object_put(a);
	ck_assert_int_eq(swap_countdown, 0);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
}
END_TEST

/* The CRCs of disk's primary GPT made good again, as a forger would. */
static void
gpt_crcs_again(const char *disk)
{
	static uint8_t ents[128 * 128];
	uint8_t hdr[92];
	uint32_t crc;

	ck_assert_int_eq(sys->read_at(disk, 512, hdr, sizeof(hdr)), 0);
	ck_assert_int_eq(sys->read_at(disk, 1024, ents, sizeof(ents)), 0);
	crc = htole32(gpt_crc32(0, ents, sizeof(ents)));
	memcpy(hdr + 88, &crc, 4);
	memset(hdr + 16, 0, 4);
	crc = htole32(gpt_crc32(0, hdr, sizeof(hdr)));
	memcpy(hdr + 16, &crc, 4);
	ck_assert_int_eq(sys->write_at(disk, 512, hdr, sizeof(hdr)), 0);
}

/* Adds delta to a little-endian u64 of sdb's first GPT entry (the sim's at LBA 2). */
static void
gpt_entry_add(unsigned field, uint64_t delta)
{
	uint8_t b[8];
	uint64_t v = 0;

	ck_assert_int_eq(sys->read_at("sdb", 1024 + field, b, 8), 0);
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	v += delta;
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> 8 * i);
	ck_assert_int_eq(sys->write_at("sdb", 1024 + field, b, 8), 0);
	gpt_crcs_again("sdb");
}

/*
 * Issue 8, item 1: a member's partition made again at the same place,
 * size and name (sgdisk would give it a new GUID) is not raidd's.
 */
START_TEST(partition_remade_with_a_new_guid_is_not_proven)
{
	struct label l;

	make_r();
	slot_rw("sdb", 1, &l, 0);
	ck_assert(!volume_uuid_zero(l.tier[0].part_guid));
	ck_assert_mem_eq(l.tier[0].part_type, LABEL_GPT_TYPE, 16);
	sim_power_cut();
	gpt_entry_add(16, 1);		/* the unique GUID's first byte */
	reboot();
	ck_assert_str_eq(disk_state("bay2"), "foreign");
	ck_assert_str_eq(disk_state("bay1"), "member");
}
END_TEST

/* Labels from before GUIDs were recorded: proven by place and name, as then. */
static void
no_guids(struct label *l)
{
	memset(l->tier[0].part_guid, 0, 16);
	memset(l->tier[0].part_type, 0, 16);
}

START_TEST(labels_without_guids_are_proven_by_place)
{
	r_with_labels_edited(no_guids);
	gpt_entry_add(16, 1);
	reboot();
	ck_assert_str_eq(disk_state("bay2"), "member");
	ck_assert_int_eq(volume_state_now(volume_find("r")), VOL_CLEAN);
}
END_TEST

/*
 * A forged GPT entry whose first LBA times the block size wraps to the
 * place of raidd's partition (2^55 sectors of 512 bytes is 2^64) is not
 * raidd's partition.
 */
START_TEST(forged_gpt_place_that_wraps_is_not_proven)
{
	make_r();
	sim_power_cut();
	gpt_entry_add(32, 1ULL << 55);		/* first LBA */
	gpt_entry_add(40, 1ULL << 55);		/* last LBA */
	reboot();
	ck_assert_str_eq(disk_state("bay2"), "foreign");
}
END_TEST

/*
 * A forged GPT that lists one of raidd's partitions twice (the second
 * entry a copy of the first, GUID and all) in place of another still
 * counts as many entries as raidd made: it is not raidd's table.
 */
START_TEST(gpt_listing_one_partition_twice_is_not_proven)
{
	uint8_t e[128];

	add_disk(3, "sdc", 8 * GIB);
	add_disk(4, "sdd", 6 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(run_jobs(create("{\"name\":\"h\",\"level\":\"shr\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"]}")), JOB_DONE);
	sim_power_cut();
	/* sdc has both tiers' partitions: entry 2 becomes a copy of entry 1. */
	ck_assert_int_eq(sys->read_at("sdc", 1024, e, sizeof(e)), 0);
	ck_assert_int_eq(sys->write_at("sdc", 1024 + 128, e, sizeof(e)), 0);
	gpt_crcs_again("sdc");
	reboot();
	ck_assert_str_eq(disk_state("bay3"), "foreign");
}
END_TEST

/* r's delete is refused, and sdb is not written. */
static void
delete_r_refused_sdb_untouched(void)
{
	uint64_t before = fingerprint("sdb", 4 * GIB);
	struct json_object *a;

	a = call("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}");
	ck_assert_int_ne(err_code(a), 0);
	json_object_put(a);
	ck_assert_uint_eq(fingerprint("sdb", 4 * GIB), before);
}

/*
 * While r runs, sdb's label loses the GUIDs raidd recorded (crc made
 * good again: a downgrade to a label from before GUIDs) and its
 * partition is made again with a new GUID. raidd knows the GUIDs it
 * gave sdb: the label read again before a write must still carry them,
 * else the proof by place and name alone would let the delete write.
 */
START_TEST(label_stripped_of_its_guids_is_not_written)
{
	struct label l;

	make_r();
	for (int slot = 0; slot < 2; slot++) {
		slot_rw("sdb", slot, &l, 0);
		no_guids(&l);
		slot_rw("sdb", slot, &l, 1);
	}
	gpt_entry_add(16, 1);
	delete_r_refused_sdb_untouched();
}
END_TEST

/*
 * A primary GPT whose CRC does not hold is not the table the kernel
 * uses (it takes the backup at the disk's end, which may place other
 * partitions): raidd's entries in it prove nothing.
 */
START_TEST(gpt_whose_crc_fails_is_not_proven)
{
	make_r();
	sim_power_cut();
	/* An unused entry's name changes; the CRCs are left as they were. */
	ck_assert_int_eq(sys->write_at("sdb", 1024 + 100 * 128 + 56, "x", 1), 0);
	reboot();
	ck_assert_str_eq(disk_state("bay2"), "foreign");
	ck_assert_str_eq(disk_state("bay1"), "member");
}
END_TEST

/*
 * While r runs, sdb's primary GPT header is zeroed and its backup kept:
 * the kernel would use the backup (any table). The proof before a
 * write took "no primary" for a disk between a create's or a delete's
 * steps, which raidd leaves with no backup either.
 */
START_TEST(backup_gpt_without_primary_is_not_written)
{
	static const uint8_t zero[92];

	make_r();
	ck_assert_int_eq(sys->write_at("sdb", 512, zero, sizeof(zero)), 0);
	delete_r_refused_sdb_untouched();
}
END_TEST

static Suite *
volume_suite(void)
{
	Suite *s = suite_create("raidd-volume");
	TCase *tc = tcase_create("volume");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, create_raid1_and_find_it_again);
	tcase_add_test(tc, disks_swapped_between_bays);
	tcase_add_test(tc, refusals_write_nothing);
	tcase_add_test(tc, name_in_use_and_disk_in_use);
	tcase_add_test(tc, damaged_label_is_not_free);
	tcase_add_test(tc, every_level);
	tcase_add_test(tc, shr_mixed_sizes);
	tcase_add_test(tc, degraded_after_a_disk_is_pulled);
	tcase_add_test(tc, delete_needs_confirm);
	tcase_add_test(tc, delete_while_creating_is_refused);
	tcase_add_test(tc, stale_member_name_is_not_erased);
	tcase_add_test(tc, same_name_from_another_unit_is_held);
	tcase_add_test(tc, pulled_member_rejoins);
	tcase_add_test(tc, delete_erases_past_the_data_offset);
	tcase_add_test(tc, interrupted_create_repartitioned_disk_is_untouched);
	tcase_add_test(tc, delete_with_member_absent);
	tcase_add_test(tc, torn_delete_erases_only_what_it_covered);
	tcase_add_test(tc, torn_commit_without_the_committed_member);
	tcase_add_test(tc, torn_delete_finished_without_a_member);
	tcase_add_test(tc, failed_member_stays_out);
	tcase_add_test(tc, split_brain_is_not_readded);
	tcase_add_test(tc, member_reused_elsewhere_is_foreign);
	tcase_add_test(tc, serialless_stranger_is_not_written);
	tcase_add_test(tc, volume_of_another_unit_is_foreign);
	tcase_add_test(tc, held_volume_takes_its_name_when_the_rival_goes);
	tcase_add_test(tc, labels_without_unit_id_are_adopted);
	tcase_add_test(tc, failed_commit_is_not_committed);
	tcase_add_test(tc, generation_max_is_wipeable);
	tcase_add_test(tc, disagreeing_members_are_not_rewritten);
	tcase_add_test(tc, forged_wider_label_is_not_obeyed);
	tcase_add_test(tc, forged_member_of_running_volume_is_left_out);
	tcase_add_test(tc, failed_member_that_flaps_stays_out);
	tcase_add_test(tc, partial_label_write_then_another_change);
	tcase_add_test(tc, deleted_volume_never_takes_a_live_ones_name);
	tcase_add_test(tc, wipe_through_a_swapped_node_is_refused);
	tcase_add_test(tc, create_through_a_swapped_node_writes_nothing);
	tcase_add_test(tc, disk_replaced_between_proof_and_write_is_not_written);
	tcase_add_test(tc, partition_remade_with_a_new_guid_is_not_proven);
	tcase_add_test(tc, labels_without_guids_are_proven_by_place);
	tcase_add_test(tc, forged_gpt_place_that_wraps_is_not_proven);
	tcase_add_test(tc, gpt_listing_one_partition_twice_is_not_proven);
	tcase_add_test(tc, label_stripped_of_its_guids_is_not_written);
	tcase_add_test(tc, gpt_whose_crc_fails_is_not_proven);
	tcase_add_test(tc, backup_gpt_without_primary_is_not_written);
	tcase_add_loop_test(tc, power_cut_during_create, 0, CUT_POINTS);
	tcase_add_loop_test(tc, power_cut_during_delete, 0, 20);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(volume_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
