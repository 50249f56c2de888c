/*
 * volume.repair on the simulated kernel, which is as strict as md: a
 * running array takes a new member only with its own superblock calling
 * it a spare, recovers only onto a spare, keeps the roles its
 * superblocks give, and a member it rebuilds carries recovery_offset in
 * its superblock across a power cut. Every level and tier layout, the
 * refusals, and a power cut after every mutating step of a repair.
 */
#include <linux/raid/md_p.h>

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "raidd/mdsb.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static const uint8_t unit_here[16] = { 0x52, 0x45, 0x50, 0x41, 0x49, 0x52 };

static void
add_disk(int bay, const char *name, uint64_t size, const char *serial)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/devices/sim/host0/target0:0:%d/0:0:%d:0", bay, bay);
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
	log_set_level(LOG_LVL_ERR);
	sys = &sys_sim;
	sim_reset();
	volume_reset();
	unit_reset();
	unit_set(unit_here);
	volume_set_degraded_start(1);
	repair_set_poll(0.0001);
	disk_set_board(&b);
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

/* Every array of v moves on by sectors of recovery. */
static void
recover(const struct volume *v, uint64_t sectors)
{
	char md[SYS_NAME_MAX];

	for (int t = 0; t < v->label.ntiers; t++) {
		volume_md_name(v, t, md, sizeof(md));
		sim_md_recover(md, sectors);
	}
}

/* Runs the job to its end, md recovering at full speed meanwhile. */
static enum job_state
drive(unsigned id, const char *vol)
{
	struct job *j = job_find(id);
	struct volume *v;

	ck_assert_ptr_nonnull(j);
	for (int i = 0; i < 2000 && job_state(j) == JOB_RUNNING; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		if ((v = volume_find(vol)) != NULL)
			recover(v, UINT64_MAX / 2);
	}
	return job_state(j);
}

/* Starts a method that answers with a job; 0 when it was refused. */
static unsigned
start(const char *method, const char *params, int *code)
{
	struct json_object *a = call(method, params), *r, *id;
	unsigned n = 0;

	*code = unit_err_code(a);
	if (*code == 0) {
		json_object_object_get_ex(a, "result", &r);
		json_object_object_get_ex(r, "job", &id);
		n = (unsigned)json_object_get_int(id);
	}
	json_object_put(a);
	return n;
}

static struct volume *
create(const char *name, const char *level, const char *disks)
{
	char params[256];
	int code;
	unsigned id;

	snprintf(params, sizeof(params), "{\"name\":\"%s\",\"level\":\"%s\",\"disks\":[%s]}",
	    name, level, disks);
	id = start("volume.create", params, &code);
	ck_assert_int_eq(code, 0);
	ck_assert_int_eq(drive(id, name), JOB_DONE);
	volume_check_states();
	return volume_find(name);
}

/* n blank 4 GiB disks sda.. in bays 1..n (serials A..), RAID 1 "r" on the first two. */
static struct volume *
raid1(int n)
{
	static const char *const names[] = { "sda", "sdb", "sdc", "sdd" };
	static const char *const serials[] = { "A", "B", "C", "D" };

	for (int i = 0; i < n; i++)
		add_disk(i + 1, names[i], 4 * GIB, serials[i]);
	disk_refresh(0);
	return create("r", "raid1", "\"sda\",\"sdb\"");
}

static int
repair(const char *vol, const char *disk, int force)
{
	char params[160];
	unsigned id;
	int code;

	snprintf(params, sizeof(params), "{\"name\":\"%s\",\"disk\":\"%s\",\"force\":%s}",
	    vol, disk, force ? "true" : "false");
	if ((id = start("volume.repair", params, &code)) == 0)
		return code;
	return drive(id, vol) == JOB_DONE ? 0 : -1;
}



/* Member m of tier t holds its role in sync on disk, in the label and in md. */
static void
assert_member(const struct volume *v, int m, const char *disk)
{
	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];
		struct sys_md_status st;
		char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
		int r = -1, found = 0;

		for (int k = 0; k < lt->nmembers; k++)
			if (lt->member[k] == m)
				r = k;
		if (r < 0)
			continue;
		ck_assert_int_eq(v->mlabel[m].tier[t].role, r);
		ck_assert_int_eq(sys->part_dev(disk, v->mlabel[m].tier[t].start, dev,
		    sizeof(dev)), 0);
		volume_md_name(v, t, md, sizeof(md));
		ck_assert_int_eq(sys->md_status(md, &st), 0);
		for (int i = 0; i < st.nmembers; i++)
			if (strcmp(st.member[i].dev, dev) == 0) {
				ck_assert_int_eq(st.member[i].slot, r);
				ck_assert_str_eq(st.member[i].state, "in_sync");
				found = 1;
			}
		ck_assert_msg(found, "%s not in %s", dev, md);
	}
	ck_assert_str_eq(v->disk[m], disk);
}



/* A pulled RAID 1 member is replaced by a blank disk in its bay; the old
   disk put back elsewhere is no member any more. */
START_TEST(raid1_pulled_member_replaced)
{
	struct volume *v;

	v = raid1(2);
	raidd_fill("r", 1);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	add_disk(2, "sde", 8 * GIB, "E");
	raidd_uevent();
	ck_assert_int_eq(repair("r", "bay2", 0), 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_str_eq(v->label.member[1].serial, "E");
	ck_assert_uint_eq(v->label.member[1].size, 8 * GIB);
	assert_member(v, 1, "sde");
	/* The old disk comes back (another bay): left out, still clean. */
	sim_pull_disk("sde");
	sim_push_disk("sdb");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->inconsistent, 0);
	ck_assert_str_eq(v->disk[1], "");
	ck_assert_ptr_null(volume_of_disk("sdb"));
	sim_push_disk("sde");
	raidd_reboot();
	v = volume_find("r");
	/* One event behind sda's run alone, sde takes the role sda's
	   superblock gives its slot (super_1_validate): spare, as md writes
	   a slot no device holds; md rebuilds it whole. */
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	recover(v, UINT64_MAX / 2);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sde");
	ck_assert_ptr_null(volume_of_disk("sdb"));
	raidd_check_fill("r", 1);
	/* The first original goes: the copy on the new disk serves. */
	sim_pull_disk("sda");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	raidd_check_fill("r", 1);
}
END_TEST

/*
 * After a repair of v's member m onto disk: another member's disk (away)
 * is pulled with a uevent naming only it, as on the kernel; the new
 * member stays, and volume.delete erases it with the others present.
 */
