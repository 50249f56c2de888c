/*
 * api-crypt.c: the crypt.*, key.* and header.* methods.  Passphrases
 * arrive as RPC_SECRET parameters and are moved at once into a struct
 * secret (the request's string wiped); key files are read straight
 * into one.  Every attempt to unlock counts against the device's rate
 * limit (volume.c).  Messages name devices and slots, never a secret.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyfile.h"
#include "log.h"
#include "rpc.h"
#include "secret.h"
#include "cryptd.h"
#include "prom.h"
#include "system.h"

static char file_dirs[256] = "/volumes /media /mnt";

void
crypt_set_file_dirs(const char *dirs)
{
	snprintf(file_dirs, sizeof(file_dirs), "%s", dirs);
}

/* The secret named pname, or the key file named fname; exactly one. */
static struct secret *
take_secret(struct rpc_call *call, struct json_object *params, const char *pname,
    const char *fname)
{
	const char *file = rpc_param_str(params, fname, NULL);
	int has = json_object_object_get_ex(params, pname, NULL);
	char err[LUKS2_ERRLEN];
	struct secret *s;

	if (has == (file != NULL)) {
		rpc_error(call, RPC_INVALID_PARAMS, "give %s or %s, not both or neither",
		    pname, fname);
		return NULL;
	}
	if (file != NULL) {
		/* Under file_dirs too: a client must not get root to try
		 * /etc/shadow's bytes as a key, nor open a device node. */
		if ((s = keyfile_read(file_dirs, file, err, sizeof(err))) == NULL)
			rpc_error(call, NAS_ERR_FAILED, "%s", err);
		return s;
	}
	if ((s = secret_from_param(params, pname)) == NULL)
		rpc_error(call, NAS_ERR_FAILED, "no locked memory for the passphrase");
	else if (s->len == 0) {
		secret_free(s);
		rpc_error(call, RPC_INVALID_PARAMS, "%s is empty", pname);
		return NULL;
	}
	return s;
}

static int
busy(struct rpc_call *call, const char *device, struct cdev *d)
{
	if (!kdf_job_busy(d))
		return 0;
	cdev_close(d);
	rpc_error(call, NAS_ERR_BUSY, "%s: a key derivation runs on it; try again "
	    "when it is done", device);
	return -1;
}

/* An opened device and its header, refusing what is not LUKS. */
static int
open_header(struct rpc_call *call, const char *device, int excl, struct cdev *d,
    struct luks2 **h)
{
	char err[LUKS2_ERRLEN];

	if (cdev_open(device, excl, d, err, sizeof(err)) != 0) {
		rpc_error(call, errno == EBUSY ? NAS_ERR_BUSY : NAS_ERR_NOT_FOUND,
		    "%s", err);
		return -1;
	}
	/* Nothing writes a header, nor tries a passphrase, under a running job. */
	if (excl >= 0 && busy(call, device, d) != 0)
		return -1;
	if (luks2_load(&d->io, h, err, sizeof(err)) != 0) {
		cdev_close(d);
		rpc_error(call, NAS_ERR_INVALID, "%s: %s", device, err);
		return -1;
	}
	return 0;
}

/*
 * A job for device with its header, if the back-off lets a passphrase
 * be tried now, with the passphrase (or key file) of params.  On
 * failure the call is answered.
 */
static struct kdf_job *
unlock_job(struct rpc_call *call, struct json_object *params, int luks2_only)
{
	const char *device = rpc_param_str(params, "device", "");
	struct kdf_job *j;
	double wait;

	if ((j = kdf_job_new()) == NULL) {
		rpc_error(call, NAS_ERR_FAILED, "out of memory");
		return NULL;
	}
	snprintf(j->device, sizeof(j->device), "%s", device);
	if (open_header(call, device, 0, &j->d, &j->h) != 0) {
		free(j);
		return NULL;
	}
	if (luks2_only && j->h->version != 2) {
		rpc_error(call, NAS_ERR_INVALID, "%s: LUKS1 is read only", device);
		goto fail;
	}
	if ((wait = ratelimit_wait(&j->d)) > 0) {
		rpc_error_data(call, NAS_ERR_BUSY, json_object_new_double(wait),
		    "%s: too many wrong passphrases; try again in %.0f s", device,
		    wait + 0.5);
		goto fail;
	}
	if ((j->pass = take_secret(call, params, "passphrase", "keyfile")) == NULL)
		goto fail;
	return j;
fail:
	kdf_job_free(j);
	return NULL;
}

/* On the worker: the volume key from the passphrase, which is wiped. */
static int
unlock_work(struct kdf_job *j)
{
	j->rc = luks2_unlock(&j->d.io, j->h, j->pass->buf, j->pass->len, j->want_slot, &j->vk,
	    &j->slot, j->err, sizeof(j->err));
	secret_free(j->pass);
	j->pass = NULL;
	return j->rc;
}

