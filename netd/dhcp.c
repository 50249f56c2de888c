/*
 * DHCPv4 through busybox udhcpc (Decision 68). netd runs one client per
 * link as a supervised child: `udhcpc -f -i LINK -s SCRIPT`, its
 * script writing one record per event ("event=bound\nip=...\n\n") to
 * descriptor 9, a pipe only netd and the child hold. The script runs no
 * `ip`: netd checks the lease and applies it through its own seam, so
 * what a server on the LAN says is trusted no more than a disk:
 *
 *   - the address must be a unicast host address of its subnet (not
 *     0/8, 127/8, 169.254/16, multicast, class E or broadcast), the
 *     prefix 8-30, and the subnet must not overlap an address of another
 *     link (a lease must not take the management path over);
 *   - the router must lie in the subnet; it becomes the default route
 *     only when there is none, or it was this lease's;
 *   - at most three name servers, written only when resolv.conf has
 *     none or this link's lease's: the lease that wrote them keeps
 *     them while bound, a second link's server does not take over;
 *   - every other option (static routes, MTU, host and domain names) is
 *     ignored: the script passes only what udhcpc formats from binary.
 *
 * A client that dies is started again after a pause (5 s, doubled up to
 * 60 s until a lease binds; stopped when its link is gone); `leasefail` (no
 * answer) applies the link's fallback address until a lease binds. A
 * lease netd holds past its end (udhcpc's own floor of 122 s, then 10 s
 * more) without a renewal or a deconfig is dropped by netd itself and
 * the client, hung or its report lost, is killed and started again: an
 * address is never kept past its lease on the word of a silent child.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "dhcp.h"
#include "netd.h"
#include "netconf.h"
#include "spawn.h"

#define RECORD_MAX	2048	/* a report longer than this is cut off and dropped */
/* The script's descriptor to netd: udhcpc keeps 3 and 4 for its signal pipe. */
#define REPORT_FD	9
#define RESTART_S	5.0	/* pause before a client that died runs again, */
#define RESTART_MAX	60.0	/* doubled each time up to this until a lease binds */
#define LEASE_FLOOR	122.0	/* udhcpc holds a shorter lease this long (2 * 61 s) */
#define LEASE_GRACE	10.0	/* then waits this long for its deconfig */

struct lease {
	char		link[NET_NAME_MAX];
	int		used;
	struct nas_child *child;
	int		fd;		/* the script's pipe; -1 none */
	ev_io		io;
	ev_timer	restart;
	ev_timer	expiry;		/* the lease's end, when udhcpc said nothing */
	double		pause;		/* before the next restart */
	char		buf[RECORD_MAX];
	size_t		len;
	int		skipping;	/* an overlong record: dropped up to its end */
	char		state[16];	/* requesting, bound, fallback */
	int		has_fallback, fallback_on;
	struct net_addr	fallback;
	int		bound, addr_owned;
	struct net_addr	addr;
	int		has_router, route_owned;
	unsigned char	router[16];
	unsigned char	server[16];
	long long	lease_s;	/* -1: not said */
	int		ndns;		/* the lease's name servers */
	char		dns[3][46];
	time_t		bound_at;
	unsigned	renewals, restarts;
	char		error[160];	/* the last lease refused, and why */
};

static struct lease leases[DHCP_LINKS];
static char client_path[256], script_path[256];
static double lease_floor = LEASE_FLOOR, lease_grace = LEASE_GRACE;
/* The name servers a lease wrote to resolv.conf, and its link. */
static char lease_dns[3][46];
static int nlease_dns = -1;
static char dns_link[NET_NAME_MAX];

static void	spawn_client(struct lease *);

/* Whether the n name servers ip are those the last lease wrote. */
static int
lease_dns_is(const char (*ip)[46], int n)
{
	if (n != nlease_dns)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(ip[i], lease_dns[i]) != 0)
			return 0;
	return 1;
}

