/*
 * Finding volumes again from the disks alone: read every disk's label,
 * group the disks by volume, finish or roll back what a power cut
 * interrupted, then start the arrays, the map and the mount. Each step
 * checks what is already running, so a restarted raidd picks up its
 * volumes where it left them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "mdsb.h"
#include "volume.h"
#include "crypt.h"

static void
announce(const char *topic, const struct volume *v)
{
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "problem", v->problem[0] ?
	    json_object_new_string(v->problem) : NULL);
	nas_event(topic, ev);
}

/* Another unit's volume is held: nothing of it is acted on here. */
static void
hold_if_not_ours(struct volume *v)
{
	char hex[40];

	if (unit_is_local(v->label.unit))
		return;
	unit_hex(v->label.unit, hex, sizeof(hex));
	v->held = v->foreign = 1;
	snprintf(v->problem, sizeof(v->problem), "made by another unit (%s): "
	    "volume.import makes it this unit's", hex);
}

/*
 * The volume a label belongs to (by uuid). Names come from disks that
 * may have been anywhere: one that is not valid, or that another volume
 * here already has, gets a unique placeholder and is never assembled -
 * its md and dm names would be someone else's.
 */
static struct volume *
volume_for_label(const struct label *l)
{
	struct volume *v;
	char why[128];
	int clash;

	for (int i = 0; (v = volume_at(i)) != NULL; i++)
		if (memcmp(v->label.volume_uuid, l->volume_uuid, 16) == 0)
			return v;
	clash = volume_find(l->name) != NULL;
	if ((v = volume_add()) == NULL)
		return NULL;
	v->label = *l;
	snprintf(v->name, sizeof(v->name), "%.*s", VOL_NAME_MAX, l->name);
	hold_if_not_ours(v);
	if (!clash && volume_name_valid(l->name, why, sizeof(why)))
		return v;
	snprintf(v->name, sizeof(v->name), "%.16s~%02x%02x%02x%02x", clash ? l->name : "invalid",
	    l->volume_uuid[0], l->volume_uuid[1], l->volume_uuid[2], l->volume_uuid[3]);
	if (!v->held)
		snprintf(v->problem, sizeof(v->problem), clash ?
		    "another volume here is named %s too: not assembled" :
		    "the name in its labels (%s) is not valid: not assembled", l->name);
	v->held = 1;
	return v;
}

/* Puts one labelled disk into its volume. */
static void
collect(const struct disk *d, const struct label *l, int next_slot)
{
	struct volume *v = volume_for_label(l);
	int m = l->position;

	if (v == NULL) {
		log_warnx("%s: too many volumes; %s ignored", d->sys.name, l->name);
		return;
	}
	/* A disk whose place a repair gave to another is no member any more
	   (decide() asks a witness: replacement_seen). */
	if (label_replaced(l, &v->label)) {
		log_info("volume %s: %s was member %d before a repair: left out", v->name,
		    d->sys.name, m + 1);
		v->left_out |= 1U << m;
		return;
	}
	/* The disk of an add rolled back, still with the add's label: no
	   member, whether the volume runs or not (add_left_out, for a disk
	   collected before the newest label). */
	if (add_rolled_back(l, &v->label)) {
		log_info("volume %s: %s was being added as member %d when that was rolled "
		    "back: left out", v->name, d->sys.name, m + 1);
		return;
	}
	/* A running volume's members are known: a disk that comes now and
	   says it replaced one is split brain or from elsewhere (below). */
	if (!v->assembled && v->disk[m][0] && label_replaced(&v->mlabel[m], l)) {
		log_info("volume %s: %s was member %d before a repair: left out", v->name,
		    v->disk[m], m + 1);
		v->disk[m][0] = '\0';
		v->left_out |= 1U << m;
	}
	if (v->disk[m][0]) {
		snprintf(v->problem, sizeof(v->problem),
		    "%s and %s both claim member %d", v->disk[m], d->sys.name, m + 1);
		return;
	}
	/* A running volume never takes a newer label from a returning disk:
	   that disk was written somewhere without the others. */
	if (v->assembled && l->generation > v->label.generation) {
		if (!(v->split & (1U << m)))
			log_warnx("volume %s: %s (member %d) returned with a newer label "
			    "(generation %llu > %llu): split brain, left out", v->name,
			    d->sys.name, m + 1, (unsigned long long)l->generation,
			    (unsigned long long)v->label.generation);
		v->split |= 1U << m;
		return;
	}
	/* A running volume's members are known: a label that names others is not one. */
	if (v->assembled && !label_same_members(l, &v->label)) {
		log_warnx("volume %s: %s claims member %d with a label that describes other "
		    "disks or arrays: left out", v->name, d->sys.name, m + 1);
		return;
	}
	snprintf(v->disk[m], sizeof(v->disk[m]), "%s", d->sys.name);
	v->mlabel[m] = *l;
	v->next_slot[m] = next_slot;
	if (l->generation > v->label.generation) {
		v->label = *l;
		if (!v->held)
			hold_if_not_ours(v);
	}
}

static unsigned
present_mask(const struct volume *v)
{
	unsigned mask = 0;

	for (int m = 0; m < v->label.ndisks; m++)
		if (v->disk[m][0])
			mask |= 1U << m;
	return mask;
}

