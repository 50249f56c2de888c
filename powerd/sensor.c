/*
 * Sensors: every hwmon chip's power, energy, voltage x current,
 * temperature, fan and PWM files, and every powercap (RAPL) zone, found
 * under a sysfs root that tests point at a fixture tree. A sensor that
 * cannot be read says why (sysread.c) and has no value: a vanished power
 * sensor is never 0 W.
 */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerd.h"

#define SLOW_BACKOFF	60.0	/* seconds a slow sensor is left alone */
#define MAX_WATTS	1e5	/* power*_input's bound too: 100 kW */

static char root[PATH_MAX] = "/sys";
static struct sensor_set scan_tmp;	/* 100 KiB: not on the stack */

static const struct {
	const char	*name, *unit;
} kinds[SK_NKINDS] = {
	[SK_POWER] = { "power", "W" },
	[SK_ENERGY] = { "energy", "J" },
	[SK_VI] = { "power", "W" },
	[SK_RAPL] = { "energy", "J" },
	[SK_TEMP] = { "temperature", "C" },
	[SK_FAN] = { "fan", "rpm" },
	[SK_PWM] = { "pwm", "pwm" },
};

const char *
sensor_kind_name(enum sensor_kind k)
{
	return (unsigned)k < SK_NKINDS ? kinds[k].name : "?";
}

const char *
sensor_kind_unit(enum sensor_kind k)
{
	return (unsigned)k < SK_NKINDS ? kinds[k].unit : "?";
}

void
sensor_set_root(const char *r)
{
	pathf(root, sizeof(root), "%s", r);
	/* "/" and "/sys/" would make "//class": keep one form. */
	while (strlen(root) > 1 && root[strlen(root) - 1] == '/')
		root[strlen(root) - 1] = '\0';
}

const char *
sensor_root(void)
{
	return root;
}

/* A chip or zone name as sysfs gives it; anything else is not used. */
static int
name_ok(const char *s)
{
	if (*s == '\0' || strlen(s) > 40)
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.' ||
		    *s == ':'))
			return 0;
	return 1;
}

/* A label ("CPU Temp", "12V"): printable ASCII, no more. */
static int
label_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s < 0x20 || *s > 0x7e)
			return 0;
	return 1;
}

static void
full_path(const char *rel, char *out, size_t len)
{
	pathf(out, len, "%s/%s", root, rel);
}

/* The "/sys/..." path a resolved path under the root stands for. */
static void
resolve_device(const char *rel, char *out, size_t len)
{
	char p[PATH_MAX], real[PATH_MAX];
	size_t n = strlen(root);

	out[0] = '\0';
	full_path(rel, p, sizeof(p));
	if (realpath(p, real) == NULL)
		return;
	if (strcmp(root, "/") == 0)
		pathf(out, len, "%s", real);
	else if (strncmp(real, root, n) == 0 && real[n] == '/')
		pathf(out, len, "/sys%s", real + n);
}

static struct sensor *
add(struct sensor_set *set, enum sensor_kind k, const char *name, const char *rel)
{
	struct sensor *s;

	if (set->n == SENSOR_MAX)
		return NULL;
	s = &set->s[set->n++];
	memset(s, 0, sizeof(*s));
	s->kind = k;
	s->value = NAN;
	pathf(s->name, sizeof(s->name), "%s", name);
	pathf(s->path, sizeof(s->path), "%s", rel);
	return s;
}

