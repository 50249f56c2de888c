/*
 * Temperatures against the limits of powerd.ini ([temp]), and the fans
 * a board lets software drive (hwmon pwmN, pwmN_enable).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "powerd.h"

#define HYSTERESIS_C	3.0	/* an alarm ends this far below its limit */

static double disk_max_c = 55, board_max_c = 70;

void
thermal_set_limits(double disk, double board)
{
	disk_max_c = disk;
	board_max_c = board;
}

static void
alarm_event(const struct sensor *s, double limit, const char *state)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "sensor", json_object_new_string(s->name));
	json_object_object_add(o, "label", json_object_new_string(s->label));
	json_object_object_add(o, "celsius", json_object_new_double(s->value));
	json_object_object_add(o, "limit", json_object_new_double(limit));
	json_object_object_add(o, "state", json_object_new_string(state));
	nas_event("temp.alarm", o);
}

void
thermal_check(struct sensor_set *set)
{
	for (int i = 0; i < set->n; i++) {
		struct sensor *s = &set->s[i];
		/* drivetemp's chips are the disks'; every other one the board's. */
		double limit = strncmp(s->name, "hwmon:drivetemp", 15) == 0 ?
		    disk_max_c : board_max_c;

		if (s->kind != SK_TEMP || s->status != RD_OK)
			continue;
		if (!s->alarm && s->value >= limit) {
			s->alarm = 1;
			alarm_event(s, limit, "high");
		} else if (s->alarm && s->value <= limit - HYSTERESIS_C) {
			s->alarm = 0;
			alarm_event(s, limit, "normal");
		}
	}
}

/* Writes one number to an existing sysfs file under the root. */
static int
write_int(const char *rel, int v)
{
	char p[PATH_MAX], buf[16];
	int fd, n, rc;

	if (pathf(p, sizeof(p), "%s/%s", sensor_root(), rel) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* No O_CREAT: only a file the driver made. */
	if ((fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d\n", v);
	rc = write(fd, buf, (size_t)n) == n ? 0 : -1;
	if (close(fd) == -1)
		rc = -1;
	return rc;
}

static void
fan_set(struct rpc_call *c, struct json_object *params)
{
	struct sensor *s = sensor_find(&power.sensors, rpc_param_str(params, "fan", ""));
	const char *mode = rpc_param_str(params, "mode", "auto");
	int pwm = (int)rpc_param_int(params, "pwm", -1), manual = strcmp(mode, "manual") == 0;
	char en[300];

	if (s == NULL || s->kind != SK_PWM) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no such PWM output (see sensor.list)");
		return;
	}
	if (manual != (pwm >= 0)) {
		rpc_error(c, NAS_ERR_INVALID, "pwm is given with mode manual, and only then");
		return;
	}
	if (pathf(en, sizeof(en), "%s_enable", s->path) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "path too long");
		return;
	}
	/* hwmon: pwmN_enable 1 = manual, 2 = the chip's automatic control. */
	if (write_int(en, manual ? 1 : 2) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s: %s", s->name, strerror(errno));
		return;
	}
	/* A duty cycle not taken: back to the chip, not a fan stuck at whatever it had. */
	if (manual && write_int(s->path, pwm) == -1) {
		int e = errno;

		(void)write_int(en, 2);
		rpc_error(c, NAS_ERR_FAILED, "%s: %s", s->name, strerror(e));
		return;
	}
	sensor_read(s, power.sampled_mono);
	rpc_result(c, sensor_describe(s));
}

static const char *const fan_modes[] = { "auto", "manual", NULL };

static const struct rpc_param fan_params[] = {
	{ "fan", RPC_STRING, RPC_REQUIRED, 1, SENSOR_NAME - 1, NULL,
	  "a pwm sensor's name (hwmon:<chip>/pwmN)" },
	{ "mode", RPC_STRING, RPC_REQUIRED, 0, 0, fan_modes, "auto or manual" },
	{ "pwm", RPC_INT, 0, 0, 255, NULL, "duty cycle with mode manual" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method thermal_methods[] = {
	{ "fan.set", fan_set, fan_params, RPC_MUTATES,
	  "a PWM fan: the chip's automatic control, or a fixed duty cycle" },
	{ NULL, NULL, NULL, 0, NULL }
};
