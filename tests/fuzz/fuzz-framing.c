/*
 * libFuzzer target: arbitrary bytes through the socket framing, cut
 * into writes at places the input chooses, with the loop driven here.
 * The first byte picks the write size; the rest is the stream. Every
 * line that comes back must be one JSON value.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "fuzz-methods.h"
#include "job.h"
#include "rpc-private.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char *path;
static char inbuf[1 << 20];
static size_t inlen;

static void
start(void)
{
	struct rpc_server *s = fuzz_server();
	struct rpc_limits lim = { .max_request = 4096, .max_clients = 4,
	    .client_timeout_ms = 600000, .output_limit = 1 << 20 };
	char tmpl[] = "/tmp/nas-fuzz.XXXXXX";

	/* As every daemon does (daemon.c): a client gone mid-answer is EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(tmpl) == NULL || asprintf(&path, "%s/f.sock", tmpl) == -1)
		abort();
	rpc_server_set_limits(s, &lim);
	if (rpc_server_listen(s, path, (gid_t)-1) == -1)
		abort();
}

/* Every complete line read so far must parse; keeps the partial tail. */
static void
check_lines(void)
{
	char *nl, *p = inbuf;
	struct json_object *a;

	while ((nl = memchr(p, '\n', inlen - (size_t)(p - inbuf))) != NULL) {
		*nl = '\0';
		if ((a = fuzz_parse_strict(p)) == NULL) {
			fprintf(stderr, "not JSON: %s\n", p);
			abort();
		}
		json_object_put(a);
		p = nl + 1;
	}
	inlen -= (size_t)(p - inbuf);
	memmove(inbuf, p, inlen);
}

/* Reads what the server sent; 0 at EOF. */
static int
drain(int fd)
{
	ssize_t n;

	for (;;) {
		if (inlen == sizeof(inbuf))
			abort();
		n = read(fd, inbuf + inlen, sizeof(inbuf) - inlen);
		if (n > 0) {
			inlen += (size_t)n;
			check_lines();
			continue;
		}
		if (n == 0 || errno == ECONNRESET)
			return 0;
		return 1;
	}
}

static int
subscribed(void)
{
	struct rpc_conn *c = fuzz_server()->conns;

	return c && c->topics && !c->closing && c->out_off == c->out_len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t step, off;
	int fd;

	if (size < 1 || size > 65536)
		return 0;
	if (path == NULL)
		start();
	step = (size_t)data[0] + 1;
	data++, size--;
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		abort();
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	strcpy(sun.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		abort();
	inlen = 0;
	ev_run(EV_DEFAULT, EVRUN_NOWAIT);
	for (off = 0; off < size; off += step) {
		size_t n = size - off < step ? size - off : step;

		/* The server may have closed on a bad request: stop writing then. */
		if (send(fd, data + off, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			break;
		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		fcntl(fd, F_SETFL, O_NONBLOCK);
		drain(fd);
	}
	shutdown(fd, SHUT_WR);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	/* A subscriber that half-closes is kept; anything else is closed. */
	while (drain(fd) && !subscribed()) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		ev_run(EV_DEFAULT, EVRUN_NOWAIT);
		poll(&pfd, 1, 1);
	}
	close(fd);
	ev_run(EV_DEFAULT, EVRUN_NOWAIT);
	job_reset();
	return 0;
}
