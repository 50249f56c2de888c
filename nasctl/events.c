/*
 * nasctl events: one subscription per daemon, all watched with one
 * poll(2), one line printed per notification until interrupted.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nasctl.h"

struct sub {
	const char		*daemon;
	struct rpc_client	*c;
};

/*
 * A string value as is when it reads unambiguously (and escaping would
 * not change it), else JSON-quoted; either way nothing in it reaches the
 * terminal unescaped.
 */
static void
print_value(FILE *f, struct json_object *v)
{
	char buf[TEXT_MAX];
	const char *s;

	if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
		if (*s && strpbrk(s, " \"=") == NULL &&
		    (text_escape(s, buf, sizeof(buf)), strcmp(buf, s) == 0)) {
			fputs(s, f);
			return;
		}
	}
	json_safe_print(f, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* "2024-05-01T12:00:00 raidd job.progress id=3 percent=42 ..." */
void
event_line(FILE *f, long long when, const char *daemon, const char *method,
    struct json_object *params, int json)
{
	struct json_object *o;
	time_t t = (time_t)when;
	char stamp[32];

	if (json) {
		o = json_object_new_object();
		json_object_object_add(o, "method", json_object_new_string(method));
		json_object_object_add(o, "params", json_object_get(params));
		json_safe_print(f, json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		fputc('\n', f);
		json_object_put(o);
		return;
	}
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", localtime(&t));
	if (json_path(params, "daemon"))
		daemon = json_str(params, "daemon");
	fprintf(f, "%s ", stamp);
	text_print(f, daemon);
	fputc(' ', f);
	text_print(f, method);
	if (json_object_is_type(params, json_type_object)) {
		json_object_object_foreach(params, k, v) {
			if (strcmp(k, "daemon") == 0)
				continue;
			fputc(' ', f);
			text_print(f, k);
			fputc('=', f);
			print_value(f, v);
		}
	}
	fputc('\n', f);
}

static int
subscribe(struct ctx *x, struct sub *s, struct json_object *topics)
{
	struct json_object *p = json_object_new_object(), *r;
	int rc;

	if ((s->c = session_open(x, s->daemon, &rc)) == NULL) {
		json_object_put(p);
		return rc;
	}
	if (topics)
		json_object_object_add(p, "topics", json_object_get(topics));
	rc = session_call(x, s->c, s->daemon, "events.subscribe", p, &r);
	json_object_put(r);
	if (rc != EXIT_OK) {
		rpc_client_close(s->c);
		s->c = NULL;
	}
	return rc;
}

/* Prints what s has; -1 when its daemon went away. */
static int
drain(struct ctx *x, struct sub *s)
{
	struct json_object *params;
	char *method;
	int rc;

	while ((rc = rpc_client_next_event(s->c, 0, &method, &params)) == 1) {
		event_line(x->out, time(NULL), s->daemon, method, params, x->json);
		fflush(x->out);
		free(method);
		json_object_put(params);
	}
	if (rc == 0)
		return 0;
	fprintf(x->err, "nasctl: %s: connection closed\n", s->daemon);
	rpc_client_close(s->c);
	s->c = NULL;
	return -1;
}

static int
stream(struct ctx *x, struct sub *subs, int n)
{
	struct pollfd pfd[NASCTL_NDAEMONS];
	int live = 0;

	for (int i = 0; i < n; i++)
		live += subs[i].c != NULL && drain(x, &subs[i]) == 0;
	while (live > 0) {
		for (int i = 0; i < n; i++) {
			pfd[i].fd = subs[i].c ? rpc_client_fd(subs[i].c) : -1;
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n, -1) == -1)
			continue;
		for (int i = 0; i < n; i++)
			if (pfd[i].revents && subs[i].c && drain(x, &subs[i]) == -1)
				live--;
	}
	return EXIT_UNREACHABLE;
}

int
run_events(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *named = json_path(local, "daemons");
	struct sub subs[NASCTL_NDAEMONS] = { { 0 } };
	int n = 0, rc = EXIT_OK, one;

	(void)cmd;
	json_object_put(params);
	if (named && json_object_array_length(named) > NASCTL_NDAEMONS) {
		fprintf(x->err, "nasctl: at most %d daemons\n", NASCTL_NDAEMONS);
		return EXIT_USAGE;
	}
	for (int i = 0; named ? i < (int)json_object_array_length(named) :
	    nasctl_daemons[i] != NULL; i++) {
		subs[n].daemon = named ? json_object_get_string(
		    json_object_array_get_idx(named, i)) : nasctl_daemons[i];
		if ((one = subscribe(x, &subs[n], json_path(local, "topics"))) == EXIT_OK)
			n++;
		else if (rc != EXIT_UNREACHABLE)
			rc = one;
	}
	/* A named daemon must answer; of all four, those that do are enough. */
	if (n > 0 && (named == NULL || rc == EXIT_OK))
		rc = stream(x, subs, n);
	for (int i = 0; i < n; i++)
		rpc_client_close(subs[i].c);
	return rc;
}
