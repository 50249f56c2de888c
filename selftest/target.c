/*
 * Where the tests write: a directory of their own made (and removed
 * afterwards) under --dir, on a volume's mount point (--volume, asked of
 * raidd), or on a scratch RAID 1 that raidd makes on blank disks and
 * deletes at the end. What raidd says is checked like any input.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "client.h"
#include "engine.h"
#include "log.h"
#include "selftest.h"

#define SCRATCH_NAME	"selftest"
#define CREATE_WAIT_S	900

static struct rpc_client *
raidd_open(const struct st_run *run, char *err, size_t errlen)
{
	struct rpc_client_error e = { 0 };
	struct rpc_client *c;

	if ((c = rpc_client_open(run->sockdir, "raidd", &e)) == NULL) {
		snprintf(err, errlen, "raidd: %s", e.message);
		rpc_client_error_clear(&e);
		return NULL;
	}
	rpc_client_set_timeout(c, 120000);
	return c;
}

/* Calls method; the result (caller frees) or NULL with err set. */
static struct json_object *
call(struct rpc_client *c, const char *method, struct json_object *params, char *err,
    size_t errlen)
{
	struct rpc_client_error e = { 0 };
	struct json_object *r = NULL;

	if (rpc_client_call(c, method, params, &r, &e) == -1) {
		snprintf(err, errlen, "raidd %s: %s", method, e.message);
		rpc_client_error_clear(&e);
		return NULL;
	}
	return r;
}

static const char *
str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

static struct json_object *
name_param(const char *name)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "name", json_object_new_string(name));
	return p;
}

/* Serial -> model from disk.list, for the record's disks. */
static const char *
model_of(struct json_object *disks, const char *serial)
{
	for (size_t i = 0; disks && i < json_object_array_length(disks); i++) {
		struct json_object *d = json_object_array_get_idx(disks, i);
		const char *s = str(d, "serial");

		if (s && serial && strcmp(s, serial) == 0)
			return str(d, "model");
	}
	return NULL;
}

/* The record's "volume" object from volume.show and disk.list. */
static struct json_object *
volume_info(struct json_object *v, struct json_object *disks, int scratch)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	struct json_object *tiers, *enc;
	const char *keys[] = { "name", "level", "fs", "state", NULL };

	for (int i = 0; keys[i]; i++)
		json_object_object_add(o, keys[i], str(v, keys[i]) ?
		    json_object_new_string(str(v, keys[i])) : NULL);
	json_object_object_add(o, "encrypted", json_object_new_boolean(
	    json_object_object_get_ex(v, "encrypted", &enc) && json_object_get_boolean(enc)));
	json_object_object_add(o, "scratch", json_object_new_boolean(scratch));
	if (json_object_object_get_ex(v, "tiers", &tiers) &&
	    json_object_is_type(tiers, json_type_array))
		for (size_t t = 0; t < json_object_array_length(tiers); t++) {
			struct json_object *m, *tier = json_object_array_get_idx(tiers, t);

			if (!json_object_object_get_ex(tier, "members", &m) ||
			    !json_object_is_type(m, json_type_array))
				continue;
			for (size_t k = 0; k < json_object_array_length(m); k++) {
				struct json_object *mem = json_object_array_get_idx(m, k);
				struct json_object *d = json_object_new_object();
				const char *serial = str(mem, "serial"), *model = model_of(disks, serial);

				json_object_object_add(d, "disk", str(mem, "disk") ?
				    json_object_new_string(str(mem, "disk")) : NULL);
				json_object_object_add(d, "serial",
				    serial ? json_object_new_string(serial) : NULL);
				json_object_object_add(d, "model",
				    model ? json_object_new_string(model) : NULL);
				json_object_array_add(a, d);
			}
		}
	json_object_object_add(o, "disks", a);
	return o;
}