static void
delete_while_away(struct volume *v, const char *away, int m, const char *disk)
{
	struct json_object *a;

	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	sim_pull_disk(away);
	raidd_uevent_of(away);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_str_eq(v->disk[m], disk);
	a = call("volume.delete", "{\"name\":\"r\",\"confirm\":\"r\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	ck_assert_ptr_null(volume_find("r"));
	raidd_reboot();
	ck_assert_ptr_null(volume_find("r"));
	ck_assert_ptr_null(volume_of_disk(disk));
}

/* A volume deleted while one original member is away: the disk that
   replaced the other one is erased like every present member (it was
   left labelled, and the volume came back "inconsistent" from it). */
START_TEST(delete_after_repair_erases_the_new_member)
{
	struct volume *v;

	v = raid1(2);
	raidd_fill("r", 1);
	sim_pull_disk("sdb");
	raidd_uevent();
	add_disk(2, "sde", 8 * GIB, "E");
	raidd_uevent();
	ck_assert_int_eq(repair("r", "bay2", 0), 0);
	delete_while_away(v, "sda", 1, "sde");
}
END_TEST

static void inserted(const char *);

/* The same on a RAID 5 of four: bay 3 replaced, bay 4 away at the delete. */
START_TEST(delete_after_raid5_repair_erases_the_new_member)
{
	static const char *const names[] = { "sda", "sdb", "sdc", "sdd" };
	static const char *const serials[] = { "A", "B", "C", "D" };
	struct volume *v;

	for (int i = 0; i < 4; i++)
		add_disk(i + 1, names[i], (i < 2 ? 3 : 4) * GIB, serials[i]);
	disk_refresh(0);
	v = create("r", "raid5", "\"sda\",\"sdb\",\"sdc\",\"sdd\"");
	raidd_fill("r", 1);
	sim_pull_disk("sdc");
	raidd_uevent();
	/* The kernel names the new disk as it named the one pulled. */
	add_disk(3, "sdc", 4 * GIB, "E");
	inserted("sdc");
	ck_assert_ptr_nonnull(v->job);
	ck_assert_int_eq(drive(job_id(v->job), "r"), JOB_DONE);
	delete_while_away(v, "sdd", 2, "sdc");
}
END_TEST

/* The replaced disk is scanned before any member with the newest label:
   it is left out all the same. */
START_TEST(replaced_disk_scanned_first_is_left_out)
{
	struct volume *v;

	v = raid1(2);
	sim_pull_disk("sda");
	raidd_uevent();
	add_disk(3, "sde", 4 * GIB, "E");
	raidd_uevent();
	ck_assert_int_eq(repair("r", "sde", 0), 0);
	sim_pull_disk("sde");
	sim_push_disk("sda");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->inconsistent, 0);
	ck_assert_str_eq(v->disk[0], "");
	ck_assert_ptr_null(volume_of_disk("sda"));
	ck_assert_int_eq(v->state, VOL_DEGRADED);
}
END_TEST

/*
 * A disk from elsewhere (serial X) whose label copies member 1's of
 * "r" at a newer generation and says X replaced member 1 then: it has
 * no other member's witness (a survivor that took a repair's intent).
 */
static void
add_claimant(const struct volume *v)
{
	static uint8_t buf[LABEL_SLOT_SIZE];
	struct label l = v->mlabel[1];
	char err[160];

	add_disk(4, "sdx", 4 * GIB, "X");
	l.generation = v->label.generation + 5;
	l.joined[1] = l.generation;
	memset(&l.member[1], 0, sizeof(l.member[1]));
	memset(l.member[1].uuid, 0x58, 16);
	snprintf(l.member[1].serial, sizeof(l.member[1].serial), "X");
	l.member[1].size = 4 * GIB;
	for (int t = 0; t < l.ntiers; t++) {
		memset(l.tier[t].part_guid, 0, 16);
		memset(l.tier[t].part_type, 0, 16);
	}
	ck_assert_int_eq(label_encode(&l, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(sys->write_at("sdx", LABEL_SLOT0, buf, sizeof(buf)), 0);
}

/* Inserted while the volume runs: the running member stays, nothing is repairable. */
START_TEST(claimant_cannot_drop_a_running_member)
{
	struct volume *v = raid1(2);

	add_claimant(v);
	raidd_uevent();
	ck_assert_str_eq(v->disk[1], "sdb");
	ck_assert_ptr_null(volume_of_disk("sdx"));
	ck_assert_int_eq(v->state, VOL_CLEAN);
	add_disk(3, "sdc", 4 * GIB, "C");
	raidd_uevent();
	ck_assert_int_eq(repair("r", "sdc", 0), NAS_ERR_INVALID);
}
END_TEST

/* Present at boot: it neither drops member 1 nor gets its label written to member 0. */
START_TEST(claimant_at_boot_is_not_believed)
{
	struct volume *v = raid1(2);
	uint64_t gen = v->label.generation;
	struct label l;
	char err[160];
	int next;

	raidd_fill("r", 7);
	add_claimant(v);
	raidd_reboot();
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->inconsistent, 1);
	ck_assert_int_eq(label_read_disk("sda", &l, &next, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.generation, gen);
	ck_assert_str_eq(l.member[1].serial, "B");
	/* Taken out, the volume is whole again. */
	sim_pull_disk("sdx");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->inconsistent, 0);
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sdb");
	raidd_check_fill("r", 7);
}
END_TEST

/* A newer label whose map puts the volume's bytes elsewhere describes another volume. */
START_TEST(reordered_map_is_not_the_same_volume)
{
	struct volume *v;
	struct label a, b;

	add_disk(1, "sda", 1 * GIB, "A");
	add_disk(2, "sdb", 2 * GIB, "B");
	add_disk(3, "sdc", 2 * GIB, "C");
	disk_refresh(0);
	v = create("s", "shr", "\"sda\",\"sdb\",\"sdc\"");
	ck_assert_int_eq(v->label.ntiers, 2);
	a = b = v->mlabel[1];
	b.generation++;
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	b.nsegs = 2;
	b.seg[0] = (struct label_seg){ 1, 0, a.tier[1].tier_size };
	b.seg[1] = (struct label_seg){ 0, 0, a.tier[0].tier_size };
	ck_assert_int_eq(label_same_members(&a, &b), 0);
	/* Appended after what it held: the same volume, grown. */
	b.tier[0].tier_size += 64 * MIB;
	b.size += 64 * MIB;
	b.nsegs = 3;
	b.seg[0] = (struct label_seg){ 0, 0, a.tier[0].tier_size };
	b.seg[1] = (struct label_seg){ 1, 0, a.tier[1].tier_size };
	b.seg[2] = (struct label_seg){ 0, a.tier[0].tier_size, 64 * MIB };
	ck_assert_int_eq(label_same_members(&a, &b), 1);
	b.seg[1] = (struct label_seg){ 0, a.tier[0].tier_size, 64 * MIB };
	b.seg[2] = (struct label_seg){ 1, 0, a.tier[1].tier_size };
	ck_assert_int_eq(label_same_members(&a, &b), 0);
}
END_TEST

struct layout {
	const char	*level;
	int		 ndisks;
	uint64_t	 size[4];
};

static const struct layout layouts[] = {
	{ "raid1", 2, { 2 * GIB, 2 * GIB } },
	{ "raid1", 3, { 2 * GIB, 2 * GIB, 2 * GIB } },
	{ "raid5", 3, { 2 * GIB, 2 * GIB, 2 * GIB } },
	{ "raid5", 4, { 2 * GIB, 2 * GIB, 2 * GIB, 2 * GIB } },
	{ "raid10", 4, { 2 * GIB, 2 * GIB, 2 * GIB, 2 * GIB } },
	{ "shr", 2, { 2 * GIB, 2 * GIB } },
	{ "shr", 2, { 1 * GIB, 3 * GIB } },
	{ "shr", 3, { 1 * GIB, 2 * GIB, 3 * GIB } },
	{ "shr", 4, { 1 * GIB, 2 * GIB, 2 * GIB, 3 * GIB } },
};

/* Every member of every layout in turn: the new disk joins every tier
   that member was in, in its roles. */
START_TEST(every_layout_every_member)
{
	const struct layout *lay = &layouts[_i / 4];
	int m = _i % 4;
	char disks[64] = "", name[8], serial[16];
	struct volume *v;

	if (m >= lay->ndisks)
		return;
	for (int i = 0; i < lay->ndisks; i++) {
		snprintf(name, sizeof(name), "sd%c", 'a' + i);
		snprintf(serial, sizeof(serial), "S%d", i);
		add_disk(i + 1, name, lay->size[i], serial);
		snprintf(disks + strlen(disks), sizeof(disks) - strlen(disks), "%s\"%s\"",
		    i ? "," : "", name);
	}
	disk_refresh(0);
	v = create("v", lay->level, disks);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->state, VOL_CLEAN);
	snprintf(name, sizeof(name), "sd%c", 'a' + m);
	sim_pull_disk(name);
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	add_disk(m + 1, "sdx", lay->size[m] + GIB, "NEW");
	raidd_uevent();
	ck_assert_int_eq(repair("v", "sdx", 0), 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, m, "sdx");
	raidd_reboot();
	v = volume_find("v");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, m, "sdx");
}
END_TEST

