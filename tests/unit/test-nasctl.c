/*
 * Unit tests for nasctl: arguments -> params for every argument type and
 * every command of the table, rendering (golden strings), sizes, and the
 * mapping of failures to exit codes.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <termios.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nasctl/nasctl.h"

/* ---- helpers ---- */

static char *membuf;
static size_t memlen;

static FILE *
mem_open(void)
{
	free(membuf);
	membuf = NULL;
	return open_memstream(&membuf, &memlen);
}

static const char *
mem_close(FILE *f)
{
	fclose(f);
	return membuf;
}

static const char *
plain(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
}

static struct json_object *P, *L;
static char why[256];

/* Parses a NULL-terminated argument list against args; 0 or -1. */
static int
parse(const struct arg *args, const char *const *argv)
{
	int argc = 0;

	json_object_put(P);
	json_object_put(L);
	while (argv[argc])
		argc++;
	why[0] = '\0';
	return args_parse(args, argc, (char **)argv, &P, &L, why, sizeof(why));
}

static const struct command *
cmd(const char *noun, const char *verb)
{
	int words;
	const struct command *c = command_find(noun, verb, &words);

	ck_assert_ptr_nonnull(c);
	return c;
}

/* ---- argument types ---- */

static const struct arg all_types[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--count", "count", ARG_INT, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	{ "--disks", "disks", ARG_LIST, 0, NULL },
	{ "--extra", "extra", ARG_JSON, 0, NULL },
	{ "--tag", "tags", ARG_STRING, ARG_REPEAT, NULL },
	{ "--quiet", "quiet", ARG_BOOL, ARG_LOCAL, NULL },
	{ "--need", "need", ARG_STRING, ARG_REQUIRED, NULL },
	{ NULL, NULL, 0, 0, NULL }
};

START_TEST(each_type_becomes_its_json)
{
	const char *argv[] = { "--need", "x", "v1", "--count=-12", "--force",
	    "--disks", "bay1,sdb", "--extra", "{\"a\":[1]}", "--tag", "a",
	    "--tag=b", "--quiet", NULL };

	ck_assert_int_eq(parse(all_types, argv), 0);
	ck_assert_str_eq(plain(P), "{\"need\":\"x\",\"name\":\"v1\",\"count\":-12,"
	    "\"force\":true,\"disks\":[\"bay1\",\"sdb\"],\"extra\":{\"a\":[1]},"
	    "\"tags\":[\"a\",\"b\"]}");
	ck_assert_str_eq(plain(L), "{\"quiet\":true}");
}
END_TEST

START_TEST(absent_options_are_not_sent)
{
	const char *argv[] = { "v1", "--need", "x", NULL };

	ck_assert_int_eq(parse(all_types, argv), 0);
	ck_assert_str_eq(plain(P), "{\"name\":\"v1\",\"need\":\"x\"}");
	ck_assert_str_eq(plain(L), "{}");
}
END_TEST

static const struct {
	const char	*argv[6];
	const char	*why;
} bad_args[] = {
	{ { "v1", NULL }, "--need is required" },
	{ { "--need", "x", NULL }, "missing NAME" },
	{ { "v1", "--need", "x", "--count", "12a", NULL }, "--count: '12a' is not a number" },
	{ { "v1", "--need", "x", "--count", "", NULL }, "--count: '' is not a number" },
	{ { "v1", "--need", "x", "--disks", "a,,b", NULL }, "--disks: empty element in 'a,,b'" },
	{ { "v1", "--need", "x", "--disks", "a,", NULL }, "--disks: empty element in 'a,'" },
	{ { "v1", "--need", "x", "--extra", "{", NULL }, NULL },
	{ { "v1", "--need", "x", "--bogus", NULL }, "unknown option --bogus" },
	{ { "v1", "--need", "x", "--bogus=1", NULL }, "unknown option --bogus" },
	{ { "v1", "--need", "x", "-x", NULL }, "unknown option -x" },
	{ { "v1", "v2", "--need", "x", NULL }, "unexpected argument 'v2'" },
	{ { "v1", "--need", NULL }, "--need needs a value" },
	{ { "v1", "--need", "x", "--force=yes", NULL }, "--force takes no value" },
	{ { "v1", "--need", "x", "--need", "y", NULL }, "--need given twice" },
};

START_TEST(bad_arguments_are_refused)
{
	ck_assert_int_eq(parse(all_types, bad_args[_i].argv), -1);
	ck_assert_ptr_null(P);
	ck_assert_ptr_null(L);
	if (bad_args[_i].why)
		ck_assert_str_eq(why, bad_args[_i].why);
	else
		ck_assert_str_ne(why, "");
}
END_TEST

START_TEST(double_dash_ends_options)
{
	const char *argv[] = { "--need", "x", "--", "--force", NULL };

	ck_assert_int_eq(parse(all_types, argv), 0);
	ck_assert_str_eq(plain(P), "{\"need\":\"x\",\"name\":\"--force\"}");
}
END_TEST

START_TEST(negative_number_is_a_value)
{
	static const struct arg id[] = {
		{ "ID", "id", ARG_INT, 0, NULL }, { NULL, NULL, 0, 0, NULL } };
	const char *argv[] = { "-3", NULL };

	ck_assert_int_eq(parse(id, argv), 0);
	ck_assert_str_eq(plain(P), "{\"id\":-3}");
}
END_TEST

/* ---- the command table ---- */

START_TEST(volume_create_maps_to_its_params)
{
	const char *argv[] = { "v1", "--level", "raid1", "--disks", "bay1,bay2",
	    "--fs", "btrfs", "--force", "--no-wait", NULL };

	ck_assert_int_eq(parse(cmd("volume", "create")->args, argv), 0);
	ck_assert_str_eq(plain(P), "{\"name\":\"v1\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"],\"fs\":\"btrfs\",\"force\":true}");
	ck_assert_str_eq(plain(L), "{\"no_wait\":true}");
	ck_assert_str_eq(cmd("volume", "create")->method, "volume.create");
}
END_TEST

START_TEST(volume_grow_follows_its_job)
{
	const char *argv[] = { "v1", "--no-wait", NULL };

	ck_assert_int_eq(parse(cmd("volume", "grow")->args, argv), 0);
	ck_assert_str_eq(plain(P), "{\"name\":\"v1\"}");
	ck_assert_str_eq(plain(L), "{\"no_wait\":true}");
	ck_assert_str_eq(cmd("volume", "grow")->method, "volume.grow");
	/* It follows its job as create does, once it knows about a passphrase. */
	ck_assert_ptr_eq(cmd("volume", "grow")->run, run_volume_grow);
	ck_assert_ptr_eq(cmd("volume", "add-disk")->run, run_volume_grow);
}
END_TEST

START_TEST(link_set_sends_up_false_for_down)
{
	const char *down[] = { "lan2", "--down", "--mtu", "9000", "--force", NULL };
	const char *up[] = { "lan2", "--up", NULL };
	const char *both[] = { "lan2", "--up", "--down", NULL };

	ck_assert_str_eq(cmd("link", "set")->method, "link.set");
	ck_assert_int_eq(parse(cmd("link", "set")->args, down), 0);
	ck_assert_str_eq(plain(P), "{\"link\":\"lan2\",\"up\":false,\"mtu\":9000,"
	    "\"force\":true}");
	ck_assert_int_eq(parse(cmd("link", "set")->args, up), 0);
	ck_assert_str_eq(plain(P), "{\"link\":\"lan2\",\"up\":true}");
	ck_assert_int_eq(parse(cmd("link", "set")->args, both), -1);
	ck_assert_str_eq(why, "--down repeats or contradicts an option before it");
}
END_TEST

START_TEST(confirm_and_disk_names_pass_through)
{
	const char *wipe[] = { "bay2", "--confirm", "bay2", NULL };
	const char *del[] = { "v1", "--confirm=v1", NULL };
	const char *nowipe[] = { "bay2", NULL };

	ck_assert_int_eq(parse(cmd("disk", "wipe")->args, wipe), 0);
	ck_assert_str_eq(plain(P), "{\"disk\":\"bay2\",\"confirm\":\"bay2\"}");
	ck_assert_int_eq(parse(cmd("volume", "delete")->args, del), 0);
	ck_assert_str_eq(plain(P), "{\"name\":\"v1\",\"confirm\":\"v1\"}");
	ck_assert_int_eq(parse(cmd("disk", "wipe")->args, nowipe), -1);
	ck_assert_str_eq(why, "--confirm is required");
}
END_TEST

START_TEST(job_daemon_is_local)
{
	const char *argv[] = { "12", "--daemon", "raidd", NULL };

	ck_assert_int_eq(parse(cmd("job", "status")->args, argv), 0);
	ck_assert_str_eq(plain(P), "{\"id\":12}");
	ck_assert_str_eq(plain(L), "{\"daemon\":\"raidd\"}");
}
END_TEST

