/*
 * A small blocking JSON-RPC client: one connection, one call at a
 * time, with a timeout. Notifications that arrive while a call waits
 * are kept (bounded, job.finished first) for rpc_client_next_event().
 * The non-blocking mode is in client-ev.c.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client-private.h"
#include "rpc.h"

void
client_set_err(struct rpc_client_error *e, int code, const char *fmt, const char *arg)
{
	if (e == NULL)
		return;
	rpc_client_error_clear(e);
	e->code = code;
	snprintf(e->message, sizeof(e->message), fmt, arg, strerror(errno));
}

void
rpc_client_error_clear(struct rpc_client_error *e)
{
	json_object_put(e->data);
	memset(e, 0, sizeof(*e));
}

struct rpc_client *
client_new(int fd)
{
	struct rpc_client *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->events = json_object_new_array()) == NULL) {
		free(c);
		return NULL;
	}
	c->fd = fd;
	c->timeout_ms = 30000;
	c->next_id = 1;
	return c;
}

int
client_connect(const char *path, int flags, struct rpc_client_error *err)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		client_set_err(err, RPC_CLIENT_UNREACHABLE, "%s: %s", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		client_set_err(err, RPC_CLIENT_UNREACHABLE, "%s: %s", path);
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

struct rpc_client *
rpc_client_open_path(const char *path, struct rpc_client_error *err)
{
	struct rpc_client *c;
	int fd;

	if ((fd = client_connect(path, 0, err)) == -1)
		return NULL;
	if ((c = client_new(fd)) == NULL) {
		close(fd);
		client_set_err(err, RPC_CLIENT_IO, "%s: %s", path);
		return NULL;
	}
	return c;
}

struct rpc_client *
rpc_client_open(const char *dir, const char *daemon, struct rpc_client_error *err)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s.sock", dir, daemon);
	return rpc_client_open_path(path, err);
}

void
rpc_client_close(struct rpc_client *c)
{
	if (c == NULL)
		return;
	if (c->ev) {
		/* Inside one of its callbacks the free waits for the callback. */
		client_ev_free(c);
		return;
	}
	close(c->fd);
	free(c->buf);
	json_object_put(c->events);
	free(c);
}

void
rpc_client_set_timeout(struct rpc_client *c, int ms)
{
	c->timeout_ms = ms;
}

