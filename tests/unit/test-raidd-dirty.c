/*
 * A dirty degraded RAID 5 or SHR (Decision 90) on the simulated kernel,
 * which refuses to start one as md does (raid5.c run()) unless told
 * start_dirty_degraded: raidd starts it read-only, says dirty-degraded
 * with a reason, refuses to rebuild from it, and volume.start with force
 * makes it writable. A clean degraded array and a dirty RAID 1 start as
 * before. The commonest case: md failed a member for errors while its
 * disk stayed (labelled failed), then the cut (Decision 116).
 */
#include <errno.h>
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "raidd/crypt.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };

static void
setup(void)
{
	raidd_sim_setup(4 * GIB, "DRT", 0);
	crypt_sim_reset();
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, disk_methods);
	rpc_server_add_methods(srv, volume_methods);
	rpc_server_add_methods(srv, crypt_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
}

static struct json_object *
call_expect(const char *method, const char *params, int err)
{
	return unit_call_expect(srv, &root, method, params, err);
}

/* The member partitions of md_<vol>_t1 that md lists now. */
static void
members_of(const char *md, struct sys_md *out)
{
	struct sys_md_status st;

	memset(out, 0, sizeof(*out));
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	snprintf(out->name, sizeof(out->name), "%s", md);
	out->raid_disks = st.raid_disks;
	for (int i = 0; i < st.nmembers; i++)
		if (st.member[i].slot >= 0) {
			snprintf(out->member[out->nmembers].dev, SYS_NAME_MAX, "%s",
			    st.member[i].dev);
			out->member[out->nmembers++].role = st.member[i].slot;
		}
}

/* A volume of level over four bays, written while bay 2 is out, then a power cut. */
static struct volume *
cut_while_degraded_and_writing(const char *level, int idle)
{
	struct volume *v = raidd_create(srv, "d", level, "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");

	raidd_fill("d", 1);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	raidd_fill_busy("d", 2);
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 1);
	if (idle)
		sim_md_idle("md_d_t1");
	raidd_reboot();
	return volume_find("d");
}

/* md itself: refused dirty and degraded, started with start_dirty_degraded. */
START_TEST(sim_refuses_dirty_degraded_raid5_as_md)
{
	struct sys_md md;

	raidd_create(srv, "d", "raid5", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 0);
	raidd_fill_busy("d", 1);
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 1);
	members_of("md_d_t1", &md);
	sim_pull_disk("sdb");
	sim_power_cut();
	ck_assert_int_eq(sys->md_assemble(&md), -1);
	ck_assert_int_eq(errno, EIO);
	md.flags = SYS_MD_START_DIRTY | SYS_MD_READONLY;
	ck_assert_int_eq(sys->md_assemble(&md), 0);
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 1);	/* read-only: nothing written */
	ck_assert_int_eq(sys->write_at("md_d_t1", 1 << 20, "x", 1), -1);
	ck_assert_int_eq(errno, EROFS);
	ck_assert_int_eq(sys->md_set_rw("md_d_t1"), 0);
	ck_assert_int_eq(sys->write_at("md_d_t1", 1 << 20, "x", 1), 0);
	/* A clean stop marks it clean: the next degraded start is allowed. */
	ck_assert_int_eq(sys->md_stop("md_d_t1"), 0);
	md.flags = 0;
	ck_assert_int_eq(sys->md_assemble(&md), 0);
}
END_TEST

