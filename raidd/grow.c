/*
 * volume.grow: the disks under a volume are bigger now (they grew in
 * place, or replacements larger than the old members took their
 * place); the volume takes the room plan-grow.c finds for it.
 *
 * Crash safety is the label's: the first step writes every member's
 * label with the layout after the grow and the intent "expanding".
 * Every later step - partitions grown, md component sizes grown, the
 * dm table reloaded, the filesystem resized - is idempotent and
 * depends only on that label, so a power cut anywhere is finished at
 * the next start (grow_resume) by running the same steps again; the
 * intent is cleared only after the filesystem has grown.  Nothing
 * already in the volume moves: md grows at the end of each array and
 * the map appends what a tier gained (plan-grow.c).
 *
 * An encrypted volume (Decision 115): its crypt mapping grows after the
 * map, with the passphrase the call gave, proven before the first step;
 * see volume_fs_grow.
 *
 * An SHR volume whose disks offer room above its tiers gets a new tier
 * there (Decision 109).  The first label already holds it, its
 * partitions' places and GUIDs and its array's uuid, with the tier's bit
 * in intent.covered: "its array is not made yet".  While that bit is
 * set the tier holds no data - neither the map nor the filesystem has
 * grown onto it - so nothing on its partitions is trusted: no start
 * assembles it, the band is zeroed where md and blkid look before the
 * partition is added (the table and the kernel must show the band free)
 * and again before the array is made, and a half-made array is made
 * again.  Once every new array runs the labels clear the bit (Decision
 * 110), and from there on the tier is like any other.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "mdsb.h"
#include "plan-grow.h"
#include "volume.h"
#include "crypt.h"

/* intent.step records GS_LABEL (0) and GS_MADE (4) (docs/on-disk-format.md): never renumbered. */
enum grow_step {
	GS_LABEL, GS_PARTS, GS_START, GS_MAKE, GS_MADE, GS_ARRAYS, GS_MAP, GS_MOUNT,
	GS_FS, GS_COMMIT, GS_DONE
};

static const char *const gs_names[] = {
	"writing the intent", "growing partitions", "starting arrays",
	"making new arrays", "recording the new arrays", "growing arrays", "extending the map", "mounting", "growing the filesystem",
	"committing labels", "done",
};

struct grow {
	struct volume	*vol;
	struct job	*job;
	enum grow_step	 step;
	struct plan	 after;		/* GS_LABEL only: the layout to write */
	uint64_t	 was_size;
	struct crypt_key key;		/* an encrypted volume's, until its mapping grew */
	int		 proven;	/* the key opened the mapping before any step */
	ev_timer	 timer;
};

/* Sectors before the data on tier t's members, from a member's md superblock. */
static int
tier_data_offset(const struct volume *v, int t, uint64_t *off, char *err, size_t errlen)
{
	static uint8_t buf[MDSB_BLOCK];
	static struct mdsb sb;
	const struct label_tier *lt = &v->label.tier[t];
	char dev[SYS_NAME_MAX], why[MDSB_ERRLEN];

	for (int r = 0; r < lt->nmembers; r++) {
		int m = lt->member[r];

		if (v->disk[m][0] == '\0' || sys->part_dev(v->disk[m],
		    v->mlabel[m].tier[t].start, dev, sizeof(dev)) == -1 ||
		    sys->read_at(dev, MDSB_SUPER_OFFSET * 512ULL, buf, sizeof(buf)) == -1 ||
		    mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, &sb, why, sizeof(why)) == -1 ||
		    memcmp(sb.set_uuid, lt->array_uuid, 16) != 0)
			continue;
		*off = sb.data_offset;
		return 0;
	}
	return plan_err(err, errlen, "tier %d: no member's md superblock says where its "
	    "data starts", t + 1);
}

/* Members' worth of data a tier holds. */
static int
data_disks(enum tier_kind k, int n)
{
	switch (k) {
	case TIER_RAID0:
		return n;
	case TIER_RAID5:
		return n - 1;
	case TIER_RAID10:
		return n / 2;
	default:
		return 1;
	}
}

/*
 * The volume's layout as its labels describe it, every member present:
 * what plan-grow.c starts from.  Checked like any plan (plan_check_layout).
 */
/*
 * Member m's partition of tier t: its own label's, or, for a member
 * whose disk is absent, another member's of the same tier (a tier is
 * one band, the same on each of its disks: plan.c); 0 when none.
 */
static const struct label_tier *
member_part(const struct volume *v, int m, int t)
{
	const struct label_tier *lt = &v->label.tier[t];

	if (v->disk[m][0])
		return &v->mlabel[m].tier[t];
	for (int r = 0; r < lt->nmembers; r++)
		if (v->disk[lt->member[r]][0])
			return &v->mlabel[lt->member[r]].tier[t];
	return NULL;
}