/* Polls job id until it ends; 0 when done. */
static int
job_wait(struct rpc_client *c, int id, char *err, size_t errlen)
{
	for (int waited = 0; waited < CREATE_WAIT_S * 2; waited++) {
		struct json_object *p = json_object_new_object(), *j, *e;
		const char *st;

		json_object_object_add(p, "id", json_object_new_int(id));
		if ((j = call(c, "job.status", p, err, errlen)) == NULL)
			return -1;
		st = str(j, "state");
		if (st && strcmp(st, "running") != 0) {
			int ok = strcmp(st, "done") == 0;

			if (!ok)
				snprintf(err, errlen, "raidd job %d %s: %s", id, st,
				    json_object_object_get_ex(j, "error", &e) ?
				    json_object_to_json_string(e) : "no reason given");
			json_object_put(j);
			return ok ? 0 : -1;
		}
		json_object_put(j);
		usleep(500000);
	}
	snprintf(err, errlen, "raidd job %d: still running after %d s", id, CREATE_WAIT_S);
	return -1;
}

/* Makes the scratch RAID 1 on the first two free disks in bays. */
static int
scratch_create(struct rpc_client *c, char *err, size_t errlen)
{
	struct json_object *disks, *r, *p, *names = json_object_new_array(), *v;
	int n = 0, rc = -1;

	if ((v = call(c, "volume.show", name_param(SCRATCH_NAME), err, errlen)) != NULL) {
		json_object_put(v);
		json_object_put(names);
		snprintf(err, errlen, "a volume named %s exists: run with --volume %s or delete it",
		    SCRATCH_NAME, SCRATCH_NAME);
		return -1;
	}
	if ((disks = call(c, "disk.list", NULL, err, errlen)) == NULL) {
		json_object_put(names);
		return -1;
	}
	for (size_t i = 0; n < 2 && json_object_is_type(disks, json_type_array) &&
	    i < json_object_array_length(disks); i++) {
		struct json_object *d = json_object_array_get_idx(disks, i), *bay;
		const char *st = str(d, "state"), *name = str(d, "name");

		if (st && name && strcmp(st, "free") == 0 &&
		    json_object_object_get_ex(d, "bay", &bay) && json_object_get_int(bay) > 0) {
			json_object_array_add(names, json_object_new_string(name));
			n++;
		}
	}
	json_object_put(disks);
	if (n < 2) {
		json_object_put(names);
		snprintf(err, errlen, "a scratch RAID 1 needs two blank disks in bays, found %d: "
		    "use --volume or --dir", n);
		return -1;
	}
	p = name_param(SCRATCH_NAME);
	json_object_object_add(p, "level", json_object_new_string("raid1"));
	json_object_object_add(p, "fs", json_object_new_string("ext4"));
	json_object_object_add(p, "disks", names);
	log_info("making a scratch RAID 1 on %s", json_object_to_json_string(names));
	if ((r = call(c, "volume.create", p, err, errlen)) == NULL)
		return -1;
	if (json_object_object_get_ex(r, "job", &v) && json_object_is_type(v, json_type_int))
		rc = job_wait(c, json_object_get_int(v), err, errlen);
	else
		snprintf(err, errlen, "raidd volume.create: no job in the answer");
	json_object_put(r);
	return rc;
}

static void
scratch_delete(const struct st_run *run)
{
	struct rpc_client *c;
	struct json_object *p, *r;
	char err[256];

	if ((c = raidd_open(run, err, sizeof(err))) == NULL) {
		log_warnx("the scratch volume %s is left: %s", SCRATCH_NAME, err);
		return;
	}
	p = name_param(SCRATCH_NAME);
	json_object_object_add(p, "confirm", json_object_new_string(SCRATCH_NAME));
	if ((r = call(c, "volume.delete", p, err, sizeof(err))) == NULL)
		log_warnx("the scratch volume %s is left: %s", SCRATCH_NAME, err);
	json_object_put(r);
	rpc_client_close(c);
}

