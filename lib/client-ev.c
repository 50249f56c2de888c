/*
 * The client's non-blocking mode, for a daemon calling another daemon
 * from its libev loop, where nothing may block: the connection is made
 * without waiting, requests are written when the socket takes them, and
 * each answer (or its timeout, or the end of the connection) reaches
 * the caller through a callback. Several calls may be outstanding.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "client-private.h"
#include "rpc.h"

struct pending {
	struct pending		*next;
	struct rpc_client	*c;
	long long		 id;
	char			*method;
	rpc_client_cb		 cb;
	void			*arg;
	ev_timer		 timer;
};

struct client_ev {
	struct ev_loop		*loop;
	ev_io			 rio, wio;
	char			*out;		/* requests not yet written */
	size_t			 outlen, outcap;
	struct pending		*calls;		/* oldest first */
	rpc_client_event_cb	 event_cb;
	void			*event_arg;
	int			 busy;		/* inside a callback */
	int			 closing;	/* closed inside a callback */
	int			 dead;		/* connection ended */
};

static void
really_free(struct rpc_client *c)
{
	struct client_ev *e = c->ev;
	struct pending *p;

	while ((p = e->calls) != NULL) {
		e->calls = p->next;
		ev_timer_stop(e->loop, &p->timer);
		free(p->method);
		free(p);
	}
	ev_io_stop(e->loop, &e->rio);
	ev_io_stop(e->loop, &e->wio);
	free(e->out);
	free(e);
	c->ev = NULL;
	rpc_client_close(c);
}

/* Pending calls are dropped without their callbacks: the caller closed. */
void
client_ev_free(struct rpc_client *c)
{
	struct client_ev *e = c->ev;

	if (e->busy) {
		e->closing = 1;
		ev_io_stop(e->loop, &e->rio);
		ev_io_stop(e->loop, &e->wio);
		return;
	}
	really_free(c);
}

/* Around every callback: a close inside it frees the client after it. */
static void
enter(struct rpc_client *c)
{
	c->ev->busy++;
}

static int
leave(struct rpc_client *c)
{
	if (--c->ev->busy == 0 && c->ev->closing) {
		really_free(c);
		return -1;
	}
	return 0;
}

static void
unlink_call(struct client_ev *e, struct pending *p)
{
	struct pending **pp;

	for (pp = &e->calls; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	ev_timer_stop(e->loop, &p->timer);
}

/* Gives call p its answer m, or the error err when m is NULL. */
static void
finish(struct rpc_client *c, struct pending *p, struct json_object *m,
    struct rpc_client_error *err)
{
	struct rpc_client_error own = { 0 };
	struct json_object *result = NULL;

	unlink_call(c->ev, p);
	if (m && client_take_answer(m, &result, &own) == 0)
		err = NULL;
	else if (m)
		err = &own;
	if (p->cb)
		p->cb(result, err, p->arg);
	json_object_put(result);
	rpc_client_error_clear(&own);
	free(p->method);
	free(p);
}

/* The connection is over: every outstanding call learns it. */
static void
fail_all(struct rpc_client *c, int errnum)
{
	struct client_ev *e = c->ev;
	struct rpc_client_error err = { 0 };

	e->dead = 1;
	ev_io_stop(e->loop, &e->rio);
	ev_io_stop(e->loop, &e->wio);
	while (e->calls && !e->closing) {
		errno = errnum;
		client_set_err(&err, RPC_CLIENT_IO, "waiting for %s: %s", e->calls->method);
		finish(c, e->calls, NULL, &err);
	}
}

static void
timeout_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	struct pending *p = w->data;
	struct rpc_client *c = p->c;
	struct rpc_client_error err = { 0 };

	(void)l;
	(void)revents;
	errno = ETIMEDOUT;
	client_set_err(&err, RPC_CLIENT_IO, "waiting for %s: %s", p->method);
	enter(c);
	/* A late answer finds no call with its id and is dropped. */
	finish(c, p, NULL, &err);
	leave(c);
}

static void
dispatch_event(struct rpc_client *c, struct json_object *m)
{
	struct json_object *method, *params = NULL;

	if (c->ev->event_cb == NULL)
		return;
	json_object_object_get_ex(m, "method", &method);
	json_object_object_get_ex(m, "params", &params);
	c->ev->event_cb(json_object_get_string(method), params, c->ev->event_arg);
}

static void
dispatch(struct rpc_client *c, struct json_object *m)
{
	struct pending *p;
	long long id = 0;

	if (client_is_notification(m)) {
		dispatch_event(c, m);
		return;
	}
	switch (client_answer_id(m, &id)) {
	case 1:
		for (p = c->ev->calls; p && p->id != id; p = p->next)
			;
		break;
	case 2:
		p = c->ev->calls;	/* an error that answers whatever was asked */
		break;
	default:
		p = NULL;
	}
	if (p)
		finish(c, p, m, NULL);
}

