/*
 * volume.repair: a disk takes the place of a missing or failed member.
 * Checked in full first (nothing is written to a disk that is too small,
 * in use or holds data without force), then run as a job of small steps:
 * the disk is erased, the other members' labels take the intent
 * "replacing" with the new disk's identity in the member's place, the
 * disk gets its label and its partitions (where the member had them),
 * each of the member's arrays gets it as a spare put into the member's
 * role, and the labels commit. md then rebuilds it; the job follows md's
 * progress. A power cut anywhere is resolved at the next start
 * (repair_decide, repair_resume): the work goes on with the new disk
 * when it carries its label, else the intent is dropped and the member
 * stays missing (Decision 26).
 */
#include <sys/random.h>

#include <linux/raid/md_p.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"
#include "mdsb.h"
#include "volume.h"

enum repair_step {
	RSTEP_WIPE, RSTEP_INTENT, RSTEP_LABEL, RSTEP_PARTITION, RSTEP_ADD,
	RSTEP_COMMIT, RSTEP_RECOVER, RSTEP_DONE
};

static const char *const step_names[] = {
	"erasing the new disk", "writing the intent", "labelling the new disk",
	"partitioning", "adding to the arrays", "committing labels", "rebuilding",
	"done",
};

/* Share of the job's progress the steps before the rebuild take. */
#define SETUP_PERCENT	5.0

struct repair {
	struct volume		*vol;
	uint8_t			 volume_uuid[16];	/* vol is still this volume */
	struct job		*job;
	int			 member;
	char			 disk[SYS_NAME_MAX];
	char			 serial[64];	/* the disk as checked */
	uint64_t		 size;
	enum repair_step	 step;
	ev_timer		 timer;
	int			 spare;		/* a hot spare takes the place */
	uint8_t			 spare_uuid[16];
};

/* Repairs under way: their disk is not free, though no volume names it yet. */
static struct repair *active[MAX_VOLUMES];

/* How often the job looks at md's rebuild (tests make it short). */
static double poll_seconds = 1.0;

void
repair_set_poll(double seconds)
{
	poll_seconds = seconds;
}

/* ---- the plan: where the member's partitions go ---- */

/*
 * Member m's partition of tier t: where every other present member of
 * the tier has its own (the planner gives a tier's partitions one start
 * and size on every disk). -1 when no present member says, or they
 * disagree.
 */
static int
member_part(const struct volume *v, int t, int m, uint64_t *start, uint64_t *size)
{
	int found = 0;

	for (int k = 0; k < v->label.ndisks; k++) {
		const struct label_tier *own = &v->mlabel[k].tier[t];

		if (k == m || v->disk[k][0] == '\0' || own->role == LABEL_NO_ROLE)
			continue;
		if (found && (own->start != *start || own->size != *size))
			return -1;
		*start = own->start;
		*size = own->size;
		found = 1;
	}
	return found ? 0 : -1;
}

/* The label member m's disk carries: the volume's, with its own tiers. */
static int
member_label(const struct volume *v, int m, struct label *l, char *err, size_t errlen)
{
	*l = v->label;
	l->position = (uint8_t)m;
	for (int t = 0; t < l->ntiers; t++) {
		struct label_tier *lt = &l->tier[t];
		int r = label_role_of(&v->label, t, m);

		lt->role = LABEL_NO_ROLE;
		lt->start = lt->size = 0;
		/* v->label's GUIDs are another disk's partitions': step_label gives new ones. */
		memset(lt->part_guid, 0, sizeof(lt->part_guid));
		memset(lt->part_type, 0, sizeof(lt->part_type));
		if (r < 0)
			continue;
		lt->role = (uint8_t)r;
		if (member_part(v, t, m, &lt->start, &lt->size) == -1)
			return plan_err(err, errlen, "tier %d: no present member says where "
			    "its partitions are", t + 1);
	}
	return label_check(l, err, errlen);
}

/* A member the volume lacks: missing, or failed by md for errors. */
static int
member_to_replace(const struct volume *v)
{
	for (int m = 0; m < v->label.ndisks; m++)
		if (v->disk[m][0] == '\0' || (v->label.failed & (1U << m)))
			return m;
	return -1;
}

/* Every tier member m is in keeps a copy of its blocks elsewhere and runs. */
static int
tiers_rebuildable(const struct volume *v, int m, int *code, char *err, size_t errlen)
{
	struct sys_md_status st;

	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		if (label_role_of(&v->label, t, m) < 0)
			continue;
		if (lt->kind == TIER_NONE || lt->kind == TIER_RAID0) {
			*code = NAS_ERR_REFUSED;
			return plan_err(err, errlen, "tier %d (%s) keeps no second copy: member "
			    "%d's data is lost and cannot be rebuilt", t + 1,
			    plan_tier_kind_name(lt->kind), m + 1);
		}
		if (volume_tier_state(v, t, &st) == VOL_DIRTY_DEGRADED) {
			*code = NAS_ERR_REFUSED;
			return plan_err(err, errlen, "tier %d is dirty and degraded and runs "
			    "read-only: nothing is rebuilt from it before volume.start with force",
			    t + 1);
		}
		if (volume_tier_state(v, t, &st) == VOL_FAILED) {
			*code = NAS_ERR_FAILED;
			return plan_err(err, errlen, "tier %d is not running with a full copy "
			    "of its data: nothing to rebuild from", t + 1);
		}
	}
	return 0;
}

