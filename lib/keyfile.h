/*
 * keyfile.c: files a client names by path and a root daemon opens: key
 * files (crypt.open's keyfile) and header backups.  Only under the
 * directories an admin configured, never through a symlink, and a key
 * file only when nobody but root could have read or written it.
 */
#ifndef NAS_KEYFILE_H
#define NAS_KEYFILE_H

#include <sys/stat.h>

#include <stddef.h>

#include "secret.h"

/* A key file's size limit: cryptsetup's default --keyfile-size is larger,
 * but a NAS key file is a random key or a passphrase, never a document. */
#define KEYFILE_MAX	8192

/*
 * The O_PATH descriptor pfd (closed) opened for real with flags once
 * fstat judges its node of type (S_IFBLK or S_IFREG; reg_as_blk lets a
 * regular file stand for a block device: the simulator's disks): no
 * driver's open runs before that, a FIFO never blocks, and the open goes
 * through pfd's own /proc link, so it is the inode judged.  -1 with
 * errno ENOTBLK or EINVAL (ELOOP: a symlink) for a node of another type.
 */
int	node_reopen(int pfd, int flags, mode_t type, int reg_as_blk, struct stat *st);
/*
 * path, a plain absolute path (no "." or ".." part, no "//") under one
 * of dirs (space-separated), opened with flags and no symlink followed
 * anywhere on the way; O_CREAT makes the file 0600.  The descriptor, or
 * -1 with err.
 */
int	path_open_under(const char *dirs, const char *path, int flags, char *err,
	    size_t errlen);
/*
 * 0 when st (path's, for the message) is a key file nobody but root
 * could have read or swapped: a regular file of 1 to KEYFILE_MAX bytes,
 * root's (or, in the unit suites, this user's), no group or world bits:
 * on the NAS's own filesystems (a stick's files carry whatever owner
 * and mode its author gave them).  -1 (errno EPERM) with err.
 */
int	keyfile_stat_ok(const char *path, const struct stat *st, char *err,
	    size_t errlen);
/*
 * path under dirs (as path_open_under) opened for reading only once
 * fstat says it is a regular file; st is its.  -1 with err.
 */
int	path_open_regular(const char *dirs, const char *path, struct stat *st,
	    char *err, size_t errlen);
/* The key file's bytes, whole, in a secret; NULL with err. */
struct secret *keyfile_read(const char *dirs, const char *path, char *err,
	    size_t errlen);

#endif