static int
numeric_sort(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

/* Reads <dir>/<prefix>N_label into label, when the chip has one. */
static void
read_label(const char *dir, const char *file, char *label, size_t len)
{
	char rel[PATH_MAX], p[PATH_MAX], base[64];
	char *u;

	pathf(base, sizeof(base), "%s", file);
	if ((u = strrchr(base, '_')) != NULL)
		*u = '\0';
	pathf(rel, sizeof(rel), "%s/%s_label", dir, base);
	full_path(rel, p, sizeof(p));
	if (sysread_line(p, label, len) != RD_OK || !label_ok(label))
		label[0] = '\0';
}

static int
chip_taken(const struct sensor_set *set, const char *chip)
{
	char pre[64];

	pathf(pre, sizeof(pre), "hwmon:%s/", chip);
	for (int i = 0; i < set->n; i++)
		if (strncmp(set->s[i].name, pre, strlen(pre)) == 0)
			return 1;
	return 0;
}

static void
scan_file(struct sensor_set *set, const char *dir, const char *chip, const char *f,
    const char *dev)
{
	char name[SENSOR_NAME], rel[PATH_MAX], other[64], p[PATH_MAX];
	enum sensor_kind k;
	struct sensor *s;
	unsigned n;
	int end = 0;

	if (sscanf(f, "power%u_input%n", &n, &end) == 1 && f[end] == '\0')
		k = SK_POWER;
	else if (sscanf(f, "energy%u_input%n", &n, &end) == 1 && f[end] == '\0')
		k = SK_ENERGY;
	else if (sscanf(f, "temp%u_input%n", &n, &end) == 1 && f[end] == '\0')
		k = SK_TEMP;
	else if (sscanf(f, "fan%u_input%n", &n, &end) == 1 && f[end] == '\0')
		k = SK_FAN;
	else if (sscanf(f, "pwm%u%n", &n, &end) == 1 && f[end] == '\0')
		k = SK_PWM;
	else if (sscanf(f, "in%u_input%n", &n, &end) == 1 && f[end] == '\0')
		k = SK_VI;
	else
		return;
	if (k == SK_VI) {
		/* A voltage alone is no power: only with its current. */
		pathf(other, sizeof(other), "curr%u_input", n);
		pathf(rel, sizeof(rel), "%s/%s", dir, other);
		full_path(rel, p, sizeof(p));
		if (access(p, F_OK) == -1)
			return;
		pathf(name, sizeof(name), "hwmon:%s/%s*%s", chip, f, other);
	} else
		pathf(name, sizeof(name), "hwmon:%s/%s", chip, f);
	pathf(rel, sizeof(rel), "%s/%s", dir, f);
	if ((s = add(set, k, name, rel)) == NULL)
		return;
	if (k == SK_VI)
		pathf(s->path2, sizeof(s->path2), "%s/%s", dir, other);
	pathf(s->device, sizeof(s->device), "%s", dev);
	read_label(dir, k == SK_VI ? other : f, s->label, sizeof(s->label));
}

static void
scan_hwmon(struct sensor_set *set)
{
	char p[PATH_MAX], dir[PATH_MAX], chip[64], name[64], dev[256];
	struct dirent **chips, **files;
	int nc, nf;

	full_path("class/hwmon", p, sizeof(p));
	if ((nc = scandir(p, &chips, NULL, numeric_sort)) < 0)
		return;
	for (int i = 0; i < nc; i++) {
		if (strncmp(chips[i]->d_name, "hwmon", 5) != 0)
			goto next;
		pathf(dir, sizeof(dir), "class/hwmon/%s", chips[i]->d_name);
		pathf(name, sizeof(name), "%s/name", dir);
		full_path(name, p, sizeof(p));
		if (sysread_line(p, chip, sizeof(chip)) != RD_OK || !name_ok(chip))
			goto next;
		/* Two chips of one driver (drivetemp per disk): say which. */
		if (chip_taken(set, chip)) {
			size_t l = strlen(chip);
			pathf(chip + l, sizeof(chip) - l, "@%s", chips[i]->d_name);
		}
		pathf(name, sizeof(name), "%s/device", dir);
		resolve_device(name, dev, sizeof(dev));
		full_path(dir, p, sizeof(p));
		if ((nf = scandir(p, &files, NULL, numeric_sort)) >= 0) {
			for (int j = 0; j < nf; j++) {
				scan_file(set, dir, chip, files[j]->d_name, dev);
				free(files[j]);
			}
			free(files);
		}
next:
		free(chips[i]);
	}
	free(chips);
}

static void
scan_powercap(struct sensor_set *set)
{
	char p[PATH_MAX], rel[PATH_MAX], name[SENSOR_NAME];
	struct dirent **zones;
	struct sensor *s;
	long long max;
	int nz;

	full_path("class/powercap", p, sizeof(p));
	if ((nz = scandir(p, &zones, NULL, numeric_sort)) < 0)
		return;
	for (int i = 0; i < nz; i++) {
		const char *z = zones[i]->d_name;

		/* Zones, not the control types ("intel-rapl" alone). */
		if (z[0] == '.' || strchr(z, ':') == NULL || !name_ok(z))
			goto next;
		pathf(rel, sizeof(rel), "class/powercap/%s/energy_uj", z);
		full_path(rel, p, sizeof(p));
		if (access(p, F_OK) == -1)
			goto next;
		pathf(name, sizeof(name), "powercap:%s", z);
		if ((s = add(set, SK_RAPL, name, rel)) == NULL)
			goto next;
		pathf(rel, sizeof(rel), "class/powercap/%s/name", z);
		full_path(rel, p, sizeof(p));
		if (sysread_line(p, s->label, sizeof(s->label)) != RD_OK ||
		    !label_ok(s->label))
			s->label[0] = '\0';
		pathf(rel, sizeof(rel), "class/powercap/%s/max_energy_range_uj", z);
		full_path(rel, p, sizeof(p));
		if (sysread_int(p, 1, LLONG_MAX, &max, NULL) == RD_OK)
			s->max_range = max;
next:
		free(zones[i]);
	}
	free(zones);
}

struct sensor *
sensor_find(struct sensor_set *set, const char *name)
{
	for (int i = 0; i < set->n; i++)
		if (strcmp(set->s[i].name, name) == 0)
			return &set->s[i];
	return NULL;
}

void
sensor_take_reading(struct sensor *to, const struct sensor *from)
{
	to->status = from->status;
	to->value = from->value;
	to->watts = from->watts;
	to->have_watts = from->have_watts;
	to->count = from->count;
	to->count_at = from->count_at;
	to->joules = from->joules;
	to->slow_until = from->slow_until;
}

void
sensor_scan(struct sensor_set *set)
{
	struct sensor *old;

	scan_tmp.n = 0;
	scan_hwmon(&scan_tmp);
	scan_powercap(&scan_tmp);
	/* A counter or a back-off outlives a rescan; the reading does not. */
	for (int i = 0; i < scan_tmp.n; i++) {
		struct sensor *s = &scan_tmp.s[i];

		if ((old = sensor_find(set, s->name)) == NULL ||
		    strcmp(old->path, s->path) != 0)
			continue;
		sensor_take_reading(s, old);
		s->alarm = old->alarm;
		if (s->max_range == 0)
			s->max_range = old->max_range;
	}
	set->n = scan_tmp.n;
	memcpy(set->s, scan_tmp.s, (size_t)scan_tmp.n * sizeof(set->s[0]));
}

/* Joules between two counts; -1 when the counter went back (reset). */
static double
counter_delta(const struct sensor *s, long long cur)
{
	if (cur >= s->count)
		return (double)(cur - s->count) / 1e6;
	/* RAPL wraps to 0 after max_energy_range_uj. */
	if (s->kind == SK_RAPL && s->max_range > 0)
		return (double)(s->max_range - s->count + cur) / 1e6;
	return -1;
}

static enum rd_status
read_counter(struct sensor *s, const char *p, double now, double *took)
{
	long long max = s->kind == SK_RAPL && s->max_range > 0 ? s->max_range : LLONG_MAX;
	enum rd_status st;
	long long cur;
	double d;

	if ((st = sysread_int(p, 0, max, &cur, took)) != RD_OK) {
		/* The next good count starts over: no energy across a gap. */
		s->count_at = 0;
		return st;
	}
	s->value = (double)cur / 1e6;
	if (s->count_at > 0 && now > s->count_at) {
		/*
		 * A jump past MAX_WATTS is a glitch or a reset taken for a
		 * wrap, not energy: once counted, a total never comes down.
		 */
		if ((d = counter_delta(s, cur)) < 0 || d / (now - s->count_at) > MAX_WATTS) {
			s->count = cur;
			s->count_at = now;
			return RD_GARBAGE;
		}
		s->joules += d;
		s->watts = d / (now - s->count_at);
		s->have_watts = 1;
	}
	s->count = cur;
	s->count_at = now;
	return RD_OK;
}

static enum rd_status
read_vi(const char *top, struct sensor *s, const char *p, double *took)
{
	char p2[PATH_MAX];
	long long mv, ma;
	enum rd_status st;
	double t2 = 0;

	pathf(p2, sizeof(p2), "%s/%s", top, s->path2);
	if ((st = sysread_int(p, -1000000, 1000000, &mv, took)) != RD_OK ||
	    (st = sysread_int(p2, -1000000, 1000000, &ma, &t2)) != RD_OK) {
		*took += t2;
		return st;
	}
	*took += t2;
	s->value = s->watts = (double)mv * (double)ma / 1e6;
	s->have_watts = 1;
	return RD_OK;
}

static enum rd_status
read_plain(struct sensor *s, const char *p, double *took)
{
	static const struct { long long min, max; double scale; } r[SK_NKINDS] = {
		[SK_POWER] = { 0, 100000000000LL, 1e6 },	/* uW, up to 100 kW */
		[SK_TEMP] = { -60000, 250000, 1e3 },	/* m degC */
		[SK_FAN] = { 0, 200000, 1 },
		[SK_PWM] = { 0, 255, 1 },
	};
	enum rd_status st;
	long long v;

	if ((st = sysread_int(p, r[s->kind].min, r[s->kind].max, &v, took)) != RD_OK)
		return st;
	s->value = (double)v / r[s->kind].scale;
	if (s->kind == SK_POWER) {
		s->watts = s->value;
		s->have_watts = 1;
	}
	return RD_OK;
}

void
sensor_read(struct sensor *s, double now)
{
	sensor_read_in(root, s, now);
}

/*
 * The sampler's worker reads here: top is its own copy of the root, and
 * s its own copy of the sensor (sampler.c); nothing the loop changes.
 */
void
sensor_read_in(const char *top, struct sensor *s, double now)
{
	char p[PATH_MAX];
	double took = 0;

	if (now < s->slow_until) {
		s->status = RD_SLOW;
		s->value = NAN;
		s->have_watts = 0;
		return;
	}
	pathf(p, sizeof(p), "%s/%s", top, s->path);
	s->value = NAN;
	s->have_watts = 0;
	switch (s->kind) {
	case SK_ENERGY:
	case SK_RAPL:
		s->status = read_counter(s, p, now, &took);
		break;
	case SK_VI:
		s->status = read_vi(top, s, p, &took);
		break;
	default:
		s->status = read_plain(s, p, &took);
		break;
	}
	if (s->status == RD_OK && took > sysread_bound())
		s->status = RD_SLOW;
	if (s->status == RD_SLOW) {
		s->slow_until = now + SLOW_BACKOFF;
		s->count_at = 0;
	}
	if (s->status != RD_OK) {
		s->value = NAN;
		s->have_watts = 0;
	}
}

struct json_object *
sensor_describe(const struct sensor *s)
{
	struct json_object *o = json_object_new_object();
	char p[300];

	json_object_object_add(o, "name", json_object_new_string(s->name));
	json_object_object_add(o, "kind", json_object_new_string(sensor_kind_name(s->kind)));
	json_object_object_add(o, "label", json_object_new_string(s->label));
	json_object_object_add(o, "value", isnan(s->value) ? NULL :
	    json_object_new_double(s->value));
	json_object_object_add(o, "unit", json_object_new_string(sensor_kind_unit(s->kind)));
	if (s->kind == SK_ENERGY || s->kind == SK_RAPL) {
		json_object_object_add(o, "watts", s->have_watts ?
		    json_object_new_double(s->watts) : NULL);
		json_object_object_add(o, "joules", json_object_new_double(s->joules));
	}
	pathf(p, sizeof(p), "/sys/%s", s->path);
	json_object_object_add(o, "path", json_object_new_string(p));
	json_object_object_add(o, "status", json_object_new_string(rd_status_name(s->status)));
	return o;
}
