/*
 * powerd's metrics for node_exporter's textfile collector
 * (docs/metrics.md): watts, energy and seconds per state, the disks'
 * power states, temperatures and fans. Written after every sample.
 */
#include <math.h>
#include <stdio.h>

#include "metrics.h"
#include "powerd.h"

static void
per_state(struct metrics *m)
{
	const struct energy *e = &power.energy;

	metrics_family(m, "nas_energy_joules_total", "counter",
	    "Energy at the wall since powerd started, by the board's state.");
	for (int s = 0; s < BS_NSTATES; s++)
		metrics_add(m, (const char *const[]){ "state", board_state_name(s), NULL },
		    e->by_j[s]);
	metrics_family(m, "nas_power_state_seconds_total", "counter",
	    "Seconds spent in each board state since powerd started.");
	for (int s = 0; s < BS_NSTATES; s++)
		metrics_add(m, (const char *const[]){ "state", board_state_name(s), NULL },
		    e->by_s[s]);
	metrics_family(m, "nas_power_state", "gauge", "1 for the board's state now.");
	for (int s = 0; s < BS_NSTATES; s++)
		metrics_add(m, (const char *const[]){ "state", board_state_name(s), NULL },
		    power.state == (enum board_state)s);
}

static void
disks(struct metrics *m)
{
	char bay[16];

	metrics_family(m, "nas_disk_power_state", "gauge",
	    "1 for each bay disk's power state now (active, idle, standby).");
	for (int i = 0; i < power.act.ndisks; i++) {
		const struct disk_io *d = &power.act.disk[i];

		snprintf(bay, sizeof(bay), "%d", d->bay);
		for (int p = 0; p < DP_NSTATES; p++)
			metrics_add(m, (const char *const[]){ "bay", bay, "disk", d->name,
			    "state", disk_power_name(p), NULL }, d->power == (enum disk_power)p);
	}
	metrics_family(m, "nas_disk_spinups_total", "counter",
	    "Estimated spin-ups (I/O to a disk in standby) since powerd started.");
	for (int i = 0; i < power.act.ndisks; i++) {
		snprintf(bay, sizeof(bay), "%d", power.act.disk[i].bay);
		metrics_add(m, (const char *const[]){ "bay", bay, NULL },
		    power.act.disk[i].spinups);
	}
}

/* One family of every sensor of a kind that has a reading. */
static void
sensors(struct metrics *m, enum sensor_kind kind, const char *name, const char *help)
{
	metrics_family(m, name, "gauge", help);
	for (int i = 0; i < power.sensors.n; i++) {
		const struct sensor *s = &power.sensors.s[i];

		if (s->kind == kind && s->status == RD_OK && !isnan(s->value))
			metrics_add(m, (const char *const[]){ "sensor", s->name, "label",
			    s->label, NULL }, s->value);
	}
}

int
prom_write(const char *dir)
{
	struct metrics *m;
	int rc;

	if (dir[0] == '\0')
		return 0;
	if ((m = metrics_new()) == NULL)
		return -1;
	metrics_family(m, "nas_power_watts", "gauge",
	    "Power at the wall, from the board's sensor or its power model; "
	    "absent when there is no reading.");
	if (!isnan(power.watts))
		metrics_add(m, (const char *const[]){ "source", power.source, NULL },
		    power.watts);
	per_state(m);
	disks(m);
	sensors(m, SK_TEMP, "nas_temperature_celsius", "Temperatures of hwmon sensors.");
	sensors(m, SK_FAN, "nas_fan_rpm", "Fan speeds of hwmon sensors.");
	rc = metrics_write(m, dir, "powerd");
	metrics_free(m);
	return rc;
}
