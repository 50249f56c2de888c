/*
 * volume.c: what the methods share: devices opened and sized, the
 * unlock rate limit, the KDF calibrated for this board, and a mapping
 * made with the volume key passed through the keyring.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <linux/fs.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keyfile.h"
#include "log.h"
#include "secret.h"
#include "cryptd.h"
#include "system.h"

/*
 * path opened with flags only once its node is judged of type (S_IFBLK:
 * a block device, S_IFREG: a regular file): first by O_PATH (no
 * driver's open runs, a FIFO does not block), then again through the
 * descriptor's own /proc link, which cannot lead elsewhere.  A client
 * may name any path: a FIFO or a character device (/dev/watchdog)
 * swapped in under a name between a check and the open must never be
 * opened for real.
 */
int
node_open(const char *path, int flags, mode_t type, struct stat *st)
{
	int pfd;

	if ((pfd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -1;
	/* The simulator's devices are plain files. */
	return node_reopen(pfd, flags, type, sys == &sys_sim, st);
}

int
cdev_open(const char *path, int excl, struct cdev *d, char *err, size_t errlen)
{
	struct stat st;
	unsigned long long size;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (!sys->device_ok(path))
		return luks2_err(err, errlen, "%s: not a block device", path);
	/* excl < 0: read only, for the read group's methods. */
	d->fd = node_open(path, (excl < 0 ? O_RDONLY : O_RDWR) |
	    (excl > 0 ? O_EXCL : 0), S_IFBLK, &st);
	if (d->fd < 0) {
		luks2_err(err, errlen, "%s: %s", path, errno == EBUSY ?
		    "in use (mounted, in an array or open)" : errno == ENOTBLK ?
		    "not a block device" : strerror(errno));
		cdev_close(d);
		return -1;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(d->fd, BLKGETSIZE64, &size) != 0) {
			luks2_err(err, errlen, "%s: size: %s", path, strerror(errno));
			cdev_close(d);
			return -1;
		}
		d->size = size;
		/* The table names the device by number: no path to swap. */
		snprintf(d->table_dev, sizeof(d->table_dev), "%u:%u",
		    major(st.st_rdev), minor(st.st_rdev));
		d->id_dev = st.st_rdev;
		d->id_ino = 0;
	} else if (S_ISREG(st.st_mode) && sys == &sys_sim) {
		d->size = (uint64_t)st.st_size;
		snprintf(d->table_dev, sizeof(d->table_dev), "%s", path);
		d->id_dev = st.st_dev;
		d->id_ino = st.st_ino;
	} else {
		cdev_close(d);
		return luks2_err(err, errlen, "%s: not a block device", path);
	}
	luks2_io_fd(&d->io, &d->fd, d->size);
	return 0;
}

/*
 * d's size read again: a resize runs its KDF between the open and the
 * load, and the device may have changed size meanwhile.
 */
int
cdev_size_now(struct cdev *d, char *err, size_t errlen)
{
	unsigned long long size;
	struct stat st;

	if (fstat(d->fd, &st) != 0)
		return luks2_err(err, errlen, "size: %s", strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(d->fd, BLKGETSIZE64, &size) != 0)
			return luks2_err(err, errlen, "size: %s", strerror(errno));
		d->size = size;
	} else {
		d->size = (uint64_t)st.st_size;
	}
	luks2_io_fd(&d->io, &d->fd, d->size);
	return 0;
}

