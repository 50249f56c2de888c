/*
 * The unit's identity: 16 random bytes in a file on the flash, made at
 * the first start and written into every label raidd makes, so that a
 * volume carried in from another unit is told apart from this one's
 * (docs/on-disk-format.md, "Unit id").  A file that exists but cannot
 * be read is never replaced: a new id would make every volume here
 * foreign.  Then raidd runs without an id and creates nothing.
 */
#include <sys/random.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "volume.h"

static uint8_t unit[16];
static int have_unit;
static char unit_problem[160] = "no unit id loaded";

static int
parse_hex(const char *s, uint8_t out[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdef", s[2 * i]) ||
		    !strchr("0123456789abcdef", s[2 * i + 1]))
			return -1;
		out[i] = (uint8_t)v;
	}
	return s[32] == '\n' || s[32] == '\0' ? 0 : -1;
}

void
unit_hex(const uint8_t u[16], char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < 16 && n + 2 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", u[i]);
}

/* The new name is on the flash only once its directory is. */
static int
sync_dir(const char *path)
{
	char dir[300], *slash;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int
unit_create(const char *path)
{
	char tmp[300], hex[40];
	uint8_t u[16];
	int fd;

	if (getrandom(u, sizeof(u), 0) != sizeof(u))
		return -1;
	unit_hex(u, hex, sizeof(hex));
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1)
		return -1;
	if (dprintf(fd, "%s\n", hex) < 0 || fsync(fd) == -1) {
		close(fd);
		return -1;
	}
	close(fd);
	/* link(2), not rename(2): a file made meanwhile is never replaced. */
	if (link(tmp, path) == -1) {
		unlink(tmp);
		return -1;
	}
	unlink(tmp);
	if (sync_dir(path) == -1)
		return -1;
	memcpy(unit, u, 16);
	have_unit = 1;
	log_info("unit id %s made in %s", hex, path);
	return 0;
}

int
unit_load(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd;

	have_unit = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT && unit_create(path) == 0)
			return 0;
		snprintf(unit_problem, sizeof(unit_problem), "%s: %s", path, strerror(errno));
		log_warnx("unit id: %s: volumes of any unit are held, none is created", unit_problem);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n < 32 || parse_hex(buf, unit) == -1 || volume_uuid_zero(unit)) {
		snprintf(unit_problem, sizeof(unit_problem),
		    "%s does not hold 32 hex digits: fix or remove it", path);
		log_warnx("unit id: %s", unit_problem);
		memset(unit, 0, sizeof(unit));
		return -1;
	}
	have_unit = 1;
	return 0;
}

void
unit_set(const uint8_t u[16])
{
	memcpy(unit, u, 16);
	have_unit = !volume_uuid_zero(u);
}

/* This unit's id, or NULL (why in *problem). */
const uint8_t *
unit_id(const char **problem)
{
	if (problem)
		*problem = unit_problem;
	return have_unit ? unit : NULL;
}

/* A label's origin is this unit: its id, or none (written before ids). */
int
unit_is_local(const uint8_t u[16])
{
	if (volume_uuid_zero(u))
		return 1;
	return have_unit && memcmp(u, unit, 16) == 0;
}

/*
 * Volumes deleted here while a member was absent: that member still
 * says the volume exists, and nothing else on the disks remembers the
 * delete, so the unit does (one volume uuid a line, on the flash).
 */
#define DELETED_MAX	64

static uint8_t deleted[DELETED_MAX][16];
static int ndeleted;
static char deleted_path[256];

int
unit_deleted_load(const char *path)
{
	char line[80];
	FILE *f;

	ndeleted = 0;
	snprintf(deleted_path, sizeof(deleted_path), "%s", path);
	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT ? 0 : -1;
	while (ndeleted < DELETED_MAX && fgets(line, sizeof(line), f))
		if (parse_hex(line, deleted[ndeleted]) == 0)
			ndeleted++;
	fclose(f);
	return 0;
}

int
unit_deleted(const uint8_t v[16])
{
	for (int i = 0; i < ndeleted; i++)
		if (memcmp(deleted[i], v, 16) == 0)
			return 1;
	return 0;
}

/*
 * Replaces path with text, durably: a temporary file synced, renamed
 * over it, the directory synced. A power cut leaves the old or the new.
 */
int
unit_file_replace(const char *path, const char *text)
{
	char tmp[300];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)) == -1)
		return -1;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) == -1) {
		close(fd);
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1)
		return -1;
	return sync_dir(path);
}

static int
deleted_save(void)
{
	char text[DELETED_MAX * 33 + 1] = "", hex[40];

	if (deleted_path[0] == '\0')
		return 0;	/* tests: kept in memory */
	for (int i = 0; i < ndeleted; i++) {
		unit_hex(deleted[i], hex, sizeof(hex));
		strcat(text, hex);
		strcat(text, "\n");
	}
	return unit_file_replace(deleted_path, text);
}

/* Records (on) or forgets a deleted volume; the oldest record goes first. */
int
unit_deleted_set(const uint8_t v[16], int on)
{
	int i;

	for (i = 0; i < ndeleted && memcmp(deleted[i], v, 16) != 0; i++)
		;
	if (on && i == ndeleted) {
		if (ndeleted == DELETED_MAX)
			memmove(deleted[0], deleted[1], (DELETED_MAX - 1) * 16), ndeleted--;
		memcpy(deleted[ndeleted++], v, 16);
	} else if (!on && i < ndeleted) {
		memmove(deleted[i], deleted[i + 1], (size_t)(ndeleted - i - 1) * 16);
		ndeleted--;
	} else
		return 0;
	return deleted_save();
}

/* Tests: forget both. */
void
unit_reset(void)
{
	ndeleted = 0;
	deleted_path[0] = '\0';
	memset(unit, 0, sizeof(unit));
	have_unit = 0;
}
