/*
 * cryptd's unlock back-off kept across restarts (cryptd/ratelimit-state.c):
 * the count and the wait survive a restart, restart from the load in
 * another boot, and a file that is not exactly cryptd's makes every
 * device wait (never none).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "cryptd/cryptd.h"
#include "tests/unit/unit-util.h"

static double clock_now;
static char *dir, *path, *boot_file;

static double
fake_clock(void)
{
	return clock_now;
}

static void
setup(void)
{
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_ERR);
	dir = unit_tmpdir();
	path = malloc(strlen(dir) + 32);
	sprintf(path, "%s/cryptd-backoff", dir);
	boot_file = unit_write(dir, "boot_id", "11111111-2222-3333-4444-555555555555\n");
	ratelimit_set_boot_id_path(boot_file);
	ratelimit_set_clock(fake_clock);
	clock_now = 1000;
	ratelimit_clear();
}

static void
teardown(void)
{
	ratelimit_load("");
	ratelimit_clear();
	ratelimit_set_clock(NULL);
	unit_rmtree(dir);
	free(dir);
	free(path);
	free(boot_file);
}

static const struct cdev dev_a = { .id_dev = 0x801, .table_dev = "8:1" };
static const struct cdev dev_b = { .id_dev = 0x802, .table_dev = "8:2" };

/* cryptd stops and starts: the table is read back from the file. */
static void
restart(void)
{
	ratelimit_clear();
	ratelimit_load(path);
}

START_TEST(count_survives_a_restart)
{
	ratelimit_load(path);		/* no file yet: nothing waits */
	ck_assert(ratelimit_wait(&dev_a) == 0);
	for (int i = 0; i < 3; i++)
		ratelimit_note(&dev_a, 0);
	ck_assert(ratelimit_wait(&dev_a) == 4);
	restart();
	ck_assert(ratelimit_wait(&dev_a) == 4);
	ck_assert(ratelimit_wait(&dev_b) == 0);
	clock_now += 4;
	ck_assert(ratelimit_wait(&dev_a) == 0);
	/* The count itself stayed: the next failure doubles the wait. */
	ratelimit_note(&dev_a, 0);
	restart();
	ck_assert(ratelimit_wait(&dev_a) == 8);
	/* Success clears it, in the file too. */
	clock_now += 8;
	ratelimit_note(&dev_a, 1);
	restart();
	ck_assert(ratelimit_wait(&dev_a) == 0);
}
END_TEST

/* After a reboot the monotonic clock starts again: the wait starts again. */
START_TEST(another_boot_waits_again)
{
	char *other;

	ratelimit_load(path);
	ratelimit_note(&dev_a, 0);
	ratelimit_note(&dev_a, 0);
	clock_now = 5;			/* a new boot's clock, far below */
	other = unit_write(dir, "boot_id", "99999999-2222-3333-4444-555555555555\n");
	restart();
	ck_assert(ratelimit_wait(&dev_a) == 2);
	free(other);
}
END_TEST

static const char *const corrupt[] = {
	"",
	"garbage\n",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\n",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\n2049 0 3 999.000 8:1\nend 2\n",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\n2049 0 0 999.000 8:1\nend 1\n",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\n2049 0 3 nan 8:1\nend 1\n",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\n2049 0 3 999.000 8:1\nend 1",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\nend 0\nend 0\n",
	"cryptd-backoff 2\nboot 11111111-2222-3333-4444-555555555555\nend 0\n",
	"cryptd-backoff 1\nboot 11111111-2222-3333-4444-555555555555\n2049 0 3 999.000\nend 1\n",
};

/* Anything but cryptd's own table: every device waits the longest delay. */
START_TEST(corrupt_file_means_back_off)
{
	char *f = unit_write(dir, "cryptd-backoff", corrupt[_i]);

	restart();
	ck_assert_msg(ratelimit_wait(&dev_b) == 60, "case %d", _i);
	ck_assert(ratelimit_wait(&dev_a) == 60);
	clock_now += 60;
	ck_assert(ratelimit_wait(&dev_b) == 0);
	free(f);
}
END_TEST

START_TEST(symlink_is_not_followed)
{
	char *target = unit_write(dir, "elsewhere", "cryptd-backoff 1\nboot x\nend 0\n");

	ck_assert_int_eq(symlink(target, path), 0);
	restart();
	ck_assert(ratelimit_wait(&dev_a) == 60);
	free(target);
}
END_TEST

/* What cryptd wrote, it reads back whole (no floor). */
START_TEST(written_file_reads_back)
{
	ratelimit_load(path);
	ratelimit_note(&dev_a, 0);
	ratelimit_note(&dev_b, 0);
	ratelimit_note(&dev_b, 0);
	restart();
	ck_assert(ratelimit_wait(&dev_a) == 1);
	ck_assert(ratelimit_wait(&dev_b) == 2);
	char tmp[512];

	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	ck_assert_int_ne(access(tmp, F_OK), 0);
}
END_TEST

static Suite *
backoff_suite(void)
{
	Suite *s = suite_create("cryptd-backoff");
	TCase *tc = tcase_create("backoff");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, count_survives_a_restart);
	tcase_add_test(tc, another_boot_waits_again);
	tcase_add_loop_test(tc, corrupt_file_means_back_off, 0,
	    (int)(sizeof(corrupt) / sizeof(corrupt[0])));
	tcase_add_test(tc, symlink_is_not_followed);
	tcase_add_test(tc, written_file_reads_back);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(backoff_suite());
}
