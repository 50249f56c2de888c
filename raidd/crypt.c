/*
 * crypt.c: encrypted volumes (Decision 62).  A volume whose label says
 * LABEL_F_ENCRYPTED has a LUKS2 header on its joined device (nas-NAME),
 * written by cryptd, and its filesystem on the dm-crypt mapping cryptd
 * opens over it: nas-NAME.crypt, with a dot, which no volume name holds,
 * so it is never another volume's joined map (volume a-crypt's is
 * nas-a-crypt).  After a start the volume is found and
 * assembled from its disks as any other, and stays locked (no mapping,
 * not mounted) until volume.unlock hands cryptd the passphrase.  The
 * passphrase lives here only in a struct secret, only until cryptd has
 * answered; it is never logged and never part of a job's description.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "secret.h"
#include "volume.h"
#include "crypt.h"

const struct crypt_ops *
crypt_ops(void)
{
	return sys == &sys_sim ? &crypt_sim : &crypt_cryptd;
}

void
crypt_map_name(const char *vol, char *buf, size_t len)
{
	snprintf(buf, len, "nas-%.*s.crypt", VOL_NAME_MAX, vol);
}

int
crypt_encrypted(const struct volume *v)
{
	return (v->label.flags & LABEL_F_ENCRYPTED) != 0;
}

int
crypt_locked(const struct volume *v)
{
	char name[SYS_NAME_MAX];

	if (!crypt_encrypted(v))
		return 0;
	crypt_map_name(v->name, name, sizeof(name));
	return sys->dm_exists(name) != 1;
}

void
crypt_top_name(const struct volume *v, char *buf, size_t len)
{
	if (crypt_encrypted(v))
		crypt_map_name(v->name, buf, len);
	else
		volume_dm_name(v->name, buf, len);
}

/*
 * Whether or not the label says encrypted: a create rolled back before
 * its labels were read again still has its mapping over the joined map.
 */
int
crypt_close(struct volume *v, char *err, size_t errlen)
{
	char name[SYS_NAME_MAX];

	if (volume_unmount(v, err, errlen) == -1)
		return -1;
	crypt_map_name(v->name, name, sizeof(name));
	return volume_map_remove(name, err, errlen);
}

int
crypt_create(struct volume *v, const struct secret *pass, crypt_done_cb cb, void *arg)
{
	char dm[SYS_NAME_MAX], dev[SYS_NAME_MAX + 16], name[SYS_NAME_MAX];

	volume_dm_name(v->name, dm, sizeof(dm));
	snprintf(dev, sizeof(dev), "/dev/mapper/%s", dm);
	crypt_map_name(v->name, name, sizeof(name));
	return crypt_ops()->format_open(dev, name, v->name, pass, cb, arg);
}

/* ---- growing: the key asked again (Decision 115) ---- */

int
crypt_key_have(const struct crypt_key *k)
{
	return k != NULL && (k->pass != NULL || k->keyfile[0] != '\0');
}

void
crypt_key_move(struct crypt_key *to, struct crypt_key *from)
{
	*to = *from;
	memset(from, 0, sizeof(*from));
}

void
crypt_key_wipe(struct crypt_key *k)
{
	secret_free(k->pass);
	memset(k, 0, sizeof(*k));
}

/*
 * An encrypted volume grows only unlocked and with its passphrase or
 * key file: its mapping's table holds the key, which nobody keeps.
 * Nothing is taken for a volume that is not encrypted.
 */
int
crypt_key_take(struct rpc_call *c, struct json_object *params, const struct volume *v,
    struct crypt_key *k)
{
	int has_p = json_object_object_get_ex(params, "passphrase", NULL);
	int has_k = json_object_object_get_ex(params, "keyfile", NULL);
	const char *path;

	memset(k, 0, sizeof(*k));
	if (!crypt_encrypted(v)) {
		if (has_p || has_k)
			return rpc_error(c, RPC_INVALID_PARAMS, "volume %s is not encrypted: "
			    "no passphrase or keyfile; nothing was changed", v->name), -1;
		return 0;
	}
	if (crypt_locked(v))
		return rpc_error(c, NAS_ERR_REFUSED, "volume %s is locked: unlock it first; "
		    "nothing was changed", v->name), -1;
	if (has_p == has_k)
		return rpc_error(c, RPC_INVALID_PARAMS, "volume %s is encrypted: its passphrase "
		    "or keyfile (one of them) grows its mapping; nothing was changed",
		    v->name), -1;
	if (has_k) {
		path = rpc_param_str(params, "keyfile", "");
		if (path[0] != '/' || strlen(path) >= sizeof(k->keyfile))
			return rpc_error(c, RPC_INVALID_PARAMS, "keyfile: an absolute path"), -1;
		snprintf(k->keyfile, sizeof(k->keyfile), "%s", path);
		return 0;
	}
	if ((k->pass = secret_from_param(params, "passphrase")) == NULL)
		return rpc_error(c, NAS_ERR_FAILED, "no locked memory for the passphrase"), -1;
	return 0;
}

