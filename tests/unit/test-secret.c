/*
 * Unit tests for lib/secret.c. The main one sends a passphrase down
 * every path a request can take through the server (answered, refused,
 * unparsable, cut off, split, batched) and then searches the whole
 * memory of the process (/proc/self/maps and /proc/self/mem: heap,
 * stacks, every writable mapping) for it. The passphrase is made at
 * run time and the test keeps it only masked, so the search finds the
 * server's copies and never the test's own.
 */
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <check.h>
#include <ev.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc.h"
#include "secret.h"
#include "unit-util.h"

#define PW_LEN		32
#define FRAG		12	/* bytes of it that count as a copy */
#define MASK		0x5a
#define MAX_REQUEST	1024

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define UNDER_ASAN	1
/*
 * Under ASan libnas leaves free() to the sanitizer (see lib/secret.c);
 * this asks the sanitizer to wipe what is freed, as libnas does.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "max_free_fill_size=2147483647:free_fill_byte=0";
}
#endif

static struct rpc_server *srv;
static char *dir, path[256];
static unsigned char masked[PW_LEN];	/* the passphrase, each byte ^ MASK */
static unsigned char in_pw[256];	/* masked bytes that occur in it */
static int opened;

static void
vault_open(struct rpc_call *c, struct json_object *params)
{
	struct secret *s = secret_from_param(params, "passphrase");

	ck_assert_ptr_nonnull(s);
	opened++;
	secret_free(s);
	rpc_result(c, json_object_new_boolean(1));
}

static void
thing_get(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	rpc_result(c, json_object_new_int(opened));
}

static const struct rpc_param vault_params[] = {
	{ "passphrase", RPC_STRING, RPC_REQUIRED | RPC_SECRET, 1, 512, NULL, "secret" },
	{ "slot", RPC_INT, 0, 0, 7, NULL, "key slot" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_method methods[] = {
	{ "vault.open", vault_open, vault_params, 0, "takes a passphrase" },
	{ "thing.get", thing_get, NULL, 0, "read" },
	{ NULL, NULL, NULL, 0, NULL }
};

static void
new_passphrase(void)
{
	unsigned char r[PW_LEN];

	ck_assert_int_eq(getrandom(r, sizeof(r), 0), (ssize_t)sizeof(r));
	for (int i = 0; i < PW_LEN; i++)
		masked[i] = (unsigned char)(('a' + r[i] % 26) ^ MASK);
	memset(in_pw, 0, sizeof(in_pw));
	for (int i = 0; i < PW_LEN; i++)
		in_pw[masked[i]] = 1;
	explicit_bzero(r, sizeof(r));
}

/* A request from a template: each '#' becomes the passphrase. */
static char *
build(const char *tmpl, size_t *lenp)
{
	size_t n = 0;
	char *out;

	for (const char *t = tmpl; *t; t++)
		n += *t == '#' ? PW_LEN : 1;
	ck_assert_ptr_nonnull(out = malloc(n + 1));
	n = 0;
	for (const char *t = tmpl; *t; t++) {
		if (*t != '#') {
			out[n++] = *t;
			continue;
		}
		for (int i = 0; i < PW_LEN; i++)
			out[n++] = (char)(masked[i] ^ MASK);
	}
	out[n] = '\0';
	*lenp = n;
	return out;
}

static void
drop(char *req, size_t len)
{
	explicit_bzero(req, len);
	free(req);
}

/*
 * Any FRAG bytes in a row of the passphrase count: a buffer that was
 * partly overwritten still leaks the rest.
 */
static int
match_at(const unsigned char *p)
{
	if (!in_pw[p[0] ^ MASK])
		return 0;
	for (int k = 0; k + FRAG <= PW_LEN; k++) {
		int i = 0;

		while (i < FRAG && (p[i] ^ MASK) == masked[k + i])
			i++;
		if (i == FRAG)
			return 1;
	}
	return 0;
}

/* Searches one mapping; its address when the passphrase is in it, else 0. */
static unsigned long
search_range(int mem, unsigned long lo, unsigned long hi)
{
	static unsigned char chunk[(1 << 16) + PW_LEN];
	unsigned long at;
	size_t want, keep = 0;
	ssize_t n;

	for (at = lo; at < hi; at += (unsigned long)want) {
		want = hi - at < (1 << 16) ? hi - at : (1 << 16);
		n = pread(mem, chunk + keep, want, (off_t)at);
		if (n != (ssize_t)want)
			return 0;	/* a guard page or the like */
		for (size_t i = 0; i + FRAG <= keep + want; i++)
			if (match_at(chunk + i))
				return at - keep + i;
		/* A copy may straddle two chunks. */
		memmove(chunk, chunk + keep + want - (FRAG - 1), FRAG - 1);
		keep = FRAG - 1;
	}
	return 0;
}

/* Where in memory the passphrase is; "" when nowhere. */
static const char *
find_passphrase(void)
{
	static char where[600];
	unsigned long lo, hi, hit;
	char line[512], perms[8], name[400];
	FILE *maps;
	int mem;

	ck_assert_ptr_nonnull(maps = fopen("/proc/self/maps", "re"));
	ck_assert_int_ne(mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC), -1);
	where[0] = '\0';
	while (where[0] == '\0' && fgets(line, sizeof(line), maps)) {
		name[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %399[^\n]", &lo, &hi, perms,
		    name) < 3)
			continue;
		/* Unreadable, kernel pages, or a sanitizer's shadow. */
		if (perms[0] != 'r' || strstr(name, "[vvar") || strstr(name, "[vsyscall]") ||
		    hi - lo > (1UL << 30))
			continue;
		if ((hit = search_range(mem, lo, hi)) != 0)
			snprintf(where, sizeof(where), "at %#lx in %s", hit,
			    name[0] ? name : "an anonymous mapping");
	}
	close(mem);
	fclose(maps);
	return where;
}