/* What a refusal leaves: the new disk and the volume's labels untouched. */
START_TEST(refusals_write_nothing)
{
	struct volume *v;
	uint64_t gen;
	int ops;

	v = raid1(4);
	create("z", "raid0", "\"sdc\",\"sdd\"");
	/* Nothing is missing. */
	ck_assert_int_eq(repair("r", "sdc", 1), NAS_ERR_INVALID);
	sim_pull_disk("sdb");
	raidd_uevent();
	gen = v->label.generation;
	ops = sim_ops();
	/* A member of a running volume, even with force. */
	ck_assert_int_eq(repair("r", "sdc", 1), NAS_ERR_BUSY);
	ck_assert_int_eq(repair("r", "sda", 1), NAS_ERR_BUSY);
	/* Too small. */
	add_disk(2, "sde", 512 * MIB, "E");
	raidd_uevent();
	ck_assert_int_eq(repair("r", "sde", 1), NAS_ERR_INVALID);
	ck_assert_int_eq(repair("r", "nosuch", 0), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_uint_eq(v->label.generation, gen);
	/* A volume with no second copy. */
	sim_pull_disk("sdd");
	raidd_uevent();
	ck_assert_int_eq(repair("z", "sde", 1), NAS_ERR_REFUSED);
	ck_assert_int_eq(sim_ops(), ops);
}
END_TEST

/* From the first step, the disk a repair takes is not free for another call. */
START_TEST(repair_disk_is_busy_at_once)
{
	struct volume *v = raid1(4);
	unsigned id;
	int code;

	sim_pull_disk("sdb");
	raidd_uevent();
	id = start("volume.repair", "{\"name\":\"r\",\"disk\":\"sdc\"}", &code);
	ck_assert_int_eq(code, 0);
	start("volume.create", "{\"name\":\"x\",\"level\":\"raid1\","
	    "\"disks\":[\"sdc\",\"sdd\"],\"force\":true}", &code);
	ck_assert_int_eq(code, NAS_ERR_BUSY);
	ck_assert_int_eq(drive(id, "r"), JOB_DONE);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
}
END_TEST

/* A disk that holds data is taken only with force. */
START_TEST(disk_with_data_needs_force)
{
	struct volume *v;
	int ops;

	v = raid1(3);
	ck_assert_int_eq(sys->write_at("sdc", 1080, "\x53\xef", 2), 0);
	sim_pull_disk("sdb");
	raidd_uevent();
	ops = sim_ops();
	ck_assert_int_eq(repair("r", "sdc", 0), NAS_ERR_REFUSED);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_int_eq(repair("r", "sdc", 1), 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sdc");
}
END_TEST

/* A member md failed for errors (its disk still here) is replaced too;
   the failed disk is no member afterwards. */
START_TEST(failed_member_replaced)
{
	struct volume *v;

	v = raid1(3);
	sim_fail_member("md_r_t1", "sdb1");
	raidd_uevent();
	ck_assert(v->label.failed & 2);
	ck_assert_int_eq(repair("r", "sdc", 0), 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(v->label.failed, 0);
	assert_member(v, 1, "sdc");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(v->inconsistent, 0);
	ck_assert_ptr_null(volume_of_disk("sdb"));
}
END_TEST

/* dev's md superblock, read and written back as md would (its checksum). */
static void
sb_get(const char *dev, struct mdsb *sb)
{
	uint8_t buf[MDSB_BLOCK];
	char err[MDSB_ERRLEN];

	ck_assert_int_eq(sys->read_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)), 0);
	ck_assert_int_eq(mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, sb, err,
	    sizeof(err)), 0);
}

static void
sb_put(const char *dev, const struct mdsb *sb)
{
	uint8_t buf[MDSB_BLOCK];
	char err[MDSB_ERRLEN];

	ck_assert_int_eq(mdsb_encode(sb, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(sys->write_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)), 0);
}

