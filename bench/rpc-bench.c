/*
 * rpc-bench: request rate and latency of one method over N concurrent
 * connections. Each connection keeps exactly one request in flight
 * (closed loop), like a web UI polling; the client is one epoll thread
 * so it costs the daemon as little CPU as possible on a small machine.
 * With -r RATE the clients instead send on a fixed schedule adding up
 * to RATE requests/s (open loop), and latency is counted from when a
 * request was due, not when it went out, so a stalled daemon cannot
 * hide its stall by delaying the next request (coordinated omission).
 * Usage: rpc-bench [-r RATE] [-m METHOD] SOCKET CLIENTS SECONDS
 * Prints: clients requests seconds req_per_s p50_us p99_us max_us errors
 *
 * With -a SHAPE it attacks instead, for the daemon's peak RSS (read by
 * bench/run.sh): each of CLIENTS connections sends the worst request of
 * that shape, SIZE bytes (-s), and holds it SECONDS without reading:
 *   objects  [{},{},...]            json-c's ~800-byte hash table per {}
 *   values   params {"a":[0,0,...]}  ~100 bytes per value
 *   mixed    all a request may hold under the caps: 500 {}, 3500 values,
 *            then a string to the size
 *   batch    64 x system.methods, as often as the socket takes, unread
 * -H sends all of it but the last bytes: a half-sent request, held.
 * Prints: clients bytes_sent
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS	1024
#define HIST_US		100000	/* latencies above 100 ms land in the last bucket */

struct client {
	int		fd;
	int		busy;		/* a request is in flight */
	double		sent;		/* when it was due */
	double		due;		/* when the next one is due (paced) */
	char		buf[8192];
	size_t		len;
};

static unsigned long hist[HIST_US + 1];

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
connect_to(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		perror(path);
		exit(1);
	}
	return fd;
}

static void
send_req(struct client *c, const char *req, size_t len, double due)
{
	c->sent = due;
	c->busy = 1;
	if (write(c->fd, req, len) != (ssize_t)len) {
		perror("write");
		exit(1);
	}
}

static unsigned long
percentile(unsigned long total, double p)
{
	unsigned long want = (unsigned long)(total * p), seen = 0;

	for (unsigned long us = 0; us <= HIST_US; us++) {
		seen += hist[us];
		if (seen > want)
			return us;
	}
	return HIST_US;
}

/* Consumes complete answer lines; returns how many arrived. */
static int
take_answers(struct client *c, unsigned long *errors)
{
	char *nl;
	int n = 0;

	while ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
		if (strstr(c->buf, "\"error\"") && strstr(c->buf, "\"error\"") < nl)
			(*errors)++;
		c->len -= (size_t)(nl + 1 - c->buf);
		memmove(c->buf, nl + 1, c->len);
		n++;
	}
	return n;
}

static void
usage(void)
{
	fprintf(stderr, "usage: rpc-bench [-r rate] [-m method] socket clients seconds\n"
	    "       rpc-bench -a objects|values|mixed|batch [-H] [-s size] socket clients seconds\n");
	exit(2);
}

static void
put(char *b, size_t *n, const char *s)
{
	size_t len = strlen(s);

	memcpy(b + *n, s, len);
	*n += len;
}

/* The attack's request text, about size bytes, newline-terminated. */
static char *
attack_text(const char *shape, size_t size, size_t *len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"system.version\","
	    "\"id\":1,\"params\":{\"a\":[";
	char *b = malloc(size + 4096);
	size_t n = 0;

	if (b == NULL)
		exit(1);
	if (strcmp(shape, "objects") == 0) {
		put(b, &n, "[{}");
		while (n + 5 < size)
			put(b, &n, ",{}");
		put(b, &n, "]\n");
	} else if (strcmp(shape, "values") == 0) {
		put(b, &n, head);
		put(b, &n, "0");
		while (n + 8 < size)
			put(b, &n, ",0");
		put(b, &n, "]}}\n");
	} else if (strcmp(shape, "mixed") == 0) {
		put(b, &n, head);
		for (int i = 0; i < 500 && n + 16 < size; i++)
			put(b, &n, "{},");
		for (int i = 0; i < 3500 && n + 16 < size; i++)
			put(b, &n, "0,");
		put(b, &n, "0],\"b\":\"");
		while (n + 5 < size)
			put(b, &n, "x");
		put(b, &n, "\"}}\n");
	} else if (strcmp(shape, "batch") == 0) {
		put(b, &n, "[");
		for (int i = 0; i < 64; i++) {
			put(b, &n, i ? "," : "");
			put(b, &n, "{\"jsonrpc\":\"2.0\",\"method\":\"system.methods\",\"id\":1}");
		}
		put(b, &n, "]\n");
	} else {
		usage();
	}
	*len = n;
	return b;
}

