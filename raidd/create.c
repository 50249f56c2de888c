/*
 * volume.create: checked in full before anything is written, then run
 * as a job of small steps on the event loop. The chosen disks are first
 * erased (the caller agreed to that: they were free, or force was
 * given), then each gets its label with the intent "creating"; the
 * volume exists only once the labels say "none" one generation later.
 * A power cut in between is rolled back at the next start (assemble.c),
 * so the disks end up either a whole volume or free.
 */
#include <sys/random.h>

#include <linux/raid/md_p.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"
#include "mdsb.h"
#include "secret.h"
#include "volume.h"
#include "crypt.h"

enum create_step {
	STEP_WIPE, STEP_LABEL, STEP_PARTITION, STEP_ARRAYS, STEP_MAP, STEP_CRYPT,
	STEP_MKFS, STEP_COMMIT, STEP_MOUNT, STEP_DONE
};

static const char *const step_names[] = {
	"erasing old signatures", "writing labels", "partitioning",
	"starting arrays", "mapping the volume", "encrypting (cryptd)",
	"making the filesystem",
	"committing labels", "mounting", "done",
};

struct create {
	struct create_req	 req;
	struct plan		 plan;
	struct volume		*vol;
	struct job		*job;
	enum create_step	 step;
	ev_timer		 timer;
	uint8_t			 array_uuid[PLAN_MAX_TIERS][16];
	char			 serial[PLAN_MAX_DISKS][64];	/* the disks as checked */
	uint64_t		 size[PLAN_MAX_DISKS];
};

static int fail_check(int *, int, char *, size_t, const char *, ...)
    __attribute__((format(printf, 5, 6)));

