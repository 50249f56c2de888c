/*
 * A volume's health from what the kernel shows now: each tier's array
 * (md's array_state and which roles have a member in sync whose device
 * still exists) or bare partition (its disk there or not). md notices a
 * pulled member only at the next I/O to it, so raidd fails such members
 * itself as soon as their disk goes, as mdadm -If does from udev.
 */
#include <stdio.h>
#include <string.h>

#include "volume.h"

static int degraded_start = 1;

/*
 * At start-up a volume missing a member waits (raidd.ini degraded_wait)
 * for disks that spin up late; after that it starts degraded.
 */
void
volume_set_degraded_start(int ok)
{
	degraded_start = ok;
}

/* 1 when the volume must wait before it is assembled without a member. */
int
volume_waits(const struct volume *v)
{
	if (degraded_start)
		return 0;
	for (int m = 0; m < v->label.ndisks; m++)
		if (v->disk[m][0] == '\0')
			return 1;
	return 0;
}

/* array_state values of an array that serves no I/O. */
static int
array_dead(const char *s)
{
	static const char *const dead[] = { "", "clear", "inactive", "broken",
	    "suspended", NULL };

	for (int i = 0; dead[i] != NULL; i++)
		if (strcmp(s, dead[i]) == 0)
			return 1;
	return 0;
}

/* Whether a tier still holds every block with these roles in sync. */
static int
roles_enough(enum tier_kind k, const int *ok, int n)
{
	int lacking = 0;

	for (int r = 0; r < n; r++)
		lacking += !ok[r];
	switch (k) {
	case TIER_RAID1:
		return lacking < n;
	case TIER_RAID5:
		return lacking <= 1;
	case TIER_RAID10:
		/* near=2: roles 2k and 2k+1 hold the same chunks. */
		for (int r = 0; r + 1 < n; r += 2)
			if (!ok[r] && !ok[r + 1])
				return 0;
		return 1;
	default:
		return lacking == 0;
	}
}

/* How bad a running tier's state is: the volume shows its worst tier's. */
int
volume_state_rank(enum vol_state s)
{
	switch (s) {
	case VOL_CLEAN:
		return 0;
	case VOL_RESYNCING:
		return 1;
	case VOL_REBUILDING:
		return 2;
	case VOL_DEGRADED:
		return 3;
	case VOL_DIRTY_DEGRADED:
		return 4;
	default:
		return 5;
	}
}

/* dev is a partition of disk: sda1 of sda, nvme0n1p1 of nvme0n1. */
static int
part_of(const char *dev, const char *disk)
{
	size_t n = strlen(disk);

	if (n == 0 || strncmp(dev, disk, n) != 0)
		return 0;
	dev += n;
	if (disk[n - 1] >= '0' && disk[n - 1] <= '9' && *dev++ != 'p')
		return 0;
	if (*dev == '\0')
		return 0;
	return strspn(dev, "0123456789") == strlen(dev);
}

/*
 * A role's member as md shows it: in_sync, faulty, spare (a spare of
 * the array, or this role's while md recovers it: rebuilding) or
 * missing; *idx its entry in st or -1.
 */
const char *
volume_member_state(const struct volume *v, int t, int r, const struct sys_md_status *st,
    int *idx)
{
	const struct label_tier *lt = &v->label.tier[t];
	int m = lt->member[r];

	*idx = -1;
	if (lt->kind == TIER_NONE)
		return v->disk[m][0] ? "in_sync" : "missing";
	if (v->disk[m][0] == '\0')
		return "missing";
	for (int i = 0; i < st->nmembers; i++) {
		if (!part_of(st->member[i].dev, v->disk[m]))
			continue;
		*idx = i;
		if (!st->member[i].present)
			return "missing";
		if (strstr(st->member[i].state, "faulty"))
			return "faulty";
		if (strstr(st->member[i].state, "in_sync"))
			return "in_sync";
		return st->member[i].slot == r && strcmp(st->sync_action, "recover") == 0 ?
		    "rebuilding" : "spare";
	}
	/* Here but not in the array: md kicked it, and the labels say failed. */
	return v->label.failed & (1U << m) ? "faulty" : "missing";
}