/* The mount point of a volume and its record; -1 with err. */
static int
volume_dir(const struct st_run *run, const char *name, int scratch, struct st_target *tg,
    char *err, size_t errlen)
{
	struct rpc_client *c;
	struct json_object *v = NULL, *disks;
	const char *mp;
	int rc = -1;

	if ((c = raidd_open(run, err, errlen)) == NULL)
		return -1;
	if (scratch && scratch_create(c, err, errlen) == -1)
		goto out;
	tg->scratch = scratch;
	if ((v = call(c, "volume.show", name_param(name), err, errlen)) == NULL)
		goto out;
	if ((mp = str(v, "mountpoint")) == NULL || mp[0] != '/' ||
	    strlen(mp) >= sizeof(tg->dir) - 32) {
		snprintf(err, errlen, "volume %s is not mounted", name);
		goto out;
	}
	snprintf(tg->dir, sizeof(tg->dir), "%s", mp);
	snprintf(tg->volume, sizeof(tg->volume), "%s", name);
	disks = call(c, "disk.list", NULL, err, errlen);
	tg->info = volume_info(v, disks, scratch);
	json_object_put(disks);
	rc = 0;
out:
	json_object_put(v);
	rpc_client_close(c);
	return rc;
}

static const char *
fs_name(long type)
{
	switch ((unsigned long)type) {
	case 0xEF53: return "ext4";
	case 0x9123683E: return "btrfs";
	case 0x01021994: return "tmpfs";
	case 0x58465342: return "xfs";
	default: return "other";
	}
}

int
target_open(const struct st_run *run, uint64_t need, struct st_target *tg, char *err,
    size_t errlen)
{
	char base[sizeof(tg->dir)], tmpl[sizeof(tg->dir)];
	struct statvfs vfs;
	struct statfs fs;
	struct stat st;
	uint64_t avail, keep;

	memset(tg, 0, sizeof(*tg));
	if (run->dir) {
		snprintf(tg->dir, sizeof(tg->dir), "%s", run->dir);
	} else if (volume_dir(run, run->volume ? run->volume : SCRATCH_NAME, run->volume == NULL,
	    tg, err, errlen) == -1) {
		if (tg->scratch)
			scratch_delete(run);
		tg->scratch = 0;
		return -1;
	}
	snprintf(base, sizeof(base), "%s", tg->dir);
	if (stat(base, &st) == -1 || !S_ISDIR(st.st_mode) || statvfs(base, &vfs) == -1 ||
	    statfs(base, &fs) == -1) {
		snprintf(err, errlen, "%s: %s", base, errno ? strerror(errno) : "not a directory");
		goto fail;
	}
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	/* A volume in use keeps a twentieth of itself free through the run:
	 * its owner's writers must not meet a full volume because of us. */
	keep = tg->scratch ? 0 : (uint64_t)vfs.f_blocks * vfs.f_frsize / 20;
	if (avail < need || avail - need < keep) {
		snprintf(err, errlen, "%s: %llu MiB free, the tests need %llu MiB%s", base,
		    (unsigned long long)(avail >> 20), (unsigned long long)(need >> 20),
		    keep ? " and 5 % of the volume is kept free" : "");
		goto fail;
	}
	if (tg->info == NULL) {
		tg->info = json_object_new_object();
		json_object_object_add(tg->info, "dir", json_object_new_string(base));
		json_object_object_add(tg->info, "scratch", json_object_new_boolean(0));
	}
	json_object_object_add(tg->info, "fs_type", json_object_new_string(fs_name(fs.f_type)));
	json_object_object_add(tg->info, "free_bytes", json_object_new_int64((int64_t)avail));
	/* A directory of our own: nothing of the owner's is ever touched. */
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/.nas-selftest.XXXXXX", base) >=
	    sizeof(tmpl) - 32) {
		snprintf(err, errlen, "%.200s...: path too long", base);
		goto fail;
	}
	if (mkdtemp(tmpl) == NULL) {
		snprintf(err, errlen, "%s: %s", base, strerror(errno));
		goto fail;
	}
	memcpy(tg->dir, tmpl, sizeof(tg->dir));
	return 0;
fail:
	target_close(run, tg);
	return -1;
}

void
target_close(const struct st_run *run, struct st_target *tg)
{
	if (strstr(tg->dir, "/.nas-selftest.") && rmdir(tg->dir) == -1 && errno != ENOENT)
		log_warn("%s", tg->dir);
	if (tg->scratch)
		scratch_delete(run);
	tg->scratch = 0;
	json_object_put(tg->info);
	tg->info = NULL;
}