/* On the loop: the attempt counted by the rate limit; on failure the call answered. */
static int
unlock_done(struct rpc_call *call, struct kdf_job *j)
{
	/* The KDF could not run (its memory not locked): no passphrase was tried. */
	if (j->rc == -2) {
		log_warnx("%s: %s", j->device, j->err);
		rpc_error(call, NAS_ERR_FAILED, "%s: %s", j->device, j->err);
		return -1;
	}
	ratelimit_note(&j->d, j->rc == 0);
	cryptd_metrics_write();
	if (j->rc == 0)
		return 0;
	log_warnx("%s: wrong passphrase", j->device);
	rpc_error(call, NAS_ERR_DENIED, "%s: %s", j->device, j->err);
	return -1;
}

static struct json_object *
keyslots_json(const struct luks2 *h)
{
	struct json_object *a = json_object_new_array(), *o;
	int i;

	for (i = 0; i < LUKS2_KEYSLOTS; i++) {
		if (!h->ks[i].used)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_int(i));
		json_object_object_add(o, "kdf", luks2_kdf_json(&h->ks[i].kdf, 0));
		json_object_array_add(a, o);
	}
	return a;
}

/* The open mapping of h, if any: its name. */
static struct json_object *
open_mapping(const struct luks2 *h)
{
	struct json_object *a = json_object_new_array(), *r = NULL, *v;
	char want[160];
	size_t i;

	map_dm_uuid(h, "", want, sizeof(want));
	sys->map_list(a);
	for (i = 0; i < json_object_array_length(a) && r == NULL; i++) {
		struct json_object *m = json_object_array_get_idx(a, i);

		json_object_object_get_ex(m, "uuid", &v);
		if (strncmp(json_object_get_string(v), want, strlen(want)) == 0 &&
		    json_object_object_get_ex(m, "name", &v))
			r = json_object_get(v);
	}
	json_object_put(a);
	return r;
}

static struct json_object *
header_json(const char *device, const struct luks2 *h)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "device", json_object_new_string(device));
	json_object_object_add(o, "version", json_object_new_int(h->version));
	json_object_object_add(o, "uuid", json_object_new_string(h->uuid));
	json_object_object_add(o, "label", json_object_new_string(h->label));
	json_object_object_add(o, "cipher", json_object_new_string(h->cipher));
	json_object_object_add(o, "sector_size", json_object_new_int64(h->sector_size));
	json_object_object_add(o, "data_offset", json_object_new_int64((int64_t)h->data_offset));
	json_object_object_add(o, "keyslots", keyslots_json(h));
	json_object_object_add(o, "header_repair_needed",
	    json_object_new_boolean(h->version == 2 && h->repair));
	json_object_object_add(o, "open", open_mapping(h));
	return o;
}

/* key_bits of the first keyslot for the answer: any slot has the key size. */
static int
key_bits(const struct luks2 *h)
{
	int i;

	for (i = 0; i < LUKS2_KEYSLOTS; i++)
		if (h->ks[i].used)
			return (int)h->ks[i].key_size * 8;
	return 0;
}

/* crypt.show, and key.list (keyslots only). */
static void
show(struct rpc_call *call, struct json_object *params, int slots_only)
{
	const char *device = rpc_param_str(params, "device", "");
	struct json_object *o;
	struct luks2 *h;
	struct cdev d;

	if (open_header(call, device, -1, &d, &h) != 0)
		return;
	if (slots_only) {
		o = json_object_new_object();
		json_object_object_add(o, "keyslots", keyslots_json(h));
	} else {
		o = header_json(device, h);
		json_object_object_add(o, "key_bits", json_object_new_int(key_bits(h)));
	}
	luks2_free(h);
	cdev_close(&d);
	rpc_result(call, o);
}

static void
crypt_show(struct rpc_call *call, struct json_object *params)
{
	show(call, params, 0);
}

static void
key_list(struct rpc_call *call, struct json_object *params)
{
	show(call, params, 1);
}

static void
crypt_list(struct rpc_call *call, struct json_object *params)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();

	(void)params;
	sys->map_list(a);
	json_object_object_add(o, "mappings", a);
	rpc_result(call, o);
}

static enum luks2_kdf_type
kdf_type_of(const char *s)
{
	if (s == NULL)
		return kdf_config()->type;
	return strcmp(s, "pbkdf2") == 0 ? KDF_PBKDF2 :
	    strcmp(s, "argon2i") == 0 ? KDF_ARGON2I : KDF_ARGON2ID;
}

