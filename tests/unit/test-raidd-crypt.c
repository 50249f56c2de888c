/*
 * raidd's encrypted volumes on the simulated kernel and the simulated
 * cryptd (raidd/crypt-sim.c): create, locked after a reboot, unlock,
 * lock, delete, refusals, other calls answered while an unlock waits
 * for cryptd, and a power cut at every step of an encrypted create.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job.h"
#include "keyfile.h"
#include "log.h"
#include <fcntl.h>
#include "raidd/crypt.h"
#include "raidd/plan-grow.h"
#include "raidd/system-sim.h"
#include "raidd/volume.h"
#include "tests/unit/raidd-util.h"
#include "tests/unit/unit-util.h"
#include "tests/unit/unit-raidd.h"

#define CUT_POINTS	40
#define GROW_CUTS	60
#define TWO_JOIN_CUTS	59	/* the two joins' 57 writes, and one more */
#define PASS		"correct horse battery"

static struct rpc_server *srv;
static const struct rpc_peer root = { .uid = 0, .gid = 0 };

static void
setup(void)
{
	raidd_sim_setup(4ULL << 30, "CRY", 0);
	crypt_sim_reset();
	add_set_poll(0);
	srv = rpc_server_new("raidd", "test");
	rpc_server_add_methods(srv, disk_methods);
	rpc_server_add_methods(srv, volume_methods);
	rpc_server_add_methods(srv, crypt_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	job_reset();
}

static struct json_object *
call(const char *method, const char *params)
{
	return unit_call(srv, &root, method, params);
}

/* The job id of an answer that started one (the answer is freed). */
static unsigned
job_of(struct json_object *a)
{
	struct json_object *r, *id;
	unsigned n;

	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "job", &id);
	n = (unsigned)json_object_get_int(id);
	json_object_put(a);
	return n;
}

static enum job_state
run_job(unsigned id)
{
	struct job *j = job_find(id);

	ck_assert_ptr_nonnull(j);
	for (int i = 0; i < 1000 && job_state(j) == JOB_RUNNING; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	return job_state(j);
}

static unsigned
create_encrypted(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "{\"name\":\"%s\",\"level\":\"raid1\",\"disks\":[\"bay1\","
	    "\"bay2\"],\"encrypt\":true,\"passphrase\":\"" PASS "\"}", name);
	return job_of(call("volume.create", p));
}

static unsigned
unlock(const char *name, const char *pass)
{
	char p[256];

	snprintf(p, sizeof(p), "{\"name\":\"%s\",\"passphrase\":\"%s\"}", name, pass);
	return job_of(call("volume.unlock", p));
}

static void
reboot(void)
{
	sim_power_cut();
	volume_reset();
	job_reset();
	disk_refresh(0);
	volume_scan();
}

/* "encrypted" and "locked" of volume.show. */
static void
assert_shown(const char *name, int locked)
{
	char p[64];
	struct json_object *a, *r, *e, *l;

	snprintf(p, sizeof(p), "{\"name\":\"%s\"}", name);
	a = call("volume.show", p);
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_object_get_ex(a, "result", &r);
	ck_assert(json_object_object_get_ex(r, "encrypted", &e));
	ck_assert(json_object_get_boolean(e));
	ck_assert(json_object_object_get_ex(r, "locked", &l));
	ck_assert_int_eq(json_object_get_boolean(l), locked);
	json_object_put(a);
}

static int
code_of(const char *method, const char *params)
{
	struct json_object *a = call(method, params);
	int c = unit_err_code(a);

	json_object_put(a);
	return c;
}

START_TEST(create_reboot_locked_unlock_lock)
{
	struct volume *v;
	struct json_object *a;
	struct job *j;
	unsigned id;

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	v = volume_find("sec");
	ck_assert_ptr_nonnull(v);
	ck_assert(v->label.flags & LABEL_F_ENCRYPTED);
	ck_assert_int_eq(crypt_sim_formats(), 1);
	ck_assert_int_eq(sim_dm_count(), 2);	/* the joined map, the crypt map on it */
	ck_assert_int_eq(sim_mount_count(), 1);
	assert_shown("sec", 0);

	/* From the disks alone: found, assembled, locked, not mounted. */
	reboot();
	v = volume_find("sec");
	ck_assert_ptr_nonnull(v);
	ck_assert(v->assembled);
	ck_assert_int_eq(v->state, VOL_CLEAN);
	ck_assert_int_eq(sim_mount_count(), 0);
	ck_assert_int_eq(sim_dm_count(), 1);
	assert_shown("sec", 1);
	ck_assert_int_eq(code_of("volume.mount", "{\"name\":\"sec\"}"), NAS_ERR_FAILED);
	ck_assert_int_eq(sim_mount_count(), 0);

	/* A wrong passphrase: refused with cryptd's code, still locked. */
	id = unlock("sec", "wrong horse");
	ck_assert_int_eq(run_job(id), JOB_FAILED);
	a = job_describe(job_find(id));
	ck_assert_ptr_null(strstr(json_object_to_json_string(a), "wrong horse"));
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a), "-32001"));
	json_object_put(a);
	assert_shown("sec", 1);
	ck_assert_ptr_null(volume_find("sec")->job);

	ck_assert_int_eq(run_job(unlock("sec", PASS)), JOB_DONE);
	assert_shown("sec", 0);
	ck_assert_int_eq(sim_mount_count(), 1);
	ck_assert_int_eq(code_of("volume.unlock", "{\"name\":\"sec\",\"passphrase\":\"x\"}"),
	    NAS_ERR_EXISTS);

	a = call("volume.lock", "{\"name\":\"sec\"}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	assert_shown("sec", 1);
	ck_assert_int_eq(sim_mount_count(), 0);
	ck_assert_int_eq(sim_dm_count(), 1);
	/* Locking a locked volume changes nothing. */
	ck_assert_int_eq(code_of("volume.lock", "{\"name\":\"sec\"}"), 0);
	j = job_find(unlock("sec", PASS));
	ck_assert_int_eq(run_job(job_id(j)), JOB_DONE);
	ck_assert_int_eq(sim_mount_count(), 1);
}
END_TEST

START_TEST(refusals_change_nothing)
{
	ck_assert_int_eq(code_of("volume.create", "{\"name\":\"v\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"],\"encrypt\":true}"), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code_of("volume.create", "{\"name\":\"v\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"],\"passphrase\":\"p\"}"), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code_of("volume.create", "{\"name\":\"v\",\"level\":\"raid1\","
	    "\"disks\":[\"bay1\",\"bay2\"],\"encrypt\":true,\"passphrase\":\"\"}"),
	    RPC_INVALID_PARAMS);
	ck_assert_int_eq(volume_count(), 0);
	ck_assert_int_eq(sim_ops(), 0);
	ck_assert_int_eq(code_of("volume.unlock", "{\"name\":\"v\",\"passphrase\":\"p\"}"),
	    NAS_ERR_NOT_FOUND);
	raidd_create(srv, "plain", "raid1", "\"bay3\",\"bay4\"");
	ck_assert_int_eq(code_of("volume.unlock", "{\"name\":\"plain\",\"passphrase\":\"p\"}"),
	    NAS_ERR_INVALID);
	ck_assert_int_eq(code_of("volume.lock", "{\"name\":\"plain\"}"), NAS_ERR_INVALID);
	ck_assert_int_eq(sim_mount_count(), 1);
	ck_assert_int_eq(crypt_sim_formats(), 0);
}
END_TEST

