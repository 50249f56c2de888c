/*
 * volume.grow on the simulated kernel: disks that grew in place give
 * their room to the volume (partitions, md, the map, the filesystem);
 * the data stays where it was; a power cut after any step is finished
 * at the next start.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "raidd/raidd.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "raidd/mdsb.h"
#include "raidd/plan.h"
#include "raidd/plan-grow.h"
#include "unit-raidd.h"
#include "unit-util.h"

#define CUT_POINTS	40

static struct rpc_server *srv;
static const uint8_t unit_a[16] = { 0xa1, 0xa2, 0xa3 };
static const struct rpc_peer root = { .uid = 0, .gid = 0 };

static void
setup(void)
{
	static const uint64_t sizes[3] = { GIB, GIB, GIB };

	srv = unit_raidd_setup(unit_a, sizes, 3);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
}

/* Runs the loop until no job runs. */
static void
run_all(void)
{
	for (int i = 0; i < 1000 && job_running_count() > 0; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_eq(job_running_count(), 0);
}

/* A method that starts a job; the job's final state. */
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
	struct json_object *a = unit_call(srv, &root, "volume.grow", params);

	ck_assert_int_eq(unit_err_code(a), code);
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


/* The grown volume as a user sees it: clean, every layer its new size, data there. */
static void
check_grown(const char *name, uint64_t was, uint64_t want)
{
	struct volume *v = volume_find(name);
	char dm[SYS_NAME_MAX];

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN, "state %s: %s", volume_state_name(v->state),
	    v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_uint_eq(v->label.size, want);
	ck_assert_uint_eq(unit_raidd_dm_size(name), want);
	volume_dm_name(name, dm, sizeof(dm));
	ck_assert_uint_eq(sim_fs_size(dm), want);
	unit_raidd_pattern(dm, was, 0);
	for (int m = 0; m < v->label.ndisks; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
}

static uint64_t
make(const char *params, const char *name)
{
	char dm[SYS_NAME_MAX];
	uint64_t size;

	ck_assert_int_eq(run("volume.create", params), JOB_DONE);
	size = volume_find(name)->label.size;
	volume_dm_name(name, dm, sizeof(dm));
	unit_raidd_pattern(dm, size, 1);
	return size;
}

static void
grow_disks(uint64_t size, int n)
{
	static const char *const names[] = { "sda", "sdb", "sdc" };

	for (int i = 0; i < n; i++)
		sim_grow_disk(names[i], size);
	disk_refresh(0);
}

START_TEST(raid5_grows_in_place)
{
	uint64_t was = make("{\"name\":\"r\",\"level\":\"raid5\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}", "r"), want;

	refused("{\"name\":\"r\"}", NAS_ERR_INVALID, "nothing to grow");
	grow_disks(2 * GIB, 2);
	/* One disk still small: raid5 is cut to the smallest. */
	refused("{\"name\":\"r\"}", NAS_ERR_INVALID, "nothing to grow");
	grow_disks(2 * GIB, 3);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"r\"}"), JOB_DONE);
	want = volume_find("r")->label.size;
	ck_assert_uint_gt(want, was + 2 * (GIB - 64 * MIB));
	check_grown("r", was, want);
	/* One segment still: the only tier just got longer. */
	ck_assert_int_eq(volume_find("r")->label.nsegs, 0);
	reboot();
	check_grown("r", was, want);
	refused("{\"name\":\"nope\"}", NAS_ERR_NOT_FOUND, "no volume");
}
END_TEST

/* jbod: the first disk's tier grows; its new end goes after the second disk's. */
START_TEST(jbod_map_keeps_data)
{
	uint64_t was = make("{\"name\":\"j\",\"level\":\"jbod\","
	    "\"disks\":[\"bay1\",\"bay2\"]}", "j"), want;
	struct volume *v;

	grow_disks(2 * GIB, 1);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"j\"}"), JOB_DONE);
	v = volume_find("j");
	want = v->label.size;
	ck_assert_uint_eq(want, was + GIB);
	ck_assert_int_eq(v->label.nsegs, 3);
	ck_assert_int_eq(v->label.seg[2].tier, 0);
	check_grown("j", was, want);
	reboot();
	check_grown("j", was, want);
}
END_TEST

START_TEST(refusals)
{
	make("{\"name\":\"z\",\"level\":\"raid0\",\"disks\":[\"bay1\",\"bay2\"]}", "z");
	grow_disks(2 * GIB, 2);
	refused("{\"name\":\"z\"}", NAS_ERR_INVALID, "raid0 cannot grow");
	teardown();
	setup();
	make("{\"name\":\"m\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}", "m");
	grow_disks(2 * GIB, 2);
	sim_pull_disk("sdb");
	disk_refresh(0);
	volume_scan();
	refused("{\"name\":\"m\"}", NAS_ERR_REFUSED, "grows only when clean");
	ck_assert_uint_eq(volume_find("m")->label.size, unit_raidd_dm_size("m"));
}
END_TEST

/*
 * The power goes after each mutating step of a grow: at the next start
 * the volume is either as it was (nothing written yet, and a grow then
 * works) or grown, with its data.
 */
START_TEST(power_cut_during_grow)
{
	int total, k = _i, start;
	uint64_t was, want;

	was = make("{\"name\":\"p\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}", "p");
	grow_disks(2 * GIB, 2);
	start = sim_ops();
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"p\"}"), JOB_DONE);
	total = sim_ops() - start;
	want = volume_find("p")->label.size;
	ck_assert_int_lt(total, CUT_POINTS);
	ck_assert_int_gt(total, 4);
	if (k > total)
		return;
	teardown();
	setup();
	make("{\"name\":\"p\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}", "p");
	grow_disks(2 * GIB, 2);
	sim_fail_after(k);
	run("volume.grow", "{\"name\":\"p\"}");
	sim_fail_after(-1);
	reboot();
	if (volume_find("p")->label.size == was) {
		ck_assert_int_eq(volume_find("p")->label.intent.op, LABEL_OP_NONE);
		ck_assert_uint_eq(unit_raidd_dm_size("p"), was);
		ck_assert_int_eq(run("volume.grow", "{\"name\":\"p\"}"), JOB_DONE);
	}
	check_grown("p", was, want);
	reboot();
	check_grown("p", was, want);
}
END_TEST

/*
 * Each member's GPT entry for tier t carries the GUIDs its label records
 * (Decision 22), and the disk passes the proof a scan makes.
 */
static void
check_guids(const char *name, uint8_t (*want)[PLAN_MAX_TIERS][16])
{
	struct volume *v = volume_find(name);
	char why[192];

	ck_assert_ptr_nonnull(v);
	for (int m = 0; m < v->label.ndisks; m++) {
		struct disk *d = disk_find(v->disk[m]);

		ck_assert_ptr_nonnull(d);
		ck_assert_int_eq(d->label_rc, 0);
		ck_assert_msg(disk_proven(d, &d->label, why, sizeof(why)), "%s: %s",
		    v->disk[m], why);
		for (int t = 0; t < v->label.ntiers; t++) {
			if (d->label.tier[t].role == LABEL_NO_ROLE)
				continue;
			ck_assert_msg(!volume_uuid_zero(d->label.tier[t].part_guid),
			    "%s tier %d: no GUID recorded", v->disk[m], t);
			ck_assert_mem_eq(d->label.tier[t].part_guid, want[m][t], 16);
		}
	}
}

static void
save_guids(const char *name, uint8_t (*out)[PLAN_MAX_TIERS][16])
{
	struct volume *v = volume_find(name);

	for (int m = 0; m < v->label.ndisks; m++)
		for (int t = 0; t < v->label.ntiers; t++)
			memcpy(out[m][t], v->mlabel[m].tier[t].part_guid, 16);
}

/* A grown partition is the same partition: its GUIDs stay, the proof holds. */
START_TEST(grown_partition_keeps_its_guid)
{
	static uint8_t guid[PLAN_MAX_DISKS][PLAN_MAX_TIERS][16];
	uint64_t was = make("{\"name\":\"g\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}", "g"), want;

	save_guids("g", guid);
	check_guids("g", guid);
	grow_disks(2 * GIB, 2);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"g\"}"), JOB_DONE);
	want = volume_find("g")->label.size;
	ck_assert_uint_gt(want, was);
	disk_refresh(0);
	check_guids("g", guid);
	reboot();
	check_grown("g", was, want);
	check_guids("g", guid);
}
END_TEST

/* After the labels: sda's node comes to lead to sdb's disk. */
static void
swap_after_labels(void)
{
	struct volume *v = volume_find("s");
	int done = v->label.intent.op == LABEL_OP_EXPANDING;

	for (int m = 0; done && m < v->label.ndisks; m++)
		done = v->mlabel[m].generation == v->label.generation;
	if (!done) {
		sim_before_step(swap_after_labels);
		return;
	}
	sim_node_swap("sda", "sdb");
}

/*
 * The partition step writes through the member's proven descriptor and
 * rechecks its node around the kernel's part: a node that comes to lead
 * elsewhere stops the grow; put back, the next start carries it on.
 */
START_TEST(node_swapped_during_partition_grow)
{
	static uint8_t guid[PLAN_MAX_DISKS][PLAN_MAX_TIERS][16];
	uint64_t was = make("{\"name\":\"s\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"]}", "s"), want;

	save_guids("s", guid);
	grow_disks(2 * GIB, 2);
	sim_before_step(swap_after_labels);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_FAILED);
	ck_assert_int_eq(volume_find("s")->label.intent.op, LABEL_OP_EXPANDING);
	sim_node_swap("sda", "sdb");
	want = volume_find("s")->label.size;
	reboot();
	check_grown("s", was, want);
	check_guids("s", guid);
}
END_TEST

/* md resizes no array while a sync thread runs; neither does the simulator. */
START_TEST(md_grow_refused_while_syncing)
{
	struct sys_md_sync req = { .action = "check" };
	char md[SYS_NAME_MAX];
	uint64_t was, now;

	make("{\"name\":\"c\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}", "c");
	volume_md_name(volume_find("c"), 0, md, sizeof(md));
	ck_assert_int_eq(sys->dev_size(md, &was), 0);
	ck_assert_int_eq(sys->md_sync(md, &req), 0);
	ck_assert_int_eq(sys->md_grow(md, was / 512 / 2), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(sys->dev_size(md, &now), 0);
	ck_assert_uint_eq(now, was);
}
END_TEST

/*
 * A grow that stopped (md busy with a check) leaves its intent; a
 * repair must not write over it: its commit would clear the intent,
 * and the labels would describe a map md never grew to.
 */
START_TEST(repair_keeps_a_stopped_grow)
{
	struct sys_md_sync req = { .action = "check" };
	struct json_object *a;
	char md[SYS_NAME_MAX];
	struct volume *v;

	make("{\"name\":\"c\",\"level\":\"raid1\",\"disks\":[\"bay1\",\"bay2\"]}", "c");
	v = volume_find("c");
	volume_md_name(v, 0, md, sizeof(md));
	grow_disks(2 * GIB, 3);
	ck_assert_int_eq(sys->md_sync(md, &req), 0);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"c\"}"), JOB_FAILED);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_EXPANDING);
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	volume_check_states();
	a = unit_call(srv, &root, "volume.repair", "{\"name\":\"c\",\"disk\":\"sdc\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_REFUSED);
	ck_assert_ptr_nonnull(strstr(unit_err_msg(a), "grow to finish"));
	json_object_put(a);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_EXPANDING);
	/* The member back, the next start finishes the grow. */
	sim_push_disk("sdb");
	reboot();
	v = volume_find("c");
	ck_assert_ptr_nonnull(v);
	volume_check_states();
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->assembled, 1);
	ck_assert_uint_gt(unit_raidd_dm_size("c"), GIB);
}
END_TEST


/* ---- SHR: bigger disks replace smaller ones, and the room above becomes a tier ---- */

#define SHR_CUTS	80

/* Every array of v recovers to its end. */
static void
recover_all(const struct volume *v)
{
	char md[SYS_NAME_MAX];

	for (int t = 0; t < v->label.ntiers; t++) {
		volume_md_name(v, t, md, sizeof(md));
		sim_md_recover(md, UINT64_MAX / 2);
	}
}

/* A blank disk new of size (serial NEW<bay>) in bay; volume.repair puts it in vol. */
static void
repair_with(const char *vol, int bay, const char *new, uint64_t size)
{
	struct json_object *a, *r, *id;
	char path[128], serial[16], params[128];
	struct job *j;

	snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", bay, bay);
	snprintf(serial, sizeof(serial), "NEW%d", bay);
	sim_add_disk(new, size, serial, path);
	disk_refresh(0);
	snprintf(params, sizeof(params), "{\"name\":\"%s\",\"disk\":\"%s\"}", vol, new);
	a = unit_call(srv, &root, "volume.repair", params);
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	j = job_find((unsigned)json_object_get_int(id));
	json_object_put(a);
	for (int i = 0; i < 2000 && job_state(j) == JOB_RUNNING; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		recover_all(volume_find(vol));
	}
	ck_assert_int_eq(job_state(j), JOB_DONE);
	recover_all(volume_find(vol));
	volume_check_states();
	ck_assert_int_eq(volume_find(vol)->state, VOL_CLEAN);
}

/* The disk in bay is pulled; a blank one of size (serial NEW<bay>) takes its place. */
static void
replace(const char *vol, int bay, const char *old, const char *new, uint64_t size)
{
	sim_pull_disk(old);
	disk_refresh(1);
	volume_scan();
	volume_check_states();
	repair_with(vol, bay, new, size);
}

/* A 4 x 1 GiB SHR "s" with data; bays 1..n get 2 GiB disks (sde ...), one at a time. */
static uint64_t
shr_replaced(int n)
{
	static const uint64_t sizes[4] = { GIB, GIB, GIB, GIB };
	static const char *const old[] = { "sda", "sdb", "sdc" }, *const new[] = { "sde",
	    "sdf", "sdg" };
	uint64_t was;

	teardown();
	srv = unit_raidd_setup(unit_a, sizes, 4);
	repair_set_poll(0.0001);
	was = make("{\"name\":\"s\",\"level\":\"shr\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"]}", "s");
	ck_assert_int_eq(volume_find("s")->label.ntiers, 1);
	for (int i = 0; i < n; i++)
		replace("s", i + 1, old[i], new[i], 2 * GIB);
	/* A replacement's room above the volume's band is left free. */
	ck_assert_uint_eq(volume_find("s")->label.size, was);
	return was;
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

