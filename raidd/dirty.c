/*
 * A dirty degraded RAID 5 or SHR tier (Decision 90). The power went
 * while the array was written and lacked a member: a stripe written
 * then may hold new data beside old parity, and the missing member's
 * blocks of that stripe, made from them, would be wrong - silently. md
 * refuses to start such an array (raid5.c run()); raidd neither leaves
 * the volume refused nor trusts it: it starts the array read-only
 * (nothing is written to a member, no recovery runs), mounts what is
 * there read-only and says so (state dirty-degraded). The user copies
 * off what matters, then volume.start with force makes it writable;
 * a replacement disk rebuilds it after that.
 */
#include <linux/raid/md_p.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "mdsb.h"
#include "volume.h"

/* Whether tier t's array runs read-only (array_state "readonly"). */
static int
tier_read_only(const struct volume *v, int t)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];

	if (v->label.tier[t].kind == TIER_NONE)
		return 0;
	volume_md_name(v, t, md, sizeof(md));
	return sys->md_status(md, &st) == 0 && strcmp(st.array_state, "readonly") == 0;
}

int
volume_read_only(const struct volume *v)
{
	for (int t = 0; v->assembled && t < v->label.ntiers; t++)
		if (tier_read_only(v, t))
			return 1;
	return 0;
}

/*
 * The members md would run in a role: as md's analyze_sbs, the freshest
 * superblock decides. A member more than one event behind it is kicked
 * (super_1_validate), and one a single event behind takes the role the
 * freshest gives it: faulty for one md failed before the stop; one
 * half rebuilt is in no role yet. What raidd passed is not what md runs.
 */
static int
roles_active(const struct sys_md *md, const struct mdsb *fresh, const struct mdsb *sb,
    const int *ok)
{
	int held[MDSB_MAX_DEV] = { 0 }, n = 0;

	for (int i = 0; i < md->nmembers; i++) {
		uint16_t role, own;

		if (!ok[i] || sb[i].dev_number >= fresh->max_dev)
			continue;
		own = sb[i].dev_number < sb[i].max_dev && sb[i].dev_number < MDSB_MAX_DEV_LIMIT ?
		    sb[i].dev_roles[sb[i].dev_number] : MDSB_ROLE_SPARE;
		/* Kicked only when its own superblock puts it in a role. */
		if (own < MDSB_ROLE_FAULTY && sb[i].events + 1 < fresh->events)
			continue;
		role = sb[i].events < fresh->events ? fresh->dev_roles[sb[i].dev_number] : own;
		/* Half rebuilt (a recovery offset): not in sync, md counts the
		   role as lacking (raid5_calc_degraded). */
		if (sb[i].feature_map & MD_FEATURE_RECOVERY_OFFSET)
			continue;
		if (role < fresh->raid_disks && role < MDSB_MAX_DEV && !held[role]) {
			held[role] = 1;
			n++;
		}
	}
	return n;
}

/*
 * Whether md's refusal was for dirty and degraded: a RAID 5 array (as
 * its freshest member superblock says: a raid1 tier an add or a join
 * had md take over is raid5 to md before its labels say so) whose
 * superblock says it was not in sync and that md would run lacking a
 * member.
 */
static int
refused_dirty(const struct volume *v, int t, const struct sys_md *md)
{
	static struct mdsb sb[SYS_MAX_MEMBERS];
	int ok[SYS_MAX_MEMBERS] = { 0 }, fresh = -1;

	if (v->label.tier[t].kind != TIER_RAID5 && v->label.tier[t].kind != TIER_RAID1)
		return 0;
	for (int i = 0; i < md->nmembers && i < SYS_MAX_MEMBERS; i++) {
		if (member_read_sb(md->member[i].dev, &sb[i]) == -1 ||
		    memcmp(sb[i].set_uuid, v->label.tier[t].array_uuid, 16) != 0)
			continue;
		ok[i] = 1;
		if (fresh == -1 || sb[i].events > sb[fresh].events)
			fresh = i;
	}
	if (fresh == -1 || sb[fresh].level != 5 || sb[fresh].resync_offset == MDSB_RESYNC_CLEAN)
		return 0;
	return roles_active(md, &sb[fresh], sb, ok) < (int)sb[fresh].raid_disks;
}

/*
 * md_assemble refused tier t (errno EIO). When it is for dirty and
 * degraded, the array starts read-only with md's start_dirty_degraded
 * for that start; 0 then, -1 (errno kept) otherwise.
 */
