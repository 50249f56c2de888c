/* Unit tests for lib/rpc-policy.c: types, presence, ranges, enums, secrets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"
#include "unit-util.h"

#define SECRET	"hunter2-correct-horse"

static const char *const levels[] = { "raid0", "raid1", "jbod", NULL };

static const struct rpc_param policy[] = {
	{ "name", RPC_STRING, RPC_REQUIRED, 1, 16, NULL, "volume name" },
	{ "level", RPC_STRING, 0, 0, 0, levels, "layout" },
	{ "size", RPC_INT, 0, -5, 100, NULL, "a number" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL, "really" },
	{ "disks", RPC_ARRAY, 0, 1, 2, NULL, "bays" },
	{ "opts", RPC_OBJECT, 0, 0, 0, NULL, "anything" },
	{ "any", RPC_INT, 0, 0, 0, NULL, "unchecked range" },
	{ "passphrase", RPC_STRING, RPC_SECRET, 8, 64, NULL, "the key" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static char err[256];

/* Checks text against the policy; returns 0 or -1 with err set. */
static int
check(const char *text)
{
	struct json_object *p = text ? unit_json(text) : NULL;
	int rc;

	err[0] = '\0';
	rc = rpc_policy_check(policy, p, err, sizeof(err));
	json_object_put(p);
	if (rc == 0)
		ck_assert_str_eq(err, "");
	return rc;
}

static void
refused(const char *text, const char *want)
{
	ck_assert_msg(check(text) == -1, "accepted: %s", text);
	ck_assert_str_eq(err, want);
}

START_TEST(minimal_and_full)
{
	ck_assert_int_eq(check("{\"name\":\"v\"}"), 0);
	ck_assert_int_eq(check("{\"name\":\"v\",\"level\":\"raid1\",\"size\":7,"
	    "\"force\":false,\"disks\":[1,2],\"opts\":{\"a\":1},\"any\":-123456789,"
	    "\"passphrase\":\"" SECRET "\"}"), 0);
}
END_TEST

START_TEST(missing_required)
{
	refused(NULL, "missing parameter 'name'");
	refused("{}", "missing parameter 'name'");
	refused("{\"level\":\"jbod\"}", "missing parameter 'name'");
}
END_TEST

START_TEST(extra_param)
{
	refused("{\"name\":\"v\",\"nmae\":\"w\"}", "unknown parameter 'nmae'");
}
END_TEST