static void
assert_wiped(const char *path_name, const char *when)
{
	const char *where = find_passphrase();

	ck_assert_msg(where[0] == '\0', "%s: passphrase left %s %s", path_name, when,
	    where);
}

static void
setup(void)
{
	struct rpc_limits lim = { .max_request = MAX_REQUEST, .max_clients = 4,
	    .client_timeout_ms = 10000, .output_limit = 65536 };

	dir = unit_tmpdir();
	snprintf(path, sizeof(path), "%s/t.sock", dir);
	srv = rpc_server_new("testd", "1.0");
	rpc_server_add_methods(srv, methods);
	rpc_server_set_limits(srv, &lim);
	rpc_events_init(srv);
	ck_assert_int_eq(rpc_server_listen(srv, path, (gid_t)-1), 0);
	opened = 0;
	new_passphrase();
}

static void
teardown(void)
{
	rpc_server_free(srv);
	unit_rmtree(dir);
	free(dir);
}

#define SYNC	"{\"jsonrpc\":\"2.0\",\"method\":\"thing.get\",\"id\":\"sync\"}\n"
#define OPEN	"{\"jsonrpc\":\"2.0\",\"method\":\"vault.open\","
#define PW	"\"params\":{\"passphrase\":\"#\",\"slot\":1}"

enum how {
	WHOLE,		/* one write, then a call to be sure it was handled */
	BY_3,		/* three bytes a write */
	OVERSIZED,	/* the passphrase, then more than max_request */
	HANG_UP,	/* the passphrase, then the client closes */
};

static const struct path {
	const char	*name;
	const char	*tmpl;
	enum how	 how;
	int		 opens;		/* vault.open calls it makes */
} paths[] = {
	{ "valid call", OPEN PW ",\"id\":1}\n", WHOLE, 1 },
	{ "notification", OPEN PW "}\n", WHOLE, 1 },
	{ "envelope error", "{\"jsonrpc\":\"1.0\",\"method\":\"vault.open\"," PW
	  ",\"id\":1}\n", WHOLE, 0 },
	{ "mistyped method", "{\"jsonrpc\":\"2.0\",\"method\":5," PW ",\"id\":1}\n",
	  WHOLE, 0 },
	{ "unknown method", "{\"jsonrpc\":\"2.0\",\"method\":\"vault.nope\"," PW
	  ",\"id\":1}\n", WHOLE, 0 },
	{ "mistyped param", OPEN "\"params\":{\"passphrase\":\"#\",\"slot\":\"one\"},"
	  "\"id\":1}\n", WHOLE, 0 },
	{ "secret of the wrong type", OPEN "\"params\":{\"passphrase\":[\"#\"]},"
	  "\"id\":1}\n", WHOLE, 0 },
	{ "unknown param", OPEN "\"params\":{\"passphrase\":\"x\",\"other\":\"#\"},"
	  "\"id\":1}\n", WHOLE, 0 },
	{ "positional params", OPEN "\"params\":[\"#\",1],\"id\":1}\n", WHOLE, 0 },
	{ "duplicate key", OPEN "\"params\":{\"passphrase\":\"#\","
	  "\"passphrase\":\"other\"},\"id\":1}\n", WHOLE, 1 },
	{ "batch", "[" OPEN PW ",\"id\":1},{\"jsonrpc\":\"2.0\",\"method\":\"vault.nope\","
	  PW ",\"id\":2}," OPEN PW "},7]\n", WHOLE, 2 },
	{ "parse error mid-line", OPEN PW ",,\"id\":1}\n", WHOLE, 0 },
	{ "text after the value", OPEN PW ",\"id\":1} x\n", WHOLE, 0 },
	{ "request ends early", OPEN PW ",\"id\":\n", WHOLE, 0 },
	{ "split over many reads", OPEN PW ",\"id\":1}\n", BY_3, 1 },
	{ "oversized request", OPEN PW ",\"pad\":\"", OVERSIZED, 0 },
	{ "hang-up mid-request", OPEN PW, HANG_UP, 0 },
};