/* volume_plan, absent_ok: a member whose disk is gone is planned from the labels. */
static int
plan_of(const struct volume *v, int absent_ok, struct plan *p, char *err, size_t errlen)
{
	static const uint32_t layouts[TIER_KIND_COUNT] = {
		0, PLAN_LAYOUT_RAID0, 0, PLAN_LAYOUT_RAID5, PLAN_LAYOUT_RAID10
	};
	static const int md_levels[TIER_KIND_COUNT] = { -1, 0, 1, 5, 10 };
	const struct label *l = &v->label;

	memset(p, 0, sizeof(*p));
	p->level = l->level;
	p->ndisks = l->ndisks;
	for (int m = 0; m < l->ndisks; m++) {
		if (v->disk[m][0] == '\0' && !absent_ok)
			return plan_err(err, errlen, "member %d (serial %s) is missing", m + 1,
			    l->member[m].serial);
		/* An absent member is known by its serial (never a kernel name). */
		snprintf(p->disk[m].id, sizeof(p->disk[m].id), "%s%s",
		    v->disk[m][0] ? "" : "serial:", v->disk[m][0] ? v->disk[m] :
		    l->member[m].serial);
		p->disk[m].size = l->member[m].size;
	}
	p->ntiers = l->ntiers;
	for (int t = 0; t < l->ntiers; t++) {
		const struct label_tier *lt = &l->tier[t];
		struct plan_tier *pt = &p->tier[t];
		int data;

		pt->kind = lt->kind;
		pt->md_level = md_levels[lt->kind];
		pt->nmembers = lt->nmembers;
		pt->chunk = lt->chunk;
		pt->layout = layouts[lt->kind];
		pt->size = lt->tier_size;
		pt->redundant = lt->kind == TIER_RAID5 || lt->kind == TIER_RAID10 ||
		    (lt->kind == TIER_RAID1 && lt->nmembers >= 2);
		for (int r = 0; r < lt->nmembers; r++) {
			const struct label_tier *own = member_part(v, lt->member[r], t);

			if (own == NULL)
				return plan_err(err, errlen, "tier %d: no member's disk is here",
				    t + 1);
			pt->part[r].disk = lt->member[r];
			pt->part[r].start = own->start;
			pt->part[r].size = own->size;
		}
		if (lt->kind == TIER_NONE)
			continue;
		/* A new tier's array is not made yet: where md will put its data. */
		if (grow_making(l, t))
			pt->data_offset = plan_data_offset(pt->part[0].size / 512, pt->chunk);
		else if (tier_data_offset(v, t, &pt->data_offset, err, errlen) == -1)
			return -1;
		data = data_disks(lt->kind, lt->nmembers);
		if (data < 1 || lt->tier_size % ((uint64_t)data * 512))
			return plan_err(err, errlen, "tier %d: its size is no whole number of "
			    "member sectors", t + 1);
		pt->member_sectors = lt->tier_size / 512 / (uint64_t)data;
	}
	p->size = l->size;
	if (l->nsegs == 0) {
		plan_default_map(p);
	} else {
		p->nsegs = l->nsegs;
		for (int i = 0; i < l->nsegs; i++) {
			p->seg[i].tier = l->seg[i].tier;
			p->seg[i].offset = l->seg[i].offset;
			p->seg[i].len = l->seg[i].len;
		}
	}
	return plan_check_layout(p, err, errlen);
}

int
volume_plan(const struct volume *v, struct plan *p, char *err, size_t errlen)
{
	return plan_of(v, 0, p, err, errlen);
}

/*
 * The plan from the labels with members absent: an interrupted add
 * goes on while md carries the array on degraded (an old member gone).
 */
int
volume_plan_labels(const struct volume *v, struct plan *p, char *err, size_t errlen)
{
	return plan_of(v, 1, p, err, errlen);
}

/*
 * A replacement's room that would join an old tier (issue 9): md would
 * take a raid1 of two over as raid5 and reshape it onto the new member.
 * Not done by this grow yet (Decision 125): refused before anything is
 * written, saying which tier and which disks, and the room stays free.
 */
static int
join_refused(const struct plan_change *c, int t, char *err, size_t errlen)
{
	const struct plan_tier *b = &c->before.tier[t], *a = &c->after.tier[t];
	int disks[PLAN_MAX_DISKS], n = plan_joiners(c, t, disks);
	char who[64] = "";
	size_t len = 0;

	for (int i = 0; i < n && len < sizeof(who); i++)
		len += (size_t)snprintf(who + len, sizeof(who) - len, "%s%d", i ? ", " : "",
		    disks[i] + 1);
	return plan_err(err, errlen, "tier %d (%s of %d) would take the room of member%s "
	    "%s and become %s of %d (md %sreshape): volume.grow does not do that yet, "
	    "the room stays free", t + 1, plan_tier_kind_name(b->kind), b->nmembers,
	    n == 1 ? "" : "s", who, plan_tier_kind_name(a->kind), a->nmembers,
	    (c->what[t] & PLAN_CH_LEVEL) ? "takeover, then " : "");
}

/*
 * Only what the steps below carry out: partitions that grow in place,
 * and an SHR volume's new raid1 or raid5 tier.
 */
static int
steps_known(const struct plan_change *c, char *err, size_t errlen)
{
	for (int t = 0; t < c->after.ntiers; t++)
		if (c->what[t] == PLAN_CH_NEW && c->before.level == LEVEL_SHR &&
		    (c->after.tier[t].kind == TIER_RAID1 || c->after.tier[t].kind == TIER_RAID5))
			continue;
		else if (c->what[t] & PLAN_CH_MEMBERS)
			return join_refused(c, t, err, errlen);
		else if (c->what[t] & ~PLAN_CH_PART)
			return plan_err(err, errlen, "tier %d needs %s, which this raidd does "
			    "not do yet", t + 1, (c->what[t] & PLAN_CH_NEW) ? "a new array" :
			    "md to reshape an array");
	return 0;
}

