/*
 * The production line's self-test (nas-selftest factory, docs/selftest.md
 * "Factory mode"): the line's config, the verdict a line script acts on,
 * and the status LED. The verdict is strict: a test that measured
 * nothing (no peer, no power reading) or never ran is not a pass, and a
 * test the run needs a limit for must have one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iniparser.h>

#include "config.h"
#include "log.h"
#include "selftest.h"

static const struct conf_key factory_conf[] = {
	{ "factory", "tests", CONF_STRING, ST_FACTORY_TESTS, 1, 400, NULL,
	  "the tests the unit must pass" },
	{ "factory", "peers", CONF_STRING, "", 0, 255, NULL,
	  "iperf3 servers of the line for net-1 and lacp-4" },
	{ "factory", "volume", CONF_STRING, "", 0, 32, NULL,
	  "a volume to test on; empty: a scratch RAID 1 on the blank disks" },
	{ "factory", "dir", CONF_STRING, "", 0, 200, NULL,
	  "a directory to test in instead (a bench, not the line)" },
	{ "factory", "file_mb", CONF_STRING, "", 0, 16, NULL,
	  "MiB of the sequential file; empty: the board's [selftest] file_mb" },
	{ "selftest", "seq_write_min_mbs", CONF_STRING, "", 0, 16, NULL, "" },
	{ "selftest", "seq_read_min_mbs", CONF_STRING, "", 0, 16, NULL, "" },
	{ "selftest", "rand_read_min_iops", CONF_STRING, "", 0, 16, NULL, "" },
	{ "selftest", "rand_write_min_iops", CONF_STRING, "", 0, 16, NULL, "" },
	{ "selftest", "net_min_mbits", CONF_STRING, "", 0, 16, NULL, "" },
	{ "selftest", "idle_max_w", CONF_STRING, "", 0, 16, NULL, "" },
	{ "selftest", "idle_min_w", CONF_STRING, "", 0, 16, NULL, "" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static const char *const limit_keys[] = { "seq_write_min_mbs", "seq_read_min_mbs",
	"rand_read_min_iops", "rand_write_min_iops", "net_min_mbits", "idle_max_w", "idle_min_w", NULL };

static int
volume_name_ok(const char *s)
{
	if (*s == '\0' || *s == '-' || *s == '.')
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
	    strlen(s);
}

/* Every limit a factory test is judged by must be set: no limit would be a pass by default. */
static int
limits_set(const struct st_factory *f, const struct st_limits *l, const char *path, char *err,
    size_t errlen)
{
	static const enum st_op ops[] = { OP_WRITE, OP_READ, OP_IDLE };
	const char *p, *e, *key;
	char test[33];

	for (p = f->tests; *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		snprintf(test, sizeof(test), "%.*s", (int)(e - p), p);
		for (int i = 0; i < 3; i++) {
			if ((ops[i] == OP_IDLE) != (strcmp(test, "power") == 0))
				continue;
			if ((key = st_limit_key(test, ops[i])) && st_limit_for(l, test, ops[i]) <= 0) {
				snprintf(err, errlen, "%s: %s needs a limit: [selftest] %s is not set "
				    "(here or in board.ini)", path, test, key);
				return -1;
			}
		}
	}
	return 0;
}