/* Tier t's array as mdadm would judge it: level, members, clean, its label's uuid. */
static void
check_new_tier(const struct volume *v, int t, const char *level, int n)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	struct mdsb sb;

	volume_md_name(v, t, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, level);
	ck_assert_int_eq(st.raid_disks, n);
	ck_assert_int_eq(st.degraded, 0);
	ck_assert_uint_eq(st.size, v->label.tier[t].tier_size);
	for (int i = 0; i < st.nmembers; i++) {
		ck_assert_int_eq(member_read_sb(st.member[i].dev, &sb), 0);
		ck_assert_mem_eq(sb.set_uuid, v->label.tier[t].array_uuid, 16);
	}
}

/* Bays 1-3 of four replaced by disks twice as big: a raid5 of three on the room above. */
START_TEST(shr_new_tier_after_replacements)
{
	static uint8_t guid[PLAN_MAX_DISKS][PLAN_MAX_TIERS][16];
	uint64_t was = shr_replaced(3), want;
	struct volume *v;

	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	want = v->label.size;
	ck_assert_int_eq(v->label.ntiers, 2);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.intent.covered, 0);
	/* About 2 x 1 GiB more (md's data offset aside). */
	ck_assert_uint_gt(want, was + 2 * (GIB - 64 * MIB));
	check_shr_rule(v);
	check_new_tier(v, 1, "raid5", 3);
	check_grown("s", was, want);
	disk_refresh(0);
	save_guids("s", guid);
	check_guids("s", guid);
	reboot();
	v = volume_find("s");
	check_grown("s", was, want);
	check_new_tier(v, 1, "raid5", 3);
	check_guids("s", guid);
	refused("{\"name\":\"s\"}", NAS_ERR_INVALID, "nothing to grow");
}
END_TEST

/* Two bays replaced: the room above them becomes a mirror. */
START_TEST(shr_new_mirror)
{
	uint64_t was = shr_replaced(2), want;
	struct volume *v;

	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	want = v->label.size;
	ck_assert_int_eq(v->label.ntiers, 2);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID1);
	ck_assert_uint_gt(want, was + GIB - 64 * MIB);
	check_shr_rule(v);
	check_new_tier(v, 1, "raid1", 2);
	check_grown("s", was, want);
	reboot();
	check_grown("s", was, want);
}
END_TEST

/*
 * Issue 9's volume: three 1 GiB disks swapped one at a time for 2 GiB
 * ones, the mirror grown after the second; *was the size before it,
 * returns the size after.
 */
static uint64_t
shr_third_swapped(uint64_t *was)
{
	static const uint64_t sizes[3] = { GIB, GIB, GIB };
	struct volume *v;
	uint64_t mirrored;

	teardown();
	srv = unit_raidd_setup(unit_a, sizes, 3);
	repair_set_poll(0.0001);
	*was = make("{\"name\":\"s\",\"level\":\"shr\","
	    "\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}", "s");
	replace("s", 1, "sda", "sde", 2 * GIB);
	replace("s", 2, "sdb", "sdf", 2 * GIB);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	mirrored = v->label.size;
	ck_assert_int_eq(v->label.ntiers, 2);
	check_new_tier(v, 1, "raid1", 2);
	check_grown("s", *was, mirrored);
	replace("s", 3, "sdc", "sdg", 2 * GIB);
	return mirrored;
}


/*
 * A join's first label (Decision 133), as a later raidd writes it: member
 * 3's room (sdg) takes tier 2's last role, its own label its role, band
 * and GUIDs there; v keeps what the disks now carry.
 */
static void
write_join_label(struct volume *v)
{
	static uint8_t slot[LABEL_SLOT_SIZE];
	struct label was = v->label, own;
	char e[256];

	v->label.tier[1].member[2] = 2;
	v->label.tier[1].nmembers = 3;
	v->label.intent.op = LABEL_OP_ADDING;
	v->label.intent.disk = 2;
	v->label.intent.covered = 1U << 1;
	v->label.intent.target = was.generation + 4;
	ck_assert_msg(label_change(v, ~(1U << 2), &was, e, sizeof(e)) == 0, "%s", e);
	label_for_member(v, 2, &own);
	own.tier[1].role = 2;
	own.tier[1].start = v->mlabel[0].tier[1].start;
	own.tier[1].size = v->mlabel[0].tier[1].size;
	ck_assert_int_eq(label_tier_guids(&own.tier[1]), 0);
	ck_assert_msg(label_encode(&own, slot, sizeof(slot), e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(sys->write_at("sdg", v->next_slot[2] ? LABEL_SLOT1 : LABEL_SLOT0,
	    slot, sizeof(slot)), 0);
	v->mlabel[2] = own;
	v->next_slot[2] ^= 1;
}

/*
 * A join's partition is added where the joiner's label says and zeroed
 * where its plan says (plan-grow's, not the labels'): grow_part_new
 * refuses when the two bands differ, before anything is written.
 */
START_TEST(part_new_band_is_the_plans)
{
	static const uint8_t mark[8] = "stale!!";
	struct volume *v;
	struct plan p;
	struct plan_tier bad;
	char e[256], dev[SYS_NAME_MAX];
	uint8_t buf[sizeof(mark)];
	uint64_t start, was;

	shr_third_swapped(&was);
	v = volume_find("s");
	write_join_label(v);
	ck_assert_msg(volume_plan_labels(v, &p, e, sizeof(e)) == 0, "%s", e);
	start = v->mlabel[2].tier[1].start;
	ck_assert_int_eq(sys->write_at("sdg", start, mark, sizeof(mark)), 0);
	bad = p.tier[1];
	ck_assert_int_eq(bad.part[2].disk, 2);
	bad.part[2].start += MIB;
	ck_assert_int_eq(grow_part_new(v, 2, 1, &bad, e, sizeof(e)), -1);
	ck_assert_msg(strstr(e, "is not the plan's"), "%s", e);
	ck_assert_int_eq(sys->part_dev("sdg", start, dev, sizeof(dev)), -1);
	ck_assert_int_eq(sys->part_dev("sdg", start + MIB, dev, sizeof(dev)), -1);
	ck_assert_int_eq(sys->read_at("sdg", start, buf, sizeof(buf)), 0);
	ck_assert_mem_eq(buf, mark, sizeof(mark));
	ck_assert_msg(grow_part_new(v, 2, 1, &p.tier[1], e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(sys->part_dev("sdg", start, dev, sizeof(dev)), 0);
	ck_assert_int_eq(sys->read_at("sdg", start, buf, sizeof(buf)), 0);
	ck_assert_mem_ne(buf, mark, sizeof(mark));
}
END_TEST

/*
 * A join's plan from its labels (Decision 133): with member 3 listed in
 * tier 2 by the join's first label, add_join_replan gives what plan_grow
 * gave from the labels before it (tier 2 raid5 of three, sdg's band in
 * role 2, byte for byte); labels naming another joiner, covering a tier
 * the joiner serves already, or holding no join are refused.
 */
START_TEST(join_replan_is_plan_grow)
{
	static struct plan before, after;
	static struct plan_change c;
	uint64_t size[PLAN_MAX_DISKS], was;
	struct volume *v;
	char e[256];

	shr_third_swapped(&was);
	v = volume_find("s");
	ck_assert_msg(volume_plan(v, &before, e, sizeof(e)) == 0, "%s", e);
	for (int m = 0; m < v->label.ndisks; m++)
		size[m] = disk_find(v->disk[m])->sys.size;
	ck_assert_msg(plan_grow(&before, size, &c, e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(c.after.tier[1].nmembers, 3);
	ck_assert_int_eq(c.after.tier[1].part[2].disk, 2);
	write_join_label(v);
	ck_assert_msg(add_join_replan(v, &after, e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(after.ntiers, c.after.ntiers);
	ck_assert_uint_eq(after.size, c.after.size);
	ck_assert_int_eq(after.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(after.tier[1].chunk, PLAN_TAKEOVER_CHUNK);
	ck_assert_int_eq(after.tier[1].part[2].disk, 2);
	ck_assert_uint_eq(after.tier[1].part[2].start, v->mlabel[2].tier[1].start);
	ck_assert_uint_eq(after.tier[1].part[2].size, v->mlabel[2].tier[1].size);
	ck_assert_mem_eq(&after, &c.after, sizeof(after));
	/* Another joiner named than the tier lists: no join is planned. */
	v->label.intent.disk = 1;
	ck_assert_int_eq(add_join_replan(v, &after, e, sizeof(e)), -1);
	/* A tier covered that the joiner serves already: no plan of a join. */
	v->label.intent.disk = 2;
	v->label.intent.covered = 3;
	ck_assert_int_eq(add_join_replan(v, &after, e, sizeof(e)), -1);
	v->label.intent.covered = 2;
	v->label.intent.disk = 2;
	v->label.intent.op = LABEL_OP_NONE;
	ck_assert_int_eq(add_join_replan(v, &after, e, sizeof(e)), -1);
}
END_TEST

static uint64_t gpt_last(const char *, uint64_t);

/*
 * The join's first steps as a later raidd takes them: its labels, sdg's
 * partition in tier 2's band, that partition a spare in tier 2's array.
 * Returns the band's start.
 */
static uint64_t
join_spare_added(struct volume *v)
{
	struct plan p;
	char e[256];

	write_join_label(v);
	ck_assert_msg(volume_plan_labels(v, &p, e, sizeof(e)) == 0, "%s", e);
	ck_assert_msg(grow_part_new(v, 2, 1, &p.tier[1], e, sizeof(e)) == 0, "%s", e);
	ck_assert_msg(repair_member_join(v, 2, 1, -1, e, sizeof(e)) == 0, "%s", e);
	return v->mlabel[2].tier[1].start;
}

/* Tier 2 is the mirror of two it was, sdg's band free again, the volume as grown. */
static void
check_join_undone(uint64_t start, uint64_t was, uint64_t mirrored)
{
	struct volume *v = volume_find("s");
	char dev[SYS_NAME_MAX];

	ck_assert_msg(!v->inconsistent && v->assembled, "%s", v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(v->mlabel[2].tier[1].role, LABEL_NO_ROLE);
	for (int m = 0; m < 3; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	ck_assert_int_eq(sys->part_dev("sdg", start, dev, sizeof(dev)), -1);
	ck_assert_uint_eq(gpt_last("sdg", start), 0);
	check_new_tier(v, 1, "raid1", 2);
	check_grown("s", was, mirrored);
}

/*
 * A join md never began, undone (Decision 133): sdg's spare leaves tier
 * 2's array, its partition the disk (the kernel refuses while md holds
 * it), then the labels drop it; the volume is the grown mirror again,
 * after a reboot too.
 */
START_TEST(join_rolled_back_before_md_began)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], e[256];
	uint64_t was, mirrored, start;
	struct volume *v;

	mirrored = shr_third_swapped(&was);
	v = volume_find("s");
	start = join_spare_added(v);
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.nmembers, 3);
	ck_assert_msg(add_join_roll_back(v, e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.nmembers, 2);
	check_join_undone(start, was, mirrored);
	reboot();
	check_join_undone(start, was, mirrored);
}
END_TEST

/* Once md began a covered tier (took it over as raid5), the join only goes on. */
START_TEST(join_roll_back_refused_once_md_began)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX], e[256];
	uint64_t was, start, gen;
	struct volume *v;

	shr_third_swapped(&was);
	v = volume_find("s");
	start = join_spare_added(v);
	gen = v->label.generation;
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_set_level(md, "raid5"), 0);
	ck_assert_int_eq(add_join_roll_back(v, e, sizeof(e)), -1);
	ck_assert_msg(strstr(e, "md has begun tier 2's join"), "%s", e);
	ck_assert_uint_eq(v->label.generation, gen);
	ck_assert_int_eq(v->label.tier[1].nmembers, 3);
	ck_assert_int_eq(sys->part_dev("sdg", start, dev, sizeof(dev)), 0);
}
END_TEST

/*
 * The power goes after each step of the roll back: the start rolls the
 * join back again (md never began), doing what is left, or, once one
 * label took it, finishes it (the members behind are the join undone).
 * Either way the volume is the grown mirror, sdg's band free.
 */
#define JOIN_UNDO_CUTS	8
START_TEST(power_cut_during_join_roll_back)
{
	uint64_t was, mirrored, start;
	struct volume *v;
	char e[256];
	int rc;

	mirrored = shr_third_swapped(&was);
	v = volume_find("s");
	start = join_spare_added(v);
	sim_fail_after(_i);
	rc = add_join_roll_back(v, e, sizeof(e));
	sim_fail_after(-1);
	if (_i == JOIN_UNDO_CUTS - 1)
		ck_assert_msg(rc == 0, "%s: more steps than cuts", e);
	reboot();
	check_join_undone(start, was, mirrored);
}
END_TEST

/* The third swap's plan: plan_grow from the volume, the joiner sdg in tier 2. */
static void
join_plan(struct volume *v, struct plan_change *c)
{
	static struct plan before;
	uint64_t size[PLAN_MAX_DISKS];
	char e[256];

	ck_assert_msg(volume_plan(v, &before, e, sizeof(e)) == 0, "%s", e);
	for (int m = 0; m < v->label.ndisks; m++)
		size[m] = disk_find(v->disk[m])->sys.size;
	ck_assert_msg(plan_grow(&before, size, c, e, sizeof(e)) == 0, "%s", e);
}

static char join_error[512];

/* The loop until no job runs, md's reshapes moving on as they would. */
static void
run_reshaping(void)
{
	char md[SYS_NAME_MAX];

	add_set_poll(0);
	for (int i = 0; i < 2000 && job_running_count() > 0; i++) {
		const struct volume *v = volume_find("s");

		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; v && t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_reshape_step(md, 1 << 17);
		}
	}
	ck_assert_int_eq(job_running_count(), 0);
}

/* reboot(), md's reshapes moving on while a job carried on runs. */
static void
reboot_reshaping(void)
{
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
	run_reshaping();
}

/* The join's job (add_join_start) run until it ends; its final state, join_error. */
static enum job_state
join_run(struct volume *v)
{
	static struct plan_change c;
	struct json_object *d, *error, *msg;
	struct job *j;
	unsigned id;
	char e[256];

	join_plan(v, &c);
	j = add_join_start(v, &c, NULL, e, sizeof(e));
	ck_assert_msg(j != NULL, "%s", e);
	id = job_id(j);
	run_reshaping();
	join_error[0] = '\0';
	d = job_describe(job_find(id));
	if (json_object_object_get_ex(d, "error", &error) &&
	    json_object_object_get_ex(error, "message", &msg))
		snprintf(join_error, sizeof(join_error), "%s", json_object_get_string(msg));
	json_object_put(d);
	return job_state(job_find(id));
}

/* sdg's tier 2 partition is in md's tier 2 array: 1 a spare, 0 not at all. */
static int
sdg_spare_in_tier2(const struct volume *v)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	if (sys->part_dev("sdg", v->mlabel[2].tier[1].start, dev, sizeof(dev)) == -1)
		return 0;
	for (int i = 0; i < st.nmembers; i++)
		if (strcmp(st.member[i].dev, dev) == 0) {
			ck_assert_int_lt(st.member[i].slot, 0);
			return 1;
		}
	return 0;
}

/* Steps before the cut; then sdg's spare in tier 2 as the power goes. */
static int cut_left, cut_spare;

static void
spare_at_cut(void)
{
	if (cut_left-- > 0)
		sim_before_step(spare_at_cut);
	else
		cut_spare = sdg_spare_in_tier2(volume_find("s"));
}

/* The join's writes before md is asked: the reshape step's label write is the next. */
#define JOIN_MD_OPS	10
/* A cut after each of the join's writes (24), md's included, and one run whole. */
#define JOIN_ALL_CUTS	26

/*
 * The join's steps before md (Decision 133): the others' labels list
 * sdg in tier 2's last role, sdg's own label at that generation gives it
 * role 2, the plan's band and new GUIDs; its partition is there, its
 * band zeroed (a grow's new partition: the disk's past may be in it),
 * and a spare of tier 2's array only.  The power goes at the reshape
 * step's first write: md was not asked.  The labels replan to the plan
 * byte for byte, and the roll back undoes it all, after a reboot too.
 */
START_TEST(join_steps_before_md)
{
	static const uint8_t mark[8] = "stale!!";
	static struct plan after;
	uint8_t buf[sizeof(mark)];
	static struct plan_change c;
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX], e[256];
	uint64_t was, mirrored, start;
	struct volume *v;

	mirrored = shr_third_swapped(&was);
	v = volume_find("s");
	join_plan(v, &c);
	/* sdg's past in the band: zeroed as a grow's new partition's */
	start = c.after.tier[1].part[2].start;
	ck_assert_int_eq(sys->write_at("sdg", start, mark, sizeof(mark)), 0);
	sim_fail_after(JOIN_MD_OPS);
	cut_left = JOIN_MD_OPS;
	sim_before_step(spare_at_cut);
	ck_assert_int_eq(join_run(v), JOB_FAILED);
	sim_fail_after(-1);
	ck_assert_msg(strstr(join_error, "while starting the reshape"), "%s", join_error);
	/* At the cut; the job's undo then stopped at its first write. */
	ck_assert_int_eq(cut_spare, 1);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(v->label.intent.disk, 2);
	ck_assert_uint_eq(v->label.intent.covered, 1U << 1);
	ck_assert_int_eq(v->label.tier[1].nmembers, 3);
	ck_assert_int_eq(v->label.tier[1].member[2], 2);
	ck_assert_int_eq(v->label.tier[0].nmembers, 3);
	for (int m = 0; m < 3; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	ck_assert_int_eq(v->mlabel[2].tier[1].role, 2);
	ck_assert_uint_eq(v->mlabel[2].tier[1].start, c.after.tier[1].part[2].start);
	ck_assert_uint_eq(v->mlabel[2].tier[1].size, c.after.tier[1].part[2].size);
	ck_assert(memcmp(v->mlabel[2].tier[1].part_guid, v->mlabel[0].tier[1].part_guid, 16));
	ck_assert_msg(add_join_replan(v, &after, e, sizeof(e)) == 0, "%s", e);
	ck_assert_mem_eq(&after, &c.after, sizeof(after));
	ck_assert_int_eq(sys->part_dev("sdg", start, dev, sizeof(dev)), 0);
	ck_assert_int_eq(sys->read_at("sdg", start, buf, sizeof(buf)), 0);
	ck_assert_mem_ne(buf, mark, sizeof(mark));
	/* md was not asked: tier 2 still a raid1 of two, tier 1 as it was. */
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid1");
	ck_assert_int_eq(st.raid_disks, 2);
	volume_md_name(v, 0, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.nmembers, 3);
	ck_assert_msg(add_join_roll_back(v, e, sizeof(e)) == 0, "%s", e);
	check_join_undone(start, was, mirrored);
	reboot();
	check_join_undone(start, was, mirrored);
}
END_TEST

static uint64_t tier1_offset(const struct volume *);

/*
 * The joined volume: tier 2 a raid5 of n with each joiner's new
 * partition in its role (member m in role m from role 2 on: sdg, sdh),
 * the takeover's chunk, tier 1 the raid5 of every disk it was (not
 * reshaped: its data offset kept), the labels committed at one
 * generation with the plan's sizes and kinds, the size plan_grow's,
 * every byte written before the join still there.
 */
static void
check_tier2_joined(int n, uint64_t want, uint64_t data, uint64_t offset0)
{
	struct volume *v = volume_find("s");
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	int found;

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN && v->assembled, "state %s: %s",
	    volume_state_name(v->state), v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_uint_eq(v->label.intent.covered, 0);
	ck_assert_int_eq(v->label.level, LEVEL_SHR);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[1].chunk, PLAN_TAKEOVER_CHUNK);
	ck_assert_int_eq(v->label.tier[1].nmembers, n);
	ck_assert_uint_eq(v->label.size, want);
	check_shr_rule(v);
	check_new_tier(v, 0, "raid5", v->label.ndisks);
	check_new_tier(v, 1, "raid5", n);
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	for (int m = 2; m < n; m++) {
		ck_assert_int_eq(v->label.tier[1].member[m], m);
		ck_assert_int_eq(v->mlabel[m].tier[1].role, m);
		ck_assert_int_eq(sys->part_dev(v->disk[m], v->mlabel[m].tier[1].start, dev,
		    sizeof(dev)), 0);
		found = 0;
		for (int i = 0; i < st.nmembers; i++)
			found += strcmp(st.member[i].dev, dev) == 0 && st.member[i].slot == m;
		ck_assert_int_eq(found, 1);
	}
	ck_assert_uint_eq(tier1_offset(v), offset0);
	check_grown("s", 0, want);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, data, 0);
}

/* Issue 9's third swap joined: tier 2 a raid5 of three with sdg in role 2. */
static void
check_joined(uint64_t want, uint64_t data, uint64_t offset0)
{
	check_tier2_joined(3, want, data, offset0);
}

/* Tier 1's data offset, md's superblock on its first member. */
static uint64_t
tier1_offset(const struct volume *v)
{
	char md[SYS_NAME_MAX];
	struct sys_md_status st;
	struct mdsb sb;

	volume_md_name(v, 0, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(member_read_sb(st.member[0].dev, &sb), 0);
	return sb.data_offset;
}

/*
 * Issue 9's volume after its third swap, every byte of the grown mirror's
 * volume written; *off0 tier 1's data offset, c the join's plan.
 * Returns the size before the join.
 */
static uint64_t
join_ready(uint64_t *was, uint64_t *off0, struct plan_change *c)
{
	char dm[SYS_NAME_MAX];
	uint64_t mirrored = shr_third_swapped(was);
	struct volume *v = volume_find("s");

	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, mirrored, 1);
	*off0 = tier1_offset(v);
	join_plan(v, c);
	return mirrored;
}

/*
 * Issue 9's third swap joined (Decisions 125, 133): md takes tier 2's
 * mirror over as raid5 and reshapes it onto sdg's new partition; tier 1
 * is not asked.  The volume ends at plan_grow's size, clean, every byte
 * of the grown mirror's volume still there, after a reboot too, with
 * every member in every tier.
 */
START_TEST(join_runs_to_the_end)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;
	int ops;

	mirrored = join_ready(&was, &off0, &c);
	ck_assert_int_eq(c.after.ntiers, 2);
	ck_assert_uint_gt(c.after.size, mirrored);
	ops = sim_ops();
	ck_assert_int_eq(join_run(volume_find("s")), JOB_DONE);
	/* the cut loop below reaches every write and runs one whole */
	ck_assert_int_lt(sim_ops() - ops, JOIN_ALL_CUTS - 1);
	check_joined(c.after.size, mirrored, off0);
	reboot();
	check_joined(c.after.size, mirrored, off0);
	refused("{\"name\":\"s\"}", NAS_ERR_INVALID, "nothing to grow");
}
END_TEST

/* volume.grow on "s" started a job: run to its end, md reshaping; its state. */
static enum job_state
grow_run(uint64_t want)
{
	struct json_object *a = unit_call(srv, &root, "volume.grow", "{\"name\":\"s\"}"), *r, *o;
	unsigned id;

	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &o);
	id = (unsigned)json_object_get_int(o);
	json_object_object_get_ex(r, "size_bytes", &o);
	ck_assert_uint_eq((uint64_t)json_object_get_int64(o), want);
	json_object_put(a);
	run_reshaping();
	return job_state(job_find(id));
}

