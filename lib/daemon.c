/*
 * The part every daemon shares: command line, configuration, logging,
 * the API socket and its signals. A daemon supplies a struct nas_daemon
 * and calls nas_daemon_main() from its main().
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "job.h"
#include "secret.h"
#include "rpc-socket.h"

static const char *const log_levels[] = { "error", "warning", "info", "debug", NULL };

const struct conf_key nas_common_conf[] = {
	{ "api", "admin_group", CONF_STRING, "nasadmin", 0, 32, NULL,
	  "group allowed to call methods that change things (root always may)" },
	{ "api", "read_group", CONF_STRING, "nas", 0, 32, NULL,
	  "group allowed to call read-only methods; owns the socket" },
	{ "api", "max_clients", CONF_INT, NAS_STR(CONFIG_NAS_MAX_CLIENTS), 1, 4096, NULL,
	  "connections served at once; more are refused" },
	{ "api", "max_clients_per_uid", CONF_INT, NAS_STR(CONFIG_NAS_MAX_CLIENTS_PER_UID),
	  1, 4096, NULL, "connections one user may hold at once" },
	{ "api", "reserved_clients", CONF_INT, NAS_STR(CONFIG_NAS_RESERVED_CLIENTS),
	  0, 4095, NULL, "last places of max_clients (at most half) kept for root "
	  "and the admin group" },
	/* The default is the daemon's own when it sets one (struct nas_daemon). */
	{ "api", "max_request_bytes", CONF_INT, NAS_STR(CONFIG_NAS_MAX_REQUEST),
	  1024, 16777216, NULL, "largest request line" },
	{ "api", "client_timeout_ms", CONF_INT, NAS_STR(CONFIG_NAS_CLIENT_TIMEOUT_MS),
	  100, 600000, NULL, "time allowed to finish sending a started request" },
	{ "api", "output_limit_bytes", CONF_INT, NAS_STR(CONFIG_NAS_OUTPUT_LIMIT),
	  65536, 67108864, NULL, "unread output after which a client is cut off" },
	{ "api", "write_timeout_ms", CONF_INT, NAS_STR(CONFIG_NAS_WRITE_TIMEOUT_MS),
	  100, 3600000, NULL, "time queued output may wait unread before the client "
	  "is cut off" },
	{ "api", "memory_budget_bytes", CONF_INT, NAS_STR(CONFIG_NAS_MEMORY_BUDGET),
	  1048576, 1073741824, NULL, "memory for requests being read and queued output, "
	  "all clients together" },
	{ "log", "level", CONF_ENUM, "info", 0, 0, log_levels,
	  "error, warning, info or debug" },
	{ "log", "syslog", CONF_BOOL, "yes", 0, 0, NULL, "also log to syslog" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static struct {
	const struct nas_daemon	*d;
	struct conf_key		 common[32];	/* nas_common_conf with the daemon's defaults */
	char			 max_request_def[24];
	struct rpc_server	*srv;
	struct conf		*conf;
	struct nas_sockfile	 sock;
	char			 conf_path[512];
	int			 conf_given;
	const char		*sockdir;
	int			 foreground, debug;
	ev_signal		 sigterm, sigint, sighup;
} D;

struct rpc_server *
nas_daemon_server(void)
{
	return D.srv;
}

const char *
nas_sockdir(void)
{
	return D.sockdir ? D.sockdir : CONFIG_NAS_SOCKET_DIR;
}

struct ev_loop *
nas_loop(void)
{
	return EV_DEFAULT;
}

static void
usage(const char *name)
{
	fprintf(stderr, "usage: %s [-dfn] [-c file] [-S socket-dir]\n", name);
	exit(2);
}

static gid_t
group_id(const char *name, const char *what)
{
	struct group *g;

	if (name[0] == '\0')
		return (gid_t)-1;
	if ((g = getgrnam(name)) == NULL) {
		log_info("%s '%s' does not exist: nobody is authorised through it", what, name);
		return (gid_t)-1;
	}
	return g->gr_gid;
}

/* The common keys, with the defaults this daemon gives some of them. */
static void
common_schema(void)
{
	size_t i;

	for (i = 0; nas_common_conf[i].section; i++) {
		if (i + 1 >= sizeof(D.common) / sizeof(D.common[0]))
			fatalx("too many common configuration keys");
		D.common[i] = nas_common_conf[i];
		if (D.d->max_request && strcmp(D.common[i].key, "max_request_bytes") == 0) {
			snprintf(D.max_request_def, sizeof(D.max_request_def), "%zu",
			    D.d->max_request);
			D.common[i].def = D.max_request_def;
		}
	}
	D.common[i] = nas_common_conf[i];
}

static struct conf *
load_conf(char *err, size_t errlen)
{
	const struct conf_key *schemas[] = { D.common, D.d->conf, NULL };

	if (D.d->conf == NULL)
		schemas[1] = NULL;
	return conf_load(D.conf_path, schemas, !D.conf_given, err, errlen);
}

/* Applies the [api] and [log] sections; returns the socket's group. */
static gid_t
apply_common(const struct conf *c)
{
	/* What [api] does not name (the rpc_call_later limits) stays. */
	struct rpc_limits lim = *rpc_server_limits(D.srv);
	struct rpc_auth auth;
	enum log_level lvl = LOG_LVL_INFO;

	log_level_parse(conf_str(c, "log", "level"), &lvl);
	log_set_level(D.debug ? LOG_LVL_DEBUG : lvl);
	log_init(D.d->name, D.foreground, conf_bool(c, "log", "syslog") || !D.foreground);
	auth.admin_gid = group_id(conf_str(c, "api", "admin_group"), "admin group");
	auth.read_gid = group_id(conf_str(c, "api", "read_group"), "read group");
	rpc_server_set_auth(D.srv, &auth);
	lim.max_clients = (int)conf_int(c, "api", "max_clients");
	lim.max_request = (size_t)conf_int(c, "api", "max_request_bytes");
	lim.client_timeout_ms = (int)conf_int(c, "api", "client_timeout_ms");
	lim.output_limit = (size_t)conf_int(c, "api", "output_limit_bytes");
	lim.max_clients_per_uid = (int)conf_int(c, "api", "max_clients_per_uid");
	lim.reserved_clients = (int)conf_int(c, "api", "reserved_clients");
	lim.write_timeout_ms = (int)conf_int(c, "api", "write_timeout_ms");
	lim.memory_budget = (size_t)conf_int(c, "api", "memory_budget_bytes");
	rpc_server_set_limits(D.srv, &lim);
	return auth.read_gid != (gid_t)-1 ? auth.read_gid : auth.admin_gid;
}

/* A read_group changed on SIGHUP: the socket file follows it. */
static void
regroup_socket(gid_t gid)
{
	char err[512];

	switch (nas_sockfile_set_group(&D.sock, gid, err, sizeof(err))) {
	case -1:
		log_warnx("the socket keeps its group: %s", err);
		break;
	case 1:
		log_info("%s now belongs to group %u, mode 0660", D.sock.path,
		    (unsigned)(gid == (gid_t)-1 ? getegid() : gid));
		break;
	}
}

/* SIGHUP: a bad new file is reported and the running config kept. */
static void
reload(void)
{
	char err[512];
	struct conf *c;

	if ((c = load_conf(err, sizeof(err))) == NULL) {
		log_warnx("reload refused, keeping the running configuration: %s", err);
		return;
	}
	if (D.d->reload && D.d->reload(c) == -1) {
		log_warnx("reload refused by %s, keeping the running configuration",
		    D.d->name);
		conf_free(c);
		return;
	}
	regroup_socket(apply_common(c));
	conf_free(D.conf);
	D.conf = c;
	log_info("configuration reloaded from %s", D.conf_path);
}

static void
signal_cb(struct ev_loop *l, ev_signal *w, int revents)
{
	(void)revents;
	if (w->signum == SIGHUP) {
		reload();
		return;
	}
	log_info("signal %d: stopping", w->signum);
	ev_break(l, EVBREAK_ALL);
}

static void
info_cb(struct json_object *r, void *arg)
{
	(void)arg;
	json_object_object_add(r, "config", json_object_new_string(D.conf_path));
	if (D.d->info)
		D.d->info(r);
}

static void
daemonize(void)
{
	int fd;

	if (daemon(0, 1) == -1)
		fatal("daemon");
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > 2)
			close(fd);
	}
}

