/* The method table both fuzz targets serve: every kind of policy. */
#ifndef NAS_FUZZ_METHODS_H
#define NAS_FUZZ_METHODS_H

#include "rpc.h"

/* A server with the table below, events and jobs; made once. */
struct rpc_server *fuzz_server(void);
/* Parses text as strict JSON (no NaN, no single quotes); NULL if it is not. */
struct json_object *fuzz_parse_strict(const char *);

#endif
