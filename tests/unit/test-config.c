/* Unit tests for lib/config.c: schema checks, getters, errors, -n output. */
#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "unit-util.h"

static const char *const modes[] = { "fast", "slow", NULL };

static const struct conf_key general_keys[] = {
	{ "general", "count", CONF_INT, "5", 1, 10, NULL, "how many" },
	{ "general", "enabled", CONF_BOOL, "yes", 0, 0, NULL, "on or off" },
	{ "general", "name", CONF_STRING, "nas", 1, 16, NULL, "a name" },
	{ "general", "mode", CONF_ENUM, "fast", 0, 0, modes, "speed" },
	{ "general", "offset", CONF_INT, "-3", 0, 0, NULL, "unbounded" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static const struct conf_key extra_keys[] = {
	{ "extra", "note", CONF_STRING, "", 0, 0, NULL, "free text" },
	{ "extra", "debug", CONF_BOOL, "no", 0, 0, NULL, "debug" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static const struct conf_key *const schemas[] = { general_keys, extra_keys, NULL };

static char *dir;
static char err[512];
/* Kept in a global so an exit test leaves nothing LeakSanitizer calls lost. */
static struct conf *cf;

static void
setup(void)
{
	dir = unit_tmpdir();
	err[0] = '\0';
	cf = NULL;
}

static void
teardown(void)
{
	conf_free(cf);
	unit_rmtree(dir);
	free(dir);
}

/* Loads text from a file named t.ini; NULL with err set on failure. */
static struct conf *
load_text(const char *text)
{
	char *path = unit_write(dir, "t.ini", text);
	struct conf *c = conf_load(path, schemas, 0, err, sizeof(err));

	free(path);
	return c;
}

/* Asserts that text is refused with exactly "DIR/t.ini: " + want. */
static void
refused(const char *text, const char *want)
{
	char full[1024];

	snprintf(full, sizeof(full), "%s/t.ini: %s", dir, want);
	cf = load_text(text);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(err, full);
}

/* Asserts that text is refused with "DIR/t.ini:LINE: " + want. */
static void
refused_at(const char *text, int line, const char *want)
{
	char full[1024];

	snprintf(full, sizeof(full), "%s/t.ini:%d: %s", dir, line, want);
	cf = load_text(text);
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(err, full);
}

START_TEST(defaults_when_missing_allowed)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/absent.ini", dir);
	cf = conf_load(path, schemas, 1, err, sizeof(err));
	ck_assert_ptr_nonnull(cf);
	ck_assert_int_eq(conf_int(cf, "general", "count"), 5);
	ck_assert_int_eq(conf_int(cf, "general", "offset"), -3);
	ck_assert_int_eq(conf_bool(cf, "general", "enabled"), 1);
	ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 0);
	ck_assert_str_eq(conf_str(cf, "general", "name"), "nas");
	ck_assert_str_eq(conf_str(cf, "general", "mode"), "fast");
	ck_assert_str_eq(conf_str(cf, "extra", "note"), "");
	ck_assert_str_eq(conf_path(cf), path);
}
END_TEST

START_TEST(missing_file_is_an_error_unless_allowed)
{
	char path[512], want[600];

	snprintf(path, sizeof(path), "%s/absent.ini", dir);
	cf = conf_load(path, schemas, 0, err, sizeof(err));
	ck_assert_ptr_null(cf);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(values_from_file)
{
	cf = load_text("[general]\ncount = 10\nenabled = off\nname = box\n"
	    "mode = slow\noffset = -99\n[extra]\nnote = hello world\ndebug = TRUE\n");
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_int(cf, "general", "count"), 10);
	ck_assert_int_eq(conf_int(cf, "general", "offset"), -99);
	ck_assert_int_eq(conf_bool(cf, "general", "enabled"), 0);
	ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 1);
	ck_assert_str_eq(conf_str(cf, "general", "name"), "box");
	ck_assert_str_eq(conf_str(cf, "general", "mode"), "slow");
	ck_assert_str_eq(conf_str(cf, "extra", "note"), "hello world");
}
END_TEST

START_TEST(partial_file_keeps_other_defaults)
{
	cf = load_text("[general]\ncount = 7\n");
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_int(cf, "general", "count"), 7);
	ck_assert_str_eq(conf_str(cf, "general", "name"), "nas");
	ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 0);
}
END_TEST