/* The joined map's size now is what the mapping covers. */
static void
crypt_note(struct volume *v)
{
	char dm[SYS_NAME_MAX];
	uint64_t size;

	volume_dm_name(v->name, dm, sizeof(dm));
	v->crypt_over = sys->dev_size(dm, &size) == 0 ? size : 0;
}

int
crypt_covers(const struct volume *v)
{
	char dm[SYS_NAME_MAX];
	uint64_t size;

	volume_dm_name(v->name, dm, sizeof(dm));
	return v->crypt_over != 0 && sys->dev_size(dm, &size) == 0 && size <= v->crypt_over;
}

struct resize {
	char		 name[LABEL_NAME_MAX];
	struct crypt_key *key;
	int		 slot;		/* the keyslot that opened */
	crypt_done_cb	 cb;
	void		*arg;
};

static void
resize_done(int code, const char *msg, void *arg)
{
	struct resize r = *(struct resize *)arg;
	struct volume *v;

	free(arg);
	if (code == 0 && r.slot >= 0)
		r.key->keyslot = r.slot + 1;
	if (code == 0 && (v = volume_find(r.name)) != NULL)
		crypt_note(v);
	r.cb(code, msg, r.arg);
}

int
crypt_resize(struct volume *v, struct crypt_key *k, crypt_done_cb cb, void *arg)
{
	char dm[SYS_NAME_MAX], dev[SYS_NAME_MAX + 16], name[SYS_NAME_MAX];
	struct resize *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return -1;
	snprintf(r->name, sizeof(r->name), "%s", v->name);
	r->key = k;
	r->slot = -1;
	r->cb = cb;
	r->arg = arg;
	volume_dm_name(v->name, dm, sizeof(dm));
	snprintf(dev, sizeof(dev), "/dev/mapper/%s", dm);
	crypt_map_name(v->name, name, sizeof(name));
	if (crypt_ops()->resize(dev, name, k->pass, k->pass ? NULL : k->keyfile,
	    k->keyslot - 1, &r->slot, resize_done, r) == -1) {
		free(r);
		return -1;
	}
	return 0;
}

/* ---- volume.unlock: a job, so raidd answers others while cryptd's KDF runs ---- */

struct unlock {
	char		 name[LABEL_NAME_MAX];
	struct job	*job;
	struct secret	*pass;
};

static void
unlock_release(void *arg)
{
	struct unlock *u = arg;

	secret_free(u->pass);
	free(u);
}

static const struct job_ops unlock_ops = { .release = unlock_release };

static void
announce(const char *topic, const struct volume *v)
{
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "name", json_object_new_string(v->name));
	nas_event(topic, ev);
}

/*
 * A grow or an add stopped on the locked volume (after a power cut it
 * comes back locked): carried on now.  cryptd opened the mapping over
 * the joined map as it is now (crypt_note), so once the map has its
 * full size the filesystem step needs no key; before that it stops and
 * volume.grow / volume.add_disk with the passphrase carries it on.
 */
static void
carry_on(struct volume *v)
{
	if (v->job != NULL)
		return;
	if (v->label.intent.op == LABEL_OP_EXPANDING)
		grow_resume(v);
	else if (v->label.intent.op == LABEL_OP_ADDING)
		add_resume(v);
}

static void
unlock_done(int code, const char *msg, void *arg)
{
	struct unlock *u = arg;
	/* Looked up again: the table may have moved while cryptd worked. */
	struct volume *v = volume_find(u->name);
	char err[256];

	secret_free(u->pass);
	u->pass = NULL;
	if (v != NULL && code == 0)
		crypt_note(v);
	if (u->job == NULL) {
		/* No job could be made: nobody waits for this answer. */
		if (v != NULL && code == 0 && volume_mount(v, err, sizeof(err)) == -1)
			log_warnx("volume %s: unlocked but not mounted: %s", u->name, err);
		unlock_release(u);
		if (v != NULL && code == 0)
			carry_on(v);
		return;
	}
	if (v == NULL || v->job != u->job) {
		job_fail(u->job, NAS_ERR_FAILED, "volume %s went away while unlocking", u->name);
		return;
	}
	v->job = NULL;
	if (code != 0) {
		log_warnx("volume %s: not unlocked: %s", v->name, msg);
		job_fail(u->job, code, "volume %s: %s", v->name, msg);
		return;
	}
	log_info("volume %s: unlocked", v->name);
	announce("volume.unlocked", v);
	if (volume_mount(v, err, sizeof(err)) == -1) {
		job_fail(u->job, NAS_ERR_FAILED, "volume %s is unlocked but not mounted: %s",
		    v->name, err);
		return;
	}
	job_done(u->job, volume_describe(v));
	carry_on(v);
}

