/*
 * luks2-keyslot.c: keyslots (a passphrase opens the volume key through
 * the KDF, the keyslot area and the anti-forensic merge), the pbkdf2
 * digest that proves a key right, and format.  Every key, derived key
 * and split key sits in a struct secret, wiped when dropped.  Order of
 * writes: a new keyslot's area before the header that names it; a
 * header without a keyslot before its area is wiped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "secret.h"
#include "luks2.h"

#define ERR(...)	luks2_err(err, errlen, __VA_ARGS__)

/* Argon2 memory a keyslot may ask of this machine (KiB). */
/* Set on the loop (SIGHUP), read by cryptd's KDF workers. */
static _Atomic uint32_t memory_cap = 4U * 1024 * 1024;

void
luks2_set_memory_cap(uint32_t kib)
{
	memory_cap = kib;
}

static uint64_t
af_bytes(uint32_t key_size, uint32_t stripes)
{
	return ((uint64_t)key_size * stripes + 511) / 512 * 512;
}

int
luks2_keyslot_count(const struct luks2 *h)
{
	int i, n = 0;

	for (i = 0; i < LUKS2_KEYSLOTS; i++)
		n += h->ks[i].used;
	return n;
}

/* 1 when vk is the volume key the digest describes. */
static int
digest_match(const struct luks2_digest *d, const struct secret *vk)
{
	uint8_t out[LUKS2_DIGEST_MAX];
	int ok;

	if (luks2_pbkdf2(d->hash, vk->buf, vk->len, d->salt, d->salt_len,
	    d->iterations, out, d->digest_len) != 0)
		return 0;
	ok = CRYPTO_memcmp(out, d->digest, d->digest_len) == 0;
	explicit_bzero(out, sizeof(out));
	return ok;
}

/* Keyslots the last unlock skipped for memory; the thread's own (cryptd's workers). */
static _Thread_local int too_big;

/* 0: vk; -1: not this slot's passphrase; -2: the KDF could not run (err says why). */
static int
try_slot(const struct luks2_io *io, const struct luks2 *h, int i,
    const void *pass, size_t passlen, struct secret **vkp, char *err, size_t errlen)
{
	const struct luks2_keyslot *ks = &h->ks[i];
	uint64_t n = af_bytes(ks->key_size, ks->stripes);
	struct secret *dk = NULL, *af = NULL, *vk = NULL;
	uint8_t *raw = NULL;
	int rc = -1;

	if (!ks->used || ks->digest < 0 || n > ks->area_size)
		return -1;
	if (ks->kdf.type != KDF_PBKDF2 && ks->kdf.memory > (uint32_t)memory_cap) {
		too_big++;
		return -1;
	}
	if ((dk = secret_new(ks->area_key_size)) == NULL ||
	    (af = secret_new(n)) == NULL || (vk = secret_new(ks->key_size)) == NULL ||
	    (raw = malloc(n)) == NULL) {
		rc = ERR("out of locked memory for a keyslot: %s", strerror(errno)) - 1;
		goto out;
	}
	if (luks2_read_at(io, raw, n, ks->area_offset) != 0)
		goto out;
	if (luks2_kdf_derive(&ks->kdf, pass, passlen, dk->buf, ks->area_key_size,
	    err, errlen) != 0) {
		rc = -2;
		goto out;
	}
	if (luks2_xts(0, ks->area_cipher, dk->buf, ks->area_key_size, raw, af->buf,
	    n) != 0 ||
	    luks2_af_merge(af->buf, ks->key_size, ks->stripes, ks->af_hash,
	    vk->buf) != 0)
		goto out;
	vk->len = ks->key_size;
	if (!digest_match(&h->dg[ks->digest], vk))
		goto out;
	*vkp = vk;
	vk = NULL;
	rc = 0;
out:
	free(raw);
	secret_free(dk);
	secret_free(af);
	secret_free(vk);
	return rc;
}

/* Whether keyslot i is tried in the pass for prio (a slot named: in the first pass). */
static int
tried(const struct luks2 *h, int i, int slot, uint32_t prio)
{
	if (!h->ks[i].used)
		return 0;
	if (slot >= 0)
		return i == slot && prio == 2;
	return h->ks[i].priority == prio;
}

