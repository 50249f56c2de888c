/*
 * Hot spares on the simulated kernel (as strict as md: a running array
 * takes a new member only as a spare with its own superblock, and
 * rebuilds only onto it): a spare takes a failed member's place by
 * itself, is found from the disks alone after a restart, is never taken
 * by a volume it does not serve, nor when it is too small, a clone, or
 * holds something else now; a power cut after every step of a take-over.
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
static const struct rpc_peer reader = { .uid = 1000, .gid = 1000 };

static void
setup(void)
{
	raidd_sim_setup(4 * GIB, "S", 0);
	repair_set_poll(0.0001);
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, disk_methods);
	rpc_server_add_methods(srv, volume_methods);
	rpc_server_add_methods(srv, spare_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
}

/* volume.spare_add or _remove as root: the error code, 0 when done. */
static int
spare_call(const char *method, const char *vol, const char *disk, int force)
{
	char params[160];
	struct json_object *a;
	int code;

	snprintf(params, sizeof(params), "{\"name\":\"%s\",\"disk\":\"%s\"%s}", vol, disk,
	    force ? ",\"force\":true" : "");
	a = unit_call(srv, &root, method, params);
	code = unit_err_code(a);
	json_object_put(a);
	return code;
}

/* The state volume.show gives spare i of vol, or NULL when there is none. */
static const char *
spare_state(const char *vol, int i)
{
	static char state[32];
	struct json_object *sp, *o, *st;

	sp = spare_describe(volume_find(vol));
	o = json_object_array_get_idx(sp, (size_t)i);
	state[0] = '\0';
	if (o && json_object_object_get_ex(o, "state", &st))
		snprintf(state, sizeof(state), "%s", json_object_get_string(st));
	json_object_put(sp);
	return state[0] ? state : NULL;
}

/* The take-over job that runs on vol, to its end; 1 when it succeeded. */
static int
take_over(const char *vol)
{
	struct volume *v = volume_find(vol);

	if (v == NULL || v->job == NULL)
		return 0;
	return raidd_drive(job_id(v->job), vol) == JOB_DONE;
}

static struct volume *
raid1_with_spare(void)
{
	struct volume *v = raidd_create(srv, "r", "raid1", "\"sda\",\"sdb\"");

	raidd_fill("r", 7);
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdc", 0), 0);
	ck_assert_str_eq(spare_state("r", 0), "ready");
	return v;
}

START_TEST(spare_takes_pulled_member)
{
	struct volume *v = raid1_with_spare();
	struct json_object *a;

	a = unit_call(srv, &root, "disk.show", "{\"disk\":\"sdc\"}");
	ck_assert_msg(strstr(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
	    "\"state\":\"spare\"") != NULL, "%s", json_object_to_json_string(a));
	json_object_put(a);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_ptr_nonnull(v->job);
	ck_assert(take_over("r"));
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_str_eq(v->disk[1], "sdc");
	ck_assert_int_eq(v->label.nspares, 0);
	ck_assert_str_eq(v->label.member[1].serial, "S3");
	raidd_check_fill("r", 7);
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_str_eq(v->disk[1], "sdc");
	ck_assert_int_eq(v->label.nspares, 0);
	/* The copy is on the spare: the other original goes, the data stays. */
	sim_pull_disk("sda");
	raidd_uevent();
	raidd_check_fill("r", 7);
}
END_TEST

/*
 * A grow stopped after its first step: a pulled member is not replaced by
 * the spare (its repair would clear the grow's intent, and the map would
 * then reach past arrays never grown); the grow finishes once the member
 * is back.
 */
