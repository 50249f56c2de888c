/*
 * keyfile.c: opening a file a client named, as root, without being
 * turned against the system (see keyfile.h).
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keyfile.h"

/*
 * 1 when path (plain, absolute) is dir/<something>.  Trailing slashes of
 * dir are not part of its name ("/media/" is /media); "/" is everything.
 */
static int
under(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (dir[0] != '/')
		return 0;
	return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

/* Absolute, and no part empty, "." or "..". */
static int
plain_path(const char *path)
{
	const char *p = path, *end;
	size_t n;

	if (*p != '/')
		return 0;
	while (*p == '/') {
		p++;
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p = end;
	}
	return 1;
}

/*
 * The prefix test is on the text; openat2's RESOLVE_NO_SYMLINKS then
 * makes the text the truth: no link in any part of the path (a
 * directory swapped for a link to /etc between a check and the open)
 * is followed, and "." and ".." are refused before it.
 */
int
path_open_under(const char *dirs, const char *path, int flags, char *err, size_t errlen)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
	    .mode = (flags & O_CREAT) ? 0600 : 0,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	char list[256], *d, *save = NULL;
	int fd, ok = 0;

	if (!plain_path(path)) {
		snprintf(err, errlen, "%s: not a plain absolute path", path);
		return -1;
	}
	snprintf(list, sizeof(list), "%s", dirs);
	for (d = strtok_r(list, " ", &save); d && !ok; d = strtok_r(NULL, " ", &save))
		ok = under(d, path);
	if (!ok) {
		snprintf(err, errlen, "%s: not under %s", path, dirs);
		return -1;
	}
	if ((fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how))) < 0) {
		snprintf(err, errlen, "%s: %s", path, errno == ELOOP ?
		    "a symlink on the way (refused)" : strerror(errno));
		return -1;
	}
	return fd;
}

int
keyfile_stat_ok(const char *path, const struct stat *st, char *err, size_t errlen)
{
	const char *why = NULL;

	if (S_ISLNK(st->st_mode))
		why = "a symlink";
	else if (!S_ISREG(st->st_mode))
		why = "not a regular file";
	else if (st->st_uid != 0 && st->st_uid != geteuid())
		why = "not root's";
	else if (st->st_mode & 077)
		why = "group or others may read or write it (chmod 600)";
	else if (st->st_size < 1 || st->st_size > KEYFILE_MAX)
		why = "not 1 to 8192 bytes";
	if (why == NULL)
		return 0;
	snprintf(err, errlen, "key file %s: refused: %s", path, why);
	errno = EPERM;
	return -1;
}

/*
 * Opened O_PATH first: a FIFO (whose open would block) or a device node
 * (whose open acts: /dev/watchdog) is judged by fstat and never opened
 * for reading; the real open goes through the descriptor's own /proc
 * link, so it is the inode judged.
 */
int
node_reopen(int pfd, int flags, mode_t type, int reg_as_blk, struct stat *st)
{
	char self[64];
	int fd;

	if (fstat(pfd, st) != 0) {
		close(pfd);
		return -1;
	}
	if ((st->st_mode & S_IFMT) != type && !(type == S_IFBLK && reg_as_blk &&
	    S_ISREG(st->st_mode))) {
		close(pfd);
		errno = type == S_IFBLK ? ENOTBLK : S_ISLNK(st->st_mode) ? ELOOP : EINVAL;
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, flags | O_CLOEXEC | O_NOCTTY);
	close(pfd);
	return fd;
}

/* path under dirs, opened for reading only if it is a regular file. */
int
path_open_regular(const char *dirs, const char *path, struct stat *st, char *err,
    size_t errlen)
{
	int pfd, fd;

	if ((pfd = path_open_under(dirs, path, O_PATH, err, errlen)) < 0)
		return -1;
	if ((fd = node_reopen(pfd, O_RDONLY, S_IFREG, 0, st)) >= 0)
		return fd;
	if (errno == ELOOP || errno == EINVAL)
		snprintf(err, errlen, "%s: refused: %s", path, errno == ELOOP ?
		    "a symlink" : "not a regular file");
	else
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return -1;
}

/*
 * Read to the end, one byte past the limit: a file grown since the
 * fstat is refused, not cut, and a short read (a network filesystem)
 * does not make a key of part of the file.
 */
struct secret *
keyfile_read(const char *dirs, const char *path, char *err, size_t errlen)
{
	struct secret *s;
	struct stat st;
	size_t len = 0;
	ssize_t n = 1;
	int fd;

	if ((fd = path_open_regular(dirs, path, &st, err, errlen)) < 0)
		return NULL;
	if (keyfile_stat_ok(path, &st, err, errlen) == -1) {
		close(fd);
		return NULL;
	}
	if ((s = secret_new(KEYFILE_MAX + 1)) == NULL) {
		close(fd);
		snprintf(err, errlen, "key file %s: no locked memory for it", path);
		return NULL;
	}
	while (len < s->cap && (n = read(fd, s->buf + len, s->cap - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0 || len == 0 || len > KEYFILE_MAX) {
		snprintf(err, errlen, "key file %s: %s", path, n < 0 ? "cannot read it" :
		    "refused: not 1 to 8192 bytes");
		secret_free(s);
		return NULL;
	}
	s->len = len;
	return s;
}