int
luks2_unlock(const struct luks2_io *io, const struct luks2 *h, const void *pass,
    size_t passlen, int slot, struct secret **vk, int *slot_out, char *err,
    size_t errlen)
{
	uint32_t prio;
	int i, rc;

	*vk = NULL;
	too_big = 0;
	if (slot >= LUKS2_KEYSLOTS)
		return ERR("no keyslot %d", slot);
	/* High, then normal; ignore (0) never unless named, as cryptsetup. */
	for (prio = 2; prio >= 1; prio--) {
		for (i = 0; i < LUKS2_KEYSLOTS; i++) {
			if (!tried(h, i, slot, prio))
				continue;
			if ((rc = try_slot(io, h, i, pass, passlen, vk, err, errlen)) == 0) {
				if (slot_out != NULL)
					*slot_out = i;
				return 0;
			}
			/* Not a wrong passphrase: nothing was tried. */
			if (rc == -2)
				return -2;
		}
	}
	if (too_big)
		return ERR("no key available with this passphrase (%d keyslot(s) "
		    "skipped: their argon2 memory is more than %u KiB)", too_big,
		    (uint32_t)memory_cap);
	return ERR("no key available with this passphrase");
}

/* The lowest free 4 KiB-aligned place for size bytes in the keyslots area. */
static int
free_area(const struct luks2 *h, uint64_t size, uint64_t *off)
{
	uint64_t at = 2 * h->hdr_size, end = at + h->keyslots_size;
	int i, moved;

	do {
		moved = 0;
		for (i = 0; i < LUKS2_KEYSLOTS; i++) {
			const struct luks2_keyslot *ks = &h->ks[i];

			if (ks->used && at < ks->area_offset + ks->area_size &&
			    ks->area_offset < at + size) {
				at = (ks->area_offset + ks->area_size + 4095) / 4096 * 4096;
				moved = 1;
			}
		}
	} while (moved && at < end);
	if (at > end || size > end - at)
		return -1;
	*off = at;
	return 0;
}

static struct json_object *
u64_str(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	return json_object_new_string(b);
}

static struct json_object *
b64_str(const uint8_t *p, size_t len)
{
	char *s = luks2_b64_encode(p, len);
	struct json_object *o;

	if (s == NULL)
		return NULL;
	o = json_object_new_string(s);
	free(s);
	return o;
}

struct json_object *
luks2_kdf_json(const struct luks2_kdf *k, int with_salt)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string(luks2_kdf_name(k->type)));
	if (k->type == KDF_PBKDF2) {
		json_object_object_add(o, "hash", json_object_new_string(k->hash));
		json_object_object_add(o, "iterations", json_object_new_int64(k->iterations));
	} else {
		json_object_object_add(o, "time", json_object_new_int64(k->time));
		json_object_object_add(o, "memory", json_object_new_int64(k->memory));
		json_object_object_add(o, "cpus", json_object_new_int64(k->cpus));
	}
	if (with_salt)
		json_object_object_add(o, "salt", b64_str(k->salt, k->salt_len));
	return o;
}

static struct json_object *
keyslot_json(const struct luks2_keyslot *ks)
{
	struct json_object *o = json_object_new_object();
	struct json_object *af = json_object_new_object();
	struct json_object *area = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string("luks2"));
	json_object_object_add(o, "key_size", json_object_new_int64(ks->key_size));
	json_object_object_add(af, "type", json_object_new_string("luks1"));
	json_object_object_add(af, "stripes", json_object_new_int64(ks->stripes));
	json_object_object_add(af, "hash", json_object_new_string(ks->af_hash));
	json_object_object_add(o, "af", af);
	json_object_object_add(area, "type", json_object_new_string("raw"));
	json_object_object_add(area, "offset", u64_str(ks->area_offset));
	json_object_object_add(area, "size", u64_str(ks->area_size));
	json_object_object_add(area, "encryption", json_object_new_string(ks->area_cipher));
	json_object_object_add(area, "key_size", json_object_new_int64(ks->area_key_size));
	json_object_object_add(o, "area", area);
	json_object_object_add(o, "kdf", luks2_kdf_json(&ks->kdf, 1));
	return o;
}

