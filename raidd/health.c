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

/*
 * Tier t's state: clean, resyncing, degraded or failed. A role counts
 * only while a member holds it in sync and its device exists: md calls
 * a pulled member in_sync until I/O finds it gone.
 */
enum vol_state
volume_tier_state(const struct volume *v, int t, struct sys_md_status *st)
{
	const struct label_tier *lt = &v->label.tier[t];
	int ok[PLAN_MAX_DISKS] = { 0 }, lacking = 0;
	char md[SYS_NAME_MAX];

	memset(st, 0, sizeof(*st));
	if (lt->kind == TIER_NONE)
		return v->disk[lt->member[0]][0] ? VOL_CLEAN : VOL_FAILED;
	volume_md_name(v, t, md, sizeof(md));
	if (sys->md_status(md, st) == -1 || array_dead(st->array_state))
		return VOL_FAILED;
	for (int i = 0; i < st->nmembers; i++) {
		int r = st->member[i].slot;

		if (r >= 0 && r < lt->nmembers && r < PLAN_MAX_DISKS && st->member[i].present &&
		    strstr(st->member[i].state, "in_sync") && !strstr(st->member[i].state, "faulty"))
			ok[r] = 1;
	}
	for (int r = 0; r < lt->nmembers && r < PLAN_MAX_DISKS; r++)
		lacking += !ok[r];
	if (!roles_enough(lt->kind, ok, lt->nmembers))
		return VOL_FAILED;
	if (lacking > 0 || st->degraded > 0)
		return VOL_DEGRADED;
	if (st->sync_action[0] && strcmp(st->sync_action, "idle") != 0)
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

/* Stored states against the arrays now; each change is announced once. */
int
volume_check_states(void)
{
	struct json_object *ev;
	struct volume *v;
	int changed = 0;

	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		enum vol_state old = v->state;

		volume_note_failed(v);
		volume_refresh_state(v);
		if (v->state == old)
			continue;
		changed++;
		log_info("volume %s: %s -> %s", v->name, volume_state_name(old),
		    volume_state_name(v->state));
		ev = json_object_new_object();
		json_object_object_add(ev, "name", json_object_new_string(v->name));
		json_object_object_add(ev, "state", json_object_new_string(volume_state_name(v->state)));
		json_object_object_add(ev, "previous", json_object_new_string(volume_state_name(old)));
		nas_event("volume.state", ev);
	}
	return changed;
}
