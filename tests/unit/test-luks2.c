/*
 * Unit tests for cryptd's LUKS2 library (cryptd/luks2-*.c) on a device
 * in memory: format and unlock round trips for every KDF, both header
 * copies and seqid, the AF splitter, base64, keyslot add/drop, LUKS1,
 * and every refusal of a header or a format request (each refused
 * header is left byte for byte as it was).  tests/host/luks2.sh holds
 * the same library against cryptsetup.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <argon2.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "secret.h"
#include "cryptd/luks2.h"

#define DEV_SIZE	(LUKS2_DATA_OFFSET + (1U << 20))
#define HS		LUKS2_HDR_DEFAULT

static uint8_t *dev;
static struct luks2_io io;
static char err[LUKS2_ERRLEN];
static int fail_writes;

/* ctx: another buffer to read (a backup), NULL: dev. */
static int
mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	memcpy(buf, (ctx ? (uint8_t *)ctx : dev) + off, len);
	return 0;
}

static int
mem_write(void *ctx, const void *buf, size_t len, uint64_t off)
{
	(void)ctx;
	if (fail_writes)
		return -1;
	memcpy(dev + off, buf, len);
	return 0;
}

static void
setup(void)
{
	dev = calloc(1, DEV_SIZE);
	ck_assert_ptr_nonnull(dev);
	io.read = mem_read;
	io.write = mem_write;
	io.size = DEV_SIZE;
	fail_writes = 0;
}

static void
teardown(void)
{
	free(dev);
}

static struct luks2_kdf
kdf_of(enum luks2_kdf_type t)
{
	struct luks2_kdf k = { .type = t, .iterations = 1000, .time = 4,
	    .memory = 32, .cpus = 1 };

	return k;
}

/* A fresh header for "pw"; returns its volume key. */
static struct secret *
format(enum luks2_kdf_type t)
{
	struct luks2_format_opts o = { .kdf = kdf_of(t) };
	struct luks2 *h;
	struct secret *vk;

	ck_assert_msg(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)) == 0,
	    "%s", err);
	luks2_free(h);
	return vk;
}

static struct luks2 *
load_ok(void)
{
	struct luks2 *h;

	ck_assert_msg(luks2_load(&io, &h, err, sizeof(err)) == 0, "%s", err);
	return h;
}

static int
opens(const struct luks2 *h, const char *pw, const struct secret *want)
{
	struct secret *vk;
	int ok;

	if (luks2_unlock(&io, h, pw, strlen(pw), -1, &vk, NULL, err, sizeof(err)) != 0)
		return 0;
	ok = want == NULL || (vk->len == want->len &&
	    memcmp(vk->buf, want->buf, vk->len) == 0);
	secret_free(vk);
	return ok;
}

static void
round_trip(enum luks2_kdf_type t)
{
	struct secret *vk = format(t);
	struct luks2 *h = load_ok();

	ck_assert_int_eq(h->version, 2);
	ck_assert_int_eq(h->ks[0].kdf.type, t);
	ck_assert_str_eq(h->cipher, "aes-xts-plain64");
	ck_assert_uint_eq(h->sector_size, 4096);
	ck_assert_uint_eq(h->data_offset, LUKS2_DATA_OFFSET);
	ck_assert_uint_eq(h->seqid, 1);
	ck_assert(h->primary_ok && h->secondary_ok && !h->repair);
	ck_assert_int_eq(vk->len, 64);
	ck_assert(opens(h, "pw", vk));
	ck_assert(!opens(h, "pW", NULL));
	ck_assert(!opens(h, "", NULL));
	/* A keyslot asking more argon2 memory than allowed is not tried. */
	if (t != KDF_PBKDF2) {
		luks2_set_memory_cap(31);
		ck_assert(!opens(h, "pw", NULL));
		ck_assert_ptr_nonnull(strstr(err, "skipped"));
		luks2_set_memory_cap(4U << 20);
		ck_assert(opens(h, "pw", vk));
	}
	luks2_free(h);
	secret_free(vk);
}

START_TEST(format_pbkdf2) { round_trip(KDF_PBKDF2); }
END_TEST
START_TEST(format_argon2i) { round_trip(KDF_ARGON2I); }
END_TEST
START_TEST(format_argon2id) { round_trip(KDF_ARGON2ID); }
END_TEST

START_TEST(af_round_trip)
{
	uint8_t key[64], back[64], *buf = malloc(64 * 4000);
	static const char *const hashes[] = { "sha1", "sha256", "sha512" };
	size_t i;

	for (i = 0; i < 3; i++) {
		luks2_random(key, sizeof(key));
		ck_assert_int_eq(luks2_af_split(key, 64, 4000, hashes[i], buf), 0);
		ck_assert_int_eq(luks2_af_merge(buf, 64, 4000, hashes[i], back), 0);
		ck_assert_mem_eq(key, back, 64);
		/* Any stripe matters. */
		buf[1234] ^= 1;
		ck_assert_int_eq(luks2_af_merge(buf, 64, 4000, hashes[i], back), 0);
		ck_assert(memcmp(key, back, 64) != 0);
	}
	ck_assert_int_eq(luks2_af_split(key, 64, 4000, "md5", buf), -1);
	ck_assert_int_eq(luks2_af_split(key, 65, 4000, "sha256", buf), -1);
	free(buf);
}
END_TEST

