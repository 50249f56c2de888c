/*
 * An md array's state from /sys/block/<name>/md (admin-guide/md.rst).
 * Attributes a personality lacks (raid0 has no sync_action, degraded)
 * read as empty or zero.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "system-linux.h"

static void
md_attr(const char *name, const char *rel, char *out, size_t len)
{
	char md[NAME_MAX + 32];

	snprintf(md, sizeof(md), "md/%s", rel);
	lnx_block_attr(name, md, out, len);
}

static int
md_attr_int(const char *name, const char *rel)
{
	char buf[32];

	md_attr(name, rel, buf, sizeof(buf));
	return atoi(buf);
}

/* A counter; "none" or a missing attribute read as 0. */
static uint64_t
md_attr_u64(const char *name, const char *rel)
{
	char buf[32];

	md_attr(name, rel, buf, sizeof(buf));
	return strtoull(buf, NULL, 10);
}

/* "done / total" sectors while syncing, "none" otherwise. */
static void
sync_progress(const char *name, struct sys_md_status *st)
{
	char buf[64];
	uint64_t done, total;

	st->sync_done = st->sync_total = 0;
	md_attr(name, "sync_completed", buf, sizeof(buf));
	if (sscanf(buf, "%" SCNu64 " / %" SCNu64, &done, &total) == 2) {
		st->sync_done = done;
		st->sync_total = total;
	}
}

static void
member(const char *name, const char *entry, struct sys_md_status *st)
{
	char rel[NAME_MAX + 16], slot[16];
	int i = st->nmembers;

	if (i >= SYS_MAX_MEMBERS)
		return;
	snprintf(st->member[i].dev, sizeof(st->member[i].dev), "%s",
	    entry + strlen("dev-"));
	snprintf(rel, sizeof(rel), "%s/slot", entry);
	md_attr(name, rel, slot, sizeof(slot));
	st->member[i].slot = (slot[0] >= '0' && slot[0] <= '9') ?
	    atoi(slot) : -1;
	snprintf(rel, sizeof(rel), "%s/state", entry);
	md_attr(name, rel, st->member[i].state, sizeof(st->member[i].state));
	snprintf(rel, sizeof(rel), "%s/errors", entry);
	st->member[i].errors = (unsigned)md_attr_u64(name, rel);
	/* md keeps a pulled member's entry; the kernel drops its node. */
	snprintf(rel, sizeof(rel), "/sys/class/block/%s", st->member[i].dev);
	st->member[i].present = access(rel, F_OK) == 0;
	st->nmembers++;
}

int
lnx_md_status(const char *name, struct sys_md_status *st)
{
	char path[PATH_MAX];
	struct dirent *e;
	uint64_t sectors;
	DIR *dir;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/sys/block/%s/md", name);
	if ((dir = opendir(path)) == NULL) {
		if (errno != ENOENT)
			log_warn("md %s: status", name);
		errno = ENOENT;
		return -1;
	}
	while ((e = readdir(dir)) != NULL)
		if (strncmp(e->d_name, "dev-", 4) == 0)
			member(name, e->d_name, st);
	closedir(dir);
	md_attr(name, "level", st->level, sizeof(st->level));
	md_attr(name, "array_state", st->array_state, sizeof(st->array_state));
	md_attr(name, "sync_action", st->sync_action, sizeof(st->sync_action));
	sync_progress(name, st);
	if (st->sync_total)
		st->sync_speed = md_attr_u64(name, "sync_speed");
	st->mismatch_cnt = md_attr_u64(name, "mismatch_cnt");
	st->sync_min = md_attr_u64(name, "sync_min");
	st->degraded = md_attr_int(name, "degraded");
	st->raid_disks = md_attr_int(name, "raid_disks");
	snprintf(path, sizeof(path), "/sys/block/%s/size", name);
	if (lnx_read_u64(path, &sectors) == 0)
		st->size = sectors * 512;
	return 0;
}
