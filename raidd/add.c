/*
 * volume.add_disk: one more disk joins a volume (Decisions 86-89).  A
 * raid5 grows by a member: the disk gets the volume's label and the
 * tier's partition, joins the array as a spare, and md reshapes the
 * array onto it, moving every member's data down into the room below
 * its data offset (plan_data_offset's headroom), so no stripe is ever
 * written where one not yet read lies and no backup file is needed.
 *
 * Crash safety, as grow.c: the first step writes every old member's
 * label with the new disk in it (joined at this generation: the
 * witness assembly asks for, Decision 26) and the intent "adding", the
 * volume's size still the old one, which the arrays hold at every
 * point of the reshape.  Every later step is idempotent.  At the next
 * start (add_decide) the add is carried on when the new disk carries
 * its label, or once md has begun reshaping (md resumes from its
 * reshape_position by itself; a missing new member is then a degraded
 * array's, repaired like any); otherwise it is rolled back, the new
 * disk forgotten.  Only once md has finished do the labels take the
 * bigger size, the map and the filesystem grow, and the intent clear.
 * An encrypted volume's crypt mapping grows between the map and the
 * filesystem, with the passphrase the call gave (Decision 115; grow.c's
 * volume_fs_grow).
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/raid/md_p.h>

#include "job.h"
#include "mdsb.h"
#include "plan-grow.h"
#include "volume.h"
#include "crypt.h"

/* intent.step records these (docs/on-disk-format.md): never renumbered. */
enum add_step {
	AS_WIPE, AS_INTENT, AS_LABEL, AS_PARTITION, AS_START, AS_ADD, AS_RESHAPE,
	AS_OPEN, AS_WAIT, AS_SIZE, AS_MAP, AS_FS, AS_COMMIT, AS_DONE
};

static const char *const as_names[] = {
	"erasing the new disk", "writing the intent", "labelling the new disk",
	"partitioning", "starting arrays", "adding to the array", "starting the reshape",
	"opening the volume", "reshaping", "recording the new size", "extending the map",
	"growing the filesystem", "committing labels", "done",
};

/* The data moves down to half its offset; never into md's metadata and bitmap. */
#define OFFSET_FLOOR	(MDSB_SUPER_OFFSET + MDSB_BITMAP_OFFSET + MDSB_BITMAP_ROOM)

struct add {
	struct volume	*vol;
	struct job	*job;
	enum add_step	 step;
	struct plan	 after;		/* the layout once the disk is in */
	int		 member;	/* the new disk's index; a join's old member */
	int		 join;		/* a join (Decision 133): member's room joins tiers */
	char		 disk[SYS_NAME_MAX];
	char		 serial[64];
	uint64_t	 size;
	uint64_t	 was_size;
	struct crypt_key key;		/* an encrypted volume's, until its mapping grew */
	int		 proven;	/* the key opened the mapping before any step */
	int		 carry;		/* asked again: carry_checks() once proven */
	int		 force;		/* the call's force, for carry_checks() */
	int		 checking;	/* in carry_checks(): its own disk is not busy */
	ev_timer	 timer;
};

static struct add *active[MAX_VOLUMES];
static double poll_seconds = 1.0;

void
add_set_poll(double seconds)
{
	poll_seconds = seconds;
}

const char *
add_disk_busy(const char *disk)
{
	for (int i = 0; i < MAX_VOLUMES; i++)
		if (active[i] && active[i]->step < AS_DONE && !active[i]->checking &&
		    strcmp(active[i]->disk, disk) == 0)
			return active[i]->vol->name;
	return NULL;
}

/* ---- the plan ---- */

/* The one level change done: a raid1 of two becomes a raid5 of three (Decision 106). */
static int
level_change(const struct plan_change *c)
{
	return c->before.level == LEVEL_RAID1 && c->after.level == LEVEL_RAID5 &&
	    c->before.ntiers == 1 && c->after.ntiers == 1 &&
	    c->before.tier[0].nmembers == 2 && c->after.tier[0].nmembers == 3;
}

/*
 * A tier md takes over from a raid1 of two to a raid5 of three (the
 * volume's level change, or an SHR tier's: PLAN_CH_LEVEL).
 */
static int
tier_taken_over(const struct plan_tier *before, const struct plan_tier *after)
{
	return before->kind == TIER_RAID1 && after->kind == TIER_RAID5 &&
	    before->nmembers == 2 && after->nmembers == 3;
}

/*
 * Tier t gains one member, the new disk: md is asked for one more raid
 * device and holds one spare (md_holds_new).  An old disk joining too (a
 * replacement's room in the tier's band) would have md reshape by two
 * with one spare: raid5_start_reshape() takes that, into a degraded array.
 */
static int
new_disk_joins(const struct plan_change *c, int t)
{
	const struct plan_tier *b = &c->before.tier[t], *a = &c->after.tier[t];

	return a->nmembers == b->nmembers + 1 &&
	    a->part[a->nmembers - 1].disk == c->after.ndisks - 1;
}

/*
 * What plan-grow.c plans and this file carries out: a raid5 tier's
 * reshape, a raid1 of two's takeover and reshape, or a jbod's new bare
 * tier.  An SHR volume's old tiers each take the disk (Decision 118);
 * its new tiers were left to volume.grow (shr_only_old_tiers).
 */
static int
steps_known(const struct plan_change *c, char *err, size_t errlen)
{
	unsigned want = c->before.level == LEVEL_JBOD ? PLAN_CH_NEW : PLAN_CH_MEMBERS;

	if (level_change(c))
		want |= PLAN_CH_LEVEL;
	else if ((c->before.level != LEVEL_RAID5 && c->before.level != LEVEL_JBOD &&
	    c->before.level != LEVEL_SHR) || c->after.level != c->before.level)
		return plan_err(err, errlen, "adding a disk to a %s volume is not done by this "
		    "raidd yet%s", plan_level_name(c->before.level),
		    c->before.level == LEVEL_RAID1 ? " (a raid1 of two becomes raid5 with "
		    "level raid5)" : "");
	for (int t = 0; t < c->after.ntiers; t++) {
		unsigned w = t < c->before.ntiers && want == PLAN_CH_NEW ? 0 : want;

		if (c->before.level == LEVEL_SHR && t < c->before.ntiers &&
		    tier_taken_over(&c->before.tier[t], &c->after.tier[t]))
			w |= PLAN_CH_LEVEL;
		if (c->before.level == LEVEL_SHR && (c->what[t] & PLAN_CH_PART))
			return plan_err(err, errlen, "tier %d can grow in place first: "
			    "volume.grow, then add the disk", t + 1);
		if (c->what[t] != w)
			return plan_err(err, errlen, "tier %d would need more than this raidd "
			    "does yet", t + 1);
		if ((w & PLAN_CH_MEMBERS) && !new_disk_joins(c, t))
			return plan_err(err, errlen, "tier %d would take another member besides "
			    "the new disk: volume.grow first", t + 1);
	}
	return 0;
}

/*
 * An SHR add's plan without the new tiers on the room above (a new
 * array, which volume.grow makes with its own intent, Decisions
 * 109-110): they are the last tiers and the last segments of the map.
 * The add reshapes the old tiers only; its last label write is the
 * grow's first (as_commit).
 */
static void
shr_only_old_tiers(struct plan_change *c)
{
	struct plan *a = &c->after;

	if (c->before.level != LEVEL_SHR)
		return;
	while (a->ntiers > c->before.ntiers) {
		int t = --a->ntiers;

		a->size -= a->tier[t].size;
		while (a->nsegs > 0 && a->seg[a->nsegs - 1].tier == t)
			memset(&a->seg[--a->nsegs], 0, sizeof(a->seg[0]));
		memset(&a->tier[t], 0, sizeof(a->tier[t]));
		c->what[t] = 0;
	}
}

/* plan_add_disk(), for what this file carries out. */
static int
plan_add(const struct plan *before, const struct plan_disk *pd, enum vol_level want,
    struct plan_change *c, char *err, size_t errlen)
{
	if (plan_add_disk(before, pd, want, c, err, errlen) == -1)
		return -1;
	shr_only_old_tiers(c);
	return steps_known(c, err, errlen);
}

/*
 * A jbod's new tier is usable as soon as its partition exists: its
 * labels hold the layout after from the first step.  A raid5's hold the
 * old size until md has reshaped.
 */
static int
sized_at_once(const struct label *l)
{
	return l->level == LEVEL_JBOD;
}

/* Where md moves tier t's data: half its offset now, clear of the metadata. */
static int
new_offset(const struct plan_tier *pt, int t, uint64_t *off, char *err, size_t errlen)
{
	*off = pt->data_offset / 2 / 8 * 8;
	if (*off < OFFSET_FLOOR)
		return plan_err(err, errlen, "tier %d: no room below its data (offset %llu "
		    "sectors) for md to reshape into: the array has been reshaped too often",
		    t + 1, (unsigned long long)pt->data_offset);
	return 0;
}

/*
 * The layout with the new disk, from labels that already hold it
 * (intent "adding"): the plan before it, less the new member, then
 * plan_add_disk() again, which is pure.
 */
static int
replan(const struct volume *v, struct plan *after, char *err, size_t errlen)
{
	static struct plan w_plan;
	struct volume *w;
	struct plan_change *c;
	struct plan_disk pd;
	int n = v->label.intent.disk, rc = -1;

	if (n != v->label.ndisks - 1 || n < 1)
		return plan_err(err, errlen, "the intent names member %d of %d", n + 1,
		    v->label.ndisks);
	/* The labels took the new sizes (once md had finished): they are the plan. */
	if (v->label.intent.step >= AS_SIZE || sized_at_once(&v->label))
		return volume_plan_labels(v, after, err, errlen);
	if ((w = malloc(sizeof(*w))) == NULL || (c = malloc(sizeof(*c))) == NULL) {
		free(w);
		return plan_err(err, errlen, "out of memory");
	}
	*w = *v;
	w->label.ndisks = (uint8_t)n;
	for (int t = 0; t < w->label.ntiers; t++) {
		struct label_tier *lt = &w->label.tier[t];

		while (lt->nmembers > 0 && lt->member[lt->nmembers - 1] == n)
			lt->nmembers--;
	}
	memset(&pd, 0, sizeof(pd));
	snprintf(pd.id, sizeof(pd.id), "%s", v->disk[n][0] ? v->disk[n] :
	    v->label.member[n].serial);
	pd.size = v->label.member[n].size;
	/* plan_add_disk() fills all of c, before included: its input lives apart. */
	if (volume_plan_labels(w, &w_plan, err, errlen) == 0 &&
	    plan_add(&w_plan, &pd, (enum vol_level)(v->label.intent.level ?
	    v->label.intent.level : v->label.level), c, err, errlen) == 0) {
		*after = c->after;
		rc = 0;
	}
	free(c);
	free(w);
	return rc;
}

/* The joiner is the one member plan_joiners names, in exactly the tiers l covers. */
static int
joiners_kept(const struct plan_change *c, const struct label *l, char *err, size_t errlen)
{
	int disks[PLAN_MAX_DISKS], n, m = l->intent.disk;

	for (int t = 0; t < c->after.ntiers; t++) {
		n = plan_joiners(c, t, disks);
		if (label_joins(l, t) ? n == 1 && disks[0] == m : n == 0)
			continue;
		return plan_err(err, errlen, "tier %d: the labels join member %d there%s, the "
		    "plan %d member%s", t + 1, m + 1, label_joins(l, t) ? "" : " not", n,
		    n == 1 ? "" : "s");
	}
	return 0;
}