/*
 * md's array on dev moved on while the power stayed: its events by
 * more, and its bitmap cleared up to them (events_cleared, byte 32 of
 * the bitmap superblock), as after the array ran whole again.
 */
static void
array_moves_on(const char *dev, uint64_t more)
{
	struct mdsb sb;
	uint8_t bm[MDSB_BITMAP_SB];
	uint64_t at;

	sb_get(dev, &sb);
	sb.events += more;
	sb_put(dev, &sb);
	ck_assert_int_gt(sb.bitmap_offset, 0);
	at = (MDSB_SUPER_OFFSET + (uint64_t)sb.bitmap_offset) * 512;
	ck_assert_int_eq(sys->read_at(dev, at, bm, sizeof(bm)), 0);
	for (int i = 0; i < 8; i++)
		bm[32 + i] = (uint8_t)(sb.events >> (8 * i));
	ck_assert_int_eq(sys->write_at(dev, at, bm, sizeof(bm)), 0);
}

/* volume.show's state of v's member m in tier 1. */
static void
assert_shown(const char *vol, int m, const char *state, const char *problem)
{
	char params[64];
	struct json_object *a, *r, *tiers, *mem, *st, *pr;

	snprintf(params, sizeof(params), "{\"name\":\"%s\"}", vol);
	a = call("volume.show", params);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_object_get_ex(a, "result", &r);
	ck_assert(json_object_object_get_ex(r, "tiers", &tiers));
	ck_assert(json_object_object_get_ex(json_object_array_get_idx(tiers, 0), "members",
	    &mem));
	ck_assert(json_object_object_get_ex(json_object_array_get_idx(mem, m), "state", &st));
	ck_assert_str_eq(json_object_get_string(st), state);
	ck_assert(json_object_object_get_ex(r, "problem", &pr));
	ck_assert_ptr_nonnull(strstr(json_object_get_string(pr), problem));
	json_object_put(a);
}

/*
 * md failed sdb while raidd did not see it (stopped, or the power went
 * right after md's superblock write): sda's superblock calls it faulty,
 * the labels do not.  At the next start md binds it faulty (variant 0:
 * one event behind) or kicks it as non-fresh (1: further behind); its
 * bitmap no longer covers what it missed, so md will not take it back.
 * The volume lacks it: failed in the labels, shown faulty, and a blank
 * disk replaces it.
 */
START_TEST(failed_unseen_before_boot_is_replaced)
{
	struct volume *v;

	v = raid1(3);
	raidd_fill("r", 7);
	sim_fail_member("md_r_t1", "sdb1");
	array_moves_on("sda1", (uint64_t)_i);
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_str_eq(v->disk[1], "sdb");
	ck_assert(v->label.failed & 2);
	assert_shown("r", 1, "faulty", "volume.repair");
	/* Persisted: the next start still knows. */
	raidd_reboot();
	v = volume_find("r");
	ck_assert(v->label.failed & 2);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(repair("r", "sdc", 0), 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(v->label.failed, 0);
	assert_member(v, 1, "sdc");
	raidd_check_fill("r", 7);
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_ptr_null(volume_of_disk("sdb"));
}
END_TEST

/*
 * The same, but its bitmap covers what it missed: md takes it back, so
 * it rejoins at start-up (md resyncs it through the bitmap).
 */
START_TEST(failed_unseen_before_boot_rejoins_through_bitmap)
{
	struct volume *v;

	v = raid1(2);
	raidd_fill("r", 9);
	sim_fail_member("md_r_t1", "sdb1");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->label.failed, 0);
	/* md recovers it (In_sync cleared) over the bitmap's dirty chunks:
	   none were written since, so one step of the thread ends it. */
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	recover(v, 1);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sdb");
	raidd_check_fill("r", 9);
}
END_TEST

/* volume.clear on volume r, answered without an error. */
static void
clear(void)
{
	struct json_object *a = call("volume.clear", "{\"name\":\"r\"}");

	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
}

/* sdb, member 2 of r, failed in the labels and behind further than sda's bitmap reaches. */
static struct volume *
failed_behind(int boot)
{
	struct volume *v = raid1(2);

	raidd_fill("r", 11);
	sim_fail_member("md_r_t1", "sdb1");
	raidd_uevent();
	if (boot) {
		array_moves_on("sda1", 2);
		raidd_reboot();
	} else {
		/* mdadm --grow --bitmap=none, then =internal: nothing is dirty */
		sim_md_bitmap_renew("md_r_t1");
	}
	v = volume_find("r");
	ck_assert(v->label.failed & 2);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	return v;
}

/* md rebuilds sdb into member 2 of r from sector 0; then r is clean, its data intact. */
static void
rebuilt_in_full(struct volume *v, uint8_t seed)
{
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	/* in full: a bitmap re-add with nothing dirty would end in one step */
	recover(v, 64);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	recover(v, UINT64_MAX / 2);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sdb");
	raidd_check_fill("r", seed);
}

/*
 * volume.clear vouches for a failed member's disk: one behind further
 * than the bitmap reaches (md failed it while running, variant 0; or
 * start-up failed it, variant 1) is taken back as a spare into its
 * role and md rebuilds it in full, instead of being kept out (and
 * failed again at the next start).
 */
START_TEST(cleared_member_rebuilt_in_full)
{
	struct volume *v = failed_behind(_i);

	clear();
	ck_assert_int_eq(v->label.failed, 0);
	rebuilt_in_full(v, 11);
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(v->label.failed, 0);
	assert_member(v, 1, "sdb");
	raidd_check_fill("r", 11);
}
END_TEST

/*
 * The power goes after each step of such a clear, then once halfway
 * through md's rebuild: the next start resumes the rebuild where md's
 * recovery_offset says, or (md had not taken the member yet) fails it
 * again for the user to clear again - never clean without a rebuild,
 * never inconsistent, the data intact.
 */
START_TEST(cleared_rebuild_survives_power_cut)
{
	struct volume *v;
	int done = 0;

	for (int k = 0; !done && k < 12; k++) {
		sim_reset();
		volume_reset();
		job_reset();
		v = failed_behind(0);
		sim_fail_after(k);
		json_object_put(call("volume.clear", "{\"name\":\"r\"}"));
		sim_fail_after(-1);
		done = v->state == VOL_REBUILDING || volume_state_now(v) == VOL_REBUILDING;
		if (done)
			recover(v, 64);
		raidd_reboot();
		v = volume_find("r");
		ck_assert_int_eq(v->inconsistent, 0);
		if (v->label.failed & 2) {
			ck_assert_int_eq(v->state, VOL_DEGRADED);
			clear();
		}
		rebuilt_in_full(v, 11);
	}
	ck_assert(done);
}
END_TEST

