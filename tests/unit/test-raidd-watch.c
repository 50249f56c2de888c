/*
 * raidd sees md's own changes without a timer (Decision 23): the
 * simulated kernel wakes the watch fd exactly where md notifies (a
 * member failed, added or removed, a sync started or ended), never for
 * a pulled disk md has not noticed. volume.state, volume.progress and
 * disk.health go out on the loop; bay LEDs follow; volume.show carries
 * each tier's sync and each member's state.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "log.h"
#include "raidd/system-linux.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "rpc.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static char *dir, sock[256];

static void
setup(void)
{
	raidd_sim_setup(4ULL << 30, "W", 1);
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, disk_methods);
	rpc_server_add_methods(srv, volume_methods);
	dir = unit_tmpdir();
	snprintf(sock, sizeof(sock), "%s/r.sock", dir);
	rpc_events_init(srv);
	ck_assert_int_eq(rpc_server_listen(srv, sock, (gid_t)-1), 0);
}

static void
teardown(void)
{
	watch_stop();
	rpc_events_init(NULL);
	rpc_server_free(srv);
	job_reset();
	unit_rmtree(dir);
	free(dir);
}

static struct json_object *
call(const char *method, const char *params)
{
	return unit_call(srv, &root, method, params);
}

/* Creates a volume, runs its job to the end; watching starts after. */
static struct volume *
create(const char *name, const char *level, const char *disks)
{
	struct volume *v = raidd_create(srv, name, level, disks);

	ck_assert_int_eq(watch_start(), 0);
	return v;
}

static int
subscribe(const char *topics)
{
	char req[256], *line;
	int fd = unit_connect(sock);

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
	    "\"params\":{\"topics\":%s},\"id\":1}\n", topics);
	unit_send(fd, req, strlen(req));
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	free(line);
	return fd;
}

/* The next event of topic on fd (others skipped); caller puts it. */
static struct json_object *
next_event(int fd, const char *topic)
{
	for (;;) {
		char *line = unit_read_line(fd);
		struct json_object *n, *m, *p;

		ck_assert_msg(line != NULL, "EOF instead of %s", topic);
		n = unit_json(line);
		free(line);
		if (json_object_object_get_ex(n, "method", &m) &&
		    strcmp(json_object_get_string(m), topic) == 0) {
			json_object_object_get_ex(n, "params", &p);
			p = json_object_get(p);
			json_object_put(n);
			return p;
		}
		json_object_put(n);
	}
}

static const char *
str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "(null)";
}

/* The loop runs, as raidd's does, with no monitor timer. */
static void
spin(void)
{
	for (int i = 0; i < 5; i++)
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
}

/* md fails a member for errors: the watch fd wakes, raidd says degraded. */
/* Percents are written with one decimal, rounded down: 69.3, not
 * 69.299999999999997 (volume.show's sync_percent was). */
