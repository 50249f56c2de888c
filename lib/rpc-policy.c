/*
 * Parameter policies: every method declares its parameters, and the
 * dispatcher checks a request against them before the handler runs,
 * so handlers only ever see well-typed, in-range, known parameters.
 * Error messages name parameters, never their values (one may be secret).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rpc.h"

static const char *const type_names[] = {
	[RPC_STRING] = "string", [RPC_INT] = "integer", [RPC_BOOL] = "boolean",
	[RPC_ARRAY] = "array", [RPC_OBJECT] = "object",
};

const char *
rpc_type_name(enum rpc_type t)
{
	return type_names[t];
}

static int
type_ok(enum rpc_type t, struct json_object *v)
{
	switch (t) {
	case RPC_STRING:
		return json_object_is_type(v, json_type_string);
	case RPC_INT:
		return json_object_is_type(v, json_type_int);
	case RPC_BOOL:
		return json_object_is_type(v, json_type_boolean);
	case RPC_ARRAY:
		return json_object_is_type(v, json_type_array);
	case RPC_OBJECT:
		return json_object_is_type(v, json_type_object);
	}
	return 0;
}

static int fail(char *, size_t, const char *, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
in_choices(const char *const *choices, const char *s)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(choices[i], s) == 0)
			return 1;
	return 0;
}

/* Range and enum checks on a value of the right type. */
static int
check_limits(const struct rpc_param *p, struct json_object *v, char *err, size_t len)
{
	int64_t n;
	char range[64];

	if (p->type == RPC_STRING && p->choices &&
	    !in_choices(p->choices, json_object_get_string(v))) {
		size_t l = (size_t)snprintf(err, len, "parameter '%s' must be one of:",
		    p->name);
		for (int i = 0; p->choices[i] && l < len; i++)
			l += (size_t)snprintf(err + l, len - l, " %s", p->choices[i]);
		return -1;
	}
	if (!p->min && !p->max)
		return 0;
	if (p->type == RPC_INT) {
		/* json-c clamps huge integers; treat out-of-int64 as out of range. */
		n = json_object_get_int64(v);
	} else if (p->type == RPC_STRING) {
		n = json_object_get_string_len(v);
	} else if (p->type == RPC_ARRAY) {
		n = (int64_t)json_object_array_length(v);
	} else {
		return 0;
	}
	if (n >= p->min && n <= p->max)
		return 0;
	snprintf(range, sizeof(range), "%lld..%lld", (long long)p->min, (long long)p->max);
	return fail(err, len, p->type == RPC_INT ?
	    "parameter '%s' is out of range %s" :
	    "parameter '%s' has a length out of range %s", p->name, range);
}

static const struct rpc_param *
find_param(const struct rpc_param *policy, const char *name)
{
	for (const struct rpc_param *p = policy; p && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

int
rpc_policy_check(const struct rpc_param *policy, struct json_object *params,
    char *err, size_t len)
{
	const struct rpc_param *p;
	struct json_object *v;

	if (params && !json_object_is_type(params, json_type_object))
		return fail(err, len, "params must be an object");
	if (params) {
		json_object_object_foreach(params, key, val) {
			(void)val;
			if (find_param(policy, key) == NULL)
				return fail(err, len, "unknown parameter '%s'", key);
		}
	}
	for (p = policy; p && p->name; p++) {
		if (params == NULL || !json_object_object_get_ex(params, p->name, &v)) {
			if (p->flags & RPC_REQUIRED)
				return fail(err, len, "missing parameter '%s'", p->name);
			continue;
		}
		if (!type_ok(p->type, v))
			return fail(err, len, "parameter '%s' must be of type %s",
			    p->name, rpc_type_name(p->type));
		if (check_limits(p, v, err, len) == -1)
			return -1;
	}
	return 0;
}

struct json_object *
rpc_policy_redact(const struct rpc_param *policy, struct json_object *params)
{
	struct json_object *out;
	const struct rpc_param *p;

	if (params == NULL || !json_object_is_type(params, json_type_object))
		return params ? json_object_get(params) : NULL;
	out = json_object_new_object();
	json_object_object_foreach(params, key, val) {
		p = find_param(policy, key);
		if (p && (p->flags & RPC_SECRET))
			json_object_object_add(out, key, json_object_new_string("***"));
		else
			json_object_object_add(out, key, json_object_get(val));
	}
	return out;
}

void
rpc_policy_wipe(const struct rpc_param *policy, struct json_object *params)
{
	struct json_object *v;

	if (params == NULL || !json_object_is_type(params, json_type_object))
		return;
	for (const struct rpc_param *p = policy; p && p->name; p++) {
		if (!(p->flags & RPC_SECRET) ||
		    !json_object_object_get_ex(params, p->name, &v) ||
		    !json_object_is_type(v, json_type_string))
			continue;
		/* json-c owns the buffer; overwrite it before it is freed. */
		explicit_bzero((char *)json_object_get_string(v),
		    (size_t)json_object_get_string_len(v));
	}
}

static struct json_object *
describe_param(const struct rpc_param *p)
{
	struct json_object *o = json_object_new_object(), *a;

	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "type", json_object_new_string(rpc_type_name(p->type)));
	json_object_object_add(o, "required", json_object_new_boolean(p->flags & RPC_REQUIRED));
	if (p->flags & RPC_SECRET)
		json_object_object_add(o, "secret", json_object_new_boolean(1));
	if (p->min || p->max) {
		json_object_object_add(o, p->type == RPC_INT ? "min" : "min_length",
		    json_object_new_int64(p->min));
		json_object_object_add(o, p->type == RPC_INT ? "max" : "max_length",
		    json_object_new_int64(p->max));
	}
	if (p->choices) {
		a = json_object_new_array();
		for (int i = 0; p->choices[i]; i++)
			json_object_array_add(a, json_object_new_string(p->choices[i]));
		json_object_object_add(o, "enum", a);
	}
	if (p->help)
		json_object_object_add(o, "help", json_object_new_string(p->help));
	return o;
}

struct json_object *
rpc_policy_describe(const struct rpc_method *m)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();

	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_object_add(o, "mutates", json_object_new_boolean(m->flags & RPC_MUTATES));
	if (m->help)
		json_object_object_add(o, "help", json_object_new_string(m->help));
	for (const struct rpc_param *p = m->params; p && p->name; p++)
		json_object_array_add(a, describe_param(p));
	json_object_object_add(o, "params", a);
	return o;
}
