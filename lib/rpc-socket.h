/* rpc-socket.c: the API socket's directory and the ownership of its file. */
#ifndef NAS_RPC_SOCKET_H
#define NAS_RPC_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Creates dir 0755 when it is missing, then checks it: a directory (not
 * a symlink) owned by root or by us, writable by nobody else unless
 * sticky. -1 with err filled ("socket directory DIR: why") otherwise.
 */
int	nas_sockdir_check(const char *dir, char *err, size_t errlen);

/* The socket file a daemon bound, held by an O_PATH descriptor. */
struct nas_sockfile {
	int		 fd;		/* -1 when none */
	dev_t		 dev;		/* the file's identity, taken after bind */
	ino_t		 ino;
	char		 path[108];
};

/*
 * Takes hold of the socket file just bound at path (without following a
 * symlink): it must be a socket owned by our uid. 0, or -1 with err.
 */
int	nas_sockfile_open(struct nas_sockfile *, const char *path, char *err,
	    size_t errlen);
/*
 * Gives the socket file to gid ((gid_t)-1: our own group), mode 0660,
 * if the path still names the file we bound; never follows a symlink.
 * 1 changed, 0 already so, -1 with err filled (nothing changed).
 */
int	nas_sockfile_set_group(struct nas_sockfile *, gid_t gid, char *err,
	    size_t errlen);
void	nas_sockfile_close(struct nas_sockfile *);

#endif