/*
 * What the grow of a running, clean volume would change: plan_grow()
 * from its plan and the sizes its members' disks have now.
 */
static int
grow_change(const struct volume *v, struct plan_change *c, int *code, char *err,
    size_t errlen)
{
	uint64_t size[PLAN_MAX_DISKS];
	struct plan before;
	const struct disk *d;

	*code = NAS_ERR_REFUSED;
	if (v->label.intent.op != LABEL_OP_NONE || !v->assembled)
		return plan_err(err, errlen, "volume %s is not running", v->name);
	if (volume_state_now(v) != VOL_CLEAN)
		return plan_err(err, errlen, "volume %s is %s: it grows only when clean",
		    v->name, volume_state_name(volume_state_now(v)));
	if (volume_plan(v, &before, err, errlen) == -1)
		return -1;
	for (int m = 0; m < v->label.ndisks; m++) {
		if ((d = disk_find(v->disk[m])) == NULL || !member_is(d, v, m))
			return plan_err(err, errlen, "member %d is not where it was", m + 1);
		size[m] = d->sys.size;
	}
	*code = NAS_ERR_INVALID;
	return plan_grow(&before, size, c, err, errlen);
}

int
grow_check(const struct volume *v, struct plan *after, int *code, char *err, size_t errlen)
{
	struct plan_change *c;

	*code = NAS_ERR_REFUSED;
	if (v->held || v->inconsistent || v->foreign)
		return plan_err(err, errlen, "volume %s is not in use here: %s", v->name,
		    v->problem);
	if (v->label.intent.op == LABEL_OP_EXPANDING)
		return 0;	/* an interrupted grow: carried on */
	if ((c = malloc(sizeof(*c))) == NULL)
		return plan_err(err, errlen, "out of memory");
	if (grow_change(v, c, code, err, errlen) == -1 || steps_known(c, err, errlen) == -1) {
		free(c);
		return -1;
	}
	*after = c->after;
	free(c);
	return 0;
}

/*
 * 1 when the grow of v is a join (an old tier takes a member's room,
 * Decision 133): c is its plan, for add_join_start(); 0 when it is none.
 */
int
grow_is_join(const struct volume *v, struct plan_change *c, int *code, char *err,
    size_t errlen)
{
	if (v->held || v->inconsistent || v->foreign)
		return 0;	/* grow_check says why */
	if (grow_change(v, c, code, err, errlen) == -1)
		return -1;
	for (int t = 0; t < c->before.ntiers && t < c->after.ntiers; t++)
		if (c->what[t] & PLAN_CH_MEMBERS)
			return 1;
	return 0;
}

/* ---- the steps ---- */

/* v's label and each member's own part of it, as after describes them (add.c too). */
void
grow_label_from(struct volume *v, const struct plan *after)
{
	struct label *l = &v->label;

	l->size = after->size;
	for (int m = 0; m < after->ndisks; m++)
		l->member[m].size = after->disk[m].size;
	for (int t = 0; t < after->ntiers; t++) {
		const struct plan_tier *pt = &after->tier[t];

		l->tier[t].tier_size = pt->size;
		for (int r = 0; r < pt->nmembers; r++)
			v->mlabel[pt->part[r].disk].tier[t].size = pt->part[r].size;
	}
	label_map_from_plan(l, after);
}

/*
 * A new tier t of after in v's labels: the volume's record of it (its
 * array's uuid new), and each member's own partition, with new GUIDs.
 */
static int
label_new_tier(struct volume *v, const struct plan *after, int t)
{
	const struct plan_tier *pt = &after->tier[t];
	struct label_tier *lt = &v->label.tier[t];

	memset(lt, 0, sizeof(*lt));
	lt->kind = (uint8_t)pt->kind;
	lt->nmembers = (uint8_t)pt->nmembers;
	lt->role = LABEL_NO_ROLE;
	lt->chunk = pt->chunk;
	if (getrandom(lt->array_uuid, sizeof(lt->array_uuid), 0) != sizeof(lt->array_uuid))
		return -1;
	/* Each disk's label carries the band: a member that missed this label
	   learns its place from any that has it (grow_decide). */
	for (int m = 0; m < after->ndisks; m++) {
		memset(&v->mlabel[m].tier[t], 0, sizeof(v->mlabel[m].tier[t]));
		v->mlabel[m].tier[t].role = LABEL_NO_ROLE;
		v->mlabel[m].tier[t].start = pt->part[0].start;
		v->mlabel[m].tier[t].size = pt->part[0].size;
	}
	for (int r = 0; r < pt->nmembers; r++) {
		struct label_tier *own = &v->mlabel[pt->part[r].disk].tier[t];

		lt->member[r] = (uint8_t)pt->part[r].disk;
		own->role = (uint8_t)r;
		own->start = pt->part[r].start;
		own->size = pt->part[r].size;
		if (label_tier_guids(own) == -1)
			return -1;
	}
	return 0;
}