START_TEST(spare_waits_for_a_stopped_grow)
{
	struct volume *v = raidd_create(srv, "r", "raid1", "\"sda\",\"sdb\"");
	struct sys_md_sync req = { .action = "check" };
	struct json_object *a, *r, *id;
	char md[SYS_NAME_MAX];

	/* A spare big enough for the grown members. */
	raidd_fill("r", 7);
	sim_grow_disk("sdc", 8 * GIB);
	disk_refresh(0);
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdc", 0), 0);
	sim_grow_disk("sda", 8 * GIB);
	sim_grow_disk("sdb", 8 * GIB);
	disk_refresh(0);
	volume_md_name(v, 0, md, sizeof(md));
	ck_assert_int_eq(sys->md_sync(md, &req), 0);
	a = unit_call(srv, &root, "volume.grow", "{\"name\":\"r\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	ck_assert_int_eq(raidd_drive((unsigned)json_object_get_int(id), "r"), JOB_FAILED);
	json_object_put(a);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_EXPANDING);
	snprintf(req.action, sizeof(req.action), "idle");
	ck_assert_int_eq(sys->md_sync(md, &req), 0);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_ptr_null(v->job);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_EXPANDING);
	ck_assert_str_eq(spare_state("r", 0), "ready");
	sim_push_disk("sdb");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v->job);	/* the grow, carried on */
	ck_assert_int_eq(raidd_drive(job_id(v->job), "r"), JOB_DONE);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert(v->assembled);
	raidd_check_fill("r", 7);
}
END_TEST

/* Found from the disks alone after a restart; md failing a member for errors. */
START_TEST(spare_survives_reboot_and_takes_failed_member)
{
	struct volume *v;
	char md[SYS_NAME_MAX];

	raid1_with_spare();
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->label.nspares, 1);
	ck_assert_str_eq(spare_state("r", 0), "ready");
	ck_assert_ptr_null(v->job);
	volume_md_name(v, 0, md, sizeof(md));
	sim_fail_member(md, "sda1");
	volume_check_states();
	ck_assert(take_over("r"));
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_str_eq(v->disk[0], "sdc");
	raidd_check_fill("r", 7);
}
END_TEST

START_TEST(spare_refusals_write_nothing)
{
	struct json_object *a;
	int ops;

	raidd_create(srv, "z", "raid0", "\"sda\",\"sdb\"");
	ops = sim_ops();
	ck_assert_int_eq(spare_call("volume.spare_add", "z", "sdc", 0), NAS_ERR_REFUSED);
	ck_assert_int_eq(sim_ops(), ops);
	/* Not for a read-only client. */
	a = unit_call(srv, &reader, "volume.spare_add", "{\"name\":\"z\",\"disk\":\"sdc\"}");
	ck_assert_int_ne(unit_err_code(a), 0);
	json_object_put(a);
	ck_assert_int_eq(sim_ops(), ops);
}
END_TEST

START_TEST(spare_too_small_or_with_data)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };

	raidd_create(srv, "r", "raid1", "\"sda\",\"sdb\"");
	sim_remove_disk("sdc");
	sim_add_disk("sdc", 1 * GIB, "SMALL", "/sys/devices/sim/host0/target0:0:3/0:0:3:0");
	disk_refresh(1);
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdc", 1), NAS_ERR_INVALID);
	ck_assert_int_eq(sys->write_at("sdd", 1080, ext4, 2), 0);
	disk_refresh(1);
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdd", 0), NAS_ERR_REFUSED);
	ck_assert_int_eq(volume_find("r")->label.nspares, 0);
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdd", 1), 0);
	ck_assert_int_eq(volume_find("r")->label.nspares, 1);
}
END_TEST

/* Another volume's spare, a clone of the spare, a spare with data now: none is taken. */
START_TEST(spare_taken_only_when_proven)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };
	uint8_t slot[LABEL_SLOT_SIZE];
	struct volume *v = raid1_with_spare();

	/* A clone (another serial) of the spare's label on sdd. */
	ck_assert_int_eq(sys->read_at("sdc", LABEL_SLOT0, slot, sizeof(slot)), 0);
	ck_assert_int_eq(sys->write_at("sdd", LABEL_SLOT0, slot, sizeof(slot)), 0);
	ck_assert_int_eq(sys->write_at("sdd", LABEL_SLOT1, slot, sizeof(slot)), 0);
	/* The spare itself got a filesystem meanwhile. */
	ck_assert_int_eq(sys->write_at("sdc", 1080, ext4, 2), 0);
	disk_refresh(1);
	ck_assert_str_eq(spare_state("r", 0), "missing");
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_ptr_null(v->job);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_ptr_null(volume_of_disk("sdc"));
	ck_assert_ptr_null(volume_of_disk("sdd"));
	ck_assert_int_eq(v->label.nspares, 1);
}
END_TEST