static void
format_work(struct kdf_job *j)
{
	struct secret *vk = NULL;

	kdf_params(j->kdf_type, &j->fo.kdf, &j->fo.digest_iterations, NULL);
	j->rc = luks2_format(&j->d.io, &j->fo, j->pass->buf, j->pass->len, &j->h, &vk,
	    j->err, sizeof(j->err));
	secret_free(vk);
	secret_free(j->pass);
	j->pass = NULL;
}

static void
format_done(struct rpc_call *call, struct kdf_job *j)
{
	struct json_object *o;

	if (j->rc != 0) {
		rpc_error(call, NAS_ERR_FAILED, "%s: %s", j->device, j->err);
		return;
	}
	log_info("%s: formatted, uuid %s", j->device, j->h->uuid);
	o = header_json(j->device, j->h);
	json_object_object_add(o, "key_bits", json_object_new_int(key_bits(j->h)));
	rpc_result(call, o);
}

static void
crypt_format(struct rpc_call *call, struct json_object *params)
{
	const char *device = rpc_param_str(params, "device", "");
	const char *cipher = rpc_param_str(params, "cipher", NULL);
	const char *label = rpc_param_str(params, "label", NULL);
	char err[LUKS2_ERRLEN];
	struct kdf_job *j;
	int64_t bits = rpc_param_int(params, "key_bits", 512);

	if (bits != 256 && bits != 512) {
		rpc_error(call, RPC_INVALID_PARAMS, "key_bits is 256 or 512");
		return;
	}
	if ((j = kdf_job_new()) == NULL) {
		rpc_error(call, NAS_ERR_FAILED, "out of memory");
		return;
	}
	/* The job keeps copies: params are freed when the handler returns. */
	snprintf(j->device, sizeof(j->device), "%s", device);
	snprintf(j->cipher, sizeof(j->cipher), "%s", cipher ? cipher : "");
	snprintf(j->label, sizeof(j->label), "%s", label ? label : "");
	j->fo.key_bytes = (uint32_t)bits / 8;
	j->fo.cipher = cipher ? j->cipher : NULL;
	j->fo.label = label ? j->label : NULL;
	j->fo.sector_size = (uint32_t)rpc_param_int(params, "sector_size", 0);
	j->kdf_type = kdf_type_of(rpc_param_str(params, "kdf", NULL));
	if (cdev_open(device, 1, &j->d, err, sizeof(err)) != 0) {
		rpc_error(call, errno == EBUSY ? NAS_ERR_BUSY : NAS_ERR_NOT_FOUND, "%s", err);
		goto fail;
	}
	if (busy(call, device, &j->d) != 0)
		goto fail;
	if (!rpc_param_bool(params, "force", 0) && luks2_present(&j->d.io)) {
		rpc_error(call, NAS_ERR_REFUSED, "%s holds a LUKS volume (one cryptd "
		    "opens or not); force to destroy it", device);
		goto fail;
	}
	if ((j->pass = take_secret(call, params, "passphrase", "keyfile")) == NULL)
		goto fail;
	kdf_job_start(call, j, format_work, format_done);
	return;
fail:
	kdf_job_free(j);
}

static void
open_work(struct kdf_job *j)
{
	unlock_work(j);
}

static void
open_done(struct rpc_call *call, struct kdf_job *j)
{
	struct json_object *o;
	char err[LUKS2_ERRLEN];

	if (unlock_done(call, j) != 0)
		return;
	/* Proven the owner's: a damaged or older copy is mended now. */
	if (j->h->version == 2 && j->h->repair) {
		if (luks2_store(&j->d.io, j->h, err, sizeof(err)) != 0)
			log_warnx("%s: header repair: %s", j->device, err);
		else
			log_info("%s: damaged header copy repaired", j->device);
	}
	/* Asked again: another name may have been taken meanwhile. */
	if ((o = open_mapping(j->h)) != NULL) {
		rpc_error(call, NAS_ERR_BUSY, "%s: open already as %s", j->device,
		    json_object_get_string(o));
		json_object_put(o);
		return;
	}
	if (map_open(j->h, &j->d, j->name, j->vk, err, sizeof(err)) != 0) {
		rpc_error(call, errno == EEXIST ? NAS_ERR_EXISTS : NAS_ERR_FAILED,
		    "%s: %s", j->device, err);
		return;
	}
	log_info("%s: opened as %s (keyslot %d)", j->device, j->name, j->slot);
	cryptd_metrics_write();
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(j->name));
	snprintf(err, sizeof(err), "/dev/mapper/%s", j->name);
	json_object_object_add(o, "path", json_object_new_string(err));
	json_object_object_add(o, "keyslot", json_object_new_int(j->slot));
	rpc_result(call, o);
}

