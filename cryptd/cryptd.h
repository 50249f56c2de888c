/* cryptd: encrypted volumes through dm-crypt with LUKS2 headers. */
#ifndef CRYPTD_H
#define CRYPTD_H

#include <sys/stat.h>
#include <sys/types.h>

#include "daemon.h"
#include "feature.h"
#include "luks2.h"

/* api.c */
extern const struct nas_daemon cryptd_daemon;
extern const struct nas_feature cryptd_features[];

/* api-crypt.c: the crypt.* and key.* methods. */
extern const struct rpc_method cryptd_crypt_methods[];
/* Directories (space-separated) header backups may be written to and read from. */
void	crypt_set_file_dirs(const char *);

/* volume.c */
struct cdev {
	int		 fd;
	uint64_t	 size;
	struct luks2_io	 io;
	char		 table_dev[300];	/* "major:minor" (sim: the path) */
	uint64_t	 id_dev, id_ino;	/* who the rate limit counts */
};
/* A device to read headers from; excl > 0: nobody else may hold it, < 0: read only. */
int	cdev_open(const char *path, int excl, struct cdev *, char *err, size_t);
void	cdev_close(struct cdev *);
/*
 * 1 when someone holds d exclusively: mounted, in an array, or under a
 * device-mapper table (dm's own claim lets a second table onto a device).
 */
int	cdev_size_now(struct cdev *, char *err, size_t errlen);
int	cdev_busy(const struct cdev *);
/* path opened only if its node is of type (S_IFBLK, S_IFREG); -1 with errno. */
int	node_open(const char *path, int flags, mode_t type, struct stat *);

/* Seconds until the next unlock attempt on d is allowed (0: now). */
double	ratelimit_wait(const struct cdev *);
/* After an attempt: ok clears the device's count, a failure doubles the wait. */
void	ratelimit_note(const struct cdev *, int ok);
void	ratelimit_set_clock(double (*)(void));
/* fn for each device with failed attempts since its last unlock (dev: its table name). */
void	ratelimit_each(void (*fn)(const char *dev, unsigned fails, void *), void *);
/* One slot of the table (fails 0: free); -1 past the last. */
struct rl_entry {
	uint64_t	 dev, ino;
	unsigned	 fails;
	double		 last;		/* ratelimit_now() of the last failure */
	char		 name[300];
};
int	ratelimit_get(int i, struct rl_entry *);
void	ratelimit_put(const struct rl_entry *);
void	ratelimit_clear(void);
double	ratelimit_now(void);

/* ratelimit-state.c: the table kept in a file across restarts (Decision 64). */
/* Loads path (the table replaced); "" keeps nothing. Corrupt: back off. */
void	ratelimit_load(const char *path);
void	ratelimit_save(void);
/* Seconds every device waits now whatever its count (a corrupt file). */
double	ratelimit_floor(double now);
/* For the unit suite: where this boot's id is read (another boot). */
void	ratelimit_set_boot_id_path(const char *);

struct kdf_conf {
	enum luks2_kdf_type type;
	uint32_t	 max_memory_kib;
	uint32_t	 time_ms;
	uint32_t	 cpus;
};
void	kdf_configure(const struct kdf_conf *);
const struct kdf_conf *kdf_config(void);
/* The KDF for a new keyslot on this board (measured once); ms: its cost. */
int	kdf_params(enum luks2_kdf_type, struct luks2_kdf *,
	    uint32_t *digest_iterations, double *ms);

/* kdf-job.c: a method's KDF on a worker thread, answered later (Decision 94). */
struct kdf_job {
	struct cdev	 d;		/* d.fd -1: no device (crypt.benchmark) */
	struct luks2	*h;
	struct secret	*pass, *new_pass, *vk;
	enum luks2_kdf_type kdf_type;
	struct luks2_kdf kdf;		/* crypt.benchmark's answer */
	uint32_t	 digest_iterations;
	double		 ms;
	struct luks2_format_opts fo;
	char		 device[256], name[72], cipher[32], label[48];
	int		 change, force;	/* key.change; key.remove of the last */
	int		 want_slot;	/* the keyslot named, -1: any (not priority 0) */
	int		 slot, nslot;	/* the slot that opened; the new one */
	int		 rc;		/* the unlock (or format) */
	int		 rc2;		/* what follows it: -1 failed, -2 refused */
	char		 err[LUKS2_ERRLEN], err2[LUKS2_ERRLEN];
	void		(*work)(struct kdf_job *);
	void		(*done)(struct rpc_call *, struct kdf_job *);
	struct kdf_job	*next;
};
struct kdf_job *kdf_job_new(void);
void	kdf_job_free(struct kdf_job *);
/* 1 when a job works on d's device. */
int	kdf_job_busy(const struct cdev *);
/* work on a worker thread, then done on the loop; a refusal answers and frees j. */
void	kdf_job_start(struct rpc_call *, struct kdf_job *, void (*work)(struct kdf_job *),
	    void (*done)(struct rpc_call *, struct kdf_job *));
/* For the unit suite: called on the worker before each job's work. */
void	kdf_job_set_hook(void (*)(void));

int	map_name_ok(const char *);
void	map_dm_uuid(const struct luks2 *, const char *name, char *buf, size_t len);
/* The dm-crypt mapping for h's segment, key through the keyring. */
int	map_open(const struct luks2 *, const struct cdev *, const char *name,
	    const struct secret *vk, char *err, size_t errlen);
int	map_is_of(const struct luks2 *, const struct cdev *, const char *name,
	    uint64_t *sectors, char *err, size_t errlen);
/* The mapping grown to the device's size now; never shrunk. */
int	map_resize(const struct luks2 *, const struct cdev *, const char *name,
	    const struct secret *vk, uint64_t *was, uint64_t *now, char *err, size_t errlen);

#endif