/*
 * A join's layout (Decision 133) from labels that already list its
 * member: the plan before it (the joiner out of the covered tiers' last
 * roles), then plan_grow_join() for that member and the covered tiers
 * with the disk sizes the labels record, as add_join_first() planned
 * it: pure, and blind to the other rooms that join later in the same
 * volume.grow (a replacement's label records its whole disk).  The
 * joiner must be the one member it names, in exactly the covered tiers:
 * anything else is no join this raidd planned.  Once the labels took the
 * sizes (AS_SIZE) they are the plan.
 */
int
add_join_replan(const struct volume *v, struct plan *after, char *err, size_t errlen)
{
	static struct plan before;
	uint64_t size[PLAN_MAX_DISKS];
	struct plan_change *c;
	struct volume *w;
	int m = v->label.intent.disk, rc = -1;

	if (!label_is_join(&v->label))
		return plan_err(err, errlen, "the labels hold no join");
	if (v->label.intent.step >= AS_SIZE)
		return volume_plan_labels(v, after, err, errlen);
	if ((w = malloc(sizeof(*w))) == NULL || (c = malloc(sizeof(*c))) == NULL) {
		free(w);
		return plan_err(err, errlen, "out of memory");
	}
	*w = *v;
	for (int t = 0; t < w->label.ntiers; t++) {
		struct label_tier *lt = &w->label.tier[t];

		if (label_joins(&v->label, t) && lt->nmembers > 0 &&
		    lt->member[lt->nmembers - 1] == m)
			lt->nmembers--;
	}
	for (int k = 0; k < w->label.ndisks; k++)
		size[k] = w->label.member[k].size;
	if (volume_plan_labels(w, &before, err, errlen) == 0 &&
	    plan_grow_join(&before, size, m, v->label.intent.covered, c, err, errlen) == 0) {
		shr_only_old_tiers(c);
		if (joiners_kept(c, &v->label, err, errlen) == 0) {
			*after = c->after;
			rc = 0;
		}
	}
	free(c);
	free(w);
	return rc;
}

/*
 * md takes a raid1 over as raid5 only with exactly two raid disks
 * (raid5_takeover_raid1), and picks the chunk itself: the largest up to
 * 64 KiB that divides the array.  The labels record PLAN_TAKEOVER_CHUNK,
 * so an array md would give another chunk is refused here, before
 * anything is written.
 */
static int
takeover_ok(struct volume *v, int t, char *err, size_t errlen)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	volume_md_name(v, t, md, sizeof(md));
	if (sys->md_status(md, &st) == -1)
		return plan_err(err, errlen, "%s is not running", md);
	if (strcmp(st.level, "raid1") != 0 || st.raid_disks != 2)
		return plan_err(err, errlen, "%s is %s of %d raid disks: md takes only a raid1 "
		    "of two over as raid5", md, st.level, st.raid_disks);
	if (st.size % (PLAN_TAKEOVER_CHUNK * 512ULL) != 0)
		return plan_err(err, errlen, "%s holds %llu bytes, no multiple of md's %u KiB "
		    "raid5 chunk", md, (unsigned long long)st.size, PLAN_TAKEOVER_CHUNK / 2);
	return 0;
}

int
add_check(struct volume *v, const char *spec, const char *level, int force,
    struct plan *after, int *code, char *err, size_t errlen)
{
	static struct plan before;
	struct plan_change *c;
	struct plan_disk pd;
	const struct disk *d;
	enum vol_level want;
	uint64_t off;
	int rc = -1;

	*code = NAS_ERR_REFUSED;
	if (v->held || v->inconsistent || v->foreign)
		return plan_err(err, errlen, "volume %s is not in use here: %s", v->name,
		    v->problem);
	if (v->job)
		return plan_err(err, errlen, "volume %s is busy with another job", v->name);
	if (v->label.intent.op != LABEL_OP_NONE || !v->assembled)
		return plan_err(err, errlen, "volume %s is not running%s", v->name,
		    v->label.intent.op ? " or has an operation to finish" : "");
	if (volume_state_now(v) != VOL_CLEAN)
		return plan_err(err, errlen, "volume %s is %s: a disk joins only a clean "
		    "volume (md reshapes no degraded or syncing array safely)", v->name,
		    volume_state_name(volume_state_now(v)));
	want = (enum vol_level)v->label.level;
	if (level && plan_level_parse(level, &want) == -1) {
		*code = NAS_ERR_INVALID;
		return plan_err(err, errlen, "unknown level %s", level);
	}
	if ((d = disk_find(spec)) == NULL) {
		*code = NAS_ERR_NOT_FOUND;
		return plan_err(err, errlen, "no disk %s", spec);
	}
	if (disk_check_free(force, d, code, err, errlen) == -1)
		return -1;
	if (d->sys.serial[0] == '\0') {
		*code = NAS_ERR_INVALID;
		return plan_err(err, errlen, "%s reports no serial: an interrupted add finds "
		    "its disk by it", spec);
	}
	if ((c = malloc(sizeof(*c))) == NULL)
		return plan_err(err, errlen, "out of memory");
	memset(&pd, 0, sizeof(pd));
	snprintf(pd.id, sizeof(pd.id), "%s", d->sys.name);
	pd.size = d->sys.size;
	*code = NAS_ERR_INVALID;
	if (volume_plan(v, &before, err, errlen) == -1 ||
	    plan_add(&before, &pd, want, c, err, errlen) == -1)
		goto out;
	for (int t = 0; t < c->after.ntiers; t++)
		if (c->after.tier[t].kind != TIER_NONE &&
		    new_offset(&c->before.tier[t], t, &off, err, errlen) == -1)
			goto out;
	for (int t = 0; t < c->before.ntiers; t++)
		if (tier_taken_over(&c->before.tier[t], &c->after.tier[t]) &&
		    takeover_ok(v, t, err, errlen) == -1) {
			*code = NAS_ERR_REFUSED;
			goto out;
		}
	*after = c->after;
	rc = 0;
out:
	free(c);
	return rc;
}

/* ---- the steps ---- */

static const struct disk *
job_disk(const struct add *a, char *err, size_t errlen)
{
	const struct disk *d = disk_find(a->disk);

	if (d == NULL || strcmp(d->sys.serial, a->serial) != 0 || d->sys.size != a->size) {
		snprintf(err, errlen, "disk %s (serial %s) went away", a->disk, a->serial);
		return NULL;
	}
	return d;
}

static int
as_wipe(struct add *a, char *err, size_t errlen)
{
	const struct disk *d;

	if (a->join)
		return 0;	/* an old member: its disk holds the volume */
	d = job_disk(a, err, errlen);
	return d == NULL ? -1 : wipe_disk(d, err, errlen);
}

/*
 * The intent "adding" member a->member, written to every other member at
 * the next generation; v's label is was again when none took it.
 */
static int
intent_write(struct add *a, const struct label *was, int level, char *err, size_t errlen)
{
	struct volume *v = a->vol;

	v->label.intent.op = LABEL_OP_ADDING;
	v->label.intent.step = AS_INTENT;
	v->label.intent.level = (uint8_t)level;
	v->label.intent.disk = (uint8_t)a->member;
	v->label.intent.target = was->generation + 2;
	if (label_change(v, ~(1U << a->member), was, err, errlen) == -1) {
		if (v->label.generation == was->generation)
			v->label = *was;
		return -1;
	}
	return 0;
}

/* The joiner's place in tier t of the plan: its role, band; -1 if none. */
static int
join_role(const struct add *a, int t)
{
	const struct plan_tier *pt = &a->after.tier[t];
	int r = pt->nmembers - 1;

	return t < a->after.ntiers && r >= 0 && pt->part[r].disk == a->member ? r : -1;
}

/*
 * A join's first labels (Decision 133): the others' first, listing the
 * joiner m in each joined tier's last role with the intent (covered),
 * then m's own at that same generation, giving it its role, band and new
 * GUIDs there.  A cut between the two leaves m's label behind, with no
 * role in the joined tiers: the others' join with m's partition missing,
 * which the proof exempts; m never holds a role the others do not list.
 */
static int
join_intent(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	struct label was = v->label, own;
	int m = a->member, r;

	for (int t = 0; t < was.ntiers; t++) {
		struct label_tier *lt = &v->label.tier[t];

		/* a tier it serves already ends with it too: not joined */
		if ((r = join_role(a, t)) < 0 || r < lt->nmembers)
			continue;
		if (r != lt->nmembers || r >= PLAN_MAX_DISKS)
			return plan_err(err, errlen, "tier %d: the plan gives member %d role %d "
			    "of a tier of %d", t + 1, m + 1, r, lt->nmembers);
		lt->member[lt->nmembers++] = (uint8_t)m;
		v->label.intent.covered |= 1U << t;
	}
	/* m's disk grew in place since its label was written (a virtual
	   disk): the labels record the size its new partition lies in, as a
	   grow's first label does, or m's own would hold a partition past
	   its disk (label_check) and a replan would have m reach no tier. */
	if (a->after.disk[m].size > v->label.member[m].size)
		v->label.member[m].size = a->after.disk[m].size;
	if (intent_write(a, &was, 0, err, errlen) == -1)
		return -1;
	label_for_member(v, m, &own);
	for (int t = 0; t < own.ntiers; t++) {
		if (!label_joins(&v->label, t))
			continue;
		r = join_role(a, t);
		own.tier[t].role = (uint8_t)r;
		own.tier[t].start = a->after.tier[t].part[r].start;
		own.tier[t].size = a->after.tier[t].part[r].size;
		if (label_tier_guids(&own.tier[t]) == -1)
			return plan_err(err, errlen, "no random numbers: %s", strerror(errno));
	}
	return label_write_own(v, m, &own, err, errlen);
}

/* The old members learn the new disk, in the roles the plan gives it. */
static int
as_intent(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	struct label was = v->label;
	struct label_member *me = &v->label.member[a->member];
	int n = a->member;

	if (a->join)
		return join_intent(a, err, errlen);
	if (job_disk(a, err, errlen) == NULL)
		return -1;
	memset(me, 0, sizeof(*me));
	if (getrandom(me->uuid, sizeof(me->uuid), 0) != sizeof(me->uuid))
		return plan_err(err, errlen, "no random numbers: %s", strerror(errno));
	snprintf(me->serial, sizeof(me->serial), "%.*s", LABEL_SERIAL_MAX - 1, a->serial);
	me->size = a->size;
	v->label.ndisks = (uint8_t)(n + 1);
	v->label.joined[n] = was.generation + 1;
	for (int t = 0; t < a->after.ntiers; t++) {
		const struct plan_tier *pt = &a->after.tier[t];

		for (int r = 0; r < pt->nmembers; r++)
			v->label.tier[t].member[r] = (uint8_t)pt->part[r].disk;
		v->label.tier[t].nmembers = (uint8_t)pt->nmembers;
	}
	if (sized_at_once(&v->label)) {
		for (int t = was.ntiers; t < a->after.ntiers; t++) {
			struct label_tier *lt = &v->label.tier[t];

			memset(lt, 0, sizeof(*lt));
			lt->kind = (uint8_t)a->after.tier[t].kind;
			lt->chunk = a->after.tier[t].chunk;
			lt->role = LABEL_NO_ROLE;
			lt->nmembers = (uint8_t)a->after.tier[t].nmembers;
			for (int r = 0; r < lt->nmembers; r++)
				lt->member[r] = (uint8_t)a->after.tier[t].part[r].disk;
			/* the old members' own view of it: not theirs */
			for (int m = 0; m < n; m++) {
				memset(&v->mlabel[m].tier[t], 0, sizeof(v->mlabel[m].tier[t]));
				v->mlabel[m].tier[t].role = LABEL_NO_ROLE;
			}
		}
		v->label.ntiers = (uint8_t)a->after.ntiers;
		grow_label_from(v, &a->after);
	}
	/* The level the labels take at AS_SIZE; md takes it at AS_RESHAPE. */
	return intent_write(a, &was, a->after.level != was.level ? a->after.level : 0,
	    err, errlen);
}