int
rpc_client_fd(const struct rpc_client *c)
{
	return c->fd;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int
send_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
client_buf_room(struct rpc_client *c)
{
	char *p;

	if (c->len + 4096 <= c->cap)
		return 0;
	if (c->cap >= CLIENT_MAX_LINE)
		return errno = EMSGSIZE, -1;
	if ((p = realloc(c->buf, c->cap ? c->cap * 2 : 65536)) == NULL)
		return -1;
	c->buf = p;
	c->cap = c->cap ? c->cap * 2 : 65536;
	return 0;
}

/*
 * Counts objects, arrays and values in a line before json-c builds them,
 * strings skipped: quoted with " or (json-c's own extension) with '.
 */
static int
line_too_complex(const char *s, size_t n)
{
	size_t containers = 0, values = 0;
	char quote = 0;
	int escaped = 0;

	for (size_t i = 0; i < n; i++) {
		if (quote) {
			if (escaped)
				escaped = 0;
			else if (s[i] == '\\')
				escaped = 1;
			else if (s[i] == quote)
				quote = 0;
			continue;
		}
		switch (s[i]) {
		case '"':
		case '\'':
			quote = s[i];
			break;
		case '{':
		case '[':
			containers++;
			break;
		case ',':
			values++;
			break;
		}
	}
	return containers > CLIENT_MAX_CONTAINERS || values > CLIENT_MAX_VALUES;
}

int
client_take_line(struct rpc_client *c, struct json_object **out)
{
	char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;

	if (nl == NULL)
		return 0;
	*nl = '\0';
	/* A daemon's line is trusted no more than a disk: it may not take our memory. */
	*out = line_too_complex(c->buf, (size_t)(nl - c->buf)) ? NULL :
	    json_tokener_parse(c->buf);
	c->len -= (size_t)(nl + 1 - c->buf);
	memmove(c->buf, nl + 1, c->len);
	if (*out == NULL)
		return errno = EPROTO, -1;
	return 1;
}

/* Reads one line into a new json object; 0 timeout, -1 error or EOF. */
static int
read_message(struct rpc_client *c, long long deadline, struct json_object **out)
{
	ssize_t n;
	int rc, wait;

	for (;;) {
		if ((rc = client_take_line(c, out)) != 0)
			return rc;
		if (client_buf_room(c) == -1)
			return -1;
		/* A deadline reached still takes what is already readable, so a
		   zero timeout polls without blocking. */
		wait = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && wait < 0)
			wait = 0;
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		switch (poll(&pfd, 1, wait)) {
		case 0:
			return 0;
		case -1:
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
		c->len += (size_t)n;
	}
}

/*
 * A method that is not a string (null, a number) is no notification: it
 * was dereferenced as one, and a number read as its text.
 */
int
client_is_notification(struct json_object *m)
{
	struct json_object *v;

	return json_object_is_type(m, json_type_object) &&
	    !json_object_object_get_ex(m, "id", NULL) &&
	    json_object_object_get_ex(m, "method", &v) &&
	    json_object_is_type(v, json_type_string);
}

static int
is_finished(struct json_object *m)
{
	struct json_object *v;

	json_object_object_get_ex(m, "method", &v);
	return strcmp(json_object_get_string(v), "job.finished") == 0;
}

/*
 * Keeps a notification that came while a call waited. The queue is
 * bounded; when it is full the oldest event that is not job.finished
 * makes room: progress is superseded by the next one, but a lost
 * job.finished leaves whoever waits for it (nasctl's job waiting)
 * waiting for ever. Only when every queued event is a job.finished is
 * one lost, and then the stream says so (rpc_client_next_event fails
 * with ENOBUFS) instead of staying silent.
 */
static void
queue_event(struct rpc_client *c, struct json_object *m)
{
	size_t n = json_object_array_length(c->events), i;

	if (n >= CLIENT_EVENTS_KEPT) {
		for (i = 0; i < n; i++)
			if (!is_finished(json_object_array_get_idx(c->events, i)))
				break;
		if (i == n) {
			c->events_lost = 1;
			json_object_put(m);
			return;
		}
		json_object_array_del_idx(c->events, i, 1);
	}
	json_object_array_add(c->events, m);
}

int
client_take_answer(struct json_object *m, struct json_object **result,
    struct rpc_client_error *err)
{
	struct json_object *e, *v;

	if (json_object_object_get_ex(m, "result", &v)) {
		*result = json_object_get(v);
		return 0;
	}
	if (err) {
		rpc_client_error_clear(err);
		err->code = RPC_INTERNAL_ERROR;
		snprintf(err->message, sizeof(err->message), "malformed answer");
	}
	if (!json_object_object_get_ex(m, "error", &e) || err == NULL)
		return -1;
	if (json_object_object_get_ex(e, "code", &v))
		err->code = json_object_get_int(v);
	if (json_object_object_get_ex(e, "message", &v))
		snprintf(err->message, sizeof(err->message), "%s", json_object_get_string(v));
	if (json_object_object_get_ex(e, "data", &v))
		err->data = json_object_get(v);
	return -1;
}

int
client_answer_id(struct json_object *m, long long *id)
{
	struct json_object *v;

	if (!json_object_is_type(m, json_type_object) ||
	    !json_object_object_get_ex(m, "id", &v))
		return 0;
	if (v == NULL)
		return 2;
	/* Our ids are integers: a string "1" is no answer to call 1. */
	if (!json_object_is_type(v, json_type_int))
		return 0;
	*id = json_object_get_int64(v);
	return 1;
}

char *
client_request(const char *method, struct json_object *params, long long id,
    size_t *len)
{
	struct json_object *req = json_object_new_object();
	const char *text;
	char *line;

	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(req, "params", params);
	json_object_object_add(req, "id", json_object_new_int64(id));
	text = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, len);
	if ((line = malloc(*len + 1)) != NULL) {
		memcpy(line, text, *len);
		line[(*len)++] = '\n';
	}
	json_object_put(req);
	return line;
}

