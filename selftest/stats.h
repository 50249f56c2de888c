/*
 * stats.c: latency histograms and their percentiles, the knee of a load
 * curve, energy integrated over a phase. Pure arithmetic, unit-tested.
 */
#ifndef SELFTEST_STATS_H
#define SELFTEST_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Log-linear buckets over nanoseconds: exact below 64 ns, then 32
 * buckets per power of two (under 3.2 % wide), up to about 35 minutes.
 * A fixed size, so each thread keeps its own and they are summed.
 */
#define LAT_SUB		32
#define LAT_BUCKETS	(LAT_SUB * 43)

struct lat_hist {
	uint64_t	count;
	uint64_t	max_ns;
	double		sum_ns;		/* for the mean */
	uint64_t	bucket[LAT_BUCKETS];
};

void	lat_add(struct lat_hist *, uint64_t ns);
void	lat_merge(struct lat_hist *into, const struct lat_hist *);
/* The mean in microseconds; 0 for an empty histogram. */
double	lat_mean_us(const struct lat_hist *);
/* The p-quantile (0 < p <= 1) in microseconds; 0 for an empty histogram. */
double	lat_percentile_us(const struct lat_hist *, double p);

/*
 * The knee of a throughput curve (x ascending, n >= 3): the index of
 * the point farthest above the chord from the first point to the last,
 * both axes scaled to 0..1 (Kneedle). -1 when no point lies above the
 * chord (a straight or concave-up curve has no knee).
 */
int	knee_index(const double *x, const double *y, size_t n);

/*
 * Joules drawn from t0 to t1 by a power series (t ascending, seconds;
 * w in watts): trapezoids between samples, the series held flat before
 * its first and after its last sample. -1 without samples or t1 < t0.
 */
double	energy_joules(const double *t, const double *w, size_t n, double t0, double t1);

#endif
