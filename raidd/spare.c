/*
 * Hot spares (volume.spare_add, volume.spare_remove): a disk set aside
 * for one volume.  It carries a spare label (its own magic, so no
 * raidd before this one takes it for a member) naming the volume and
 * a random spare uuid; the volume's label lists that uuid with the
 * disk's serial and size.  Both must agree, with the disk as the
 * kernel shows it now, before the spare is used: a disk from another
 * box, a clone, or a spare that has since been given other data is
 * never taken (Decision 79).  When a member of the volume is missing
 * or failed, the first proven spare takes its place through
 * volume.repair's steps (repair_spare_start), md rebuilds onto it, and
 * the commit drops it from the list.  Byte layout: docs/on-disk-format.md.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "volume.h"

#define SPARE_VERSION	1
#define SP_OFF_VOLUME	32
#define SP_OFF_UUID	48
#define SP_OFF_SERIAL	64
#define SP_OFF_SIZE	104
#define SP_OFF_UNIT	112
#define SP_OFF_NAME	128
_Static_assert(SP_OFF_SERIAL + LABEL_SERIAL_MAX == SP_OFF_SIZE, "serial into size");
_Static_assert(SP_OFF_NAME + LABEL_NAME_MAX <= LABEL_SLOT_SIZE, "name past the slot");

/* Spares whose take-over began since start: each is tried once a run. */
static uint8_t tried[MAX_VOLUMES * LABEL_MAX_SPARES][16];
static int ntried;

void
spare_reset(void)
{
	ntried = 0;
}

static void
put32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t
get64(const uint8_t *b)
{
	return (uint64_t)get32(b) | (uint64_t)get32(b + 4) << 32;
}

void
spare_label_encode(const struct spare_label *sl, uint8_t buf[LABEL_SLOT_SIZE])
{
	memset(buf, 0, LABEL_SLOT_SIZE);
	memcpy(buf, SPARE_MAGIC, 8);
	put32(buf + 8, SPARE_VERSION);
	put32(buf + 12, LABEL_SLOT_SIZE);
	memcpy(buf + SP_OFF_VOLUME, sl->volume_uuid, 16);
	memcpy(buf + SP_OFF_UUID, sl->uuid, 16);
	memcpy(buf + SP_OFF_SERIAL, sl->serial, LABEL_SERIAL_MAX);
	buf[SP_OFF_SERIAL + LABEL_SERIAL_MAX - 1] = '\0';
	put64(buf + SP_OFF_SIZE, sl->size);
	memcpy(buf + SP_OFF_UNIT, sl->unit, 16);
	memcpy(buf + SP_OFF_NAME, sl->name, LABEL_NAME_MAX);
	buf[SP_OFF_NAME + LABEL_NAME_MAX - 1] = '\0';
	put32(buf + 16, label_crc32c(0, buf, LABEL_SLOT_SIZE));
}

int
spare_label_decode(const uint8_t *buf, size_t len, struct spare_label *sl, char *err,
    size_t errlen)
{
	uint8_t tmp[LABEL_SLOT_SIZE];

	if (len < LABEL_SLOT_SIZE || memcmp(buf, SPARE_MAGIC, 8) != 0)
		return plan_err(err, errlen, "no spare label");
	if (get32(buf + 8) != SPARE_VERSION || get32(buf + 12) != LABEL_SLOT_SIZE)
		return plan_err(err, errlen, "spare label version %u unknown", get32(buf + 8));
	memcpy(tmp, buf, LABEL_SLOT_SIZE);
	memset(tmp + 16, 0, 4);
	if (label_crc32c(0, tmp, LABEL_SLOT_SIZE) != get32(buf + 16))
		return plan_err(err, errlen, "spare label checksum mismatch");
	memset(sl, 0, sizeof(*sl));
	memcpy(sl->volume_uuid, buf + SP_OFF_VOLUME, 16);
	memcpy(sl->uuid, buf + SP_OFF_UUID, 16);
	memcpy(sl->serial, buf + SP_OFF_SERIAL, LABEL_SERIAL_MAX);
	sl->size = get64(buf + SP_OFF_SIZE);
	memcpy(sl->unit, buf + SP_OFF_UNIT, 16);
	memcpy(sl->name, buf + SP_OFF_NAME, LABEL_NAME_MAX);
	if (sl->serial[LABEL_SERIAL_MAX - 1] || sl->name[LABEL_NAME_MAX - 1] ||
	    volume_uuid_zero(sl->uuid) || volume_uuid_zero(sl->volume_uuid))
		return plan_err(err, errlen, "spare label fields out of range");
	return 0;
}

