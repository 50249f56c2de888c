/*
 * Unit tests for lib/job.c and lib/rpc-events.c: the job lifecycle,
 * job.* through the dispatcher, pruning, and events reaching only the
 * subscribers whose topics match.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "job.h"
#include "rpc.h"
#include "unit-util.h"

static const struct rpc_peer root = { .uid = 0 };
static struct rpc_server *srv;
static char *dir;

static int released, cancel_asked;

static void
release_cb(void *arg)
{
	(void)arg;
	released++;
}

static void
cancel_later(struct job *j, void *arg)
{
	(void)j;
	(void)arg;
	cancel_asked++;
}

/* A job that can stop at once, as stopping a scrub can. */
static void
cancel_now(struct job *j, void *arg)
{
	(void)arg;
	cancel_asked++;
	job_cancelled(j);
}

static const struct job_ops plain_ops = { NULL, release_cb };
static const struct job_ops later_ops = { cancel_later, release_cb };
static const struct job_ops now_ops = { cancel_now, release_cb };

static void
setup(void)
{
	srv = rpc_server_new("testd", "1.0");
	released = cancel_asked = 0;
	dir = NULL;
}

static void
teardown(void)
{
	job_reset();
	rpc_server_free(srv);
	if (dir) {
		unit_rmtree(dir);
		free(dir);
	}
}

/* Calls method with params (JSON text or NULL) through the dispatcher. */
static struct json_object *
call(const char *method, const char *params)
{
	char req[512], *out;
	struct json_object *a;

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",%s%s%s\"id\":1}",
	    method, params ? "\"params\":" : "", params ? params : "", params ? "," : "");
	ck_assert_ptr_nonnull(out = rpc_dispatch_text(srv, &root, req, strlen(req)));
	a = unit_json(out);
	free(out);
	return a;
}

static const char *
member_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s in %s", key,
	    json_object_to_json_string(o));
	return json_object_get_string(v);
}

static double
member_num(struct json_object *o, const char *key)
{
	struct json_object *v;

	ck_assert(json_object_object_get_ex(o, key, &v));
	return json_object_get_double(v);
}

static struct json_object *
result_of(struct json_object *a)
{
	struct json_object *r;

	ck_assert_msg(json_object_object_get_ex(a, "result", &r), "%s",
	    json_object_to_json_string(a));
	return r;
}

START_TEST(lifecycle_done)
{
	struct job *j = job_start("scrub", "vol1", &plain_ops, NULL);
	struct json_object *d, *r;

	ck_assert_uint_eq(job_id(j), 1);
	ck_assert_int_eq(job_state(j), JOB_RUNNING);
	ck_assert_ptr_eq(job_find(1), j);
	ck_assert_int_eq(job_running_count(), 1);
	job_progress(j, 150, "reading");
	d = job_describe(j);
	ck_assert_str_eq(member_str(d, "state"), "running");
	ck_assert_str_eq(member_str(d, "step"), "reading");
	ck_assert_double_eq(member_num(d, "percent"), 100);
	ck_assert(!json_object_object_get_ex(d, "ended", NULL));
	json_object_put(d);
	job_progress(j, -3, NULL);
	d = job_describe(j);
	ck_assert_double_eq(member_num(d, "percent"), 0);
	ck_assert_str_eq(member_str(d, "step"), "reading");
	json_object_put(d);
	r = json_object_new_object();
	json_object_object_add(r, "errors", json_object_new_int(0));
	job_done(j, r);
	ck_assert_int_eq(job_state(j), JOB_DONE);
	ck_assert_int_eq(released, 1);
	ck_assert_int_eq(job_running_count(), 0);
	d = job_describe(j);
	ck_assert_str_eq(member_str(d, "state"), "done");
	ck_assert_double_eq(member_num(d, "percent"), 100);
	ck_assert_str_eq(member_str(d, "result"), "{ \"errors\": 0 }");
	ck_assert(json_object_object_get_ex(d, "ended", NULL));
	json_object_put(d);
	/* Once ended, nothing changes it any more, and nothing is released twice. */
	job_progress(j, 10, "late");
	job_done(j, json_object_new_string("again"));
	job_fail(j, NAS_ERR_FAILED, "late failure");
	job_cancelled(j);
	d = job_describe(j);
	ck_assert_str_eq(member_str(d, "state"), "done");
	ck_assert_str_eq(member_str(d, "step"), "done");
	ck_assert_double_eq(member_num(d, "percent"), 100);
	json_object_put(d);
	ck_assert_int_eq(released, 1);
	job_reset();
	ck_assert_int_eq(released, 1);
}
END_TEST

