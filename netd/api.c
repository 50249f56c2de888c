/*
 * netd's API: the method tables with their parameter policies, and the
 * daemon around them. The common methods (system.*, events.*, job.*)
 * come from libnas.
 */
#include <stdlib.h>
#include <string.h>

#include "dhcp.h"
#include "netd.h"
#include "netconf.h"
#include "prom.h"
#include "system-sim.h"

static const char *const bond_paths[] = { "/sys/class/net/bonding_masters",
	"/sys/module/bonding", NULL };

const struct nas_feature netd_features[] = {
	{ "bonding", bond_paths, "load bonding" },
	{ NULL, NULL, NULL }
};

static const struct conf_key netd_conf[] = {
	{ "netd", "board", CONF_STRING, "/etc/board.ini", 1, 255, NULL,
	  "board description: the ports and their names" },
	{ "netd", "resolv_conf", CONF_STRING, "/etc/resolv.conf", 1, 200, NULL,
	  "the file dns.set replaces" },
	{ "netd", "dhcp_client", CONF_STRING, "/bin/udhcpc", 0, 255, NULL,
	  "the DHCPv4 client (busybox udhcpc, by that name); empty: none runs" },
	{ "netd", "dhcp_script", CONF_STRING, "/usr/libexec/netd/udhcpc-script", 1, 255, NULL,
	  "the client's script: it reports each event to netd, which applies the lease" },
	{ "netd", "metrics_dir", CONF_STRING, "/run/nas/metrics", 0, 255, NULL,
	  "node_exporter textfile directory for netd.prom; empty: none" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};

static ev_io monitor_w;

static void
netd_info(struct json_object *r)
{
	nas_feature_report(netd_features, r);
}

static void
load_board(const char *path)
{
	struct board b;
	char err[256];

	if (board_load(path, &b, err, sizeof(err)) == -1) {
		log_warnx("%s: links are listed without the board's port names", err);
		memset(&b, 0, sizeof(b));
	}
	link_set_board(&b);
}

/* The kernel said some link changed: compare and announce. */
static void
monitor_cb(struct ev_loop *l, ev_io *w, int revents)
{
	(void)l;
	(void)revents;
	if (net->monitor_read(w->fd) > 0) {
		link_watch();
		bond_watch();
		netd_metrics_write();
	}
}

/*
 * NETD_SIMULATE="lan1,lan2" runs netd on simulated ports, touching
 * nothing real, for web UI work on any machine.
 */
static void
simulate(const char *spec)
{
	char buf[256], *tok, *save = NULL;
	unsigned char mac[6] = { 0x52, 0x54, 0x00, 0x53, 0x49, 0x00 };

	net = &net_sim;
	sim_reset();
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		mac[5]++;
		if (!ifname_valid(tok) || sim_add_port(tok, mac, 1000) == -1)
			fatalx("NETD_SIMULATE: '%s' is not a new interface name", tok);
	}
	log_warnx("simulating ports %s: nothing real is touched", spec);
}

static int
netd_init(const struct conf *c)
{
	int fd;

	net = &net_linux;
	if (getenv("NETD_SIMULATE"))
		simulate(getenv("NETD_SIMULATE"));
	load_board(conf_str(c, "netd", "board"));
	addr_set_resolv(conf_str(c, "netd", "resolv_conf"));
	/* A simulation runs no client: leases could only touch the real links. */
	dhcp_set_client(getenv("NETD_SIMULATE") ? "" : conf_str(c, "netd", "dhcp_client"),
	    conf_str(c, "netd", "dhcp_script"));
	/* A simulation touches no file either. */
	netconf_set_path(getenv("NETD_SIMULATE") ? "" : conf_path(c));
	netconf_start();
	/* Joined before the first look, so no change falls between the two. */
	if ((fd = net->monitor_open()) == -1)
		log_warn("link monitor: no link.state events");
	else {
		ev_io_init(&monitor_w, monitor_cb, fd, EV_READ);
		ev_io_start(nas_loop(), &monitor_w);
	}
	link_watch_reset();
	bond_watch();
	netd_metrics_set_dir(conf_str(c, "netd", "metrics_dir"));
	netd_metrics_write();
	return 0;
}

static int
netd_reload(const struct conf *c)
{
	load_board(conf_str(c, "netd", "board"));
	addr_set_resolv(conf_str(c, "netd", "resolv_conf"));
	if (getenv("NETD_SIMULATE") == NULL)
		dhcp_set_client(conf_str(c, "netd", "dhcp_client"), conf_str(c, "netd", "dhcp_script"));
	netd_metrics_set_dir(conf_str(c, "netd", "metrics_dir"));
	return 0;
}

static const struct rpc_method *const netd_tables[] = { link_methods, addr_methods, bond_methods,
	netconf_methods, dhcp_methods, NULL };

const struct nas_daemon netd_daemon = {
	.name = "netd",
	.methods = netd_tables,
	.conf = netd_conf,
	.init = netd_init,
	.reload = netd_reload,
	.info = netd_info,
};
