/*
 * crypt-sim.c: cryptd as raidd's unit suites see it.  It refuses what
 * cryptd refuses, with cryptd's codes: a device that is not there
 * (NOT_FOUND), a mapping name in use (EXISTS), a device with no header
 * (INVALID), a passphrase no keyslot takes (DENIED).  Its mappings are
 * dm maps of the simulated kernel over the joined map (so that map is
 * busy while one is open, as in the kernel); its headers stand for what
 * is on the disks and outlive sim_power_cut().  Answers come from the
 * loop, one turn later, as cryptd's do.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "daemon.h"
#include "keyfile.h"
#include "rpc.h"
#include "secret.h"
#include "system.h"
#include "system-sim.h"
#include "crypt.h"

#define SIM_HEADERS	16
#define SIM_LUKS_HEAD	(16ULL << 20)	/* cryptd's data offset */

static struct {
	char		 dev[SYS_NAME_MAX];
	uint64_t	 pass_hash;
	int		 slot;		/* the one keyslot in use */
} headers[SIM_HEADERS];
static int formats, resizes, denials;
/* cryptd.ini's [crypt] file_dirs: the key files cryptd will read. */
#define SIM_FILE_DIRS	"/volumes /media /mnt"
static char file_dirs[256] = SIM_FILE_DIRS;

struct later {
	ev_timer	 t;
	int		 code;
	char		 msg[200];
	crypt_done_cb	 cb;
	void		*arg;
};

void
crypt_sim_reset(void)
{
	memset(headers, 0, sizeof(headers));
	formats = 0;
	resizes = 0;
	denials = 0;
	crypt_sim_file_dirs(NULL);
}

void
crypt_sim_file_dirs(const char *dirs)
{
	snprintf(file_dirs, sizeof(file_dirs), "%s", dirs ? dirs : SIM_FILE_DIRS);
}

int
crypt_sim_denials(void)
{
	return denials;
}

int
crypt_sim_resizes(void)
{
	return resizes;
}

int
crypt_sim_formats(void)
{
	return formats;
}

/* Not a secret kept: a fingerprint to compare the next passphrase with. */
static uint64_t
hash(const struct secret *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < s->len; i++)
		h = (h ^ s->buf[i]) * 1099511628211ULL;
	return h;
}

static void
later_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct later *a = (struct later *)w;

	(void)l;
	(void)revents;
	a->cb(a->code, a->msg, a->arg);
	free(a);
}

static int
answer(int code, crypt_done_cb cb, void *arg, const char *msg)
{
	struct later *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -1;
	a->code = code;
	snprintf(a->msg, sizeof(a->msg), "%s", msg);
	a->cb = cb;
	a->arg = arg;
	ev_timer_init(&a->t, later_cb, 0., 0.);
	ev_timer_start(nas_loop(), &a->t);
	return 0;
}

/* "/dev/mapper/X" -> X, the simulated kernel's name. */
static const char *
base(const char *dev)
{
	return strncmp(dev, "/dev/mapper/", 12) == 0 ? dev + 12 : dev;
}

static int
header_of(const char *dev)
{
	for (int i = 0; i < SIM_HEADERS; i++)
		if (headers[i].dev[0] && strcmp(headers[i].dev, dev) == 0)
			return i;
	return -1;
}

static int
map(const char *dev, const char *name, char *msg, size_t len)
{
	struct sys_seg seg = { .offset = SIM_LUKS_HEAD };
	uint64_t size;

	if (sys->dev_size(dev, &size) == -1 || size <= SIM_LUKS_HEAD)
		return snprintf(msg, len, "%s: too small", dev), NAS_ERR_INVALID;
	snprintf(seg.dev, sizeof(seg.dev), "%s", dev);
	seg.len = size - SIM_LUKS_HEAD;
	if (sys->dm_create(name, "CRYPT-LUKS2-sim", &seg, 1) == -1)
		return snprintf(msg, len, "%s: %s", name, strerror(errno)),
		    errno == EEXIST ? NAS_ERR_EXISTS : NAS_ERR_FAILED;
	return 0;
}

/* What cryptd checks first for either call; 0 when all is well. */
static int
refused(const char *dev, const char *name, const struct secret *pass, char *msg,
    size_t len)
{
	if (sys->dm_exists(base(dev)) != 1)
		return snprintf(msg, len, "%s: no such device", dev), NAS_ERR_NOT_FOUND;
	if (sys->dm_exists(name) == 1)
		return snprintf(msg, len, "a mapping %s exists", name), NAS_ERR_EXISTS;
	if (pass->len == 0)
		return snprintf(msg, len, "passphrase is empty"), RPC_INVALID_PARAMS;
	return 0;
}

static int
sim_format_open(const char *dev, const char *name, const char *label,
    const struct secret *pass, crypt_done_cb cb, void *arg)
{
	const char *b = base(dev);
	char msg[200] = "";
	int i, code;

	(void)label;
	if ((code = refused(dev, name, pass, msg, sizeof(msg))) == 0) {
		if ((i = header_of(b)) == -1)
			for (i = 0; i < SIM_HEADERS && headers[i].dev[0]; i++)
				;
		if (i == SIM_HEADERS)
			return errno = ENOSPC, -1;
		snprintf(headers[i].dev, sizeof(headers[i].dev), "%s", b);
		headers[i].pass_hash = hash(pass);
		headers[i].slot = 0;
		formats++;
		code = map(b, name, msg, sizeof(msg));
	}
	return answer(code, cb, arg, msg);
}

