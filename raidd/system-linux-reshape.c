/*
 * A raid5 array grows by members (volume.add_disk) through md's sysfs,
 * in mdadm --grow --raid-devices's order for a data offset change:
 * the stripe cache big enough, recovery frozen, each member's new_offset
 * set below its data offset, raid_disks, then sync_action "reshape".  With every member's data
 * moving down, md reshapes forwards into room no stripe still being
 * read occupies, so it needs no backup file and can resume from any
 * reshape_position it checkpointed (raid5 run(): min_offset_diff < 0).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "system-linux.h"

#define RESHAPE_TRIES	5	/* md's EBUSY for MD_RECOVERY_RUNNING's moment */
#define RESHAPE_WAIT_MS	100

/*
 * new_offset of every member that is not faulty: off, or (off == 0)
 * each member's own data offset back, which md always permits.
 */
static int
set_offsets(const char *name, uint64_t off)
{
	char rel[NAME_MAX + 16], val[32], state[64];
	struct dirent *e;
	DIR *dir;
	int rc = 0;

	snprintf(rel, sizeof(rel), "/sys/block/%s/md", name);
	if ((dir = opendir(rel)) == NULL)
		return -1;
	while ((e = readdir(dir)) != NULL && rc == 0) {
		if (strncmp(e->d_name, "dev-", 4) != 0)
			continue;
		snprintf(rel, sizeof(rel), "%s/state", e->d_name);
		if (lnx_md_attr_read(name, rel, state, sizeof(state)) == 0 && strstr(state, "faulty"))
			continue;
		snprintf(rel, sizeof(rel), "%s/offset", e->d_name);
		if (off == 0 && lnx_md_attr_read(name, rel, val, sizeof(val)) == -1) {
			rc = -1;
			break;
		}
		if (off != 0)
			snprintf(val, sizeof(val), "%" PRIu64, off);
		snprintf(rel, sizeof(rel), "%s/new_offset", e->d_name);
		if ((rc = lnx_md_attr_write(name, rel, val)) == -1)
			log_warn("md %s: %s new_offset %s", name, e->d_name + 4, val);
	}
	closedir(dir);
	return rc;
}

/*
 * check_stripe_cache(): md reshapes only with four stripes per page of
 * a chunk in its stripe cache (512 for 512 KiB chunks; 256 by default):
 * raised as mdadm raises it, never lowered.
 */
static int
stripe_cache(const char *name)
{
	char buf[32];
	unsigned long long chunk, need, have;

	if (lnx_md_attr_read(name, "chunk_size", buf, sizeof(buf)) == -1)
		return -1;
	chunk = strtoull(buf, NULL, 10);
	need = chunk / 4096 * 4 + 16;
	if (lnx_md_attr_read(name, "stripe_cache_size", buf, sizeof(buf)) == -1)
		return -1;
	have = strtoull(buf, NULL, 10);
	if (have >= need)
		return 0;
	snprintf(buf, sizeof(buf), "%llu", need);
	if (lnx_md_attr_write(name, "stripe_cache_size", buf) == -1) {
		log_warn("md %s: stripe_cache_size %s", name, buf);
		return -1;
	}
	return 0;
}

/*
 * md changes no geometry while a sync thread runs: EBUSY unless idle or
 * frozen (no thread).  *frozen: whether the caller froze it (md_freeze),
 * so that it stays frozen afterwards.
 */
static int
sync_idle(const char *name, int *frozen)
{
	char buf[32];

	if (lnx_md_attr_read(name, "sync_action", buf, sizeof(buf)) == -1)
		return -1;
	*frozen = strncmp(buf, "frozen", 6) == 0;
	if (!*frozen && strncmp(buf, "idle", 4) != 0)
		return errno = EBUSY, -1;
	return 0;
}

/* Back to what the caller had: frozen stays frozen, else md may recover. */
static void
sync_restore(const char *name, int frozen)
{
	lnx_md_attr_write(name, "sync_action", frozen ? "frozen" : "idle");
}

