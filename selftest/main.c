/*
 * nas-selftest: the figures the reviews publish (review-protocols.md),
 * measured on the NAS itself with data verified, against the board's
 * limits. See nas-selftest(8) and docs/selftest.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "selftest.h"

#define DEFAULT_BOARD	"/etc/board.ini"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: nas-selftest run [--volume NAME | --dir DIR] [--preset review|quick|factory]\n"
	    "           [--tests T1,T2,...] [--scale F] [--peers ADDR,...] [--json FILE]\n"
	    "           [--html FILE] [--board FILE] [--seed N] [--exec-between CMD] [--exec-after CMD] [-S DIR]\n"
	    "           [--progress-file FILE]\n"
	    "       nas-selftest factory [--config FILE] [--out DIR] [--board FILE] [--leds DIR]\n"
	    "           [--seed N] [-S DIR]\n"
	    "       nas-selftest html RECORD.json OUT.html\n"
	    "       nas-selftest serve [-dfn] [-c FILE] [-S DIR]\n"
	    "       nas-selftest tests\n"
	    "tests: file-2g files-1000x2m files-10000x2k seq-max iops-4k-t8 iops-4k-q16\n"
	    "       power net-1 lacp-4 load-curve\n");
}

/* Writes text to path through a temporary file: never half a record. */
static int
write_file(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	int fd, ok, e;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* A fresh name: nothing planted in a shared directory is written through. */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return -1;
	ok = fchmod(fd, 0644) == 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
	e = errno;
	if (close(fd) == -1 && ok) {
		ok = 0;
		e = errno;
	}
	if (ok && rename(tmp, path) == -1) {
		ok = 0;
		e = errno;
	}
	if (!ok) {
		unlink(tmp);
		errno = e ? e : EIO;
		return -1;
	}
	return 0;
}

static int
write_json(const char *path, struct json_object *rec)
{
	const char *text = json_object_to_json_string_ext(rec,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	char *buf;
	int rc;

	if (asprintf(&buf, "%s\n", text) == -1)
		return -1;
	rc = write_file(path, buf, strlen(buf));
	free(buf);
	return rc;
}

static int
write_html(const char *path, struct json_object *rec)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = -1;

	if (f == NULL)
		return -1;
	if (st_html(f, rec) == 0 && fclose(f) == 0)
		rc = write_file(path, buf, len);
	else {
		fclose(f);
		errno = EINVAL;
	}
	free(buf);
	return rc;
}

static void
signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

#define FACTORY_DIR	"/var/lib/nas-flash/factory"

struct factory_opts {
	const char	*config;
	const char	*out;
	const char	*leds;
};