/* Each role lacking in tier t is being recovered by md. */
static int
roles_rebuilding(const struct volume *v, int t, const int *ok, const struct sys_md_status *st)
{
	int idx;

	if (strcmp(st->sync_action, "recover") != 0)
		return 0;
	for (int r = 0; r < v->label.tier[t].nmembers && r < PLAN_MAX_DISKS; r++)
		if (!ok[r] && strcmp(volume_member_state(v, t, r, st, &idx), "rebuilding") != 0)
			return 0;
	return 1;
}

/*
 * Tier t's state: clean, resyncing, rebuilding, degraded or failed. A role counts
 * only while a member holds it in sync and its device exists: md calls
 * a pulled member in_sync until I/O finds it gone.
 */
enum vol_state
volume_tier_state(const struct volume *v, int t, struct sys_md_status *st)
{
	const struct label_tier *lt = &v->label.tier[t];
	int ok[PLAN_MAX_DISKS] = { 0 }, lacking = 0, roles = lt->nmembers;
	char md[SYS_NAME_MAX];

	memset(st, 0, sizeof(*st));
	if (lt->kind == TIER_NONE)
		return v->disk[lt->member[0]][0] ? VOL_CLEAN : VOL_FAILED;
	volume_md_name(v, t, md, sizeof(md));
	if (sys->md_status(md, st) == -1 || array_dead(st->array_state))
		return VOL_FAILED;
	/* volume.add_disk: the labels count the new member before md's reshape does. */
	if (v->label.intent.op == LABEL_OP_ADDING && st->raid_disks > 0 && st->raid_disks < roles)
		roles = st->raid_disks;
	for (int i = 0; i < st->nmembers; i++) {
		int r = st->member[i].slot;

		if (r >= 0 && r < lt->nmembers && r < PLAN_MAX_DISKS && st->member[i].present &&
		    strstr(st->member[i].state, "in_sync") && !strstr(st->member[i].state, "faulty"))
			ok[r] = 1;
	}
	for (int r = 0; r < roles && r < PLAN_MAX_DISKS; r++)
		lacking += !ok[r];
	if (!roles_enough(lt->kind, ok, roles))
		return VOL_FAILED;
	/* raidd starts an array read-only only when it is dirty and degraded. */
	if (strcmp(st->array_state, "readonly") == 0)
		return VOL_DIRTY_DEGRADED;
	if (lacking > 0 || st->degraded > 0)
		return roles_rebuilding(v, t, ok, st) ? VOL_REBUILDING : VOL_DEGRADED;
	/* A check or repair (scrub) reads a redundant array: still clean. */
	if (strcmp(st->sync_action, "resync") == 0 || strcmp(st->sync_action, "recover") == 0 ||
	    strcmp(st->sync_action, "reshape") == 0)
		return VOL_RESYNCING;
	return VOL_CLEAN;
}

/*
 * Members whose block device is gone leave their arrays now: failed and
 * removed, so md counts the array degraded before any I/O and the slot
 * is free for the member's return (Decision 18).
 */
void
volume_fail_missing(struct volume *v)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		/*
		 * A bare partition under the map went: the map and the mount
		 * point at a dead device even if the disk comes back.
		 */
		if (lt->kind == TIER_NONE) {
			if (v->disk[lt->member[0]][0] == '\0' && !v->lost_disk) {
				v->lost_disk = 1;
				snprintf(v->problem, sizeof(v->problem), "tier %d: its disk (serial %s) "
				    "went while the volume was in use; it stays failed: put the disk "
				    "back and reboot", t + 1, v->label.member[lt->member[0]].serial);
			}
			continue;
		}
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_status(md, &st) == -1)
			continue;
		for (int i = 0; i < st.nmembers; i++) {
			if (st.member[i].present)
				continue;
			switch (sys->md_fail(md, st.member[i].dev)) {
			case -1:
				log_warn("volume %s: failing %s (its disk is gone) in %s", v->name,
				    st.member[i].dev, md);
				break;
			case 1:
				/* Again at every event: md's answer does not change. */
				log_debug("volume %s: md keeps %s in %s: it held the last copy",
				    v->name, st.member[i].dev, md);
				break;
			default:
				log_info("volume %s: %s left %s: its disk is gone", v->name,
				    st.member[i].dev, md);
			}
		}
	}
}