/* The volume named, encrypted, with no job; the call answered if not. */
static struct volume *
crypt_volume(struct rpc_call *c, struct json_object *params)
{
	struct volume *v = find_or_fail(c, params);

	if (v != NULL && !crypt_encrypted(v)) {
		rpc_error(c, NAS_ERR_INVALID, "volume %s is not encrypted", v->name);
		return NULL;
	}
	return v;
}

/*
 * The unlock job of v with pass (taken: freed whatever happens) or the
 * key file at path; NULL with err (errno ECONNREFUSED: cryptd is not
 * there).
 */
struct job *
crypt_unlock_start(struct volume *v, struct secret *pass, const char *keyfile,
    char *err, size_t errlen)
{
	char dm[SYS_NAME_MAX], dev[SYS_NAME_MAX + 16], name[SYS_NAME_MAX];
	struct unlock *u;
	int rc, e;

	if ((u = calloc(1, sizeof(*u))) == NULL) {
		secret_free(pass);
		return snprintf(err, errlen, "out of memory"), NULL;
	}
	u->pass = pass;
	snprintf(u->name, sizeof(u->name), "%s", v->name);
	volume_dm_name(v->name, dm, sizeof(dm));
	snprintf(dev, sizeof(dev), "/dev/mapper/%s", dm);
	crypt_map_name(v->name, name, sizeof(name));
	/* cryptd first: no failed job is left behind while it is not there
	   (auto-unlock asks every second until it is). */
	rc = pass ? crypt_ops()->open(dev, name, pass, unlock_done, u) :
	    crypt_ops()->open_keyfile(dev, name, keyfile, unlock_done, u);
	if (rc == -1) {
		e = errno;
		snprintf(err, errlen, "cryptd cannot be asked: %s", strerror(e));
		unlock_release(u);
		errno = e;
		return NULL;
	}
	/* The answer comes from the loop, never before this returns. */
	if ((u->job = job_start("volume.unlock", v->name, &unlock_ops, u)) == NULL)
		return snprintf(err, errlen, "too many jobs (unlocking all the same)"), NULL;
	job_progress(u->job, 0, "asking cryptd");
	v->job = u->job;
	return u->job;
}

static void
volume_unlock(struct rpc_call *c, struct json_object *params)
{
	struct json_object *o;
	struct secret *pass;
	struct volume *v;
	struct job *j;
	char err[256];

	if ((v = crypt_volume(c, params)) == NULL)
		return;
	if (!v->assembled) {
		rpc_error(c, NAS_ERR_FAILED, "volume %s is not assembled: %s", v->name,
		    v->problem[0] ? v->problem : "members missing");
		return;
	}
	if (!crypt_locked(v)) {
		rpc_error(c, NAS_ERR_EXISTS, "volume %s is already unlocked", v->name);
		return;
	}
	if ((pass = secret_from_param(params, "passphrase")) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "no locked memory for the passphrase");
		return;
	}
	if ((j = crypt_unlock_start(v, pass, NULL, err, sizeof(err))) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "volume %s: %s", v->name, err);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_int((int)job_id(j)));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	rpc_result(c, o);
}

static void
volume_lock(struct rpc_call *c, struct json_object *params)
{
	struct volume *v;
	char err[256];

	if ((v = crypt_volume(c, params)) == NULL)
		return;
	if (crypt_close(v, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_BUSY, "%s", err);
		return;
	}
	log_info("volume %s: locked", v->name);
	announce("volume.locked", v);
	rpc_result(c, volume_describe(v));
}

static const struct rpc_param unlock_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" },
	{ "passphrase", RPC_STRING, RPC_REQUIRED | RPC_SECRET, 1, 512, NULL,
	  "the volume's passphrase" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
static const struct rpc_param lock_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method crypt_methods[] = {
	{ "volume.unlock", volume_unlock, unlock_params, RPC_MUTATES,
	  "open an encrypted volume with its passphrase and mount it; returns a job id" },
	{ "volume.lock", volume_lock, lock_params, RPC_MUTATES,
	  "unmount an encrypted volume and close its mapping" },
	{ NULL, NULL, NULL, 0, NULL }
};