START_TEST(no_policy_takes_nothing)
{
	struct json_object *p = unit_json("{\"x\":1}"), *e = unit_json("{}");

	ck_assert_int_eq(rpc_policy_check(NULL, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(rpc_policy_check(NULL, e, err, sizeof(err)), 0);
	ck_assert_int_eq(rpc_policy_check(NULL, p, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "unknown parameter 'x'");
	json_object_put(p);
	json_object_put(e);
}
END_TEST

START_TEST(params_not_object)
{
	refused("[\"v\"]", "params must be an object");
	refused("\"v\"", "params must be an object");
}
END_TEST

START_TEST(wrong_types)
{
	refused("{\"name\":5}", "parameter 'name' must be of type string");
	refused("{\"name\":null}", "parameter 'name' must be of type string");
	refused("{\"name\":\"v\",\"size\":\"5\"}", "parameter 'size' must be of type integer");
	refused("{\"name\":\"v\",\"size\":1.5}", "parameter 'size' must be of type integer");
	refused("{\"name\":\"v\",\"size\":true}", "parameter 'size' must be of type integer");
	refused("{\"name\":\"v\",\"force\":\"true\"}", "parameter 'force' must be of type boolean");
	refused("{\"name\":\"v\",\"force\":1}", "parameter 'force' must be of type boolean");
	refused("{\"name\":\"v\",\"disks\":{}}", "parameter 'disks' must be of type array");
	refused("{\"name\":\"v\",\"opts\":[]}", "parameter 'opts' must be of type object");
}
END_TEST

START_TEST(int_range)
{
	ck_assert_int_eq(check("{\"name\":\"v\",\"size\":-5}"), 0);
	ck_assert_int_eq(check("{\"name\":\"v\",\"size\":100}"), 0);
	ck_assert_int_eq(check("{\"name\":\"v\",\"size\":0}"), 0);
	refused("{\"name\":\"v\",\"size\":-6}", "parameter 'size' is out of range -5..100");
	refused("{\"name\":\"v\",\"size\":101}", "parameter 'size' is out of range -5..100");
	/* json-c clamps integers beyond int64; they must still be out of range. */
	refused("{\"name\":\"v\",\"size\":99999999999999999999}",
	    "parameter 'size' is out of range -5..100");
	refused("{\"name\":\"v\",\"size\":-99999999999999999999}",
	    "parameter 'size' is out of range -5..100");
}
END_TEST

START_TEST(string_and_array_length)
{
	ck_assert_int_eq(check("{\"name\":\"0123456789abcdef\"}"), 0);
	refused("{\"name\":\"\"}", "parameter 'name' has a length out of range 1..16");
	refused("{\"name\":\"0123456789abcdefg\"}",
	    "parameter 'name' has a length out of range 1..16");
	refused("{\"name\":\"v\",\"disks\":[]}",
	    "parameter 'disks' has a length out of range 1..2");
	refused("{\"name\":\"v\",\"disks\":[1,2,3]}",
	    "parameter 'disks' has a length out of range 1..2");
}
END_TEST

START_TEST(enums)
{
	ck_assert_int_eq(check("{\"name\":\"v\",\"level\":\"jbod\"}"), 0);
	refused("{\"name\":\"v\",\"level\":\"raid5\"}",
	    "parameter 'level' must be one of: raid0 raid1 jbod");
	refused("{\"name\":\"v\",\"level\":\"RAID1\"}",
	    "parameter 'level' must be one of: raid0 raid1 jbod");
}
END_TEST

START_TEST(small_error_buffer)
{
	struct json_object *p = unit_json("{\"name\":\"v\",\"level\":\"x\"}");
	char small[12];

	ck_assert_int_eq(rpc_policy_check(policy, p, small, sizeof(small)), -1);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	json_object_put(p);
}
END_TEST

/* Whatever is wrong with a request, the error never quotes the secret. */
START_TEST(secret_never_in_errors)
{
	static const char *const bad[] = {
		"{\"passphrase\":\"" SECRET "\"}",
		"{\"name\":\"v\",\"passphrase\":\"" SECRET SECRET SECRET SECRET "\"}",
		"{\"name\":\"v\",\"passphrase\":\"short\"}",
		"{\"name\":\"v\",\"passphrase\":[\"" SECRET "\"]}",
		"{\"name\":\"v\",\"passphrase\":{\"" SECRET "\":1}}",
		"{\"name\":\"v\",\"passphrase\":\"" SECRET "\",\"bogus\":1}",
		"{\"name\":\"v\",\"passphrase\":\"" SECRET "\",\"size\":1000}",
		"{\"name\":\"v\",\"passphrase\":\"" SECRET "\",\"level\":\"x\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(check(bad[i]) == -1, "accepted: %s", bad[i]);
		ck_assert_msg(strstr(err, "hunter2") == NULL && strstr(err, "short") == NULL,
		    "secret in error: %s", err);
	}
}
END_TEST

START_TEST(redact_hides_secret_only)
{
	struct json_object *p = unit_json("{\"name\":\"v\",\"size\":3,"
	    "\"passphrase\":\"" SECRET "\"}"), *r, *v;

	r = rpc_policy_redact(policy, p);
	ck_assert_ptr_nonnull(strstr(json_object_to_json_string(p), SECRET));
	ck_assert_ptr_null(strstr(json_object_to_json_string(r), "hunter2"));
	ck_assert(json_object_object_get_ex(r, "passphrase", &v));
	ck_assert_str_eq(json_object_get_string(v), "***");
	ck_assert(json_object_object_get_ex(r, "name", &v));
	ck_assert_str_eq(json_object_get_string(v), "v");
	ck_assert(json_object_object_get_ex(r, "size", &v));
	ck_assert_int_eq(json_object_get_int(v), 3);
	json_object_put(r);
	json_object_put(p);
}
END_TEST

/* A secret of the wrong type is hidden too: it is still what the caller typed. */
START_TEST(redact_hides_secret_of_any_type)
{
	struct json_object *p = unit_json("{\"passphrase\":[\"" SECRET "\"]}"), *r;

	r = rpc_policy_redact(policy, p);
	ck_assert_ptr_null(strstr(json_object_to_json_string(r), "hunter2"));
	json_object_put(r);
	json_object_put(p);
}
END_TEST

START_TEST(redact_null_and_non_object)
{
	struct json_object *a = unit_json("[1,2]"), *r;

	ck_assert_ptr_null(rpc_policy_redact(policy, NULL));
	r = rpc_policy_redact(policy, a);
	ck_assert_str_eq(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN), "[1,2]");
	json_object_put(r);
	json_object_put(a);
}
END_TEST

START_TEST(wipe_zeroes_secret)
{
	struct json_object *p = unit_json("{\"name\":\"keepme\","
	    "\"passphrase\":\"" SECRET "\"}"), *v;
	const char *s;
	size_t len;

	ck_assert(json_object_object_get_ex(p, "passphrase", &v));
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	ck_assert_uint_eq(len, strlen(SECRET));
	rpc_policy_wipe(policy, p);
	for (size_t i = 0; i < len; i++)
		ck_assert_msg(s[i] == '\0', "byte %zu not wiped", i);
	ck_assert(json_object_object_get_ex(p, "name", &v));
	ck_assert_str_eq(json_object_get_string(v), "keepme");
	rpc_policy_wipe(policy, NULL);
	json_object_put(p);
}
END_TEST

START_TEST(describe_policy)
{
	static const struct rpc_method m = { "volume.create", NULL, policy, RPC_MUTATES,
	    "make one" };
	struct json_object *d = rpc_policy_describe(&m), *ps, *p, *v;

	ck_assert(json_object_object_get_ex(d, "name", &v));
	ck_assert_str_eq(json_object_get_string(v), "volume.create");
	ck_assert(json_object_object_get_ex(d, "mutates", &v));
	ck_assert(json_object_get_boolean(v));
	ck_assert(json_object_object_get_ex(d, "params", &ps));
	ck_assert_uint_eq(json_object_array_length(ps), 8);
	p = json_object_array_get_idx(ps, 0);
	ck_assert_str_eq(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN),
	    "{\"name\":\"name\",\"type\":\"string\",\"required\":true,"
	    "\"min_length\":1,\"max_length\":16,\"help\":\"volume name\"}");
	p = json_object_array_get_idx(ps, 1);
	ck_assert(json_object_object_get_ex(p, "enum", &v));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
	    "[\"raid0\",\"raid1\",\"jbod\"]");
	p = json_object_array_get_idx(ps, 2);
	ck_assert(json_object_object_get_ex(p, "min", &v));
	ck_assert_int_eq(json_object_get_int(v), -5);
	p = json_object_array_get_idx(ps, 7);
	ck_assert(json_object_object_get_ex(p, "secret", &v));
	ck_assert(json_object_get_boolean(v));
	json_object_put(d);
}
END_TEST