START_TEST(every_bool_spelling)
{
	static const char *const yes[] = { "1", "yes", "true", "on", "Yes", "ON" };
	static const char *const no[] = { "0", "no", "false", "off", "No", "FALSE" };
	char text[128];

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		snprintf(text, sizeof(text), "[extra]\ndebug = %s\n", yes[i]);
		cf = load_text(text);
		ck_assert_msg(cf != NULL, "%s: %s", yes[i], err);
		ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 1);
		conf_free(cf);
		snprintf(text, sizeof(text), "[extra]\ndebug = %s\n", no[i]);
		cf = load_text(text);
		ck_assert_msg(cf != NULL, "%s: %s", no[i], err);
		ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 0);
		conf_free(cf);
	}
	cf = NULL;
}
END_TEST

START_TEST(range_edges)
{
	cf = load_text("[general]\ncount = 1\n");
	ck_assert_msg(cf != NULL, "%s", err);
	conf_free(cf);
	refused("[general]\ncount = 0\n", "[general] count: 0 is out of range 1..10");
	refused("[general]\ncount = 11\n", "[general] count: 11 is out of range 1..10");
	refused("[general]\ncount = -1\n", "[general] count: -1 is out of range 1..10");
}
END_TEST

START_TEST(string_length_range)
{
	refused("[general]\nname = \"\"\n",
	    "[general] name: length 0 is out of range 1..16");
	refused("[general]\nname = abcdefghijklmnopq\n",
	    "[general] name: length 17 is out of range 1..16");
	cf = load_text("[general]\nname = abcdefghijklmnop\n");
	ck_assert_msg(cf != NULL, "%s", err);
}
END_TEST

START_TEST(bad_int)
{
	refused("[general]\ncount = abc\n", "[general] count: 'abc' is not an integer");
	refused("[general]\ncount = 5x\n", "[general] count: '5x' is not an integer");
	refused("[general]\ncount = \n", "[general] count: '' is not an integer");
	refused("[general]\noffset = 99999999999999999999\n",
	    "[general] offset: '99999999999999999999' is not an integer");
}
END_TEST

START_TEST(bad_bool)
{
	refused("[general]\nenabled = maybe\n", "[general] enabled: 'maybe' is not yes/no");
}
END_TEST

START_TEST(bad_enum)
{
	refused("[general]\nmode = medium\n",
	    "[general] mode: 'medium' is not one of: fast slow");
	/* Enum values are exact: a daemon compares them with strcmp. */
	refused("[general]\nmode = FAST\n",
	    "[general] mode: 'FAST' is not one of: fast slow");
}
END_TEST

START_TEST(unknown_section)
{
	refused("[general]\ncount = 2\n[bogus]\nx = 1\n", "[bogus]: unknown section");
}
END_TEST

static int
is_net(const char *sec)
{
	return strncmp(sec, "port ", 5) == 0;
}

/* Sections a daemon checks itself (netd's [port NAME]) pass; others are still refused. */
START_TEST(foreign_sections)
{
	conf_set_foreign(is_net);
	cf = load_text("[general]\ncount = 2\n[port lan1]\nmtu = 9000\nanything = x\n");
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_int(cf, "general", "count"), 2);
	conf_free(cf);
	cf = NULL;
	refused("[general]\ncount = 2\n[bogus]\nx = 1\n", "[bogus]: unknown section");
	/*
	 * A repeated key or section in them is the daemon's to judge (logged;
	 * iniparser's last key wins): it must not stop netd, which brings up
	 * the network. In the daemon's own sections it is still refused.
	 */
	cf = load_text("[general]\ncount = 2\n[port lan1]\nmtu = 1\nmtu = 2\n[port lan1]\nx = 1\n");
	ck_assert_msg(cf != NULL, "%s", err);
	conf_free(cf);
	cf = NULL;
	refused_at("[general]\ncount = 1\ncount = 2\n[port lan1]\nmtu = 1\n", 3,
	    "[general] count: duplicate key (first on line 2)");
	conf_set_foreign(NULL);
	refused("[port lan1]\nmtu = 9000\n", "[port lan1]: unknown section");
}
END_TEST

START_TEST(unknown_key)
{
	refused("[general]\ncount = 2\ncuont = 3\n", "[general] cuont: unknown key");
	refused("[extra]\nverbose = yes\n", "[extra] verbose: unknown key");
}
END_TEST

