/* volume.* methods: parse, call the module, answer. */
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "plan-grow.h"
#include "secret.h"
#include "volume.h"
#include "crypt.h"

static const char *const levels[] = { "single", "jbod", "raid0", "raid1", "raid5",
	"raid10", "shr", NULL };
static const char *const filesystems[] = { "none", "ext4", "btrfs", NULL };

struct volume *
find_or_fail(struct rpc_call *c, struct json_object *params)
{
	return volume_find_idle(c, params);
}

struct volume *
volume_find_idle(struct rpc_call *c, struct json_object *params)
{
	const char *name = rpc_param_str(params, "name", "");
	struct volume *v = volume_find(name);

	if (v == NULL) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no volume %s", name);
		return NULL;
	}
	if (v->job) {
		rpc_error(c, NAS_ERR_BUSY, "volume %s: job %u is running", name, job_id(v->job));
		return NULL;
	}
	return v;
}

/* Fills r from the request; disks named by bay, kernel name or serial. */
static int
parse_create(struct rpc_call *c, struct json_object *params, struct create_req *r)
{
	struct json_object *disks;
	const char *fs = rpc_param_str(params, "fs", "ext4");

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", rpc_param_str(params, "name", ""));
	plan_level_parse(rpc_param_str(params, "level", ""), &r->level);
	r->fs = strcmp(fs, "none") == 0 ? LABEL_FS_NONE :
	    strcmp(fs, "btrfs") == 0 ? LABEL_FS_BTRFS : LABEL_FS_EXT4;
	r->force = rpc_param_bool(params, "force", 0);
	json_object_object_get_ex(params, "disks", &disks);
	r->ndisks = (int)json_object_array_length(disks);
	for (int i = 0; i < r->ndisks; i++) {
		struct json_object *e = json_object_array_get_idx(disks, i);
		struct disk *d;

		if (!json_object_is_type(e, json_type_string)) {
			rpc_error(c, RPC_INVALID_PARAMS, "disks must be strings");
			return -1;
		}
		if ((d = disk_find(json_object_get_string(e))) == NULL) {
			rpc_error(c, NAS_ERR_NOT_FOUND, "no disk %s", json_object_get_string(e));
			return -1;
		}
		snprintf(r->disk[i], sizeof(r->disk[i]), "%s", d->sys.name);
	}
	return 0;
}

/* md for any array tier, device-mapper always: say so before writing. */
static int
kernel_lacks(struct rpc_call *c, const struct plan *plan)
{
	int arrays = 0;

	if (sys == &sys_sim)
		return 0;
	for (int t = 0; t < plan->ntiers; t++)
		arrays += plan->tier[t].kind != TIER_NONE;
	if (arrays && nas_feature_require(c, &raidd_features[0]) == -1)
		return 1;
	return nas_feature_require(c, &raidd_features[1]) == -1;
}

/* encrypt: true wants a passphrase, and a passphrase wants encrypt. */
static int
take_passphrase(struct rpc_call *c, struct json_object *params, struct create_req *r)
{
	int has = json_object_object_get_ex(params, "passphrase", NULL);

	r->encrypt = rpc_param_bool(params, "encrypt", 0);
	if (has != r->encrypt) {
		rpc_error(c, RPC_INVALID_PARAMS, "encrypt: true and a passphrase go together");
		return -1;
	}
	if (r->encrypt && (r->pass = secret_from_param(params, "passphrase")) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "no locked memory for the passphrase");
		return -1;
	}
	return 0;
}