static void
list_members(unsigned mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int m = 0; m < PLAN_MAX_DISKS && n < len; m++)
		if (mask & (1U << m))
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? ", " : "", m + 1);
}

static int
set_inconsistent(struct volume *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* No safe decision: the volume is listed, never assembled nor erased. */
static int
set_inconsistent(struct volume *v, const char *fmt, ...)
{
	char was[sizeof(v->problem)];
	va_list ap;

	snprintf(was, sizeof(was), "%s", v->problem);
	va_start(ap, fmt);
	vsnprintf(v->problem, sizeof(v->problem), fmt, ap);
	va_end(ap);
	v->inconsistent = 1;
	if (strcmp(was, v->problem) != 0) {
		log_warnx("volume %s: inconsistent: %s", v->name, v->problem);
		announce("volume.inconsistent", v);
	}
	return 0;
}

/*
 * The newest label says member m's disk took its place at generation
 * J (volume.repair). Believed only when a present disk that was a
 * member before J carries a label of generation J or later: it took
 * the repair's intent. The new disk's own label cannot vouch for
 * itself - a disk from elsewhere may claim any place - nor can a disk
 * that joined after J.
 */
static int
replacement_seen(const struct volume *v, int m)
{
	uint64_t j = v->label.joined[m];

	for (int k = 0; k < v->label.ndisks; k++)
		if (k != m && v->disk[k][0] && v->label.joined[k] < j &&
		    v->mlabel[k].generation >= j)
			return 1;
	return 0;
}

static int
replacement_unseen(struct volume *v, int m)
{
	return set_inconsistent(v, "the newest label (generation %llu) says member %d was "
	    "replaced at generation %llu, and no other member present saw that: a disk may "
	    "come from elsewhere; remove the one that does not belong", (unsigned long long)
	    v->label.generation, m + 1, (unsigned long long)v->label.joined[m]), 1;
}

/* Member m's older label knew another disk in a place the newest label says was replaced. */
static int
replacements_seen(struct volume *v, const struct label *l)
{
	/* A disk added since l (past l->ndisks) needs a witness too. */
	for (int j = 0; j < v->label.ndisks; j++)
		if (v->label.joined[j] > l->generation &&
		    memcmp(l->member[j].uuid, v->label.member[j].uuid, 16) != 0 &&
		    !replacement_seen(v, j))
			return replacement_unseen(v, j), 0;
	return 1;
}

/*
 * Present members at the newest generation must say the same, and the
 * older ones must describe the same members and arrays (a newer label
 * that does not was copied from elsewhere and is never obeyed).
 */
static int
members_disagree(struct volume *v)
{
	for (int m = 0; m < PLAN_MAX_DISKS; m++) {
		if (v->disk[m][0] == '\0')
			continue;
		if (m >= v->label.ndisks || !label_same_members(&v->mlabel[m], &v->label))
			return set_inconsistent(v, "member %d's label describes other disks "
			    "or arrays than the newest label (generation %llu): a disk may "
			    "come from elsewhere; remove the one that does not belong", m + 1,
			    (unsigned long long)v->label.generation), 1;
		if (!replacements_seen(v, &v->mlabel[m]))
			return 1;
		if (v->mlabel[m].generation == v->label.generation && !label_agrees(v, m))
			return set_inconsistent(v, "member %d's label differs from the "
			    "others' at generation %llu: volume.delete erases the present "
			    "members", m + 1, (unsigned long long)v->label.generation), 1;
	}
	return 0;
}

/* Member m's disk is here with no raidd label at all: it was never committed. */
static int
here_unlabelled(const struct volume *v, int m)
{
	const struct label_member *me = &v->label.member[m];
	const struct disk *d;

	for (int i = 0; (d = disk_at(i)) != NULL; i++)
		if (d->label_rc == 1 && !d->flash && me->serial[0] && d->sys.size == me->size &&
		    strncmp(d->sys.serial, me->serial, LABEL_SERIAL_MAX - 1) == 0)
			return 1;
	return 0;
}

/*
 * A create is undone only when every member is accounted for and none
 * has the committed label: a member that is absent may have been
 * committed (a torn commit), and then the volume exists.
 */
static int
undo_create(struct volume *v)
{
	unsigned all = (1U << v->label.ndisks) - 1, here = present_mask(v);
	char err[256], list[32];

	for (int m = 0; m < v->label.ndisks; m++)
		if (!(here & (1U << m)) && here_unlabelled(v, m))
			here |= 1U << m;

	if (here != all) {
		list_members(all & ~here, list, sizeof(list));
		return set_inconsistent(v, "its creation was interrupted and member(s) %s "
		    "are absent, which may hold the finished volume: insert them, or "
		    "volume.delete erases the present members", list);
	}
	if (volume_stop(v, err, sizeof(err)) == -1 ||
	    volume_wipe_members(v, err, sizeof(err)) == -1) {
		snprintf(v->problem, sizeof(v->problem), "%s", err);
		return 0;
	}
	log_warnx("volume %s: creation interrupted: rolled back, its disks are free", v->name);
	disk_refresh(1);
	announce("volume.rolled_back", v);
	volume_forget(v);
	return 1;
}

/*
 * A delete is finished on the members it covered (those present when
 * it began). A member that was absent then is never erased by it: it
 * stays, held, until a user deletes or imports it.
 */
static int
finish_delete(struct volume *v)
{
	unsigned covered = v->label.intent.covered, here = present_mask(v);
	char err[256], list[32];

	/* A label from before covered masks: those whose own label says so. */
	for (int m = 0; covered == 0 && m < v->label.ndisks; m++)
		if (v->disk[m][0] && v->mlabel[m].intent.op == LABEL_OP_DELETING &&
		    v->mlabel[m].generation == v->label.generation)
			covered |= 1U << m;
	/* Left unfinished on someone (absent now, or not covered): remembered. */
	if ((here & ~covered) || (covered & ~here))
		unit_deleted_set(v->label.volume_uuid, 1);
	if (volume_stop(v, err, sizeof(err)) == -1 ||
	    volume_wipe_some(v, covered, err, sizeof(err)) == -1) {
		snprintf(v->problem, sizeof(v->problem), "%s", err);
		return 0;
	}
	disk_refresh(1);
	if (here & ~covered) {
		list_members(here & ~covered, list, sizeof(list));
		return set_inconsistent(v, "deleted on this unit while member(s) %s were "
		    "absent: volume.delete erases them, volume.import brings the volume back",
		    list);
	}
	log_warnx("volume %s: deletion interrupted: finished", v->name);
	announce("volume.deleted", v);
	volume_forget(v);
	return 1;
}

/* What the labels say to do before assembly; 1 when v is gone. */
static int
decide(struct volume *v)
{
	char why[200];

	v->inconsistent = 0;
	v->problem[0] = '\0';
	/* A replaced member's disk collected before the newest label was seen. */
	for (int m = 0; m < PLAN_MAX_DISKS; m++)
		if (v->disk[m][0] && label_replaced(&v->mlabel[m], &v->label)) {
			log_info("volume %s: %s was member %d before a repair: left out",
			    v->name, v->disk[m], m + 1);
			v->disk[m][0] = '\0';
			v->left_out |= 1U << m;
		}
	for (int m = 0; m < v->label.ndisks; m++)
		if ((v->left_out & (1U << m)) && !replacement_seen(v, m))
			return replacement_unseen(v, m), 0;
	add_left_out(v);
	if (members_disagree(v))
		return 0;
	switch (v->label.intent.op) {
	case LABEL_OP_CREATING:
		return undo_create(v);
	case LABEL_OP_DELETING:
		return finish_delete(v);
	case LABEL_OP_EXPANDING:	/* carried on by volume_scan: grow_resume() */
		if (grow_decide(v, why, sizeof(why)) == -1)
			return set_inconsistent(v, "%s", why);
		return 0;
	case LABEL_OP_REPLACING:
		return repair_decide(v);
	case LABEL_OP_ADDING:
		/* Before add_decide and any assembly: md must see one level.  A
		   join's too (Decision 133): add_decide takes it to its own. */
		if (add_mend_takeover(v, why, sizeof(why)) == -1)
			return set_inconsistent(v, "%s", why);
		return add_decide(v);
	case LABEL_OP_NONE:
		if (unit_deleted(v->label.volume_uuid))
			return set_inconsistent(v, "deleted on this unit while this member was "
			    "absent: volume.delete erases it, volume.import brings it back");
		return 0;
	default:
		return set_inconsistent(v, "an operation this raidd does not know (%u) was "
		    "interrupted", v->label.intent.op);
	}
}

/* Members that missed the last label write get it now; the others are not rewritten. */
static void
repair_labels(struct volume *v)
{
	char err[256];

	for (int m = 0; m < v->label.ndisks; m++) {
		if (v->disk[m][0] == '\0' || v->mlabel[m].generation == v->label.generation)
			continue;
		log_info("volume %s: member %d label is behind (generation %llu < %llu): rewritten",
		    v->name, m + 1, (unsigned long long)v->mlabel[m].generation,
		    (unsigned long long)v->label.generation);
	}
	if (label_write_all(v, err, sizeof(err)) == -1)
		log_warnx("volume %s: %s", v->name, err);
}

/*
 * A volume held for its name gets it once the rival is gone; one with
 * no member left is forgotten. 1 when v is gone.
 */
static int
reconsider(struct volume *v)
{
	char why[128];

	if (v->job || v->assembled)
		return 0;
	if (present_mask(v) == 0) {
		log_info("volume %s: no member is left: forgotten", v->name);
		volume_forget(v);
		return 1;
	}
	if (!v->held || v->foreign || strcmp(v->name, v->label.name) == 0 ||
	    !unit_is_local(v->label.unit) || unit_deleted(v->label.volume_uuid) ||
	    volume_find(v->label.name) || !volume_name_valid(v->label.name, why, sizeof(why)))
		return 0;
	log_info("volume %s: the other volume named %s is gone: it takes its name",
	    v->name, v->label.name);
	snprintf(v->name, sizeof(v->name), "%s", v->label.name);
	v->held = 0;
	v->inconsistent = 0;
	v->problem[0] = '\0';
	return 0;
}

/* The member entry of dev in st, or NULL. */
static const char *
member_state(const struct sys_md_status *st, const char *dev)
{
	for (int i = 0; i < st->nmembers; i++)
		if (strcmp(st->member[i].dev, dev) == 0)
			return st->member[i].state;
	return NULL;
}

/* The md v1.2 superblock on a member partition. */
int
member_read_sb(const char *dev, struct mdsb *sb)
{
	static uint8_t buf[MDSB_BLOCK];
	char err[MDSB_ERRLEN];

	return sys->read_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)) == 0 &&
	    mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, sb, err, sizeof(err)) == 0 ? 0 : -1;
}

