/*
 * Secrets (passphrases) and params text: never from argv, held only in
 * locked buffers nasctl wipes, and never handed to json-c, whose
 * buffers are freed unwiped. A secret is read from the terminal with
 * echo off, or as one line from standard input or a file; a request
 * that carries one is spliced together here as text (session.c sends
 * it through rpc_client_call_text, which wipes its copy).
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "nasctl.h"

#define PAGE		4096

/* A process that holds a secret leaves no core and cannot be ptraced. */
static void
no_dumps(void)
{
	struct rlimit zero = { 0, 0 };

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setrlimit(RLIMIT_CORE, &zero);
}

/* Room for len more bytes; a move wipes the old copy. */
int
locked_reserve(struct locked *b, size_t more)
{
	size_t cap = b->cap ? b->cap : PAGE;
	char *p;

	if (b->p && b->len + more <= b->cap)
		return 0;
	while (cap < b->len + more)
		cap *= 2;
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	no_dumps();
	madvise(p, cap, MADV_DONTDUMP);
	/* Best effort: RLIMIT_MEMLOCK may be small for a user. */
	mlock(p, cap);
	if (b->p)
		memcpy(p, b->p, b->len);
	locked_free(&(struct locked){ b->p, b->len, b->cap });
	b->p = p;
	b->cap = cap;
	return 0;
}

void
locked_free(struct locked *b)
{
	if (b->p == NULL)
		return;
	explicit_bzero(b->p, b->cap);
	munlock(b->p, b->cap);
	munmap(b->p, b->cap);
	memset(b, 0, sizeof(*b));
}

int
locked_add(struct locked *b, const char *s, size_t n)
{
	if (locked_reserve(b, n + 1) == -1)
		return -1;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* s as a JSON string, quotes included, written straight into b. */
static int
locked_add_json(struct locked *b, const char *s, size_t n)
{
	char esc[8];

	if (locked_reserve(b, n * 6 + 3) == -1)
		return -1;
	b->p[b->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = (char)c;
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			memcpy(b->p + b->len, esc, 6);
			b->len += 6;
		} else
			b->p[b->len++] = (char)c;
	}
	b->p[b->len++] = '"';
	b->p[b->len] = '\0';
	explicit_bzero(esc, sizeof(esc));
	return 0;
}

/* ---- reading a secret ---- */

static const int tty_signals[] = {
	SIGALRM, SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU
};
#define NTTYSIG	(int)(sizeof(tty_signals) / sizeof(tty_signals[0]))
static volatile sig_atomic_t caught[NSIG];

static void
on_signal(int s)
{
	caught[s] = 1;
}

/* To the terminal; a descriptor opened read-only has stderr instead. */
static void
say(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) == -1 && write(STDERR_FILENO, s, strlen(s)) == -1)
		return;
}

/*
 * One line from fd into b (which must be empty), without its newline,
 * byte by byte so nothing past it is consumed and no stdio buffer holds
 * a copy. With mask, the signals are blocked but while ppoll waits: one
 * that comes any time ends the read (a plain read would miss one that
 * came just before it). 0, -1 on a read error or a signal, -2 when too
 * long.
 */
static int
read_line(int fd, const sigset_t *mask, struct locked *b, int *eof)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char ch;
	ssize_t n;
	int rc = 0;

	*eof = 0;
	if (locked_reserve(b, SECRET_MAX + 1) == -1)
		return -1;
	for (;;) {
		if (mask && ppoll(&pfd, 1, NULL, mask) == -1) {
			rc = -1;
			break;
		}
		if ((n = read(fd, &ch, 1)) == -1) {
			rc = -1;
			break;
		}
		if (n == 0) {
			*eof = 1;
			break;
		}
		if (ch == '\n')
			break;
		if (b->len == SECRET_MAX) {
			rc = -2;
			continue;	/* up to the end of the line */
		}
		b->p[b->len++] = ch;
	}
	explicit_bzero(&ch, sizeof(ch));
	b->p[b->len] = '\0';
	return rc;
}

