/*
 * volume.add_disk on the simulated kernel: a raid5 of three takes a
 * fourth disk through md's reshape (the data moves down into the room
 * below its offset, no backup file), the volume grows, the data stays;
 * a power cut after any step, or in the middle of md's reshape, is
 * finished (or, before md took the disk, rolled back) at the next start.
 * The simulator refuses a reshape where md does.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "raidd/label.h"
#include "raidd/mdsb.h"
#include "raidd/plan-grow.h"
#include "raidd/raidd.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "unit-raidd.h"
#include "unit-util.h"

#define CUT_POINTS	60
#define RAID5_3		"{\"name\":\"r\",\"level\":\"raid5\",\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}"
#define ADD_SDD		"{\"name\":\"r\",\"disk\":\"bay4\"}"

static struct rpc_server *srv;
static const uint8_t unit_a[16] = { 0xa1, 0xa2, 0xa3 };
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
/* md moves its reshape on by this much per turn of the loop; 0: it stalls. */
static uint64_t reshape_speed;

static void
setup(void)
{
	static const uint64_t sizes[4] = { 256 * MIB, 256 * MIB, 256 * MIB, 256 * MIB };

	srv = unit_raidd_setup(unit_a, sizes, 4);
	add_set_poll(0);
	reshape_speed = 1 << 17;
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
}

static void
md_of(const char *vol, char *md, size_t len)
{
	struct volume *v = volume_find(vol);

	ck_assert_ptr_nonnull(v);
	volume_md_name(v, 0, md, len);
}

/* The loop until no job runs, md's reshape moving on as it would. */
static void
run_all(void)
{
	char md[SYS_NAME_MAX];

	for (int i = 0; i < 2000 && job_running_count() > 0; i++) {
		struct volume *v = volume_find("r");

		ev_run(EV_DEFAULT, EVRUN_ONCE);
		/* every tier's md (an SHR's reshape them one after another) */
		for (int t = 0; reshape_speed && v && t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_reshape_step(md, reshape_speed);
		}
	}
	ck_assert_int_eq(job_running_count(), 0);
}

static enum job_state
run(const char *method, const char *params)
{
	struct json_object *a = unit_call(srv, &root, method, params), *r, *id;
	unsigned n;

	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	n = (unsigned)json_object_get_int(id);
	json_object_put(a);
	run_all();
	ck_assert_ptr_nonnull(job_find(n));
	return job_state(job_find(n));
}

static void
refused(const char *params, int code, const char *want)
{
	struct json_object *a = unit_call(srv, &root, "volume.add_disk", params);

	ck_assert_msg(unit_err_code(a) == code, "%s", json_object_to_json_string(a));
	ck_assert_msg(strstr(unit_err_msg(a), want), "%s lacks %s", unit_err_msg(a), want);
	json_object_put(a);
}

static void
reboot(void)
{
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	run_all();
}


static uint64_t
make_as(const char *params)
{
	char dm[SYS_NAME_MAX];
	uint64_t size;

	ck_assert_int_eq(run("volume.create", params), JOB_DONE);
	size = volume_find("r")->label.size;
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, size, 1);
	return size;
}

static uint64_t
make(void)
{
	return make_as(RAID5_3);
}

/* Four members, one more data disk's worth, md done, every layer that size, data there. */
static void
check_added(uint64_t was)
{
	struct volume *v = volume_find("r");
	struct sys_md_status st;
	char dm[SYS_NAME_MAX], md[SYS_NAME_MAX];

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN, "state %s: %s", volume_state_name(v->state),
	    v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 4);
	ck_assert_int_eq(v->label.tier[0].nmembers, 4);
	ck_assert_uint_eq(v->label.size, was / 2 * 3);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	volume_dm_name("r", dm, sizeof(dm));
	ck_assert_uint_eq(sim_fs_size(dm), v->label.size);
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 4);
	ck_assert_str_eq(st.sync_action, "idle");
	ck_assert_int_eq(st.degraded, 0);
	unit_raidd_pattern(dm, was, 0);
	for (int m = 0; m < 4; m++) {
		static const char *const disks[] = { "sda", "sdb", "sdc", "sdd" };

		ck_assert_str_eq(v->disk[m], disks[m]);
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	}
}

START_TEST(raid5_takes_a_fourth_disk)
{
	uint64_t was = make();
	char md[SYS_NAME_MAX];
	struct mdsb sb;
	char dev[SYS_NAME_MAX];
	uint64_t off;

	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->part_dev("sda", MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(member_read_sb(dev, &sb), 0);
	off = sb.data_offset;
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_DONE);
	check_added(was);
	/* md moved the data down into the room below it. */
	ck_assert_int_eq(member_read_sb(dev, &sb), 0);
	ck_assert_uint_eq(sb.data_offset, off / 2);
	reboot();
	check_added(was);
}
END_TEST

/* A uevent naming another disk keeps the new member: the table holds
   what raidd wrote on it, not the blank disk it was. */
START_TEST(added_member_survives_another_disks_uevent)
{
	char names[1][SYS_NAME_MAX] = { "sdb" };

	make();
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_DONE);
	sim_pull_disk("sdb");
	disk_refresh_named(names, 1);	/* raidd's hotplug_cb for a uevent of sdb */
	volume_scan();
	volume_check_states();
	ck_assert_str_eq(volume_find("r")->disk[3], "sdd");
	ck_assert_int_eq(volume_find("r")->state, VOL_DEGRADED);
}
END_TEST

START_TEST(refusals)
{
	make();
	refused("{\"name\":\"r\",\"disk\":\"bay1\"}", NAS_ERR_BUSY, "in use");
	refused("{\"name\":\"r\",\"disk\":\"bay9\"}", NAS_ERR_NOT_FOUND, "no disk");
	refused("{\"name\":\"r\",\"disk\":\"bay4\",\"level\":\"raid1\"}", NAS_ERR_INVALID,
	    "cannot become");
	refused("{\"name\":\"nope\",\"disk\":\"bay4\"}", NAS_ERR_NOT_FOUND, "no volume");
	/* Not clean: md reshapes no degraded array safely. */
	sim_pull_disk("sdb");
	disk_refresh(0);
	volume_scan();
	refused(ADD_SDD, NAS_ERR_REFUSED, "joins only a clean");
	ck_assert_int_eq(volume_find("r")->label.ndisks, 3);
	teardown();
	setup();
	ck_assert_int_eq(run("volume.create", "{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}"), JOB_DONE);
	refused("{\"name\":\"r\",\"disk\":\"bay3\"}", NAS_ERR_INVALID, "not done by this raidd");
	teardown();
	setup();
	ck_assert_int_eq(run("volume.create", "{\"name\":\"r\",\"level\":\"raid0\","
	    "\"disks\":[\"bay1\",\"bay2\"]}"), JOB_DONE);
	refused("{\"name\":\"r\",\"disk\":\"bay3\"}", NAS_ERR_INVALID, "cannot take a disk");
}
END_TEST

/*
 * Between generations disks may only be appended, each joined after
 * the older label, into new roles or tiers of their own: a label that
 * adds a disk any other way describes another volume.
 */
START_TEST(labels_gain_disks_only_by_an_add)
{
	struct label before, after, l;

	make();
	before = volume_find("r")->label;
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_DONE);
	after = volume_find("r")->label;
	ck_assert(label_same_members(&before, &after));
	ck_assert(!label_same_members(&after, &before));
	l = after;
	l.joined[3] = before.generation;	/* "joined" before the older label */
	ck_assert(!label_same_members(&before, &l));
	l = after;
	l.tier[0].member[3] = 1;		/* an old disk in the new role */
	ck_assert(!label_same_members(&before, &l));
	l = after;
	l.tier[0].member[2] = 3;		/* the new disk in an old role */
	ck_assert(!label_same_members(&before, &l));
	l = after;
	l.ntiers = 2;				/* a new tier on an old disk */
	l.tier[1] = l.tier[0];
	l.tier[1].nmembers = 1;
	l.tier[1].member[0] = 0;
	ck_assert(!label_same_members(&before, &l));
	l.tier[1].member[0] = 3;		/* on the added disk alone: an add's */
	ck_assert(label_same_members(&before, &l));
}
END_TEST

/* A disk too small for the tier's partitions changes nothing. */
START_TEST(small_disk_refused)
{
	sim_remove_disk("sdd");
	unit_raidd_disk(4, "sdd", 128 * MIB);
	disk_refresh(0);
	make();
	refused(ADD_SDD, NAS_ERR_INVALID, "smaller than the members");
	ck_assert_int_eq(volume_find("r")->label.ndisks, 3);
	ck_assert_int_eq(volume_find("r")->label.intent.op, LABEL_OP_NONE);
}
END_TEST

/* The simulator refuses a reshape where md does (raid5_start_reshape, new_offset_store). */
START_TEST(md_refuses_unsafe_reshapes)
{
	struct sys_md_sync req = { .action = "check" };
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct mdsb sb;

	make();
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->part_dev("sda", MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(member_read_sb(dev, &sb), 0);
	/* The data must move down (no backup file) ... */
	ck_assert_int_eq(sys->md_reshape(md, 4, sb.data_offset), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* ... but not onto the superblock or the bitmap. */
	ck_assert_int_eq(sys->md_reshape(md, 4, 40), -1);
	ck_assert_int_eq(errno, E2BIG);
	/* Not while a sync thread runs. */
	ck_assert_int_eq(sys->md_sync(md, &req), 0);
	ck_assert_int_eq(sys->md_reshape(md, 4, sb.data_offset / 2), -1);
	ck_assert_int_eq(errno, EBUSY);
	/* Fewer disks is no reshape raidd asks for. */
	ck_assert_int_eq(sys->md_reshape(md, 2, sb.data_offset / 2), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* Not even a degraded array of 4: one member lacking and no spare
	   (with no member lacking md would reshape to a degraded array). */
	ck_assert_int_eq(sys->md_sync(md, &(struct sys_md_sync){ .action = "idle" }), 0);
	ck_assert_int_eq(sys->part_dev("sdb", MIB, dev, sizeof(dev)), 0);
	sim_fail_member(md, dev);
	ck_assert_int_eq(sys->md_reshape(md, 4, sb.data_offset / 2), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), volume_find("r")->label.size);
}
END_TEST

/*
 * md refuses to reshape while it checks: the add stops with its intent,
 * the volume clean meanwhile (the labels count the new member before
 * md does: no member is missing); asked again, it is carried on.
 */
START_TEST(add_stopped_by_a_check_carried_on)
{
	struct sys_md_sync check = { .action = "check" }, idle = { .action = "idle" };
	uint64_t was = make();
	char md[SYS_NAME_MAX];
	struct volume *v;

	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_sync(md, &check), 0);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_FAILED);
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(v->label.ndisks, 4);
	volume_refresh_state(v);
	ck_assert_msg(v->state == VOL_CLEAN, "state %s: %s", volume_state_name(v->state),
	    v->problem);
	refused("{\"name\":\"r\",\"disk\":\"bay1\"}", NAS_ERR_REFUSED, "adding another disk");
	ck_assert_int_eq(sys->md_sync(md, &idle), 0);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_DONE);
	check_added(was);
}
END_TEST