int
rpc_client_call(struct rpc_client *c, const char *method,
    struct json_object *params, struct json_object **result,
    struct rpc_client_error *err)
{
	const char *text = NULL;
	size_t len = 0;
	int rc;

	if (params)
		text = json_object_to_json_string_length(params, JSON_C_TO_STRING_PLAIN, &len);
	rc = rpc_client_call_text(c, method, text, len, result, err);
	json_object_put(params);
	return rc;
}

/*
 * The request as one line, made by hand so that params (which may hold
 * a secret) is copied once, into a buffer wiped after the write.
 */
static int
send_request(struct rpc_client *c, const char *method, const char *params,
    size_t plen, long long id)
{
	struct json_object *m = json_object_new_string(method);
	const char *mtext = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	char tail[64], *line;
	size_t len, n;
	int rc;

	snprintf(tail, sizeof(tail), "\"id\":%lld}\n", id);
	len = strlen("{\"jsonrpc\":\"2.0\",\"method\":") + strlen(mtext) + 1 +
	    (params ? strlen("\"params\":") + plen + 1 : 0) + strlen(tail);
	if ((line = malloc(len + 1)) == NULL) {
		json_object_put(m);
		return -1;
	}
	n = (size_t)sprintf(line, "{\"jsonrpc\":\"2.0\",\"method\":%s,", mtext);
	json_object_put(m);
	if (params) {
		n += (size_t)sprintf(line + n, "\"params\":");
		memcpy(line + n, params, plen);
		n += plen;
		line[n++] = ',';
	}
	memcpy(line + n, tail, strlen(tail));
	/* One write: a server may answer an error and close after a line. */
	rc = send_all(c->fd, line, len);
	explicit_bzero(line, len);
	free(line);
	return rc;
}

int
rpc_client_call_text(struct rpc_client *c, const char *method, const char *params,
    size_t plen, struct json_object **result, struct rpc_client_error *err)
{
	struct json_object *m;
	long long id = c->next_id++, deadline, got;
	int rc;

	*result = NULL;
	if (c->ev) {
		errno = EINVAL;
		client_set_err(err, RPC_CLIENT_IO, "%s: %s (the client is non-blocking)",
		    method);
		return -1;
	}
	if (send_request(c, method, params, plen, id) == -1) {
		client_set_err(err, RPC_CLIENT_IO, "sending %s: %s", method);
		return -1;
	}
	deadline = c->timeout_ms < 0 ? -1 : now_ms() + c->timeout_ms;
	for (;;) {
		rc = read_message(c, deadline, &m);
		if (rc <= 0) {
			if (rc == 0)
				errno = ETIMEDOUT;
			client_set_err(err, RPC_CLIENT_IO, "waiting for %s: %s", method);
			return -1;
		}
		if (client_is_notification(m)) {
			queue_event(c, m);
			continue;
		}
		rc = client_answer_id(m, &got);
		if (rc == 2 || (rc == 1 && got == id))
			break;
		json_object_put(m);
	}
	rc = client_take_answer(m, result, err);
	json_object_put(m);
	return rc;
}

static int
split_event(struct json_object *m, char **method, struct json_object **params)
{
	struct json_object *v;

	json_object_object_get_ex(m, "method", &v);
	if ((*method = strdup(json_object_get_string(v))) == NULL)
		return -1;
	*params = json_object_object_get_ex(m, "params", &v) ? json_object_get(v) : NULL;
	return 1;
}

int
rpc_client_next_event(struct rpc_client *c, int timeout_ms, char **method,
    struct json_object **params)
{
	struct json_object *m;
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int rc;

	if (c->ev)
		return errno = EINVAL, -1;
	if (json_object_array_length(c->events) > 0) {
		m = json_object_get(json_object_array_get_idx(c->events, 0));
		json_object_array_del_idx(c->events, 0, 1);
		rc = split_event(m, method, params);
		json_object_put(m);
		return rc;
	}
	/* What was queued came first; then the loss, before anything newer. */
	if (c->events_lost)
		return errno = ENOBUFS, -1;
	for (;;) {
		if ((rc = read_message(c, deadline, &m)) <= 0)
			return rc;
		if (client_is_notification(m))
			break;
		json_object_put(m);
	}
	rc = split_event(m, method, params);
	json_object_put(m);
	return rc;
}