/* Bytes the new disk needs: the end of the member's last partition, and the tail. */
static int
room_needed(const struct volume *v, int m, uint64_t *end, char *err, size_t errlen)
{
	struct label l;

	*end = 0;
	if (member_label(v, m, &l, err, errlen) == -1)
		return -1;
	for (int t = 0; t < l.ntiers; t++)
		if (l.tier[t].role != LABEL_NO_ROLE && l.tier[t].start + l.tier[t].size > *end)
			*end = l.tier[t].start + l.tier[t].size;
	return 0;
}

int
repair_check(struct volume *v, const char *spec, int force, int *code, char *err,
    size_t errlen)
{
	const struct disk *d;
	uint64_t end;
	int m;

	*code = NAS_ERR_REFUSED;
	if (v->foreign || v->inconsistent || v->held)
		return plan_err(err, errlen, "volume %s is %s: nothing of it is written "
		    "before that is resolved", v->name, v->foreign ? "foreign" :
		    v->inconsistent ? "inconsistent" : "held");
	/* One intent at a time: a repair's commit would clear a stopped grow's,
	   and the labels would keep a map md never grew to (no start maps it).
	   A join is volume.grow's to carry on (add_carry_on refuses it). */
	if (label_is_join(&v->label))
		return plan_err(err, errlen, "volume %s has member %d's room joining its "
		    "tiers to finish first: volume.grow carries it on, or undoes it if md "
		    "had not begun", v->name, v->label.intent.disk + 1);
	if (v->label.intent.op == LABEL_OP_EXPANDING || v->label.intent.op == LABEL_OP_ADDING)
		return plan_err(err, errlen, "volume %s has a %s to finish first: volume.%s "
		    "carries it on (every member present)", v->name,
		    v->label.intent.op == LABEL_OP_ADDING ? "disk to add" : "grow",
		    v->label.intent.op == LABEL_OP_ADDING ? "add_disk" : "grow");
	if (!v->assembled) {
		*code = NAS_ERR_FAILED;
		return plan_err(err, errlen, "volume %s is not running: %s", v->name,
		    v->problem[0] ? v->problem : "not assembled");
	}
	if ((m = member_to_replace(v)) < 0) {
		*code = NAS_ERR_INVALID;
		return plan_err(err, errlen, "volume %s lacks no member", v->name);
	}
	if (tiers_rebuildable(v, m, code, err, errlen) == -1)
		return -1;
	if ((d = disk_find(spec)) == NULL) {
		*code = NAS_ERR_NOT_FOUND;
		return plan_err(err, errlen, "no disk %s", spec);
	}
	if (room_needed(v, m, &end, err, errlen) == -1) {
		*code = NAS_ERR_FAILED;
		return -1;
	}
	if (PLAN_HEAD + plan_disk_area(d->sys.size) < end) {
		*code = NAS_ERR_INVALID;
		return plan_err(err, errlen, "%s is too small: member %d needs %llu MiB, the "
		    "disk has %llu MiB", spec, m + 1, (unsigned long long)(end / MIB),
		    (unsigned long long)(d->sys.size / MIB));
	}
	return disk_check_free(force, d, code, err, errlen);
}

/* ---- the steps ---- */

static const struct disk *
job_disk(const struct repair *rp, char *err, size_t errlen)
{
	const struct disk *d = disk_find(rp->disk);

	if (d == NULL || strcmp(d->sys.serial, rp->serial) != 0 || d->sys.size != rp->size) {
		snprintf(err, errlen, "disk %s (serial %s) went away", rp->disk, rp->serial);
		return NULL;
	}
	/* Until it carries the member's label, a spare is proven one before each write. */
	if (rp->spare && rp->step <= RSTEP_LABEL &&
	    spare_proven(rp->vol, rp->disk, rp->spare_uuid, err, errlen) == -1)
		return NULL;
	return d;
}

static int
step_wipe(struct repair *rp, char *err, size_t errlen)
{
	const struct disk *d = job_disk(rp, err, errlen);

	return d == NULL ? -1 : wipe_disk(d, err, errlen);
}

/*
 * The present members learn the new disk's identity in member m's place
 * and that a replacement is under way; the member's old disk, wherever
 * it is, is no member from this generation on (label_replaced).
 */