/*
 * Issue 9 (Decision 125): an SHR of three 1 GiB disks, bays swapped one
 * at a time for 2 GiB ones; after two, the room above is a mirror;
 * after the third, volume.grow joins the third disk's room to it (md
 * takeover to raid5, reshape to three), add.c's join job.
 */
START_TEST(shr_join_by_volume_grow)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;

	mirrored = join_ready(&was, &off0, &c);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	check_joined(c.after.size, mirrored, off0);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
	refused("{\"name\":\"s\"}", NAS_ERR_INVALID, "nothing to grow");
}
END_TEST

/*
 * A join stopped on a running volume, volume.grow asked again: one md
 * never began is undone (asked once more, it joins), one md began (the
 * tier taken over, the reshape refused) is carried on to the end.
 */
START_TEST(join_stopped_carried_on_by_volume_grow)
{
	static const int cut[2] = { JOIN_MD_OPS, JOIN_MD_OPS + 4 };
	static struct plan_change c;
	uint64_t was, mirrored, off0;
	struct json_object *a;
	struct volume *v;

	for (int i = 0; i < 2; i++) {
		mirrored = join_ready(&was, &off0, &c);
		v = volume_find("s");
		sim_fail_after(cut[i]);
		ck_assert_int_eq(join_run(v), JOB_FAILED);
		sim_fail_after(-1);
		ck_assert_msg(label_is_join(&v->label), "cut %d: %s", cut[i], join_error);
		/* volume.add_disk refuses a join: repair names volume.grow */
		a = unit_call(srv, &root, "volume.repair", "{\"name\":\"s\",\"disk\":\"sdg\"}");
		ck_assert_int_eq(unit_err_code(a), NAS_ERR_REFUSED);
		ck_assert_msg(strstr(unit_err_msg(a), "volume.grow carries it on"), "%s",
		    unit_err_msg(a));
		json_object_put(a);
		if (i == 0) {
			a = unit_call(srv, &root, "volume.grow", "{\"name\":\"s\"}");
			ck_assert_int_eq(unit_err_code(a), NAS_ERR_FAILED);
			ck_assert_msg(strstr(unit_err_msg(a), "was undone"), "%s", unit_err_msg(a));
			json_object_put(a);
			ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
			ck_assert_int_eq(v->label.tier[1].nmembers, 2);
			ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
		} else
			ck_assert_int_eq(grow_run(v->label.size), JOB_DONE);
		check_joined(c.after.size, mirrored, off0);
		reboot_reshaping();
		check_joined(c.after.size, mirrored, off0);
	}
}
END_TEST

/* add_join_start refuses c, with want, before anything is written. */
static void
join_start_refused(struct volume *v, const struct plan_change *c, const char *want)
{
	uint64_t gen = v->label.generation;
	char e[256];

	ck_assert_ptr_null(add_join_start(v, c, NULL, e, sizeof(e)));
	ck_assert_msg(strstr(e, want), "%s lacks %s", e, want);
	ck_assert_ptr_null(v->job);
	ck_assert_uint_eq(v->label.generation, gen);
	for (int m = 0; m < 3; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, gen);
}

/*
 * A join's job is one old member's room taking one role in each joined
 * tier, and nothing else: a plan handed to add_join_start with two rooms
 * joining (volume.grow hands it one join at a time, add_join_first), a
 * tier that would also grow in place, or no join are refused before
 * anything is written.
 */
START_TEST(join_start_refusals)
{
	static struct plan_change c, bad;
	struct volume *v;
	uint64_t was;

	shr_third_swapped(&was);
	v = volume_find("s");
	join_plan(v, &c);
	bad = c;
	bad.after.tier[1].part[3] = bad.after.tier[1].part[2];
	bad.after.tier[1].part[3].disk = 0;
	bad.after.tier[1].nmembers = 4;
	join_start_refused(v, &bad, "one join at a time");
	bad = c;
	bad.what[0] |= PLAN_CH_PART;
	join_start_refused(v, &bad, "tier 1 changes besides the join");
	bad = c;
	bad.after.tier[1] = bad.before.tier[1];
	bad.what[1] = 0;
	join_start_refused(v, &bad, "no member's room joins");
}
END_TEST

/*
 * Decision 125's finding 1: an old member lost before the join's spare
 * is added.  md would rebuild it onto sdg's new partition at once,
 * against the labels, and sdg, its superblock then giving it another
 * role, would be judged foreign.  The join stops before md gets the
 * spare; tier 2's array holds no partition of sdg's.
 */
