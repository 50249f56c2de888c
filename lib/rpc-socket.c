/*
 * Who may replace or re-own the API socket. Its directory must be
 * writable only by root or the daemon (or sticky), else someone else
 * could swap the socket file for a symlink between our bind and our
 * chown and have us give a file of their choosing to the read group.
 * The file itself is held by an O_PATH descriptor from just after bind,
 * so a later change of group (SIGHUP) acts on that very inode and never
 * looks a path up again.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rpc-socket.h"

#define SOCKET_MODE	0660

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int
nas_sockdir_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int created = 0, fd;

	if (mkdir(dir, 0755) == 0)
		created = 1;
	else if (errno != EEXIST)
		return fail(err, errlen, "socket directory %s: %s", dir, strerror(errno));
	/* O_NOFOLLOW: a symlink could be pointed elsewhere after our checks. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return fail(err, errlen, "socket directory %s: %s", dir,
		    errno == ELOOP || errno == ENOTDIR ? "not a directory (or a symlink)" :
		    strerror(errno));
	/* Clients need to search it whatever our umask was. */
	if (created && fchmod(fd, 0755) == -1) {
		close(fd);
		return fail(err, errlen, "socket directory %s: %s", dir, strerror(errno));
	}
	if (fstat(fd, &st) == -1) {
		close(fd);
		return fail(err, errlen, "socket directory %s: %s", dir, strerror(errno));
	}
	close(fd);
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return fail(err, errlen, "socket directory %s: owned by uid %u, not by "
		    "root or uid %u", dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return fail(err, errlen, "socket directory %s: mode %04o lets others "
		    "replace the socket (writable by group or others, not sticky)",
		    dir, (unsigned)(st.st_mode & 07777));
	return 0;
}

int
nas_sockfile_open(struct nas_sockfile *sf, const char *path, char *err, size_t errlen)
{
	struct stat st;

	sf->fd = -1;
	if (strlen(path) >= sizeof(sf->path))
		return fail(err, errlen, "%s: %s", path, strerror(ENAMETOOLONG));
	/*
	 * The identity of the file has to come from the path: fstat on the
	 * listening socket's descriptor describes the socket's own inode in
	 * sockfs (another st_dev, another st_ino), not the file bind made,
	 * and Linux offers no call from one to the other (short of
	 * sock_diag's UNIX_DIAG_VFS). Taken right after bind in a directory
	 * only root and we may write, it is the file we bound. O_PATH with
	 * O_NOFOLLOW opens a symlink as itself, which S_ISSOCK then refuses.
	 */
	sf->fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (sf->fd == -1)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(sf->fd, &st) == -1 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		nas_sockfile_close(sf);
		return fail(err, errlen, "%s: not the socket we bound", path);
	}
	sf->dev = st.st_dev;
	sf->ino = st.st_ino;
	snprintf(sf->path, sizeof(sf->path), "%s", path);
	return 0;
}

/* fchmod does not take an O_PATH descriptor; its /proc link is the inode itself. */
static int
chmod_held(int fd, mode_t mode)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return chmod(proc, mode);
}

int
nas_sockfile_set_group(struct nas_sockfile *sf, gid_t gid, char *err, size_t errlen)
{
	struct stat st, at;

	if (sf->fd == -1)
		return fail(err, errlen, "no socket file");
	if (gid == (gid_t)-1)
		gid = getegid();
	/* Someone with root's rights replaced the name: leave both alone. */
	if (lstat(sf->path, &at) == -1 || at.st_dev != sf->dev || at.st_ino != sf->ino)
		return fail(err, errlen, "%s: no longer the socket we bound; not "
		    "changing its group", sf->path);
	if (fstat(sf->fd, &st) == -1)
		return fail(err, errlen, "%s: %s", sf->path, strerror(errno));
	if (st.st_gid == gid && (st.st_mode & 07777) == SOCKET_MODE)
		return 0;
	/* AT_EMPTY_PATH: the held inode, no lookup, so no symlink to follow. */
	if (fchownat(sf->fd, "", (uid_t)-1, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1)
		return fail(err, errlen, "%s: chown: %s", sf->path, strerror(errno));
	/* chown keeps rwx bits; this only mends a mode someone else changed. */
	if (fstat(sf->fd, &st) == -1 ||
	    ((st.st_mode & 07777) != SOCKET_MODE && chmod_held(sf->fd, SOCKET_MODE) == -1))
		return fail(err, errlen, "%s: chmod: %s", sf->path, strerror(errno));
	return 1;
}

void
nas_sockfile_close(struct nas_sockfile *sf)
{
	if (sf->fd != -1)
		close(sf->fd);
	sf->fd = -1;
}