static int
step_intent(struct repair *rp, char *err, size_t errlen)
{
	struct volume *v = rp->vol;
	struct label was = v->label;
	struct label_member *me = &v->label.member[rp->member];
	int m = rp->member;

	if (job_disk(rp, err, errlen) == NULL)
		return -1;
	memset(me, 0, sizeof(*me));
	/* A spare keeps its uuid: the commit drops it from the spares by it. */
	if (rp->spare)
		memcpy(me->uuid, rp->spare_uuid, 16);
	else if (getrandom(me->uuid, sizeof(me->uuid), 0) != sizeof(me->uuid)) {
		v->label = was;
		return snprintf(err, errlen, "no random numbers: %s", strerror(errno)), -1;
	}
	snprintf(me->serial, sizeof(me->serial), "%.*s", LABEL_SERIAL_MAX - 1, rp->serial);
	me->size = rp->size;
	v->label.failed &= (uint8_t)~(1U << m);
	v->label.joined[m] = was.generation + 1;
	v->label.intent.op = LABEL_OP_REPLACING;
	v->label.intent.disk = (uint8_t)m;
	v->label.intent.step = RSTEP_INTENT;
	v->label.intent.target = was.generation + 2;
	if (label_change(v, ~(1U << m), &was, err, errlen) == -1)
		return -1;
	/* A failed member's disk may still be here: it is no member now. */
	v->disk[m][0] = '\0';
	return 0;
}

/*
 * The new disk's first label, with its partitions' GUIDs (the proof of
 * every later write checks them), through a descriptor proven to be
 * the disk checked and still blank (Decision 21).
 */
static int
step_label(struct repair *rp, char *err, size_t errlen)
{
	struct volume *v = rp->vol;
	const struct disk *d;
	struct label l;

	if ((d = job_disk(rp, err, errlen)) == NULL ||
	    member_label(v, rp->member, &l, err, errlen) == -1)
		return -1;
	if (label_new_guids(&l) == -1)
		return plan_err(err, errlen, "no random numbers: %s", strerror(errno));
	if (label_write_blank(&d->sys, &l, err, errlen) == -1)
		return -1;
	snprintf(v->disk[rp->member], sizeof(v->disk[0]), "%s", rp->disk);
	v->mlabel[rp->member] = l;
	v->next_slot[rp->member] = 1;
	return 0;
}

/*
 * libfdisk writes through the new member's proven descriptor (its label
 * is the member's now); the kernel's re-read names the disk, so the
 * node is checked around it, as create.c does.
 */
static int
partition_member(struct repair *rp, const struct sys_part *parts, int n, char *err,
    size_t errlen)
{
	return member_partition(rp->vol, rp->member, parts, n, err, errlen);
}

/* Skipped when every partition is there already (a resumed repair). */
static int
step_partition(struct repair *rp, char *err, size_t errlen)
{
	const struct label *l = &rp->vol->mlabel[rp->member];
	struct sys_part parts[SYS_MAX_PARTS];
	char dev[SYS_NAME_MAX];
	int n = 0, have = 0;

	if (job_disk(rp, err, errlen) == NULL)
		return -1;
	for (int t = 0; t < l->ntiers && n < SYS_MAX_PARTS; t++) {
		if (l->tier[t].role == LABEL_NO_ROLE)
			continue;
		parts[n].start = l->tier[t].start;
		parts[n].size = l->tier[t].size;
		memcpy(parts[n].guid, l->tier[t].part_guid, 16);
		memcpy(parts[n].type, l->tier[t].part_type, 16);
		snprintf(parts[n].name, sizeof(parts[n].name), "raidd:%.*s:t%c",
		    VOL_NAME_MAX, l->name, '1' + t);
		have += sys->part_dev(rp->disk, parts[n].start, dev, sizeof(dev)) == 0;
		n++;
	}
	if (have == n)
		return 0;
	return partition_member(rp, parts, n, err, errlen);
}

/* A running member in sync to copy the array's superblock from. */
static int
sb_of_array(const struct sys_md_status *st, struct mdsb *run, char *from, size_t len)
{
	for (int i = 0; i < st->nmembers; i++)
		if (st->member[i].present && strstr(st->member[i].state, "in_sync") &&
		    !strstr(st->member[i].state, "faulty") && member_read_sb(st->member[i].dev, run) == 0) {
			snprintf(from, len, "%s", st->member[i].dev);
			return 0;
		}
	return -1;
}

/* The lowest superblock slot no running member uses and no role names. */
static int
free_dev_number(const struct sys_md_status *st, const struct mdsb *run)
{
	static struct mdsb other;

	for (uint32_t n = 0; n < run->max_dev && n < MDSB_MAX_DEV; n++) {
		int used = run->dev_roles[n] < MDSB_ROLE_FAULTY;

		for (int i = 0; i < st->nmembers && !used; i++)
			used = member_read_sb(st->member[i].dev, &other) == 0 && other.dev_number == n;
		if (!used)
			return (int)n;
	}
	return -1;
}

/* What the new member of one array gets written. */
struct new_member {
	uint8_t	sb[MDSB_BLOCK];
	uint8_t	bm[MDSB_BITMAP_ROOM * 512];
};