static int
sim_open(const char *dev, const char *name, const struct secret *pass,
    crypt_done_cb cb, void *arg)
{
	const char *b = base(dev);
	char msg[200] = "";
	int i, code;

	if ((code = refused(dev, name, pass, msg, sizeof(msg))) != 0) {
		/* answered below */
	} else if ((i = header_of(b)) == -1) {
		code = NAS_ERR_INVALID;
		snprintf(msg, sizeof(msg), "%s: not a LUKS device", dev);
	} else if (headers[i].pass_hash != hash(pass)) {
		denials++;
		code = NAS_ERR_DENIED;
		snprintf(msg, sizeof(msg), "%s: no keyslot opens with that passphrase", dev);
	} else
		code = map(b, name, msg, sizeof(msg));
	return answer(code, cb, arg, msg);
}

static int
sim_open_keyfile(const char *dev, const char *name, const char *path,
    crypt_done_cb cb, void *arg)
{
	struct secret *s;
	char msg[400];
	int rc;

	/* As cryptd: the file's bytes, whole, are the key (keyfile.c). */
	if ((s = keyfile_read(file_dirs, path, msg, sizeof(msg))) == NULL)
		return answer(NAS_ERR_FAILED, cb, arg, msg);
	rc = sim_open(dev, name, s, cb, arg);
	secret_free(s);
	return rc;
}

/*
 * crypt.resize as cryptd: the mapping must be open from dev (its table's
 * device and data offset; NOT_FOUND otherwise) before the passphrase is
 * tried; it grows to dev's size less the header, never shrinks, and the
 * same size is answered without a load.
 */
static int
resize_with(const char *dev, const char *name, const struct secret *pass, int slot,
    int *slot_out, char *msg, size_t len)
{
	const char *b = base(dev);
	struct sys_seg seg;
	uint64_t size;
	int i;

	if (sys->dm_exists(b) != 1)
		return snprintf(msg, len, "%s: no such device", dev), NAS_ERR_NOT_FOUND;
	if ((i = header_of(b)) == -1)
		return snprintf(msg, len, "%s: not a LUKS device", dev), NAS_ERR_INVALID;
	if (sim_dm_seg(name, &seg) != 1 || strcmp(seg.dev, b) != 0 ||
	    seg.offset != SIM_LUKS_HEAD)
		return snprintf(msg, len, "%s: %s is not open from it", dev, name),
		    NAS_ERR_NOT_FOUND;
	if (slot >= 0 && slot != headers[i].slot)
		return snprintf(msg, len, "%s: keyslot %d is not in use: passphrase not tried",
		    dev, slot), NAS_ERR_DENIED;
	if (pass->len == 0)
		return snprintf(msg, len, "passphrase is empty"), RPC_INVALID_PARAMS;
	if (headers[i].pass_hash != hash(pass))
		return denials++, snprintf(msg, len, "%s: no keyslot opens with that passphrase",
		    dev), NAS_ERR_DENIED;
	*slot_out = headers[i].slot;
	if (sys->dev_size(b, &size) == -1 || size <= SIM_LUKS_HEAD)
		return snprintf(msg, len, "%s: too small", dev), NAS_ERR_FAILED;
	if (size - SIM_LUKS_HEAD < seg.len)
		return snprintf(msg, len, "%s: smaller than the mapping", dev), NAS_ERR_FAILED;
	if (size - SIM_LUKS_HEAD == seg.len)
		return 0;
	seg.len = size - SIM_LUKS_HEAD;
	if (sys->dm_reload(name, &seg, 1) == -1)
		return snprintf(msg, len, "%s: %s", name, strerror(errno)), NAS_ERR_FAILED;
	return 0;
}

static int
sim_resize(const char *dev, const char *name, const struct secret *pass, const char *path,
    int slot, int *slot_out, crypt_done_cb cb, void *arg)
{
	struct secret *s = NULL;
	char msg[400] = "";
	int code;

	resizes++;
	if (pass == NULL && (pass = s = keyfile_read(file_dirs, path, msg,
	    sizeof(msg))) == NULL)
		return answer(NAS_ERR_FAILED, cb, arg, msg);
	code = resize_with(dev, name, pass, slot, slot_out, msg, sizeof(msg));
	secret_free(s);
	return answer(code, cb, arg, msg);
}

/* As cryptd's key.change: the new key in the lowest free slot, the old slot dropped. */
int
crypt_sim_key_change(const char *dev, const char *pass)
{
	struct secret *s;
	int i;

	if ((i = header_of(dev)) == -1 || (s = secret_new(strlen(pass))) == NULL)
		return -1;
	memcpy(s->buf, pass, strlen(pass));
	s->len = strlen(pass);
	headers[i].pass_hash = hash(s);
	headers[i].slot = headers[i].slot == 0 ? 1 : 0;
	secret_free(s);
	return 0;
}

const struct crypt_ops crypt_sim = {
	.name = "sim",
	.format_open = sim_format_open,
	.open = sim_open,
	.open_keyfile = sim_open_keyfile,
	.resize = sim_resize,
};
