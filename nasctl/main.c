/*
 * nasctl [-S dir] [--json] [--timeout ms] noun verb [args]
 * Global options may also follow the command words; "--" ends them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nasctl.h"

#define USAGE	"usage: nasctl [-S DIR] [--json] [--timeout MS] NOUN VERB [ARGS]\n"

static void
help(FILE *f, const char *noun)
{
	fputs(USAGE, f);
	fputs(noun ? "commands:\n" : "commands (sizes are in powers of 1000):\n", f);
	for (const struct command *c = nasctl_commands; c->noun; c++) {
		if (noun && strcmp(c->noun, noun) != 0)
			continue;
		fputs("  ", f);
		args_usage(f, c);
		fprintf(f, "      %s\n", c->help);
	}
	if (noun == NULL)
		fputs("  nasctl help\n      this list\n", f);
}

/* A noun's commands are few enough to list; all of them are not. */
static int
usage_error(const char *noun, const char *fmt, const char *arg)
{
	fputs("nasctl: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	if (noun)
		help(stderr, noun);
	else
		fputs(USAGE "'nasctl help' lists the commands\n", stderr);
	return EXIT_USAGE;
}

static int
parse_timeout(const char *s, int *ms)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0 || v > 86400000)
		return -1;
	*ms = (int)v;
	return 0;
}

/*
 * Takes the global options out of argv wherever they are; what is left
 * (the command and its arguments) goes to rest. NULL, or the option
 * that is wrong.
 */
static const char *
global_options(struct ctx *x, int argc, char **argv, char **rest, int *nrest)
{
	const char *a;
	int dashdash = 0;

	*nrest = 0;
	for (int i = 1; i < argc; i++) {
		a = argv[i];
		if (dashdash || a[0] != '-')
			rest[(*nrest)++] = argv[i];
		else if (strcmp(a, "--json") == 0)
			x->json = 1;
		else if (strcmp(a, "-S") == 0 && i + 1 < argc)
			x->sockdir = argv[++i];
		else if (strncmp(a, "-S", 2) == 0 && a[2])
			x->sockdir = a + 2;
		else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
			if (parse_timeout(argv[++i], &x->timeout_ms) == -1)
				return a;
		} else if (strncmp(a, "--timeout=", 10) == 0) {
			if (parse_timeout(a + 10, &x->timeout_ms) == -1)
				return a;
		} else if (strcmp(a, "-S") == 0 || strcmp(a, "--timeout") == 0)
			return a;
		else {
			rest[(*nrest)++] = argv[i];
			dashdash |= strcmp(a, "--") == 0;
		}
	}
	rest[*nrest] = NULL;
	return NULL;
}

static int
wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	return 0;
}

static int
run(struct ctx *x, const struct command *c, int argc, char **argv)
{
	if (wants_help(argc, argv)) {
		fputs("usage: ", x->out);
		args_usage(x->out, c);
		fprintf(x->out, "%s\n", c->help);
		return EXIT_OK;
	}
	return command_exec(x, c, argc, argv);
}

static int
dispatch(struct ctx *x, int n, char **rest)
{
	const struct command *c;
	int words;

	if (n == 0)
		return usage_error(NULL, "%s", "no command");
	if (strcmp(rest[0], "help") == 0 || strcmp(rest[0], "-h") == 0 ||
	    strcmp(rest[0], "--help") == 0) {
		help(x->out, n > 1 ? rest[1] : NULL);
		return EXIT_OK;
	}
	if (rest[0][0] == '-')
		return usage_error(NULL, "unknown option %s", rest[0]);
	if ((c = command_find(rest[0], n > 1 ? rest[1] : NULL, &words)) != NULL)
		return run(x, c, n - words, rest + words);
	if (!noun_known(rest[0]))
		return usage_error(NULL, "unknown command '%s'", rest[0]);
	return usage_error(rest[0], "%s: unknown or missing verb", rest[0]);
}

int
main(int argc, char **argv)
{
	struct ctx x = { CONFIG_NAS_SOCKET_DIR, 0, -1, stdout, stderr, STDIN_FILENO, NULL };
	const char *bad, *env = getenv("NAS_SOCKET_DIR");
	char **rest;
	int n, rc;

	if (env && *env)
		x.sockdir = env;
	text_init_locale();
	if ((rest = calloc((size_t)argc + 1, sizeof(*rest))) == NULL)
		return EXIT_ERROR;
	if ((bad = global_options(&x, argc, argv, rest, &n)) != NULL)
		rc = usage_error(NULL, "%s: -S needs a directory, --timeout "
		    "milliseconds (1 or more)", bad);
	else
		rc = dispatch(&x, n, rest);
	free(rest);
	return rc;
}