/* Reads answers up to the one to SYNC. */
static void
read_to_sync(int fd, const char *name)
{
	char *line;
	int done;

	do {
		line = unit_read_line(fd);
		ck_assert_msg(line != NULL, "%s: EOF before the answer", name);
		done = strstr(line, "\"id\":\"sync\"") != NULL;
		free(line);
	} while (!done);
}

static void
wait_no_conns(void)
{
	for (int i = 0; rpc_server_nconns(srv) > 0; i++) {
		ck_assert_msg(i < 4000, "server keeps the connection");
		unit_pump();
		usleep(1000);
	}
}

static void
send_request(int fd, const struct path *p, char *req, size_t len)
{
	char pad[MAX_REQUEST];

	switch (p->how) {
	case WHOLE:
		unit_send(fd, req, len);
		break;
	case BY_3:
		for (size_t off = 0; off < len; off += 3)
			unit_send(fd, req + off, len - off < 3 ? len - off : 3);
		break;
	case OVERSIZED:
		/* Parsed first, so the parser holds it when the limit is hit. */
		unit_send(fd, req, len);
		memset(pad, 'x', sizeof(pad));
		unit_send(fd, pad, sizeof(pad));
		unit_read_to_eof(fd);
		break;
	case HANG_UP:
		unit_send(fd, req, len);
		shutdown(fd, SHUT_WR);
		unit_read_to_eof(fd);
		break;
	}
}

START_TEST(passphrase_wiped_on_every_path)
{
	const struct path *p = &paths[_i];
	size_t len;
	char *req = build(p->tmpl, &len);
	int fd = unit_connect(path);

	send_request(fd, p, req, len);
	drop(req, len);
	if (p->how == WHOLE || p->how == BY_3) {
		unit_send(fd, SYNC, strlen(SYNC));
		read_to_sync(fd, p->name);
		ck_assert_int_eq(opened, p->opens);
		assert_wiped(p->name, "while connected");
	}
	close(fd);
	wait_no_conns();
	assert_wiped(p->name, "after the connection closed");
}
END_TEST

/* rpc_dispatch_text: the path without a socket. */
START_TEST(passphrase_wiped_by_dispatch_text)
{
	struct rpc_peer peer = { .uid = 0 };
	size_t len;
	char *req, *ans;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		req = build(paths[i].tmpl, &len);
		ans = rpc_dispatch_text(srv, &peer, req, len);
		drop(req, len);
		free(ans);
		assert_wiped(paths[i].name, "by rpc_dispatch_text");
	}
}
END_TEST

/* The search itself: a copy that was not wiped is found. */
START_TEST(search_finds_a_copy)
{
	size_t len;
	char *req = build("x#x", &len);

	ck_assert_str_ne(find_passphrase(), "");
	drop(req, len);
	ck_assert_str_eq(find_passphrase(), "");
}
END_TEST

