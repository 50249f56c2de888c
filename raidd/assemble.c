/*
 * Finding volumes again from the disks alone: read every disk's label,
 * group the disks by volume, finish or roll back what a power cut
 * interrupted, then start the arrays, the map and the mount. Each step
 * checks what is already running, so a restarted raidd picks up its
 * volumes where it left them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "volume.h"

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
	if (!clash && volume_name_valid(l->name, why, sizeof(why)))
		return v;
	snprintf(v->name, sizeof(v->name), "%.16s~%02x%02x%02x%02x", clash ? l->name : "invalid",
	    l->volume_uuid[0], l->volume_uuid[1], l->volume_uuid[2], l->volume_uuid[3]);
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
	if (v->disk[m][0]) {
		snprintf(v->problem, sizeof(v->problem),
		    "%s and %s both claim member %d", v->disk[m], d->sys.name, m + 1);
		return;
	}
	snprintf(v->disk[m], sizeof(v->disk[m]), "%s", d->sys.name);
	v->mlabel[m] = *l;
	v->next_slot[m] = next_slot;
	if (l->generation > v->label.generation)
		v->label = *l;
}

/* An interrupted create is undone, an interrupted delete finished. */
static int
recover_intent(struct volume *v)
{
	struct json_object *ev;
	char err[256];
	const char *what;

	switch (v->label.intent.op) {
	case LABEL_OP_CREATING:
		what = "creation interrupted: rolled back, its disks are free";
		break;
	case LABEL_OP_DELETING:
		what = "deletion interrupted: finished";
		break;
	default:
		return 0;
	}
	if (volume_stop(v, err, sizeof(err)) == -1 ||
	    volume_wipe_members(v, err, sizeof(err)) == -1) {
		snprintf(v->problem, sizeof(v->problem), "%s", err);
		return 0;
	}
	log_warnx("volume %s: %s", v->name, what);
	disk_refresh(1);
	ev = json_object_new_object();
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	nas_event(v->label.intent.op == LABEL_OP_CREATING ? "volume.rolled_back" :
	    "volume.deleted", ev);
	volume_forget(v);
	return 1;
}

/* Members that missed the last label write get it now. */
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
		if (label_write_all(v, err, sizeof(err)) == -1)
			log_warnx("volume %s: %s", v->name, err);
		return;
	}
}

/*
 * 1 when md lists dev in the array: serving it, or faulty - md kicked
 * it for errors while its disk stayed, and it stays out until a user
 * repairs the volume. A pulled member left the list (health.c).
 */
static int
in_array(const struct sys_md_status *st, const char *dev)
{
	for (int i = 0; i < st->nmembers; i++)
		if (strcmp(st->member[i].dev, dev) == 0)
			return 1;
	return 0;
}

/*
 * A member pulled from a running volume and put back (its label says
 * it is this volume's) rejoins its arrays; md resyncs what it missed.
 */
static void
readd_members(struct volume *v)
{
	struct sys_md_status st;
	struct json_object *ev;
	char md[SYS_NAME_MAX], dev[SYS_NAME_MAX];

	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		volume_md_name(v, t, md, sizeof(md));
		if (lt->kind == TIER_NONE || sys->md_status(md, &st) == -1)
			continue;
		for (int r = 0; r < lt->nmembers; r++) {
			int m = lt->member[r];

			if (v->disk[m][0] == '\0' || sys->part_dev(v->disk[m],
			    v->mlabel[m].tier[t].start, dev, sizeof(dev)) == -1 ||
			    in_array(&st, dev))
				continue;
			if (sys->md_readd(md, dev, r) == -1) {
				log_warn("volume %s: %s could not rejoin %s", v->name, dev, md);
				continue;
			}
			log_info("volume %s: %s (member %d) rejoined %s", v->name, dev, m + 1, md);
			ev = json_object_new_object();
			json_object_object_add(ev, "name", json_object_new_string(v->name));
			json_object_object_add(ev, "disk", json_object_new_string(v->disk[m]));
			json_object_object_add(ev, "md_device", json_object_new_string(md));
			nas_event("volume.member_rejoined", ev);
		}
	}
}

void
volume_scan(void)
{
	struct volume *v;
	char err[256];

	/* The labels disk_refresh() read; damaged ones it reported. */
	for (int i = 0; i < disk_count(); i++) {
		struct disk *d = disk_at(i);

		if (d->label_rc == 0 && !d->flash && !volume_of_disk(d->sys.name))
			collect(d, &d->label, d->label_next);
	}
	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		if (v->job || v->held)
			continue;
		if (v->assembled) {
			volume_fail_missing(v);
			readd_members(v);
			continue;
		}
		if (recover_intent(v)) {
			i--;
			continue;
		}
		if (volume_waits(v))
			continue;
		repair_labels(v);
		if (volume_assemble(v, err, sizeof(err)) == -1 ||
		    volume_mount(v, err, sizeof(err)) == -1) {
			log_warnx("volume %s: %s", v->name, err);
			continue;
		}
		volume_refresh_state(v);
		log_info("volume %s: %s, %s", v->name, v->problem[0] ? v->problem : "assembled",
		    volume_state_name(v->state));
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

static int
start_tier(struct volume *v, int t, char *err, size_t errlen)
{
	const struct label_tier *lt = &v->label.tier[t];
	struct sys_md md = { .raid_disks = lt->nmembers };
	struct sys_md_status st;
	int lacking = 0;

	volume_md_name(v, t, md.name, sizeof(md.name));
	if (sys->md_status(md.name, &st) == 0)
		return 0;
	for (int r = 0; r < lt->nmembers; r++) {
		int m = lt->member[r];

		if (v->disk[m][0] == '\0' || sys->part_dev(v->disk[m], v->mlabel[m].tier[t].start,
		    md.member[md.nmembers].dev, sizeof(md.member[0].dev)) == -1) {
			lacking++;
			continue;
		}
		md.member[md.nmembers++].role = r;
	}
	if (lacking > may_lack(lt->kind, lt->nmembers)) {
		snprintf(err, errlen, "tier %d (%s) lacks %d of %d members", t + 1,
		    plan_tier_kind_name(lt->kind), lacking, lt->nmembers);
		return -1;
	}
	if (sys->md_assemble(&md) == -1) {
		snprintf(err, errlen, "starting %s: %s", md.name, strerror(errno));
		return -1;
	}
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

static void
dm_uuid(const struct volume *v, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "NAS-");

	for (int i = 0; i < 16 && n + 2 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", v->label.volume_uuid[i]);
}

/* A failed assembly leaves nothing it started running. */
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

int
volume_assemble(struct volume *v, char *err, size_t errlen)
{
	struct sys_seg segs[PLAN_MAX_TIERS];
	struct sys_md_status st;
	char dm[SYS_NAME_MAX], uuid[64];
	int started[PLAN_MAX_TIERS] = { 0 }, exists;

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
		for (int t = 0; t < v->label.ntiers; t++)
			if (tier_segment(v, t, &segs[t], err, errlen) == -1)
				goto fail;
		dm_uuid(v, uuid, sizeof(uuid));
		if (sys->dm_create(dm, uuid, segs, v->label.ntiers) == -1) {
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
	volume_dm_name(v->name, dm, sizeof(dm));
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
