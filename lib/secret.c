/*
 * Secrets in a daemon's memory. A passphrase reaches a daemon as the
 * bytes of a request, which pass through the read buffer, json-c's
 * parser and its objects before a handler sees them; every one of those
 * copies is wiped before its memory is reused or given back:
 *   - the read buffer is wiped on the stack by rpc-server.c;
 *   - the parser's own text buffer is wiped after every value
 *     (secret_tokener_reset) and before it is freed;
 *   - everything json-c frees (strings, keys, a value replaced by a
 *     duplicate key, a partly parsed request, grown buffers) is wiped by
 *     free() and realloc() below, which wrap glibc's allocator.
 * Handlers keep secrets they need in a struct secret.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json_tokener.h>
#include <json-c/printbuf.h>

#include "secret.h"

#define SECRET_MAX	(1 << 20)	/* a passphrase or key file, not data */
#define PARSER_BUF_KEPT	4096		/* a bigger parser buffer is given back */
#define STACK_SCRUB	65536		/* deeper than a request's handling goes */

#ifndef __has_feature
#define __has_feature(x) 0
#endif

/*
 * A sanitizer brings its own allocator, which these must not bypass
 * (ThreadSanitizer's dies at start when free is not its own);
 * there the sanitizer's free_fill option does the wiping (the unit test
 * that searches the memory sets it).
 */
#if !defined(__SANITIZE_ADDRESS__) && !__has_feature(address_sanitizer) && \
    !defined(__SANITIZE_THREAD__) && !__has_feature(thread_sanitizer)
void	*__libc_malloc(size_t);
void	 __libc_free(void *);

/*
 * json-c cannot be given an allocator, and it frees request text in
 * places no caller can reach (a value replaced by a duplicate key, the
 * key of a field, a parse abandoned half-way). So every block this
 * program frees is wiped first: glibc's allocator, with a wipe in front.
 */
void
free(void *p)
{
	if (p == NULL)
		return;
	explicit_bzero(p, malloc_usable_size(p));
	__libc_free(p);
}

/* Moving a block leaves the old copy behind: copy, wipe, free. */
void *
realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (p == NULL)
		return __libc_malloc(n);
	if (n == 0) {
		free(p);
		return NULL;
	}
	if (n <= (have = malloc_usable_size(p)))
		return p;
	if ((q = __libc_malloc(n)) == NULL)
		return NULL;
	memcpy(q, p, have);
	free(p);
	return q;
}
#endif

static size_t
mapped_size(size_t cap)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (cap + pg - 1) / pg * pg;
}

void *
secret_pages_new(size_t len)
{
	void *p;

	if (len == 0)
		return errno = EINVAL, NULL;
	len = mapped_size(len);
	/* Pages of its own: locking or advising them touches nothing else. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, len, MADV_DONTDUMP) == -1 ||
	    madvise(p, len, MADV_WIPEONFORK) == -1 || mlock(p, len) == -1) {
		int saved = errno;

		munmap(p, len);
		return errno = saved, NULL;
	}
	return p;
}

void
secret_pages_free(void *p, size_t len)
{
	if (p == NULL)
		return;
	len = mapped_size(len);
	explicit_bzero(p, len);
	munlock(p, len);
	munmap(p, len);
}

struct secret *
secret_new(size_t cap)
{
	struct secret *s;
	void *p;

	if (cap == 0 || cap > SECRET_MAX)
		return errno = EINVAL, NULL;
	if ((p = secret_pages_new(cap)) == NULL)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		secret_pages_free(p, cap);
		return NULL;
	}
	s->buf = p;
	s->cap = cap;
	return s;
}

void
secret_free(struct secret *s)
{
	if (s == NULL)
		return;
	secret_pages_free(s->buf, s->cap);
	free(s);
}

struct secret *
secret_from_param(struct json_object *params, const char *name)
{
	struct json_object *v;
	struct secret *s;
	size_t len;
	char *str;

	if (params == NULL || !json_object_object_get_ex(params, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return errno = EINVAL, NULL;
	str = (char *)json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if ((s = secret_new(len + 1)) != NULL) {
		memcpy(s->buf, str, len);
		s->len = len;
	}
	/* json-c owns the string: overwrite it in place. */
	explicit_bzero(str, len);
	return s;
}

int
secret_equal(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;
	unsigned char d = 0;

	/* No early exit: every byte is looked at whatever differs. */
	for (size_t i = 0; i < len; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/*
 * A core file (or a crash handler such as systemd-coredump, which a
 * piped core_pattern runs whatever RLIMIT_CORE says) would carry every
 * passphrase and key in memory to disk, and a process that may be
 * dumped may also be ptrace'd and have its /proc/PID/mem read by any
 * process of the same uid. Not dumpable closes all of those; RLIMIT_CORE
 * 0 is kept as well because it is inherited by children and survives a
 * later prctl by a library.
 */
int
secret_no_core_dumps(void)
{
	struct rlimit rl = { 0, 0 };
	int rc = 0;

	if (setrlimit(RLIMIT_CORE, &rl) == -1)
		rc = -1;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		rc = -1;
	return rc;
}

__attribute__((noinline)) void
secret_scrub_stack(void)
{
	char pad[STACK_SCRUB];

	explicit_bzero(pad, sizeof(pad));
	/* pad is dead after the wipe: keep the compiler from dropping it. */
	__asm__ volatile("" : : "r"(pad) : "memory");
}

/* The text of the last string or number parsed stays in tok->pb. */
static void
wipe_parser_buf(struct json_tokener *tok)
{
	struct printbuf *pb = tok->pb;
	char *small;

	if (pb == NULL || pb->buf == NULL)
		return;
	explicit_bzero(pb->buf, (size_t)pb->size);
	pb->bpos = 0;
	/* One long string must not make every later wipe long. */
	if (pb->size > PARSER_BUF_KEPT && (small = malloc(32)) != NULL) {
		free(pb->buf);
		small[0] = '\0';
		pb->buf = small;
		pb->size = 32;
	}
}

void
secret_tokener_reset(struct json_tokener *tok)
{
	wipe_parser_buf(tok);
	json_tokener_reset(tok);
}

void
secret_tokener_free(struct json_tokener *tok)
{
	if (tok == NULL)
		return;
	wipe_parser_buf(tok);
	json_tokener_free(tok);
}