/* NaN would be sent as the bare word NaN: no JSON parser takes it. */
START_TEST(progress_refuses_nan_and_infinity)
{
	struct job *j = job_start("scrub", "vol1", &plain_ops, NULL);
	const double bad[] = { NAN, INFINITY, -INFINITY };
	struct json_object *d, *back;

	job_progress(j, 40, "reading");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		job_progress(j, bad[i], "bad");
		d = job_describe(j);
		ck_assert_double_eq(member_num(d, "percent"), 40);
		ck_assert_str_eq(member_str(d, "step"), "reading");
		back = unit_json(json_object_to_json_string(d));
		json_object_put(back);
		json_object_put(d);
	}
}
END_TEST

START_TEST(lifecycle_fail)
{
	struct job *j = job_start("mkfs", NULL, &plain_ops, NULL);
	struct json_object *d, *e;

	job_fail(j, NAS_ERR_FAILED, "mkfs exited with %d", 1);
	ck_assert_int_eq(job_state(j), JOB_FAILED);
	ck_assert_int_eq(released, 1);
	d = job_describe(j);
	ck_assert_str_eq(member_str(d, "target"), "");
	ck_assert(json_object_object_get_ex(d, "error", &e));
	ck_assert_str_eq(member_str(e, "message"), "mkfs exited with 1");
	ck_assert_str_eq(member_str(e, "code"), "-32000");
	json_object_put(d);
}
END_TEST

START_TEST(reset_releases_running)
{
	job_start("a", "x", &plain_ops, NULL);
	job_done(job_start("b", "y", &plain_ops, NULL), NULL);
	ck_assert_int_eq(released, 1);
	job_reset();
	ck_assert_int_eq(released, 2);
	ck_assert_ptr_null(job_find(1));
	/* Ids start again after a reset. */
	ck_assert_uint_eq(job_id(job_start("c", "z", NULL, NULL)), 1);
}
END_TEST