/*
 * The new member's superblock: the array's (from a member in sync),
 * in a free slot, role spare, as mdadm --add writes one; its bitmap
 * the array's, every bit set.
 */
static int
new_member_blocks(const struct sys_md_status *st, struct sys_md *md, struct new_member *nm,
    char *err, size_t errlen)
{
	static struct mdsb s;
	uint8_t head[MDSB_BITMAP_SB];
	struct mdsb_bitmap b;
	char from[SYS_NAME_MAX];
	int n;

	if (sb_of_array(st, &s, from, sizeof(from)) == -1)
		return plan_err(err, errlen, "%s: no member in sync to copy from", md->name);
	if ((n = free_dev_number(st, &s)) < 0)
		return plan_err(err, errlen, "%s: no free superblock slot", md->name);
	s.dev_number = (uint32_t)n;
	s.dev_roles[n] = MDSB_ROLE_SPARE;
	s.feature_map &= ~(uint32_t)MD_FEATURE_RECOVERY_OFFSET;
	s.recovery_offset = 0;
	s.utime = (uint64_t)time(NULL);
	if (getrandom(s.device_uuid, sizeof(s.device_uuid), 0) != sizeof(s.device_uuid))
		return plan_err(err, errlen, "no random numbers");
	if (mdsb_encode(&s, nm->sb, sizeof(nm->sb), err, errlen) == -1)
		return -1;
	md->member[0].sb = nm->sb;
	md->member[0].sb_len = sizeof(nm->sb);
	if (!(s.feature_map & MD_FEATURE_BITMAP_OFFSET))
		return 0;
	if (sys->read_at(from, (MDSB_SUPER_OFFSET + (uint64_t)s.bitmap_offset) * 512,
	    head, sizeof(head)) == -1 ||
	    mdsb_bitmap_decode(head, sizeof(head), &b, err, errlen) == -1 ||
	    mdsb_bitmap_encode(&b, 1, nm->bm, sizeof(nm->bm), err, errlen) == -1)
		return plan_err(err, errlen, "%s: the bitmap of %s cannot be copied", md->name, from);
	md->member[0].bitmap = nm->bm;
	md->member[0].bitmap_len = mdsb_bitmap_bytes(&b);
	return 0;
}

/* dev is in the array already (a resumed repair), in sync or being rebuilt. */
static int
in_array(const struct sys_md_status *st, const char *dev)
{
	for (int i = 0; i < st->nmembers; i++)
		if (strcmp(st->member[i].dev, dev) == 0 && !strstr(st->member[i].state, "faulty"))
			return 1;
	return 0;
}

/*
 * The spare's superblock and bitmap go through the new member's proven
 * descriptor, synced, at its partition's place; md is given none to
 * write. md's hot-add takes the partition by name: around it the node
 * still leads to the disk open, else the member is failed out again.
 */
static int
add_through(struct repair *rp, uint64_t start, struct sys_md *md, char *err, size_t errlen)
{
	uint64_t at = start + MDSB_SUPER_OFFSET * 512ULL;
	struct dfd f;

	if (member_open(rp->vol, rp->member, &f, err, errlen) == -1)
		return -1;
	if (sys->fd_write(f.fd, at, md->member[0].sb, md->member[0].sb_len) == -1 ||
	    (md->member[0].bitmap_len && sys->fd_write(f.fd, at + MDSB_BITMAP_OFFSET * 512ULL,
	    md->member[0].bitmap, md->member[0].bitmap_len) == -1) || sys->fd_sync(f.fd) == -1) {
		snprintf(err, errlen, "%s: writing the md superblock: %s", f.name, strerror(errno));
		goto fail;
	}
	md->member[0].sb = md->member[0].bitmap = NULL;
	md->member[0].sb_len = md->member[0].bitmap_len = 0;
	if (dfd_recheck(&f, err, errlen) == -1)
		goto fail;
	if (sys->md_add_new(md) == -1) {
		snprintf(err, errlen, "adding %s to %s: %s", md->member[0].dev, md->name,
		    strerror(errno));
		goto fail;
	}
	if (dfd_recheck(&f, err, errlen) == -1) {
		if (sys->md_fail(md->name, md->member[0].dev) == -1)
			log_warn("%s: failing %s again", md->name, md->member[0].dev);
		goto fail;
	}
	return dfd_close(&f, err, errlen);
fail:
	dfd_abandon(&f);
	return -1;
}

static int
add_to_tier(struct repair *rp, int t, int r, struct new_member *nm, char *err, size_t errlen)
{
	const struct label *l = &rp->vol->mlabel[rp->member];
	struct sys_md md = { .nmembers = 1 };
	struct sys_md_status st;

	volume_md_name(rp->vol, t, md.name, sizeof(md.name));
	md.raid_disks = l->tier[t].nmembers;
	md.member[0].role = r;
	if (sys->part_dev(rp->disk, l->tier[t].start, md.member[0].dev,
	    sizeof(md.member[0].dev)) == -1)
		return plan_err(err, errlen, "%s: no partition at %llu", rp->disk,
		    (unsigned long long)l->tier[t].start);
	if (sys->md_status(md.name, &st) == -1)
		return plan_err(err, errlen, "%s is not running", md.name);
	if (in_array(&st, md.member[0].dev))
		return 0;
	if (new_member_blocks(&st, &md, nm, err, errlen) == -1 ||
	    add_through(rp, l->tier[t].start, &md, err, errlen) == -1)
		return -1;
	log_info("volume %s: %s added to %s in role %d", rp->vol->name, md.member[0].dev,
	    md.name, r);
	return 0;
}