static void
crypt_open(struct rpc_call *call, struct json_object *params)
{
	const char *device = rpc_param_str(params, "device", "");
	const char *name = rpc_param_str(params, "name", "");
	struct json_object *o;
	struct kdf_job *j;
	char uuid[160];

	if (!map_name_ok(name)) {
		rpc_error(call, RPC_INVALID_PARAMS, "name: letters, digits, _ . - only");
		return;
	}
	/* device-mapper, dm-crypt, keyring: the simulator has them all. */
	if (sys == &sys_linux && (nas_feature_require(call, &cryptd_features[0]) != 0 ||
	    nas_feature_require(call, &cryptd_features[1]) != 0 ||
	    nas_feature_require(call, &cryptd_features[2]) != 0))
		return;
	if (sys->map_uuid(name, uuid, sizeof(uuid)) == 0) {
		rpc_error(call, NAS_ERR_EXISTS, "a mapping %s exists", name);
		return;
	}
	if ((j = unlock_job(call, params, 0)) == NULL)
		return;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->want_slot = (int)rpc_param_int(params, "keyslot", -1);
	/* Two mappings of one volume, both mounted, would corrupt it. */
	if ((o = open_mapping(j->h)) != NULL || cdev_busy(&j->d)) {
		rpc_error(call, NAS_ERR_BUSY, "%s: %s%s", device, o ? "open already as " :
		    "in use (mounted, in an array or mapped)", o ? json_object_get_string(o) : "");
		json_object_put(o);
		kdf_job_free(j);
		return;
	}
	kdf_job_start(call, j, open_work, open_done);
}

static void
crypt_close(struct rpc_call *call, struct json_object *params)
{
	const char *name = rpc_param_str(params, "name", "");
	char uuid[160];

	if (!map_name_ok(name) || sys->map_uuid(name, uuid, sizeof(uuid)) != 0) {
		rpc_error(call, NAS_ERR_NOT_FOUND, "no mapping %s", name);
		return;
	}
	if (strncmp(uuid, "CRYPT-", 6) != 0) {
		rpc_error(call, NAS_ERR_INVALID, "%s is not an encrypted mapping", name);
		return;
	}
	if (sys->map_remove(name) != 0) {
		rpc_error(call, errno == EBUSY ? NAS_ERR_BUSY : NAS_ERR_FAILED, "%s: %s",
		    name, errno == EBUSY ? "in use (mounted?)" : strerror(errno));
		return;
	}
	log_info("%s: closed", name);
	rpc_result(call, json_object_new_object());
}

static void
resize_work(struct kdf_job *j)
{
	unlock_work(j);
}

static void
resize_done(struct rpc_call *call, struct kdf_job *j)
{
	struct json_object *o;
	char err[LUKS2_ERRLEN];
	uint64_t was, now;

	if (unlock_done(call, j) != 0)
		return;
	if (cdev_size_now(&j->d, err, sizeof(err)) != 0 ||
	    map_resize(j->h, &j->d, j->name, j->vk, &was, &now, err, sizeof(err)) != 0) {
		rpc_error(call, NAS_ERR_FAILED, "%s: %s", j->device, err);
		return;
	}
	if (now != was)
		log_info("%s: mapping %s grown from %llu to %llu bytes", j->device, j->name,
		    (unsigned long long)was, (unsigned long long)now);
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(j->name));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)now));
	json_object_object_add(o, "was_bytes", json_object_new_int64((int64_t)was));
	json_object_object_add(o, "keyslot", json_object_new_int(j->slot));
	rpc_result(call, o);
}

/*
 * crypt.resize: an open mapping grows to its device's size now (md and
 * dm below it grew).  The table is loaded again, and it holds the key:
 * the passphrase is asked for, as it is for crypt.open, and the key
 * again goes through the keyring only for the load.
 */
static void
crypt_resize(struct rpc_call *call, struct json_object *params)
{
	const char *name = rpc_param_str(params, "name", "");
	char err[LUKS2_ERRLEN];
	struct kdf_job *j;
	uint64_t sectors;

	if (!map_name_ok(name)) {
		rpc_error(call, RPC_INVALID_PARAMS, "name: letters, digits, _ . - only");
		return;
	}
	if ((j = unlock_job(call, params, 0)) == NULL)
		return;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->want_slot = (int)rpc_param_int(params, "keyslot", -1);
	/* Before the KDF: the mapping must be this device's already. */
	if (map_is_of(j->h, &j->d, name, &sectors, err, sizeof(err)) != 0) {
		rpc_error(call, NAS_ERR_NOT_FOUND, "%s: %s", j->device, err);
		kdf_job_free(j);
		return;
	}
	/* A keyslot gone (key.change dropped it) opens with no passphrase:
	   refused untried, so the back-off counts nothing (Decision 123). */
	if (j->want_slot >= 0 && !j->h->ks[j->want_slot].used) {
		rpc_error(call, NAS_ERR_DENIED, "%s: keyslot %d is not in use: passphrase not "
		    "tried", j->device, j->want_slot);
		kdf_job_free(j);
		return;
	}
	kdf_job_start(call, j, resize_work, resize_done);
}