/* An encrypted volume is not grown: its crypt mapping would keep the old size. */
/* Without its passphrase an encrypted volume does not grow: nothing is touched. */
START_TEST(grow_refused_for_encrypted)
{
	int ops;

	ck_assert_int_eq(run_job(create_encrypted("g")), JOB_DONE);
	sim_grow_disk("sda", 8ULL << 30);
	sim_grow_disk("sdb", 8ULL << 30);
	disk_refresh(0);
	ops = sim_ops();
	ck_assert_int_eq(code_of("volume.grow", "{\"name\":\"g\"}"), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code_of("volume.grow", "{\"name\":\"g\",\"passphrase\":\"" PASS "\","
	    "\"keyfile\":\"/k\"}"), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code_of("volume.add_disk", "{\"name\":\"g\",\"disk\":\"bay3\"}"),
	    RPC_INVALID_PARAMS);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_int_eq(crypt_sim_resizes(), 0);
	ck_assert_ptr_null(volume_find("g")->job);
}
END_TEST

/* ---- growing an encrypted volume (Decision 115) ---- */

#define GROW_G		"{\"name\":\"g\",\"passphrase\":\"" PASS "\"}"
#define LUKS_HEAD	(16ULL << 20)

/* The loop until no job runs, md's reshapes of vol's tiers moving on. */
static void
run_all(const char *vol)
{
	const struct volume *v;
	char md[SYS_NAME_MAX];

	for (int i = 0; i < 3000 && job_running_count() > 0; i++) {
		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; (v = volume_find(vol)) != NULL && t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_reshape_step(md, 1ULL << 20);
		}
	}
	ck_assert_int_eq(job_running_count(), 0);
}

/* The code of a failed job's error (job_describe's error.code). */
static int
job_err_code(const struct job *j)
{
	struct json_object *d = job_describe(j), *e, *c;
	int code = 0;

	if (json_object_object_get_ex(d, "error", &e) && json_object_object_get_ex(e, "code", &c))
		code = json_object_get_int(c);
	json_object_put(d);
	return code;
}

static uint64_t
size_of(const char *dev)
{
	uint64_t size = 0;

	ck_assert_int_eq(sys->dev_size(dev, &size), 0);
	return size;
}

/*
 * Every layer of an encrypted vol at its label's size: the joined map,
 * the crypt mapping over it less the header, the filesystem on the
 * mapping; the intent cleared, the data there.
 */
static void
check_grown(const char *vol, uint64_t size)
{
	struct volume *v = volume_find(vol);
	char cm[SYS_NAME_MAX];

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(v->state == VOL_CLEAN, "%s: %s", volume_state_name(v->state), v->problem);
	ck_assert_msg(v->label.intent.op == LABEL_OP_NONE, "intent %d: %s", v->label.intent.op,
	    v->problem);
	ck_assert_uint_eq(v->label.size, size);
	ck_assert_uint_eq(unit_raidd_dm_size(vol), size);
	crypt_map_name(vol, cm, sizeof(cm));
	ck_assert_uint_eq(size_of(cm), size - LUKS_HEAD);
	ck_assert_uint_eq(sim_fs_size(cm), size - LUKS_HEAD);
	ck_assert_int_eq(sim_mount_count(), 1);
	unit_raidd_pattern(cm, 1ULL << 30, 0);
}

/* An encrypted raid1 of g, the pattern on its mapping, its disks bigger. */
static uint64_t
make_grown_disks(void)
{
	char cm[SYS_NAME_MAX];
	uint64_t was;

	ck_assert_int_eq(run_job(create_encrypted("g")), JOB_DONE);
	was = volume_find("g")->label.size;
	crypt_map_name("g", cm, sizeof(cm));
	unit_raidd_pattern(cm, 1ULL << 30, 1);
	sim_grow_disk("sda", 8ULL << 30);
	sim_grow_disk("sdb", 8ULL << 30);
	disk_refresh(0);
	return was;
}

static void
raidd_log_to(const char *path, int *saved)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	*saved = dup(2);
	dup2(fd, 2);
	close(fd);
	log_init("test", 1, 0);
	log_set_level(LOG_LVL_DEBUG);
}

static int
file_has(const char *path, const char *what)
{
	char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, what) != NULL;
}

START_TEST(grow_encrypted_raid1)
{
	char log[] = "/tmp/raidd-crypt-grow-XXXXXX";
	uint64_t was = make_grown_disks(), want;
	int saved, fd;

	ck_assert_int_ge(fd = mkstemp(log), 0);
	close(fd);
	raidd_log_to(log, &saved);
	ck_assert_int_eq(run_job(job_of(call("volume.grow", GROW_G))), JOB_DONE);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	want = volume_find("g")->label.size;
	ck_assert_uint_gt(want, was);
	check_grown("g", want);
	/* Once to prove the passphrase, once after the map grew. */
	ck_assert_int_eq(crypt_sim_resizes(), 2);
	ck_assert(file_has(log, "grown"));
	ck_assert(!file_has(log, PASS));
	unlink(log);
	/* Locked after a start, the passphrase opens it at the new size. */
	reboot();
	assert_shown("g", 1);
	ck_assert_int_eq(run_job(unlock("g", PASS)), JOB_DONE);
	check_grown("g", want);
}
END_TEST

START_TEST(grow_wrong_passphrase_writes_nothing)
{
	uint64_t was = make_grown_disks();
	unsigned gen = volume_find("g")->label.generation;
	int ops = sim_ops();
	struct job *j;
	unsigned id;

	id = job_of(call("volume.grow", "{\"name\":\"g\",\"passphrase\":\"wrong\"}"));
	ck_assert_int_eq(run_job(id), JOB_FAILED);
	j = job_find(id);
	ck_assert_int_eq(job_err_code(j), NAS_ERR_DENIED);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_uint_eq(volume_find("g")->label.generation, gen);
	ck_assert_int_eq(volume_find("g")->label.intent.op, LABEL_OP_NONE);
	ck_assert_uint_eq(unit_raidd_dm_size("g"), was);
	ck_assert_ptr_null(volume_find("g")->job);
	/* The right one then grows it. */
	ck_assert_int_eq(run_job(job_of(call("volume.grow", GROW_G))), JOB_DONE);
	check_grown("g", volume_find("g")->label.size);
}
END_TEST

