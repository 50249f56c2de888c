/*
 * crypt.c: encrypted volumes (Decision 62).  raidd never reads or writes
 * a LUKS header and never holds a volume key: it hands the passphrase
 * to cryptd (crypt.format, crypt.open on the volume's joined device)
 * and mounts what cryptd maps.  Closing is a device-mapper remove, which
 * raidd does itself like for its own maps.  The label's
 * LABEL_F_ENCRYPTED says a volume is encrypted; whether it is unlocked
 * is whether its mapping exists, asked of the kernel each time.
 */
#ifndef RAIDD_CRYPT_H
#define RAIDD_CRYPT_H

#include <stddef.h>

struct job;

#include <json-c/json.h>

struct rpc_call;
struct secret;
struct volume;

/*
 * The answer of cryptd: code 0 (done) or a NAS_ERR_* / JSON-RPC code
 * with cryptd's message (never a secret), and data (borrowed, may be
 * NULL: the back-off's seconds).
 */
typedef void (*crypt_done_cb)(int code, const char *msg, void *arg);

/*
 * How raidd reaches cryptd: over its socket (crypt-cryptd.c), or a
 * simulated cryptd for the unit suites (crypt-sim.c) that refuses what
 * cryptd refuses.  Each call answers exactly once, from the loop, never
 * inside the call; -1 (errno) when it cannot be made (cb never runs).
 * The secret stays the caller's.
 */
struct crypt_ops {
	const char *name;
	/* A new LUKS2 header on dev (a path), labelled label, then opened as name. */
	int	(*format_open)(const char *dev, const char *name, const char *label,
		    const struct secret *, crypt_done_cb, void *);
	int	(*open)(const char *dev, const char *name, const struct secret *,
		    crypt_done_cb, void *);
	/* cryptd reads the key file at path (crypt.open's keyfile). */
	int	(*open_keyfile)(const char *dev, const char *name, const char *path,
		    crypt_done_cb, void *);
	/* crypt.resize: the open mapping name of dev grown to dev's size now;
	   with the passphrase, or the key file at path when it is NULL; only
	   keyslot slot when >= 0 (one not in use refused untried).  Done,
	   *slot_out (alive until cb) is the keyslot that opened. */
	int	(*resize)(const char *dev, const char *name, const struct secret *,
		    const char *path, int slot, int *slot_out, crypt_done_cb, void *);
};

/*
 * What cryptd asks again to grow an encrypted volume's mapping (Decision
 * 115): a passphrase in locked memory (the holder's, wiped by
 * crypt_key_wipe) or a key file's path; neither is ever logged.
 */
struct crypt_key {
	struct secret	*pass;
	char		 keyfile[300];
	int		 keyslot;	/* the slot it opened, plus 1; 0 not known yet */
};

extern const struct crypt_ops crypt_cryptd, crypt_sim;
/* crypt_sim with the simulated kernel, crypt_cryptd otherwise. */
const struct crypt_ops *crypt_ops(void);

/* crypt-sim.c, for the unit suites: forgets every header. */
void	crypt_sim_reset(void);
/* key.change of the header on dev (a kernel name): a new keyslot, the old one dropped. */
int	crypt_sim_key_change(const char *dev, const char *pass);
/* Wrong passphrases tried (ever): each a step of cryptd's back-off. */
int	crypt_sim_denials(void);
/* Formats (ever) made by the simulated cryptd. */
int	crypt_sim_formats(void);
/* crypt.resize calls (ever) asked of the simulated cryptd. */
int	crypt_sim_resizes(void);
/* cryptd.ini's file_dirs for the simulated cryptd; NULL: the default. */
void	crypt_sim_file_dirs(const char *dirs);

/* The dm-crypt mapping of a volume: nas-<name>.crypt. */
void	crypt_map_name(const char *vol, char *buf, size_t len);
int	crypt_encrypted(const struct volume *);
/* Encrypted and its mapping is not there (unknown counts as locked). */
int	crypt_locked(const struct volume *);
/* The device its filesystem sits on: the crypt mapping or the joined map. */
void	crypt_top_name(const struct volume *, char *buf, size_t len);
/* Unmounted first; removes the crypt mapping if there is one. */
int	crypt_close(struct volume *, char *err, size_t errlen);
/* The passphrase of a new encrypted volume: formats and opens its map. */
int	crypt_create(struct volume *, const struct secret *, crypt_done_cb, void *);

/* volume.grow/add_disk's passphrase or keyfile of v into k; -1 answered. */
int	crypt_key_take(struct rpc_call *, struct json_object *params, const struct volume *,
	    struct crypt_key *k);
int	crypt_key_have(const struct crypt_key *);
/* Moved: from's secret is the holder's now, from is left empty. */
void	crypt_key_move(struct crypt_key *to, struct crypt_key *from);
void	crypt_key_wipe(struct crypt_key *);
/*
 * crypt.resize of v's mapping over its joined map, with k (the caller's,
 * alive until cb): asked of the keyslot k opened before, if known, and
 * that slot recorded in k once it opens (Decision 123).
 */
int	crypt_resize(struct volume *, struct crypt_key *, crypt_done_cb, void *);
/* v's mapping was opened or grown over its joined map at the map's size now. */
int	crypt_covers(const struct volume *);

struct job *crypt_unlock_start(struct volume *, struct secret *pass, const char *keyfile,
	    char *err, size_t errlen);

/* crypt-auto.c: auto-unlock from <dir>/<name>.key (Decision 63); "" off. */
void	crypt_auto_start(const char *dir);
void	crypt_auto_tick(void);
int	crypt_keyfile_check(const char *dir, const char *file, char *why, size_t len);

extern const struct rpc_method crypt_methods[];
/* api-volume.c: the volume params name, with no job running; or answered. */
struct volume *find_or_fail(struct rpc_call *, struct json_object *params);

#endif
