/*
 * md's check and repair through sysfs (admin-guide/md.rst): sync_min
 * says where to start (md puts the position of an interrupted check
 * there), sync_speed_min/max the speed window, sync_action what to do.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "system-linux.h"

static int
md_write(const char *name, const char *attr, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/md/%s", name, attr);
	if (lnx_write_file(path, val) == -1) {
		log_warn("md %s: %s = %s", name, attr, val);
		return -1;
	}
	return 0;
}

static int
md_speed(const char *name, const char *attr, unsigned kbs)
{
	char buf[32];

	if (kbs == 0)
		snprintf(buf, sizeof(buf), "system");
	else
		snprintf(buf, sizeof(buf), "%u", kbs);
	return md_write(name, attr, buf);
}

int
lnx_md_sync(const char *name, const struct sys_md_sync *s)
{
	char path[PATH_MAX], buf[32];
	uint64_t chunk = 0, from = s->from;

	if (strcmp(s->action, "idle") == 0) {
		/* Only a check or repair is stopped: a recovery md started goes on. */
		snprintf(path, sizeof(path), "/sys/block/%s/md/sync_action", name);
		if (lnx_read_file(path, buf, sizeof(buf)) == 0 && (strncmp(buf, "check", 5) == 0 ||
		    strncmp(buf, "repair", 6) == 0) && md_write(name, "sync_action", "idle") == -1)
			return -1;
		/* md's own speeds again, for a rebuild that may follow. */
		md_speed(name, "sync_speed_min", 0);
		md_speed(name, "sync_speed_max", 0);
		return 0;
	}
	if (strcmp(s->action, "check") != 0 && strcmp(s->action, "repair") != 0)
		return errno = EINVAL, -1;
	/* md takes sync_min only on a chunk boundary (raid5, raid10). */
	snprintf(path, sizeof(path), "/sys/block/%s/md/chunk_size", name);
	if (lnx_read_u64(path, &chunk) == 0 && chunk >= 512)
		from -= from % (chunk / 512);
	snprintf(buf, sizeof(buf), "%" PRIu64, from);
	if (md_speed(name, "sync_speed_min", s->speed_min) == -1 ||
	    md_speed(name, "sync_speed_max", s->speed_max) == -1 ||
	    md_write(name, "sync_max", "max") == -1 ||
	    md_write(name, "sync_min", buf) == -1)
		return -1;
	return md_write(name, "sync_action", s->action);
}