static void
volume_create(struct rpc_call *c, struct json_object *params)
{
	struct create_req r;
	struct plan plan;
	struct json_object *o;
	struct job *j;
	char err[256];
	int code;

	disk_refresh(1);
	if (parse_create(c, params, &r) == -1 || take_passphrase(c, params, &r) == -1)
		return;
	if (create_check(&r, &plan, &code, err, sizeof(err)) == -1) {
		secret_free(r.pass);
		rpc_error(c, code, "%s: nothing was written", err);
		return;
	}
	if (kernel_lacks(c, &plan)) {
		secret_free(r.pass);
		return;
	}
	if ((j = create_start(&r, &plan, err, sizeof(err))) == NULL) {
		secret_free(r.pass);
		rpc_error(c, NAS_ERR_LIMIT, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_int((int)job_id(j)));
	json_object_object_add(o, "name", json_object_new_string(r.name));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)plan.size));
	if (plan.note)
		json_object_object_add(o, "note", json_object_new_string(plan.note));
	rpc_result(c, o);
}

static void
volume_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a = json_object_new_array();
	struct volume *v;

	(void)params;
	for (int i = 0; (v = volume_at(i)) != NULL; i++)
		json_object_array_add(a, volume_describe(v));
	rpc_result(c, a);
}

static void
volume_show(struct rpc_call *c, struct json_object *params)
{
	struct volume *v = volume_find(rpc_param_str(params, "name", ""));

	if (v == NULL)
		rpc_error(c, NAS_ERR_NOT_FOUND, "no volume %s", rpc_param_str(params, "name", ""));
	else
		rpc_result(c, volume_describe(v));
}

static void
volume_delete(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	char err[256];

	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (strcmp(rpc_param_str(params, "confirm", ""), v->name) != 0) {
		rpc_error(c, NAS_ERR_REFUSED, "confirm must repeat the volume's name (%s)", v->name);
		return;
	}
	if (delete_volume(v, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s", err);
		return;
	}
	rpc_result(c, json_object_new_object());
}

static void
volume_mount_m(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	char err[256];

	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (v->label.fs == LABEL_FS_NONE) {
		rpc_error(c, NAS_ERR_INVALID, "volume %s has no filesystem", v->name);
		return;
	}
	if (!v->assembled) {
		rpc_error(c, NAS_ERR_FAILED, "volume %s is not assembled: %s", v->name, v->problem);
		return;
	}
	if (volume_mount(v, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s", err);
		return;
	}
	rpc_result(c, volume_describe(v));
}

static void
volume_unmount_m(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	char err[256];

	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (volume_unmount(v, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_BUSY, "%s", err);
		return;
	}
	rpc_result(c, volume_describe(v));
}

/* Writes v's label changed by how (unit id, failed members), or leaves it as it was. */
static int
relabel(struct rpc_call *c, struct volume *v, const uint8_t *unit, int clear_failed)
{
	struct label was = v->label;
	char err[256];

	if (unit)
		memcpy(v->label.unit, unit, 16);
	if (clear_failed)
		v->label.failed = 0;
	if (label_change(v, ~0U, &was, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s", err);
		return -1;
	}
	return 0;
}

/*
 * volume.import: a volume made by another unit, or deleted here while
 * this member was absent, becomes this unit's: its labels get this
 * unit's id, and it is assembled like any other.
 */
static void
volume_import(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	const uint8_t *unit;
	const char *problem;

	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (!v->foreign && !unit_deleted(v->label.volume_uuid)) {
		rpc_error(c, NAS_ERR_INVALID, "volume %s is this unit's already", v->name);
		return;
	}
	if ((unit = unit_id(&problem)) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "this unit has no identity: %s", problem);
		return;
	}
	if (relabel(c, v, unit, 0) == -1)
		return;
	if (unit_deleted_set(v->label.volume_uuid, 0) == -1)
		log_warn("volume %s: forgetting its deletion", v->name);
	log_info("volume %s imported", v->name);
	v->foreign = v->inconsistent = 0;
	v->problem[0] = '\0';
	v->held = strcmp(v->name, v->label.name) != 0;
	if (v->held)
		snprintf(v->problem, sizeof(v->problem), "another volume here is named %s too: "
		    "not assembled", v->label.name);
	volume_scan();
	if ((v = volume_find(rpc_param_str(params, "name", ""))) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "volume %s went away while it was imported",
		    rpc_param_str(params, "name", ""));
		return;
	}
	rpc_result(c, volume_describe(v));
}

/*
 * volume.clear: members md failed for errors may rejoin again (the
 * labels stop saying failed); the next scan re-adds them if their
 * superblocks allow it.  The user vouches for the disks present now: one
 * behind further than the bitmap reaches is taken back too, and md
 * rebuilds it in full (rejoin).  That is remembered in memory only: a
 * power cut before md took it leaves it behind, and start-up fails it
 * again - the user is asked again, nothing is taken unasked.  A member
 * used on its own (split brain), or whose superblock is another
 * array's, is never taken back here.
 */
static void
volume_clear(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	unsigned vouched;

	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (v->foreign || v->inconsistent) {
		rpc_error(c, NAS_ERR_REFUSED, "volume %s is %s: nothing of it is written before "
		    "volume.import", v->name, v->foreign ? "foreign" : "inconsistent");
		return;
	}
	if (v->label.failed == 0) {
		rpc_error(c, NAS_ERR_INVALID, "volume %s has no failed member to clear", v->name);
		return;
	}
	vouched = v->label.failed;
	if (relabel(c, v, NULL, 1) == -1)
		return;
	for (int m = 0; m < PLAN_MAX_DISKS; m++)
		for (int t = 0; t < v->label.ntiers; t++)
			if ((vouched & (1U << m)) && v->disk[m][0])
				v->cleared[t] |= 1U << m;
	log_info("volume %s: failed members cleared", v->name);
	v->problem[0] = '\0';
	volume_scan();
	rpc_result(c, volume_describe(v));
}

/* The job's id and sizes, as volume.grow answers. */
static void
grow_answer(struct rpc_call *c, const struct volume *v, const struct job *j, uint64_t size)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "job", json_object_new_int((int)job_id(j)));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)size));
	json_object_object_add(o, "was_bytes", json_object_new_int64((int64_t)v->label.size));
	rpc_result(c, o);
}