void
dhcp_set_client(const char *client, const char *script)
{
	snprintf(client_path, sizeof(client_path), "%s", client);
	snprintf(script_path, sizeof(script_path), "%s", script);
}

void
dhcp_set_lease_floor(double floor_s, double grace_s)
{
	lease_floor = floor_s;
	lease_grace = grace_s;
}

static time_t
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static struct lease *
lease_of(const char *link)
{
	for (int i = 0; i < DHCP_LINKS; i++)
		if (leases[i].used && strcmp(leases[i].link, link) == 0)
			return &leases[i];
	return NULL;
}

static uint32_t
v4(const unsigned char *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static uint32_t
mask_of(int prefix)
{
	if (prefix >= 32)
		return 0xffffffffu;
	return prefix <= 0 ? 0 : 0xffffffffu << (32 - prefix);
}

/* An IPv4 address a host may have or be sent to: not 0/8, 127/8, 169.254/16, 224+. */
static int
unicast4(const unsigned char *a)
{
	return a[0] != 0 && a[0] != 127 && a[0] < 224 && !(a[0] == 169 && a[1] == 254);
}

/* "a.b.c.d" into a (16 bytes, IPv4 in the first 4); -1 when it is not one. */
static int
parse4(const char *s, unsigned char a[16])
{
	memset(a, 0, 16);
	return inet_pton(AF_INET, s, a) == 1 ? 0 : -1;
}

/* ---- applying and removing ---- */

/* Whether the main table's IPv4 default route is via gw on link; *any: one exists. */
static int
default_is(const unsigned char *gw, const char *link, int *any)
{
	struct net_route *rs;
	int n, found = 0;

	*any = 0;
	if (net->route_list(&rs, &n) == -1)
		return -1;
	for (int i = 0; i < n; i++) {
		if (rs[i].family != AF_INET || rs[i].dst_len != 0)
			continue;
		*any = 1;
		if (rs[i].has_gw && memcmp(rs[i].gw, gw, 4) == 0 && strcmp(rs[i].link, link) == 0)
			found = 1;
	}
	free(rs);
	return found;
}

static void
drop_route(struct lease *l)
{
	int any;

	if (l->route_owned && default_is(l->router, l->link, &any) == 1 &&
	    net->route_del_default(AF_INET) == -1)
		log_warn("dhcp %s: removing the default route", l->link);
	l->route_owned = 0;
	l->has_router = 0;
}

static void
drop_addr(struct lease *l)
{
	if (l->addr_owned && net->addr_del(&l->addr) == -1 && errno != EADDRNOTAVAIL)
		log_warn("dhcp %s: removing the lease's address", l->link);
	l->addr_owned = 0;
	l->bound = 0;
}

static void
drop_fallback(struct lease *l)
{
	if (l->fallback_on && net->addr_del(&l->fallback) == -1 && errno != EADDRNOTAVAIL)
		log_warn("dhcp %s: removing the fallback address", l->link);
	l->fallback_on = 0;
}

/* The lease's name servers leave resolv.conf if they are still what it holds. */
static void
drop_dns(void)
{
	char now[3][46];
	int n;

	if (nlease_dns <= 0)
		return;
	if ((n = dns_read(now, 3)) > 0 && lease_dns_is((const char (*)[46])now, n) &&
	    dns_write((const char (*)[46])now, 0) == -1)
		log_warn("dhcp: emptying resolv.conf");
	nlease_dns = -1;
}

/*
 * resolv.conf's name servers become link's n servers ip, unless they
 * were set by hand (dns.set, netd.ini): those stay, and no lease owns
 * resolv.conf until they are emptied.
 */
static void
write_lease_dns(const char *link, const char (*ip)[46], int n)
{
	char now[3][46];
	int have = dns_read(now, 3);

	if (have > 0 && !lease_dns_is((const char (*)[46])now, have)) {
		nlease_dns = -1;
		return;
	}
	if (dns_write(ip, n) == -1) {
		log_warn("dhcp: writing resolv.conf");
		return;
	}
	memcpy(lease_dns, ip, sizeof(lease_dns));
	nlease_dns = n;
	snprintf(dns_link, sizeof(dns_link), "%s", link);
}

/*
 * The name servers of l's lease go with it; another bound lease's take
 * their place (the first that has some), or resolv.conf is emptied.
 */
static void
drop_lease_dns(struct lease *l)
{
	l->ndns = 0;
	if (nlease_dns <= 0 || strcmp(dns_link, l->link) != 0)
		return;
	for (int i = 0; i < DHCP_LINKS; i++)
		if (&leases[i] != l && leases[i].used && leases[i].bound && leases[i].ndns > 0) {
			write_lease_dns(leases[i].link, (const char (*)[46])leases[i].dns,
			    leases[i].ndns);
			return;
		}
	drop_dns();
}

static void
drop_lease(struct lease *l)
{
	ev_timer_stop(nas_loop(), &l->expiry);
	drop_route(l);
	drop_addr(l);
	drop_lease_dns(l);
	l->lease_s = -1;
}

/* The address: a link's address on another link whose subnet overlaps a's, or NULL. */
static int
overlaps_other(const struct lease *l, const struct net_addr *a, char *who, size_t len)
{
	struct net_addr *as;
	int n, found = 0;

	if (net->addr_list(&as, &n) == -1)
		return -1;
	for (int i = 0; i < n && !found; i++) {
		int p = as[i].prefix < a->prefix ? as[i].prefix : a->prefix;
		char ip[64];

		if (as[i].family != AF_INET || strcmp(as[i].link, l->link) == 0)
			continue;
		if (((v4(as[i].addr) ^ v4(a->addr)) & mask_of(p)) != 0)
			continue;
		ip_format(AF_INET, as[i].addr, ip, sizeof(ip));
		snprintf(who, len, "%s/%d on %s", ip, as[i].prefix, as[i].link);
		found = 1;
	}
	free(as);
	return found;
}

/* What the record says, checked; -1 with l->error set. */
struct offer {
	struct net_addr	addr;
	int		has_router;
	unsigned char	router[16];
	int		ndns;
	char		dns[3][46];
	long long	lease_s;
	unsigned char	server[16];
};

static const char *
field(const char *rec, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);

	/* The first line of key: the script writes each once, in a fixed order. */
	for (const char *p = rec; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, k) == 0 && p[k] == '=') {
			size_t n = strcspn(p + k + 1, "\n");

			if (n >= len)
				return NULL;
			memcpy(out, p + k + 1, n);
			out[n] = '\0';
			return out;
		}
	return NULL;
}

