/* Addresses and routes on Linux: RTM_{NEW,DEL,GET}ADDR and the main table's routes. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/route/addr.h>
#include <netlink/route/route.h>

#include "system-linux.h"

static size_t
alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

int
linux_addr_list(struct net_addr **out, int *n)
{
	struct nl_cache *c, *lc;
	struct nl_object *o;
	struct nl_sock *sk;
	int i = 0, err;

	if ((sk = nl_route()) == NULL || (lc = nl_links()) == NULL)
		return -1;
	if ((err = rtnl_addr_alloc_cache(sk, &c)) < 0) {
		nl_cache_free(lc);
		errno = nl_errno(err);
		return -1;
	}
	if ((*out = calloc((size_t)nl_cache_nitems(c) + 1, sizeof(**out))) == NULL)
		goto done;
	for (o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;
		struct nl_addr *local = rtnl_addr_get_local(a);
		struct net_addr *d = &(*out)[i];
		int family = rtnl_addr_get_family(a);

		if ((family != AF_INET && family != AF_INET6) || local == NULL ||
		    nl_addr_get_len(local) != alen(family))
			continue;
		d->family = family;
		memcpy(d->addr, nl_addr_get_binary_addr(local), alen(family));
		d->prefix = rtnl_addr_get_prefixlen(a);
		d->dynamic = !(rtnl_addr_get_flags(a) & IFA_F_PERMANENT);
		rtnl_link_i2name(lc, rtnl_addr_get_ifindex(a), d->link, sizeof(d->link));
		i++;
	}
	*n = i;
done:
	nl_cache_free(c);
	nl_cache_free(lc);
	return *out ? 0 : -1;
}

/* An rtnl_addr for a, or NULL with errno set. */
static struct rtnl_addr *
make_addr(const struct net_addr *a)
{
	struct rtnl_addr *r;
	struct nl_addr *local;
	int ifindex;

	if ((ifindex = (int)if_nametoindex(a->link)) == 0) {
		errno = ENODEV;
		return NULL;
	}
	if ((r = rtnl_addr_alloc()) == NULL ||
	    (local = nl_addr_build(a->family, a->addr, alen(a->family))) == NULL) {
		rtnl_addr_put(r);
		errno = ENOMEM;
		return NULL;
	}
	nl_addr_set_prefixlen(local, a->prefix);
	rtnl_addr_set_ifindex(r, ifindex);
	rtnl_addr_set_family(r, a->family);
	rtnl_addr_set_local(r, local);
	rtnl_addr_set_prefixlen(r, a->prefix);
	nl_addr_put(local);
	return r;
}

int
linux_addr_add(const struct net_addr *a)
{
	struct rtnl_addr *r;
	struct nl_msg *msg;
	int err;

	if ((r = make_addr(a)) == NULL)
		return -1;
	err = rtnl_addr_build_add_request(r, NLM_F_EXCL, &msg);
	rtnl_addr_put(r);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}

int
linux_addr_del(const struct net_addr *a)
{
	struct rtnl_addr *r;
	struct nl_msg *msg;
	int err;

	if ((r = make_addr(a)) == NULL)
		return -1;
	err = rtnl_addr_build_delete_request(r, 0, &msg);
	rtnl_addr_put(r);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}

static void
fill_route(struct nl_cache *lc, struct rtnl_route *r, struct net_route *d)
{
	struct nl_addr *dst = rtnl_route_get_dst(r);
	struct rtnl_nexthop *nh;
	struct nl_addr *gw;
	int family = rtnl_route_get_family(r);

	memset(d, 0, sizeof(*d));
	d->family = family;
	if (dst && nl_addr_get_len(dst) == alen(family)) {
		memcpy(d->dst, nl_addr_get_binary_addr(dst), alen(family));
		d->dst_len = (int)nl_addr_get_prefixlen(dst);
	}
	if (rtnl_route_get_nnexthops(r) == 1 && (nh = rtnl_route_nexthop_n(r, 0)) != NULL) {
		rtnl_link_i2name(lc, rtnl_route_nh_get_ifindex(nh), d->link, sizeof(d->link));
		if ((gw = rtnl_route_nh_get_gateway(nh)) != NULL &&
		    nl_addr_get_len(gw) == alen(family)) {
			d->has_gw = 1;
			memcpy(d->gw, nl_addr_get_binary_addr(gw), alen(family));
		}
	}
	rtnl_route_proto2str(rtnl_route_get_protocol(r), d->proto, sizeof(d->proto));
}

