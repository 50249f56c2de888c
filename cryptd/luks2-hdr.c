/*
 * luks2-hdr.c: the binary headers.  LUKS2 keeps two copies, each a
 * 4096-byte binary header and a JSON area, checksummed together; the
 * copy with the higher seqid wins.  A copy whose magic, sizes or
 * checksum are bad is damaged and the other one is used (and the
 * damaged one rewritten at the next store); a copy that is intact but
 * says something cryptd refuses (a requirement, an unknown type) is
 * never passed over for an older one: that would undo what its writer
 * meant.  LUKS1 (one copy, no checksum) is read only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "luks2.h"

#define ERR(...)	luks2_err(err, errlen, __VA_ARGS__)

/* Offsets in the binary header (LUKS2 on-disk format, section 2). */
#define OFF_VERSION	6
#define OFF_HDR_SIZE	8
#define OFF_SEQID	16
#define OFF_LABEL	24
#define OFF_CSUM_ALG	72
#define OFF_SALT	104
#define OFF_UUID	168
#define OFF_SUBSYSTEM	208
#define OFF_HDR_OFFSET	256
#define OFF_CSUM	448
#define LEN_LABEL	48
#define LEN_CSUM_ALG	32
#define LEN_SALT	64
#define LEN_UUID	40
#define LEN_CSUM	64

static const uint8_t magic1[6] = { 'L', 'U', 'K', 'S', 0xba, 0xbe };
static const uint8_t magic2[6] = { 'S', 'K', 'U', 'L', 0xba, 0xbe };

static uint64_t
be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static int
fd_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(*(int *)ctx, buf, len, (off_t)off);

	return n == (ssize_t)len ? 0 : -1;
}

static int
fd_write(void *ctx, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(*(int *)ctx, buf, len, (off_t)off);

	return n == (ssize_t)len ? 0 : -1;
}

static int
fd_sync(void *ctx)
{
	return fsync(*(int *)ctx);
}

void
luks2_io_fd(struct luks2_io *io, int *fd, uint64_t size)
{
	io->read = fd_read;
	io->write = fd_write;
	io->ctx = fd;
	io->size = size;
	io->sync = fd_sync;
}

int
luks2_write_synced(const struct luks2_io *io, const void *buf, size_t len,
    uint64_t off)
{
	if (io->write(io->ctx, buf, len, off) != 0)
		return -1;
	return io->sync != NULL ? io->sync(io->ctx) : 0;
}

int
luks2_copy(const struct luks2_io *from, const struct luks2_io *to, uint64_t off,
    uint64_t len)
{
	uint8_t buf[65536];
	uint64_t done;
	size_t n;

	for (done = 0; done < len; done += n) {
		n = len - done < sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
		if (luks2_read_at(from, buf, n, off + done) != 0 ||
		    to->write(to->ctx, buf, n, off + done) != 0)
			return -1;
	}
	return 0;
}

int
luks2_restore(const struct luks2_io *from, const struct luks2_io *to,
    const struct luks2 *b, char *err, size_t errlen)
{
	static const char *const what[] = { "primary copy", "secondary copy",
	    "keyslots area" };
	uint64_t off[3], len[3];
	int i, n;

	if (b->version == 2) {
		off[0] = 0;
		len[0] = b->hdr_size;
		off[1] = b->hdr_size;
		len[1] = b->hdr_size;
		off[2] = 2 * b->hdr_size;
		len[2] = b->keyslots_size;
		n = 3;
	} else {
		off[0] = 0;
		len[0] = b->data_offset;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		if (off[i] > to->size || len[i] > to->size - off[i])
			return ERR("the device is smaller than the backup");
		if (luks2_copy(from, to, off[i], len[i]) != 0 ||
		    (to->sync != NULL && to->sync(to->ctx) != 0))
			return ERR("cannot write the %s: %s", n == 1 ? "header" : what[i],
			    strerror(errno));
	}
	return 0;
}

int
luks2_read_at(const struct luks2_io *io, void *buf, size_t len, uint64_t off)
{
	if (off > io->size || len > io->size - off)
		return -1;
	return io->read(io->ctx, buf, len, off);
}

static int
hdr_size_ok(uint64_t n)
{
	uint64_t s;

	for (s = 16384; s <= LUKS2_HDR_MAX; s *= 2)
		if (n == s)
			return 1;
	return 0;
}