/* The whole array present, or the array clean: md starts it as ever. */
START_TEST(sim_starts_dirty_whole_or_clean_degraded)
{
	struct sys_md md;

	raidd_create(srv, "d", "raid5", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");
	raidd_fill_busy("d", 1);
	members_of("md_d_t1", &md);
	sim_power_cut();
	ck_assert_int_eq(sys->md_assemble(&md), 0);	/* dirty, not degraded */
	ck_assert_int_eq(sys->md_stop("md_d_t1"), 0);
	sim_pull_disk("sdb");
	ck_assert_int_eq(sys->md_assemble(&md), 0);	/* degraded, clean */
}
END_TEST

static void
check_dirty_degraded(struct volume *v)
{
	struct json_object *o;
	const char *s;

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	ck_assert(v->assembled);
	ck_assert(volume_read_only(v));
	ck_assert_int_eq(sim_mount_count(), 1);
	raidd_check_fill("d", 2);
	ck_assert_int_eq(sys->write_at("vol_d", 1 << 20, "x", 1), -1);
	o = volume_describe(v);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	ck_assert_ptr_nonnull(strstr(s, "\"state\":\"dirty-degraded\""));
	ck_assert_ptr_nonnull(strstr(s, "\"read_only\":true"));
	ck_assert_ptr_nonnull(strstr(s, "volume.start with force"));
	json_object_put(o);
}

static void
start_with_force(struct volume *v)
{
	struct json_object *a;

	/* Nothing is rebuilt from it, and without force it stays read-only. */
	sim_add_disk("sde", 4 * GIB, "DRT5", "/sys/devices/sim/host0/target0:0:2/0:0:2:0");
	disk_refresh(0);
	json_object_put(call_expect("volume.repair", "{\"name\":\"d\",\"disk\":\"sde\"}",
	    NAS_ERR_REFUSED));
	json_object_put(call_expect("volume.start", "{\"name\":\"d\"}", NAS_ERR_REFUSED));
	ck_assert(volume_read_only(v));
	a = call_expect("volume.start", "{\"name\":\"d\",\"force\":true}", 0);
	json_object_put(a);
	ck_assert(!volume_read_only(v));
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(sim_mount_count(), 1);
	raidd_fill_busy("d", 3);
	raidd_check_fill("d", 3);
	json_object_put(call_expect("volume.start", "{\"name\":\"d\",\"force\":true}",
	    NAS_ERR_INVALID));
}

START_TEST(dirty_degraded_raid5_starts_read_only)
{
	struct volume *v = cut_while_degraded_and_writing("raid5", 0);

	check_dirty_degraded(v);
	start_with_force(v);
}
END_TEST

START_TEST(dirty_degraded_shr_starts_read_only)
{
	struct volume *v = cut_while_degraded_and_writing("shr", 0);

	check_dirty_degraded(v);
	start_with_force(v);
}
END_TEST

/* md marked it clean before the cut (safe mode): a plain degraded start. */
START_TEST(clean_degraded_raid5_starts_writable)
{
	struct volume *v = cut_while_degraded_and_writing("raid5", 1);

	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert(!volume_read_only(v));
	raidd_fill("d", 4);
	json_object_put(call_expect("volume.start", "{\"name\":\"d\",\"force\":true}",
	    NAS_ERR_INVALID));
}
END_TEST

/* RAID 10 keeps no parity: dirty and degraded, md starts it as it is. */
START_TEST(dirty_degraded_raid10_starts_writable)
{
	struct volume *v = cut_while_degraded_and_writing("raid10", 0);

	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert(!volume_read_only(v));
	raidd_check_fill("d", 2);
}
END_TEST

/*
 * md fails the member of bay (sdX) in md_d_t1 for I/O errors while its
 * disk stays (raidd marks it failed in the labels), the volume is
 * written, then the power goes: the most common dirty degraded start.
 * md's freshest superblock calls that member faulty, so md runs the
 * array without it whatever raidd passes, and refuses it dirty and
 * degraded.
 */
static struct volume *
cut_after_member_failed(struct volume *v, const char *disk, int m)
{
	char dev[SYS_NAME_MAX];

	raidd_fill("d", 1);
	ck_assert_int_eq(sys->part_dev(disk, v->mlabel[m].tier[0].start, dev, sizeof(dev)), 0);
	sim_fail_member("md_d_t1", dev);
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(v->label.failed, 1U << m);
	raidd_fill_busy("d", 2);
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 1);
	raidd_reboot();
	v = volume_find("d");
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->label.failed, 1U << m);	/* still out */
	return v;
}

