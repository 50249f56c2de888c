/*
 * crypt-auto.c: auto-unlock from key files (Decision 63).  With
 * raidd.ini [crypt] keyfile_dir set, an encrypted volume found locked
 * after a start is opened with <keyfile_dir>/<name>.key when that file
 * is there (a USB stick mounted there, say).  Only the path goes to
 * cryptd, which reads the file; raidd first checks that nobody but root
 * could have written or read it: the directory and the file are root's,
 * neither group nor world writable, the file is a regular file of 1 to
 * 8192 bytes (cryptd's limit) neither group nor world readable, no
 * symlink is followed, and the file is never opened by raidd.  Each volume is
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
#include "keyfile.h"
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
 * Every directory above dir (dir must be absolute): root's, and not
 * writable by others unless sticky, as OpenSSH's StrictModes wants.
 * cryptd opens dir/file by its path after this check: whoever may
 * rename an entry on the way (dir on a share users write, say) could
 * swap dir for one of theirs in between.  0, or -1 with why.
 */
static int
parents_ok(const char *dir, char *why, size_t len)
{
	char p[sizeof(keyfile_dir)], *slash;
	struct stat st;

	if (dir[0] != '/' || strlen(dir) >= sizeof(p))
		return errno = EPERM, snprintf(why, len, "%s: not an absolute path of at most "
		    "%zu bytes", dir, sizeof(p) - 1), -1;
	snprintf(p, sizeof(p), "%s", dir);
	while ((slash = strrchr(p, '/')) != NULL) {
		slash[slash == p] = '\0';	/* "/a/b" -> "/a" -> "/" */
		if (lstat(p, &st) == -1)
			return snprintf(why, len, "%s: %s", p, strerror(errno)), -1;
		if (!S_ISDIR(st.st_mode) || !owner_ok(&st) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))
			return errno = EPERM, snprintf(why, len, "%s (above %s): not a directory "
			    "of root's that only root may write to", p, dir), -1;
		if (slash == p)
			break;
	}
	return 0;
}

/*
 * 0 when dir/file may be handed to cryptd; -1 with why.  ENOENT: not
 * there (the stick is not in), not a refusal.  Nothing under dir is
 * opened for reading: raidd is root, and opening a device node (a stick
 * mounted without nodev whose NAME.key is /dev/watchdog's node, say) or
 * a FIFO acts before any fstat could refuse it.  The file is looked at
 * through the directory's descriptor, so the directory checked is the
 * one it is in.
 */
int
crypt_keyfile_check(const char *dir, const char *file, char *why, size_t len)
{
	char path[400];
	struct stat st;
	int dfd, rc;

	if (parents_ok(dir, why, len) == -1)
		return -1;
	if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return snprintf(why, len, "%s: %s", dir, errno == ENOTDIR ?
		    "not a directory (or a symlink)" : strerror(errno)), -1;
	if (fstat(dfd, &st) == -1 || !owner_ok(&st) || (st.st_mode & 022)) {
		close(dfd);
		return errno = EPERM, snprintf(why, len, "%s: not a directory only root "
		    "may write to", dir), -1;
	}
	rc = fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW);
	close(dfd);
	if (rc == -1)
		return snprintf(why, len, "%s/%s: %s", dir, file, strerror(errno)), -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return keyfile_stat_ok(path, &st, why, len);
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
	char file[LABEL_NAME_MAX + 8], path[300], why[400];

	snprintf(file, sizeof(file), "%s.key", v->name);
	snprintf(path, sizeof(path), "%s/%s", keyfile_dir, file);
	if (crypt_keyfile_check(keyfile_dir, file, why, sizeof(why)) == -1) {
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
	size_t n;

	snprintf(keyfile_dir, sizeof(keyfile_dir), "%s", dir ? dir : "");
	/* "/mnt/keys/" is /mnt/keys: cryptd refuses a path with "//". */
	n = strlen(keyfile_dir);
	while (n > 1 && keyfile_dir[n - 1] == '/')
		keyfile_dir[--n] = '\0';
	ntried = ticks = 0;
	ev_timer_stop(nas_loop(), &auto_w);
	if (keyfile_dir[0] == '\0')
		return;
	ev_timer_init(&auto_w, auto_cb, 0., 1.);
	ev_timer_start(nas_loop(), &auto_w);
}