/*
 * volume.grow's join: pc's first join started (add_join_grow; each next
 * one starts as the one before ends, join_next), or carried on from the
 * labels.  The answer's size is pc's: what the whole chain reaches.
 */
static void
grow_join(struct rpc_call *c, struct volume *v, const struct plan_change *pc,
    struct crypt_key *key)
{
	struct job *j;
	char err[256];
	int code = NAS_ERR_REFUSED, resume = label_is_join(&v->label);

	if (!resume && kernel_lacks(c, &pc->after)) {
		crypt_key_wipe(key);
		return;
	}
	j = resume ? add_join_carry_on(v, key, &code, err, sizeof(err)) :
	    add_join_grow(v, pc, key, err, sizeof(err));
	crypt_key_wipe(key);
	if (j == NULL) {
		rpc_error(c, code, "%s%s", err, resume ? "" : ": nothing was changed");
		return;
	}
	grow_answer(c, v, j, resume ? v->label.size : pc->after.size);
}

/* volume.grow: checked in full, then a job (grow.c); an interrupted grow is carried on. */
static void
volume_grow_m(struct rpc_call *c, struct json_object *params)
{
	static struct plan_change pc;
	struct volume *v;
	struct plan after;
	struct crypt_key key;
	struct job *j;
	char err[256];
	int code, resume;

	disk_refresh(1);
	if ((v = find_or_fail(c, params)) == NULL || crypt_key_take(c, params, v, &key) == -1)
		return;
	/* A join is an add of an old member's room (Decision 133): add.c's job. */
	if (label_is_join(&v->label) || (v->label.intent.op == LABEL_OP_NONE &&
	    grow_is_join(v, &pc, &code, err, sizeof(err)) == 1)) {
		grow_join(c, v, &pc, &key);
		return;
	}
	if (grow_check(v, &after, &code, err, sizeof(err)) == -1) {
		crypt_key_wipe(&key);
		rpc_error(c, code, "%s: nothing was changed", err);
		return;
	}
	resume = v->label.intent.op == LABEL_OP_EXPANDING;
	if (!resume && kernel_lacks(c, &after)) {
		crypt_key_wipe(&key);
		return;
	}
	j = grow_start(v, resume ? NULL : &after, &key, err, sizeof(err));
	crypt_key_wipe(&key);
	if (j == NULL) {
		rpc_error(c, NAS_ERR_LIMIT, "%s", err);
		return;
	}
	grow_answer(c, v, j, resume ? v->label.size : after.size);
}

