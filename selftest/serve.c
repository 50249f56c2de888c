/*
 * nas-selftest serve: the self-test behind the socket API, so the web UI
 * and the line PC start it the way nasctl does. A run is a job whose
 * work is `nas-selftest run` as a child process (the workloads block on
 * threads; the daemon's loop never does); its progress file is read on a
 * timer and becomes job progress events. The record and report of the
 * last run stay in record_dir. One run at a time.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "job.h"
#include "log.h"
#include "selftest.h"

#define RECORD_MAX	(4 << 20)
#define PROGRESS_S	0.5

static const char *const presets[] = { "review", "quick", "factory", NULL };

static const struct conf_key serve_conf[] = {
	{ "selftest", "record_dir", CONF_STRING, "/var/lib/nas-selftest", 1, 200, NULL,
	  "where the last run's record.json, report.html and progress are kept" },
	{ "selftest", "program", CONF_STRING, "/usr/sbin/nas-selftest", 1, 200, NULL,
	  "the nas-selftest that runs the tests" },
	{ "selftest", "dir_root", CONF_STRING, "/volumes", 1, 200, NULL,
	  "selftest.run's dir must lie below this directory" },
	{ "selftest", "factory_dir", CONF_STRING, "/var/lib/nas-flash/factory", 1, 200, NULL,
	  "where nas-selftest factory keeps the line's record (on the flash)" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static struct {
	char			 record_dir[256];
	char			 program[256];
	char			 dir_root[256];
	char			 factory_dir[256];
	const char		*sockdir;	/* the daemon's -S: the run asks raidd there */
	struct job		*job;
	struct nas_child	*child;
	ev_timer		 tick;
	int			 cancelled;
	int			 factory;	/* the job is nas-selftest factory */
} sv;

static void
path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", sv.record_dir, name);
}

/* A file of ours, read whole: NULL when absent, larger than max or not regular. */
static char *
slurp(const char *path, size_t max)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= max &&
	    (buf = malloc((size_t)st.st_size + 1)) != NULL) {
		n = read(fd, buf, (size_t)st.st_size);
		if (n < 0) {
			free(buf);
			buf = NULL;
		} else
			buf[n] = '\0';
	}
	close(fd);
	return buf;
}

/* The last run's record, or the line's (nas-selftest factory) when factory. */
static struct json_object *
last_record(int factory)
{
	char path[300], *text;
	struct json_object *rec;

	if (factory)
		snprintf(path, sizeof(path), "%s/record.json", sv.factory_dir);
	else
		path_in(path, sizeof(path), "record.json");
	if ((text = slurp(path, RECORD_MAX)) == NULL)
		return NULL;
	rec = json_tokener_parse(text);
	free(text);
	if (rec && !json_object_is_type(rec, json_type_object)) {
		json_object_put(rec);
		rec = NULL;
	}
	return rec;
}

/* "I N test: what" from the child's progress file -> job progress. */
static void
on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	char path[300], *text, step[128];
	int i, n, off = 0;

	(void)loop;
	(void)w;
	(void)revents;
	if (sv.job == NULL)
		return;
	path_in(path, sizeof(path), "progress");
	if ((text = slurp(path, 4096)) == NULL)
		return;
	if (sscanf(text, "%d %d %n", &i, &n, &off) == 2 && n > 0 && i >= 1 && i <= n && off > 0) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(step, sizeof(step), "%s", text + off);
		job_progress(sv.job, 100.0 * (i - 1) / n, step);
	}
	free(text);
}

static void
run_exited(int status, const char *output, void *arg)
{
	struct json_object *rec;
	int code;

	(void)arg;
	ev_timer_stop(nas_loop(), &sv.tick);
	sv.child = NULL;
	if (sv.cancelled) {
		job_cancelled(sv.job);
	} else if (WIFEXITED(status) && (WEXITSTATUS(status) == ST_EXIT_PASS ||
	    WEXITSTATUS(status) == ST_EXIT_FAIL || (sv.factory &&
	    WEXITSTATUS(status) == ST_EXIT_NORUN)) && (rec = last_record(sv.factory)) != NULL) {
		/* A run that found a failure is a finished job: its record says so. */
		job_done(sv.job, rec);
	} else {
		code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		job_fail(sv.job, NAS_ERR_FAILED, "nas-selftest exit %d: %.300s", code,
		    output ? output : "");
	}
	sv.job = NULL;
}

static void
run_cancel(struct job *j, void *arg)
{
	(void)j;
	(void)arg;
	sv.cancelled = 1;
	/* SIGTERM: the run stops, removes its files and its scratch volume. */
	if (sv.child)
		nas_child_terminate(sv.child, 60);
}

static const struct job_ops run_ops = { run_cancel, NULL };

