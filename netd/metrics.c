/*
 * netd's metrics for node_exporter's textfile collector
 * (docs/metrics.md): each bond, its ports and their LACP state as the
 * kernel reports them (the same reads as bond.list). Written at start,
 * whenever the kernel says a link changed, and every 5 s: a partner's
 * LACP state can change with no link notification.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lacp.h"
#include "metrics.h"
#include "netd.h"
#include "prom.h"

#define METRICS_EVERY	5.0

static char metrics_dir[256];
static int failed;
static ev_timer every_w;

static const char *const bit_names[8] = {
	"activity", "timeout", "aggregation", "synchronization",
	"collecting", "distributing", "defaulted", "expired"
};

static const char *const mode_names[] = {
	"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad",
	"balance-tlb", "balance-alb"
};

static void
every_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	netd_metrics_write();
}

void
netd_metrics_set_dir(const char *dir)
{
	snprintf(metrics_dir, sizeof(metrics_dir), "%s", dir);
	failed = 0;
	ev_timer_stop(nas_loop(), &every_w);
	if (dir[0] == '\0')
		return;
	ev_timer_init(&every_w, every_cb, METRICS_EVERY, METRICS_EVERY);
	ev_timer_start(nas_loop(), &every_w);
}

static const char *
mode_name(int mode)
{
	return mode >= 0 && mode < (int)(sizeof(mode_names) / sizeof(mode_names[0])) ?
	    mode_names[mode] : "unknown";
}

static void
bonds(struct metrics *m, const struct net_bond *b, int n)
{
	metrics_family(m, "nas_bond_up", "gauge",
	    "1 when the bond is up with carrier, 0 otherwise.");
	for (int i = 0; i < n; i++)
		metrics_add(m, (const char *const[]){ "bond", b[i].name, "mode",
		    mode_name(b[i].mode), NULL }, b[i].up && b[i].carrier);
	metrics_family(m, "nas_bond_port_up", "gauge",
	    "1 when the bonding driver's link monitor sees the port up (MII).");
	for (int i = 0; i < n; i++)
		for (int p = 0; p < b[i].nports; p++)
			metrics_add(m, (const char *const[]){ "bond", b[i].name, "port",
			    b[i].port[p].name, NULL }, b[i].port[p].mii_up);
	metrics_family(m, "nas_bond_port_link_failures_total", "counter",
	    "Link failures the bonding driver counted on the port.");
	for (int i = 0; i < n; i++)
		for (int p = 0; p < b[i].nports; p++)
			metrics_add(m, (const char *const[]){ "bond", b[i].name, "port",
			    b[i].port[p].name, NULL }, b[i].port[p].link_failures);
}

static void
lacp(struct metrics *m, const struct net_bond *b, int n)
{
	metrics_family(m, "nas_bond_port_lacp_in_bundle", "gauge",
	    "802.3ad bonds: 1 when the port carries traffic in the active aggregator.");
	for (int i = 0; i < n; i++)
		for (int p = 0; b[i].mode == BOND_MODE_LACP && p < b[i].nports; p++)
			metrics_add(m, (const char *const[]){ "bond", b[i].name, "port",
			    b[i].port[p].name, NULL }, lacp_in_bundle(&b[i], &b[i].port[p]));
	metrics_family(m, "nas_bond_port_lacp_state", "gauge",
	    "802.3ad bonds: each bit of the actor's and partner's LACP port state (IEEE 802.1AX).");
	for (int i = 0; i < n; i++)
		for (int p = 0; b[i].mode == BOND_MODE_LACP && p < b[i].nports; p++) {
			const struct net_bond_port *q = &b[i].port[p];
			const int st[2] = { q->actor_state, q->partner_state };

			for (int s = 0; s < 2; s++)
				for (int bit = 0; st[s] >= 0 && bit < 8; bit++)
					metrics_add(m, (const char *const[]){ "bond", b[i].name,
					    "port", q->name, "side", s ? "partner" : "actor",
					    "bit", bit_names[bit], NULL }, (st[s] >> bit) & 1);
		}
}

void
netd_metrics_write(void)
{
	struct net_link *ls;
	struct net_bond *b;
	struct metrics *m;
	int n, nb = 0;

	if (metrics_dir[0] == '\0')
		return;
	if (net->link_list(&ls, &n) == -1) {
		log_warn("netd.prom: listing links");
		return;
	}
	if ((b = calloc((size_t)n + 1, sizeof(*b))) == NULL || (m = metrics_new()) == NULL) {
		free(b);
		free(ls);
		return;
	}
	for (int i = 0; i < n; i++)
		if (strcmp(ls[i].kind, "bond") == 0 && net->bond_get(ls[i].name, &b[nb]) == 0)
			nb++;
	free(ls);
	bonds(m, b, nb);
	lacp(m, b, nb);
	free(b);
	metrics_publish(m, metrics_dir, "netd", &failed);
}