static int
refuse(struct lease *l, const char *fmt, const char *arg)
{
	char a[100];

	/* A server's value, cut short: the message stays whole. */
	snprintf(a, sizeof(a), "%.48s", arg);
	snprintf(l->error, sizeof(l->error), fmt, a);
	log_warnx("dhcp %s: lease refused: %s", l->link, l->error);
	return -1;
}

static int
check_offer(struct lease *l, const char *rec, struct offer *o)
{
	char v[256], who[96], *tok, *save = NULL;
	unsigned char mask[16];
	uint32_t m, net_, host;
	int prefix;

	memset(o, 0, sizeof(*o));
	o->lease_s = -1;
	if (field(rec, "ip", v, sizeof(v)) == NULL || parse4(v, o->addr.addr) == -1)
		return refuse(l, "no IPv4 address%s", "");
	if (!unicast4(o->addr.addr))
		return refuse(l, "%s is not a unicast host address", v);
	if (field(rec, "subnet", v, sizeof(v)) == NULL || parse4(v, mask) == -1)
		return refuse(l, "no subnet mask%s", "");
	m = v4(mask);
	for (prefix = 0; prefix < 32 && (m & (0x80000000u >> prefix)); prefix++)
		;
	if (m != mask_of(prefix))
		return refuse(l, "subnet mask %s is not contiguous", v);
	if (prefix < 8 || prefix > 30)
		return refuse(l, "subnet mask %s: netd takes prefixes 8-30", v);
	host = v4(o->addr.addr) & ~m;
	if (host == 0 || host == ~m)
		return refuse(l, "the address is its subnet's network or broadcast address%s", "");
	o->addr.family = AF_INET;
	o->addr.prefix = prefix;
	snprintf(o->addr.link, sizeof(o->addr.link), "%s", l->link);
	if (overlaps_other(l, &o->addr, who, sizeof(who)) == 1)
		return refuse(l, "its subnet overlaps %s", who);
	net_ = v4(o->addr.addr) & m;
	if (field(rec, "router", v, sizeof(v)) && *v) {
		if (parse4(v, o->router) == -1 || !unicast4(o->router) ||
		    (v4(o->router) & m) != net_ || (v4(o->router) & ~m) == ~m ||
		    (v4(o->router) & ~m) == 0 || v4(o->router) == v4(o->addr.addr))
			log_warnx("dhcp %s: router %.46s is not a host of the lease's subnet: "
			    "no default route", l->link, v);
		else
			o->has_router = 1;
	}
	if (field(rec, "dns", v, sizeof(v)))
		for (tok = strtok_r(v, " ", &save); tok && o->ndns < 3; tok = strtok_r(NULL, " ", &save)) {
			unsigned char a[16];

			if (parse4(tok, a) == 0 && a[0] != 0 && a[0] < 224)
				ip_format(AF_INET, a, o->dns[o->ndns++], sizeof(o->dns[0]));
		}
	if (field(rec, "lease", v, sizeof(v)) && *v) {
		char *end;
		long long s = strtoll(v, &end, 10);

		if (*end == '\0' && s > 0 && s <= 0xffffffffLL)
			o->lease_s = s;
	}
	if (field(rec, "serverid", v, sizeof(v)))
		(void)parse4(v, o->server);
	return 0;
}