START_TEST(failed_member_raid5_starts_read_only)
{
	struct volume *v = raidd_create(srv, "d", "raid5", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");

	v = cut_after_member_failed(v, "sdb", 1);
	check_dirty_degraded(v);
	start_with_force(v);
	ck_assert_int_eq(v->label.failed, 1U << 1);
}
END_TEST

/*
 * A member pulled, the array written, the power cut, the disk back
 * before the boot: md kicks a member more than one event behind the
 * freshest at assembly (super_1_validate; the bitmap serves only a
 * re-add once the array runs), so the array is dirty and degraded
 * although raidd passed every member.
 */
START_TEST(stale_member_back_while_off_starts_read_only)
{
	struct volume *v = raidd_create(srv, "d", "raid5", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");

	raidd_fill("d", 1);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	raidd_fill("d", 3);
	raidd_fill_busy("d", 2);
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 1);
	sim_power_cut();
	sim_push_disk("sdb");
	raidd_reboot();
	v = volume_find("d");
	check_dirty_degraded(v);
	/* Its disk is here: it rejoins (through the bitmap) once the array is writable. */
	json_object_put(call_expect("volume.start", "{\"name\":\"d\"}", NAS_ERR_REFUSED));
	json_object_put(call_expect("volume.start", "{\"name\":\"d\",\"force\":true}", 0));
	ck_assert(!volume_read_only(v));
	raidd_uevent();
	ck_assert(v->state == VOL_REBUILDING || v->state == VOL_CLEAN);
	raidd_fill_busy("d", 4);
	raidd_check_fill("d", 4);
}
END_TEST

/* SHR on 4, 4, 8 and 8 GiB: a RAID 5 tier over all four, a mirror over the big two. */
static void
big_bays_3_4(void)
{
	sim_remove_disk("sdc");
	sim_remove_disk("sdd");
	sim_add_disk("sdc", 8 * GIB, "DRT3", "/sys/devices/sim/host0/target0:0:3/0:0:3:0");
	sim_add_disk("sdd", 8 * GIB, "DRT4", "/sys/devices/sim/host0/target0:0:4/0:0:4:0");
	disk_refresh(0);
}

/*
 * The failed member's disk is in both tiers: it stays out of both, the
 * RAID 5 tier is dirty and degraded (read-only), the mirror runs
 * degraded and writable; force makes the volume writable.
 */
START_TEST(failed_member_shr_tiers_start_read_only)
{
	struct volume *v;

	big_bays_3_4();
	v = raidd_create(srv, "d", "shr", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");
	ck_assert_int_eq(v->label.ntiers, 2);
	v = cut_after_member_failed(v, "sdc", 2);
	check_dirty_degraded(v);
	ck_assert_int_eq(sys->write_at("md_d_t2", 1 << 20, "x", 1), 0);
	start_with_force(v);
}
END_TEST

static enum job_state
run_job(struct json_object *a)
{
	struct json_object *r, *id;
	struct job *j;

	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	j = job_find((unsigned)json_object_get_int(id));
	json_object_put(a);
	ck_assert_ptr_nonnull(j);
	for (int i = 0; i < 1000 && job_state(j) == JOB_RUNNING; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	return job_state(j);
}

/*
 * Encrypted: after the cut the volume is assembled read-only and
 * locked (dirty-degraded, the way forward said); unlocked, it is
 * mounted read-only; force makes it writable.
 */
START_TEST(failed_member_encrypted_starts_read_only_locked)
{
	struct json_object *o;
	struct volume *v;
	const char *s;

	ck_assert_int_eq(run_job(unit_call(srv, &root, "volume.create", "{\"name\":\"d\","
	    "\"level\":\"raid5\",\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"],"
	    "\"encrypt\":true,\"passphrase\":\"pw\"}")), JOB_DONE);
	volume_check_states();
	v = cut_after_member_failed(volume_find("d"), "sdb", 1);
	ck_assert_int_eq(v->state, VOL_DIRTY_DEGRADED);
	ck_assert(v->assembled);
	ck_assert(volume_read_only(v));
	ck_assert(crypt_locked(v));
	ck_assert_int_eq(sim_mount_count(), 0);
	raidd_check_fill("d", 2);
	o = volume_describe(v);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	ck_assert_ptr_nonnull(strstr(s, "\"state\":\"dirty-degraded\""));
	ck_assert_ptr_nonnull(strstr(s, "\"locked\":true"));
	ck_assert_ptr_nonnull(strstr(s, "volume.start with force"));
	json_object_put(o);
	ck_assert_int_eq(run_job(unit_call(srv, &root, "volume.unlock",
	    "{\"name\":\"d\",\"passphrase\":\"pw\"}")), JOB_DONE);
	ck_assert(!crypt_locked(v));
	ck_assert(volume_read_only(v));
	ck_assert_int_eq(sim_mount_count(), 1);
	start_with_force(v);
}
END_TEST

/*
 * A power cut while md rebuilds a RAID 5 member and the volume is
 * written: md counts the half-rebuilt member as not in sync (its
 * superblock has a recovery offset), so the array is dirty and degraded
 * and md refuses it; raidd must see that and start it read-only.
 */
START_TEST(cut_mid_rebuild_while_written_starts_read_only)
{
	struct volume *v = raidd_create(srv, "d", "raid5", "\"bay1\",\"bay2\",\"bay3\",\"bay4\"");
	struct json_object *a;

	raidd_fill("d", 1);
	sim_pull_disk("sdb");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	sim_add_disk("sde", 4 * GIB, "DRT5", "/sys/devices/sim/host0/target0:0:2/0:0:2:0");
	raidd_uevent();
	a = call_expect("volume.repair", "{\"name\":\"d\",\"disk\":\"sde\"}", 0);
	json_object_put(a);
	for (int i = 0; i < 100 && (v->label.intent.op != LABEL_OP_NONE ||
	    v->label.member[1].serial[0] != 'D' || v->label.member[1].serial[3] != '5'); i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	sim_md_recover("md_d_t1", 8192);
	raidd_fill_busy("d", 2);
	ck_assert_int_eq(sim_md_dirty("md_d_t1"), 1);
	raidd_reboot();
	check_dirty_degraded(volume_find("d"));
}
END_TEST

/*
 * SHR on a small and two bigger disks (tier 1 a raid5 of three, tier 2 a
 * raid1 of the bigger two). The small disk dies, then md fails bay 2 in
 * tier 2 only (errors in that band): after a restart tier 1 runs on bays
 * 2 and 3 and tier 2 on bay 3. Left out of every tier, bay 2 took tier 1
 * below what it can run: the whole volume was down.
 */
START_TEST(failed_in_one_tier_stays_in_the_others)
{
	struct volume *v;
	char dev[SYS_NAME_MAX];

	sim_grow_disk("sdb", 8 * GIB);
	sim_grow_disk("sdc", 8 * GIB);
	disk_refresh(0);
	v = raidd_create(srv, "d", "shr", "\"bay1\",\"bay2\",\"bay3\"");
	ck_assert_int_eq(v->label.ntiers, 2);
	raidd_fill("d", 1);
	sim_pull_disk("sda");
	raidd_uevent();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(sys->part_dev("sdb", v->mlabel[1].tier[1].start, dev, sizeof(dev)), 0);
	sim_fail_member("md_d_t2", dev);
	raidd_uevent();
	ck_assert_int_eq(v->label.failed, 1U << 1);
	raidd_reboot();
	v = volume_find("d");
	ck_assert_msg(v->assembled, "not assembled: %s", v->problem);
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	raidd_check_fill("d", 1);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("raidd-dirty");
	TCase *tc = tcase_create("dirty");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sim_refuses_dirty_degraded_raid5_as_md);
	tcase_add_test(tc, sim_starts_dirty_whole_or_clean_degraded);
	tcase_add_test(tc, dirty_degraded_raid5_starts_read_only);
	tcase_add_test(tc, dirty_degraded_shr_starts_read_only);
	tcase_add_test(tc, clean_degraded_raid5_starts_writable);
	tcase_add_test(tc, dirty_degraded_raid10_starts_writable);
	tcase_add_test(tc, failed_member_raid5_starts_read_only);
	tcase_add_test(tc, cut_mid_rebuild_while_written_starts_read_only);
	tcase_add_test(tc, failed_in_one_tier_stays_in_the_others);
	tcase_add_test(tc, stale_member_back_while_off_starts_read_only);
	tcase_add_test(tc, failed_member_shr_tiers_start_read_only);
	tcase_add_test(tc, failed_member_encrypted_starts_read_only_locked);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
