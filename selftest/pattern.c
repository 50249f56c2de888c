/*
 * The verifiable pattern. Word i of a unit is base ^ (i * K), base a
 * 64-bit mix of (seed, file, unit offset): one multiply and one xor per
 * word, cheap enough to fill and check at the disk's full speed, and
 * never equal between two units of one run (base differs).
 */
#include <string.h>

#include "pattern.h"

#define WORDS	(PATTERN_UNIT / 8)
#define STEP	0x9e3779b97f4a7c15ULL

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t
mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
unit_base(uint64_t seed, uint64_t file, uint64_t off)
{
	return mix(seed ^ mix(file + STEP) ^ mix(off / PATTERN_UNIT + 0x51ed27c3ULL));
}

/* Word i's constant, i * STEP: a table, so both loops are plain xors the
 * compiler vectorises (checking is the CPU cost a fast disk notices). */
static const uint64_t *
steps(void)
{
	static uint64_t k[WORDS];
	static int ready;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < WORDS; i++)
			k[i] = (uint64_t)i * STEP;
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	return k;
}

void
pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t file, uint64_t off)
{
	const uint64_t *k = steps();
	uint64_t w[WORDS];
	char *p = buf;

	for (size_t u = 0; u < len; u += PATTERN_UNIT) {
		uint64_t base = unit_base(seed, file, off + u);

		for (int i = 0; i < WORDS; i++)
			w[i] = base ^ k[i];
		memcpy(p + u, w, PATTERN_UNIT);
	}
}

int64_t
pattern_check(const void *buf, size_t len, uint64_t seed, uint64_t file, uint64_t off)
{
	const uint64_t *k = steps();
	const char *p = buf;
	uint64_t w[WORDS];

	for (size_t u = 0; u < len; u += PATTERN_UNIT) {
		uint64_t base = unit_base(seed, file, off + u), diff = 0;

		memcpy(w, p + u, PATTERN_UNIT);
		for (int i = 0; i < WORDS; i++)
			diff |= w[i] ^ base ^ k[i];
		if (diff)
			return (int64_t)u;
	}
	return -1;
}