static void
read_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_client *c = w->data;
	struct json_object *m;
	ssize_t n;
	int rc;

	(void)l;
	(void)revents;
	enter(c);
	if (client_buf_room(c) == -1) {
		fail_all(c, errno);
		leave(c);
		return;
	}
	n = read(c->fd, c->buf + c->len, c->cap - c->len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		leave(c);
		return;
	}
	if (n <= 0) {
		fail_all(c, n == 0 ? ECONNRESET : errno);
		leave(c);
		return;
	}
	c->len += (size_t)n;
	while (!c->ev->closing && (rc = client_take_line(c, &m)) != 0) {
		if (rc == -1) {
			fail_all(c, EPROTO);
			break;
		}
		dispatch(c, m);
		json_object_put(m);
	}
	leave(c);
}

static void
write_cb(struct ev_loop *l, ev_io *w, int revents)
{
	struct rpc_client *c = w->data;
	struct client_ev *e = c->ev;
	ssize_t n;

	(void)revents;
	n = send(c->fd, e->out, e->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		enter(c);
		fail_all(c, n == 0 ? EPIPE : errno);
		leave(c);
		return;
	}
	e->outlen -= (size_t)n;
	memmove(e->out, e->out + n, e->outlen);
	/* Sent bytes may be a passphrase raidd hands cryptd: not kept. */
	explicit_bzero(e->out + e->outlen, (size_t)n);
	if (e->outlen == 0)
		ev_io_stop(l, w);
}

struct rpc_client *
rpc_client_open_ev(struct ev_loop *loop, const char *path,
    struct rpc_client_error *err)
{
	struct rpc_client *c = NULL;
	int fd;

	/*
	 * A Unix socket connects at once or fails at once; it never answers
	 * EINPROGRESS. A full backlog (EAGAIN) is a daemon too busy to take
	 * us now: the caller may try again later, but we do not wait here.
	 */
	if ((fd = client_connect(path, SOCK_NONBLOCK, err)) == -1)
		return NULL;
	if ((c = client_new(fd)) == NULL || (c->ev = calloc(1, sizeof(*c->ev))) == NULL) {
		client_set_err(err, RPC_CLIENT_IO, "%s: %s", path);
		if (c == NULL)
			close(fd);
		rpc_client_close(c);
		return NULL;
	}
	c->ev->loop = loop;
	ev_io_init(&c->ev->rio, read_cb, fd, EV_READ);
	ev_io_init(&c->ev->wio, write_cb, fd, EV_WRITE);
	c->ev->rio.data = c->ev->wio.data = c;
	ev_io_start(loop, &c->ev->rio);
	return c;
}

void
rpc_client_on_event(struct rpc_client *c, rpc_client_event_cb cb, void *arg)
{
	if (c->ev == NULL)
		return;		/* a blocking client queues its events */
	c->ev->event_cb = cb;
	c->ev->event_arg = arg;
}

static int
append_out(struct client_ev *e, const char *line, size_t len)
{
	char *p;
	size_t cap;

	/* A peer that reads nothing does not make us buffer without end. */
	if (e->outlen + len > CLIENT_MAX_LINE)
		return errno = ENOBUFS, -1;
	if (e->outlen + len > e->outcap) {
		cap = e->outlen + len < 4096 ? 4096 : (e->outlen + len) * 2;
		if ((p = realloc(e->out, cap)) == NULL)
			return -1;
		e->out = p;
		e->outcap = cap;
	}
	memcpy(e->out + e->outlen, line, len);
	e->outlen += len;
	return 0;
}

int
rpc_client_call_ev(struct rpc_client *c, const char *method,
    struct json_object *params, int timeout_ms, rpc_client_cb cb, void *arg)
{
	struct client_ev *e = c->ev;
	struct pending *p, **tail;
	char *line;
	size_t len;
	int rc;

	if (e == NULL || e->dead || e->closing) {
		json_object_put(params);
		return errno = e == NULL ? EINVAL : ENOTCONN, -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL || (p->method = strdup(method)) == NULL) {
		free(p);
		json_object_put(params);
		return -1;
	}
	p->c = c;
	p->id = c->next_id++;
	p->cb = cb;
	p->arg = arg;
	line = client_request(method, params, p->id, &len);
	rc = line == NULL ? -1 : append_out(e, line, len);
	free(line);
	if (rc == -1) {
		free(p->method);
		free(p);
		return -1;
	}
	for (tail = &e->calls; *tail; tail = &(*tail)->next)
		;
	*tail = p;
	/* Written from the loop: no callback ever runs inside this call. */
	ev_io_start(e->loop, &e->wio);
	ev_timer_init(&p->timer, timeout_cb, timeout_ms / 1000., 0.);
	p->timer.data = p;
	if (timeout_ms >= 0)
		ev_timer_start(e->loop, &p->timer);
	return 0;
}
