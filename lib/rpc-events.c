/*
 * Events: a client calls events.subscribe (optionally with topic
 * prefixes) and from then on receives JSON-RPC notifications whose
 * method is the topic, e.g. {"method":"job.progress","params":{...}}.
 * A subscriber that stops reading is cut off by the output limit.
 */
#include <stdio.h>
#include <string.h>

#include "rpc-private.h"

static struct rpc_server *event_server;

void
rpc_events_init(struct rpc_server *s)
{
	event_server = s;
}

/* Topics match by prefix at a dot boundary: "job" matches "job.progress". */
int
rpc_topic_matches(struct json_object *topics, const char *topic)
{
	size_t n = json_object_array_length(topics), l;
	const char *t;

	if (n == 0)
		return 1;
	for (size_t i = 0; i < n; i++) {
		t = json_object_get_string(json_object_array_get_idx(topics, i));
		l = strlen(t);
		if (strncmp(t, topic, l) == 0 && (topic[l] == '\0' || topic[l] == '.'))
			return 1;
	}
	return 0;
}

void
nas_event(const char *topic, struct json_object *data)
{
	struct json_object *n;
	struct rpc_conn *c, *next;

	if (data == NULL)
		data = json_object_new_object();
	if (event_server == NULL) {
		json_object_put(data);
		return;
	}
	json_object_object_add(data, "daemon", json_object_new_string(event_server->daemon));
	n = json_object_new_object();
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(topic));
	json_object_object_add(n, "params", data);
	log_debug("event %s", topic);
	for (c = event_server->conns; c; c = next) {
		next = c->next;
		if (c->topics && c->closing != 2 && rpc_topic_matches(c->topics, topic))
			rpc_conn_send(c, n);
	}
	json_object_put(n);
}

static const struct rpc_param subscribe_params[] = {
	{ "topics", RPC_ARRAY, 0, 0, 64, NULL,
	  "topic prefixes such as [\"job\", \"disk\"]; empty or absent: all" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static void
events_subscribe(struct rpc_call *c, struct json_object *params)
{
	struct json_object *topics = NULL, *t, *r;
	size_t n;

	if (params)
		json_object_object_get_ex(params, "topics", &topics);
	n = topics ? json_object_array_length(topics) : 0;
	for (size_t i = 0; i < n; i++) {
		t = json_object_array_get_idx(topics, i);
		if (!json_object_is_type(t, json_type_string)) {
			rpc_error(c, RPC_INVALID_PARAMS, "topics must be strings");
			return;
		}
	}
	topics = topics ? json_object_get(topics) : json_object_new_array();
	rpc_conn_set_subscription(c->conn, topics);
	r = json_object_new_object();
	json_object_object_add(r, "subscribed", json_object_get(topics));
	rpc_result(c, r);
}

static void
events_unsubscribe(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	rpc_conn_set_subscription(c->conn, NULL);
	rpc_result(c, json_object_new_object());
}

const struct rpc_method rpc_event_methods[] = {
	{ "events.subscribe", events_subscribe, subscribe_params, RPC_NEEDS_CONN,
	  "stream events on this connection as notifications" },
	{ "events.unsubscribe", events_unsubscribe, NULL, RPC_NEEDS_CONN,
	  "stop streaming events on this connection" },
	{ NULL, NULL, NULL, 0, NULL }
};