/*
 * Member m's superblock of tier t, from its partition: only one of the
 * tier's own array (set_uuid).  A partition may hold another array's (a
 * disk from elsewhere, a new disk's past life), which says nothing of
 * this one.
 */
int
tier_sb(const struct volume *v, int t, int m, struct mdsb *sb)
{
	char dev[SYS_NAME_MAX];

	if (v->disk[m][0] == '\0' || sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start,
	    dev, sizeof(dev)) == -1 || member_read_sb(dev, sb) == -1 ||
	    memcmp(sb->set_uuid, v->label.tier[t].array_uuid, 16) != 0)
		return -1;
	return 0;
}

static uint64_t
bitmap_cleared(const char *dev, const struct mdsb *sb)
{
	uint8_t buf[MDSB_BITMAP_SB];
	struct mdsb_bitmap b;
	char err[MDSB_ERRLEN];

	if (sb->bitmap_offset <= 0)
		return 0;	/* no bitmap: md recovers the member in full */
	if (sys->read_at(dev, (MDSB_SUPER_OFFSET +
	    (uint64_t)sb->bitmap_offset) * 512, buf, sizeof(buf)) == -1 ||
	    mdsb_bitmap_decode(buf, sizeof(buf), &b, err, sizeof(err)) == -1)
		return UINT64_MAX;
	return b.events_cleared;
}