/* The label the new disk carries: the volume's, with its own partitions from the plan. */
static int
new_member_label(const struct add *a, struct label *l, char *err, size_t errlen)
{
	*l = a->vol->label;
	l->position = (uint8_t)a->member;
	for (int t = 0; t < l->ntiers; t++) {
		const struct plan_tier *pt = &a->after.tier[t];
		struct label_tier *lt = &l->tier[t];

		lt->role = LABEL_NO_ROLE;
		lt->start = lt->size = 0;
		/* the volume's GUIDs are another disk's partitions': new ones below */
		memset(lt->part_guid, 0, sizeof(lt->part_guid));
		memset(lt->part_type, 0, sizeof(lt->part_type));
		for (int r = 0; t < a->after.ntiers && r < pt->nmembers; r++)
			if (pt->part[r].disk == a->member) {
				lt->role = (uint8_t)r;
				lt->start = pt->part[r].start;
				lt->size = pt->part[r].size;
			}
	}
	return label_check(l, err, errlen);
}

/* The new disk's first label, through a descriptor proven blank (Decision 21). */
static int
as_label(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	const struct disk *d;
	struct label l;

	if (a->join || v->disk[a->member][0])
		return 0;	/* carried on, or an old member: it has it */
	if ((d = job_disk(a, err, errlen)) == NULL || new_member_label(a, &l, err, errlen) == -1)
		return -1;
	if (label_new_guids(&l) == -1)
		return plan_err(err, errlen, "no random numbers: %s", strerror(errno));
	if (label_write_blank(&d->sys, &l, err, errlen) == -1)
		return -1;
	snprintf(v->disk[a->member], sizeof(v->disk[0]), "%s", a->disk);
	v->mlabel[a->member] = l;
	v->next_slot[a->member] = 1;
	return 0;
}

/*
 * Tier t's array is md's part of this job: every tier of an add, only
 * the joined (covered) tiers of a join.  A join's other tiers keep their
 * members: asked to reshape to the count they have, md would take it as
 * no change, but the job must not read them as begun or reshaped either
 * (Decision 125, finding 2).
 */
static int
tier_asked(const struct volume *v, int join, int t)
{
	if (v->label.tier[t].kind == TIER_NONE)
		return 0;
	return !join || label_joins(&v->label, t);
}

/* Steps on the new disk are skipped when it went missing after md began (degraded). */
static int
new_disk_gone(const struct add *a)
{
	return a->vol->disk[a->member][0] == '\0';
}

/*
 * A joiner's new partitions, each zeroed and proven free as a grow's new
 * one (grow_part_new): its band may hold an old array, and its table
 * holds the partitions it serves with, which repair's step_partition
 * would write over.
 */
static int
join_partition(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;

	if (v->disk[a->member][0] == '\0')
		return plan_err(err, errlen, "member %d is not here", a->member + 1);
	for (int t = 0; t < v->label.ntiers; t++)
		if (label_joins(&v->label, t) &&
		    grow_part_new(v, a->member, t, &a->after.tier[t], err, errlen) == -1)
			return -1;
	return 0;
}

static int not_taken_yet(const struct volume *);

static int
as_partition(struct add *a, char *err, size_t errlen)
{
	/* A joiner gone after md began is a member lost: md goes on degraded. */
	if (a->join && new_disk_gone(a) && !not_taken_yet(a->vol))
		return 0;
	if (a->join)
		return join_partition(a, err, errlen);
	if (new_disk_gone(a))
		return 0;
	return repair_member_partitions(a->vol, a->member, err, errlen);
}

static int
as_start(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	if (volume_start_arrays(v, err, errlen) == -1)
		return -1;
	/* md reshapes no read-only array, nor grows a filesystem on one: a
	   dirty degraded start (Decision 116) is made writable first. */
	for (int t = 0; t < v->label.ntiers; t++) {
		if (v->label.tier[t].kind == TIER_NONE)
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_status(md, &st) == 0 && strcmp(st.array_state, "readonly") == 0)
			return plan_err(err, errlen, "%s runs read-only (written when the power "
			    "went while it lacked a member): volume.start with force carries the "
			    "add on", md);
	}
	return 0;
}

static int old_members_whole(const struct volume *);
static int array_whole(const struct volume *, int t);

/*
 * Tier t's array, which md has not reshaped onto the new partition yet
 * (the old count: a raid1, a raid5 of two md took over, or a tier after
 * one md began), lacks a member (-1) or recovers (1: later).  Given the new
 * partition as a spare, md would rebuild the lost member onto it, and
 * the disk, its superblock then giving that role, would be judged
 * foreign once the member is back (Decision 133).  The add waits for
 * the array to be whole; until then the start leaves the spare out
 * (add_spare_held_out).
 */
static int
spare_stands_in(const struct add *a, int t, char *err, size_t errlen)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	volume_md_name(a->vol, t, md, sizeof(md));
	if (sys->md_status(md, &st) == -1 || st.raid_disks == a->after.tier[t].nmembers ||
	    array_whole(a->vol, t))
		return 0;
	/* md rebuilds a member it took back at the start: the job polls. */
	if (strcmp(st.sync_action, "recover") == 0)
		return 1;
	return plan_err(err, errlen, "%s lacks a member: md would rebuild it onto member "
	    "%d's new partition; the %s waits until it is whole", md, a->member + 1,
	    a->join ? "join" : "add");
}

/*
 * Tier t's array, not at its new count yet, frozen as mdadm --grow holds
 * it: md recovers onto any spare an array holds the moment a member
 * fails, so from the spare's add until md reshapes onto it (as_reshape)
 * no recovery may start; a member lost meanwhile leaves the array
 * degraded and the spare a spare (the job stops, spares_out).
 */
static int
tier_freeze(const struct add *a, int t, char *err, size_t errlen)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	volume_md_name(a->vol, t, md, sizeof(md));
	if (sys->md_status(md, &st) == -1 || st.raid_disks == a->after.tier[t].nmembers)
		return 0;
	if (sys->md_freeze(md, 1) == -1)
		return plan_err(err, errlen, "%s: freezing recovery: %s", md, strerror(errno));
	return 0;
}

/* The new partition of tier t joins its array as a spare, when it may: 1 later. */
static int
spare_to_tier(struct add *a, int t, char *err, size_t errlen)
{
	int r;

	if ((r = spare_stands_in(a, t, err, errlen)) != 0)
		return r;
	if (tier_freeze(a, t, err, errlen) == -1)
		return -1;
	return repair_member_join(a->vol, a->member, t, -1, err, errlen);
}

/*
 * The new partition joins each array it will be a member of, as a spare.
 * Not while an old member is lost and md has not begun: md would rebuild
 * the lost member onto the spare, against the labels (add_decide);
 * volume.add_disk then undoes the add (carry_checks), so a repair can
 * have the volume.
 */
/*
 * The joiner's new partitions join the joined tiers' arrays as spares,
 * never the arrays it serves already.  Only while every old array is
 * whole, checked right before: md rebuilds a lost member onto a spare at
 * once, against the labels, and the joiner, its superblock then giving
 * it another role, would be judged foreign and dropped from every tier
 * it serves (Decision 125, finding 1).
 */
static int
join_add(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	int r;

	/* Once md began, its spares have roles: a member lost since is a
	   degraded array's, and the joiner gone one of them. */
	if (!not_taken_yet(v) && new_disk_gone(a))
		return 0;
	if (not_taken_yet(v) && !old_members_whole(v))
		return plan_err(err, errlen, "an array lacks a member or recovers: md would "
		    "rebuild it onto member %d's new partition", a->member + 1);
	for (int t = 0; t < v->label.ntiers; t++)
		if (label_joins(&v->label, t) && (r = spare_to_tier(a, t, err, errlen)) != 0)
			return r;
	return 0;
}

static int
as_add(struct add *a, char *err, size_t errlen)
{
	const struct label *l = &a->vol->mlabel[a->member];
	int r;

	if (a->join)
		return join_add(a, err, errlen);
	if (new_disk_gone(a))
		return 0;
	if (!sized_at_once(l) && not_taken_yet(a->vol) && !old_members_whole(a->vol))
		return plan_err(err, errlen, "an array lacks a member: md would rebuild it "
		    "onto the new disk; volume.add_disk undoes the add, then repair the volume");
	for (int t = 0; t < l->ntiers; t++)
		if (l->tier[t].role != LABEL_NO_ROLE && l->tier[t].kind != TIER_NONE &&
		    (r = spare_to_tier(a, t, err, errlen)) != 0)
			return r;
	return 0;
}

/*
 * md has tier t at its new member count already, or holds the new
 * member's partition as a working spare: only then may it be asked to
 * reshape.  The intent's step is not enough: a reshape md refused
 * (EBUSY) or a power cut before md was asked leaves the step recorded
 * with md untouched, and md reshapes without a spare into a degraded
 * array.
 */
/*
 * An SHR tier other than t that md has at its new member count: md has
 * begun the add there (as_reshape asks tier by tier), and will not go
 * back.
 */
static int
md_began_elsewhere(const struct add *a, int t)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	if (a->vol->label.level != LEVEL_SHR)
		return 0;
	for (int u = 0; u < a->after.ntiers; u++) {
		if (u == t || a->after.tier[u].kind == TIER_NONE || !tier_asked(a->vol, a->join, u))
			continue;
		volume_md_name(a->vol, u, md, sizeof(md));
		if (sys->md_status(md, &st) == 0 && st.raid_disks == a->after.tier[u].nmembers)
			return 1;
	}
	return 0;
}

static int
md_holds_new(const struct add *a, int t, const char *md, char *err, size_t errlen)
{
	const struct volume *v = a->vol;
	struct sys_md_status st;
	char dev[SYS_NAME_MAX];

	if (sys->md_status(md, &st) == -1)
		return plan_err(err, errlen, "%s is not running", md);
	if (st.raid_disks == a->after.tier[t].nmembers)
		return 0;
	/* The new disk went after md began another tier (a cut between two
	   tiers' writes, Decision 124): it is a member lost, as in that
	   tier; this one is reshaped without it too, and a repair replaces
	   it in both.  The volume has lost its redundancy already: the other
	   tier runs degraded, and the joined map needs every tier. */
	if (v->disk[a->member][0] == '\0' && md_began_elsewhere(a, t)) {
		log_warnx("volume %s: the new disk is gone after md began: %s is reshaped "
		    "without it, degraded", v->name, md);
		return 0;
	}
	if (v->disk[a->member][0] == '\0' || sys->part_dev(v->disk[a->member],
	    v->mlabel[a->member].tier[t].start, dev, sizeof(dev)) == -1)
		return plan_err(err, errlen, "the new disk is gone: %s is not reshaped "
		    "without it", md);
	for (int i = 0; i < st.nmembers; i++)
		if (strcmp(st.member[i].dev, dev) == 0 && st.member[i].present &&
		    st.member[i].slot < 0 && !strstr(st.member[i].state, "faulty"))
			return 0;
	return plan_err(err, errlen, "%s holds no working spare %s: not reshaped without "
	    "it", md, dev);
}

/*
 * The labels (until AS_SIZE) say md takes tier t over: a raid1 a third
 * disk joins, the volume's (Decision 106) or an SHR tier's (118).
 */
static int
label_takes_over(const struct label *l, int t)
{
	return l->intent.op == LABEL_OP_ADDING && l->tier[t].kind == TIER_RAID1 &&
	    l->tier[t].nmembers == 3;
}

/*
 * md's raid1 of two becomes raid5 (Decision 106).  Only after the labels
 * say AS_RESHAPE: before that md is raid1 for sure, after it md is asked,
 * and a level it has already is no second takeover.
 */