static int
step_add(struct repair *rp, char *err, size_t errlen)
{
	const struct label *l = &rp->vol->mlabel[rp->member];
	struct new_member *nm;
	int rc = 0;

	if (job_disk(rp, err, errlen) == NULL)
		return -1;
	if ((nm = calloc(1, sizeof(*nm))) == NULL)
		return plan_err(err, errlen, "out of memory");
	for (int t = 0; t < l->ntiers && rc == 0; t++)
		if (l->tier[t].role != LABEL_NO_ROLE)
			rc = add_to_tier(rp, t, l->tier[t].role, nm, err, errlen);
	free(nm);
	return rc;
}

/* The replacement is a member from here on; md's rebuild is its own business. */
static int
step_commit(struct repair *rp, char *err, size_t errlen)
{
	struct volume *v = rp->vol;
	struct label was = v->label;

	v->label.intent.op = LABEL_OP_NONE;
	v->label.intent.step = 0;
	v->label.intent.disk = LABEL_NO_DISK;
	v->label.intent.target = 0;
	spare_drop_taken(&v->label);
	return label_change(v, ~0U, &was, err, errlen);
}

/*
 * How far md has rebuilt the new member: 1 done, 0 going on (percent
 * set), -1 it failed or went (err says).
 */
static int
rebuilt(struct repair *rp, double *percent, char *err, size_t errlen)
{
	const struct label *l = &rp->vol->mlabel[rp->member];
	uint64_t done = 0, total = 0;
	int pending = 0;

	for (int t = 0; t < l->ntiers; t++) {
		struct sys_md_status st;
		char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
		int found = 0;

		if (l->tier[t].role == LABEL_NO_ROLE)
			continue;
		volume_md_name(rp->vol, t, md, sizeof(md));
		if (sys->part_dev(rp->disk, l->tier[t].start, dev, sizeof(dev)) == -1 ||
		    sys->md_status(md, &st) == -1)
			return plan_err(err, errlen, "%s or %s went away during the rebuild",
			    rp->disk, md);
		for (int i = 0; i < st.nmembers; i++) {
			if (strcmp(st.member[i].dev, dev) != 0)
				continue;
			if (strstr(st.member[i].state, "faulty") || !st.member[i].present)
				return plan_err(err, errlen, "md failed %s during the rebuild", dev);
			found = 1;
			if (strstr(st.member[i].state, "in_sync"))
				continue;
			pending = 1;
			if (st.sync_total) {
				done += st.sync_done;
				total += st.sync_total;
			}
		}
		if (!found)
			return plan_err(err, errlen, "%s left %s during the rebuild", dev, md);
	}
	*percent = total ? 100.0 * (double)done / (double)total : 0;
	return !pending;
}

/* ---- the job ---- */

/* After the commit the volume may be deleted, its slot reused. */
static int
same_volume(const struct repair *rp)
{
	return rp->vol->name[0] && memcmp(rp->vol->label.volume_uuid, rp->volume_uuid, 16) == 0;
}

static void advance(struct repair *, double after);

static void
repair_event(const char *topic, const struct repair *rp, const char *why)
{
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "name", json_object_new_string(rp->vol->name));
	json_object_object_add(ev, "member", json_object_new_int(rp->member + 1));
	json_object_object_add(ev, "disk", json_object_new_string(rp->disk));
	if (why)
		json_object_object_add(ev, "problem", json_object_new_string(why));
	nas_event(topic, ev);
}

/*
 * A step that failed (not a power cut: raidd still runs). Before the
 * intent nothing of the volume changed; after it, the labels say what
 * a restart would find, and the same resolution runs now.
 */
