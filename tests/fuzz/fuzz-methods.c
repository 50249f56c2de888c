/*
 * Methods for the fuzz targets: parameters of every type, ranges, an
 * enum and a secret, handlers that answer, fail, answer nothing or
 * start jobs, so that every path after the policy check is reached.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-methods.h"
#include "job.h"

static const char *const levels[] = { "raid0", "raid1", "jbod", NULL };

static const struct rpc_param create_params[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 32, NULL, "volume name" },
	{ "level", RPC_STRING, 0, 0, 0, levels, "layout" },
	{ "size", RPC_INT, 0, 0, 1LL << 40, NULL, "bytes" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "really" },
	{ "disks", RPC_ARRAY, 0, 1, 8, NULL, "bays" },
	{ "opts", RPC_OBJECT, 0, 0, 0, NULL, "anything" },
	{ "passphrase", RPC_STRING, RPC_SECRET, 8, 512, NULL, "the key" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param id_params[] = {
	{ "id", RPC_INT, 0, -5, 5, NULL, "which" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static void
vol_create(struct rpc_call *c, struct json_object *params)
{
	struct json_object *r = json_object_new_object();
	struct job *j;

	json_object_object_add(r, "name",
	    json_object_new_string(rpc_param_str(params, "name", "")));
	json_object_object_add(r, "level",
	    json_object_new_string(rpc_param_str(params, "level", "jbod")));
	json_object_object_add(r, "size",
	    json_object_new_int64(rpc_param_int(params, "size", 0)));
	if (rpc_param_bool(params, "force", 0) && (j = job_start("create",
	    rpc_param_str(params, "name", ""), NULL, NULL)) != NULL) {
		json_object_object_add(r, "job", json_object_new_int64(job_id(j)));
		job_progress(j, 50, "half");
		job_done(j, json_object_get(r));
	}
	rpc_result(c, r);
}

static void
vol_status(struct rpc_call *c, struct json_object *params)
{
	int64_t id = rpc_param_int(params, "id", 0);

	if (id < 0) {
		rpc_error_data(c, NAS_ERR_NOT_FOUND, json_object_new_int64(id),
		    "no volume %lld", (long long)id);
		return;
	}
	if (id == 0)
		return;		/* answers nothing: -32603 */
	nas_event("volume.status", NULL);
	rpc_result(c, json_object_new_int64(id));
}

static const struct rpc_method methods[] = {
	{ "volume.create", vol_create, create_params, RPC_MUTATES, "make one" },
	{ "volume.status", vol_status, id_params, 0, "look at one" },
	{ NULL, NULL, NULL, 0, NULL }
};

struct rpc_server *
fuzz_server(void)
{
	static struct rpc_server *s;
	struct rpc_auth auth = { .admin_gid = 1000, .read_gid = 2000 };

	if (s)
		return s;
	log_init("fuzz", 0, 0);
	s = rpc_server_new("fuzzd", "0");
	rpc_server_add_methods(s, methods);
	rpc_server_set_auth(s, &auth);
	rpc_events_init(s);
	return s;
}

/* json-c reads and writes NaN and Infinity even when strict; JSON has neither. */
static int
all_finite(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (!all_finite(json_object_array_get_idx(o, i)))
				return 0;
		return 1;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (!all_finite(v))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

struct json_object *
fuzz_parse_strict(const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != strlen(text) || !all_finite(o)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}