static void
apply_router(struct lease *l, const struct offer *o)
{
	int any, ours;
	char gw[64];

	if (!o->has_router) {
		drop_route(l);
		return;
	}
	ours = l->route_owned ? default_is(l->router, l->link, &any) : 0;
	if (ours == -1 || (default_is(o->router, l->link, &any) == 0 && any && !ours)) {
		/* Another default route (static, or another link's): it stays. */
		log_info("dhcp %s: a default route exists: the lease's router is not installed",
		    l->link);
		l->route_owned = 0;
		return;
	}
	memcpy(l->router, o->router, 16);
	l->has_router = 1;
	if (net->route_set_default(AF_INET, o->router) == -1) {
		ip_format(AF_INET, o->router, gw, sizeof(gw));
		log_warn("dhcp %s: default route via %s", l->link, gw);
		l->route_owned = 0;
		return;
	}
	l->route_owned = 1;
}

/*
 * The lease's name servers are written when resolv.conf has none or this
 * link's lease's. Another link's lease keeps them while it is bound: a
 * server on a second port does not take name resolution over (at each
 * of its renewals, as it did) from the lease that has it.
 */
static void
apply_dns(struct lease *l, const struct offer *o)
{
	memcpy(l->dns, o->dns, sizeof(l->dns));
	l->ndns = o->ndns;
	if (o->ndns == 0 || (nlease_dns > 0 && strcmp(dns_link, l->link) != 0))
		return;
	write_lease_dns(l->link, (const char (*)[46])l->dns, l->ndns);
}