static void
give_up(struct repair *rp, const char *why)
{
	struct volume *v = rp->vol;
	char err[256];

	if (rp->step == RSTEP_RECOVER) {
		/* The volume is free since the commit; it may even be gone. */
		if (same_volume(rp)) {
			snprintf(v->problem, sizeof(v->problem), "the rebuild of member %d "
			    "stopped: %.180s", rp->member + 1, why);
			volume_check_states();
			repair_event("volume.repair_failed", rp, why);
		}
		log_warnx("repair of member %d with %s: %s", rp->member + 1, rp->disk, why);
		job_fail(rp->job, NAS_ERR_FAILED, "%s while rebuilding", why);
		return;
	}
	v->job = NULL;
	log_warnx("volume %s: repair of member %d with %s: %s while %s", v->name,
	    rp->member + 1, rp->disk, why, step_names[rp->step]);
	if (rp->step >= RSTEP_INTENT && rp->step < RSTEP_COMMIT &&
	    v->label.intent.op == LABEL_OP_REPLACING) {
		const struct disk *d = job_disk(rp, err, sizeof(err));

		/* The new disk must not claim the member with half its parts. */
		v->disk[rp->member][0] = '\0';
		if (rp->step > RSTEP_LABEL && d && wipe_disk(d, err, sizeof(err)) == -1)
			log_warnx("volume %s: %s", v->name, err);
		repair_decide(v);
	}
	snprintf(v->problem, sizeof(v->problem), "the repair of member %d stopped: %.180s",
	    rp->member + 1, why);
	volume_check_states();
	repair_event("volume.repair_failed", rp, why);
	job_fail(rp->job, NAS_ERR_FAILED, "%s while %s", why, step_names[rp->step]);
}

static void
finish(struct repair *rp)
{
	struct volume *v = rp->vol;

	disk_refresh_one(rp->disk);
	v->problem[0] = '\0';
	volume_check_states();
	log_info("volume %s: member %d rebuilt on %s", v->name, rp->member + 1, rp->disk);
	repair_event("volume.repaired", rp, NULL);
	job_done(rp->job, volume_describe(v));
}

static int (*const steps[])(struct repair *, char *, size_t) = {
	[RSTEP_WIPE] = step_wipe, [RSTEP_INTENT] = step_intent,
	[RSTEP_LABEL] = step_label, [RSTEP_PARTITION] = step_partition,
	[RSTEP_ADD] = step_add, [RSTEP_COMMIT] = step_commit,
};

static void
step_timer(struct ev_loop *l, ev_timer *w, int revents)
{
	struct repair *rp = w->data;
	char err[256];
	double pct = 0;
	int rc;

	(void)l;
	(void)revents;
	if (rp->step == RSTEP_RECOVER) {
		if (!same_volume(rp)) {
			give_up(rp, "the volume went away");
			return;
		}
		if ((rc = rebuilt(rp, &pct, err, sizeof(err))) == -1) {
			give_up(rp, err);
			return;
		}
		if (rc == 0) {
			job_progress(rp->job, SETUP_PERCENT + (100 - SETUP_PERCENT) * pct / 100,
			    step_names[RSTEP_RECOVER]);
			advance(rp, poll_seconds);
			return;
		}
		rp->step++;
	}
	if (rp->step == RSTEP_DONE) {
		finish(rp);
		return;
	}
	job_progress(rp->job, SETUP_PERCENT * rp->step / RSTEP_RECOVER, step_names[rp->step]);
	if (steps[rp->step](rp, err, sizeof(err)) == -1) {
		give_up(rp, err);
		return;
	}
	if (rp->step == RSTEP_COMMIT) {
		/*
		 * The member is the volume's now: the volume is free for
		 * uevents, state checks and other calls while md rebuilds
		 * (which may take hours); the job only follows md.
		 */
		rp->vol->job = NULL;
		/* Announced (volume.state) and watched from here (Decision 23). */
		volume_check_states();
		repair_event("volume.rebuilding", rp, NULL);
	}
	rp->step++;
	advance(rp, 0);
}

static void
advance(struct repair *rp, double after)
{
	ev_timer_set(&rp->timer, after, 0.);
	ev_timer_start(nas_loop(), &rp->timer);
}

static void
release(void *arg)
{
	struct repair *rp = arg;

	for (int i = 0; i < MAX_VOLUMES; i++)
		if (active[i] == rp)
			active[i] = NULL;
	ev_timer_stop(nas_loop(), &rp->timer);
	free(rp);
}

/* The volume a running repair is making disk a member of, or NULL. */
const char *
repair_disk_busy(const char *disk)
{
	for (int i = 0; i < MAX_VOLUMES; i++)
		if (active[i] && active[i]->step < RSTEP_DONE &&
		    strcmp(active[i]->disk, disk) == 0)
			return active[i]->vol->name;
	return NULL;
}

static const struct job_ops repair_ops = { .release = release };

