/*
 * ratelimit-state.c: the unlock back-off kept in a file (Decision 64),
 * so that restarting cryptd, or the box, does not give a guesser a
 * fresh count.  Written whole after every change: <file>.new, fsync,
 * rename, the directory fsynced; a power cut leaves the old or the new
 * table.  Read strictly at start and on SIGHUP; a file that is there
 * but not exactly what cryptd writes makes every device wait the
 * longest delay once: a corrupt file errs on the side of back-off.
 *
 *	cryptd-backoff 1
 *	boot <boot_id>
 *	<dev> <ino> <fails> <last> <name>	(one line per device)
 *	end <count>
 *
 * <last> is on the monotonic clock of boot <boot_id>; in another boot
 * the count stays and its delay starts again from the load.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "cryptd.h"

#define STATE_MAX	(64 * 1024)
#define FLOOR_DELAY	60.	/* as the longest back-off */
#define FAILS_MAX	100000

static char state_path[256];
static double floor_until;	/* on ratelimit_now()'s clock */
static const char *boot_id_path = "/proc/sys/kernel/random/boot_id";

double
ratelimit_floor(double now)
{
	return floor_until > now ? floor_until - now : 0;
}

static void
boot_id(char *buf, size_t len)
{
	FILE *f = fopen(boot_id_path, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* One "<dev> <ino> <fails> <last> <name>" line; -1 when it is not one. */
static int
parse_entry(char *line, struct rl_entry *e)
{
	int n = -1;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%" SCNu64 " %" SCNu64 " %u %lf %n", &e->dev, &e->ino, &e->fails,
	    &e->last, &n) != 4 || n < 0 || e->fails == 0 || e->fails > FAILS_MAX ||
	    !isfinite(e->last) || e->last < 0 || line[n] == '\0' ||
	    strlen(line + n) >= sizeof(e->name) || strpbrk(line + n, " \t") != NULL)
		return -1;
	snprintf(e->name, sizeof(e->name), "%s", line + n);
	return 0;
}

/* The file's text into buf; 0 absent, 1 read, -1 unreadable. */
static int
read_state(const char *path, char *buf, size_t len)
{
	ssize_t n;
	size_t got = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	/* Larger than cryptd ever writes: not ours. */
	if (got == len - 1 || read(fd, buf, 0) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	buf[got] = '\0';
	return 1;
}

/* 0 when text is a whole table (applied), -1 when it is not (nothing applied). */
static int
parse_state(char *text, double now)
{
	struct rl_entry e[64];
	char *line, *save = NULL, boot[64], here[64];
	unsigned count, n = 0;
	int other_boot, end = 0;

	if (text[0] == '\0' || text[strlen(text) - 1] != '\n')
		return -1;
	if ((line = strtok_r(text, "\n", &save)) == NULL || strcmp(line, "cryptd-backoff 1") != 0)
		return -1;
	if ((line = strtok_r(NULL, "\n", &save)) == NULL || strncmp(line, "boot ", 5) != 0 ||
	    strlen(line + 5) >= sizeof(boot))
		return -1;
	snprintf(boot, sizeof(boot), "%s", line + 5);
	boot_id(here, sizeof(here));
	other_boot = here[0] == '\0' || strcmp(boot, here) != 0;
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		if (end)
			return -1;	/* nothing after the end */
		if (strncmp(line, "end ", 4) == 0) {
			if (sscanf(line + 4, "%u", &count) != 1 || count != n)
				return -1;
			end = 1;
			continue;
		}
		if (n == sizeof(e) / sizeof(e[0]) || parse_entry(line, &e[n]) == -1)
			return -1;
		n++;
	}
	if (!end)
		return -1;
	ratelimit_clear();
	for (unsigned i = 0; i < n; i++) {
		if (other_boot || e[i].last > now)
			e[i].last = now;
		ratelimit_put(&e[i]);
	}
	return 0;
}

void
ratelimit_load(const char *path)
{
	char *buf;
	int rc;

	snprintf(state_path, sizeof(state_path), "%s", path ? path : "");
	floor_until = 0;
	if (state_path[0] == '\0')
		return;
	if ((buf = malloc(STATE_MAX)) == NULL)
		rc = -1;
	else if ((rc = read_state(state_path, buf, STATE_MAX)) == 1)
		rc = parse_state(buf, ratelimit_now());
	free(buf);
	if (rc == -1) {
		floor_until = ratelimit_now() + FLOOR_DELAY;
		log_warnx("%s: unreadable or not cryptd's back-off table: every unlock "
		    "waits %.0f s", state_path, FLOOR_DELAY);
	}
}

static int
write_all(int fd, const char *s, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, s, len)) <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

void
ratelimit_save(void)
{
	char tmp[300], dir[256], boot[64], line[400];
	struct rl_entry e;
	unsigned n = 0;
	int fd, dfd, rc = 0;

	if (state_path[0] == '\0')
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", state_path);
	/* Not followed: a link planted here must not redirect root's write. */
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		log_warn("%s", tmp);
		return;
	}
	boot_id(boot, sizeof(boot));
	snprintf(line, sizeof(line), "cryptd-backoff 1\nboot %s\n", boot);
	rc |= write_all(fd, line, strlen(line));
	for (int i = 0; ratelimit_get(i, &e) == 0; i++) {
		if (e.fails == 0)
			continue;
		snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 " %u %.3f %s\n", e.dev,
		    e.ino, e.fails, e.last, e.name[0] && !strpbrk(e.name, " \t\n") ?
		    e.name : "-");
		rc |= write_all(fd, line, strlen(line));
		n++;
	}
	snprintf(line, sizeof(line), "end %u\n", n);
	rc |= write_all(fd, line, strlen(line));
	if (fsync(fd) != 0)
		rc = -1;
	if (close(fd) != 0)
		rc = -1;
	if (rc != 0 || rename(tmp, state_path) != 0) {
		log_warn("%s: back-off not kept", state_path);
		(void)unlink(tmp);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", state_path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
}

void
ratelimit_set_boot_id_path(const char *p)
{
	boot_id_path = p;
}
