/* Logging to stderr and/or syslog, with levels. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"

static const char *ident = "nas";
static int use_stderr = 1, use_syslog;
static enum log_level level = LOG_LVL_INFO;

static const char *const level_names[] = { "error", "warning", "info", "debug" };
static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

void
log_init(const char *name, int to_stderr, int to_syslog)
{
	ident = name;
	use_stderr = to_stderr;
	if (use_syslog && !to_syslog)
		closelog();
	use_syslog = to_syslog;
	if (use_syslog)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_set_level(enum log_level l)
{
	level = l;
}

enum log_level
log_get_level(void)
{
	return level;
}

const char *
log_level_name(enum log_level l)
{
	return level_names[l];
}

int
log_level_parse(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

/*
 * Messages carry strings from disks and clients (serials, labels): a
 * control byte could forge a syslog line or drive a terminal. Anything
 * outside printable ASCII is written as \n, \t or \xNN; out is cut at a
 * whole character.
 */
void
log_escape(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	if (len == 0)
		return;
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char e[5];
		size_t k = 0;

		if (*p == '\n' || *p == '\t') {
			e[k++] = '\\';
			e[k++] = *p == '\n' ? 'n' : 't';
		} else if (*p < 0x20 || *p >= 0x7f) {
			e[k++] = '\\';
			e[k++] = 'x';
			e[k++] = hex[*p >> 4];
			e[k++] = hex[*p & 15];
		} else
			e[k++] = (char)*p;
		if (n + k >= len)
			break;
		memcpy(out + n, e, k);
		n += k;
	}
	out[n] = '\0';
}

void
log_vmsg(enum log_level l, const char *fmt, va_list ap)
{
	char raw[1024], buf[1024];

	if (l > level)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	log_escape(raw, buf, sizeof(buf));
	if (use_stderr)
		fprintf(stderr, "%s: %s%s\n", ident,
		    l <= LOG_LVL_WARN ? (l == LOG_LVL_ERR ? "error: " : "warning: ") : "",
		    buf);
	if (use_syslog)
		syslog(syslog_prio[l], "%s", buf);
}

void
log_msg(enum log_level l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(l, fmt, ap);
	va_end(ap);
}

/* Like log_warnx, with ": strerror(errno)" appended. */
static void
vlog_errno(enum log_level l, const char *fmt, va_list ap)
{
	char buf[900];
	int saved = errno;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_msg(l, "%s: %s", buf, strerror(saved));
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_LVL_WARN, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_WARN, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_LVL_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}