static int
apply_lease(struct lease *l, const char *rec, int renew)
{
	struct offer o;
	char ip[64];

	if (check_offer(l, rec, &o) == -1)
		return -1;
	drop_fallback(l);
	if (l->bound && (memcmp(l->addr.addr, o.addr.addr, 4) || l->addr.prefix != o.addr.prefix)) {
		drop_route(l);
		drop_addr(l);
	}
	if (!l->bound) {
		l->addr = o.addr;
		l->addr_owned = 1;
		if (net->addr_add(&o.addr) == -1) {
			l->addr_owned = 0;
			if (errno != EEXIST) {
				snprintf(l->error, sizeof(l->error), "adding the address: %s",
				    strerror(errno));
				log_warn("dhcp %s: adding the lease's address", l->link);
				return -1;
			}
			/* Already there (a static address): it stays when the lease goes. */
		}
		l->bound = 1;
	}
	apply_router(l, &o);
	apply_dns(l, &o);
	l->lease_s = o.lease_s;
	ev_timer_stop(nas_loop(), &l->expiry);
	if (o.lease_s > 0) {
		ev_timer_set(&l->expiry, (o.lease_s > lease_floor ? (double)o.lease_s :
		    lease_floor) + lease_grace, 0.);
		ev_timer_start(nas_loop(), &l->expiry);
	}
	memcpy(l->server, o.server, 16);
	l->bound_at = mono();
	l->error[0] = '\0';
	l->pause = RESTART_S;
	if (renew)
		l->renewals++;
	snprintf(l->state, sizeof(l->state), "bound");
	ip_format(AF_INET, o.addr.addr, ip, sizeof(ip));
	log_info("dhcp %s: %s %s/%d, lease %lld s", l->link, renew ? "renewed" : "bound", ip,
	    o.addr.prefix, o.lease_s);
	return 0;
}

static void
apply_fallback(struct lease *l)
{
	if (!l->has_fallback || l->fallback_on || l->bound)
		return;
	if (net->addr_add(&l->fallback) == -1) {
		if (errno != EEXIST) {
			log_warn("dhcp %s: adding the fallback address", l->link);
			return;
		}
		/* There already (set by hand): not the client's to remove. */
	} else
		l->fallback_on = 1;
	snprintf(l->state, sizeof(l->state), "fallback");
	log_info("dhcp %s: no lease: fallback address applied", l->link);
}

int
dhcp_report(const char *link, const char *rec)
{
	struct lease *l = lease_of(link);
	char ev[16];

	if (l == NULL)
		return 0;	/* stopped meanwhile */
	if (field(rec, "event", ev, sizeof(ev)) == NULL)
		return refuse(l, "a report without an event%s", "");
	if (!strcmp(ev, "bound"))
		return apply_lease(l, rec, 0);
	if (!strcmp(ev, "renew"))
		return apply_lease(l, rec, l->bound);
	if (!strcmp(ev, "deconfig")) {
		/* At start, and when the lease is lost: the address goes. */
		if (l->bound)
			log_info("dhcp %s: lease lost", l->link);
		drop_lease(l);
		if (!l->fallback_on)
			snprintf(l->state, sizeof(l->state), "requesting");
		return 0;
	}
	if (!strcmp(ev, "leasefail")) {
		apply_fallback(l);
		return 0;
	}
	return 0;	/* nak: a deconfig follows */
}

/* ---- the client ---- */

static void
close_pipe(struct lease *l)
{
	if (l->fd == -1)
		return;
	ev_io_stop(nas_loop(), &l->io);
	close(l->fd);
	l->fd = -1;
	l->len = 0;
	l->skipping = 0;
}

/*
 * The records in l->buf: each ends with an empty line; one that does not
 * fit is dropped whole. fd is the pipe the bytes came from (-1: fed by
 * dhcp_feed). -1 when a report stopped the client meanwhile.
 */
static int
frame(struct lease *l, int fd)
{
	char *end;

	while ((end = memmem(l->buf, l->len, "\n\n", 2)) != NULL) {
		char link[NET_NAME_MAX];
		size_t used = (size_t)(end - l->buf) + 2;

		*end = '\0';
		snprintf(link, sizeof(link), "%s", l->link);
		/* A NUL byte cuts a record short: it is not udhcpc's, dropped. */
		if (!l->skipping && memchr(l->buf, '\0', (size_t)(end - l->buf)) == NULL)
			(void)dhcp_report(link, l->buf);
		l->skipping = 0;
		if (lease_of(link) != l || l->fd != fd)
			return -1;	/* stopped by what the report did */
		memmove(l->buf, l->buf + used, l->len - used + 1);
		l->len -= used;
	}
	if (l->len == sizeof(l->buf) - 1) {
		log_warnx("dhcp %s: a report longer than %d bytes: dropped", l->link, RECORD_MAX);
		l->skipping = 1;
		/* Keep the last byte: it may be the first newline of the end. */
		l->buf[0] = l->buf[l->len - 1];
		l->len = 1;
	}
	return 0;
}

