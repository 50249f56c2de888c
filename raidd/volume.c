/*
 * The volume table: what raidd knows of each volume, rebuilt from the
 * disks' labels at start-up (assemble.c) and kept current by create,
 * delete and the monitor. Names of arrays, maps and mountpoints are
 * derived from the volume's name, so they are the same at every boot.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "volume.h"
#include "crypt.h"

static struct volume volumes[MAX_VOLUMES];
static char mount_root[128] = "/volumes";

static const char *const state_names[] = {
	[VOL_CLEAN] = "clean", [VOL_RESYNCING] = "resyncing",
	[VOL_DEGRADED] = "degraded", [VOL_FAILED] = "failed",
	[VOL_CREATING] = "creating", [VOL_DELETING] = "deleting",
	[VOL_INCOMPLETE] = "incomplete", [VOL_FOREIGN] = "foreign",
	[VOL_INCONSISTENT] = "inconsistent", [VOL_REBUILDING] = "rebuilding",
	[VOL_DIRTY_DEGRADED] = "dirty-degraded",
};

static const char *const fs_names[] = {
	[LABEL_FS_NONE] = "none", [LABEL_FS_EXT4] = "ext4", [LABEL_FS_BTRFS] = "btrfs",
};

int
volume_uuid_zero(const uint8_t u[16])
{
	static const uint8_t z[16];

	return memcmp(u, z, 16) == 0;
}

void
volume_set_options(const char *root)
{
	snprintf(mount_root, sizeof(mount_root), "%s", root);
}

const char *
volume_state_name(enum vol_state s)
{
	return state_names[s];
}

int
volume_count(void)
{
	int n = 0;

	for (int i = 0; i < MAX_VOLUMES; i++)
		n += volumes[i].name[0] != '\0';
	return n;
}

/* The i-th volume in use, in table order. */
struct volume *
volume_at(int i)
{
	for (int k = 0; k < MAX_VOLUMES; k++)
		if (volumes[k].name[0] && i-- == 0)
			return &volumes[k];
	return NULL;
}

struct volume *
volume_find(const char *name)
{
	for (int i = 0; i < MAX_VOLUMES; i++)
		if (volumes[i].name[0] && strcmp(volumes[i].name, name) == 0)
			return &volumes[i];
	return NULL;
}

struct volume *
volume_add(void)
{
	for (int i = 0; i < MAX_VOLUMES; i++) {
		if (volumes[i].name[0] == '\0') {
			memset(&volumes[i], 0, sizeof(volumes[i]));
			return &volumes[i];
		}
	}
	return NULL;
}

void
volume_reset(void)
{
	memset(volumes, 0, sizeof(volumes));
	spare_reset();
}

void
volume_forget(struct volume *v)
{
	memset(v, 0, sizeof(*v));
}

struct volume *
volume_of_disk(const char *disk)
{
	for (int i = 0; i < MAX_VOLUMES; i++)
		for (int m = 0; volumes[i].name[0] && m < volumes[i].label.ndisks; m++)
			if (strcmp(volumes[i].disk[m], disk) == 0)
				return &volumes[i];
	return NULL;
}

void
volume_md_name(const struct volume *v, int tier, char *buf, size_t len)
{
	snprintf(buf, len, "md_%.*s_t%d", VOL_NAME_MAX, v->name, tier + 1);
}

void
volume_dm_name(const char *vol, char *buf, size_t len)
{
	snprintf(buf, len, "nas-%.*s", VOL_NAME_MAX, vol);
}

void
volume_mountpoint(const char *vol, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", mount_root, vol);
}

/* Names end up in device names and paths: keep them plain. */
int
volume_name_valid(const char *s, char *why, size_t len)
{
	size_t n = strlen(s);

	if (n == 0 || n > VOL_NAME_MAX) {
		snprintf(why, len, "a volume name has 1 to %d characters", VOL_NAME_MAX);
		return 0;
	}
	if (!islower((unsigned char)s[0])) {
		snprintf(why, len, "a volume name starts with a letter a-z");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) &&
		    s[i] != '-' && s[i] != '_') {
			snprintf(why, len, "a volume name may hold only a-z, 0-9, - and _");
			return 0;
		}
	}
	return 1;
}

/* What keeps a volume from being whole: the stored problem and the
   members missing now. */
static void
describe_problem(const struct volume *v, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", v->problem);

	if (volume_read_only(v) && n + 2 < len) {
		if (n)
			n += (size_t)snprintf(buf + n, len - n, "; ");
		dirty_reason(v, buf + n, len - n);
		n = strlen(buf);
	}

	for (int m = 0; m < v->label.ndisks && n < len; m++) {
		if (v->disk[m][0] || v->state == VOL_CREATING)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%smember %d (serial %s) is missing",
		    n ? "; " : "", m + 1, v->label.member[m].serial);
	}
}

