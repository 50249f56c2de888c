/*
 * powerd-sample: the time of one powerd sample (every sensor, diskstats,
 * stat, the model, the state, the energy) on a sysfs and proc root.
 * Usage: powerd-sample SYSFS PROC BOARD.INI RUNS
 * Prints "sensors N disks N mean_us X max_us Y".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "powerd/powerd.h"

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	double t, sum = 0, max = 0, now = 1;
	char err[512];
	int runs;

	if (argc != 5 || (runs = atoi(argv[4])) < 1) {
		fprintf(stderr, "usage: powerd-sample SYSFS PROC BOARD.INI RUNS\n");
		return 2;
	}
	log_init("powerd-sample", 1, 0);
	log_set_level(LOG_LVL_ERR);
	sensor_set_root(argv[1]);
	activity_set_proc_root(argv[2]);
	energy_reset(&power.energy);
	if (power_load_board(argv[3], err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	power_sample(now, now);	/* the scan: not a steady-state sample */
	for (int i = 0; i < runs; i++) {
		now += 1;
		t = mono();
		power_sample(now, now);
		t = (mono() - t) * 1e6;
		sum += t;
		max = t > max ? t : max;
	}
	printf("sensors %d disks %d mean_us %.1f max_us %.1f\n", power.sensors.n,
	    power.act.ndisks, sum / runs, max);
	return 0;
}