START_TEST(events_collects_daemons_and_topics)
{
	const char *argv[] = { "raidd", "--topic", "job", "netd", "--topic", "disk", NULL };
	const char *none[] = { NULL };

	ck_assert_int_eq(parse(cmd("events", NULL)->args, argv), 0);
	ck_assert_str_eq(plain(L), "{\"daemons\":[\"raidd\",\"netd\"],"
	    "\"topics\":[\"job\",\"disk\"]}");
	ck_assert_int_eq(parse(cmd("events", NULL)->args, none), 0);
	ck_assert_str_eq(plain(L), "{}");
}
END_TEST

/* PARAMS-JSON stays text: run_call checks it and sends it as it is. */
START_TEST(call_takes_json_params)
{
	const char *argv[] = { "raidd", "job.status", "{\"id\": 3}", "--secret", "pw",
	    "--params-file=-", NULL };
	const char *bare[] = { "raidd", "system.version", NULL };

	ck_assert_int_eq(parse(cmd("call", NULL)->args, argv), 0);
	ck_assert_str_eq(plain(L), "{\"daemon\":\"raidd\",\"method\":\"job.status\","
	    "\"params\":\"{\\\"id\\\": 3}\",\"secrets\":[\"pw\"],\"params_file\":\"-\"}");
	ck_assert_str_eq(plain(P), "{}");
	ck_assert_int_eq(parse(cmd("call", NULL)->args, bare), 0);
	ck_assert_ptr_null(json_path(L, "params"));
}
END_TEST

/*
 * Every entry: the minimal command line (each positional and required
 * option given "x1", a number for ints) parses, and leaving out any one
 * required piece is a usage error.
 */
static int
minimal_argv(const struct arg *args, const char **argv, int skip)
{
	int n = 0, k = 0;

	for (const struct arg *a = args; a && a->name; a++, k++) {
		int opt = a->name[0] == '-';

		if (opt ? !(a->flags & ARG_REQUIRED) || (a->flags & ARG_SECRET) :
		    (a->flags & ARG_OPTIONAL))
			continue;
		if (k == skip)
			continue;
		if (opt)
			argv[n++] = a->name;
		argv[n++] = a->type == ARG_INT ? "7" : "x1";
	}
	argv[n] = NULL;
	return n;
}

START_TEST(every_command_parses_and_needs_its_arguments)
{
	const char *argv[32];
	char usage[512];
	FILE *f;
	int k;

	for (const struct command *c = nasctl_commands; c->noun; c++) {
		minimal_argv(c->args, argv, -1);
		ck_assert_msg(parse(c->args, argv) == 0, "%s %s: %s", c->noun,
		    c->verb ? c->verb : "", why);
		ck_assert_ptr_nonnull(c->help);
		ck_assert_msg(c->run || (c->daemon && c->method), "%s has nothing to run",
		    c->noun);
		k = 0;
		for (const struct arg *a = c->args; a->name; a++, k++) {
			int opt = a->name[0] == '-';

			if (opt ? !(a->flags & ARG_REQUIRED) || (a->flags & ARG_SECRET) :
			    (a->flags & ARG_OPTIONAL))
				continue;
			minimal_argv(c->args, argv, k);
			ck_assert_msg(parse(c->args, argv) == -1, "%s %s without %s",
			    c->noun, c->verb ? c->verb : "", a->name);
		}
		f = mem_open();
		args_usage(f, c);
		snprintf(usage, sizeof(usage), "%s", mem_close(f));
		ck_assert_msg(strncmp(usage, "nasctl ", 7) == 0, "%s", usage);
	}
}
END_TEST

START_TEST(lookup_and_aliases)
{
	int words = 0;

	ck_assert_ptr_eq(command_find("system", "version", &words)->run, run_version);
	ck_assert_int_eq(words, 2);
	ck_assert_ptr_eq(command_find("version", NULL, &words)->run, run_version);
	ck_assert_int_eq(words, 1);
	ck_assert_ptr_nonnull(command_find("volume", "unmount", &words));
	ck_assert_ptr_null(command_find("volume", "frob", &words));
	ck_assert_ptr_null(command_find("volume", NULL, &words));
	ck_assert_int_eq(noun_known("volume"), 1);
	ck_assert_int_eq(noun_known("frob"), 0);
}
END_TEST

START_TEST(usage_line_mirrors_the_spec)
{
	FILE *f = mem_open();

	args_usage(f, cmd("volume", "create"));
	args_usage(f, cmd("events", NULL));
	ck_assert_str_eq(mem_close(f),
	    "nasctl volume create NAME --level LEVEL --disks D1,D2[,...] "
	    "[--fs ext4|btrfs|none] [--force] [--no-wait] [--encrypt] [--passphrase-file FILE]\n"
	    "nasctl events [DAEMON ...] [--topic PREFIX] ...\n");
}
END_TEST

/* ---- sizes and formatters ---- */

static const struct {
	long long	 n;
	const char	*s;
} sizes[] = {
	{ 0, "0 B" }, { 999, "999 B" }, { 1000, "1.0 kB" }, { 1500, "1.5 kB" },
	{ 999949, "999.9 kB" }, { 999950, "1.0 MB" }, { 1800000000000LL, "1.8 TB" },
	{ 2000398934016LL, "2.0 TB" }, { 4000787030016LL, "4.0 TB" },
	{ 500107862016LL, "500.1 GB" }, { LLONG_MAX, "9.2 EB" },
};

START_TEST(sizes_in_powers_of_1000)
{
	char buf[32];

	humanise_bytes(sizes[_i].n, buf, sizeof(buf));
	ck_assert_str_eq(buf, sizes[_i].s);
}
END_TEST