START_TEST(join_spare_waits_for_whole_arrays)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct volume *v;
	uint64_t was;

	shr_third_swapped(&was);
	v = volume_find("s");
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->part_dev(v->disk[0], v->mlabel[0].tier[1].start, dev,
	    sizeof(dev)), 0);
	ck_assert_int_eq(sys->md_fail(md, dev), 0);
	ck_assert_int_eq(join_run(v), JOB_FAILED);
	ck_assert_msg(strstr(join_error, "md would rebuild it onto member 3's"), "%s",
	    join_error);
	ck_assert_int_eq(sdg_spare_in_tier2(v), 0);
}
END_TEST


/*
 * After a cut in a join and a start: every member present serves every
 * tier its label gives it, in md (its disk kept, its partition in the
 * array), and the volume's bytes are there.
 */
static void
check_members_kept(int cut, uint64_t data)
{
	struct volume *v = volume_find("s");
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(!v->inconsistent && v->assembled, "cut %d: %s", cut, v->problem);
	ck_assert_int_ge(v->label.ndisks, 3);
	for (int m = 0; m < v->label.ndisks; m++) {
		ck_assert_msg(v->disk[m][0], "cut %d: member %d dropped", cut, m + 1);
		for (int t = 0; t < v->label.ntiers; t++) {
			int in = 0;

			if (v->mlabel[m].tier[t].role == LABEL_NO_ROLE)
				continue;
			volume_md_name(v, t, md, sizeof(md));
			ck_assert_int_eq(sys->md_status(md, &st), 0);
			ck_assert_int_eq(sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start, dev,
			    sizeof(dev)), 0);
			for (int i = 0; i < st.nmembers; i++)
				in += strcmp(st.member[i].dev, dev) == 0 &&
				    st.member[i].slot == v->mlabel[m].tier[t].role &&
				    !strstr(st.member[i].state, "faulty");
			ck_assert_msg(in == 1, "cut %d: member %d not in tier %d's role %d", cut,
			    m + 1, t + 1, v->mlabel[m].tier[t].role);
		}
	}
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, data, 0);
}

/*
 * The power goes after each write of the join, md's takeover and
 * reshape included, and the start decides: md never began a joined
 * tier, the join is undone (the grown mirror, sdg's band free); once md
 * began, it is carried on to the end (tier 2 raid5 of three).  Every
 * start keeps every member in every tier it serves and every byte
 * written before the join; so does the start after that.
 */
START_TEST(power_cut_during_join)
{
	static struct plan_change c;
	uint64_t was, mirrored, start, off0;
	struct volume *v;
	enum job_state js;

	mirrored = join_ready(&was, &off0, &c);
	start = c.after.tier[1].part[2].start;
	sim_fail_after(_i);
	js = join_run(volume_find("s"));
	sim_fail_after(-1);
	if (_i == JOIN_ALL_CUTS - 1)
		ck_assert_msg(js == JOB_DONE, "more writes than cuts: %s", join_error);
	for (int boot = 0; boot < 2; boot++) {
		reboot_reshaping();
		check_members_kept(_i, mirrored);
		v = volume_find("s");
		if (v->label.tier[1].nmembers == 2)
			check_join_undone(start, was, mirrored);
		else
			check_joined(c.after.size, mirrored, off0);
	}
}
END_TEST

/*
 * A join md never began, found at a start (its labels, sdg's partition a
 * spare in tier 2's array): undone before assembly, the grown mirror
 * whole, sdg's band free, after a second start too.
 */
START_TEST(join_undone_at_start_before_md_began)
{
	uint64_t was, mirrored, start;

	mirrored = shr_third_swapped(&was);
	start = join_spare_added(volume_find("s"));
	reboot();
	check_join_undone(start, was, mirrored);
	reboot();
	check_join_undone(start, was, mirrored);
}
END_TEST

/* sdg pulled, then boot: the start undid the join md never began without it. */
static struct volume *
undone_with_sdg_away(void (*boot)(void))
{
	struct volume *v;

	sim_pull_disk("sdg");
	boot();
	v = volume_find("s");
	ck_assert_msg(v->assembled, "%s", v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	return v;
}

/* The third swap's volume, the grown mirror's bytes written: their size; dm its map. */
static uint64_t
third_swap_filled(uint64_t *was, char dm[SYS_NAME_MAX])
{
	uint64_t mirrored = shr_third_swapped(was);

	volume_dm_name("s", dm, SYS_NAME_MAX);
	unit_raidd_pattern(dm, mirrored, 1);
	return mirrored;
}

/*
 * Decision 125's finding 2: the labels say the reshape began, md was
 * never asked (the power went at the takeover), and the joiner is gone.
 * Tier 1, which the join leaves as it is, has its superblocks at its
 * count: that is no sign md began the join.  The start undoes it:
 * tier 2 the mirror of two it was, whole, not a raid5 reshaped without
 * sdg; the data there.
 */
START_TEST(join_cut_joiner_gone_before_md_began)
{
	char md[SYS_NAME_MAX], dm[SYS_NAME_MAX];
	struct sys_md_status st;
	uint64_t was, mirrored;
	struct volume *v;

	mirrored = third_swap_filled(&was, dm);
	v = volume_find("s");
	sim_fail_after(JOIN_MD_OPS + 3);
	ck_assert_int_eq(join_run(v), JOB_FAILED);
	sim_fail_after(-1);
	ck_assert_msg(strstr(join_error, "refused level raid5"), "%s", join_error);
	ck_assert_int_eq(v->label.intent.step, 6);	/* AS_RESHAPE */
	v = undone_with_sdg_away(reboot_reshaping);
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid1");
	ck_assert_int_eq(st.raid_disks, 2);
	ck_assert_int_eq(st.degraded, 0);
	unit_raidd_pattern(dm, mirrored, 0);
}
END_TEST

/*
 * The join's job run until md's reshape of tier 2 is a third done, then
 * the power goes (md's reshape_position in the superblocks).
 */
static void
join_cut_mid_reshape(struct plan_change *c)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], e[256];
	struct volume *v = volume_find("s");
	int i;

	add_set_poll(0);
	ck_assert_msg(add_join_start(v, c, NULL, e, sizeof(e)) != NULL, "%s", e);
	volume_md_name(v, 1, md, sizeof(md));
	for (i = 0; i < 200; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		ck_assert_int_eq(sys->md_status(md, &st), 0);
		if (strcmp(st.sync_action, "reshape") == 0)
			break;
	}
	ck_assert_str_eq(st.sync_action, "reshape");
	sim_md_reshape_step(md, st.sync_total / 3);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.sync_action, "reshape");
	ck_assert_int_eq(job_running_count(), 1);
}

/*
 * Issue 9 on disks that grow in place (virtual disks, LUNs): sda and sdb
 * grown, the mirror made, then sdc grown and joined.  The labels
 * recorded sdc's old size: its own join label gave it a partition past
 * that (label_check: "impossible partition") and the join was undone at
 * once.  Now the join's first labels record the size it planned with,
 * and a start that carries it on from a cut mid-reshape replans from
 * them to the same join; the volume ends at plan_grow's size, after a
 * second start too.
 */
START_TEST(join_of_a_disk_grown_in_place_cut_mid_reshape)
{
	static const uint64_t sizes[3] = { GIB, GIB, GIB };
	static struct plan_change c;
	char dm[SYS_NAME_MAX];
	uint64_t mirrored, off0;
	struct volume *v;

	teardown();
	srv = unit_raidd_setup(unit_a, sizes, 3);
	make("{\"name\":\"s\",\"level\":\"shr\",\"disks\":[\"bay1\",\"bay2\",\"bay3\"]}", "s");
	grow_disks(2 * GIB, 2);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	check_new_tier(v, 1, "raid1", 2);
	mirrored = v->label.size;
	sim_grow_disk("sdc", 2 * GIB);
	disk_refresh(0);
	ck_assert_uint_eq(v->label.member[2].size, GIB);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, mirrored, 1);
	off0 = tier1_offset(v);
	join_plan(v, &c);
	ck_assert_int_eq(c.after.tier[1].nmembers, 3);
	join_cut_mid_reshape(&c);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
	ck_assert_uint_eq(volume_find("s")->label.member[2].size, 2 * GIB);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
}
END_TEST

/*
 * The power goes while md reshapes tier 2 onto sdg: the start carries
 * the join on (md goes on from its reshape_position) to the end.  With
 * sdg gone at the start too, tier 2 is dirty and degraded: md starts it
 * read-only (by its superblocks' raid5: the labels still say raid1) and
 * volume.start force carries the join on; md reshapes on degraded, the
 * join ends with every byte there, sdg a member lost in both tiers.
 */
START_TEST(join_cut_mid_reshape_carried_on)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;
	char dm[SYS_NAME_MAX];
	struct volume *v;

	mirrored = join_ready(&was, &off0, &c);
	join_cut_mid_reshape(&c);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
	check_members_kept(0, mirrored);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);

	mirrored = join_ready(&was, &off0, &c);
	join_cut_mid_reshape(&c);
	sim_pull_disk("sdg");
	reboot_reshaping();
	v = volume_find("s");
	/* Dirty (md was reshaping) and degraded at the cut: read-only, md
	   reshapes no read-only array, the join waits for force (Decision 116). */
	ck_assert_msg(v->assembled, "%s", v->problem);
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, mirrored, 0);
	json_object_put(unit_call_expect(srv, &root, "volume.start",
	    "{\"name\":\"s\",\"force\":true}", 0));
	ck_assert_int_eq(job_running_count(), 1);
	run_reshaping();
	ck_assert_msg(v->label.intent.op == LABEL_OP_NONE, "%s", v->problem);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[1].nmembers, 3);
	ck_assert_uint_eq(v->label.size, c.after.size);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	unit_raidd_pattern(dm, mirrored, 0);
	sim_md_idle(NULL);	/* md marked the arrays clean before the next cut */
	reboot_reshaping();
	v = volume_find("s");
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_uint_eq(unit_raidd_dm_size("s"), c.after.size);
	unit_raidd_pattern(dm, mirrored, 0);
}
END_TEST

/*
 * The power goes right after md took tier 2 over (raid5 of two, sdg's
 * spare in it), at the reshape to three; md had marked its arrays clean.
 */
static void
join_cut_after_takeover(struct volume *v)
{
	sim_fail_after(JOIN_MD_OPS + 4);
	ck_assert_int_eq(join_run(v), JOB_FAILED);
	sim_fail_after(-1);
	ck_assert_msg(strstr(join_error, "reshaping md_s_t2"), "%s", join_error);
	sim_md_idle(NULL);
}

/* Member m's superblock of tier 2 as md left it when the power went before
   md_update_sb reached it after the takeover: raid1, one event behind. */
static void
tier2_sb_raid1_behind(const struct volume *v, int m)
{
	static uint8_t buf[MDSB_BLOCK];
	static struct mdsb sb;
	char dev[SYS_NAME_MAX], err[MDSB_ERRLEN];

	ck_assert_int_eq(sys->part_dev(v->disk[m], v->mlabel[m].tier[1].start, dev,
	    sizeof(dev)), 0);
	ck_assert_int_eq(sys->read_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)), 0);
	ck_assert_int_eq(mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, &sb, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(sb.level, 5);
	sb.level = 1;
	sb.layout = 0;
	sb.chunksize = 0;
	sb.events--;
	ck_assert_msg(mdsb_encode(&sb, buf, sizeof(buf), err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(sys->write_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)), 0);
}

/*
 * Decision 136 for a join: md took tier 2 over, and the power went while
 * it wrote its members' superblocks (_i: sde's or sdf's left at raid1,
 * an event behind), the reshape never asked.  md would assemble either
 * view alone; the start gives the members left behind md's raid5
 * (add_mend_takeover) and carries the join on to the end.
 */
START_TEST(join_takeover_cut_mid_superblocks)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;
	struct volume *v;

	mirrored = join_ready(&was, &off0, &c);
	v = volume_find("s");
	join_cut_after_takeover(v);
	sim_power_cut();
	tier2_sb_raid1_behind(v, _i);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
	check_members_kept(_i, mirrored);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
}
END_TEST

/*
 * md took tier 2 over (raid5 of two, sdg's spare in it) and the power
 * went before the reshape to three was asked (md refused it here: the
 * same superblocks); then sde, an old member of tier 2, is lost.  md
 * must never rebuild sde onto sdg's spare: sdg, its superblock then
 * giving it sde's role, would be judged foreign once sde is back, and
 * dropped from every tier (the volume failed to start).  The start runs
 * the volume degraded with every member it has, sdg kept out of tier
 * 2's array, the join waiting; once sde is back the join is carried on
 * to the end, every member in every tier it serves, every byte there.
 */
START_TEST(join_taken_over_member_lost)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;
	char dm[SYS_NAME_MAX];
	struct volume *v;

	mirrored = join_ready(&was, &off0, &c);
	v = volume_find("s");
	join_cut_after_takeover(v);
	sim_pull_disk("sde");
	reboot_reshaping();
	v = volume_find("s");
	ck_assert_msg(v->assembled && !v->inconsistent, "%s", v->problem);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(sdg_spare_in_tier2(v), 0);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, mirrored, 0);
	unit_raidd_pattern(dm, mirrored, 1);	/* used degraded: sde falls behind */
	sim_md_idle(NULL);
	sim_push_disk("sde");
	/* md rebuilds what it missed first: the job waits for it. */
	unit_raidd_reboot_md("s", 1 << 17, 1 << 17);
	check_members_kept(0, mirrored);
	check_joined(c.after.size, mirrored, off0);
	reboot_reshaping();
	check_members_kept(1, mirrored);
	check_joined(c.after.size, mirrored, off0);
}
END_TEST

/*
 * A join md never began, undone at a start while sdg was away: the labels
 * drop sdg from tier 2, its new partition stays on its disk (no proven
 * descriptor to delete it through).  sdg back, its label is rewritten
 * from the newest (no role in tier 2), and its proof must hold: the
 * leftover partition goes first.  sdg serves tier 1 again, its band is
 * free, every byte there, after a second start too.
 */