/* A job still waiting for md: the loop turns without md moving. */
static void
turn(int n)
{
	for (int i = 0; i < n; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE | EVRUN_NOWAIT);
}

/*
 * The add stops before the new disk has its label (a write to it
 * failed): md never got the disk. Carried on through volume.add_disk,
 * the disk is labelled, added and reshaped onto; md is never asked to
 * reshape without it (it would, into a degraded array).
 */
START_TEST(add_stopped_before_the_label_carried_on)
{
	uint64_t was = make();
	char md[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	sim_disk_error("sdd", 1);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_FAILED);
	sim_disk_error("sdd", 0);
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_lt(v->label.intent.step, 6);
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 3);
	reshape_speed = 0;
	json_object_put(unit_call(srv, &root, "volume.add_disk", ADD_SDD));
	turn(100);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.degraded, 0);
	reshape_speed = 1 << 17;
	run_all();
	check_added(was);
}
END_TEST

/* The tier md is to be asked about first when the power goes (cut_at_md). */
static int cut_tier, cut_disks[4];

/*
 * Before each step: once every member's label says the reshape began
 * (step 6) and md has every tier before cut_tier at a new count, the
 * power goes: md is asked nothing more.
 */
static void
cut_at_md(void)
{
	const struct volume *v = volume_find("r");
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	int ready = v->label.intent.step == 6;

	for (int m = 0; m < v->label.ndisks; m++)
		ready &= !v->disk[m][0] || v->mlabel[m].intent.step == 6;
	for (int t = 0; t < cut_tier && ready; t++) {
		volume_md_name(v, t, md, sizeof(md));
		ready = sys->md_status(md, &st) == 0 && st.raid_disks != cut_disks[t];
	}
	if (ready)
		sim_fail_after(0);
	else
		sim_before_step(cut_at_md);
}

/*
 * An add md never began on tier t (nor after it): the power went after
 * the labels recorded the reshape step, md not asked.  The job's stop
 * took the new disk's spares out of the arrays md had not reshaped
 * onto; the cut, had it come first, would have left them, as here.
 */
static void
add_cut_before_md(const char *add, int t)
{
	struct volume *v = volume_find("r");
	struct sys_md_status st;
	char md[SYS_NAME_MAX], e[256];
	int n;

	cut_tier = t;
	for (int u = 0; u < v->label.ntiers && u < 4; u++) {
		volume_md_name(v, u, md, sizeof(md));
		cut_disks[u] = sys->md_status(md, &st) == 0 ? st.raid_disks : 0;
	}
	sim_before_step(cut_at_md);
	ck_assert_int_eq(run("volume.add_disk", add), JOB_FAILED);
	sim_fail_after(-1);
	sim_before_step(NULL);
	ck_assert_int_eq(v->label.intent.step, 6);
	n = v->label.intent.disk;
	for (int u = t; u < v->label.ntiers; u++)
		if (v->label.tier[u].kind != TIER_NONE && v->mlabel[n].tier[u].role != LABEL_NO_ROLE)
			ck_assert_msg(repair_member_join(v, n, u, -1, e, sizeof(e)) == 0, "%s", e);
}

/*
 * The power went after the labels recorded that md's reshape began, md
 * not asked; the new disk is gone at the next start: md never took it,
 * so the add is rolled back, and md is never asked to reshape without
 * it (it would, into a degraded array).
 */
START_TEST(reshape_step_recorded_md_untouched_disk_gone)
{
	uint64_t was = make();
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	md_of("r", md, sizeof(md));
	add_cut_before_md(ADD_SDD, 0);
	sim_pull_disk("sdd");
	reshape_speed = 0;
	reboot();
	turn(100);
	v = volume_find("r");
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 3);
	ck_assert_int_eq(st.degraded, 0);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
}
END_TEST

/*
 * Carried on from the label step, the disk must be free as for a new
 * add: one that got a filesystem meanwhile is refused without force and
 * left as it is; with force it is erased and joins.
 */
START_TEST(carry_on_takes_no_disk_with_data)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };
	uint64_t was = make();
	uint8_t got[2];

	sim_disk_error("sdd", 1);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_FAILED);
	sim_disk_error("sdd", 0);
	ck_assert_int_eq(sys->write_at("sdd", 1080, ext4, 2), 0);
	refused(ADD_SDD, NAS_ERR_REFUSED, "holds");
	ck_assert_int_eq(sys->read_at("sdd", 1080, got, 2), 0);
	ck_assert_mem_eq(got, ext4, 2);
	ck_assert_int_eq(volume_find("r")->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(run("volume.add_disk", "{\"name\":\"r\",\"disk\":\"bay4\","
	    "\"force\":true}"), JOB_DONE);
	check_added(was);
}
END_TEST

/*
 * A member fails while an add is stopped before md began (the new disk
 * an md spare already): asked again, the add is undone, the new disk
 * leaves md (md would rebuild the failed member onto it, against the
 * labels), and a repair can have the volume.
 */
START_TEST(carry_on_after_a_member_failed_undoes)
{
	struct sys_md_sync check = { .action = "check" }, idle = { .action = "idle" };
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	make();
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_sync(md, &check), 0);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_FAILED);
	ck_assert_int_eq(sys->md_sync(md, &idle), 0);
	ck_assert_int_eq(sys->part_dev("sdb", MIB, dev, sizeof(dev)), 0);
	sim_fail_member(md, dev);
	refused(ADD_SDD, NAS_ERR_REFUSED, "undone");
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 3);
	for (int i = 0; i < st.nmembers; i++)
		ck_assert_msg(strncmp(st.member[i].dev, "sdd", 3) != 0 ||
		    strstr(st.member[i].state, "faulty"), "%s still in %s", st.member[i].dev, md);
}
END_TEST

/* An add md never began on tier t: its new partitions spares in md. */
static void
add_refused(const char *add, int t)
{
	add_cut_before_md(add, t);
	sim_md_idle(NULL);
}

/* add_refused, then sdb is lost and the volume starts again cleanly (md writable). */
static void
add_refused_then_sdb_lost(const char *add, int t)
{
	add_refused(add, t);
	sim_pull_disk("sdb");
	disk_refresh(0);
	reboot();
}

/* As add_refused_then_sdb_lost, for a raid5 of three taking sdd: its size before. */
static uint64_t
add_stopped_then_sdb_lost(char *md, size_t len)
{
	uint64_t was = make();

	md_of("r", md, len);
	add_refused_then_sdb_lost(ADD_SDD, 0);
	return was;
}

/*
 * The add undone by the start, before assembly: the volume of ndisks
 * runs degraded, every label at the newest generation, and no array
 * holds the new disk; a repair with it is taken.
 */
static void
undone_at_start(int ndisks, const char *disk, const char *bay)
{
	struct sys_md_status st;
	struct json_object *a;
	char md[SYS_NAME_MAX], repair[128];
	struct volume *v;

	turn(50);
	v = volume_find("r");
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, ndisks);
	ck_assert_msg(strstr(v->problem, "undone"), "%s", v->problem);
	ck_assert_ptr_null(volume_of_disk(disk));
	for (int t = 0; t < v->label.ntiers; t++) {
		volume_md_name(v, t, md, sizeof(md));
		ck_assert_int_eq(sys->md_status(md, &st), 0);
		ck_assert_str_eq(st.sync_action, "idle");
		for (int i = 0; i < st.nmembers; i++)
			ck_assert_msg(strncmp(st.member[i].dev, disk, 3) != 0, "%s is %s in %s",
			    st.member[i].dev, st.member[i].state, md);
	}
	for (int m = 0; m < ndisks; m++)
		if (v->disk[m][0])
			ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	snprintf(repair, sizeof(repair), "{\"name\":\"r\",\"disk\":\"%s\",\"force\":true}",
	    bay);
	a = unit_call(srv, &root, "volume.repair", repair);
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
}

/*
 * An add md never began, its new partition a spare in md; a member is
 * lost and the volume starts again cleanly (md writable).  Carried on,
 * the add had md assembled with the spare, md rebuilt the lost member
 * onto it against the labels, and the add stopped ("no working spare")
 * with a repair refused until volume.add_disk or a reboot undid it.  The
 * start rolls the add back before assembly instead (the shape of the
 * join's review finding 1, Decision 125): md never takes the new disk,
 * and a repair is taken at once.
 */
START_TEST(clean_start_lacking_a_member_undoes_an_add_md_never_began)
{
	char md[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;
	uint64_t was;

	was = add_stopped_then_sdb_lost(md, sizeof(md));
	undone_at_start(3, "sdd", "bay4");
	for (int i = 0; i < 200 && job_running_count() > 0; i++) {
		sim_md_recover(md, 1ULL << 30);
		turn(5);
	}
	ck_assert_int_eq(job_running_count(), 0);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.degraded, 0);
	ck_assert_uint_eq(volume_find("r")->label.size, was);
	reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), was);
}
END_TEST

/*
 * An add rolled back while an old member was absent (above): that member,
 * back, still carries the add's label (one disk more, intent adding).  It
 * was left out when plugged in, and at the next start its label "described
 * other disks" and the volume was inconsistent.  A label whose add was
 * rolled back since is compared with the add undone (label_drop_added).
 */
START_TEST(old_member_back_after_an_add_rolled_back)
{
	char md[SYS_NAME_MAX];
	struct volume *v;
	uint64_t was;

	was = add_stopped_then_sdb_lost(md, sizeof(md));
	turn(50);
	v = volume_find("r");
	ck_assert_int_eq(v->label.ndisks, 3);
	sim_push_disk("sdb");
	disk_refresh(0);
	volume_scan();
	turn(50);
	v = volume_find("r");
	ck_assert_msg(strcmp(v->disk[1], "sdb") == 0, "sdb left out: %s", v->problem);
	reboot();
	turn(50);
	v = volume_find("r");
	ck_assert_msg(!v->inconsistent && v->assembled, "%s", v->problem);
	ck_assert_str_eq(v->disk[1], "sdb");
	ck_assert_int_eq(v->label.ndisks, 3);
	for (int m = 0; m < 3; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), was);
	ck_assert_ptr_null(volume_of_disk("sdd"));
}
END_TEST

/*
 * The add undone at the start (above), the new disk still carries the
 * add's label (member 4, intent adding, an older generation).  A later
 * scan (a disk's uevent) took it into the running volume at member 4,
 * past its members: label_same_members judges an older adding label
 * with the add undone, and it matched.  It is left out.
 */