START_TEST(percent_one_decimal_rounded_down)
{
	static const struct { uint64_t done, total; const char *want; } c[] = {
		{ 693, 1000, "69.3" }, { 2, 3, "66.6" }, { 0, 7, "0.0" },
		{ 5, 0, "0.0" }, { 9, 4, "100.0" }, { 1ULL << 40, (1ULL << 40) + 1, "99.9" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct json_object *o = watch_percent(c[i].done, c[i].total);

		ck_assert_str_eq(json_object_to_json_string(o), c[i].want);
		json_object_put(o);
	}
}
END_TEST

START_TEST(md_failure_wakes_without_a_timer)
{
	struct volume *v = create("r", "raid1", "\"bay1\",\"bay2\"");
	int fd = subscribe("[\"volume.state\"]"), wakes = sim_md_wakes();
	struct json_object *e;

	ck_assert_int_eq(v->state, VOL_CLEAN);
	sim_fail_member("md_r_t1", "sdb1");
	ck_assert_int_gt(sim_md_wakes(), wakes);
	spin();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	e = next_event(fd, "volume.state");
	ck_assert_str_eq(str(e, "name"), "r");
	ck_assert_str_eq(str(e, "old"), "clean");
	ck_assert_str_eq(str(e, "new"), "degraded");
	ck_assert_str_eq(str(e, "state"), "degraded");
	ck_assert_str_eq(str(e, "previous"), "clean");
	ck_assert_msg(strstr(str(e, "reason"), "member 2 (sdb1) is faulty"), "%s", str(e, "reason"));
	json_object_put(e);
	close(fd);
}
END_TEST

/* md does not notice a pulled disk of an idle array: nothing wakes (the
   uevent does that part), so the simulator gives no free detection. */
START_TEST(pulled_disk_alone_does_not_wake)
{
	struct volume *v = create("p", "raid1", "\"bay1\",\"bay2\"");
	int wakes = sim_md_wakes();

	sim_pull_disk("sdb");
	spin();
	ck_assert_int_eq(sim_md_wakes(), wakes);
	ck_assert_int_eq(v->state, VOL_CLEAN);
	/* The uevent: raidd fails the member, which md notifies. */
	disk_refresh(1);
	volume_scan();
	ck_assert_int_gt(sim_md_wakes(), wakes);
	spin();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	/* The wake re-registered: a later failure is seen as well. */
	sim_fail_member("md_p_t1", "sda1");
	spin();
	ck_assert_int_eq(v->state, VOL_FAILED);
}
END_TEST

static struct json_object *
show_tier(const char *name, struct json_object **answer)
{
	char params[64];
	struct json_object *r, *tiers;

	snprintf(params, sizeof(params), "{\"name\":\"%s\"}", name);
	*answer = call("volume.show", params);
	ck_assert(json_object_object_get_ex(*answer, "result", &r));
	ck_assert(json_object_object_get_ex(r, "tiers", &tiers));
	return json_object_array_get_idx(tiers, 0);
}

static const char *
member_state(struct json_object *tier, int role)
{
	struct json_object *mem;

	ck_assert(json_object_object_get_ex(tier, "members", &mem));
	return str(json_object_array_get_idx(mem, (size_t)role), "state");
}

/* The first volume.progress past 0 of a recovery a quarter done; caller puts it. */
static struct json_object *
recover_progress(int fd)
{
	struct json_object *e;

	for (;;) {
		e = next_event(fd, "volume.progress");
		if (atof(str(e, "percent")) > 0)
			break;
		json_object_put(e);
	}
	ck_assert_str_eq(str(e, "action"), "recover");
	ck_assert_msg(atof(str(e, "percent")) > 20 && atof(str(e, "percent")) < 30, "%s",
	    str(e, "percent"));
	return e;
}

/* While md recovers a member the volume says rebuilding, not degraded;
   progress goes out once a second; the end says clean. */
START_TEST(rebuild_shows_and_reports_progress)
{
	struct volume *v = create("b", "raid1", "\"bay1\",\"bay2\"");
	int fd = subscribe("[\"volume\"]");
	struct json_object *a, *t, *e, *r;

	sim_md_rebuild("md_b_t1", "sdb1");
	spin();
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	e = next_event(fd, "volume.state");
	ck_assert_str_eq(str(e, "new"), "rebuilding");
	json_object_put(e);
	t = show_tier("b", &a);
	ck_assert_str_eq(str(t, "action"), "recover");
	ck_assert(atof(str(t, "progress")) == 0 && strcmp(str(t, "progress"), "(null)") != 0);
	ck_assert_str_eq(member_state(t, 0), "in_sync");
	ck_assert_str_eq(member_state(t, 1), "rebuilding");
	json_object_object_get_ex(a, "result", &r);
	ck_assert_str_eq(str(r, "state"), "rebuilding");
	json_object_put(a);
	sim_md_sync_step("md_b_t1", (4ULL << 30) / 512 / 4);
	/* The once-a-second timer says how far. */
	e = recover_progress(fd);
	ck_assert_msg(strchr(str(e, "percent"), '.') && strlen(strchr(str(e, "percent"), '.')) == 2,
	    "one decimal: %s", str(e, "percent"));
	ck_assert_str_ne(str(e, "eta_s"), "(null)");
	ck_assert_str_ne(str(e, "speed_kbs"), "(null)");
	json_object_put(e);
	sim_md_sync_step("md_b_t1", 4ULL << 30);
	spin();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	e = next_event(fd, "volume.state");
	ck_assert_str_eq(str(e, "new"), "clean");
	ck_assert_str_eq(str(e, "reason"), "rebuild finished");
	json_object_put(e);
	close(fd);
}
END_TEST

/*
 * volume.repair (raidd-repair) meets the watch (raidd-detect): md's
 * notify on the spare added wakes raidd, which says rebuilding with no
 * state check of its own; volume.progress follows md's recovery; its
 * end wakes raidd again and the volume is clean.
 */
START_TEST(repair_shows_rebuilding_and_progress)
{
	struct volume *v = create("q", "raid1", "\"bay1\",\"bay2\"");
	int fd = subscribe("[\"volume\"]"), wakes;
	struct json_object *a, *e;

	repair_set_poll(0.01);
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	spin();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	wakes = sim_md_wakes();
	a = call("volume.repair", "{\"name\":\"q\",\"disk\":\"bay3\"}");
	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_put(a);
	for (int i = 0; i < 200 && v->state != VOL_REBUILDING; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ck_assert_int_gt(sim_md_wakes(), wakes);
	ck_assert_int_eq(v->state, VOL_REBUILDING);
	do {
		e = next_event(fd, "volume.state");
		if (strcmp(str(e, "new"), "rebuilding") == 0)
			break;
		json_object_put(e);
	} while (1);
	json_object_put(e);
	sim_md_recover("md_q_t1", (4ULL << 30) / 512 / 4);
	e = recover_progress(fd);
	json_object_put(e);
	wakes = sim_md_wakes();
	sim_md_recover("md_q_t1", UINT64_MAX / 2);
	ck_assert_int_gt(sim_md_wakes(), wakes);
	spin();
	ck_assert_int_eq(v->state, VOL_CLEAN);
	close(fd);
	repair_set_poll(1.0);
}
END_TEST

/* disk.health once per change of a member's error count or faultiness. */
START_TEST(member_errors_give_disk_health)
{
	create("h", "raid1", "\"bay1\",\"bay2\"");
	int fd = subscribe("[\"disk.health\"]");
	struct json_object *e;

	sim_member_errors("md_h_t1", "sda1", 3);
	volume_check_states();	/* errors do not notify: the monitor tick */
	volume_check_states();
	sim_fail_member("md_h_t1", "sda1");
	spin();
	e = next_event(fd, "disk.health");
	ck_assert_str_eq(str(e, "disk"), "sda");
	ck_assert_str_eq(str(e, "errors"), "3");
	ck_assert_str_eq(str(e, "faulty"), "false");
	json_object_put(e);
	/* The same count twice said nothing; the failure is next. */
	e = next_event(fd, "disk.health");
	ck_assert_str_eq(str(e, "faulty"), "true");
	ck_assert_str_eq(str(e, "volume"), "h");
	json_object_put(e);
	close(fd);
}
END_TEST

/* Bay LEDs: fault for a faulty or missing member, blinking while md
   rebuilds onto it, off again once the volume is whole. */
START_TEST(bay_leds_follow_members)
{
	struct volume *v = create("l", "raid1", "\"bay1\",\"bay2\"");

	ck_assert_int_eq(sim_led("/sys/class/leds/bay1"), SYS_LED_OFF);
	ck_assert_int_eq(sim_led("/sys/class/leds/bay2"), SYS_LED_OFF);
	sim_md_rebuild("md_l_t1", "sdb1");
	spin();
	ck_assert_int_eq(sim_led("/sys/class/leds/bay2"), SYS_LED_REBUILD);
	ck_assert_int_eq(sim_led("/sys/class/leds/bay1"), SYS_LED_OFF);
	sim_md_sync_step("md_l_t1", 1ULL << 40);
	spin();
	ck_assert_int_eq(sim_led("/sys/class/leds/bay2"), SYS_LED_OFF);
	/* Pulled: the empty bay it was in lights up. */
	sim_pull_disk("sdb");
	disk_refresh(1);
	volume_scan();
	spin();
	ck_assert_int_eq(v->state, VOL_DEGRADED);
	ck_assert_int_eq(sim_led("/sys/class/leds/bay2"), SYS_LED_FAULT);
	ck_assert_int_eq(sim_led("/sys/class/leds/bay3"), SYS_LED_OFF);
}
END_TEST

/* The first line of dir/name. */
static void
first_line(const char *dir_, const char *name, char *buf, size_t len)
{
	char *p;
	FILE *f;

	ck_assert_int_ne(asprintf(&p, "%s/%s", dir_, name), -1);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	fclose(f);
	free(p);
}

/* The Linux writer against a fixture LED class directory. */
START_TEST(led_writer_on_a_fixture_tree)
{
	char *led = unit_tmpdir(), buf[32] = "";

	free(unit_write(led, "brightness", "0\n"));
	free(unit_write(led, "trigger", "[none] timer\n"));
	free(unit_write(led, "max_brightness", "255\n"));
	ck_assert_int_eq(lnx_led_set(led, SYS_LED_FAULT), 0);
	first_line(led, "brightness", buf, sizeof(buf));
	ck_assert_str_eq(buf, "255");
	ck_assert_int_eq(lnx_led_set(led, SYS_LED_REBUILD), 0);
	first_line(led, "trigger", buf, sizeof(buf));
	ck_assert_str_eq(buf, "timer");
	ck_assert_int_eq(lnx_led_set(led, SYS_LED_OFF), 0);
	first_line(led, "brightness", buf, sizeof(buf));
	ck_assert_str_eq(buf, "0");
	first_line(led, "trigger", buf, sizeof(buf));
	ck_assert_str_eq(buf, "none");
	ck_assert_int_eq(lnx_led_set("/nonexistent/led", SYS_LED_FAULT), -1);
	unit_rmtree(led);
	free(led);
}
END_TEST

static Suite *
watch_suite(void)
{
	Suite *s = suite_create("raidd-watch");
	TCase *tc = tcase_create("watch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, md_failure_wakes_without_a_timer);
	tcase_add_test(tc, pulled_disk_alone_does_not_wake);
	tcase_add_test(tc, rebuild_shows_and_reports_progress);
	tcase_add_test(tc, repair_shows_rebuilding_and_progress);
	tcase_add_test(tc, member_errors_give_disk_health);
	tcase_add_test(tc, bay_leds_follow_members);
	tcase_add_test(tc, led_writer_on_a_fixture_tree);
	tcase_add_test(tc, percent_one_decimal_rounded_down);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(watch_suite());
}