START_TEST(base64)
{
	static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const out[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==",
	    "Zm9vYmE=", "Zm9vYmFy" };
	static const char *const bad[] = { "Zg=", "Z===", "Zm9v=", "Zg=a", "Zm 9",
	    "Zm9v\n", "=Zm9", "Zm=v" };
	uint8_t b[16];
	size_t i, n;
	char *s;

	for (i = 0; i < 7; i++) {
		s = luks2_b64_encode((const uint8_t *)in[i], strlen(in[i]));
		ck_assert_str_eq(s, out[i]);
		free(s);
		ck_assert_int_eq(luks2_b64_decode(out[i], b, sizeof(b), &n), 0);
		ck_assert_uint_eq(n, strlen(in[i]));
		ck_assert_mem_eq(b, in[i], n);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(luks2_b64_decode(bad[i], b, sizeof(b), &n) == -1, "%s", bad[i]);
	ck_assert_int_eq(luks2_b64_decode("Zm9vYmFy", b, 5, &n), -1);
}
END_TEST

/* The checksum of the copy at off recomputed after an edit. */
static void
reseal(uint64_t off)
{
	uint8_t *b = dev + off;
	unsigned n;
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	memset(b + 448, 0, 64);
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	EVP_DigestUpdate(c, b, HS);
	EVP_DigestFinal_ex(c, b + 448, &n);
	EVP_MD_CTX_free(c);
}

/* Replaces from with to in the JSON area of both copies, resealed. */
static void
edit_json(const char *from, const char *to)
{
	uint64_t off;

	for (off = 0; off <= HS; off += HS) {
		char *j = (char *)dev + off + LUKS2_BIN_SIZE, *at = strstr(j, from);
		char tail[HS];

		ck_assert_msg(at != NULL, "no %s in %s", from, j);
		strcpy(tail, at + strlen(from));
		strcpy(at, to);
		strcat(at, tail);
		memset(j + strlen(j), 0, HS - LUKS2_BIN_SIZE - strlen(j));
		reseal(off);
	}
}

START_TEST(both_copies)
{
	struct secret *vk = format(KDF_PBKDF2);
	struct luks2 *h;

	/* A damaged primary: the secondary is used and repaired. */
	dev[LUKS2_BIN_SIZE + 10] ^= 0x20;
	h = load_ok();
	ck_assert(!h->primary_ok && h->secondary_ok && h->repair);
	ck_assert(opens(h, "pw", vk));
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert(h->primary_ok && h->secondary_ok && !h->repair);
	ck_assert_uint_eq(h->seqid, 2);
	luks2_free(h);
	/* A destroyed primary magic: the secondary is found by its offset. */
	memset(dev, 0, 4096);
	h = load_ok();
	ck_assert(!h->primary_ok && h->repair);
	luks2_free(h);
	/* A secondary not right after a primary of its size is no secondary. */
	memcpy(dev + 2 * HS, dev + HS, HS);
	memset(dev + HS, 0, HS);
	dev[2 * HS + 256 + 6] = (2 * HS) >> 8;	/* hdr_offset 32768, hdr_size 16384 */
	reseal(2 * HS);
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	memcpy(dev + HS, dev + 2 * HS, HS);
	dev[HS + 256 + 6] = HS >> 8;
	reseal(HS);
	h = load_ok();
	luks2_free(h);
	/* Both damaged: refused. */
	dev[HS + LUKS2_BIN_SIZE + 10] ^= 0x20;
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	secret_free(vk);
}
END_TEST

START_TEST(newer_copy_wins)
{
	struct secret *vk = format(KDF_PBKDF2);
	struct luks2 *h = load_ok();
	uint8_t buf[HS];

	/* A cut after the primary was written: seqid 2 beats the secondary's 1. */
	strcpy(h->label, "newer");
	h->seqid++;
	ck_assert_int_eq(luks2_encode_copy(h, 0, buf, HS, err, sizeof(err)), 0);
	memcpy(dev, buf, HS);
	luks2_free(h);
	h = load_ok();
	ck_assert_str_eq(h->label, "newer");
	ck_assert(h->repair);
	/* And a newer secondary beats the primary. */
	strcpy(h->label, "newest");
	h->seqid += 5;
	ck_assert_int_eq(luks2_encode_copy(h, 1, buf, HS, err, sizeof(err)), 0);
	memcpy(dev + HS, buf, HS);
	luks2_free(h);
	h = load_ok();
	ck_assert_str_eq(h->label, "newest");
	luks2_free(h);
	secret_free(vk);
}
END_TEST

/* A newer intact copy that is refused is never passed over for an older one. */
START_TEST(refused_newer_not_skipped)
{
	struct secret *vk = format(KDF_PBKDF2);
	struct luks2 *h;
	char *j = (char *)dev + LUKS2_BIN_SIZE, *cfg = strstr(j, "\"config\":{");
	uint8_t *before = malloc(DEV_SIZE);
	char tail[HS];

	ck_assert_ptr_nonnull(cfg);
	cfg += strlen("\"config\":{");
	strcpy(tail, cfg);
	strcpy(cfg, "\"requirements\":{\"mandatory\":[\"x\"]},");
	strcat(cfg, tail);
	dev[16 + 7]++;		/* primary seqid 2 */
	reseal(0);
	memcpy(before, dev, DEV_SIZE);
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "requirements"));
	ck_assert_mem_eq(before, dev, DEV_SIZE);
	free(before);
	secret_free(vk);
}
END_TEST