/* A failed member's superblock made ahead of the array (used on its own), or another array's. */
START_TEST(cleared_split_brain_or_stranger_stays_out)
{
	struct volume *v = failed_behind(0);
	struct mdsb sb, run;

	sb_get("sdb1", &sb);
	sb_get("sda1", &run);
	if (_i == 0)
		sb.events = run.events + 5;
	else
		sb.set_uuid[0] ^= 0xff;
	sb_put("sdb1", &sb);
	clear();
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_ptr_nonnull(strstr(v->problem, _i == 0 ? "split brain" : "another array"));
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_DEGRADED);
}
END_TEST

/*
 * A member pulled from the running volume comes back further behind
 * than the bitmap reaches: failed in the labels at once, as start-up
 * does, with a problem naming both ways forward; volume.clear then
 * rebuilds it in full.
 */
START_TEST(returned_behind_bitmap_is_failed)
{
	struct volume *v = raid1(2);

	raidd_fill("r", 13);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(sim_md_bitmap_renew("md_r_t1"), 0);
	sim_push_disk("sdb");
	raidd_uevent();
	ck_assert(v->label.failed & 2);
	ck_assert_int_eq(v->split, 0);
	assert_shown("r", 1, "faulty", "volume.clear");
	assert_shown("r", 1, "faulty", "volume.repair");
	clear();
	rebuilt_in_full(v, 13);
}
END_TEST

/*
 * The power goes after every mutating step of a repair (SHR on three
 * mixed disks: the new disk joins two tiers). The next start leaves the
 * volume running, never inconsistent nor failed; the repair goes on by
 * itself once the new disk carries its label, or is asked again.
 */
START_TEST(power_cut_after_every_step)
{
	int done = 0;

	int cuts = 0;

	for (int k = 0; !done && k < 60; k++, cuts++) {
		struct volume *v;
		struct label l;
		char err[160];
		int next;
		unsigned id;
		int code;

		sim_reset();
		volume_reset();
		job_reset();
		add_disk(1, "sda", 1 * GIB, "A");
		add_disk(2, "sdb", 2 * GIB, "B");
		add_disk(3, "sdc", 2 * GIB, "C");
		disk_refresh(0);
		v = create("s", "shr", "\"sda\",\"sdb\",\"sdc\"");
		raidd_fill("s", (uint8_t)k);
		sim_pull_disk("sdc");
		raidd_uevent();
		ck_assert_int_eq(v->state, VOL_DEGRADED);
		add_disk(3, "sde", 3 * GIB, "E");
		raidd_uevent();
		id = start("volume.repair", "{\"name\":\"s\",\"disk\":\"sde\"}", &code);
		ck_assert_int_eq(code, 0);
		sim_fail_after(k);
		done = drive(id, "s") == JOB_DONE;
		raidd_reboot();
		v = volume_find("s");
		ck_assert_msg(v != NULL, "cut %d: volume gone", k);
		ck_assert_msg(!v->inconsistent, "cut %d: %s", k, v->problem);
		ck_assert_msg(v->assembled, "cut %d: %s", k, v->problem);
		ck_assert_msg(v->state == VOL_DEGRADED || v->state == VOL_CLEAN ||
		    v->state == VOL_REBUILDING, "cut %d: %s", k, volume_state_name(v->state));
		raidd_check_fill("s", (uint8_t)k);
		/* A new disk that holds its label is the member: never discarded. */
		if (label_read_disk("sde", &l, &next, err, sizeof(err)) == 0 &&
		    memcmp(l.volume_uuid, v->label.volume_uuid, 16) == 0)
			ck_assert_msg(strcmp(v->disk[2], "sde") == 0, "cut %d: the labelled new "
			    "disk was left out", k);
		if (v->job)
			ck_assert_int_eq(drive(job_id(v->job), "s"), JOB_DONE);
		else if (v->disk[2][0] == '\0')
			ck_assert_int_eq(repair("s", "sde", 1), 0);
		recover(v, UINT64_MAX / 2);
		volume_check_states();
		ck_assert_msg(v->state == VOL_CLEAN, "cut %d: %s (%s)", k,
		    volume_state_name(v->state), v->problem);
		ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
		assert_member(v, 2, "sde");
		raidd_reboot();
		v = volume_find("s");
		ck_assert_int_eq(v->state, VOL_CLEAN);
		raidd_check_fill("s", (uint8_t)k);
	}
	ck_assert(done);
	/* wipe, intent (2), label, partition, add (2 tiers), commit (3), ... */
	ck_assert_int_ge(cuts, 10);
}
END_TEST

/* A power cut half-way through md's rebuild: it goes on from the
   member's recovery_offset, not from zero, with the member in its role. */
START_TEST(rebuild_resumes_after_power_cut)
{
	struct sys_md_status st;
	struct volume *v;
	unsigned id;
	int code;

	v = raid1(2);
	sim_pull_disk("sdb");
	raidd_uevent();
	add_disk(2, "sde", 4 * GIB, "E");
	raidd_uevent();
	id = start("volume.repair", "{\"name\":\"r\",\"disk\":\"sde\"}", &code);
	ck_assert_int_eq(code, 0);
	/* Until the labels commit: md rebuilds from then on. */
	for (int i = 0; i < 100 && (v->label.intent.op != LABEL_OP_NONE ||
	    v->label.member[1].serial[0] != 'E'); i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	recover(v, 4096);
	recover(v, 4096);
	ck_assert_int_eq(sys->md_status("md_r_t1", &st), 0);
	ck_assert_str_eq(st.sync_action, "recover");
	ck_assert_uint_eq(st.sync_done, 8192);
	ck_assert_int_eq(job_state(job_find(id)), JOB_RUNNING);
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_REBUILDING);	/* raidd-detect's state */
	ck_assert_str_eq(v->disk[1], "sde");
	ck_assert_int_eq(sys->md_status("md_r_t1", &st), 0);
	ck_assert_str_eq(st.sync_action, "recover");
	ck_assert_uint_eq(st.sync_done, 8192);
	recover(v, UINT64_MAX / 2);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sde");
}
END_TEST

/* md writes the spare role into a slot no bound device holds (super_1_sync),
   faulty only for a device still bound as Faulty. */