START_TEST(spare_of_another_volume_not_taken)
{
	struct volume *v = raid1_with_spare(), *w;

	sim_add_disk("sde", 4 * GIB, "S5", "/sys/devices/sim/host9/target9:0:0/9:0:0:0");
	disk_refresh(1);
	w = raidd_create(srv, "w", "raid1", "\"sdd\",\"sde\"");
	sim_pull_disk("sde");
	raidd_uevent();
	ck_assert_int_eq(w->state, VOL_DEGRADED);
	ck_assert_ptr_null(w->job);
	ck_assert_ptr_null(v->job);
	ck_assert_str_eq(spare_state("r", 0), "ready");
}
END_TEST

START_TEST(spare_remove_releases_it)
{
	struct volume *v = raid1_with_spare();

	/* Listed once: not again, even with force. */
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdc", 1), NAS_ERR_REFUSED);
	ck_assert_int_eq(v->label.nspares, 1);
	ck_assert_int_eq(spare_call("volume.spare_remove", "r", "sdd", 0), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(spare_call("volume.spare_remove", "r", "bay3", 0), 0);
	ck_assert_int_eq(v->label.nspares, 0);
	ck_assert_int_eq(disk_find("sdc")->sys.nsigs, 0);
	/* A spare that is gone is removed by its serial. */
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdc", 0), 0);
	sim_pull_disk("sdc");
	disk_refresh(1);
	ck_assert_str_eq(spare_state("r", 0), "missing");
	ck_assert_int_eq(spare_call("volume.spare_remove", "r", "S3", 0), 0);
	ck_assert_int_eq(v->label.nspares, 0);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_ptr_null(v->job);
}
END_TEST

/*
 * A power cut after every write of a take-over: the volume comes back
 * with its data, and the spare is either the member or still a spare
 * that takes over at the start; never lost.
 */
START_TEST(spare_power_cut_after_every_step)
{
	int done = 0, cuts = 0;

	for (int k = 0; !done && k < 40; k++, cuts++) {
		struct volume *v;

		teardown();
		setup();
		raid1_with_spare();
		sim_pull_disk("sdb");
		sim_fail_after(k);
		raidd_uevent();
		done = take_over("r");
		raidd_reboot();
		v = volume_find("r");
		ck_assert_msg(v && v->assembled && !v->inconsistent, "cut %d", k);
		raidd_check_fill("r", 7);
		if (v->job)
			ck_assert_msg(take_over("r"), "cut %d: the take-over did not finish", k);
		volume_check_states();
		ck_assert_msg(v->state == VOL_CLEAN, "cut %d: %s (%s)", k,
		    volume_state_name(v->state), v->problem);
		ck_assert_str_eq(v->disk[1], "sdc");
		ck_assert_int_eq(v->label.nspares, 0);
		ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
		raidd_check_fill("r", 7);
	}
	ck_assert(done);
	ck_assert_int_ge(cuts, 5);
}
END_TEST

START_TEST(label_keeps_spares)
{
	uint8_t buf[LABEL_SLOT_SIZE];
	struct label l, back;
	char err[160];
	struct volume *v = raid1_with_spare();

	l = v->label;
	ck_assert_int_eq(label_encode(&l, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(label_decode(buf, sizeof(buf), &back, err, sizeof(err)), 0);
	ck_assert_int_eq(back.nspares, 1);
	ck_assert(memcmp(back.spare[0].uuid, l.spare[0].uuid, 16) == 0);
	l.nspares = LABEL_MAX_SPARES + 1;
	ck_assert_int_eq(label_check(&l, err, sizeof(err)), -1);
	l.nspares = 0;	/* an entry past the count */
	ck_assert_int_eq(label_check(&l, err, sizeof(err)), -1);
	l.nspares = 2;
	l.spare[1] = l.spare[0];	/* listed twice */
	ck_assert_int_eq(label_check(&l, err, sizeof(err)), -1);
}
END_TEST

/*
 * A read-group client polling volume.list and disk.list reads no disk:
 * spares are described from the label read with the last scan, so a
 * spare in standby stays asleep (each read would spin it up).
 */
START_TEST(listing_reads_no_spare)
{
	const char *methods[] = { "volume.list", "disk.list" };
	struct rpc_auth auth = { .admin_gid = (gid_t)-1, .read_gid = reader.gid };
	int reads, probes;

	rpc_server_set_auth(srv, &auth);
	raid1_with_spare();
	reads = sim_reads();
	probes = sim_probes();
	for (int i = 0; i < 20; i++) {
		struct json_object *a = unit_call(srv, &reader, methods[i % 2], "{}");

		ck_assert_int_eq(unit_err_code(a), 0);
		json_object_put(a);
	}
	ck_assert_str_eq(spare_state("r", 0), "ready");
	ck_assert_int_eq(sim_reads(), reads);
	ck_assert_int_eq(sim_probes(), probes);
}
END_TEST

/*
 * The table says spare, but the disk holds a filesystem now (written
 * since the last scan; the API rescans first, spare_remove itself must
 * not trust the table): it is unlisted and nothing on it is erased.
 */
START_TEST(spare_remove_erases_only_a_proven_disk)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };
	uint8_t got[2];
	struct volume *v = raid1_with_spare();
	char err[256];
	int code;

	ck_assert_int_eq(sys->write_at("sdc", 1080, ext4, 2), 0);
	ck_assert_str_eq(spare_state("r", 0), "ready");
	ck_assert_int_eq(spare_remove(v, "bay3", &code, err, sizeof(err)), 0);
	ck_assert_int_eq(v->label.nspares, 0);
	ck_assert_int_eq(sys->read_at("sdc", 1080, got, 2), 0);
	ck_assert_mem_eq(got, ext4, 2);
	/* A spare that is what it says is erased, as before. */
	ck_assert_int_eq(spare_call("volume.spare_add", "r", "sdd", 0), 0);
	ck_assert_int_eq(spare_call("volume.spare_remove", "r", "bay4", 0), 0);
	ck_assert_int_eq(disk_find("sdd")->sys.nsigs, 0);
}
END_TEST

/* As the volume's labels stop listing the spare: another disk in its place. */
static void
swap_spare_after_labels(void)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };
	struct volume *v = volume_find("r");
	int written = 0;

	/* Before the last member's label write: the swap is done when the
	   spare's erase opens its disk, right after it. */
	for (int m = 0; m < v->label.ndisks; m++)
		written += v->mlabel[m].generation == v->label.generation;
	if (v->label.nspares != 0 || written < v->label.ndisks - 1) {
		sim_before_step(swap_spare_after_labels);
		return;
	}
	/* Same name, same device number (sd reuses its index), same size. */
	sim_remove_disk("sdc");
	sim_add_disk("sdc", 4 * GIB, "S9", "/sys/devices/sim/host0/target0:0:2/0:0:2:0");
	ck_assert_int_eq(sys->write_at("sdc", 1080, ext4, 2), 0);
}