int
lnx_md_freeze(const char *name, int frozen)
{
	int was;

	if (strchr(name, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (sync_idle(name, &was) == -1)
		return frozen || errno != EBUSY ? -1 : 0;
	if (was == frozen)
		return 0;
	return lnx_md_attr_write(name, "sync_action", frozen ? "frozen" : "idle");
}

/* Whether md reshapes: reshape_position is "none" until raid5_start_reshape sets it. */
static int
reshape_begun(const char *name)
{
	char buf[32];

	if (lnx_md_attr_read(name, "reshape_position", buf, sizeof(buf)) == -1)
		return 0;
	return strncmp(buf, "none", 4) != 0;
}

/*
 * sync_action "reshape".  md refuses it EBUSY while MD_RECOVERY_RUNNING
 * (action_store's test, before it looks at the freeze: md_check_recovery
 * sets it for a moment even while frozen, and a sync thread that ended
 * keeps it until reaped), nothing started; so EBUSY is md's word that
 * it began only when reshape_position says so.  Otherwise frozen again
 * (6.1 holds the freeze on EBUSY; later md may let go first) and asked
 * again, a few times: such a moment passes.  Debian's 6.1 starts a
 * frozen raid5's reshape though it owes a resync (the board scenario
 * md-freeze-facts; 300 refusals under writes gave no EBUSY there).
 */
static int
start_reshape(const char *name)
{
	int try;

	for (try = 0; try < RESHAPE_TRIES; try++) {
		if (lnx_md_attr_write(name, "sync_action", "reshape") == 0)
			return 0;
		if (errno != EBUSY)
			return -1;
		if (reshape_begun(name))
			return 0;
		/* Frozen again before the wait: md from 6.5 on refuses EBUSY
		   after letting go (a resync owed), and a member lost in the
		   wait would then be rebuilt onto the spare. */
		lnx_md_attr_write(name, "sync_action", "frozen");
		lnx_sleep_ms(RESHAPE_WAIT_MS);
	}
	return errno = EBUSY, -1;
}

int
lnx_md_reshape(const char *name, int raid_disks, uint64_t new_offset)
{
	char buf[32];
	int saved, frozen;

	if (strchr(name, '/') != NULL || raid_disks < 1 || new_offset == 0) {
		errno = EINVAL;
		return -1;
	}
	/* "4 (3)" while md reshapes from 3 to 4: atoi reads the new count. */
	if (lnx_md_attr_read(name, "raid_disks", buf, sizeof(buf)) == -1)
		return -1;
	if (atoi(buf) == raid_disks)
		return 0;
	if (sync_idle(name, &frozen) == -1)
		return -1;
	if (stripe_cache(name) == -1)
		return -1;
	/* new_offset_store() refuses while a sync thread runs. */
	if (lnx_md_attr_write(name, "sync_action", "frozen") == -1)
		log_warn("md %s: freezing recovery", name);
	if (set_offsets(name, new_offset) == -1)
		goto undo;
	snprintf(buf, sizeof(buf), "%d", raid_disks);
	if (lnx_md_attr_write(name, "raid_disks", buf) == -1) {
		log_warn("md %s: raid_disks %d", name, raid_disks);
		goto undo;
	}
	/* The geometry is md's now; "reshape" starts the thread. */
	if (start_reshape(name) == -1) {
		saved = errno;
		log_warn("md %s: starting the reshape", name);
		sync_restore(name, frozen);
		errno = saved;
		return -1;
	}
	return 0;
undo:
	saved = errno;
	set_offsets(name, 0);
	sync_restore(name, frozen);
	errno = saved;
	return -1;
}

/*
 * md/level: level_store() quiesces the array and hands it to the new
 * personality's takeover, which decides what it accepts; md writes the
 * new level, layout and chunk to every member's superblock before it
 * returns.  Reading the level first makes a repeated call (a resumed
 * add) a no-op rather than a second takeover.
 */
int
lnx_md_set_level(const char *name, const char *level)
{
	char buf[32];
	int rc, saved, frozen;

	if (strchr(name, '/') != NULL || strchr(level, '/') != NULL || level[0] == '\0') {
		errno = EINVAL;
		return -1;
	}
	if (lnx_md_attr_read(name, "level", buf, sizeof(buf)) == -1)
		return -1;
	if (strcmp(buf, level) == 0)
		return 0;
	if (sync_idle(name, &frozen) == -1)
		return -1;
	/* As mdadm: no recovery thread may start (a spare is there) while md switches. */
	if (lnx_md_attr_write(name, "sync_action", "frozen") == -1)
		log_warn("md %s: freezing recovery", name);
	rc = lnx_md_attr_write(name, "level", level);
	saved = errno;
	if (rc == -1)
		log_warn("md %s: level %s", name, level);
	sync_restore(name, frozen);
	errno = saved;
	return rc;
}
