/*
 * What a bond's kernel state means, in stable codes and plain words. The
 * rules follow IEEE 802.1AX as the bonding driver implements it: a port
 * is in the bundle when it sits in the active aggregator and is
 * collecting and distributing; a port whose partner information is
 * DEFAULTED has received no LACPDU; 802.3ad aggregates only ports of
 * one speed at full duplex.
 */
#include <stdio.h>
#include <string.h>

#include "lacp.h"
#include "netd.h"

const char *const bond_mode_names[] = { "balance-rr", "active-backup", "balance-xor",
	"broadcast", "802.3ad", "balance-tlb", "balance-alb", NULL };
const char *const bond_hash_names[] = { "layer2", "layer3+4", "layer2+3", "encap2+3",
	"encap3+4", "vlan+srcmac", NULL };
const char *const bond_rate_names[] = { "slow", "fast", NULL };
const char *const bond_select_names[] = { "stable", "bandwidth", "count", NULL };

static const char *const state_bits[] = { "activity", "timeout", "aggregation",
	"synchronization", "collecting", "distributing", "defaulted", "expired" };

int
name_index(const char *const *table, const char *name)
{
	for (int i = 0; table[i]; i++)
		if (strcmp(table[i], name) == 0)
			return i;
	return -1;
}

const char *
name_at(const char *const *table, int i)
{
	for (int k = 0; table[k]; k++)
		if (k == i)
			return table[k];
	return "unknown";
}

struct json_object *
lacp_state_json(int state)
{
	struct json_object *a;

	if (state < 0)
		return NULL;
	a = json_object_new_array();
	for (int b = 0; b < 8; b++)
		if (state & (1 << b))
			json_object_array_add(a, json_object_new_string(state_bits[b]));
	return a;
}

int
lacp_in_bundle(const struct net_bond *b, const struct net_bond_port *p)
{
	return b->has_ad_info && p->carrier && p->aggregator_id == b->ad_aggregator &&
	    p->actor_state >= 0 &&
	    (p->actor_state & (LACP_COLLECTING | LACP_DISTRIBUTING)) ==
	    (LACP_COLLECTING | LACP_DISTRIBUTING);
}

static int
mac_zero(const unsigned char m[6])
{
	static const unsigned char z[6];

	return memcmp(m, z, 6) == 0;
}

static struct bond_diag *
add(struct bond_diag *out, int *n, int max, const char *code)
{
	struct bond_diag *d;

	if (*n >= max)
		return NULL;
	d = &out[(*n)++];
	d->code = code;
	d->message[0] = '\0';
	return d;
}

static void
diag_links(const struct net_bond *b, struct bond_diag *out, int *n, int max)
{
	struct bond_diag *d;

	for (int i = 0; i < b->nports; i++) {
		const struct net_bond_port *p = &b->port[i];

		if (p->carrier)
			continue;
		if ((d = add(out, n, max, "link-down")) != NULL)
			snprintf(d->message, sizeof(d->message), "%s has no link: check its cable "
			    "and the switch port (enabled, not shut down by the switch)", p->name);
	}
}

/* 802.3ad needs one speed and full duplex on every port. */
static void
diag_speed(const struct net_bond *b, struct bond_diag *out, int *n, int max)
{
	const struct net_bond_port *first = NULL;
	struct bond_diag *d;

	for (int i = 0; i < b->nports; i++) {
		const struct net_bond_port *p = &b->port[i];

		if (!p->carrier)
			continue;
		if (strcmp(p->duplex, "full") != 0 && (d = add(out, n, max, "speed-mismatch")))
			snprintf(d->message, sizeof(d->message), "%s %s: 802.3ad aggregates only "
			    "ports known to run at full duplex; set the switch port to "
			    "auto-negotiation%s", p->name, strcmp(p->duplex, "half") == 0 ?
			    "runs at half duplex" : "reports no speed or duplex",
			    strcmp(p->duplex, "half") == 0 ? "" :
			    " (a virtual NIC must be given them: qemu speed=,duplex=)");
		if (p->speed_mbps < 0)
			continue;
		if (first == NULL)
			first = p;
		else if (p->speed_mbps != first->speed_mbps &&
		    (d = add(out, n, max, "speed-mismatch")) != NULL)
			snprintf(d->message, sizeof(d->message), "%s runs at %d Mb/s, %s at %d Mb/s: "
			    "802.3ad aggregates only ports of the same speed; check cables and the "
			    "switch ports' speed settings", first->name, first->speed_mbps,
			    p->name, p->speed_mbps);
	}
}

/* Ports that hear LACP: not defaulted, with carrier. */
static int
partnered(const struct net_bond_port *p)
{
	return p->carrier && p->actor_state >= 0 && !(p->actor_state & LACP_DEFAULTED);
}