START_TEST(grow_locked_refused)
{
	int ops;

	make_grown_disks();
	ck_assert_int_eq(code_of("volume.lock", "{\"name\":\"g\"}"), 0);
	ops = sim_ops();
	ck_assert_int_eq(code_of("volume.grow", GROW_G), NAS_ERR_REFUSED);
	ck_assert_int_eq(code_of("volume.add_disk", "{\"name\":\"g\",\"disk\":\"bay3\","
	    "\"passphrase\":\"" PASS "\"}"), NAS_ERR_REFUSED);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_int_eq(crypt_sim_resizes(), 0);
	/* Not encrypted: no passphrase taken. */
	ck_assert_ptr_nonnull(raidd_create(srv, "plain", "raid1", "\"bay3\",\"bay4\""));
	ck_assert_int_eq(code_of("volume.grow", "{\"name\":\"plain\",\"passphrase\":\"x\"}"),
	    RPC_INVALID_PARAMS);
}
END_TEST

/*
 * The power goes after the k-th step of a grow: the volume comes back
 * locked; the unlock carries the grow on (the mapping opened at the
 * map's full size), or, cut before the intent, the grow is asked again.
 */
/*
 * A cut loop's measure: the writes since from, fewer than cuts.  1 when
 * cut k lies past them (nothing left to cut); else the fixture is made
 * anew for the run that cuts at k.
 */
static int
cut_past_end(int from, int k, int cuts)
{
	int total = sim_ops() - from;

	ck_assert_int_lt(total, cuts);
	if (k > total)
		return 1;
	teardown();
	setup();
	return 0;
}

/* The power cut, the start's jobs run, vol unlocked (if it came back locked) and its jobs run. */
static struct volume *
reboot_unlocked(const char *vol)
{
	struct volume *v;

	reboot();
	run_all(vol);
	v = volume_find(vol);
	ck_assert_ptr_nonnull(v);
	if (crypt_locked(v))
		ck_assert_int_eq(run_job(unlock(vol, PASS)), JOB_DONE);
	run_all(vol);
	return v;
}

START_TEST(power_cut_during_encrypted_grow)
{
	int total, k = _i;
	uint64_t was, want;
	struct volume *v;

	was = make_grown_disks();
	total = sim_ops();
	ck_assert_int_eq(run_job(job_of(call("volume.grow", GROW_G))), JOB_DONE);
	want = volume_find("g")->label.size;
	if (cut_past_end(total, k, GROW_CUTS))
		return;
	was = make_grown_disks();
	sim_fail_after(k);
	run_job(job_of(call("volume.grow", GROW_G)));
	reboot();
	run_all("g");
	v = volume_find("g");
	ck_assert_ptr_nonnull(v);
	assert_shown("g", 1);
	/* Stopped where the mapping is needed; the problem says what goes on. */
	if (v->label.intent.op == LABEL_OP_EXPANDING)
		ck_assert_msg(strstr(v->problem, "volume.unlock carries it on"), "%s", v->problem);
	ck_assert_int_eq(run_job(unlock("g", PASS)), JOB_DONE);
	run_all("g");
	if (v->label.intent.op == LABEL_OP_NONE && v->label.size == was) {
		ck_assert_uint_eq(unit_raidd_dm_size("g"), was);
		ck_assert_int_eq(run_job(job_of(call("volume.grow", GROW_G))), JOB_DONE);
	}
	check_grown("g", want);
}
END_TEST

#define RAID5_E	"{\"name\":\"e\",\"level\":\"raid5\",\"disks\":[\"bay1\",\"bay2\"," \
		"\"bay3\"],\"encrypt\":true,\"passphrase\":\"" PASS "\"}"
#define ADD_E	"{\"name\":\"e\",\"disk\":\"bay4\",\"passphrase\":\"" PASS "\"}"

static uint64_t
make_raid5(void)
{
	char cm[SYS_NAME_MAX];

	ck_assert_int_eq(run_job(job_of(call("volume.create", RAID5_E))), JOB_DONE);
	crypt_map_name("e", cm, sizeof(cm));
	unit_raidd_pattern(cm, 1ULL << 30, 1);
	return volume_find("e")->label.size;
}