/* The spare label of disk, from either slot (both are written alike). */
int
spare_label_read(const char *disk, struct spare_label *sl, char *err, size_t errlen)
{
	static uint8_t s[LABEL_SLOT_SIZE];

	if (sys->read_at(disk, LABEL_SLOT0, s, sizeof(s)) == 0 &&
	    spare_label_decode(s, sizeof(s), sl, err, errlen) == 0)
		return 0;
	if (sys->read_at(disk, LABEL_SLOT1, s, sizeof(s)) == -1)
		return plan_err(err, errlen, "%s: reading the label: %s", disk, strerror(errno));
	return spare_label_decode(s, sizeof(s), sl, err, errlen);
}

static int
listed(const struct label *l, const uint8_t uuid[16])
{
	for (int i = 0; i < l->nspares; i++)
		if (memcmp(l->spare[i].uuid, uuid, 16) == 0)
			return i;
	return -1;
}

/*
 * Disk s (as scanned) with spare label sl is spare e of volume v: the
 * serial and size the volume lists, nothing on it but its spare label,
 * and that label names this volume and this spare.
 */
static int
spare_matches(const struct volume *v, const struct label_member *e, const struct sys_disk *s,
    const struct spare_label *sl, char *err, size_t errlen)
{
	if (s->size != e->size || strncmp(s->serial, e->serial, LABEL_SERIAL_MAX - 1) != 0)
		return plan_err(err, errlen, "%s is not the disk listed as spare (serial %s)",
		    s->name, e->serial);
	for (int k = 0; k < s->nsigs; k++)
		if (strcmp(s->sig[k].type, "raidd-spare") != 0)
			return plan_err(err, errlen, "spare %s holds %s now: left alone", s->name,
			    s->sig[k].type);
	if (memcmp(sl->volume_uuid, v->label.volume_uuid, 16) != 0 ||
	    memcmp(sl->uuid, e->uuid, 16) != 0 || sl->size != s->size ||
	    strncmp(sl->serial, s->serial, LABEL_SERIAL_MAX - 1) != 0)
		return plan_err(err, errlen, "%s's spare label is not this spare of volume %s",
		    s->name, v->name);
	return 0;
}

/*
 * The proof, before every write a spare's use makes: the disk as the
 * kernel shows it now, and its label read now, match spare uuid of v.
 */
int
spare_proven(const struct volume *v, const char *disk, const uint8_t uuid[16], char *err,
    size_t errlen)
{
	struct spare_label sl;
	struct sys_disk s;
	int i;

	if ((i = listed(&v->label, uuid)) < 0)
		return plan_err(err, errlen, "volume %s lists no such spare", v->name);
	if (sys->scan_disk(disk, &s) != 0)
		return plan_err(err, errlen, "spare %s went away", disk);
	if (spare_label_read(disk, &sl, err, errlen) == -1)
		return -1;
	return spare_matches(v, &v->label.spare[i], &s, &sl, err, errlen);
}

/*
 * The listed spare disk d is by the disk table (its scan and the spare
 * label read with it), -1 none. No I/O: a listing must not read or wake
 * a disk; every write is preceded by spare_proven().
 */
static int
spare_index_of(const struct volume *v, const struct disk *d)
{
	char err[160];
	int i;

	if (d->flash || d->spare_rc != 0 || (i = listed(&v->label, d->spare.uuid)) < 0 ||
	    spare_matches(v, &v->label.spare[i], &d->sys, &d->spare, err, sizeof(err)) == -1)
		return -1;
	return i;
}

/* The disk spare i is on now, or NULL. */
static const struct disk *
spare_disk(const struct volume *v, int i)
{
	const struct disk *d;

	for (int k = 0; (d = disk_at(k)) != NULL; k++)
		if (!volume_of_disk(d->sys.name) && spare_index_of(v, d) == i)
			return d;
	return NULL;
}

/* Every tier keeps a second copy: the only volumes a spare can serve. */
static int
serves(const struct volume *v, char *err, size_t errlen)
{
	for (int t = 0; t < v->label.ntiers; t++)
		if (v->label.tier[t].kind != TIER_RAID1 && v->label.tier[t].kind != TIER_RAID5 &&
		    v->label.tier[t].kind != TIER_RAID10)
			return plan_err(err, errlen, "volume %s has a tier without redundancy "
			    "(%s): a spare could rebuild nothing", v->name,
			    plan_tier_kind_name(v->label.tier[t].kind));
	return 0;
}