START_TEST(methods_list_and_status)
{
	struct json_object *a, *r;

	job_start("scrub", "vol1", NULL, NULL);
	job_done(job_start("check", "vol2", NULL, NULL), NULL);
	a = call("job.list", NULL);
	r = result_of(a);
	ck_assert_uint_eq(json_object_array_length(r), 2);
	ck_assert_str_eq(member_str(json_object_array_get_idx(r, 0), "kind"), "check");
	ck_assert_str_eq(member_str(json_object_array_get_idx(r, 1), "kind"), "scrub");
	json_object_put(a);
	a = call("job.status", "{\"id\":1}");
	ck_assert_str_eq(member_str(result_of(a), "state"), "running");
	json_object_put(a);
	a = call("job.status", "{\"id\":9}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_NOT_FOUND);
	ck_assert_str_eq(unit_err_msg(a), "no job 9");
	json_object_put(a);
	a = call("job.status", "{\"id\":0}");
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
	json_object_put(a);
	a = call("job.status", "{\"id\":\"1\"}");
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
	json_object_put(a);
	a = call("job.status", NULL);
	ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
	json_object_put(a);
}
END_TEST

START_TEST(method_cancel)
{
	struct job *later = job_start("scrub", "v", &later_ops, NULL);
	struct job *now = job_start("scrub", "w", &now_ops, NULL);
	struct json_object *a;

	job_start("rebuild", "v", &plain_ops, NULL);
	a = call("job.cancel", "{\"id\":1}");
	ck_assert_str_eq(member_str(result_of(a), "state"), "running");
	ck_assert_int_eq(cancel_asked, 1);
	json_object_put(a);
	job_cancelled(later);
	ck_assert_int_eq(job_state(later), JOB_CANCELLED);
	a = call("job.cancel", "{\"id\":2}");
	ck_assert_str_eq(member_str(result_of(a), "state"), "cancelled");
	ck_assert_int_eq(job_state(now), JOB_CANCELLED);
	json_object_put(a);
	a = call("job.cancel", "{\"id\":2}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_INVALID);
	json_object_put(a);
	/* A job without a cancel operation refuses: stopping it might lose data. */
	a = call("job.cancel", "{\"id\":3}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_REFUSED);
	json_object_put(a);
	a = call("job.cancel", "{\"id\":4}");
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_NOT_FOUND);
	json_object_put(a);
	ck_assert_int_eq(cancel_asked, 2);
	ck_assert_int_eq(released, 2);
}
END_TEST

START_TEST(prune_keeps_32_finished)
{
	struct json_object *a;

	job_start("long", "keep", &plain_ops, NULL);
	for (int i = 0; i < 40; i++)
		job_done(job_start("short", "t", &plain_ops, NULL), NULL);
	a = call("job.list", NULL);
	/* 32 finished plus the one still running. */
	ck_assert_uint_eq(json_object_array_length(result_of(a)), 33);
	json_object_put(a);
	ck_assert_ptr_nonnull(job_find(1));
	ck_assert_ptr_null(job_find(2));
	ck_assert_ptr_null(job_find(9));
	ck_assert_ptr_nonnull(job_find(10));
	ck_assert_ptr_nonnull(job_find(41));
	ck_assert_int_eq(released, 40);
}
END_TEST

/*
 * A job that was started long ago and stops at once when asked ends
 * behind 32 newer finished ones; job.cancel still answers about it.
 */
START_TEST(cancel_now_with_full_history)
{
	struct json_object *a;

	job_start("scrub", "old", &now_ops, NULL);
	for (int i = 0; i < 32; i++)
		job_done(job_start("short", "t", NULL, NULL), NULL);
	a = call("job.cancel", "{\"id\":1}");
	ck_assert_str_eq(member_str(result_of(a), "state"), "cancelled");
	ck_assert_str_eq(member_str(result_of(a), "target"), "old");
	json_object_put(a);
	ck_assert_int_eq(released, 1);
	/* It is the latest to end: kept; the oldest to end is forgotten. */
	ck_assert_ptr_nonnull(job_find(1));
	ck_assert_ptr_null(job_find(2));
	ck_assert_ptr_nonnull(job_find(3));
}
END_TEST

START_TEST(topic_matching)
{
	struct json_object *t = unit_json("[\"job\",\"disk.bay1\"]"), *all = unit_json("[]");

	ck_assert(rpc_topic_matches(t, "job"));
	ck_assert(rpc_topic_matches(t, "job.progress"));
	ck_assert(!rpc_topic_matches(t, "jobs.progress"));
	ck_assert(!rpc_topic_matches(t, "jo"));
	ck_assert(rpc_topic_matches(t, "disk.bay1"));
	ck_assert(rpc_topic_matches(t, "disk.bay1.added"));
	ck_assert(!rpc_topic_matches(t, "disk.bay10"));
	ck_assert(!rpc_topic_matches(t, "disk"));
	ck_assert(rpc_topic_matches(all, "anything.at.all"));
	json_object_put(t);
	json_object_put(all);
}
END_TEST

/* ---- events over a socket ---- */

static char path[256];

static void
listen_setup(void)
{
	setup();
	dir = unit_tmpdir();
	snprintf(path, sizeof(path), "%s/e.sock", dir);
	rpc_events_init(srv);
	ck_assert_int_eq(rpc_server_listen(srv, path, (gid_t)-1), 0);
}

/* A connection subscribed to topics (JSON array text, or NULL: not at all). */
static int
subscriber(const char *topics)
{
	char req[256], *line;
	int fd = unit_connect(path);
	struct json_object *a;

	if (topics == NULL)
		return fd;
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
	    "\"params\":{\"topics\":%s},\"id\":1}\n", topics);
	unit_send(fd, req, strlen(req));
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	a = unit_json(line);
	ck_assert_msg(unit_err_code(a) == 0, "%s", line);
	json_object_put(a);
	free(line);
	return fd;
}

/* Asserts the next line on fd is a notification of topic; returns its params. */
static struct json_object *
expect_event(int fd, const char *topic)
{
	char *line = unit_read_line(fd);
	struct json_object *n, *p;

	ck_assert_msg(line != NULL, "EOF instead of %s", topic);
	n = unit_json(line);
	ck_assert_msg(!json_object_object_get_ex(n, "id", NULL), "%s", line);
	ck_assert_str_eq(member_str(n, "method"), topic);
	ck_assert(json_object_object_get_ex(n, "params", &p));
	p = json_object_get(p);
	ck_assert_str_eq(member_str(p, "daemon"), "testd");
	json_object_put(n);
	free(line);
	return p;
}

static void
event(const char *topic)
{
	nas_event(topic, NULL);
	unit_pump();
}

START_TEST(events_by_topic)
{
	int job = subscriber("[\"job\"]"), disk = subscriber("[\"disk\",\"power\"]");
	int all = subscriber("[]"), none = subscriber(NULL);

	event("job.progress");
	event("jobs.other");
	event("disk.removed");
	event("power.state");
	json_object_put(expect_event(job, "job.progress"));
	json_object_put(expect_event(disk, "disk.removed"));
	json_object_put(expect_event(disk, "power.state"));
	json_object_put(expect_event(all, "job.progress"));
	json_object_put(expect_event(all, "jobs.other"));
	json_object_put(expect_event(all, "disk.removed"));
	json_object_put(expect_event(all, "power.state"));
	unit_assert_silent(job);
	unit_assert_silent(disk);
	unit_assert_silent(all);
	unit_assert_silent(none);
	close(job);
	close(disk);
	close(all);
	close(none);
}
END_TEST

START_TEST(subscribe_without_params_means_all)
{
	static const char sub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"id\":1}\n";
	int fd = unit_connect(path);
	char *line;

	unit_send(fd, sub, strlen(sub));
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	ck_assert_str_eq(line, "{\"jsonrpc\":\"2.0\",\"result\":{\"subscribed\":[]},\"id\":1}");
	free(line);
	event("x.y");
	json_object_put(expect_event(fd, "x.y"));
	close(fd);
}
END_TEST

START_TEST(unsubscribe_stops_events)
{
	static const char unsub[] = "{\"jsonrpc\":\"2.0\",\"method\":\"events.unsubscribe\","
	    "\"id\":2}\n";
	int fd = subscriber("[\"job\"]");
	char *line;

	unit_send(fd, unsub, strlen(unsub));
	ck_assert_ptr_nonnull(line = unit_read_line(fd));
	ck_assert_str_eq(line, "{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":2}");
	free(line);
	event("job.progress");
	unit_assert_silent(fd);
	close(fd);
}
END_TEST

START_TEST(bad_topics)
{
	static const char *const bad[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
		    "\"params\":{\"topics\":[1]},\"id\":1}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
		    "\"params\":{\"topics\":\"job\"},\"id\":1}\n",
	};
	int fd = unit_connect(path);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *a;
		char *line;

		unit_send(fd, bad[i], strlen(bad[i]));
		ck_assert_ptr_nonnull(line = unit_read_line(fd));
		a = unit_json(line);
		ck_assert_int_eq(unit_err_code(a), RPC_INVALID_PARAMS);
		json_object_put(a);
		free(line);
	}
	/* Refused subscriptions subscribe to nothing. */
	event("job.progress");
	unit_assert_silent(fd);
	close(fd);
}
END_TEST

