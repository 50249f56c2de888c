/*
 * luks2-crypto.c: the primitives under LUKS: PBKDF2 and Argon2, the
 * anti-forensic splitter (LUKS1 spec 2.4), aes-xts-plain64 over a
 * keyslot area, base64 for the JSON area.  OpenSSL 3 and libargon2.
 */
#include <sys/random.h>
#include <sys/resource.h>

#include <argon2.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "luks2.h"
#include "secret.h"

int
luks2_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *
luks2_kdf_name(enum luks2_kdf_type t)
{
	switch (t) {
	case KDF_PBKDF2:	return "pbkdf2";
	case KDF_ARGON2I:	return "argon2i";
	case KDF_ARGON2ID:	return "argon2id";
	}
	return "?";
}

/* The hashes LUKS headers may name that we accept. */
int
luks2_hash_ok(const char *hash)
{
	return strcmp(hash, "sha1") == 0 || strcmp(hash, "sha256") == 0 ||
	    strcmp(hash, "sha512") == 0;
}

static const EVP_MD *
md_of(const char *hash)
{
	if (!luks2_hash_ok(hash))
		return NULL;
	return EVP_get_digestbyname(hash);
}

int
luks2_random(void *buf, size_t len)
{
	unsigned char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
luks2_pbkdf2(const char *hash, const void *pass, size_t passlen,
    const void *salt, size_t saltlen, uint32_t iter, void *out, size_t outlen)
{
	const EVP_MD *md = md_of(hash);

	if (md == NULL || iter == 0 || passlen > INT32_MAX || saltlen > INT32_MAX ||
	    outlen > INT32_MAX)
		return -1;
	/* OpenSSL reads pass as a string but takes its length: NULs are fine. */
	if (PKCS5_PBKDF2_HMAC(passlen ? pass : "", (int)passlen, salt,
	    (int)saltlen, (int)(iter > INT32_MAX ? INT32_MAX : iter), md,
	    (int)outlen, out) != 1)
		return -1;
	return iter > INT32_MAX ? -1 : 0;
}

/* The limits cryptsetup itself keeps, for what a header asks. */
int
luks2_kdf_check(const struct luks2_kdf *k, char *err, size_t errlen)
{
	if (k->salt_len < 16 || k->salt_len > LUKS2_SALT_MAX)
		return luks2_err(err, errlen, "kdf salt of %zu bytes", k->salt_len);
	switch (k->type) {
	case KDF_PBKDF2:
		if (!luks2_hash_ok(k->hash))
			return luks2_err(err, errlen, "pbkdf2 hash not supported");
		if (k->iterations < 1000 || k->iterations > INT32_MAX)
			return luks2_err(err, errlen, "pbkdf2 iterations %u out of range",
			    k->iterations);
		return 0;
	case KDF_ARGON2I:
	case KDF_ARGON2ID:
		if (k->time < 4 || k->time > 1000000)
			return luks2_err(err, errlen, "argon2 time %u out of range", k->time);
		if (k->memory < 32 || k->memory > 4U * 1024 * 1024)
			return luks2_err(err, errlen, "argon2 memory %u KiB out of range",
			    k->memory);
		if (k->cpus < 1 || k->cpus > 4 || k->memory < 8 * k->cpus)
			return luks2_err(err, errlen, "argon2 cpus %u out of range", k->cpus);
		return 0;
	}
	return luks2_err(err, errlen, "unknown kdf");
}

/*
 * Argon2's working memory (up to the memory cap, a GiB) holds what the
 * passphrase becomes: it is locked in RAM like every secret, left out of
 * core dumps and wiped before it is unmapped (lib/secret.c). A lock
 * that fails is an error that says why, never a silent fallback to
 * memory that may be swapped. The message is the thread's own: the KDF
 * runs on cryptd's workers.
 */
static _Thread_local char alloc_err[LUKS2_ERRLEN];

static int
argon2_alloc(uint8_t **mem, size_t len)
{
	struct rlimit rl;
	int e;

	if ((*mem = secret_pages_new(len)) != NULL)
		return ARGON2_OK;
	e = errno;
	if ((e == ENOMEM || e == EPERM || e == EAGAIN) &&
	    getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(alloc_err, sizeof(alloc_err), "argon2 needs %zu KiB of locked "
		    "memory: %s (RLIMIT_MEMLOCK is %llu KiB; run cryptd with "
		    "CAP_IPC_LOCK or a larger limit)", len >> 10, strerror(e),
		    (unsigned long long)(rl.rlim_cur >> 10));
	else
		snprintf(alloc_err, sizeof(alloc_err), "argon2 needs %zu KiB of locked "
		    "memory: %s", len >> 10, strerror(e));
	return ARGON2_MEMORY_ALLOCATION_ERROR;
}

static void
argon2_free(uint8_t *mem, size_t len)
{
	secret_pages_free(mem, len);
}

int
luks2_kdf_derive(const struct luks2_kdf *k, const void *pass, size_t passlen,
    void *out, size_t outlen, char *err, size_t errlen)
{
	argon2_type t = k->type == KDF_ARGON2I ? Argon2_i : Argon2_id;
	argon2_context c = {
		.out = out, .outlen = (uint32_t)outlen,
		/* Read only: the flags leave the password as it is. */
		.pwd = (uint8_t *)(uintptr_t)(passlen ? pass : ""), .pwdlen = (uint32_t)passlen,
		.salt = (uint8_t *)(uintptr_t)k->salt, .saltlen = (uint32_t)k->salt_len,
		.t_cost = k->time, .m_cost = k->memory, .lanes = k->cpus, .threads = k->cpus,
		.version = ARGON2_VERSION_13,
		.allocate_cbk = argon2_alloc, .free_cbk = argon2_free,
		.flags = ARGON2_DEFAULT_FLAGS,
	};
	int rc;

	if (luks2_kdf_check(k, err, errlen) != 0)
		return -1;
	if (k->type == KDF_PBKDF2)
		return luks2_pbkdf2(k->hash, pass, passlen, k->salt, k->salt_len,
		    k->iterations, out, outlen) == 0 ? 0 :
		    luks2_err(err, errlen, "pbkdf2 failed");
	alloc_err[0] = '\0';
	if ((rc = argon2_ctx(&c, t)) != ARGON2_OK)
		return luks2_err(err, errlen, "%s", alloc_err[0] ? alloc_err :
		    argon2_error_message(rc));
	return 0;
}

/* Each digest-sized block of buf hashed with its big-endian index. */
static int
diffuse(uint8_t *buf, size_t len, const EVP_MD *md)
{
	unsigned char d[EVP_MAX_MD_SIZE], iv[4];
	size_t dsize = (size_t)EVP_MD_get_size(md), i, n;
	EVP_MD_CTX *c;
	uint32_t blk;
	int rc = -1;

	if ((c = EVP_MD_CTX_new()) == NULL)
		return -1;
	for (i = 0, blk = 0; i < len; i += n, blk++) {
		n = len - i < dsize ? len - i : dsize;
		iv[0] = (unsigned char)(blk >> 24);
		iv[1] = (unsigned char)(blk >> 16);
		iv[2] = (unsigned char)(blk >> 8);
		iv[3] = (unsigned char)blk;
		if (EVP_DigestInit_ex(c, md, NULL) != 1 ||
		    EVP_DigestUpdate(c, iv, 4) != 1 ||
		    EVP_DigestUpdate(c, buf + i, n) != 1 ||
		    EVP_DigestFinal_ex(c, d, NULL) != 1)
			goto out;
		memcpy(buf + i, d, n);
	}
	rc = 0;
out:
	explicit_bzero(d, sizeof(d));
	EVP_MD_CTX_free(c);
	return rc;
}

static void
xor_into(uint8_t *dst, const uint8_t *src, size_t len)
{
	while (len-- > 0)
		*dst++ ^= *src++;
}

/* d accumulates; it is a key-sized scratch buffer the caller wipes. */
static int
af_walk(uint8_t *stripes_buf, size_t keylen, uint32_t stripes,
    const EVP_MD *md, uint8_t *d)
{
	uint32_t i;

	memset(d, 0, keylen);
	for (i = 0; i + 1 < stripes; i++) {
		xor_into(d, stripes_buf + (size_t)i * keylen, keylen);
		if (diffuse(d, keylen, md) != 0)
			return -1;
	}
	return 0;
}

int
luks2_af_split(const void *key, size_t keylen, uint32_t stripes,
    const char *hash, void *out)
{
	const EVP_MD *md = md_of(hash);
	uint8_t d[LUKS2_KEY_MAX], *o = out;
	int rc;

	if (md == NULL || keylen == 0 || keylen > LUKS2_KEY_MAX || stripes == 0)
		return -1;
	if (luks2_random(o, keylen * (stripes - 1)) != 0)
		return -1;
	rc = af_walk(o, keylen, stripes, md, d);
	if (rc == 0) {
		memcpy(o + (size_t)(stripes - 1) * keylen, key, keylen);
		xor_into(o + (size_t)(stripes - 1) * keylen, d, keylen);
	}
	explicit_bzero(d, sizeof(d));
	return rc;
}

int
luks2_af_merge(const void *in, size_t keylen, uint32_t stripes,
    const char *hash, void *key)
{
	const EVP_MD *md = md_of(hash);
	uint8_t d[LUKS2_KEY_MAX];
	int rc;

	if (md == NULL || keylen == 0 || keylen > LUKS2_KEY_MAX || stripes == 0)
		return -1;
	rc = af_walk((uint8_t *)(uintptr_t)in, keylen, stripes, md, d);
	if (rc == 0) {
		memcpy(key, (const uint8_t *)in + (size_t)(stripes - 1) * keylen, keylen);
		xor_into(key, d, keylen);
	}
	explicit_bzero(d, sizeof(d));
	return rc;
}

int
luks2_xts(int enc, const char *cipher, const void *key, size_t keylen,
    const void *in, void *out, size_t len)
{
	const EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx;
	unsigned char iv[16];
	uint64_t sector;
	size_t off;
	int n, rc = -1;

	if (strcmp(cipher, "aes-xts-plain64") != 0 || len % 512 != 0)
		return -1;
	if (keylen == 64)
		c = EVP_aes_256_xts();
	else if (keylen == 32)
		c = EVP_aes_128_xts();
	else
		return -1;
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	for (off = 0, sector = 0; off < len; off += 512, sector++) {
		memset(iv, 0, sizeof(iv));
		for (n = 0; n < 8; n++)
			iv[n] = (unsigned char)(sector >> (8 * n));
		if (EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc) != 1 ||
		    EVP_CipherUpdate(ctx, (unsigned char *)out + off, &n,
		    (const unsigned char *)in + off, 512) != 1 || n != 512)
			goto out;
	}
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
b64_val(char c)
{
	const char *p;

	if (c == '\0' || (p = strchr(b64, c)) == NULL)
		return -1;
	return (int)(p - b64);
}

int
luks2_b64_decode(const char *s, uint8_t *out, size_t max, size_t *lenp)
{
	size_t n = strlen(s), i, o = 0, pad = 0;
	int v[4], j;

	if (n % 4 != 0)
		return -1;
	if (n > 0 && s[n - 1] == '=')
		pad++;
	if (n > 1 && s[n - 2] == '=')
		pad++;
	if (n / 4 * 3 - pad > max)
		return -1;
	for (i = 0; i < n; i += 4) {
		for (j = 0; j < 4; j++) {
			if (s[i + j] == '=' && i + 4 == n && j >= 4 - (int)pad)
				v[j] = 0;
			else if ((v[j] = b64_val(s[i + j])) < 0)
				return -1;
		}
		out[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		if (i + 4 < n || pad < 2)
			out[o++] = (uint8_t)(v[1] << 4 | v[2] >> 2);
		if (i + 4 < n || pad < 1)
			out[o++] = (uint8_t)(v[2] << 6 | v[3]);
	}
	*lenp = o;
	return 0;
}

char *
luks2_b64_encode(const uint8_t *in, size_t len)
{
	char *s = malloc((len + 2) / 3 * 4 + 1), *p = s;
	size_t i;
	uint32_t v;

	if (s == NULL)
		return NULL;
	for (i = 0; i < len; i += 3) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*p++ = b64[v >> 18 & 63];
		*p++ = b64[v >> 12 & 63];
		*p++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*p++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*p = '\0';
	return s;
}