START_TEST(rescan_leaves_the_undone_disk_out)
{
	char md[SYS_NAME_MAX];
	struct volume *v;

	add_stopped_then_sdb_lost(md, sizeof(md));
	turn(50);
	v = volume_find("r");
	ck_assert_int_eq(v->label.ndisks, 3);
	ck_assert_str_eq(v->disk[3], "");
	sim_pull_disk("sdd");
	disk_refresh(0);
	volume_scan();
	sim_push_disk("sdd");
	disk_refresh(0);
	volume_scan();
	turn(50);
	for (int m = 0; m < PLAN_MAX_DISKS; m++)
		ck_assert_msg(strcmp(v->disk[m], "sdd") != 0, "sdd taken as member %d", m + 1);
	ck_assert_int_eq(v->label.ndisks, 3);
	undone_at_start(3, "sdd", "bay4");
}
END_TEST

#define ROLL_BACK_CUTS	20

/*
 * An add md never began (a check held md), then the start rolls it back:
 * 0, sdb is lost (the volume lacks a member); 1, the new disk is gone.
 * Nothing written yet: the power comes back just before the start.
 */
static uint64_t
roll_back_ahead(int i)
{
	uint64_t was = make();

	add_refused(ADD_SDD, 0);
	sim_pull_disk(i == 0 ? "sdb" : "sdd");
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	return was;
}

/*
 * The power goes again after the k-th mutating step of the start that
 * rolls the add back (its own label writes among them): the next start
 * finds some members rolled back and others still adding, and comes up
 * as the volume was, every present label at the newest, the new disk
 * out, the data there.
 */
START_TEST(power_cut_during_start_roll_back)
{
	int k = _i % ROLL_BACK_CUTS, total, start;
	char dm[SYS_NAME_MAX];
	uint64_t was;
	struct volume *v;

	roll_back_ahead(_i / ROLL_BACK_CUTS);
	start = sim_ops();
	volume_scan();
	run_all();
	total = sim_ops() - start;
	ck_assert_int_lt(total, ROLL_BACK_CUTS);
	ck_assert_int_gt(total, 1);
	if (k > total)
		return;
	teardown();
	setup();
	was = roll_back_ahead(_i / ROLL_BACK_CUTS);
	sim_fail_after(k);
	volume_scan();
	run_all();
	sim_fail_after(-1);
	reboot();
	turn(50);
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_msg(!v->inconsistent && v->assembled, "%s", v->problem);
	ck_assert_int_eq(v->state, _i < ROLL_BACK_CUTS ? VOL_DEGRADED : VOL_CLEAN);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	for (int m = 0; m < PLAN_MAX_DISKS; m++) {
		ck_assert_msg(strcmp(v->disk[m], "sdd") != 0, "sdd is member %d", m + 1);
		if (v->disk[m][0])
			ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	}
	ck_assert_uint_eq(unit_raidd_dm_size("r"), was);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
}
END_TEST

/* The new disk's partition is there (the add is past AS_PARTITION). */
static int
new_part_made(void)
{
	struct volume *v = volume_find("r");
	char dev[SYS_NAME_MAX];

	return v->disk[3][0] && v->mlabel[3].generation &&
	    sys->part_dev("sdd", v->mlabel[3].tier[0].start, dev, sizeof(dev)) == 0;
}

/*
 * A member fails after the new disk is partitioned and before its
 * partition joins md: the add stops before md is given the spare (md,
 * degraded, would rebuild the failed member onto it at once, against
 * the labels), and volume.add_disk then undoes it.
 */
START_TEST(member_lost_before_the_spare_joins_stops_the_add)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct sys_md_status st;
	struct json_object *a;
	struct volume *v;
	int i;

	make();
	md_of("r", md, sizeof(md));
	a = unit_call(srv, &root, "volume.add_disk", ADD_SDD);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	for (i = 0; i < 200 && !new_part_made(); i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE | EVRUN_NOWAIT);
	ck_assert_int_lt(i, 200);
	ck_assert_int_eq(sys->part_dev("sdb", MIB, dev, sizeof(dev)), 0);
	sim_fail_member(md, dev);
	run_all();
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_msg(strstr(v->problem, "lacks a member"), "%s", v->problem);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.sync_action, "idle");
	for (int k = 0; k < st.nmembers; k++)
		ck_assert_msg(strncmp(st.member[k].dev, "sdd", 3) != 0, "%s is %s in md",
		    st.member[k].dev, st.member[k].state);
	refused(ADD_SDD, NAS_ERR_REFUSED, "undone");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
}
END_TEST

/* volume.add_disk of sdd until md reshapes, md not moving on: md's array and status. */
static void
reshaping(char *md, size_t len, struct sys_md_status *st)
{
	struct json_object *a;

	reshape_speed = 0;
	a = unit_call(srv, &root, "volume.add_disk", ADD_SDD);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	turn(100);
	md_of("r", md, len);
	ck_assert_int_eq(sys->md_status(md, st), 0);
	ck_assert_str_eq(st->sync_action, "reshape");
}

/* raidd starts again after a power cut (sim_power_cut), the loop turning, md stalled. */
static void
restart(void)
{
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	turn(100);
}

/*
 * The power goes in the middle of md's reshape: the volume is back at
 * its old size, usable, while md carries the reshape on from where it
 * was; then it grows.
 */
START_TEST(power_cut_mid_reshape)
{
	uint64_t was = make();
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;

	reshaping(md, sizeof(md), &st);
	/* md starts no check while it reshapes. */
	ck_assert_int_eq(sys->md_sync(md, &(struct sys_md_sync){ .action = "check" }), -1);
	ck_assert_int_eq(errno, EBUSY);
	sim_md_reshape_step(md, st.sync_total / 3);
	sim_power_cut();
	restart();
	ck_assert_int_eq(job_running_count(), 1);
	ck_assert_int_eq(volume_find("r")->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.sync_action, "reshape");
	ck_assert_uint_eq(st.sync_done, st.sync_total / 3);
	/* Usable meanwhile, at the old size, data there. */
	ck_assert_uint_eq(unit_raidd_dm_size("r"), was);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	reshape_speed = 1 << 17;
	run_all();
	check_added(was);
}
END_TEST

/*
 * An add carried on over a volume dirty and degraded at the cut: it
 * waits, read-only, and volume.start force carries it on (Decision 124)
 * to a volume grown and degraded, the data there.
 */
static void
forced_to_the_end(struct volume *v, const char *md, uint64_t was)
{
	char dm[SYS_NAME_MAX];
	struct sys_md_status st;

	ck_assert_int_eq(job_running_count(), 0);
	ck_assert_ptr_nonnull(strstr(v->problem, "read-only"));
	json_object_put(unit_call_expect(srv, &root, "volume.start",
	    "{\"name\":\"r\",\"force\":true}", 0));
	ck_assert_int_eq(job_running_count(), 1);
	run_all();
	ck_assert_msg(v->label.intent.op == LABEL_OP_NONE, "%s", v->problem);
	ck_assert_uint_eq(v->label.size, was / 2 * 3);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 4);
	ck_assert_int_eq(st.degraded, 1);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
}

/*
 * The power goes in the middle of md's reshape and an old member's disk
 * is gone at the next start: md carries the reshape on degraded, and so
 * does the add (planned from the labels, the absent member by its
 * serial): the volume runs with its data, and grows at the end.
 */
START_TEST(power_cut_mid_reshape_member_gone)
{
	uint64_t was = make();
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	reshaping(md, sizeof(md), &st);
	sim_md_reshape_step(md, st.sync_total / 3);
	sim_power_cut();
	sim_pull_disk("sdb");
	restart();
	v = volume_find("r");
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	/* Dirty (md was reshaping) and degraded at the cut: read-only, and the
	   add waits for force (md reshapes no read-only array, Decision 116). */
	reshape_speed = 1 << 17;
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	forced_to_the_end(v, md, was);
}
END_TEST

/* disk's superblock of the first tier, changed by edit. */
static void
sb_rewrite(const char *disk, void (*edit)(struct mdsb *))
{
	static uint8_t buf[MDSB_BLOCK];
	static struct mdsb sb;
	char dev[SYS_NAME_MAX], err[MDSB_ERRLEN];

	ck_assert_int_eq(sys->part_dev(disk, MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(sys->read_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)), 0);
	ck_assert_int_eq(mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, &sb, err,
	    sizeof(err)), 0);
	edit(&sb);
	ck_assert_msg(mdsb_encode(&sb, buf, sizeof(buf), err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(sys->write_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)), 0);
}

/* As md left a raid5 of three's member when the power went before
   md_update_sb reached it: one event behind, three raid disks. */
static void
sb_behind(struct mdsb *sb)
{
	sb->raid_disks = 3;
	sb->events--;
}

/*
 * md began the reshape, and the power went while it wrote its members'
 * superblocks one after another: the first member's still says three
 * raid disks (0: the others four, the new disk then lost; 1: only the
 * new disk's says four, an old member then lost).  The start read the
 * first old member's only, found md untouched and rolled the add back
 * over md's half-done reshape: every superblock of the array is read,
 * the new disk's too, and the add goes on.
 */
START_TEST(reshape_begun_on_some_superblocks_is_never_rolled_back)
{
	static const char *const disks[] = { "sda", "sdb", "sdc" };
	uint64_t was = make();
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	reshaping(md, sizeof(md), &st);
	sim_power_cut();
	/* md_update_sb had not reached the first member (0), or had reached
	   only the new disk (1) */
	for (int i = 0; i < (_i == 0 ? 1 : 3); i++)
		sb_rewrite(disks[i], sb_behind);
	sim_pull_disk(_i == 0 ? "sdd" : "sdc");
	restart();
	v = volume_find("r");
	ck_assert_msg(v->label.ndisks == 4 && v->label.intent.op == LABEL_OP_ADDING,
	    "the add md began was rolled back: %s", v->problem);
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	reshape_speed = 1 << 17;
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	forced_to_the_end(v, md, was);
}
END_TEST

/* Another array's superblock, of four raid disks (a disk's past life). */
static void
sb_alien(struct mdsb *sb)
{
	sb->set_uuid[0] ^= 0xff;
	sb->raid_disks = 4;
}

/*
 * A superblock counts for an array only when it is that array's: the
 * start reads every member's (add_decide), and one of another array
 * (a disk's past life) says nothing of this one.  The disk proof keeps
 * such a disk out of the volume before; tier_sb is the last guard.
 */
START_TEST(tier_sb_reads_only_the_tiers_array)
{
	struct volume *v;
	struct mdsb sb;

	make();
	v = volume_find("r");
	ck_assert_int_eq(tier_sb(v, 0, 1, &sb), 0);
	ck_assert_int_eq(sb.raid_disks, 3);
	sim_md_idle(NULL);
	sb_rewrite("sdb", sb_alien);
	ck_assert_int_eq(tier_sb(v, 0, 1, &sb), -1);
	ck_assert_int_eq(tier_sb(v, 0, 0, &sb), 0);
}
END_TEST