START_TEST(job_events)
{
	int fd = subscriber("[\"job\"]"), other = subscriber("[\"disk\"]");
	struct job *j = job_start("scrub", "vol1", &plain_ops, NULL);
	struct json_object *p;

	job_progress(j, 50, "half");
	job_done(j, NULL);
	unit_pump();
	p = expect_event(fd, "job.started");
	ck_assert_str_eq(member_str(p, "id"), "1");
	ck_assert_str_eq(member_str(p, "kind"), "scrub");
	json_object_put(p);
	p = expect_event(fd, "job.progress");
	ck_assert_str_eq(member_str(p, "step"), "half");
	ck_assert_double_eq(member_num(p, "percent"), 50);
	json_object_put(p);
	p = expect_event(fd, "job.finished");
	ck_assert_str_eq(member_str(p, "state"), "done");
	json_object_put(p);
	unit_assert_silent(other);
	close(fd);
	close(other);
}
END_TEST

/* A subscriber that half-closes its side still gets its events. */
START_TEST(half_closed_subscriber)
{
	int fd = subscriber("[]");

	shutdown(fd, SHUT_WR);
	unit_pump();
	event("late.news");
	json_object_put(expect_event(fd, "late.news"));
	close(fd);
}
END_TEST

static const struct rpc_peer reader = { .uid = 1000, .gid = 100 };
static const struct rpc_peer admin = { .uid = 1001, .gid = 1001, .ngroups = 1,
    .groups = (gid_t []){ 200 } };

static struct json_object *
call_as(const struct rpc_peer *peer, const char *method, const char *params)
{
	char req[256], *out;
	struct json_object *a;

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",%s%s%s\"id\":1}",
	    method, params ? "\"params\":" : "", params ? params : "", params ? "," : "");
	ck_assert_ptr_nonnull(out = rpc_dispatch_text(srv, peer, req, strlen(req)));
	a = unit_json(out);
	free(out);
	return a;
}

static void
set_groups(void)
{
	struct rpc_auth auth = { .admin_gid = 200, .read_gid = 100 };

	rpc_server_set_auth(srv, &auth);
}