static int
takeover(struct volume *v, const struct plan_tier *pt, const char *md, char *err,
    size_t errlen)
{
	char level[16];

	snprintf(level, sizeof(level), "raid%d", pt->md_level);
	if (sys->md_set_level(md, level) == -1)
		return plan_err(err, errlen, "%s: md refused level %s: %s", md, level,
		    strerror(errno));
	log_info("volume %s: %s is %s now", v->name, md, level);
	return 0;
}

/*
 * An old member of tier t failed after the new partition joined as a
 * spare, md frozen (tier_freeze): md at raid5_start_reshape would put the
 * spare into the lost member's role, not the new one, and the disk would
 * be judged foreign.  The job stops; spares_out takes the spare back out.
 */
static int
lost_while_frozen(const struct add *a, int t, const char *md, char *err, size_t errlen)
{
	struct sys_md_status st;

	if (sys->md_status(md, &st) == -1 || st.raid_disks == a->after.tier[t].nmembers ||
	    new_disk_gone(a) || array_whole(a->vol, t))
		return 0;
	return plan_err(err, errlen, "%s lost a member before md reshaped onto member %d's "
	    "new partition: not reshaped", md, a->member + 1);
}

/*
 * The labels say the reshape has begun before md is asked (add_decide
 * reads it).  An SHR volume's tiers are asked in order, each as soon as
 * the one before has its new count (a takeover first where the labels
 * say so): md runs one sync at a time on arrays sharing a disk
 * (md_do_sync waits on match_mddev_units), so the reshapes follow each
 * other, and each tier's superblocks say from the start where it is
 * (raid_disks, reshape_position).  A resume asks only tiers still at the
 * old count (md_holds_new), Decision 118.
 */
static int
as_reshape(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	struct label was = v->label;
	char md[SYS_NAME_MAX];
	uint64_t off;

	/* md reshapes without a member it lacks, into a degraded array. */
	if (v->label.intent.step < AS_RESHAPE && new_disk_gone(a))
		return plan_err(err, errlen, "the new disk never joined the arrays: md is not "
		    "asked to reshape without it");
	if (v->label.intent.step < AS_RESHAPE) {
		v->label.intent.step = AS_RESHAPE;
		v->label.intent.target = was.generation + 2;
		if (label_change(v, ~0U, &was, err, errlen) == -1)
			return -1;
	}
	for (int t = 0; t < a->after.ntiers; t++) {
		const struct plan_tier *pt = &a->after.tier[t];

		if (pt->kind == TIER_NONE || !tier_asked(v, a->join, t))
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (md_holds_new(a, t, md, err, errlen) == -1 ||
		    lost_while_frozen(a, t, md, err, errlen) == -1 ||
		    (label_takes_over(&v->label, t) && takeover(v, pt, md, err, errlen) == -1))
			return -1;
		if (new_offset(pt, t, &off, err, errlen) == -1)
			off = OFFSET_FLOOR;	/* md has it already: md_reshape asks nothing */
		if (sys->md_reshape(md, pt->nmembers, off) == -1)
			return plan_err(err, errlen, "reshaping %s to %d members: %s", md,
			    pt->nmembers, strerror(errno));
		log_info("volume %s: %s reshapes to %d members", v->name, md, pt->nmembers);
	}
	return 0;
}

/*
 * Usable while md reshapes: the map at the old size, mounted.  A locked
 * volume stops here, with a filesystem or without one (volume_mount has
 * nothing to mount then): md carries the reshape on by itself, and
 * volume.unlock, refused while a job runs, carries the add on
 * (Decisions 115, 122).
 */
static int
as_open(struct add *a, char *err, size_t errlen)
{
	if (volume_map_reload(a->vol, err, errlen) == -1)
		return -1;
	if (crypt_locked(a->vol))
		return plan_err(err, errlen, "volume %s is locked", a->vol->name);
	return volume_mount(a->vol, err, errlen);
}

static void add_advance(struct add *, double after);

/* 1: md has finished every tier's reshape; 0: going on (the job waits). */
static int
reshaped(struct add *a, char *err, size_t errlen)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	uint64_t done = 0, total = 0;
	int busy = 0;

	for (int t = 0; t < a->after.ntiers; t++) {
		if (a->after.tier[t].kind == TIER_NONE || !tier_asked(a->vol, a->join, t))
			continue;
		volume_md_name(a->vol, t, md, sizeof(md));
		if (sys->md_status(md, &st) == -1)
			return plan_err(err, errlen, "%s is not running", md);
		if (st.raid_disks != a->after.tier[t].nmembers)
			return plan_err(err, errlen, "%s has %d members, not %d: md stopped the "
			    "reshape", md, st.raid_disks, a->after.tier[t].nmembers);
		if (strcmp(st.sync_action, "reshape") == 0) {
			busy = 1;
			done += st.sync_done;
			total += st.sync_total;
		}
	}
	if (busy && total)
		job_progress(a->job, 100.0 * AS_WAIT / AS_DONE + (100.0 / AS_DONE) *
		    (double)done / (double)total, "reshaping");
	return !busy;
}

static int
as_wait(struct add *a, char *err, size_t errlen)
{
	return reshaped(a, err, errlen) == -1 ? -1 : 0;
}

static int
as_size(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	struct label was = v->label;

	grow_label_from(v, &a->after);
	/* md reshaped as raid5: the labels say so from here (label_same_members). */
	if (v->label.intent.level)
		v->label.level = (uint8_t)a->after.level;
	for (int t = 0; t < a->after.ntiers; t++) {
		v->label.tier[t].kind = (uint8_t)a->after.tier[t].kind;
		v->label.tier[t].chunk = a->after.tier[t].chunk;
	}
	v->label.intent.step = AS_SIZE;
	v->label.intent.target = was.generation + 2;
	return label_change(v, ~0U, &was, err, errlen);
}

static int
as_map(struct add *a, char *err, size_t errlen)
{
	return as_open(a, err, errlen);
}

static void add_failed(struct add *, const char *);
static int not_taken_yet(const struct volume *);
static int carry_checks(struct volume *, const struct disk *, int, int, int *, char *,
    size_t);

static void
fs_done(int status, const char *output, void *arg)
{
	struct add *a = arg;
	char why[256];

	/* The mapping has grown (or never will by this job): the key goes,
	   unless an SHR's commit may start a grow that needs it (add_finish
	   hands it on; the job's release wipes it otherwise). */
	if (a->vol->label.level != LEVEL_SHR)
		crypt_key_wipe(&a->key);
	if (status != 0) {
		snprintf(why, sizeof(why), "growing the filesystem failed: %.200s", output);
		add_failed(a, why);
		return;
	}
	a->step++;
	add_advance(a, 0);
}

static int
as_fs(struct add *a, char *err, size_t errlen)
{
	return volume_fs_grow(a->vol, &a->key, fs_done, a, err, errlen);
}

/*
 * The intent cleared; for an SHR volume whose disks now offer room above
 * its tiers (shr_only_old_tiers), the same write is the grow's first
 * label (Decision 118): no cut falls between the add and the grow, which
 * add_finish() starts.
 */
static int
as_commit(struct add *a, char *err, size_t errlen)
{
	struct volume *v = a->vol;
	struct label was = v->label;
	struct plan *grow;
	int code;

	v->label.intent.op = LABEL_OP_NONE;
	v->label.intent.step = 0;
	v->label.intent.covered = 0;	/* a join's: a label without the intent holds none */
	v->label.intent.disk = LABEL_NO_DISK;
	v->label.intent.target = 0;
	v->label.intent.level = 0;
	if (v->label.level != LEVEL_SHR || (grow = malloc(sizeof(*grow))) == NULL)
		return label_change(v, ~0U, &was, err, errlen);
	disk_refresh_one(a->disk);	/* the table proves members by their labels */
	if (grow_check(v, grow, &code, err, errlen) == -1) {
		free(grow);
		return label_change(v, ~0U, &was, err, errlen);
	}
	/* A write that failed on some members fails the add: the next start
	   reconciles the labels and carries the grow on from the newest. */
	if ((code = grow_label(v, grow, err, errlen)) == -1 &&
	    v->label.generation == was.generation)
		v->label = was;
	free(grow);
	return code == -1 || v->label.intent.op != LABEL_OP_EXPANDING ? -1 : 0;
}

static int (*const as_steps[])(struct add *, char *, size_t) = {
	[AS_WIPE] = as_wipe, [AS_INTENT] = as_intent, [AS_LABEL] = as_label,
	[AS_PARTITION] = as_partition, [AS_START] = as_start, [AS_ADD] = as_add,
	[AS_RESHAPE] = as_reshape, [AS_OPEN] = as_open, [AS_WAIT] = as_wait,
	[AS_SIZE] = as_size, [AS_MAP] = as_map, [AS_FS] = as_fs, [AS_COMMIT] = as_commit,
};

/*
 * The joiner m's disk went (the disk table, which a uevent refreshes even
 * while a job runs, no longer proves it member m): it is absent from now
 * on, as volume_sync_disks would say once no job runs, and md lets its
 * devices go.  Once md began, the join goes on without it, degraded
 * (new_disk_gone); before, it is undone without it.
 */
static void
joiner_went(struct volume *v, int m)
{
	const struct disk *d;

	if (v->disk[m][0] == '\0' || ((d = disk_find(v->disk[m])) != NULL &&
	    member_is(d, v, m)))
		return;
	log_warnx("volume %s: member %d's disk %s went while its room was joining", v->name,
	    m + 1, v->disk[m]);
	v->disk[m][0] = '\0';
	v->pulled |= 1U << m;
	volume_fail_missing(v);
}

/* What the user does after a join was undone: join again, or replace a joiner gone. */
static const char *
join_undone_advice(const struct volume *v, int m)
{
	return v->disk[m][0] ? "volume.grow joins it again" : "its disk is gone: put it back, "
	    "or volume.repair with a new disk replaces it";
}

/*
 * A join md never began, on a running volume with no job, is undone at
 * once (Decision 133): a spare of the joiner's left in a mirror's array
 * is where md would rebuild an old member that fails, and the joiner,
 * its superblock then giving another role than its label, would be
 * judged foreign and dropped from every tier it serves.  A joiner whose
 * disk went (the table no longer proves it member m) is absent: the
 * labels drop it from the joined tiers, its new partitions stay on its
 * disk for its return (parts_left_out), and md lets its devices go.
 * Without that, a joiner that never comes back left the join standing
 * and a repair refused (Decision 125, finding 4).  why: the job's stop,
 * NULL when found by a scan.  1 when undone.
 */
static int
join_undone_running(struct volume *v, const char *why)
{
	char err[200];
	int m = v->label.intent.disk, gone;

	if (!label_is_join(&v->label) || !v->assembled || v->job)
		return 0;
	joiner_went(v, m);
	if (!not_taken_yet(v))
		return 0;
	if (add_join_roll_back(v, err, sizeof(err)) == -1) {
		log_warnx("volume %s: %s", v->name, err);
		return 0;
	}
	gone = v->disk[m][0] == '\0';
	snprintf(v->problem, sizeof(v->problem), "member %d's room joining its tiers stopped "
	    "(%.60s) and was undone (md had not begun): %s", m + 1,
	    why ? why : gone ? "its disk went" : "undone by a scan", join_undone_advice(v, m));
	volume_refresh_state(v);
	return 1;
}

/* A join's job stopped before md began: undone at once (join_undone_running). */
static int
join_undone_now(struct add *a, const char *why)
{
	return a->join && join_undone_running(a->vol, why);
}

/*
 * Member m, back on a running volume (a hot-plug), carries a join's label
 * the newest no longer holds: the join was undone while it was away.  Its
 * label is rewritten from the newest now, as a start does (repair_labels),
 * and before that its new partition goes from its disk (label_write_some:
 * parts_left_out): left there, a later join's partition would meet it in
 * the band, and the proof at the next start would drop m from every tier
 * it serves (Decision 125, finding 6).
 */
