/*
 * nasctl: the command-line client of every daemon's API.
 *   main.c      global options, command lookup, usage
 *   args.c      command-line arguments -> JSON-RPC params
 *   table.c     human output: tables, key/value listings, sizes
 *   session.c   one call to one daemon, errors and exit codes
 *   commands.c  the command table and the generic call-and-render
 *   jobs.c      job list/status/cancel/wait, waiting for a started job
 *   info.c      call, version, methods
 *   events.c    events: subscribe to several daemons and stream
 *   text.c      daemon strings made safe for the terminal
 *   secret.c    secrets and params read from the terminal, stdin or files
 */
#ifndef NASCTL_H
#define NASCTL_H

#include <stdio.h>
#include <json-c/json.h>

#include "client.h"

/* Exit status, documented in nasctl(1). */
#define EXIT_OK			0
#define EXIT_ERROR		1	/* the daemon answered with an error */
#define EXIT_USAGE		2
#define EXIT_UNREACHABLE	3	/* socket missing, refused, timed out */

#define NASCTL_NDAEMONS		4
extern const char *const nasctl_daemons[NASCTL_NDAEMONS + 1];

enum arg_type { ARG_STRING, ARG_INT, ARG_BOOL, ARG_LIST, ARG_JSON };

#define ARG_REQUIRED	0x01	/* an --option that must be given */
#define ARG_OPTIONAL	0x02	/* a positional that may be left out */
#define ARG_REPEAT	0x04	/* collects every occurrence into an array */
#define ARG_LOCAL	0x08	/* for nasctl itself, never sent */
/*
 * A secret (an --option "--passphrase-file"): never taken from argv. Its
 * value on the command line names a file to read it from ("-": standard
 * input); without it, a secret that is ARG_REQUIRED is read from the
 * terminal without echo, or as one line from standard input when that is
 * no terminal. ARG_NEW: a secret being set, asked twice on a terminal.
 */
#define ARG_SECRET	0x10
#define ARG_NEW		0x20
/* A secret asked (as if ARG_REQUIRED) when the option before it is given. */
#define ARG_WHEN	0x40
/* An ARG_BOOL that sends false (--down beside --up, both on one key). */
#define ARG_OFF		0x80

/*
 * One argument of a command: a positional ("NAME") or an option
 * ("--level"); key is the JSON parameter it becomes. A list ends with
 * .name == NULL.
 */
struct arg {
	const char	*name;
	const char	*key;
	enum arg_type	 type;
	unsigned	 flags;
	const char	*meta;		/* value in usage; NULL: upper-cased key */
};

typedef void (*fmt_fn)(struct json_object *, char *buf, size_t len);

/* One column of a table; a list ends with .header == NULL. */
struct column {
	const char	*header;
	const char	*path;		/* member, or dotted path "a.b" */
	fmt_fn		 fmt;		/* NULL: fmt_plain */
	int		 right;		/* right-aligned (numbers, sizes) */
};

/* A buffer for secrets: locked in memory, out of core dumps, wiped. */
struct locked {
	char		*p;
	size_t		 len, cap;
};

#define SECRETS_MAX	4
#define SECRET_MAX	1024	/* bytes of one passphrase */
#define PARAMS_MAX	(1 << 20)
#define PARAMS_MAX_TEXT	"1 MiB"

struct secret {
	char		 key[64];
	struct locked	 val;
};

/* A command's secrets; sent only with a call of method. */
struct secrets {
	const char	*method;
	int		 n;
	struct secret	 s[SECRETS_MAX];
};

struct ctx {
	const char	*sockdir;
	int		 json;
	int		 timeout_ms;	/* per call; < 0: client default */
	FILE		*out, *err;
	int		 in;		/* secrets and params come from it */
	struct secrets	*secrets;
};

struct command;
/* Takes params (what would be sent); local stays the caller's. */
typedef int (*run_fn)(struct ctx *, const struct command *,
	    struct json_object *params, struct json_object *local);

/* One command; the table ends with .noun == NULL. */
struct command {
	const char		*noun;
	const char		*verb;		/* NULL: a one-word command */
	const char		*daemon;	/* NULL: chosen by the run function */
	const char		*method;
	const struct arg	*args;
	const struct column	*cols;		/* list result: one row each */
	const char		*rows;		/* member holding the rows, if any */
	run_fn			 run;		/* NULL: run_generic */
	const char		*help;
};