int
linux_route_list(struct net_route **out, int *n)
{
	struct nl_cache *c, *lc;
	struct nl_object *o;
	struct nl_sock *sk;
	int i = 0, err;

	if ((sk = nl_route()) == NULL || (lc = nl_links()) == NULL)
		return -1;
	if ((err = rtnl_route_alloc_cache(sk, AF_UNSPEC, 0, &c)) < 0) {
		nl_cache_free(lc);
		errno = nl_errno(err);
		return -1;
	}
	if ((*out = calloc((size_t)nl_cache_nitems(c) + 1, sizeof(**out))) == NULL)
		goto done;
	for (o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		int family = rtnl_route_get_family(r);

		if (rtnl_route_get_table(r) != RT_TABLE_MAIN ||
		    rtnl_route_get_type(r) != RTN_UNICAST ||
		    (family != AF_INET && family != AF_INET6))
			continue;
		fill_route(lc, r, &(*out)[i++]);
	}
	*n = i;
done:
	nl_cache_free(c);
	nl_cache_free(lc);
	return *out ? 0 : -1;
}

int
linux_route_set_default(int family, const unsigned char *gw)
{
	struct rtnl_route *r = NULL;
	struct rtnl_nexthop *nh = NULL;
	struct nl_addr *dst = NULL, *via = NULL;
	struct nl_msg *msg;
	unsigned char zero[16] = { 0 };
	int err = -NLE_NOMEM;

	if (family != AF_INET && family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	if ((r = rtnl_route_alloc()) == NULL || (nh = rtnl_route_nh_alloc()) == NULL ||
	    (dst = nl_addr_build(family, zero, alen(family))) == NULL ||
	    (via = nl_addr_build(family, gw, alen(family))) == NULL)
		goto out;
	nl_addr_set_prefixlen(dst, 0);
	rtnl_route_set_family(r, (uint8_t)family);
	rtnl_route_set_table(r, RT_TABLE_MAIN);
	rtnl_route_set_protocol(r, RTPROT_STATIC);
	rtnl_route_set_scope(r, RT_SCOPE_UNIVERSE);
	rtnl_route_set_type(r, RTN_UNICAST);
	rtnl_route_set_dst(r, dst);
	rtnl_route_nh_set_gateway(nh, via);
	rtnl_route_add_nexthop(r, nh);
	nh = NULL;
	err = rtnl_route_build_add_request(r, NLM_F_REPLACE, &msg);
out:
	if (nh)
		rtnl_route_nh_free(nh);
	nl_addr_put(dst);
	nl_addr_put(via);
	rtnl_route_put(r);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}

int
linux_route_del_default(int family)
{
	struct rtnl_route *r = NULL;
	struct nl_addr *dst = NULL;
	struct nl_msg *msg;
	unsigned char zero[16] = { 0 };
	int err = -NLE_NOMEM;

	if (family != AF_INET && family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	if ((r = rtnl_route_alloc()) != NULL &&
	    (dst = nl_addr_build(family, zero, alen(family))) != NULL) {
		nl_addr_set_prefixlen(dst, 0);
		rtnl_route_set_family(r, (uint8_t)family);
		rtnl_route_set_table(r, RT_TABLE_MAIN);
		rtnl_route_set_scope(r, RT_SCOPE_NOWHERE);
		rtnl_route_set_dst(r, dst);
		err = rtnl_route_build_del_request(r, 0, &msg);
	}
	nl_addr_put(dst);
	rtnl_route_put(r);
	if (err < 0) {
		errno = nl_errno(err);
		return -1;
	}
	return nl_request(msg);
}
