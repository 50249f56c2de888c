/*
 * md's attributes that notify (admin-guide/md.rst: array_state,
 * degraded, sync_action, each dev-X/state) and /proc/mdstat, watched through
 * an epoll set of raidd's own with EPOLLPRI: sysfs files always poll
 * readable, so libev's EV_READ would wake for nothing. A change shows
 * as EPOLLPRI|EPOLLERR until the file is read again from offset 0.
 */
#include <sys/epoll.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "system-linux.h"

#define WATCH_MAX	160
#define WATCH_PATH	160

static struct {
	char	path[WATCH_PATH];
	int	fd;		/* -1: slot free */
	int	want;		/* set by the last watch_arrays */
} w[WATCH_MAX];
static int nw;

int
lnx_watch_open(void)
{
	int ep;

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		log_warn("md watch: epoll");
	nw = 0;
	return ep;
}

/* Reading from offset 0 is what re-arms a sysfs (and mdstat) poll. */
static int
rearm(int fd)
{
	char buf[512];

	errno = 0;
	if (lseek(fd, 0, SEEK_SET) == -1)
		return -1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return errno == ENODEV || errno == ENOENT ? -1 : 0;
}

static void
unwatch(int ep, int i)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, w[i].fd, NULL);
	close(w[i].fd);
	w[i].fd = -1;
	w[i].path[0] = '\0';
}

static void
want(int ep, const char *path)
{
	struct epoll_event ev = { .events = EPOLLPRI };
	int i, fd, free_slot = -1;

	for (i = 0; i < nw; i++) {
		if (w[i].fd != -1 && strcmp(w[i].path, path) == 0) {
			w[i].want = 1;
			return;
		}
		if (w[i].fd == -1 && free_slot == -1)
			free_slot = i;
	}
	if (free_slot == -1) {
		if (nw == WATCH_MAX) {
			log_warnx("md watch: more than %d attributes: %s is not watched",
			    WATCH_MAX, path);
			return;
		}
		free_slot = nw++;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return;	/* raid0 has no degraded or sync_action */
	rearm(fd);
	ev.data.u32 = (uint32_t)free_slot;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
		log_warn("md watch: %s", path);
		close(fd);
		return;
	}
	snprintf(w[free_slot].path, WATCH_PATH, "%s", path);
	w[free_slot].fd = fd;
	w[free_slot].want = 1;
}

static void
want_array(int ep, const char *name)
{
	static const char *const attrs[] = { "array_state", "degraded", "sync_action", NULL };
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	for (int i = 0; attrs[i] != NULL; i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/md/%s", name, attrs[i]);
		want(ep, path);
	}
	snprintf(path, sizeof(path), "/sys/block/%s/md", name);
	if ((dir = opendir(path)) == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (strncmp(e->d_name, "dev-", 4) != 0 || strlen(e->d_name) > NAME_MAX - 8)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/md/%s/state", name, e->d_name);
		want(ep, path);
	}
	closedir(dir);
}

/* Exactly these arrays' attributes: members and arrays come and go. */
int
lnx_watch_arrays(int ep, char (*names)[SYS_NAME_MAX], int n)
{
	for (int i = 0; i < nw; i++)
		w[i].want = 0;
	want(ep, "/proc/mdstat");
	for (int i = 0; i < n; i++)
		if (strchr(names[i], '/') == NULL && names[i][0] != '.')
			want_array(ep, names[i]);
	for (int i = 0; i < nw; i++)
		if (w[i].fd != -1 && !w[i].want)
			unwatch(ep, i);
	return 0;
}

/* What woke: each re-read (re-armed); a file whose node went is dropped. */
int
lnx_watch_read(int ep)
{
	struct epoll_event ev[32];
	int n, woke = 0;

	while ((n = epoll_wait(ep, ev, 32, 0)) > 0) {
		for (int k = 0; k < n; k++) {
			int i = (int)ev[k].data.u32;

			if (i < 0 || i >= nw || w[i].fd == -1)
				continue;
			woke++;
			if (rearm(w[i].fd) == -1)
				unwatch(ep, i);
		}
		if (n < 32)
			break;
	}
	if (n == -1 && errno != EINTR)
		return -1;
	return woke;
}
