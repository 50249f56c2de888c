/*
 * SMART attributes of ATA disks through libatasmart: temperature and
 * power cycles. drive.c calls it only for a disk that is awake by its own
 * report (CHECK POWER MODE), so reading SMART never spins a disk up; the
 * disk is asked once more here, by libatasmart, just before the read.
 * It is read through the descriptor the worker proved the disk on.
 */
#include <stddef.h>
#include <stdint.h>

#include <atasmart.h>
#include <limits.h>

#include "powerd.h"

static int
linux_smart(int fd, double *temp_c, long long *cycles)
{
	char dev[PATH_MAX];
	SkBool awake = 0, avail = 0;
	uint64_t mk = 0, n = 0;
	SkDisk *d;
	int rc = -1;

	/*
	 * libatasmart opens a path itself: the proven descriptor's own /proc
	 * link, which is the disk proven, not whatever is under its name now.
	 */
	if (pathf(dev, sizeof(dev), "/proc/self/fd/%d", fd) == -1 || sk_disk_open(dev, &d) < 0)
		return -1;
	if (sk_disk_check_sleep_mode(d, &awake) == 0 && awake &&
	    sk_disk_smart_is_available(d, &avail) == 0 && avail &&
	    sk_disk_smart_read_data(d) == 0) {
		*temp_c = sk_disk_smart_get_temperature(d, &mk) == 0 && mk > 0 ?
		    (double)mk / 1000.0 - 273.15 : -1000;
		*cycles = sk_disk_smart_get_power_cycle(d, &n) == 0 && n <= LLONG_MAX ?
		    (long long)n : -1;
		rc = 0;
	}
	sk_disk_free(d);
	return rc;
}

int (*const smart_linux)(int, double *, long long *) = linux_smart;