static struct job *
start_at(struct volume *v, int m, const struct disk *d, enum repair_step from,
    const uint8_t *spare_uuid, char *err, size_t errlen)
{
	struct repair *rp;

	int slot = 0;

	while (slot < MAX_VOLUMES && active[slot])
		slot++;
	if (slot == MAX_VOLUMES || (rp = calloc(1, sizeof(*rp))) == NULL)
		return snprintf(err, errlen, "too many repairs"), NULL;
	rp->vol = v;
	memcpy(rp->volume_uuid, v->label.volume_uuid, 16);
	rp->member = m;
	rp->step = from;
	snprintf(rp->disk, sizeof(rp->disk), "%s", d->sys.name);
	snprintf(rp->serial, sizeof(rp->serial), "%s", d->sys.serial);
	rp->size = d->sys.size;
	if ((rp->spare = spare_uuid != NULL))
		memcpy(rp->spare_uuid, spare_uuid, 16);
	ev_timer_init(&rp->timer, step_timer, 0., 0.);
	rp->timer.data = rp;
	if ((rp->job = job_start("volume.repair", v->name, &repair_ops, rp)) == NULL) {
		free(rp);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->job = rp->job;
	active[slot] = rp;
	advance(rp, 0);
	return rp->job;
}

struct job *
repair_start(struct volume *v, const char *spec, int force, char *err, size_t errlen)
{
	int code, m = member_to_replace(v);

	if (repair_check(v, spec, force, &code, err, errlen) == -1)
		return NULL;
	log_info("volume %s: member %d is replaced by %s", v->name, m + 1, spec);
	return start_at(v, m, disk_find(spec), RSTEP_WIPE, NULL, err, errlen);
}

int
repair_lacks_member(const struct volume *v)
{
	return member_to_replace(v) >= 0;
}

/*
 * A hot spare takes the place of the member the volume lacks (spare.c
 * proved it and picked it): the checks of volume.repair but the
 * disk's, which is no blank disk; no wipe (its spare label is all it
 * holds, and stays, proven before each write, until the member's label
 * replaces it, so a cut before that leaves it a spare).
 */
struct job *
repair_spare_start(struct volume *v, const struct disk *d, const uint8_t uuid[16],
    char *err, size_t errlen)
{
	uint64_t end;
	int code, m;

	if (v->foreign || v->inconsistent || v->held || !v->assembled || v->job ||
	    (m = member_to_replace(v)) < 0)
		return plan_err(err, errlen, "volume %s lacks no member it can rebuild",
		    v->name), NULL;
	/* As volume.repair: a stopped grow's intent must stand until it is finished. */
	if (v->label.intent.op != LABEL_OP_NONE)
		return plan_err(err, errlen, "volume %s waits for its interrupted %s to "
		    "finish", v->name, v->label.intent.op == LABEL_OP_EXPANDING ? "grow" :
		    "operation"), NULL;
	if (tiers_rebuildable(v, m, &code, err, errlen) == -1 ||
	    room_needed(v, m, &end, err, errlen) == -1)
		return NULL;
	if (PLAN_HEAD + plan_disk_area(d->sys.size) < end)
		return plan_err(err, errlen, "spare %s is too small for member %d", d->sys.name,
		    m + 1), NULL;
	if (spare_proven(v, d->sys.name, uuid, err, errlen) == -1)
		return NULL;
	log_info("volume %s: hot spare %s takes member %d's place", v->name, d->sys.name, m + 1);
	return start_at(v, m, d, RSTEP_INTENT, uuid, err, errlen);
}

/*
 * At start-up, labels that say "replacing": when the new disk carries
 * its label (collected as the member), the repair goes on after the
 * volume is assembled (repair_resume); otherwise the intent is dropped
 * and the member stays missing, the new disk's identity in its place
 * (its old disk was given up when the intent was written). 0 always:
 * the volume stays.
 */
int
repair_decide(struct volume *v)
{
	struct label was = v->label;
	int m = v->label.intent.disk;
	char err[256];

	if (m < v->label.ndisks && v->disk[m][0])
		return 0;
	v->label.intent.op = LABEL_OP_NONE;
	v->label.intent.step = 0;
	v->label.intent.disk = LABEL_NO_DISK;
	v->label.intent.target = 0;
	if (label_change(v, ~0U, &was, err, sizeof(err)) == -1) {
		snprintf(v->problem, sizeof(v->problem), "an interrupted repair could not be "
		    "dropped: %.180s", err);
		return 0;
	}
	log_warnx("volume %s: the repair of member %d was interrupted before the new disk "
	    "held anything: member %d stays missing", v->name, m + 1, m + 1);
	return 0;
}

/* After assembly: a repair the labels say is under way goes on. */
void
repair_resume(struct volume *v)
{
	int m = v->label.intent.disk;
	const struct disk *d;
	char err[256];

	if (v->job || v->label.intent.op != LABEL_OP_REPLACING || m >= v->label.ndisks ||
	    v->disk[m][0] == '\0' || (d = disk_find(v->disk[m])) == NULL)
		return;
	log_warnx("volume %s: the repair of member %d on %s was interrupted: resumed",
	    v->name, m + 1, v->disk[m]);
	if (start_at(v, m, d, RSTEP_PARTITION, NULL, err, sizeof(err)) == NULL)
		log_warnx("volume %s: %s", v->name, err);
}

/*
 * At assembly: a member md was rebuilding when the power went carries
 * its checkpoint (recovery_offset) in its own superblock; md goes on
 * from there. Said in the log, as nothing else shows it once done.
 */
void
repair_note_resume(const struct volume *v, const char *md, const char *dev)
{
	static struct mdsb sb;

	if (member_read_sb(dev, &sb) == 0 && (sb.feature_map & MD_FEATURE_RECOVERY_OFFSET))
		log_info("volume %s: %s resumes its rebuild in %s at sector %llu of %llu",
		    v->name, dev, md, (unsigned long long)sb.recovery_offset,
		    (unsigned long long)sb.size);
}

/* ---- auto-repair: a blank disk in a missing member's bay ---- */

static int auto_repair = 1;

void
repair_set_auto(int on)
{
	auto_repair = on;
}

/*
 * The missing member whose bay the disk is in: the bay it was last seen
 * in, or, when no bay is known (raidd started without it), the only
 * missing member of any volume while no other member was last seen in
 * this bay. NULL when none or several fit.
 */
static struct volume *
waiting_for(const struct disk *d, int *member)
{
	struct volume *v, *found = NULL;
	int unknown = 0, taken = 0;

	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		for (int m = 0; m < v->label.ndisks; m++) {
			if (v->disk[m][0]) {
				taken |= v->bay[m] == d->bay;
				continue;
			}
			if (!v->assembled || v->job || v->held || v->foreign || v->inconsistent)
				continue;
			if (v->bay[m] == d->bay) {
				*member = m;
				return v;
			}
			if (v->bay[m] == 0 && unknown++ == 0) {
				found = v;
				*member = m;
			}
		}
	}
	return unknown == 1 && !taken ? found : NULL;
}

