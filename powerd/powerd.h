/*
 * powerd: power, temperature and disk standby telemetry.
 *   api.c       method table, config schema, the sampling timer
 *   sysread.c   bounded reads of one sysfs/proc value
 *   sensor.c    hwmon and powercap sensors under a settable sysfs root
 *   model.c     board.ini [power]: the sensor to use or the power model
 *   activity.c  /proc/diskstats and /proc/stat deltas, the board's state
 *   energy.c    energy per state (trapezoid) and the ring of samples
 *   power.c     one sample of everything; power.*, sensor.list
 *   sampler.c   the sensors read on a worker thread, off the loop
 *   drive.c     disk standby timers, drive.*; sg.c the SG_IO seam
 *   diskio.c    every command to a disk on a worker thread, off the loop,
 *               the disk proven by its identity first
 *   timers.c    drive.set's standby minutes, kept in a state file
 *   sync.c      raidd's syncing volumes (no standby for their disks)
 *   thermal.c   temperature alarms, fan.set
 *   prom.c      powerd's node_exporter textfile (lib/metrics.c)
 */
#ifndef POWERD_H
#define POWERD_H

#include <stdint.h>

#include "board.h"
#include "daemon.h"
#include "feature.h"

/* api.c */
extern const struct nas_daemon powerd_daemon;
extern const struct nas_feature powerd_features[];

/* ---- sysread.c ---- */
enum rd_status {
	RD_OK,
	RD_VANISHED,	/* the file is gone (ENOENT, ENODEV, ENXIO) */
	RD_GARBAGE,	/* not one integer, or outside what the file may hold */
	RD_DENIED,	/* EACCES, EPERM (RAPL is root-only since 5.10) */
	RD_SLOW,	/* took longer than the bound: skipped for a while */
	RD_ERROR,	/* any other read error (EIO from a bus that hangs) */
	RD_STALLED	/* asked a sample ago and not answered yet (sampler.c) */
};
const char *rd_status_name(enum rd_status);
/* Time bound of one read in ms; reads that pass it mark their sensor slow. */
void	sysread_set_bound(int ms);
int	sysread_bound(void);
/*
 * Reads one integer, alone on its line, from path; RD_GARBAGE when the
 * file holds anything else or the number is outside [min, max]. *took_ms
 * gets the time the read took.
 */
enum rd_status sysread_int(const char *path, long long min, long long max,
	    long long *out, double *took_ms);
/* Reads the first line (no newline) into buf; RD_GARBAGE when empty. */
enum rd_status sysread_line(const char *path, char *buf, size_t len);
/* snprintf for paths and names; -1 when cut short (the result is still a string). */
int	pathf(char *out, size_t len, const char *fmt, ...) NAS_PRINTF(3, 4);

/* ---- sensor.c ---- */
enum sensor_kind {
	SK_POWER,	/* hwmon powerN_input, uW */
	SK_ENERGY,	/* hwmon energyN_input, uJ counter */
	SK_VI,		/* hwmon inN_input (mV) x currN_input (mA) */
	SK_RAPL,	/* powercap energy_uj, wraps at max_energy_range_uj */
	SK_TEMP,	/* m degC */
	SK_FAN,		/* rpm */
	SK_PWM,		/* 0..255 */
	SK_NKINDS
};
const char *sensor_kind_name(enum sensor_kind);
const char *sensor_kind_unit(enum sensor_kind);

#define SENSOR_MAX	128
#define SENSOR_NAME	96

struct sensor {
	char		 name[SENSOR_NAME];	/* hwmon:<chip>/<file>, powercap:<zone> */
	char		 label[48];		/* *_label, or the zone's name */
	char		 path[256];		/* relative to the sysfs root */
	char		 path2[256];		/* currN_input of a V x I pair */
	char		 device[256];		/* resolved hwmonN/device, "/sys/..." */
	enum sensor_kind kind;
	enum rd_status	 status;
	double		 value;		/* in the unit of sensor_kind_unit() */
	double		 watts;		/* energy kinds: from the last two counts */
	int		 have_watts;
	/* Counters. */
	long long	 count, max_range;
	double		 count_at;	/* monotonic seconds of count; 0: none yet */
	double		 joules;	/* counted since powerd started */
	double		 slow_until;	/* monotonic: skip reads until then */
	int		 alarm;		/* temperature: above its limit (thermal.c) */
};

struct sensor_set {
	int		 n;
	struct sensor	 s[SENSOR_MAX];
};