/*
 * An add md never began, its new partition a spare in md; then a member
 * is lost and the power goes while the volume is written: it starts
 * read-only.  volume.start force makes md writable, and md rebuilds the
 * lost member onto the add's spare, against the labels; carried on, the
 * add failed, and once md was done neither volume.add_disk (the disk is
 * "in use") nor volume.repair (an add to finish) was taken until a
 * reboot.  The add is undone by the start instead (review of Decision
 * 124), and a repair is taken.
 */
START_TEST(start_force_undoes_an_add_md_never_began_on_a_lacking_volume)
{
	struct sys_md_sync check = { .action = "check" }, idle = { .action = "idle" };
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	uint8_t buf[4096] = { 1 };
	struct sys_md_status st;
	struct json_object *a;
	struct volume *v;

	make();
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_sync(md, &check), 0);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_FAILED);
	ck_assert_int_eq(sys->md_sync(md, &idle), 0);
	/* Written, then sdb lost before md marks the array clean: a write
	   after the loss would have md fail sdb and recover onto the spare
	   at once (md_error, remove_and_add_spares), before the cut. */
	volume_dm_name("r", dm, sizeof(dm));
	ck_assert_int_eq(sys->write_at(dm, 1 << 20, buf, sizeof(buf)), 0);
	sim_pull_disk("sdb");
	disk_refresh(0);
	reshape_speed = 0;
	reboot();
	turn(50);
	/* Undone by the start itself now, before assembly (add_decide). */
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	ck_assert_msg(strstr(v->problem, "undone"), "%s", v->problem);
	a = unit_call(srv, &root, "volume.start", "{\"name\":\"r\",\"force\":true}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
	turn(50);
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	for (int i = 0; i < st.nmembers; i++)
		ck_assert_msg(strncmp(st.member[i].dev, "sdd", 3) != 0 ||
		    strcmp(st.member[i].state, "faulty") == 0, "%s is %s in md",
		    st.member[i].dev, st.member[i].state);
	reshape_speed = 1 << 17;
	a = unit_call(srv, &root, "volume.repair",
	    "{\"name\":\"r\",\"disk\":\"bay4\",\"force\":true}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
}
END_TEST

/* One kind of add to cut short: the volume before, the disk, the check after. */
struct add_case {
	uint64_t	(*make)(void);
	const char	*add, *forced, *disk;
	int		 ndisks;
	void		(*check)(uint64_t was);
	int		 cuts;		/* the loop's count, CUT_POINTS when 0 */
};

/*
 * The power goes after the k-th mutating step of an add: at the next
 * start the volume is as it was (the disk left out; adding it again
 * works) or the add is finished, with its data.
 */
static void
cut_at(int k, const struct add_case *ac)
{
	int total, start;
	uint64_t was;
	struct volume *v;

	ac->make();
	start = sim_ops();
	ck_assert_int_eq(run("volume.add_disk", ac->add), JOB_DONE);
	total = sim_ops() - start;
	ck_assert_int_lt(total, ac->cuts ? ac->cuts : CUT_POINTS);
	ck_assert_int_gt(total, 4);
	if (k > total)
		return;
	teardown();
	setup();
	was = ac->make();
	sim_fail_after(k);
	run("volume.add_disk", ac->add);
	sim_fail_after(-1);
	reboot();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	if (v->label.size == was && v->label.intent.op == LABEL_OP_NONE) {
		ck_assert_int_eq(v->label.ndisks, ac->ndisks);
		ck_assert_uint_eq(unit_raidd_dm_size("r"), was);
		ck_assert_ptr_null(volume_of_disk(ac->disk));
		ck_assert_int_eq(run("volume.add_disk", ac->forced), JOB_DONE);
	}
	ac->check(was);
	reboot();
	ac->check(was);
}

START_TEST(power_cut_during_add)
{
	static const struct add_case raid5 = { make, ADD_SDD,
		"{\"name\":\"r\",\"disk\":\"bay4\",\"force\":true}", "sdd", 3, check_added, 0 };

	cut_at(_i, &raid5);
}
END_TEST

#define JBOD_2		"{\"name\":\"r\",\"level\":\"jbod\",\"disks\":[\"bay1\",\"bay2\"]}"
#define ADD_SDC		"{\"name\":\"r\",\"disk\":\"bay3\"}"

/* A jbod of two: every byte of a third disk's area joins at the end, data in place. */
static void
check_jbod_added(uint64_t was)
{
	struct volume *v = volume_find("r");
	char dm[SYS_NAME_MAX];

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN, "state %s: %s", volume_state_name(v->state),
	    v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	ck_assert_int_eq(v->label.ntiers, 3);
	ck_assert_uint_eq(v->label.size, was / 2 * 3);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	volume_dm_name("r", dm, sizeof(dm));
	ck_assert_uint_eq(sim_fs_size(dm), v->label.size);
	unit_raidd_pattern(dm, was, 0);
	ck_assert_str_eq(v->disk[2], "sdc");
	for (int m = 0; m < 3; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
}

static uint64_t
make_jbod(void)
{
	return make_as(JBOD_2);
}

START_TEST(jbod_takes_a_disk)
{
	uint64_t was = make_jbod();

	ck_assert_int_eq(run("volume.add_disk", ADD_SDC), JOB_DONE);
	check_jbod_added(was);
	reboot();
	check_jbod_added(was);
}
END_TEST

/* As power_cut_during_add, for a jbod: the new tier is the volume's from the first step. */
START_TEST(power_cut_during_jbod_add)
{
	static const struct add_case jbod = { make_jbod, ADD_SDC,
		"{\"name\":\"r\",\"disk\":\"bay3\",\"force\":true}", "sdc", 2, check_jbod_added, 0 };

	cut_at(_i, &jbod);
}
END_TEST

/* ---- a raid1 of two becomes raid5 (level raid5, Decision 106) ---- */

#define RAID1_2		"{\"name\":\"r\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}"
#define ADD_SDC_R5	"{\"name\":\"r\",\"disk\":\"bay3\",\"level\":\"raid5\"}"

static uint64_t
make_raid1(void)
{
	return make_as(RAID1_2);
}

/*
 * A join rolled back while its member was away (Decision 133): the newest
 * label lists member 2 in tier 0 only, and member 2's own label, behind,
 * still gives it role 2 in tier 1 with a band.  The rewrite of its label
 * takes its roles from the newest: none in tier 1, no band, no GUIDs
 * there; tier 0 keeps its own place.
 */
START_TEST(member_behind_takes_its_roles_from_the_newest_label)
{
	static struct volume v;
	struct label out, *own = &v.mlabel[2];

	memset(&v, 0, sizeof(v));
	v.label.generation = 10;
	v.label.ndisks = 3;
	v.label.ntiers = 2;
	v.label.tier[0].nmembers = 3;
	for (int r = 0; r < 3; r++)
		v.label.tier[0].member[r] = (uint8_t)r;
	v.label.tier[1].nmembers = 2;
	v.label.tier[1].member[0] = 0;
	v.label.tier[1].member[1] = 1;
	for (int m = 0; m < 3; m++) {
		snprintf(v.disk[m], sizeof(v.disk[m]), "sd%c", 'a' + m);
		v.mlabel[m] = v.label;
		v.mlabel[m].position = (uint8_t)m;
		v.mlabel[m].tier[0].role = (uint8_t)m;
		v.mlabel[m].tier[0].start = 2 * MIB;
		v.mlabel[m].tier[0].size = GIB;
		v.mlabel[m].tier[1].role = m < 2 ? (uint8_t)m : LABEL_NO_ROLE;
		v.mlabel[m].tier[1].start = m < 2 ? 2 * MIB + GIB : 0;
		v.mlabel[m].tier[1].size = m < 2 ? GIB : 0;
	}
	own->generation = 8;
	own->tier[1].role = 2;
	own->tier[1].start = 2 * MIB + GIB;
	own->tier[1].size = GIB;
	memset(own->tier[1].part_guid, 0x5a, 16);
	memset(own->tier[1].part_type, 0x5b, 16);
	label_for_member(&v, 2, &out);
	ck_assert_uint_eq(out.generation, 10);
	ck_assert_int_eq(out.tier[0].role, 2);
	ck_assert_uint_eq(out.tier[0].start, 2 * MIB);
	ck_assert_int_eq(out.tier[1].role, LABEL_NO_ROLE);
	ck_assert_uint_eq(out.tier[1].start, 0);
	ck_assert_uint_eq(out.tier[1].size, 0);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(out.tier[1].part_guid[i] | out.tier[1].part_type[i], 0);
	/* A member at the newest generation keeps what it says. */
	label_for_member(&v, 1, &out);
	ck_assert_int_eq(out.tier[1].role, 1);
	ck_assert_uint_eq(out.tier[1].size, GIB);
}
END_TEST

/* A raid5 of three, md's and the labels' alike, twice the bytes, the data there. */
static void
check_raid5_of_3(uint64_t was)
{
	struct volume *v = volume_find("r");
	struct sys_md_status st;
	char dm[SYS_NAME_MAX], md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct json_object *o;
	struct mdsb sb;

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN, "state %s: %s", volume_state_name(v->state),
	    v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.intent.level, 0);
	ck_assert_int_eq(v->label.level, LEVEL_RAID5);
	ck_assert_int_eq(v->label.tier[0].kind, TIER_RAID5);
	ck_assert_uint_eq(v->label.tier[0].chunk, PLAN_TAKEOVER_CHUNK);
	ck_assert_int_eq(v->label.ndisks, 3);
	ck_assert_int_eq(v->label.tier[0].nmembers, 3);
	ck_assert_uint_eq(v->label.size, was * 2);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	volume_dm_name("r", dm, sizeof(dm));
	ck_assert_uint_eq(sim_fs_size(dm), v->label.size);
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
	ck_assert_int_eq(st.raid_disks, 3);
	ck_assert_str_eq(st.sync_action, "idle");
	ck_assert_int_eq(st.degraded, 0);
	ck_assert_uint_eq(st.size, v->label.tier[0].tier_size);
	ck_assert_int_eq(sys->part_dev("sdc", MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(member_read_sb(dev, &sb), 0);
	ck_assert_int_eq(sb.level, 5);
	ck_assert_uint_eq(sb.chunksize, PLAN_TAKEOVER_CHUNK);
	unit_raidd_pattern(dm, was, 0);
	for (int m = 0; m < 3; m++) {
		static const char *const disks[] = { "sda", "sdb", "sdc" };

		ck_assert_str_eq(v->disk[m], disks[m]);
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	}
	o = volume_describe(v);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "level")), "raid5");
	json_object_put(o);
}

START_TEST(raid1_becomes_raid5)
{
	uint64_t was = make_raid1();

	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_DONE);
	check_raid5_of_3(was);
	reboot();
	check_raid5_of_3(was);
	/* A raid5 now: a fourth disk joins as to any raid5. */
	ck_assert_int_eq(run("volume.add_disk", ADD_SDD), JOB_DONE);
	ck_assert_uint_eq(volume_find("r")->label.size, was * 3);
}
END_TEST

