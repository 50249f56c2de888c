/* nas-selftest: the reviews' figures measured on the NAS itself. */
#ifndef SELFTEST_H
#define SELFTEST_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#define ST_MAX_RESULTS	64
#define ST_SCHEMA	"nas-selftest/1"

/* Exit codes: documented in nas-selftest(8). */
#define ST_EXIT_PASS	0
#define ST_EXIT_FAIL	1
#define ST_EXIT_USAGE	2
#define ST_EXIT_NORUN	3

enum st_op { OP_WRITE, OP_READ, OP_IDLE, OP_MIXED };
enum st_metric { ST_MB_S, ST_IOPS, ST_WATTS, ST_NONE, ST_MBIT_S };
/* pass: ST_PASS / ST_FAIL, or ST_UNAVAILABLE when nothing was measured. */
enum { ST_FAIL = 0, ST_PASS = 1, ST_UNAVAILABLE = -1 };

/* A bond port's byte counters (net.c). */
struct st_port_bytes {
	char			name[16];
	unsigned long long	tx, rx;
};
#define ST_MAX_PORTS	4

/* One step of the load curve: clients at once, each one request in flight. */
#define ST_MAX_STEPS	8
struct st_step {
	int	clients;
	double	seconds, mb_s, iops, write_share;
	double	mean_ms, p50_ms, p99_ms;	/* response time */
};

/* One row of the record: one test in one direction. */
struct st_result {
	char		test[32];
	enum st_op	op;
	uint64_t	bytes;
	uint64_t	ops;
	uint64_t	files;		/* many-file tests, else 0 */
	double		seconds;
	double		t0, t1;		/* now_s() at the phase's ends */
	double		cpu_s;
	int		has_lat;
	double		p50, p99, p999;	/* microseconds */
	int		has_power;
	double		watts, joules;
	int		verified;	/* 1, 0, or -1 when nothing was read */
	int		direct;		/* O_DIRECT was used */
	enum st_metric	metric;		/* what the limit is compared with */
	int		has_limit;
	double		limit;		/* a floor, or a ceiling for watts */
	double		limit_min;	/* watts: a floor too, or 0 */
	int		pass;
	char		note[320];
	int		nports;		/* net tests: bytes per bond port */
	struct st_port_bytes ports[ST_MAX_PORTS];
	double		ratio;		/* lacp-4: to net-1 in the same direction, or 0 */
	int		flows;		/* net rows: iperf3 flows at once */
	int		ports_used;	/* ports that carried a tenth of the bytes or more */
	int		one_port;	/* several flows, several ports, one port used */
	int		tries;		/* lacp-4: attempts until the flows spread */
	int		has_activity;	/* power: what powerd saw during the phase */
	double		busy_share;	/* of its readings with disk I/O */
	double		cpu_load;	/* mean busy cores */
	double		settle_s;	/* waited for the disks to go quiet */
	int		nsteps;		/* load-curve: its steps, */
	struct st_step	steps[ST_MAX_STEPS];
	int		knee;		/* and the index of its knee, or -1 */
};

/* The board's [selftest] limits; 0 where the board sets none. */
struct st_limits {
	char	board[64];
	char	model[128];
	double	seq_write_min_mbs, seq_read_min_mbs;
	double	rand_read_min_iops, rand_write_min_iops;
	double	net_min_mbits, idle_max_w, idle_min_w;
	double	file_mb;
};

/* What the record says about where the test ran. */
struct st_target {
	char	dir[512];		/* the directory the files go to */
	char	volume[64];		/* raidd's name, "" for --dir */
	int	scratch;		/* made by nas-selftest, deleted after */
	struct json_object *info;	/* the record's "volume" object */
};

/* The run as the options set it. */
struct st_run {
	const char	*preset;
	double		 scale;
	char		 tests[512];	/* comma-separated, after the preset */
	const char	*peers;
	const char	*json_path;
	const char	*html_path;
	const char	*volume;
	const char	*dir;
	const char	*sockdir;
	const char	*board_ini;
	const char	*between;	/* shell command between write and read */
	const char	*after;		/* shell command after the reads */
	uint64_t	 seed;
	double		 origin;	/* now_s() at the start: the record's time 0 */
	int		 progress_tty;
	int		 progress_fd;	/* --progress-file, or -1 */
	volatile sig_atomic_t *stop;
};

/* workload.c */
/* The tests of a preset and its scale; -1 for an unknown preset. */
int	st_preset(const char *name, double file_mb, const char **tests, double *scale);
/* Bytes of free space the tests need at scale (the largest test). */
uint64_t st_space_needed(const char *tests, double scale);
int	st_tests_check(const char *tests, char *err, size_t errlen);
/* Runs every test, adding rows to res (at most max); returns the count,
 * or -1 when the run could not go on (err says why). */
int	st_run_tests(const struct st_run *, const struct st_target *, struct st_result *res,
	    int max, char *err, size_t errlen);