START_TEST(add_disk_to_encrypted_raid5)
{
	uint64_t was = make_raid5();

	ck_assert_int_eq(code_of("volume.add_disk", "{\"name\":\"e\",\"disk\":\"bay4\","
	    "\"passphrase\":\"wrong\"}"), 0);
	run_all("e");
	ck_assert_int_eq(volume_find("e")->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(volume_find("e")->label.ndisks, 3);
	ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
	run_all("e");
	ck_assert_int_eq(volume_find("e")->label.ndisks, 4);
	check_grown("e", was / 2 * 3);
	reboot();
	ck_assert_int_eq(run_job(unlock("e", PASS)), JOB_DONE);
	check_grown("e", was / 2 * 3);
}
END_TEST

/* As for the grow: after a cut anywhere, unlocked, the add ends with every layer grown. */
START_TEST(power_cut_during_encrypted_add)
{
	int total, k = _i;
	uint64_t was;
	struct volume *v;

	was = make_raid5();
	total = sim_ops();
	ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
	run_all("e");
	if (cut_past_end(total, k, GROW_CUTS))
		return;
	was = make_raid5();
	sim_fail_after(k);
	ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
	run_all("e");
	v = reboot_unlocked("e");
	/* Unlocked before md had finished: the mapping is the old map's size,
	   and the add stops for the passphrase, asked again. */
	if (v->label.intent.op == LABEL_OP_ADDING) {
		ck_assert_msg(strstr(v->problem, "passphrase"), "%s", v->problem);
		ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
		run_all("e");
	}
	if (v->label.intent.op == LABEL_OP_NONE && v->label.ndisks == 3) {
		ck_assert_int_eq(code_of("volume.add_disk", "{\"name\":\"e\",\"disk\":\"bay4\","
		    "\"force\":true,\"passphrase\":\"" PASS "\"}"), 0);
		run_all("e");
	}
	check_grown("e", was / 2 * 3);
}
END_TEST

/*
 * An encrypted add stopped before the new disk's label (a write to it
 * failed), the disk then given a filesystem: asked again with force and
 * a wrong passphrase, nothing is written, the disk's data included, and
 * "nothing was changed" is true (Decision 121; the old code erased the
 * disk before the proof).  _i 0: the right passphrase then carries the
 * add on; 1: a member failed meanwhile, and the wrong passphrase does
 * not undo the add either, the right one does.
 */
START_TEST(carry_on_wrong_passphrase_writes_nothing)
{
	static const uint8_t ext4[2] = { 0x53, 0xef };
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	uint64_t was = make_raid5();
	struct volume *v = volume_find("e");
	unsigned gen, id;
	uint8_t got[2];
	int ops;

	sim_disk_error("sdd", 1);
	ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
	run_all("e");
	sim_disk_error("sdd", 0);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_lt(v->label.intent.step, 6);
	ck_assert_int_eq(sys->write_at("sdd", 1080, ext4, 2), 0);
	disk_refresh(0);
	volume_md_name(v, 0, md, sizeof(md));
	if (_i == 1) {
		ck_assert_int_eq(sys->part_dev(v->disk[1], v->mlabel[1].tier[0].start, dev,
		    sizeof(dev)), 0);
		sim_fail_member(md, dev);
	}
	gen = v->label.generation;
	ops = sim_ops();
	id = job_of(call("volume.add_disk", "{\"name\":\"e\",\"disk\":\"bay4\","
	    "\"force\":true,\"passphrase\":\"wrong\"}"));
	ck_assert_int_eq(run_job(id), JOB_FAILED);
	ck_assert_int_eq(job_err_code(job_find(id)), NAS_ERR_DENIED);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_int_eq(sys->read_at("sdd", 1080, got, 2), 0);
	ck_assert_mem_eq(got, ext4, 2);
	ck_assert_uint_eq(v->label.generation, gen);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_ptr_null(v->job);
	id = job_of(call("volume.add_disk", "{\"name\":\"e\",\"disk\":\"bay4\","
	    "\"force\":true,\"passphrase\":\"" PASS "\"}"));
	if (_i == 1) {
		ck_assert_int_eq(run_job(id), JOB_FAILED);
		ck_assert_int_eq(job_err_code(job_find(id)), NAS_ERR_REFUSED);
		ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
		ck_assert_int_eq(v->label.ndisks, 3);
		ck_assert_ptr_null(v->job);
		return;
	}
	run_all("e");
	check_grown("e", was / 2 * 3);
}
END_TEST

/*
 * An encrypted raid5 with no filesystem, the power cut while md
 * reshapes onto a fourth disk: the start carries the add on without a
 * key and stops at "opening the volume" as one with a filesystem does,
 * so no job is held for the rest of the reshape and volume.unlock is
 * not refused meanwhile (Decision 122; the old code held the job, the
 * unlock refused busy).  The unlock then carries the add on; md done,
 * the call with the passphrase grows the mapping.
 */
START_TEST(keyless_resume_without_fs_holds_no_job)
{
	char md[SYS_NAME_MAX];
	struct sys_md_status st;
	struct volume *v;

	ck_assert_int_eq(run_job(job_of(call("volume.create", "{\"name\":\"e\","
	    "\"level\":\"raid5\",\"disks\":[\"bay1\",\"bay2\",\"bay3\"],\"fs\":\"none\","
	    "\"encrypt\":true,\"passphrase\":\"" PASS "\"}"))), JOB_DONE);
	v = volume_find("e");
	volume_md_name(v, 0, md, sizeof(md));
	ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
	for (int i = 0; i < 100; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE | EVRUN_NOWAIT);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.sync_action, "reshape");
	sim_md_reshape_step(md, st.sync_total / 3);
	reboot();
	for (int i = 0; i < 100; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE | EVRUN_NOWAIT);
	v = volume_find("e");
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_int_eq(sys->md_status(md, &st), 0);
	ck_assert_str_eq(st.sync_action, "reshape");
	ck_assert_int_eq(job_running_count(), 0);
	ck_assert_msg(strstr(v->problem, "volume.unlock carries it on"), "%s", v->problem);
	ck_assert_int_eq(run_job(unlock("e", PASS)), JOB_DONE);
	run_all("e");
	if (v->label.intent.op == LABEL_OP_ADDING) {
		ck_assert_msg(strstr(v->problem, "passphrase"), "%s", v->problem);
		ck_assert_int_eq(code_of("volume.add_disk", ADD_E), 0);
		run_all("e");
	}
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.ndisks, 4);
}
END_TEST

/*
 * The passphrase is changed (key.change) while md reshapes an add: the
 * job's passphrase, proven at the start, is not tried again at the end
 * (its keyslot is gone: cryptd refuses it untried), so no back-off step
 * is spent and the new passphrase is taken at once (Decision 123; the
 * old code tried the stale one, a back-off step).  The add stops saying
 * so, and the call with the new passphrase finishes it.
 */
START_TEST(passphrase_changed_during_add_costs_no_backoff)
{
	char dm[SYS_NAME_MAX];
	uint64_t was = make_raid5();
	struct volume *v = volume_find("e");
	unsigned id;

	id = job_of(call("volume.add_disk", ADD_E));
	for (int i = 0; i < 100; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE | EVRUN_NOWAIT);
	ck_assert_int_eq(job_state(job_find(id)), JOB_RUNNING);
	volume_dm_name("e", dm, sizeof(dm));
	ck_assert_int_eq(crypt_sim_key_change(dm, "a new one"), 0);
	run_all("e");
	ck_assert_int_eq(job_state(job_find(id)), JOB_FAILED);
	ck_assert_int_eq(crypt_sim_denials(), 0);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_ADDING);
	ck_assert_msg(strstr(v->problem, "passphrase was changed"), "%s", v->problem);
	ck_assert_int_eq(code_of("volume.add_disk", "{\"name\":\"e\",\"disk\":\"bay4\","
	    "\"passphrase\":\"a new one\"}"), 0);
	run_all("e");
	ck_assert_int_eq(crypt_sim_denials(), 0);
	check_grown("e", was / 2 * 3);
}
END_TEST

/* The unlock waits for cryptd; raidd answers everyone meanwhile. */
START_TEST(calls_answered_while_unlocking)
{
	struct json_object *a;
	unsigned id;

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	reboot();
	id = unlock("sec", PASS);
	ck_assert_int_eq(job_state(job_find(id)), JOB_RUNNING);
	a = call("volume.list", "{}");
	ck_assert_int_eq(unit_err_code(a), 0);
	json_object_put(a);
	ck_assert_int_eq(code_of("volume.unlock", "{\"name\":\"sec\",\"passphrase\":\"p\"}"),
	    NAS_ERR_BUSY);
	ck_assert_int_eq(code_of("volume.delete", "{\"name\":\"sec\",\"confirm\":\"sec\"}"),
	    NAS_ERR_BUSY);
	ck_assert_int_eq(code_of("volume.lock", "{\"name\":\"sec\"}"), NAS_ERR_BUSY);
	ck_assert_int_eq(run_job(id), JOB_DONE);
	assert_shown("sec", 0);
}
END_TEST

START_TEST(delete_closes_the_mapping)
{
	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	ck_assert_int_eq(code_of("volume.delete", "{\"name\":\"sec\",\"confirm\":\"sec\"}"), 0);
	ck_assert_int_eq(sim_dm_count(), 0);
	ck_assert_int_eq(sim_md_count(), 0);
	ck_assert_ptr_null(volume_find("sec"));
}
END_TEST

/* The joined map stays busy while the crypt map sits on it, as in the kernel. */
START_TEST(joined_map_busy_under_crypt)
{
	char dm[64];

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	volume_dm_name("sec", dm, sizeof(dm));
	ck_assert_int_eq(sys->dm_remove(dm), -1);
	ck_assert_int_eq(errno, EBUSY);
}
END_TEST

