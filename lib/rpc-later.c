/*
 * Answers given later (Decision 94). A handler hands its call over with
 * work to do off the loop (cryptd's key derivation: seconds of CPU and
 * up to a GiB) and what to do after it, on the loop. The loop goes on
 * serving every other client; the answer is sent when the work is done.
 *
 * The call belongs to the server, never to the connection: a client
 * that leaves only loses its answer (its pointer is cleared here, in
 * rpc_conn_free), and nothing the worker uses is freed under it. A
 * waiting call whose client left is not worked on at all.
 *
 * Bounded: so many calls waiting or running for all clients together,
 * for one connection, and the read group at most half of them, so that
 * no client queues work without end or keeps the administrators out.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rpc-private.h"
#include "secret.h"

#define LATER_MAX		16	/* raidd unlocks up to 16 volumes at once (auto-unlock) */
#define LATER_PER_CONN		2
#define LATER_THREADS		1

struct later {
	struct rpc_later_set	*set;
	struct rpc_call		 call;		/* call.conn NULL once the client left */
	struct rpc_peer		 peer;		/* a copy, without the groups */
	int			 admin;		/* may mutate: not the read group's share */
	rpc_work_fn		 work;
	rpc_done_fn		 done;
	void			*arg;
	pthread_t		 thread;
	int			 running;	/* its thread was started */
	int			 finished;	/* under set->mu: work returned */
	struct later		*next;
};

struct rpc_later_set {
	struct rpc_server	*srv;
	struct ev_loop		*loop;
	pthread_mutex_t		 mu;
	ev_async		 async;		/* a worker finished */
	struct later		*list;		/* oldest first */
	int			 n, running;
};

static void later_async_cb(struct ev_loop *, ev_async *, int);

static int
limit(int v, int def)
{
	return v > 0 ? v : def;
}

int
rpc_server_nlater(const struct rpc_server *s)
{
	return s->later ? s->later->n : 0;
}

static struct rpc_later_set *
set_get(struct rpc_server *s)
{
	struct rpc_later_set *set;

	if (s->later)
		return s->later;
	if ((set = calloc(1, sizeof(*set))) == NULL)
		return NULL;
	if (pthread_mutex_init(&set->mu, NULL) != 0) {
		free(set);
		return NULL;
	}
	set->srv = s;
	set->loop = EV_DEFAULT;
	ev_async_init(&set->async, later_async_cb);
	set->async.data = set;
	ev_async_start(set->loop, &set->async);
	s->later = set;
	return set;
}

static void *
later_main(void *arg)
{
	struct later *l = arg;
	struct rpc_later_set *set = l->set;

	l->work(l->arg);
	/* The work's dead frames may hold secrets; glibc keeps thread stacks. */
	secret_scrub_stack();
	pthread_mutex_lock(&set->mu);
	l->finished = 1;
	pthread_mutex_unlock(&set->mu);
	ev_async_send(set->loop, &set->async);
	return NULL;
}

