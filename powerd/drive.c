/*
 * Disk standby: a timer per bay from the disk's last I/O (diskstats),
 * the command through the seam (sg.c), never for a disk whose volume is
 * syncing (raidd says, sync.c), and what each disk is doing now.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "powerd.h"

#define SYNC_STALE	30.0	/* seconds an answer of raidd's stays good */
#define SMART_EVERY	600.0

const struct drive_ops *drive_ops = &drive_linux;
int (*drive_smart)(int, double *, long long *);

static int default_minutes;
static int bay_minutes[BOARD_MAX_BAYS];	/* -1: the default */
/* drive.set's choices (timers.c), above powerd.ini's; -1: none. */
static int set_minutes[BOARD_MAX_BAYS] = {
	-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
};
static char state_file[256];

static struct {
	int	known;			/* raidd answered within SYNC_STALE */
	double	at;
	int	n;
	char	names[BOARD_MAX_BAYS * 4][32];
} syncing;

void
drive_set_timers(int minutes, const int per_bay[BOARD_MAX_BAYS])
{
	default_minutes = minutes;
	memcpy(bay_minutes, per_bay, sizeof(bay_minutes));
}

void
drive_set_state_file(const char *path)
{
	char err[512];

	pathf(state_file, sizeof(state_file), "%s", path);
	/* A file that cannot be trusted counts for nothing: powerd.ini rules. */
	if (timers_load(path, set_minutes, err, sizeof(err)) == -1) {
		log_warnx("%s: ignored, drive.set's minutes forgotten", err);
		for (int i = 0; i < BOARD_MAX_BAYS; i++)
			set_minutes[i] = -1;
	}
}

int
drive_minutes(int bay)
{
	if (bay < 1 || bay > BOARD_MAX_BAYS)
		return default_minutes;
	if (set_minutes[bay - 1] >= 0)
		return set_minutes[bay - 1];
	if (bay_minutes[bay - 1] >= 0)
		return bay_minutes[bay - 1];
	return default_minutes;
}

void
drive_set_syncing(const char *const *names, int n, double now)
{
	syncing.known = names != NULL;
	syncing.at = now;
	syncing.n = 0;
	for (int i = 0; names != NULL && i < n && syncing.n < (int)(sizeof(syncing.names) /
	    sizeof(syncing.names[0])); i++)
		pathf(syncing.names[syncing.n++], sizeof(syncing.names[0]), "%s", names[i]);
}

/* NULL when the disk may sleep; else why not. */
static const char *
sync_refusal(const struct disk_io *d, double now)
{
	if (!syncing.known || now - syncing.at > SYNC_STALE)
		return "raidd does not answer: whether its volume syncs is unknown";
	for (int i = 0; i < syncing.n; i++)
		if (strcmp(syncing.names[i], d->name) == 0)
			return "its volume is resyncing, rebuilding or being scrubbed";
	return NULL;
}

static void
event(const char *topic, const struct disk_io *d, const char *reason)
{
	struct json_object *o = json_object_new_object();
	char bay[16];

	pathf(bay, sizeof(bay), "bay%d", d->bay);
	json_object_object_add(o, "disk", json_object_new_string(bay));
	json_object_object_add(o, "device", json_object_new_string(d->name));
	if (reason != NULL)
		json_object_object_add(o, "reason", json_object_new_string(reason));
	nas_event(topic, o);
}

/*
 * Per bay: what its disk last said (methods answer from this, never from
 * the disk), and the standby command in flight or waiting for the bay's
 * worker (diskio.c) to be free.
 */
static struct {
	unsigned	 gen;		/* the disk_io the answer is of; 0: none */
	int		 said;		/* DP_*, -1: it did not say */
	double		 asked_at;	/* monotonic: the last question or answer */
	double		 checked_at;	/* wall clock: the last answer; 0: none */
	int		 querying;	/* a question is in flight */
	int		 standby;	/* a standby command is in flight or waits */
	int		 waiting;	/* ... waits for the question in flight */
	unsigned	 standby_gen;
	const char	*reason;
	struct job	*job;		/* drive.standby's; NULL for the timer */
} bays[BOARD_MAX_BAYS];

static struct disk_io *
disk_of(int bay, unsigned gen)
{
	for (int i = 0; i < power.act.ndisks; i++)
		if (power.act.disk[i].bay == bay && power.act.disk[i].gen == gen)
			return &power.act.disk[i];
	return NULL;
}

/*
 * Starts the command off the loop (after the question in flight, if
 * any): 0, or -1 with errno. The disk counts as in standby only once it
 * took the command (standby_done).
 */