/* A NUL-terminated string within len bytes, copied to out. */
static int
fixed_str(const uint8_t *p, size_t len, char *out)
{
	const uint8_t *nul = memchr(p, '\0', len);

	if (nul == NULL)
		return -1;
	memcpy(out, p, (size_t)(nul - p) + 1);
	return 0;
}

/* 36 characters of hex digits and dashes: it names keys and dm devices. */
static int
uuid_ok(const char *u)
{
	size_t i;

	if (strlen(u) != 36)
		return 0;
	for (i = 0; i < 36; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != '-' : !strchr("0123456789abcdefABCDEF", u[i]))
			return 0;
	}
	return 1;
}

/* The checksum of a copy: its binary header, csum zeroed, then its JSON. */
static int
copy_csum(const uint8_t *buf, size_t hdr_size, const char *alg, uint8_t *out,
    unsigned *outlen)
{
	const EVP_MD *md;
	EVP_MD_CTX *c;
	static const uint8_t zero[LEN_CSUM];
	int rc = -1;

	if (!luks2_hash_ok(alg) || (md = EVP_get_digestbyname(alg)) == NULL ||
	    (c = EVP_MD_CTX_new()) == NULL)
		return -1;
	if (EVP_DigestInit_ex(c, md, NULL) == 1 &&
	    EVP_DigestUpdate(c, buf, OFF_CSUM) == 1 &&
	    EVP_DigestUpdate(c, zero, LEN_CSUM) == 1 &&
	    EVP_DigestUpdate(c, buf + OFF_CSUM + LEN_CSUM,
	    hdr_size - OFF_CSUM - LEN_CSUM) == 1 &&
	    EVP_DigestFinal_ex(c, out, outlen) == 1)
		rc = 0;
	EVP_MD_CTX_free(c);
	return rc;
}

/* The binary header of a copy and its checksum: -1 means damaged. */
static int
check_binary(const uint8_t *buf, size_t len, uint64_t off, struct luks2 *h,
    char *err, size_t errlen)
{
	uint8_t sum[EVP_MAX_MD_SIZE];
	unsigned sumlen;

	if (len < LUKS2_BIN_SIZE)
		return ERR("header short");
	if (memcmp(buf, off == 0 ? magic1 : magic2, 6) != 0)
		return ERR("no LUKS2 magic at %llu", (unsigned long long)off);
	if (buf[OFF_VERSION] != 0 || buf[OFF_VERSION + 1] != 2)
		return ERR("header version not 2");
	h->hdr_size = be64(buf + OFF_HDR_SIZE);
	if (!hdr_size_ok(h->hdr_size) || h->hdr_size > len)
		return ERR("header size %llu not allowed",
		    (unsigned long long)h->hdr_size);
	if (be64(buf + OFF_HDR_OFFSET) != off)
		return ERR("header offset does not match where it was found");
	if (fixed_str(buf + OFF_CSUM_ALG, LEN_CSUM_ALG, h->csum_alg) != 0 ||
	    copy_csum(buf, h->hdr_size, h->csum_alg, sum, &sumlen) != 0)
		return ERR("header checksum algorithm not supported");
	if (CRYPTO_memcmp(sum, buf + OFF_CSUM, sumlen) != 0)
		return ERR("header checksum does not match");
	h->version = 2;
	h->seqid = be64(buf + OFF_SEQID);
	return 0;
}

static int
parse_strings(const uint8_t *buf, struct luks2 *h, char *err, size_t errlen)
{
	if (fixed_str(buf + OFF_LABEL, LEN_LABEL, h->label) != 0 ||
	    fixed_str(buf + OFF_SUBSYSTEM, LEN_LABEL, h->subsystem) != 0 ||
	    fixed_str(buf + OFF_UUID, LEN_UUID, h->uuid) != 0)
		return ERR("label, subsystem or uuid not terminated");
	if (!uuid_ok(h->uuid))
		return ERR("uuid bad");
	return 0;
}

int
luks2_parse_copy(const uint8_t *buf, size_t len, uint64_t off, struct luks2 *h,
    char *err, size_t errlen)
{
	if (check_binary(buf, len, off, h, err, errlen) != 0 ||
	    parse_strings(buf, h, err, errlen) != 0)
		return -1;
	return luks2_parse_json((const char *)buf + LUKS2_BIN_SIZE,
	    h->hdr_size - LUKS2_BIN_SIZE, h, err, errlen);
}

/* A copy read from io into *bufp (hdr_size bytes) if intact, else NULL. */
static int
read_copy(const struct luks2_io *io, uint64_t off, uint8_t **bufp,
    struct luks2 *h, char *err, size_t errlen)
{
	uint8_t bin[LUKS2_BIN_SIZE], *buf;
	uint64_t size;