/* Each refusal changes nothing: no intent, the members as they were. */
static void
refused_as_was(const char *params, int code, const char *want, int ndisks)
{
	refused(params, code, want);
	ck_assert_int_eq(volume_find("r")->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(volume_find("r")->label.ndisks, ndisks);
	ck_assert_int_eq(volume_find("r")->label.level, LEVEL_RAID1);
}

START_TEST(level_change_refusals)
{
	char md[SYS_NAME_MAX];

	make_raid1();
	refused_as_was("{\"name\":\"r\",\"disk\":\"bay3\",\"level\":\"raid10\"}",
	    NAS_ERR_INVALID, "cannot become", 2);
	refused_as_was("{\"name\":\"r\",\"disk\":\"bay3\",\"level\":\"shr\"}",
	    NAS_ERR_INVALID, "cannot become", 2);
	refused_as_was("{\"name\":\"r\",\"disk\":\"bay3\",\"level\":\"raid1\"}",
	    NAS_ERR_INVALID, "a raid1 of two becomes raid5", 2);
	/* md's array is no raid1 of two (whatever the labels say): md would refuse. */
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), 0);
	refused_as_was(ADD_SDC_R5, NAS_ERR_REFUSED, "md takes only a raid1 of two", 2);
	teardown();
	setup();
	ck_assert_int_eq(run("volume.create", "{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}"), JOB_DONE);
	refused_as_was("{\"name\":\"r\",\"disk\":\"bay4\",\"level\":\"raid5\"}",
	    NAS_ERR_INVALID, "only a raid1 of two", 3);
	teardown();
	setup();
	ck_assert_int_eq(run("volume.create", JBOD_2), JOB_DONE);
	refused(ADD_SDC_R5, NAS_ERR_INVALID, "cannot become");
	ck_assert_int_eq(volume_find("r")->label.level, LEVEL_JBOD);
	teardown();
	setup();
	/* Degraded: md reshapes no degraded array safely. */
	make_raid1();
	sim_pull_disk("sdb");
	disk_refresh(0);
	volume_scan();
	refused_as_was(ADD_SDC_R5, NAS_ERR_REFUSED, "joins only a clean", 2);
}
END_TEST

/* The simulator takes a raid1 over as md does (level_store, raid5_takeover_raid1). */
START_TEST(md_refuses_unsafe_takeovers)
{
	struct sys_md_sync check = { .action = "check" }, idle = { .action = "idle" };
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	ck_assert_int_eq(run("volume.create", "{\"name\":\"r\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}"), JOB_DONE);
	md_of("r", md, sizeof(md));
	/* Three raid disks: no takeover. */
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), -1);
	ck_assert_int_eq(errno, EINVAL);
	teardown();
	setup();
	make_raid1();
	md_of("r", md, sizeof(md));
	/* Not while a sync thread runs. */
	ck_assert_int_eq(sys->md_sync(md, &check), 0);
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(sys->md_sync(md, &idle), 0);
	/* No other personality takes a raid1 over here. */
	ck_assert_int_eq(sys->md_set_level(md, "raid10"), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* A raid1 does not reshape to more raid disks. */
	ck_assert_int_eq(sys->md_reshape(md, 3, 2048), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(sys->md_set_level(md, "raid1"), 0);
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), 0);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(st.degraded, 0);
	/* Same bytes: a raid5 of two holds one disk's worth. */
	ck_assert_uint_eq(st.size, volume_find("r")->label.tier[0].tier_size);
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), 0);
	/* md's superblocks say so: a restart assembles a raid5. */
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
}
END_TEST

/* md refuses the takeover while it checks: the add stops, then is carried on. */
START_TEST(takeover_stopped_by_a_check_carried_on)
{
	struct sys_md_sync check = { .action = "check" }, idle = { .action = "idle" };
	uint64_t was = make_raid1();
	char md[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_sync(md, &check), 0);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_FAILED);
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(v->label.intent.level, LEVEL_RAID5);
	ck_assert_int_eq(v->label.level, LEVEL_RAID1);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid1");
	ck_assert_int_eq(sys->md_sync(md, &idle), 0);
	/* Carried on as asked first, whatever level this call names. */
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC), JOB_DONE);
	check_raid5_of_3(was);
}
END_TEST

/* sdc's slot in the raid1's array as the old member fell: -1 a spare, -2 not there. */
static int lost_slot;

/* sdc's partition's slot in md: -1 a spare, -2 not listed. */
static int
sdc_slot(const char *md)
{
	struct sys_md_status st;
	char dev[SYS_NAME_MAX];

	if (sys->md_status(md, &st) == -1 || sys->part_dev("sdc", MIB, dev, sizeof(dev)) == -1)
		return -2;
	for (int i = 0; i < st.nmembers; i++)
		if (strcmp(st.member[i].dev, dev) == 0 && !strstr(st.member[i].state, "faulty"))
			return st.member[i].slot;
	return -2;
}

/* Before each step: once sdc is md's spare, sdb's member fails (I/O errors). */
static void
sdb_fails_once_sdc_joins(void)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	md_of("r", md, sizeof(md));
	if (sdc_slot(md) == -2) {
		sim_before_step(sdb_fails_once_sdc_joins);
		return;
	}
	ck_assert_int_eq(sys->part_dev("sdb", MIB, dev, sizeof(dev)), 0);
	sim_fail_member(md, dev);
	lost_slot = sdc_slot(md);
}

/*
 * An old member fails right after the add gave md its spare, before md
 * takes the raid1 over and reshapes (Decision 133): md, its recovery
 * frozen since before the spare's add, rebuilds nothing onto it; the job
 * stops, takes the spare back out and lets md go; the volume runs
 * degraded with its data, and the next start judges no member foreign.
 * The old code had md rebuild sdb onto sdc at once.
 */
START_TEST(member_lost_right_after_the_spare_joins_rebuilds_nothing)
{
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	uint64_t was = make_raid1();
	struct sys_md_status st;
	const struct volume *v;

	volume_dm_name("r", dm, sizeof(dm));
	md_of("r", md, sizeof(md));
	lost_slot = -3;
	sim_before_step(sdb_fails_once_sdc_joins);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_FAILED);
	sim_before_step(NULL);
	ck_assert_int_eq(lost_slot, -1);	/* still a spare as sdb fell */
	ck_assert_int_eq(sdc_slot(md), -2);	/* and out of md once the job stopped */
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(st.degraded, 1);
	ck_assert_str_eq(st.sync_action, "idle");
	unit_raidd_pattern(dm, was, 0);
	reboot();
	turn(100);
	v = volume_find("r");
	ck_assert_msg(v->assembled && !v->inconsistent, "%s", v->problem);
	for (int m = 0; m < 2; m++)
		ck_assert_msg(v->disk[m][0], "member %d dropped", m + 1);
	ck_assert_int_eq(sdc_slot(md), -2);
	unit_raidd_pattern(dm, was, 0);
}
END_TEST

/* Before each step: once md took the raid1 over, it holds MD_RECOVERY_RUNNING. */
static void
running_once_taken_over(void)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	md_of("r", md, sizeof(md));
	if (sys->md_status(md, &st) == -1 || strcmp(st.level, "raid5") != 0) {
		sim_before_step(running_once_taken_over);
		return;
	}
	sim_md_recovery_running(md, 1);
}

/*
 * md refuses the reshape EBUSY with nothing started (MD_RECOVERY_RUNNING
 * while sync_action reads frozen: md_check_recovery's moment, a sync
 * thread not reaped; Decision 133, checked against md 6.1): the job
 * stops at the reshape, never taking the refusal for a reshape begun;
 * md keeps its two members, the spare goes out and md is let go; once
 * md is done, volume.add_disk carries the add on.
 */
START_TEST(reshape_refused_busy_stops_the_add)
{
	char md[SYS_NAME_MAX];
	uint64_t was = make_raid1();
	struct sys_md_status st;

	md_of("r", md, sizeof(md));
	sim_before_step(running_once_taken_over);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_FAILED);
	sim_before_step(NULL);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_str_eq(st.sync_action, "idle");
	ck_assert_int_eq(sdc_slot(md), -2);
	ck_assert_int_eq(volume_find("r")->label.intent.op, LABEL_OP_ADDING);
	sim_md_recovery_running(md, 0);
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_DONE);
	check_raid5_of_3(was);
}
END_TEST

/* The add stopped with md a raid5 of two and the labels raid1: md is left so. */
static uint64_t
stop_after_takeover(void)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	uint64_t was = 0;
	int start, total, k;

	make_raid1();
	start = sim_ops();
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_DONE);
	total = sim_ops() - start;
	for (k = 1; k < total; k++) {
		teardown();
		setup();
		was = make_raid1();
		sim_fail_after(k);
		run("volume.add_disk", ADD_SDC_R5);
		sim_fail_after(-1);
		md_of("r", md, sizeof(md));
		ck_assert_int_eq(sys->md_status(md, &st), 0);
		if (strcmp(st.level, "raid5") == 0 && st.raid_disks == 2)
			break;
	}
	ck_assert_int_lt(k, total);
	ck_assert_int_eq(volume_find("r")->label.level, LEVEL_RAID1);
	ck_assert_int_eq(volume_find("r")->label.intent.level, LEVEL_RAID5);
	return was;
}

/*
 * The power goes between md's takeover and its reshape: md is raid5 of
 * two, the labels raid1 with the new disk; the resume asks md its level
 * and reshapes.
 */
START_TEST(power_cut_after_takeover)
{
	uint64_t was = stop_after_takeover();

	reboot();
	check_raid5_of_3(was);
}
END_TEST


/*
 * The power goes between md's takeover and its reshape (md raid5 of two,
 * sdc's spare in it), and sda is lost.  md must never rebuild sda onto
 * sdc's spare: the labels give sdc role 2, and once sda is back the add
 * could not go on.  The start runs the volume degraded on sdb, sdc kept
 * out of md, the add waiting; with sda back it is carried on to the end.
 */