/*
 * May dev (member m, role r of tier t) rejoin the running array?  Its
 * own superblock must be this array's, in this role, and behind the
 * running members: ahead of them, or calling one of them faulty, it
 * was used on its own (split brain, returns 1); further behind than
 * the bitmap reaches it needs a full rebuild (returns 2). 0 yes, -1 no
 * (why).
 */
static int
may_rejoin(const struct volume *v, int t, int r, const char *dev,
    const struct sys_md_status *st, char *why, size_t len)
{
	const struct label_tier *lt = &v->label.tier[t];
	static struct mdsb sb, run;

	if (member_read_sb(dev, &sb) == -1)
		return plan_err(why, len, "its md superblock cannot be read");
	if (memcmp(sb.set_uuid, lt->array_uuid, 16) != 0)
		return plan_err(why, len, "its md superblock is another array's");
	if (sb.dev_number >= sb.max_dev || sb.dev_roles[sb.dev_number] != r)
		return plan_err(why, len, "its md superblock gives it another role");
	for (int i = 0; i < st->nmembers; i++) {
		if (strncmp(st->member[i].state, "in_sync", 7) != 0 ||
		    strstr(st->member[i].state, "faulty") ||
		    member_read_sb(st->member[i].dev, &run) == -1)
			continue;
		if (sb.events > run.events || (run.dev_number < sb.max_dev &&
		    sb.dev_roles[run.dev_number] >= MDSB_ROLE_FAULTY))
			return plan_err(why, len, "split brain: it was used without %s (its events "
			    "%llu, the array's %llu)", st->member[i].dev,
			    (unsigned long long)sb.events, (unsigned long long)run.events), 1;
		if (sb.events < bitmap_cleared(st->member[i].dev, &run))
			return plan_err(why, len, "it missed more than the bitmap covers: it "
			    "needs a full rebuild"), 2;
		return 0;
	}
	return plan_err(why, len, "no member of the array is in sync to compare with");
}

static void
member_event(const char *topic, const struct volume *v, int m, const char *md, const char *why)
{
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "member", json_object_new_int(m + 1));
	json_object_object_add(ev, "disk", json_object_new_string(v->disk[m]));
	json_object_object_add(ev, "md_device", json_object_new_string(md));
	if (why)
		json_object_object_add(ev, "problem", json_object_new_string(why));
	nas_event(topic, ev);
}

/*
 * md failed member m while its disk stayed: failing for errors. The
 * labels remember it, so it stays out across uevents and boots until
 * a user clears it (volume.clear).
 */
static void
mark_failed(struct volume *v, int m, const char *md)
{
	struct label was = v->label;
	char err[256];

	if (v->label.failed & (1U << m))
		return;
	log_warnx("volume %s: md failed %s (member %d) in %s: it stays out until cleared",
	    v->name, v->disk[m], m + 1, md);
	v->label.failed |= 1U << m;
	for (int t = 0; t < PLAN_MAX_TIERS; t++)
		v->cleared[t] &= ~(1U << m);	/* what the user vouched for failed again */
	if (label_change(v, ~(1U << m), &was, err, sizeof(err)) == -1) {
		log_warnx("volume %s: %s", v->name, err);
		v->label.failed |= 1U << m;	/* kept out in memory at least */
	}
	member_event("volume.member_failed", v, m, md, NULL);
}

typedef void member_fn(struct volume *, int t, int r, const char *md, const char *dev,
    const struct sys_md_status *);

