/* Little-endian byte access for the raidd suites, independent of the code
   under test (which uses endian.h and memcpy). */
#ifndef TEST_RAIDD_LE_H
#define TEST_RAIDD_LE_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t
rd32(const uint8_t *b, size_t off)
{
	return b[off] | b[off + 1] << 8 | b[off + 2] << 16 |
	    (uint32_t)b[off + 3] << 24;
}

static inline uint64_t
rd64(const uint8_t *b, size_t off)
{
	return rd32(b, off) | (uint64_t)rd32(b, off + 4) << 32;
}

static inline void
wr32(uint8_t *b, size_t off, uint32_t v)
{
	b[off] = v, b[off + 1] = v >> 8, b[off + 2] = v >> 16,
	    b[off + 3] = v >> 24;
}

#endif