static void
declined(const struct volume *v, const struct disk *d, const char *why)
{
	struct json_object *ev = json_object_new_object();
	char name[SYS_NAME_MAX];

	disk_spec(d, name, sizeof(name));
	log_warnx("volume %s: %s is not taken by itself: %s", v->name, name, why);
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "disk", json_object_new_string(name));
	json_object_object_add(ev, "problem", json_object_new_string(why));
	nas_event("volume.repair_declined", ev);
}

/*
 * Disks that just arrived (a uevent): a blank one in the bay of a
 * degraded volume's missing member starts volume.repair by itself; one
 * that holds anything is never taken, and an event says why.
 */
void
repair_auto(char (*names)[SYS_NAME_MAX], int n)
{
	char err[256], why[256];
	int code, m;

	for (int i = 0; auto_repair && i < n; i++) {
		const struct disk *d = disk_find(names[i]);
		struct volume *v;

		if (d == NULL || d->bay == 0 || d->flash || volume_of_disk(d->sys.name) ||
		    (v = waiting_for(d, &m)) == NULL)
			continue;
		if (d->label_rc != 1 || d->sys.nsigs > 0) {
			if (disk_has_foreign(d, why, sizeof(why)) == 0)
				snprintf(why, sizeof(why), "it carries a raidd label");
			declined(v, d, why);
			continue;
		}
		if (member_to_replace(v) != m) {
			declined(v, d, "another member is to be replaced first: use volume.repair");
			continue;
		}
		if (repair_check(v, d->sys.name, 0, &code, err, sizeof(err)) == -1) {
			declined(v, d, err);
			continue;
		}
		log_info("volume %s: blank disk %s in member %d's bay: repairing", v->name,
		    d->sys.name, m + 1);
		if (start_at(v, m, d, RSTEP_WIPE, NULL, err, sizeof(err)) == NULL)
			log_warnx("volume %s: %s", v->name, err);
	}
}

/* ---- for volume.add_disk (add.c): a new member's label, partitions, arrays ---- */

/* As a repair in flight on member m's disk (v->disk[m]), from step `at`. */
static int
as_repair(struct volume *v, int m, enum repair_step at, struct repair *rp, char *err,
    size_t errlen)
{
	const struct disk *d = disk_find(v->disk[m]);

	memset(rp, 0, sizeof(*rp));
	if (d == NULL)
		return plan_err(err, errlen, "member %d's disk is missing", m + 1);
	rp->vol = v;
	rp->member = m;
	rp->step = at;
	snprintf(rp->disk, sizeof(rp->disk), "%s", d->sys.name);
	snprintf(rp->serial, sizeof(rp->serial), "%s", d->sys.serial);
	rp->size = d->sys.size;
	return 0;
}

/* Member m's partitions, as its label says (skipped when they are there). */
int
repair_member_partitions(struct volume *v, int m, char *err, size_t errlen)
{
	struct repair rp;

	if (as_repair(v, m, RSTEP_PARTITION, &rp, err, errlen) == -1)
		return -1;
	return step_partition(&rp, err, errlen);
}

/* Member m's partition of tier t joins the running array in role r (-1: a spare). */
int
repair_member_join(struct volume *v, int m, int t, int r, char *err, size_t errlen)
{
	struct new_member *nm;
	struct repair rp;
	int rc;

	if (as_repair(v, m, RSTEP_ADD, &rp, err, errlen) == -1)
		return -1;
	if ((nm = calloc(1, sizeof(*nm))) == NULL)
		return plan_err(err, errlen, "out of memory");
	rc = add_to_tier(&rp, t, r, nm, err, errlen);
	free(nm);
	return rc;
}
