/*
 * luks2-*.c: LUKS2 headers read and written by cryptd itself, and LUKS1
 * headers read (docs/on-disk-format.md).  Nothing read from a disk is
 * trusted: every length, offset, count and JSON type is checked before
 * use, and anything not understood is refused with a clear error.  No
 * daemon state here; I/O goes through struct luks2_io.  Keys and
 * passphrases live only in struct secret (lib/secret.h).
 */
#ifndef CRYPTD_LUKS2_H
#define CRYPTD_LUKS2_H

#include <stddef.h>
#include <stdint.h>

struct json_object;
struct secret;
struct luks2;

#define LUKS2_ERRLEN		200
#define LUKS2_BIN_SIZE		4096	/* binary header, before the JSON area */
#define LUKS2_HDR_DEFAULT	16384	/* hdr_size written: binary + 12 KiB JSON */
#define LUKS2_HDR_MAX		(4U << 20)
#define LUKS2_KEYSLOTS		32
#define LUKS2_KEY_MAX		64	/* volume key bytes (aes-xts 512 bits) */
#define LUKS2_SALT		32	/* salt bytes written */
#define LUKS2_SALT_MAX		64	/* salt bytes read */
#define LUKS2_DIGEST_MAX	64
#define LUKS2_STRIPES		4000
#define LUKS2_DATA_OFFSET	(16U << 20)	/* bytes, as cryptsetup */
#define LUKS2_KEYSLOTS_SIZE	(LUKS2_DATA_OFFSET - 2 * LUKS2_HDR_DEFAULT)
#define LUKS2_PASS_MAX		512	/* passphrase bytes, as cryptsetup */
#define LUKS2_JSON_CONTAINERS	4096	/* objects + arrays in a JSON area */
#define LUKS1_HDR_SIZE		592
#define LUKS1_KEYSLOTS		8
#define LUKS1_DIGEST		20

/* Where the header lives: a device, a file, or a buffer (fuzz, tests). */
struct luks2_io {
	int	 (*read)(void *ctx, void *buf, size_t len, uint64_t off);
	int	 (*write)(void *ctx, const void *buf, size_t len, uint64_t off);
	void	  *ctx;
	uint64_t   size;		/* bytes */
	/*
	 * What was written reaches the disk (fsync) before what follows:
	 * without it the page cache may write a header before the keyslot
	 * area it names, or the secondary before the primary.  NULL: the
	 * writes are durable as they are made (memory).
	 */
	int	 (*sync)(void *ctx);
};
/* read/write with pread/pwrite on fd (whole lengths or -1), sync fsync. */
void	luks2_io_fd(struct luks2_io *, int *fd, uint64_t size);
/* io->write, then io->sync: on the disk before anything written after. */
int	luks2_write_synced(const struct luks2_io *, const void *, size_t,
	    uint64_t off);
/* len bytes at off from one io to the other (no sync). */
int	luks2_copy(const struct luks2_io *from, const struct luks2_io *to,
	    uint64_t off, uint64_t len);
/*
 * A header backup (b, loaded from `from`) written over `to` step by
 * step, each flushed before the next: the primary copy, the secondary,
 * then the keyslots area (LUKS1: its one header). A power cut in any
 * step leaves the other copy whole, old or new: one valid header.
 */
int	luks2_restore(const struct luks2_io *from, const struct luks2_io *to,
	    const struct luks2 *b, char *err, size_t errlen);
/* io->read within io->size, -1 past it. */
int	luks2_read_at(const struct luks2_io *, void *, size_t, uint64_t off);

enum luks2_kdf_type { KDF_PBKDF2, KDF_ARGON2I, KDF_ARGON2ID };

struct luks2_kdf {
	enum luks2_kdf_type type;
	char		 hash[16];	/* pbkdf2 */
	uint32_t	 iterations;	/* pbkdf2 */
	uint32_t	 time;		/* argon2 */
	uint32_t	 memory;	/* argon2, KiB */
	uint32_t	 cpus;		/* argon2 */
	uint8_t		 salt[LUKS2_SALT_MAX];
	size_t		 salt_len;
};

