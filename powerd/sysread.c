/*
 * One value from sysfs or /proc, read with a bound. A sysfs read of an
 * I2C or SMBus sensor runs the driver's bus transfer in our thread and
 * cannot be interrupted: the sensors are read on the sampler's worker
 * (sampler.c), and a read that took longer than the bound stops that
 * sensor being asked for a while (sensor.c), so one slow chip cannot
 * stall every sample. Called from the loop and from that worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "powerd.h"

static int bound_ms = 200;

const char *
rd_status_name(enum rd_status s)
{
	static const char *const names[] = {
		"ok", "vanished", "garbage", "denied", "slow", "error", "stalled"
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "error";
}

void
sysread_set_bound(int ms)
{
	/* Read by the sampler's worker too (sampler.c). */
	__atomic_store_n(&bound_ms, ms, __ATOMIC_RELAXED);
}

int
sysread_bound(void)
{
	return __atomic_load_n(&bound_ms, __ATOMIC_RELAXED);
}

static double
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static enum rd_status
errno_status(int e)
{
	if (e == ENOENT || e == ENODEV || e == ENXIO || e == ENOTDIR)
		return RD_VANISHED;
	if (e == EACCES || e == EPERM)
		return RD_DENIED;
	return RD_ERROR;
}

/* Reads at most len - 1 bytes of path into buf, NUL-terminated. */
static enum rd_status
read_small(const char *path, char *buf, size_t len, double *took_ms)
{
	double t0 = mono_ms();
	ssize_t n;
	int fd, e;

	buf[0] = '\0';
	/* O_NONBLOCK: a FIFO planted in a fixture or /proc cannot hang us. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) == -1) {
		e = errno;
		if (took_ms != NULL)
			*took_ms = mono_ms() - t0;
		return errno_status(e);
	}
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (took_ms != NULL)
		*took_ms = mono_ms() - t0;
	if (n < 0)
		return e == EAGAIN ? RD_GARBAGE : errno_status(e);
	buf[n] = '\0';
	/*
	 * A NUL would end the text early ("42\0junk" read as 42), and a
	 * file that fills the buffer may go on: its head is not its value
	 * ("000...0005" read as 0). sysfs attributes are a short line.
	 */
	if (memchr(buf, '\0', (size_t)n) != NULL || (size_t)n == len - 1)
		return RD_GARBAGE;
	return RD_OK;
}

enum rd_status
sysread_int(const char *path, long long min, long long max, long long *out,
    double *took_ms)
{
	char buf[64], *end;
	enum rd_status st;
	long long v;

	if ((st = read_small(path, buf, sizeof(buf), took_ms)) != RD_OK)
		return st;
	if (took_ms != NULL && *took_ms > sysread_bound())
		return RD_SLOW;
	/* One integer, optionally followed by one newline: nothing else. */
	if (buf[0] == '\0' || buf[0] == ' ' || buf[0] == '\n')
		return RD_GARBAGE;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf)
		return RD_GARBAGE;
	if (*end == '\n')
		end++;
	if (*end != '\0' || v < min || v > max)
		return RD_GARBAGE;
	*out = v;
	return RD_OK;
}

enum rd_status
sysread_line(const char *path, char *buf, size_t len)
{
	enum rd_status st;

	if ((st = read_small(path, buf, len, NULL)) != RD_OK)
		return st;
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] == '\0' ? RD_GARBAGE : RD_OK;
}

int
pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