/*
 * spare_remove writes the volume's labels before it erases the spare,
 * which can take seconds: a disk swapped into the spare's name meanwhile
 * (same device number and size) is not erased; the proof is read
 * through the descriptor the zeros go through.
 */
START_TEST(spare_remove_erases_not_a_disk_swapped_in)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };
	struct volume *v = raid1_with_spare();
	uint8_t got[2];

	sim_before_step(swap_spare_after_labels);
	ck_assert_int_eq(spare_call("volume.spare_remove", "r", "bay3", 0), 0);
	sim_before_step(NULL);
	ck_assert_int_eq(v->label.nspares, 0);
	ck_assert_int_eq(sys->read_at("sdc", 1080, got, 2), 0);
	ck_assert_mem_eq(got, ext4, 2);
}
END_TEST

static Suite *
spare_suite(void)
{
	Suite *s = suite_create("raidd-spare");
	TCase *tc = tcase_create("spare");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, spare_takes_pulled_member);
	tcase_add_test(tc, spare_waits_for_a_stopped_grow);
	tcase_add_test(tc, spare_survives_reboot_and_takes_failed_member);
	tcase_add_test(tc, spare_refusals_write_nothing);
	tcase_add_test(tc, spare_too_small_or_with_data);
	tcase_add_test(tc, spare_taken_only_when_proven);
	tcase_add_test(tc, spare_of_another_volume_not_taken);
	tcase_add_test(tc, spare_remove_releases_it);
	tcase_add_test(tc, spare_power_cut_after_every_step);
	tcase_add_test(tc, label_keeps_spares);
	tcase_add_test(tc, listing_reads_no_spare);
	tcase_add_test(tc, spare_remove_erases_only_a_proven_disk);
	tcase_add_test(tc, spare_remove_erases_not_a_disk_swapped_in);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(spare_suite());
}