static int
gs_label(struct grow *g, char *err, size_t errlen)
{
	return grow_label(g->vol, &g->after, err, errlen);
}

/*
 * The grow's first label: after's layout, its new tiers covered, the
 * intent expanding.  volume.add_disk's last label write for SHR too
 * (Decision 118), so no cut falls between the add and the grow.
 */
int
grow_label(struct volume *v, const struct plan *after, char *err, size_t errlen)
{
	struct label was = v->label, mwas[PLAN_MAX_DISKS];
	unsigned covered = 0;

	memcpy(mwas, v->mlabel, sizeof(mwas));
	for (int t = was.ntiers; t < after->ntiers; t++) {
		if (label_new_tier(v, after, t) == -1) {
			v->label = was;
			memcpy(v->mlabel, mwas, sizeof(mwas));
			return plan_err(err, errlen, "no random numbers: %s", strerror(errno));
		}
		covered |= 1U << t;
	}
	v->label.ntiers = (uint8_t)after->ntiers;
	grow_label_from(v, after);
	v->label.intent.op = LABEL_OP_EXPANDING;
	v->label.intent.step = GS_LABEL;
	v->label.intent.disk = LABEL_NO_DISK;
	v->label.intent.covered = (uint8_t)covered;
	v->label.intent.target = v->label.generation + 2;
	if (label_change(v, ~0U, &was, err, errlen) == 0)
		return 0;
	/* Written nowhere: the volume is as it was. Written somewhere: the
	   labels that took it are finished at the next start. */
	if (v->label.generation == was.generation)
		memcpy(v->mlabel, mwas, sizeof(mwas));
	return -1;
}

/*
 * One partition made as long as member m's label says, through the
 * member's proven descriptor (Decision 21); the kernel's part of it goes
 * by name too (sysfs), so the node is rechecked before and after.
 */
/* What a change to member m's table through member_through() is of. */
struct part_at {
	struct volume		*vol;
	int			 m, t;
	const struct plan_tier	*pt;	/* grow_part_new's */
	const struct sys_part	*sp;
};

static int
resize_through(struct dfd *f, void *arg, char *err, size_t errlen)
{
	const struct part_at *p = arg;
	const struct label_tier *own = &p->vol->mlabel[p->m].tier[p->t];

	if (sys->part_resize(p->vol->disk[p->m], f->fd, own->start, own->size) == -1)
		return plan_err(err, errlen, "%s: growing tier %d's partition: %s",
		    p->vol->disk[p->m], p->t + 1, strerror(errno));
	return 0;
}

static int
part_grow(struct volume *v, int m, int t, char *err, size_t errlen)
{
	struct part_at p = { v, m, t, NULL, NULL };

	return member_through(v, m, resize_through, &p, err, errlen);
}

/* Member m's band in the plan's tier pt; -1 (0, 0) when m is not in it. */
static int
plan_band(const struct plan_tier *pt, int m, uint64_t *start, uint64_t *size)
{
	*start = *size = 0;
	for (int r = 0; r < pt->nmembers; r++)
		if (pt->part[r].disk == m) {
			*start = pt->part[r].start;
			*size = pt->part[r].size;
			return 0;
		}
	return -1;
}

/*
 * Where md and blkid look for a superblock or a signature in member
 * m's partition of a new tier: its head up to md's data (md 1.1 and
 * 1.2, the bitmap, filesystems, LUKS) and its last MiB (md 0.90 and
 * 1.0, a GPT backup).  Zeroed through the disk's proven descriptor, so
 * that no array that once lay there is assembled or trusted.
 */
static int
zero_stale(struct volume *v, int m, const struct plan_tier *pt, struct dfd *f,
    char *err, size_t errlen)
{
	uint64_t start = 0, size = 0, head, tail;

	plan_band(pt, m, &start, &size);
	head = pt->data_offset * 512 > MIB ? pt->data_offset * 512 : MIB;
	tail = MIB;
	if (head > size)
		head = size;
	if (tail > size)
		tail = size;
	if (sys->fd_zero(f->fd, start, head) == -1 ||
	    sys->fd_zero(f->fd, start + size - tail, tail) == -1 || sys->fd_sync(f->fd) == -1)
		return plan_err(err, errlen, "%s: zeroing the new partition's band: %s",
		    v->disk[m], strerror(errno));
	return 0;
}

/*
 * Member m's partition of new tier t: its band proven free on the table
 * and the kernel (sys->part_free: a partition the kernel still holds
 * there, gone from the GPT, is someone's data), then zeroed, then the
 * entry added, which part_add refuses on the same terms; once there, it
 * is zeroed again (GS_MAKE).
 */
static int
add_through(struct dfd *f, void *arg, char *err, size_t errlen)
{
	const struct part_at *p = arg;
	const char *disk = p->vol->disk[p->m];
	char dev[SYS_NAME_MAX];

	if (sys->part_free(disk, f->fd, p->sp) == -1)
		goto refused;
	if (sys->part_dev(disk, p->sp->start, dev, sizeof(dev)) == -1 &&
	    zero_stale(p->vol, p->m, p->pt, f, err, errlen) == -1)
		return -1;
	if (sys->part_add(disk, f->fd, p->sp) == -1)
		goto refused;
	return 0;
refused:
	return plan_err(err, errlen, "%s: adding tier %d's partition: %s", disk, p->t + 1,
	    errno == EBUSY ? "its band is not free" : strerror(errno));
}