/* The options of run, or of factory when fo is set (each refuses the other's). */
static int
parse(int argc, char **argv, struct st_run *run, const char **tests, struct factory_opts *fo)
{
	static const struct option opts[] = {
		{ "volume", required_argument, NULL, 'v' },
		{ "dir", required_argument, NULL, 'd' },
		{ "preset", required_argument, NULL, 'p' },
		{ "tests", required_argument, NULL, 't' },
		{ "scale", required_argument, NULL, 's' },
		{ "peers", required_argument, NULL, 'P' },
		{ "json", required_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "board", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'e' },
		{ "exec-between", required_argument, NULL, 'x' },
		{ "exec-after", required_argument, NULL, 'X' },
		{ "progress-file", required_argument, NULL, 'g' },
		{ "config", required_argument, NULL, 'c' },
		{ "out", required_argument, NULL, 'o' },
		{ "leds", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "S:h", opts, NULL)) != -1) {
		if (strchr(fo ? "vdptsPjHxX" : "col", c)) {
			for (int i = 0; opts[i].name; i++)
				if (opts[i].val == c)
					log_warnx("--%s: not an option of %s", opts[i].name,
					    fo ? "factory" : "run");
			return -1;
		}
		switch (c) {
		case 'c': fo->config = optarg; break;
		case 'o': fo->out = optarg; break;
		case 'l': fo->leds = optarg; break;
		case 'v': run->volume = optarg; break;
		case 'd': run->dir = optarg; break;
		case 'p': run->preset = optarg; break;
		case 't': *tests = optarg; break;
		case 'P': run->peers = optarg; break;
		case 'j': run->json_path = optarg; break;
		case 'H': run->html_path = optarg; break;
		case 'b': run->board_ini = optarg; break;
		case 'x': run->between = optarg; break;
		case 'X': run->after = optarg; break;
		case 'S': run->sockdir = optarg; break;
		case 'g':
			run->progress_fd = open(optarg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
			    O_NOFOLLOW, 0644);
			if (run->progress_fd == -1) {
				log_warn("--progress-file %s", optarg);
				return -1;
			}
			break;
		case 's':
			errno = 0;
			run->scale = strtod(optarg, &end);
			if (errno || *end || !(run->scale > 0 && run->scale <= 64)) {
				log_warnx("--scale: a number above 0, at most 64");
				return -1;
			}
			break;
		case 'e':
			errno = 0;
			run->seed = strtoull(optarg, &end, 0);
			if (errno || *end || optarg[0] == '\0' || optarg[0] == '-') {
				log_warnx("--seed: a number");
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(ST_EXIT_PASS);
		default:
			return -1;
		}
	}
	if (optind != argc) {
		log_warnx("unexpected argument %s", argv[optind]);
		return -1;
	}
	if (run->peers) {
		char peers[ST_MAX_PEERS][64], err[128];

		if (st_peers_parse(run->peers, peers, ST_MAX_PEERS, err, sizeof(err)) == -1) {
			log_warnx("--peers: %s", err);
			return -1;
		}
	}
	if (run->volume && run->dir) {
		log_warnx("--volume and --dir exclude each other");
		return -1;
	}
	return 0;
}

/*
 * Power, the target, the tests and the limits: the rows in res, or -1
 * when the target could not be opened (norun says why, tg stays closed).
 * norun also says why a run that started did not finish.
 */
static int
measure(struct st_run *run, const struct st_limits *lim, struct st_target *tg,
    struct st_result *res, char *norun, size_t len)
{
	int n;

	memset(tg, 0, sizeof(*tg));
	norun[0] = '\0';
	run->progress_tty = isatty(STDERR_FILENO);
	run->origin = now_s();
	/* 0.068, not 0.068000000000000005: the figures are rounded already. */
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	signals();
	if (power_start(run->sockdir) == -1)
		log_info("powerd does not answer power.status: power is unavailable");
	if (target_open(run, st_space_needed(run->tests, run->scale), tg, norun, len) == -1) {
		log_warnx("%s", norun);
		power_stop();
		memset(tg, 0, sizeof(*tg));
		return -1;
	}
	fprintf(stderr, "nas-selftest: preset %s, scale %g, in %s\n", run->preset, run->scale,
	    tg->dir);
	/* Only a failure leaves words here (waiting for the scratch volume
	 * leaves raidd's "no volume" of the polls before it appeared). */
	norun[0] = '\0';
	n = st_run_tests(run, tg, res, ST_MAX_RESULTS, norun, len);
	power_stop();
	if (n >= 0)
		norun[0] = '\0';
	else {
		log_warnx("%s", norun);
		n = 0;
		while (n < ST_MAX_RESULTS && res[n].test[0])
			n++;
	}
	for (int i = 0; i < n; i++)
		st_limits_apply(lim, &res[i]);
	return n;
}

