/*
 * The standby minutes drive.set chose, kept across restarts in a small
 * state file ([standby] state_file, /etc/nas/powerd-standby): one line
 * "bayN MINUTES" per bay, written whole to a temporary file, synced,
 * renamed over the old one and the directory synced, so that a power cut
 * leaves either the old file or the new one. The file is read as
 * untrusted: anything but those lines and it is ignored whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "powerd.h"

#define STATE_MAX	4096	/* 16 lines of "bay16 1440" fit many times over */

/* One line: 0 with *bay (1-based) and *min set, -1 otherwise. */
static int
parse_line(const char *line, int *bay, int *min)
{
	char end;

	if (sscanf(line, "bay%d %d%c", bay, min, &end) != 2)
		return -1;
	/* sscanf takes signs and spaces; the file's lines have neither. */
	if (strspn(line, "bay0123456789 ") != strlen(line) || strchr(line, ' ') !=
	    strrchr(line, ' ') || line[3] == '0' || line[3] == ' ')
		return -1;
	if (*bay < 1 || *bay > BOARD_MAX_BAYS || *min < 0 || *min > 1440)
		return -1;
	return 0;
}

int
timers_parse(const char *text, int out[BOARD_MAX_BAYS], char *err, size_t errlen)
{
	int got[BOARD_MAX_BAYS], lineno = 0;
	const char *p = text;

	for (int i = 0; i < BOARD_MAX_BAYS; i++)
		got[i] = -1;
	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		char line[64];
		size_t len;
		int bay, min;

		lineno++;
		if (nl == NULL) {
			snprintf(err, errlen, "line %d: not ended by a newline", lineno);
			return -1;
		}
		len = (size_t)(nl - p);
		if (len >= sizeof(line)) {
			snprintf(err, errlen, "line %d: too long", lineno);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl + 1;
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (parse_line(line, &bay, &min) == -1) {
			snprintf(err, errlen, "line %d: not \"bayN MINUTES\" (1-%d, 0-1440)",
			    lineno, BOARD_MAX_BAYS);
			return -1;
		}
		if (got[bay - 1] != -1) {
			snprintf(err, errlen, "line %d: bay%d twice", lineno, bay);
			return -1;
		}
		got[bay - 1] = min;
	}
	memcpy(out, got, sizeof(got));
	return 0;
}

int
timers_load(const char *path, int out[BOARD_MAX_BAYS], char *err, size_t errlen)
{
	char buf[STATE_MAX + 1];
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd;

	for (int i = 0; i < BOARD_MAX_BAYS; i++)
		out[i] = -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) == -1) {
		if (errno == ENOENT)
			return 0;	/* drive.set never ran */
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	while (len < sizeof(buf) - 1 &&
	    (n = read(fd, buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	if (len > STATE_MAX - 1 || memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "%s: too long or not text", path);
		return -1;
	}
	buf[len] = '\0';
	if (timers_parse(buf, out, err, errlen) == -1) {
		char why[128];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

/* fsync of the directory that holds path: the rename is on disk. */
static int
sync_dir(const char *path)
{
	char copy[512];
	int fd, rc;

	if (pathf(copy, sizeof(copy), "%s", path) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
timers_save(const char *path, const int min[BOARD_MAX_BAYS])
{
	char tmp[512], text[STATE_MAX];
	size_t len = 0;
	int fd, e;

	if (path[0] != '/' || pathf(tmp, sizeof(tmp), "%s.new", path) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	len = (size_t)snprintf(text, sizeof(text),
	    "# powerd: standby minutes set by drive.set; see powerd.conf(5)\n");
	for (int i = 0; i < BOARD_MAX_BAYS; i++)
		if (min[i] >= 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "bay%d %d\n",
			    i + 1, min[i]);
	(void)unlink(tmp);	/* a half-written one from a power cut */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644)) == -1)
		return -1;
	errno = 0;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) == -1) {
		e = errno ? errno : EIO;
		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return sync_dir(path);
}
