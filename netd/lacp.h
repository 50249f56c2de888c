/*
 * lacp.c: what a bond's kernel state means. Names of modes, hash
 * policies and LACP port-state bits, whether a port is in the bundle, and
 * the diagnosis: a stable code and plain words for each problem found.
 * Pure functions of struct net_bond, tested on recorded kernel states.
 */
#ifndef NETD_LACP_H
#define NETD_LACP_H

#include <json-c/json.h>

#include "system.h"

/* LACP port state bits (IEEE 802.1AX), as IFLA_BOND_SLAVE_AD_*_OPER_PORT_STATE. */
#define LACP_ACTIVITY		0x01
#define LACP_TIMEOUT		0x02
#define LACP_AGGREGATION	0x04
#define LACP_SYNC		0x08
#define LACP_COLLECTING		0x10
#define LACP_DISTRIBUTING	0x20
#define LACP_DEFAULTED		0x40
#define LACP_EXPIRED		0x80

#define BOND_MODE_LACP		4	/* 802.3ad */
/* One port carrying more than this share of the bytes, with SINGLE_MIN_BYTES moved. */
#define SINGLE_PORT_SHARE	0.90
#define SINGLE_MIN_BYTES	(4ULL << 20)

extern const char *const bond_mode_names[];	/* by BOND_MODE_*, NULL-terminated */
extern const char *const bond_hash_names[];	/* by BOND_XMIT_POLICY_* */
extern const char *const bond_rate_names[];	/* slow, fast */
extern const char *const bond_select_names[];	/* ad_select: stable, bandwidth, count */
/* Modes with a primary port: active-backup, balance-tlb, balance-alb. */
#define BOND_MODE_HAS_PRIMARY(m)	((m) == 1 || (m) == 5 || (m) == 6)
/* The index of name in a NULL-terminated table, or -1. */
int	name_index(const char *const *table, const char *name);
/* The name at index i, or "unknown". */
const char *name_at(const char *const *table, int i);

/* The set bits of an LACP port state by name: ["activity", "aggregation", ...]. */
struct json_object *lacp_state_json(int state);
/* 1 when the port is in the active aggregator, collecting and distributing. */
int	lacp_in_bundle(const struct net_bond *, const struct net_bond_port *);

struct bond_diag {
	const char	*code;	/* no-partner, port-not-aggregated, churn, speed-mismatch,
				   link-down, single-port-traffic */
	char		 message[256];
};
#define BOND_DIAG_MAX	(2 * NET_BOND_PORTS + 4)

/*
 * The problems of b now. before, when not NULL, is an earlier look at the
 * same bond: the byte counters' growth since then shows whether one port
 * carries nearly everything (single-port-traffic). Returns the count.
 */
int	lacp_diagnose(const struct net_bond *b, const struct net_bond *before,
	    struct bond_diag *out, int max);

#endif