/* fn for every member of v's running arrays whose disk was in the last scan. */
static void
each_md_member(struct volume *v, member_fn *fn)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		volume_md_name(v, t, md, sizeof(md));
		if (lt->kind == TIER_NONE || sys->md_status(md, &st) == -1)
			continue;
		for (int r = 0; r < lt->nmembers; r++) {
			int m = lt->member[r];

			/* An add's spare kept out of md (add_spare_held_out) is not
			   a member md left out: the add's job gives it. */
			if (v->disk[m][0] && !add_spare_held_out(v, t, m) &&
			    sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start, dev,
			    sizeof(dev)) == 0)
				fn(v, t, r, md, dev, &st);
		}
	}
}

/*
 * Faulty with its disk here all along (its device exists, it never
 * left the scan): md failed it for errors. A disk that went and came
 * back left a faulty entry too, and is not one; nor is the entry md
 * keeps of a failure volume.clear just cleared (until rejoin re-adds
 * the member, which removes it).
 */
static void
note_failed(struct volume *v, int t, int r, const char *md, const char *dev,
    const struct sys_md_status *st)
{
	int m = v->label.tier[t].member[r];

	if ((v->pulled | v->cleared[t]) & (1U << m))
		return;
	for (int i = 0; i < st->nmembers; i++)
		if (strcmp(st->member[i].dev, dev) == 0 && st->member[i].present &&
		    strstr(st->member[i].state, "faulty"))
			mark_failed(v, m, md);
}

/*
 * At every state check, not only at a disk's uevent (md's own uevents
 * do not rescan): a failing disk md kicked, then dropped from the bus
 * before the next disk uevent, would otherwise count as pulled and
 * rejoin when it comes back - and again at each flap.
 */
void
volume_note_failed(struct volume *v)
{
	if (v->assembled && !v->job && !v->held)
		each_md_member(v, note_failed);
}

/* Both ways forward for a member that is behind further than the bitmap reaches. */
#define FULL_REBUILD_WAYS "volume.clear rebuilds it from the others in full, " \
	"volume.repair with a new disk replaces it"

/*
 * At start-up, md left out a member whose disk is here and it will not
 * take it back through the bitmap: md failed it, or kicked it as behind,
 * while raidd was not there to write that down (stopped, or the power
 * went right after md's superblock write).  It is a member the volume
 * lacks, failed in the labels as mark_failed does: volume.repair
 * replaces it, a spare takes its place.  One that is only behind (full
 * is set) may be rebuilt in full from the others too, once a user
 * vouches for its disk (volume.clear).
 */
static void
fail_left_out(struct volume *v, int m, const char *md, const char *dev, const char *why,
    int full)
{
	mark_failed(v, m, md);
	snprintf(v->problem, sizeof(v->problem), "member %d (%s) was left out of %s at "
	    "start-up and md does not take it back (%.60s): %s", m + 1, dev, md, why,
	    full ? FULL_REBUILD_WAYS : "volume.repair with a new disk replaces it");
}

/*
 * A member pulled from the running volume came back further behind
 * than the bitmap reaches.  As at start-up (fail_left_out), it is
 * failed in the labels rather than kept out: the same disk, the same
 * answer, whether the unit was running or off meanwhile.
 */
static void
fail_behind(struct volume *v, int m, const char *md, const char *dev)
{
	mark_failed(v, m, md);
	snprintf(v->problem, sizeof(v->problem), "member %d (%s) came back to %s further "
	    "behind than the bitmap reaches: " FULL_REBUILD_WAYS, m + 1, dev, md);
}

/*
 * What a refused member becomes: failed when it is only behind, or at
 * start-up whatever the reason; kept out otherwise, and for split brain
 * always (its data differ from the array's: it is never failed into a
 * state volume.clear would take back).
 */
static void
refuse(struct volume *v, int m, const char *md, const char *dev, const char *why, int rc,
    int boot)
{
	if (rc == 2 && boot) {
		fail_left_out(v, m, md, dev, why, 1);
		return;
	}
	if (rc == 2) {
		fail_behind(v, m, md, dev);
		return;
	}
	if (rc == -1 && boot) {
		fail_left_out(v, m, md, dev, why, 0);
		return;
	}
	if (rc == 1)
		v->split |= 1U << m;
	snprintf(v->problem, sizeof(v->problem), "member %d (%s) is kept "
	    "out of %s: %.150s", m + 1, v->disk[m], md, why);
	member_event(rc == 1 ? "volume.split_brain" : "volume.member_refused",
	    v, m, md, why);
}

/*
 * A member pulled from a running volume and put back rejoins its
 * arrays once its superblock says it may (may_rejoin); md resyncs
 * what it missed through the bitmap.  One behind further than the
 * bitmap reaches rejoins only once volume.clear vouched for its disk:
 * md then takes it as a spare into its role and rebuilds it in full
 * (the Linux seam falls back to that), keeping its progress in the
 * member's superblock (recovery_offset) across a power cut.  Any other
 * refusal is refuse()'s.
 */