struct luks2_keyslot {
	int		 used;
	uint32_t	 key_size;	/* bytes of the volume key */
	struct luks2_kdf kdf;
	uint32_t	 stripes;
	char		 af_hash[16];
	uint64_t	 area_offset, area_size;	/* bytes */
	char		 area_cipher[32];
	uint32_t	 area_key_size;
	int		 digest;	/* index into digests, -1 if none */
	uint32_t	 priority;	/* 0 ignore (tried only by number), 1 normal, 2 high */
};

struct luks2_digest {
	int		 used;
	char		 hash[16];
	uint32_t	 iterations;
	uint8_t		 salt[LUKS2_SALT_MAX];
	size_t		 salt_len;
	uint8_t		 digest[LUKS2_DIGEST_MAX];
	size_t		 digest_len;
	uint32_t	 keyslots;	/* bit mask */
};

struct luks2 {
	int		 version;	/* 1 or 2 */
	uint64_t	 hdr_size;	/* bytes of one copy, binary + JSON */
	uint64_t	 seqid;
	char		 label[49];
	char		 subsystem[49];
	char		 uuid[41];
	char		 csum_alg[33];
	uint64_t	 keyslots_size;	/* bytes after both copies */
	struct luks2_keyslot ks[LUKS2_KEYSLOTS];
	struct luks2_digest dg[LUKS2_KEYSLOTS];
	/* The one crypt segment. */
	uint64_t	 data_offset;	/* bytes */
	uint64_t	 data_size;	/* bytes; 0: to the end of the device */
	uint64_t	 iv_tweak;
	char		 cipher[32];
	uint32_t	 sector_size;
	/* What was found: the copy used and the state of the other. */
	int		 primary_ok, secondary_ok;
	int		 repair;	/* the copies differ: store() mends them */
	struct json_object *json;	/* the JSON area (v2), kept to rewrite */
};

struct luks2_format_opts {
	const char	*cipher;	/* NULL: aes-xts-plain64 */
	uint32_t	 key_bytes;	/* 0: 64 */
	uint32_t	 sector_size;	/* 0: 4096 when the data allows it */
	const char	*label;		/* NULL: none */
	const char	*uuid;		/* NULL: a random one */
	uint32_t	 digest_iterations;	/* 0: 1000 */
	struct luks2_kdf kdf;		/* salt is made here */
};

/*
 * Reads and checks the header on io: both LUKS2 copies (the newer valid
 * one by seqid; the secondary looked for at every allowed offset when
 * the primary is damaged), or a LUKS1 header.  Refuses any unknown
 * `requirements`.  *out is freed with luks2_free.
 */
int	luks2_load(const struct luks2_io *, struct luks2 **out,
	    char *err, size_t errlen);
void	luks2_free(struct luks2 *);
/*
 * 1 when io holds a LUKS magic (a primary, or a secondary at an allowed
 * offset), readable by cryptd or not: a volume cryptd cannot open (LUKS1
 * cbc-essiv, a re-encryption under way) is still somebody's data.
 */
int	luks2_present(const struct luks2_io *);
/*
 * Checks a LUKS2 copy in buf (the binary header and its JSON area) and
 * fills h from it: the fuzz target's entry.  off is where it was found.
 */
int	luks2_parse_copy(const uint8_t *buf, size_t len, uint64_t off,
	    struct luks2 *h, char *err, size_t errlen);
/* Fills h from the JSON area's text (len bytes, NUL within or not). */
int	luks2_parse_json(const char *text, size_t len, struct luks2 *h,
	    char *err, size_t errlen);
/* 1 when two used keyslots' areas overlap (err says which). */
int	luks2_areas_overlap(const struct luks2 *, char *err, size_t errlen);
/* LUKS1: buf holds the first LUKS1_HDR_SIZE bytes. */
int	luks1_parse(const uint8_t *buf, size_t len, struct luks2 *h,
	    char *err, size_t errlen);