/* Writes what the socket takes without blocking; 0 once it takes no more. */
static size_t
write_some(int fd, const char *p, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len && (n = write(fd, p + off, len - off)) > 0)
		off += (size_t)n;
	return off;
}

static int
attack(const char *path, const char *shape, int clients, double secs, size_t size,
    int hold)
{
	static int fds[MAX_CLIENTS];
	static size_t offs[MAX_CLIENTS];
	int batch = strcmp(shape, "batch") == 0;
	size_t len, sent = 0, want;
	char *text = attack_text(shape, size, &len);
	double end;

	signal(SIGPIPE, SIG_IGN);
	want = hold ? len - 3 : len;
	for (int i = 0; i < clients; i++) {
		fds[i] = connect_to(path);
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
	}
	/* Round after round: a daemon that reads slowly still gets all of it. */
	for (end = now() + secs; now() < end; usleep(10000)) {
		for (int i = 0; i < clients; i++) {
			if (offs[i] == want && batch)
				offs[i] = 0;
			size_t n = write_some(fds[i], text + offs[i], want - offs[i]);

			offs[i] += n;
			sent += n;
		}
	}
	printf("%d %zu\n", clients, sent);
	free(text);
	return 0;
}

/* Paced mode: sends what is due; returns ms until the next is due. */
static int
send_due(struct client *cl, int n, double interval, const char *req, size_t rlen)
{
	double t = now(), next = t + 1;

	for (int i = 0; i < n; i++) {
		struct client *c = &cl[i];

		if (!c->busy && c->due <= t) {
			send_req(c, req, rlen, c->due);
			c->due += interval;
		}
		if (!c->busy && c->due < next)
			next = c->due;
	}
	return next <= t ? 0 : (int)((next - t) * 1000) + 1;
}

int
main(int argc, char **argv)
{
	static struct client cl[MAX_CLIENTS];
	struct epoll_event ev, evs[64];
	unsigned long total = 0, errors = 0, max_us = 0;
	const char *method = "system.version", *shape = NULL;
	size_t size = 1 << 20;
	int hold = 0;
	double start, end, rate = 0, interval = 0;
	char req[256];
	size_t rlen;
	int n, ep, ch, wait_ms;

	while ((ch = getopt(argc, argv, "a:Hm:r:s:")) != -1) {
		switch (ch) {
		case 'a': shape = optarg; break;
		case 'H': hold = 1; break;
		case 's': size = (size_t)atol(optarg); break;
		case 'm': method = optarg; break;
		case 'r': rate = atof(optarg); break;
		default: usage();
		}
	}
	if (argc - optind != 3)
		usage();
	n = atoi(argv[optind + 1]);
	if (n < 1 || n > MAX_CLIENTS)
		return fprintf(stderr, "rpc-bench: 1..%d clients\n", MAX_CLIENTS), 2;
	if (shape)
		return attack(argv[optind], shape, n, atof(argv[optind + 2]), size, hold);
	rlen = (size_t)snprintf(req, sizeof(req),
	    "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"id\":1}\n", method);
	ep = epoll_create1(0);
	for (int i = 0; i < n; i++) {
		cl[i].fd = connect_to(argv[optind]);
		ev.events = EPOLLIN;
		ev.data.ptr = &cl[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &ev);
	}
	start = now();
	end = start + atof(argv[optind + 2]);
	if (rate > 0)
		interval = n / rate;
	for (int i = 0; i < n; i++) {
		/* Spread the paced clients evenly over one interval. */
		cl[i].due = start + interval * i / n;
		if (rate <= 0)
			send_req(&cl[i], req, rlen, now());
	}
	while (now() < end) {
		wait_ms = rate > 0 ? send_due(cl, n, interval, req, rlen) : 100;
		int k = epoll_wait(ep, evs, 64, wait_ms);

		for (int i = 0; i < k; i++) {
			struct client *c = evs[i].data.ptr;
			ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len - 1);

			if (r <= 0) {
				fprintf(stderr, "rpc-bench: connection closed by the daemon\n");
				return 1;
			}
			c->len += (size_t)r;
			c->buf[c->len] = '\0';
			if (take_answers(c, &errors) == 0)
				continue;
			c->busy = 0;
			unsigned long us = (unsigned long)((now() - c->sent) * 1e6);
			hist[us > HIST_US ? HIST_US : us]++;
			if (us > max_us)
				max_us = us;
			total++;
			if (rate <= 0)
				send_req(c, req, rlen, now());
		}
	}
	end = now() - start;
	printf("%d %lu %.2f %.0f %lu %lu %lu %lu\n", n, total, end, total / end,
	    percentile(total, 0.50), percentile(total, 0.99), max_us, errors);
	return errors ? 1 : 0;
}