/* A key before any section header belongs to no section: still a typo to report. */
START_TEST(key_outside_section)
{
	refused_at("\n# note\ncount = 3\n[general]\nname = x\n", 3,
	    "count: key outside any section");
}
END_TEST

/*
 * iniparser files "[a:b]" under the key "a:b", which no section lookup
 * finds: the keys under it were silently ignored.
 */
START_TEST(colon_in_section_name)
{
	refused_at("[general:x]\ncount = 99\n", 1,
	    "[general:x]: ':' is not allowed in a section name");
	refused_at("[general]\ncount = 2\n[ extra:debug ]\n", 3,
	    "[extra:debug]: ':' is not allowed in a section name");
}
END_TEST

START_TEST(colon_in_key)
{
	refused_at("[general]\ncount = 2\nmode:x = slow\n", 3,
	    "[general] mode:x: ':' is not allowed in a key");
}
END_TEST

/* A second value used to win silently; which one was meant is unknowable. */
START_TEST(duplicate_key)
{
	refused_at("[general]\ncount = 2\nname = a\ncount = 3\n", 4,
	    "[general] count: duplicate key (first on line 2)");
	/* Names ignore case, so these are the same key too. */
	refused_at("[extra]\nnote = a\n\n[general]\nCount = 2\ncount = 2\n", 6,
	    "[general] count: duplicate key (first on line 5)");
}
END_TEST

/* A section opened twice used to merge its keys. */
START_TEST(duplicate_section)
{
	refused_at("[general]\ncount = 2\n[extra]\n[General]\nname = x\n", 4,
	    "[general]: duplicate section (first on line 1)");
}
END_TEST

/* Of several duplicates, the first one met reading down is reported. */
START_TEST(first_duplicate_reported)
{
	refused_at("[general]\nname = a\ncount = 1\ncount = 2\nname = b\n", 4,
	    "[general] count: duplicate key (first on line 3)");
}
END_TEST

/* A continued line is one line, as iniparser reads it: no duplicate here. */
START_TEST(continuation_is_one_line)
{
	cf = load_text("[extra]\nnote = a \\\ndebug = yes\ndebug = no\n");
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 0);
	ck_assert_ptr_nonnull(strstr(conf_str(cf, "extra", "note"), "debug = yes"));
	conf_free(cf);
	/* ...and its line number is where it started. */
	refused_at("[extra]\nnote = a \\\n b \\\n c\nnote = d\n", 5,
	    "[extra] note: duplicate key (first on line 2)");
}
END_TEST

/* An empty file is every default; its scan has no names to sort
   (qsort of NULL, found by fuzz-config under UBSan). */
START_TEST(empty_file_is_defaults)
{
	cf = load_text("");
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_bool(cf, "extra", "debug"), 0);
}
END_TEST

/* A directory read as an empty file: every default, silently. */
START_TEST(directory_is_refused)
{
	char want[600];

	snprintf(want, sizeof(want), "%s: not a regular file", dir);
	cf = conf_load(dir, schemas, 0, err, sizeof(err));
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(err, want);
	cf = conf_load(dir, schemas, 1, err, sizeof(err));
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(err, want);
}
END_TEST