/* Sysfs root ("/sys" by default; tests point it at a fixture tree). */
void	sensor_set_root(const char *);
const char *sensor_root(void);
/* Finds every sensor under the root; keeps counters of those still there. */
void	sensor_scan(struct sensor_set *);
/* Reads one sensor at monotonic time now (under the root sensor_root()). */
void	sensor_read(struct sensor *, double now);
/* The same under the sysfs root top: what the sampler's worker calls. */
void	sensor_read_in(const char *top, struct sensor *, double now);
struct sensor *sensor_find(struct sensor_set *, const char *name);
/* The reading (value, status, counter, back-off) of from onto to. */
void	sensor_take_reading(struct sensor *to, const struct sensor *from);
struct json_object *sensor_describe(const struct sensor *);

/* ---- model.c ---- */
struct power_model {
	char	sensor[SENSOR_NAME];	/* "model" or a sensor name */
	char	temp_sensor[SENSOR_NAME];
	double	idle_w, cpu_w_per_load;
	double	disk_active_w, disk_idle_w, disk_standby_w;
	double	port_up_w;
	double	psu_efficiency;
};

enum disk_power { DP_ACTIVE, DP_IDLE, DP_STANDBY, DP_NSTATES };
const char *disk_power_name(enum disk_power);

/* What the model needs to know about the board at one instant. */
struct model_input {
	double	cpu_load;		/* busy cores, 0..ncpu */
	int	disks[DP_NSTATES];	/* disks in each power state */
	int	ports_up;
};

/* Loads [power] from board.ini; err "file: [power] key: why". */
int	model_load(const char *path, struct power_model *, char *err, size_t errlen);
/* Watts at the wall. */
double	model_watts(const struct power_model *, const struct model_input *);

/* ---- activity.c ---- */
enum board_state { BS_STANDBY, BS_IDLE, BS_READING, BS_WRITING, BS_MIXED, BS_NSTATES };
const char *board_state_name(enum board_state);

/*
 * Who a disk is, as the kernel recorded it when it found the disk
 * (<sysfs>/block/X/dev and device/vpd_pg80, vpd_pg83: copies the kernel
 * keeps, read without a command to the disk). Pages clipped to DISK_ID_MAX.
 */
#define DISK_ID_MAX	512
struct disk_id {
	unsigned	maj, min;	/* 0:0: unknown */
	uint16_t	len80, len83;	/* 0: the kernel has no such page */
	uint8_t		pg80[DISK_ID_MAX], pg83[DISK_ID_MAX];
};
/* Reads the identity of <sysfs>/block/<name>; 0, or -1 when it has none. */
int	disk_id_read(const char *name, struct disk_id *);
int	disk_id_same(const struct disk_id *, const struct disk_id *);

struct disk_io {
	char		name[32];	/* kernel name (sda) */
	unsigned	gen;		/* new for each disk the scan finds */
	struct disk_id	id;		/* who it was when its timer started */
	char		device[256];	/* its device, as under /sys/devices */
	int		ata;		/* behind libata: ATA commands */
	int		bay;		/* 1-based */
	int		seen;		/* counters read at least once */
	uint64_t	rd_ios, rd_sect, wr_ios, wr_sect;
	int		reading, writing;	/* in the last interval */
	enum disk_power	power;
	double		idle_since;	/* monotonic: last I/O seen */
	int		spinups;	/* estimated: standby -> I/O */
	double		standby_s;	/* seconds in standby */
	double		smart_at;	/* monotonic: last SMART read; 0: never */
	double		smart_temp;	/* -1000: none */
	long long	power_cycles;	/* -1: none */
};

struct activity {
	int		ndisks;
	struct disk_io	disk[BOARD_MAX_BAYS];
	uint64_t	cpu_busy, cpu_total;
	int		ncpu, cpu_seen;
	double		cpu_load;
	double		last_at;	/* monotonic time of the last diskstats */
};

void	activity_set_proc_root(const char *);
/* Maps the disks of <root>/block onto the board's bays (sysfs root of sensor.c). */
void	activity_scan_disks(struct activity *, const struct board *, double now);
/*
 * Applies one /proc/diskstats text: per bay disk, whether it read or
 * wrote since the last call. A disk in standby that did I/O is awake
 * again (spin-up counted). Returns 0, -1 when the text has no line for
 * a known disk (it stays as it was).
 */
int	activity_diskstats(struct activity *, const char *text, double now);
/* Applies one /proc/stat text: cpu_load in busy cores. */
int	activity_cpustat(struct activity *, const char *text);
/* Reads <proc>/diskstats and <proc>/stat and applies them. */
void	activity_sample(struct activity *, double now);
enum board_state activity_state(const struct activity *);
void	activity_model_input(const struct activity *, struct model_input *);

/* ---- energy.c ---- */
#define HISTORY_LEN	4096	/* > 1 h at the 1 s default */

struct sample {
	double		t;		/* wall clock, seconds */
	float		watts;		/* NAN: no reading */
	uint8_t		state;
};