static int
cmd_run(int argc, char **argv)
{
	struct st_run run = { .preset = "quick", .scale = 1, .sockdir = CONFIG_NAS_SOCKET_DIR,
	    .stop = &stop, .progress_fd = -1 };
	static struct st_result res[ST_MAX_RESULTS];
	struct st_limits lim;
	struct st_target tg;
	struct json_object *rec;
	const char *tests = NULL, *ptests;
	double pscale;
	char err[512] = "";
	int n, rc;

	run.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (parse(argc, argv, &run, &tests, NULL) == -1) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	if (st_limits_load(run.board_ini ? run.board_ini : DEFAULT_BOARD, &lim, err,
	    sizeof(err)) == -1) {
		if (run.board_ini || access(DEFAULT_BOARD, F_OK) == 0) {
			log_warnx("%s", err);
			return ST_EXIT_NORUN;
		}
		memset(&lim, 0, sizeof(lim));	/* a host without a board: no limits */
	}
	if (st_preset(run.preset, lim.file_mb, &ptests, &pscale) == -1) {
		log_warnx("--preset: review, quick or factory");
		return ST_EXIT_USAGE;
	}
	snprintf(run.tests, sizeof(run.tests), "%s", tests ? tests : ptests);
	run.scale *= pscale;
	if (st_tests_check(run.tests, err, sizeof(err)) == -1) {
		log_warnx("--tests: %s", err);
		return ST_EXIT_USAGE;
	}
	if ((n = measure(&run, &lim, &tg, res, err, sizeof(err))) == -1)
		return ST_EXIT_NORUN;
	/* Data that did not verify is the verdict even of a run cut short. */
	rc = st_exit_code(res, n);
	if (rc == ST_EXIT_PASS && (err[0] || stop))
		rc = ST_EXIT_NORUN;
	st_table(stdout, res, n, rc);
	fflush(stdout);
	rec = st_record(&run, &lim, &tg, res, n, rc, run.origin, power_series(run.origin, 2000));
	if (run.json_path && write_json(run.json_path, rec) == -1) {
		log_warn("%s", run.json_path);
		rc = rc ? rc : ST_EXIT_NORUN;
	}
	if (run.html_path && write_html(run.html_path, rec) == -1) {
		log_warn("%s", run.html_path);
		rc = rc ? rc : ST_EXIT_NORUN;
	}
	json_object_put(rec);
	target_close(&run, &tg);
	return rc;
}

/* ---- nas-selftest factory ---- */

/* DIR/name through a temporary file, as every output. */
static int
out_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* record.json, report.html and result (the verdict's line, then one per row) in dir. */
static int
factory_save(const char *dir, struct json_object *rec, const struct st_result *res, int n,
    int rc, const char *why)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	FILE *f;
	int ok = 1;

	if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
		log_warn("%s", dir);
		return -1;
	}
	if ((f = open_memstream(&text, &len)) == NULL)
		return -1;
	/* One line whatever a note held: a line script reads the first word. */
	fprintf(f, "%s%s", st_verdict_word(rc), why[0] ? " " : "");
	for (const char *p = why; *p; p++)
		fputc((unsigned char)*p < ' ' || *p == 0x7f ? '?' : *p, f);
	fputc('\n', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s %s %s\n", res[i].test, res[i].op == OP_WRITE ? "write" :
		    res[i].op == OP_READ ? "read" : "idle", st_row_verdict(&res[i]));
	if (fclose(f) != 0) {
		free(text);
		return -1;
	}
	/* The result last: a line that sees it finds the record beside it. */
	if (out_path(path, sizeof(path), dir, "record.json") == -1 || write_json(path, rec) == -1 ||
	    out_path(path, sizeof(path), dir, "report.html") == -1 || write_html(path, rec) == -1 ||
	    out_path(path, sizeof(path), dir, "result") == -1 ||
	    write_file(path, text, len) == -1) {
		log_warn("%s", path);
		ok = 0;
	}
	free(text);
	return ok ? 0 : -1;
}

/*
 * The line's run: its config on the flash (the marker that starts it at
 * first boot), the factory preset under the config's limits, a verdict
 * a line script reads from the exit status or DIR/result, the record
 * and report kept on the flash, the verdict on the status LED.
 */