START_TEST(sim_unheld_slot_reads_spare)
{
	static struct mdsb sb;
	struct volume *v = raid1(2);

	ck_assert_int_eq(member_read_sb("sda1", &sb), 0);
	ck_assert_uint_lt(sb.dev_roles[1], MDSB_ROLE_FAULTY);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	raidd_reboot();
	ck_assert_int_eq(member_read_sb("sda1", &sb), 0);
	ck_assert_uint_eq(sb.dev_roles[1], MDSB_ROLE_SPARE);
}
END_TEST

/* A member md failed but still holds (its disk errors every I/O, so its
   own superblock cannot be read) keeps its slot: md writes it faulty
   (super_1_sync's Faulty rdev), never spare. */
START_TEST(sim_failed_bound_slot_reads_faulty)
{
	static struct mdsb sb;
	struct volume *v = raid1(2);

	(void)v;
	sim_disk_error("sdb", 1);
	ck_assert_int_eq(member_read_sb("sda1", &sb), 0);
	ck_assert_uint_eq(sb.dev_roles[1], MDSB_ROLE_FAULTY);
}
END_TEST

/* md is strict: a running array takes no new member whose superblock is
   not its own spare, and never into a role someone holds. */
START_TEST(sim_takes_only_spares)
{
	struct sys_md one = { .name = "md_r_t1", .nmembers = 1, .raid_disks = 2 };
	static uint8_t sb[4096];

	struct sys_part p = { .start = 1 << 20, .size = 1 << 30, .name = "x" };
	unsigned ma, mi;
	int fd;

	raid1(3);
	ck_assert_int_ne(fd = sys->dev_open("sdc", &ma, &mi), -1);
	ck_assert_int_eq(sys->partition("sdc", fd, &p, 1), 0);
	ck_assert_int_eq(sys->fd_close(fd), 0);
	snprintf(one.member[0].dev, sizeof(one.member[0].dev), "sdc1");
	one.member[0].role = 0;
	one.member[0].sb = sb;
	one.member[0].sb_len = sizeof(sb);
	ck_assert_int_eq(sys->md_add_new(&one), -1);	/* no superblock */
	ck_assert_int_eq(sys->read_at("sda1", 4096, sb, sizeof(sb)), 0);
	ck_assert_int_eq(sys->md_add_new(&one), -1);	/* role 0's own, not a spare */
}
END_TEST

/* sdb1's state and slot as md shows them in md_r_t1 ("" when not listed). */
static const char *
sdb1_in_md(struct sys_md_status *st, int *slot)
{
	ck_assert_int_eq(sys->md_status("md_r_t1", st), 0);
	for (int i = 0; i < st->nmembers; i++)
		if (strcmp(st->member[i].dev, "sdb1") == 0) {
			*slot = st->member[i].slot;
			return st->member[i].state;
		}
	*slot = -2;
	return "";
}

/*
 * md re-adds a member in its role with In_sync cleared and recovers the
 * chunks its bitmap holds dirty (written while the member was out), no
 * more: the volume rebuilds, briefly, before it is clean again.
 */
START_TEST(sim_readd_recovers_the_dirty_chunks)
{
	struct volume *v = raid1(2);
	struct sys_md_status st;
	int slot, steps = 0;

	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	raidd_fill("r", 3);
	sim_push_disk("sdb");
	raidd_uevent();
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "spare");
	ck_assert_int_eq(slot, 1);
	ck_assert_str_eq(st.sync_action, "recover");
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	while (v->state == VOL_REBUILDING && steps++ < 10000) {
		sim_md_recover("md_r_t1", 2048);
		volume_check_states();
	}
	ck_assert_int_eq(v->state, VOL_CLEAN);
	/* A few bitmap chunks, not the whole member (4 GiB: 2048 steps). */
	ck_assert_int_lt(steps, 200);
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "in_sync");
	ck_assert_int_eq(slot, 1);
	raidd_check_fill("r", 3);
}
END_TEST

/* sdb1, just bound, is recovered in full into the free role 1. */
static void
recovered_in_full(void)
{
	struct sys_md_status st;
	int slot;

	ck_assert_str_eq(sdb1_in_md(&st, &slot), "spare");
	ck_assert_int_eq(slot, 1);
	sim_md_recover("md_r_t1", 1 << 20);
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "spare");
	ck_assert_str_eq(st.sync_action, "recover");
	sim_md_recover("md_r_t1", UINT64_MAX / 2);
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "in_sync");
}

/*
 * md refuses sdb1 its old role 1 (EINVAL, as md_add_new_disk's "events
 * doesn't match"); the seam adds it again as a spare (lnx_md_readd),
 * which md takes into the free role 1 and recovers in full: still
 * recovering 512 MiB in, in sync at the end.
 */
static void
readd_is_a_full_spare(void)
{
	int before = sim_ops();

	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", 1), 0);
	/* two ADD_NEW_DISKs: the role refused, then the spare */
	ck_assert_int_eq(sim_ops() - before, 2);
	recovered_in_full();
}

/*
 * super_1_validate: a device older than the bitmap's events_cleared (the
 * array ran whole and was written after it left) is not given its role
 * back: asked in it, md refuses (EINVAL); as a spare it is recovered in
 * full into the free role.
 */
START_TEST(sim_readd_behind_events_cleared_is_a_spare)
{
	struct volume *v = raid1(3);

	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(repair("r", "sdc", 0), 0);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	raidd_fill("r", 4);
	sim_fail_member("md_r_t1", "sdc1");
	sim_push_disk("sdb");
	readd_is_a_full_spare();
}
END_TEST

/* dev's superblock without its internal bitmap (as mdadm --grow --bitmap=none). */
static void
sb_drop_bitmap(const char *dev)
{
	struct mdsb sb;

	sb_get(dev, &sb);
	sb.feature_map &= ~(uint32_t)MD_FEATURE_BITMAP_OFFSET;
	sb.bitmap_offset = 0;
	sb_put(dev, &sb);
}

/*
 * With no bitmap, super_1_validate gives a device behind the array's
 * events no role: asked into it, md refuses (EINVAL); as a spare it is
 * recovered in full. With the bitmap the same device comes back in its
 * role (sim_readd_recovers_the_dirty_chunks).
 */
START_TEST(sim_readd_without_bitmap_is_a_spare)
{
	struct volume *v = raid1(2);

	sim_power_cut();
	sb_drop_bitmap("sda1");
	sb_drop_bitmap("sdb1");
	raidd_reboot();
	v = volume_find("r");
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(sys->md_fail("md_r_t1", "sdb1"), 0);
	readd_is_a_full_spare();
}
END_TEST

