/* Helpers shared by the unit suites: temporary files and JSON answers. */
#ifndef NAS_UNIT_UTIL_H
#define NAS_UNIT_UTIL_H

#include <check.h>
#include <json-c/json.h>

/* A fresh directory under $TMPDIR or /tmp; removed by unit_rmtree. */
char	*unit_tmpdir(void);
void	 unit_rmtree(const char *dir);
/* Writes text to dir/name and returns the path (caller frees). */
char	*unit_write(const char *dir, const char *name, const char *text);
/* Parses text that must be one JSON value. */
struct json_object *unit_json(const char *text);
struct rpc_server;
struct rpc_peer;
/* Calls method with params (JSON text or NULL) through the dispatcher. */
struct json_object *unit_call(struct rpc_server *, const struct rpc_peer *,
	    const char *method, const char *params);
/* unit_call, asserting the answer's error code is err (0: a result). */
struct json_object *unit_call_expect(struct rpc_server *, const struct rpc_peer *,
	    const char *method, const char *params, int err);
/* The error code of an answer object, 0 when it carries a result. */
int	 unit_err_code(struct json_object *answer);
const char *unit_err_msg(struct json_object *answer);
/*
 * Clients of a server on the libev default loop, which these drive:
 * every wait runs the loop without blocking and polls the client, for
 * at most a bound that only a hung server reaches.
 */
void	 unit_pump(void);
int	 unit_connect(const char *path);	/* non-blocking once connected */
int	 unit_send_or_cut(int fd, const char *text, size_t len);	/* 0: the server hung up */
void	 unit_send(int fd, const char *text, size_t len);
/* The next line the server sent (no newline, caller frees); NULL at EOF. */
char	*unit_read_line(int fd);
/* Reads until EOF; returns the bytes discarded on the way. */
size_t	 unit_read_to_eof(int fd);
/* Runs the loop a while and asserts the server sent fd nothing. */
void	 unit_assert_silent(int fd);

/*
 * A gate for work on another thread, to prove orders without timing:
 * unit_gate_hold (on the worker) says it is there and waits until the
 * test calls unit_gate_release; unit_gate_wait runs the loop until a
 * worker holds.
 */
void	 unit_gate_init(void);
void	 unit_gate_fini(void);
void	 unit_gate_hold(void);
void	 unit_gate_wait(void);
void	 unit_gate_release(void);
/* Runs the loop a moment. */
void	 unit_spin(void);

/* Runs a suite; the exit status for main. */
int	 unit_run(Suite *);

#endif
