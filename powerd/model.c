/*
 * The board's [power] section: which sensor gives the board's draw, or
 * the power model that estimates it where there is none. The model's
 * figures are measured at the wall on the real board (docs/boards.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iniparser.h>

#include "powerd.h"

const char *
disk_power_name(enum disk_power p)
{
	static const char *const names[] = { "active", "idle", "standby" };

	return (unsigned)p < DP_NSTATES ? names[p] : "?";
}

/* One number of [power]: finite, within [min, max]; absent gives def. */
static int
get_num(dictionary *d, const char *key, double min, double max, double def,
    int required, double *out, const char *path, char *err, size_t errlen)
{
	char name[64], *end;
	const char *v;
	double x;

	pathf(name, sizeof(name), "power:%s", key);
	v = iniparser_getstring(d, name, NULL);
	if (v == NULL || *v == '\0') {
		if (required) {
			pathf(err, errlen, "%s: [power] %s: missing", path, key);
			return -1;
		}
		*out = def;
		return 0;
	}
	errno = 0;
	x = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !isfinite(x) || x < min || x > max) {
		pathf(err, errlen, "%s: [power] %s: not a number in %g..%g", path,
		    key, min, max);
		return -1;
	}
	*out = x;
	return 0;
}

static int
get_name(dictionary *d, const char *key, const char *def, char *out, size_t len,
    const char *path, char *err, size_t errlen)
{
	char name[64];
	const char *v;

	pathf(name, sizeof(name), "power:%s", key);
	v = iniparser_getstring(d, name, def);
	if (strlen(v) >= len) {
		pathf(err, errlen, "%s: [power] %s: longer than %zu", path, key, len - 1);
		return -1;
	}
	pathf(out, len, "%s", v);
	if (*v != '\0' && strcmp(v, "model") != 0 && strncmp(v, "hwmon:", 6) != 0 &&
	    strncmp(v, "powercap:", 9) != 0) {
		pathf(err, errlen, "%s: [power] %s: model, hwmon:CHIP/FILE or "
		    "powercap:ZONE", path, key);
		return -1;
	}
	return 0;
}

int
model_load(const char *path, struct power_model *m, char *err, size_t errlen)
{
	struct power_model n;
	dictionary *d;
	int model, rc = -1;

	memset(&n, 0, sizeof(n));
	if (access(path, R_OK) == -1 || (d = iniparser_load(path)) == NULL) {
		pathf(err, errlen, "%s: cannot read the board description", path);
		return -1;
	}
	if (get_name(d, "sensor", "model", n.sensor, sizeof(n.sensor), path, err, errlen) ||
	    get_name(d, "temp_sensor", "", n.temp_sensor, sizeof(n.temp_sensor), path,
	    err, errlen))
		goto out;
	if (n.sensor[0] == '\0')
		pathf(n.sensor, sizeof(n.sensor), "model");
	/* A board with a sensor needs none of the model's figures. */
	model = strcmp(n.sensor, "model") == 0;
	if (get_num(d, "idle_w", 0.1, 10000, 0, model, &n.idle_w, path, err, errlen) ||
	    get_num(d, "cpu_w_per_load", 0, 1000, 0, 0, &n.cpu_w_per_load, path, err, errlen) ||
	    get_num(d, "per_disk_active_w", 0, 100, 0, 0, &n.disk_active_w, path, err, errlen) ||
	    get_num(d, "per_disk_idle_w", 0, 100, 0, 0, &n.disk_idle_w, path, err, errlen) ||
	    get_num(d, "per_disk_standby_w", 0, 100, 0, 0, &n.disk_standby_w, path, err, errlen) ||
	    get_num(d, "per_port_up_w", 0, 100, 0, 0, &n.port_up_w, path, err, errlen) ||
	    get_num(d, "psu_efficiency", 0.1, 1, 1, model, &n.psu_efficiency, path, err,
	    errlen))
		goto out;
	*m = n;
	rc = 0;
out:
	iniparser_freedict(d);
	return rc;
}

double
model_watts(const struct power_model *m, const struct model_input *in)
{
	double w = m->idle_w + m->cpu_w_per_load * in->cpu_load +
	    m->disk_active_w * in->disks[DP_ACTIVE] +
	    m->disk_idle_w * in->disks[DP_IDLE] +
	    m->disk_standby_w * in->disks[DP_STANDBY] +
	    m->port_up_w * in->ports_up;

	return w / m->psu_efficiency;
}
