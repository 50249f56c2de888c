/*
 * libFuzzer target: arbitrary bytes as one request text, through the
 * parser, the envelope checks, authorisation, the parameter policies
 * and the handlers. Whatever comes back must be one JSON value.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz-methods.h"
#include "job.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const struct rpc_peer root = { .uid = 0 };
static const struct rpc_peer reader = { .uid = 1000, .gid = 2000 };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_server *s = fuzz_server();
	struct json_object *a;
	char *out;

	/* Odd sizes come from a reader, who may not change anything. */
	out = rpc_dispatch_text(s, (size & 1) ? &reader : &root, (const char *)data, size);
	if (out) {
		if ((a = fuzz_parse_strict(out)) == NULL)
			abort();
		json_object_put(a);
		free(out);
	}
	job_reset();
	return 0;
}
