/*
 * The configuration file at start and after every change, and
 * net.apply/net.confirm: a configuration replaced as a whole, rolled
 * back by itself unless confirmed in time (a switch's commit-confirm),
 * so a web UI that loses the box through a change gets it back.
 *
 * The file follows what is running, except while an apply waits for
 * its confirmation: then it keeps the configuration before the apply,
 * so a reboot in that window also comes back to the old network.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netd.h"
#include "netconf.h"

/* "" until netd_init names the file: no file is written (unit suites, a simulation). */
static char path[256] = "";

static struct {
	int		active;
	struct netconf	prev;		/* the running state before the apply */
	ev_timer	timer;
} pending;

void
netconf_set_path(const char *p)
{
	snprintf(path, sizeof(path), "%s", p);
}

/* Writes the running state to the file; -1 logged. */
static int
save_running(void)
{
	struct netconf c = { 0 };
	int rc = -1;

	if (*path == '\0')
		return 0;	/* no file (a simulation) */
	if (netconf_running(&c) == -1) {
		log_warn("%s: reading the running state", path);
		return -1;
	}
	if ((rc = netconf_save(path, &c)) == -1)
		log_warn("%s: writing", path);
	netconf_free(&c);
	return rc;
}

void
netconf_changed(void)
{
	if (pending.active)
		return;	/* written at net.confirm; a rollback undoes it */
	(void)save_running();
}

void
netconf_start(void)
{
	struct netconf c = { 0 };
	char why[300];
	int found, n;

	if (*path == '\0')
		;	/* a simulation: no file */
	else if (netconf_load(path, &c, &found) == -1)
		log_warnx("%s: the network is left as it is", path);
	else if (!found || c.nlinks + c.has_gw[0] + c.has_gw[1] + c.has_dns == 0)
		log_info("%s: no network sections: the network is left as it is", path);
	else if ((n = netconf_apply_best(&c, why, sizeof(why))) == -1)
		log_warnx("%s: applied without the steps the kernel refused (first: %s)", path, why);
	else
		log_info("%s: applied (%d changes)", path, n);
	netconf_free(&c);
}

static void
rollback_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	char why[300];
	int n;

	(void)l;
	(void)w;
	(void)revents;
	pending.active = 0;
	if ((n = netconf_apply_best(&pending.prev, why, sizeof(why))) == -1)
		log_warnx("net.apply not confirmed: rolled back without the steps the kernel "
		    "refused (first: %s)", why);
	else
		log_warnx("net.apply not confirmed in time: rolled back (%d changes)", n);
	netconf_free(&pending.prev);
	nas_event("net.rollback", NULL);
}

static void
m_net_apply(struct rpc_call *c, struct json_object *params)
{
	struct netconf want = { 0 };
	struct json_object *cfg, *r;
	int confirm = (int)rpc_param_int(params, "confirm_s", 0), n;
	char why[300];

	if (pending.active) {
		rpc_error(c, NAS_ERR_BUSY, "an apply waits for net.confirm (%.0f s left)",
		    ev_timer_remaining(nas_loop(), &pending.timer));
		return;
	}
	json_object_object_get_ex(params, "config", &cfg);
	if (netconf_from_json(cfg, &want, why, sizeof(why)) == -1) {
		rpc_error(c, RPC_INVALID_PARAMS, "config: %s", why);
		return;
	}
	/* Without a way back (confirm_s) a change that may lock the user out needs force. */
	if (confirm == 0 && !rpc_param_bool(params, "force", 0) &&
	    (n = netconf_cuts(&want, why, sizeof(why))) != 0) {
		if (n == -1)
			net_fail(c, "reading the running state");
		else
			rpc_error(c, NAS_ERR_REFUSED, "%s: give confirm_s (rolled back unless "
			    "confirmed) or force", why);
		goto out;
	}
	if (netconf_running(&pending.prev) == -1) {
		net_fail(c, "reading the running state");
		goto out;
	}
	if ((n = netconf_apply(&want, why, sizeof(why))) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s", why);
		goto out;
	}
	if (confirm > 0) {
		pending.active = 1;
		ev_timer_init(&pending.timer, rollback_cb, confirm, 0);
		ev_timer_start(nas_loop(), &pending.timer);
		log_info("net.apply: %d changes, rolled back unless confirmed within %d s",
		    n, confirm);
	} else {
		log_info("net.apply: %d changes", n);
		(void)save_running();
	}
	r = json_object_new_object();
	json_object_object_add(r, "changes", json_object_new_int(n));
	json_object_object_add(r, "confirm_within_s", confirm > 0 ? json_object_new_int(confirm) : NULL);
	rpc_result(c, r);
out:
	if (!pending.active)
		netconf_free(&pending.prev);
	netconf_free(&want);
}

static void
m_net_confirm(struct rpc_call *c, struct json_object *params)
{
	(void)params;
	if (!pending.active) {
		rpc_error(c, NAS_ERR_NOT_FOUND, "no net.apply waits for confirmation");
		return;
	}
	ev_timer_stop(nas_loop(), &pending.timer);
	pending.active = 0;
	netconf_free(&pending.prev);
	if (save_running() == -1) {
		rpc_error(c, NAS_ERR_FAILED, "confirmed, but %s could not be written: %s", path,
		    strerror(errno));
		return;
	}
	log_info("net.apply confirmed");
	rpc_result(c, json_object_new_object());
}

static void
m_net_config(struct rpc_call *c, struct json_object *params)
{
	struct netconf cur = { 0 };
	struct json_object *r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int found;

	(void)params;
	if (netconf_load(path, &cur, &found) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "reading %s", path);
		return;
	}
	if ((f = open_memstream(&text, &len)) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "reading %s", path);
		netconf_free(&cur);
		return;
	}
	netconf_print(&cur, f);
	fclose(f);
	r = json_object_new_object();
	json_object_object_add(r, "path", json_object_new_string(path));
	json_object_object_add(r, "text", json_object_new_string(text ? text : ""));
	json_object_object_add(r, "pending", json_object_new_boolean(pending.active));
	rpc_result(c, r);
	free(text);
	netconf_free(&cur);
}

static const struct rpc_param p_net_apply[] = {
	{ "config", RPC_OBJECT, RPC_REQUIRED, 0, 0, NULL,
	  "the whole configuration: {\"SECTION\": {\"KEY\": value}} as in netd.conf(5)" },
	{ "confirm_s", RPC_INT, 0, 0, 3600, NULL,
	  "roll back unless net.confirm comes within this many seconds (0: keep at once)" },
	{ "force", RPC_BOOL, 0, 0, 0, NULL,
	  "without confirm_s: apply a change that may cut the caller's connection" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method netconf_methods[] = {
	{ "net.apply", m_net_apply, p_net_apply, RPC_MUTATES,
	  "replace the network configuration as a whole, rolled back unless confirmed" },
	{ "net.confirm", m_net_confirm, NULL, RPC_MUTATES, "keep the configuration net.apply made" },
	{ "net.config", m_net_config, NULL, 0, "the network sections of netd.ini, as netd reads them" },
	{ NULL, NULL, NULL, 0, NULL }
};