	*bufp = NULL;
	if (luks2_read_at(io, bin, sizeof(bin), off) != 0)
		return ERR("cannot read the header at %llu", (unsigned long long)off);
	size = be64(bin + OFF_HDR_SIZE);
	if (memcmp(bin, off == 0 ? magic1 : magic2, 6) != 0 || !hdr_size_ok(size))
		return check_binary(bin, sizeof(bin), off, h, err, errlen);
	if ((buf = malloc(size)) == NULL)
		return ERR("out of memory");
	if (luks2_read_at(io, buf, size, off) != 0) {
		free(buf);
		return ERR("cannot read the header at %llu", (unsigned long long)off);
	}
	if (check_binary(buf, size, off, h, err, errlen) != 0) {
		free(buf);
		return -1;
	}
	*bufp = buf;
	return 0;
}

/* The secondary: after the primary, or, that one damaged, wherever allowed. */
static int
find_secondary(const struct luks2_io *io, const struct luks2 *p, uint8_t **bufp,
    uint64_t *offp, struct luks2 *s, char *err, size_t errlen)
{
	uint64_t off;

	if (p->version == 2) {
		*offp = p->hdr_size;
		return read_copy(io, p->hdr_size, bufp, s, err, errlen);
	}
	/* A secondary sits right after a primary of its own size. */
	for (off = 16384; off <= LUKS2_HDR_MAX; off *= 2) {
		if (read_copy(io, off, bufp, s, NULL, 0) != 0)
			continue;
		if (s->hdr_size == off) {
			*offp = off;
			return 0;
		}
		free(*bufp);
		*bufp = NULL;
	}
	return ERR("no intact secondary header");
}

int
luks2_present(const struct luks2_io *io)
{
	uint8_t m[6];
	uint64_t off;

	if (luks2_read_at(io, m, sizeof(m), 0) == 0 && memcmp(m, magic1, 6) == 0)
		return 1;
	for (off = 16384; off <= LUKS2_HDR_MAX; off *= 2)
		if (luks2_read_at(io, m, sizeof(m), off) == 0 &&
		    memcmp(m, magic2, 6) == 0)
			return 1;
	return 0;
}

static int
load_luks1(const struct luks2_io *io, struct luks2 **out, char *err,
    size_t errlen)
{
	uint8_t buf[LUKS1_HDR_SIZE];
	struct luks2 *h;

	if (luks2_read_at(io, buf, sizeof(buf), 0) != 0)
		return ERR("cannot read the LUKS1 header");
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return ERR("out of memory");
	if (luks1_parse(buf, sizeof(buf), h, err, errlen) != 0) {
		luks2_free(h);
		return -1;
	}
	*out = h;
	return 0;
}

int
luks2_load(const struct luks2_io *io, struct luks2 **out, char *err,
    size_t errlen)
{
	char perr[LUKS2_ERRLEN], serr[LUKS2_ERRLEN];
	uint8_t head[8], *pb, *sb, *use;
	struct luks2 p, s, *h;
	uint64_t soff = 0;
	int rc;

	*out = NULL;
	if (luks2_read_at(io, head, sizeof(head), 0) != 0)
		return ERR("cannot read the device");
	if (memcmp(head, magic1, 6) == 0 && head[6] == 0 && head[7] == 1)
		return load_luks1(io, out, err, errlen);
	memset(&p, 0, sizeof(p));
	memset(&s, 0, sizeof(s));
	read_copy(io, 0, &pb, &p, perr, sizeof(perr));
	p.version = pb ? 2 : 0;
	find_secondary(io, &p, &sb, &soff, &s, serr, sizeof(serr));
	if (pb == NULL && sb == NULL) {
		if (memcmp(head, magic1, 6) != 0)
			return ERR("not a LUKS device");
		return ERR("both headers damaged: %s; secondary: %s", perr, serr);
	}
	/* The newer intact copy decides, even when it is then refused. */
	if (pb != NULL && (sb == NULL || p.seqid >= s.seqid))
		use = pb;
	else
		use = sb;
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		free(pb);
		free(sb);
		return ERR("out of memory");
	}
	rc = luks2_parse_copy(use, use == pb ? p.hdr_size : s.hdr_size,
	    use == pb ? 0 : soff, h, err, errlen);
	if (rc == 0) {
		h->primary_ok = pb != NULL;
		h->secondary_ok = sb != NULL;
		h->repair = pb == NULL || sb == NULL || p.seqid != s.seqid ||
		    p.hdr_size != s.hdr_size ||
		    memcmp(pb + LUKS2_BIN_SIZE, sb + LUKS2_BIN_SIZE,
		    p.hdr_size - LUKS2_BIN_SIZE) != 0;
	}
	free(pb);
	free(sb);
	if (rc != 0) {
		luks2_free(h);
		return -1;
	}
	*out = h;
	return 0;
}