int
cdev_busy(const struct cdev *d)
{
	char self[64];
	int fd;

	/* Regular files (the simulator) take no O_EXCL: never busy. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", d->fd);
	if ((fd = open(self, O_RDONLY | O_EXCL | O_CLOEXEC)) < 0)
		return errno == EBUSY;
	close(fd);
	return 0;
}

void
cdev_close(struct cdev *d)
{
	if (d->fd >= 0) {
		fsync(d->fd);
		close(d->fd);
	}
	d->fd = -1;
}

/* ---- unlock attempts: a back-off per device, kept by the daemon ---- */

#define RL_SLOTS	64
#define RL_MAX_DELAY	60.

static struct {
	uint64_t	 dev, ino;
	unsigned	 fails;
	double		 last;
	char		 name[sizeof(((struct cdev *)0)->table_dev)];	/* for metrics */
} rl[RL_SLOTS];

static double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double (*rl_clock)(void) = mono_now;

void
ratelimit_set_clock(double (*fn)(void))
{
	rl_clock = fn ? fn : mono_now;
}

static int
rl_find(const struct cdev *d, int make)
{
	int i, free_i = -1, oldest = 0;

	for (i = 0; i < RL_SLOTS; i++) {
		if (rl[i].fails && rl[i].dev == d->id_dev && rl[i].ino == d->id_ino)
			return i;
		if (!rl[i].fails && free_i < 0)
			free_i = i;
		if (rl[i].last < rl[oldest].last)
			oldest = i;
	}
	if (!make)
		return -1;
	/* Full: the device idle longest is forgotten. */
	i = free_i >= 0 ? free_i : oldest;
	memset(&rl[i], 0, sizeof(rl[i]));
	rl[i].dev = d->id_dev;
	rl[i].ino = d->id_ino;
	snprintf(rl[i].name, sizeof(rl[i].name), "%s", d->table_dev);
	return i;
}

static double
rl_delay(unsigned fails)
{
	double s = 1;

	while (--fails > 0 && s < RL_MAX_DELAY)
		s *= 2;
	return s < RL_MAX_DELAY ? s : RL_MAX_DELAY;
}

double
ratelimit_wait(const struct cdev *d)
{
	int i = rl_find(d, 0);
	double left;

	if (i < 0)
		return ratelimit_floor(rl_clock());
	left = rl[i].last + rl_delay(rl[i].fails) - rl_clock();
	return left > ratelimit_floor(rl_clock()) ? left : ratelimit_floor(rl_clock());
}

void
ratelimit_note(const struct cdev *d, int ok)
{
	int i = rl_find(d, !ok);

	if (i < 0)
		return;
	if (ok)
		memset(&rl[i], 0, sizeof(rl[i]));
	else {
		rl[i].fails++;
		rl[i].last = rl_clock();
	}
	ratelimit_save();
}

void
ratelimit_each(void (*fn)(const char *dev, unsigned fails, void *), void *arg)
{
	for (int i = 0; i < RL_SLOTS; i++)
		if (rl[i].fails)
			fn(rl[i].name, rl[i].fails, arg);
}

/* ratelimit-state.c keeps the table across restarts through these. */
int
ratelimit_get(int i, struct rl_entry *e)
{
	if (i < 0 || i >= RL_SLOTS)
		return -1;
	e->dev = rl[i].dev;
	e->ino = rl[i].ino;
	e->fails = rl[i].fails;
	e->last = rl[i].last;
	snprintf(e->name, sizeof(e->name), "%s", rl[i].name);
	return 0;
}

void
ratelimit_put(const struct rl_entry *e)
{
	struct cdev d = { .id_dev = e->dev, .id_ino = e->ino };
	int i = rl_find(&d, 1);

	rl[i].fails = e->fails;
	rl[i].last = e->last;
	snprintf(rl[i].name, sizeof(rl[i].name), "%s", e->name);
}

void
ratelimit_clear(void)
{
	memset(rl, 0, sizeof(rl));
}

double
ratelimit_now(void)
{
	return rl_clock();
}

/* ---- the KDF for new keyslots, calibrated once ---- */

/* kdf_params runs on the KDF workers (kdf-job.c) too: kdf_lock guards these. */
static pthread_mutex_t kdf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kdf_conf kc = { KDF_ARGON2ID, 65536, 1000, 1 };
static struct luks2_kdf calibrated[3];	/* by type; salt_len 0: not yet */
static double calib_ms[3];
static uint32_t digest_iter;

void
kdf_configure(const struct kdf_conf *c)
{
	pthread_mutex_lock(&kdf_lock);
	kc = *c;
	memset(calibrated, 0, sizeof(calibrated));
	digest_iter = 0;
	pthread_mutex_unlock(&kdf_lock);
}

const struct kdf_conf *
kdf_config(void)
{
	return &kc;
}

static double
time_one(const struct luks2_kdf *k)
{
	uint8_t out[64];
	double t0 = mono_now();

	luks2_kdf_derive(k, "calibration", 11, out, sizeof(out), NULL, 0);
	return (mono_now() - t0) * 1000;
}

/* pbkdf2-sha256 iterations per millisecond on this board. */
static double
pbkdf2_rate(void)
{
	struct luks2_kdf p = { .type = KDF_PBKDF2, .hash = "sha256",
	    .iterations = 20000, .salt_len = 32 };
	double t = time_one(&p);

	return 20000 / (t > 0.01 ? t : 0.01);
}

static void
calibrate(enum luks2_kdf_type type)
{
	struct luks2_kdf k = { .type = type, .hash = "sha256", .iterations = 1000,
	    .time = 4, .memory = kc.max_memory_kib, .cpus = kc.cpus, .salt_len = 32 };
	double t, per = pbkdf2_rate(), n;

	n = per * kc.time_ms / 8;	/* the digest: an eighth of the target */
	digest_iter = n > 1000 ? (n < INT32_MAX ? (uint32_t)n : INT32_MAX) : 1000;
	if (type == KDF_PBKDF2) {
		n = per * kc.time_ms;
		k.iterations = n > 1000 ? (n < INT32_MAX ? (uint32_t)n : INT32_MAX) : 1000;
		t = kc.time_ms;
	} else {
		/* Less memory until 4 passes fit the target, then more passes. */
		while ((t = time_one(&k)) > kc.time_ms && k.memory >= 64)
			k.memory /= 2;
		n = 4 * kc.time_ms / (t > 0.01 ? t : 0.01);
		k.time = n < 4 ? 4 : n < 1000000 ? (uint32_t)n : 1000000;
		t = t * k.time / 4;
	}
	calibrated[type] = k;
	calib_ms[type] = t;
	log_info("kdf calibrated: %s time %u memory %u KiB cpus %u iterations %u, "
	    "about %.0f ms", luks2_kdf_name(type), k.time, k.memory, k.cpus,
	    k.iterations, t);
}

int
kdf_params(enum luks2_kdf_type type, struct luks2_kdf *out,
    uint32_t *digest_iterations, double *ms)
{
	if ((unsigned)type > KDF_ARGON2ID)
		return -1;
	pthread_mutex_lock(&kdf_lock);
	if (calibrated[type].salt_len == 0)
		calibrate(type);
	*out = calibrated[type];
	if (digest_iterations)
		*digest_iterations = digest_iter;
	if (ms)
		*ms = calib_ms[type];
	pthread_mutex_unlock(&kdf_lock);
	return 0;
}

/* ---- mappings ---- */

int
map_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", name[i]))
			return 0;
	return 1;
}

