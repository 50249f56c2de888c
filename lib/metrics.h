/*
 * metrics.c: a daemon's metrics as a node_exporter textfile-collector
 * file (Prometheus text exposition 0.0.4), written atomically.
 *
 *	struct metrics *m = metrics_new();
 *	metrics_family(m, "nas_power_watts", "gauge", "Power at the wall.");
 *	metrics_add(m, NULL, 12.5);
 *	metrics_family(m, "nas_energy_joules_total", "counter", "...");
 *	metrics_add(m, (const char *[]){ "state", "idle", NULL }, 1234);
 *	metrics_write(m, "/run/nas/metrics", "powerd");
 *	metrics_free(m);
 */
#ifndef NAS_METRICS_H
#define NAS_METRICS_H

#include <stddef.h>

struct metrics;

struct metrics *metrics_new(void);
void	metrics_free(struct metrics *);
/*
 * Starts a family: its samples follow until the next family. A name or
 * type that is not valid makes the whole file fail at metrics_write (a
 * programming error, logged), never a file promtool refuses.
 */
void	metrics_family(struct metrics *, const char *name, const char *type,
	    const char *help);
/*
 * One sample of the current family; labels are name, value pairs ending
 * with NULL (or NULL for none). Values are escaped (\\, \", \n); a NAN
 * value is written as NaN.
 */
void	metrics_add(struct metrics *, const char *const *labels, double value);
/*
 * Writes <dir>/<daemon>.prom through a temporary file in dir
 * (.<daemon>.prom.<pid>.tmp: two copies of a daemon, as in tests, do not
 * write into each other's) and rename(2), so a collector never reads
 * half a file. dir is made (0755)
 * when missing. 0, or -1 with errno (EINVAL for a bad metric or label).
 */
int	metrics_write(struct metrics *, const char *dir, const char *daemon);
/*
 * metrics_write, then metrics_free; a failure is logged once, until a
 * write works again (*failed keeps track: one int per file).
 */
int	metrics_publish(struct metrics *, const char *dir, const char *daemon, int *failed);
/* The text so far (for tests); NULL after a bad name. */
const char *metrics_text(struct metrics *);

#endif