struct energy {
	double		joules, by_j[BS_NSTATES], by_s[BS_NSTATES];
	double		last_mono, last_w;	/* last_w NAN: no reading then */
	int		have_last;
	int		head, count;
	struct sample	ring[HISTORY_LEN];
};

void	energy_reset(struct energy *);
/*
 * One reading at monotonic time mono (wall clock wall) in state st. The
 * interval since the previous reading is charged to st: its seconds
 * always, its joules (trapezoid) when both ends have a reading; joules
 * when given (>= 0, from an energy counter) replace the trapezoid.
 */
void	energy_add(struct energy *, double mono, double wall, double watts,
	    double joules, enum board_state st);
/* Samples of the last `seconds`, averaged over `step` seconds each. */
struct json_object *energy_history(const struct energy *, int seconds, int step,
	    double now_wall);

/* ---- power.c ---- */
struct power_ctx {
	struct board		board;
	struct power_model	model;
	int			have_board;
	struct sensor_set	sensors;
	struct activity		act;
	struct energy		energy;
	double			watts;		/* NAN: no reading */
	const char		*watts_error;	/* why NAN */
	char			source[SENSOR_NAME + 8];
	enum board_state	state;
	double			sampled_at;	/* wall clock of the last tick */
	double			sampled_mono;	/* monotonic */
	double			watts_at;	/* wall clock of the sample watts are from */
	double			last_scan;	/* monotonic */
	int			samples;
};

extern struct power_ctx power;
/*
 * Finishes the sample power_sample started, from power.sensors as they are
 * now (sampler.c, once the worker's readings are in; j0: the source
 * counter's joules before them, -1: none).
 */
void	power_sample_done(double j0);
/* Called when a sample is finished (api.c: the metrics file); NULL: nothing. */
extern void (*power_on_sample)(void);
/* (Re)loads the board; on error the model is kept and -1 returned. */
int	power_load_board(const char *path, char *err, size_t errlen);
/* One sample of every source at monotonic now, wall clock wall. */
void	power_sample(double now, double wall);
extern const struct rpc_method power_methods[];

/* ---- sampler.c: every sensor read on one worker thread ---- */
/*
 * The worker's reader (sensor_read_in; tests put one that waits on a gate).
 * Called on the worker only, on its own copies.
 */
extern void (*sampler_reader)(const char *top, struct sensor *, double now);
/*
 * Starts a worker that reads a copy of every sensor at monotonic now; its
 * readings replace power.sensors' and finish the sample (power_sample_done)
 * on the loop. 0, or -1 with errno (EBUSY: the last one has not answered).
 */
int	sampler_start(double now);
/* The last sample is still being read. */
int	sampler_busy(void);
/* The last sample missed its time: its answer, when it comes, finishes nothing. */
void	sampler_stall(void);
/* Waits up to ms for the worker's answer and takes it (powerd's first sample). */
void	sampler_wait(int ms);
/* A worker's pipe to the loop: fd[0] non-blocking, watched by w with cb. 0 or -1. */
int	worker_pipe(int fd[2], ev_io *w, void (*cb)(struct ev_loop *, ev_io *, int));
/* A detached thread running fn(arg), a malloc'd block: 0, or -1 with errno (arg freed). */
int	worker_start(void *(*fn)(void *), void *arg);

/* ---- sg.c: the disks' seam; called only on diskio.c's workers ---- */
struct drive_ops {
	/*
	 * Opens /dev/<name>: a descriptor, or -1 with errno (ESTALE when it
	 * is not the block device maj:min).
	 */
	int	(*open)(const char *name, unsigned maj, unsigned min);
	/* VPD page (0x80, 0x83) from the disk itself: its length (at most len), or -1. */
	int	(*vpd)(int fd, uint8_t page, uint8_t *buf, size_t len);
	/* Sends the disk to standby: 0, or -1 with errno. */
	int	(*standby)(int fd, int ata);
	/* What the disk says its power state is (DP_*), -1 when it cannot tell. */
	int	(*power_mode)(int fd, int ata);
	void	(*close)(int fd);
};
extern const struct drive_ops drive_linux;
void	sg_cdb_ata_standby(uint8_t cdb[16]);
void	sg_cdb_ata_check_power(uint8_t cdb[16]);
void	sg_cdb_scsi_standby(uint8_t cdb[6]);
void	sg_cdb_request_sense(uint8_t cdb[6], uint8_t len);
void	sg_cdb_inquiry_vpd(uint8_t cdb[6], uint8_t page, uint16_t len);
/*
 * An SG_IO header's host, driver and SCSI statuses: the SCSI status (0
 * GOOD, 2 CHECK CONDITION with its sense data), or -1 with errno when the
 * command did not complete.
 */