START_TEST(takeover_cut_then_member_lost_keeps_the_spare_out)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	uint64_t was = stop_after_takeover();
	struct volume *v;

	sim_md_idle(NULL);	/* md marked the array clean before the cut */
	sim_pull_disk("sda");
	reboot();
	v = volume_find("r");
	ck_assert_msg(v->assembled && !v->inconsistent, "%s", v->problem);
	ck_assert_msg(v->state == VOL_DEGRADED, "%s: %s", volume_state_name(v->state),
	    v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	md_of("r", md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(st.nmembers, 1);	/* sdb alone: sdc's spare kept out */
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	unit_raidd_pattern(dm, was, 1);		/* used degraded: sda falls behind */
	sim_md_idle(NULL);
	sim_push_disk("sda");
	/* md rebuilds what it missed first: the job waits for it. */
	unit_raidd_reboot_md("r", 1 << 17, reshape_speed);
	check_raid5_of_3(was);
	reboot();
	check_raid5_of_3(was);
}
END_TEST

/*
 * As clean_start_lacking_a_member_undoes_an_add_md_never_began, for a
 * raid1 of two becoming raid5: md refused the takeover (a check), the
 * labels' step said the reshape was asked.  The start trusted the step
 * ("md may have taken it over"), carried the add on, and md rebuilt the
 * lost member onto the new disk's spare against the labels: the volume
 * came up without the member and a repair was refused.  md's superblocks
 * say raid1: md never took it over, and the add is undone.
 */
START_TEST(takeover_never_asked_undone_at_a_start_lacking_a_member)
{
	struct volume *v;

	make_raid1();
	add_refused_then_sdb_lost(ADD_SDC_R5, 0);
	undone_at_start(2, "sdc", "bay3");
	v = volume_find("r");
	ck_assert_int_eq(v->label.level, LEVEL_RAID1);
	ck_assert_int_eq(v->label.intent.level, 0);
}
END_TEST

/* After a power cut, the array of volume r started read-only from its n members. */
static void
start_read_only(int n, char *md, size_t len)
{
	static const char *const disks[] = { "sda", "sdb", "sdc", "sdd" };
	struct sys_md m = { .flags = SYS_MD_READONLY };

	md_of("r", md, len);
	snprintf(m.name, sizeof(m.name), "%s", md);
	m.raid_disks = n;
	m.nmembers = n;
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(sys->part_dev(disks[i], MIB, m.member[i].dev,
		    sizeof(m.member[i].dev)), 0);
		m.member[i].role = i;
	}
	sim_power_cut();
	ck_assert_int_eq(sys->md_assemble(&m), 0);
}

/* As md left a member's superblock when the power went before md_update_sb
   reached it after the takeover: raid1, one event behind. */
static void
sb_raid1_behind(struct mdsb *sb)
{
	sb->level = 1;
	sb->layout = 0;
	sb->chunksize = 0;
	sb->events--;
}

/*
 * The power went while md wrote its members' superblocks after the
 * takeover: sda's still says raid1, sdb's and the new disk's raid5.  md
 * compares each member it is given with the one before (super_1_load:
 * "strangely different superblock": set, level, layout, chunk) and
 * refuses the others; the simulator took all three at the freshest
 * superblock's geometry, raid5.
 */
START_TEST(md_takes_only_members_like_the_first)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	stop_after_takeover();
	sim_power_cut();
	sb_rewrite("sda", sb_raid1_behind);
	start_read_only(3, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid1");
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(st.nmembers, 1);
	ck_assert_str_eq(st.member[0].dev, "sda1");
}
END_TEST

/*
 * Decision 136: the power went while md wrote its members' superblocks
 * after the takeover (md_update_sb writes them one after another, and
 * they reach the disks in any order): the members in mask kept raid1, one
 * event behind, the others say raid5.  md assembles the first member's
 * view and refuses the others (md_takes_only_members_like_the_first): a
 * raid1 from sda alone rebuilt onto the new disk's spare, or a raid5 of
 * one member recovering onto it, and the add stopped, "holds no working
 * spare".  The start makes the superblocks agree first: the add ends a
 * raid5 of three, nothing rebuilt, the data intact.
 */
START_TEST(takeover_cut_mid_superblocks)
{
	static const char *const disks[] = { "sda", "sdb", "sdc" };
	int mask = _i + 1;	/* 1..6: some members kept raid1, never all */
	uint64_t was = stop_after_takeover();

	sim_power_cut();
	for (int i = 0; i < 3; i++)
		if (mask & (1 << i))
			sb_rewrite(disks[i], sb_raid1_behind);
	reboot();
	check_raid5_of_3(was);
}
END_TEST

/* The add stopped after the takeover (its spare out); one: sdc's partition as a spare of md. */
static void
sdc_as_spare_after_takeover(char *md, size_t len, struct sys_md *one)
{
	stop_after_takeover();
	md_of("r", md, len);
	snprintf(one->name, sizeof(one->name), "%s", md);
	ck_assert_int_eq(sys->part_dev("sdc", MIB, one->member[0].dev,
	    sizeof(one->member[0].dev)), 0);
	one->member[0].role = -1;
}

/*
 * md 6.1 refuses "reshape" EBUSY (action_store's two MD_RECOVERY_RUNNING
 * tests) before it clears MD_RECOVERY_FROZEN, so the freeze holds
 * through the refusal: a member lost then, before the job's stop takes
 * the spare out, rebuilds nothing onto the add's spare (Decision 133,
 * attack-md61's review).
 */
START_TEST(busy_reshape_refusal_keeps_the_freeze)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct sys_md one = { .nmembers = 1 };
	struct sys_md_status st;

	sdc_as_spare_after_takeover(md, sizeof(md), &one);
	ck_assert_int_eq(sys->md_freeze(md, 1), 0);
	ck_assert_int_eq(sys->md_add_new(&one), 0);
	ck_assert_int_eq(sdc_slot(md), -1);
	sim_md_recovery_running(md, 1);
	ck_assert_int_eq(sys->md_reshape(md, 3, MIB / 512), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.sync_action, "frozen");
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(sys->part_dev("sdb", MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(sys->md_fail(md, dev), 0);
	ck_assert_int_eq(sdc_slot(md), -1);
	sim_md_recovery_running(md, 0);
}
END_TEST

/*
 * md's hot-add (ADD_NEW_DISK on a running array, as the Linux seam binds
 * a new member) imports the device against no bound member: unlike
 * assembly and new_dev_store, md_add_new_disk() compares neither level,
 * layout nor chunk.  A spare whose superblock still says raid1 is taken
 * by the raid5 md took over, and md's next superblock write gives it the
 * array's geometry.  The simulator refused it (EINVAL).
 */
START_TEST(md_hot_add_compares_no_level)
{
	char md[SYS_NAME_MAX];
	struct sys_md one = { .nmembers = 1 };
	struct mdsb sb;

	sdc_as_spare_after_takeover(md, sizeof(md), &one);
	/* The stopped add took its spare out of md (spares_out). */
	ck_assert_int_eq(sys->md_fail(md, one.member[0].dev), -1);
	ck_assert_int_eq(errno, ENODEV);
	sb_rewrite("sdc", sb_raid1_behind);
	ck_assert_int_eq(sys->md_add_new(&one), 0);
	ck_assert_int_eq(member_read_sb(one.member[0].dev, &sb), 0);
	ck_assert_int_eq(sb.level, 5);
	ck_assert_uint_eq(sb.layout, 2);
	ck_assert_uint_eq(sb.chunksize, PLAN_TAKEOVER_CHUNK);
}
END_TEST

/* As sb_raid1_behind, a second event behind: a write md missed besides the takeover's. */
static void
sb_raid1_two_behind(struct mdsb *sb)
{
	sb_raid1_behind(sb);
	sb->events--;
}

/*
 * Decision 136 mends only what a cut in the takeover's superblock writes
 * leaves: a member in a role two events behind missed another write, and
 * its superblock is left as it is (md decides about it).
 */
START_TEST(takeover_mend_leaves_other_states)
{
	struct mdsb sb;
	char dev[SYS_NAME_MAX];

	stop_after_takeover();
	sim_power_cut();
	sb_rewrite("sda", sb_raid1_two_behind);
	reboot();
	ck_assert_int_eq(sys->part_dev("sda", MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(member_read_sb(dev, &sb), 0);
	ck_assert_int_eq(sb.level, 1);
	ck_assert_uint_eq(sb.chunksize, 0);
}
END_TEST

/*
 * Decision 21 for the mend: it writes a member's superblock only through
 * the member's proven descriptor.  Between the scan and the mend, sda's
 * name comes to lead to a disk that is no longer member 1 (its labels
 * gone): the raid1 superblock it carries is not rewritten, and the
 * volume is not assembled.  The mend wrote it by name.
 */
START_TEST(takeover_mend_writes_only_a_proven_member)
{
	struct mdsb sb;
	char dev[SYS_NAME_MAX];

	stop_after_takeover();
	sim_power_cut();
	sb_rewrite("sda", sb_raid1_behind);
	volume_reset();
	job_reset();
	disk_refresh(0);
	ck_assert_int_eq(sys->zero_at("sda", LABEL_SLOT0, LABEL_SLOT_SIZE), 0);
	ck_assert_int_eq(sys->zero_at("sda", LABEL_SLOT1, LABEL_SLOT_SIZE), 0);
	volume_scan();
	ck_assert_int_eq(sys->part_dev("sda", MIB, dev, sizeof(dev)), 0);
	ck_assert_int_eq(member_read_sb(dev, &sb), 0);
	ck_assert_int_eq(sb.level, 1);
	ck_assert_uint_eq(sb.chunksize, 0);
	ck_assert(volume_find("r")->inconsistent);
	ck_assert_ptr_nonnull(strstr(volume_find("r")->problem, "not written"));
}
END_TEST

/* A spare's superblock ahead of the members' (and at four raid disks). */
static void
sb_spare_ahead(struct mdsb *sb)
{
	ck_assert_uint_eq(sb->dev_roles[sb->dev_number], MDSB_ROLE_SPARE);
	sb->raid_disks = 4;
	sb->events += 2;
}

/*
 * super_1_load(): a spare's events never make it the freshest (kernel
 * 6a5cb53aaa4e): the array's geometry is its members' in a role.  The
 * simulator took the spare's, four raid disks.
 */
START_TEST(a_spares_superblock_is_never_the_freshest)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	make();
	add_refused(ADD_SDD, 0);
	sim_power_cut();
	sb_rewrite("sdd", sb_spare_ahead);
	start_read_only(4, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.raid_disks, 3);
	ck_assert_int_eq(st.nmembers, 4);
	ck_assert_int_eq(st.degraded, 0);
}
END_TEST

/* md changes neither level nor raid disks of a read-only array (level_store, update_raid_disks). */
START_TEST(md_refuses_changes_read_only)
{
	char md[SYS_NAME_MAX];

	make_raid1();
	start_read_only(2, md, sizeof(md));
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), -1);
	ck_assert_int_eq(errno, EROFS);
	ck_assert_int_eq(sys->md_set_rw(md), 0);
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), 0);
	teardown();
	setup();
	make();
	start_read_only(3, md, sizeof(md));
	ck_assert_int_eq(sys->md_reshape(md, 4, 2048), -1);
	ck_assert_int_eq(errno, EROFS);
}
END_TEST

START_TEST(power_cut_during_takeover_add)
{
	static const struct add_case r1 = { make_raid1, ADD_SDC_R5,
		"{\"name\":\"r\",\"disk\":\"bay3\",\"level\":\"raid5\",\"force\":true}", "sdc", 2,
		check_raid5_of_3, 0 };

	cut_at(_i, &r1);
}
END_TEST

