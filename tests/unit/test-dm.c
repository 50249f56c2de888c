/*
 * Unit tests for lib/dm.c without device-mapper: the ioctl and the
 * buffer release are replaced (dm_set_hooks), /dev/mapper is a
 * temporary directory.  Names are checked before any ioctl, every
 * buffer is wiped before it is freed, loads are secure, a node that is
 * not the device's own is never unlinked, a busy device is tried once
 * (or retried on the loop by dm_remove_async).
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <linux/dm-ioctl.h>

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "dm.h"
#include "unit-util.h"

#define KEY	"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define DEV	makedev(253, 7)

static int calls, removes, busy_removes, released, not_wiped, load_flags, load_had_key;
static char *dir;

/* The kernel, as far as these tests need it. */
static int
fake_ioctl(unsigned long cmd, struct dm_ioctl *io)
{
	struct dm_target_spec *spec;
	char *data = (char *)io + io->data_start;

	calls++;
	switch (cmd) {
	case DM_DEV_STATUS:
	case DM_DEV_CREATE:
		io->dev = DEV;
		return 0;
	case DM_DEV_REMOVE:
		removes++;
		if (busy_removes > 0) {
			busy_removes--;
			errno = EBUSY;
			return -1;
		}
		return 0;
	case DM_TABLE_LOAD:
		load_flags = (int)io->flags;
		load_had_key = memmem(data, io->data_size - io->data_start, KEY,
		    strlen(KEY)) != NULL;
		return 0;
	case DM_TABLE_STATUS:
		/* A crypt table's answer carries its key. */
		spec = (struct dm_target_spec *)data;
		memset(spec, 0, sizeof(*spec));
		spec->length = 2048;
		strcpy(spec->target_type, "crypt");
		sprintf((char *)(spec + 1), "aes-xts-plain64 %s 0 253:1 0", KEY);
		io->target_count = 1;
		load_flags = (int)io->flags;
		return 0;
	default:
		return 0;
	}
}

static void
release(struct dm_ioctl *io, size_t size)
{
	const unsigned char *p = (const unsigned char *)io;

	released++;
	for (size_t i = 0; i < size; i++)
		if (p[i] != 0) {
			not_wiped++;
			break;
		}
	free(io);
}

static void
setup(void)
{
	struct dm_hooks h = { fake_ioctl, release, NULL, 253 };

	calls = removes = busy_removes = released = not_wiped = load_flags = load_had_key = 0;
	dir = unit_tmpdir();
	h.dir = dir;
	dm_set_hooks(&h);
}

static void
teardown(void)
{
	dm_set_hooks(NULL);
	unit_rmtree(dir);
	free(dir);
}

