/*
 * The simulated kernel's md sync actions and notifications, beside
 * system-sim.c: check, repair and recovery as positions a test moves
 * on (sim_md_sync_step), mismatches a test plants, and the wake-ups md
 * gives through sysfs_notify and /proc/mdstat. md notifies on its own
 * events only (a member failed, added or removed, an array started or
 * stopped, a sync started or ended): a pulled disk, a counter that
 * grows (dev-X/errors, sync_completed) wake nobody, here as there.
 */
#include <sys/eventfd.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "system.h"
#include "system-sim.h"

#define SYNC_MAX	16
#define BAD_MAX		16

static struct sync {
	char		md[SYS_NAME_MAX];
	char		action[16];	/* "" or idle: nothing runs */
	uint64_t	done, total, min;	/* sectors */
	uint64_t	mismatch;
	uint64_t	bad[BAD_MAX];	/* planted: 4 KiB blocks whose copies differ */
	int		nbad;
	unsigned	speed_min, speed_max;
	char		rebuilding[SYS_NAME_MAX];	/* recover: the member */
	unsigned	errors[SYS_MAX_MEMBERS];
	char		errdev[SYS_MAX_MEMBERS][SYS_NAME_MAX];
} syncs[SYNC_MAX];

static int watch_fd = -1, watching, wakes;