/* An older member's raid1 label and the raid5 one describe the same volume, not others. */
START_TEST(labels_take_raid5_only_by_an_add)
{
	struct label before, after, l;

	make_raid1();
	before = volume_find("r")->label;
	ck_assert_int_eq(run("volume.add_disk", ADD_SDC_R5), JOB_DONE);
	after = volume_find("r")->label;
	ck_assert(label_same_members(&before, &after));
	ck_assert(!label_same_members(&after, &before));
	l = after;
	l.tier[0].chunk = 1024;			/* not md's takeover chunk */
	ck_assert(!label_same_members(&before, &l));
	l = after;
	l.level = LEVEL_RAID0;
	ck_assert(!label_same_members(&before, &l));
	l = before;
	l.level = LEVEL_RAID5;			/* raid5 without the disk */
	l.tier[0].kind = TIER_RAID5;
	l.tier[0].chunk = PLAN_TAKEOVER_CHUNK;
	ck_assert(!label_same_members(&before, &l));
}
END_TEST

/* ---- SHR: each old tier takes the disk; the room above is a grow's (Decision 118) ---- */

#define SHR_CUTS	100

static int shr_n;		/* disks the SHR is made of: bays 1..shr_n */
static uint64_t shr_new;	/* the size of the disk it takes, in bay shr_n + 1 */

/* An SHR "r" of 256 MiB and 384 MiB disks with data; bay shr_n + 1 holds shr_new. */
static uint64_t
make_shr(void)
{
	uint64_t sizes[4] = { 256 * MIB, 384 * MIB, 384 * MIB, 384 * MIB };

	sizes[shr_n] = shr_new;
	teardown();
	srv = unit_raidd_setup(unit_a, sizes, shr_n + 1);
	add_set_poll(0);
	return make_as(shr_n == 2 ?
	    "{\"name\":\"r\",\"level\":\"shr\",\"disks\":[\"bay1\",\"bay2\"]}" :
	    "{\"name\":\"r\",\"level\":\"shr\",\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}");
}

/* SHR's rule on the labels: the tiers' partitions hold total - largest. */
static void
check_shr_rule(const struct volume *v)
{
	uint64_t raw = 0, sum = 0, max = 0, a, tiers = 0;

	for (int t = 0; t < v->label.ntiers; t++) {
		int m = v->label.tier[t].member[0];

		raw += (uint64_t)(v->label.tier[t].nmembers - 1) * v->mlabel[m].tier[t].size;
		tiers += v->label.tier[t].tier_size;
	}
	for (int m = 0; m < v->label.ndisks; m++) {
		a = plan_disk_area(v->label.member[m].size);
		sum += a;
		max = a > max ? a : max;
	}
	ck_assert_uint_eq(raw, sum - max);
	ck_assert_uint_eq(tiers, v->label.size);
}

/*
 * The disk in every tier it reaches, total - largest usable, every
 * tier's md as its label says (raid5 from three members), idle, whole,
 * each layer that size, the data there.
 */
static void
check_shr_added(uint64_t was)
{
	struct volume *v = volume_find("r");
	struct sys_md_status st;
	char dm[SYS_NAME_MAX], md[SYS_NAME_MAX];

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN, "state %s: %s", volume_state_name(v->state),
	    v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.level, LEVEL_SHR);
	ck_assert_int_eq(v->label.ndisks, shr_n + 1);
	ck_assert_int_eq(v->label.ntiers, 2);
	check_shr_rule(v);
	ck_assert_uint_gt(v->label.size, was);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	volume_dm_name("r", dm, sizeof(dm));
	ck_assert_uint_eq(sim_fs_size(dm), v->label.size);
	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		ck_assert_int_eq(lt->kind, lt->nmembers >= 3 ? TIER_RAID5 : TIER_RAID1);
		volume_md_name(v, t, md, sizeof(md));
		ck_assert_int_eq(sys->md_status(md, &st), 0);
		ck_assert_str_eq(st.level, lt->nmembers >= 3 ? "raid5" : "raid1");
		ck_assert_int_eq(st.raid_disks, lt->nmembers);
		ck_assert_str_eq(st.sync_action, "idle");
		ck_assert_int_eq(st.degraded, 0);
		ck_assert_uint_eq(st.size, lt->tier_size);
	}
	/* the first tier on every disk, the new one included */
	ck_assert_int_eq(v->label.tier[0].nmembers, shr_n + 1);
	unit_raidd_pattern(dm, was, 0);
	for (int m = 0; m < v->label.ndisks; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
}

/* SHR of 2 and of 3 disks, the new one as large as the largest or larger. */
static void
shr_case(int i)
{
	static const int n[] = { 2, 2, 3, 3 };
	static const uint64_t size[] = { 384 * MIB, 512 * MIB, 384 * MIB, 512 * MIB };

	shr_n = n[i];
	shr_new = size[i];
}

START_TEST(shr_takes_a_disk)
{
	uint64_t was;
	char add[64];

	shr_case(_i);
	was = make_shr();
	snprintf(add, sizeof(add), "{\"name\":\"r\",\"disk\":\"bay%d\"}", shr_n + 1);
	ck_assert_int_eq(run("volume.add_disk", add), JOB_DONE);
	check_shr_added(was);
	reboot();
	check_shr_added(was);
}
END_TEST

/* As power_cut_during_add, for an SHR: two tiers reshaped, or one and a new tier. */
START_TEST(power_cut_during_shr_add)
{
	static const struct add_case shr3 = { make_shr, "{\"name\":\"r\",\"disk\":\"bay4\"}",
		"{\"name\":\"r\",\"disk\":\"bay4\",\"force\":true}", "sdd", 3,
		check_shr_added, SHR_CUTS };
	static const struct add_case shr2 = { make_shr, "{\"name\":\"r\",\"disk\":\"bay3\"}",
		"{\"name\":\"r\",\"disk\":\"bay3\",\"force\":true}", "sdc", 2,
		check_shr_added, SHR_CUTS };

	shr_case(_i < SHR_CUTS ? 2 : 0);
	cut_at(_i % SHR_CUTS, _i < SHR_CUTS ? &shr3 : &shr2);
}
END_TEST

/*
 * The power goes while md reshapes an SHR of three's tiers (a raid5 of
 * three, a raid1 of two taken over): in the first tier's, the second's
 * waiting, or in the second's, the first done.  md goes on from each
 * tier's reshape_position; the volume runs at its old size meanwhile.
 */
START_TEST(power_cut_mid_shr_reshape)
{
	char md0[SYS_NAME_MAX], md1[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	struct json_object *a;
	struct volume *v;
	uint64_t was;

	shr_case(2);
	was = make_shr();
	reshape_speed = 0;
	a = unit_call(srv, &root, "volume.add_disk", "{\"name\":\"r\",\"disk\":\"bay4\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	turn(100);
	v = volume_find("r");
	volume_md_name(v, 0, md0, sizeof(md0));
	volume_md_name(v, 1, md1, sizeof(md1));
	ck_assert_int_eq(sys->md_status(md1, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
	ck_assert_int_eq(st.raid_disks, 3);
	ck_assert_int_eq(sys->md_status(md0, &st), 0);
	ck_assert_str_eq(st.sync_action, "reshape");
	ck_assert_int_eq(st.raid_disks, 4);
	if (_i == 0) {
		sim_md_reshape_step(md0, st.sync_total / 3);
	} else {
		sim_md_reshape_step(md0, st.sync_total);
		ck_assert_int_eq(sys->md_status(md1, &st), 0);
		sim_md_reshape_step(md1, st.sync_total / 2);
	}
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	turn(100);
	v = volume_find("r");
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	ck_assert_int_eq(job_running_count(), 1);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(sys->md_status(_i == 0 ? md0 : md1, &st), 0);
	ck_assert_str_eq(st.sync_action, "reshape");
	ck_assert_uint_eq(st.sync_done, _i == 0 ? st.sync_total / 3 : st.sync_total / 2);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), was);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	reshape_speed = 1 << 17;
	run_all();
	check_shr_added(was);
}
END_TEST

/*
 * The narrow stall (Decision 118's limit): md reshaped an SHR's first
 * tier but was never asked for the second (here a check on it refused;
 * a power cut between the two writes leaves the same), and then the new
 * disk is lost.  md has begun, so the add cannot be undone: it goes on
 * degraded, md asked to reshape the second tier without the new disk
 * as it does the first, and the volume ends grown and degraded, its data
 * there, with a repair taken (Decision 124; the old code stopped the add,
 * "the new disk is gone", and every repair was refused).
 */
START_TEST(shr_add_between_tiers_new_disk_lost)
{
	struct sys_md_sync idle = { .action = "idle" };
	char md0[SYS_NAME_MAX], md1[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	struct json_object *a;
	struct volume *v;
	uint64_t was;

	shr_case(2);
	was = make_shr();
	v = volume_find("r");
	volume_md_name(v, 0, md0, sizeof(md0));
	volume_md_name(v, 1, md1, sizeof(md1));
	reshape_speed = 0;
	add_cut_before_md("{\"name\":\"r\",\"disk\":\"bay4\"}", 1);
	ck_assert_int_eq(sys->md_status(md0, &st), 0);
	ck_assert_int_eq(st.raid_disks, 4);
	ck_assert_int_eq(sys->md_status(md1, &st), 0);
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(sys->md_sync(md1, &idle), 0);
	sim_remove_disk("sdd");
	reshape_speed = 1 << 17;
	reboot();
	v = volume_find("r");
	/* md0 was reshaping at the cut: dirty and degraded, read-only. */
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	json_object_put(unit_call_expect(srv, &root, "volume.start",
	    "{\"name\":\"r\",\"force\":true}", 0));
	run_all();
	ck_assert_msg(v->label.intent.op == LABEL_OP_NONE, "%s", v->problem);
	ck_assert_int_eq(v->label.ndisks, 4);
	ck_assert_uint_gt(v->label.size, was);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(sys->md_status(md1, &st), 0);
	ck_assert_str_eq(st.level, "raid5");
	ck_assert_int_eq(st.raid_disks, 3);
	ck_assert_int_eq(st.degraded, 1);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	volume_dm_name("r", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	sim_add_disk("sde", shr_new, "NEW4", "/sys/devices/sim/host0/target0:0:4/0:0:4:0");
	disk_refresh(0);
	a = unit_call(srv, &root, "volume.repair", "{\"name\":\"r\",\"disk\":\"bay4\"}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
}
END_TEST

/*
 * As takeover_never_asked_undone_at_a_start_lacking_a_member, for an SHR
 * of three whose raid1 tier md takes over: md refused the first tier's
 * reshape (a check), and asked nothing of the raid1 tier.  md's
 * superblocks say md began neither: the add is undone.
 */
START_TEST(shr_clean_start_lacking_a_member_undoes_the_add)
{
	shr_case(2);
	make_shr();
	add_refused_then_sdb_lost("{\"name\":\"r\",\"disk\":\"bay4\"}", 0);
	undone_at_start(3, "sdd", "bay4");
}
END_TEST

/* A disk smaller than the volume's top band, or md's raid1 not two: refused, nothing changes. */
START_TEST(shr_add_refusals)
{
	char md[SYS_NAME_MAX];
	struct volume *v;

	shr_n = 3;
	shr_new = 256 * MIB;
	make_shr();
	refused("{\"name\":\"r\",\"disk\":\"bay4\"}", NAS_ERR_INVALID,
	    "smaller than the largest band");
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
	shr_new = 384 * MIB;
	make_shr();
	/* md's raid1 tier is no raid1 of two: md would not take it over. */
	v = volume_find("r");
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), 0);
	refused("{\"name\":\"r\",\"disk\":\"bay4\"}", NAS_ERR_REFUSED,
	    "takes only a raid1 of two");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 3);
}
END_TEST

/*
 * bay1 grew in place (its label still says 256 MiB): the add plans from
 * the labels (the raid1 of two becomes a raid5 of three), and the grow
 * that follows takes the room every disk has above it.
 */
START_TEST(shr_add_after_a_disk_grew)
{
	struct volume *v;
	uint64_t was;

	shr_n = 2;
	shr_new = 384 * MIB;
	was = make_shr();
	sim_grow_disk("sda", 384 * MIB);
	disk_refresh(0);
	ck_assert_int_eq(run("volume.add_disk", "{\"name\":\"r\",\"disk\":\"bay3\"}"), JOB_DONE);
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ntiers, 1);
	ck_assert_int_eq(v->label.tier[0].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[0].nmembers, 3);
	check_shr_rule(v);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
	ck_assert_uint_gt(v->label.size, 2 * was);
	reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	check_shr_rule(v);
}
END_TEST

/* An SHR tier turns raid5 between generations only as an add's takeover makes it. */
START_TEST(shr_labels_take_raid5_only_by_an_add)
{
	struct label before, after, l;

	shr_case(2);
	make_shr();
	before = volume_find("r")->label;
	ck_assert_int_eq(before.tier[1].kind, TIER_RAID1);
	ck_assert_int_eq(run("volume.add_disk", "{\"name\":\"r\",\"disk\":\"bay4\"}"), JOB_DONE);
	after = volume_find("r")->label;
	ck_assert_int_eq(after.tier[1].kind, TIER_RAID5);
	ck_assert(label_same_members(&before, &after));
	ck_assert(!label_same_members(&after, &before));
	l = after;
	l.tier[1].chunk = 1024;			/* not md's takeover chunk */
	ck_assert(!label_same_members(&before, &l));
	l = after;
	l.tier[0].kind = TIER_RAID1;		/* no tier goes back */
	ck_assert(!label_same_members(&before, &l));
	l = before;
	l.generation++;
	l.tier[1].kind = TIER_RAID5;		/* raid5 without the disk */
	l.tier[1].chunk = PLAN_TAKEOVER_CHUNK;
	ck_assert(!label_same_members(&before, &l));
}
END_TEST

/* The disk in bay is pulled; a blank one of size (serial NEW<bay>) is repaired into its place. */
static void
replace(int bay, const char *old, const char *new, uint64_t size)
{
	char path[128], serial[16], params[64], md[SYS_NAME_MAX];
	struct json_object *a, *r, *id;
	struct job *j;

	sim_pull_disk(old);
	disk_refresh(1);
	volume_scan();
	volume_check_states();
	snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", bay, bay);
	snprintf(serial, sizeof(serial), "NEW%d", bay);
	sim_add_disk(new, size, serial, path);
	disk_refresh(0);
	repair_set_poll(0.0001);
	snprintf(params, sizeof(params), "{\"name\":\"r\",\"disk\":\"%s\"}", new);
	a = unit_call(srv, &root, "volume.repair", params);
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	j = job_find((unsigned)json_object_get_int(id));
	json_object_put(a);
	/* md rebuilds every tier the disk is in */
	for (int i = 0; i < 2000 && job_state(j) == JOB_RUNNING; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; t < volume_find("r")->label.ntiers; t++) {
			volume_md_name(volume_find("r"), t, md, sizeof(md));
			sim_md_recover(md, UINT64_MAX / 2);
		}
	}
	ck_assert_int_eq(job_state(j), JOB_DONE);
	volume_check_states();
	ck_assert_int_eq(volume_find("r")->state, VOL_CLEAN);
}

