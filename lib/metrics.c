/*
 * Metrics for node_exporter's textfile collector: the text exposition
 * format, built in memory, written to a temporary file beside the real
 * one and renamed over it. Names are checked here rather than trusted,
 * because one bad line makes the collector drop the whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"

#define MAX_FAMILIES	64

struct metrics {
	char	*buf;
	size_t	 len, cap;
	int	 bad;			/* a name was refused: write nothing */
	int	 nfam;
	char	 fam[MAX_FAMILIES][128];	/* names so far: each once */
	char	 cur[128];		/* the family samples belong to */
};

struct metrics *
metrics_new(void)
{
	return calloc(1, sizeof(struct metrics));
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	free(m->buf);
	free(m);
}

static void
put(struct metrics *m, const char *s, size_t n)
{
	char *nb;
	size_t cap;

	if (m->bad)
		return;
	if (m->len + n + 1 > m->cap) {
		cap = m->cap ? m->cap : 4096;
		while (m->len + n + 1 > cap)
			cap *= 2;
		if ((nb = realloc(m->buf, cap)) == NULL) {
			m->bad = 1;
			return;
		}
		m->buf = nb;
		m->cap = cap;
	}
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
}

static void
puts_(struct metrics *m, const char *s)
{
	put(m, s, strlen(s));
}

static void NAS_PRINTF(2, 3)
putf(struct metrics *m, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		m->bad = 1;
	else
		put(m, tmp, (size_t)n);
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics; no ':' and no "__" start for labels. */
static int
name_ok(const char *s, int label)
{
	size_t n = strlen(s);

	if (n == 0 || n >= 128 || (label && strncmp(s, "__", 2) == 0))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		    (c == ':' && !label) || (i > 0 && c >= '0' && c <= '9'))
			continue;
		return 0;
	}
	return 1;
}

static void
refuse(struct metrics *m, const char *what, const char *name)
{
	if (!m->bad)
		log_warnx("metrics: %s \"%s\" refused", what, name);
	m->bad = 1;
}

/*
 * HELP text: backslash and newline escaped; label values also '"'. Other
 * controls and bytes past ASCII become '?': the format must be UTF-8 and
 * a label from a disk or a board file is not trusted to be.
 */
static void
put_escaped(struct metrics *m, const char *s, int quote)
{
	for (; *s != '\0'; s++) {
		if ((*s != '\n' && (unsigned char)*s < 0x20) || (unsigned char)*s >= 0x7f)
			puts_(m, "?");
		else if (*s == '\\')
			puts_(m, "\\\\");
		else if (*s == '\n')
			puts_(m, "\\n");
		else if (*s == '"' && quote)
			puts_(m, "\\\"");
		else
			put(m, s, 1);
	}
}

void
metrics_family(struct metrics *m, const char *name, const char *type, const char *help)
{
	if (!name_ok(name, 0)) {
		refuse(m, "metric name", name);
		return;
	}
	if (strcmp(type, "gauge") != 0 && strcmp(type, "counter") != 0 &&
	    strcmp(type, "untyped") != 0) {
		refuse(m, "metric type", type);
		return;
	}
	for (int i = 0; i < m->nfam; i++)
		if (strcmp(m->fam[i], name) == 0) {
			refuse(m, "second family", name);
			return;
		}
	if (m->nfam == MAX_FAMILIES) {
		refuse(m, "one family too many", name);
		return;
	}
	snprintf(m->fam[m->nfam++], sizeof(m->fam[0]), "%s", name);
	snprintf(m->cur, sizeof(m->cur), "%s", name);
	puts_(m, "# HELP ");
	puts_(m, name);
	puts_(m, " ");
	put_escaped(m, help, 0);
	puts_(m, "\n# TYPE ");
	puts_(m, name);
	puts_(m, " ");
	puts_(m, type);
	puts_(m, "\n");
}

void
metrics_add(struct metrics *m, const char *const *labels, double v)
{
	if (m->cur[0] == '\0') {
		refuse(m, "sample without a family", "");
		return;
	}
	puts_(m, m->cur);
	for (int i = 0; labels != NULL && labels[i] != NULL; i += 2) {
		if (labels[i + 1] == NULL || !name_ok(labels[i], 1)) {
			refuse(m, "label", labels[i]);
			return;
		}
		puts_(m, i == 0 ? "{" : ",");
		puts_(m, labels[i]);
		puts_(m, "=\"");
		put_escaped(m, labels[i + 1], 1);
		puts_(m, "\"");
		if (labels[i + 2] == NULL)
			puts_(m, "}");
	}
	if (isnan(v))
		puts_(m, " NaN\n");
	else if (isinf(v))
		puts_(m, v > 0 ? " +Inf\n" : " -Inf\n");
	else
		putf(m, " %.17g\n", v);
}

const char *
metrics_text(struct metrics *m)
{
	return m->bad ? NULL : m->buf != NULL ? m->buf : "";
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
metrics_write(struct metrics *m, const char *dir, const char *daemon)
{
	char tmp[160], name[160];
	int dfd, fd, e, rc;

	if (m->bad || !name_ok(daemon, 1) ||
	    snprintf(name, sizeof(name), "%s.prom", daemon) >= (int)sizeof(name) ||
	    snprintf(tmp, sizeof(tmp), ".%s.prom.%ld.tmp", daemon, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		errno = EINVAL;
		return -1;
	}
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -1;
	/* Not through a symlink: whoever made it could aim our writes. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1 && errno == EEXIST && unlinkat(dfd, tmp, 0) == 0)
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	/*
	 * Something we cannot remove holds the name (a directory planted by
	 * whoever else may write the directory; the pid is no secret): a
	 * name nobody could guess, rather than no metrics from now on.
	 */
	for (int i = 0; fd == -1 && errno != ENOSPC && errno != EROFS && i < 4; i++) {
		uint32_t r;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r) ||
		    snprintf(tmp, sizeof(tmp), ".%s.prom.%ld.%08x.tmp", daemon,
		    (long)getpid(), (unsigned)r) >= (int)sizeof(tmp))
			break;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	}
	if (fd == -1) {
		e = errno;
		close(dfd);
		errno = e;
		return -1;
	}
	rc = fchmod(fd, 0644) == -1 || write_all(fd, m->buf ? m->buf : "", m->len) == -1;
	e = errno;
	if (close(fd) == -1 && !rc) {
		rc = 1;
		e = errno;
	}
	if (!rc && renameat(dfd, tmp, dfd, name) == -1) {
		rc = 1;
		e = errno;
	}
	if (rc) {
		unlinkat(dfd, tmp, 0);
		close(dfd);
		errno = e;
		return -1;
	}
	close(dfd);
	return 0;
}

int
metrics_publish(struct metrics *m, const char *dir, const char *daemon, int *failed)
{
	int rc = metrics_write(m, dir, daemon);

	metrics_free(m);
	/* Said once, not at every write; said again after it worked. */
	if (rc == -1 && !*failed)
		log_warn("%s/%s.prom", dir, daemon);
	*failed = rc == -1;
	return rc;
}
