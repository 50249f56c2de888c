/*
 * The socket side of the API: one non-blocking Unix stream socket per
 * daemon, requests framed by newlines and parsed incrementally as bytes
 * arrive, answers queued per client. A client that sends too much, too
 * slowly, or reads nothing is cut off: the daemon never blocks on one.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc-private.h"

#define READ_CHUNK	65536

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
	close(c->fd);
	json_tokener_free(c->tok);
	json_object_put(c->topics);
	free(c->out);
	free(c->peer.more);
	free(c);
}

/* Closing is deferred: a conn may be cut off while a caller still holds it. */
static void
conn_kill(struct rpc_conn *c)
{
	c->closing = 2;
	ev_io_stop(loop(), &c->rio);
	ev_timer_stop(loop(), &c->timer);
	ev_feed_event(loop(), &c->wio, EV_CUSTOM);
}

static void
conn_flush(struct rpc_conn *c)
{
	ssize_t n;

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
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		ev_io_stop(loop(), &c->wio);
		if (c->closing)
			conn_kill(c);
	} else {
		ev_io_start(loop(), &c->wio);
	}
}

static int
conn_queue(struct rpc_conn *c, const char *s, size_t len)
{
	size_t pending = c->out_len - c->out_off, cap;
	char *p;

	if (c->closing == 2)
		return -1;
	if (pending + len + 1 > c->srv->limits.output_limit) {
		log_warnx("client pid %d cut off: %zu bytes of output would wait for it",
		    (int)c->peer.pid, pending + len + 1);
		conn_kill(c);
		return -1;
	}
	if (c->out_off > 0 && c->out_len + len + 1 > c->out_cap) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
	}
	if (c->out_len + len + 1 > c->out_cap) {
		cap = (c->out_len + len + 1) * 2;
		if ((p = realloc(c->out, cap)) == NULL) {
			conn_kill(c);
			return -1;
		}
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	if (!ev_is_active(&c->wio))
		conn_flush(c);
	return 0;
}

int
rpc_conn_send(struct rpc_conn *c, struct json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);

	return conn_queue(c, s, len);
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
	json_tokener_reset(c->tok);
	c->in_request = 0;
	c->req_bytes = 0;
	ev_timer_stop(loop(), &c->timer);
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
	struct json_object *v;
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
	/* A subscriber that half-closes still wants its events. */
	if (c->topics && !peer_gone(c->fd))
		return;
	c->closing = 1;
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
		return;
	}
	process(c, buf, (size_t)n);
	/* The raw bytes may hold a passphrase: leave none on the stack. */
	explicit_bzero(buf, (size_t)n);
	if (c->closing && c->out_off == c->out_len)
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
	len = sizeof(p->groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &len) == 0) {
		p->ngroups = (int)(len / sizeof(gid_t));
		return;
	}
	/* More groups than fit: ERANGE, and len says how many bytes they need. */
	if (errno != ERANGE || len <= sizeof(p->groups) || (p->more = malloc(len)) == NULL)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->more, &len) == 0) {
		p->ngroups = (int)(len / sizeof(gid_t));
		return;
	}
	free(p->more);
	p->more = NULL;
}

static void
refuse(int fd)
{
	static const char msg[] = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32007,"
	    "\"message\":\"too many connections\"},\"id\":null}\n";

	/* Best effort: the socket is new, so its buffer has room. */
	if (write(fd, msg, sizeof(msg) - 1) < 0)
		log_debug("refused client went away");
	close(fd);
}

static void
accept_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_server *s = w->data;
	struct rpc_conn *c;
	int fd;

	(void)revents;
	fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("accept");
		return;
	}
	if (s->nconns >= s->limits.max_clients) {
		log_warnx("connection refused: limit of %d reached", s->limits.max_clients);
		refuse(fd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->tok = json_tokener_new()) == NULL) {
		free(c);
		close(fd);
		return;
	}
	json_tokener_set_flags(c->tok, JSON_TOKENER_STRICT);
	c->srv = s;
	c->fd = fd;
	read_peer(fd, &c->peer);
	ev_io_init(&c->rio, conn_read_cb, fd, EV_READ);
	ev_io_init(&c->wio, conn_write_cb, fd, EV_WRITE);
	ev_timer_init(&c->timer, conn_timeout_cb, 0., 0.);
	c->rio.data = c->wio.data = c->timer.data = c;
	ev_io_start(l, &c->rio);
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
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
	return 0;
}

void
rpc_server_close(struct rpc_server *s)
{
	while (s->conns)
		rpc_conn_free(s->conns);
	if (s->lfd == -1)
		return;
	ev_io_stop(loop(), &s->lio);
	close(s->lfd);
	s->lfd = -1;
	if (s->path)
		unlink(s->path);
	free(s->path);
	s->path = NULL;
}