/* cryptsetup's convention, so stock tools know the mapping. */
void
map_dm_uuid(const struct luks2 *h, const char *name, char *buf, size_t len)
{
	char hex[40];
	size_t i, o = 0;

	for (i = 0; h->uuid[i] && o + 1 < sizeof(hex); i++)
		if (h->uuid[i] != '-')
			hex[o++] = h->uuid[i];
	hex[o] = '\0';
	snprintf(buf, len, "CRYPT-LUKS%d-%s-%s", h->version, hex, name);
}

/* The bytes of h's data segment on d: the rest of the device when dynamic. */
static int
segment_bytes(const struct luks2 *h, const struct cdev *d, uint64_t *bytes, char *err,
    size_t errlen)
{
	if (h->data_offset >= d->size)
		return luks2_err(err, errlen, "data offset past the end of the device");
	*bytes = h->data_size ? h->data_size : d->size - h->data_offset;
	*bytes -= *bytes % h->sector_size;
	if (*bytes == 0 || h->data_offset + *bytes > d->size)
		return luks2_err(err, errlen, "the data segment does not fit the device");
	return 0;
}

/* The dm-crypt table of h's segment on d, its key named by uuid's logon key. */
static int
map_params(const struct luks2 *h, const struct cdev *d, const char *uuid, size_t keylen,
    char *params, size_t len)
{
	return snprintf(params, len, "%s :%zu:logon:cryptd:%s %llu %s %llu%s",
	    h->cipher, keylen, uuid, (unsigned long long)h->iv_tweak, d->table_dev,
	    (unsigned long long)(h->data_offset / 512),
	    h->sector_size == 512 ? "" : h->sector_size == 4096 ?
	    " 1 sector_size:4096" : h->sector_size == 2048 ? " 1 sector_size:2048" :
	    " 1 sector_size:1024") < (int)len ? 0 : -1;
}

/*
 * create (1) or reload (0) mapping name with h's segment on d, of bytes;
 * the key goes through the keyring and leaves it as soon as the kernel
 * holds its own copy.
 */