START_TEST(typed_getters)
{
	struct json_object *p = unit_json("{\"s\":\"x\",\"i\":42,\"b\":true,\"w\":\"7\"}");

	ck_assert_str_eq(rpc_param_str(p, "s", "d"), "x");
	ck_assert_str_eq(rpc_param_str(p, "i", "d"), "d");
	ck_assert_str_eq(rpc_param_str(NULL, "s", "d"), "d");
	ck_assert_int_eq(rpc_param_int(p, "i", -1), 42);
	ck_assert_int_eq(rpc_param_int(p, "w", -1), -1);
	ck_assert_int_eq(rpc_param_int(p, "none", -1), -1);
	ck_assert_int_eq(rpc_param_bool(p, "b", 0), 1);
	ck_assert_int_eq(rpc_param_bool(p, "i", 0), 0);
	json_object_put(p);
}
END_TEST

static Suite *
policy_suite(void)
{
	Suite *s = suite_create("rpc-policy");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, minimal_and_full);
	tcase_add_test(tc, missing_required);
	tcase_add_test(tc, extra_param);
	tcase_add_test(tc, no_policy_takes_nothing);
	tcase_add_test(tc, params_not_object);
	tcase_add_test(tc, wrong_types);
	tcase_add_test(tc, int_range);
	tcase_add_test(tc, string_and_array_length);
	tcase_add_test(tc, enums);
	tcase_add_test(tc, small_error_buffer);
	tcase_add_test(tc, secret_never_in_errors);
	tcase_add_test(tc, redact_hides_secret_only);
	tcase_add_test(tc, redact_hides_secret_of_any_type);
	tcase_add_test(tc, redact_null_and_non_object);
	tcase_add_test(tc, wipe_zeroes_secret);
	tcase_add_test(tc, describe_policy);
	tcase_add_test(tc, typed_getters);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(policy_suite());
}