/* On the worker: a new keyslot for the new passphrase (header stored). */
static int
add_slot(struct kdf_job *j)
{
	struct luks2_kdf k;
	int rc;

	kdf_params(j->kdf_type, &k, NULL, NULL);
	rc = luks2_keyslot_add(&j->d.io, j->h, j->vk, j->new_pass->buf, j->new_pass->len,
	    &k, &j->nslot, j->err2, sizeof(j->err2));
	secret_free(j->new_pass);
	j->new_pass = NULL;
	if (rc == 0)
		rc = luks2_store(&j->d.io, j->h, j->err2, sizeof(j->err2));
	return rc;
}

/* Keyslot slot out of the header (stored), then its area wiped. */
static int
drop_slot(struct cdev *d, struct luks2 *h, int slot, char *err, size_t errlen)
{
	uint64_t off = h->ks[slot].area_offset, size = h->ks[slot].area_size;

	if (luks2_keyslot_drop(h, slot, err, errlen) != 0 ||
	    luks2_store(&d->io, h, err, errlen) != 0 ||
	    luks2_area_wipe(&d->io, off, size, err, errlen) != 0)
		return -1;
	return 0;
}

/* key.add and key.change (add, then drop the slot that opened). */
static void
key_add_work(struct kdf_job *j)
{
	if (unlock_work(j) != 0)
		return;
	if (add_slot(j) != 0 ||
	    (j->change && drop_slot(&j->d, j->h, j->slot, j->err2, sizeof(j->err2)) != 0))
		j->rc2 = -1;
}

static void
key_add_done(struct rpc_call *call, struct kdf_job *j)
{
	struct json_object *o;

	if (unlock_done(call, j) != 0)
		return;
	if (j->rc2 != 0) {
		rpc_error(call, NAS_ERR_FAILED, "%s: %s", j->device, j->err2);
		return;
	}
	log_info("%s: key %s (keyslot %d)", j->device, j->change ? "changed" : "added",
	    j->nslot);
	o = json_object_new_object();
	json_object_object_add(o, "keyslot", json_object_new_int(j->nslot));
	rpc_result(call, o);
}

static void
key_add_or_change(struct rpc_call *call, struct json_object *params, int change)
{
	struct kdf_job *j;

	if ((j = unlock_job(call, params, 1)) == NULL)
		return;
	j->change = change;
	j->kdf_type = kdf_config()->type;
	if ((j->new_pass = take_secret(call, params, "new_passphrase", "new_keyfile")) == NULL) {
		kdf_job_free(j);
		return;
	}
	kdf_job_start(call, j, key_add_work, key_add_done);
}

static void
key_add(struct rpc_call *call, struct json_object *params)
{
	key_add_or_change(call, params, 0);
}

static void
key_change(struct rpc_call *call, struct json_object *params)
{
	key_add_or_change(call, params, 1);
}

static void
key_remove_work(struct kdf_job *j)
{
	if (unlock_work(j) != 0)
		return;
	/* Refused only to one who knows a passphrase: it tells nothing else. */
	if (luks2_keyslot_count(j->h) == 1 && !j->force)
		j->rc2 = -2;
	else if (drop_slot(&j->d, j->h, j->slot, j->err2, sizeof(j->err2)) != 0)
		j->rc2 = -1;
}

static void
key_remove_done(struct rpc_call *call, struct kdf_job *j)
{
	if (unlock_done(call, j) != 0)
		return;
	if (j->rc2 == -2) {
		rpc_error(call, NAS_ERR_REFUSED, "%s: the last key: without it the data "
		    "is lost for good; force to remove it", j->device);
		return;
	}
	if (j->rc2 != 0) {
		rpc_error(call, NAS_ERR_FAILED, "%s: %s", j->device, j->err2);
		return;
	}
	log_info("%s: keyslot %d removed", j->device, j->slot);
	cryptd_metrics_write();
	rpc_result(call, json_object_new_object());
}

static void
key_remove(struct rpc_call *call, struct json_object *params)
{
	struct kdf_job *j;

	if ((j = unlock_job(call, params, 1)) == NULL)
		return;
	j->force = rpc_param_bool(params, "force", 0);
	kdf_job_start(call, j, key_remove_work, key_remove_done);
}

