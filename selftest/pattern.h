/*
 * pattern.c: the data every write workload lays down and every read
 * checks. Each 512-byte unit is a function of (seed, file, offset), so a
 * block that reads back from the wrong place, the wrong file or an older
 * run fails as surely as a flipped bit. Its first word (the stamp) says
 * where it belongs; the rest repeats every PATTERN_PERIOD bytes.
 */
#ifndef SELFTEST_PATTERN_H
#define SELFTEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define PATTERN_UNIT	512
#define PATTERN_PERIOD	(1024 * 1024)

/* What a write buffer was last filled with (zeroed: nothing). */
struct pattern_buf {
	uint64_t	seed;
	uint64_t	phase;		/* its offset modulo PATTERN_PERIOD */
	size_t		len;
	int		held;
};

/* Fills len bytes meant for byte offset off of file; off and len are
 * multiples of PATTERN_UNIT. */
void	pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t file, uint64_t off);
/* The same for a buffer nothing but pattern_into() writes to: where pb
 * says it holds the body of off's phase, only the stamps are written.
 * A buffer read into, or changed otherwise, is forgotten first
 * (pb->held = 0). */
void	pattern_into(struct pattern_buf *pb, void *buf, size_t len, uint64_t seed,
	    uint64_t file, uint64_t off);
/* -1 when buf holds what pattern_fill would write there, else the
 * offset within buf of the first unit that differs. */
int64_t	pattern_check(const void *buf, size_t len, uint64_t seed, uint64_t file,
	    uint64_t off);

#endif