/*
 * The partition is added where m's label says and zeroed where the plan
 * says: the two must be one band (a join's plan is plan-grow's, not its
 * labels': Decision 133), or nothing is done.
 */
int
grow_part_new(struct volume *v, int m, int t, const struct plan_tier *pt, char *err,
    size_t errlen)
{
	const struct label_tier *own = &v->mlabel[m].tier[t];
	struct sys_part sp;
	struct part_at p = { v, m, t, pt, &sp };
	uint64_t start, size;

	if (plan_band(pt, m, &start, &size) == -1 || start != own->start ||
	    size != own->size)
		return plan_err(err, errlen, "%s: tier %d's band in member %d's label (%llu "
		    "bytes at %llu) is not the plan's (%llu at %llu): no partition added",
		    v->disk[m], t + 1, m + 1, (unsigned long long)own->size,
		    (unsigned long long)own->start, (unsigned long long)size,
		    (unsigned long long)start);
	memset(&sp, 0, sizeof(sp));
	sp.start = own->start;
	sp.size = own->size;
	memcpy(sp.guid, own->part_guid, 16);
	memcpy(sp.type, own->part_type, 16);
	snprintf(sp.name, sizeof(sp.name), "raidd:%.*s:t%c", VOL_NAME_MAX, v->name,
	    (char)('1' + t));
	return member_through(v, m, add_through, &p, err, errlen);
}

/*
 * The plan a grow carries on with: from the labels, an absent member's
 * disk known by its serial (Decision 120).  A tier not made yet must
 * have every member: this raidd makes no array degraded.
 */
static int
grow_plan(struct volume *v, struct plan *p, char *err, size_t errlen)
{
	if (volume_plan_labels(v, p, err, errlen) == -1)
		return -1;
	for (int t = 0; t < v->label.ntiers; t++)
		for (int r = 0; grow_making(&v->label, t) && r < v->label.tier[t].nmembers; r++)
			if (v->disk[v->label.tier[t].member[r]][0] == '\0')
				return plan_err(err, errlen, "member %d is missing, and the new "
				    "tier %d is not made yet: put it back",
				    v->label.tier[t].member[r] + 1, t + 1);
	return 0;
}

/*
 * Every partition whose label says it is bigger than it is, or new.
 * A new tier's partitions are added only once every member of the
 * volume present carries the label with their places: until then a
 * start forgets none of them.  An absent member's disk is left as it
 * is (Decision 120): md grows a degraded array, and refuses that disk
 * back if its partition is now too small; a repair replaces it.
 */
static int
gs_parts(struct grow *g, char *err, size_t errlen)
{
	struct volume *v = g->vol;
	struct plan p;

	if (v->label.intent.covered && label_write_all(v, err, errlen) == -1)
		return -1;
	if (grow_plan(v, &p, err, errlen) == -1)
		return -1;
	for (int m = 0; m < v->label.ndisks; m++) {
		if (v->disk[m][0] == '\0')
			continue;
		for (int t = 0; t < v->label.ntiers; t++) {
			const struct label_tier *own = &v->mlabel[m].tier[t];

			if (own->role == LABEL_NO_ROLE)
				continue;
			if (grow_making(&v->label, t) ? grow_part_new(v, m, t, &p.tier[t], err,
			    errlen) == -1 : part_grow(v, m, t, err, errlen) == -1)
				return -1;
		}
	}
	return 0;
}

/*
 * The old arrays; a new tier's is not assembled from what its partitions
 * hold.  One md runs read-only (dirty and degraded, Decision 90) grows
 * nothing, nor does the filesystem on it: the user makes it writable
 * (volume.start with force) first.
 */
static int
gs_start(struct grow *g, char *err, size_t errlen)
{
	struct volume *v = g->vol;
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	if (volume_start_arrays(v, err, errlen) == -1)
		return -1;
	for (int t = 0; t < v->label.ntiers; t++) {
		if (v->label.tier[t].kind == TIER_NONE || grow_making(&v->label, t))
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_status(md, &st) == 0 && strcmp(st.array_state, "readonly") == 0)
			return plan_err(err, errlen, "%s runs read-only (written when the power "
			    "went while it lacked a member): volume.start with force first", md);
	}
	return 0;
}

/* A new tier's array that runs: made by this grow (its uuid), or not ours. */
static int
made_already(struct volume *v, int t, const char *md, char *err, size_t errlen)
{
	struct sys_md_status st;
	struct mdsb sb;

	if (sys->md_status(md, &st) == -1)
		return 0;
	for (int i = 0; i < st.nmembers; i++)
		if (st.member[i].present && member_read_sb(st.member[i].dev, &sb) == 0 &&
		    memcmp(sb.set_uuid, v->label.tier[t].array_uuid, 16) == 0)
			return 1;
	return plan_err(err, errlen, "%s runs, and is not tier %d's array", md, t + 1);
}

