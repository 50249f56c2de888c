/*
 * The verifiable pattern. Word 0 of a unit is its stamp, a 64-bit mix of
 * (seed, file, unit offset): never equal between two units of one run,
 * so a unit read from the wrong place, file or run fails. Words 1-63 are
 * body ^ (i * K), body a mix of (seed, unit offset modulo PATTERN_PERIOD):
 * as incompressible as the stamp, and the same in every period, so a
 * buffer written at one offset holds the body of any offset a whole
 * number of periods away and pattern_into() rewrites its stamps only
 * (1/64 of the bytes). fio fills its buffers once and scrambles a few
 * bytes per write; filling every byte per write cost the self-test a
 * fifth of fio's seq-max write figure under qemu TCG (Decision 132).
 *
 * Both loops are scalar 64-bit words, four to a step, with i * K kept
 * as a running sum: natively about as fast as the vectorised loops were
 * (medians 6.8 / 8.1 GB/s fill / check on the build host, against 7.0 /
 * 9.2), and under qemu TCG, which emulates SSE one helper call at a time,
 * 4-9x faster. There the check had cost the self-test a third of its
 * seq-max figure against fio (Decision 130). build.mk keeps the compiler
 * from vectorising them again.
 */
#include <string.h>

#include "pattern.h"

#define STEP	0x9e3779b97f4a7c15ULL

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Word 0 of the unit at off: where it belongs and to which run. */
static uint64_t
unit_stamp(uint64_t seed, uint64_t file, uint64_t off)
{
	return mix(seed ^ mix(file + STEP) ^ mix(off / PATTERN_UNIT + 0x51ed27c3ULL));
}

/* Words 1-63 of the unit at off are this ^ (i * STEP). */
static uint64_t
unit_body(uint64_t seed, uint64_t off)
{
	return mix(seed ^ 0x2545f4914f6cdd1dULL ^
	    mix(off % PATTERN_PERIOD / PATTERN_UNIT + 0x6a09e667ULL));
}

/* Unaligned-safe word access; each compiles to one move. */
static inline uint64_t
load(const char *p)
{
	uint64_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

static inline void
store(char *p, uint64_t x)
{
	memcpy(p, &x, sizeof(x));
}

void
pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t file, uint64_t off)
{
	char *p = buf, *end = p + len;

	for (; p < end; off += PATTERN_UNIT) {
		uint64_t body = unit_body(seed, off), k = 4 * STEP;
		char *e = p + PATTERN_UNIT;

		store(p, unit_stamp(seed, file, off));
		store(p + 8, body ^ STEP);
		store(p + 16, body ^ (2 * STEP));
		store(p + 24, body ^ (3 * STEP));
		for (p += 32; p < e; p += 32) {
			store(p, body ^ k);
			store(p + 8, body ^ (k + STEP));
			store(p + 16, body ^ (k + 2 * STEP));
			store(p + 24, body ^ (k + 3 * STEP));
			k += 4 * STEP;
		}
	}
}

/* Rewrites the stamps of a buffer holding the body of off's phase. */
static void
pattern_restamp(void *buf, size_t len, uint64_t seed, uint64_t file, uint64_t off)
{
	for (size_t u = 0; u < len; u += PATTERN_UNIT)
		store((char *)buf + u, unit_stamp(seed, file, off + u));
}

void
pattern_into(struct pattern_buf *pb, void *buf, size_t len, uint64_t seed, uint64_t file,
    uint64_t off)
{
	if (pb->held && pb->seed == seed && pb->len == len &&
	    pb->phase == off % PATTERN_PERIOD) {
		pattern_restamp(buf, len, seed, file, off);
		return;
	}
	pattern_fill(buf, len, seed, file, off);
	pb->held = 1;
	pb->seed = seed;
	pb->len = len;
	pb->phase = off % PATTERN_PERIOD;
}

int64_t
pattern_check(const void *buf, size_t len, uint64_t seed, uint64_t file, uint64_t off)
{
	const char *p = buf;

	for (size_t u = 0; u < len; u += PATTERN_UNIT) {
		uint64_t body = unit_body(seed, off + u), k = 4 * STEP, diff;
		const char *q = p + u;

		diff = load(q) ^ unit_stamp(seed, file, off + u);
		diff |= load(q + 8) ^ body ^ STEP;
		diff |= load(q + 16) ^ body ^ (2 * STEP);
		diff |= load(q + 24) ^ body ^ (3 * STEP);
		for (const char *e = q + PATTERN_UNIT; (q += 32) < e;) {
			diff |= load(q) ^ body ^ k;
			diff |= load(q + 8) ^ body ^ (k + STEP);
			diff |= load(q + 16) ^ body ^ (k + 2 * STEP);
			diff |= load(q + 24) ^ body ^ (k + 3 * STEP);
			k += 4 * STEP;
		}
		if (diff)
			return (int64_t)u;
	}
	return -1;
}