/*
 * Reads from the terminal fd with echo off, the prompt written to it.
 * The terminal and the signal handlers are put back on every path; a
 * signal that came meanwhile is sent again once they are (as OpenBSD's
 * readpassphrase does): a stop is taken with echo on and the prompt
 * starts again after it, anything else ends nasctl as it would have.
 */
static int
tty_read(int fd, const char *prompt, struct locked *b, int *eof)
{
	struct sigaction sa, saved[NTTYSIG];
	struct termios old, quiet;
	sigset_t block, mask;
	int rc, restart, err;

again:
	for (int i = 0; i < NTTYSIG; i++)
		caught[tty_signals[i]] = 0;
	if (tcgetattr(fd, &old) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sa.sa_handler = on_signal;
	for (int i = 0; i < NTTYSIG; i++)
		sigaddset(&block, tty_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &mask);
	for (int i = 0; i < NTTYSIG; i++)
		sigaction(tty_signals[i], &sa, &saved[i]);
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	quiet.c_iflag |= ICRNL;	/* Enter ends the line whatever the mode was */
	if ((rc = tcsetattr(fd, TCSAFLUSH, &quiet)) == 0) {
		say(fd, prompt);
		rc = read_line(fd, &mask, b, eof);
		say(fd, "\n");		/* the newline typed was not echoed */
	}
	err = errno;
	while (tcsetattr(fd, TCSAFLUSH, &old) == -1 && errno == EINTR &&
	    !caught[SIGTTOU])
		continue;
	for (int i = 0; i < NTTYSIG; i++)
		sigaction(tty_signals[i], &saved[i], NULL);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	restart = 0;
	for (int i = 0; i < NTTYSIG; i++) {
		if (!caught[tty_signals[i]])
			continue;
		kill(getpid(), tty_signals[i]);
		restart |= tty_signals[i] == SIGTSTP || tty_signals[i] == SIGTTIN ||
		    tty_signals[i] == SIGTTOU;
	}
	if (restart) {
		explicit_bzero(b->p, b->cap);
		b->len = 0;
		goto again;
	}
	errno = err;
	return rc;
}

/* Constant time: the comparison says nothing about where they differ. */
static int
same(const struct locked *a, const struct locked *b)
{
	unsigned char d = a->len != b->len;

	for (size_t i = 0; i < a->len && i < b->len; i++)
		d |= (unsigned char)(a->p[i] ^ b->p[i]);
	return d == 0;
}

static void
prompt_for(const char *key, const char *before, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", before, key);
	for (char *p = buf; *p; p++)
		if (*p == '_')
			*p = ' ';
	if (*before == '\0' && buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] = (char)(buf[0] - 'a' + 'A');
	strncat(buf, ": ", len - strlen(buf) - 1);
}

static int
checked(struct locked *b, const char *key, int rc, int eof, char *why, size_t len)
{
	if (rc == -2)
		return why_fail(why, len, "%s: longer than %d bytes", key, SECRET_MAX);
	if (rc == -1)
		return why_fail(why, len, "%s: %s", key, strerror(errno));
	if (b->len == 0)
		return why_fail(why, len, "%s: %s", key, eof ? "nothing to read" : "empty");
	if (memchr(b->p, '\0', b->len))
		return why_fail(why, len, "%s: holds a NUL byte", key);
	return 0;
}

int
secret_read(int fd, const char *key, int twice, struct locked *b, char *why, size_t len)
{
	struct locked again = { 0 };
	char prompt[96];
	int rc, eof;

	if (!isatty(fd)) {
		rc = read_line(fd, NULL, b, &eof);
		return checked(b, key, rc, eof, why, len);
	}
	prompt_for(key, "", prompt, sizeof(prompt));
	rc = tty_read(fd, prompt, b, &eof);
	if (checked(b, key, rc, eof, why, len) == -1)
		return -1;
	if (!twice)
		return 0;
	prompt_for(key, "Repeat ", prompt, sizeof(prompt));
	rc = tty_read(fd, prompt, &again, &eof);
	if (rc != 0)
		rc = checked(&again, key, rc, eof, why, len);
	else if (!same(b, &again))
		rc = why_fail(why, len, "%s: the two entries differ", key);
	locked_free(&again);
	return rc;
}

int
secret_read_file(const char *path, int in, const char *key, struct locked *b,
    char *why, size_t len)
{
	int fd, rc;

	if (strcmp(path, "-") == 0)
		return secret_read(in, key, 0, b, why, len);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return why_fail(why, len, "%s: %s: %s", key, path, strerror(errno));
	rc = secret_read(fd, key, 0, b, why, len);
	close(fd);
	return rc;
}

/* ---- the set of secrets of one command ---- */

static struct secret *
secret_add(struct secrets *set, const char *key, char *why, size_t len)
{
	struct secret *s;

	for (int i = 0; i < set->n; i++)
		if (strcmp(set->s[i].key, key) == 0) {
			why_fail(why, len, "secret %s named twice", key);
			return NULL;
		}
	if (*key == '\0') {
		why_fail(why, len, "a secret needs a name");
		return NULL;
	}
	if (set->n == SECRETS_MAX || strlen(key) >= sizeof(s->key)) {
		why_fail(why, len, "%s: at most %d secrets, names of at most %zu bytes",
		    key, SECRETS_MAX, sizeof(s->key) - 1);
		return NULL;
	}
	s = &set->s[set->n++];
	snprintf(s->key, sizeof(s->key), "%s", key);
	return s;
}

int
secrets_read(struct secrets *set, int in, const char *key, int twice, const char *file,
    char *why, size_t len)
{
	struct secret *s;

	if ((s = secret_add(set, key, why, len)) == NULL)
		return -1;
	if (file)
		return secret_read_file(file, in, key, &s->val, why, len);
	return secret_read(in, key, twice, &s->val, why, len);
}

/* The secrets a command's table marks, in table order. */
int
secrets_from_args(struct secrets *set, int in, const struct arg *args,
    struct json_object *params, struct json_object *local, char *why, size_t len)
{
	struct json_object *file;
	int when;

	for (const struct arg *a = args; a && a->name; a++) {
		if (!(a->flags & ARG_SECRET))
			continue;
		file = json_path(local, a->key);
		when = (a->flags & ARG_WHEN) && a > args &&
		    (json_path(params, a[-1].key) || json_path(local, a[-1].key));
		if (file == NULL && !(a->flags & ARG_REQUIRED) && !when)
			continue;
		if (secrets_read(set, in, a->key, a->flags & ARG_NEW,
		    file ? json_object_get_string(file) : NULL, why, len) == -1)
			return -1;
	}
	return 0;
}

void
secrets_free(struct secrets *set)
{
	for (int i = 0; i < set->n; i++)
		locked_free(&set->s[i].val);
	set->n = 0;
}

/*
 * params (compact JSON text of an object, NULL for none) with each
 * secret added as a member, into out: {"a":1} -> {"a":1,"passphrase":"..."}.
 */
int
secrets_splice(const struct secrets *set, const char *params, size_t plen,
    struct locked *out)
{
	int empty;

	if (params == NULL) {
		params = "{}";
		plen = 2;
	}
	while (plen > 0 && strchr(" \t\r\n", params[plen - 1]))
		plen--;
	if (plen < 2 || params[0] != '{' || params[plen - 1] != '}')
		return -1;
	empty = strspn(params + 1, " \t\r\n") == plen - 2;
	if (locked_add(out, params, plen - 1) == -1)
		return -1;
	for (int i = 0; i < set->n; i++) {
		if ((i > 0 || !empty) && locked_add(out, ",", 1) == -1)
			return -1;
		if (locked_add_json(out, set->s[i].key, strlen(set->s[i].key)) == -1 ||
		    locked_add(out, ":", 1) == -1 ||
		    locked_add_json(out, set->s[i].val.p, set->s[i].val.len) == -1)
			return -1;
	}
	return locked_add(out, "}", 1);
}

/* ---- params text: read, checked and made one line ---- */

int
params_read(const char *path, int in, struct locked *b, char *why, size_t len)
{
	ssize_t n;
	int fd = in;

	if (strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return why_fail(why, len, "%s: %s", path, strerror(errno));
	for (;;) {
		if (locked_reserve(b, PAGE + 1) == -1) {
			n = -1;
			break;
		}
		n = read(fd, b->p + b->len, PAGE);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		b->len += (size_t)n;
		if (b->len > PARAMS_MAX) {
			errno = EFBIG;
			n = -1;
			break;
		}
	}
	if (fd != in)
		close(fd);
	if (n == -1)
		return why_fail(why, len, "%s: %s", path, errno == EFBIG ?
		    "larger than " PARAMS_MAX_TEXT : strerror(errno));
	b->p[b->len] = '\0';
	return 0;
}

/*
 * A strict JSON (RFC 8259) checker that also drops the whitespace
 * outside strings, in place: the text goes to the daemon as it is, on
 * one line, and never through json-c. Keys of the top object found in
 * reserved are refused (they come from --secret).
 */
struct jcheck {
	char			*s;
	size_t			 pos, out, len;
	int			 depth;
	const char		*what;
	const char *const	*reserved;
	const char		*dup;		/* the reserved name found */
	int			 line;
	size_t			 bol;		/* where line begins */
};

#define JDEPTH	31	/* the daemons' json-c nests 32 deep, the request object included */

static int value(struct jcheck *);

/* Newlines only occur here (not in strings): count them for errors. */
static void
skip_ws(struct jcheck *j)
{
	while (j->pos < j->len && strchr(" \t\r\n", j->s[j->pos]) && j->s[j->pos]) {
		if (j->s[j->pos] == '\n') {
			j->line++;
			j->bol = j->pos + 1;
		}
		j->pos++;
	}
}

static int
expect(struct jcheck *j, const char *what)
{
	j->what = what;
	return -1;
}

static void
emit(struct jcheck *j, size_t n)
{
	memmove(j->s + j->out, j->s + j->pos, n);
	j->out += n;
	j->pos += n;
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
string(struct jcheck *j)
{
	size_t start = j->pos;
	unsigned char c;

	if (j->pos >= j->len || j->s[j->pos] != '"')
		return expect(j, "a string");
	j->pos++;
	while (j->pos < j->len && (c = (unsigned char)j->s[j->pos]) != '"') {
		if (c < 0x20)
			return expect(j, "no control character in a string");
		if (c == '\\') {
			if (j->pos + 1 >= j->len ||
			    !strchr("\"\\/bfnrtu", j->s[j->pos + 1]) || !j->s[j->pos + 1])
				return expect(j, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
			if (j->s[j->pos + 1] == 'u') {
				for (int i = 2; i < 6; i++)
					if (j->pos + (size_t)i >= j->len || !is_hex(j->s[j->pos + i]))
						return expect(j, "four hex digits after \\u");
				j->pos += 4;
			}
			j->pos++;
		}
		j->pos++;
	}
	if (j->pos >= j->len)
		return expect(j, "the end of the string");
	j->pos++;
	memmove(j->s + j->out, j->s + start, j->pos - start);
	j->out += j->pos - start;
	return 0;
}

static size_t
digits(struct jcheck *j)
{
	size_t n = 0;

	while (j->pos + n < j->len && j->s[j->pos + n] >= '0' && j->s[j->pos + n] <= '9')
		n++;
	return n;
}

static int
number(struct jcheck *j)
{
	size_t n;

	if (j->s[j->pos] == '-')
		emit(j, 1);
	if ((n = digits(j)) == 0 || (n > 1 && j->s[j->pos] == '0'))
		return expect(j, "a value");
	emit(j, n);
	if (j->pos < j->len && j->s[j->pos] == '.') {
		emit(j, 1);
		if ((n = digits(j)) == 0)
			return expect(j, "a digit after '.'");
		emit(j, n);
	}
	if (j->pos < j->len && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
		emit(j, 1);
		if (j->pos < j->len && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
			emit(j, 1);
		if ((n = digits(j)) == 0)
			return expect(j, "a digit in the exponent");
		emit(j, n);
	}
	return 0;
}

/* The key just copied, at s[from, out), is one of the reserved names. */
static int
is_reserved(struct jcheck *j, size_t from)
{
	struct json_object *k;
	char buf[256];
	int hit = 0;

	if (j->reserved == NULL || j->depth != 1 || j->out - from >= sizeof(buf))
		return 0;
	/* A key is no secret: json-c may decode its escapes. */
	memcpy(buf, j->s + from, j->out - from);
	buf[j->out - from] = '\0';
	if ((k = json_tokener_parse(buf)) == NULL)
		return 0;
	for (int i = 0; j->reserved[i]; i++)
		if (strcmp(json_object_get_string(k), j->reserved[i]) == 0) {
			j->dup = j->reserved[i];
			hit = 1;
		}
	json_object_put(k);
	return hit;
}

static int
members(struct jcheck *j, char open, char close)
{
	size_t key;

	if (++j->depth > JDEPTH)
		return expect(j, "at most 31 levels of nesting");
	emit(j, 1);
	skip_ws(j);
	if (j->pos < j->len && j->s[j->pos] == close) {
		emit(j, 1);
		j->depth--;
		return 0;
	}
	for (;;) {
		skip_ws(j);
		if (open == '{') {
			key = j->out;
			if (string(j) == -1)
				return -1;
			if (is_reserved(j, key))
				return expect(j, "another member");
			skip_ws(j);
			if (j->pos >= j->len || j->s[j->pos] != ':')
				return expect(j, "':'");
			emit(j, 1);
			skip_ws(j);
		}
		if (value(j) == -1)
			return -1;
		skip_ws(j);
		if (j->pos < j->len && j->s[j->pos] == close) {
			emit(j, 1);
			j->depth--;
			return 0;
		}
		if (j->pos >= j->len || j->s[j->pos] != ',')
			return expect(j, close == '}' ? "',' or '}'" : "',' or ']'");
		emit(j, 1);
	}
}

static int
value(struct jcheck *j)
{
	static const char *const words[] = { "true", "false", "null", NULL };
	char c;

	skip_ws(j);
	if (j->pos >= j->len)
		return expect(j, "a value");
	c = j->s[j->pos];
	if (c == '{')
		return members(j, '{', '}');
	if (c == '[')
		return members(j, '[', ']');
	if (c == '"')
		return string(j);
	for (int i = 0; words[i]; i++)
		if (strncmp(j->s + j->pos, words[i], strlen(words[i])) == 0) {
			emit(j, strlen(words[i]));
			return 0;
		}
	return number(j);
}

int
params_check(struct locked *b, const char *const *reserved, char *why, size_t len)
{
	struct jcheck j = { b->p, 0, 0, b->len, 0, NULL, reserved, NULL, 1, 0 };
	size_t col;
	int rc;

	skip_ws(&j);
	if (j.pos >= j.len || j.s[j.pos] != '{')
		rc = expect(&j, "a JSON object");
	else if ((rc = value(&j)) == 0) {
		skip_ws(&j);
		if (j.pos < j.len)
			rc = expect(&j, "nothing after the object");
	}
	if (rc == -1) {
		/* The text itself is never quoted: it may hold a secret. */
		col = j.pos - j.bol + 1;
		if (j.dup)
			return why_fail(why, len, "line %d, column %zu: %s is given by --secret too",
			    j.line, col, j.dup);
		return why_fail(why, len, "line %d, column %zu: expected %s", j.line, col, j.what);
	}
	explicit_bzero(b->p + j.out, b->len - j.out);
	b->len = j.out;
	return 0;
}
