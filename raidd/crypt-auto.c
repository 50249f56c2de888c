/*
 * crypt-auto.c: auto-unlock from key files (Decision 63).  With
 * raidd.ini [crypt] keyfile_dir set, an encrypted volume found locked
 * after a start is opened with <keyfile_dir>/<name>.key when that file
 * is there (a USB stick mounted there, say).  Only the path goes to
 * cryptd, which reads the file; raidd first checks that nobody but root
 * could have written or read it: the directory and the file are root's,
 * neither group nor world writable, the file is a regular file neither
 * group nor world readable, and no symlink is followed.  Each volume is
 * tried once per start (a wrong key counts against cryptd's back-off
 * like a wrong passphrase); the tries go on for a minute after the
 * start, since cryptd may come up after raidd.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "log.h"
#include "volume.h"
#include "crypt.h"

#define AUTO_TICKS	60	/* one a second */

static char keyfile_dir[200];
static uint8_t tried[MAX_VOLUMES][16];	/* volume uuids tried this start */
static int ntried, ticks;
static ev_timer auto_w;

/* Root's (or, in the unit suites, the caller's) and nobody else's. */
static int
owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/*
 * 0 when path may be handed to cryptd; -1 with why.  ENOENT: not there
 * (the stick is not in), not a refusal.
 */
int
crypt_keyfile_check(const char *dir, const char *path, char *why, size_t len)
{
	struct stat st;
	int fd;

	if (lstat(dir, &st) == -1)
		return snprintf(why, len, "%s: %s", dir, strerror(errno)), -1;
	if (!S_ISDIR(st.st_mode) || !owner_ok(&st) || (st.st_mode & 022))
		return errno = EPERM, snprintf(why, len, "%s: not a directory only root "
		    "may write to", dir), -1;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return snprintf(why, len, "%s: %s", path, strerror(errno)), -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || !owner_ok(&st) ||
	    (st.st_mode & 077)) {
		close(fd);
		return errno = EPERM, snprintf(why, len, "%s: refused: not a regular file of "
		    "root's that only root may read and write (chmod 600)", path), -1;
	}
	close(fd);
	return 0;
}

static int
was_tried(const struct volume *v)
{
	for (int i = 0; i < ntried; i++)
		if (memcmp(tried[i], v->label.volume_uuid, 16) == 0)
			return 1;
	return 0;
}

static void
note_tried(const struct volume *v)
{
	if (ntried < MAX_VOLUMES)
		memcpy(tried[ntried++], v->label.volume_uuid, 16);
}

/* One volume: 1 tried (or never will be), 0 try again at the next tick. */
static int
try_volume(struct volume *v)
{
	char path[300], why[400];

	snprintf(path, sizeof(path), "%s/%s.key", keyfile_dir, v->name);
	if (crypt_keyfile_check(keyfile_dir, path, why, sizeof(why)) == -1) {
		if (errno == ENOENT)
			return 0;	/* the stick may come */
		log_warnx("volume %s: no auto-unlock: %s", v->name, why);
		return 1;
	}
	if (crypt_unlock_start(v, NULL, path, why, sizeof(why)) == NULL) {
		log_warnx("volume %s: auto-unlock: %s", v->name, why);
		return errno != ECONNREFUSED;
	}
	log_info("volume %s: unlocking with key file %s", v->name, path);
	return 1;
}

void
crypt_auto_tick(void)
{
	struct volume *v;

	if (keyfile_dir[0] == '\0')
		return;
	for (int i = 0; (v = volume_at(i)) != NULL; i++) {
		if (!crypt_encrypted(v) || !v->assembled || v->job || v->foreign ||
		    was_tried(v) || !crypt_locked(v))
			continue;
		if (try_volume(v))
			note_tried(v);
	}
}

static void
auto_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)revents;
	crypt_auto_tick();
	if (++ticks >= AUTO_TICKS)
		ev_timer_stop(l, w);
}

void
crypt_auto_start(const char *dir)
{
	snprintf(keyfile_dir, sizeof(keyfile_dir), "%s", dir ? dir : "");
	ntried = ticks = 0;
	ev_timer_stop(nas_loop(), &auto_w);
	if (keyfile_dir[0] == '\0')
		return;
	ev_timer_init(&auto_w, auto_cb, 0., 1.);
	ev_timer_start(nas_loop(), &auto_w);
}