/*
 * super_1_validate: a device whose superblock says it was being recovered
 * (MD_FEATURE_RECOVERY_OFFSET) without MD_FEATURE_RECOVERY_BITMAP was
 * being rebuilt in full: its data past the offset is not the array's, so
 * md keeps no saved role (saved_raid_disk -1).  Asked into its role md
 * takes it (raid_disk is that role), then recovers it in full: the bitmap
 * says nothing of what it never had.
 */
START_TEST(sim_readd_mid_full_recovery_is_recovered_in_full)
{
	struct sys_md_status st;
	struct mdsb sb;
	int slot, before;

	raid1(2);
	ck_assert_int_eq(sys->md_fail("md_r_t1", "sdb1"), 0);
	/* Older than the bitmap reaches: md recovers it in full. */
	sb_get("sdb1", &sb);
	sb.events = 0;
	sb_put("sdb1", &sb);
	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", -1), 0);
	sim_md_recover("md_r_t1", 1 << 20);
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "spare");
	ck_assert_int_eq(slot, 1);
	ck_assert_int_eq(sys->md_fail("md_r_t1", "sdb1"), 0);
	sb_get("sdb1", &sb);
	ck_assert(sb.feature_map & MD_FEATURE_RECOVERY_OFFSET);
	ck_assert(!(sb.feature_map & MD_FEATURE_RECOVERY_BITMAP));
	ck_assert_uint_eq(sb.dev_roles[sb.dev_number], 1);
	before = sim_ops();
	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", 1), 0);
	/* one ADD_NEW_DISK: md takes it in its role (raid_disk is the role) */
	ck_assert_int_eq(sim_ops() - before, 1);
	recovered_in_full();
}
END_TEST

/*
 * bind_rdev_to_array(): a device whose superblock names a desc_nr a bound
 * member has is refused (EBUSY), and so is one whose component is
 * shorter than the array's (ENOSPC), in a role or as a spare.
 */
START_TEST(sim_readd_binds_as_md_does)
{
	struct mdsb sb, held;

	raid1(2);
	ck_assert_int_eq(sys->md_fail("md_r_t1", "sdb1"), 0);
	sb_get("sdb1", &sb);
	sb_get("sda1", &held);
	sb.dev_number = held.dev_number;
	sb_put("sdb1", &sb);
	errno = 0;
	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", -1), -1);
	ck_assert_int_eq(errno, EBUSY);
	/* As an array of smaller members wrote it. */
	sb.dev_number = 1;
	sb.size = sb.data_size = held.size - 8;
	sb_put("sdb1", &sb);
	errno = 0;
	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", -1), -1);
	ck_assert_int_eq(errno, ENOSPC);
	sb.size = held.size;
	sb.data_size = held.data_size;
	sb_put("sdb1", &sb);
	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", -1), 0);
}
END_TEST

/*
 * md compares no UUID on a hot add (mdadm does): a device whose
 * superblock names another array is taken in the role it gives. raidd
 * must keep it out itself, and does.
 */
START_TEST(sim_readd_compares_no_uuid)
{
	struct volume *v = raid1(2);
	struct sys_md_status st;
	struct mdsb sb;
	int slot;

	sim_pull_disk("sdb");
	raidd_uevent();
	sim_push_disk("sdb");
	sb_get("sdb1", &sb);
	sb.set_uuid[0] ^= 0xff;
	sb_put("sdb1", &sb);
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "");
	ck_assert_int_eq(sys->md_readd("md_r_t1", "sdb1", 1), 0);
	ck_assert_str_eq(sdb1_in_md(&st, &slot), "spare");
	ck_assert_int_eq(slot, 1);
}
END_TEST

/*
 * What sdd holds where a repair writes (the erase's first 16 MiB and
 * last MiB cover the label, the GPT and the md blocks): 1 when it is
 * what was saved at save.
 */
#define HEAD_BYTES	(17ULL << 20)
#define TAIL_BYTES	(1ULL << 20)

/*
 * md reads a new member's superblock first (super_1_load): a partition
 * that cannot hold data_offset + data_size is refused (-EINVAL).
 */