static void
pipe_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct lease *l = w->data;
	ssize_t n;

	(void)loop;
	(void)revents;
	n = read(l->fd, l->buf + l->len, sizeof(l->buf) - 1 - l->len);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			close_pipe(l);
		return;
	}
	l->len += (size_t)n;
	l->buf[l->len] = '\0';
	(void)frame(l, l->fd);
}

int
dhcp_feed(const char *link, const void *data, size_t n)
{
	struct lease *l = lease_of(link);
	const char *p = data;

	if (l == NULL || l->fd != -1)
		return errno = l ? EBUSY : ESRCH, -1;
	while (n > 0) {
		size_t k = sizeof(l->buf) - 1 - l->len;

		k = k < n ? k : n;
		memcpy(l->buf + l->len, p, k);
		l->len += k;
		l->buf[l->len] = '\0';
		p += k;
		n -= k;
		if (frame(l, -1) == -1)
			return 0;
	}
	return 0;
}

/*
 * The lease ran out and udhcpc, which deconfigures at that moment, said
 * nothing: hung, or its report lost. The address goes now; the client
 * is killed, and exit_cb starts it again.
 */
static void
expiry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct lease *l = w->data;

	(void)loop;
	(void)revents;
	log_warnx("dhcp %s: the lease ran out with no word from udhcpc: dropped, client "
	    "started again", l->link);
	drop_lease(l);
	snprintf(l->error, sizeof(l->error), "the lease ran out with no word from udhcpc");
	snprintf(l->state, sizeof(l->state), "requesting");
	apply_fallback(l);
	if (l->child)
		kill(nas_child_pid(l->child), SIGKILL);
}

static void
restart_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	spawn_client(w->data);
}

/* The last line of the client's output, for the log. */
static void
last_line(const char *output, char *buf, size_t len)
{
	size_t n = strlen(output);
	const char *p;

	while (n > 0 && output[n - 1] == '\n')
		n--;
	for (p = output + n; p > output && p[-1] != '\n'; p--)
		;
	snprintf(buf, len, "%.*s", (int)(output + n - p), p);
}

static void	stop_one(struct lease *);

static void
exit_cb(int status, const char *output, void *arg)
{
	struct lease *l = arg;
	struct net_link k;
	char tail[160];

	last_line(output, tail, sizeof(tail));
	l->child = NULL;
	close_pipe(l);
	if (net->link_get(l->link, &k) == 1) {
		/* Its link was deleted (a bond, a VLAN): nothing to run on. */
		log_info("dhcp %s: the link is gone: client stopped", l->link);
		stop_one(l);
		return;
	}
	log_warnx("dhcp %s: udhcpc %s %d%s%s: started again in %.0f s", l->link,
	    WIFSIGNALED(status) ? "killed by signal" : "exited with",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
	    *tail ? ": " : "", tail, l->pause);
	drop_lease(l);
	l->restarts++;
	snprintf(l->state, sizeof(l->state), l->fallback_on ? "fallback" : "requesting");
	ev_timer_set(&l->restart, l->pause, 0.);
	ev_timer_start(nas_loop(), &l->restart);
	/* A client that cannot run at all is not started every 5 s for ever. */
	l->pause = l->pause * 2 > RESTART_MAX ? RESTART_MAX : l->pause * 2;
}