static int
standby(struct disk_io *d, const char *reason, struct job *job)
{
	int i = d->bay - 1;

	if (i < 0 || i >= BOARD_MAX_BAYS) {
		errno = EINVAL;
		return -1;
	}
	if (bays[i].standby) {
		errno = EBUSY;
		return -1;
	}
	if (dio_busy(d->bay))
		bays[i].waiting = 1;
	else if (dio_start(d, DIO_STANDBY, 0) == -1)
		return -1;
	bays[i].standby = 1;
	bays[i].standby_gen = d->gen;
	bays[i].reason = reason;
	bays[i].job = job;
	return 0;
}

static struct json_object *drive_describe(struct disk_io *, double);

/* The identity on the descriptor was not the one recorded: look again. */
static void
not_the_disk(const struct dio_result *r)
{
	log_warnx("bay%d: %s is not the disk its timer was for (its identity "
	    "changed): nothing sent, the bays are scanned again", r->bay, r->name);
	power.last_scan = 0;
}

static void
standby_done(int i, struct disk_io *d, int err)
{
	struct job *job = bays[i].job;
	const char *reason = bays[i].reason;

	bays[i].standby = bays[i].waiting = 0;
	bays[i].job = NULL;
	/* The disk left its bay meanwhile: nothing of it is left to update. */
	if (d == NULL) {
		if (job != NULL)
			job_fail(job, NAS_ERR_FAILED, "bay%d: the disk left the bay", i + 1);
		return;
	}
	if (err != 0) {
		if (err == ENODATA)
			log_warnx("%s: no identity (VPD page 80h or 83h) to prove the disk "
			    "by: no standby sent", d->name);
		else if (err != ESTALE)
			log_warnx("%s: standby: %s", d->name, strerror(err));
		/* Not again at every sample: a full period from now. */
		d->idle_since = power.sampled_mono;
		if (job != NULL)
			job_fail(job, NAS_ERR_FAILED, "bay%d: standby: %s", i + 1,
			    err == ESTALE ? "another disk is behind the name now" :
			    err == ENODATA ? "the disk has no identity to prove it by" :
			    strerror(err));
		return;
	}
	d->power = DP_STANDBY;
	bays[i].asked_at = -1e9;	/* ask it again */
	event("disk.standby", d, reason);
	if (job != NULL)
		job_done(job, drive_describe(d, power.sampled_mono));
}

static void
query_done(int i, struct disk_io *d, const struct dio_result *r)
{
	bays[i].querying = 0;
	if (d == NULL)
		return;
	/* 5 s from the answer: a disk slow to answer is not asked again at once. */
	bays[i].asked_at = power.sampled_mono;
	bays[i].gen = d->gen;
	bays[i].said = r->err == 0 ? r->said : -1;
	bays[i].checked_at = power.sampled_at;
	if (r->smart) {
		d->smart_temp = r->temp;
		d->power_cycles = r->cycles;
	}
	/* An ATA disk's own timer spun it down: the model counts it so. */
	if (d->ata && bays[i].said == DP_STANDBY && d->power != DP_STANDBY &&
	    !bays[i].standby) {
		d->power = DP_STANDBY;
		event("disk.standby", d, "disk");
	}
}

void
drive_io_done(const struct dio_result *r)
{
	int i = r->bay - 1;
	struct disk_io *d;

	if (i < 0 || i >= BOARD_MAX_BAYS)
		return;
	d = disk_of(r->bay, r->gen);
	if (r->err == ESTALE)
		not_the_disk(r);
	if (r->op == DIO_STANDBY) {
		if (bays[i].standby && !bays[i].waiting)
			standby_done(i, d, r->err);
		return;
	}
	query_done(i, d, r);
	/* The standby that waited for the question goes now, to its own disk. */
	if (bays[i].waiting) {
		struct disk_io *sd = disk_of(r->bay, bays[i].standby_gen);

		bays[i].waiting = 0;
		if (sd == NULL)
			standby_done(i, NULL, 0);
		else if (dio_start(sd, DIO_STANDBY, 0) == -1)
			standby_done(i, sd, errno);
	}
}

int
drive_standby_pending(int bay)
{
	return bay >= 1 && bay <= BOARD_MAX_BAYS && bays[bay - 1].standby;
}