static char *
node(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static int
exists(const char *name)
{
	struct stat st;

	return lstat(node(name), &st) == 0;
}

START_TEST(names_refused_before_any_ioctl)
{
	char long_name[DM_NAME_LEN + 1], buf[256];
	const char *bad[] = { "", ".", "..", "control", "a/b", "/", "../sda",
	    "nas-x/../../sda", long_name };
	struct dm_target t = { 0, 8, "linear", "8:1 0" };
	struct dm_info info;

	memset(long_name, 'a', DM_NAME_LEN);
	long_name[DM_NAME_LEN] = '\0';
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *name = bad[i];

		ck_assert_msg(!dm_name_ok(name), "%s accepted", name);
		errno = 0;
		ck_assert_int_eq(dm_remove(name), -1);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(dm_dev_create(name, NULL, NULL), -1);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(dm_create(name, NULL, &t, 1, 0), -1);
		ck_assert_int_eq(dm_load(name, &t, 1, 0), -1);
		ck_assert_int_eq(dm_resume(name), -1);
		ck_assert_int_eq(dm_status(name, &info), -1);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(dm_exists(name), -1);
		ck_assert_int_eq(dm_table(name, buf, sizeof(buf)), -1);
		ck_assert_int_eq(dm_remove_async(name, NULL, NULL), -1);
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert(!dm_name_ok(NULL));
	ck_assert_int_eq(dm_remove(NULL), -1);
	ck_assert_int_eq(calls, 0);
	long_name[DM_NAME_LEN - 1] = '\0';
	ck_assert(dm_name_ok(long_name));
	ck_assert(dm_name_ok("nas-data"));
	ck_assert(dm_name_ok("a..b"));
	ck_assert(dm_name_ok(".hidden"));
}
END_TEST

/* The table text, key included, never outlives the call in our memory. */
START_TEST(load_is_secure_and_wiped)
{
	char params[256];
	struct dm_target t = { 0, 2048, "crypt", params };

	snprintf(params, sizeof(params), "aes-xts-plain64 %s 0 253:1 0", KEY);
	/* No flag asked: a key may be there all the same. */
	ck_assert_int_eq(dm_load("nas-c", &t, 1, 0), 0);
	ck_assert(load_had_key);
	ck_assert(load_flags & DM_SECURE_DATA_FLAG);
	ck_assert_int_eq(released, 1);
	ck_assert_int_eq(not_wiped, 0);
}
END_TEST

START_TEST(table_query_is_secure_and_wiped)
{
	char out[512];

	ck_assert_int_eq(dm_table("nas-c", out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, KEY));
	ck_assert(load_flags & DM_SECURE_DATA_FLAG);
	ck_assert_int_eq(released, 1);
	ck_assert_int_eq(not_wiped, 0);
	/* Too small for the answer: out is wiped too, not left half-written. */
	ck_assert_int_eq(dm_table("nas-c", out, 40), -1);
	ck_assert_int_eq(errno, ENOBUFS);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(out[i], 0);
	ck_assert_int_eq(released, 2);
	ck_assert_int_eq(not_wiped, 0);
}
END_TEST

START_TEST(every_buffer_wiped)
{
	struct dm_target t = { 0, 8, "linear", "8:1 0" };

	ck_assert_int_eq(dm_create("nas-d", "uuid-1", &t, 1, 0), 0);
	ck_assert_int_eq(dm_exists("nas-d"), 1);
	ck_assert_int_eq(dm_remove("nas-d"), 0);
	ck_assert_int_eq(released, calls);
	ck_assert_int_eq(not_wiped, 0);
}
END_TEST

START_TEST(node_made_and_removed)
{
	struct stat st;

	ck_assert_int_eq(dm_dev_create("nas-n", NULL, NULL), 0);
	ck_assert_int_eq(lstat(node("nas-n"), &st), 0);
	ck_assert(S_ISBLK(st.st_mode) && st.st_rdev == DEV);
	ck_assert_int_eq(dm_remove("nas-n"), 0);
	ck_assert(!exists("nas-n"));
}
END_TEST

/* A file, a symlink, another device's node: none is ours to unlink. */
START_TEST(foreign_nodes_kept)
{
	struct dm_target t = { 0, 8, "linear", "8:1 0" };
	char *f;

	f = unit_write(dir, "nas-file", "data\n");
	free(f);
	ck_assert_int_eq(symlink("/dev/sda", node("nas-link")), 0);
	ck_assert_int_eq(mknod(node("nas-sda"), S_IFBLK | 0600, makedev(8, 0)), 0);
	ck_assert_int_eq(mknod(node("nas-other"), S_IFBLK | 0600, makedev(253, 9)), 0);
	ck_assert_int_eq(dm_remove("nas-file"), 0);
	ck_assert_int_eq(dm_remove("nas-link"), 0);
	ck_assert_int_eq(dm_remove("nas-sda"), 0);
	ck_assert_int_eq(dm_remove("nas-other"), 0);
	ck_assert(exists("nas-file") && exists("nas-link") && exists("nas-sda") &&
	    exists("nas-other"));
	/* Nor does a create replace them. */
	ck_assert_int_eq(dm_create("nas-file", NULL, &t, 1, 0), -1);
	ck_assert_int_eq(dm_create("nas-sda", NULL, &t, 1, 0), -1);
	ck_assert(exists("nas-file") && exists("nas-sda"));
	/* A stale node of device-mapper's is replaced by the new device's. */
	ck_assert_int_eq(dm_create("nas-other", NULL, &t, 1, 0), 0);
}
END_TEST

static int
gone_ioctl(unsigned long cmd, struct dm_ioctl *io)
{
	(void)io;
	(void)cmd;
	calls++;
	errno = ENXIO;
	return -1;
}

/* The device is gone: only a stale node of device-mapper's major goes. */
START_TEST(stale_node_only_if_dm)
{
	struct dm_hooks h = { gone_ioctl, release, NULL, 253 };

	h.dir = dir;
	dm_set_hooks(&h);
	ck_assert_int_eq(mknod(node("nas-stale"), S_IFBLK | 0600, makedev(253, 3)), 0);
	ck_assert_int_eq(mknod(node("nas-sd"), S_IFBLK | 0600, makedev(8, 16)), 0);
	ck_assert_int_eq(dm_remove("nas-stale"), -1);
	ck_assert_int_eq(errno, ENXIO);
	ck_assert_int_eq(dm_remove("nas-sd"), -1);
	ck_assert_int_eq(errno, ENXIO);
	ck_assert(!exists("nas-stale"));
	ck_assert(exists("nas-sd"));
}
END_TEST

/* One try, no sleep: the caller decides what busy means. */
START_TEST(remove_busy_once)
{
	busy_removes = 100;
	errno = 0;
	ck_assert_int_eq(dm_remove("nas-b"), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(removes, 1);
}
END_TEST

static int async_done, async_err;

static void
async_cb(int err, void *arg)
{
	(void)arg;
	async_done++;
	async_err = err;
}

static void
run_until_done(void)
{
	for (int i = 0; i < 100000 && !async_done; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
}

START_TEST(remove_async_retries_on_the_loop)
{
	busy_removes = 3;
	async_done = 0;
	ck_assert_int_eq(dm_remove_async("nas-a", async_cb, NULL), 0);
	ck_assert_int_eq(async_done, 0);	/* never from inside the call */
	ck_assert_int_eq(removes, 0);
	run_until_done();
	ck_assert_int_eq(async_done, 1);
	ck_assert_int_eq(async_err, 0);
	ck_assert_int_eq(removes, 4);
}
END_TEST

START_TEST(remove_async_gives_up)
{
	busy_removes = 1000;
	async_done = 0;
	ck_assert_int_eq(dm_remove_async("nas-a", async_cb, NULL), 0);
	run_until_done();
	ck_assert_int_eq(async_done, 1);
	ck_assert_int_eq(async_err, EBUSY);
	ck_assert_int_eq(removes, 10);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dm");
	TCase *tc = tcase_create("dm");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, names_refused_before_any_ioctl);
	tcase_add_test(tc, load_is_secure_and_wiped);
	tcase_add_test(tc, table_query_is_secure_and_wiped);
	tcase_add_test(tc, every_buffer_wiped);
	tcase_add_test(tc, node_made_and_removed);
	tcase_add_test(tc, foreign_nodes_kept);
	tcase_add_test(tc, stale_node_only_if_dm);
	tcase_add_test(tc, remove_busy_once);
	tcase_add_test(tc, remove_async_retries_on_the_loop);
	tcase_add_test(tc, remove_async_gives_up);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