#define OPEN_16	"[[[[[[[[[[[[[[[["
#define OPEN_256	OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 \
	OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16 OPEN_16
#define OPEN_4096	OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 \
	OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 OPEN_256 "["

/* Each edit of the JSON area makes a header cryptd must refuse, unchanged. */
static const char *const refused[][2] = {
	{ "\"config\":{", "\"config\":{\"requirements\":{\"mandatory\":[\"online-reencrypt-v2\"]}," },
	{ "\"config\":{", "\"config\":{\"requirements\":{\"optional\":[]}," },
	{ "\"config\":{", "\"config\":{\"requirements\":[]," },
	{ "\"type\":\"luks2\"", "\"type\":\"reencrypt\"" },
	{ "\"key_size\":64,\"af\"", "\"key_size\":\"64\",\"af\"" },
	{ "\"key_size\":64,\"af\"", "\"key_size\":65,\"af\"" },
	{ "\"stripes\":4000", "\"stripes\":3999" },
	{ "\"iterations\":1000,\"salt\"", "\"iterations\":999,\"salt\"" },
	{ "\"offset\":\"32768\"", "\"offset\":\"16384\"" },
	{ "\"offset\":\"32768\"", "\"offset\":\"16711680\"" },
	{ "\"offset\":\"32768\"", "\"offset\":\"32769\"" },
	{ "\"offset\":\"32768\"", "\"offset\":\"+32768\"" },
	{ "\"offset\":\"32768\"", "\"offset\":\"99999999999999999999\"" },
	{ "\"size\":\"258048\"", "\"size\":\"4096\"" },
	{ "\"offset\":\"16777216\"", "\"offset\":\"65536\"" },
	{ "\"offset\":\"16777216\"", "\"offset\":\"16777217\"" },
	{ "\"size\":\"dynamic\"", "\"size\":\"0\"" },
	{ "\"size\":\"dynamic\"", "\"size\":\"4097\"" },
	{ "\"encryption\":\"aes-xts-plain64\",\"sector", "\"encryption\":\"aes-xts-plain64 0\",\"sector" },
	{ "\"sector_size\":4096", "\"sector_size\":3000" },
	{ "\"sector_size\":4096", "\"sector_size\":8192" },
	{ "\"sector_size\":4096", "\"sector_size\":4096,\"integrity\":{}" },
	{ "\"type\":\"crypt\"", "\"type\":\"linear\"" },
	{ "\"segments\":{\"0\"", "\"segments\":{\"1\":{},\"0\"" },
	{ "\"segments\":{\"0\"", "\"segments\":{\"00\"" },
	{ "\"keyslots\":[\"0\"]", "\"keyslots\":[\"1\"]" },
	{ "\"keyslots\":[\"0\"]", "\"keyslots\":[\"32\"]" },
	{ "\"keyslots\":[\"0\"]", "\"keyslots\":[0]" },
	{ "\"segments\":[\"0\"]", "\"segments\":[]" },
	{ "\"type\":\"pbkdf2\",\"keyslots\"", "\"type\":\"hmac\",\"keyslots\"" },
	{ "\"hash\":\"sha256\",\"iterations\"", "\"hash\":\"md5\",\"iterations\"" },
	{ "\"json_size\":\"12288\"", "\"json_size\":\"28672\"" },
	{ "\"keyslots_size\":\"16744448\"", "\"keyslots_size\":\"16744449\"" },
	{ "\"keyslots_size\":\"16744448\"", "\"keyslots_size\":\"33521664\"" },
	{ "\"tokens\":{}", "\"tokens\":[]" },
	/* Tokens as cryptsetup checks them: a named keyslot must be there. */
	{ "\"tokens\":{}", "\"tokens\":{\"0\":{\"type\":\"x\",\"keyslots\":[\"5\"]}}" },
	{ "\"tokens\":{}", "\"tokens\":{\"0\":{\"keyslots\":[\"0\"]}}" },
	{ "\"tokens\":{}", "\"tokens\":{\"0\":{\"type\":\"x\"}}" },
	{ "\"tokens\":{}", "\"tokens\":{\"x\":{\"type\":\"x\",\"keyslots\":[]}}" },
	{ "\"digests\":{", "\"digests\":{\"1\":5," },
	{ "\"keyslots\":{\"0\"", "\"keyslots\":{\"x\"" },
	{ "{\"keyslots\"", "[{\"keyslots\"" },
	{ "\"salt\":\"", "\"salt\":\"!" },
	/* The container cap, counted before json-c sees the text (in strings too). */
	{ "\"tokens\":{}", "\"tokens\":{},\"x\":\"" OPEN_4096 "\"" },
};