/* A FIFO would have blocked the daemon in its read. */
START_TEST(fifo_is_refused)
{
	char path[512], want[600];

	snprintf(path, sizeof(path), "%s/fifo.ini", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	cf = conf_load(path, schemas, 0, err, sizeof(err));
	ck_assert_ptr_null(cf);
	ck_assert_str_eq(err, want);
}
END_TEST

/* A symlink to a regular file is an ordinary way to ship a config. */
START_TEST(symlink_to_file_loads)
{
	char *path = unit_write(dir, "real.ini", "[general]\ncount = 6\n");
	char link[512];

	snprintf(link, sizeof(link), "%s/link.ini", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	free(path);
	cf = conf_load(link, schemas, 0, err, sizeof(err));
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_int(cf, "general", "count"), 6);
}
END_TEST

START_TEST(sections_and_keys_ignore_case)
{
	cf = load_text("[General]\nCOUNT = 4\n");
	ck_assert_msg(cf != NULL, "%s", err);
	ck_assert_int_eq(conf_int(cf, "general", "count"), 4);
}
END_TEST

START_TEST(syntax_error_names_file)
{
	cf = load_text("[general]\nthis line has no equals sign\n");
	ck_assert_ptr_null(cf);
	ck_assert_msg(strncmp(err, dir, strlen(dir)) == 0, "%s", err);
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(error_is_truncated_safely)
{
	char small[16];
	char *path = unit_write(dir, "t.ini", "[general]\ncount = 99\n");

	memset(small, 'x', sizeof(small));
	cf = conf_load(path, schemas, 0, small, sizeof(small));
	free(path);
	ck_assert_ptr_null(cf);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

/* What conf_print writes, as a string the caller frees. */
static char *
printed(const struct conf *c)
{
	char *got = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_ptr_nonnull(f = open_memstream(&got, &len));
	conf_print(c, f);
	ck_assert_int_eq(fclose(f), 0);
	return got;
}

START_TEST(print_golden)
{
	static const char want_fmt[] =
	    "# effective configuration from %s/t.ini\n"
	    "\n[general]\n"
	    "count = 8\n"
	    "enabled = yes\n"
	    "name = nas\n"
	    "mode = slow\n"
	    "offset = -3\n"
	    "\n[extra]\n"
	    "note = two words\n"
	    "debug = no\n";
	char want[1024], *got;

	cf = load_text("[extra]\nnote = two words\n[general]\nmode = slow\ncount = 8\n");
	ck_assert_msg(cf != NULL, "%s", err);
	got = printed(cf);
	snprintf(want, sizeof(want), want_fmt, dir);
	ck_assert_str_eq(got, want);
	free(got);
}
END_TEST

/* What -n prints must load again to the same configuration. */
START_TEST(print_reloads)
{
	struct conf *again;
	char *path, *got;

	cf = load_text("[general]\ncount = 2\nname = x y\n[extra]\ndebug = on\n");
	ck_assert_msg(cf != NULL, "%s", err);
	got = printed(cf);
	path = unit_write(dir, "again.ini", got);
	again = conf_load(path, schemas, 0, err, sizeof(err));
	ck_assert_msg(again != NULL, "%s", err);
	ck_assert_int_eq(conf_int(again, "general", "count"), 2);
	ck_assert_str_eq(conf_str(again, "general", "name"), "x y");
	ck_assert_int_eq(conf_bool(again, "extra", "debug"), 1);
	conf_free(again);
	free(path);
	free(got);
}
END_TEST

/* Asking for a key no schema declares is a bug in the daemon: it exits. */
START_TEST(getter_for_undeclared_key_exits)
{
	cf = load_text("[general]\n");
	ck_assert_msg(cf != NULL, "%s", err);
	conf_int(cf, "general", "nonesuch");
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults_when_missing_allowed);
	tcase_add_test(tc, missing_file_is_an_error_unless_allowed);
	tcase_add_test(tc, values_from_file);
	tcase_add_test(tc, partial_file_keeps_other_defaults);
	tcase_add_test(tc, every_bool_spelling);
	tcase_add_test(tc, range_edges);
	tcase_add_test(tc, string_length_range);
	tcase_add_test(tc, bad_int);
	tcase_add_test(tc, bad_bool);
	tcase_add_test(tc, bad_enum);
	tcase_add_test(tc, unknown_section);
	tcase_add_test(tc, foreign_sections);
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, key_outside_section);
	tcase_add_test(tc, colon_in_section_name);
	tcase_add_test(tc, colon_in_key);
	tcase_add_test(tc, duplicate_key);
	tcase_add_test(tc, duplicate_section);
	tcase_add_test(tc, first_duplicate_reported);
	tcase_add_test(tc, continuation_is_one_line);
	tcase_add_test(tc, directory_is_refused);
	tcase_add_test(tc, fifo_is_refused);
	tcase_add_test(tc, symlink_to_file_loads);
	tcase_add_test(tc, sections_and_keys_ignore_case);
	tcase_add_test(tc, syntax_error_names_file);
	tcase_add_test(tc, error_is_truncated_safely);
	tcase_add_test(tc, empty_file_is_defaults);
	tcase_add_test(tc, print_golden);
	tcase_add_test(tc, print_reloads);
	tcase_add_exit_test(tc, getter_for_undeclared_key_exits, 1);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(config_suite());
}