/*
 * Writes both copies from h->json with seqid + 1 (primary first, so a
 * cut between the two leaves a valid older secondary).  LUKS1: refused.
 */
int	luks2_store(const struct luks2_io *, struct luks2 *,
	    char *err, size_t errlen);
/* One copy, encoded into buf (hdr_size bytes) with the checksum. */
int	luks2_encode_copy(const struct luks2 *, int secondary, uint8_t *buf,
	    size_t len, char *err, size_t errlen);

/*
 * The volume key from a passphrase (or key file bytes): tries each
 * keyslot, high priority first, those of priority 0 (ignore) never,
 * as cryptsetup (only `slot` when >= 0, whatever its priority).  *slot_out gets the slot that opened.
 * -1 with "no key" in err when none did; -2 when a KDF could not run at
 * all (argon2's memory not locked: err says why; no passphrase tried).
 */
int	luks2_unlock(const struct luks2_io *, const struct luks2 *,
	    const void *pass, size_t passlen, int slot, struct secret **vk,
	    int *slot_out, char *err, size_t errlen);
/*
 * Keyslots whose argon2 asks more memory than this (KiB) are not tried
 * (a header from elsewhere must not take the machine's memory).
 */
void	luks2_set_memory_cap(uint32_t kib);
/* A new keyslot for vk under pass (area written, h->json updated). */
int	luks2_keyslot_add(const struct luks2_io *, struct luks2 *,
	    const struct secret *vk, const void *pass, size_t passlen,
	    const struct luks2_kdf *, int *slot_out, char *err, size_t errlen);
/* Drops slot from h->json (store() it), then wipe its area. */
int	luks2_keyslot_drop(struct luks2 *, int slot, char *err, size_t errlen);
/* Random bytes over a keyslot area (the caller keeps its place). */
int	luks2_area_wipe(const struct luks2_io *, uint64_t off, uint64_t size,
	    char *err, size_t errlen);
int	luks2_keyslot_count(const struct luks2 *);
/* A new header, one keyslot for pass, both copies written; *vk the key. */
int	luks2_format(const struct luks2_io *, const struct luks2_format_opts *,
	    const void *pass, size_t passlen, struct luks2 **out,
	    struct secret **vk, char *err, size_t errlen);

/* The kdf object as the JSON area has it (with_salt) or without the salt. */
struct json_object *luks2_kdf_json(const struct luks2_kdf *, int with_salt);

/* luks2-crypto.c */
/* -1 with err: a bad kdf, or argon2's memory that cannot be locked (says so). */
int	luks2_kdf_derive(const struct luks2_kdf *, const void *pass,
	    size_t passlen, void *out, size_t outlen, char *err, size_t errlen);
int	luks2_kdf_check(const struct luks2_kdf *, char *err, size_t errlen);
int	luks2_af_split(const void *key, size_t keylen, uint32_t stripes,
	    const char *hash, void *out);
int	luks2_af_merge(const void *in, size_t keylen, uint32_t stripes,
	    const char *hash, void *key);
/* aes-xts-plain64 over 512-byte sectors, IV counted from 0 at buf. */
int	luks2_xts(int enc, const char *cipher, const void *key, size_t keylen,
	    const void *in, void *out, size_t len);
int	luks2_pbkdf2(const char *hash, const void *pass, size_t passlen,
	    const void *salt, size_t saltlen, uint32_t iter, void *out,
	    size_t outlen);
int	luks2_hash_ok(const char *hash);
int	luks2_random(void *, size_t);
/* Base64 (RFC 4648, padded).  decode: -1 on any bad character. */
int	luks2_b64_decode(const char *, uint8_t *out, size_t max, size_t *len);
char   *luks2_b64_encode(const uint8_t *, size_t);

int	luks2_err(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
const char *luks2_kdf_name(enum luks2_kdf_type);

#endif