/* commands.c */
extern const struct command nasctl_commands[];
const struct command *command_find(const char *noun, const char *verb, int *words);
int	noun_known(const char *);
int	command_exec(struct ctx *, const struct command *, int argc, char **argv);
int	run_generic(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
/* Prints a result: JSON with --json, else a table of cols when it is a
 * list (or has one in member key), else a key/value listing. */
void	print_result(struct ctx *, const struct column *cols, const char *key,
	    struct json_object *);
int	call_and_print(struct ctx *, const char *daemon, const char *method,
	    struct json_object *params, const struct column *cols, const char *key);

/* args.c */
/* Writes the message into why; returns -1. */
int	why_fail(char *why, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Fills *params (sent) and *local; 0, or -1 with a message in why. */
int	args_parse(const struct arg *, int argc, char **argv,
	    struct json_object **params, struct json_object **local,
	    char *why, size_t whylen);
void	args_usage(FILE *, const struct command *);

/* text.c */
#define TEXT_MAX	2048	/* an escaped message or value, at most */
/* Whether non-ASCII UTF-8 may be printed as is; from the locale. */
extern int text_utf8;
void	text_init_locale(void);
/* s with controls, DEL, bidi overrides, backslash and bytes that are not
 * UTF-8 escaped (\n, \x1b, \u009b); returns its width in columns. */
size_t	text_escape(const char *s, char *buf, size_t len);
size_t	text_width(const char *);
void	text_print(FILE *, const char *);
/* JSON text (json-c's output) with DEL, C1 and bidi controls as \u
 * escapes and bytes that are not UTF-8 as \ufffd. */
void	json_safe_print(FILE *, const char *);

/* table.c */
void	humanise_bytes(long long, char *buf, size_t len);
void	fmt_plain(struct json_object *, char *, size_t);
void	fmt_size(struct json_object *, char *, size_t);
void	fmt_yesno(struct json_object *, char *, size_t);
void	fmt_percent(struct json_object *, char *, size_t);
void	fmt_list(struct json_object *, char *, size_t);
void	fmt_join(struct json_object *, char *, size_t, const char *sep, fmt_fn);
struct json_object *json_path(struct json_object *, const char *path);
const char *json_str(struct json_object *, const char *path);
void	table_print(FILE *, const struct column *, struct json_object *rows);
void	object_print(FILE *, struct json_object *, int indent);
void	json_print(FILE *, struct json_object *);

/* secret.c */
int	locked_reserve(struct locked *, size_t more);
void	locked_free(struct locked *);
int	locked_add(struct locked *, const char *, size_t);
/* One secret from fd: a terminal is asked (twice when twice), else one
 * line is read. 0, or -1 with why (which never holds the secret). */
int	secret_read(int fd, const char *key, int twice, struct locked *,
	    char *why, size_t len);
/* The first line of path ("-": secret_read of in). */
int	secret_read_file(const char *path, int in, const char *key, struct locked *,
	    char *why, size_t len);
/* Adds secret key to set, read from file when not NULL, else from in. */
int	secrets_read(struct secrets *, int in, const char *key, int twice,
	    const char *file, char *why, size_t len);
int	secrets_from_args(struct secrets *, int in, const struct arg *,
	    struct json_object *params,
	    struct json_object *local, char *why, size_t len);
void	secrets_free(struct secrets *);
/* params (an object's JSON text, NULL for none) with the secrets added. */
int	secrets_splice(const struct secrets *, const char *params, size_t plen,
	    struct locked *out);
/* All of path ("-": in), at most PARAMS_MAX bytes. */
int	params_read(const char *path, int in, struct locked *, char *why, size_t len);
/* Strict JSON, an object, none of reserved as a top member; made one
 * line in place. 0, or -1 with the line and column in why. */
int	params_check(struct locked *, const char *const *reserved, char *why,
	    size_t len);

/* session.c */
int	exit_code_for(int client_code);
struct rpc_client *session_open(struct ctx *, const char *daemon, int *rc);
/* Calls and reports errors on ctx->err; returns an exit code. */
int	session_call(struct ctx *, struct rpc_client *, const char *daemon,
	    const char *method, struct json_object *params,
	    struct json_object **result);
/* The same with params as JSON text; x->secrets are added to it when
 * method is theirs. */
int	session_call_text(struct ctx *, struct rpc_client *, const char *daemon,
	    const char *method, const char *params, size_t len,
	    struct json_object **result);
int	call_once(struct ctx *, const char *daemon, const char *method,
	    struct json_object *params, struct json_object **result);
int	call_quiet(struct ctx *, const char *daemon, const char *method,
	    struct json_object *params, struct json_object **result);

/* jobs.c */
int	run_job_list(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_job_one(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_job_wait(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
/* spare.c */
int	run_spare(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_scrub(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_volume_grow(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_started_job(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	job_id_of(struct json_object *result);

/* info.c */
int	run_call(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_version(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	run_methods(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
void	fmt_params(struct json_object *, char *, size_t);

/* power.c */
int	run_power_history(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
int	spark_step(int seconds);
void	spark_print(FILE *, struct json_object *samples, int utf8);
/* net.c */
int	run_net_apply(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);

/* events.c */
int	run_events(struct ctx *, const struct command *, struct json_object *,
	    struct json_object *);
void	event_line(FILE *, long long when, const char *daemon, const char *method,
	    struct json_object *params, int json);

#endif
