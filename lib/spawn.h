/*
 * spawn.c: child processes on the event loop.  Each child runs in a
 * process group of its own, with default signal dispositions and an
 * empty signal mask, stdin on /dev/null and stdout/stderr on a pipe
 * whose tail is kept for the callback.
 */
#ifndef NAS_SPAWN_H
#define NAS_SPAWN_H

#include <sys/types.h>

/*
 * Called once, when the child has exited: status as waitpid gives it,
 * output the tail of what it printed (its pipe is closed then, even if
 * a grandchild still holds it open).
 */
#define NAS_CHILD_GRACE	5.0	/* seconds between SIGTERM and SIGKILL */

typedef void (*nas_child_cb)(int status, const char *output, void *arg);

struct nas_child;

/*
 * Runs argv[0] (a full path).  The handle is valid until cb has returned
 * (and not at all after nas_child_abandon); from cb on, timeout and
 * terminate do nothing.
 */
struct nas_child *nas_child_start(char *const argv[], nas_child_cb, void *arg);
/*
 * The same with fd (not -1) as the child's descriptor as (above 2): a
 * channel only the child and what it runs can write to.
 */
struct nas_child *nas_child_start_fd(char *const argv[], int fd, int as, nas_child_cb,
	    void *arg);
/* The same, for callers that never need the handle: 0 or -1. */
int	nas_spawn(char *const argv[], nas_child_cb, void *arg);
pid_t	nas_child_pid(const struct nas_child *);
/*
 * Kills the child's process group if it still runs after seconds:
 * SIGTERM, then SIGKILL after grace seconds.  cb then gets the signal
 * as status and "killed: ..." at the end of the output.
 */
void	nas_child_timeout(struct nas_child *, double seconds, double grace);
/* The same, now. */
void	nas_child_terminate(struct nas_child *, double grace);
/* Terminates the child and never calls cb: for an owner going away. */
void	nas_child_abandon(struct nas_child *, double grace);
int	nas_child_count(void);
/*
 * Daemon shutdown, after the loop has stopped: every child's group gets
 * SIGTERM, then SIGKILL after grace seconds, and is waited for (bounded
 * by another grace).  No callback runs.  Returns the children that
 * could not be reaped.
 */
int	nas_spawn_stop_all(double grace);

#endif