/*
 * volume.repair: a disk takes the place of the missing or failed member
 * (repair.c); the job lasts until md has rebuilt it.
 */
static void
volume_repair(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	struct job *j;
	struct json_object *o;
	const char *disk = rpc_param_str(params, "disk", "");
	char err[256];
	int code;

	disk_refresh(1);
	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (repair_check(v, disk, rpc_param_bool(params, "force", 0), &code, err,
	    sizeof(err)) == -1) {
		rpc_error(c, code, "%s: nothing was written", err);
		return;
	}
	if (sys != &sys_sim && nas_feature_require(c, &raidd_features[0]) == -1)
		return;
	if ((j = repair_start(v, disk, rpc_param_bool(params, "force", 0), err,
	    sizeof(err))) == NULL) {
		rpc_error(c, NAS_ERR_LIMIT, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_int((int)job_id(j)));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	rpc_result(c, o);
}

/*
 * volume.add_disk: checked in full, then a job (add.c) that ends when
 * md's reshape has and the volume has grown; an interrupted one is
 * carried on (the disk given must then be the one the labels name).
 */
static void
volume_add_disk(struct rpc_call *c, struct json_object *params)
{
	const char *disk = rpc_param_str(params, "disk", ""), *level;
	int force = rpc_param_bool(params, "force", 0), code, resume;
	struct json_object *o;
	struct crypt_key key;
	struct volume *v;
	struct plan after;
	struct job *j;
	char err[256];

	disk_refresh(1);
	if ((v = find_or_fail(c, params)) == NULL)
		return;
	if (crypt_key_take(c, params, v, &key) == -1)
		return;
	level = json_object_object_get_ex(params, "level", NULL) ?
	    rpc_param_str(params, "level", "") : NULL;
	if ((resume = v->label.intent.op == LABEL_OP_ADDING)) {
		const struct disk *d = disk_find(disk);
		int n = v->label.intent.disk;

		if (n >= v->label.ndisks || d == NULL || strncmp(d->sys.serial,
		    v->label.member[n].serial, LABEL_SERIAL_MAX - 1) != 0) {
			rpc_error(c, NAS_ERR_REFUSED, "volume %s is adding another disk: name "
			    "that one to carry it on; nothing was changed", v->name);
			crypt_key_wipe(&key);
			return;
		}
		j = add_carry_on(v, d, force, &key, &code, err, sizeof(err));
		crypt_key_wipe(&key);
		if (j == NULL) {
			rpc_error(c, code, "%s", err);
			return;
		}
	} else {
		if (add_check(v, disk, level, force, &after, &code, err, sizeof(err)) == -1) {
			crypt_key_wipe(&key);
			rpc_error(c, code, "%s: nothing was changed", err);
			return;
		}
		if (kernel_lacks(c, &after)) {
			crypt_key_wipe(&key);
			return;
		}
		j = add_start(v, disk, force, &after, &key, err, sizeof(err));
		crypt_key_wipe(&key);
	}
	if (j == NULL) {
		rpc_error(c, NAS_ERR_LIMIT, "%s", err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_int((int)job_id(j)));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	if (!resume)
		json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)after.size));
	json_object_object_add(o, "was_bytes", json_object_new_int64((int64_t)v->label.size));
	rpc_result(c, o);
}