static int
has_vmflag(const void *addr, const char *flag)
{
	char line[512], want[64];
	unsigned long lo, hi, a = (unsigned long)addr;
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	ck_assert_ptr_nonnull(f);
	snprintf(want, sizeof(want), " %s", flag);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = a >= lo && a < hi;
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			line[strcspn(line, "\n")] = ' ';
			found = strstr(line, want) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

START_TEST(secret_buffer_locked_and_not_dumped)
{
	struct secret *s = secret_new(100);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->cap, 100);
	ck_assert_uint_eq(s->len, 0);
	memset(s->buf, 'k', s->cap);
	/* ASan makes mlock a no-op that succeeds. */
#ifndef UNDER_ASAN
	ck_assert_msg(has_vmflag(s->buf, "lo"), "secret buffer not locked");
#endif
	ck_assert_msg(has_vmflag(s->buf, "dd"), "secret buffer would be dumped");
	ck_assert_msg(has_vmflag(s->buf, "wf"), "secret buffer copied into children");
	secret_free(s);
	secret_free(NULL);
	errno = 0;
	ck_assert_ptr_null(secret_new(0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(secret_new((1 << 20) + 1));
}
END_TEST

/* A forked child (nas_spawn's fork before exec) gets zeroes, not the key. */
START_TEST(secret_buffer_zero_in_child)
{
	struct secret *s = secret_new(16);
	pid_t pid;
	int st;

	ck_assert_ptr_nonnull(s);
	memset(s->buf, 'k', 16);
	if ((pid = fork()) == 0)
		_exit(s->buf[0] == 0 && s->buf[15] == 0 ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(s->buf[0], 'k');
	secret_free(s);
}
END_TEST

START_TEST(secret_from_param_wipes_request)
{
	struct json_object *p = unit_json("{\"passphrase\":\"hunter2\",\"n\":1}"), *v;
	struct secret *s = secret_from_param(p, "passphrase");

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->len, 7);
	ck_assert_mem_eq(s->buf, "hunter2", 7);
	ck_assert(json_object_object_get_ex(p, "passphrase", &v));
	ck_assert_mem_eq(json_object_get_string(v), "\0\0\0\0\0\0\0", 7);
	secret_free(s);
	errno = 0;
	ck_assert_ptr_null(secret_from_param(p, "n"));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(secret_from_param(p, "absent"));
	ck_assert_ptr_null(secret_from_param(NULL, "passphrase"));
	json_object_put(p);
}
END_TEST

START_TEST(equal_compares_every_byte)
{
	unsigned char a[64], b[64];

	memset(a, 7, sizeof(a));
	memcpy(b, a, sizeof(b));
	ck_assert(secret_equal(a, b, sizeof(a)));
	ck_assert(secret_equal(a, b, 0));
	for (size_t i = 0; i < sizeof(a); i++) {
		b[i] ^= 0x80;
		ck_assert_msg(!secret_equal(a, b, sizeof(a)), "byte %zu", i);
		ck_assert(secret_equal(a, b, i));
		b[i] ^= 0x80;
	}
}
END_TEST

START_TEST(no_core_dumps)
{
	struct rlimit rl;

	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	ck_assert_int_eq(secret_no_core_dumps(), 0);
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_CORE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 0);
	ck_assert_uint_eq(rl.rlim_max, 0);
}
END_TEST

/* The wrapped allocator keeps what realloc moves and frees nothing twice. */
START_TEST(realloc_keeps_contents)
{
	char *p = NULL;

	for (size_t n = 1; n <= (1 << 20); n *= 3) {
		ck_assert_ptr_nonnull(p = realloc(p, n));
		p[n - 1] = (char)n;
		if (n > 1)
			ck_assert_int_eq(p[n / 3 - 1], (char)(n / 3));
	}
	ck_assert_ptr_nonnull(p = realloc(p, 10));
	ck_assert_int_eq(p[0], 1);
	ck_assert_ptr_null(realloc(p, 0));
	free(NULL);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("secret");
	TCase *tc = tcase_create("memory");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, passphrase_wiped_on_every_path, 0,
	    (int)(sizeof(paths) / sizeof(paths[0])));
	tcase_add_test(tc, passphrase_wiped_by_dispatch_text);
	tcase_add_test(tc, search_finds_a_copy);
	suite_add_tcase(s, tc);
	tc = tcase_create("api");
	tcase_add_test(tc, secret_buffer_locked_and_not_dumped);
	tcase_add_test(tc, secret_buffer_zero_in_child);
	tcase_add_test(tc, secret_from_param_wipes_request);
	tcase_add_test(tc, equal_compares_every_byte);
	tcase_add_test(tc, no_core_dumps);
	tcase_add_test(tc, realloc_keeps_contents);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(suite());
}
