/*
 * volume.scrub on the simulated kernel: md's check counts the sectors
 * whose copies differ, repair rewrites them, a run stopped (by a user
 * or the night's budget) goes on from md's sync_min the next time, kept
 * on the flash; the schedule starts checks on its day and resumes
 * unfinished ones every night.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "rpc.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"

#define MD	"md_s_t1"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static char *dir;

static void
setup(void)
{
	raidd_sim_setup(1ULL << 30, "S", 0);
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, volume_methods);
	rpc_server_add_methods(srv, scrub_methods);
	dir = unit_tmpdir();
	scrub_reset();
	scrub_set_options(NULL, 0, 0, 0, 0.01);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
	scrub_reset();
	unit_rmtree(dir);
	free(dir);
}

/* volume.scrub; its job, or NULL with *code the error's. */
static struct job *
scrub(const char *params, int *code)
{
	struct json_object *a = unit_call(srv, &root, "volume.scrub", params), *r, *id;
	struct job *j = NULL;

	*code = unit_err_code(a);
	if (*code == 0 && json_object_object_get_ex(a, "result", &r) &&
	    json_object_object_get_ex(r, "job", &id))
		j = job_find((unsigned)json_object_get_int(id));
	json_object_put(a);
	return j;
}

/* Runs the loop until job j ends; returns its result's key. */
static int64_t
run_to_end(struct job *j, const char *key)
{
	struct json_object *d, *r, *v;
	int64_t out;

	for (int i = 0; i < 2000 && job_state(j) == JOB_RUNNING; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_eq(job_state(j), JOB_DONE);
	d = job_describe(j);
	ck_assert(json_object_object_get_ex(d, "result", &r));
	ck_assert_msg(json_object_object_get_ex(r, key, &v), "%s",
	    json_object_to_json_string(d));
	out = json_object_is_type(v, json_type_boolean) ? json_object_get_boolean(v) :
	    json_object_get_int64(v);
	json_object_put(d);
	return out;
}

static struct job *
start(const char *action)
{
	char params[96];
	struct job *j;
	int code;

	snprintf(params, sizeof(params), "{\"name\":\"s\",\"action\":\"%s\"}", action);
	j = scrub(params, &code);
	ck_assert_msg(j != NULL, "%s: error %d", action, code);
	return j;
}

/* check counts the differing sectors and changes nothing; repair
   rewrites them, so the next check finds none. */
START_TEST(check_counts_repair_fixes)
{
	struct job *j;

	raidd_create(srv, "s", "raid1", "\"bay1\",\"bay2\"");
	sim_md_corrupt(MD, 1000);
	sim_md_corrupt(MD, 500000);
	for (int round = 0; round < 2; round++) {
		j = start("check");
		sim_md_sync_step(MD, 1ULL << 40);
		ck_assert_int_eq(run_to_end(j, "mismatch_cnt"), 16);
		ck_assert_int_eq(run_to_end(j, "complete"), 1);
	}
	j = start("repair");
	sim_md_sync_step(MD, 1ULL << 40);
	ck_assert_int_eq(run_to_end(j, "mismatch_cnt"), 16);
	j = start("check");
	sim_md_sync_step(MD, 1ULL << 40);
	ck_assert_int_eq(run_to_end(j, "mismatch_cnt"), 0);
}
END_TEST

/* The speed window holds for the run only: a rebuild after it gets md's. */
START_TEST(speed_window_for_the_run_only)
{
	struct sys_md_status st;
	struct job *j;

	raidd_create(srv, "s", "raid1", "\"bay1\",\"bay2\"");
	scrub_set_options(NULL, 0, 1000, 5000, 0.01);
	j = start("check");
	ck_assert_int_eq(sys->md_status(MD, &st), 0);
	ck_assert_int_eq(st.sync_speed, 5000);
	sim_md_sync_step(MD, 1ULL << 40);
	run_to_end(j, "complete");
	sim_md_rebuild(MD, "sdb1");
	ck_assert_int_eq(sys->md_status(MD, &st), 0);
	ck_assert_str_eq(st.sync_action, "recover");
	ck_assert_int_ne(st.sync_speed, 5000);
}
END_TEST

/* The night's budget stops the check; the next run goes on from md's
   sync_min and adds to what the first one counted. */
START_TEST(budget_stops_and_next_run_resumes)
{
	struct job *j;

	raidd_create(srv, "s", "raid1", "\"bay1\",\"bay2\"");
	sim_md_corrupt(MD, 500);
	sim_md_corrupt(MD, 3000);
	scrub_set_options(NULL, 0.05, 0, 0, 0.01);
	j = start("check");
	sim_md_sync_step(MD, 1000);
	ck_assert_int_eq(run_to_end(j, "complete"), 0);
	ck_assert_int_eq(run_to_end(j, "resume_sector"), 1000);
	ck_assert_int_eq(run_to_end(j, "mismatch_cnt"), 8);
	ck_assert_str_eq(scrub_pending(volume_find("s")), "check");
	scrub_set_options(NULL, 0, 0, 0, 0.01);
	j = start("check");
	/* A check reads a redundant array: the volume stays clean. */
	ck_assert_int_eq(volume_state_now(volume_find("s")), VOL_CLEAN);
	sim_md_sync_step(MD, 1ULL << 40);
	/* From the start again it would have counted 500 twice: 24. */
	ck_assert_int_eq(run_to_end(j, "mismatch_cnt"), 16);
	ck_assert_int_eq(run_to_end(j, "resumed_sector"), 1000);
	ck_assert_int_eq(run_to_end(j, "complete"), 1);
	ck_assert_ptr_null(scrub_pending(volume_find("s")));
}
END_TEST

/* A user's stop keeps the place on the flash; a restarted raidd reads it
   back and skips lines that are not its own. */
START_TEST(stop_keeps_the_place_across_a_restart)
{
	char *path, text[256];
	struct job *j;
	FILE *f;
	int code;

	ck_assert_int_ne(asprintf(&path, "%s/scrub", dir), -1);
	scrub_set_options(path, 0, 0, 0, 0.01);
	raidd_create(srv, "s", "raid1", "\"bay1\",\"bay2\"");
	j = start("check");
	sim_md_sync_step(MD, 4096);
	ck_assert_ptr_nonnull(scrub("{\"name\":\"s\",\"action\":\"stop\"}", &code));
	ck_assert_int_eq(run_to_end(j, "resume_sector"), 4096);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
	fclose(f);
	ck_assert_msg(strstr(text, " 0 check 4096 0\n"), "%s", text);
	/* A hostile or damaged file: only well-formed lines count. */
	f = fopen(path, "a");
	fputs("zz 0 check 1 1\n00000000000000000000000000000000 0 check 5 0\n"
	    "0123456789abcdef0123456789abcdef 99 check 5 0\n"
	    "0123456789abcdef0123456789abcdef 0 erase 5 0\n", f);
	fclose(f);
	scrub_reset();
	scrub_set_options(path, 0, 0, 0, 0.01);
	ck_assert_str_eq(scrub_pending(volume_find("s")), "check");
	j = start("check");
	sim_md_sync_step(MD, 1ULL << 40);
	ck_assert_int_eq(run_to_end(j, "complete"), 1);
	ck_assert_ptr_null(scrub_pending(volume_find("s")));
	free(path);
}
END_TEST

/* What cannot be scrubbed is refused and nothing starts. */
START_TEST(refusals_change_nothing)
{
	int code;

	raidd_create(srv, "s", "raid1", "\"bay1\",\"bay2\"");
	raidd_create(srv, "z", "raid0", "\"bay3\",\"bay4\"");
	ck_assert_ptr_null(scrub("{\"name\":\"z\"}", &code));
	ck_assert_int_eq(code, NAS_ERR_INVALID);
	ck_assert_ptr_null(scrub("{\"name\":\"nope\"}", &code));
	ck_assert_int_eq(code, NAS_ERR_NOT_FOUND);
	ck_assert_ptr_null(scrub("{\"name\":\"s\",\"action\":\"erase\"}", &code));
	ck_assert_int_eq(code, RPC_INVALID_PARAMS);
	ck_assert_ptr_null(scrub("{\"name\":\"s\",\"action\":\"stop\"}", &code));
	ck_assert_int_eq(code, NAS_ERR_INVALID);
	ck_assert_ptr_nonnull(start("check"));
	ck_assert_ptr_null(scrub("{\"name\":\"s\",\"action\":\"repair\"}", &code));
	ck_assert_int_eq(code, NAS_ERR_BUSY);
	job_reset();
	scrub_reset();
	sim_md_sync_step(MD, 1ULL << 40);
	sim_fail_member(MD, "sdb1");
	ck_assert_ptr_null(scrub("{\"name\":\"s\"}", &code));
	ck_assert_int_eq(code, NAS_ERR_BUSY);
}
END_TEST

START_TEST(schedule_parses_and_starts_on_its_day)
{
	struct scrub_sched s;
	struct tm tm = { .tm_mday = 1, .tm_hour = 2, .tm_wday = 3, .tm_yday = 100,
	    .tm_year = 126 };
	char err[160];
	struct job *j;

	ck_assert_int_eq(scrub_sched_parse("off", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.every, 0);
	ck_assert_int_eq(scrub_sched_parse("weekly sun 23", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.every, 2);
	ck_assert_int_eq(scrub_sched_parse("daily 0", &s, err, sizeof(err)), 0);
	ck_assert_int_eq(scrub_sched_parse("monthly 29 2", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(scrub_sched_parse("monthly 1 24", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(scrub_sched_parse("weekly xyz 1", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(scrub_sched_parse("monthly 1 2 3", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(scrub_sched_parse("", &s, err, sizeof(err)), -1);
	ck_assert_int_eq(scrub_sched_parse("monthly 1 2", &s, err, sizeof(err)), 0);
	scrub_sched_set(&s);
	raidd_create(srv, "s", "raid1", "\"bay1\",\"bay2\"");
	tm.tm_hour = 1;
	scrub_sched_tick(&tm);
	ck_assert_ptr_null(scrub_job("s"));
	tm.tm_hour = 2;
	scrub_sched_tick(&tm);
	ck_assert_ptr_nonnull(j = scrub_job("s"));
	/* Stopped by the budget: the next night (not the scheduled day) goes on. */
	scrub_stop("s");
	sim_md_sync_step(MD, 0);
	run_to_end(j, "complete");
	ck_assert_ptr_null(scrub_job("s"));
	scrub_sched_tick(&tm);
	ck_assert_ptr_null(scrub_job("s"));	/* once a night */
	tm.tm_mday = 2;
	tm.tm_yday++;
	scrub_sched_tick(&tm);
	ck_assert_ptr_nonnull(scrub_job("s"));
	s.every = 0;
	scrub_sched_set(&s);
}
END_TEST

static Suite *
scrub_suite(void)
{
	Suite *s = suite_create("raidd-scrub");
	TCase *tc = tcase_create("scrub");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, check_counts_repair_fixes);
	tcase_add_test(tc, speed_window_for_the_run_only);
	tcase_add_test(tc, budget_stops_and_next_run_resumes);
	tcase_add_test(tc, stop_keeps_the_place_across_a_restart);
	tcase_add_test(tc, refusals_change_nothing);
	tcase_add_test(tc, schedule_parses_and_starts_on_its_day);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(scrub_suite());
}