int
st_factory_load(const char *path, struct st_factory *f, struct st_limits *l, char *err,
    size_t errlen)
{
	static const struct conf_key *const schemas[] = { factory_conf, NULL };
	char why[256], peers[ST_MAX_PEERS][64], *end;
	struct conf *cf;
	const char *s;

	memset(f, 0, sizeof(*f));
	if ((cf = conf_load(path, schemas, 0, err, errlen)) == NULL)
		return -1;
	snprintf(f->tests, sizeof(f->tests), "%s", conf_str(cf, "factory", "tests"));
	snprintf(f->peers, sizeof(f->peers), "%s", conf_str(cf, "factory", "peers"));
	snprintf(f->volume, sizeof(f->volume), "%s", conf_str(cf, "factory", "volume"));
	if (st_tests_check(f->tests, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: [factory] tests: %s", path, why);
		goto bad;
	}
	if (f->peers[0] && st_peers_parse(f->peers, peers, ST_MAX_PEERS, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: [factory] peers: %s", path, why);
		goto bad;
	}
	if (f->volume[0] && !volume_name_ok(f->volume)) {
		snprintf(err, errlen, "%s: [factory] volume: not a volume name", path);
		goto bad;
	}
	snprintf(f->dir, sizeof(f->dir), "%s", conf_str(cf, "factory", "dir"));
	if (f->dir[0] && (f->dir[0] != '/' || f->volume[0])) {
		snprintf(err, errlen, "%s: [factory] dir: an absolute path, and not with volume", path);
		goto bad;
	}
	if (*(s = conf_str(cf, "factory", "file_mb"))) {
		errno = 0;
		f->file_mb = strtod(s, &end);
		if (errno || end == s || *end || !(f->file_mb >= 1 && f->file_mb <= 65536)) {
			snprintf(err, errlen, "%s: [factory] file_mb: a number from 1 to 65536", path);
			goto bad;
		}
	}
	for (int i = 0; limit_keys[i]; i++)
		if (*(s = conf_str(cf, "selftest", limit_keys[i])) &&
		    st_limits_set(l, limit_keys[i], s, path, err, errlen) == -1)
			goto bad;
	if (st_limits_sane(l, path, err, errlen) == -1 || limits_set(f, l, path, err, errlen) == -1)
		goto bad;
	conf_free(cf);
	return 0;
bad:
	conf_free(cf);
	return -1;
}

/* ---- the status LED ---- */

/* A name under /sys/class/leds ("green:status"), never a path. */
static int
led_name_ok(const char *s)
{
	return *s && *s != '.' && strlen(s) < 64 &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-.+") ==
	    strlen(s);
}

static int
led_write(const char *dir, const char *led, const char *file, const char *value)
{
	char path[512];
	size_t len = strlen(value);
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, led, file);
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		log_warn("LED %s", path);
		return -1;
	}
	ok = write(fd, value, len) == (ssize_t)len;
	if (!ok)
		log_warn("LED %s", path);
	close(fd);
	return ok ? 0 : -1;
}

/* trigger "timer" blinks at on/off ms; "none" and a brightness hold it. */
static int
led_set(const char *dir, const char *led, int on, int blink_ms)
{
	char ms[16];

	if (led == NULL)
		return -1;
	if (blink_ms > 0) {
		snprintf(ms, sizeof(ms), "%d", blink_ms);
		if (led_write(dir, led, "trigger", "timer") == -1)
			return -1;
		/* The timer trigger makes these files; a driver without them blinks at its rate. */
		led_write(dir, led, "delay_on", ms);
		led_write(dir, led, "delay_off", ms);
		return 0;
	}
	if (led_write(dir, led, "trigger", "none") == -1)
		return -1;
	return led_write(dir, led, "brightness", on ? "255" : "0");
}

int
st_leds(const char *board_ini, const char *leds_dir, int state)
{
	char status[64] = "", fault[64] = "";
	const char *st = NULL, *fa = NULL;
	dictionary *d;

	if (board_ini == NULL || (d = iniparser_load(board_ini)) == NULL)
		return -1;
	snprintf(status, sizeof(status), "%s", iniparser_getstring(d, "leds:status", ""));
	snprintf(fault, sizeof(fault), "%s", iniparser_getstring(d, "leds:fault", ""));
	iniparser_freedict(d);
	if (status[0] && !led_name_ok(status))
		log_warnx("%s: [leds] status: not a LED name", board_ini);
	else if (status[0])
		st = status;
	if (fault[0] && !led_name_ok(fault))
		log_warnx("%s: [leds] fault: not a LED name", board_ini);
	else if (fault[0])
		fa = fault;
	if (st == NULL && fa == NULL)
		return -1;
	switch (state) {
	case ST_LED_RUN:
		if (fa)
			led_set(leds_dir, fa, 0, 0);
		return led_set(leds_dir, st, 1, 500);
	case ST_LED_PASS:
		if (fa)
			led_set(leds_dir, fa, 0, 0);
		return led_set(leds_dir, st, 1, 0);
	default:
		if (fa == NULL)
			return led_set(leds_dir, st, 1, 100);
		if (st)
			led_set(leds_dir, st, 0, 0);
		return led_set(leds_dir, fa, 1, 0);
	}
}