static void
joiner_back(struct volume *v, int m)
{
	char err[200];

	if (label_is_join(&v->label) || !label_is_join(&v->mlabel[m]) ||
	    v->mlabel[m].generation >= v->label.generation)
		return;
	if (label_write_some(v, 1U << m, err, sizeof(err)) == -1) {
		log_warnx("volume %s: member %d back after its join was undone: %s", v->name,
		    m + 1, err);
		return;
	}
	log_info("volume %s: member %d is back; its join was undone while it was away",
	    v->name, m + 1);
	if (strstr(v->problem, "room joining"))
		v->problem[0] = '\0';
}

/*
 * A scan of a running volume: a join md never began is undone (its
 * joiner gone, or the job's undo having failed), and a joiner back
 * after its join was undone is given the newest label.
 */
void
add_join_settle(struct volume *v)
{
	join_undone_running(v, NULL);
	for (int m = 0; m < v->label.ndisks; m++)
		if (v->disk[m][0])
			joiner_back(v, m);
}

/* The new partition of tier t, still a spare in md (st), failed and removed. */
static void
spare_out(struct add *a, int t, const char *md, const struct sys_md_status *st)
{
	struct volume *v = a->vol;
	const struct label_tier *lt = &v->mlabel[a->member].tier[t];
	char dev[SYS_NAME_MAX];

	if (new_disk_gone(a) || lt->role == LABEL_NO_ROLE ||
	    sys->part_dev(v->disk[a->member], lt->start, dev, sizeof(dev)) != 0)
		return;
	for (int i = 0; i < st->nmembers; i++) {
		if (strcmp(st->member[i].dev, dev) != 0 || st->member[i].slot >= 0 ||
		    strstr(st->member[i].state, "faulty") != NULL)
			continue;
		if (sys->md_fail(md, dev) != 0)
			log_warn("volume %s: %s: taking the spare %s out", v->name, md, dev);
	}
}

/*
 * The job stops: each array md has not reshaped onto the new partition
 * lets its spare go (failed and removed, md frozen still, as the start
 * holds it out: add_spare_held_out) and is then let go itself
 * (tier_freeze).  A spare left in a running array is where md would
 * rebuild an old member that fails, and the disk, its superblock then
 * giving that role, would be judged foreign.  The next as_add gives it
 * back, frozen.
 */
static void
spares_out(struct add *a)
{
	struct volume *v = a->vol;
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	for (int t = 0; t < a->after.ntiers && t < v->label.ntiers; t++) {
		if (a->after.tier[t].kind == TIER_NONE || !tier_asked(v, a->join, t))
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_status(md, &st) == -1)
			continue;
		if (st.raid_disks != a->after.tier[t].nmembers)
			spare_out(a, t, md, &st);
		if (sys->md_freeze(md, 0) == -1)
			log_warn("volume %s: %s: letting recovery go", v->name, md);
	}
}

/* A failed step leaves the intent: the next start, or volume.add_disk, carries it on. */
static void
add_failed(struct add *a, const char *why)
{
	struct volume *v = a->vol;
	char err[256];

	v->job = NULL;
	/* Carried on at start and stopped: the volume still comes up, at the
	   size its labels hold (md keeps the arrays at it until it is done). */
	if (!v->assembled && v->label.intent.op == LABEL_OP_ADDING &&
	    (volume_assemble_as_was(v, err, sizeof(err)) == -1 ||
	    volume_mount(v, err, sizeof(err)) == -1))
		log_warnx("volume %s: %s", v->name, err);
	if (v->assembled && v->label.intent.op == LABEL_OP_ADDING)
		spares_out(a);
	if (join_undone_now(a, why))
		;	/* undone at once: no problem to show */
	else if (v->label.intent.op == LABEL_OP_ADDING && a->join)
		snprintf(v->problem, sizeof(v->problem), "member %d's room joining its tiers "
		    "stopped (%.100s): the next start carries it on, or undoes it if md had "
		    "not begun", a->member + 1, why);
	else if (v->label.intent.op == LABEL_OP_ADDING)
		snprintf(v->problem, sizeof(v->problem), "adding a disk stopped (%.150s): %s",
		    why, crypt_locked(v) ? "volume.unlock carries it on" :
		    "volume.add_disk or the next start carries it on");
	log_warnx("volume %s: add_disk: %s while %s", v->name, why, as_names[a->step]);
	volume_refresh_state(v);
	job_fail(a->job, NAS_ERR_FAILED, "%s while %s", why, as_names[a->step]);
}

/* An SHR add's commit began a grow (as_commit): it goes on as its own job. */
static void
shr_grow_after(struct volume *v, struct crypt_key *key)
{
	char err[256];

	if (v->label.intent.op != LABEL_OP_EXPANDING || v->job)
		return;
	log_info("volume %s: the room above its tiers becomes a new tier", v->name);
	/* The add's key, proven: an encrypted volume's mapping grows with it. */
	if (grow_start(v, NULL, crypt_key_have(key) ? key : NULL, err, sizeof(err)) == NULL)
		log_warnx("volume %s: %s", v->name, err);
}

/*
 * A join done, and volume.grow would still have another member's room
 * join an old tier (Decision 133: two replacements' rooms joining one
 * tier are two joins): the next join starts at once as its own job,
 * with the proven key, so that no call comes between the two.  A grow
 * left once no room joins is as_commit's (shr_grow_after).  A next join
 * refused leaves the volume as this one left it: volume.grow says why.
 * An encrypted volume's join carried on without a key (at a start, by
 * volume.unlock) begins no next one: md would reshape and the job then
 * stop for the passphrase its mapping needs; volume.grow with it does
 * the rest.
 */
static struct job *
join_next(struct volume *v, struct crypt_key *key)
{
	struct plan_change *full;
	struct job *j = NULL;
	char err[256];
	int code;

	if (v->label.intent.op != LABEL_OP_NONE || v->job ||
	    (crypt_encrypted(v) && !crypt_key_have(key)) ||
	    (full = malloc(sizeof(*full))) == NULL)
		return NULL;
	if (grow_is_join(v, full, &code, err, sizeof(err)) == 1) {
		log_info("volume %s: another member's room joins its tiers", v->name);
		if ((j = add_join_grow(v, full, crypt_key_have(key) ? key : NULL, err,
		    sizeof(err))) == NULL)
			log_warnx("volume %s: the next join: %s", v->name, err);
	}
	free(full);
	return j;
}

static void
add_finish(struct add *a)
{
	struct volume *v = a->vol;
	struct json_object *ev = json_object_new_object();
	struct crypt_key key = { 0 };
	struct job *next = NULL;

	/* Out of a first: job_done() may release it. */
	crypt_key_move(&key, &a->key);
	disk_refresh_one(a->disk);
	v->job = NULL;
	v->problem[0] = '\0';
	volume_refresh_state(v);
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "disk", json_object_new_string(a->disk));
	json_object_object_add(ev, "size_bytes", json_object_new_int64((int64_t)v->label.size));
	json_object_object_add(ev, "was_bytes", json_object_new_int64((int64_t)a->was_size));
	if (a->join && (next = join_next(v, &key)) != NULL)
		json_object_object_add(ev, "next_job", json_object_new_int((int)job_id(next)));
	nas_event(a->join ? "volume.grown" : "volume.disk_added", ev);
	log_info("volume %s: %s %s, %llu bytes", v->name, a->disk,
	    a->join ? "joined its tiers" : "added", (unsigned long long)v->label.size);
	/* The grow before job_done(): the done job's volume names it, and
	   nasctl follows it (as a next join) until the volume has grown. */
	shr_grow_after(v, &key);
	job_done(a->job, volume_describe(v));
	crypt_key_wipe(&key);
}

static void
proven(int code, const char *msg, void *arg)
{
	struct add *a = arg;
	struct volume *v = a->vol;

	if (code == 0) {
		a->proven = 1;
		add_advance(a, 0);
		return;
	}
	crypt_key_wipe(&a->key);
	a->step = AS_DONE;	/* not busy with its disk any more (add_disk_busy) */
	v->job = NULL;
	log_warnx("volume %s: add_disk: cryptd refused: %s", v->name, msg);
	job_fail(a->job, code, "volume %s: %s: nothing was changed", v->name, msg);
}

/* A carried-on job that stops before its first step: err its answer. */
static int
carry_stopped(struct add *a, int code, const char *err)
{
	struct volume *v = a->vol;

	crypt_key_wipe(&a->key);
	a->step = AS_DONE;	/* not busy with its disk any more (add_disk_busy) */
	v->job = NULL;
	log_warnx("volume %s: %s: %s", v->name, a->join ? "volume.grow" : "add_disk", err);
	job_fail(a->job, code, "%s", err);
	return -1;
}

static void join_undone_said(struct volume *, int m, char *err, size_t errlen);

/*
 * A join carried on with a key (join_resume): one md never began is
 * undone only now that the key is proven (Decision 121), the job then
 * ending as the call without a key answers (add_join_carry_on).
 */
static int
join_carried_on(struct add *a)
{
	struct volume *v = a->vol;
	char err[256];
	int m = v->label.intent.disk;

	if (!not_taken_yet(v))
		return 0;
	if (add_join_roll_back(v, err, sizeof(err)) == 0)
		join_undone_said(v, m, err, sizeof(err));
	return carry_stopped(a, NAS_ERR_FAILED, err);
}

/*
 * A carry-on asked with a key: what add_carry_on() would have written
 * before the job (the undo, the erase), now that the key is proven.
 */
static int
carried_on(struct add *a)
{
	struct volume *v = a->vol;
	const struct disk *d = NULL;
	char err[256];
	int code = NAS_ERR_REFUSED, r;

	if (a->join)
		return join_carried_on(a);
	if (not_taken_yet(v) && (d = job_disk(a, err, sizeof(err))) == NULL)
		code = NAS_ERR_NOT_FOUND;
	else {
		a->checking = 1;
		r = d == NULL ? 0 : carry_checks(v, d, a->force, 1, &code, err, sizeof(err));
		a->checking = 0;
		if (r == 0)
			return 0;
	}
	return carry_stopped(a, code, err);
}

/* As grow.c's grow_prove: the key proven by a crypt.resize before any step. */
static void
add_prove(struct add *a)
{
	job_progress(a->job, 0, "proving the passphrase");
	if (crypt_resize(a->vol, &a->key, proven, a) == -1)
		proven(NAS_ERR_FAILED, "cryptd cannot be asked", a);
}

static void
add_timer(struct ev_loop *l, ev_timer *w, int revents)
{
	struct add *a = w->data;
	char err[256];
	int r;

	(void)l;
	(void)revents;
	if (a->step == AS_DONE) {
		add_finish(a);
		return;
	}
	if (crypt_key_have(&a->key) && !a->proven) {
		add_prove(a);
		return;
	}
	if (a->carry) {
		a->carry = 0;
		if (carried_on(a) == -1)
			return;
	}
	if (a->join)
		joiner_went(a->vol, a->member);
	if (a->step == AS_WAIT) {
		if ((r = reshaped(a, err, sizeof(err))) == -1) {
			add_failed(a, err);
			return;
		}
		if (r == 0) {
			add_advance(a, poll_seconds);
			return;
		}
		a->step++;
		add_advance(a, 0);
		return;
	}
	job_progress(a->job, 100.0 * a->step / AS_DONE, as_names[a->step]);
	if ((r = as_steps[a->step](a, err, sizeof(err))) == -1) {
		add_failed(a, err);
		return;
	}
	if (a->step == AS_FS && r == 0)
		return;		/* fs_done goes on */
	if (a->step == AS_ADD && r == 1) {
		add_advance(a, poll_seconds);	/* md recovers a member first */
		return;
	}
	a->step++;
	add_advance(a, 0);
}

