/*
 * libFuzzer target: a LUKS2 (or LUKS1) header as found on a disk from
 * another box, read by cryptd's luks2_load.  The first byte is a mode:
 *   bit 2: the rest is the text of a JSON area, placed in two otherwise
 *          valid copies (16 KiB each, sealed), so the JSON checks are
 *          reached with small inputs;
 *   else:  the rest is the start of the device (exactly its bytes, on
 *          the heap, so a read past them is caught); bit 0 reseals the
 *          primary's checksum, bit 1 the secondary's at 16 KiB.
 * What loads as LUKS2 must encode into both copies that load back with
 * the same uuid, label, keyslots, digest and segment, and must let each
 * keyslot be dropped (what key.remove does) into a header that still
 * parses: nothing left naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "cryptd/luks2.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define HS	16384

struct mem {
	uint8_t	*buf;
	size_t	 len;
};

static int
mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct mem *m = ctx;

	if (off > m->len || len > m->len - off)
		abort();	/* luks2_read_at must have refused it */
	memcpy(buf, m->buf + off, len);
	return 0;
}

static int
mem_write(void *ctx, const void *buf, size_t len, uint64_t off)
{
	(void)ctx, (void)buf, (void)len, (void)off;
	abort();		/* loading never writes */
}

static void
fail(const char *what, const char *err)
{
	fprintf(stderr, "fuzz-luks2: %s: %s\n", what, err);
	abort();
}

static void
seal(uint8_t *b, size_t len, uint64_t off)
{
	uint64_t hs = 0;
	unsigned n;
	int i;
	EVP_MD_CTX *c;

	if (off + LUKS2_BIN_SIZE > len)
		return;
	b += off;
	for (i = 0; i < 8; i++)
		hs = hs << 8 | b[8 + i];
	if (hs < LUKS2_BIN_SIZE || hs > len - off || (c = EVP_MD_CTX_new()) == NULL)
		return;
	memset(b + 448, 0, 64);
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	EVP_DigestUpdate(c, b, hs);
	EVP_DigestFinal_ex(c, b + 448, &n);
	EVP_MD_CTX_free(c);
}

/* Two copies around a JSON text. */
static uint8_t *
wrap_json(const uint8_t *text, size_t n, size_t *len)
{
	static const char uuid[] = "01234567-89ab-cdef-0123-456789abcdef";
	uint8_t *b;
	int c;

	if (n >= HS - LUKS2_BIN_SIZE || (b = calloc(1, 2 * HS)) == NULL)
		return NULL;
	for (c = 0; c < 2; c++) {
		uint8_t *p = b + c * HS;

		memcpy(p, c ? "SKUL\xba\xbe\0\2" : "LUKS\xba\xbe\0\2", 8);
		p[8 + 6] = HS >> 8;		/* hdr_size 16384 */
		p[16 + 7] = 1;			/* seqid */
		strcpy((char *)p + 72, "sha256");
		memcpy(p + 168, uuid, sizeof(uuid));
		if (c)
			p[256 + 6] = HS >> 8;	/* hdr_offset */
		memcpy(p + LUKS2_BIN_SIZE, text, n);
		seal(b, 2 * HS, (uint64_t)c * HS);
	}
	*len = 2 * HS;
	return b;
}

static void
same(const struct luks2 *a, const struct luks2 *b)
{
	if (strcmp(a->uuid, b->uuid) != 0 || strcmp(a->label, b->label) != 0 ||
	    strcmp(a->cipher, b->cipher) != 0 || a->data_offset != b->data_offset ||
	    a->data_size != b->data_size || a->sector_size != b->sector_size ||
	    a->keyslots_size != b->keyslots_size ||
	    memcmp(a->ks, b->ks, sizeof(a->ks)) != 0 ||
	    memcmp(a->dg, b->dg, sizeof(a->dg)) != 0)
		fail("round trip differs", a->uuid);
}

/* Both copies as cryptd would store them, loaded again. */
static void
round_trip(struct luks2 *h)
{
	char err[LUKS2_ERRLEN];
	struct mem m;
	struct luks2_io io = { mem_read, mem_write, &m, 0, NULL };
	struct luks2 *again;

	if (h->version != 2)
		return;
	m.len = io.size = 2 * h->hdr_size;
	if ((m.buf = calloc(1, m.len)) == NULL)
		abort();
	if (luks2_encode_copy(h, 0, m.buf, h->hdr_size, err, sizeof(err)) != 0 ||
	    luks2_encode_copy(h, 1, m.buf + h->hdr_size, h->hdr_size, err,
	    sizeof(err)) != 0) {
		/* Only a JSON area that no longer fits may fail. */
		if (strstr(err, "too large") == NULL)
			fail("a header read does not encode", err);
		free(m.buf);
		return;
	}
	if (luks2_load(&io, &again, err, sizeof(err)) != 0)
		fail("an encoded header does not load", err);
	same(h, again);
	if (again->repair)
		fail("fresh copies need repair", again->uuid);
	luks2_free(again);
	free(m.buf);
}

/* Every keyslot dropped in turn: the JSON left must parse each time. */
static void
drop_all(struct luks2 *h)
{
	char err[LUKS2_ERRLEN];
	int i;

	if (h->version != 2)
		return;
	for (i = 0; i < LUKS2_KEYSLOTS; i++)
		if (h->ks[i].used && luks2_keyslot_drop(h, i, err, sizeof(err)) != 0)
			fail("a keyslot cannot be dropped", err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[LUKS2_ERRLEN];
	struct mem m;
	struct luks2_io io = { mem_read, mem_write, &m, 0, NULL };
	struct luks2 *h;
	int mode;

	if (size < 1 || size > 2 * LUKS2_HDR_DEFAULT * 4 + 1)
		return 0;
	mode = data[0];
	data++, size--;
	if (mode & 4) {
		if ((m.buf = wrap_json(data, size, &m.len)) == NULL)
			return 0;
	} else {
		if ((m.buf = malloc(size ? size : 1)) == NULL)
			abort();
		memcpy(m.buf, data, size);
		m.len = size;
		if (mode & 1)
			seal(m.buf, m.len, 0);
		if (mode & 2)
			seal(m.buf, m.len, HS);
	}
	io.size = m.len;
	if (luks2_load(&io, &h, err, sizeof(err)) == 0) {
		round_trip(h);
		drop_all(h);
		luks2_free(h);
	}
	free(m.buf);
	return 0;
}