static const struct rpc_param run_params[] = {
	{ "volume", RPC_STRING, 0, 1, 32, NULL, "a volume to test on (raidd's name)" },
	{ "dir", RPC_STRING, 0, 1, 200, NULL, "a directory below [selftest] dir_root instead" },
	{ "preset", RPC_STRING, 0, 0, 0, presets, "review, quick (default) or factory" },
	{ "tests", RPC_STRING, 0, 1, 400, NULL, "comma-separated tests instead of the preset's" },
	{ "scale", RPC_STRING, 0, 1, 16, NULL, "a number above 0, at most 64" },
	{ "peers", RPC_STRING, 0, 1, 255, NULL, "iperf3 servers for net-1 and lacp-4, comma-separated" },
	{ "factory", RPC_BOOL, 0, 0, 0, NULL,
	  "nas-selftest factory with the line's config in factory_dir (alone)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static int
below(const char *path, const char *root)
{
	size_t l = strlen(root);

	return strncmp(path, root, l) == 0 && (path[l] == '/' || path[l] == '\0' ||
	    (l > 0 && root[l - 1] == '/'));
}

/* dir: an existing directory below dir_root as written and once every
 * symbolic link is resolved (a link on a volume must not lead out). */
static int
dir_ok(const char *dir)
{
	char real[PATH_MAX], root[PATH_MAX];

	if (dir[0] != '/' || strstr(dir, "/..") || !below(dir, sv.dir_root))
		return 0;
	if (realpath(dir, real) == NULL || realpath(sv.dir_root, root) == NULL)
		return 0;
	return below(real, root);
}

static int
scale_ok(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	return errno == 0 && *end == '\0' && v > 0 && v <= 64;
}

/* The child as the job; the answer is its id. */
static void
start_job(struct rpc_call *c, char **argv, const char *target)
{
	struct json_object *o;

	sv.cancelled = 0;
	if ((sv.job = job_start("selftest.run", target, &run_ops, NULL)) == NULL) {
		rpc_error(c, NAS_ERR_LIMIT, "too many jobs");
		return;
	}
	if ((sv.child = nas_child_start(argv, run_exited, NULL)) == NULL) {
		job_fail(sv.job, NAS_ERR_FAILED, "cannot start %s", sv.program);
		sv.job = NULL;
		rpc_error(c, NAS_ERR_FAILED, "cannot start %s", sv.program);
		return;
	}
	ev_timer_init(&sv.tick, on_tick, PROGRESS_S, PROGRESS_S);
	ev_timer_start(nas_loop(), &sv.tick);
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_int((int)job_id(sv.job)));
	rpc_result(c, o);
}

/* nas-selftest factory on the line's config; its record stays in factory_dir. */
static void
start_factory(struct rpc_call *c, char *prog)
{
	char conf[300], rec[300];
	char *argv[] = { sv.program, (char *)"factory", (char *)"--config", conf, (char *)"--out",
	    sv.factory_dir, (char *)"--progress-file", prog, (char *)"-S", (char *)sv.sockdir, NULL };

	snprintf(conf, sizeof(conf), "%s/selftest.ini", sv.factory_dir);
	snprintf(rec, sizeof(rec), "%s/record.json", sv.factory_dir);
	/* Not on a unit the line is done with: its record is the one it shipped with. */
	if (access(conf, F_OK) == -1) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no factory config %s", conf);
		return;
	}
	unlink(rec);
	start_job(c, argv, "factory");
}

static void
selftest_run(struct rpc_call *c, struct json_object *params)
{
	const char *volume = rpc_param_str(params, "volume", NULL);
	const char *dir = rpc_param_str(params, "dir", NULL);
	const char *tests = rpc_param_str(params, "tests", NULL);
	const char *scale = rpc_param_str(params, "scale", NULL);
	const char *peers = rpc_param_str(params, "peers", NULL);
	char plist[ST_MAX_PEERS][64];
	char json[300], html[300], prog[300], err[256];
	char *argv[24];
	int a = 0;

	if (sv.job) {
		rpc_error(c, NAS_ERR_BUSY, "self-test job %u is running", job_id(sv.job));
		return;
	}
	if (volume && dir) {
		rpc_error(c, RPC_INVALID_PARAMS, "volume and dir exclude each other");
		return;
	}
	sv.factory = rpc_param_bool(params, "factory", 0);
	if (sv.factory && (volume || dir || tests || scale || peers ||
	    rpc_param_str(params, "preset", NULL))) {
		rpc_error(c, RPC_INVALID_PARAMS, "factory: the line's config says what to run");
		return;
	}
	if (dir && !dir_ok(dir)) {
		rpc_error(c, RPC_INVALID_PARAMS, "dir must be a directory below %s", sv.dir_root);
		return;
	}
	if (scale && !scale_ok(scale)) {
		rpc_error(c, RPC_INVALID_PARAMS, "scale: a number above 0, at most 64");
		return;
	}
	if (tests && st_tests_check(tests, err, sizeof(err)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "tests: %s", err);
		return;
	}
	/* The child refuses a bad list too, but as a failed job, not an answer. */
	if (peers && st_peers_parse(peers, plist, ST_MAX_PEERS, err, sizeof(err)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "peers: %s", err);
		return;
	}
	path_in(json, sizeof(json), "record.json");
	path_in(html, sizeof(html), "report.html");
	path_in(prog, sizeof(prog), "progress");
	unlink(prog);
	if (sv.factory) {
		start_factory(c, prog);
		return;
	}
	/* Never a record of an earlier run as this run's result. */
	unlink(json);
	unlink(html);
	argv[a++] = sv.program;
	argv[a++] = (char *)"run";
	argv[a++] = (char *)"--preset";
	argv[a++] = (char *)rpc_param_str(params, "preset", "quick");
	argv[a++] = (char *)"--json";
	argv[a++] = json;
	argv[a++] = (char *)"--html";
	argv[a++] = html;
	argv[a++] = (char *)"--progress-file";
	argv[a++] = prog;
	argv[a++] = (char *)"-S";
	argv[a++] = (char *)sv.sockdir;
	if (volume) {
		argv[a++] = (char *)"--volume";
		argv[a++] = (char *)volume;
	}
	if (dir) {
		argv[a++] = (char *)"--dir";
		argv[a++] = (char *)dir;
	}
	if (tests) {
		argv[a++] = (char *)"--tests";
		argv[a++] = (char *)tests;
	}
	if (scale) {
		argv[a++] = (char *)"--scale";
		argv[a++] = (char *)scale;
	}
	if (peers) {
		argv[a++] = (char *)"--peers";
		argv[a++] = (char *)peers;
	}
	argv[a] = NULL;
	start_job(c, argv, volume ? volume : dir ? dir : "scratch");
}