static void
add_advance(struct add *a, double after)
{
	ev_timer_set(&a->timer, after, 0.);
	ev_timer_start(nas_loop(), &a->timer);
}

static void
add_release(void *arg)
{
	struct add *a = arg;

	for (int i = 0; i < MAX_VOLUMES; i++)
		if (active[i] == a)
			active[i] = NULL;
	ev_timer_stop(nas_loop(), &a->timer);
	crypt_key_wipe(&a->key);
	free(a);
}

static const struct job_ops add_ops = { .release = add_release };

/* join: the old member whose room joins (Decision 133); -1 for an add. */
static struct add *
start_at(struct volume *v, const char *disk, const char *serial, uint64_t size,
    const struct plan *after, enum add_step from, int join, struct crypt_key *key,
    char *err, size_t errlen)
{
	struct add *a;
	int slot = 0;

	while (slot < MAX_VOLUMES && active[slot])
		slot++;
	if (slot == MAX_VOLUMES || (a = calloc(1, sizeof(*a))) == NULL)
		return snprintf(err, errlen, "too many jobs"), NULL;
	if (key)
		crypt_key_move(&a->key, key);
	a->vol = v;
	a->after = *after;
	a->member = join >= 0 ? join : after->ndisks - 1;
	a->join = join >= 0;
	a->step = from;
	a->was_size = v->label.size;
	snprintf(a->disk, sizeof(a->disk), "%s", disk);
	snprintf(a->serial, sizeof(a->serial), "%s", serial);
	a->size = size;
	ev_timer_init(&a->timer, add_timer, 0., 0.);
	a->timer.data = a;
	if ((a->job = job_start(a->join ? "volume.grow" : "volume.add_disk", v->name,
	    &add_ops, a)) == NULL) {
		crypt_key_wipe(&a->key);
		free(a);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->job = a->job;
	active[slot] = a;
	add_advance(a, 0);
	return a;
}

struct job *
add_start(struct volume *v, const char *spec, int force, const struct plan *after,
    struct crypt_key *key, char *err, size_t errlen)
{
	const struct disk *d = disk_find(spec);
	struct add *a;

	if (d == NULL)
		return snprintf(err, errlen, "no disk %s", spec), NULL;
	log_info("volume %s: %s joins as member %d", v->name, d->sys.name, after->ndisks);
	a = start_at(v, d->sys.name, d->sys.serial, d->sys.size, after,
	    force ? AS_WIPE : AS_INTENT, -1, key, err, errlen);
	return a ? a->job : NULL;
}

/*
 * The one old member whose room c joins to old tiers, and only that:
 * each joined tier takes it as its one new member (md holds one spare
 * and reshapes by one, as for an add), taken over where it is a raid1
 * of two; no tier grows in place or is new besides (shr_only_old_tiers
 * strips the new ones: the join's commit hands them to a grow).  Two
 * joiners, in one tier or two, are two joins: refused here, since
 * add_join_first() hands this one join at a time.
 */
static int
join_steps_known(const struct plan_change *c, int *joiner, char *err, size_t errlen)
{
	int disks[PLAN_MAX_DISKS], n;

	*joiner = -1;
	if (c->before.level != LEVEL_SHR || c->after.level != LEVEL_SHR)
		return plan_err(err, errlen, "only an SHR volume's tiers take a member's room");
	for (int t = 0; t < c->before.ntiers; t++) {
		unsigned w = PLAN_CH_MEMBERS;

		if ((n = plan_joiners(c, t, disks)) == 0) {
			if (c->what[t] != 0)
				return plan_err(err, errlen, "tier %d changes besides the join: "
				    "not in one job", t + 1);
			continue;
		}
		if (n > 1 || (*joiner >= 0 && disks[0] != *joiner))
			return plan_err(err, errlen, "tier %d: more than one member's room "
			    "would join: one join at a time", t + 1);
		*joiner = disks[0];
		if (tier_taken_over(&c->before.tier[t], &c->after.tier[t]))
			w |= PLAN_CH_LEVEL;
		if (c->what[t] != w || c->after.tier[t].nmembers != c->before.tier[t].nmembers + 1)
			return plan_err(err, errlen, "tier %d would need more than a join",
			    t + 1);
	}
	if (*joiner < 0)
		return plan_err(err, errlen, "no member's room joins an old tier");
	return 0;
}

/*
 * md can take each joined tier's part, asked before anything is written,
 * as add_check asks an add's: room below the data to reshape into, and a
 * raid1 of two md takes over with the chunk the labels will record.
 */
static int
join_md_ok(struct volume *v, const struct plan_change *c, char *err, size_t errlen)
{
	uint64_t off;

	for (int t = 0; t < c->before.ntiers; t++) {
		if (c->after.tier[t].nmembers == c->before.tier[t].nmembers)
			continue;
		if (new_offset(&c->before.tier[t], t, &off, err, errlen) == -1 ||
		    (tier_taken_over(&c->before.tier[t], &c->after.tier[t]) &&
		    takeover_ok(v, t, err, errlen) == -1))
			return -1;
	}
	return 0;
}

/*
 * A join (Decision 133): member m's room takes a role in old tiers, an
 * add of an old member's room.  Its steps are an add's from the intent,
 * with m's own label written after the others' (join_intent), its
 * partitions a grow's new ones (join_partition) and its spares only in
 * the joined tiers (join_add); md takes over and reshapes only the
 * joined tiers (as_reshape, tier_asked), and the commit clears the
 * intent's covered tiers.  c is one join's plan (add_join_first).
 */
struct job *
add_join_start(struct volume *v, const struct plan_change *c, struct crypt_key *key,
    char *err, size_t errlen)
{
	struct plan_change *w;
	const struct disk *d;
	struct add *a = NULL;
	int m;

	if (v->job)
		return plan_err(err, errlen, "volume %s is busy with another job", v->name), NULL;
	if (v->label.intent.op != LABEL_OP_NONE || !v->assembled)
		return plan_err(err, errlen, "volume %s is not running or has an operation to "
		    "finish", v->name), NULL;
	if ((w = malloc(sizeof(*w))) == NULL)
		return plan_err(err, errlen, "out of memory"), NULL;
	*w = *c;
	shr_only_old_tiers(w);
	if (join_steps_known(w, &m, err, errlen) == -1)
		goto out;
	if (v->disk[m][0] == '\0' || (d = disk_find(v->disk[m])) == NULL) {
		plan_err(err, errlen, "member %d is not here", m + 1);
		goto out;
	}
	if (join_md_ok(v, w, err, errlen) == -1)
		goto out;
	log_info("volume %s: member %d's room (%s) joins its tiers", v->name, m + 1,
	    d->sys.name);
	a = start_at(v, d->sys.name, d->sys.serial, d->sys.size, &w->after, AS_INTENT, m,
	    key, err, errlen);
out:
	free(w);
	return a ? a->job : NULL;
}

/*
 * The first join of full, a volume.grow's plan in which old members'
 * rooms join old tiers (Decision 133): the first joiner of the lowest
 * joined tier, m, joins every tier full has it join, and nothing else
 * (plan_grow_join: the other members count only as far as they serve).
 * md reshapes a tier by one spare at a time, so two rooms are two joins;
 * the next is planned when this one is done (join_next).
 */
int
add_join_first(const struct plan_change *full, struct plan_change *first, char *err,
    size_t errlen)
{
	uint64_t size[PLAN_MAX_DISKS];
	int disks[PLAN_MAX_DISKS], m = -1, n;
	unsigned tiers = 0;

	for (int t = 0; t < full->before.ntiers && m < 0; t++)
		if (plan_joiners(full, t, disks) > 0)
			m = disks[0];
	if (m < 0)
		return plan_err(err, errlen, "no member's room joins an old tier");
	for (int t = 0; t < full->before.ntiers; t++) {
		n = plan_joiners(full, t, disks);
		for (int i = 0; i < n; i++)
			if (disks[i] == m)
				tiers |= 1U << t;
	}
	for (int k = 0; k < full->after.ndisks && k < PLAN_MAX_DISKS; k++)
		size[k] = full->after.disk[k].size;
	return plan_grow_join(&full->before, size, m, tiers, first, err, errlen);
}

/* volume.grow's join (Decision 133): full's first join, as its own job. */
struct job *
add_join_grow(struct volume *v, const struct plan_change *full, struct crypt_key *key,
    char *err, size_t errlen)
{
	struct plan_change *first;
	struct job *j = NULL;

	if ((first = malloc(sizeof(*first))) == NULL)
		return plan_err(err, errlen, "out of memory"), NULL;
	if (add_join_first(full, first, err, errlen) == 0)
		j = add_join_start(v, first, key, err, errlen);
	free(first);
	return j;
}

/* ---- after a power cut ---- */

/*
 * What one superblock of tier t's array says: md has begun the add
 * there.  It counts the new raid disks or records a reshape; or md took
 * a raid1 of two over as raid5 (the level raid5_takeover_raid1 writes in
 * every member's), the reshape not asked yet.  The labels' step says
 * none of this: it is written before md is asked, which may refuse
 * (EBUSY) or never be asked before a cut.
 */
static int
sb_began(const struct label *l, int t, const struct mdsb *sb)
{
	if (sb->raid_disks == l->tier[t].nmembers || (sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE))
		return 1;
	return label_takes_over(l, t) && sb->level == 5;
}

/*
 * md has begun the add on tier t: a superblock of the tier's array on a
 * present member, the new disk's included, says so.  md writes its
 * members' superblocks one after another (md_update_sb), so a cut may
 * leave any one of them, the new disk's too, alone at the new geometry:
 * every one is read.
 */
static int
tier_began(const struct volume *v, int t)
{
	const struct label_tier *lt = &v->label.tier[t];
	struct mdsb sb;

	for (int r = 0; r < lt->nmembers; r++)
		if (tier_sb(v, t, lt->member[r], &sb) == 0 && sb_began(&v->label, t, &sb))
			return 1;
	return 0;
}

/*
 * md has begun the add on any tier: as_reshape asks md tier by tier, so
 * a cut between two leaves the first tiers at the new count (Decision
 * 118).
 */
static int
md_began(const struct volume *v)
{
	for (int t = 0; t < v->label.ntiers; t++)
		if (tier_asked(v, label_is_join(&v->label), t) && tier_began(v, t))
			return 1;
	return 0;
}

/* md's raid5 takeover of a raid1 of two (raid5_takeover_raid1): left-symmetric. */
#define TAKEOVER_LAYOUT	2	/* ALGORITHM_LEFT_SYMMETRIC */

/* The role sb gives its own device: MDSB_ROLE_SPARE past its slots. */
static uint16_t
sb_own_role(const struct mdsb *sb)
{
	return sb->dev_number < sb->max_dev ? sb->dev_roles[sb->dev_number] : MDSB_ROLE_SPARE;
}

/* sb: a member in a role of md's raid5 of two just taken over, nothing reshaped. */
static int
sb_taken_over(const struct mdsb *sb)
{
	return sb->level == 5 && sb->raid_disks == 2 && sb->layout == TAKEOVER_LAYOUT &&
	    sb->chunksize == PLAN_TAKEOVER_CHUNK && sb_own_role(sb) < MDSB_ROLE_FAULTY &&
	    !(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE);
}

/*
 * sb still says the raid1 of two that fresh's array was before md took
 * it over: md_update_sb never reached it.  Its device holds the role
 * fresh gives it.  One in a role missed that one write (an event
 * behind); a spare's events are not md's concern (md takes a spare
 * whatever they say, and writes none on a clean/dirty change).
 */
static int
sb_left_raid1(const struct mdsb *sb, const struct mdsb *fresh)
{
	uint16_t role = sb_own_role(sb);

	if (sb->level != 1 || sb->raid_disks != 2 || sb->size != fresh->size ||
	    (sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE) || sb->events >= fresh->events ||
	    sb->dev_number >= fresh->max_dev || fresh->dev_roles[sb->dev_number] != role)
		return 0;
	return role == MDSB_ROLE_SPARE || sb->events + 1 == fresh->events;
}

/* The freshest superblock of tier t md took over, on a member in a role; 0 if none. */
static int
taken_over_sb(const struct volume *v, int t, struct mdsb *fresh)
{
	const struct label_tier *lt = &v->label.tier[t];
	struct mdsb sb;
	uint64_t best = 0;
	int found = 0;

	for (int r = 0; r < lt->nmembers; r++)
		if (tier_sb(v, t, lt->member[r], &sb) == 0 && sb_taken_over(&sb) &&
		    (!found || sb.events > best)) {
			*fresh = sb;
			best = sb.events;
			found = 1;
		}
	return found;
}

/* A superblock the mend rewrites: where on the disk, and md's raid5 to take. */
struct mend {
	uint64_t		 at;		/* bytes into the member's disk */
	const uint8_t		*set;		/* the tier's array_uuid */
	const struct mdsb	*fresh;
};

/*
 * Through member m's proven descriptor (Decision 21): the superblock is
 * read again there and patched only if it is still the one judged (this
 * array's, left at raid1); then it takes fresh's level, layout and
 * chunk, nothing else.
 */
static int
mend_through(struct dfd *f, void *arg, char *err, size_t errlen)
{
	const struct mend *mn = arg;
	static uint8_t buf[MDSB_BLOCK];
	static struct mdsb sb;
	char why[MDSB_ERRLEN];

	if (dfd_read(f, mn->at, buf, sizeof(buf)) == -1)
		return plan_err(err, errlen, "reading %s's md superblock: %s", f->name,
		    strerror(errno));
	if (mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, &sb, why, sizeof(why)) == -1 ||
	    memcmp(sb.set_uuid, mn->set, 16) != 0 || !sb_left_raid1(&sb, mn->fresh))
		return plan_err(err, errlen, "%s's md superblock changed: not written", f->name);
	if (mdsb_set_level(buf, sizeof(buf), MDSB_SUPER_OFFSET, mn->fresh->level,
	    mn->fresh->layout, mn->fresh->chunksize, why, sizeof(why)) == -1)
		return plan_err(err, errlen, "%s's md superblock: %s", f->name, why);
	if (sys->fd_write(f->fd, mn->at, buf, sizeof(buf)) == -1)
		return plan_err(err, errlen, "writing %s's md superblock: %s", f->name,
		    strerror(errno));
	return 0;
}