static void
rejoin(struct volume *v, int t, int r, const char *md, const char *dev,
    const struct sys_md_status *st, int boot)
{
	int m = v->label.tier[t].member[r], rc;
	const char *state = member_state(st, dev);
	char why[200];

	if ((state && !strstr(state, "faulty")) || (v->label.failed & (1U << m)) ||
	    (v->split & (1U << m)))
		return;
	rc = may_rejoin(v, t, r, dev, st, why, sizeof(why));
	if (rc == 2 && (v->cleared[t] & (1U << m))) {
		log_info("volume %s: %s (member %d) was cleared: md rebuilds it in %s in full",
		    v->name, dev, m + 1, md);
		rc = 0;
	}
	if (rc != 0) {
		log_warnx("volume %s: %s (member %d) does not rejoin %s: %s",
		    v->name, dev, m + 1, md, why);
		refuse(v, m, md, dev, why, rc, boot);
		return;
	}
	if (member_readd(v, m, md, dev, r, why, sizeof(why)) == -1) {
		log_warnx("volume %s: %s could not rejoin %s: %s", v->name, dev, md, why);
		return;
	}
	v->pulled &= ~(1U << m);
	log_info("volume %s: %s (member %d) rejoined %s", v->name, dev, m + 1, md);
	member_event("volume.member_rejoined", v, m, md, NULL);
}

static void
readd_one(struct volume *v, int t, int r, const char *md, const char *dev,
    const struct sys_md_status *st)
{
	rejoin(v, t, r, md, dev, st, 0);
}

static void
readd_at_start(struct volume *v, int t, int r, const char *md, const char *dev,
    const struct sys_md_status *st)
{
	rejoin(v, t, r, md, dev, st, 1);
}

static uint8_t still_out[PLAN_MAX_TIERS];	/* cleared_kept's answer */

static void
note_still_out(struct volume *v, int t, int r, const char *md, const char *dev,
    const struct sys_md_status *st)
{
	const char *state = member_state(st, dev);

	(void)md;
	if (state == NULL || strstr(state, "faulty"))
		still_out[t] |= 1U << v->label.tier[t].member[r];
}

/*
 * volume.clear's mark, tier by tier: it goes from a tier once md holds
 * the member again in that tier's array (an SHR member spans tiers, and
 * the pass that took it back into one must still find the mark at the
 * next, or it fails the member there: fail_behind), and from each tier
 * once the member's disk is not here: the user vouched for the disk
 * present at the clear, and whatever disk comes back proving the member
 * (the same after a trip elsewhere, or a copy behind a bridge that gives
 * no serial) is judged anew.
 */
static void
cleared_kept(struct volume *v)
{
	memset(still_out, 0, sizeof(still_out));
	each_md_member(v, note_still_out);
	for (int t = 0; t < PLAN_MAX_TIERS; t++)
		v->cleared[t] &= still_out[t];
}

static void
readd_members(struct volume *v)
{
	each_md_member(v, note_failed);
	each_md_member(v, readd_one);
	cleared_kept(v);
}

/*
 * Pass 0: this unit's live volumes; 1: this unit's volumes deleted while
 * a member was absent; 2: other units'. An earlier pass keeps its names.
 */
static void
collect_all(int pass)
{
	for (int i = 0; i < disk_count(); i++) {
		struct disk *d = disk_at(i);
		int p;

		if (d->label_rc != 0 || d->flash || volume_of_disk(d->sys.name))
			continue;
		p = !unit_is_local(d->label.unit) ? 2 : unit_deleted(d->label.volume_uuid) ? 1 : 0;
		if (p == pass)
			collect(d, &d->label, d->label_next);
	}
}

void
volume_scan(void)
{
	struct volume *v;
	char err[256];

	/* The labels disk_refresh() read and proved; this unit's live volumes
	   first, so that a volume carried in, or one deleted here while a
	   member was absent, never takes a live one's name. */
	for (int pass = 0; pass < 3; pass++)
		collect_all(pass);
	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		if (reconsider(v)) {
			i--;
			continue;
		}
		if (v->job || v->held)
			continue;
		if (v->assembled) {
			volume_fail_missing(v);
			add_join_settle(v);	/* a joiner gone, or back to a join left */
			readd_members(v);
			continue;
		}
		if (decide(v)) {
			i--;
			continue;
		}
		if (v->inconsistent || volume_waits(v))
			continue;
		repair_labels(v);
		if (v->label.intent.op == LABEL_OP_EXPANDING) {
			grow_resume(v);
			continue;
		}
		if (v->label.intent.op == LABEL_OP_ADDING) {
			add_resume(v);
			continue;
		}
		if (volume_assemble(v, err, sizeof(err)) == -1 ||
		    (!crypt_locked(v) && volume_mount(v, err, sizeof(err)) == -1)) {
			log_warnx("volume %s: %s", v->name, err);
			continue;
		}
		enum vol_state before = v->state;

		/* Members md left out while nobody watched: back in, or failed.
		   Not on a read-only (dirty degraded) array: md takes nobody;
		   nor during a repair, whose new member repair_resume handles. */
		if (!volume_read_only(v) && v->label.intent.op == LABEL_OP_NONE)
			each_md_member(v, readd_at_start);
		cleared_kept(v);
		volume_refresh_state(v);
		dirty_announce(v, before);
		log_info("volume %s: %s, %s", v->name, v->problem[0] ? v->problem : "assembled",
		    volume_state_name(v->state));
		repair_resume(v);
	}
}

/* How many members a tier may lack and still run. */
static int
may_lack(enum tier_kind k, int nmembers)
{
	switch (k) {
	case TIER_RAID1:
		return nmembers - 1;
	case TIER_RAID5:
	case TIER_RAID10:
		return 1;
	default:
		return 0;
	}
}