static struct json_object *
describe_tier(const struct volume *v, int t)
{
	const struct label_tier *lt = &v->label.tier[t];
	struct json_object *o = json_object_new_object(), *mem = json_object_new_array();
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	enum vol_state s = volume_tier_state(v, t, &st);
	int up = st.array_state[0] != '\0';

	json_object_object_add(o, "index", json_object_new_int(t + 1));
	json_object_object_add(o, "level", json_object_new_string(plan_tier_kind_name(lt->kind)));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)lt->tier_size));
	if (lt->kind != TIER_NONE) {
		volume_md_name(v, t, md, sizeof(md));
		json_object_object_add(o, "md_device", json_object_new_string(md));
	}
	/* "stopped" when nothing runs; md's sync_action while it syncs. */
	json_object_object_add(o, "state", json_object_new_string(!v->assembled ||
	    (lt->kind != TIER_NONE && !up) ? "stopped" :
	    s == VOL_RESYNCING ? st.sync_action : state_names[s]));
	if (up && st.sync_total) {
		json_object_object_add(o, "sync_action", json_object_new_string(st.sync_action));
		json_object_object_add(o, "sync_percent",
		    watch_percent(st.sync_done, st.sync_total));
	}
	if (lt->kind != TIER_NONE)
		watch_sync_fields(o, &st);
	for (int r = 0; r < lt->nmembers; r++) {
		int m = lt->member[r], idx;
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "role", json_object_new_int(r));
		json_object_object_add(d, "state", json_object_new_string(v->assembled ?
		    volume_member_state(v, t, r, &st, &idx) : v->disk[m][0] ? "stopped" : "missing"));
		json_object_object_add(d, "serial", json_object_new_string(v->label.member[m].serial));
		json_object_object_add(d, "disk", v->disk[m][0] ?
		    json_object_new_string(v->disk[m]) : NULL);
		json_object_array_add(mem, d);
	}
	json_object_object_add(o, "members", mem);
	return o;
}

struct json_object *
volume_describe(const struct volume *v)
{
	struct json_object *o = json_object_new_object(), *tiers = json_object_new_array();
	char dm[SYS_NAME_MAX], dev[SYS_NAME_MAX + 16], mp[256], problem[512], origin[40];

	describe_problem(v, problem, sizeof(problem));
	volume_dm_name(v->name, dm, sizeof(dm));
	snprintf(dev, sizeof(dev), "/dev/mapper/%s", dm);
	volume_mountpoint(v->name, mp, sizeof(mp));
	json_object_object_add(o, "name", json_object_new_string(v->name));
	json_object_object_add(o, "level", json_object_new_string(plan_level_name(v->label.level)));
	json_object_object_add(o, "state", json_object_new_string(state_names[volume_state_now(v)]));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->label.size));
	json_object_object_add(o, "fs", json_object_new_string(fs_names[v->label.fs]));
	json_object_object_add(o, "device", v->assembled ? json_object_new_string(dev) : NULL);
	json_object_object_add(o, "mountpoint", sys->is_mounted(mp) == 1 ?
	    json_object_new_string(mp) : NULL);
	json_object_object_add(o, "read_only", json_object_new_boolean(volume_read_only(v)));
	json_object_object_add(o, "encrypted", json_object_new_boolean(crypt_encrypted(v)));
	if (crypt_encrypted(v))
		json_object_object_add(o, "locked", json_object_new_boolean(crypt_locked(v)));
	json_object_object_add(o, "generation", json_object_new_int64((int64_t)v->label.generation));
	unit_hex(v->label.unit, origin, sizeof(origin));
	json_object_object_add(o, "origin", volume_uuid_zero(v->label.unit) ? NULL :
	    json_object_new_string(origin));
	json_object_object_add(o, "local", json_object_new_boolean(!v->foreign));
	json_object_object_add(o, "problem", problem[0] ? json_object_new_string(problem) : NULL);
	if (v->job)
		json_object_object_add(o, "job", json_object_new_int((int)job_id(v->job)));
	for (int t = 0; t < v->label.ntiers; t++)
		json_object_array_add(tiers, describe_tier(v, t));
	json_object_object_add(o, "tiers", tiers);
	json_object_object_add(o, "spares", spare_describe(v));
	return o;
}

/* State from the arrays as the kernel sees them now; changes nothing. */
enum vol_state
volume_state_now(const struct volume *v)
{
	struct sys_md_status st;
	enum vol_state s = VOL_CLEAN, ts;

	if (v->state == VOL_CREATING || v->state == VOL_DELETING)
		return v->state;
	if (v->foreign)
		return VOL_FOREIGN;
	if (v->inconsistent)
		return VOL_INCONSISTENT;
	if (!v->assembled)
		return v->problem[0] ? VOL_FAILED : VOL_INCOMPLETE;
	if (v->lost_disk)
		return VOL_FAILED;
	/* The worst tier: failed, degraded, rebuilding, resyncing. */
	for (int t = 0; t < v->label.ntiers; t++) {
		/* A stopped grow's tier not made yet holds nothing (Decision 110). */
		if (grow_making(&v->label, t))
			continue;
		ts = volume_tier_state(v, t, &st);
		if (volume_state_rank(ts) > volume_state_rank(s))
			s = ts;
	}
	return s;
}

/* Stored state: only the monitor and raidd's own changes call this, so
   every change it sees is announced once. */
void
volume_refresh_state(struct volume *v)
{
	v->state = volume_state_now(v);
}

/*
 * After a rescan, a member's kernel name may belong to another disk:
 * keep a name only while the disk there is that member (member_is).
 */
void
volume_sync_disks(void)
{
	for (int i = 0; i < MAX_VOLUMES; i++) {
		struct volume *v = &volumes[i];

		if (v->name[0] == '\0' || v->job)
			continue;
		for (int m = 0; m < v->label.ndisks; m++) {
			const struct disk *d;

			if (v->disk[m][0] == '\0')
				continue;
			d = disk_find(v->disk[m]);
			if (d && member_is(d, v, m) && d->bay)
				v->bay[m] = d->bay;	/* where a replacement is expected */
			if (d == NULL || !member_is(d, v, m)) {
				v->disk[m][0] = '\0';
				/* Only a disk that left is "pulled": one still here
				   that cannot be read (failing) must not count as
				   having come back when it answers again. */
				if (d == NULL)
					v->pulled |= 1U << m;
			}
		}
	}
}