/* limits.c */
int	st_limits_load(const char *path, struct st_limits *, char *err, size_t errlen);
/* -1 with err when idle_min_w is set without an idle_max_w above it. */
int	st_limits_sane(const struct st_limits *, const char *where, char *err, size_t errlen);
/* One [selftest] key from text (where names the file in err); -1 for an
 * unknown key or a value that is not a number >= 0. */
int	st_limits_set(struct st_limits *, const char *key, const char *val, const char *where,
	    char *err, size_t errlen);
/* The [selftest] key that limits a test in a direction, or NULL; its value. */
const char *st_limit_key(const char *test, enum st_op op);
double	st_limit_for(const struct st_limits *, const char *test, enum st_op op);
void	st_limits_apply(const struct st_limits *, struct st_result *);

/* report.c */
double	st_mb_s(const struct st_result *);
double	st_iops(const struct st_result *);
double	st_mbit_s(const struct st_result *);
struct json_object *st_record(const struct st_run *, const struct st_limits *,
	    const struct st_target *, const struct st_result *, int n, int exit_code,
	    double origin, struct json_object *power);
/* The table, ending "result: " and st_verdict_word(exit_code). */
void	st_table(FILE *, const struct st_result *, int n, int exit_code);
int	st_exit_code(const struct st_result *, int n);
/* Network rows: the ports that carried at least a tenth of the row's
 * bytes in its direction (sent up, received down), from their counters. */
int	st_ports_used(const struct st_result *);
/* The name of the port that carried the most, or "". */
const char *st_busiest_port(const struct st_result *);

/* power.c: powerd's readings while the tests run. */
int	power_start(const char *sockdir);	/* 0 when powerd answers power.status */
void	power_stop(void);
/* Mean watts and joules from t0 to t1 (now_s() clock); 0 if unavailable. */
int	power_phase(double t0, double t1, double *watts, double *joules);
/* Of the readings from t0 to t1: the share that saw disk I/O (or
 * no state), the mean busy CPU cores; -1 without readings. */
int	power_activity(double t0, double t1, double *busy_share, double *cpu_load);
/* 1 when powerd answered at the start and its readings are being taken. */
int	power_running(void);
/* 1 when the last seconds of readings saw no disk I/O. */
int	power_quiet(double seconds);
/* The readings as [[seconds since origin, watts], ...] (at most max,
 * evenly thinned), or NULL when there are none. */
struct json_object *power_series(double origin, int max);

/* html.c: the report, from the record alone. */
int	st_html(FILE *, struct json_object *record);

/* serve.c: nas-selftest serve, the selftest.* API. */
int	st_serve(int argc, char **argv);

/* net.c: iperf3 flows through libiperf against the --peers. */
#define ST_MAX_PEERS	4
/* Splits "A,B,..." into peers (at most max); -1 with err on a bad one. */
int	st_peers_parse(const char *list, char peers[][64], int max, char *err, size_t errlen);
/* flows iperf3 clients at once for seconds, up or (reverse) down; the
 * bytes their receivers counted and the longest receiving time. */
int	st_net_flows(char peers[][64], int npeers, int flows, int reverse, int seconds,
	    uint64_t *bytes, double *secs, char *err, size_t errlen);
int	st_net_ports(struct st_port_bytes *, int max);

/* factory.c and verdict.c: the production line's run (nas-selftest factory). */
#define ST_FACTORY_TESTS	"file-2g,seq-max,iops-4k-t8,power"
struct st_factory {
	char	tests[512];
	char	peers[256];
	char	volume[33];
	char	dir[201];
	double	file_mb;	/* 0: the board's */
};
/* The line's config (its [selftest] limits override the board's in l);
 * -1 with err naming the file, section and key of the first fault. */
int	st_factory_load(const char *path, struct st_factory *, struct st_limits *l, char *err,
	    size_t errlen);
/* PASS, FAIL or SKIP (measured nothing) for one row. */
const char *st_row_verdict(const struct st_result *);
/* The line's verdict: ST_EXIT_PASS only when every test named in tests
 * has rows and every row passed; a failed row or data that did not
 * verify ST_EXIT_FAIL; otherwise (norun set, a row skipped, a test
 * missing) ST_EXIT_NORUN. why gets the first reason ("" on a pass). */
int	st_factory_verdict(const struct st_result *, int n, const char *tests, const char *norun,
	    char *why, size_t whylen);
/* The word for an exit status: PASS, FAIL, INCOMPLETE. */
const char *st_verdict_word(int exit_code);
/* The board's [leds] status and fault (sysfs names under leds_dir):
 * ST_LED_RUN blinks status, ST_LED_PASS lights it, ST_LED_FAIL lights
 * fault (or blinks status fast without one). 0 when a LED was set. */
enum { ST_LED_RUN, ST_LED_PASS, ST_LED_FAIL };
int	st_leds(const char *board_ini, const char *leds_dir, int state);

/* target.c: the directory the tests write to. */
int	target_open(const struct st_run *, uint64_t need, struct st_target *, char *err,
	    size_t errlen);
void	target_close(const struct st_run *, struct st_target *);

#endif