/*
 * Before assembly (Decision 136).  A cut while md wrote its members'
 * superblocks after a takeover (as_reshape) leaves some saying raid1
 * and the others raid5, an event ahead.  md assembles the view of the
 * first member it is given and refuses every member unlike it
 * (super_1_load: level, layout, chunk), so either view runs one old
 * member alone and md rebuilds it onto the new disk's spare.  Their data
 * is the same (a raid5 of two holds a block and its copy), and md
 * carries the add on from raid5 (md_began): the members left at raid1
 * take md's raid5 geometry, all else as md wrote it, their events too
 * (an event behind, as any member md_update_sb missed, md takes it).
 * Only this state is touched: the labels' add says the reshape was asked
 * and md takes the tier over, one superblock says the takeover.
 */
int
add_mend_takeover(struct volume *v, char *err, size_t errlen)
{
	static struct mdsb fresh, sb;
	char dev[SYS_NAME_MAX];

	if (v->label.intent.op != LABEL_OP_ADDING || v->label.intent.step < AS_RESHAPE)
		return 0;
	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		if (!label_takes_over(&v->label, t) || !taken_over_sb(v, t, &fresh))
			continue;
		for (int r = 0; r < lt->nmembers; r++) {
			int m = lt->member[r];

			if (tier_sb(v, t, m, &sb) == -1 || !sb_left_raid1(&sb, &fresh))
				continue;
			struct mend mn = { v->mlabel[m].tier[t].start + MDSB_SUPER_OFFSET * 512ULL,
			    lt->array_uuid, &fresh };

			if (sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start, dev,
			    sizeof(dev)) == -1)
				return plan_err(err, errlen, "member %d: no partition of tier %d",
				    m + 1, t + 1);
			if (member_through(v, m, mend_through, &mn, err, errlen) == -1)
				return -1;
			log_warnx("volume %s: %s still said raid1 (events %llu) where md had "
			    "taken tier %d over as raid5 (events %llu), the power gone while md "
			    "wrote: it says raid5 now", v->name, dev,
			    (unsigned long long)sb.events, t + 1,
			    (unsigned long long)fresh.events);
		}
	}
	return 0;
}

/*
 * Assembly (start_tier) leaves member m's partition of tier t out: m is
 * the disk an add or a join is taking into the tier, and md holds that
 * partition as a spare only (its own superblock gives it no role), so
 * md has not reshaped the tier onto it.  md would rebuild any member it
 * lacks onto that spare at once, against the labels: one lost after md
 * took the tier over (raid5 of two) or began another tier, or one
 * kicked as behind.  The disk, its superblock then giving the lost
 * member's role, would be judged foreign once that member is back, and
 * dropped from every tier it serves.  The job gives md the spare again
 * (as_add) only while the tier's array is whole.
 */
int
add_spare_held_out(const struct volume *v, int t, int m)
{
	struct mdsb sb;

	if (v->label.intent.op != LABEL_OP_ADDING || m != v->label.intent.disk ||
	    v->mlabel[m].tier[t].role == LABEL_NO_ROLE)
		return 0;
	return tier_sb(v, t, m, &sb) == 0 && sb_own_role(&sb) == MDSB_ROLE_SPARE;
}

/* The labels forget the new disk: it never got its own, and md never reshaped. */
static int
roll_back(struct volume *v)
{
	struct label was = v->label;
	int n = v->label.intent.disk;
	char err[256];

	log_warnx("volume %s: adding member %d was interrupted before md took it: the "
	    "disk is left out", v->name, n + 1);
	label_drop_added(&v->label);	/* a jbod's tier on the disk too */
	v->disk[n][0] = '\0';
	if (label_change(v, ~0U, &was, err, sizeof(err)) == -1)
		log_warnx("volume %s: %s", v->name, err);
	return 0;
}

/*
 * The joiner m's new partition of tier t leaves the tier's running array
 * (a spare md let go of: failed and removed) and then m's disk: the
 * kernel refuses to delete a partition md holds (part_del, EBUSY).  One
 * md gave a role is data: never undone here.
 */
static int
join_part_out(struct volume *v, int m, int t, char *err, size_t errlen)
{
	const struct label_tier *own = &v->mlabel[m].tier[t];
	char dev[SYS_NAME_MAX], md[SYS_NAME_MAX];
	struct sys_md_status st;

	if (own->role == LABEL_NO_ROLE || own->size == 0)
		return 0;
	volume_md_name(v, t, md, sizeof(md));
	if (sys->part_dev(v->disk[m], own->start, dev, sizeof(dev)) == 0 &&
	    sys->md_status(md, &st) == 0)
		for (int i = 0; i < st.nmembers; i++) {
			if (strcmp(st.member[i].dev, dev) != 0)
				continue;
			if (st.member[i].slot >= 0 && !strstr(st.member[i].state, "faulty"))
				return plan_err(err, errlen, "%s holds %s in role %d: the join "
				    "is not undone", md, dev, st.member[i].slot);
			if (sys->md_fail(md, dev) != 0)
				return plan_err(err, errlen, "%s: taking the spare %s out: %s", md,
				    dev, strerror(errno));
		}
	return member_part_del(v, m, own->start, own->size, err, errlen);
}

/*
 * A join md never began, undone (Decision 133): the joiner's new
 * partitions leave md and its disk first, and only then do the labels
 * drop it (label_drop_joined), so that at every cut its proof holds (a
 * partition its label still gives it may be missing while the join's
 * intent stands, the proof's exemption; none is left that it does not
 * give).  Run again after a cut, it does what is left.  Refused once md
 * has begun a covered tier: from there a join only goes on.  An absent
 * joiner's partitions stay on its disk (left for its return).
 */
int
add_join_roll_back(struct volume *v, char *err, size_t errlen)
{
	struct label was = v->label;
	int m = v->label.intent.disk;

	if (!label_is_join(&v->label))
		return plan_err(err, errlen, "the labels hold no join");
	for (int t = 0; t < v->label.ntiers; t++)
		if (label_joins(&v->label, t) && tier_began(v, t))
			return plan_err(err, errlen, "md has begun tier %d's join: it goes on",
			    t + 1);
	for (int t = 0; v->disk[m][0] && t < v->label.ntiers; t++)
		if (label_joins(&v->label, t) && join_part_out(v, m, t, err, errlen) == -1)
			return -1;
	log_warnx("volume %s: member %d's room joining the tiers was undone before md "
	    "took it", v->name, m + 1);
	label_drop_joined(&v->label);
	return label_change(v, ~0U, &was, err, errlen);
}

/* Nothing of the volume's data is on the new disk yet: it can be left out. */
static int
not_taken_yet(const struct volume *v)
{
	/* A jbod's filesystem grows onto the new disk only after step 9. */
	if (sized_at_once(&v->label))
		return v->label.intent.step < AS_SIZE;
	/* The step may say reshape while md never began (refused, or a cut). */
	return !md_began(v);
}

/* An old member's disk is not here (the labels' members less the new disk). */
static int
old_member_absent(const struct volume *v)
{
	for (int m = 0; m < v->label.ndisks; m++)
		if (m != v->label.intent.disk && v->disk[m][0] == '\0')
			return 1;
	return 0;
}

/*
 * At start-up, before assembly (assemble.c decide()): carried on when
 * the new disk is here with its label, or md has the new geometry;
 * else rolled back.  Rolled back too while md has not begun and an old
 * member is absent: assembled with the new disk's spare, a writable md
 * rebuilds the lost member onto it at once, against the labels, and the
 * add can neither go on (md holds no spare) nor a repair be taken (an
 * add to finish).  A jbod's new tier has no spare to take.
 */
/*
 * A join's decide (Decision 133), never an add's: once md began a joined
 * tier it only goes on (add_resume, after assembly); before, it is
 * undone (add_join_roll_back): none of the data is on the joiner's new
 * partitions, and a start that carried it on could have md rebuild a
 * member lost meanwhile onto them.  A roll back that fails leaves the
 * volume alone, the join's labels kept.
 */
static int
join_decide(struct volume *v)
{
	char err[200];
	int m = v->label.intent.disk;

	if (!not_taken_yet(v))
		return 0;
	if (add_join_roll_back(v, err, sizeof(err)) == 0)
		return 0;
	v->inconsistent = 1;
	snprintf(v->problem, sizeof(v->problem), "member %d's room joining the tiers "
	    "stopped before md began, and was not undone: %.120s", m + 1, err);
	log_warnx("volume %s: %s", v->name, v->problem);
	return 0;
}

int
add_decide(struct volume *v)
{
	int n = v->label.intent.disk;

	if (label_is_join(&v->label))
		return join_decide(v);
	if (n >= v->label.ndisks || n < 1)
		return 0;	/* add_resume reports it */
	if (!not_taken_yet(v))
		return 0;
	if (v->disk[n][0] == '\0')
		return roll_back(v);
	if (sized_at_once(&v->label) || !old_member_absent(v))
		return 0;
	roll_back(v);
	snprintf(v->problem, sizeof(v->problem), "lacks a member: adding a disk was undone "
	    "at the start (md had not begun; none of the data was on it); repair the "
	    "volume, then add the disk again");
	log_warnx("volume %s: %s", v->name, v->problem);
	return 0;
}

