/*
 * luks2-json.c: the JSON area, checked member by member before use.
 * 64-bit numbers are decimal strings, binary is base64, ids are the
 * decimal strings "0".."31".  What cryptd does not understand (another
 * keyslot or segment type, more than one segment, integrity, any
 * `requirements`) refuses the whole header: a header half understood
 * could be activated wrongly or damaged by a rewrite.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "luks2.h"

#define ERR(...)	luks2_err(err, errlen, __VA_ARGS__)

static struct json_object *
member(struct json_object *o, const char *key, enum json_type t)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

static const char *
str_member(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key, json_type_string);

	return v ? json_object_get_string(v) : NULL;
}

/* A decimal string of at most 20 digits that fits 64 bits. */
static int
u64_of(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (s == NULL || s[0] == '\0' || strlen(s) > 20)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static int
u64_member(struct json_object *o, const char *key, uint64_t *out)
{
	return u64_of(str_member(o, key), out);
}

static int
int_member(struct json_object *o, const char *key, int64_t lo, int64_t hi,
    uint32_t *out)
{
	struct json_object *v = member(o, key, json_type_int);
	int64_t n;

	if (v == NULL)
		return -1;
	errno = 0;
	n = json_object_get_int64(v);
	if (errno != 0 || n < lo || n > hi)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* "0".."31" without leading zeros. */
static int
id_of(const char *s)
{
	uint64_t v;

	if (u64_of(s, &v) != 0 || v >= LUKS2_KEYSLOTS || (s[0] == '0' && s[1]))
		return -1;
	return (int)v;
}

static int
copy_str(char *dst, size_t len, const char *s)
{
	if (s == NULL || strlen(s) >= len)
		return -1;
	strcpy(dst, s);
	return 0;
}

static int
b64_member(struct json_object *o, const char *key, uint8_t *out, size_t max,
    size_t *len)
{
	const char *s = str_member(o, key);

	if (s == NULL || luks2_b64_decode(s, out, max, len) != 0)
		return -1;
	return 0;
}

/* A cipher spec that goes into a dm table: no spaces, nothing odd. */
static int
cipher_ok(const char *c)
{
	size_t i;

	if (c == NULL || c[0] == '\0' || strlen(c) >= 32 || c[0] == '-')
		return 0;
	for (i = 0; c[i] != '\0'; i++)
		if (!islower((unsigned char)c[i]) && !isdigit((unsigned char)c[i]) &&
		    c[i] != '-' && c[i] != ':')
			return 0;
	return 1;
}

static int
parse_kdf(struct json_object *o, struct luks2_kdf *k, char *err, size_t errlen)
{
	const char *t = str_member(o, "type");

	memset(k, 0, sizeof(*k));
	if (t == NULL)
		return ERR("kdf type missing");
	if (strcmp(t, "pbkdf2") == 0) {
		k->type = KDF_PBKDF2;
		if (copy_str(k->hash, sizeof(k->hash), str_member(o, "hash")) != 0 ||
		    int_member(o, "iterations", 1, INT32_MAX, &k->iterations) != 0)
			return ERR("pbkdf2 hash or iterations bad");
	} else if (strcmp(t, "argon2i") == 0 || strcmp(t, "argon2id") == 0) {
		k->type = strcmp(t, "argon2id") == 0 ? KDF_ARGON2ID : KDF_ARGON2I;
		if (int_member(o, "time", 1, UINT32_MAX, &k->time) != 0 ||
		    int_member(o, "memory", 1, UINT32_MAX, &k->memory) != 0 ||
		    int_member(o, "cpus", 1, UINT32_MAX, &k->cpus) != 0)
			return ERR("argon2 time, memory or cpus bad");
	} else
		return ERR("kdf type not supported");
	if (b64_member(o, "salt", k->salt, sizeof(k->salt), &k->salt_len) != 0)
		return ERR("kdf salt bad");
	return luks2_kdf_check(k, err, errlen);
}

static int
parse_keyslot(struct json_object *o, struct luks2 *h, struct luks2_keyslot *ks,
    char *err, size_t errlen)
{
	struct json_object *kdf = member(o, "kdf", json_type_object);
	struct json_object *af = member(o, "af", json_type_object);
	struct json_object *area = member(o, "area", json_type_object);
	const char *t = str_member(o, "type");
	uint64_t need, lo = 2 * h->hdr_size, hi = lo + h->keyslots_size;
	uint32_t prio = 1;

	if (t == NULL || strcmp(t, "luks2") != 0)
		return ERR("keyslot type not supported");
	if (kdf == NULL || af == NULL || area == NULL)
		return ERR("keyslot kdf, af or area missing");
	if (int_member(o, "key_size", 1, LUKS2_KEY_MAX, &ks->key_size) != 0)
		return ERR("keyslot key_size bad");
	if (json_object_object_get_ex(o, "priority", NULL) &&
	    int_member(o, "priority", 0, 2, &prio) != 0)
		return ERR("keyslot priority bad");
	if (parse_kdf(kdf, &ks->kdf, err, errlen) != 0)
		return -1;
	t = str_member(af, "type");
	if (t == NULL || strcmp(t, "luks1") != 0 ||
	    int_member(af, "stripes", LUKS2_STRIPES, LUKS2_STRIPES, &ks->stripes) != 0 ||
	    copy_str(ks->af_hash, sizeof(ks->af_hash), str_member(af, "hash")) != 0 ||
	    !luks2_hash_ok(ks->af_hash))
		return ERR("keyslot af not supported");
	t = str_member(area, "type");
	if (t == NULL || strcmp(t, "raw") != 0 ||
	    u64_member(area, "offset", &ks->area_offset) != 0 ||
	    u64_member(area, "size", &ks->area_size) != 0 ||
	    copy_str(ks->area_cipher, sizeof(ks->area_cipher),
	    str_member(area, "encryption")) != 0 ||
	    int_member(area, "key_size", 1, LUKS2_KEY_MAX, &ks->area_key_size) != 0)
		return ERR("keyslot area bad");
	if (strcmp(ks->area_cipher, "aes-xts-plain64") != 0 ||
	    (ks->area_key_size != 32 && ks->area_key_size != 64))
		return ERR("keyslot area encryption not supported");
	need = (uint64_t)ks->key_size * ks->stripes;
	if (ks->area_offset % 512 != 0 || ks->area_size % 512 != 0 ||
	    ks->area_size < need || ks->area_offset < lo ||
	    ks->area_offset > hi || ks->area_size > hi - ks->area_offset)
		return ERR("keyslot area outside the keyslots area");
	ks->used = 1;
	ks->digest = -1;
	ks->priority = prio;
	return 0;
}

/* 1 when two used keyslots' areas overlap (err says which). */
int
luks2_areas_overlap(const struct luks2 *h, char *err, size_t errlen)
{
	int i, j;

	for (i = 0; i < LUKS2_KEYSLOTS; i++)
		for (j = i + 1; j < LUKS2_KEYSLOTS; j++) {
			const struct luks2_keyslot *a = &h->ks[i], *b = &h->ks[j];

			if (a->used && b->used &&
			    a->area_offset < b->area_offset + b->area_size &&
			    b->area_offset < a->area_offset + a->area_size) {
				ERR("keyslot areas %d and %d overlap", i, j);
				return 1;
			}
		}
	return 0;
}

static int
parse_keyslots(struct json_object *o, struct luks2 *h, char *err, size_t errlen)
{
	int i;

	json_object_object_foreach(o, key, val) {
		if ((i = id_of(key)) < 0 || !json_object_is_type(val, json_type_object))
			return ERR("keyslot id or type bad");
		if (parse_keyslot(val, h, &h->ks[i], err, errlen) != 0)
			return -1;
	}
	return luks2_areas_overlap(h, err, errlen) ? -1 : 0;
}

/* An array of ids; *mask gets them. */
static int
ids_member(struct json_object *o, const char *key, uint32_t *mask)
{
	struct json_object *a = member(o, key, json_type_array), *v;
	size_t i, n;
	int id;

	if (a == NULL || (n = json_object_array_length(a)) > LUKS2_KEYSLOTS)
		return -1;
	*mask = 0;
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(a, i);
		if (!json_object_is_type(v, json_type_string) ||
		    (id = id_of(json_object_get_string(v))) < 0)
			return -1;
		*mask |= 1U << id;
	}
	return 0;
}

/*
 * Tokens are not used here, but cryptsetup refuses a whole header whose
 * token names a keyslot that is not there: so does cryptd, and its own
 * rewrites keep them true (luks2_keyslot_drop).
 */
static int
parse_tokens(struct json_object *o, const struct luks2 *h, char *err,
    size_t errlen)
{
	uint32_t mask;
	int i;

	json_object_object_foreach(o, key, val) {
		if (id_of(key) < 0 || !json_object_is_type(val, json_type_object) ||
		    str_member(val, "type") == NULL ||
		    ids_member(val, "keyslots", &mask) != 0)
			return ERR("token id, type or keyslots bad");
		for (i = 0; i < LUKS2_KEYSLOTS; i++)
			if ((mask & (1U << i)) && !h->ks[i].used)
				return ERR("token %s names keyslot %d, which is not there",
				    key, i);
	}
	return 0;
}

static int
parse_digest(struct json_object *o, struct luks2 *h, int idx, char *err,
    size_t errlen)
{
	struct luks2_digest *d = &h->dg[idx];
	const char *t = str_member(o, "type");
	uint32_t segs;
	int i;

	if (t == NULL || strcmp(t, "pbkdf2") != 0)
		return ERR("digest type not supported");
	if (ids_member(o, "keyslots", &d->keyslots) != 0 ||
	    ids_member(o, "segments", &segs) != 0 ||
	    copy_str(d->hash, sizeof(d->hash), str_member(o, "hash")) != 0 ||
	    !luks2_hash_ok(d->hash) ||
	    int_member(o, "iterations", 1000, INT32_MAX, &d->iterations) != 0 ||
	    b64_member(o, "salt", d->salt, sizeof(d->salt), &d->salt_len) != 0 ||
	    d->salt_len < 16 ||
	    b64_member(o, "digest", d->digest, sizeof(d->digest), &d->digest_len) != 0 ||
	    d->digest_len < 16)
		return ERR("digest %d bad", idx);
	if (segs != 1)
		return ERR("digest %d does not name segment 0 alone", idx);
	for (i = 0; i < LUKS2_KEYSLOTS; i++) {
		if (!(d->keyslots & (1U << i)))
			continue;
		if (!h->ks[i].used || h->ks[i].digest >= 0)
			return ERR("digest %d names keyslot %d wrongly", idx, i);
		h->ks[i].digest = idx;
	}
	d->used = 1;
	return 0;
}

static int
parse_segment(struct json_object *o, struct luks2 *h, char *err, size_t errlen)
{
	const char *t = str_member(o, "type"), *size = str_member(o, "size");
	uint64_t meta = 2 * h->hdr_size + h->keyslots_size;

	if (t == NULL || strcmp(t, "crypt") != 0)
		return ERR("segment type not supported");
	if (json_object_object_get_ex(o, "integrity", NULL))
		return ERR("segment integrity not supported");
	if (u64_member(o, "offset", &h->data_offset) != 0 ||
	    u64_member(o, "iv_tweak", &h->iv_tweak) != 0 || size == NULL ||
	    copy_str(h->cipher, sizeof(h->cipher), str_member(o, "encryption")) != 0 ||
	    int_member(o, "sector_size", 512, 4096, &h->sector_size) != 0)
		return ERR("segment bad");
	if (strcmp(size, "dynamic") == 0)
		h->data_size = 0;
	else if (u64_of(size, &h->data_size) != 0 || h->data_size == 0)
		return ERR("segment size bad");
	if (!cipher_ok(h->cipher))
		return ERR("segment encryption bad");
	if ((h->sector_size & (h->sector_size - 1)) != 0)
		return ERR("segment sector_size bad");
	if (h->data_offset < meta || h->data_offset % h->sector_size != 0 ||
	    h->data_size % h->sector_size != 0 ||
	    h->data_size > UINT64_MAX - h->data_offset)
		return ERR("segment offset or size bad");
	if (h->iv_tweak > UINT64_MAX / 8)
		return ERR("segment iv_tweak bad");
	return 0;
}

static int
parse_config(struct json_object *o, struct luks2 *h, char *err, size_t errlen)
{
	struct json_object *req, *flags;
	uint64_t json_size;

	if (u64_member(o, "json_size", &json_size) != 0 ||
	    json_size != h->hdr_size - LUKS2_BIN_SIZE)
		return ERR("config json_size does not match the header");
	if (u64_member(o, "keyslots_size", &h->keyslots_size) != 0 ||
	    h->keyslots_size % 4096 != 0 || h->keyslots_size > (1ULL << 40))
		return ERR("config keyslots_size bad");
	if (json_object_object_get_ex(o, "flags", &flags) &&
	    !json_object_is_type(flags, json_type_array))
		return ERR("config flags bad");
	/*
	 * Any requirement at all: cryptd knows none of them (online
	 * reencryption, OPAL ...), and a header that needs one must not be
	 * activated or rewritten (CVE-2021-4122).
	 */
	if (json_object_object_get_ex(o, "requirements", &req)) {
		struct json_object *m;

		if (!json_object_is_type(req, json_type_object) ||
		    json_object_object_length(req) > 1 ||
		    (json_object_object_length(req) == 1 &&
		    ((m = member(req, "mandatory", json_type_array)) == NULL ||
		    json_object_array_length(m) != 0)))
			return ERR("header has requirements cryptd does not know: "
			    "refused");
	}
	return 0;
}

static int
parse_tree(struct json_object *root, struct luks2 *h, char *err, size_t errlen)
{
	struct json_object *ks, *dg, *sg, *tk, *cf;
	int n;

	if (!json_object_is_type(root, json_type_object) ||
	    (ks = member(root, "keyslots", json_type_object)) == NULL ||
	    (dg = member(root, "digests", json_type_object)) == NULL ||
	    (sg = member(root, "segments", json_type_object)) == NULL ||
	    (tk = member(root, "tokens", json_type_object)) == NULL ||
	    (cf = member(root, "config", json_type_object)) == NULL)
		return ERR("JSON area lacks keyslots, digests, segments, tokens or "
		    "config");
	/* config first: the keyslot and segment checks need its sizes. */
	if (parse_config(cf, h, err, errlen) != 0 ||
	    parse_keyslots(ks, h, err, errlen) != 0 ||
	    parse_tokens(tk, h, err, errlen) != 0)
		return -1;
	if (json_object_object_length(sg) != 1 ||
	    (sg = member(sg, "0", json_type_object)) == NULL)
		return ERR("not exactly one segment \"0\"");
	if (parse_segment(sg, h, err, errlen) != 0)
		return -1;
	n = 0;
	json_object_object_foreach(dg, key, val) {
		int i = id_of(key);

		if (i < 0 || !json_object_is_type(val, json_type_object))
			return ERR("digest id or type bad");
		if (parse_digest(val, h, i, err, errlen) != 0)
			return -1;
		n++;
	}
	if (n != 1)
		return ERR("not exactly one digest");
	for (n = 0; n < LUKS2_KEYSLOTS; n++)
		if (h->ks[n].used && (h->ks[n].digest < 0 ||
		    h->ks[n].key_size != h->ks[n].area_key_size))
			return ERR("keyslot %d has no digest or another key size", n);
	return 0;
}

int
luks2_parse_json(const char *text, size_t len, struct luks2 *h, char *err,
    size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *root;
	const char *nul = memchr(text, '\0', len);
	size_t n = nul ? (size_t)(nul - text) : len, end, i;
	int containers;

	if (n == 0 || n > INT32_MAX)
		return ERR("JSON area empty");
	/*
	 * json-c spends hundreds of bytes on each object: 4 MiB of "{}"
	 * would take a gigabyte.  Real headers have a few hundred.
	 */
	for (i = 0, containers = 0; i < n; i++)
		if ((text[i] == '{' || text[i] == '[') && ++containers > LUKS2_JSON_CONTAINERS)
			return ERR("JSON area has more than %d objects and arrays",
			    LUKS2_JSON_CONTAINERS);
	if ((tok = json_tokener_new_ex(16)) == NULL)
		return ERR("out of memory");
	root = json_tokener_parse_ex(tok, text, (int)n);
	end = json_tokener_get_parse_end(tok);
	if (root == NULL || json_tokener_get_error(tok) != json_tokener_success) {
		json_tokener_free(tok);
		json_object_put(root);
		return ERR("JSON area is not JSON");
	}
	json_tokener_free(tok);
	for (; end < n; end++)
		if (!isspace((unsigned char)text[end])) {
			json_object_put(root);
			return ERR("JSON area has text after the object");
		}
	memset(h->ks, 0, sizeof(h->ks));
	memset(h->dg, 0, sizeof(h->dg));
	if (parse_tree(root, h, err, errlen) != 0) {
		json_object_put(root);
		return -1;
	}
	json_object_put(h->json);
	h->json = root;
	return 0;
}