/* Bytes of header and keyslots: what a backup holds. */
static uint64_t
header_bytes(const struct luks2 *h)
{
	return h->version == 2 ? 2 * h->hdr_size + h->keyslots_size : h->data_offset;
}

static void
header_backup(struct rpc_call *call, struct json_object *params)
{
	const char *device = rpc_param_str(params, "device", "");
	const char *file = rpc_param_str(params, "file", "");
	struct luks2_io out;
	struct luks2 *h;
	struct cdev d;
	char err[LUKS2_ERRLEN];
	uint64_t n;
	int fd;

	/* Read only: a backup writes nothing to the device it copies. */
	if (open_header(call, device, -1, &d, &h) != 0)
		return;
	/* Nor copies a header a running job may be rewriting. */
	if (busy(call, device, &d) != 0) {
		luks2_free(h);
		return;
	}
	n = header_bytes(h);
	/*
	 * A new file, root's alone: it holds every keyslot.  Under
	 * file_dirs, no symlink on the way: an admin must not get root to
	 * write a file elsewhere (a header whose label is a shell line in
	 * /etc, say).
	 */
	if ((fd = path_open_under(file_dirs, file, O_WRONLY | O_CREAT | O_EXCL, err,
	    sizeof(err))) < 0) {
		rpc_error(call, NAS_ERR_FAILED, "%s", err);
		goto out;
	}
	luks2_io_fd(&out, &fd, n);
	if (luks2_copy(&d.io, &out, 0, n) != 0 || fsync(fd) != 0) {
		close(fd);
		unlink(file);
		rpc_error(call, NAS_ERR_FAILED, "%s: cannot write the backup", file);
		goto out;
	}
	close(fd);
	log_info("%s: header backed up to %s", device, file);
	params = json_object_new_object();
	json_object_object_add(params, "bytes", json_object_new_int64((int64_t)n));
	rpc_result(call, params);
out:
	luks2_free(h);
	cdev_close(&d);
}

static void
header_restore(struct rpc_call *call, struct json_object *params)
{
	const char *device = rpc_param_str(params, "device", "");
	const char *file = rpc_param_str(params, "file", "");
	char err[LUKS2_ERRLEN];
	struct luks2 *b = NULL, *cur = NULL;
	struct luks2_io in;
	struct stat st;
	struct cdev d;
	int fd;

	if (strcmp(rpc_param_str(params, "confirm", ""), device) != 0) {
		rpc_error(call, NAS_ERR_REFUSED, "confirm must repeat the device: the "
		    "keys of the backup replace the current ones");
		return;
	}
	/* Never a FIFO's or a device's open (keyfile.c). */
	if ((fd = path_open_regular(file_dirs, file, &st, err, sizeof(err))) < 0) {
		rpc_error(call, NAS_ERR_NOT_FOUND, "%s", err);
		return;
	}
	/*
	 * A backup others could have written might hold keyslots of theirs
	 * over the volume's uuid: restored, it locks the owner out.
	 */
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		close(fd);
		rpc_error(call, NAS_ERR_REFUSED, "%s: refused: a backup must be root's and "
		    "writable by root only", file);
		return;
	}
	luks2_io_fd(&in, &fd, (uint64_t)st.st_size);
	if (luks2_load(&in, &b, err, sizeof(err)) != 0 ||
	    (uint64_t)st.st_size != header_bytes(b)) {
		close(fd);
		luks2_free(b);
		rpc_error(call, NAS_ERR_INVALID, "%s: not a header backup: %s", file,
		    b ? "wrong size" : err);
		return;
	}
	if (cdev_open(device, 1, &d, err, sizeof(err)) != 0) {
		close(fd);
		luks2_free(b);
		rpc_error(call, NAS_ERR_BUSY, "%s", err);
		return;
	}
	/* O_EXCL does not see a job's plain descriptor: asked here. */
	if (busy(call, device, &d) != 0) {
		close(fd);
		luks2_free(b);
		return;
	}
	/*
	 * The data must stay readable: the same volume (uuid) and segment,
	 * or no readable header now (the case a backup is for).
	 */
	if (luks2_load(&d.io, &cur, NULL, 0) == 0 &&
	    (strcmp(cur->uuid, b->uuid) != 0 || cur->data_offset != b->data_offset ||
	    strcmp(cur->cipher, b->cipher) != 0 || cur->sector_size != b->sector_size)) {
		rpc_error(call, NAS_ERR_INVALID, "%s: the backup is of another volume "
		    "(uuid, offset, cipher or sector size differ)", device);
	} else if (b->data_offset >= d.size) {
		rpc_error(call, NAS_ERR_INVALID, "%s: the backup's data offset is past its end",
		    device);
	} else if (luks2_restore(&in, &d.io, b, err, sizeof(err)) != 0) {
		rpc_error(call, NAS_ERR_FAILED, "%s: cannot restore the header: %s", device, err);
	} else {
		log_info("%s: header restored from %s", device, file);
		rpc_result(call, json_object_new_object());
	}
	close(fd);
	luks2_free(b);
	luks2_free(cur);
	cdev_close(&d);
}