static const struct rpc_param results_params[] = {
	{ "factory", RPC_BOOL, 0, 0, 0, NULL, "the production line's record instead of the last run's" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static void
selftest_results(struct rpc_call *c, struct json_object *params)
{
	int factory = rpc_param_bool(params, "factory", 0);
	struct json_object *rec = last_record(factory);

	if (rec == NULL)
		rpc_error(c, NAS_ERR_NOT_FOUND, "no %s record yet", factory ? "factory" : "self-test");
	else
		rpc_result(c, rec);
}

static void
selftest_report(struct rpc_call *c, struct json_object *params)
{
	int factory = rpc_param_bool(params, "factory", 0);
	struct json_object *rec = last_record(factory), *o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (rec == NULL) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no %s record yet", factory ? "factory" : "self-test");
		return;
	}
	if ((f = open_memstream(&buf, &len)) == NULL || st_html(f, rec) == -1) {
		if (f)
			fclose(f);
		free(buf);
		json_object_put(rec);
		rpc_error(c, NAS_ERR_FAILED, "the last record has no results");
		return;
	}
	fclose(f);
	o = json_object_new_object();
	json_object_object_add(o, "content_type", json_object_new_string("text/html"));
	json_object_object_add(o, "html", json_object_new_string_len(buf, (int)len));
	free(buf);
	json_object_put(rec);
	rpc_result(c, o);
}

static const struct rpc_method serve_methods[] = {
	{ "selftest.run", selftest_run, run_params, RPC_MUTATES,
	  "run the self-test as a job; progress as job events, the record as its result" },
	{ "selftest.results", selftest_results, results_params, 0,
	  "the last run's JSON record (factory: the line's)" },
	{ "selftest.report", selftest_report, results_params, 0,
	  "the last run's HTML report (factory: the line's)" },
	{ NULL, NULL, NULL, 0, NULL }
};

static const struct rpc_method *const serve_tables[] = { serve_methods, NULL };

static int
serve_init(const struct conf *cf)
{
	snprintf(sv.record_dir, sizeof(sv.record_dir), "%s", conf_str(cf, "selftest", "record_dir"));
	snprintf(sv.program, sizeof(sv.program), "%s", conf_str(cf, "selftest", "program"));
	snprintf(sv.dir_root, sizeof(sv.dir_root), "%s", conf_str(cf, "selftest", "dir_root"));
	snprintf(sv.factory_dir, sizeof(sv.factory_dir), "%s", conf_str(cf, "selftest", "factory_dir"));
	if (mkdir(sv.record_dir, 0755) == -1 && errno != EEXIST) {
		log_warn("%s", sv.record_dir);
		return -1;
	}
	return 0;
}

static int
serve_reload(const struct conf *cf)
{
	if (sv.job) {
		log_warnx("a self-test runs: the new configuration waits for a restart");
		return -1;
	}
	return serve_init(cf);
}

static const struct nas_daemon serve_daemon = {
	.name = "selftest",
	.methods = serve_tables,
	.conf = serve_conf,
	.init = serve_init,
	.reload = serve_reload,
};

int
st_serve(int argc, char **argv)
{
	/* libnas keeps its -S to itself; the runs need it too. */
	sv.sockdir = CONFIG_NAS_SOCKET_DIR;
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-S") == 0 && i + 1 < argc)
			sv.sockdir = argv[++i];
		else if (strncmp(argv[i], "-S", 2) == 0 && argv[i][2])
			sv.sockdir = argv[i] + 2;
	return nas_daemon_main(&serve_daemon, argc, argv);
}