static int
map_load(const struct luks2 *h, const struct cdev *d, const char *name,
    const struct secret *vk, uint64_t bytes, int create, char *err, size_t errlen)
{
	char uuid[160], params[768];
	long id;
	int rc, saved;

	map_dm_uuid(h, name, uuid, sizeof(uuid));
	if (map_params(h, d, uuid, vk->len, params, sizeof(params)) != 0)
		return luks2_err(err, errlen, "table too long");
	if (sys->key_add(uuid, vk, &id) != 0)
		return luks2_err(err, errlen, "keyring: %s", strerror(errno));
	rc = create ? sys->map_create(name, uuid, bytes / 512, params) :
	    sys->map_reload(name, bytes / 512, params);
	saved = errno;
	if (sys->key_unlink(id) != 0)
		log_warn("keyring: unlink");
	if (rc != 0)
		return luks2_err(err, errlen, "device-mapper: %s", strerror(saved));
	return 0;
}

int
map_open(const struct luks2 *h, const struct cdev *d, const char *name,
    const struct secret *vk, char *err, size_t errlen)
{
	uint64_t bytes;

	if (segment_bytes(h, d, &bytes, err, errlen) != 0)
		return -1;
	return map_load(h, d, name, vk, bytes, 1, err, errlen);
}

/* Bytes of h's volume key (every keyslot holds the same key). */
static size_t
key_len(const struct luks2 *h)
{
	for (int i = 0; i < LUKS2_KEYSLOTS; i++)
		if (h->ks[i].used)
			return h->ks[i].key_size;
	return 0;
}

/*
 * Mapping name is h's segment on d, as its live table says: the dm uuid,
 * and one crypt target whose table is the one cryptd loads for h on d
 * (cipher, key reference, IV offset, device, data offset, options);
 * *sectors its length.  Anything else (another device's mapping, a table
 * cryptd did not make, with options it would drop) is refused.
 */
int
map_is_of(const struct luks2 *h, const struct cdev *d, const char *name, uint64_t *sectors,
    char *err, size_t errlen)
{
	char uuid[160], want[160], table[1024], params[768];
	unsigned long long len;
	size_t tl;
	int n = 0, ok;

	map_dm_uuid(h, name, want, sizeof(want));
	if (sys->map_uuid(name, uuid, sizeof(uuid)) != 0)
		return luks2_err(err, errlen, "no mapping %s", name);
	if (strcmp(uuid, want) != 0)
		return luks2_err(err, errlen, "mapping %s is not this device's", name);
	if (sys->map_table(name, table, sizeof(table)) != 0)
		return luks2_err(err, errlen, "mapping %s: %s", name, strerror(errno));
	if ((tl = strlen(table)) > 0 && table[tl - 1] == '\n')
		table[--tl] = '\0';
	ok = strchr(table, '\n') == NULL &&
	    sscanf(table, "0 %llu crypt %n", &len, &n) == 1 && n > 0 &&
	    map_params(h, d, want, key_len(h), params, sizeof(params)) == 0 &&
	    strcmp(table + n, params) == 0;
	explicit_bzero(table, sizeof(table));
	if (!ok)
		return luks2_err(err, errlen, "mapping %s does not map this device's data as "
		    "cryptd does", name);
	*sectors = len;
	return 0;
}

/*
 * The mapping grown to the segment's size now (the device below grew):
 * *was and *now in bytes.  Never shrunk: the filesystem on it would lose
 * its end.
 */
int
map_resize(const struct luks2 *h, const struct cdev *d, const char *name,
    const struct secret *vk, uint64_t *was, uint64_t *now, char *err, size_t errlen)
{
	uint64_t bytes, sectors;

	if (map_is_of(h, d, name, &sectors, err, errlen) != 0 ||
	    segment_bytes(h, d, &bytes, err, errlen) != 0)
		return -1;
	*was = sectors * 512;
	*now = bytes;
	if (bytes < *was)
		return luks2_err(err, errlen, "the device is smaller than mapping %s (%llu < "
		    "%llu bytes): not shrunk", name, (unsigned long long)bytes,
		    (unsigned long long)*was);
	if (bytes == *was)
		return 0;
	return map_load(h, d, name, vk, bytes, 0, err, errlen);
}