/*
 * A raid1 of two whose smaller disk was replaced by a larger one: with
 * the new disk the tier would also grow in place, which the add leaves
 * to volume.grow first (refused, nothing changes); after the grow the
 * disk joins.
 */
START_TEST(shr_add_after_a_replacement)
{
	struct volume *v;
	uint64_t was;

	shr_n = 2;
	shr_new = 384 * MIB;
	was = make_shr();
	replace(1, "sda", "sdx", 384 * MIB);
	refused("{\"name\":\"r\",\"disk\":\"bay3\"}", NAS_ERR_INVALID,
	    "volume.grow, then add the disk");
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 2);
	ck_assert_uint_eq(v->label.size, was);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"r\"}"), JOB_DONE);
	ck_assert_int_eq(run("volume.add_disk", "{\"name\":\"r\",\"disk\":\"bay3\"}"), JOB_DONE);
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ntiers, 1);
	ck_assert_int_eq(v->label.tier[0].kind, TIER_RAID5);
	check_shr_rule(v);
	ck_assert_uint_eq(unit_raidd_dm_size("r"), v->label.size);
}
END_TEST

/*
 * An SHR of four on 256 and 384 MiB disks whose 256 MiB disk was replaced
 * by a 384 MiB one: the replacement's room lies in the band of the raid5
 * of three above, so a fifth disk's plan has that tier take two members.
 * md would reshape it by two with the one spare, into a degraded array:
 * refused, nothing changes, every array whole.
 */
START_TEST(shr_add_refuses_two_new_members)
{
	static const uint64_t sizes[5] = { 256 * MIB, 384 * MIB, 384 * MIB, 384 * MIB,
		384 * MIB };
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	struct volume *v;

	teardown();
	srv = unit_raidd_setup(unit_a, sizes, 4);
	add_set_poll(0);
	unit_raidd_disk(5, "sde", sizes[4]);	/* past the board's bays: by its name */
	disk_refresh(0);
	make_as("{\"name\":\"r\",\"level\":\"shr\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"]}");
	ck_assert_int_eq(volume_find("r")->label.ntiers, 2);
	replace(1, "sda", "sdx", 384 * MIB);
	refused("{\"name\":\"r\",\"disk\":\"sde\"}", NAS_ERR_INVALID,
	    "another member besides the new disk");
	v = volume_find("r");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 4);
	for (int t = 0; t < 2; t++) {
		volume_md_name(v, t, md, sizeof(md));
		ck_assert_int_eq(sys->md_status(md, &st), 0);
		ck_assert_int_eq(st.raid_disks, 4 - t);
		ck_assert_int_eq(st.degraded, 0);
	}
}
END_TEST

static Suite *
add_suite(void)
{
	Suite *s = suite_create("raidd-add");
	TCase *tc = tcase_create("add");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, raid5_takes_a_fourth_disk);
	tcase_add_test(tc, added_member_survives_another_disks_uevent);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, labels_gain_disks_only_by_an_add);
	tcase_add_test(tc, small_disk_refused);
	tcase_add_test(tc, md_refuses_unsafe_reshapes);
	tcase_add_test(tc, power_cut_mid_reshape);
	tcase_add_test(tc, add_stopped_by_a_check_carried_on);
	tcase_add_test(tc, add_stopped_before_the_label_carried_on);
	tcase_add_test(tc, reshape_step_recorded_md_untouched_disk_gone);
	tcase_add_test(tc, carry_on_takes_no_disk_with_data);
	tcase_add_test(tc, carry_on_after_a_member_failed_undoes);
	tcase_add_test(tc, clean_start_lacking_a_member_undoes_an_add_md_never_began);
	tcase_add_test(tc, member_lost_before_the_spare_joins_stops_the_add);
	tcase_add_test(tc, old_member_back_after_an_add_rolled_back);
	tcase_add_test(tc, rescan_leaves_the_undone_disk_out);
	tcase_add_loop_test(tc, power_cut_during_start_roll_back, 0, 2 * ROLL_BACK_CUTS);
	tcase_add_test(tc, power_cut_mid_reshape_member_gone);
	tcase_add_loop_test(tc, reshape_begun_on_some_superblocks_is_never_rolled_back, 0, 2);
	tcase_add_test(tc, tier_sb_reads_only_the_tiers_array);
	tcase_add_test(tc, jbod_takes_a_disk);
	tcase_add_loop_test(tc, power_cut_during_add, 0, CUT_POINTS);
	tcase_add_loop_test(tc, power_cut_during_jbod_add, 0, CUT_POINTS);
	tcase_add_test(tc, raid1_becomes_raid5);
	tcase_add_test(tc, member_behind_takes_its_roles_from_the_newest_label);
	tcase_add_test(tc, level_change_refusals);
	tcase_add_test(tc, md_refuses_unsafe_takeovers);
	tcase_add_test(tc, md_refuses_changes_read_only);
	tcase_add_test(tc, takeover_stopped_by_a_check_carried_on);
	tcase_add_test(tc, power_cut_after_takeover);
	tcase_add_test(tc, takeover_cut_then_member_lost_keeps_the_spare_out);
	tcase_add_test(tc, md_takes_only_members_like_the_first);
	tcase_add_loop_test(tc, takeover_cut_mid_superblocks, 0, 6);
	tcase_add_test(tc, takeover_mend_leaves_other_states);
	tcase_add_test(tc, takeover_mend_writes_only_a_proven_member);
	tcase_add_test(tc, md_hot_add_compares_no_level);
	tcase_add_test(tc, member_lost_right_after_the_spare_joins_rebuilds_nothing);
	tcase_add_test(tc, reshape_refused_busy_stops_the_add);
	tcase_add_test(tc, busy_reshape_refusal_keeps_the_freeze);
	tcase_add_test(tc, a_spares_superblock_is_never_the_freshest);
	tcase_add_test(tc, takeover_never_asked_undone_at_a_start_lacking_a_member);
	tcase_add_test(tc, labels_take_raid5_only_by_an_add);
	tcase_add_loop_test(tc, power_cut_during_takeover_add, 0, CUT_POINTS);
	tcase_add_loop_test(tc, shr_takes_a_disk, 0, 4);
	tcase_add_loop_test(tc, power_cut_during_shr_add, 0, 2 * SHR_CUTS);
	tcase_add_loop_test(tc, power_cut_mid_shr_reshape, 0, 2);
	tcase_add_test(tc, shr_add_between_tiers_new_disk_lost);
	tcase_add_test(tc, shr_clean_start_lacking_a_member_undoes_the_add);
	tcase_add_test(tc, start_force_undoes_an_add_md_never_began_on_a_lacking_volume);
	tcase_add_test(tc, shr_add_refusals);
	tcase_add_test(tc, shr_labels_take_raid5_only_by_an_add);
	tcase_add_test(tc, shr_add_after_a_disk_grew);
	tcase_add_test(tc, shr_add_after_a_replacement);
	tcase_add_test(tc, shr_add_refuses_two_new_members);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(add_suite());
}