void
drive_tick(double now)
{
	for (int i = 0; i < power.act.ndisks; i++) {
		struct disk_io *d = &power.act.disk[i];
		int min = drive_minutes(d->bay);

		if (d->power == DP_STANDBY || min == 0 || now - d->idle_since < min * 60.0 ||
		    sync_refusal(d, now) != NULL)
			continue;
		if (drive_standby_pending(d->bay))
			continue;
		if (standby(d, "timer", NULL) == -1) {
			log_warn("%s: standby", d->name);
			/* Not again at every sample: a full period from now. */
			d->idle_since = now;
		}
	}
}

/* Starts a question to the disk; 0, or -1 when its bay's worker is busy. */
static int
query(struct disk_io *d, double now, int smart)
{
	int i = d->bay - 1;

	if (i < 0 || i >= BOARD_MAX_BAYS || bays[i].standby || dio_busy(d->bay))
		return -1;
	/* Even when no worker starts: not again before 5 s, nor logged each time. */
	bays[i].asked_at = now;
	if (dio_start(d, DIO_QUERY, smart) == -1) {
		log_warn("%s: power mode", d->name);
		return -1;
	}
	bays[i].querying = 1;
	return 0;
}

void
drive_smart_tick(double now)
{
	for (int i = 0; drive_smart != NULL && i < power.act.ndisks; i++) {
		struct disk_io *d = &power.act.disk[i];

		/* SMART only where the disk says it spins: the worker asks first. */
		if (!d->ata || d->power == DP_STANDBY ||
		    (d->smart_at > 0 && now - d->smart_at < SMART_EVERY))
			continue;
		if (query(d, now, 1) == 0)
			d->smart_at = now;
	}
}

void
drive_note_wakes(const enum disk_power prev[], int n)
{
	for (int i = 0; i < n && i < power.act.ndisks; i++)
		if (prev[i] == DP_STANDBY && power.act.disk[i].power != DP_STANDBY)
			event("disk.wake", &power.act.disk[i], "io");
}

/* ---- methods ---- */

/* A bay (bay1) or a kernel name (sda, /dev/sda). */
static struct disk_io *
drive_find(const char *name)
{
	int bay;
	char end;

	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (sscanf(name, "bay%d%c", &bay, &end) == 1) {
		for (int i = 0; i < power.act.ndisks; i++)
			if (power.act.disk[i].bay == bay)
				return &power.act.disk[i];
		return NULL;
	}
	for (int i = 0; i < power.act.ndisks; i++)
		if (strcmp(power.act.disk[i].name, name) == 0)
			return &power.act.disk[i];
	return NULL;
}

/* The drivetemp reading of the disk when its chip is bound to it, else SMART's. */
static struct json_object *
temperature(const struct disk_io *d, const char **from)
{
	for (int i = 0; i < power.sensors.n; i++) {
		const struct sensor *s = &power.sensors.s[i];

		if (s->kind == SK_TEMP && d->device[0] != '\0' &&
		    strcmp(s->device, d->device) == 0 && s->status == RD_OK) {
			*from = "drivetemp";
			return json_object_new_double(s->value);
		}
	}
	if (d->smart_temp > -273) {
		*from = "smart";
		return json_object_new_double(d->smart_temp);
	}
	*from = NULL;
	return NULL;
}

/*
 * What the disk last said, from the cache; a new question (on the bay's
 * worker) when that answer is 5 s old. drive.list is open to the read
 * group: its callers decide neither how often disks are asked nor how
 * long powerd waits for one.
 */
static int
reported(struct disk_io *d, double now)
{
	int i = d->bay - 1;

	if (i < 0 || i >= BOARD_MAX_BAYS)
		return -1;
	if (bays[i].gen != d->gen || now - bays[i].asked_at >= 5 || now < bays[i].asked_at)
		(void)query(d, now, 0);
	return bays[i].gen == d->gen ? bays[i].said : -1;
}