/* Bytes any member's partitions reach: a spare must hold every member's. */
static uint64_t
room_needed(const struct volume *v)
{
	uint64_t end = 0;

	for (int m = 0; m < v->label.ndisks; m++)
		for (int t = 0; v->disk[m][0] && t < v->label.ntiers; t++)
			if (v->mlabel[m].tier[t].role != LABEL_NO_ROLE &&
			    v->mlabel[m].tier[t].start + v->mlabel[m].tier[t].size > end)
				end = v->mlabel[m].tier[t].start + v->mlabel[m].tier[t].size;
	return end;
}

static int
usable(const struct volume *v, int *code, char *err, size_t errlen)
{
	*code = NAS_ERR_REFUSED;
	if (v->foreign || v->inconsistent || v->held)
		return plan_err(err, errlen, "volume %s is %s: nothing of it is written "
		    "before that is resolved", v->name, v->foreign ? "foreign" :
		    v->inconsistent ? "inconsistent" : "held");
	if (!v->assembled) {
		*code = NAS_ERR_FAILED;
		return plan_err(err, errlen, "volume %s is not running", v->name);
	}
	return 0;
}

/* The spare's label on the disk, through a descriptor proven to be it (Decision 21). */
static int
write_spare_label(const struct disk *d, const struct spare_label *sl, char *err, size_t errlen)
{
	static uint8_t buf[LABEL_SLOT_SIZE];
	struct dfd f;

	spare_label_encode(sl, buf);
	if (dfd_open(&f, &d->sys, err, errlen) == -1)
		return -1;
	if (sys->fd_write(f.fd, LABEL_SLOT0, buf, sizeof(buf)) == -1 ||
	    sys->fd_write(f.fd, LABEL_SLOT1, buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "%s: writing the spare label: %s", f.name, strerror(errno));
		dfd_abandon(&f);
		return -1;
	}
	return dfd_close(&f, err, errlen);
}

int
spare_add(struct volume *v, const char *spec, int force, int *code, char *err, size_t errlen)
{
	struct label was = v->label;
	struct spare_label sl = { 0 };
	struct label_member *e;
	const struct disk *d;
	uint64_t end;

	if (usable(v, code, err, errlen) == -1 || serves(v, err, errlen) == -1)
		return -1;
	if ((d = disk_find(spec)) == NULL) {
		*code = NAS_ERR_NOT_FOUND;
		return plan_err(err, errlen, "no disk %s", spec);
	}
	if (v->label.nspares >= LABEL_MAX_SPARES)
		return plan_err(err, errlen, "volume %s has %d spares already", v->name,
		    LABEL_MAX_SPARES);
	if (d->sys.serial[0] == '\0')
		return plan_err(err, errlen, "%s reports no serial: a spare is known by it", spec);
	for (int i = 0; i < v->label.nspares; i++)
		if (strncmp(v->label.spare[i].serial, d->sys.serial, LABEL_SERIAL_MAX - 1) == 0)
			return plan_err(err, errlen, "volume %s lists a spare with serial %s "
			    "already: remove it first", v->name, v->label.spare[i].serial);
	if (d->bay == 0 && disk_board_known()) {
		*code = NAS_ERR_INVALID;
		return plan_err(err, errlen, "%s is in no bay", spec);
	}
	end = room_needed(v);
	if (end == 0 || PLAN_HEAD + plan_disk_area(d->sys.size) < end) {
		*code = NAS_ERR_INVALID;
		return plan_err(err, errlen, "%s is too small: a member needs %llu MiB, the disk "
		    "has %llu MiB", spec, (unsigned long long)(end / MIB),
		    (unsigned long long)(d->sys.size / MIB));
	}
	if (disk_check_free(force, d, code, err, errlen) == -1)
		return -1;
	memcpy(sl.volume_uuid, v->label.volume_uuid, 16);
	if (getrandom(sl.uuid, 16, 0) != 16)
		return plan_err(err, errlen, "no random numbers: %s", strerror(errno));
	snprintf(sl.serial, sizeof(sl.serial), "%.*s", LABEL_SERIAL_MAX - 1, d->sys.serial);
	sl.size = d->sys.size;
	memcpy(sl.unit, v->label.unit, 16);
	snprintf(sl.name, sizeof(sl.name), "%s", v->name);
	*code = NAS_ERR_FAILED;
	/* The disk first: a cut before the list leaves a spare no volume lists. */
	if (wipe_disk(d, err, errlen) == -1 || write_spare_label(d, &sl, err, errlen) == -1)
		return -1;
	e = &v->label.spare[v->label.nspares++];
	memcpy(e->uuid, sl.uuid, 16);
	memcpy(e->serial, sl.serial, LABEL_SERIAL_MAX);
	e->size = sl.size;
	if (label_change(v, ~0U, &was, err, errlen) == -1)
		return -1;
	log_info("volume %s: %s (serial %s) is a hot spare", v->name, d->sys.name, sl.serial);
	disk_refresh(1);
	spare_takeover();
	return 0;
}