/* The result of the only job in d (a job or a job.list array); NULL: none shown. */
static const char *
shown_key(struct json_object *d)
{
	struct json_object *r, *k;

	if (json_object_is_type(d, json_type_array))
		d = json_object_array_get_idx(d, 0);
	ck_assert_str_eq(member_str(d, "state"), "done");
	if (!json_object_object_get_ex(d, "result", &r))
		return NULL;
	ck_assert(json_object_object_get_ex(r, "key", &k));
	return json_object_get_string(k);
}

static void
finish_with_key(int sensitive)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "key", json_object_new_string("K-1234"));
	if (sensitive)
		job_done_sensitive(job_start("keygen", "vol1", NULL, NULL), r);
	else
		job_done(job_start("keygen", "vol1", NULL, NULL), r);
}

/* Only root and the admin group see a sensitive result, in status and list. */
START_TEST(sensitive_result_hidden_from_read_group)
{
	static const char *const methods[] = { "job.status", "job.list" };
	struct json_object *a, *d;

	set_groups();
	finish_with_key(1);
	for (int m = 0; m < 2; m++) {
		const char *params = m == 0 ? "{\"id\":1}" : NULL;

		a = call_as(&reader, methods[m], params);
		ck_assert_ptr_null(shown_key(result_of(a)));
		d = result_of(a);
		if (json_object_is_type(d, json_type_array))
			d = json_object_array_get_idx(d, 0);
		ck_assert_str_eq(member_str(d, "sensitive"), "true");
		json_object_put(a);
		a = call_as(&admin, methods[m], params);
		ck_assert_str_eq(shown_key(result_of(a)), "K-1234");
		json_object_put(a);
		a = call_as(&root, methods[m], params);
		ck_assert_str_eq(shown_key(result_of(a)), "K-1234");
		json_object_put(a);
	}
	d = job_describe(job_find(1));
	ck_assert_ptr_null(shown_key(d));
	json_object_put(d);
}
END_TEST

/* An ordinary result stays readable by the read group. */
START_TEST(plain_result_shown_to_read_group)
{
	struct json_object *a;

	set_groups();
	finish_with_key(0);
	a = call_as(&reader, "job.status", "{\"id\":1}");
	ck_assert_str_eq(shown_key(result_of(a)), "K-1234");
	ck_assert(!json_object_object_get_ex(result_of(a), "sensitive", NULL));
	json_object_put(a);
	a = call_as(&reader, "job.list", NULL);
	ck_assert_str_eq(shown_key(result_of(a)), "K-1234");
	json_object_put(a);
}
END_TEST

/* Subscribers may be in the read group: job.finished never carries it. */
START_TEST(sensitive_result_not_in_event)
{
	int fd = subscriber("[\"job.finished\"]");
	struct json_object *p;

	finish_with_key(1);
	unit_pump();
	p = expect_event(fd, "job.finished");
	ck_assert_ptr_null(shown_key(p));
	ck_assert_str_eq(member_str(p, "sensitive"), "true");
	json_object_put(p);
	finish_with_key(0);
	unit_pump();
	p = expect_event(fd, "job.finished");
	ck_assert_str_eq(shown_key(p), "K-1234");
	json_object_put(p);
	close(fd);
}
END_TEST

static Suite *
events_jobs_suite(void)
{
	Suite *s = suite_create("events-jobs");
	TCase *tj = tcase_create("jobs"), *te = tcase_create("events");

	tcase_add_checked_fixture(tj, setup, teardown);
	tcase_add_test(tj, lifecycle_done);
	tcase_add_test(tj, lifecycle_fail);
	tcase_add_test(tj, progress_refuses_nan_and_infinity);
	tcase_add_test(tj, reset_releases_running);
	tcase_add_test(tj, methods_list_and_status);
	tcase_add_test(tj, method_cancel);
	tcase_add_test(tj, prune_keeps_32_finished);
	tcase_add_test(tj, cancel_now_with_full_history);
	tcase_add_test(tj, topic_matching);
	tcase_add_test(tj, sensitive_result_hidden_from_read_group);
	tcase_add_test(tj, plain_result_shown_to_read_group);
	suite_add_tcase(s, tj);
	tcase_add_checked_fixture(te, listen_setup, teardown);
	tcase_add_test(te, events_by_topic);
	tcase_add_test(te, subscribe_without_params_means_all);
	tcase_add_test(te, unsubscribe_stops_events);
	tcase_add_test(te, bad_topics);
	tcase_add_test(te, job_events);
	tcase_add_test(te, half_closed_subscriber);
	tcase_add_test(te, sensitive_result_not_in_event);
	suite_add_tcase(s, te);
	return s;
}

int
main(void)
{
	return unit_run(events_jobs_suite());
}
