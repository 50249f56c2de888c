/* lib/metrics.c: the text exposition format and the atomic write. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "tests/unit/unit-util.h"

static void
setup(void)
{
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
}

START_TEST(format_golden)
{
	struct metrics *m = metrics_new();
	static const char *const idle[] = { "state", "idle", NULL };
	static const char *const two[] = { "bay", "1", "label", "Bay \"1\"\\\n\x1b\xc3", NULL };

	metrics_family(m, "nas_power_watts", "gauge", "Power at the wall.\nSecond \\ line");
	metrics_add(m, NULL, 12.5);
	metrics_family(m, "nas_energy_joules_total", "counter", "Energy.");
	metrics_add(m, idle, 1234);
	metrics_family(m, "nas_x", "untyped", "x");
	metrics_add(m, two, NAN);
	metrics_add(m, NULL, INFINITY);
	ck_assert_str_eq(metrics_text(m),
	    "# HELP nas_power_watts Power at the wall.\\nSecond \\\\ line\n"
	    "# TYPE nas_power_watts gauge\n"
	    "nas_power_watts 12.5\n"
	    "# HELP nas_energy_joules_total Energy.\n"
	    "# TYPE nas_energy_joules_total counter\n"
	    "nas_energy_joules_total{state=\"idle\"} 1234\n"
	    "# HELP nas_x x\n"
	    "# TYPE nas_x untyped\n"
	    "nas_x{bay=\"1\",label=\"Bay \\\"1\\\"\\\\\\n??\"} NaN\n"
	    "nas_x +Inf\n");
	metrics_free(m);
}
END_TEST

START_TEST(bad_names_write_nothing)
{
	static const char *const bad_label[] = { "__reserved", "x", NULL };
	static const char *const colon[] = { "a:b", "x", NULL };
	struct metrics *m;
	char *dir = unit_tmpdir(), path[512];

	m = metrics_new();
	metrics_family(m, "1abc", "gauge", "x");
	ck_assert_ptr_null(metrics_text(m));
	ck_assert_int_eq(metrics_write(m, dir, "powerd"), -1);
	metrics_free(m);
	m = metrics_new();
	metrics_family(m, "ok", "histogram", "x");
	ck_assert_ptr_null(metrics_text(m));
	metrics_free(m);
	m = metrics_new();
	metrics_family(m, "ok", "gauge", "x");
	metrics_family(m, "ok", "gauge", "x");	/* twice */
	ck_assert_ptr_null(metrics_text(m));
	metrics_free(m);
	m = metrics_new();
	metrics_family(m, "ok", "gauge", "x");
	metrics_add(m, bad_label, 1);
	ck_assert_ptr_null(metrics_text(m));
	metrics_free(m);
	m = metrics_new();
	metrics_family(m, "ok", "gauge", "x");
	metrics_add(m, colon, 1);
	ck_assert_ptr_null(metrics_text(m));
	metrics_free(m);
	m = metrics_new();
	metrics_add(m, NULL, 1);	/* no family */
	ck_assert_ptr_null(metrics_text(m));
	metrics_free(m);
	/* A daemon name that would leave the directory. */
	m = metrics_new();
	ck_assert_int_eq(metrics_write(m, dir, "../x"), -1);
	metrics_free(m);
	snprintf(path, sizeof(path), "%s/powerd.prom", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	unit_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(write_replaces_atomically)
{
	char *dir = unit_tmpdir(), sub[256], path[512], *old, buf[256];
	struct metrics *m = metrics_new();
	struct stat st;
	FILE *f;
	size_t n;

	ck_assert_int_lt(snprintf(sub, sizeof(sub), "%s/metrics", dir), (int)sizeof(sub));	/* made when missing */
	metrics_family(m, "nas_a", "gauge", "a");
	metrics_add(m, NULL, 1);
	ck_assert_int_eq(metrics_write(m, sub, "powerd"), 0);
	/* A leftover temporary file from a crash is replaced, not followed. */
	snprintf(path, sizeof(path), ".powerd.prom.%ld.tmp", (long)getpid());
	old = unit_write(sub, path, "stale");
	ck_assert_int_eq(metrics_write(m, sub, "powerd"), 0);
	ck_assert_int_eq(access(old, F_OK), -1);
	snprintf(path, sizeof(path), "%s/powerd.prom", sub);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_str_eq(buf, "# HELP nas_a a\n# TYPE nas_a gauge\nnas_a 1\n");
	/* A directory planted at the temporary name stops no write. */
	snprintf(path, sizeof(path), "%s/.powerd.prom.%ld.tmp", sub, (long)getpid());
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/.powerd.prom.%ld.tmp/x", sub, (long)getpid());
	ck_assert_int_eq(mkdir(path, 0755), 0);
	metrics_add(m, NULL, 2);
	ck_assert_int_eq(metrics_write(m, sub, "powerd"), 0);
	snprintf(path, sizeof(path), "%s/powerd.prom", sub);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_str_eq(buf, "# HELP nas_a a\n# TYPE nas_a gauge\nnas_a 1\nnas_a 2\n");
	/* A directory that is a symlink is refused. */
	snprintf(path, sizeof(path), "%s/link", dir);
	ck_assert_int_eq(symlink(sub, path), 0);
	ck_assert_int_eq(metrics_write(m, path, "powerd"), -1);
	metrics_free(m);
	free(old);
	unit_rmtree(dir);
	free(dir);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("metrics");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, format_golden);
	tcase_add_test(tc, bad_names_write_nothing);
	tcase_add_test(tc, write_replaces_atomically);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(metrics_suite());
}