/* Why tier t lacks redundancy: its first role not in sync, in words. */
static int
tier_reason(const struct volume *v, int t, char *buf, size_t len)
{
	const struct label_tier *lt = &v->label.tier[t];
	struct sys_md_status st;
	int idx;

	volume_tier_state(v, t, &st);
	for (int r = 0; r < lt->nmembers; r++) {
		int m = lt->member[r];
		const char *ms = volume_member_state(v, t, r, &st, &idx);

		if (strcmp(ms, "in_sync") == 0)
			continue;
		if (strcmp(ms, "missing") == 0 && v->disk[m][0] == '\0')
			snprintf(buf, len, "tier %d: member %d (serial %s) is missing", t + 1, m + 1,
			    v->label.member[m].serial);
		else
			snprintf(buf, len, "tier %d: member %d (%s) is %s", t + 1, m + 1,
			    idx >= 0 ? st.member[idx].dev : v->disk[m], ms);
		return 1;
	}
	if (st.sync_action[0] && strcmp(st.sync_action, "idle") != 0) {
		snprintf(buf, len, "tier %d: md runs %s", t + 1, st.sync_action);
		return 1;
	}
	return 0;
}

/* Words for a change of state, for the event and the log. */
void
volume_state_reason(const struct volume *v, enum vol_state old, char *buf, size_t len)
{
	buf[0] = '\0';
	if (v->state == VOL_DIRTY_DEGRADED) {
		dirty_reason(v, buf, len);
		return;
	}
	if (v->problem[0] && (v->state == VOL_FAILED || !v->assembled)) {
		snprintf(buf, len, "%s", v->problem);
		return;
	}
	for (int t = 0; t < v->label.ntiers && v->assembled; t++)
		if (v->state != VOL_CLEAN && tier_reason(v, t, buf, len))
			return;
	if (v->state == VOL_CLEAN)
		snprintf(buf, len, "%s", old == VOL_RESYNCING ? "resync finished" :
		    old == VOL_REBUILDING ? "rebuild finished" : old == VOL_DEGRADED ?
		    "every member in sync again" : "assembled");
}

/* Stored states against the arrays now; each change is announced once. */
int
volume_check_states(void)
{
	struct volume *v;
	char reason[300];
	int changed = 0;

	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		enum vol_state old = v->state;

		volume_note_failed(v);
		volume_refresh_state(v);
		if (v->state == old)
			continue;
		changed++;
		volume_state_reason(v, old, reason, sizeof(reason));
		volume_state_event(v, old, reason);
	}
	spare_takeover();
	watch_update();
	return changed;
}

/* volume.state: the change, logged and announced. */
void
volume_state_event(const struct volume *v, enum vol_state old, const char *reason)
{
	struct json_object *ev = json_object_new_object();

	log_info("volume %s: %s -> %s: %s", v->name, volume_state_name(old),
	    volume_state_name(v->state), reason);
	json_object_object_add(ev, "name", json_object_new_string(v->name));
	/* state and previous: the names of before issue 9, still read. */
	json_object_object_add(ev, "state", json_object_new_string(volume_state_name(v->state)));
	json_object_object_add(ev, "previous", json_object_new_string(volume_state_name(old)));
	json_object_object_add(ev, "old", json_object_new_string(volume_state_name(old)));
	json_object_object_add(ev, "new", json_object_new_string(volume_state_name(v->state)));
	json_object_object_add(ev, "reason", json_object_new_string(reason));
	nas_event("volume.state", ev);
}