#define NAME_PARAM { "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" }
#define END_PARAM { NULL, 0, 0, 0, 0, NULL, NULL }
/* An encrypted volume's, asked again to grow its mapping (Decision 115). */
#define KEY_PARAMS \
	{ "passphrase", RPC_STRING, RPC_SECRET, 1, 512, NULL, \
	  "encrypted volume: its passphrase (as volume.unlock)" }, \
	{ "keyfile", RPC_STRING, 0, 1, 299, NULL, \
	  "encrypted volume: a key file's absolute path, read by cryptd" }

static const struct rpc_param create_params[] = {
	NAME_PARAM,
	{ "level", RPC_STRING, RPC_REQUIRED, 0, 0, levels, "RAID level" },
	{ "disks", RPC_ARRAY, RPC_REQUIRED, 1, PLAN_MAX_DISKS, NULL,
	  "disks by bay (bay1), kernel name (sda) or serial" },
	{ "fs", RPC_STRING, 0, 0, 0, filesystems, "filesystem (default ext4)" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "erase disks that hold data" },
	{ "encrypt", RPC_BOOL, 0, 0, 0, NULL, "LUKS2 through cryptd (needs passphrase)" },
	{ "passphrase", RPC_STRING, RPC_SECRET, 1, 512, NULL, "encrypt: the passphrase" },
	END_PARAM
};
static const struct rpc_param name_params[] = { NAME_PARAM, END_PARAM };
static const struct rpc_param repair_params[] = {
	NAME_PARAM,
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 64, NULL,
	  "the replacement: bay (bay1), kernel name (sda) or serial" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "erase the disk even if it holds data" },
	END_PARAM
};
static const struct rpc_param add_disk_params[] = {
	NAME_PARAM,
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 64, NULL,
	  "the new disk: bay (bay4), kernel name (sdd) or serial" },
	{ "level", RPC_STRING, 0, 0, 0, levels, "the level after (raid1 to raid5 only)" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "erase the disk even if it holds data" },
	KEY_PARAMS,
	END_PARAM
};
static const struct rpc_param grow_params[] = { NAME_PARAM, KEY_PARAMS, END_PARAM };
static const struct rpc_param delete_params[] = {
	NAME_PARAM,
	{ "confirm", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "the volume's name again" },
	END_PARAM
};

const struct rpc_method volume_methods[] = {
	{ "volume.create", volume_create, create_params, RPC_MUTATES,
	  "create a volume; returns a job id" },
	{ "volume.list", volume_list, NULL, 0, "every volume found on the disks" },
	{ "volume.show", volume_show, name_params, 0, "one volume with its tiers" },
	{ "volume.delete", volume_delete, delete_params, RPC_MUTATES,
	  "stop a volume and erase its members" },
	{ "volume.mount", volume_mount_m, name_params, RPC_MUTATES, "mount a volume" },
	{ "volume.unmount", volume_unmount_m, name_params, RPC_MUTATES, "unmount a volume" },
	{ "volume.import", volume_import, name_params, RPC_MUTATES,
	  "make a foreign (or deleted) volume this unit's and assemble it" },
	{ "volume.clear", volume_clear, name_params, RPC_MUTATES,
	  "let failed members rejoin (rebuilt in full when the bitmap lacks what they missed)" },
	{ "volume.grow", volume_grow_m, grow_params, RPC_MUTATES,
	  "take the room of bigger disks; returns a job id" },
	{ "volume.repair", volume_repair, repair_params, RPC_MUTATES,
	  "rebuild the missing or failed member on a disk; returns a job id" },
	{ "volume.add_disk", volume_add_disk, add_disk_params, RPC_MUTATES,
	  "one more disk joins the volume (raid5: md reshapes); returns a job id" },
	{ "volume.start", volume_start_m, volume_start_params, RPC_MUTATES,
	  "make a dirty degraded (read-only) volume writable; needs force" },
	{ NULL, NULL, NULL, 0, NULL }
};