static void
crypt_erase(struct rpc_call *call, struct json_object *params)
{
	const char *device = rpc_param_str(params, "device", "");
	char err[LUKS2_ERRLEN];
	struct luks2 *h;
	struct cdev d;
	int i, n = 0;

	if (strcmp(rpc_param_str(params, "confirm", ""), device) != 0) {
		rpc_error(call, NAS_ERR_REFUSED, "confirm must repeat the device: every "
		    "key is wiped and the data is lost for good");
		return;
	}
	if (open_header(call, device, 1, &d, &h) != 0)
		return;
	if (h->version != 2) {
		rpc_error(call, NAS_ERR_INVALID, "%s: LUKS1 is read only", device);
		goto out;
	}
	for (i = 0; i < LUKS2_KEYSLOTS; i++) {
		if (!h->ks[i].used)
			continue;
		if (drop_slot(&d, h, i, err, sizeof(err)) != 0) {
			rpc_error(call, NAS_ERR_FAILED, "%s: %s", device, err);
			goto out;
		}
		n++;
	}
	log_info("%s: erased (%d keyslots wiped)", device, n);
	params = json_object_new_object();
	json_object_object_add(params, "keyslots_wiped", json_object_new_int(n));
	rpc_result(call, params);
out:
	luks2_free(h);
	cdev_close(&d);
}

static void
bench_work(struct kdf_job *j)
{
	kdf_params(j->kdf_type, &j->kdf, &j->digest_iterations, &j->ms);
}

static void
bench_done(struct rpc_call *call, struct kdf_job *j)
{
	struct json_object *o = json_object_new_object(), *k;

	k = luks2_kdf_json(&j->kdf, 0);
	json_object_object_add(k, "ms", json_object_new_int64((int64_t)(j->ms + 0.5)));
	json_object_object_add(o, "kdf", k);
	json_object_object_add(o, "digest_iterations",
	    json_object_new_int64(j->digest_iterations));
	json_object_object_add(o, "max_memory_kib",
	    json_object_new_int64(kdf_config()->max_memory_kib));
	json_object_object_add(o, "time_ms", json_object_new_int64(kdf_config()->time_ms));
	rpc_result(call, o);
}

/* Calibration takes about [kdf] time_ms per type: on the worker too. */
static void
crypt_benchmark(struct rpc_call *call, struct json_object *params)
{
	struct kdf_job *j;

	if ((j = kdf_job_new()) == NULL) {
		rpc_error(call, NAS_ERR_FAILED, "out of memory");
		return;
	}
	j->kdf_type = kdf_type_of(rpc_param_str(params, "kdf", NULL));
	kdf_job_start(call, j, bench_work, bench_done);
}

#define DEVICE	{ "device", RPC_STRING, RPC_REQUIRED, 1, 255, NULL, "block device (/dev/...)" }
#define PASS	{ "passphrase", RPC_STRING, RPC_SECRET, 1, LUKS2_PASS_MAX, NULL, \
		  "a passphrase that opens it" }
#define KEYFILE	{ "keyfile", RPC_STRING, 0, 1, 255, NULL, "or a key file on the NAS" }
#define END	{ NULL, 0, 0, 0, 0, NULL, NULL }

static const char *const kdfs[] = { "argon2id", "argon2i", "pbkdf2", NULL };
static const char *const ciphers[] = { "aes-xts-plain64", NULL };