START_TEST(refusals)
{
	struct secret *vk = format(KDF_PBKDF2);
	uint8_t *clean = malloc(2 * HS), *before = malloc(DEV_SIZE);
	struct luks2 *h;
	size_t i;

	memcpy(clean, dev, 2 * HS);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		memcpy(dev, clean, 2 * HS);
		edit_json(refused[i][0], refused[i][1]);
		memcpy(before, dev, DEV_SIZE);
		ck_assert_msg(luks2_load(&io, &h, err, sizeof(err)) == -1,
		    "accepted %s -> %s", refused[i][0], refused[i][1]);
		if (getenv("LUKS2_VERBOSE"))
			fprintf(stderr, "%s -> %s: %s\n", refused[i][0], refused[i][1], err);
		ck_assert_mem_eq(before, dev, DEV_SIZE);
	}
	free(clean);
	free(before);
	secret_free(vk);
}
END_TEST

/* Binary header edits: size, offset, version, magic, checksum algorithm. */
START_TEST(binary_refusals)
{
	static const struct { size_t at; uint8_t v; } edits[] = {
		{ 14, 0x50 },	/* hdr_size not a power of two */
		{ 7, 3 },	/* version 3 */
		{ 263, 1 },	/* hdr_offset */
		{ 72, 'x' },	/* csum_alg */
		{ 168, 'z' },	/* uuid character */
		{ 203, 'a' },	/* uuid not terminated (40 bytes) */
	};
	struct secret *vk = format(KDF_PBKDF2);
	uint8_t *clean = malloc(2 * HS);
	struct luks2 *h;
	size_t i;
	uint64_t off;

	memcpy(clean, dev, 2 * HS);
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		memcpy(dev, clean, 2 * HS);
		for (off = 0; off <= HS; off += HS) {
			if (edits[i].at >= 168 && edits[i].at < 208)
				memset(dev + off + 168 + 36, 'a', edits[i].at == 203 ? 4 : 0);
			if (edits[i].at != 203)
				dev[off + edits[i].at] = edits[i].v;
			reseal(off);
		}
		ck_assert_msg(luks2_load(&io, &h, err, sizeof(err)) == -1, "edit %zu", i);
		if (getenv("LUKS2_VERBOSE"))
			fprintf(stderr, "edit %zu: %s\n", i, err);
	}
	free(clean);
	secret_free(vk);
}
END_TEST

