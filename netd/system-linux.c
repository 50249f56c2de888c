/*
 * The kernel seam on Linux: rtnetlink through libnl-3 route. This file
 * holds the sockets (one for requests, one joined to RTNLGRP_LINK for the
 * monitor), the request helper that keeps the kernel's own errno and
 * extended-ack message, and the ops table; links are in
 * system-linux-link.c, addresses and routes in system-linux-addr.c.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/msg.h>

#include "log.h"
#include "system-linux.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

static struct nl_sock *req_sk, *mon_sk;
static int kernel_errno;

/* Reads the kernel's extended ack (NLMSGERR_ATTR_MSG) after its error. */
static void
ext_ack(const struct nlmsgerr *e)
{
	const struct nlmsghdr *h = (const void *)((const char *)e - NLMSG_HDRLEN);
	size_t off = sizeof(*e), end = h->nlmsg_len - NLMSG_HDRLEN;

	net_set_errmsg("");
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	while (off + sizeof(struct nlattr) <= end) {
		const struct nlattr *a = (const void *)((const char *)e + off);

		if (a->nla_len < sizeof(*a) || off + a->nla_len > end)
			return;
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG &&
		    a->nla_len > sizeof(*a)) {
			char msg[256];
			size_t n = a->nla_len - sizeof(*a);

			if (n >= sizeof(msg))
				n = sizeof(msg) - 1;
			memcpy(msg, (const char *)a + sizeof(*a), n);
			msg[n] = '\0';
			net_set_errmsg(msg);
			return;
		}
		off += NLA_ALIGN(a->nla_len);
	}
}

static int
on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	(void)who;
	(void)arg;
	kernel_errno = -e->error;
	ext_ack(e);
	return NL_STOP;
}

struct nl_sock *
nl_route(void)
{
	int one = 1, err;

	if (req_sk)
		return req_sk;
	if ((req_sk = nl_socket_alloc()) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if ((err = nl_connect(req_sk, NETLINK_ROUTE)) < 0) {
		nl_socket_free(req_sk);
		req_sk = NULL;
		errno = nl_errno(err);
		return NULL;
	}
	/* Best effort: older kernels give no message, only the errno. */
	(void)setsockopt(nl_socket_get_fd(req_sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)setsockopt(nl_socket_get_fd(req_sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl_socket_modify_err_cb(req_sk, NL_CB_CUSTOM, on_error, NULL);
	return req_sk;
}

int
nl_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM:		return ENOMEM;
	case NLE_EXIST:		return EEXIST;
	case NLE_INVAL:		return EINVAL;
	case NLE_RANGE:		return ERANGE;
	case NLE_NODEV:		return ENODEV;
	case NLE_OBJ_NOTFOUND:	return ENOENT;
	case NLE_PERM:		return EPERM;
	case NLE_BUSY:		return EBUSY;
	case NLE_OPNOTSUPP:	return EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:	return EAFNOSUPPORT;
	case NLE_NOADDR:	return EADDRNOTAVAIL;
	case NLE_AGAIN:		return EAGAIN;
	case NLE_NOACCESS:	return EACCES;
	default:		return EIO;
	}
}

int
nl_request(struct nl_msg *msg)
{
	struct nl_sock *sk;
	int err;

	net_set_errmsg("");
	if ((sk = nl_route()) == NULL) {
		nlmsg_free(msg);
		return -1;
	}
	kernel_errno = 0;
	err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (err < 0 || (err = nl_wait_for_ack(sk)) < 0) {
		errno = kernel_errno ? kernel_errno : nl_errno(err);
		return -1;
	}
	return 0;
}

struct nl_cache *
nl_links(void)
{
	struct nl_cache *c;
	struct nl_sock *sk;
	int err;

	if ((sk = nl_route()) == NULL)
		return NULL;
	if ((err = rtnl_link_alloc_cache(sk, AF_UNSPEC, &c)) < 0) {
		errno = nl_errno(err);
		return NULL;
	}
	return c;
}

static int
on_link_msg(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 1;
	return NL_OK;
}

static int
linux_monitor_open(void)
{
	int err;

	if (mon_sk)
		return nl_socket_get_fd(mon_sk);
	if ((mon_sk = nl_socket_alloc()) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	nl_socket_disable_seq_check(mon_sk);
	if ((err = nl_connect(mon_sk, NETLINK_ROUTE)) < 0 ||
	    (err = nl_socket_add_membership(mon_sk, RTNLGRP_LINK)) < 0 ||
	    (err = nl_socket_set_nonblocking(mon_sk)) < 0 ||
	    /* Room for a burst (every port of a bond at once) before ENOBUFS. */
	    (err = nl_socket_set_buffer_size(mon_sk, 1 << 20, 0)) < 0) {
		nl_socket_free(mon_sk);
		mon_sk = NULL;
		errno = nl_errno(err);
		return -1;
	}
	return nl_socket_get_fd(mon_sk);
}

/* Drains the group; a lost message (ENOBUFS) counts as a change. */
static int
linux_monitor_read(int fd)
{
	int any = 0, err;

	(void)fd;
	nl_socket_modify_cb(mon_sk, NL_CB_VALID, NL_CB_CUSTOM, on_link_msg, &any);
	while ((err = nl_recvmsgs_default(mon_sk)) >= 0)
		;
	if (err != -NLE_AGAIN) {
		log_debug("link monitor: %s", nl_geterror(err));
		any = 1;
	}
	return any;
}

const struct net_ops net_linux = {
	.link_list = linux_link_list,
	.link_get = linux_link_get,
	.link_set = linux_link_set,
	.vlan_add = linux_vlan_add,
	.link_del = linux_link_del,
	.addr_list = linux_addr_list,
	.addr_add = linux_addr_add,
	.addr_del = linux_addr_del,
	.route_list = linux_route_list,
	.route_set_default = linux_route_set_default,
	.route_del_default = linux_route_del_default,
	.bond_create = linux_bond_create,
	.bond_get = linux_bond_get,
	.link_set_master = linux_link_set_master,
	.monitor_open = linux_monitor_open,
	.monitor_read = linux_monitor_read,
};