START_TEST(join_undone_while_away_partition_gone_on_return)
{
	uint64_t was, mirrored, start;
	char dm[SYS_NAME_MAX];
	struct volume *v;

	mirrored = shr_third_swapped(&was);
	v = volume_find("s");
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, mirrored, 1);
	start = join_spare_added(v);
	sim_md_idle(NULL);
	undone_with_sdg_away(reboot);
	sim_md_idle(NULL);
	sim_push_disk("sdg");
	ck_assert_uint_ne(gpt_last("sdg", start), 0);	/* its partition still there */
	for (int boot = 0; boot < 2; boot++) {
		reboot();
		recover_all(volume_find("s"));	/* sdg missed the writes */
		volume_check_states();
		check_members_kept(boot, mirrored);
		check_join_undone(start, was, mirrored);
		unit_raidd_pattern(dm, mirrored, 0);
	}
}
END_TEST

/*
 * Another array's superblock left in the room above a replacement's
 * partitions (the disk's past): it must not become the new tier's,
 * nor be assembled, nor make the disk fail its proof.
 */
static void
plant_stale(const char *disk)
{
	static uint8_t sb[MDSB_BLOCK];
	const struct volume *v = volume_find("s");
	char dev[SYS_NAME_MAX];
	uint64_t top = v->mlabel[0].tier[0].start + v->mlabel[0].tier[0].size;

	ck_assert_int_eq(sys->part_dev("sdd", v->mlabel[3].tier[0].start, dev, sizeof(dev)), 0);
	ck_assert_int_eq(sys->read_at(dev, MDSB_SUPER_OFFSET * 512ULL, sb, sizeof(sb)), 0);
	ck_assert_int_eq(sys->write_at(disk, top + MDSB_SUPER_OFFSET * 512ULL, sb, sizeof(sb)), 0);
}

START_TEST(shr_stale_superblock_in_band)
{
	uint64_t was = shr_replaced(3), want;
	struct volume *v;

	plant_stale("sde");
	plant_stale("sdg");
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	want = v->label.size;
	check_new_tier(v, 1, "raid5", 3);
	check_grown("s", was, want);
	reboot();
	check_grown("s", was, want);
	check_new_tier(volume_find("s"), 1, "raid5", 3);
}
END_TEST

/* The table and the kernel must show the band free: the simulator refuses as md/BLKPG do. */
START_TEST(part_add_refuses_overlap)
{
	const struct volume *v;
	struct sys_part sp;
	unsigned maj, min;
	int fd;

	shr_replaced(1);
	v = volume_find("s");
	memset(&sp, 0, sizeof(sp));
	sp.start = v->mlabel[0].tier[0].start + v->mlabel[0].tier[0].size - MIB;
	sp.size = 64 * MIB;
	ck_assert_int_ge(fd = sys->dev_open("sde", &maj, &min), 0);
	ck_assert_int_eq(sys->part_add("sde", fd, &sp), -1);
	ck_assert_int_eq(errno, EBUSY);
	sp.start += MIB;
	ck_assert_int_eq(sys->part_add("sde", fd, &sp), 0);
	ck_assert_int_eq(sys->part_add("sde", fd, &sp), 0);	/* there already */
	sp.size += MIB;
	ck_assert_int_eq(sys->part_add("sde", fd, &sp), -1);
	ck_assert_int_eq(errno, EBUSY);
	sys->fd_close(fd);
}
END_TEST

/*
 * part_del as the kernel does it: refused (EBUSY, nothing written) while
 * md holds the partition or a handle is open on it, or when what starts
 * there has another size; else the kernel's partition and then the GPT
 * entry go, and a power cut between leaves the entry for the next call.
 */
START_TEST(part_del_as_the_kernel)
{
	const struct volume *v;
	struct sys_part sp;
	char dev[SYS_NAME_MAX], held[SYS_NAME_MAX];
	unsigned maj, min;
	uint64_t own;
	int fd, pfd;

	shr_replaced(1);
	v = volume_find("s");
	own = v->mlabel[0].tier[0].start;
	memset(&sp, 0, sizeof(sp));
	sp.start = own + v->mlabel[0].tier[0].size;
	sp.size = 64 * MIB;
	memcpy(sp.type, v->mlabel[0].tier[0].part_type, 16);
	ck_assert_int_ge(fd = sys->dev_open("sde", &maj, &min), 0);
	/* md holds sde's member partition: the kernel refuses, nothing changes. */
	ck_assert_int_eq(sys->part_dev("sde", own, held, sizeof(held)), 0);
	ck_assert_int_eq(sys->part_del("sde", fd, own, v->mlabel[0].tier[0].size), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(sys->part_dev("sde", own, dev, sizeof(dev)), 0);
	ck_assert_str_eq(dev, held);
	ck_assert_int_eq(sys->part_add("sde", fd, &sp), 0);
	ck_assert_int_eq(sys->part_dev("sde", sp.start, dev, sizeof(dev)), 0);
	/* Another size there, or a handle open on it: refused. */
	ck_assert_int_eq(sys->part_del("sde", fd, sp.start, sp.size + MIB), -1);
	ck_assert_int_eq(errno, EBUSY);
	/* A band that starts inside one (the kernel's or the table's): refused,
	   as lnx_part_del's places refuse an overlap, not taken for none. */
	ck_assert_int_eq(sys->part_del("sde", fd, sp.start + MIB, sp.size), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(sys->part_dev("sde", sp.start, dev, sizeof(dev)), 0);
	ck_assert_int_ge(pfd = sys->dev_open(dev, &maj, &min), 0);
	ck_assert_int_eq(sys->part_del("sde", fd, sp.start, sp.size), -1);
	ck_assert_int_eq(errno, EBUSY);
	sys->fd_close(pfd);
	/* The power goes after the kernel let go: the entry is left, the band not free. */
	sim_fail_after(1);
	ck_assert_int_eq(sys->part_del("sde", fd, sp.start, sp.size), -1);
	sim_fail_after(-1);
	ck_assert_int_eq(sys->part_dev("sde", sp.start, dev, sizeof(dev)), -1);
	sp.size += MIB;
	ck_assert_int_eq(sys->part_free("sde", fd, &sp), -1);
	sp.size -= MIB;
	ck_assert_int_eq(sys->part_del("sde", fd, sp.start, sp.size), 0);
	sp.size += MIB;
	ck_assert_int_eq(sys->part_free("sde", fd, &sp), 0);
	sp.size -= MIB;
	ck_assert_int_eq(sys->part_del("sde", fd, sp.start, sp.size), 0);	/* gone already */
	sys->fd_close(fd);
}
END_TEST

/* Once every member carries the grow's first label: the new tier's band on sde. */
static int
labels_written(uint64_t *start, uint64_t *size)
{
	struct volume *v = volume_find("s");

	if (v->label.intent.op != LABEL_OP_EXPANDING || v->label.ntiers < 2)
		return 0;
	for (int m = 0; m < v->label.ndisks; m++)
		if (v->mlabel[m].generation != v->label.generation)
			return 0;
	*start = v->mlabel[0].tier[1].start;
	*size = v->mlabel[0].tier[1].size;
	return 1;
}

static uint8_t kdata[4096];

/* The kernel holds a partition over the head of the band above sde's tier, its data there. */
static void
kernel_part_over_band(void)
{
	const struct volume *v = volume_find("s");
	uint64_t top = v->mlabel[0].tier[0].start + v->mlabel[0].tier[0].size;

	memset(kdata, 0x5a, sizeof(kdata));
	sim_kernel_part("sde", 7, top + MIB / 2, 8 * MIB);
	ck_assert_int_eq(sys->write_at("sde", top + MIB / 2, kdata, sizeof(kdata)), 0);
}

/*
 * A partition the kernel still holds in the band, gone from the GPT, is
 * someone's: the band is proven free on both before any byte is zeroed.
 */
START_TEST(shr_band_held_by_the_kernel_not_zeroed)
{
	uint8_t buf[sizeof(kdata)];
	char dev[SYS_NAME_MAX];
	uint64_t start;

	shr_replaced(3);
	kernel_part_over_band();
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_FAILED);
	start = volume_find("s")->mlabel[0].tier[1].start;
	ck_assert_uint_eq(start, volume_find("s")->mlabel[0].tier[0].start +
	    volume_find("s")->mlabel[0].tier[0].size);
	ck_assert_int_eq(sys->read_at("sde", start + MIB / 2, buf, sizeof(buf)), 0);
	ck_assert_mem_eq(buf, kdata, sizeof(buf));
	ck_assert_int_eq(sys->part_dev("sde", start, dev, sizeof(dev)), -1);
}
END_TEST

/* After the labels the kernel holds exactly the band's partition, the GPT no entry. */
static void
kernel_part_is_band(void)
{
	uint64_t start, size;

	if (!labels_written(&start, &size)) {
		sim_before_step(kernel_part_is_band);
		return;
	}
	sim_kernel_part("sde", 7, start, size - MIB);
}

static void
kernel_part_exactly_band(void)
{
	uint64_t start, size;

	if (!labels_written(&start, &size)) {
		sim_before_step(kernel_part_exactly_band);
		return;
	}
	sim_kernel_part("sde", 7, start, size);
}

/* The GPT entry of disk that starts at start: its last LBA, 0 when none. */
static uint64_t
gpt_last(const char *disk, uint64_t start)
{
	static uint8_t ent[128 * 128];
	uint64_t f, l;

	ck_assert_int_eq(sys->read_at(disk, 1024, ent, sizeof(ent)), 0);
	for (int i = 0; i < 128; i++) {
		memcpy(&f, ent + i * 128 + 32, 8);
		memcpy(&l, ent + i * 128 + 40, 8);
		if (f == start / 512)
			return l;
	}
	return 0;
}

/*
 * A kernel partition at the band's start is taken only when it is the
 * band exactly (start and size), and the GPT entry is then written too.
 */
START_TEST(shr_band_kernel_part_must_be_exact)
{
	uint64_t was = shr_replaced(3), want, start, size;
	struct volume *v;

	sim_before_step(kernel_part_is_band);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_FAILED);
	v = volume_find("s");
	start = v->mlabel[0].tier[1].start;
	size = v->mlabel[0].tier[1].size;
	ck_assert_uint_eq(gpt_last("sde", start), 0);
	was = shr_replaced(3);
	sim_before_step(kernel_part_exactly_band);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	want = v->label.size;
	ck_assert_uint_eq(gpt_last("sde", start), (start + size) / 512 - 1);
	check_grown("s", was, want);
	check_new_tier(v, 1, "raid5", 3);
}
END_TEST

/* md claims its members: an array is never made on a device another one holds (EBUSY). */
START_TEST(md_refuses_a_claimed_member)
{
	struct sys_md md = { .name = "md_other", .raid_disks = 2, .nmembers = 2 };
	const struct volume *v;

	shr_replaced(0);
	v = volume_find("s");
	ck_assert_int_eq(sys->part_dev("sda", v->mlabel[0].tier[0].start, md.member[0].dev,
	    sizeof(md.member[0].dev)), 0);
	ck_assert_int_eq(sys->part_dev("sdb", v->mlabel[1].tier[0].start, md.member[1].dev,
	    sizeof(md.member[1].dev)), 0);
	md.member[1].role = 1;
	ck_assert_int_eq(sys->md_create(&md), -1);
	ck_assert_int_eq(errno, EBUSY);
}
END_TEST

/*
 * The power goes after each mutating step of an SHR grow that makes a
 * tier, with another array's superblock in the band: at the next start
 * the volume is as it was or grown, never with a stale array assembled,
 * and a grow (carried on or new) ends with the SHR rule.
 */
START_TEST(power_cut_during_shr_grow)
{
	int total, k = _i, start;
	uint64_t was, want;
	struct volume *v;

	was = shr_replaced(3);
	plant_stale("sdf");
	start = sim_ops();
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	total = sim_ops() - start;
	want = volume_find("s")->label.size;
	ck_assert_int_lt(total, SHR_CUTS);
	ck_assert_int_gt(total, 8);
	if (k > total)
		return;
	was = shr_replaced(3);
	plant_stale("sdf");
	sim_fail_after(k);
	run("volume.grow", "{\"name\":\"s\"}");
	sim_fail_after(-1);
	reboot();
	v = volume_find("s");
	ck_assert_ptr_nonnull(v);
	if (v->label.size == was && v->label.intent.op == LABEL_OP_NONE) {
		ck_assert_uint_eq(unit_raidd_dm_size("s"), was);
		ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	}
	v = volume_find("s");
	check_grown("s", was, want);
	check_shr_rule(v);
	check_new_tier(v, 1, "raid5", 3);
	reboot();
	check_grown("s", was, want);
}
END_TEST

/*
 * An SHR grow cut after k mutating steps, and tier 0's member sdd gone
 * at the next start: tier 0 (raid5 of four) runs without it, so the
 * volume comes up with its data and the grow goes on degraded; then
 * a repair onto a new disk works.
 */
static void
cut_then_member_gone(int k)
{
	uint64_t was = shr_replaced(3), want;
	struct volume *v;
	char dm[SYS_NAME_MAX];

	/* The data was written long before: md marked its arrays clean. */
	sim_md_idle(NULL);
	sim_fail_after(k);
	run("volume.grow", "{\"name\":\"s\"}");
	sim_fail_after(-1);
	sim_pull_disk("sdd");
	reboot();
	v = volume_find("s");
	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	want = v->label.size;
	ck_assert_uint_gt(want, was);
	check_new_tier(v, 1, "raid5", 3);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	replace("s", 4, "sdd", "sdh", 2 * GIB);
	check_grown("s", was, want);
	reboot();
	check_grown("s", was, want);
}

START_TEST(shr_grow_cut_after_label_member_gone)
{
	cut_then_member_gone(4);
}
END_TEST

/* The cut after the new arrays were recorded (GS_MADE): they run; the rest goes on. */
START_TEST(shr_grow_cut_after_made_member_gone)
{
	struct volume *v;
	int k;

	shr_replaced(3);
	/* The step count up to and with GS_MADE's labels: where covered clears. */
	for (k = 5; k < SHR_CUTS; k++) {
		shr_replaced(3);
		sim_md_idle(NULL);
		sim_fail_after(k);
		run("volume.grow", "{\"name\":\"s\"}");
		sim_fail_after(-1);
		v = volume_find("s");
		if (v->label.intent.op == LABEL_OP_EXPANDING && v->label.intent.covered == 0 &&
		    v->label.intent.step == 4)
			break;
	}
	ck_assert_int_lt(k, SHR_CUTS);
	cut_then_member_gone(k);
}
END_TEST