int	sg_io_status(unsigned host_status, unsigned driver_status, unsigned status);
/* The length of a VPD page answer (header included, at most got), or -1. */
int	sg_vpd_length(const uint8_t *buf, size_t got, uint8_t page);
int	sg_ata_power_from_sense(const uint8_t *sense, size_t len);
int	sg_scsi_power_from_sense(const uint8_t *sense, size_t len);

/* ---- drive.c ---- */
extern const struct drive_ops *drive_ops;
/* [standby] minutes and the per-bay overrides (-1: the default). */
void	drive_set_timers(int minutes, const int per_bay[BOARD_MAX_BAYS]);
int	drive_minutes(int bay);
/* drive.set's minutes (timers.c): they win over powerd.ini's. */
void	drive_set_state_file(const char *path);
/* Disks of volumes that sync, from raidd (sync.c); NULL list: unknown. */
void	drive_set_syncing(const char *const *names, int n, double now);
/* Timers: sends each disk idle past its minutes to standby. */
void	drive_tick(double now);
/*
 * SMART of awake ATA disks, every 10 min: temp_c (-1000: none) and power
 * cycles (-1: none); 0, or -1 when it could not be read. NULL: not built.
 * Called on a worker (diskio.c) only, with the descriptor the disk was
 * proven on (drive_ops->open): read through it, never through the name.
 */
extern int (*drive_smart)(int fd, double *temp_c, long long *cycles);
extern int (*const smart_linux)(int, double *, long long *);	/* smart.c */
void	drive_smart_tick(double now);
/* A standby command for the bay is in flight or waits for the bay's query. */
int	drive_standby_pending(int bay);
/* Events for disks that I/O woke; prev[i]: disk i's power before the sample. */
void	drive_note_wakes(const enum disk_power prev[], int n);
extern const struct rpc_method drive_methods[];

/* ---- timers.c: drive.set's minutes on disk ---- */
/* "bayN MINUTES" lines into out (-1: none); 0, or -1 with err and out untouched. */
int	timers_parse(const char *text, int out[BOARD_MAX_BAYS], char *err, size_t errlen);
/* The file; a missing one is none set (0). -1 with err: out all -1. */
int	timers_load(const char *path, int out[BOARD_MAX_BAYS], char *err, size_t errlen);
/* Atomically: temporary file, fsync, rename, directory fsync. 0, or -1 with errno. */
int	timers_save(const char *path, const int min[BOARD_MAX_BAYS]);

/* ---- diskio.c ---- */
enum dio_op { DIO_QUERY, DIO_STANDBY };

/* What a worker found; one write to the loop's pipe (< PIPE_BUF). */
struct dio_result {
	int		bay;
	unsigned	gen;		/* the disk_io's, when the worker started */
	int		op;		/* DIO_* */
	int		err;		/* 0, or errno; ESTALE: not the disk recorded */
	int		said;		/* power_mode's DP_*, or -1 */
	int		smart;		/* 1: temp and cycles read */
	double		temp;
	long long	cycles;
	char		name[32];
};

/*
 * Runs one command for disk d on a worker thread: DIO_QUERY asks its power
 * mode (and SMART with smart set, when it says it spins); DIO_STANDBY sends
 * it to standby. Either only after the disk behind the name is proven to be
 * d (dev_t, VPD pages against d->id); a standby is never sent without that
 * proof. The answer reaches drive_io_done on the loop. At most one worker
 * per bay: 0, or -1 with errno (EBUSY when the bay has one).
 */
int	dio_start(const struct disk_io *d, enum dio_op, int smart);
int	dio_busy(int bay);
int	dio_inflight(void);
/* The proof on a worker: 0, or -1 with errno (ESTALE on a mismatch). */
int	dio_prove(int fd, const struct disk_id *want);
/* drive.c: a worker's answer, on the loop. */
void	drive_io_done(const struct dio_result *);

/* ---- sync.c: raidd's view of syncing volumes ---- */
void	sync_set_socket(const char *path);
/* Asks raidd (volume.list) when the last answer is older than 10 s. */
void	sync_poll(double now);
/* Takes raidd's volume.list answer: the disks of syncing volumes. */
int	sync_apply(struct json_object *volumes, double now);

/* ---- thermal.c ---- */
void	thermal_set_limits(double disk_max_c, double board_max_c);
/* temp.alarm events for temperatures that passed or fell back below a limit. */
void	thermal_check(struct sensor_set *);
extern const struct rpc_method thermal_methods[];

/* ---- prom.c ---- */
/* Writes <dir>/powerd.prom; dir "" does nothing. */
int	prom_write(const char *dir);

#endif
