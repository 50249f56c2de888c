/*
 * raidd's failure detection on the simulated kernel, which is no kinder
 * than md: a pulled member of an idle array stays "in sync" for md until
 * someone fails it, a member md kicked stays listed faulty, and an array
 * runs only with the members md would run it with.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };

static void
add_disk(int bay, const char *name, uint64_t size)
{
	char path[128], serial[32];

	snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", bay, bay);
	snprintf(serial, sizeof(serial), "SER%d", bay);
	sim_add_disk(name, size, serial, path);
}

static const uint8_t unit_here[16] = { 0x48, 0x45, 0x41, 0x4c, 0x54, 0x48 };

static void
setup(void)
{
	struct board b = { .nbays = 4 };

	for (int i = 0; i < 4; i++)
		snprintf(b.bay[i].path, sizeof(b.bay[i].path),
		    "/sys/devices/sim/host0/target0:0:%d/*", i + 1);
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	sys = &sys_sim;
	sim_reset();
	volume_reset();
	unit_reset();
	unit_set(unit_here);
	volume_set_degraded_start(1);
	disk_set_board(&b);
	add_disk(1, "sda", 4 * GIB);
	add_disk(2, "sdb", 4 * GIB);
	add_disk(3, "sdc", 4 * GIB);
	add_disk(4, "sdd", 4 * GIB);
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

static struct json_object *
call(const char *method, const char *params)
{
	return unit_call(srv, &root, method, params);
}

/* Creates a volume and runs its job to the end. */
static struct volume *
create(const char *name, const char *level, const char *disks)
{
	return raidd_create(srv, name, level, disks);
}

static void
md_of(const char *vol, int tier, struct sys_md_status *st)
{
	char md[SYS_NAME_MAX];

	snprintf(md, sizeof(md), "md_%s_t%d", vol, tier);
	ck_assert_int_eq(sys->md_status(md, st), 0);
}

static int
listed(const struct sys_md_status *st, const char *dev)
{
	for (int i = 0; i < st->nmembers; i++)
		if (strcmp(st->member[i].dev, dev) == 0)
			return 1;
	return 0;
}

/* md alone does not notice a member of an idle array going; raidd fails
   and removes it at the uevent, so the volume says degraded at once. */
START_TEST(pulled_member_of_idle_raid1_is_failed_at_once)
{
	struct sys_md_status st;
	struct volume *v = create("r", "raid1", "\"bay1\",\"bay2\"");

	ck_assert_int_eq(v->state, VOL_CLEAN);
	sim_pull_disk("sdb");
	md_of("r", 1, &st);
	ck_assert_int_eq(st.degraded, 0);	/* md has not noticed */
	ck_assert(listed(&st, "sdb1"));
	ck_assert_int_eq(raidd_uevent(), 1);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	md_of("r", 1, &st);
	ck_assert_int_eq(st.degraded, 1);	/* md agrees now */
	ck_assert(!listed(&st, "sdb1"));
	/* Back in its bay, it rejoins in its role, md recovering what the
	   bitmap holds dirty (nothing: one step) before it is in sync. */
	sim_push_disk("sdb");
	ck_assert_int_eq(raidd_uevent(), 1);
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	md_of("r", 1, &st);
	ck_assert_str_eq(st.sync_action, "recover");
	ck_assert(listed(&st, "sdb1"));
	sim_md_recover("md_r_t1", 1);
	ck_assert_int_eq(raidd_uevent(), 1);
	ck_assert_int_eq(v->state, VOL_CLEAN);
}
END_TEST

START_TEST(single_and_jbod_fail_when_their_disk_goes)
{
	struct volume *s = create("s", "single", "\"bay1\"");
	struct volume *j = create("j", "jbod", "\"bay2\",\"bay3\"");
	struct json_object *o;

	ck_assert_int_eq(s->state, VOL_CLEAN);
	ck_assert_int_eq(j->state, VOL_CLEAN);
	sim_pull_disk("sda");
	ck_assert_int_eq(raidd_uevent(), 1);
	ck_assert_int_eq(s->state, VOL_FAILED);
	ck_assert_int_eq(j->state, VOL_CLEAN);
	sim_pull_disk("sdc");
	ck_assert_int_eq(raidd_uevent(), 1);
	ck_assert_int_eq(j->state, VOL_FAILED);
	/* Back in its bay, the disk does not revive the dead map. */
	sim_push_disk("sda");
	raidd_uevent();
	ck_assert_int_eq(s->state, VOL_FAILED);
	ck_assert_ptr_nonnull(strstr(s->problem, "went while the volume was in use"));
	o = volume_describe(j);
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "\"state\":\"failed\""));
	json_object_put(o);
}
END_TEST

