/*
 * Bay LEDs through the kernel's LED class (leds/leds-class.rst): a
 * fault is the LED on, a rebuild the LED blinking (the timer trigger),
 * nothing to say the LED off. Self-contained, so a unit test drives it
 * against a fixture tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "system-linux.h"

static int
led_write(const char *dir, const char *attr, const char *val)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, saved;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = write(fd, val, strlen(val));
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The LED's full brightness (max_brightness), "1" if it says none. */
static void
led_max(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/max_brightness", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) != -1) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '\0' || strspn(buf, "0123456789") != strlen(buf) || strcmp(buf, "0") == 0)
		snprintf(buf, len, "1");
}

int
lnx_led_set(const char *dir, enum sys_led mode)
{
	char max[16];

	switch (mode) {
	case SYS_LED_OFF:
		if (led_write(dir, "trigger", "none") == -1 && errno != ENOENT)
			return -1;
		return led_write(dir, "brightness", "0");
	case SYS_LED_FAULT:
		led_max(dir, max, sizeof(max));
		if (led_write(dir, "trigger", "none") == -1 && errno != ENOENT)
			return -1;
		return led_write(dir, "brightness", max);
	case SYS_LED_REBUILD:
		/* Without the timer trigger the LED is at least on. */
		if (led_write(dir, "trigger", "timer") == 0)
			return 0;
		led_max(dir, max, sizeof(max));
		return led_write(dir, "brightness", max);
	}
	return errno = EINVAL, -1;
}
