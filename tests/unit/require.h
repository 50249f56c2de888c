/*
 * Cheap asserts for the random loops of the planner suites (Check's own
 * cost a syscall each; those loops run millions), and the deterministic
 * generator they draw from, so a failure can be replayed.
 */
#ifndef TESTS_UNIT_REQUIRE_H
#define TESTS_UNIT_REQUIRE_H

#include <check.h>
#include <stdint.h>

#define REQUIRE(c) do {						\
	if (!(c))							\
		ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);	\
} while (0)
#define REQUIRE_OP(a, op, b) do {					\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (!(a_ op b_))						\
		ck_abort_msg("%s:%d: %s %s %s (%lld, %lld)", __FILE__,	\
		    __LINE__, #a, #op, #b, a_, b_);			\
} while (0)
#define REQUIRE_EQ(a, b)	REQUIRE_OP(a, ==, b)
#define REQUIRE_NE(a, b)	REQUIRE_OP(a, !=, b)
#define REQUIRE_LT(a, b)	REQUIRE_OP(a, <, b)
#define REQUIRE_LE(a, b)	REQUIRE_OP(a, <=, b)
#define REQUIRE_GT(a, b)	REQUIRE_OP(a, >, b)
#define REQUIRE_GE(a, b)	REQUIRE_OP(a, >=, b)

/* xorshift64 */
static inline uint64_t
xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif
