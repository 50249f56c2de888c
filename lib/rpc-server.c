/*
 * The socket side of the API: one non-blocking Unix stream socket per
 * daemon, requests framed by newlines and parsed incrementally as bytes
 * arrive, answers queued per client. A client that sends too much, too
 * slowly, or reads nothing is cut off: the daemon never blocks on one.
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc-private.h"
#include "secret.h"

#define READ_CHUNK	65536
/* An output buffer larger than this is given back once it drains. */
#define OUT_KEEP	16384
/* While accept has no descriptor to give: pause, and log once per period. */
#define ACCEPT_PAUSE	0.2
#define STARVED_LOG_EVERY 10.0
#define REFUSED_LOG_EVERY 1.0
/* Bytes json-c holds per { or [ and per value, measured (json-c 0.16). */
#define MEM_PER_CONTAINER 1024
#define MEM_PER_ITEM	128

static void conn_read_cb(struct ev_loop *, ev_io *, int);
static void conn_write_cb(struct ev_loop *, ev_io *, int);
static void conn_timeout_cb(struct ev_loop *, ev_timer *, int);

static struct ev_loop *
loop(void)
{
	return EV_DEFAULT;
}

int
rpc_server_nconns(const struct rpc_server *s)
{
	return s->nconns;
}

size_t
rpc_server_mem_used(const struct rpc_server *s)
{
	return s->mem_used;
}

/*
 * Whether more bytes fit the memory budget of all clients. The read
 * group may take three quarters of it: an administrator is still served
 * while the web UI's user exhausts its share.
 */
static int
budget_allows(const struct rpc_conn *c, size_t more)
{
	size_t b = c->srv->limits.memory_budget;

	if (b == 0)
		return 1;
	if (!rpc_peer_may(c->srv, &c->peer, RPC_MUTATES))
		b -= b / 4;
	return c->srv->mem_used <= b && more <= b - c->srv->mem_used;
}

static void
hup_unwatch(struct rpc_conn *c)
{
	if (!c->hup_watched)
		return;
	epoll_ctl(c->srv->hup_fd, EPOLL_CTL_DEL, c->fd, NULL);
	c->hup_watched = 0;
}

void
rpc_conn_free(struct rpc_conn *c)
{
	struct rpc_server *s = c->srv;
	struct rpc_conn **pp;

	for (pp = &s->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			s->nconns--;
			break;
		}
	}
	ev_io_stop(loop(), &c->rio);
	ev_io_stop(loop(), &c->wio);
	ev_timer_stop(loop(), &c->timer);
	ev_timer_stop(loop(), &c->wtimer);
	hup_unwatch(c);
	rpc_later_forget_conn(c);
	s->mem_used -= c->req_mem + c->out_cap;
	close(c->fd);
	secret_tokener_free(c->tok);
	json_object_put(c->topics);
	json_object_put(c->deferred);
	free(c->out);
	free(c->peer.groups);
	free(c);
}

/* Closing is deferred: a conn may be cut off while a caller still holds it. */
static void
conn_kill(struct rpc_conn *c)
{
	c->closing = 2;
	ev_io_stop(loop(), &c->rio);
	ev_timer_stop(loop(), &c->timer);
	ev_timer_stop(loop(), &c->wtimer);
	ev_feed_event(loop(), &c->wio, EV_CUSTOM);
}

/*
 * Output waiting for the client must make progress within
 * write_timeout_ms: the clock starts again at every byte it takes.
 */
static void
write_deadline(struct rpc_conn *c, int progress)
{
	int ms = c->srv->limits.write_timeout_ms;

	if (ms <= 0 || c->out_off == c->out_len) {
		ev_timer_stop(loop(), &c->wtimer);
		return;
	}
	if (progress || !ev_is_active(&c->wtimer)) {
		ev_timer_stop(loop(), &c->wtimer);
		ev_timer_set(&c->wtimer, ms / 1000.0, 0.);
		ev_timer_start(loop(), &c->wtimer);
	}
}

/* A large buffer that drained goes back, and with it its share of the budget. */
static void
out_release(struct rpc_conn *c)
{
	if (c->out_cap <= OUT_KEEP)
		return;
	c->srv->mem_used -= c->out_cap;
	free(c->out);
	c->out = NULL;
	c->out_cap = 0;
}

static void
conn_flush(struct rpc_conn *c)
{
	ssize_t n;
	int progress = 0;

	if (c->closing == 2)
		return;
	while (c->out_off < c->out_len) {
		n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			conn_kill(c);
			return;
		}
		c->out_off += (size_t)n;
		progress = 1;
	}
	write_deadline(c, progress);
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		out_release(c);
		ev_io_stop(loop(), &c->wio);
		/* An answer still to come keeps a closing client. */
		if (c->closing && c->nlater == 0)
			conn_kill(c);
	} else {
		ev_io_start(loop(), &c->wio);
	}
}

/* Queues len bytes, and a newline when nl; the client is cut off past a limit. */
static int
conn_queue(struct rpc_conn *c, const char *s, size_t len, int nl)
{
	size_t pending = c->out_len - c->out_off, need = len + (nl ? 1 : 0), cap;
	char *p;

	if (c->closing == 2)
		return -1;
	if (pending + need > c->srv->limits.output_limit) {
		log_warnx("client pid %d cut off: %zu bytes of output would wait for it",
		    (int)c->peer.pid, pending + need);
		conn_kill(c);
		return -1;
	}
	if (c->out_off > 0 && c->out_len + need > c->out_cap) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
	}
	if (c->out_len + need > c->out_cap) {
		cap = (c->out_len + need) * 2;
		/* Never more than the limit: pending + need fit in it. */
		if (cap > c->srv->limits.output_limit)
			cap = c->srv->limits.output_limit;
		if (!budget_allows(c, cap - c->out_cap)) {
			log_warnx("client pid %d cut off: output over the memory budget "
			    "of %zu bytes", (int)c->peer.pid, c->srv->limits.memory_budget);
			conn_kill(c);
			return -1;
		}
		if ((p = realloc(c->out, cap)) == NULL) {
			conn_kill(c);
			return -1;
		}
		c->srv->mem_used += cap - c->out_cap;
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, len);
	if (nl)
		c->out[c->out_len + len] = '\n';
	c->out_len += need;
	if (!ev_is_active(&c->wio))
		conn_flush(c);
	return 0;
}

int
rpc_conn_write(struct rpc_conn *c, const char *s, size_t len)
{
	return conn_queue(c, s, len, 0);
}

int
rpc_conn_send(struct rpc_conn *c, struct json_object *o)
{
	size_t len;
	const char *s;

	/* An event raised by a batch element must not land inside the answer array. */
	if (c->batching) {
		if (c->deferred == NULL)
			c->deferred = json_object_new_array();
		json_object_array_add(c->deferred, json_object_get(o));
		return 0;
	}
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	return conn_queue(c, s, len, 1);
}

void
rpc_conn_batch(struct rpc_conn *c, int on)
{
	struct json_object *held = c->deferred;
	size_t n;

	c->batching = on;
	if (on || held == NULL)
		return;
	c->deferred = NULL;
	n = json_object_array_length(held);
	for (size_t i = 0; i < n; i++)
		if (rpc_conn_send(c, json_object_array_get_idx(held, i)) == -1)
			break;
	json_object_put(held);
}

void
rpc_conn_set_subscription(struct rpc_conn *c, struct json_object *topics)
{
	json_object_put(c->topics);
	c->topics = topics;
}

struct json_object *
rpc_conn_subscription(struct rpc_conn *c)
{
	return c->topics;
}

static void
send_error(struct rpc_conn *c, int code, const char *msg)
{
	struct json_object *e = rpc_make_error(NULL, code, msg, NULL);

	rpc_conn_send(c, e);
	json_object_put(e);
}

static void
request_reset(struct rpc_conn *c)
{
	secret_tokener_reset(c->tok);
	c->in_request = 0;
	c->req_bytes = 0;
	c->in_string = c->escaped = c->depth = c->batch = 0;
	c->containers = c->items = c->elements = 0;
	c->srv->mem_used -= c->req_mem;
	c->req_mem = 0;
	ev_timer_stop(loop(), &c->timer);
}

/* A request that will not be read to its end: answered, then the connection closed. */
static void
request_refuse(struct rpc_conn *c, struct json_object *e)
{
	rpc_conn_send(c, e);
	json_object_put(e);
	c->closing = 1;
	ev_io_stop(loop(), &c->rio);
}

static struct json_object *
too_complex(const char *what, int max)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "request too complex: more than %d %s", max, what);
	return rpc_make_error(NULL, RPC_INVALID_REQUEST, msg, NULL);
}

/*
 * Counts what json-c will build from these bytes before it sees them:
 * objects and arrays, values, a batch's elements. Strings (escapes
 * included) are skipped, whatever chunks they arrive in. Returns the
 * error for a cap that is passed, or NULL.
 */
static struct json_object *
scan(struct rpc_conn *c, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (c->in_string) {
			if (c->escaped)
				c->escaped = 0;
			else if (p[i] == '\\')
				c->escaped = 1;
			else if (p[i] == '"')
				c->in_string = 0;
			continue;
		}
		switch (p[i]) {
		case '"':
			c->in_string = 1;
			break;
		case '[':
			if (c->containers == 0)
				c->batch = 1;
			/* FALLTHROUGH */
		case '{':
			c->containers++;
			c->depth++;
			break;
		case ']':
		case '}':
			c->depth--;
			break;
		case ',':
			c->items++;
			if (c->batch && c->depth == 1)
				c->elements++;
			break;
		}
	}
	/* elements counts the commas between them. */
	if (c->elements >= RPC_MAX_BATCH)
		return rpc_batch_too_large();
	if (c->containers > RPC_MAX_CONTAINERS)
		return too_complex("objects and arrays", RPC_MAX_CONTAINERS);
	if (c->items > RPC_MAX_ITEMS)
		return too_complex("values", RPC_MAX_ITEMS);
	return NULL;
}

/* json-c's copy of the bytes (a string may sit in its buffer and its object) and its objects. */
static size_t
request_mem(const struct rpc_conn *c)
{
	return c->req_bytes * 3 + (size_t)c->containers * MEM_PER_CONTAINER +
	    (size_t)c->items * MEM_PER_ITEM;
}

/* Takes this request's growth from the memory budget; -1 when it does not fit. */
static int
request_charge(struct rpc_conn *c)
{
	size_t mem = request_mem(c);

	if (mem <= c->req_mem)
		return 0;
	if (!budget_allows(c, mem - c->req_mem)) {
		log_warnx("client pid %d cut off: request over the memory budget of %zu bytes",
		    (int)c->peer.pid, c->srv->limits.memory_budget);
		return -1;
	}
	c->srv->mem_used += mem - c->req_mem;
	c->req_mem = mem;
	return 0;
}

static void
request_start(struct rpc_conn *c)
{
	c->in_request = 1;
	ev_timer_set(&c->timer, c->srv->limits.client_timeout_ms / 1000.0, 0.);
	ev_timer_start(loop(), &c->timer);
}

static void
request_done(struct rpc_conn *c, struct json_object *req)
{
	struct json_object *ans;

	request_reset(c);
	ans = rpc_dispatch(c->srv, c, &c->peer, req);
	json_object_put(req);
	if (ans) {
		rpc_conn_send(c, ans);
		json_object_put(ans);
	}
}

/* A value was parsed; the rest of its line may hold only white space. */
static size_t
finish_value(struct rpc_conn *c, struct json_object *v, const char *p, size_t off,
    size_t seg)
{
	size_t end = off;

	while (end < seg && p[end] != '\n' && isspace((unsigned char)p[end]))
		end++;
	if (end < seg && p[end] != '\n') {
		json_object_put(v);
		request_reset(c);
		send_error(c, RPC_PARSE_ERROR, "parse error: text after the JSON value");
		c->skip_line = 1;
		return end;
	}
	request_done(c, v);
	return end;
}

/* Feeds one run of bytes (ending at or before a newline) to the parser. */
static size_t
feed(struct rpc_conn *c, const char *p, size_t n)
{
	struct json_object *v, *e;
	enum json_tokener_error err;
	size_t used;

	if (!c->in_request) {
		size_t skip = 0;

		while (skip < n && isspace((unsigned char)p[skip]))
			skip++;
		if (skip == n)
			return n;
		if (skip)
			return skip;
		request_start(c);
	}
	c->req_bytes += n;
	if (c->req_bytes > c->srv->limits.max_request) {
		send_error(c, RPC_INVALID_REQUEST, "request too large");
		c->closing = 1;
		ev_io_stop(loop(), &c->rio);
		return n;
	}
	if ((e = scan(c, p, n)) != NULL) {
		request_refuse(c, e);
		return n;
	}
	if (request_charge(c) == -1) {
		request_refuse(c, rpc_make_error(NULL, NAS_ERR_LIMIT,
		    "server busy: request over the memory budget", NULL));
		return n;
	}
	v = json_tokener_parse_ex(c->tok, p, (int)n);
	err = json_tokener_get_error(c->tok);
	/* v is NULL for the value null too: that is an invalid request. */
	if (err == json_tokener_success)
		return finish_value(c, v, p, json_tokener_get_parse_end(c->tok), n);
	if (err == json_tokener_continue) {
		used = n;
		if (p[n - 1] == '\n') {
			request_reset(c);
			send_error(c, RPC_PARSE_ERROR, "parse error: request ends early");
		}
		return used;
	}
	request_reset(c);
	send_error(c, RPC_PARSE_ERROR, "parse error");
	c->skip_line = p[n - 1] != '\n';
	return n;
}

static void
process(struct rpc_conn *c, const char *buf, size_t len)
{
	size_t off = 0, seg;
	const char *nl;

	while (off < len && !c->closing) {
		nl = memchr(buf + off, '\n', len - off);
		seg = nl ? (size_t)(nl - (buf + off)) + 1 : len - off;
		if (c->skip_line) {
			if (nl)
				c->skip_line = 0;
			off += seg;
			continue;
		}
		off += feed(c, buf + off, seg);
	}
}

/* EOF alone may be a half-close; a peer that closed entirely hangs up. */
static int
peer_gone(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = 0 };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR));
}

/* A half-closed subscriber hung up at last: its place is free at once. */
static void
hup_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_server *s = w->data;
	struct epoll_event evs[32];
	int n;

	(void)l;
	(void)revents;
	n = epoll_wait(s->hup_fd, evs, 32, 0);
	for (int i = 0; i < n; i++) {
		struct rpc_conn *c = evs[i].data.ptr;

		hup_unwatch(c);
		conn_kill(c);
	}
}

/*
 * Its read side is at EOF, so EV_READ would fire for ever: an epoll set
 * of our own asks for no event at all, and still reports the hang-up
 * (EPOLLHUP) of a peer that closes entirely.
 */
static int
hup_open(struct rpc_server *s)
{
	if ((s->hup_fd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		log_warn("epoll_create1");
		return -1;
	}
	ev_io_init(&s->hio, hup_cb, s->hup_fd, EV_READ);
	s->hio.data = s;
	ev_io_start(loop(), &s->hio);
	return 0;
}

static int
hup_watch(struct rpc_conn *c)
{
	struct rpc_server *s = c->srv;
	struct epoll_event ev = { .events = 0, .data.ptr = c };

	if (s->hup_fd == -1 && hup_open(s) == -1)
		return -1;
	if (epoll_ctl(s->hup_fd, EPOLL_CTL_ADD, c->fd, &ev) == -1) {
		log_warn("epoll_ctl");
		return -1;
	}
	c->hup_watched = 1;
	return 0;
}

static void
conn_eof(struct rpc_conn *c)
{
	ev_io_stop(loop(), &c->rio);
	if (c->in_request) {
		/* A scalar at the end of the stream needs a terminator. */
		struct json_object *v = json_tokener_parse_ex(c->tok, "\n", 1);

		if (json_tokener_get_error(c->tok) == json_tokener_success)
			request_done(c, v);
		else
			send_error(c, RPC_PARSE_ERROR, "parse error: request ends early");
	}
	request_reset(c);
	/* A subscriber that half-closes still wants its events, until it hangs up. */
	if (c->topics && !peer_gone(c->fd) && hup_watch(c) == 0)
		return;
	c->closing = 1;
	/* Hung up entirely: the answers it waits for are dropped, its place freed. */
	if (c->nlater > 0 && peer_gone(c->fd)) {
		conn_kill(c);
		return;
	}
	conn_flush(c);
}

static void
conn_read_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_conn *c = w->data;
	char buf[READ_CHUNK];
	ssize_t n;

	(void)l;
	(void)revents;
	n = read(c->fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_eof(c);
		secret_scrub_stack();
		return;
	}
	process(c, buf, (size_t)n);
	/* The raw bytes may hold a passphrase: leave none on the stack. */
	explicit_bzero(buf, (size_t)n);
	secret_scrub_stack();
	rpc_conn_settle(c);
}

void
rpc_conn_settle(struct rpc_conn *c)
{
	if (c->closing == 1 && c->nlater == 0 && c->out_off == c->out_len)
		conn_kill(c);
}

static void
conn_write_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_conn *c = w->data;

	(void)l;
	(void)revents;
	if (c->closing == 2) {
		rpc_conn_free(c);
		return;
	}
	conn_flush(c);
}

static void
conn_timeout_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct rpc_conn *c = w->data;

	(void)l;
	(void)revents;
	log_warnx("client pid %d cut off: request not finished in %d ms",
	    (int)c->peer.pid, c->srv->limits.client_timeout_ms);
	send_error(c, RPC_INVALID_REQUEST, "request timed out");
	c->closing = 1;
	ev_io_stop(loop(), &c->rio);
	conn_flush(c);
}

static void
conn_write_timeout_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct rpc_conn *c = w->data;

	(void)l;
	(void)revents;
	log_warnx("client pid %d cut off: its output waited %d ms unread",
	    (int)c->peer.pid, c->srv->limits.write_timeout_ms);
	conn_kill(c);
}

/*
 * All the caller's groups, however many: the kernel says how much room
 * it needs (ERANGE) and may be asked again, the groups having changed.
 */
static void
read_groups(int fd, struct rpc_peer *p)
{
	socklen_t len = 64 * sizeof(gid_t);
	gid_t *g = NULL, *ng;

	for (int tries = 0; tries < 4; tries++) {
		if ((ng = realloc(g, len ? len : 1)) == NULL)
			break;
		g = ng;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) == 0) {
			p->groups = g;
			p->ngroups = (int)(len / sizeof(gid_t));
			return;
		}
		if (errno != ERANGE)
			break;
	}
	log_warn("client pid %d: its groups are unknown", (int)p->pid);
	free(g);
}

static void
read_peer(int fd, struct rpc_peer *p)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	memset(p, 0, sizeof(*p));
	p->uid = (uid_t)-1;
	p->gid = (gid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0) {
		p->pid = cr.pid;
		p->uid = cr.uid;
		p->gid = cr.gid;
	}
	read_groups(fd, p);
}

static void
refuse(int fd, const char *why)
{
	char msg[256];
	int len;

	len = snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":%d,"
	    "\"message\":\"%s\"},\"id\":null}\n", NAS_ERR_LIMIT, why);
	/* Best effort: the socket is new, so its buffer has room. */
	if (write(fd, msg, (size_t)len) < 0)
		log_debug("refused client went away");
	close(fd);
}

/* Counts an event; returns how many to report now, 0 while within the period. */
static unsigned
ratelog(struct rpc_ratelog *r, ev_tstamp every)
{
	ev_tstamp now = ev_now(loop());
	unsigned n;

	r->count++;
	if (r->last != 0 && now - r->last < every)
		return 0;
	n = r->count;
	r->last = now;
	r->count = 0;
	return n;
}

static int
uid_conns(const struct rpc_server *s, uid_t uid)
{
	int n = 0;

	for (const struct rpc_conn *c = s->conns; c; c = c->next)
		n += c->peer.uid == uid;
	return n;
}

/*
 * Why a new client gets no place, or NULL. The last places (at most
 * half) are kept for root and the admin group, and no user may take
 * more than its share: the read group cannot lock the admins out.
 */
static const char *
no_room(const struct rpc_server *s, const struct rpc_peer *p)
{
	const struct rpc_limits *l = &s->limits;
	int reserved = l->reserved_clients < l->max_clients / 2 ?
	    l->reserved_clients : l->max_clients / 2;

	if (s->nconns >= l->max_clients)
		return "too many connections";
	if (s->nconns >= l->max_clients - reserved && !rpc_peer_may(s, p, RPC_MUTATES))
		return "too many connections: the last are kept for administrators";
	if (l->max_clients_per_uid > 0 && uid_conns(s, p->uid) >= l->max_clients_per_uid)
		return "too many connections from this user";
	return NULL;
}

static void
accept_resume_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct rpc_server *s = w->data;

	(void)revents;
	if (s->lfd != -1)
		ev_io_start(l, &s->lio);
}

/*
 * Out of descriptors (EMFILE, ENFILE): the pending client would make
 * the loop spin. The spare descriptor makes room to take it and close
 * it at once; then the listener rests a while and the log gets one
 * line per period, not one per attempt.
 */
static void
accept_starved(struct rpc_server *s, int err)
{
	unsigned n;
	int fd;

	if (s->spare_fd != -1) {
		close(s->spare_fd);
		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1)
			refuse(fd, "out of file descriptors");
		s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if ((n = ratelog(&s->starved_log, STARVED_LOG_EVERY)) > 0)
		log_warnx("accept: %s: %u clients refused, listening paused",
		    strerror(err), n);
	ev_io_stop(loop(), &s->lio);
	ev_timer_stop(loop(), &s->accept_pause);
	ev_timer_set(&s->accept_pause, ACCEPT_PAUSE, 0.);
	ev_timer_start(loop(), &s->accept_pause);
}

static void
accept_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_server *s = w->data;
	struct rpc_peer peer;
	struct rpc_conn *c;
	const char *why;
	unsigned n;
	int fd;

	(void)revents;
	fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno == EMFILE || errno == ENFILE)
			accept_starved(s, errno);
		else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn("accept");
		return;
	}
	read_peer(fd, &peer);
	if ((why = no_room(s, &peer)) != NULL) {
		if ((n = ratelog(&s->refused_log, REFUSED_LOG_EVERY)) > 0)
			log_warnx("connection of uid %u refused: %s (%d of %d places "
			    "taken; %u refused since the last such line)", (unsigned)peer.uid,
			    why, s->nconns, s->limits.max_clients, n);
		free(peer.groups);
		refuse(fd, why);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->tok = json_tokener_new()) == NULL) {
		free(peer.groups);
		free(c);
		close(fd);
		return;
	}
	json_tokener_set_flags(c->tok, JSON_TOKENER_STRICT);
	c->srv = s;
	c->fd = fd;
	c->peer = peer;
	ev_io_init(&c->rio, conn_read_cb, fd, EV_READ);
	ev_io_init(&c->wio, conn_write_cb, fd, EV_WRITE);
	ev_timer_init(&c->timer, conn_timeout_cb, 0., 0.);
	ev_timer_init(&c->wtimer, conn_write_timeout_cb, 0., 0.);
	c->rio.data = c->wio.data = c->timer.data = c->wtimer.data = c;
	ev_io_start(l, &c->rio);
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
}

/* What accept needs to survive running out of descriptors. */
static void
accept_prepare(struct rpc_server *s)
{
	ev_timer_init(&s->accept_pause, accept_resume_cb, 0., 0.);
	s->accept_pause.data = s;
	if (s->spare_fd == -1 && (s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		log_warn("spare descriptor");
	/* Made now, not at the first half-close: the descriptors a daemon
	   holds stay the same whatever its clients do (tests/host/soak). */
	if (s->hup_fd == -1)
		hup_open(s);
}

/* A socket file that nobody answers on is stale and may be replaced. */
static int
socket_in_use(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), live;

	if (fd == -1)
		return 0;
	live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return live;
}

int
rpc_server_listen(struct rpc_server *s, const char *path, gid_t gid)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return errno = ENAMETOOLONG, -1;
	strcpy(sun.sun_path, path);
	if (socket_in_use(&sun))
		return errno = EADDRINUSE, -1;
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	/* Created 0660 from the start: no window where others may connect. */
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if ((gid != (gid_t)-1 &&
	    fchownat(AT_FDCWD, path, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) == -1) ||
	    listen(fd, 128) == -1) {
		close(fd);
		unlink(path);
		return -1;
	}
	s->lfd = fd;
	s->path = strdup(path);
	ev_io_init(&s->lio, accept_cb, fd, EV_READ);
	s->lio.data = s;
	ev_io_start(loop(), &s->lio);
	accept_prepare(s);
	return 0;
}

void
rpc_server_close(struct rpc_server *s)
{
	rpc_later_close(s);
	while (s->conns)
		rpc_conn_free(s->conns);
	if (s->hup_fd != -1) {
		ev_io_stop(loop(), &s->hio);
		close(s->hup_fd);
		s->hup_fd = -1;
	}
	if (s->spare_fd != -1) {
		close(s->spare_fd);
		s->spare_fd = -1;
	}
	if (s->lfd == -1)
		return;
	ev_timer_stop(loop(), &s->accept_pause);
	ev_io_stop(loop(), &s->lio);
	close(s->lfd);
	s->lfd = -1;
	if (s->path)
		unlink(s->path);
	free(s->path);
	s->path = NULL;
}