/*
 * The directory was checked at start, the file is bound root's (the
 * umask makes it 0660), then held and given to the group by
 * descriptor: no path lookup that a symlink could redirect.
 */
static int
open_socket(const char *dir, gid_t gid)
{
	char path[512], err[512];

	snprintf(path, sizeof(path), "%s/%s.sock", dir, D.d->name);
	if (rpc_server_listen(D.srv, path, (gid_t)-1) == -1) {
		log_warn("cannot listen on %s", path);
		return -1;
	}
	if (nas_sockfile_open(&D.sock, path, err, sizeof(err)) == -1 ||
	    nas_sockfile_set_group(&D.sock, gid, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		rpc_server_close(D.srv);
		return -1;
	}
	log_info("%s %s listening on %s", D.d->name, NAS_VERSION, path);
	return 0;
}

static void
watch_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	ev_signal_init(&D.sigterm, signal_cb, SIGTERM);
	ev_signal_init(&D.sigint, signal_cb, SIGINT);
	ev_signal_init(&D.sighup, signal_cb, SIGHUP);
	ev_signal_start(EV_DEFAULT, &D.sigterm);
	ev_signal_start(EV_DEFAULT, &D.sigint);
	ev_signal_start(EV_DEFAULT, &D.sighup);
}

int
nas_daemon_main(const struct nas_daemon *d, int argc, char **argv)
{
	const char *sockdir = CONFIG_NAS_SOCKET_DIR;
	char err[512];
	int ch, check_only = 0;
	gid_t gid;

	/*
	 * Before anything is read: any daemon may be handed a passphrase
	 * (every request passes through libnas), and a core dump or a
	 * ptrace by another process of our uid would read it back.
	 */
	if (secret_no_core_dumps() == -1)
		fatal("cannot turn core dumps off");
	D.d = d;
	D.sock.fd = -1;
	/*
	 * Client buffers grow to megabytes and shrink again: mapped apart
	 * (grown by copy: secret.c's realloc wipes the old block, so no
	 * mremap), they go back to the system when freed
	 * instead of fragmenting the heap. A fixed threshold also stops
	 * glibc from raising it after the first large free.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	common_schema();
	snprintf(D.conf_path, sizeof(D.conf_path), "%s/%s.ini", CONFIG_NAS_CONFIG_DIR, d->name);
	while ((ch = getopt(argc, argv, "c:dfnS:")) != -1) {
		switch (ch) {
		case 'c':
			snprintf(D.conf_path, sizeof(D.conf_path), "%s", optarg);
			D.conf_given = 1;
			break;
		case 'd': D.debug = 1; break;
		case 'f': D.foreground = 1; break;
		case 'n': check_only = 1; break;
		case 'S': sockdir = optarg; break;
		default: usage(d->name);
		}
	}
	if (optind != argc)
		usage(d->name);
	log_init(d->name, 1, 0);
	if ((D.conf = load_conf(err, sizeof(err))) == NULL) {
		log_msg(LOG_LVL_ERR, "%s", err);
		return 1;
	}
	if (check_only) {
		conf_print(D.conf, stdout);
		conf_free(D.conf);
		return 0;
	}
	if ((D.srv = rpc_server_new(d->name, NAS_VERSION)) == NULL)
		fatal("rpc_server_new");
	gid = apply_common(D.conf);
	for (int i = 0; d->methods && d->methods[i]; i++)
		rpc_server_add_methods(D.srv, d->methods[i]);
	rpc_server_set_info(D.srv, info_cb, NULL);
	rpc_events_init(D.srv);
	/* Before init: a daemon that will not start touches no disk. */
	D.sockdir = sockdir;
	if (nas_sockdir_check(sockdir, err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return 1;
	}
	if (d->init && d->init(D.conf) == -1)
		fatalx("%s: initialisation failed", d->name);
	/* The socket first: whoever starts us learns of a failure to listen. */
	if (open_socket(sockdir, gid) == -1)
		return 1;
	if (!D.foreground) {
		daemonize();
		ev_loop_fork(EV_DEFAULT);
	}
	watch_signals();
	ev_run(EV_DEFAULT, 0);
	/* A child left running would hold devices a restarted daemon needs. */
	nas_spawn_stop_all(NAS_CHILD_GRACE);
	if (d->fini)
		d->fini();
	job_reset();
	rpc_server_free(D.srv);
	nas_sockfile_close(&D.sock);
	conf_free(D.conf);
	log_info("stopped");
	return 0;
}