int
dirty_start_tier(struct volume *v, int t, struct sys_md *md)
{
	int saved = errno;

	if (saved != EIO || !refused_dirty(v, t, md))
		return errno = saved, -1;
	log_warnx("volume %s: %s was being written when it stopped and lacks a member "
	    "(dirty and degraded): started read-only", v->name, md->name);
	md->flags = SYS_MD_READONLY | SYS_MD_START_DIRTY;
	if (sys->md_assemble(md) == -1) {
		log_warn("volume %s: starting %s read-only", v->name, md->name);
		return -1;
	}
	return 0;
}

void
dirty_reason(const struct volume *v, char *buf, size_t len)
{
	for (int t = 0; t < v->label.ntiers; t++)
		if (tier_read_only(v, t)) {
			snprintf(buf, len, "tier %d was being written when the power went while it "
			    "lacked a member (dirty and degraded): it runs read-only; copy off what "
			    "matters, then volume.start with force makes it writable "
			    "(docs/recovery.md)", t + 1);
			return;
		}
	buf[0] = '\0';
}

/* Mounted read-only; a journal that needed replaying was not (said in problem). */
int
dirty_mount(struct volume *v, const char *dev, const char *mp, const char *fs,
    char *err, size_t errlen)
{
	int r;

	if ((r = sys->mount_ro(dev, mp, fs)) == -1) {
		snprintf(err, errlen, "mounting %s read-only on %s: %s", dev, mp, strerror(errno));
		return -1;
	}
	if (r == 1)
		snprintf(v->problem, sizeof(v->problem), "mounted read-only without replaying "
		    "its journal: the last writes before the power cut do not show yet");
	return 0;
}

/* The state change a start-up or volume.start made, announced as the monitor does. */
static void
announce_state(struct volume *v)
{
	enum vol_state old = v->state;
	char reason[300];

	volume_refresh_state(v);
	if (v->state == old)
		return;
	volume_state_reason(v, old, reason, sizeof(reason));
	volume_state_event(v, old, reason);
}

void
dirty_announce(struct volume *v, enum vol_state before)
{
	char reason[300];

	if (v->state != VOL_DIRTY_DEGRADED)
		return;
	dirty_reason(v, reason, sizeof(reason));
	volume_state_event(v, before, reason);
}

/*
 * volume.start {name, force}: the read-only tiers become writable and
 * the volume is mounted read-write (its journal replayed). Only with
 * force: the user says the stripes written at the power cut may be
 * wrong and is ready for that (a filesystem check, a restore).
 */
void
volume_start_m(struct rpc_call *c, struct json_object *params)
{
	char md[SYS_NAME_MAX], err[256];
	struct volume *v;

	if ((v = volume_find_idle(c, params)) == NULL)
		return;
	if (!volume_read_only(v)) {
		rpc_error(c, NAS_ERR_INVALID, "volume %s runs read-write already: nothing to "
		    "start", v->name);
		return;
	}
	if (!rpc_param_bool(params, "force", 0)) {
		rpc_error(c, NAS_ERR_REFUSED, "volume %s was being written when the power went "
		    "while it lacked a member: blocks written then may be wrong, and a rebuild "
		    "would copy them; copy off what matters while it is read-only, then start "
		    "it with force", v->name);
		return;
	}
	if (volume_unmount(v, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_BUSY, "volume %s: %s", v->name, err);
		return;
	}
	for (int t = 0; t < v->label.ntiers; t++) {
		if (!tier_read_only(v, t))
			continue;
		volume_md_name(v, t, md, sizeof(md));
		if (sys->md_set_rw(md) == -1) {
			rpc_error(c, NAS_ERR_FAILED, "volume %s: making %s writable: %s", v->name,
			    md, strerror(errno));
			volume_mount(v, err, sizeof(err));
			return;
		}
		log_warnx("volume %s: %s made writable by volume.start force", v->name, md);
	}
	v->problem[0] = '\0';
	if (volume_mount(v, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "volume %s: %s", v->name, err);
		announce_state(v);
		return;
	}
	announce_state(v);
	rpc_result(c, volume_describe(v));
	/* An add stopped at its start step for the read-only array goes on
	   now, as at a start: its new disk may be gone (named by no call). */
	if (v->label.intent.op == LABEL_OP_ADDING && v->job == NULL)
		add_resume_forced(v);
}

const struct rpc_param volume_start_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "volume name" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "write to a dirty degraded volume after all" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