START_TEST(sim_refuses_a_small_spare)
{
	struct sys_md one = { .name = "md_r_t1", .nmembers = 1, .raid_disks = 2 };
	struct sys_part p = { .name = "x" };
	static uint8_t buf[MDSB_BLOCK];
	static struct mdsb sb, spare;
	struct volume *v = raid1(3);
	char err[MDSB_ERRLEN];
	unsigned ma, mi;
	int fd;

	sim_pull_disk("sdb");
	raidd_uevent();
	p.start = v->mlabel[0].tier[0].start;
	p.size = v->mlabel[0].tier[0].size;
	ck_assert_int_ne(fd = sys->dev_open("sdc", &ma, &mi), -1);
	ck_assert_int_eq(sys->partition("sdc", fd, &p, 1), 0);
	ck_assert_int_eq(sys->fd_close(fd), 0);
	ck_assert_int_eq(member_read_sb("sda1", &sb), 0);
	sb.dev_number = 2;
	sb.dev_roles[2] = MDSB_ROLE_SPARE;
	sb.device_uuid[0] ^= 1;
	snprintf(one.member[0].dev, sizeof(one.member[0].dev), "sdc1");
	one.member[0].role = 1;
	one.member[0].sb = buf;
	one.member[0].sb_len = sizeof(buf);
	/* More data than the partition holds. */
	spare = sb;
	spare.data_size = p.size / 512 - sb.data_offset + 8;
	ck_assert_int_eq(mdsb_encode(&spare, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(sys->md_add_new(&one), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* As the array's own: taken. */
	ck_assert_int_eq(mdsb_encode(&sb, buf, sizeof(buf), err, sizeof(err)), 0);
	ck_assert_int_eq(sys->md_add_new(&one), 0);
}
END_TEST

static int
sdd_same(int save)
{
	static uint8_t was[HEAD_BYTES + TAIL_BYTES], now[HEAD_BYTES + TAIL_BYTES];
	uint8_t *b = save ? was : now;

	ck_assert_int_eq(sys->read_at("sdd", 0, b, HEAD_BYTES), 0);
	ck_assert_int_eq(sys->read_at("sdd", 4 * GIB - TAIL_BYTES, b + HEAD_BYTES, TAIL_BYTES), 0);
	return memcmp(was, now, sizeof(now)) == 0;
}

static int swap_countdown;

/* At the countdown's end, /dev/sdc leads to sdd (Decision 21's hostile node). */
static void
swap_at_countdown(void)
{
	if (--swap_countdown > 0) {
		sim_before_step(swap_at_countdown);
		return;
	}
	sim_node_swap("sdc", "sdd");
}

/*
 * A repair onto sdc whose node is made to lead to sdd (a free disk)
 * before any of the repair's writes: from then on nothing reaches sdd,
 * through the erase, the label, the GPT, the spare's superblock or md's
 * hot-add. _i is the write the swap comes before.
 */
START_TEST(repair_through_a_swapped_node_writes_nothing)
{
	struct volume *v = raid1(4);
	enum job_state js;
	unsigned id;
	int code;

	sim_pull_disk("sdb");
	raidd_uevent();
	sdd_same(1);
	swap_countdown = _i + 1;
	sim_before_step(swap_at_countdown);
	id = start("volume.repair", "{\"name\":\"r\",\"disk\":\"sdc\"}", &code);
	ck_assert_int_eq(code, 0);
	js = drive(id, "r");
	sim_before_step(NULL);
	if (swap_countdown == 0)
		sim_node_swap("sdc", "sdd");	/* put back: read sdd itself */
	ck_assert(sdd_same(0));
	/* Early swaps stop the repair; the volume runs on, never inconsistent. */
	ck_assert(js == JOB_DONE || js == JOB_FAILED);
	ck_assert_int_eq(swap_countdown > 0 || _i > 0 || js == JOB_FAILED, 1);
	v = volume_find("r");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->inconsistent, 0);
	ck_assert_int_ne(volume_state_now(v), VOL_FAILED);
	ck_assert_ptr_null(volume_of_disk("sdd"));
}
END_TEST

/* The uevent of a disk added: what hotplug_cb does. */
static void
inserted(const char *name)
{
	char names[1][SYS_NAME_MAX];

	snprintf(names[0], sizeof(names[0]), "%s", name);
	raidd_uevent();
	repair_auto(names, 1);
}

static struct volume *
raid1_missing_bay2(void)
{
	struct volume *v;

	v = raid1(3);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	return v;
}

/* A blank disk in the missing member's bay is made the member by itself. */
START_TEST(auto_repair_blank_disk_in_the_bay)
{
	struct volume *v = raid1_missing_bay2();

	add_disk(2, "sde", 4 * GIB, "E");
	inserted("sde");
	ck_assert_ptr_nonnull(v->job);
	ck_assert_int_eq(drive(job_id(v->job), "r"), JOB_DONE);
	volume_check_states();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	assert_member(v, 1, "sde");
}
END_TEST

/* Never by itself: a disk with data, a disk in another bay, auto_repair off. */
START_TEST(auto_repair_takes_nothing_else)
{
	struct volume *v = raid1_missing_bay2();
	int ops = sim_ops();

	add_disk(4, "sdf", 4 * GIB, "F");	/* blank, but in bay 4 */
	inserted("sdf");
	ck_assert_ptr_null(v->job);
	add_disk(2, "sde", 4 * GIB, "E");
	ck_assert_int_eq(sys->write_at("sde", 1080, "\x53\xef", 2), 0);
	ops = sim_ops();
	inserted("sde");
	ck_assert_ptr_null(v->job);
	ck_assert_int_eq(sim_ops(), ops);
	sim_remove_disk("sde");
	raidd_uevent();
	repair_set_auto(0);
	add_disk(2, "sdg", 4 * GIB, "G");
	inserted("sdg");
	ck_assert_ptr_null(v->job);
	ck_assert_int_eq(sim_ops(), ops);
	repair_set_auto(1);
}
END_TEST

static Suite *
repair_suite(void)
{
	Suite *s = suite_create("raidd-repair");
	TCase *tc = tcase_create("repair");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, raid1_pulled_member_replaced);
	tcase_add_test(tc, replaced_disk_scanned_first_is_left_out);
	tcase_add_test(tc, claimant_cannot_drop_a_running_member);
	tcase_add_test(tc, claimant_at_boot_is_not_believed);
	tcase_add_test(tc, reordered_map_is_not_the_same_volume);
	tcase_add_loop_test(tc, every_layout_every_member, 0,
	    (int)(sizeof(layouts) / sizeof(layouts[0])) * 4);
	tcase_add_test(tc, refusals_write_nothing);
	tcase_add_test(tc, disk_with_data_needs_force);
	tcase_add_test(tc, repair_disk_is_busy_at_once);
	tcase_add_test(tc, failed_member_replaced);
	tcase_add_loop_test(tc, failed_unseen_before_boot_is_replaced, 0, 2);
	tcase_add_test(tc, failed_unseen_before_boot_rejoins_through_bitmap);
	tcase_add_loop_test(tc, cleared_member_rebuilt_in_full, 0, 2);
	tcase_add_test(tc, cleared_rebuild_survives_power_cut);
	tcase_add_loop_test(tc, cleared_split_brain_or_stranger_stays_out, 0, 2);
	tcase_add_test(tc, returned_behind_bitmap_is_failed);
	tcase_add_test(tc, rebuild_resumes_after_power_cut);
	tcase_add_test(tc, sim_takes_only_spares);
	tcase_add_test(tc, sim_unheld_slot_reads_spare);
	tcase_add_test(tc, sim_failed_bound_slot_reads_faulty);
	tcase_add_test(tc, sim_readd_recovers_the_dirty_chunks);
	tcase_add_test(tc, sim_readd_behind_events_cleared_is_a_spare);
	tcase_add_test(tc, sim_readd_compares_no_uuid);
	tcase_add_test(tc, sim_readd_without_bitmap_is_a_spare);
	tcase_add_test(tc, sim_readd_binds_as_md_does);
	tcase_add_test(tc, sim_readd_mid_full_recovery_is_recovered_in_full);
	tcase_add_test(tc, sim_refuses_a_small_spare);
	tcase_add_test(tc, delete_after_repair_erases_the_new_member);
	tcase_add_test(tc, delete_after_raid5_repair_erases_the_new_member);
	tcase_add_test(tc, auto_repair_blank_disk_in_the_bay);
	tcase_add_test(tc, auto_repair_takes_nothing_else);
	suite_add_tcase(s, tc);
	/* One create and one repair per cut point: slow under ASan on a busy machine. */
	tc = tcase_create("power-cut");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, power_cut_after_every_step);
	suite_add_tcase(s, tc);
	tc = tcase_create("swapped-node");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, repair_through_a_swapped_node_writes_nothing, 0, 16);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(repair_suite());
}