/* Volume "a-crypt"'s joined map is no lock state or mapping of volume "a". */
START_TEST(name_of_another_volume_is_not_a_mapping)
{
	char p[256];

	snprintf(p, sizeof(p), "{\"name\":\"a\",\"level\":\"raid1\",\"disks\":[\"bay1\","
	    "\"bay2\"],\"encrypt\":true,\"passphrase\":\"" PASS "\"}");
	ck_assert_int_eq(run_job(job_of(call("volume.create", p))), JOB_DONE);
	ck_assert_int_eq(code_of("volume.lock", "{\"name\":\"a\"}"), 0);
	raidd_create(srv, "a-crypt", "raid1", "\"bay3\",\"bay4\"");
	assert_shown("a", 1);
	ck_assert_int_eq(code_of("volume.lock", "{\"name\":\"a\"}"), 0);
	ck_assert_ptr_nonnull(volume_find("a-crypt"));
	ck_assert_int_eq(sim_mount_count(), 1);	/* a-crypt's, still mounted */
	ck_assert_int_eq(run_job(unlock("a", PASS)), JOB_DONE);
	ck_assert_int_eq(sim_mount_count(), 2);
}
END_TEST

/* A wrong cryptd answer during create rolls back: the disks are free. */
START_TEST(create_rolled_back_when_cryptd_refuses)
{
	char name[64];
	struct sys_seg seg = { .offset = 0, .len = 1 << 20 };
	struct json_object *o;

	/* Someone holds the mapping name: cryptd says EXISTS. */
	snprintf(seg.dev, sizeof(seg.dev), "sdc");
	crypt_map_name("sec", name, sizeof(name));
	ck_assert_int_eq(sys->dm_create(name, "x", &seg, 1), 0);
	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_FAILED);
	ck_assert_ptr_null(volume_find("sec"));
	ck_assert_int_eq(sim_md_count(), 0);
	disk_refresh(0);
	o = disk_describe(disk_find("bay1"));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "state")), "free");
	json_object_put(o);
}
END_TEST

/* Runs the loop while the volume has a job. */
static void
run_volume_job(const char *name)
{
	for (int i = 0; i < 1000 && volume_find(name) && volume_find(name)->job; i++)
		ev_run(EV_DEFAULT, EVRUN_ONCE);
}

static char *
key_file(const char *dir, const char *text, mode_t mode)
{
	char *path = unit_write(dir, "sec.key", text);

	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

START_TEST(auto_unlock_from_a_key_file)
{
	char *dir = unit_tmpdir(), *path, slashed[600];

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	crypt_sim_file_dirs(dir);
	reboot();
	/* No file yet (the stick is not in): locked, tried again later.
	 * keyfile_dir written with a trailing slash is the same directory
	 * (cryptd refuses the "//" the slash would make). */
	snprintf(slashed, sizeof(slashed), "%s/", dir);
	crypt_auto_start(slashed);
	crypt_auto_tick();
	ck_assert_ptr_null(volume_find("sec")->job);
	assert_shown("sec", 1);
	path = key_file(dir, PASS, 0600);
	crypt_auto_tick();
	ck_assert_ptr_nonnull(volume_find("sec")->job);
	run_volume_job("sec");
	assert_shown("sec", 0);
	ck_assert_int_eq(sim_mount_count(), 1);
	free(path);
	crypt_auto_start("");
	unit_rmtree(dir);
	free(dir);
}
END_TEST

/* Readable by others, or in a directory others may write: never handed to cryptd. */
/*
 * volume.grow with a key file instead of the passphrase: cryptd reads it,
 * only under its file_dirs and only a file nobody but root could read
 * (Decision 129); every refusal leaves the volume as it was.
 */
START_TEST(grow_with_a_key_file)
{
	char *dir = unit_tmpdir(), *elsewhere = unit_tmpdir(), *path, p[512];

	make_grown_disks();
	crypt_sim_file_dirs(dir);
	path = key_file(elsewhere, PASS, 0600);
	snprintf(p, sizeof(p), "{\"name\":\"g\",\"keyfile\":\"%s\"}", path);
	ck_assert_int_eq(run_job(job_of(call("volume.grow", p))), JOB_FAILED);
	ck_assert_int_eq(volume_find("g")->label.intent.op, LABEL_OP_NONE);
	free(path);
	path = key_file(dir, PASS, 0640);
	snprintf(p, sizeof(p), "{\"name\":\"g\",\"keyfile\":\"%s\"}", path);
	ck_assert_int_eq(run_job(job_of(call("volume.grow", p))), JOB_FAILED);
	ck_assert_int_eq(volume_find("g")->label.intent.op, LABEL_OP_NONE);
	free(path);
	path = key_file(dir, "not it", 0600);
	ck_assert_int_eq(run_job(job_of(call("volume.grow", p))), JOB_FAILED);
	ck_assert_int_eq(volume_find("g")->label.intent.op, LABEL_OP_NONE);
	free(path);
	path = key_file(dir, PASS, 0600);
	ck_assert_int_eq(run_job(job_of(call("volume.grow", p))), JOB_DONE);
	check_grown("g", volume_find("g")->label.size);
	ck_assert_int_eq(code_of("volume.grow", "{\"name\":\"g\",\"keyfile\":\"rel\"}"),
	    RPC_INVALID_PARAMS);
	free(path);
	unit_rmtree(elsewhere);
	free(elsewhere);
	unit_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(auto_unlock_refuses_a_key_file_others_can_reach)
{
	char *dir = unit_tmpdir(), *path;

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	crypt_sim_file_dirs(dir);
	reboot();
	ck_assert_int_eq(chmod(dir, 0700), 0);
	path = key_file(dir, PASS, 0640);
	crypt_auto_start(dir);
	crypt_auto_tick();
	ck_assert_ptr_null(volume_find("sec")->job);
	assert_shown("sec", 1);
	/* Tried once per start: fixing the mode needs a reload (SIGHUP). */
	ck_assert_int_eq(chmod(path, 0604), 0);
	crypt_auto_start(dir);
	crypt_auto_tick();
	ck_assert_ptr_null(volume_find("sec")->job);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0);
	crypt_auto_start(dir);
	crypt_auto_tick();
	ck_assert_ptr_null(volume_find("sec")->job);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink("/etc/hostname", path), 0);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	crypt_auto_start(dir);
	crypt_auto_tick();
	ck_assert_ptr_null(volume_find("sec")->job);
	assert_shown("sec", 1);
	/* The right file, a wrong key: cryptd refuses, the volume stays locked. */
	ck_assert_int_eq(unlink(path), 0);
	free(path);
	path = key_file(dir, "not the key", 0600);
	crypt_auto_start(dir);
	crypt_auto_tick();
	run_volume_job("sec");
	assert_shown("sec", 1);
	free(path);
	crypt_auto_start("");
	unit_rmtree(dir);
	free(dir);
}
END_TEST

