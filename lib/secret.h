/*
 * secret.c: keeping secrets (passphrases, keys) out of freed memory,
 * core dumps and swap.
 */
#ifndef NAS_SECRET_H
#define NAS_SECRET_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * A buffer for a secret: its own pages, locked in RAM, left out of core
 * dumps, zeroed in a forked child, wiped and unmapped by secret_free.
 */
struct secret {
	unsigned char	*buf;
	size_t		 len;	/* bytes in use */
	size_t		 cap;	/* bytes available */
};

/* NULL (errno set) when the pages cannot be mapped or locked. */
struct secret *secret_new(size_t cap);
void	secret_free(struct secret *);
/*
 * Pages for a large secret workspace (Argon2's memory, up to a GiB), as
 * a struct secret's: locked (RLIMIT_MEMLOCK applies without
 * CAP_IPC_LOCK), out of core dumps, zeroed in a forked child; wiped
 * and unmapped by secret_pages_free. NULL with errno.
 */
void	*secret_pages_new(size_t len);
void	 secret_pages_free(void *, size_t len);
/* A copy of a string parameter; the request's own string is wiped. */
struct secret *secret_from_param(struct json_object *params, const char *name);
/* 1 when equal; the time taken depends on len only, not on the bytes. */
int	secret_equal(const void *, const void *, size_t len);

/* Turns core dumps off for this process; -1 when either step failed. */
int	secret_no_core_dumps(void);

/*
 * Zeroes the stack below the caller's frame, where the parser, the
 * dispatcher and a handler ran: their dead frames (locals, saved vector
 * registers) may hold request bytes.
 */
void	secret_scrub_stack(void);

/*
 * The request parser keeps the text of the last string it read in its
 * own buffer: these wipe it (and reset or free the parser).
 */
void	secret_tokener_reset(struct json_tokener *);
void	secret_tokener_free(struct json_tokener *);

#endif