void
luks2_free(struct luks2 *h)
{
	if (h == NULL)
		return;
	json_object_put(h->json);
	explicit_bzero(h, sizeof(*h));
	free(h);
}

int
luks2_encode_copy(const struct luks2 *h, int secondary, uint8_t *buf,
    size_t len, char *err, size_t errlen)
{
	const char *text;
	size_t tlen;
	uint8_t sum[EVP_MAX_MD_SIZE];
	unsigned sumlen;

	if (h->version != 2 || len != h->hdr_size || !hdr_size_ok(len))
		return ERR("cannot write this header");
	text = json_object_to_json_string_ext(h->json, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL || (tlen = strlen(text)) >= len - LUKS2_BIN_SIZE)
		return ERR("JSON area too large for the header");
	memset(buf, 0, len);
	memcpy(buf, secondary ? magic2 : magic1, 6);
	buf[OFF_VERSION + 1] = 2;
	put_be64(buf + OFF_HDR_SIZE, h->hdr_size);
	put_be64(buf + OFF_SEQID, h->seqid);
	memcpy(buf + OFF_LABEL, h->label, strnlen(h->label, LEN_LABEL - 1));
	strcpy((char *)buf + OFF_CSUM_ALG, "sha256");
	if (luks2_random(buf + OFF_SALT, LEN_SALT) != 0)
		return ERR("no random bytes");
	memcpy(buf + OFF_UUID, h->uuid, strnlen(h->uuid, LEN_UUID - 1));
	memcpy(buf + OFF_SUBSYSTEM, h->subsystem, strnlen(h->subsystem, LEN_LABEL - 1));
	put_be64(buf + OFF_HDR_OFFSET, secondary ? h->hdr_size : 0);
	memcpy(buf + LUKS2_BIN_SIZE, text, tlen);
	if (copy_csum(buf, len, "sha256", sum, &sumlen) != 0)
		return ERR("checksum failed");
	memcpy(buf + OFF_CSUM, sum, sumlen);
	return 0;
}

int
luks2_store(const struct luks2_io *io, struct luks2 *h, char *err,
    size_t errlen)
{
	struct luks2 check;
	uint8_t *buf;
	int i, rc = -1;

	if (h->version != 2)
		return ERR("LUKS1 headers are read only");
	if (io->size < 2 * h->hdr_size + h->keyslots_size)
		return ERR("device smaller than its header");
	if ((buf = malloc(h->hdr_size)) == NULL)
		return ERR("out of memory");
	h->seqid++;
	/* What is written must read back: encode, then parse it again. */
	for (i = 0; i < 2; i++) {
		memset(&check, 0, sizeof(check));
		if (luks2_encode_copy(h, i, buf, h->hdr_size, err, errlen) != 0)
			goto out;
		rc = luks2_parse_copy(buf, h->hdr_size, i ? h->hdr_size : 0, &check,
		    err, errlen);
		json_object_put(check.json);
		if (rc != 0)
			goto out;
		rc = -1;
		/* Each copy on the disk before the next (cryptsetup's order). */
		if (luks2_write_synced(io, buf, h->hdr_size, i ? h->hdr_size : 0) != 0) {
			ERR("cannot write the %s header: %s", i ? "secondary" :
			    "primary", strerror(errno));
			goto out;
		}
	}
	h->primary_ok = h->secondary_ok = 1;
	h->repair = 0;
	rc = 0;
out:
	free(buf);
	return rc;
}

/* ---- LUKS1: 592 bytes, big-endian, read only ---- */

#define L1_CIPHER	8
#define L1_MODE		40
#define L1_HASH		72
#define L1_PAYLOAD	104
#define L1_KEYBYTES	108
#define L1_MKDIGEST	112
#define L1_MKSALT	132
#define L1_MKITER	164
#define L1_UUID		168
#define L1_SLOTS	208
#define L1_ACTIVE	0x00AC71F3U
#define L1_DISABLED	0x0000DEADU

static int
luks1_slot(const uint8_t *p, struct luks2 *h, int i, uint32_t keybytes,
    uint64_t data_offset, char *err, size_t errlen)
{
	struct luks2_keyslot *ks = &h->ks[i];
	uint32_t active = be32(p);
	uint64_t need;

	if (active == L1_DISABLED)
		return 0;
	if (active != L1_ACTIVE)
		return ERR("LUKS1 keyslot %d state bad", i);
	ks->used = 1;
	ks->priority = 1;
	ks->key_size = ks->area_key_size = keybytes;
	ks->kdf.type = KDF_PBKDF2;
	strcpy(ks->kdf.hash, h->dg[0].hash);
	ks->kdf.iterations = be32(p + 4);
	memcpy(ks->kdf.salt, p + 8, 32);
	ks->kdf.salt_len = 32;
	ks->stripes = be32(p + 44);
	strcpy(ks->af_hash, h->dg[0].hash);
	strcpy(ks->area_cipher, "aes-xts-plain64");
	ks->area_offset = (uint64_t)be32(p + 40) * 512;
	need = (uint64_t)keybytes * ks->stripes;
	ks->area_size = (need + 511) / 512 * 512;
	ks->digest = 0;
	if (ks->stripes != LUKS2_STRIPES || luks2_kdf_check(&ks->kdf, NULL, 0) != 0)
		return ERR("LUKS1 keyslot %d stripes or iterations bad", i);
	if (ks->area_offset < 1024 || ks->area_offset > data_offset ||
	    ks->area_size > data_offset - ks->area_offset)
		return ERR("LUKS1 keyslot %d outside the header area", i);
	h->dg[0].keyslots |= 1U << i;
	return 0;
}

int
luks1_parse(const uint8_t *buf, size_t len, struct luks2 *h, char *err,
    size_t errlen)
{
	char name[33], mode[33], hash[33];
	uint32_t keybytes;
	int i;

	memset(h, 0, sizeof(*h));
	if (len < LUKS1_HDR_SIZE || memcmp(buf, magic1, 6) != 0 ||
	    buf[OFF_VERSION] != 0 || buf[OFF_VERSION + 1] != 1)
		return ERR("not a LUKS1 header");
	h->version = 1;
	h->hdr_size = LUKS1_HDR_SIZE;
	if (fixed_str(buf + L1_CIPHER, 32, name) != 0 ||
	    fixed_str(buf + L1_MODE, 32, mode) != 0 ||
	    fixed_str(buf + L1_HASH, 32, hash) != 0 ||
	    fixed_str(buf + L1_UUID, LEN_UUID, h->uuid) != 0)
		return ERR("LUKS1 strings not terminated");
	/* The field is 32 bytes, the names we know are short. */
	if (strlen(hash) >= sizeof(h->dg[0].hash))
		return ERR("LUKS1 hash not supported");
	strcpy(h->dg[0].hash, hash);
	if (strcmp(name, "aes") != 0 || strcmp(mode, "xts-plain64") != 0)
		return ERR("LUKS1 cipher %s-%s not supported", name, mode);
	strcpy(h->cipher, "aes-xts-plain64");
	if (!luks2_hash_ok(h->dg[0].hash) || !uuid_ok(h->uuid))
		return ERR("LUKS1 hash or uuid bad");
	keybytes = be32(buf + L1_KEYBYTES);
	if (keybytes != 32 && keybytes != 64)
		return ERR("LUKS1 key size %u not supported", keybytes);
	h->sector_size = 512;
	h->data_offset = (uint64_t)be32(buf + L1_PAYLOAD) * 512;
	if (h->data_offset < 4096)
		return ERR("LUKS1 payload offset bad");
	h->dg[0].used = 1;
	h->dg[0].iterations = be32(buf + L1_MKITER);
	memcpy(h->dg[0].salt, buf + L1_MKSALT, 32);
	h->dg[0].salt_len = 32;
	memcpy(h->dg[0].digest, buf + L1_MKDIGEST, LUKS1_DIGEST);
	h->dg[0].digest_len = LUKS1_DIGEST;
	if (h->dg[0].iterations < 1000 || h->dg[0].iterations > INT32_MAX)
		return ERR("LUKS1 digest iterations bad");
	for (i = 0; i < LUKS1_KEYSLOTS; i++)
		if (luks1_slot(buf + L1_SLOTS + 48 * i, h, i, keybytes,
		    h->data_offset, err, errlen) != 0)
			return -1;
	if (luks2_areas_overlap(h, err, errlen))
		return -1;
	return 0;
}