static int
cmd_factory(int argc, char **argv)
{
	struct st_run run = { .preset = "factory", .scale = 1, .sockdir = CONFIG_NAS_SOCKET_DIR,
	    .stop = &stop, .progress_fd = -1 };
	struct factory_opts o = { FACTORY_DIR "/selftest.ini", FACTORY_DIR, "/sys/class/leds" };
	static struct st_result res[ST_MAX_RESULTS];
	struct st_factory fac;
	struct st_limits lim;
	struct st_target tg;
	struct json_object *rec;
	const char *ptests, *board;
	char norun[512] = "", why[512];
	int n = 0, rc;

	run.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (parse(argc, argv, &run, NULL, &o) == -1) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	/* A line that stops the run early still gets a record saying so. */
	signals();
	board = run.board_ini ? run.board_ini : DEFAULT_BOARD;
	if (st_leds(board, o.leds, ST_LED_RUN) == -1)
		log_info("no status LED: the verdict is in %s/result", o.out);
	memset(&tg, 0, sizeof(tg));
	memset(&fac, 0, sizeof(fac));
	snprintf(run.tests, sizeof(run.tests), "%s", ST_FACTORY_TESTS);
	/* The factory needs the board's limits: without them every test would pass. */
	if (st_limits_load(board, &lim, norun, sizeof(norun)) == 0 &&
	    st_factory_load(o.config, &fac, &lim, norun, sizeof(norun)) == 0) {
		if (fac.file_mb > 0)
			lim.file_mb = fac.file_mb;
		st_preset("factory", lim.file_mb, &ptests, &run.scale);
		snprintf(run.tests, sizeof(run.tests), "%s", fac.tests);
		run.peers = fac.peers[0] ? fac.peers : NULL;
		run.volume = fac.volume[0] ? fac.volume : NULL;
		run.dir = fac.dir[0] ? fac.dir : NULL;
		if ((n = measure(&run, &lim, &tg, res, norun, sizeof(norun))) == -1)
			n = 0;
	} else {
		log_warnx("%s", norun);
		run.origin = now_s();
	}
	if (stop && !norun[0])
		snprintf(norun, sizeof(norun), "interrupted");
	rc = st_factory_verdict(res, n, run.tests, norun, why, sizeof(why));
	st_table(stdout, res, n, rc);
	printf("factory: %s%s%s\n", st_verdict_word(rc), why[0] ? ": " : "", why);
	fflush(stdout);
	rec = st_record(&run, &lim, &tg, res, n, rc, run.origin, power_series(run.origin, 2000));
	json_object_object_add(rec, "verdict", json_object_new_string(st_verdict_word(rc)));
	json_object_object_add(rec, "reason", why[0] ? json_object_new_string(why) : NULL);
	json_object_object_add(rec, "factory_config", json_object_new_string(o.config));
	if (factory_save(o.out, rec, res, n, rc, why) == -1 && rc == ST_EXIT_PASS)
		rc = ST_EXIT_NORUN;	/* a pass nobody can read back is not shipped */
	json_object_put(rec);
	target_close(&run, &tg);
	st_leds(board, o.leds, rc == ST_EXIT_PASS ? ST_LED_PASS : ST_LED_FAIL);
	return rc;
}

/* The report of a stored record. */
static int
cmd_html(int argc, char **argv)
{
	struct json_object *rec;
	int rc;

	if (argc != 3) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	if ((rec = json_object_from_file(argv[1])) == NULL ||
	    !json_object_is_type(rec, json_type_object)) {
		log_warnx("%s: not a JSON record", argv[1]);
		json_object_put(rec);
		return ST_EXIT_NORUN;
	}
	if ((rc = write_html(argv[2], rec)) == -1)
		log_warn("%s", argv[2]);
	json_object_put(rec);
	return rc == 0 ? ST_EXIT_PASS : ST_EXIT_NORUN;
}

int
main(int argc, char **argv)
{
	log_init("nas-selftest", 1, 0);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return st_serve(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "html") == 0)
		return cmd_html(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "factory") == 0)
		return cmd_factory(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "tests") == 0) {
		usage(stdout);
		return ST_EXIT_PASS;
	}
	usage(stderr);
	return ST_EXIT_USAGE;
}