static void
unlist(struct label *l, int i)
{
	memmove(&l->spare[i], &l->spare[i + 1], (size_t)(l->nspares - i - 1) * sizeof(l->spare[0]));
	l->nspares--;
	memset(&l->spare[l->nspares], 0, sizeof(l->spare[0]));
}

/* Spares a member took (its uuid is a member's now) are spares no more. */
void
spare_drop_taken(struct label *l)
{
	for (int i = 0; i < l->nspares; i++)
		for (int m = 0; m < l->ndisks; m++)
			if (memcmp(l->spare[i].uuid, l->member[m].uuid, 16) == 0) {
				unlist(l, i--);
				break;
			}
}

/* A listed spare by its disk (bay, kernel name, serial) or, when gone, its serial. */
static int
find_listed(const struct volume *v, const char *spec, const struct disk **dp)
{
	const struct disk *d = disk_find(spec);

	*dp = NULL;
	if (d && !volume_of_disk(d->sys.name)) {
		for (int i = 0; i < v->label.nspares; i++)
			if (spare_disk(v, i) == d) {
				*dp = d;
				return i;
			}
	}
	for (int i = 0; i < v->label.nspares; i++)
		if (strcmp(v->label.spare[i].serial, spec) == 0 && spare_disk(v, i) == NULL)
			return i;
	return -1;
}

/*
 * Spare uuid of the volume whose labels were l, erased: proven through
 * the one descriptor the zeros go through (its spare label read by it:
 * this volume's, this spare, this serial and size), not by name, since
 * writing the volume's labels first can take seconds and a disk swapped
 * into the name meanwhile must not be erased.
 */
static int
erase_spare(const struct label *l, const struct disk *d, const uint8_t uuid[16], char *err,
    size_t errlen)
{
	static uint8_t s[LABEL_SLOT_SIZE];
	struct spare_label sl;
	struct dfd f;
	int ok = 0;

	if (dfd_open(&f, &d->sys, err, errlen) == -1)
		return -1;
	for (int k = 0; k < 2 && !ok; k++)
		ok = dfd_read(&f, k ? LABEL_SLOT1 : LABEL_SLOT0, s, sizeof(s)) == 0 &&
		    spare_label_decode(s, sizeof(s), &sl, err, errlen) == 0 &&
		    memcmp(sl.volume_uuid, l->volume_uuid, 16) == 0 &&
		    memcmp(sl.uuid, uuid, 16) == 0 && sl.size == d->sys.size &&
		    strncmp(sl.serial, d->sys.serial, LABEL_SERIAL_MAX - 1) == 0;
	if (!ok) {
		dfd_abandon(&f);
		return plan_err(err, errlen, "%s does not carry this spare's label now: not "
		    "erased", d->sys.name);
	}
	return wipe_fd(&f, &d->sys, err, errlen);
}

int
spare_remove(struct volume *v, const char *spec, int *code, char *err, size_t errlen)
{
	struct label was = v->label;
	const struct disk *d;
	uint8_t uuid[16];
	int i;

	if (usable(v, code, err, errlen) == -1)
		return -1;
	if ((i = find_listed(v, spec, &d)) < 0) {
		*code = NAS_ERR_NOT_FOUND;
		return plan_err(err, errlen, "%s is no spare of volume %s", spec, v->name);
	}
	memcpy(uuid, v->label.spare[i].uuid, 16);
	/* Nothing but this spare's label on it now (the table may be late)... */
	if (d && spare_proven(v, d->sys.name, uuid, err, errlen) == -1) {
		log_warnx("volume %s: %s: not erased", v->name, err);
		d = NULL;
	}
	*code = NAS_ERR_FAILED;
	/* The list first: a cut before the erase leaves a spare no volume lists. */
	unlist(&v->label, i);
	if (label_change(v, ~0U, &was, err, errlen) == -1)
		return -1;
	log_info("volume %s: spare %s removed", v->name, spec);
	/* ... and still, through the descriptor the zeros go through. */
	if (d && erase_spare(&was, d, uuid, err, errlen) == -1)
		log_warnx("volume %s: %s: the spare label stays, listed by no volume", v->name, err);
	disk_refresh(1);
	return 0;
}