/* Tier t's array, made afresh on partitions zeroed again. */
static int
make_tier(struct volume *v, int t, const struct plan_tier *pt, char *err, size_t errlen)
{
	char md[SYS_NAME_MAX];
	struct dfd f;
	int r;

	volume_md_name(v, t, md, sizeof(md));
	if ((r = made_already(v, t, md, err, errlen)) != 0)
		return r == 1 ? 0 : -1;
	for (int i = 0; i < pt->nmembers; i++) {
		int m = pt->part[i].disk;

		if (member_open(v, m, &f, err, errlen) == -1)
			return -1;
		if (zero_stale(v, m, pt, &f, err, errlen) == -1) {
			dfd_abandon(&f);
			return -1;
		}
		if (dfd_close(&f, err, errlen) == -1)
			return -1;
	}
	if (volume_make_array(v, t, pt, v->label.tier[t].array_uuid, err, errlen) == -1)
		return -1;
	log_info("volume %s: %s made for tier %d (%s of %d)", v->name, md, t + 1,
	    plan_tier_kind_name(pt->kind), pt->nmembers);
	return 0;
}

static int
gs_make(struct grow *g, char *err, size_t errlen)
{
	struct volume *v = g->vol;
	struct plan p;

	if (v->label.intent.covered == 0)
		return 0;
	if (grow_plan(v, &p, err, errlen) == -1)
		return -1;
	for (int t = 0; t < p.ntiers; t++)
		if (grow_making(&v->label, t) && make_tier(v, t, &p.tier[t], err, errlen) == -1)
			return -1;
	return 0;
}

/* The new arrays run: from this generation on they are assembled like any. */
static int
gs_made(struct grow *g, char *err, size_t errlen)
{
	struct volume *v = g->vol;
	struct label was = v->label;

	if (v->label.intent.covered == 0)
		return 0;
	/* From here the bands are recorded on the members only (member_label). */
	v->label.intent.covered = 0;
	v->label.intent.step = GS_MADE;
	v->label.intent.target = was.generation + 2;
	return label_change(v, ~0U, &was, err, errlen);
}

/* md's component size of every array: what the label's tier size says. */
static int
gs_arrays(struct grow *g, char *err, size_t errlen)
{
	struct volume *v = g->vol;
	struct plan p;
	char md[SYS_NAME_MAX];

	if (grow_plan(v, &p, err, errlen) == -1)
		return -1;
	for (int t = 0; t < p.ntiers; t++) {
		if (p.tier[t].kind == TIER_NONE)
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_grow(md, p.tier[t].member_sectors) == -1)
			return plan_err(err, errlen, "growing %s to %llu sectors a member: %s", md,
			    (unsigned long long)p.tier[t].member_sectors, strerror(errno));
	}
	return 0;
}

static int
gs_map(struct grow *g, char *err, size_t errlen)
{
	return volume_map_reload(g->vol, err, errlen);
}

/* The live map takes the label's table; no map yet: the volume is assembled. */
int
volume_map_reload(struct volume *v, char *err, size_t errlen)
{
	struct sys_seg segs[PLAN_MAX_SEGS];
	char dm[SYS_NAME_MAX];
	int n;

	volume_dm_name(v->name, dm, sizeof(dm));
	switch (sys->dm_exists(dm)) {
	case 0:
		return volume_assemble(v, err, errlen);
	case 1:
		break;
	default:
		return plan_err(err, errlen, "looking for %s: %s", dm, strerror(errno));
	}
	if (volume_segments(v, segs, &n, err, errlen) == -1)
		return -1;
	if (sys->dm_reload(dm, segs, n) == -1)
		return plan_err(err, errlen, "reloading %s: %s", dm, strerror(errno));
	v->assembled = 1;
	return 0;
}

static int
gs_mount(struct grow *g, char *err, size_t errlen)
{
	return volume_mount(g->vol, err, errlen);
}

static void grow_advance(struct grow *);
static void grow_failed(struct grow *, const char *);

static void
fs_done(int status, const char *output, void *arg)
{
	struct grow *g = arg;
	char why[256];

	/* The mapping has grown (or never will by this job): the key goes. */
	crypt_key_wipe(&g->key);
	if (status != 0) {
		snprintf(why, sizeof(why), "growing the filesystem failed: %.200s", output);
		grow_failed(g, why);
		return;
	}
	g->step++;
	grow_advance(g);
}

/* The filesystem on the volume's top device; 1: none to grow. */
static int
fs_now(struct volume *v, sys_done_cb done, void *arg, char *err, size_t errlen)
{
	static const char *const fs[] = { "none", "ext4", "btrfs" };
	char top[SYS_NAME_MAX], mp[256];

	if (v->label.fs == LABEL_FS_NONE)
		return 1;
	crypt_top_name(v, top, sizeof(top));
	volume_mountpoint(v->name, mp, sizeof(mp));
	if (sys->fs_grow(fs[v->label.fs], top, mp, done, arg) == -1)
		return plan_err(err, errlen, "growing the filesystem: %s", strerror(errno));
	return 0;
}

struct fs_after {
	struct volume	*vol;
	sys_done_cb	 done;
	void		*arg;
};