/*
 * The cut left tier 0 dirty (written since md last marked it clean) and
 * sdd is gone: md runs it read-only only (Decision 90); the volume still
 * comes up, read-only, with its data, and the grow ends once the user
 * made it writable.
 */
START_TEST(shr_grow_cut_dirty_member_gone)
{
	uint64_t was = shr_replaced(3), want;
	struct json_object *a;
	struct volume *v;
	char dm[SYS_NAME_MAX];

	sim_fail_after(4);
	run("volume.grow", "{\"name\":\"s\"}");
	sim_fail_after(-1);
	sim_pull_disk("sdd");
	reboot();
	v = volume_find("s");
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, was, 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_EXPANDING);
	ck_assert_uint_eq(unit_raidd_dm_size("s"), was);
	a = unit_call(srv, &root, "volume.start", "{\"name\":\"s\",\"force\":true}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	want = v->label.size;
	ck_assert_uint_gt(want, was);
	replace("s", 4, "sdd", "sdh", 2 * GIB);
	check_grown("s", was, want);
}
END_TEST

/*
 * sde, a member of the new tier not made yet, is gone: no array is made
 * degraded, so the grow waits for it; the volume comes up as it was
 * (degraded, its data, the old size), and with sde back the grow ends.
 */
START_TEST(shr_grow_cut_new_tier_member_gone)
{
	uint64_t was = shr_replaced(3), want;
	struct volume *v;
	char dm[SYS_NAME_MAX];

	sim_md_idle(NULL);
	sim_fail_after(4);
	run("volume.grow", "{\"name\":\"s\"}");
	sim_fail_after(-1);
	sim_pull_disk("sde");
	reboot();
	v = volume_find("s");
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	volume_dm_name("s", dm, sizeof(dm));
	ck_assert_uint_eq(unit_raidd_dm_size("s"), was);
	unit_raidd_pattern(dm, was, 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_EXPANDING);
	sim_push_disk("sde");
	reboot();
	v = volume_find("s");
	want = v->label.size;
	ck_assert_uint_gt(want, was);
	/* sde missed what was written meanwhile: md takes it back and resyncs. */
	disk_refresh(1);
	volume_scan();
	recover_all(v);
	volume_check_states();
	check_grown("s", was, want);
	check_new_tier(v, 1, "raid5", 3);
}
END_TEST

/* Steps left before the one-off failure's next step: the disk works again. */
static int eio_left;

static void
eio_once(void)
{
	if (eio_left-- > 0)
		sim_before_step(eio_once);
	else
		sim_fail_after(-1);
}

/* sdg's tier 1 partition serves md's tier 1 in role 2, in sync. */
static int
sdg_in_tier1(const struct volume *v)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	int in = 0;

	volume_md_name(v, 0, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(sys->part_dev("sdg", v->mlabel[2].tier[0].start, dev, sizeof(dev)), 0);
	for (int i = 0; i < st.nmembers; i++)
		in += strcmp(st.member[i].dev, dev) == 0 && st.member[i].slot == 2 &&
		    !strstr(st.member[i].state, "faulty");
	return in;
}

/*
 * A join stopped before md began, on a running volume (one write fails
 * once, EIO, at the reshape step), then an old member of tier 2's
 * mirror fails.  The spare sdg's partition gave md would take its role
 * at once, sdg's superblock then giving another role than its label:
 * the next disk scan judges sdg foreign, volume.grow "undoes" the join
 * without it, and the next start drops sdg from tier 1 too.  The join is
 * undone when it stops: md holds no spare of sdg's, and sdg stays a
 * member of tier 1 through the loss and a reboot.
 */
START_TEST(join_stopped_leaves_no_spare_in_md)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	uint64_t was, mirrored;
	struct volume *v;

	mirrored = shr_third_swapped(&was);
	v = volume_find("s");
	eio_left = JOIN_MD_OPS + 1;
	sim_before_step(eio_once);
	sim_fail_after(JOIN_MD_OPS);
	ck_assert_int_eq(join_run(v), JOB_FAILED);
	sim_fail_after(-1);
	sim_before_step(NULL);
	ck_assert_msg(strstr(join_error, "Input/output error while starting the reshape"),
	    "%s", join_error);
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->part_dev("sde", v->mlabel[0].tier[1].start, dev, sizeof(dev)), 0);
	sim_fail_member(md, dev);
	disk_refresh(1);
	volume_scan();
	ck_assert_msg(v->disk[2][0], "sdg left out");
	ck_assert_int_eq(sdg_in_tier1(v), 1);
	ck_assert_int_eq(sdg_spare_in_tier2(v), 0);
	ck_assert_msg(!label_is_join(&v->label), "join kept: %s", v->problem);
	ck_assert_msg(strstr(v->problem, "undone"), "%s", v->problem);
	reboot();
	v = volume_find("s");
	ck_assert_msg(v->assembled && !v->inconsistent, "%s", v->problem);
	ck_assert_msg(v->disk[2][0], "sdg dropped at the start");
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(sdg_in_tier1(v), 1);
	(void)mirrored;
}
END_TEST

/* sdg's tier 2 partition's slot in md's tier 2 array: -1 a spare, -2 not there. */
static int
sdg_slot_in_tier2(const struct volume *v)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	volume_md_name(v, 1, md, sizeof(md));
	if (sys->md_status(md, &st) == -1 || v->mlabel[2].tier[1].role == LABEL_NO_ROLE ||
	    sys->part_dev("sdg", v->mlabel[2].tier[1].start, dev, sizeof(dev)) == -1)
		return -2;
	for (int i = 0; i < st.nmembers; i++)
		if (strcmp(st.member[i].dev, dev) == 0 && !strstr(st.member[i].state, "faulty"))
			return st.member[i].slot;
	return -2;
}

/* sdg's slot as sde fell (-3: sde never fell). */
static int slot_as_sde_fell;

/* Before each step: once sdg's spare is in tier 2's array, sde's member there fails. */
static void
sde_fails_once_sdg_joins(void)
{
	const struct volume *v = volume_find("s");
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	if (sdg_slot_in_tier2(v) == -2) {
		sim_before_step(sde_fails_once_sdg_joins);
		return;
	}
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->part_dev("sde", v->mlabel[0].tier[1].start, dev, sizeof(dev)), 0);
	sim_fail_member(md, dev);
	slot_as_sde_fell = sdg_slot_in_tier2(v);
}

/*
 * Inside the running join (Decision 133, attack-join4's "Left"): an old
 * member of tier 2's mirror fails right after the join gave md sdg's
 * spare, before md takes the tier over.  md, frozen since before the
 * spare's add, rebuilds nothing onto it: the job stops (the tier lost a
 * member), takes the spare out, undoes the join (md never began) and
 * lets md go; tier 2 runs degraded, sdg serves tier 1, every byte is
 * there, and the next start judges no member foreign.  The old code had
 * md rebuild sde onto sdg's spare at once.
 */
START_TEST(join_member_lost_right_after_the_spare_joins)
{
	char dm[SYS_NAME_MAX], md[SYS_NAME_MAX];
	uint64_t was, mirrored = third_swap_filled(&was, dm);
	struct volume *v = volume_find("s");
	struct sys_md_status st;

	slot_as_sde_fell = -3;
	sim_before_step(sde_fails_once_sdg_joins);
	ck_assert_int_eq(join_run(v), JOB_FAILED);
	sim_before_step(NULL);
	ck_assert_int_eq(slot_as_sde_fell, -1);		/* still a spare as sde fell */
	ck_assert_msg(strstr(join_error, "lost a member"), "%s", join_error);
	ck_assert_int_eq(sdg_slot_in_tier2(v), -2);
	ck_assert_msg(!label_is_join(&v->label), "join kept: %s", v->problem);
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.level, "raid1");
	ck_assert_int_eq(st.degraded, 1);
	ck_assert_str_eq(st.sync_action, "idle");
	ck_assert_int_eq(sdg_in_tier1(v), 1);
	unit_raidd_pattern(dm, mirrored, 0);
	reboot();
	v = volume_find("s");
	ck_assert_msg(v->assembled && !v->inconsistent, "%s", v->problem);
	for (int m = 0; m < 3; m++)
		ck_assert_msg(v->disk[m][0], "member %d dropped at the start", m + 1);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(sdg_in_tier1(v), 1);
	ck_assert_int_eq(sdg_slot_in_tier2(v), -2);
	unit_raidd_pattern(dm, mirrored, 0);
}
END_TEST

/*
 * md fails a member whose disk errors (md_error) and recovers a spare
 * the array holds into its role at once (remove_and_add_spares), as
 * when a user fails it: the simulator's I/O errors do too.  sdg's join
 * spare in tier 2's mirror, sde erroring: md rebuilds sde's role onto it.
 */
START_TEST(md_takes_a_spare_on_io_errors)
{
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;
	uint64_t was;
	int role = -1;

	shr_third_swapped(&was);
	v = volume_find("s");
	join_spare_added(v);
	ck_assert_int_eq(sdg_spare_in_tier2(v), 1);
	sim_disk_error("sde", 1);
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(sys->part_dev("sdg", v->mlabel[2].tier[1].start, dev, sizeof(dev)), 0);
	for (int i = 0; i < st.nmembers; i++)
		if (strcmp(st.member[i].dev, dev) == 0)
			role = st.member[i].slot;
	ck_assert_int_eq(role, 0);
	sim_disk_error("sde", 0);
}
END_TEST

/*
 * The 4-disk SHR of Decision 133's two joins: four 1 GiB disks, bays 1
 * and 2 swapped for 2 GiB ones and the mirror grown on the room above
 * (tier 2, raid1 of sde and sdf), then bays 3 and 4 swapped for disks
 * of size (sdg, sdh) before the next grow; every byte of the grown mirror's volume written.
 * Returns its size; *off0 tier 1's data offset, c volume.grow's plan
 * (both rooms join tier 2: raid5 of four).
 */
static uint64_t
two_swapped(uint64_t size, uint64_t *off0, struct plan_change *c)
{
	char dm[SYS_NAME_MAX];
	struct volume *v;
	uint64_t mirrored;

	shr_replaced(2);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	v = volume_find("s");
	mirrored = v->label.size;
	check_new_tier(v, 1, "raid1", 2);
	replace("s", 3, "sdc", "sdg", size);
	replace("s", 4, "sdd", "sdh", size);
	v = volume_find("s");
	ck_assert_uint_eq(v->label.size, mirrored);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, mirrored, 1);
	*off0 = tier1_offset(v);
	join_plan(v, c);
	ck_assert_int_eq(c->after.ntiers, size > 2 * GIB ? 3 : 2);
	ck_assert_int_eq(c->after.tier[1].nmembers, 4);
	ck_assert_int_eq(c->after.tier[1].part[2].disk, 2);
	ck_assert_int_eq(c->after.tier[1].part[3].disk, 3);
	ck_assert_uint_gt(c->after.size, mirrored);
	return mirrored;
}

/* Job id's kind and target: volume.grow of "s", done. */
static void
check_grow_job(unsigned id)
{
	struct json_object *d, *o;

	ck_assert_ptr_nonnull(job_find(id));
	d = job_describe(job_find(id));
	ck_assert(json_object_object_get_ex(d, "kind", &o));
	ck_assert_str_eq(json_object_get_string(o), "volume.grow");
	ck_assert(json_object_object_get_ex(d, "target", &o));
	ck_assert_str_eq(json_object_get_string(o), "s");
	json_object_put(d);
	ck_assert_int_eq(job_state(job_find(id)), JOB_DONE);
}

/*
 * Bays 3 and 4 swapped before one volume.grow (Decision 133): both
 * rooms join tier 2, one join after the other as one user action: sdg's
 * (the mirror taken over as raid5 of three), then, as that job ends,
 * sdh's in the next job (raid5 of three to four, no takeover).  The
 * answer gives plan_grow's size; the volume ends there, after a reboot
 * too.  The old code refused it ("one join at a time").
 */