/*
 * Member m, which the labels call failed, is faulty in tier t's array:
 * the freshest superblock of the tier's present members gives its slot
 * the faulty role (md failed it there), or its own cannot be read.  A
 * disk md failed in one tier (errors in that band) stays in the others,
 * where md has it in sync: left out there, a tier would run degraded, or
 * dirty and degraded, for nothing.
 */
static int
faulty_in_tier(const struct volume *v, int t, int m)
{
	static struct mdsb sb, own;
	const struct label_tier *lt = &v->label.tier[t];
	uint64_t best = 0;
	int found = 0, faulty = 0;

	if (tier_sb(v, t, m, &own) == -1)
		return 1;
	for (int r = 0; r < lt->nmembers; r++) {
		if (tier_sb(v, t, lt->member[r], &sb) == -1 ||
		    (found && sb.events <= best) || own.dev_number >= sb.max_dev ||
		    own.dev_number >= MDSB_MAX_DEV_LIMIT)
			continue;
		found = 1;
		best = sb.events;
		faulty = sb.dev_roles[own.dev_number] == MDSB_ROLE_FAULTY;
	}
	return !found || faulty;
}

/*
 * Members md did not take at assembly (kicked as behind, or bound faulty
 * because the freshest superblock says so) were not failed under raidd's
 * eyes: a disk pulled before the power went looks the same.  As for a
 * pulled member, their superblocks decide (rejoin), not note_failed.
 */
static void
note_not_taken(struct volume *v, const struct sys_md *md, const int *member)
{
	struct sys_md_status st;
	const char *state;

	if (sys->md_status(md->name, &st) == -1)
		return;
	for (int i = 0; i < md->nmembers; i++)
		if ((state = member_state(&st, md->member[i].dev)) == NULL ||
		    strstr(state, "faulty"))
			v->pulled |= 1U << member[i];
}

static int
start_tier(struct volume *v, int t, char *err, size_t errlen)
{
	const struct label_tier *lt = &v->label.tier[t];
	struct sys_md md = { .raid_disks = lt->nmembers };
	struct sys_md_status st;
	int lacking = 0, member[SYS_MAX_MEMBERS];

	volume_md_name(v, t, md.name, sizeof(md.name));
	if (sys->md_status(md.name, &st) == 0)
		return 0;
	/* A grow's new tier holds no data yet: what its partitions carry is not trusted. */
	if (grow_making(&v->label, t))
		return 0;
	for (int r = 0; r < lt->nmembers; r++) {
		int m = lt->member[r];

		/* An add's spare md never reshaped onto: the job gives it. */
		if (v->disk[m][0] && add_spare_held_out(v, t, m))
			continue;
		/* A member md failed for errors (mark_failed) stays out of the
		   arrays md failed it in; volume.clear or a repair handles it. */
		if (v->disk[m][0] == '\0' ||
		    ((v->label.failed & (1U << m)) && faulty_in_tier(v, t, m)) ||
		    sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start,
		    md.member[md.nmembers].dev, sizeof(md.member[0].dev)) == -1) {
			lacking++;
			continue;
		}
		member[md.nmembers] = m;
		md.member[md.nmembers++].role = r;
	}
	if (lacking > may_lack(lt->kind, lt->nmembers)) {
		snprintf(err, errlen, "tier %d (%s) lacks %d of %d members", t + 1,
		    plan_tier_kind_name(lt->kind), lacking, lt->nmembers);
		return -1;
	}
	for (int i = 0; i < md.nmembers; i++)
		repair_note_resume(v, md.name, md.member[i].dev);
	if (sys->md_assemble(&md) == -1 && dirty_start_tier(v, t, &md) == -1) {
		snprintf(err, errlen, "starting %s: %s", md.name, strerror(errno));
		return -1;
	}
	note_not_taken(v, &md, member);
	return 0;
}

/* The dm-linear segment of tier t: its array, or its bare partition. */
static int
tier_segment(struct volume *v, int t, struct sys_seg *seg, char *err, size_t errlen)
{
	const struct label_tier *lt = &v->label.tier[t];
	int m = lt->member[0];

	seg->offset = 0;
	seg->len = lt->tier_size;
	if (lt->kind != TIER_NONE) {
		volume_md_name(v, t, seg->dev, sizeof(seg->dev));
		return 0;
	}
	if (v->disk[m][0] && sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start,
	    seg->dev, sizeof(seg->dev)) == 0)
		return 0;
	snprintf(err, errlen, "tier %d: its disk (serial %s) is missing", t + 1,
	    v->label.member[m].serial);
	return -1;
}

/*
 * The volume's dm-linear table: each tier whole in order, or the map of
 * a grown volume (what a tier gained comes after what it held).
 */
int
volume_segments(struct volume *v, struct sys_seg *segs, int *n, char *err, size_t errlen)
{
	const struct label *l = &v->label;

	*n = l->nsegs ? l->nsegs : l->ntiers;
	for (int i = 0; i < *n; i++) {
		int t = l->nsegs ? l->seg[i].tier : i;

		if (tier_segment(v, t, &segs[i], err, errlen) == -1)
			return -1;
		if (l->nsegs) {
			segs[i].offset = l->seg[i].offset;
			segs[i].len = l->seg[i].len;
		}
	}
	return 0;
}