static int
fail_check(int *code, int c, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	*code = c;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Why this disk may not join a volume (new, or as a replacement), or 0. */
int
disk_check_free(int force, const struct disk *d, int *code, char *err, size_t errlen)
{
	char why[192], name[SYS_NAME_MAX];

	disk_spec(d, name, sizeof(name));
	if (d->flash)
		return fail_check(code, NAS_ERR_REFUSED, err, errlen,
		    "%s (%s) is the firmware's own device", name, d->sys.name);
	if (!disk_board_known())
		return fail_check(code, NAS_ERR_REFUSED, err, errlen, "%s may be the "
		    "firmware's own device: the board description is missing", name);
	if (d->sys.busy[0])
		return fail_check(code, NAS_ERR_BUSY, err, errlen, "%s is in use: %s",
		    name, d->sys.busy);
	if (volume_of_disk(d->sys.name))
		return fail_check(code, NAS_ERR_BUSY, err, errlen,
		    "%s belongs to volume %s", name, volume_of_disk(d->sys.name)->name);
	if (repair_disk_busy(d->sys.name))
		return fail_check(code, NAS_ERR_BUSY, err, errlen,
		    "%s is being made a member of volume %s", name, repair_disk_busy(d->sys.name));
	if (add_disk_busy(d->sys.name))
		return fail_check(code, NAS_ERR_BUSY, err, errlen,
		    "%s is being added to volume %s", name, add_disk_busy(d->sys.name));
	if (force)
		return 0;
	for (int i = 0; i < d->sys.nsigs; i++) {
		if (strcmp(d->sys.sig[i].type, "raidd") == 0)
			return fail_check(code, NAS_ERR_REFUSED, err, errlen,
			    "%s carries a raidd label of another volume: pass force to erase it",
			    name);
	}
	if (disk_has_foreign(d, why, sizeof(why)))
		return fail_check(code, NAS_ERR_REFUSED, err, errlen,
		    "%s: pass force to erase it (%s)", why, name);
	return 0;
}

int
create_check(const struct create_req *r, struct plan *plan, int *code,
    char *err, size_t errlen)
{
	struct plan_disk pd[PLAN_MAX_DISKS];
	char why[128];

	const char *problem;

	if (!volume_name_valid(r->name, why, sizeof(why)))
		return fail_check(code, NAS_ERR_INVALID, err, errlen, "%s", why);
	if (unit_id(&problem) == NULL)
		return fail_check(code, NAS_ERR_FAILED, err, errlen,
		    "this unit has no identity (%s): its labels could not say whose they are",
		    problem);
	if (volume_find(r->name))
		return fail_check(code, NAS_ERR_EXISTS, err, errlen,
		    "a volume named %s exists", r->name);
	for (int i = 0; i < r->ndisks; i++) {
		const struct disk *d = disk_find(r->disk[i]);

		for (int j = 0; j < i; j++)
			if (strcmp(r->disk[i], r->disk[j]) == 0)
				return fail_check(code, NAS_ERR_INVALID, err, errlen,
				    "%s is listed twice", r->disk[i]);
		if (d == NULL)
			return fail_check(code, NAS_ERR_NOT_FOUND, err, errlen,
			    "no disk %s", r->disk[i]);
		snprintf(pd[i].id, sizeof(pd[i].id), "%s", d->sys.name);
		pd[i].size = d->sys.size;
	}
	/* What cannot work at all is said before what the disks hold. */
	if (plan_make(r->level, pd, r->ndisks, plan, why, sizeof(why)) == -1)
		return fail_check(code, NAS_ERR_INVALID, err, errlen, "%s", why);
	for (int i = 0; i < r->ndisks; i++)
		if (disk_check_free(r->force, disk_find(r->disk[i]), code, err, errlen) == -1)
			return -1;
	return 0;
}

/* ---- the steps ---- */

/*
 * The disk a step works on, if it is still the one that was checked:
 * a hot-plug between steps may give its kernel name to another disk.
 */
static const struct disk *
job_disk(const struct create *c, int i, char *err, size_t errlen)
{
	const struct disk *d = disk_find(c->req.disk[i]);

	if (d == NULL || strcmp(d->sys.serial, c->serial[i]) != 0 || d->sys.size != c->size[i]) {
		snprintf(err, errlen, "disk %s (serial %s) went away", c->req.disk[i],
		    c->serial[i]);
		return NULL;
	}
	return d;
}

static int
step_wipe(struct create *c, char *err, size_t errlen)
{
	const struct disk *d;

	for (int i = 0; i < c->req.ndisks; i++)
		if ((d = job_disk(c, i, err, errlen)) == NULL || wipe_disk(d, err, errlen) == -1)
			return -1;
	return 0;
}

static int
make_labels(struct create *c, char *err, size_t errlen)
{
	struct label_member mem[PLAN_MAX_DISKS];
	struct volume *v = c->vol;
	uint8_t vol_uuid[16];

	memset(mem, 0, sizeof(mem));
	if (getrandom(vol_uuid, sizeof(vol_uuid), 0) != sizeof(vol_uuid) ||
	    getrandom(c->array_uuid, sizeof(c->array_uuid), 0) != sizeof(c->array_uuid))
		return snprintf(err, errlen, "no random numbers: %s", strerror(errno)), -1;
	for (int i = 0; i < c->req.ndisks; i++) {
		const struct disk *d = job_disk(c, i, err, errlen);

		if (d == NULL)
			return -1;
		if (getrandom(mem[i].uuid, 16, 0) != 16)
			return snprintf(err, errlen, "no random numbers"), -1;
		snprintf(mem[i].serial, sizeof(mem[i].serial), "%.*s", LABEL_SERIAL_MAX - 1, d->sys.serial);
		mem[i].size = d->sys.size;
	}
	for (int i = 0; i < c->req.ndisks; i++) {
		if (label_from_plan(&v->mlabel[i], &c->plan, i, c->req.name, vol_uuid,
		    (const uint8_t (*)[16])c->array_uuid, mem, (uint64_t)time(NULL),
		    err, errlen) == -1)
			return -1;
		memcpy(v->mlabel[i].unit, unit_id(NULL), 16);
		if (label_new_guids(&v->mlabel[i]) == -1)
			return snprintf(err, errlen, "no random numbers"), -1;
		v->mlabel[i].fs = (uint8_t)c->req.fs;
		v->mlabel[i].flags = v->label.flags;
		v->mlabel[i].intent.op = LABEL_OP_CREATING;
		v->mlabel[i].intent.target = v->mlabel[i].generation + 1;
		snprintf(v->disk[i], sizeof(v->disk[i]), "%s", c->req.disk[i]);
		v->next_slot[i] = 0;
	}
	v->label = v->mlabel[0];
	return 0;
}

/* The first labels go to disks that carry none, checked by serial and size. */
static int
first_label(struct create *c, int i, char *err, size_t errlen)
{
	const struct disk *d = job_disk(c, i, err, errlen);

	return d == NULL ? -1 : label_write_blank(&d->sys, &c->vol->mlabel[i], err, errlen);
}

static int
step_label(struct create *c, char *err, size_t errlen)
{
	if (make_labels(c, err, errlen) == -1)
		return -1;
	for (int i = 0; i < c->req.ndisks; i++) {
		if (first_label(c, i, err, errlen) == -1)
			return -1;
		c->vol->next_slot[i] = 1;
	}
	return 0;
}

/*
 * libfdisk writes through the member's proven descriptor; the kernel's
 * re-read names the disk, so the node is checked around it.
 */
static int
partition_member(struct create *c, int i, const struct sys_part *parts, int n,
    char *err, size_t errlen)
{
	if (job_disk(c, i, err, errlen) == NULL)
		return -1;
	return member_partition(c->vol, i, parts, n, err, errlen);
}

static int
step_partition(struct create *c, char *err, size_t errlen)
{
	for (int i = 0; i < c->plan.ndisks; i++) {
		struct sys_part parts[SYS_MAX_PARTS];
		int n = 0;

		for (int t = 0; t < c->plan.ntiers; t++) {
			const struct plan_tier *pt = &c->plan.tier[t];

			for (int r = 0; r < pt->nmembers; r++) {
				if (pt->part[r].disk != i)
					continue;
				parts[n].start = pt->part[r].start;
				parts[n].size = pt->part[r].size;
				memcpy(parts[n].guid, c->vol->mlabel[i].tier[t].part_guid, 16);
				memcpy(parts[n].type, c->vol->mlabel[i].tier[t].part_type, 16);
				/* GPT names hold 36 characters; tiers are 1..8. */
				snprintf(parts[n].name, sizeof(parts[n].name), "raidd:%.*s:t%c",
				    VOL_NAME_MAX, c->req.name, '1' + t);
				n++;
			}
		}
		if (partition_member(c, i, parts, n, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* What one tier's members get written before the array starts. */
struct tier_blocks {
	uint8_t	sb[SYS_MAX_MEMBERS][MDSB_BLOCK];
	uint8_t	bm[SYS_MAX_MEMBERS][MDSB_BITMAP_ROOM * 512];
};

/* Superblock and bitmap of every role of tier t, and its partition. */
static int
tier_members(struct volume *v, int t, const struct plan_tier *pt, const uint8_t uuid[16],
    struct sys_md *md, struct tier_blocks *tb, char *err, size_t errlen)
{
	struct mdsb s;
	struct mdsb_bitmap b;
	char set_name[MDSB_NAME_MAX + 1];

	snprintf(set_name, sizeof(set_name), "%.*s-t%c", VOL_NAME_MAX, v->name, (char)('1' + t));
	for (int r = 0; r < pt->nmembers; r++) {
		const char *disk = v->disk[pt->part[r].disk];

		if (mdsb_init_tier(&s, pt, r, uuid, set_name,
		    (uint64_t)time(NULL), err, errlen) == -1 ||
		    getrandom(s.device_uuid, sizeof(s.device_uuid), 0) != sizeof(s.device_uuid) ||
		    mdsb_encode(&s, tb->sb[r], sizeof(tb->sb[r]), err, errlen) == -1)
			return -1;
		md->member[r].role = r;
		md->member[r].sb = tb->sb[r];
		md->member[r].sb_len = sizeof(tb->sb[r]);
		if (s.feature_map & MD_FEATURE_BITMAP_OFFSET) {
			if (mdsb_bitmap_init(&b, &s, err, errlen) == -1 ||
			    mdsb_bitmap_encode(&b, 1, tb->bm[r], sizeof(tb->bm[r]), err, errlen) == -1)
				return -1;
			md->member[r].bitmap = tb->bm[r];
			md->member[r].bitmap_len = mdsb_bitmap_bytes(&b);
		}
		if (sys->part_dev(disk, pt->part[r].start, md->member[r].dev,
		    sizeof(md->member[r].dev)) == -1)
			return snprintf(err, errlen, "%s: no partition at %llu", disk,
			    (unsigned long long)pt->part[r].start), -1;
	}
	return 0;
}

/*
 * Each member's superblock and bitmap go through its disk's proven
 * descriptor, at its partition's place, synced before md reads them;
 * md is then given none to write. The descriptors stay open until the
 * array runs: f[r] is member r's, *nopen of them open.
 */
static int
write_members(struct volume *v, const struct plan_tier *pt, struct sys_md *md,
    struct dfd *f, int *nopen, char *err, size_t errlen)
{
	for (int r = 0; r < md->nmembers; r++) {
		uint64_t at = pt->part[r].start + MDSB_SUPER_OFFSET * 512ULL;

		if (member_open(v, pt->part[r].disk, &f[r], err, errlen) == -1)
			return -1;
		(*nopen)++;
		if (sys->fd_write(f[r].fd, at, md->member[r].sb, md->member[r].sb_len) == -1 ||
		    (md->member[r].bitmap_len && sys->fd_write(f[r].fd,
		    at + MDSB_BITMAP_OFFSET * 512ULL, md->member[r].bitmap,
		    md->member[r].bitmap_len) == -1) || sys->fd_sync(f[r].fd) == -1)
			return snprintf(err, errlen, "%s: writing the md superblock: %s",
			    f[r].name, strerror(errno)), -1;
		md->member[r].sb = md->member[r].bitmap = NULL;
		md->member[r].sb_len = md->member[r].bitmap_len = 0;
	}
	return 0;
}

/* md takes members by name: around it, every disk is still the one open. */
static int
recheck_all(const struct dfd *f, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++)
		if (dfd_recheck(&f[i], err, errlen) == -1)
			return -1;
	return 0;
}

/*
 * Tier t's array made on the partitions pt gives on v's member disks,
 * with set uuid `uuid` (volume.create, and volume.grow's new tier).
 * The blocks are allocated for the call only: 1 MiB an idle daemon
 * need not keep.
 */
int
volume_make_array(struct volume *v, int t, const struct plan_tier *pt,
    const uint8_t uuid[16], char *err, size_t errlen)
{
	struct sys_md md = { .raid_disks = pt->nmembers, .nmembers = pt->nmembers };
	struct dfd f[SYS_MAX_MEMBERS];
	struct tier_blocks *tb;
	int rc = -1, nopen = 0;

	if ((tb = calloc(1, sizeof(*tb))) == NULL)
		return snprintf(err, errlen, "out of memory"), -1;
	volume_md_name(v, t, md.name, sizeof(md.name));
	if (tier_members(v, t, pt, uuid, &md, tb, err, errlen) == 0 &&
	    write_members(v, pt, &md, f, &nopen, err, errlen) == 0 &&
	    recheck_all(f, nopen, err, errlen) == 0) {
		if ((rc = sys->md_create(&md)) == -1)
			snprintf(err, errlen, "creating %s: %s", md.name, strerror(errno));
		else if ((rc = recheck_all(f, nopen, err, errlen)) == -1 &&
		    sys->md_stop(md.name) == -1)
			log_warn("%s: stopping", md.name);
	}
	for (int i = 0; i < nopen; i++)
		if (rc == -1)
			dfd_abandon(&f[i]);
		else if (dfd_close(&f[i], err, errlen) == -1)
			rc = -1;
	free(tb);
	return rc;
}

/* Every member's disk is still the one checked (serial, size) before md writes. */
static int
create_array(struct create *c, int t, char *err, size_t errlen)
{
	const struct plan_tier *pt = &c->plan.tier[t];

	for (int r = 0; r < pt->nmembers; r++)
		if (job_disk(c, pt->part[r].disk, err, errlen) == NULL)
			return -1;
	return volume_make_array(c->vol, t, pt, c->array_uuid[t], err, errlen);
}

static int
step_arrays(struct create *c, char *err, size_t errlen)
{
	for (int t = 0; t < c->plan.ntiers; t++)
		if (c->plan.tier[t].kind != TIER_NONE && create_array(c, t, err, errlen) == -1)
			return -1;
	return 0;
}

static int
step_map(struct create *c, char *err, size_t errlen)
{
	return volume_assemble(c->vol, err, errlen);
}

static int
step_commit(struct create *c, char *err, size_t errlen)
{
	struct volume *v = c->vol;
	struct label was = v->label;

	v->label.intent.op = LABEL_OP_NONE;
	v->label.intent.target = 0;
	if (label_bump(&v->label, err, errlen) == -1 ||
	    label_write_all(v, err, errlen) == -1) {
		/* Not committed: what raidd acts on next must say so. */
		v->label = was;
		return -1;
	}
	return 0;
}

static int
step_mount(struct create *c, char *err, size_t errlen)
{
	return volume_mount(c->vol, err, errlen);
}

/* ---- the job ---- */

static void advance(struct create *);

/*
 * Undo after a failed step: the disks end up free, as after a power
 * cut. Once the labels are committed the volume exists: a failed mount
 * leaves it listed, unmounted, rather than erasing it.
 */
static void
roll_back(struct create *c, const char *why)
{
	struct volume *v = c->vol;
	char err[256];

	v->job = NULL;
	if (c->step > STEP_COMMIT) {
		snprintf(v->problem, sizeof(v->problem), "created, not mounted: %.200s", why);
		v->state = VOL_CLEAN;
		volume_refresh_state(v);
		job_fail(c->job, NAS_ERR_FAILED, "volume %s was created but %s", v->name, why);
		return;
	}
	log_warnx("volume %s: %s: rolling back", c->req.name, why);
	if (c->step > STEP_WIPE && (volume_stop(v, err, sizeof(err)) == -1 ||
	    volume_wipe_members(v, err, sizeof(err)) == -1)) {
		/* Keep it listed: its arrays may run, its labels say "creating". */
		snprintf(v->problem, sizeof(v->problem),
		    "creation failed and could not be undone (%.150s): undone at the next start", err);
		v->state = VOL_FAILED;
	} else {
		volume_forget(v);
	}
	disk_refresh(1);
	job_fail(c->job, NAS_ERR_FAILED, "%s while %s", why, step_names[c->step]);
}

static void
mkfs_done(int status, const char *output, void *arg)
{
	struct create *c = arg;
	char why[256];

	if (status != 0) {
		snprintf(why, sizeof(why), "mkfs failed: %.200s", output);
		roll_back(c, why);
		return;
	}
	c->step++;
	advance(c);
}

static int
start_mkfs(struct create *c, char *err, size_t errlen)
{
	static const char *const fs[] = { "none", "ext4", "btrfs" };
	char dm[SYS_NAME_MAX];

	crypt_top_name(c->vol, dm, sizeof(dm));
	if (sys->mkfs(fs[c->req.fs], dm, c->req.name, mkfs_done, c) == -1)
		return snprintf(err, errlen, "mkfs: %s", strerror(errno)), -1;
	return 0;
}

/* cryptd formats the joined map and opens it; the passphrase goes then. */
static void
crypt_done(int code, const char *msg, void *arg)
{
	struct create *c = arg;
	char why[256];

	secret_free(c->req.pass);
	c->req.pass = NULL;
	if (code != 0) {
		snprintf(why, sizeof(why), "cryptd: %.200s", msg);
		roll_back(c, why);
		return;
	}
	c->step++;
	advance(c);
}

static int
start_crypt(struct create *c, char *err, size_t errlen)
{
	if (crypt_create(c->vol, c->req.pass, crypt_done, c) == -1)
		return snprintf(err, errlen, "cryptd cannot be asked: %s", strerror(errno)), -1;
	return 0;
}

static int (*const steps[])(struct create *, char *, size_t) = {
	[STEP_WIPE] = step_wipe, [STEP_LABEL] = step_label,
	[STEP_PARTITION] = step_partition, [STEP_ARRAYS] = step_arrays,
	[STEP_MAP] = step_map, [STEP_CRYPT] = start_crypt, [STEP_MKFS] = start_mkfs,
	[STEP_COMMIT] = step_commit, [STEP_MOUNT] = step_mount,
};

static void
finish(struct create *c)
{
	struct volume *v = c->vol;
	struct json_object *ev;

	v->job = NULL;
	v->state = VOL_CLEAN;
	volume_refresh_state(v);
	disk_refresh(1);
	ev = json_object_new_object();
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "state", json_object_new_string(volume_state_name(v->state)));
	nas_event("volume.created", ev);
	log_info("volume %s created: %s, %llu bytes", v->name,
	    plan_level_name(v->label.level), (unsigned long long)v->label.size);
	job_done(c->job, volume_describe(v));
}

/* One step per loop turn, so answers and events flow in between. */
static void
step_timer(struct ev_loop *l, ev_timer *w, int revents)
{
	struct create *c = w->data;
	char err[256];

	(void)l;
	(void)revents;
	if (c->step == STEP_DONE) {
		finish(c);
		return;
	}
	if (c->step == STEP_CRYPT && !c->req.encrypt)
		c->step++;
	if (c->step == STEP_MKFS && c->req.fs == LABEL_FS_NONE)
		c->step++;
	job_progress(c->job, 100.0 * c->step / STEP_DONE, step_names[c->step]);
	if (steps[c->step](c, err, sizeof(err)) == -1) {
		roll_back(c, err);
		return;
	}
	if (c->step == STEP_MKFS || c->step == STEP_CRYPT)
		return;		/* mkfs_done, crypt_done go on */
	c->step++;
	advance(c);
}

static void
advance(struct create *c)
{
	ev_timer_set(&c->timer, 0., 0.);
	ev_timer_start(nas_loop(), &c->timer);
}

static void
release(void *arg)
{
	struct create *c = arg;

	ev_timer_stop(nas_loop(), &c->timer);
	secret_free(c->req.pass);
	free(c);
}

static const struct job_ops create_ops = { .release = release };

struct job *
create_start(const struct create_req *r, const struct plan *plan, char *err,
    size_t errlen)
{
	struct create *c;

	if ((c = calloc(1, sizeof(*c))) == NULL || (c->vol = volume_add()) == NULL) {
		free(c);
		snprintf(err, errlen, "too many volumes");
		return NULL;
	}
	c->req = *r;
	c->plan = *plan;
	snprintf(c->vol->name, sizeof(c->vol->name), "%s", r->name);
	c->vol->label.level = (uint8_t)r->level;
	c->vol->label.fs = (uint8_t)r->fs;
	c->vol->label.flags = r->encrypt ? LABEL_F_ENCRYPTED : 0;
	c->vol->label.size = plan->size;
	c->vol->state = VOL_CREATING;
	for (int i = 0; i < r->ndisks; i++) {
		snprintf(c->vol->disk[i], sizeof(c->vol->disk[i]), "%s", r->disk[i]);
		snprintf(c->serial[i], sizeof(c->serial[i]), "%s", disk_find(r->disk[i])->sys.serial);
		c->size[i] = disk_find(r->disk[i])->sys.size;
	}
	c->vol->label.ndisks = (uint8_t)r->ndisks;
	ev_timer_init(&c->timer, step_timer, 0., 0.);
	c->timer.data = c;
	if ((c->job = job_start("volume.create", r->name, &create_ops, c)) == NULL) {
		volume_forget(c->vol);
		free(c);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->vol->job = c->job;
	advance(c);
	return c->job;
}