START_TEST(raid5_missing_two_is_failed)
{
	struct volume *v = create("f", "raid5", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");
	struct sys_md_status st;

	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	sim_pull_disk("sdd");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_FAILED);
	md_of("f", 1, &st);
	ck_assert_str_eq(st.array_state, "broken");
}
END_TEST

/* md keeps a RAID 1's last member (the array is broken): failed. */
START_TEST(raid1_losing_both_is_failed)
{
	struct volume *v = create("b", "raid1", "\"bay1\",\"bay2\"");
	struct sys_md_status st;

	sim_pull_disk("sda");
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_FAILED);
	md_of("b", 1, &st);
	ck_assert_int_eq(st.nmembers, 1);
	ck_assert_str_eq(st.array_state, "broken");
	ck_assert_int_eq(sys->md_fail("md_b_t1", st.member[0].dev), 1);
}
END_TEST

/* near=2: roles 0+1 and 2+3 mirror each other. */
START_TEST(raid10_missing_a_pair_is_failed)
{
	struct volume *v = create("t", "raid10", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");

	sim_pull_disk("sda");
	sim_pull_disk("sdc");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	sim_push_disk("sdc");
	raidd_uevent();
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_FAILED);
}
END_TEST

/* A member md failed for I/O errors stays out, whatever uevents come,
   even once the disk answers again: a user decides (volume.repair). */
START_TEST(member_failed_for_errors_stays_out)
{
	struct volume *v = create("e", "raid1", "\"bay1\",\"bay2\"");
	struct sys_md_status st;

	sim_disk_error("sdb", 1);
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	sim_disk_error("sdb", 0);
	for (int i = 0; i < 3; i++) {
		raidd_uevent();
		md_of("e", 1, &st);
		ck_assert_int_eq(st.degraded, 1);
		ck_assert_int_eq(v->state, VOL_DEGRADED);
	}
}
END_TEST

/* A boot inside the grace period with disk pulled: vol is not started. */
static struct volume *
boot_waiting_without(const char *vol, const char *disk)
{
	struct volume *v;

	sim_power_cut();
	sim_pull_disk(disk);
	volume_reset();
	volume_set_degraded_start(0);
	disk_refresh(0);
	volume_scan();
	v = volume_find(vol);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->assembled, 0);
	return v;
}

/* At start-up a volume missing a member waits for it; a late disk makes
   it whole; after the grace period it starts degraded. */
START_TEST(start_up_waits_for_late_disks)
{
	struct volume *v;

	create("g", "raid1", "\"bay1\",\"bay2\"");
	v = boot_waiting_without("g", "sdb");
	ck_assert_int_eq(volume_state_now(v), VOL_INCOMPLETE);
	ck_assert_int_eq(sim_md_count(), 0);
	sim_push_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_CLEAN);

	v = boot_waiting_without("g", "sdb");
	volume_set_degraded_start(1);
	volume_scan();
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
}
END_TEST

/* A failed assembly leaves nothing running, and its problem goes once a
   later one succeeds. */
START_TEST(failed_assembly_stops_and_problem_clears)
{
	struct volume *v;

	create("a", "raid1", "\"bay1\",\"bay2\"");
	create("b", "jbod", "\"bay3\",\"bay4\"");
	sim_power_cut();
	sim_pull_disk("sdd");
	volume_reset();
	disk_refresh(0);
	volume_scan();
	v = volume_find("b");
	ck_assert_int_eq(v->assembled, 0);
	ck_assert_str_ne(v->problem, "");
	ck_assert_int_eq(volume_state_now(v), VOL_FAILED);
	ck_assert_int_eq(sim_dm_count(), 1);	/* only a's */
	sim_push_disk("sdd");
	raidd_uevent();
	ck_assert_int_eq(v->assembled, 1);
	ck_assert_str_eq(v->problem, "");
	ck_assert_int_eq(v->state, VOL_CLEAN);
}
END_TEST