/* The arrays of a volume whose map waits (a grow carried on): as volume_assemble starts them. */
int
volume_start_arrays(struct volume *v, char *err, size_t errlen)
{
	for (int t = 0; t < v->label.ntiers; t++)
		if (v->label.tier[t].kind != TIER_NONE && start_tier(v, t, err, errlen) == -1)
			return -1;
	return 0;
}

static void
dm_uuid(const struct volume *v, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "NAS-");

	for (int i = 0; i < 16 && n + 2 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", v->label.volume_uuid[i]);
}

/* A failed assembly leaves nothing it started running. */
static int assemble(struct volume *, int, char *, size_t);

int
volume_assemble(struct volume *v, char *err, size_t errlen)
{
	return assemble(v, 0, err, errlen);
}

/*
 * A volume whose grow stopped and cannot go on (Decision 120): its old
 * arrays and the map as far as they hold it, the size it had before.
 */
int
volume_assemble_as_was(struct volume *v, char *err, size_t errlen)
{
	return assemble(v, 1, err, errlen);
}

static void
stop_started(struct volume *v, const int *started)
{
	char md[SYS_NAME_MAX];

	for (int t = 0; t < v->label.ntiers; t++) {
		if (!started[t])
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_stop(md) == -1)
			log_warn("volume %s: stopping %s after a failed assembly", v->name, md);
	}
}

/*
 * The map's segments up to the first one its device does not hold whole
 * (an array a stopped grow has not grown or made yet).  The map only
 * appends and the filesystem grows only after the whole map did, so
 * every byte the volume used before the grow is in this prefix.
 */
static int
backed_prefix(const struct sys_seg *segs, int n)
{
	uint64_t size;

	for (int i = 0; i < n; i++)
		if (sys->dev_size(segs[i].dev, &size) == -1 || segs[i].offset > size ||
		    segs[i].len > size - segs[i].offset)
			return i;
	return n;
}

static int
assemble(struct volume *v, int backed, char *err, size_t errlen)
{
	struct sys_seg segs[PLAN_MAX_SEGS];
	struct sys_md_status st;
	char dm[SYS_NAME_MAX], uuid[64];
	int started[PLAN_MAX_TIERS] = { 0 }, exists, nsegs;

	for (int t = 0; t < v->label.ntiers; t++) {
		if (v->label.tier[t].kind == TIER_NONE)
			continue;
		volume_md_name(v, t, dm, sizeof(dm));
		started[t] = sys->md_status(dm, &st) == -1;
		if (start_tier(v, t, err, errlen) == -1) {
			started[t] = 0;
			goto fail;
		}
	}
	volume_dm_name(v->name, dm, sizeof(dm));
	if ((exists = sys->dm_exists(dm)) == -1) {
		snprintf(err, errlen, "looking for %s: %s", dm, strerror(errno));
		goto fail;
	}
	if (!exists) {
		if (volume_segments(v, segs, &nsegs, err, errlen) == -1)
			goto fail;
		if (backed && (nsegs = backed_prefix(segs, nsegs)) == 0) {
			snprintf(err, errlen, "no array of the volume holds its first bytes");
			goto fail;
		}
		dm_uuid(v, uuid, sizeof(uuid));
		if (sys->dm_create(dm, uuid, segs, nsegs) == -1) {
			snprintf(err, errlen, "mapping %s: %s", dm, strerror(errno));
			goto fail;
		}
	}
	v->assembled = 1;
	/* What kept it from starting before (a failed assembly) is over. */
	if (v->state == VOL_FAILED)
		v->problem[0] = '\0';
	return 0;
fail:
	stop_started(v, started);
	snprintf(v->problem, sizeof(v->problem), "%s", err);
	v->state = VOL_FAILED;
	return -1;
}

int
volume_mount(struct volume *v, char *err, size_t errlen)
{
	static const char *const fs[] = { "none", "ext4", "btrfs" };
	char dm[SYS_NAME_MAX], mp[256];

	if (v->label.fs == LABEL_FS_NONE || !v->assembled)
		return 0;
	volume_mountpoint(v->name, mp, sizeof(mp));
	switch (sys->is_mounted(mp)) {
	case 1:
		return 0;
	case -1:
		snprintf(err, errlen, "is %s mounted? %s", mp, strerror(errno));
		return -1;
	}
	if (crypt_locked(v)) {
		snprintf(err, errlen, "volume %s is locked: volume.unlock opens it", v->name);
		return -1;
	}
	crypt_top_name(v, dm, sizeof(dm));
	if (volume_read_only(v))
		return dirty_mount(v, dm, mp, fs[v->label.fs], err, errlen);
	if (sys->mount(dm, mp, fs[v->label.fs]) == -1) {
		snprintf(err, errlen, "mounting %s on %s: %s", dm, mp, strerror(errno));
		return -1;
	}
	return 0;
}

int
volume_unmount(struct volume *v, char *err, size_t errlen)
{
	char mp[256];

	volume_mountpoint(v->name, mp, sizeof(mp));
	/* Unknown (-1) is tried: umount of a non-mount point is harmless. */
	if (sys->is_mounted(mp) == 0)
		return 0;
	if (sys->umount(mp) == -1) {
		snprintf(err, errlen, "unmounting %s: %s", mp, strerror(errno));
		return -1;
	}
	return 0;
}