/* Auto-unlock from dir after a (re)start: the job it started on "sec", or NULL. */
static struct job *
auto_try(const char *dir)
{
	crypt_auto_start(dir);
	crypt_auto_tick();
	return volume_find("sec")->job;
}

/*
 * A FIFO (or a device node, on a stick mounted without nodev) named
 * NAME.key is refused without raidd ever opening it: an open of
 * /dev/watchdog's node arms the watchdog before any fstat.  A file
 * larger than cryptd takes is refused before it is named to cryptd.
 */
START_TEST(auto_unlock_never_opens_what_it_refuses)
{
	char *dir = unit_tmpdir(), path[512], big[KEYFILE_MAX + 2];
	struct inotify_event ev;
	int in;

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	reboot();
	ck_assert_int_eq(chmod(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/sec.key", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_ge(in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), 0);
	ck_assert_int_ge(inotify_add_watch(in, path, IN_OPEN), 0);
	ck_assert_ptr_null(auto_try(dir));
	ck_assert_msg(read(in, &ev, sizeof(ev)) == -1 && errno == EAGAIN,
	    "raidd opened the FIFO it was checking");
	close(in);
	ck_assert_int_eq(unlink(path), 0);
	/* 8193 bytes: cryptd would refuse it, so it is never named. */
	memset(big, 'k', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	free(key_file(dir, big, 0600));
	ck_assert_ptr_null(auto_try(dir));
	assert_shown("sec", 1);
	crypt_auto_start("");
	unit_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * keyfile_dir under a directory others may write (a share, say): they
 * could rename it away and put theirs in its place between raidd's check
 * and cryptd's open, so it is refused; sticky (as /tmp), it is not.
 */
START_TEST(auto_unlock_refuses_a_directory_others_could_swap)
{
	char *top = unit_tmpdir(), share[512], keys[600];

	ck_assert_int_eq(run_job(create_encrypted("sec")), JOB_DONE);
	crypt_sim_file_dirs(top);
	reboot();
	snprintf(share, sizeof(share), "%s/share", top);
	snprintf(keys, sizeof(keys), "%s/keys", share);
	ck_assert_int_eq(mkdir(share, 0777), 0);
	ck_assert_int_eq(chmod(share, 0777), 0);
	ck_assert_int_eq(mkdir(keys, 0700), 0);
	free(key_file(keys, PASS, 0600));
	ck_assert_ptr_null(auto_try(keys));
	assert_shown("sec", 1);
	ck_assert_int_eq(chmod(share, 01777), 0);
	ck_assert_ptr_nonnull(auto_try(keys));
	run_volume_job("sec");
	assert_shown("sec", 0);
	crypt_auto_start("");
	unit_rmtree(top);
	free(top);
}
END_TEST

/* Power cut after k mutating steps of an encrypted create, for every k. */
START_TEST(power_cut_during_encrypted_create)
{
	int total, k = _i;
	struct volume *v;

	ck_assert_int_eq(run_job(create_encrypted("p")), JOB_DONE);
	total = sim_ops();
	ck_assert_int_lt(total, CUT_POINTS);
	if (k > total)
		return;
	teardown();
	setup();
	sim_fail_after(k);
	run_job(create_encrypted("p"));
	reboot();
	if ((v = volume_find("p")) != NULL) {
		ck_assert_msg(v->state == VOL_CLEAN, "k=%d: %s", k, v->problem);
		/* Committed: encrypted, locked, and the passphrase opens it. */
		assert_shown("p", 1);
		ck_assert_int_eq(run_job(unlock("p", PASS)), JOB_DONE);
		ck_assert_int_eq(sim_mount_count(), 1);
	} else {
		ck_assert_int_eq(volume_count(), 0);
		ck_assert_int_eq(sim_md_count(), 0);
		ck_assert_int_eq(sim_dm_count(), 0);
	}
}
END_TEST

/*
 * An encrypted SHR of two takes a bigger disk with room above its tier
 * (bay2 grew too): the add reshapes the tier, and the grow its commit
 * starts makes a tier above and grows the mapping with the add's key,
 * so no grow is left waiting for a passphrase (which would refuse every
 * repair while its intent stands).
 */
START_TEST(add_disk_to_encrypted_shr_grows_above)
{
	char cm[SYS_NAME_MAX];
	struct volume *v;
	uint64_t was;

	ck_assert_int_eq(run_job(job_of(call("volume.create", "{\"name\":\"e\","
	    "\"level\":\"shr\",\"disks\":[\"bay1\",\"bay2\"],\"encrypt\":true,"
	    "\"passphrase\":\"" PASS "\"}"))), JOB_DONE);
	crypt_map_name("e", cm, sizeof(cm));
	unit_raidd_pattern(cm, 1ULL << 30, 1);
	v = volume_find("e");
	was = v->label.size;
	sim_grow_disk("sdb", 8ULL << 30);
	sim_grow_disk("sdc", 8ULL << 30);
	disk_refresh(1);
	ck_assert_int_eq(code_of("volume.add_disk", "{\"name\":\"e\",\"disk\":\"bay3\","
	    "\"passphrase\":\"" PASS "\"}"), 0);
	for (int i = 0; i < 3000 && job_running_count() > 0; i++) {
		char md[SYS_NAME_MAX];

		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_reshape_step(md, 1ULL << 20);
		}
	}
	ck_assert_int_eq(job_running_count(), 0);
	ck_assert_int_eq(v->label.ntiers, 2);
	ck_assert_uint_gt(v->label.size, was * 2);
	check_grown("e", v->label.size);
}
END_TEST

#define GROW_E		"{\"name\":\"e\",\"passphrase\":\"" PASS "\"}"

/* volume.grow of e with the passphrase, run until no job runs. */
static void
grow_e(void)
{
	ck_assert_int_eq(code_of("volume.grow", GROW_E), 0);
	run_all("e");
}

/*
 * An encrypted SHR of four 4 GiB disks, the pattern on its mapping; bays
 * 1 and 2 grown in place and the mirror made on the room above, then
 * bays 3 and 4 grown: volume.grow would have both rooms join the mirror
 * (Decision 133).  Returns the size volume.grow's plan gives.
 */
static uint64_t
two_rooms_to_join(void)
{
	struct plan_change *c = malloc(sizeof(*c));
	char cm[SYS_NAME_MAX], e[256];
	struct volume *v;
	uint64_t want;
	int code;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(run_job(job_of(call("volume.create", "{\"name\":\"e\","
	    "\"level\":\"shr\",\"disks\":[\"bay1\",\"bay2\",\"bay3\",\"bay4\"],"
	    "\"encrypt\":true,\"passphrase\":\"" PASS "\"}"))), JOB_DONE);
	crypt_map_name("e", cm, sizeof(cm));
	unit_raidd_pattern(cm, 1ULL << 30, 1);
	sim_grow_disk("sda", 8ULL << 30);
	sim_grow_disk("sdb", 8ULL << 30);
	disk_refresh(1);
	grow_e();
	v = volume_find("e");
	ck_assert_int_eq(v->label.ntiers, 2);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	check_grown("e", v->label.size);
	sim_grow_disk("sdc", 8ULL << 30);
	sim_grow_disk("sdd", 8ULL << 30);
	disk_refresh(1);
	ck_assert_msg(grow_is_join(v, c, &code, e, sizeof(e)) == 1, "%s", e);
	ck_assert_int_eq(c->after.tier[1].nmembers, 4);
	want = c->after.size;
	free(c);
	return want;
}

/* Both rooms joined: tier 2 a raid5 of four, every layer at want. */
static void
check_two_joined(uint64_t want)
{
	const struct volume *v = volume_find("e");

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[1].nmembers, 4);
	check_grown("e", want);
}

/*
 * One volume.grow with the passphrase joins both rooms, the second join
 * in its own job with the key the first proved (without it the second
 * would stop before its mapping grows); after a reboot and an unlock,
 * every layer is at the answer's size.
 */
START_TEST(two_joins_of_an_encrypted_shr)
{
	uint64_t want = two_rooms_to_join();
	struct json_object *a = call("volume.grow", GROW_E), *r, *o;

	ck_assert_msg(unit_err_code(a) == 0, "%s", json_object_to_json_string(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_object_get_ex(r, "size_bytes", &o);
	ck_assert_uint_eq((uint64_t)json_object_get_int64(o), want);
	json_object_put(a);
	run_all("e");
	check_two_joined(want);
	reboot();
	ck_assert_int_eq(run_job(unlock("e", PASS)), JOB_DONE);
	run_all("e");
	check_two_joined(want);
}
END_TEST

/*
 * A cut anywhere in the two joins of the encrypted SHR: the start (the
 * volume locked) and the unlock carry on, without the passphrase, only
 * the join the cut had begun: one the cut had not begun would have md
 * reshape and then stop for the passphrase.  volume.grow with it then
 * ends at the size it first answered.
 */
START_TEST(power_cut_during_encrypted_two_joins)
{
	int total, k = _i, second;
	uint64_t want;
	struct volume *v;

	want = two_rooms_to_join();
	total = sim_ops();
	grow_e();
	check_two_joined(want);
	if (cut_past_end(total, k, TWO_JOIN_CUTS))
		return;
	want = two_rooms_to_join();
	sim_fail_after(k);
	grow_e();
	v = volume_find("e");
	second = v->label.tier[1].nmembers == 4;	/* its labels written, in part */
	v = reboot_unlocked("e");
	ck_assert_msg(second || v->label.tier[1].nmembers < 4, "cut %d: the second join "
	    "begun without the passphrase: %s", k, v->problem);
	for (int i = 0; i < 3 && (v->label.intent.op != LABEL_OP_NONE ||
	    v->label.tier[1].nmembers < 4); i++)
		grow_e();
	check_two_joined(want);
}
END_TEST

#define GROW_J		"{\"name\":\"j\",\"passphrase\":\"" PASS "\"}"
#define GROW_J_WRONG	"{\"name\":\"j\",\"passphrase\":\"wrong\"}"

/* The loop until no job runs, md's reshapes of every tier of vol moving on. */
static void
run_tiers(const char *vol)
{
	char md[SYS_NAME_MAX];

	for (int i = 0; i < 3000 && job_running_count() > 0; i++) {
		const struct volume *v = volume_find(vol);

		ev_run(EV_DEFAULT, EVRUN_ONCE);
		for (int t = 0; v && t < v->label.ntiers; t++) {
			volume_md_name(v, t, md, sizeof(md));
			sim_md_reshape_step(md, 1ULL << 20);
		}
	}
	ck_assert_int_eq(job_running_count(), 0);
}

/* Member 3's (sdc's) new partition in md's tier 2 array of "j": -1 a spare, -2 not there. */
static int
sdc_slot_in_tier2(void)
{
	const struct volume *v = volume_find("j");
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	volume_md_name(v, 1, md, sizeof(md));
	if (v->mlabel[2].tier[1].role == LABEL_NO_ROLE || sys->md_status(md, &st) == -1 ||
	    sys->part_dev("sdc", v->mlabel[2].tier[1].start, dev, sizeof(dev)) == -1)
		return -2;
	for (int i = 0; i < st.nmembers; i++)
		if (strcmp(st.member[i].dev, dev) == 0 && !strstr(st.member[i].state, "faulty"))
			return st.member[i].slot;
	return -2;
}

/*
 * An encrypted SHR "j" of three 4 GiB disks, the pattern on its mapping;
 * sda and sdb grow to 8 GiB and volume.grow makes a mirror above, then
 * sdc grows too: its room would join the mirror (Decision 133).  Returns
 * the size before the join.
 */
static uint64_t
encrypted_join_ready(void)
{
	char cm[SYS_NAME_MAX];
	struct volume *v;

	ck_assert_int_eq(run_job(job_of(call("volume.create", "{\"name\":\"j\","
	    "\"level\":\"shr\",\"disks\":[\"bay1\",\"bay2\",\"bay3\"],\"encrypt\":true,"
	    "\"passphrase\":\"" PASS "\"}"))), JOB_DONE);
	crypt_map_name("j", cm, sizeof(cm));
	unit_raidd_pattern(cm, 1ULL << 30, 1);
	sim_grow_disk("sda", 8ULL << 30);
	sim_grow_disk("sdb", 8ULL << 30);
	disk_refresh(0);
	ck_assert_int_eq(code_of("volume.grow", GROW_J), 0);
	run_tiers("j");
	v = volume_find("j");
	ck_assert_int_eq(v->label.ntiers, 2);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	check_grown("j", v->label.size);
	sim_grow_disk("sdc", 8ULL << 30);
	disk_refresh(0);
	return v->label.size;
}

/* "j" joined: tier 2 raid5 of three with sdc, the mapping grown past was, the data there. */
static void
check_encrypted_joined(uint64_t was)
{
	const struct volume *v = volume_find("j");

	ck_assert_int_eq(v->label.tier[1].kind, TIER_RAID5);
	ck_assert_int_eq(v->label.tier[1].nmembers, 3);
	ck_assert_int_eq(v->mlabel[2].tier[1].role, 2);
	ck_assert_uint_gt(v->label.size, was);
	check_grown("j", v->label.size);
}

/*
 * An encrypted SHR's join (Decisions 121, 133): volume.grow with a wrong
 * passphrase writes nothing (no op, the labels' generation kept, no
 * intent); with the right one the join runs to the end and the crypt
 * mapping and filesystem grow to the new size, the data there, after a
 * reboot and an unlock too.
 */
START_TEST(encrypted_join_runs_with_the_key)
{
	uint64_t was = encrypted_join_ready();
	struct volume *v = volume_find("j");
	uint64_t gen = v->label.generation;
	int ops = sim_ops();
	unsigned id;

	id = job_of(call("volume.grow", GROW_J_WRONG));
	ck_assert_int_eq(run_job(id), JOB_FAILED);
	ck_assert_int_eq(job_err_code(job_find(id)), NAS_ERR_DENIED);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_uint_eq(v->label.generation, gen);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(code_of("volume.grow", GROW_J), 0);
	run_tiers("j");
	check_encrypted_joined(was);
	reboot();
	ck_assert_int_eq(run_job(unlock("j", PASS)), JOB_DONE);
	check_encrypted_joined(was);
}
END_TEST

/* Before each step: once sdc's spare is in tier 2's array, every write fails. */
static void
eio_once_sdc_spare_in(void)
{
	if (sdc_slot_in_tier2() == -2)
		sim_before_step(eio_once_sdc_spare_in);
	else
		sim_fail_after(0);
}

/* "j"'s join left standing: every write fails once sdc's spare is in tier 2, its undo too. */
static void
join_left_standing(const struct volume *v)
{
	sim_before_step(eio_once_sdc_spare_in);
	ck_assert_int_eq(code_of("volume.grow", GROW_J), 0);
	run_tiers("j");
	sim_fail_after(-1);
	sim_before_step(NULL);
	ck_assert_msg(label_is_join(&v->label), "%s", v->problem);
	ck_assert_int_lt(v->label.intent.step, 6);	/* AS_RESHAPE: md not asked */
}

/*
 * Decision 121 for a join: a join that stopped before md began (every
 * write failing once sdc's spare was in tier 2's array, its undo too),
 * carried on by volume.grow with a passphrase.  A wrong one writes
 * nothing: no op, the labels' generation and the join kept (the old
 * code undid the join before the job proved the key).  The right one
 * undoes it after the proof, and volume.grow again joins.
 */
START_TEST(keyed_join_carry_on_undoes_after_the_proof)
{
	uint64_t was = encrypted_join_ready(), gen;
	struct volume *v = volume_find("j");
	unsigned id;
	int ops;

	join_left_standing(v);
	gen = v->label.generation;
	ops = sim_ops();
	id = job_of(call("volume.grow", GROW_J_WRONG));
	ck_assert_int_eq(run_job(id), JOB_FAILED);
	ck_assert_int_eq(job_err_code(job_find(id)), NAS_ERR_DENIED);
	ck_assert_int_eq(sim_ops(), ops);
	ck_assert_uint_eq(v->label.generation, gen);
	ck_assert(label_is_join(&v->label));
	ck_assert_ptr_null(v->job);
	id = job_of(call("volume.grow", GROW_J));
	ck_assert_int_eq(run_job(id), JOB_FAILED);
	ck_assert_int_eq(job_err_code(job_find(id)), NAS_ERR_FAILED);
	ck_assert_msg(strstr(v->problem, "was undone"), "%s", v->problem);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(sdc_slot_in_tier2(), -2);
	ck_assert_ptr_null(v->job);
	ck_assert_int_eq(code_of("volume.grow", GROW_J), 0);
	run_tiers("j");
	check_encrypted_joined(was);
}
END_TEST

/*
 * Attack pass (attack-join5): the same join left standing (its undo
 * failing too), then a scan of the running volume (a hot-plug) with no
 * key: it undoes the join, which md never began and which holds none of
 * the data (Decision 133, join-findings), the mapping open, the data
 * there; after a reboot and an unlock too, and volume.grow with the
 * passphrase then joins.
 */
START_TEST(scan_undoes_an_encrypted_join_without_a_key)
{
	uint64_t was = encrypted_join_ready();
	struct volume *v = volume_find("j");

	join_left_standing(v);
	disk_refresh(1);
	volume_scan();
	volume_check_states();
	ck_assert_ptr_null(v->job);
	ck_assert_int_eq(v->label.intent.op, LABEL_OP_NONE);
	ck_assert_int_eq(v->label.tier[1].nmembers, 2);
	ck_assert_int_eq(sdc_slot_in_tier2(), -2);
	check_grown("j", was);
	reboot();
	ck_assert_int_eq(run_job(unlock("j", PASS)), JOB_DONE);
	check_grown("j", was);
	ck_assert_int_eq(code_of("volume.grow", GROW_J), 0);
	run_tiers("j");
	check_encrypted_joined(was);
}
END_TEST

static Suite *
crypt_suite(void)
{
	Suite *s = suite_create("raidd-crypt");
	TCase *tc = tcase_create("crypt");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, create_reboot_locked_unlock_lock);
	tcase_add_test(tc, refusals_change_nothing);
	tcase_add_test(tc, grow_refused_for_encrypted);
	tcase_add_test(tc, grow_encrypted_raid1);
	tcase_add_test(tc, grow_wrong_passphrase_writes_nothing);
	tcase_add_test(tc, grow_locked_refused);
	tcase_add_test(tc, add_disk_to_encrypted_raid5);
	tcase_add_test(tc, add_disk_to_encrypted_shr_grows_above);
	tcase_add_test(tc, two_joins_of_an_encrypted_shr);
	tcase_add_loop_test(tc, power_cut_during_encrypted_two_joins, 0, TWO_JOIN_CUTS);
	tcase_add_test(tc, encrypted_join_runs_with_the_key);
	tcase_add_test(tc, keyed_join_carry_on_undoes_after_the_proof);
	tcase_add_test(tc, scan_undoes_an_encrypted_join_without_a_key);
	tcase_add_loop_test(tc, carry_on_wrong_passphrase_writes_nothing, 0, 2);
	tcase_add_test(tc, keyless_resume_without_fs_holds_no_job);
	tcase_add_test(tc, passphrase_changed_during_add_costs_no_backoff);
	tcase_add_loop_test(tc, power_cut_during_encrypted_grow, 0, GROW_CUTS);
	tcase_add_loop_test(tc, power_cut_during_encrypted_add, 0, GROW_CUTS);
	tcase_add_test(tc, calls_answered_while_unlocking);
	tcase_add_test(tc, delete_closes_the_mapping);
	tcase_add_test(tc, joined_map_busy_under_crypt);
	tcase_add_test(tc, create_rolled_back_when_cryptd_refuses);
	tcase_add_test(tc, name_of_another_volume_is_not_a_mapping);
	tcase_add_test(tc, auto_unlock_from_a_key_file);
	tcase_add_test(tc, grow_with_a_key_file);
	tcase_add_test(tc, auto_unlock_refuses_a_key_file_others_can_reach);
	tcase_add_test(tc, auto_unlock_never_opens_what_it_refuses);
	tcase_add_test(tc, auto_unlock_refuses_a_directory_others_could_swap);
	tcase_add_loop_test(tc, power_cut_during_encrypted_create, 0, CUT_POINTS);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(crypt_suite());
}