static void
spawn_client(struct lease *l)
{
	char *argv[] = { client_path, "-f", "-i", l->link, "-s", script_path,
		"-t", "3", "-T", "2", "-A", "10", NULL };
	int p[2];

	if (*client_path == '\0')
		return;	/* leases come through dhcp_report alone */
	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("dhcp %s: pipe", l->link);
		return;
	}
	if ((l->child = nas_child_start_fd(argv, p[1], REPORT_FD, exit_cb, l)) == NULL) {
		log_warn("dhcp %s: starting %s", l->link, client_path);
		close(p[0]);
		close(p[1]);
		ev_timer_set(&l->restart, RESTART_S, 0.);
		ev_timer_start(nas_loop(), &l->restart);
		return;
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	l->fd = p[0];
	ev_io_init(&l->io, pipe_cb, l->fd, EV_READ);
	l->io.data = l;
	ev_io_start(nas_loop(), &l->io);
}

int
dhcp_fallback_parse(const char *s, struct net_addr *a, char *why, size_t len)
{
	uint32_t host;

	if (cidr_parse(s, a, why, len) == -1)
		return -1;
	host = a->family == AF_INET ? v4(a->addr) & ~mask_of(a->prefix) : 0;
	if (a->family != AF_INET || !unicast4(a->addr) || a->prefix < 8 || a->prefix > 30 ||
	    host == 0 || host == ~mask_of(a->prefix)) {
		snprintf(why, len, "an IPv4 host address (not loopback, link-local or the "
		    "subnet's network or broadcast address) with a prefix of 8-30");
		return -1;
	}
	return 0;
}

int
dhcp_start(const char *link, const struct net_addr *fallback)
{
	struct lease *l = NULL;
	struct net_link k;

	if (lease_of(link)) {
		errno = EBUSY;
		return -1;
	}
	for (int i = 0; i < DHCP_LINKS && l == NULL; i++)
		if (!leases[i].used)
			l = &leases[i];
	if (l == NULL) {
		errno = ENOSPC;
		return -1;
	}
	/* udhcpc sends nothing on a link that is down. */
	if (net->link_get(link, &k) == 0 && !k.up && net->link_set(link, 1, 0) == -1)
		return -1;
	memset(l, 0, sizeof(*l));
	l->used = 1;
	l->fd = -1;
	l->lease_s = -1;
	l->pause = RESTART_S;
	snprintf(l->link, sizeof(l->link), "%s", link);
	snprintf(l->state, sizeof(l->state), "requesting");
	if (fallback) {
		l->has_fallback = 1;
		l->fallback = *fallback;
		snprintf(l->fallback.link, sizeof(l->fallback.link), "%s", link);
	}
	ev_timer_init(&l->restart, restart_cb, RESTART_S, 0.);
	l->restart.data = l;
	ev_timer_init(&l->expiry, expiry_cb, LEASE_FLOOR, 0.);
	l->expiry.data = l;
	spawn_client(l);
	log_info("dhcp %s: client started", link);
	return 0;
}