/* md needs enough members to run: an assembly can be partial, not magic. */
START_TEST(sim_assembles_only_what_md_would)
{
	struct sys_md md = { .name = "md_x_t1", .raid_disks = 2, .nmembers = 2 };

	create("x", "raid0", "\"bay1\",\"bay2\"");
	sim_power_cut();
	sim_pull_disk("sdb");
	snprintf(md.member[0].dev, sizeof(md.member[0].dev), "sda1");
	snprintf(md.member[1].dev, sizeof(md.member[1].dev), "sdb1");
	md.member[1].role = 1;
	ck_assert_int_eq(sys->md_assemble(&md), -1);
	ck_assert_int_eq(sim_md_count(), 0);
}
END_TEST

/* A uevent's disk is probed alone: the others may be asleep. */
START_TEST(uevent_rescans_only_its_disk)
{
	char one[1][SYS_NAME_MAX] = { "sde" }, md[1][SYS_NAME_MAX] = { "md_x_t1" };
	int before;

	ck_assert_int_eq(disk_count(), 4);
	sim_add_disk("sde", 4 * GIB, "SER5", "/sys/devices/sim/usb1/1-1");
	before = sim_probes();
	ck_assert_int_eq(disk_refresh_named(one, 1), 0);
	ck_assert_int_eq(sim_probes() - before, 1);
	ck_assert_int_eq(disk_count(), 5);
	ck_assert_ptr_nonnull(disk_find("SER5"));
	sim_pull_disk("sde");
	before = sim_probes();
	ck_assert_int_eq(disk_refresh_named(one, 1), 0);
	ck_assert_int_eq(sim_probes(), before);
	ck_assert_int_eq(disk_count(), 4);
	ck_assert_ptr_null(disk_find("SER5"));
	/* An md array is no disk: nothing probed, nothing changes. */
	ck_assert_int_eq(disk_refresh_named(md, 1), 0);
	ck_assert_int_eq(sim_probes(), before);
	ck_assert_int_eq(disk_count(), 4);
	ck_assert_str_eq(disk_at(0)->sys.name, "sda");
	ck_assert_str_eq(disk_at(3)->sys.name, "sdd");
}
END_TEST

START_TEST(wipe_refused_without_a_board)
{
	struct board none = { .nbays = 0 };
	struct json_object *a;

	disk_set_board(&none);
	disk_refresh(0);
	a = call("disk.wipe", "{\"disk\":\"sda\",\"confirm\":\"sda\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_REFUSED);
	json_object_put(a);
	a = call("volume.create", "{\"name\":\"n\",\"level\":\"single\",\"disks\":[\"sda\"]}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_REFUSED);
	json_object_put(a);
}
END_TEST

START_TEST(log_escapes_control_bytes)
{
	char out[64];

	log_escape("WD\n<13>evil\x1b[2J\x7f\xff ok", out, sizeof(out));
	ck_assert_str_eq(out, "WD\\n<13>evil\\x1b[2J\\x7f\\xff ok");
	log_escape("abcdefghij", out, 6);
	ck_assert_str_eq(out, "abcde");
	log_escape("\x01\x02\x03", out, 6);
	ck_assert_str_eq(out, "\\x01");
}
END_TEST

static Suite *
health_suite(void)
{
	Suite *s = suite_create("raidd-health");
	TCase *tc = tcase_create("health");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pulled_member_of_idle_raid1_is_failed_at_once);
	tcase_add_test(tc, single_and_jbod_fail_when_their_disk_goes);
	tcase_add_test(tc, raid5_missing_two_is_failed);
	tcase_add_test(tc, raid10_missing_a_pair_is_failed);
	tcase_add_test(tc, raid1_losing_both_is_failed);
	tcase_add_test(tc, member_failed_for_errors_stays_out);
	tcase_add_test(tc, start_up_waits_for_late_disks);
	tcase_add_test(tc, failed_assembly_stops_and_problem_clears);
	tcase_add_test(tc, sim_assembles_only_what_md_would);
	tcase_add_test(tc, uevent_rescans_only_its_disk);
	tcase_add_test(tc, wipe_refused_without_a_board);
	tcase_add_test(tc, log_escapes_control_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(health_suite());
}
