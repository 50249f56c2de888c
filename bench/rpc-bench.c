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
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
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
	fprintf(stderr, "usage: rpc-bench [-r rate] [-m method] socket clients seconds\n");
	exit(2);
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
	const char *method = "system.version";
	double start, end, rate = 0, interval = 0;
	char req[256];
	size_t rlen;
	int n, ep, ch, wait_ms;

	while ((ch = getopt(argc, argv, "m:r:")) != -1) {
		switch (ch) {
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