static void
diag_lacp(const struct net_bond *b, struct bond_diag *out, int *n, int max)
{
	struct bond_diag *d;
	int up = 0, heard = 0;

	for (int i = 0; i < b->nports; i++) {
		up += b->port[i].carrier;
		heard += partnered(&b->port[i]);
	}
	if (up == 0)
		return;
	if (heard == 0 || !b->has_ad_info || mac_zero(b->ad_partner_mac)) {
		if ((d = add(out, n, max, "no-partner")) != NULL)
			snprintf(d->message, sizeof(d->message), "no LACP partner: the switch sends "
			    "no LACPDUs on %s; put the switch ports in one LACP (802.3ad, "
			    "\"active\" or \"passive\") link aggregation group",
			    up > 1 ? "any port" : "the port");
		return;
	}
	for (int i = 0; i < b->nports; i++) {
		const struct net_bond_port *p = &b->port[i];

		if (!p->carrier)
			continue;
		if (!partnered(p)) {
			if ((d = add(out, n, max, "no-partner")) != NULL)
				snprintf(d->message, sizeof(d->message), "%s receives no LACPDUs "
				    "while the other ports do: its switch port is not in the LACP "
				    "group", p->name);
		} else if (p->aggregator_id != b->ad_aggregator) {
			if ((d = add(out, n, max, "port-not-aggregated")) != NULL)
				snprintf(d->message, sizeof(d->message), "%s is in aggregator %d, "
				    "not the active one (%d): its switch port is in another group "
				    "or another switch; put all the bond's switch ports in one "
				    "LACP group", p->name, p->aggregator_id, b->ad_aggregator);
		} else if (!(p->actor_state & LACP_SYNC) || p->partner_state < 0 ||
		    !(p->partner_state & LACP_SYNC) || !lacp_in_bundle(b, p)) {
			if ((d = add(out, n, max, "churn")) != NULL)
				snprintf(d->message, sizeof(d->message), "%s is not in sync with its "
				    "partner (actor 0x%02x, partner 0x%02x): LACP has not agreed; if "
				    "this lasts, check the switch's LACP settings (keys, timeout) and "
				    "its logs", p->name, p->actor_state & 0xff,
				    p->partner_state < 0 ? 0 : p->partner_state & 0xff);
		}
	}
}

/*
 * One port carried nearly all bytes in one direction since the last look,
 * while several ports were in the bundle.
 */
static void
diag_traffic(const struct net_bond *b, const struct net_bond *before,
    struct bond_diag *out, int *n, int max)
{
	struct bond_diag *d;

	for (int dir = 0; dir < 2; dir++) {
		uint64_t total = 0, top = 0;
		const char *topname = NULL;
		int bundled = 0;

		for (int i = 0; i < b->nports; i++) {
			const struct net_bond_port *p = &b->port[i], *q = NULL;
			uint64_t now, was, delta;

			for (int j = 0; j < before->nports; j++)
				if (strcmp(before->port[j].name, p->name) == 0)
					q = &before->port[j];
			if (q == NULL)
				return;		/* the ports changed: no comparison */
			now = dir ? p->rx_bytes : p->tx_bytes;
			was = dir ? q->rx_bytes : q->tx_bytes;
			delta = now >= was ? now - was : 0;
			total += delta;
			bundled += b->mode != BOND_MODE_LACP || lacp_in_bundle(b, p);
			if (delta > top) {
				top = delta;
				topname = p->name;
			}
		}
		if (bundled < 2 || total < SINGLE_MIN_BYTES || (double)top <= SINGLE_PORT_SHARE * total)
			continue;
		if ((d = add(out, n, max, "single-port-traffic")) != NULL)
			snprintf(d->message, sizeof(d->message), "%s carried %.0f%% of the bytes %s: "
			    "%s", topname, 100.0 * top / total, dir ? "received" : "sent",
			    dir ? "the switch's hash puts the flows on one port; set its load "
			    "balancing to src-dst IP and port (layer 3+4)" :
			    "the hash policy puts the flows on one port; use xmit_hash_policy "
			    "layer3+4 (one TCP flow never uses more than one port)");
	}
}

int
lacp_diagnose(const struct net_bond *b, const struct net_bond *before,
    struct bond_diag *out, int max)
{
	int n = 0;

	diag_links(b, out, &n, max);
	if (b->mode == BOND_MODE_LACP) {
		diag_speed(b, out, &n, max);
		diag_lacp(b, out, &n, max);
	}
	if (before)
		diag_traffic(b, before, out, &n, max);
	return n;
}