static struct json_object *
drive_describe(struct disk_io *d, double now)
{
	struct json_object *o = json_object_new_object();
	const char *from;
	char bay[16];
	int said = reported(d, now), i = d->bay - 1;
	int fresh = i >= 0 && i < BOARD_MAX_BAYS && bays[i].gen == d->gen;

	pathf(bay, sizeof(bay), "bay%d", d->bay);
	json_object_object_add(o, "disk", json_object_new_string(bay));
	json_object_object_add(o, "device", json_object_new_string(d->name));
	json_object_object_add(o, "bay", json_object_new_int(d->bay));
	json_object_object_add(o, "transport", json_object_new_string(d->ata ? "ata" : "scsi"));
	json_object_object_add(o, "power_state",
	    json_object_new_string(disk_power_name(d->power)));
	json_object_object_add(o, "reported", said < 0 ? NULL :
	    json_object_new_string(disk_power_name(said)));
	json_object_object_add(o, "checked_at", fresh && bays[i].checked_at > 0 ?
	    json_object_new_double(bays[i].checked_at) : NULL);
	json_object_object_add(o, "checking",
	    json_object_new_boolean(i >= 0 && i < BOARD_MAX_BAYS && bays[i].querying));
	json_object_object_add(o, "idle_seconds",
	    json_object_new_double(d->power == DP_ACTIVE ? 0 : floor(now - d->idle_since)));
	json_object_object_add(o, "standby_minutes", json_object_new_int(drive_minutes(d->bay)));
	json_object_object_add(o, "spinups", json_object_new_int(d->spinups));
	json_object_object_add(o, "standby_seconds", json_object_new_double(floor(d->standby_s)));
	json_object_object_add(o, "temperature", temperature(d, &from));
	json_object_object_add(o, "temperature_from", from ? json_object_new_string(from) : NULL);
	json_object_object_add(o, "power_cycles", d->power_cycles < 0 ? NULL :
	    json_object_new_int64(d->power_cycles));
	return o;
}

/* Handlers see the time of the last sample: what they show is of then. */
static double
now_mono(void)
{
	return power.sampled_mono;
}

static void
drive_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object(), *arr = json_object_new_array();
	double now = now_mono();

	(void)params;
	for (int i = 0; i < power.act.ndisks; i++)
		json_object_array_add(arr, drive_describe(&power.act.disk[i], now));
	json_object_object_add(r, "drives", arr);
	rpc_result(c, r);
}

static void
drive_standby(struct rpc_call *c, struct json_object *params)
{
	struct disk_io *d = drive_find(rpc_param_str(params, "disk", ""));
	struct json_object *r;
	struct job *job;
	const char *why;
	double now = now_mono();
	char bay[16];
	int e;

	if (d == NULL) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no such disk in a bay");
		return;
	}
	if ((why = sync_refusal(d, now)) != NULL) {
		rpc_error(c, NAS_ERR_BUSY, "bay%d: %s", d->bay, why);
		return;
	}
	if (drive_standby_pending(d->bay)) {
		rpc_error(c, NAS_ERR_BUSY, "bay%d: a standby command is in flight", d->bay);
		return;
	}
	pathf(bay, sizeof(bay), "bay%d", d->bay);
	if ((job = job_start("drive.standby", bay, NULL, NULL)) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "bay%d: %s", d->bay, strerror(errno));
		return;
	}
	if (standby(d, "request", job) == -1) {
		e = errno;
		job_fail(job, NAS_ERR_FAILED, "bay%d: standby: %s", d->bay, strerror(e));
		rpc_error(c, NAS_ERR_FAILED, "bay%d: standby: %s", d->bay, strerror(e));
		return;
	}
	r = drive_describe(d, now);
	json_object_object_add(r, "job", json_object_new_int((int)job_id(job)));
	rpc_result(c, r);
}

static void
drive_set(struct rpc_call *c, struct json_object *params)
{
	struct disk_io *d = drive_find(rpc_param_str(params, "disk", ""));
	int next[BOARD_MAX_BAYS];

	if (d == NULL) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no such disk in a bay");
		return;
	}
	/* On disk first: a choice that would not survive a restart changes nothing. */
	memcpy(next, set_minutes, sizeof(next));
	next[d->bay - 1] = (int)rpc_param_int(params, "standby_minutes", 0);
	if (timers_save(state_file, next) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s: %s", state_file, strerror(errno));
		return;
	}
	memcpy(set_minutes, next, sizeof(next));
	rpc_result(c, drive_describe(d, now_mono()));
}

static const struct rpc_param disk_params[] = {
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 32, NULL, "bay (bay1) or kernel name (sda)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param set_params[] = {
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 32, NULL, "bay (bay1) or kernel name (sda)" },
	{ "standby_minutes", RPC_INT, RPC_REQUIRED, -1, 1440, NULL,
	  "idle minutes before standby; 0: never; -1: powerd.ini's again" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method drive_methods[] = {
	{ "drive.list", drive_list, NULL, 0,
	  "bay disks: power state, idle time, standby timer, temperature" },
	{ "drive.standby", drive_standby, disk_params, RPC_MUTATES,
	  "spin a disk down now (not while its volume syncs)" },
	{ "drive.set", drive_set, set_params, RPC_MUTATES,
	  "a bay's standby timer, kept in [standby] state_file" },
	{ NULL, NULL, NULL, 0, NULL }
};