START_TEST(two_joins_by_volume_grow)
{
	static struct plan_change c;
	struct json_object *a, *r, *o;
	uint64_t mirrored, off0;
	unsigned id;

	mirrored = two_swapped(2 * GIB, &off0, &c);
	a = unit_call(srv, &root, "volume.grow", "{\"name\":\"s\"}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "size_bytes", &o);
	ck_assert_uint_eq((uint64_t)json_object_get_int64(o), c.after.size);
	json_object_object_get_ex(r, "job", &o);
	id = (unsigned)json_object_get_int(o);
	json_object_put(a);
	run_reshaping();
	/* the first join's job, then the second's, started as it ended */
	check_grow_job(id);
	check_grow_job(id + 1);
	ck_assert_ptr_null(job_find(id + 2));
	check_tier2_joined(4, c.after.size, mirrored, off0);
	reboot_reshaping();
	check_tier2_joined(4, c.after.size, mirrored, off0);
	refused("{\"name\":\"s\"}", NAS_ERR_INVALID, "nothing to grow");
}
END_TEST

/*
 * Bays 3 and 4 swapped for 3 GiB disks: both rooms join tier 2, and the
 * room above 2 GiB on them is a new mirror.  One volume.grow: the two
 * joins, then the grow the second join's commit begins (as an SHR add's,
 * Decision 118), which makes tier 3; the first join's commit began none
 * (grow_check refuses while a room would join).  The size is
 * plan_grow's, after a reboot too.
 */
START_TEST(two_joins_then_a_new_tier)
{
	static struct plan_change c;
	uint64_t mirrored, off0;
	struct volume *v;

	mirrored = two_swapped(3 * GIB, &off0, &c);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	for (int boot = 0; boot < 2; boot++) {
		v = volume_find("s");
		ck_assert_int_eq(v->label.ntiers, 3);
		check_new_tier(v, 2, "raid1", 2);
		ck_assert_int_eq(v->label.tier[2].member[0], 2);
		ck_assert_int_eq(v->label.tier[2].member[1], 3);
		check_tier2_joined(4, c.after.size, mirrored, off0);
		reboot_reshaping();
	}
	refused("{\"name\":\"s\"}", NAS_ERR_INVALID, "nothing to grow");
}
END_TEST

/* method on "s" refused: a job runs on the volume. */
static void
busy(const char *method, const char *params)
{
	struct json_object *a = unit_call(srv, &root, method, params);

	ck_assert_msg(unit_err_code(a) == NAS_ERR_BUSY, "%s: %s", method,
	    json_object_to_json_string(a));
	json_object_put(a);
}

/*
 * A client calling while the two joins run: at every turn of the loop,
 * from the call to the end of the chain, the volume has a job, so
 * volume.grow, volume.add_disk, volume.repair and volume.delete are
 * refused (busy) and write nothing: the next join starts in the same
 * turn the first ends, leaving no turn between them.
 */
START_TEST(no_call_between_the_two_joins)
{
	static struct plan_change c;
	struct json_object *a, *r, *o;
	char md[SYS_NAME_MAX];
	uint64_t mirrored, off0, gen;
	struct volume *v;
	int turns = 0, second = 0;
	unsigned id;

	mirrored = two_swapped(2 * GIB, &off0, &c);
	v = volume_find("s");
	a = unit_call(srv, &root, "volume.grow", "{\"name\":\"s\"}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &o);
	id = (unsigned)json_object_get_int(o);
	json_object_put(a);
	add_set_poll(0);
	for (int i = 0; i < 2000 && job_running_count() > 0; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_reshape_step(md, 1 << 17);
		}
		if (job_running_count() == 0)
			break;
		ck_assert_ptr_nonnull(v->job);
		second += job_id(v->job) == id + 1;
		gen = v->label.generation;
		busy("volume.grow", "{\"name\":\"s\"}");
		busy("volume.add_disk", "{\"name\":\"s\",\"disk\":\"sdh\",\"force\":true}");
		busy("volume.repair", "{\"name\":\"s\",\"disk\":\"sdh\"}");
		busy("volume.delete", "{\"name\":\"s\",\"confirm\":\"s\"}");
		ck_assert_uint_eq(v->label.generation, gen);
		turns++;
	}
	ck_assert_int_gt(second, 0);
	ck_assert_int_gt(turns, second);
	check_grow_job(id);
	check_grow_job(id + 1);
	check_tier2_joined(4, c.after.size, mirrored, off0);
}
END_TEST

/*
 * The first of the two joins, stopped before md began (the reshape
 * step's first write cut): its labels cover tier 2 for sdg only, and
 * add_join_replan gives the first join's plan byte for byte, though
 * sdh's label records its whole 2 GiB disk (plan_grow from the labels
 * would have both rooms join).  The start undoes it; one volume.grow
 * then does both.
 */
START_TEST(two_joins_replan_is_the_first)
{
	static struct plan_change c, first;
	static struct plan after;
	uint64_t mirrored, off0;
	struct json_object *d;
	struct volume *v;
	struct job *j;
	unsigned id;
	char e[256];

	mirrored = two_swapped(2 * GIB, &off0, &c);
	v = volume_find("s");
	ck_assert_msg(add_join_first(&c, &first, e, sizeof(e)) == 0, "%s", e);
	ck_assert_int_eq(first.after.tier[1].nmembers, 3);
	ck_assert_int_eq(first.after.tier[1].part[2].disk, 2);
	ck_assert_int_eq(first.after.tier[1].kind, TIER_RAID5);
	ck_assert_uint_eq(v->label.member[3].size, 2 * GIB);
	sim_fail_after(JOIN_MD_OPS + 4);	/* a fourth member's label at each write */
	add_set_poll(0);
	ck_assert_ptr_nonnull(j = add_join_grow(v, &c, NULL, e, sizeof(e)));
	id = job_id(j);
	run_reshaping();
	sim_fail_after(-1);
	d = job_describe(job_find(id));
	ck_assert_msg(strstr(json_object_to_json_string(d), "while starting the reshape"), "%s",
	    json_object_to_json_string(d));
	json_object_put(d);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_uint_eq(v->label.intent.covered, 1U << 1);
	ck_assert_int_eq(v->label.intent.disk, 2);
	ck_assert_msg(add_join_replan(v, &after, e, sizeof(e)) == 0, "%s", e);
	ck_assert_mem_eq(&after, &first.after, sizeof(after));
	reboot_reshaping();
	v = volume_find("s");
	ck_assert_msg(!v->inconsistent && v->assembled, "%s", v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	check_tier2_joined(4, c.after.size, mirrored, off0);
}
END_TEST

/* A cut after each of the two joins' 55 writes, md's included, and one run whole. */
#define TWO_JOIN_CUTS	57

/*
 * The power goes after each write of the chain (both joins, md's
 * takeover and reshapes included).  Each start undoes the join it finds
 * md never began, or carries it on (and then the next one); every
 * member keeps every tier it serves, every byte is there, and one more
 * volume.grow, if the start left any room unjoined, ends at plan_grow's
 * layout; the start after it keeps it.
 */
START_TEST(power_cut_during_two_joins)
{
	static struct plan_change c;
	uint64_t mirrored, off0;
	struct json_object *a;
	struct volume *v;
	int ops;

	mirrored = two_swapped(2 * GIB, &off0, &c);
	ops = sim_ops();
	sim_fail_after(_i);
	a = unit_call(srv, &root, "volume.grow", "{\"name\":\"s\"}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
	run_reshaping();
	sim_fail_after(-1);
	if (_i == TWO_JOIN_CUTS - 1) {
		ck_assert_msg(sim_ops() - ops < TWO_JOIN_CUTS - 1, "more writes (%d) than cuts",
		    sim_ops() - ops);
		check_tier2_joined(4, c.after.size, mirrored, off0);
	}
	reboot_reshaping();
	check_members_kept(_i, mirrored);
	v = volume_find("s");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_ge(v->label.tier[1].nmembers, 2);
	if (v->label.tier[1].nmembers < 4)
		ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	check_tier2_joined(4, c.after.size, mirrored, off0);
	reboot_reshaping();
	check_members_kept(_i, mirrored);
	check_tier2_joined(4, c.after.size, mirrored, off0);
}
END_TEST

/*
 * The fourth swap's join alone: bays 1 and 2 swapped and grown (the
 * mirror), bay 3 swapped and grown (its join: raid5 of three), bay 4
 * swapped and grown: sdh's room joins the raid5 of three, no takeover,
 * md reshapes it to four.
 */
START_TEST(fourth_swap_joins_a_raid5)
{
	static struct plan_change c;
	char dm[SYS_NAME_MAX];
	uint64_t mirrored, off0;
	struct volume *v;

	shr_replaced(2);
	ck_assert_int_eq(run("volume.grow", "{\"name\":\"s\"}"), JOB_DONE);
	mirrored = volume_find("s")->label.size;
	replace("s", 3, "sdc", "sdg", 2 * GIB);
	join_plan(volume_find("s"), &c);
	ck_assert_int_eq(c.after.tier[1].nmembers, 3);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	v = volume_find("s");
	check_new_tier(v, 1, "raid5", 3);
	replace("s", 4, "sdd", "sdh", 2 * GIB);
	v = volume_find("s");
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, v->label.size, 1);
	mirrored = v->label.size;
	off0 = tier1_offset(v);
	join_plan(v, &c);
	ck_assert_int_eq(c.before.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(c.after.tier[1].nmembers, 4);
	ck_assert_uint_eq(c.what[1], PLAN_CH_MEMBERS);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	check_tier2_joined(4, c.after.size, mirrored, off0);
	reboot_reshaping();
	check_tier2_joined(4, c.after.size, mirrored, off0);
	refused("{\"name\":\"s\"}", NAS_ERR_INVALID, "nothing to grow");
}
END_TEST

/* A disk's uevent, seen: the table, the volumes, their states. */
static void
hotplug(void)
{
	disk_refresh(1);
	volume_scan();
	volume_check_states();
}

/*
 * The join c's job on "s" run until sdg's new partition is a spare in
 * tier 2's array, md not asked yet; then sdg is pulled: the job's id.
 */
static unsigned
join_spare_in_then_sdg_pulled(const struct plan_change *c)
{
	struct volume *v = volume_find("s");
	struct job *j;
	char e[256];

	add_set_poll(0);
	ck_assert_msg((j = add_join_start(v, c, NULL, e, sizeof(e))) != NULL, "%s", e);
	for (int i = 0; i < 100 && sdg_slot_in_tier2(v) != -1; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_eq(sdg_slot_in_tier2(v), -1);
	ck_assert_int_lt(v->label.intent.step, 6);	/* AS_RESHAPE: md not asked */
	sim_pull_disk("sdg");
	return job_id(j);
}

/*
 * The join c's job on "s" run until sdg's new partition is a spare in
 * tier 2's array, md not asked yet; then sdg is pulled (its uevent seen
 * while the job runs when seen, else after it) and the job runs to its
 * end: its state.
 */
static enum job_state
join_joiner_pulled(const struct plan_change *c, int seen)
{
	unsigned id = join_spare_in_then_sdg_pulled(c);

	if (seen)
		hotplug();
	run_reshaping();
	if (!seen)
		hotplug();
	return job_state(job_find(id));
}

/* The join undone with sdg away: tier 2 the whole mirror, md holding nothing of sdg's. */
static void
check_undone_sdg_away(const struct volume *v, const char *dm, uint64_t data)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	ck_assert_msg(!label_is_join(&v->label), "join kept: %s", v->problem);
	ck_assert_msg(v->assembled && !v->inconsistent, "%s", v->problem);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_str_eq(v->disk[2], "");
	volume_md_name(v, 1, md, sizeof(md));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_int_eq(st.nmembers, 2);
	check_new_tier(v, 1, "raid1", 2);
	for (int m = 0; m < 2; m++)
		ck_assert_uint_eq(v->mlabel[m].generation, v->label.generation);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	unit_raidd_pattern(dm, data, 0);
}

/* "s" after the join of c with sdh's room: tier 2 raid5 of three, sdh in role 2. */
static void
check_sdh_joined(const struct plan_change *c, uint64_t data)
{
	struct volume *v = volume_find("s");

	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v->disk[2], "sdh");
	ck_assert_int_eq(v->mlabel[2].tier[1].role, 2);
	check_new_tier(v, 0, "raid5", 3);
	check_new_tier(v, 1, "raid5", 3);
	check_shr_rule(v);
	check_grown("s", data, c->after.size);
}

/*
 * Decision 125's finding 4: the joiner sdg is pulled from the running
 * volume after its spare joined tier 2's mirror, before md was asked,
 * and never comes back.  The job stops and undoes the join at once
 * without it (its partition left on its disk): tier 2 the whole mirror,
 * tier 1 degraded, every byte there.  volume.repair with a blank disk
 * replaces member 3 in every tier it serves (tier 1): the volume is
 * redundant again; volume.grow then joins the new disk's room, and a
 * reboot keeps it all.  Before the repair a reboot starts the volume
 * degraded as it was, and volume.add_disk and volume.grow refuse it,
 * nothing written; sdg back after the repair is left out (replaced).  _i 1: sdg's uevent comes after the job stopped
 * (its undo could not reach the disk): the scan undoes the join.  The
 * old code kept the join (repair refused, "volume.grow carries it on")
 * until volume.grow or a start undid it.
 */
START_TEST(join_joiner_gone_before_md_began_repaired)
{
	static struct plan_change c;
	char dm[SYS_NAME_MAX];
	uint64_t was, mirrored = third_swap_filled(&was, dm), gen;
	struct volume *v = volume_find("s");
	struct json_object *a;

	join_plan(v, &c);
	ck_assert_int_eq(join_joiner_pulled(&c, _i == 0), JOB_FAILED);
	check_undone_sdg_away(v, dm, mirrored);
	ck_assert_msg(strstr(v->problem, "volume.repair"), "%s", v->problem);
	hotplug();
	check_undone_sdg_away(v, dm, mirrored);
	sim_md_idle(NULL);	/* md marked the arrays clean before the cut */
	reboot();
	v = volume_find("s");
	check_undone_sdg_away(v, dm, mirrored);
	/* Degraded: volume.add_disk and volume.grow refuse, nothing written. */
	gen = v->label.generation;
	a = unit_call(srv, &root, "volume.add_disk", "{\"name\":\"s\",\"disk\":\"bay4\"}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_REFUSED);
	ck_assert_msg(strstr(unit_err_msg(a), "joins only a clean volume"), "%s",
	    unit_err_msg(a));
	json_object_put(a);
	refused("{\"name\":\"s\"}", NAS_ERR_REFUSED, "grows only when clean");
	ck_assert_uint_eq(v->label.generation, gen);
	repair_with("s", 4, "sdh", 2 * GIB);
	v = volume_find("s");
	ck_assert_str_eq(v->disk[2], "sdh");
	check_new_tier(v, 0, "raid5", 3);
	check_new_tier(v, 1, "raid1", 2);
	check_grown("s", mirrored, mirrored);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	check_sdh_joined(&c, mirrored);
	reboot_reshaping();
	check_sdh_joined(&c, mirrored);
	/* sdg back at last, its join's label: a member replaced, left out. */
	sim_md_idle(NULL);
	sim_push_disk("sdg");
	hotplug();
	check_sdh_joined(&c, mirrored);
	ck_assert_ptr_null(volume_of_disk("sdg"));
	reboot_reshaping();
	check_sdh_joined(&c, mirrored);
}
END_TEST

/*
 * Attack pass (attack-join5): sdg pulled once its spare is in tier 2,
 * its uevent seen only after the job stopped (whose undo could not reach
 * it); the power goes after each write of the scan's undo without it
 * (add_join_settle).  The start after has the join undone, sdg away, the
 * data there; sdg back and a start: sdg in tier 1, every member in every
 * tier.  The last run is whole.
 */
#define SCAN_UNDO_CUTS	4
START_TEST(power_cut_during_scan_undo)
{
	static struct plan_change c;
	char dm[SYS_NAME_MAX];
	uint64_t was, mirrored, off0;
	struct volume *v;

	mirrored = join_ready(&was, &off0, &c);
	v = volume_find("s");
	volume_dm_name("s", dm, sizeof(dm));
	join_spare_in_then_sdg_pulled(&c);
	run_reshaping();
	ck_assert_ptr_null(v->job);
	ck_assert(label_is_join(&v->label));
	sim_fail_after(_i);
	hotplug();
	sim_fail_after(-1);
	if (_i == SCAN_UNDO_CUTS - 1)
		ck_assert_msg(!label_is_join(&v->label), "%s: more writes than cuts", v->problem);
	sim_md_idle(NULL);
	reboot();
	v = volume_find("s");
	check_undone_sdg_away(v, dm, mirrored);
	sim_md_idle(NULL);
	sim_push_disk("sdg");
	reboot_reshaping();
	v = volume_find("s");
	recover_all(v);
	volume_check_states();
	check_members_kept(_i, mirrored);
	ck_assert_int_eq(sdg_in_tier1(v), 1);
}
END_TEST

/*
 * Attack pass (attack-join5): sdg pulled once its spare is in tier 2 (its
 * uevent only after the job stopped), and another disk of its size and
 * serial (another box's, a bridge's) put in its bay under its name before
 * the scan.  The scan proves the joiner by its label (member_is), finds
 * it gone and undoes the join without it: nothing is written to the
 * stranger, which is no member; after a reboot too.
 */
START_TEST(join_stranger_in_the_joiners_place)
{
	static struct plan_change c;
	static uint8_t blank[4096], buf[4096];
	char dm[SYS_NAME_MAX];
	uint64_t was, mirrored, off0, start;
	struct volume *v;

	mirrored = join_ready(&was, &off0, &c);
	v = volume_find("s");
	volume_dm_name("s", dm, sizeof(dm));
	start = c.after.tier[1].part[2].start;
	join_spare_in_then_sdg_pulled(&c);
	run_reshaping();
	ck_assert(label_is_join(&v->label));
	sim_add_disk("sdg", 2 * GIB, disk_find("sdg")->sys.serial,
	    "/sys/devices/sim/host0/target0:0:3/0:0:3:0");
	hotplug();
	check_undone_sdg_away(v, dm, mirrored);
	ck_assert_ptr_null(volume_of_disk("sdg"));
	ck_assert_int_eq(sys->read_at("sdg", 0, buf, sizeof(buf)), 0);
	ck_assert_mem_eq(buf, blank, sizeof(buf));
	ck_assert_int_eq(sys->read_at("sdg", start, buf, sizeof(buf)), 0);
	ck_assert_mem_eq(buf, blank, sizeof(buf));
	sim_md_idle(NULL);
	reboot();
	v = volume_find("s");
	check_undone_sdg_away(v, dm, mirrored);
	ck_assert_ptr_null(volume_of_disk("sdg"));
	ck_assert_int_eq(sys->read_at("sdg", 0, buf, sizeof(buf)), 0);
	ck_assert_mem_eq(buf, blank, sizeof(buf));
}
END_TEST

/* "s" with sdg back in tier 1 after its join was undone: its label the newest, its band free. */
static void
check_sdg_back(const struct volume *v, uint64_t start, uint64_t data)
{
	char dm[SYS_NAME_MAX];

	ck_assert_str_eq(v->disk[2], "sdg");
	ck_assert_msg(!label_is_join(&v->label), "%s", v->problem);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_uint_eq(v->mlabel[2].generation, v->label.generation);
	ck_assert_int_eq(v->mlabel[2].tier[1].role, LABEL_NO_ROLE);
	ck_assert_uint_eq(gpt_last("sdg", start), 0);
	ck_assert_int_eq(sdg_in_tier1(v), 1);
	ck_assert_msg(v->state == VOL_CLEAN, "%s: %s", volume_state_name(v->state), v->problem);
	volume_dm_name("s", dm, sizeof(dm));
	unit_raidd_pattern(dm, data, 0);
}

/*
 * The join c planned on "s", sdg pulled once its spare is in tier 2 (its
 * uevent seen while the job ran when seen: the job undid the join
 * without it) and put back, its uevent not yet read: the data's size;
 * tier 1's data offset and sdg's tier 2 band in off0 and start.
 */
static uint64_t
sdg_put_back(struct plan_change *c, int seen, uint64_t *off0, uint64_t *start)
{
	uint64_t was, mirrored = join_ready(&was, off0, c);

	*start = c->after.tier[1].part[2].start;
	ck_assert_int_eq(join_joiner_pulled(c, seen), JOB_FAILED);
	if (seen)
		ck_assert_str_eq(volume_find("s")->disk[2], "");
	sim_md_idle(NULL);
	sim_push_disk("sdg");
	return mirrored;
}

/*
 * Decision 125's finding 6: the joiner sdg, pulled after its spare joined
 * tier 2's mirror, comes back while raidd runs (a hot-plug, no reboot).
 * _i 0: the job had undone the join without it (its uevent seen), sdg
 * returns with the join's label, older than the newest, its new
 * partition still on its disk; _i 1: its uevent came only with its
 * return, the job's undo could not reach it and the join's labels are
 * the newest, sdg's among them.  Either way sdg is taken back into tier
 * 1 at once, its label the newest, its band free (the partition gone
 * through its proven descriptor); volume.grow then joins it, and a
 * reboot keeps every member in every tier.  The old code left sdg's
 * label behind and its partition in the band (_i 0): the next join
 * stopped on it and the start after dropped sdg from every tier.
 */
START_TEST(join_joiner_back_while_running)
{
	static struct plan_change c;
	uint64_t mirrored, off0, start;
	struct volume *v;

	mirrored = sdg_put_back(&c, _i == 0, &off0, &start);
	v = volume_find("s");
	hotplug();
	recover_all(v);
	volume_check_states();
	check_sdg_back(v, start, mirrored);
	ck_assert_int_eq(grow_run(c.after.size), JOB_DONE);
	check_joined(c.after.size, mirrored, off0);
	reboot_reshaping();
	check_members_kept(_i, mirrored);
	check_joined(c.after.size, mirrored, off0);
}
END_TEST

/*
 * Attack pass (attack-join5): the power goes after each write of sdg's
 * return to the running volume (joiner_back: its partition deleted
 * through its proven descriptor, then its label; md's re-add into tier
 * 1 after).  The start after takes sdg back into tier 1 whatever the
 * cut left, its band free; the last run is whole.
 */
#define JOINER_BACK_CUTS	4
START_TEST(power_cut_during_joiner_back)
{
	static struct plan_change c;
	uint64_t mirrored, off0, start;
	struct volume *v;

	mirrored = sdg_put_back(&c, 1, &off0, &start);
	v = volume_find("s");
	sim_fail_after(_i);
	hotplug();
	sim_fail_after(-1);
	if (_i == JOINER_BACK_CUTS - 1)
		ck_assert_uint_eq(v->mlabel[2].generation, v->label.generation);
	reboot_reshaping();
	v = volume_find("s");
	check_members_kept(_i, mirrored);
	recover_all(v);
	volume_check_states();
	check_sdg_back(v, start, mirrored);
	reboot_reshaping();
	check_members_kept(_i, mirrored);
}
END_TEST

/* Before each step: once sdg's spare is in tier 2's array, sdg is pulled and put back. */
static void
sdg_flaps_once_spare_in(void)
{
	if (sdg_slot_in_tier2(volume_find("s")) != -1) {
		sim_before_step(sdg_flaps_once_spare_in);
		return;
	}
	sim_pull_disk("sdg");
	sim_push_disk("sdg");
}

/*
 * The joiner sdg pulled and put back between two of the join's steps,
 * after its spare joined and before md was asked (its uevents seen once
 * the job ended): the join's labels are the newest and the job finds
 * sdg again through its proven descriptors: the join runs to the end,
 * every member in every tier, after a reboot too.  It worked before
 * this test; it keeps it so.
 */
START_TEST(join_joiner_flaps_before_md_began)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;

	mirrored = join_ready(&was, &off0, &c);
	sim_before_step(sdg_flaps_once_spare_in);
	ck_assert_msg(join_run(volume_find("s")) == JOB_DONE, "%s", join_error);
	sim_before_step(NULL);
	hotplug();
	check_joined(c.after.size, mirrored, off0);
	check_members_kept(0, mirrored);
	reboot_reshaping();
	check_joined(c.after.size, mirrored, off0);
}
END_TEST

/*
 * The joiner sdg pulled while md reshapes tier 2 onto it (md began: its
 * uevent seen while the job runs), then put back while raidd runs.  The
 * job goes on without it, as for any member lost once md began: the join
 * ends degraded at plan_grow's size, the data there.  sdg back (a
 * hot-plug): its label, the join's, behind the committed one, is
 * rewritten from the newest and md takes it back into both tiers: clean,
 * every member in every tier, after a reboot too.  The old code stopped
 * the job at its next label write (sdg's disk still named) and left the
 * join standing, sdg back or not, until a reboot or volume.grow.
 */
START_TEST(join_joiner_gone_mid_reshape_back_while_running)
{
	static struct plan_change c;
	uint64_t was, mirrored, off0;
	struct volume *v;

	mirrored = join_ready(&was, &off0, &c);
	v = volume_find("s");
	join_cut_mid_reshape(&c);	/* md a third through, the job running: no cut */
	sim_pull_disk("sdg");
	hotplug();
	run_reshaping();
	ck_assert_msg(v->label.intent.op == LABEL_OP_NONE, "%s", v->problem);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[1].nmembers, 3);
	ck_assert_uint_eq(v->label.size, c.after.size);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_uint_eq(unit_raidd_dm_size("s"), c.after.size);
	sim_md_idle(NULL);
	sim_push_disk("sdg");
	hotplug();
	recover_all(v);
	volume_check_states();
	check_members_kept(0, mirrored);
	check_joined(c.after.size, mirrored, off0);
	reboot_reshaping();
	check_members_kept(1, mirrored);
	check_joined(c.after.size, mirrored, off0);
}
END_TEST

static Suite *
grow_suite(void)
{
	Suite *s = suite_create("raidd-grow");
	TCase *tc = tcase_create("grow");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, raid5_grows_in_place);
	tcase_add_test(tc, jbod_map_keeps_data);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, grown_partition_keeps_its_guid);
	tcase_add_test(tc, node_swapped_during_partition_grow);
	tcase_add_test(tc, md_grow_refused_while_syncing);
	tcase_add_test(tc, repair_keeps_a_stopped_grow);
	tcase_add_loop_test(tc, power_cut_during_grow, 0, CUT_POINTS);
	tcase_add_test(tc, shr_new_tier_after_replacements);
	tcase_add_test(tc, shr_new_mirror);
	tcase_add_test(tc, shr_stale_superblock_in_band);
	tcase_add_test(tc, part_add_refuses_overlap);
	tcase_add_test(tc, part_del_as_the_kernel);
	tcase_add_test(tc, shr_band_held_by_the_kernel_not_zeroed);
	tcase_add_test(tc, shr_band_kernel_part_must_be_exact);
	tcase_add_test(tc, shr_grow_cut_after_label_member_gone);
	tcase_add_test(tc, shr_grow_cut_after_made_member_gone);
	tcase_add_test(tc, shr_grow_cut_dirty_member_gone);
	tcase_add_test(tc, shr_grow_cut_new_tier_member_gone);
	tcase_add_test(tc, md_refuses_a_claimed_member);
	tcase_add_test(tc, shr_join_by_volume_grow);
	tcase_add_test(tc, join_stopped_carried_on_by_volume_grow);
	tcase_add_test(tc, join_undone_at_start_before_md_began);
	tcase_add_test(tc, join_cut_joiner_gone_before_md_began);
	tcase_add_test(tc, join_cut_mid_reshape_carried_on);
	tcase_add_test(tc, join_of_a_disk_grown_in_place_cut_mid_reshape);
	tcase_add_loop_test(tc, join_takeover_cut_mid_superblocks, 0, 2);
	tcase_add_test(tc, part_new_band_is_the_plans);
	tcase_add_test(tc, join_replan_is_plan_grow);
	tcase_add_test(tc, join_rolled_back_before_md_began);
	tcase_add_test(tc, join_roll_back_refused_once_md_began);
	tcase_add_loop_test(tc, power_cut_during_join_roll_back, 0, JOIN_UNDO_CUTS);
	tcase_add_test(tc, join_steps_before_md);
	tcase_add_test(tc, join_spare_waits_for_whole_arrays);
	tcase_add_test(tc, join_stopped_leaves_no_spare_in_md);
	tcase_add_test(tc, join_member_lost_right_after_the_spare_joins);
	tcase_add_test(tc, md_takes_a_spare_on_io_errors);
	tcase_add_test(tc, join_start_refusals);
	tcase_add_test(tc, join_runs_to_the_end);
	tcase_add_loop_test(tc, power_cut_during_join, 0, JOIN_ALL_CUTS);
	tcase_add_loop_test(tc, power_cut_during_shr_grow, 0, SHR_CUTS);
	/* Two rooms joining in one volume.grow: one join, then the next. */
	tcase_add_test(tc, two_joins_by_volume_grow);
	tcase_add_test(tc, two_joins_then_a_new_tier);
	tcase_add_test(tc, no_call_between_the_two_joins);
	tcase_add_test(tc, two_joins_replan_is_the_first);
	tcase_add_test(tc, fourth_swap_joins_a_raid5);
	tcase_add_loop_test(tc, power_cut_during_two_joins, 0, TWO_JOIN_CUTS);
	suite_add_tcase(s, tc);
	/* The join's window between takeover and reshape (Decision 133). */
	tc = tcase_create("join-window");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, join_taken_over_member_lost);
	tcase_add_test(tc, join_undone_while_away_partition_gone_on_return);
	suite_add_tcase(s, tc);
	/* Decision 125's findings 4 and 6 on a running volume (Decision 133). */
	tc = tcase_create("join-findings");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, join_joiner_gone_before_md_began_repaired, 0, 2);
	tcase_add_loop_test(tc, join_joiner_back_while_running, 0, 2);
	tcase_add_loop_test(tc, power_cut_during_joiner_back, 0, JOINER_BACK_CUTS);
	tcase_add_loop_test(tc, power_cut_during_scan_undo, 0, SCAN_UNDO_CUTS);
	tcase_add_test(tc, join_stranger_in_the_joiners_place);
	tcase_add_test(tc, join_joiner_flaps_before_md_began);
	tcase_add_test(tc, join_joiner_gone_mid_reshape_back_while_running);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(grow_suite());
}