/*
 * l is the label of a disk an add gave a place past newest's disks, and
 * newest is later: the add was rolled back (roll_back), the disk is no
 * member.  label_same_members() judges such an adding label with the add
 * undone, and would take it.
 */
int
add_rolled_back(const struct label *l, const struct label *newest)
{
	return l->position >= newest->ndisks && l->generation < newest->generation;
}

/* A disk collected before the newest label was seen, of an add rolled back. */
void
add_left_out(struct volume *v)
{
	for (int m = v->label.ndisks; m < PLAN_MAX_DISKS; m++)
		if (v->disk[m][0] && add_rolled_back(&v->mlabel[m], &v->label)) {
			log_info("volume %s: %s was being added as member %d when that was rolled "
			    "back: left out", v->name, v->disk[m], m + 1);
			v->disk[m][0] = '\0';
		}
}

/*
 * A join carried on (Decision 133), from its labels' plan: from the
 * partition step, each step idempotent, as an add's.  One md never
 * began is undone instead (add_join_roll_back; the start's decide did
 * it already).  A joiner gone since md began is a member lost: md
 * reshapes on degraded and a repair replaces it.
 */
static struct add *
join_resume(struct volume *v, struct crypt_key *key)
{
	const struct disk *d;
	struct plan after;
	struct add *a;
	char err[200];
	int m = v->label.intent.disk, keyed;

	/* With a key nothing is written before the job proved it (Decision
	   121): the job undoes it then (join_carried_on). */
	keyed = crypt_key_have(key);
	if (not_taken_yet(v) && !keyed) {
		if (add_join_roll_back(v, err, sizeof(err)) == -1) {
			snprintf(v->problem, sizeof(v->problem), "member %d's room joining the "
			    "tiers stopped and was not undone: %.120s", m + 1, err);
			log_warnx("volume %s: %s", v->name, v->problem);
		}
		return NULL;
	}
	log_warnx("volume %s: member %d's room joining the tiers was interrupted: carried "
	    "on", v->name, m + 1);
	if (add_join_replan(v, &after, err, sizeof(err)) == -1) {
		snprintf(v->problem, sizeof(v->problem), "member %d's room joining the tiers "
		    "stopped: %.150s", m + 1, err);
		log_warnx("volume %s: %s", v->name, v->problem);
		return NULL;
	}
	d = v->disk[m][0] ? disk_find(v->disk[m]) : NULL;
	if ((a = start_at(v, d ? d->sys.name : "", d ? d->sys.serial : "", d ? d->sys.size : 0,
	    &after, AS_PARTITION, m, key, err, sizeof(err))) == NULL)
		log_warnx("volume %s: %s", v->name, err);
	else
		a->carry = keyed;
	return a;
}

/*
 * The add carried on, at start-up or asked again.  named: the disk the
 * caller named and proved (add_carry_on), taken when the new disk never
 * got its label; without one such an add is rolled back.
 */
static struct add *
resume(struct volume *v, const struct disk *named, struct crypt_key *key)
{
	struct add *a;
	struct plan after;
	const struct disk *d;
	enum add_step from = AS_PARTITION;
	char err[256];
	int n = v->label.intent.disk;

	if (label_is_join(&v->label))
		return join_resume(v, key);	/* never an add's (Decision 133) */
	log_warnx("volume %s: adding a disk was interrupted: carried on", v->name);
	if (replan(v, &after, err, sizeof(err)) == -1) {
		snprintf(v->problem, sizeof(v->problem), "adding a disk stopped: %.200s", err);
		log_warnx("volume %s: %s", v->name, v->problem);
		return NULL;
	}
	d = v->disk[n][0] ? disk_find(v->disk[n]) : NULL;
	if (d == NULL && not_taken_yet(v)) {
		/* Stopped before its label: labelled now, or left out. */
		if ((d = named) == NULL) {
			roll_back(v);
			snprintf(v->problem, sizeof(v->problem), "adding a disk stopped before "
			    "the disk was labelled, and it is gone: left out, add it again");
			log_warnx("volume %s: %s", v->name, v->problem);
			return NULL;
		}
		from = AS_LABEL;
	}
	if ((a = start_at(v, d ? d->sys.name : "", d ? d->sys.serial : "", d ? d->sys.size : 0,
	    &after, from, -1, key, err, sizeof(err))) == NULL)
		log_warnx("volume %s: %s", v->name, err);
	return a;
}

void
add_resume(struct volume *v)
{
	resume(v, NULL, NULL);
}

/* Tier t's array runs, not degraded, not recovering. */
static int
array_whole(const struct volume *v, int t)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	volume_md_name(v, t, md, sizeof(md));
	return sys->md_status(md, &st) == 0 && st.degraded == 0 &&
	    strcmp(st.sync_action, "recover") != 0;
}

/* No array of the old members runs degraded or recovers. */
static int
old_members_whole(const struct volume *v)
{
	for (int t = 0; t < v->label.ntiers; t++)
		if (v->label.tier[t].kind != TIER_NONE && !array_whole(v, t))
			return 0;
	return 1;
}

/*
 * A stopped add md never began, undone while the volume runs: the new
 * partitions leave md's arrays (md rebuilds a failed member onto a spare
 * it holds, against the labels), the labels forget the disk.
 */
static void
undo(struct volume *v, const struct disk *d)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];
	int n = v->label.intent.disk;

	/* The disk table may have let it go (md gave it another role): by d. */
	for (int t = 0; v->mlabel[n].generation && t < v->label.ntiers; t++) {
		if (v->label.tier[t].kind == TIER_NONE ||
		    v->mlabel[n].tier[t].role == LABEL_NO_ROLE)
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->part_dev(d->sys.name, v->mlabel[n].tier[t].start, dev, sizeof(dev)) == -1 ||
		    sys->md_status(md, &st) == -1)
			continue;
		/* A spare, or already being rebuilt into a failed member's role,
		   which the labels do not give it. */
		for (int i = 0; i < st.nmembers; i++)
			if (strcmp(st.member[i].dev, dev) == 0 && sys->md_fail(md, dev) != 0)
				log_warnx("volume %s: %s stays in %s", v->name, dev, md);
	}
	roll_back(v);
}

/*
 * volume.start force made a read-only volume writable with an add
 * stopped: carried on as at a start, unless md never began and the
 * volume lacks a member.  md, writable now, rebuilds the lost member
 * onto the new disk's spare against the labels, and once it has, the
 * add can neither go on nor be undone (the disk is a member) and a
 * repair is refused for the add: undone at once, as volume.add_disk
 * would (carry_checks), so a repair can have the volume.
 */
void
add_resume_forced(struct volume *v)
{
	const struct disk *d;
	char name[SYS_NAME_MAX];
	int n = v->label.intent.disk;

	if (label_is_join(&v->label)) {
		join_resume(v, NULL);	/* never an add's undo (Decision 133) */
		return;
	}
	if (n < 1 || n >= v->label.ndisks || v->disk[n][0] == '\0' || !not_taken_yet(v) ||
	    old_members_whole(v) || (d = disk_find(v->disk[n])) == NULL) {
		add_resume(v);
		return;
	}
	snprintf(name, sizeof(name), "%s", d->sys.name);
	undo(v, d);
	snprintf(v->problem, sizeof(v->problem), "lacks a member: adding %s was undone (md "
	    "had not begun; none of the data was on it); repair the volume, then add the "
	    "disk again", name);
	log_warnx("volume %s: %s", v->name, v->problem);
}

/*
 * volume.add_disk on a volume whose add was interrupted, with the disk
 * d the labels name (serial checked by the caller): carried on, with
 * what add_check asks of a new add while md has not begun.  A volume
 * that lost a member meanwhile gets the add undone (nothing of its data
 * is on the new disk), so a repair or a spare can have it.
 */
/*
 * While md has not begun, a carried-on add asks what a new add asks: a
 * volume that lacks a member gets it undone, a disk about to get its
 * label must be free (with force, it is erased).  act 0 only looks:
 * the undo and the erase are left to a job whose key is proven.
 */
static int
carry_checks(struct volume *v, const struct disk *d, int force, int act, int *code,
    char *err, size_t errlen)
{
	int n = v->label.intent.disk;

	*code = NAS_ERR_REFUSED;
	if (!not_taken_yet(v))
		return 0;
	if (!old_members_whole(v)) {
		if (!act)
			return 0;
		undo(v, d);
		return plan_err(err, errlen, "volume %s lacks a member: adding %s was "
		    "undone (md had not begun; none of the data was on it); repair the "
		    "volume, then add the disk again", v->name, d->sys.name);
	}
	/* It gets its label now: free, as for a new add. */
	if (v->disk[n][0] == '\0') {
		if (disk_check_free(force, d, code, err, errlen) == -1)
			return -1;
		if (act && force && d->sys.nsigs && wipe_disk(d, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* A stopped add or join may be carried on by a call: no job, the volume in use here. */
static int
carry_ready(const struct volume *v, int *code, char *err, size_t errlen)
{
	*code = NAS_ERR_REFUSED;
	if (v->job) {
		*code = NAS_ERR_BUSY;
		return plan_err(err, errlen, "volume %s is busy with another job", v->name);
	}
	if (v->held || v->inconsistent || v->foreign || !v->assembled)
		return plan_err(err, errlen, "volume %s is not in use here: %s", v->name,
		    v->problem);
	return 0;
}

struct job *
add_carry_on(struct volume *v, const struct disk *d, int force, struct crypt_key *key,
    int *code, char *err, size_t errlen)
{
	int n = v->label.intent.disk, keyed;
	struct add *a;

	if (carry_ready(v, code, err, errlen) == -1)
		return NULL;
	if (n < 1 || n >= v->label.ndisks || label_is_join(&v->label) ||
	    d->sys.serial[0] == '\0' || d->sys.size != v->label.member[n].size)
		return plan_err(err, errlen, "%s is not the disk volume %s was adding",
		    d->sys.name, v->name), NULL;
	/* With a key, nothing is written before the job has proven it
	   (Decision 121): checked now, done by the job once proven. */
	keyed = crypt_key_have(key);
	if (carry_checks(v, d, force, !keyed, code, err, errlen) == -1)
		return NULL;
	*code = NAS_ERR_LIMIT;
	if ((a = resume(v, d, key)) == NULL) {
		snprintf(err, errlen, "%s", v->problem);
		return NULL;
	}
	a->carry = keyed;
	a->force = force;
	return a->job;
}

/*
 * volume.grow on a volume whose join stopped (Decision 133): carried on
 * as at a start (join_resume), or undone when md never began it.
 */
struct job *
add_join_carry_on(struct volume *v, struct crypt_key *key, int *code, char *err,
    size_t errlen)
{
	int m = v->label.intent.disk;
	struct add *a;

	if (carry_ready(v, code, err, errlen) == -1)
		return NULL;
	if (!label_is_join(&v->label))
		return plan_err(err, errlen, "volume %s holds no join", v->name), NULL;
	if ((a = join_resume(v, key)) != NULL)
		return a->job;
	*code = NAS_ERR_FAILED;
	if (label_is_join(&v->label))
		return plan_err(err, errlen, "%s", v->problem), NULL;
	join_undone_said(v, m, err, errlen);
	return NULL;
}

/* A join undone by volume.grow: the volume's problem, and the answer in err. */
static void
join_undone_said(struct volume *v, int m, char *err, size_t errlen)
{
	snprintf(v->problem, sizeof(v->problem), "member %d's room joining the tiers was "
	    "undone (md had not begun): %s", m + 1, join_undone_advice(v, m));
	volume_refresh_state(v);
	snprintf(err, errlen, "%s", v->problem);
}