static struct sync *
sync_of(const char *md, int create)
{
	struct sync *free_slot = NULL;

	for (int i = 0; i < SYNC_MAX; i++) {
		if (syncs[i].md[0] && strcmp(syncs[i].md, md) == 0)
			return &syncs[i];
		if (!syncs[i].md[0] && free_slot == NULL)
			free_slot = &syncs[i];
	}
	if (!create || free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	snprintf(free_slot->md, sizeof(free_slot->md), "%s", md);
	return free_slot;
}

static int
running(const struct sync *s)
{
	return s && s->action[0] && strcmp(s->action, "idle") != 0;
}

/* md_new_event(): /proc/mdstat wakes its pollers, sysfs the attribute's. */
void
sim_md_event(const char *md)
{
	uint64_t one = 1;

	(void)md;
	if (watch_fd == -1 || !watching)
		return;
	wakes++;
	if (write(watch_fd, &one, sizeof(one)) == -1)
		return;
}

int
sim_md_wakes(void)
{
	return wakes;
}

/* A sync, check or recovery runs: md's update_size() refuses (EBUSY). */
int
sim_md_syncing(const char *md)
{
	return running(sync_of(md, 0));
}

/* The array stopped (or the power went): nothing of its sync is left. */
void
sim_md_gone(const char *md, int event)
{
	struct sync *s = sync_of(md, 0);

	if (s)
		memset(s, 0, sizeof(*s));
	if (event)
		sim_md_event(md);
}

/* The power went: no array runs, no sync either. */
void
sim_sync_forget(void)
{
	memset(syncs, 0, sizeof(syncs));
}

static void leds_reset(void);

void
sim_sync_reset(void)
{
	leds_reset();
	memset(syncs, 0, sizeof(syncs));
	if (watch_fd != -1)
		close(watch_fd);
	watch_fd = -1;
	watching = wakes = 0;
}

/* What md shows of the sync under way and of member errors. */
void
sim_sync_status(const char *md, struct sys_md_status *st)
{
	struct sync *s = sync_of(md, 0);

	if (s == NULL)
		return;
	for (int i = 0; i < st->nmembers; i++) {
		for (int k = 0; k < SYS_MAX_MEMBERS; k++)
			if (strcmp(s->errdev[k], st->member[i].dev) == 0)
				st->member[i].errors = s->errors[k];
		if (s->rebuilding[0] && strcmp(s->rebuilding, st->member[i].dev) == 0 &&
		    strcmp(st->member[i].state, "in_sync") == 0) {
			snprintf(st->member[i].state, sizeof(st->member[i].state), "spare");
			st->degraded++;
		}
	}
	st->mismatch_cnt = s->mismatch;
	st->sync_min = s->min;
	if (!running(s) || st->sync_action[0] == '\0')
		return;
	snprintf(st->sync_action, sizeof(st->sync_action), "%s", s->action);
	st->sync_done = s->done;
	st->sync_total = s->total;
	st->sync_speed = s->speed_max ? s->speed_max : 10000;
}

static int
array_sectors(const char *md, uint64_t *sectors, int *raid0)
{
	struct sys_md_status st;

	if (sys_sim.md_status(md, &st) == -1)
		return -1;
	*sectors = st.size / 512;
	*raid0 = st.sync_action[0] == '\0';
	return 0;
}

/* sync_min, the speed window and sync_action, as md takes them. */
int
sim_md_sync(const char *md, const struct sys_md_sync *req)
{
	struct sync *s;
	uint64_t sectors;
	int raid0;

	if (array_sectors(md, &sectors, &raid0) == -1)
		return errno = ENODEV, -1;
	if (raid0)
		return errno = ENOENT, -1;	/* raid0 has no sync_action */
	if ((s = sync_of(md, 1)) == NULL)
		return errno = ENOSPC, -1;
	if (strcmp(req->action, "idle") == 0) {
		if (running(s) && strcmp(s->action, "recover") != 0) {
			/* md keeps where an interrupted check stopped in sync_min. */
			s->min = s->done;
			snprintf(s->action, sizeof(s->action), "idle");
			sim_md_event(md);
		}
		s->speed_min = s->speed_max = 0;
		return 0;
	}
	if (strcmp(req->action, "check") != 0 && strcmp(req->action, "repair") != 0)
		return errno = EINVAL, -1;
	if (running(s))
		return errno = EBUSY, -1;
	if (req->from > sectors)
		return errno = EINVAL, -1;
	s->speed_min = req->speed_min;
	s->speed_max = req->speed_max;
	s->min = s->done = req->from;
	s->total = sectors;
	s->mismatch = 0;
	snprintf(s->action, sizeof(s->action), "%s", req->action);
	sim_md_event(md);
	return 0;
}

/* Tests: md reaches sectors further; at the end the action is over. */
void
sim_md_sync_step(const char *md, uint64_t sectors)
{
	struct sync *s = sync_of(md, 0);
	uint64_t to;

	if (!running(s))
		return;
	to = s->done + sectors > s->total ? s->total : s->done + sectors;
	for (int i = 0; i < s->nbad; i++) {
		if (s->bad[i] < s->done || s->bad[i] >= to || strcmp(s->action, "recover") == 0)
			continue;
		s->mismatch += 8;
		if (strcmp(s->action, "repair") == 0) {
			s->bad[i--] = s->bad[--s->nbad];
		}
	}
	s->done = to;
	if (s->done < s->total)
		return;
	snprintf(s->action, sizeof(s->action), "idle");
	s->rebuilding[0] = '\0';
	s->min = 0;
	sim_md_event(md);
}

/* Tests: the copies of the 4 KiB block at sector differ. */
void
sim_md_corrupt(const char *md, uint64_t sector)
{
	struct sync *s = sync_of(md, 1);

	if (s && s->nbad < BAD_MAX)
		s->bad[s->nbad++] = sector;
}

/* Tests: md recovers dev (added in its role, not yet in sync). */
void
sim_md_rebuild(const char *md, const char *dev)
{
	struct sync *s = sync_of(md, 1);
	uint64_t sectors;
	int raid0;

	if (s == NULL || array_sectors(md, &sectors, &raid0) == -1 || raid0)
		return;
	snprintf(s->rebuilding, sizeof(s->rebuilding), "%s", dev);
	snprintf(s->action, sizeof(s->action), "recover");
	s->done = 0;
	s->total = sectors;
	sim_md_event(md);
}

/* Tests: md corrected n read errors on dev (dev-X/errors; no notify). */
void
sim_member_errors(const char *md, const char *dev, unsigned n)
{
	struct sync *s = sync_of(md, 1);
	int k;

	if (s == NULL)
		return;
	for (k = 0; k < SYS_MAX_MEMBERS - 1 && s->errdev[k][0] &&
	    strcmp(s->errdev[k], dev) != 0; k++)
		;
	snprintf(s->errdev[k], sizeof(s->errdev[k]), "%s", dev);
	s->errors[k] = n;
}

int
sim_watch_open(void)
{
	if (watch_fd == -1)
		watch_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	watching = 0;
	return watch_fd;
}

/* /proc/mdstat is watched with them: every md event reaches it. */
int
sim_watch_arrays(int fd, char (*names)[SYS_NAME_MAX], int n)
{
	(void)names;
	(void)n;
	if (fd != watch_fd || fd == -1)
		return errno = EBADF, -1;
	watching = 1;
	return 0;
}

int
sim_watch_read(int fd)
{
	uint64_t v;

	if (fd != watch_fd || fd == -1)
		return errno = EBADF, -1;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return errno == EAGAIN ? 0 : -1;
	return (int)(v > 1000 ? 1000 : v);
}

/* Bay LEDs: what each was last set to (tests ask sim_led). */
#define LED_MAX	16

static struct {
	char		dir[256];
	enum sys_led	mode;
} leds[LED_MAX];

static void
leds_reset(void)
{
	memset(leds, 0, sizeof(leds));
}

int
sim_led_set(const char *dir, enum sys_led mode)
{
	int i, free_slot = -1;

	if (dir[0] != '/')
		return errno = ENOENT, -1;
	for (i = 0; i < LED_MAX; i++) {
		if (strcmp(leds[i].dir, dir) == 0)
			break;
		if (leds[i].dir[0] == '\0' && free_slot == -1)
			free_slot = i;
	}
	if (i == LED_MAX && (i = free_slot) == -1)
		return errno = ENOSPC, -1;
	snprintf(leds[i].dir, sizeof(leds[i].dir), "%s", dir);
	leds[i].mode = mode;
	return 0;
}

/* -1: never set. */
int
sim_led(const char *dir)
{
	for (int i = 0; i < LED_MAX; i++)
		if (leds[i].dir[0] && strcmp(leds[i].dir, dir) == 0)
			return (int)leds[i].mode;
	return -1;
}
