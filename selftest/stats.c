/* Latency percentiles, the knee of a load curve, energy per phase. */
#include <math.h>
#include <string.h>

#include "stats.h"

static unsigned
bucket_of(uint64_t ns)
{
	unsigned msb, shift, idx;

	if (ns < 2 * LAT_SUB)
		return (unsigned)ns;
	msb = 63 - (unsigned)__builtin_clzll(ns);
	shift = msb - 5;			/* ns >> shift is 32..63 */
	idx = shift * LAT_SUB + (unsigned)(ns >> shift);
	return idx < LAT_BUCKETS ? idx : LAT_BUCKETS - 1;
}

/* The middle of bucket idx, in nanoseconds. */
static double
bucket_mid(unsigned idx)
{
	unsigned shift, top;

	if (idx < 2 * LAT_SUB)
		return idx;
	shift = idx / LAT_SUB - 1;
	top = idx - shift * LAT_SUB;		/* 32..63 */
	return ((double)top + 0.5) * (double)(1ULL << shift);
}

void
lat_add(struct lat_hist *h, uint64_t ns)
{
	h->bucket[bucket_of(ns)]++;
	h->count++;
	h->sum_ns += (double)ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void
lat_merge(struct lat_hist *into, const struct lat_hist *h)
{
	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		into->bucket[i] += h->bucket[i];
	into->count += h->count;
	into->sum_ns += h->sum_ns;
	if (h->max_ns > into->max_ns)
		into->max_ns = h->max_ns;
}

double
lat_mean_us(const struct lat_hist *h)
{
	return h->count ? h->sum_ns / (double)h->count / 1000 : 0;
}

double
lat_percentile_us(const struct lat_hist *h, double p)
{
	uint64_t rank, seen = 0;
	double v;

	if (h->count == 0)
		return 0;
	if (p > 1)
		p = 1;
	rank = (uint64_t)ceil(p * (double)h->count);
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			v = bucket_mid(i);
			/* The middle of the top bucket may lie past the largest sample. */
			if (v > (double)h->max_ns)
				v = (double)h->max_ns;
			return v / 1000.0;
		}
	}
	return (double)h->max_ns / 1000.0;
}

int
knee_index(const double *x, const double *y, size_t n)
{
	double xr, yr, best = 1e-9, d;
	int knee = -1;

	if (n < 3)
		return -1;
	xr = x[n - 1] - x[0];
	yr = y[n - 1] - y[0];
	if (xr <= 0 || yr <= 0)
		return -1;
	for (size_t i = 1; i + 1 < n; i++) {
		/* Height above the chord of the normalised curve. */
		d = (y[i] - y[0]) / yr - (x[i] - x[0]) / xr;
		if (d > best) {
			best = d;
			knee = (int)i;
		}
	}
	return knee;
}

/* The series' value at time x (held flat outside it). */
static double
at(const double *t, const double *w, size_t n, double x)
{
	if (x <= t[0])
		return w[0];
	if (x >= t[n - 1])
		return w[n - 1];
	for (size_t i = 1; i < n; i++)
		if (x <= t[i]) {
			double span = t[i] - t[i - 1];

			return span > 0 ? w[i - 1] + (w[i] - w[i - 1]) * (x - t[i - 1]) / span : w[i];
		}
	return w[n - 1];
}

double
energy_joules(const double *t, const double *w, size_t n, double t0, double t1)
{
	double j = 0, prev_t = t0, prev_w;

	if (n == 0 || t1 < t0)
		return -1;
	prev_w = at(t, w, n, t0);
	for (size_t i = 0; i < n; i++) {
		if (t[i] <= t0)
			continue;
		if (t[i] >= t1)
			break;
		j += (prev_w + w[i]) / 2 * (t[i] - prev_t);
		prev_t = t[i];
		prev_w = w[i];
	}
	j += (prev_w + at(t, w, n, t1)) / 2 * (t1 - prev_t);
	return j;
}