struct json_object *
spare_describe(const struct volume *v)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < v->label.nspares; i++) {
		struct json_object *o = json_object_new_object();
		const struct disk *d = spare_disk(v, i);
		char spec[SYS_NAME_MAX];

		json_object_object_add(o, "disk", d ? json_object_new_string(disk_spec(d, spec,
		    sizeof(spec))) : NULL);
		json_object_object_add(o, "serial", json_object_new_string(v->label.spare[i].serial));
		json_object_object_add(o, "size_bytes",
		    json_object_new_int64((int64_t)v->label.spare[i].size));
		json_object_object_add(o, "state", json_object_new_string(d ? "ready" : "missing"));
		json_object_array_add(a, o);
	}
	return a;
}

static int
was_tried(const uint8_t uuid[16])
{
	for (int i = 0; i < ntried; i++)
		if (memcmp(tried[i], uuid, 16) == 0)
			return 1;
	return 0;
}

/*
 * A volume that lacks a member takes its first proven spare, through
 * volume.repair's steps; each spare is tried once a run (a take-over
 * that failed is not retried in a loop; the next start tries again).
 */
void
spare_takeover(void)
{
	struct volume *v;
	char err[256];

	for (int k = 0; (v = volume_at(k)) != NULL; k++) {
		if (v->label.nspares == 0 || v->job || !v->assembled || v->held || v->foreign ||
		    v->inconsistent || !repair_lacks_member(v))
			continue;
		for (int i = 0; i < v->label.nspares; i++) {
			const uint8_t *uuid = v->label.spare[i].uuid;
			const struct disk *d;

			if (was_tried(uuid) || (d = spare_disk(v, i)) == NULL ||
			    repair_disk_busy(d->sys.name))
				continue;
			if (ntried < (int)(sizeof(tried) / sizeof(tried[0])))
				memcpy(tried[ntried++], uuid, 16);
			if (repair_spare_start(v, d, uuid, err, sizeof(err)) != NULL)
				break;
			log_warnx("volume %s: spare %s not taken: %s", v->name, d->sys.name, err);
		}
	}
}

/* ---- API ---- */

/* volume.spare_add and volume.spare_remove: the volume's description after. */
static void
spare_m(struct rpc_call *c, struct json_object *params, int add)
{
	const char *disk = rpc_param_str(params, "disk", "");
	struct volume *v;
	char err[256];
	int code;

	disk_refresh(1);
	if ((v = volume_find_idle(c, params)) == NULL)
		return;
	if (add && sys != &sys_sim && nas_feature_require(c, &raidd_features[0]) == -1)
		return;
	if ((add ? spare_add(v, disk, rpc_param_bool(params, "force", 0), &code, err,
	    sizeof(err)) : spare_remove(v, disk, &code, err, sizeof(err))) == -1) {
		rpc_error(c, code, "%s", err);
		return;
	}
	rpc_result(c, volume_describe(v));
}

static void
spare_add_m(struct rpc_call *c, struct json_object *params)
{
	spare_m(c, params, 1);
}

static void
spare_remove_m(struct rpc_call *c, struct json_object *params)
{
	spare_m(c, params, 0);
}

static const struct rpc_param spare_add_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" },
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 64, NULL,
	  "the spare: bay (bay1), kernel name (sda) or serial" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "erase the disk even if it holds data" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param spare_remove_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" },
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 64, NULL,
	  "the spare: bay, kernel name or serial (a spare that is gone: its serial)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method spare_methods[] = {
	{ "volume.spare_add", spare_add_m, spare_add_params, RPC_MUTATES,
	  "set a disk aside to take a failed member's place at once" },
	{ "volume.spare_remove", spare_remove_m, spare_remove_params, RPC_MUTATES,
	  "release a hot spare (its spare label is erased)" },
	{ NULL, NULL, NULL, 0, NULL }
};