START_TEST(formatters)
{
	struct json_object *o = json_tokener_parse("{\"p\":42,\"q\":12.25,\"b\":true,"
	    "\"l\":[\"a\",\"b\"],\"e\":[],\"s\":\"x\",\"z\":\"\",\"n\":null,"
	    "\"params\":[{\"name\":\"id\",\"type\":\"integer\",\"required\":true},"
	    "{\"name\":\"force\",\"type\":\"boolean\",\"required\":false}]}");
	char buf[128];

	fmt_percent(json_path(o, "p"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "42%");
	fmt_percent(json_path(o, "q"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "12.2%");
	fmt_yesno(json_path(o, "b"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "yes");
	fmt_list(json_path(o, "l"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "a,b");
	fmt_list(json_path(o, "e"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "-");
	fmt_plain(json_path(o, "missing"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "-");
	fmt_plain(json_path(o, "z"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "-");
	fmt_size(json_path(o, "s"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "x");
	fmt_params(json_path(o, "params"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "id:integer [force:boolean]");
	fmt_params(json_path(o, "e"), buf, sizeof(buf));
	ck_assert_str_eq(buf, "-");
	json_object_put(o);
}
END_TEST

/* ---- rendering ---- */

START_TEST(table_golden)
{
	struct json_object *rows = json_tokener_parse("[{\"name\":\"v1\",\"level\":"
	    "\"raid1\",\"size_bytes\":1800000000000,\"state\":\"clean\",\"fs\":\"ext4\","
	    "\"mountpoint\":\"/srv/v1\",\"problem\":null},"
	    "{\"name\":\"scratch\",\"level\":\"single\",\"size_bytes\":999,"
	    "\"state\":\"failed\",\"problem\":\"missing bay2\"},"
	    "{\"name\":\"sec\",\"level\":\"raid1\",\"size_bytes\":999,"
	    "\"state\":\"clean\",\"encrypted\":true,\"locked\":true}]");
	FILE *f = mem_open();

	table_print(f, cmd("volume", "list")->cols, rows);
	ck_assert_str_eq(mem_close(f),
	    "NAME     LEVEL   STATE     SIZE  FS    CRYPT   MOUNTPOINT  PROBLEM\n"
	    "v1       raid1   clean   1.8 TB  ext4  -       /srv/v1     -\n"
	    "scratch  single  failed   999 B  -     -       -           missing bay2\n"
	    "sec      raid1   clean    999 B  -     locked  -           -\n");
	json_object_put(rows);
}
END_TEST

START_TEST(empty_table_has_its_header)
{
	struct json_object *rows = json_object_new_array();
	FILE *f = mem_open();

	table_print(f, cmd("disk", "list")->cols, rows);
	ck_assert_str_eq(mem_close(f),
	    "DISK  DEVICE  SIZE  TYPE  MODEL  SERIAL  STATE  SIGNATURES\n");
	json_object_put(rows);
}
END_TEST

/* As raidd answers disk.list; a wrapping object works the same. */
START_TEST(disk_list_golden)
{
	static const char *const answers[] = {
		"[{\"name\":\"bay1\",\"device\":\"sda\",\"bay\":1,"
		"\"size_bytes\":4000787030016,\"rotational\":true,\"model\":\"WDC WD40\","
		"\"serial\":\"WX1\",\"state\":\"in-use\",\"signatures\":[{\"type\":\"gpt\","
		"\"on\":\"sda\",\"offset\":512},{\"type\":\"raidd\",\"on\":\"sda\",\"offset\":0}]}]",
		"{\"disks\":[{\"name\":\"bay1\",\"device\":\"sda\",\"size_bytes\":4000787030016,"
		"\"rotational\":true,\"model\":\"WDC WD40\",\"serial\":\"WX1\","
		"\"state\":\"in-use\",\"signatures\":[\"gpt\",\"raidd\"]}]}",
	};
	struct ctx x = { "/nonexistent", 0, -1, NULL, stderr, 0, NULL };
	struct json_object *r = json_tokener_parse(answers[_i]);

	x.out = mem_open();
	print_result(&x, cmd("disk", "list")->cols, "disks", r);
	ck_assert_str_eq(mem_close(x.out),
	    "DISK  DEVICE    SIZE  TYPE  MODEL     SERIAL  STATE   SIGNATURES\n"
	    "bay1  sda     4.0 TB  hdd   WDC WD40  WX1     in-use  gpt,raidd\n");
	x.json = 1;
	x.out = mem_open();
	print_result(&x, cmd("disk", "list")->cols, "disks", r);
	ck_assert_ptr_nonnull(strstr(mem_close(x.out), "\"size_bytes\": 4000787030016"));
	json_object_put(r);
}
END_TEST

START_TEST(object_golden)
{
	struct json_object *o = json_tokener_parse("{\"name\":\"v1\",\"state\":\"resyncing\","
	    "\"size_bytes\":1800000000000,\"mountpoint\":null,\"encrypted\":false,"
	    "\"tiers\":[{\"md\":\"md/v1-0\",\"size_bytes\":1000,\"members\":[\"bay1\",\"bay2\"]}],"
	    "\"label\":{\"generation\":4}}");
	FILE *f = mem_open();

	object_print(f, o, 0);
	ck_assert_str_eq(mem_close(f),
	    "name:       v1\n"
	    "state:      resyncing\n"
	    "size:       1.8 TB\n"
	    "mountpoint: -\n"
	    "encrypted:  no\n"
	    "tiers:\n"
	    "  MD         SIZE  MEMBERS\n"
	    "  md/v1-0  1.0 kB  bay1,bay2\n"
	    "label:\n"
	    "  generation: 4\n");
	json_object_put(o);
}
END_TEST

START_TEST(event_line_golden)
{
	struct json_object *p = json_tokener_parse("{\"id\":3,\"state\":\"running\","
	    "\"step\":\"making partitions\",\"percent\":12.5,\"daemon\":\"raidd\"}");
	FILE *f = mem_open();

	setenv("TZ", "UTC", 1);
	tzset();
	event_line(f, 86400, "fallback", "job.progress", p, 0);
	event_line(f, 86400, "fallback", "job.progress", p, 1);
	ck_assert_str_eq(mem_close(f),
	    "1970-01-02T00:00:00 raidd job.progress id=3 state=running "
	    "step=\"making partitions\" percent=12.5\n"
	    "{\"method\":\"job.progress\",\"params\":{\"id\":3,\"state\":\"running\","
	    "\"step\":\"making partitions\",\"percent\":12.5,\"daemon\":\"raidd\"}}\n");
	json_object_put(p);
}
END_TEST

START_TEST(power_history_sparkline)
{
	struct json_object *o = json_tokener_parse("[{\"watts\":10},{\"watts\":14},"
	    "{\"watts\":null},{\"watts\":18},{\"watts\":\"x\"}]");
	FILE *f = mem_open();

	ck_assert_int_eq(spark_step(60), 1);
	ck_assert_int_eq(spark_step(61), 2);
	ck_assert_int_eq(spark_step(3600), 60);
	ck_assert_int_eq(spark_step(2147483647), 3600);	/* no overflow */
	spark_print(f, o, 0);
	spark_print(f, o, 1);
	ck_assert_str_eq(mem_close(f),
	    "_: # \nmin 10.0 W  avg 14.0 W  max 18.0 W  (3 samples)\n"
	    "\u2581\u2584 \u2588 \nmin 10.0 W  avg 14.0 W  max 18.0 W  (3 samples)\n");
	json_object_put(o);
}
END_TEST

START_TEST(job_ids_in_start_answers)
{
	static const char *const answers[] = { "7", "{\"job\":7}", "{\"job\":{\"id\":7}}",
	    "{\"job_id\":7}", "{\"id\":7,\"state\":\"running\"}" };
	struct json_object *o;

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		o = json_tokener_parse(answers[i]);
		ck_assert_int_eq(job_id_of(o), 7);
		json_object_put(o);
	}
	o = json_tokener_parse("{\"name\":\"v1\"}");
	ck_assert_int_eq(job_id_of(o), -1);
	json_object_put(o);
}
END_TEST

/* ---- what a daemon says cannot drive the terminal ---- */

static const struct {
	int		 utf8;
	const char	*in, *out;
	size_t		 width;
} escapes[] = {
	{ 1, "WDC WD40", "WDC WD40", 8 },
	{ 1, "\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07", 23 },
	{ 1, "a\nb\rc\td\\e", "a\\nb\\rc\\td\\\\e", 13 },
	{ 1, "del\x7f", "del\\x7f", 7 },
	/* C1 CSI as UTF-8, and as a lone byte (not UTF-8). */
	{ 1, "x\xc2\x9b" "31m", "x\\u009b31m", 10 },
	{ 1, "x\x9b" "31m", "x\\x9b31m", 8 },
	{ 1, "\xff\xfe", "\\xff\\xfe", 8 },
	/* Overlong "/", a surrogate, a sequence cut short. */
	{ 1, "\xc0\xaf", "\\xc0\\xaf", 8 },
	{ 1, "\xed\xa0\x80", "\\xed\\xa0\\x80", 12 },
	{ 1, "\xe2\x82", "\\xe2\\x82", 8 },
	/* Right-to-left override; ordinary UTF-8 is kept on a UTF-8 terminal. */
	{ 1, "abc\xe2\x80\xae" "fdp.exe", "abc\\u202efdp.exe", 16 },
	{ 1, "caf\xc3\xa9", "caf\xc3\xa9", 4 },
	{ 0, "caf\xc3\xa9", "caf\\u00e9", 9 },
	{ 0, "\xc3\x9b", "\\u00db", 6 },
};

START_TEST(escapes_controls)
{
	char buf[128];
	size_t w;

	text_utf8 = escapes[_i].utf8;
	w = text_escape(escapes[_i].in, buf, sizeof(buf));
	ck_assert_str_eq(buf, escapes[_i].out);
	ck_assert_uint_eq(w, escapes[_i].width);
	text_utf8 = 0;
}
END_TEST

START_TEST(escape_never_cuts_an_escape)
{
	char buf[6];

	text_escape("ab\x1b" "cd", buf, sizeof(buf));
	ck_assert_str_eq(buf, "ab");
	text_utf8 = 1;
	text_escape("abcd\xc3\xa9", buf, sizeof(buf));
	ck_assert_str_eq(buf, "abcd");
	text_utf8 = 0;
}
END_TEST

/* No byte that a terminal acts on: C0 but \n (and \t, \r for JSON), DEL, C1. */
static int
has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			return 1;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return 1;
		if (*p >= 0x80 && !text_utf8)
			return 1;
	}
	return 0;
}

#define HOSTILE "\x1b]0;pwned\x07\x1b[2J\x7f\xc2\x9b" "1m\xff"

START_TEST(tables_escape_disk_strings)
{
	struct json_object *r = json_tokener_parse("[{\"name\":\"bay1\",\"device\":\"sda\","
	    "\"size_bytes\":1000,\"rotational\":false,\"model\":\"\\u001b[31mEVIL\\u0007\","
	    "\"serial\":\"S\\u009b1\",\"state\":\"free\",\"signatures\":[\"gpt\\u001b\"]}]");
	struct ctx x = { "/nonexistent", 0, -1, NULL, stderr, 0, NULL };
	const char *out;

	text_utf8 = 1;
	x.out = mem_open();
	print_result(&x, cmd("disk", "list")->cols, "disks", r);
	out = mem_close(x.out);
	ck_assert_str_eq(out,
	    "DISK  DEVICE    SIZE  TYPE  MODEL             SERIAL    STATE  SIGNATURES\n"
	    "bay1  sda     1.0 kB  ssd   \\x1b[31mEVIL\\x07  S\\u009b1  free   gpt\\x1b\n");
	text_utf8 = 0;
	json_object_put(r);
}
END_TEST

START_TEST(listings_escape_keys_and_values)
{
	struct json_object *o = json_object_new_object();
	FILE *f;
	const char *out;

	json_object_object_add(o, "name\x1b[1m", json_object_new_string(HOSTILE));
	json_object_object_add(o, "tiers", json_tokener_parse(
	    "[{\"md\\u0007\":\"md\\u001bx\"}]"));
	f = mem_open();
	object_print(f, o, 0);
	out = mem_close(f);
	ck_assert_msg(!has_control(out), "%s", out);
	ck_assert_str_eq(out, "name\\x1b[1m: \\x1b]0;pwned\\x07\\x1b[2J\\x7f\\u009b1m\\xff\n"
	    "tiers:\n"
	    "  MD\\x07\n"
	    "  md\\x1bx\n");
	f = mem_open();
	print_result(&(struct ctx){ "/", 0, -1, f, stderr, 0, NULL }, NULL, NULL,
	    json_object_object_get(o, "name\x1b[1m"));
	ck_assert_str_eq(mem_close(f), "\\x1b]0;pwned\\x07\\x1b[2J\\x7f\\u009b1m\\xff\n");
	json_object_put(o);
}
END_TEST

START_TEST(json_output_escapes_everything)
{
	struct json_object *o = json_object_new_object();
	FILE *f;
	const char *out;

	json_object_object_add(o, "model", json_object_new_string(HOSTILE "\xe2\x80\xae"
	    "caf\xc3\xa9"));
	for (int utf8 = 0; utf8 <= 1; utf8++) {
		text_utf8 = utf8;
		f = mem_open();
		json_print(f, o);
		out = mem_close(f);
		ck_assert_msg(!has_control(out), "%s", out);
		ck_assert_str_eq(out, utf8 ?
		    "{\n  \"model\": \"\\u001b]0;pwned\\u0007\\u001b[2J\\u007f\\u009b1m\\ufffd"
		    "\\u202ecaf\xc3\xa9\"\n}\n" :
		    "{\n  \"model\": \"\\u001b]0;pwned\\u0007\\u001b[2J\\u007f\\u009b1m\\ufffd"
		    "\\u202ecaf\\u00e9\"\n}\n");
		/* Still JSON, and the same string but for the bytes that were not UTF-8. */
		json_object *back = json_tokener_parse(out);
		ck_assert_ptr_nonnull(back);
		json_object_put(back);
	}
	text_utf8 = 0;
	json_object_put(o);
}
END_TEST

START_TEST(events_escape_everything)
{
	struct json_object *p = json_object_new_object();
	FILE *f;
	const char *out;

	json_object_object_add(p, "daemon", json_object_new_string("raidd\x1b[8m"));
	json_object_object_add(p, "model", json_object_new_string(HOSTILE));
	json_object_object_add(p, "k\x07", json_object_new_string("plain"));
	json_object_object_add(p, "slash", json_object_new_string("a\\b"));
	setenv("TZ", "UTC", 1);
	tzset();
	f = mem_open();
	event_line(f, 0, "raidd", "disk.added\x1b[0m", p, 0);
	event_line(f, 0, "raidd", "disk.added\x1b[0m", p, 1);
	out = mem_close(f);
	ck_assert_msg(!has_control(out), "%s", out);
	ck_assert_str_eq(out, "1970-01-01T00:00:00 raidd\\x1b[8m disk.added\\x1b[0m "
	    "model=\"\\u001b]0;pwned\\u0007\\u001b[2J\\u007f\\u009b1m\\ufffd\" "
	    "k\\x07=plain slash=\"a\\\\b\"\n"
	    "{\"method\":\"disk.added\\u001b[0m\",\"params\":{\"daemon\":\"raidd\\u001b[8m\","
	    "\"model\":\"\\u001b]0;pwned\\u0007\\u001b[2J\\u007f\\u009b1m\\ufffd\","
	    "\"k\\u0007\":\"plain\",\"slash\":\"a\\\\b\"}}\n");
	json_object_put(p);
}
END_TEST

/* ---- exit codes ---- */

START_TEST(exit_codes)
{
	ck_assert_int_eq(exit_code_for(0), EXIT_OK);
	ck_assert_int_eq(exit_code_for(RPC_CLIENT_UNREACHABLE), EXIT_UNREACHABLE);
	ck_assert_int_eq(exit_code_for(RPC_CLIENT_IO), EXIT_UNREACHABLE);
	ck_assert_int_eq(exit_code_for(-32601), EXIT_ERROR);
	ck_assert_int_eq(exit_code_for(-32003), EXIT_ERROR);
}
END_TEST

static char sockdir[] = "/tmp/test-nasctl.XXXXXX";

/* Reads up to the request's newline: the client sends it separately. */
static ssize_t
read_line(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len && (n = read(fd, buf + got, len - got)) > 0) {
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			return (ssize_t)got;
	}
	return -1;
}

/* What the fake daemon was sent, saved for the test to look at. */
static void
save_request(const char *buf, ssize_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/request", sockdir);
	if ((f = fopen(path, "w")) != NULL) {
		fwrite(buf, 1, (size_t)n, f);
		fclose(f);
	}
}

/* A one-shot daemon: reads one request, writes reply and, when the reply
 * is no complete line, keeps the connection open without finishing it. */
static pid_t
fake_daemon(const char *reply)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[4096];
	ssize_t n = 0;
	int s, c;
	pid_t pid;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/raidd.sock", sockdir);
	unlink(sun.sun_path);
	ck_assert_int_ne(s = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(s, 1), 0);
	if ((pid = fork()) == 0) {
		if ((c = accept(s, NULL, NULL)) != -1 && (n = read_line(c, buf, sizeof(buf))) > 0 &&
		    (save_request(buf, n), reply) && write(c, reply, strlen(reply)) > 0 &&
		    reply[strlen(reply) - 1] != '\n')
			sleep(5);
		_exit(0);
	}
	close(s);
	return pid;
}

/* call_once to raidd; returns the exit code, what went to stderr in err. */
static int
call_raidd(int timeout_ms, char *err, size_t errlen)
{
	struct ctx x = { sockdir, 0, timeout_ms, NULL, NULL, 0, NULL };
	struct json_object *r;
	char *ebuf = NULL;
	size_t elen = 0;
	int rc;

	x.out = mem_open();
	x.err = open_memstream(&ebuf, &elen);
	rc = call_once(&x, "raidd", "disk.list", NULL, &r);
	fclose(x.err);
	mem_close(x.out);
	snprintf(err, errlen, "%s", ebuf);
	free(ebuf);
	json_object_put(r);
	return rc;
}

static int
call_fake(const char *reply, char *err, size_t errlen, int timeout_ms)
{
	pid_t pid = fake_daemon(reply);
	int rc = call_raidd(timeout_ms, err, errlen);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return rc;
}

START_TEST(answers_map_to_exit_codes)
{
	char err[512], path[128];

	ck_assert_ptr_nonnull(mkdtemp(sockdir));
	ck_assert_int_eq(call_fake("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}\n",
	    err, sizeof(err), -1), EXIT_OK);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(call_fake("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
	    "-32601,\"message\":\"no method disk.list\"}}\n", err, sizeof(err), -1),
	    EXIT_ERROR);
	ck_assert_str_eq(err, "nasctl: raidd: no method disk.list (code -32601)\n");
	/* The daemon's message is escaped. */
	ck_assert_int_eq(call_fake("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
	    "-32000,\"message\":\"\\u001b[2Jdisk \\u009bsaid\\u0007\"}}\n", err, sizeof(err), -1),
	    EXIT_ERROR);
	ck_assert_str_eq(err, "nasctl: raidd: \\x1b[2Jdisk \\u009bsaid\\x07 (code -32000)\n");
	/* Hangs up without answering. */
	ck_assert_int_eq(call_fake(NULL, err, sizeof(err), -1), EXIT_UNREACHABLE);
	/* Starts an answer and never ends it. */
	ck_assert_int_eq(call_fake("{\"jsonrpc\"", err, sizeof(err), 200), EXIT_UNREACHABLE);
	ck_assert_ptr_nonnull(strstr(err, "nasctl: raidd: unreachable: "));
	ck_assert_ptr_nonnull(strstr(err, "timed out"));
	/* No socket at all. */
	snprintf(path, sizeof(path), "%s/raidd.sock", sockdir);
	unlink(path);
	ck_assert_int_eq(call_raidd(-1, err, sizeof(err)), EXIT_UNREACHABLE);
	ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
	rmdir(sockdir);
}
END_TEST

/* ---- params text ---- */

static const struct {
	const char	*in, *out, *why;
} params_texts[] = {
	{ "{}", "{}", NULL },
	{ " {\n  \"device\" : \"/dev/md0\",\n\t\"n\": [1, -2.5e+3, 0, true, false, null],"
	  " \"o\": {\"a b\": \"c \\\" \\\\ \\u00e9\"} }\n",
	  "{\"device\":\"/dev/md0\",\"n\":[1,-2.5e+3,0,true,false,null],"
	  "\"o\":{\"a b\":\"c \\\" \\\\ \\u00e9\"}}", NULL },
	{ "", NULL, "line 1, column 1: expected a JSON object" },
	{ "[1]", NULL, "line 1, column 1: expected a JSON object" },
	{ "\"x\"", NULL, "line 1, column 1: expected a JSON object" },
	{ "{\"a\":1", NULL, "line 1, column 7: expected ',' or '}'" },
	{ "{\"a\":1}\n{}", NULL, "line 2, column 1: expected nothing after the object" },
	{ "{\n\"a\":01}", NULL, "line 2, column 5: expected a value" },
	{ "{\"a\":'x'}", NULL, "line 1, column 6: expected a value" },
	{ "{\"a\":1,}", NULL, "line 1, column 8: expected a string" },
	{ "{\"a\":\"x\ty\"}", NULL, "line 1, column 8: expected no control character in a string" },
	{ "{\"a\":\"\\x\"}", NULL, "line 1, column 7: expected an escape "
	  "(\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)" },
	{ "{\"a\":\"\\u12g4\"}", NULL, "line 1, column 7: expected four hex digits after \\u" },
	{ "{\"a\":\"abc", NULL, "line 1, column 10: expected the end of the string" },
	{ "{\"a\":tru}", NULL, "line 1, column 6: expected a value" },
	{ "{\"a\":1.}", NULL, "line 1, column 8: expected a digit after '.'" },
	{ "{\"a\" 1}", NULL, "line 1, column 6: expected ':'" },
	{ "{\"a\":[1 2]}", NULL, "line 1, column 9: expected ',' or ']'" },
	{ "{\"a\":\"x\"}\0{}", NULL, NULL },
	/* --secret pw: the same member from the text is refused, escaped or not. */
	{ "{\"p\\u0077\":\"x\"}", NULL, "line 1, column 11: pw is given by --secret too" },
	{ "{\"o\":{\"pw\":\"x\"}}", "{\"o\":{\"pw\":\"x\"}}", NULL },
};

START_TEST(params_text_is_checked_and_compacted)
{
	static const char *const reserved[] = { "pw", NULL };
	struct locked b = { 0 };
	const char *in = params_texts[_i].in;
	size_t n = strlen(in);
	int rc;

	if (params_texts[_i].out == NULL && params_texts[_i].why == NULL)
		n += 3;		/* a NUL and what follows it */
	ck_assert_int_eq(locked_add(&b, in, n), 0);
	why[0] = '\0';
	rc = params_check(&b, reserved, why, sizeof(why));
	if (params_texts[_i].out) {
		ck_assert_msg(rc == 0, "%s", why);
		ck_assert_str_eq(b.p, params_texts[_i].out);
		ck_assert_uint_eq(b.len, strlen(params_texts[_i].out));
	} else {
		ck_assert_int_eq(rc, -1);
		if (params_texts[_i].why)
			ck_assert_str_eq(why, params_texts[_i].why);
	}
	locked_free(&b);
	ck_assert_ptr_null(b.p);
}
END_TEST

/* As deep as the daemons' json-c takes in a request ({"params": ...}), no deeper. */
START_TEST(deep_nesting_is_refused)
{
	struct json_object *req;
	struct locked b = { 0 };
	char line[128];

	locked_add(&b, "{\"a\":", 5);
	for (int i = 0; i < 30; i++)
		locked_add(&b, "[", 1);
	for (int i = 0; i < 30; i++)
		locked_add(&b, "]", 1);
	locked_add(&b, "}", 1);
	ck_assert_int_eq(params_check(&b, NULL, why, sizeof(why)), 0);
	snprintf(line, sizeof(line), "{\"params\":%s}", b.p);
	ck_assert_ptr_nonnull(req = json_tokener_parse(line));
	json_object_put(req);
	locked_free(&b);
	locked_add(&b, "{\"a\":", 5);
	for (int i = 0; i < 100; i++)
		locked_add(&b, "[", 1);
	ck_assert_int_eq(params_check(&b, NULL, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "line 1, column 36: expected at most 31 levels of nesting");
	locked_free(&b);
}
END_TEST

static void
add_secret(struct secrets *set, const char *key, const char *val)
{
	struct secret *s = &set->s[set->n++];

	snprintf(s->key, sizeof(s->key), "%s", key);
	ck_assert_int_eq(locked_add(&s->val, val, strlen(val)), 0);
}

START_TEST(secrets_are_spliced_into_the_text)
{
	struct secrets set = { .method = "m" };
	struct locked out = { 0 };

	add_secret(&set, "passphrase", "a\"b\\c\x01\xc3\xa9");
	ck_assert_int_eq(secrets_splice(&set, NULL, 0, &out), 0);
	ck_assert_str_eq(out.p, "{\"passphrase\":\"a\\\"b\\\\c\\u0001\xc3\xa9\"}");
	locked_free(&out);
	add_secret(&set, "new_passphrase", "x");
	ck_assert_int_eq(secrets_splice(&set, "{\"device\":\"sda\"}", 16, &out), 0);
	ck_assert_str_eq(out.p, "{\"device\":\"sda\",\"passphrase\":\"a\\\"b\\\\c\\u0001\xc3\xa9\","
	    "\"new_passphrase\":\"x\"}");
	locked_free(&out);
	ck_assert_int_eq(secrets_splice(&set, "[1]", 3, &out), -1);
	locked_free(&out);
	secrets_free(&set);
	ck_assert_int_eq(set.n, 0);
}
END_TEST

/* ---- secrets from standard input and files ---- */

static int
pipe_with(const char *text)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	close(p[1]);
	return p[0];
}

START_TEST(secrets_are_lines_of_stdin)
{
	struct locked a = { 0 }, b = { 0 }, c = { 0 };
	int fd = pipe_with("first secret\nsecond\n\n");

	ck_assert_int_eq(secret_read(fd, "passphrase", 1, &a, why, sizeof(why)), 0);
	ck_assert_str_eq(a.p, "first secret");
	/* One line each, nothing past it consumed. */
	ck_assert_int_eq(secret_read(fd, "new_passphrase", 1, &b, why, sizeof(why)), 0);
	ck_assert_str_eq(b.p, "second");
	ck_assert_int_eq(secret_read(fd, "passphrase", 0, &c, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "passphrase: empty");
	locked_free(&c);
	ck_assert_int_eq(secret_read(fd, "passphrase", 0, &c, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "passphrase: nothing to read");
	close(fd);
	locked_free(&a);
	locked_free(&b);
	locked_free(&c);
}
END_TEST

/* volume create asks a passphrase only with --encrypt; unlock always. */
START_TEST(volume_passphrase_only_with_encrypt)
{
	static const char *const plain[] = { "v", "--level", "raid1", "--disks", "bay1,bay2", NULL };
	static const char *const enc[] = { "v", "--level", "raid1", "--disks", "bay1,bay2",
	    "--encrypt", NULL };
	static const char *const unl[] = { "v", NULL };
	struct secrets set = { .method = "volume.create" };
	int fd = pipe_with("s3cret words\nopen sesame\n");

	ck_assert_int_eq(parse(cmd("volume", "create")->args, plain), 0);
	ck_assert_int_eq(secrets_from_args(&set, fd, cmd("volume", "create")->args, P, L,
	    why, sizeof(why)), 0);
	ck_assert_int_eq(set.n, 0);
	ck_assert_int_eq(parse(cmd("volume", "create")->args, enc), 0);
	ck_assert_int_eq(secrets_from_args(&set, fd, cmd("volume", "create")->args, P, L,
	    why, sizeof(why)), 0);
	ck_assert_int_eq(set.n, 1);
	ck_assert_str_eq(set.s[0].val.p, "s3cret words");
	secrets_free(&set);
	set.method = "volume.unlock";
	ck_assert_int_eq(parse(cmd("volume", "unlock")->args, unl), 0);
	ck_assert_int_eq(secrets_from_args(&set, fd, cmd("volume", "unlock")->args, P, L,
	    why, sizeof(why)), 0);
	ck_assert_int_eq(set.n, 1);
	ck_assert_str_eq(set.s[0].val.p, "open sesame");
	secrets_free(&set);
	close(fd);
}
END_TEST

START_TEST(bad_secrets_are_refused_unquoted)
{
	char big[SECRET_MAX + 8];
	struct locked a = { 0 };
	int fd, fd_pair[2];

	memset(big, 'k', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	fd = pipe_with(big);
	ck_assert_int_eq(secret_read(fd, "passphrase", 0, &a, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "passphrase: longer than 1024 bytes");
	close(fd);
	locked_free(&a);
	ck_assert_int_eq(pipe(fd_pair), 0);
	ck_assert_int_eq(write(fd_pair[1], "ab\0cd\n", 6), 6);
	close(fd_pair[1]);
	ck_assert_int_eq(secret_read(fd_pair[0], "passphrase", 0, &a, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "passphrase: holds a NUL byte");
	close(fd_pair[0]);
	locked_free(&a);
	ck_assert_int_eq(secret_read_file("/nonexistent/pw", -1, "passphrase", &a, why,
	    sizeof(why)), -1);
	ck_assert_str_eq(why, "passphrase: /nonexistent/pw: No such file or directory");
	locked_free(&a);
}
END_TEST

/* ---- secrets from a terminal ---- */

/* Reads the pty master until want has been seen (no deadline: the
 * case's timeout ends a hang); all that came in got. */
static void
pty_expect(int master, const char *want, char *got, size_t len)
{
	struct pollfd p = { .fd = master, .events = POLLIN };
	size_t n = strlen(got);
	ssize_t r;

	while (strstr(got, want) == NULL) {
		ck_assert_msg(poll(&p, 1, -1) == 1, "no '%s' in '%s'", want, got);
		ck_assert_int_gt(r = read(master, got + n, len - n - 1), 0);
		n += (size_t)r;
		got[n] = '\0';
	}
}

static int
echo_on(int fd)
{
	struct termios t;

	ck_assert_int_eq(tcgetattr(fd, &t), 0);
	return (t.c_lflag & ECHO) != 0;
}

/* A child asks on the pty slave; it reports "rc:secret-or-why" on a pipe. */
static pid_t
tty_asker(int slave, int twice, int *report)
{
	struct locked b = { 0 };
	char msg[512];
	int p[2], rc;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		/* As in nasctl: Check's own handlers would signal the whole test. */
		for (int s = 1; s < NSIG; s++)
			signal(s, SIG_DFL);
		rc = secret_read(slave, "new_passphrase", twice, &b, why, sizeof(why));
		snprintf(msg, sizeof(msg), "%d:%s", rc, rc == 0 ? b.p : why);
		if (write(p[1], msg, strlen(msg)) == -1)
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	*report = p[0];
	return pid;
}

static void
child_report(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

START_TEST(terminal_is_asked_twice_without_echo)
{
	char out[1024] = "", rep[256];
	int master, slave, report, st;
	pid_t pid;

	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	ck_assert_int_eq(echo_on(slave), 1);
	pid = tty_asker(slave, 1, &report);
	pty_expect(master, "New passphrase: ", out, sizeof(out));
	ck_assert_int_eq(echo_on(slave), 0);
	ck_assert_int_eq(write(master, "tr0ub4dor\n", 10), 10);
	pty_expect(master, "Repeat new passphrase: ", out, sizeof(out));
	ck_assert_int_eq(write(master, "tr0ub4dor\n", 10), 10);
	child_report(report, rep, sizeof(rep));
	ck_assert_str_eq(rep, "0:tr0ub4dor");
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(echo_on(slave), 1);
	pty_expect(master, "Repeat new passphrase: \r\n", out, sizeof(out));
	ck_assert_ptr_null(strstr(out, "tr0ub4dor"));

	/* Two entries that differ. */
	pid = tty_asker(slave, 1, &report);
	pty_expect(master, "Repeat new passphrase: \r\nNew passphrase: ", out, sizeof(out));
	ck_assert_int_eq(write(master, "one\n", 4), 4);
	pty_expect(master, "Repeat new passphrase: \r\nNew passphrase: \r\n"
	    "Repeat new passphrase: ", out, sizeof(out));
	ck_assert_int_eq(write(master, "two\n", 4), 4);
	child_report(report, rep, sizeof(rep));
	ck_assert_str_eq(rep, "-1:new_passphrase: the two entries differ");
	waitpid(pid, &st, 0);
	ck_assert_int_eq(echo_on(slave), 1);
	close(master);
	close(slave);
}
END_TEST

/* A child asking once on a new pty, its prompt shown, echo off, typed typed. */
static pid_t
asking(int *master, int *slave, int *report, char *out, size_t len, const char *typed)
{
	pid_t pid;

	ck_assert_int_eq(openpty(master, slave, NULL, NULL, NULL), 0);
	pid = tty_asker(*slave, 0, report);
	pty_expect(*master, "New passphrase: ", out, len);
	ck_assert_int_eq(echo_on(*slave), 0);
	ck_assert_int_eq(write(*master, typed, strlen(typed)), (ssize_t)strlen(typed));
	return pid;
}

/* Killed while it asks, the terminal gets its echo back. */
static const int kill_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

START_TEST(terminal_is_restored_on_a_signal)
{
	char out[1024] = "", rep[256];
	int master, slave, report, st;
	pid_t pid = asking(&master, &slave, &report, out, sizeof(out), "half");

	kill(pid, kill_signals[_i]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
	ck_assert_int_eq(WTERMSIG(st), kill_signals[_i]);
	ck_assert_int_eq(echo_on(slave), 1);
	child_report(report, rep, sizeof(rep));
	ck_assert_str_eq(rep, "");
	close(master);
	close(slave);
}
END_TEST

/* Stopped while it asks (^Z): echo is back meanwhile, then it asks again. */
START_TEST(terminal_is_restored_while_stopped)
{
	char out[1024] = "", rep[256];
	int master, slave, report, st;
	pid_t pid = asking(&master, &slave, &report, out, sizeof(out), "lost");

	kill(pid, SIGTSTP);
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
	ck_assert_int_eq(echo_on(slave), 1);
	kill(pid, SIGCONT);
	pty_expect(master, "New passphrase: \r\nNew passphrase: ", out, sizeof(out));
	ck_assert_int_eq(echo_on(slave), 0);
	ck_assert_int_eq(write(master, "kept\n", 5), 5);
	child_report(report, rep, sizeof(rep));
	ck_assert_str_eq(rep, "0:kept");
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(echo_on(slave), 1);
	close(master);
	close(slave);
}
END_TEST

/* ---- a command with a secret, end to end ---- */

#define PASSPHRASE "correct horse 7f3e"

static const struct arg unlock_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--passphrase-file", "passphrase", ARG_STRING, ARG_SECRET | ARG_REQUIRED, "FILE" },
	{ NULL, NULL, 0, 0, NULL }
};

static const struct command unlock = { "volume", "unlock", "raidd", "volume.unlock",
	unlock_args, NULL, NULL, NULL, "unlock (a test)" };

static void
fake_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(sockdir));
}

static void
fake_done(pid_t pid)
{
	char path[128];

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(path, sizeof(path), "%s/request", sockdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/raidd.sock", sockdir);
	unlink(path);
	rmdir(sockdir);
}

/* The request the fake daemon got. */
static const char *
request(void)
{
	static char buf[4096];
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/request", sockdir);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Whether needle is anywhere in this process's writable memory. */
static int
in_memory(const char *needle)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	int mem = open("/proc/self/mem", O_RDONLY), found = 0;
	char line[512], perms[8];
	unsigned long lo, hi;
	char *buf;
	ssize_t n;

	ck_assert_ptr_nonnull(maps);
	ck_assert_int_ne(mem, -1);
	while (!found && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[1] != 'w' ||
		    perms[0] != 'r' || hi - lo > (64ul << 20) || strstr(line, "[v"))
			continue;
		if ((buf = malloc(hi - lo)) == NULL)
			continue;
		if ((n = pread(mem, buf, hi - lo, (off_t)lo)) > 0)
			found = memmem(buf, (size_t)n, needle, strlen(needle)) != NULL;
		explicit_bzero(buf, hi - lo);
		free(buf);
	}
	fclose(maps);
	close(mem);
	return found;
}

static int
exec_unlock(struct ctx *x, const char *const *argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return command_exec(x, &unlock, argc, (char **)argv);
}

START_TEST(secret_option_reads_stdin_and_is_wiped)
{
	const char *argv[] = { "v1", NULL };
	struct ctx x = { sockdir, 0, -1, NULL, stderr, -1, NULL };
	char *marker = malloc(32);
	pid_t pid;

	fake_dir();
	pid = fake_daemon("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"state\":\"unlocked\"}}\n");
	x.in = pipe_with(PASSPHRASE "\n");
	x.out = mem_open();
	ck_assert_int_eq(exec_unlock(&x, argv), EXIT_OK);
	ck_assert_str_eq(mem_close(x.out), "state: unlocked\n");
	ck_assert_ptr_null(x.secrets);
	/* The scan finds what is there; the passphrase is no longer anywhere. */
	snprintf(marker, 32, "marker-%d", 4242);
	ck_assert_int_eq(in_memory("marker-4242"), 1);
	ck_assert_int_eq(in_memory(PASSPHRASE), 0);
	ck_assert_str_eq(request(), "{\"jsonrpc\":\"2.0\",\"method\":\"volume.unlock\","
	    "\"params\":{\"name\":\"v1\",\"passphrase\":\"" PASSPHRASE "\"},\"id\":1}\n");
	close(x.in);
	free(marker);
	fake_done(pid);
}
END_TEST

/* A daemon that answers two connections in turn (the request file: the last). */
static pid_t
fake_daemon2(const char *first, const char *second)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *replies[2] = { first, second };
	char buf[4096];
	ssize_t n;
	int s, c;
	pid_t pid;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/raidd.sock", sockdir);
	unlink(sun.sun_path);
	ck_assert_int_ne(s = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(s, 1), 0);
	if ((pid = fork()) == 0) {
		for (int i = 0; i < 2; i++) {
			if ((c = accept(s, NULL, NULL)) == -1 ||
			    (n = read_line(c, buf, sizeof(buf))) <= 0)
				_exit(1);
			save_request(buf, n);
			if (write(c, replies[i], strlen(replies[i])) <= 0)
				_exit(1);
			close(c);
		}
		_exit(0);
	}
	close(s);
	return pid;
}

/* volume grow asks the passphrase as unlock does, only for an encrypted volume. */
static void
grow_asks(int encrypted)
{
	const char *argv[] = { "v1", "--no-wait", NULL };
	struct ctx x = { sockdir, 0, -1, NULL, stderr, -1, NULL };
	const char *got;
	char show[160];
	pid_t pid;

	fake_dir();
	snprintf(show, sizeof(show), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"name\":"
	    "\"v1\",\"encrypted\":%s}}\n", encrypted ? "true" : "false");
	pid = fake_daemon2(show, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"job\":7}}\n");
	x.in = pipe_with(PASSPHRASE "\n");
	x.out = mem_open();
	ck_assert_int_eq(command_exec(&x, cmd("volume", "grow"), 2, (char **)argv), EXIT_OK);
	mem_close(x.out);
	ck_assert_ptr_null(x.secrets);
	ck_assert_int_eq(in_memory(PASSPHRASE), 0);
	waitpid(pid, NULL, 0);
	got = request();
	if (encrypted)
		ck_assert_str_eq(got, "{\"jsonrpc\":\"2.0\",\"method\":\"volume.grow\","
		    "\"params\":{\"name\":\"v1\",\"passphrase\":\"" PASSPHRASE "\"},\"id\":1}\n");
	else
		ck_assert_str_eq(got, "{\"jsonrpc\":\"2.0\",\"method\":\"volume.grow\","
		    "\"params\":{\"name\":\"v1\"},\"id\":1}\n");
	explicit_bzero((char *)got, strlen(got));
	close(x.in);
	fake_done(pid);
}

START_TEST(volume_grow_asks_passphrase_when_encrypted)
{
	grow_asks(1);
}
END_TEST

START_TEST(volume_grow_asks_no_passphrase_when_clear)
{
	grow_asks(0);
}
END_TEST

START_TEST(secret_option_reads_a_file_never_argv)
{
	const char *file[] = { "v1", "--passphrase-file", NULL, NULL };
	const char *argv[] = { "v1", "--passphrase", PASSPHRASE, NULL };
	struct ctx x = { sockdir, 0, -1, NULL, NULL, -1, NULL };
	char path[128], *ebuf = NULL;
	size_t elen;
	FILE *f;
	pid_t pid;

	fake_dir();
	snprintf(path, sizeof(path), "%s/pw", sockdir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(PASSPHRASE "\nsecond line\n", f);
	fclose(f);
	file[2] = path;
	pid = fake_daemon("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n");
	x.out = mem_open();
	x.err = open_memstream(&ebuf, &elen);
	ck_assert_int_eq(exec_unlock(&x, file), EXIT_OK);
	ck_assert_ptr_nonnull(strstr(request(), "\"params\":{\"name\":\"v1\",\"passphrase\":\""
	    PASSPHRASE "\"}"));
	/* On argv it is an unknown option, its value not repeated. */
	ck_assert_int_eq(exec_unlock(&x, argv), EXIT_USAGE);
	fclose(x.err);
	mem_close(x.out);
	ck_assert_ptr_nonnull(strstr(ebuf, "unknown option --passphrase\n"));
	ck_assert_ptr_null(strstr(ebuf, PASSPHRASE));
	ck_assert_ptr_nonnull(strstr(ebuf, "[--passphrase-file FILE]"));
	free(ebuf);
	unlink(path);
	fake_done(pid);
}
END_TEST

START_TEST(no_secret_no_call)
{
	const char *argv[] = { "v1", NULL };
	struct ctx x = { sockdir, 0, -1, NULL, NULL, -1, NULL };
	char *ebuf = NULL;
	size_t elen;
	pid_t pid;

	fake_dir();
	pid = fake_daemon(NULL);
	x.in = pipe_with("");
	x.err = open_memstream(&ebuf, &elen);
	ck_assert_int_eq(exec_unlock(&x, argv), EXIT_USAGE);
	fclose(x.err);
	ck_assert_str_eq(ebuf, "nasctl: passphrase: nothing to read\n");
	free(ebuf);
	close(x.in);
	fake_done(pid);
}
END_TEST

/* Only the call of the secret's method carries it. */
START_TEST(secrets_go_only_with_their_method)
{
	struct secrets set = { .method = "volume.unlock" };
	struct ctx x = { sockdir, 0, -1, NULL, stderr, -1, &set };
	struct json_object *r;
	pid_t pid;

	fake_dir();
	add_secret(&set, "passphrase", PASSPHRASE);
	pid = fake_daemon("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n");
	ck_assert_int_eq(call_once(&x, "raidd", "events.subscribe", NULL, &r), EXIT_OK);
	ck_assert_str_eq(request(), "{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\","
	    "\"id\":1}\n");
	secrets_free(&set);
	fake_done(pid);
}
END_TEST

/* nasctl call: --secret, then the params from standard input. */
START_TEST(call_reads_secret_then_params_from_stdin)
{
	const char *argv[] = { "raidd", "crypt.open", "--secret", "passphrase",
	    "--params-file", "-", NULL };
	struct ctx x = { sockdir, 0, -1, NULL, stderr, -1, NULL };
	pid_t pid;

	fake_dir();
	pid = fake_daemon("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n");
	x.in = pipe_with(PASSPHRASE "\n{\n  \"device\": \"/dev/md0\",\n  \"name\": \"c\"\n}\n");
	x.out = mem_open();
	ck_assert_int_eq(command_exec(&x, cmd("call", NULL), 6, (char **)argv), EXIT_OK);
	ck_assert_str_eq(mem_close(x.out), "{\n  \"ok\": true\n}\n");
	ck_assert_int_eq(in_memory(PASSPHRASE), 0);
	ck_assert_str_eq(request(), "{\"jsonrpc\":\"2.0\",\"method\":\"crypt.open\","
	    "\"params\":{\"device\":\"/dev/md0\",\"name\":\"c\",\"passphrase\":\""
	    PASSPHRASE "\"},\"id\":1}\n");
	close(x.in);
	fake_done(pid);
}
END_TEST

/* A secret inside the params file is wiped just the same. */
START_TEST(call_params_file_is_wiped)
{
	const char *argv[] = { "raidd", "crypt.open", "--params-file", "-", NULL };
	struct ctx x = { sockdir, 0, -1, NULL, stderr, -1, NULL };
	pid_t pid;

	fake_dir();
	pid = fake_daemon("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n");
	x.in = pipe_with("{\"passphrase\": \"" PASSPHRASE "\"}");
	x.out = mem_open();
	ck_assert_int_eq(command_exec(&x, cmd("call", NULL), 4, (char **)argv), EXIT_OK);
	mem_close(x.out);
	ck_assert_int_eq(in_memory(PASSPHRASE), 0);
	ck_assert_ptr_nonnull(strstr(request(), "\"params\":{\"passphrase\":\"" PASSPHRASE "\"}"));
	close(x.in);
	fake_done(pid);
}
END_TEST

static const struct {
	const char	*argv[8];
	const char	*in, *err;
} call_errors[] = {
	{ { "raidd", "m", "{\"a\":", NULL }, "",
	  "nasctl: call: PARAMS-JSON: line 1, column 6: expected a value\n" },
	{ { "raidd", "m", "--params-file", "-", NULL }, "[1, 2]",
	  "nasctl: call: standard input: line 1, column 1: expected a JSON object\n" },
	{ { "raidd", "m", "{}", "--params-file", "-", NULL }, "{}",
	  "nasctl: call: PARAMS-JSON and --params-file: give one\n" },
	{ { "raidd", "m", "--params-file", "/nonexistent/p", NULL }, "",
	  "nasctl: call: /nonexistent/p: No such file or directory\n" },
	{ { "raidd", "m", "--secret", "pw", NULL }, "",
	  "nasctl: call: pw: nothing to read\n" },
	{ { "raidd", "m", "--secret", "", NULL }, "x\n",
	  "nasctl: call: a secret needs a name\n" },
	{ { "raidd", "m", "--secret", "pw", "--secret", "pw", NULL }, "x\ny\n",
	  "nasctl: call: secret pw named twice\n" },
	{ { "raidd", "m", "--secret", "pw", "{\"pw\":\"on argv\"}", NULL }, "x\n",
	  "nasctl: call: PARAMS-JSON: line 1, column 6: pw is given by --secret too\n" },
};

START_TEST(call_input_errors_are_usage_errors)
{
	struct ctx x = { sockdir, 0, -1, NULL, NULL, -1, NULL };
	char *ebuf = NULL;
	size_t elen;
	int argc = 0;

	while (call_errors[_i].argv[argc])
		argc++;
	x.in = pipe_with(call_errors[_i].in);
	x.out = mem_open();
	x.err = open_memstream(&ebuf, &elen);
	ck_assert_int_eq(command_exec(&x, cmd("call", NULL), argc,
	    (char **)call_errors[_i].argv), EXIT_USAGE);
	fclose(x.err);
	ck_assert_str_eq(mem_close(x.out), "");
	ck_assert_str_eq(ebuf, call_errors[_i].err);
	free(ebuf);
	close(x.in);
}
END_TEST

/* ---- volume scrub (issue 9) ---- */

static int
exec_volume(const char *verb, const char *const *argv, const char *reply, char *req,
    size_t len)
{
	struct ctx x = { sockdir, 0, 2000, NULL, NULL, -1, NULL };
	int argc = 0, rc;
	pid_t pid;

	while (argv[argc])
		argc++;
	memcpy(sockdir + strlen(sockdir) - 6, "XXXXXX", 6);	/* mkdtemp filled it */
	fake_dir();
	pid = fake_daemon(reply);
	x.out = mem_open();
	ck_assert_ptr_nonnull(x.err = fopen("/dev/null", "w"));
	rc = command_exec(&x, cmd("volume", verb), argc, (char **)argv);
	mem_close(x.out);
	fclose(x.err);
	req[0] = '\0';
	if (rc != EXIT_USAGE)
		snprintf(req, len, "%s", request());
	fake_done(pid);
	return rc;
}

START_TEST(scrub_flags_become_the_action)
{
	static const char reply[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"job\":7}}\n";
	const char *check[] = { "v1", NULL }, *repair[] = { "v1", "--repair", NULL };
	const char *stop[] = { "v1", "--stop", NULL }, *both[] = { "v1", "--repair", "--stop", NULL };
	char req[512];

	ck_assert_int_eq(exec_volume("scrub", check, reply, req, sizeof(req)), EXIT_OK);
	ck_assert_msg(strstr(req, "\"params\":{\"name\":\"v1\",\"action\":\"check\"}"), "%s", req);
	ck_assert_int_eq(exec_volume("scrub", repair, reply, req, sizeof(req)), EXIT_OK);
	ck_assert_msg(strstr(req, "\"action\":\"repair\"}"), "%s", req);
	ck_assert_int_eq(exec_volume("scrub", stop, reply, req, sizeof(req)), EXIT_OK);
	ck_assert_msg(strstr(req, "\"action\":\"stop\"}"), "%s", req);
	ck_assert_int_eq(exec_volume("scrub", both, reply, req, sizeof(req)), EXIT_USAGE);
}
END_TEST

/* volume spare add|remove: the action picks the method; --force is add's. */
START_TEST(spare_action_picks_the_method)
{
	static const char reply[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"name\":\"v1\"}}\n";
	const char *add[] = { "add", "v1", "--disk", "bay3", NULL };
	const char *rm[] = { "remove", "v1", "--disk", "bay3", NULL };
	const char *rmf[] = { "remove", "v1", "--disk", "bay3", "--force", NULL };
	const char *bad[] = { "take", "v1", "--disk", "bay3", NULL };
	char req[512];

	ck_assert_int_eq(exec_volume("spare", add, reply, req, sizeof(req)), EXIT_OK);
	ck_assert_msg(strstr(req, "\"method\":\"volume.spare_add\"") &&
	    strstr(req, "\"params\":{\"name\":\"v1\",\"disk\":\"bay3\"}"), "%s", req);
	ck_assert_int_eq(exec_volume("spare", rm, reply, req, sizeof(req)), EXIT_OK);
	ck_assert_msg(strstr(req, "\"method\":\"volume.spare_remove\""), "%s", req);
	ck_assert_int_eq(exec_volume("spare", rmf, reply, req, sizeof(req)), EXIT_USAGE);
	ck_assert_int_eq(exec_volume("spare", bad, reply, req, sizeof(req)), EXIT_USAGE);
}
END_TEST

/* volume show: a tier's progress as a percentage, its ETA in words. */
START_TEST(progress_and_eta_shown)
{
	struct json_object *o = json_tokener_parse("{\"name\":\"v1\",\"tiers\":[{\"index\":1,"
	    "\"action\":\"check\",\"progress\":42.5,\"eta_s\":3725,\"speed_kbs\":81920},"
	    "{\"index\":2,\"action\":\"idle\",\"progress\":null,\"eta_s\":null,"
	    "\"speed_kbs\":null}],\"eta_s\":65}");
	FILE *f = mem_open();

	object_print(f, o, 0);
	ck_assert_str_eq(mem_close(f),
	    "name:  v1\n"
	    "tiers:\n"
	    "  INDEX  ACTION  PROGRESS  ETA_S  SPEED_KBS\n"
	    "  1      check   42.5%     1h02m  81920\n"
	    "  2      idle    -         -      -\n"
	    "eta_s: 1m05s\n");
	json_object_put(o);
}
END_TEST

static Suite *
nasctl_suite(void)
{
	Suite *s = suite_create("nasctl");
	TCase *t = tcase_create("args");

	tcase_add_test(t, each_type_becomes_its_json);
	tcase_add_test(t, absent_options_are_not_sent);
	tcase_add_loop_test(t, bad_arguments_are_refused, 0,
	    sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_test(t, double_dash_ends_options);
	tcase_add_test(t, negative_number_is_a_value);
	suite_add_tcase(s, t);
	t = tcase_create("table");
	tcase_add_test(t, volume_create_maps_to_its_params);
	tcase_add_test(t, volume_grow_follows_its_job);
	tcase_add_test(t, link_set_sends_up_false_for_down);
	tcase_add_test(t, confirm_and_disk_names_pass_through);
	tcase_add_test(t, job_daemon_is_local);
	tcase_add_test(t, events_collects_daemons_and_topics);
	tcase_add_test(t, call_takes_json_params);
	tcase_add_test(t, every_command_parses_and_needs_its_arguments);
	tcase_add_test(t, lookup_and_aliases);
	tcase_add_test(t, usage_line_mirrors_the_spec);
	suite_add_tcase(s, t);
	t = tcase_create("render");
	tcase_add_loop_test(t, sizes_in_powers_of_1000, 0, sizeof(sizes) / sizeof(sizes[0]));
	tcase_add_test(t, formatters);
	tcase_add_test(t, table_golden);
	tcase_add_test(t, empty_table_has_its_header);
	tcase_add_loop_test(t, disk_list_golden, 0, 2);
	tcase_add_test(t, object_golden);
	tcase_add_test(t, event_line_golden);
	tcase_add_test(t, power_history_sparkline);
	tcase_add_test(t, job_ids_in_start_answers);
	suite_add_tcase(s, t);
	t = tcase_create("escape");
	tcase_add_loop_test(t, escapes_controls, 0, sizeof(escapes) / sizeof(escapes[0]));
	tcase_add_test(t, escape_never_cuts_an_escape);
	tcase_add_test(t, tables_escape_disk_strings);
	tcase_add_test(t, listings_escape_keys_and_values);
	tcase_add_test(t, json_output_escapes_everything);
	tcase_add_test(t, events_escape_everything);
	suite_add_tcase(s, t);
	t = tcase_create("exit");
	tcase_add_test(t, exit_codes);
	tcase_add_test(t, answers_map_to_exit_codes);
	tcase_set_timeout(t, 10);
	suite_add_tcase(s, t);
	t = tcase_create("secrets");
	tcase_add_loop_test(t, params_text_is_checked_and_compacted, 0,
	    sizeof(params_texts) / sizeof(params_texts[0]));
	tcase_add_test(t, deep_nesting_is_refused);
	tcase_add_test(t, secrets_are_spliced_into_the_text);
	tcase_add_test(t, secrets_are_lines_of_stdin);
	tcase_add_test(t, volume_passphrase_only_with_encrypt);
	tcase_add_test(t, bad_secrets_are_refused_unquoted);
	tcase_add_test(t, terminal_is_asked_twice_without_echo);
	tcase_add_loop_test(t, terminal_is_restored_on_a_signal, 0,
	    sizeof(kill_signals) / sizeof(kill_signals[0]));
	tcase_add_test(t, terminal_is_restored_while_stopped);
	tcase_add_test(t, secret_option_reads_stdin_and_is_wiped);
	tcase_add_test(t, volume_grow_asks_passphrase_when_encrypted);
	tcase_add_test(t, volume_grow_asks_no_passphrase_when_clear);
	tcase_add_test(t, secret_option_reads_a_file_never_argv);
	tcase_add_test(t, no_secret_no_call);
	tcase_add_test(t, secrets_go_only_with_their_method);
	tcase_add_test(t, call_reads_secret_then_params_from_stdin);
	tcase_add_test(t, call_params_file_is_wiped);
	tcase_add_test(t, scrub_flags_become_the_action);
	tcase_add_test(t, spare_action_picks_the_method);
	tcase_add_test(t, progress_and_eta_shown);
	tcase_add_loop_test(t, call_input_errors_are_usage_errors, 0,
	    sizeof(call_errors) / sizeof(call_errors[0]));
	tcase_set_timeout(t, 20);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *r = srunner_create(nasctl_suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	json_object_put(P);
	json_object_put(L);
	free(membuf);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