static void
stop_one(struct lease *l)
{
	ev_timer_stop(nas_loop(), &l->restart);
	close_pipe(l);
	/*
	 * SIGUSR2 first: udhcpc releases the lease, as the address goes
	 * now. Not -R: at netd's own exit the address stays on the link,
	 * so the server must keep the lease too.
	 */
	if (l->child) {
		kill(nas_child_pid(l->child), SIGUSR2);
		nas_child_abandon(l->child, NAS_CHILD_GRACE);
	}
	l->child = NULL;
	drop_lease(l);
	drop_fallback(l);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

int
dhcp_stop(const char *link)
{
	struct lease *l = lease_of(link);

	if (l == NULL) {
		errno = ESRCH;
		return -1;
	}
	stop_one(l);
	log_info("dhcp %s: client stopped", link);
	return 0;
}

int
dhcp_renew(const char *link)
{
	struct lease *l = lease_of(link);

	if (l == NULL) {
		errno = ESRCH;
		return -1;
	}
	/* udhcpc renews (or, unbound, asks again at once) on SIGUSR1. */
	if (l->child == NULL || kill(nas_child_pid(l->child), SIGUSR1) == -1) {
		errno = l->child == NULL ? EAGAIN : errno;
		return -1;
	}
	return 0;
}

int
dhcp_active(const char *link)
{
	return lease_of(link) != NULL;
}

/* Whether link's lease is bound (its address may be how a client reaches us). */
int
dhcp_bound(const char *link)
{
	struct lease *l = lease_of(link);

	return l && (l->bound || l->fallback_on);
}

void
dhcp_reset(void)
{
	for (int i = 0; i < DHCP_LINKS; i++)
		if (leases[i].used)
			stop_one(&leases[i]);
	nlease_dns = -1;
}

/* ---- the running state ---- */

int
dhcp_running(const char *link, struct net_addr *fallback, int *has_fallback)
{
	struct lease *l = lease_of(link);

	if (l == NULL)
		return 0;
	*has_fallback = l->has_fallback;
	if (l->has_fallback)
		*fallback = l->fallback;
	return 1;
}

int
dhcp_owns_addr(const struct net_addr *a)
{
	struct lease *l = lease_of(a->link);

	if (l == NULL || a->family != AF_INET)
		return 0;
	return (l->addr_owned && memcmp(l->addr.addr, a->addr, 4) == 0) ||
	    (l->fallback_on && memcmp(l->fallback.addr, a->addr, 4) == 0);
}

int
dhcp_owns_route(int family, const unsigned char *gw, const char *link)
{
	struct lease *l = lease_of(link);

	return family == AF_INET && l && l->route_owned && memcmp(l->router, gw, 4) == 0;
}

int
dhcp_owns_dns(const char (*ip)[46], int n)
{
	return n > 0 && lease_dns_is(ip, n);
}

/* ---- the API ---- */

static struct json_object *
ip_json(const unsigned char *a)
{
	char ip[64];

	ip_format(AF_INET, a, ip, sizeof(ip));
	return json_object_new_string(ip);
}

struct json_object *
dhcp_describe(const char *link)
{
	struct lease *l = lease_of(link);
	struct json_object *o, *dns;
	char cidr[80], ip[64];

	if (l == NULL)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "state", json_object_new_string(l->state));
	json_object_object_add(o, "client", json_object_new_boolean(l->child != NULL));
	if (l->bound) {
		ip_format(AF_INET, l->addr.addr, ip, sizeof(ip));
		snprintf(cidr, sizeof(cidr), "%s/%d", ip, l->addr.prefix);
		json_object_object_add(o, "address", json_object_new_string(cidr));
		json_object_object_add(o, "router", l->has_router ? ip_json(l->router) : NULL);
		json_object_object_add(o, "default_route", json_object_new_boolean(l->route_owned));
		json_object_object_add(o, "server", ip_json(l->server));
		json_object_object_add(o, "lease_s", l->lease_s >= 0 ?
		    json_object_new_int64(l->lease_s) : NULL);
		json_object_object_add(o, "expires_in_s", l->lease_s >= 0 ?
		    json_object_new_int64(l->lease_s - (mono() - l->bound_at)) : NULL);
		dns = json_object_new_array();
		for (int i = 0; i < l->ndns; i++)
			json_object_array_add(dns, json_object_new_string(l->dns[i]));
		json_object_object_add(o, "dns", dns);
	}
	json_object_object_add(o, "renewals", json_object_new_int64(l->renewals));
	json_object_object_add(o, "restarts", json_object_new_int64(l->restarts));
	if (l->has_fallback) {
		ip_format(AF_INET, l->fallback.addr, ip, sizeof(ip));
		snprintf(cidr, sizeof(cidr), "%s/%d", ip, l->fallback.prefix);
		json_object_object_add(o, "fallback", json_object_new_string(cidr));
	}
	json_object_object_add(o, "fallback_applied", json_object_new_boolean(l->fallback_on));
	json_object_object_add(o, "error", *l->error ? json_object_new_string(l->error) : NULL);
	return o;
}