static const struct rpc_param format_params[] = {
	DEVICE,
	{ "passphrase", RPC_STRING, RPC_SECRET, 1, LUKS2_PASS_MAX, NULL, "the first passphrase" },
	KEYFILE,
	{ "cipher", RPC_STRING, 0, 0, 0, ciphers, "default aes-xts-plain64" },
	{ "key_bits", RPC_INT, 0, 256, 512, NULL, "256 or 512 (default)" },
	{ "kdf", RPC_STRING, 0, 0, 0, kdfs, "default [kdf] type" },
	{ "label", RPC_STRING, 0, 0, 47, NULL, "LUKS label" },
	{ "sector_size", RPC_INT, 0, 512, 4096, NULL, "default 4096 where the size allows" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "format over an existing LUKS volume" },
	END
};
static const struct rpc_param device_params[] = { DEVICE, END };
static const struct rpc_param open_params[] = {
	DEVICE,
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "mapping name: /dev/mapper/NAME" },
	PASS, KEYFILE,
	{ "keyslot", RPC_INT, 0, 0, LUKS2_KEYSLOTS - 1, NULL,
	  "try this keyslot only (one of priority 0, \"ignore\", too)" },
	END
};
static const struct rpc_param resize_params[] = {
	DEVICE,
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "the device's open mapping" },
	PASS, KEYFILE,
	{ "keyslot", RPC_INT, 0, 0, LUKS2_KEYSLOTS - 1, NULL,
	  "try this keyslot only; one not in use is refused untried" },
	END
};
static const struct rpc_param name_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "mapping name" }, END
};
static const struct rpc_param key_add_params[] = {
	DEVICE, PASS, KEYFILE,
	{ "new_passphrase", RPC_STRING, RPC_SECRET, 1, LUKS2_PASS_MAX, NULL, "the key to add" },
	{ "new_keyfile", RPC_STRING, 0, 1, 255, NULL, "or a key file to add" },
	END
};
static const struct rpc_param key_change_params[] = {
	DEVICE,
	{ "passphrase", RPC_STRING, RPC_REQUIRED | RPC_SECRET, 1, LUKS2_PASS_MAX, NULL,
	  "the passphrase to change" },
	{ "new_passphrase", RPC_STRING, RPC_REQUIRED | RPC_SECRET, 1, LUKS2_PASS_MAX, NULL,
	  "what replaces it" },
	END
};
static const struct rpc_param key_remove_params[] = {
	DEVICE, PASS, KEYFILE,
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "remove the last key too" },
	END
};
static const struct rpc_param backup_params[] = {
	DEVICE, { "file", RPC_STRING, RPC_REQUIRED, 1, 255, NULL, "a new file" }, END
};
static const struct rpc_param restore_params[] = {
	DEVICE, { "file", RPC_STRING, RPC_REQUIRED, 1, 255, NULL, "a backup file" },
	{ "confirm", RPC_STRING, RPC_REQUIRED, 1, 255, NULL, "the device again" }, END
};
static const struct rpc_param erase_params[] = {
	DEVICE, { "confirm", RPC_STRING, RPC_REQUIRED, 1, 255, NULL, "the device again" }, END
};
static const struct rpc_param bench_params[] = {
	{ "kdf", RPC_STRING, 0, 0, 0, kdfs, "default [kdf] type" }, END
};

/*
 * The methods that close or wipe something, then cryptd.prom rewritten
 * (cryptd has no timer to catch up later). Those that unlock rewrite it
 * when their job is done (unlock_done).
 */
#define THEN_METRICS(fn)						\
static void								\
fn##_m(struct rpc_call *call, struct json_object *params)		\
{									\
	fn(call, params);						\
	cryptd_metrics_write();						\
}
THEN_METRICS(crypt_close)
THEN_METRICS(crypt_erase)
THEN_METRICS(header_restore)

const struct rpc_method cryptd_crypt_methods[] = {
	{ "crypt.format", crypt_format, format_params, RPC_MUTATES,
	  "write a new LUKS2 header (the data is lost)" },
	{ "crypt.show", crypt_show, device_params, 0,
	  "a LUKS device's header: uuid, cipher, keyslots, open mapping" },
	{ "crypt.list", crypt_list, NULL, 0, "open encrypted mappings" },
	{ "crypt.open", crypt_open, open_params, RPC_MUTATES,
	  "unlock a LUKS device into /dev/mapper/NAME" },
	{ "crypt.close", crypt_close_m, name_params, RPC_MUTATES, "close a mapping" },
	{ "crypt.resize", crypt_resize, resize_params, RPC_MUTATES,
	  "grow an open mapping to its device's size (asks the passphrase)" },
	{ "crypt.erase", crypt_erase_m, erase_params, RPC_MUTATES,
	  "wipe every keyslot: the data is gone for good" },
	{ "crypt.benchmark", crypt_benchmark, bench_params, RPC_MUTATES,
	  "calibrate the KDF on this board (takes about [kdf] time_ms)" },
	{ "key.add", key_add, key_add_params, RPC_MUTATES, "add a passphrase or key file" },
	{ "key.change", key_change, key_change_params, RPC_MUTATES, "change a passphrase" },
	{ "key.remove", key_remove, key_remove_params, RPC_MUTATES,
	  "remove the keyslot a passphrase opens" },
	{ "key.list", key_list, device_params, 0, "a device's keyslots" },
	{ "header.backup", header_backup, backup_params, RPC_MUTATES,
	  "copy the header and keyslots to a new file" },
	{ "header.restore", header_restore_m, restore_params, RPC_MUTATES,
	  "put a header backup back" },
	{ NULL, NULL, NULL, 0, NULL }
};