START_TEST(keyslots)
{
	struct secret *vk = format(KDF_PBKDF2), *other;
	struct luks2_kdf k = kdf_of(KDF_PBKDF2);
	struct luks2 *h = load_ok();
	char pw[8];
	int i, slot;

	ck_assert_int_eq(luks2_keyslot_add(&io, h, vk, "two", 3, &k, &slot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(slot, 1);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert(opens(h, "two", vk) && opens(h, "pw", vk));
	ck_assert_uint_ne(h->ks[0].area_offset, h->ks[1].area_offset);
	/* Drop slot 0, store, wipe: "pw" no longer opens. */
	ck_assert_int_eq(luks2_keyslot_drop(h, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_area_wipe(&io, 32768, 258048, err, sizeof(err)), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert_int_eq(luks2_keyslot_count(h), 1);
	ck_assert(!opens(h, "pw", NULL) && opens(h, "two", vk));
	ck_assert_int_eq(luks2_keyslot_drop(h, 0, err, sizeof(err)), -1);
	/* A key that is not the volume's is never given a slot. */
	other = secret_new(64);
	other->len = 64;
	ck_assert_int_eq(luks2_keyslot_add(&io, h, other, "x", 1, &k, &slot, err,
	    sizeof(err)), -1);
	secret_free(other);
	/* Fill every slot; the 33rd is refused. */
	for (i = 1; i < LUKS2_KEYSLOTS; i++) {
		snprintf(pw, sizeof(pw), "p%d", i);
		ck_assert_msg(luks2_keyslot_add(&io, h, vk, pw, strlen(pw), &k, &slot,
		    err, sizeof(err)) == 0, "%d: %s", i, err);
	}
	ck_assert_int_eq(luks2_keyslot_add(&io, h, vk, "x", 1, &k, &slot, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert_int_eq(luks2_keyslot_count(h), 32);
	ck_assert(opens(h, "p31", vk));
	luks2_free(h);
	secret_free(vk);
}
END_TEST

/*
 * A token (systemd-cryptenroll's tpm2 ...) naming a dropped keyslot
 * loses it: cryptsetup would refuse the whole header otherwise.
 */
START_TEST(drop_unassigns_tokens)
{
	struct secret *vk = format(KDF_PBKDF2);
	struct luks2_kdf k = kdf_of(KDF_PBKDF2);
	struct luks2 *h = load_ok();
	struct json_object *t, *a;
	int slot;

	ck_assert_int_eq(luks2_keyslot_add(&io, h, vk, "two", 3, &k, &slot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	luks2_free(h);
	edit_json("\"tokens\":{}", "\"tokens\":{\"0\":{\"type\":\"x-test\","
	    "\"keyslots\":[\"1\"]},\"1\":{\"type\":\"y\",\"keyslots\":[\"0\",\"1\"]}}");
	h = load_ok();
	ck_assert_int_eq(luks2_keyslot_drop(h, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert(json_object_object_get_ex(h->json, "tokens", &t));
	ck_assert(json_object_object_get_ex(json_object_object_get(t, "0"), "keyslots", &a));
	ck_assert_uint_eq(json_object_array_length(a), 0);
	ck_assert(json_object_object_get_ex(json_object_object_get(t, "1"), "keyslots", &a));
	ck_assert_uint_eq(json_object_array_length(a), 1);
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, 0)), "0");
	ck_assert(opens(h, "pw", vk) && !opens(h, "two", NULL));
	luks2_free(h);
	secret_free(vk);
}
END_TEST

START_TEST(kdf_limits)
{
	struct luks2_kdf k = kdf_of(KDF_ARGON2ID);

	k.salt_len = 32;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), 0);
	k.time = 3;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
	k.time = 4;
	k.memory = 31;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
	k.memory = 4U * 1024 * 1024 + 1;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
	k.memory = 64;
	k.cpus = 5;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
	k.cpus = 0;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
	k = kdf_of(KDF_PBKDF2);
	k.salt_len = 32;
	strcpy(k.hash, "sha256");
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), 0);
	k.iterations = 999;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
	k.iterations = 1000;
	k.salt_len = 8;
	ck_assert_int_eq(luks2_kdf_check(&k, err, sizeof(err)), -1);
}
END_TEST

START_TEST(format_refusals)
{
	struct luks2_format_opts o = { .kdf = kdf_of(KDF_PBKDF2) };
	struct luks2 *h;
	struct secret *vk;

	o.cipher = "serpent-xts-plain64";
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	o.cipher = NULL;
	o.key_bytes = 48;
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	o.key_bytes = 32;
	o.sector_size = 1000;
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	o.sector_size = 0;
	o.label = "0123456789012345678901234567890123456789012345678";
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	o.label = "nas";
	o.uuid = "not-a-uuid";
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	o.uuid = NULL;
	o.kdf.iterations = 10;
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	o.kdf.iterations = 1000;
	io.size = LUKS2_DATA_OFFSET;
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "too small"));
	/* The device untouched by all of the above. */
	io.size = DEV_SIZE;
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	/* 512-byte sectors where the data is not a multiple of 4096. */
	io.size = DEV_SIZE - 512;
	ck_assert_int_eq(luks2_format(&io, &o, "pw", 2, &h, &vk, err, sizeof(err)), 0);
	ck_assert_uint_eq(h->sector_size, 512);
	ck_assert_str_eq(h->label, "nas");
	ck_assert_uint_eq(vk->len, 32);
	luks2_free(h);
	secret_free(vk);
}
END_TEST

/* A write that fails leaves the header as it was. */
START_TEST(failed_write)
{
	struct secret *vk = format(KDF_PBKDF2);
	struct luks2_kdf k = kdf_of(KDF_PBKDF2);
	struct luks2 *h = load_ok();
	int slot;

	fail_writes = 1;
	ck_assert_int_eq(luks2_keyslot_add(&io, h, vk, "two", 3, &k, &slot, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), -1);
	luks2_free(h);
	fail_writes = 0;
	h = load_ok();
	ck_assert_int_eq(luks2_keyslot_count(h), 1);
	ck_assert(opens(h, "pw", vk));
	luks2_free(h);
	secret_free(vk);
}
END_TEST

/*
 * Power cuts.  The writes of a key change are traced with the syncs
 * between them; a cut after any of them leaves on the disk everything
 * written before the last sync and any subset of what came after (the
 * page cache writes back in its own order).  Whatever survives must load
 * and open with the old or the new passphrase.
 */
#define TRACE_MAX	512	/* a restore copies 16 MiB in 64 KiB writes */

static struct {
	uint64_t	 off;
	size_t		 len;
	uint8_t		*data;	/* NULL: a sync */
} trace[TRACE_MAX];
static int ntrace;

static int
trace_write(void *ctx, const void *buf, size_t len, uint64_t off)
{
	(void)ctx;
	ck_assert_int_lt(ntrace, TRACE_MAX);
	trace[ntrace].off = off;
	trace[ntrace].len = len;
	trace[ntrace].data = malloc(len);
	memcpy(trace[ntrace++].data, buf, len);
	memcpy(dev + off, buf, len);
	return 0;
}

static int
trace_sync(void *ctx)
{
	(void)ctx;
	ck_assert_int_lt(ntrace, TRACE_MAX);
	trace[ntrace++].data = NULL;
	return 0;
}

/* 1 when the disk loads and opens with one of the two passphrases. */
static int
survives(const char *old, const char *new, const struct secret *vk)
{
	struct luks2 *h;
	int ok;

	if (luks2_load(&io, &h, err, sizeof(err)) != 0)
		return 0;
	ok = opens(h, old, vk) || opens(h, new, vk);
	luks2_free(h);
	return ok;
}

START_TEST(power_cut_key_change)
{
	struct secret *vk = format(KDF_PBKDF2), *got;
	struct luks2_kdf k = kdf_of(KDF_PBKDF2);
	uint8_t *orig = malloc(DEV_SIZE), *durable = malloc(DEV_SIZE);
	struct luks2 *h = load_ok();
	int cut, i, last, npend, pend[TRACE_MAX], slot, nslot;
	unsigned mask;
	uint64_t off, size;

	memcpy(orig, dev, DEV_SIZE);
	/* key.change "pw" -> "new", as api-crypt.c does it. */
	ntrace = 0;
	io.write = trace_write;
	io.sync = trace_sync;
	ck_assert_int_eq(luks2_unlock(&io, h, "pw", 2, -1, &got, &slot, err,
	    sizeof(err)), 0);
	off = h->ks[slot].area_offset;
	size = h->ks[slot].area_size;
	ck_assert_int_eq(luks2_keyslot_add(&io, h, got, "new", 3, &k, &nslot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_keyslot_drop(h, slot, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_area_wipe(&io, off, size, err, sizeof(err)), 0);
	io.write = mem_write;
	io.sync = NULL;
	secret_free(got);
	luks2_free(h);
	for (cut = 0; cut <= ntrace; cut++) {
		/* On the disk: before the trace, and what the last sync covered. */
		for (last = -1, i = 0; i < cut; i++)
			if (trace[i].data == NULL)
				last = i;
		memcpy(durable, orig, DEV_SIZE);
		for (i = 0; i < last; i++)
			if (trace[i].data != NULL)
				memcpy(durable + trace[i].off, trace[i].data, trace[i].len);
		for (npend = 0, i = last + 1; i < cut; i++)
			pend[npend++] = i;
		ck_assert_int_le(npend, 10);
		for (mask = 0; mask < 1U << npend; mask++) {
			memcpy(dev, durable, DEV_SIZE);
			for (i = 0; i < npend; i++)
				if (mask & (1U << i))
					memcpy(dev + trace[pend[i]].off, trace[pend[i]].data,
					    trace[pend[i]].len);
			ck_assert_msg(survives("pw", "new", vk),
			    "cut after %d of %d writes and syncs, %d pending, subset %#x",
			    cut, ntrace, npend, mask);
		}
	}
	/* All of it: the new passphrase alone. */
	h = load_ok();
	ck_assert(opens(h, "new", vk) && !opens(h, "pw", NULL));
	luks2_free(h);
	for (i = 0; i < ntrace; i++)
		free(trace[i].data);
	free(orig);
	free(durable);
	secret_free(vk);
}
END_TEST

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A LUKS1 header made by hand from the primitives, keyslot 3 used. */
static void
make_luks1(const uint8_t *key)
{
	uint8_t dk[32], *af = malloc(32 * 4000);
	uint8_t *s = dev + 208 + 3 * 48;

	memset(dev, 0, 8192);
	memcpy(dev, "LUKS\xba\xbe\0\1", 8);
	strcpy((char *)dev + 8, "aes");
	strcpy((char *)dev + 40, "xts-plain64");
	strcpy((char *)dev + 72, "sha256");
	put32(dev + 104, 4096);		/* payload at 2 MiB */
	put32(dev + 108, 32);
	luks2_random(dev + 132, 32);
	put32(dev + 164, 1000);
	luks2_pbkdf2("sha256", key, 32, dev + 132, 32, 1000, dev + 112, 20);
	strcpy((char *)dev + 168, "01234567-89ab-cdef-0123-456789abcdef");
	for (int i = 0; i < 8; i++)
		put32(dev + 208 + 48 * i, 0x0000DEAD);
	put32(s, 0x00AC71F3);
	put32(s + 4, 1000);
	luks2_random(s + 8, 32);
	put32(s + 40, 8);
	put32(s + 44, 4000);
	luks2_pbkdf2("sha256", "old", 3, s + 8, 32, 1000, dk, 32);
	luks2_af_split(key, 32, 4000, "sha256", af);
	luks2_xts(1, "aes-xts-plain64", dk, 32, af, dev + 4096, 32 * 4000);
	free(af);
}

START_TEST(luks1)
{
	uint8_t key[32], clean[592];
	struct secret *vk;
	struct luks2 *h;
	int slot;

	luks2_random(key, sizeof(key));
	make_luks1(key);
	h = load_ok();
	ck_assert_int_eq(h->version, 1);
	ck_assert_uint_eq(h->data_offset, 4096 * 512);
	ck_assert_int_eq(luks2_unlock(&io, h, "old", 3, -1, &vk, &slot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(slot, 3);
	ck_assert_mem_eq(vk->buf, key, 32);
	ck_assert(!opens(h, "ol", NULL));
	/* Read only. */
	ck_assert_int_eq(luks2_keyslot_add(&io, h, vk, "n", 1, &h->ks[3].kdf, &slot,
	    err, sizeof(err)), -1);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), -1);
	secret_free(vk);
	luks2_free(h);
	memcpy(clean, dev, sizeof(clean));
	dev[208 + 3] = 0x00;		/* slot state neither active nor disabled */
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	memcpy(dev, clean, sizeof(clean));
	strcpy((char *)dev + 40, "cbc-plain");
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	memcpy(dev, clean, sizeof(clean));
	put32(dev + 208 + 3 * 48 + 40, 4090);	/* key material into the data */
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	memcpy(dev, clean, sizeof(clean));
	put32(dev + 104, 0);			/* payload at 0 */
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	memcpy(dev, clean, sizeof(clean));
	memset(dev + 72, 'a', 32);		/* hash not terminated */
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	memcpy(dev, clean, sizeof(clean));
	memset(dev + 72, 'a', 31);		/* terminated, longer than any we know */
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
}
END_TEST

START_TEST(not_luks)
{
	struct luks2 *h;

	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "not a LUKS device");
	io.size = 4;
	ck_assert_int_eq(luks2_load(&io, &h, err, sizeof(err)), -1);
}
END_TEST

/*
 * Argon2's memory is allocated locked (Decision 95): the same hash as
 * libargon2's own allocator gives, and under an RLIMIT_MEMLOCK it does
 * not fit (a child without CAP_IPC_LOCK) a clear error, not a silent
 * fallback to memory that may be swapped.
 */
START_TEST(argon2_memory_locked)
{
	struct luks2_kdf k = kdf_of(KDF_ARGON2ID);
	uint8_t a[32], b[32];
	struct rlimit rl = { 64 << 10, 64 << 10 };
	int st;
	pid_t pid;

	k.memory = 1024;
	k.salt_len = 32;
	memset(k.salt, 7, k.salt_len);
	ck_assert_int_eq(luks2_kdf_derive(&k, "pw", 2, a, sizeof(a), err, sizeof(err)), 0);
	ck_assert_int_eq(argon2id_hash_raw(k.time, k.memory, k.cpus, "pw", 2, k.salt,
	    k.salt_len, b, sizeof(b)), ARGON2_OK);
	ck_assert_mem_eq(a, b, sizeof(a));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* The sanitizers' mlock does nothing and succeeds: the limit is tested in the plain run. */
	return;
#endif
	if ((pid = fork()) == 0) {
		/* Not root any more: RLIMIT_MEMLOCK binds without CAP_IPC_LOCK. */
		if ((getuid() == 0 && setuid(65534) != 0) || setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
			_exit(10);
		if (luks2_kdf_derive(&k, "pw", 2, a, sizeof(a), err, sizeof(err)) == 0)
			_exit(11);
		if (strstr(err, "RLIMIT_MEMLOCK is 64 KiB") == NULL ||
		    strstr(err, "1024 KiB of locked memory") == NULL)
			_exit(12);
		/* What fits the limit works. */
		k.memory = 32;
		_exit(luks2_kdf_derive(&k, "pw", 2, a, sizeof(a), err, sizeof(err)) == 0 ? 0 : 13);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %d", st);
}
END_TEST

static uint8_t *backup_buf;

/* Whether a write of len at off touches header copy c (0 primary, 1 secondary). */
static int
touches(uint64_t off, size_t len, int c)
{
	uint64_t lo = c ? HS : 0, hi = lo + HS;

	return off < hi && off + len > lo;
}

/* The device loads and opens with pw. */
static int
loads_and_opens(const char *pw, const struct secret *vk)
{
	struct luks2 *h;
	int ok;

	if (luks2_load(&io, &h, err, sizeof(err)) != 0)
		return 0;
	ok = opens(h, pw, vk);
	luks2_free(h);
	return ok;
}

/*
 * header.restore (Decision 96): between two flushes its writes touch one
 * header copy at most, so a power cut anywhere, the copy being written
 * torn to garbage, leaves a header that loads and opens.
 */
START_TEST(power_cut_restore)
{
	struct secret *vk = format(KDF_PBKDF2), *got;
	struct luks2_kdf k = kdf_of(KDF_PBKDF2);
	uint8_t *orig = malloc(DEV_SIZE);
	struct luks2_io bio = io;
	struct luks2 *h, *b;
	int i, start, end, c, slot, ncopies;

	backup_buf = malloc(DEV_SIZE);
	memcpy(backup_buf, dev, DEV_SIZE);
	bio.ctx = backup_buf;
	/* The device moves on: another key, a newer seqid. */
	h = load_ok();
	ck_assert_int_eq(luks2_unlock(&io, h, "pw", 2, -1, &got, &slot, err, sizeof(err)), 0);
	ck_assert_int_eq(luks2_keyslot_add(&io, h, got, "two", 3, &k, &slot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(luks2_store(&io, h, err, sizeof(err)), 0);
	secret_free(got);
	luks2_free(h);
	memcpy(orig, dev, DEV_SIZE);
	ck_assert_int_eq(luks2_load(&bio, &b, err, sizeof(err)), 0);
	ntrace = 0;
	io.write = trace_write;
	io.sync = trace_sync;
	ck_assert_int_eq(luks2_restore(&bio, &io, b, err, sizeof(err)), 0);
	io.write = mem_write;
	io.sync = NULL;
	luks2_free(b);
	for (start = 0; start < ntrace; start = end + 1) {
		for (end = start; end < ntrace && trace[end].data != NULL; end++)
			;
		/* Durable: everything before this window. */
		memcpy(dev, orig, DEV_SIZE);
		for (i = 0; i < start; i++)
			if (trace[i].data != NULL)
				memcpy(dev + trace[i].off, trace[i].data, trace[i].len);
		ck_assert(loads_and_opens("pw", vk));
		for (ncopies = 0, c = 0; c < 2; c++) {
			int hit = 0;

			for (i = start; i < end; i++)
				hit |= touches(trace[i].off, trace[i].len, c);
			ncopies += hit;
			if (hit)	/* torn: anything at all */
				memset(dev + (c ? HS : 0), 0xa5, HS);
		}
		ck_assert_msg(ncopies <= 1, "writes %d-%d touch both header copies "
		    "between two flushes", start, end);
		ck_assert_msg(loads_and_opens("pw", vk), "cut in writes %d-%d", start, end);
	}
	/* All of it: the backup's keys alone. */
	memcpy(dev, orig, DEV_SIZE);
	for (i = 0; i < ntrace; i++)
		if (trace[i].data != NULL)
			memcpy(dev + trace[i].off, trace[i].data, trace[i].len);
	ck_assert_mem_eq(dev, backup_buf, 2 * HS);
	h = load_ok();
	ck_assert(opens(h, "pw", vk) && !opens(h, "two", NULL));
	luks2_free(h);
	for (i = 0; i < ntrace; i++)
		free(trace[i].data);
	free(orig);
	free(backup_buf);
	secret_free(vk);
}
END_TEST

/* Sets keyslot id's priority in the JSON area and stores the header (its return). */
static int
set_priority(struct luks2 *h, const char *id, int prio)
{
	struct json_object *o;

	ck_assert(json_object_object_get_ex(h->json, "keyslots", &o));
	ck_assert(json_object_object_get_ex(o, id, &o));
	json_object_object_add(o, "priority", json_object_new_int(prio));
	return luks2_store(&io, h, err, sizeof(err));
}

/*
 * Keyslot priorities as cryptsetup: 0 (ignore) is not tried unless the
 * slot is named, 2 (high) before 1 (normal); 3 is refused.
 */
START_TEST(keyslot_priority)
{
	struct secret *vk = format(KDF_PBKDF2), *got;
	struct luks2_kdf k = kdf_of(KDF_PBKDF2);
	struct luks2 *h = load_ok();
	int slot = -1;

	ck_assert_int_eq(h->ks[0].priority, 1);
	ck_assert_int_eq(set_priority(h, "0", 0), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert_int_eq(h->ks[0].priority, 0);
	ck_assert_int_eq(luks2_unlock(&io, h, "pw", 2, -1, &got, &slot, err, sizeof(err)), -1);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(luks2_unlock(&io, h, "pw", 2, 0, &got, &slot, err, sizeof(err)), 0);
	ck_assert_int_eq(slot, 0);
	/* The same passphrase in slot 1 (normal) and slot 2 (high): 2 opens. */
	ck_assert_int_eq(luks2_keyslot_add(&io, h, got, "pw", 2, &k, &slot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(slot, 1);
	ck_assert_int_eq(luks2_keyslot_add(&io, h, got, "pw", 2, &k, &slot, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(slot, 2);
	secret_free(got);
	ck_assert_int_eq(set_priority(h, "2", 2), 0);
	luks2_free(h);
	h = load_ok();
	ck_assert_int_eq(luks2_unlock(&io, h, "pw", 2, -1, &got, &slot, err, sizeof(err)), 0);
	ck_assert_int_eq(slot, 2);
	secret_free(got);
	/* Checked as a disk's would be: never written. */
	ck_assert_int_eq(set_priority(h, "2", 3), -1);
	ck_assert_msg(strstr(err, "priority") != NULL, "%s", err);
	luks2_free(h);
	secret_free(vk);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("luks2");
	TCase *tc = tcase_create("luks2");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, format_pbkdf2);
	tcase_add_test(tc, format_argon2i);
	tcase_add_test(tc, format_argon2id);
	tcase_add_test(tc, af_round_trip);
	tcase_add_test(tc, base64);
	tcase_add_test(tc, both_copies);
	tcase_add_test(tc, newer_copy_wins);
	tcase_add_test(tc, refused_newer_not_skipped);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, binary_refusals);
	tcase_add_test(tc, keyslots);
	tcase_add_test(tc, drop_unassigns_tokens);
	tcase_add_test(tc, kdf_limits);
	tcase_add_test(tc, format_refusals);
	tcase_add_test(tc, failed_write);
	tcase_add_test(tc, power_cut_key_change);
	tcase_add_test(tc, luks1);
	tcase_add_test(tc, not_luks);
	tcase_add_test(tc, argon2_memory_locked);
	tcase_add_test(tc, keyslot_priority);
	tcase_add_test(tc, power_cut_restore);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