static void
mapping_grown(int code, const char *msg, void *arg)
{
	struct fs_after f = *(struct fs_after *)arg;
	char err[256];
	int r;

	free(arg);
	/* Proven before the first step: refused now, it was changed since
	   (its keyslot gone: refused untried, Decision 123). */
	if (code == NAS_ERR_DENIED) {
		snprintf(err, sizeof(err), "the passphrase was changed since the call (%.150s): "
		    "asked again with the new one, the call carries it on", msg);
		f.done(1, err, f.arg);
		return;
	}
	if (code != 0) {
		snprintf(err, sizeof(err), "cryptd did not grow the mapping: %.200s", msg);
		f.done(1, err, f.arg);
		return;
	}
	if ((r = fs_now(f.vol, f.done, f.arg, err, sizeof(err))) != 0)
		f.done(r == 1 ? 0 : 1, r == 1 ? "" : err, f.arg);
}

/*
 * The filesystem step of a grow or an add (add.c too), once the joined
 * map has its new size.  An encrypted volume's crypt mapping grows
 * first: crypt.resize with the key the job holds (Decision 115), then
 * the filesystem on the mapping.  A job carried on without a key (at a
 * start, or after volume.unlock) needs none when the mapping was opened
 * over the map at its size now; otherwise it stops, the intent kept,
 * for the call again with the passphrase.  0: done(arg) comes later;
 * 1: nothing to wait for; -1: err.
 */
int
volume_fs_grow(struct volume *v, struct crypt_key *k, sys_done_cb done, void *arg,
    char *err, size_t errlen)
{
	struct fs_after *f;

	if (crypt_encrypted(v)) {
		if (crypt_locked(v))
			return plan_err(err, errlen, "volume %s is locked: volume.unlock carries "
			    "it on", v->name);
		if (crypt_key_have(k)) {
			if ((f = calloc(1, sizeof(*f))) == NULL)
				return plan_err(err, errlen, "out of memory");
			f->vol = v;
			f->done = done;
			f->arg = arg;
			if (crypt_resize(v, k, mapping_grown, f) == -1) {
				free(f);
				return plan_err(err, errlen, "cryptd cannot be asked: %s",
				    strerror(errno));
			}
			return 0;
		}
		if (!crypt_covers(v))
			return plan_err(err, errlen, "volume %s's crypt mapping is smaller than "
			    "the volume: asked again with the passphrase, the call carries it on",
			    v->name);
	}
	return fs_now(v, done, arg, err, errlen);
}

static int
gs_fs(struct grow *g, char *err, size_t errlen)
{
	return volume_fs_grow(g->vol, &g->key, fs_done, g, err, errlen);
}

static int
gs_commit(struct grow *g, char *err, size_t errlen)
{
	struct volume *v = g->vol;
	struct label was = v->label;

	v->label.intent.op = LABEL_OP_NONE;
	v->label.intent.step = 0;
	v->label.intent.covered = 0;
	v->label.intent.target = 0;
	return label_change(v, ~0U, &was, err, errlen);
}

static int (*const gs_steps[])(struct grow *, char *, size_t) = {
	[GS_LABEL] = gs_label, [GS_PARTS] = gs_parts, [GS_START] = gs_start,
	[GS_MAKE] = gs_make, [GS_MADE] = gs_made,
	[GS_ARRAYS] = gs_arrays, [GS_MAP] = gs_map, [GS_MOUNT] = gs_mount,
	[GS_FS] = gs_fs, [GS_COMMIT] = gs_commit,
};

/*
 * A failed step leaves the intent on the disks: the next start (or the
 * next volume.grow) carries the grow on from its first step.  Before
 * the intent was written, nothing changed.  A volume the start handed
 * to the grow is brought up as it was before it (Decision 120).
 */
static void
grow_failed(struct grow *g, const char *why)
{
	struct volume *v = g->vol;
	char err[256];

	v->job = NULL;
	log_warnx("volume %s: grow: %s while %s", v->name, why, gs_names[g->step]);
	/* Carried on at start and stopped: the volume still comes up as it was. */
	if (!v->assembled && v->label.intent.op == LABEL_OP_EXPANDING &&
	    (volume_assemble_as_was(v, err, sizeof(err)) == -1 ||
	    volume_mount(v, err, sizeof(err)) == -1))
		log_warnx("volume %s: %s", v->name, err);
	if (v->label.intent.op == LABEL_OP_EXPANDING)
		snprintf(v->problem, sizeof(v->problem), "growing stopped (%.150s): %s", why,
		    crypt_locked(v) ? "volume.unlock carries it on" :
		    "volume.grow or the next start carries it on");
	volume_refresh_state(v);
	job_fail(g->job, NAS_ERR_FAILED, "%s while %s", why, gs_names[g->step]);
}

static void
grow_finish(struct grow *g)
{
	struct volume *v = g->vol;
	struct json_object *ev = json_object_new_object();

	v->job = NULL;
	v->problem[0] = '\0';
	volume_refresh_state(v);
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	json_object_object_add(ev, "size_bytes", json_object_new_int64((int64_t)v->label.size));
	json_object_object_add(ev, "was_bytes", json_object_new_int64((int64_t)g->was_size));
	nas_event("volume.grown", ev);
	log_info("volume %s grown: %llu bytes", v->name, (unsigned long long)v->label.size);
	job_done(g->job, volume_describe(v));
}

static void
proven(int code, const char *msg, void *arg)
{
	struct grow *g = arg;
	struct volume *v = g->vol;

	if (code == 0) {
		g->proven = 1;
		grow_advance(g);
		return;
	}
	crypt_key_wipe(&g->key);
	v->job = NULL;
	log_warnx("volume %s: grow: cryptd refused: %s", v->name, msg);
	job_fail(g->job, code, "volume %s: %s: nothing was changed", v->name, msg);
}