/* Parse h->json again (checks what we changed as if read from a disk). */
static int
reparse(struct luks2 *h, char *err, size_t errlen)
{
	const char *t = json_object_to_json_string_ext(h->json, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (t == NULL)
		return ERR("out of memory");
	return luks2_parse_json(t, strlen(t), h, err, errlen);
}

static int
digest_of(const struct luks2 *h)
{
	int i;

	for (i = 0; i < LUKS2_KEYSLOTS; i++)
		if (h->dg[i].used)
			return i;
	return -1;
}

static int
write_area(const struct luks2_io *io, const struct luks2_keyslot *ks,
    const struct secret *vk, const void *pass, size_t passlen, char *err,
    size_t errlen)
{
	uint64_t n = af_bytes(ks->key_size, ks->stripes);
	struct secret *dk = NULL, *af = NULL;
	uint8_t *raw = NULL;
	int rc = -1;

	if ((dk = secret_new(ks->area_key_size)) == NULL ||
	    (af = secret_new(n)) == NULL || (raw = malloc(n)) == NULL) {
		ERR("out of locked memory");
		goto out;
	}
	if (luks2_kdf_derive(&ks->kdf, pass, passlen, dk->buf, ks->area_key_size,
	    err, errlen) != 0)
		goto out;
	if (luks2_af_split(vk->buf, vk->len, ks->stripes, ks->af_hash, af->buf) != 0 ||
	    luks2_xts(1, ks->area_cipher, dk->buf, ks->area_key_size, af->buf, raw,
	    n) != 0) {
		ERR("keyslot encryption failed");
		goto out;
	}
	/* On the disk before the header that names it. */
	if (ks->area_offset > io->size || n > io->size - ks->area_offset ||
	    luks2_write_synced(io, raw, n, ks->area_offset) != 0) {
		ERR("cannot write the keyslot area: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(raw);
	secret_free(dk);
	secret_free(af);
	return rc;
}

int
luks2_keyslot_add(const struct luks2_io *io, struct luks2 *h,
    const struct secret *vk, const void *pass, size_t passlen,
    const struct luks2_kdf *kdf, int *slot_out, char *err, size_t errlen)
{
	struct json_object *ks_obj, *dg_obj, *arr;
	struct luks2_keyslot ks;
	char id[4];
	int i, d;

	if (h->version != 2)
		return ERR("LUKS1 headers are read only");
	if ((d = digest_of(h)) < 0 || !digest_match(&h->dg[d], vk))
		return ERR("volume key does not match the header");
	for (i = 0; i < LUKS2_KEYSLOTS && h->ks[i].used; i++)
		;
	if (i == LUKS2_KEYSLOTS)
		return ERR("all %d keyslots are in use", LUKS2_KEYSLOTS);
	memset(&ks, 0, sizeof(ks));
	ks.used = 1;
	ks.priority = 1;
	ks.key_size = ks.area_key_size = (uint32_t)vk->len;
	ks.stripes = LUKS2_STRIPES;
	strcpy(ks.af_hash, "sha256");
	strcpy(ks.area_cipher, "aes-xts-plain64");
	ks.kdf = *kdf;
	if (ks.kdf.type == KDF_PBKDF2 && ks.kdf.hash[0] == '\0')
		strcpy(ks.kdf.hash, "sha256");
	ks.kdf.salt_len = LUKS2_SALT;
	if (luks2_random(ks.kdf.salt, LUKS2_SALT) != 0)
		return ERR("no random bytes");
	if (luks2_kdf_check(&ks.kdf, err, errlen) != 0)
		return -1;
	ks.area_size = (af_bytes(ks.key_size, ks.stripes) + 4095) / 4096 * 4096;
	if (free_area(h, ks.area_size, &ks.area_offset) != 0)
		return ERR("no room left in the keyslots area");
	if (write_area(io, &ks, vk, pass, passlen, err, errlen) != 0)
		return -1;
	snprintf(id, sizeof(id), "%d", i);
	json_object_object_get_ex(h->json, "keyslots", &ks_obj);
	json_object_object_add(ks_obj, id, keyslot_json(&ks));
	json_object_object_get_ex(h->json, "digests", &dg_obj);
	snprintf(id, sizeof(id), "%d", d);
	json_object_object_get_ex(dg_obj, id, &dg_obj);
	json_object_object_get_ex(dg_obj, "keyslots", &arr);
	snprintf(id, sizeof(id), "%d", i);
	json_object_array_add(arr, json_object_new_string(id));
	if (reparse(h, err, errlen) != 0)
		return -1;
	if (slot_out != NULL)
		*slot_out = i;
	return 0;
}

/* id out of the "keyslots" array of every object in set (digests, tokens). */
static void
unassign(struct json_object *set, const char *id)
{
	struct json_object *arr, *keep;
	size_t i;

	json_object_object_foreach(set, key, o) {
		(void)key;
		if (!json_object_object_get_ex(o, "keyslots", &arr))
			continue;
		keep = json_object_new_array();
		for (i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *v = json_object_array_get_idx(arr, i);

			if (strcmp(json_object_get_string(v), id) != 0)
				json_object_array_add(keep, json_object_get(v));
		}
		json_object_object_add(o, "keyslots", keep);
	}
}

int
luks2_keyslot_drop(struct luks2 *h, int slot, char *err, size_t errlen)
{
	struct json_object *o;
	char id[4];

	if (h->version != 2)
		return ERR("LUKS1 headers are read only");
	if (slot < 0 || slot >= LUKS2_KEYSLOTS || !h->ks[slot].used)
		return ERR("no keyslot %d", slot);
	snprintf(id, sizeof(id), "%d", slot);
	json_object_object_get_ex(h->json, "keyslots", &o);
	json_object_object_del(o, id);
	/*
	 * A token naming the slot (systemd-cryptenroll's tpm2, fido2 ...)
	 * loses it too, as cryptsetup does: cryptsetup refuses the whole
	 * header when a token names a keyslot that is not there.
	 */
	json_object_object_get_ex(h->json, "digests", &o);
	unassign(o, id);
	json_object_object_get_ex(h->json, "tokens", &o);
	unassign(o, id);
	return reparse(h, err, errlen);
}

int
luks2_area_wipe(const struct luks2_io *io, uint64_t off, uint64_t size,
    char *err, size_t errlen)
{
	uint8_t *b;
	int rc = 0;

	if (off > io->size || size > io->size - off || size > (64U << 20))
		return ERR("keyslot area outside the device");
	if ((b = malloc(size ? size : 1)) == NULL)
		return ERR("out of memory");
	if (luks2_random(b, size) != 0 || luks2_write_synced(io, b, size, off) != 0)
		rc = ERR("cannot wipe the keyslot area: %s", strerror(errno));
	free(b);
	return rc;
}

static int
valid_uuid_arg(const char *u)
{
	size_t i;

	if (strlen(u) != 36)
		return 0;
	for (i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? u[i] != '-' :
		    !strchr("0123456789abcdef", u[i]))
			return 0;
	return 1;
}

static void
random_uuid(char *out)
{
	uint8_t b[16];
	int i, o = 0;

	luks2_random(b, sizeof(b));
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		o += sprintf(out + o, "%02x", b[i]);
	}
}

static struct json_object *
format_json(const struct luks2 *h, const struct luks2_format_opts *o,
    const struct secret *vk, uint32_t iterations)
{
	struct json_object *root = json_object_new_object();
	struct json_object *seg = json_object_new_object(), *segs;
	struct json_object *dg = json_object_new_object(), *dgs, *cfg, *a;
	uint8_t salt[LUKS2_SALT], digest[32];

	json_object_object_add(root, "keyslots", json_object_new_object());
	json_object_object_add(root, "tokens", json_object_new_object());
	json_object_object_add(seg, "type", json_object_new_string("crypt"));
	json_object_object_add(seg, "offset", u64_str(h->data_offset));
	json_object_object_add(seg, "size", json_object_new_string("dynamic"));
	json_object_object_add(seg, "iv_tweak", json_object_new_string("0"));
	json_object_object_add(seg, "encryption", json_object_new_string(h->cipher));
	json_object_object_add(seg, "sector_size", json_object_new_int64(h->sector_size));
	segs = json_object_new_object();
	json_object_object_add(segs, "0", seg);
	json_object_object_add(root, "segments", segs);
	if (luks2_random(salt, sizeof(salt)) != 0 ||
	    luks2_pbkdf2("sha256", vk->buf, vk->len, salt, sizeof(salt), iterations,
	    digest, sizeof(digest)) != 0) {
		json_object_put(root);
		json_object_put(dg);
		return NULL;
	}
	json_object_object_add(dg, "type", json_object_new_string("pbkdf2"));
	json_object_object_add(dg, "keyslots", json_object_new_array());
	a = json_object_new_array();
	json_object_array_add(a, json_object_new_string("0"));
	json_object_object_add(dg, "segments", a);
	json_object_object_add(dg, "hash", json_object_new_string("sha256"));
	json_object_object_add(dg, "iterations", json_object_new_int64(iterations));
	json_object_object_add(dg, "salt", b64_str(salt, sizeof(salt)));
	json_object_object_add(dg, "digest", b64_str(digest, sizeof(digest)));
	dgs = json_object_new_object();
	json_object_object_add(dgs, "0", dg);
	json_object_object_add(root, "digests", dgs);
	cfg = json_object_new_object();
	json_object_object_add(cfg, "json_size", u64_str(h->hdr_size - LUKS2_BIN_SIZE));
	json_object_object_add(cfg, "keyslots_size", u64_str(h->keyslots_size));
	json_object_object_add(root, "config", cfg);
	(void)o;
	return root;
}

/* Zeroes over both copies and the keyslots area: no old slot survives. */
static int
wipe_metadata(const struct luks2_io *io, uint64_t len, char *err, size_t errlen)
{
	static const uint8_t zero[65536];
	uint64_t off;

	for (off = 0; off < len; off += sizeof(zero))
		if (io->write(io->ctx, zero, len - off < sizeof(zero) ?
		    (size_t)(len - off) : sizeof(zero), off) != 0)
			return ERR("cannot write the header area: %s", strerror(errno));
	return 0;
}

static int
format_geometry(const struct luks2_io *io, const struct luks2_format_opts *o,
    struct luks2 *h, char *err, size_t errlen)
{
	uint64_t data;

	h->version = 2;
	h->hdr_size = LUKS2_HDR_DEFAULT;
	h->keyslots_size = LUKS2_KEYSLOTS_SIZE;
	h->data_offset = LUKS2_DATA_OFFSET;
	snprintf(h->cipher, sizeof(h->cipher), "%s", o->cipher ? o->cipher :
	    "aes-xts-plain64");
	if (strcmp(h->cipher, "aes-xts-plain64") != 0)
		return ERR("cipher %s not supported", h->cipher);
	if (o->key_bytes != 0 && o->key_bytes != 32 && o->key_bytes != 64)
		return ERR("key size %u bits not supported", o->key_bytes * 8);
	if (io->size < h->data_offset + 4096)
		return ERR("device too small: at least %u bytes",
		    LUKS2_DATA_OFFSET + 4096);
	data = io->size - h->data_offset;
	h->sector_size = o->sector_size ? o->sector_size :
	    data % 4096 == 0 ? 4096 : 512;
	if ((h->sector_size != 512 && h->sector_size != 1024 &&
	    h->sector_size != 2048 && h->sector_size != 4096) ||
	    data % h->sector_size != 0)
		return ERR("sector size %u does not fit the device", h->sector_size);
	if (o->label != NULL && strlen(o->label) >= sizeof(h->label) - 1)
		return ERR("label longer than 47 bytes");
	snprintf(h->label, sizeof(h->label), "%s", o->label ? o->label : "");
	if (o->uuid != NULL && !valid_uuid_arg(o->uuid))
		return ERR("uuid bad");
	if (o->uuid != NULL)
		snprintf(h->uuid, sizeof(h->uuid), "%s", o->uuid);
	else
		random_uuid(h->uuid);
	return 0;
}

int
luks2_format(const struct luks2_io *io, const struct luks2_format_opts *o,
    const void *pass, size_t passlen, struct luks2 **out, struct secret **vkp,
    char *err, size_t errlen)
{
	struct luks2 *h;
	struct secret *vk = NULL;
	uint32_t key_bytes = o->key_bytes ? o->key_bytes : 64;
	uint32_t iter = o->digest_iterations >= 1000 ? o->digest_iterations : 1000;

	*out = NULL;
	*vkp = NULL;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return ERR("out of memory");
	if (format_geometry(io, o, h, err, errlen) != 0)
		goto fail;
	if (luks2_kdf_check(&(struct luks2_kdf){ .type = o->kdf.type,
	    .hash = "sha256", .iterations = o->kdf.iterations, .time = o->kdf.time,
	    .memory = o->kdf.memory, .cpus = o->kdf.cpus, .salt_len = LUKS2_SALT },
	    err, errlen) != 0)
		goto fail;
	if ((vk = secret_new(key_bytes)) == NULL || luks2_random(vk->buf, key_bytes) != 0) {
		ERR("out of locked memory");
		goto fail;
	}
	vk->len = key_bytes;
	if ((h->json = format_json(h, o, vk, iter)) == NULL) {
		ERR("cannot build the JSON area");
		goto fail;
	}
	if (reparse(h, err, errlen) != 0 ||
	    wipe_metadata(io, 2 * h->hdr_size + h->keyslots_size, err, errlen) != 0 ||
	    luks2_keyslot_add(io, h, vk, pass, passlen, &o->kdf, NULL, err, errlen) != 0 ||
	    luks2_store(io, h, err, errlen) != 0)
		goto fail;
	*out = h;
	*vkp = vk;
	return 0;
fail:
	secret_free(vk);
	luks2_free(h);
	return -1;
}