static void
unlink_later(struct rpc_later_set *set, struct later *l)
{
	for (struct later **pp = &set->list; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
}

/* l, off the list: done on the loop, then the answer to the client if it is still there. */
static void
finish(struct rpc_later_set *set, struct later *l, int ran, const char *why)
{
	struct rpc_conn *conn = l->call.conn;
	struct json_object *ans;

	set->n--;
	if (conn)
		conn->nlater--;
	l->done(&l->call, l->arg, ran);
	if (l->call.result == NULL && l->call.err_code == 0)
		rpc_error(&l->call, ran ? RPC_INTERNAL_ERROR : NAS_ERR_FAILED, "%s %s",
		    l->call.method->name, ran ? "gave no answer" : why);
	ans = rpc_call_answer(&l->call);
	if (ans && conn)
		rpc_conn_send(conn, ans);
	json_object_put(ans);
	json_object_put(l->call.id);
	free(l);
	if (conn)
		rpc_conn_settle(conn);
}

/* Starts the oldest waiting calls while threads are free. */
static void
start_waiting(struct rpc_later_set *set)
{
	int threads = limit(set->srv->limits.later_threads, LATER_THREADS);
	struct later *l, *next;
	int err;

	for (l = set->list; l && set->running < threads; l = next) {
		next = l->next;
		if (l->running)
			continue;
		if (l->call.conn == NULL) {
			unlink_later(set, l);
			finish(set, l, 0, "was not done: the client left");
			continue;
		}
		if ((err = pthread_create(&l->thread, NULL, later_main, l)) != 0) {
			log_warnx("%s: no worker thread: %s", l->call.method->name,
			    strerror(err));
			unlink_later(set, l);
			finish(set, l, 0, "was not done: no worker thread");
			continue;
		}
		l->running = 1;
		set->running++;
	}
}

static void
later_async_cb(struct ev_loop *lp, ev_async *w, int revents)
{
	struct rpc_later_set *set = w->data;
	struct later *l, *next, *done = NULL, **tail = &done;

	(void)lp;
	(void)revents;
	/* Taken off the list under the lock; then nothing a worker touches. */
	pthread_mutex_lock(&set->mu);
	for (l = set->list; l; l = next) {
		next = l->next;
		if (l->running && l->finished) {
			unlink_later(set, l);
			l->next = NULL;
			*tail = l;
			tail = &l->next;
		}
	}
	pthread_mutex_unlock(&set->mu);
	for (l = done; l; l = next) {
		next = l->next;
		pthread_join(l->thread, NULL);
		set->running--;
		finish(set, l, 1, NULL);
	}
	start_waiting(set);
}

static int
read_group_calls(const struct rpc_later_set *set)
{
	int n = 0;

	for (const struct later *l = set->list; l; l = l->next)
		n += !l->admin;
	return n;
}

/* Why the call cannot wait for its answer now, or NULL. */
static const char *
no_room(const struct rpc_later_set *set, const struct rpc_call *c, int admin)
{
	const struct rpc_limits *lim = &set->srv->limits;
	int max = limit(lim->max_later, LATER_MAX);

	if (set->n >= max)
		return "server busy: too many requests wait for their answer";
	if (c->conn->nlater >= limit(lim->max_later_per_conn, LATER_PER_CONN))
		return "too many requests of this connection wait for their answer";
	if (!admin && read_group_calls(set) >= max / 2)
		return "server busy: the read group's share of waiting requests is taken";
	return NULL;
}

int
rpc_call_later(struct rpc_call *c, rpc_work_fn work, rpc_done_fn done, void *arg)
{
	struct rpc_later_set *set;
	const char *why;
	struct later *l;
	int admin;

	/* No loop to come back to (rpc_dispatch_text, the unit suites): now. */
	if (c->conn == NULL) {
		work(arg);
		done(c, arg, 1);
		return 0;
	}
	/* A batch has one answer, which cannot wait for one of its elements. */
	if (c->conn->batching) {
		rpc_error(c, RPC_INVALID_REQUEST, "%s answers later: send it alone, "
		    "not in a batch", c->method->name);
		return -1;
	}
	if ((set = set_get(c->srv)) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "out of memory");
		return -1;
	}
	admin = rpc_peer_may(c->srv, c->peer, RPC_MUTATES);
	if ((why = no_room(set, c, admin)) != NULL) {
		rpc_error(c, NAS_ERR_LIMIT, "%s", why);
		return -1;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "out of memory");
		return -1;
	}
	l->set = set;
	l->call = *c;
	l->peer = *c->peer;
	l->peer.groups = NULL;
	l->peer.ngroups = 0;
	l->call.peer = &l->peer;
	l->call.id = json_object_get(c->id);
	l->call.result = NULL;
	l->call.err_data = NULL;
	l->call.err_code = 0;
	l->admin = admin;
	l->work = work;
	l->done = done;
	l->arg = arg;
	c->later = 1;
	c->conn->nlater++;
	set->n++;
	{
		struct later **pp = &set->list;

		while (*pp)
			pp = &(*pp)->next;
		*pp = l;
	}
	start_waiting(set);
	return 0;
}

void
rpc_later_forget_conn(struct rpc_conn *c)
{
	struct rpc_later_set *set = c->srv->later;

	c->nlater = 0;
	if (set == NULL)
		return;
	for (struct later *l = set->list; l; l = l->next)
		if (l->call.conn == c)
			l->call.conn = NULL;
}

/* The running work ends (joined), the waiting is not done; nobody gets an answer. */
void
rpc_later_close(struct rpc_server *s)
{
	struct rpc_later_set *set = s->later;
	struct later *l;

	if (set == NULL)
		return;
	for (l = set->list; l; l = l->next) {
		if (l->call.conn)
			l->call.conn->nlater = 0;
		l->call.conn = NULL;
	}
	while ((l = set->list) != NULL) {
		set->list = l->next;
		if (l->running) {
			pthread_join(l->thread, NULL);
			set->running--;
		}
		finish(set, l, l->running, "was not done: the server is closing");
	}
	ev_async_stop(set->loop, &set->async);
	pthread_mutex_destroy(&set->mu);
	free(set);
	s->later = NULL;
}