/*
 * Before anything is written the key must open the mapping: crypt.resize
 * with the joined map as it is (a no-op on a fresh grow, whose map grows
 * later) proves it, and cryptd's back-off counts a wrong one.
 */
static void
grow_prove(struct grow *g)
{
	char err[256];

	job_progress(g->job, 0, "proving the passphrase");
	if (crypt_resize(g->vol, &g->key, proven, g) == -1) {
		snprintf(err, sizeof(err), "cryptd cannot be asked: %s", strerror(errno));
		g->proven = 1;	/* the step failed: before anything was written */
		crypt_key_wipe(&g->key);
		g->vol->job = NULL;
		job_fail(g->job, NAS_ERR_FAILED, "volume %s: %s: nothing was changed",
		    g->vol->name, err);
	}
}

static void
grow_timer(struct ev_loop *l, ev_timer *w, int revents)
{
	struct grow *g = w->data;
	char err[256];

	int r;

	(void)l;
	(void)revents;
	if (g->step == GS_DONE) {
		grow_finish(g);
		return;
	}
	if (crypt_key_have(&g->key) && !g->proven) {
		grow_prove(g);
		return;
	}
	job_progress(g->job, 100.0 * g->step / GS_DONE, gs_names[g->step]);
	if ((r = gs_steps[g->step](g, err, sizeof(err))) == -1) {
		grow_failed(g, err);
		return;
	}
	if (g->step == GS_FS && r == 0)
		return;		/* fs_done goes on */
	g->step++;
	grow_advance(g);
}

static void
grow_advance(struct grow *g)
{
	ev_timer_set(&g->timer, 0., 0.);
	ev_timer_start(nas_loop(), &g->timer);
}

static void
grow_release(void *arg)
{
	struct grow *g = arg;

	ev_timer_stop(nas_loop(), &g->timer);
	crypt_key_wipe(&g->key);
	free(g);
}

static const struct job_ops grow_ops = { .release = grow_release };

/*
 * after: the layout grow_check() planned, or NULL to carry on with the
 * one the labels' intent already records (from its first step).
 */
struct job *
grow_start(struct volume *v, const struct plan *after, struct crypt_key *key, char *err,
    size_t errlen)
{
	struct grow *g;

	if ((g = calloc(1, sizeof(*g))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (key)
		crypt_key_move(&g->key, key);
	g->vol = v;
	g->was_size = v->label.size;
	if (after)
		g->after = *after;
	g->step = after ? GS_LABEL : GS_PARTS;
	ev_timer_init(&g->timer, grow_timer, 0., 0.);
	g->timer.data = g;
	if ((g->job = job_start("volume.grow", v->name, &grow_ops, g)) == NULL) {
		crypt_key_wipe(&g->key);
		free(g);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->job = g->job;
	grow_advance(g);
	return g->job;
}

/*
 * At start-up, before assembly (assemble.c decide()): a member whose
 * label is older than the grow's first one has no place for itself in
 * the new tiers.  Every member with that label records each new tier's
 * band; the member takes its role from the tier's member list, and new
 * GUIDs - no partition of a new tier exists before every member carries
 * the label (gs_parts).  repair_labels() then writes it.
 */
int
grow_decide(struct volume *v, char *why, size_t len)
{
	const struct label_tier *band;

	for (int t = 0; t < v->label.ntiers; t++) {
		if (!grow_making(&v->label, t))
			continue;
		band = NULL;
		for (int k = 0; k < v->label.ndisks && band == NULL; k++)
			if (v->disk[k][0] && v->mlabel[k].generation == v->label.generation &&
			    v->mlabel[k].tier[t].size)
				band = &v->mlabel[k].tier[t];
		if (band == NULL)
			return plan_err(why, len, "a grow was interrupted and no member's label "
			    "says where its tier %d goes", t + 1);
		for (int m = 0; m < v->label.ndisks; m++) {
			struct label_tier *own = &v->mlabel[m].tier[t];
			int r;

			/* Only a tier the member's own label lacks: an old one keeps its GUIDs. */
			if (v->disk[m][0] == '\0' || v->mlabel[m].generation == v->label.generation ||
			    t < v->mlabel[m].ntiers)
				continue;
			memset(own, 0, sizeof(*own));
			r = label_role_of(&v->label, t, m);
			own->role = r < 0 ? LABEL_NO_ROLE : (uint8_t)r;
			own->start = band->start;
			own->size = band->size;
			if (label_tier_guids(own) == -1)
				return plan_err(why, len, "no random numbers");
			log_info("volume %s: member %d missed the grow's first label: tier %d's "
			    "place taken from the others", v->name, m + 1, t + 1);
		}
	}
	return 0;
}

/* At start-up: a volume whose labels say "expanding" is grown to what they say. */
void
grow_resume(struct volume *v)
{
	char err[256];

	log_warnx("volume %s: growing was interrupted: carried on", v->name);
	if (grow_start(v, NULL, NULL, err, sizeof(err)) == NULL)
		log_warnx("volume %s: %s", v->name, err);
}
