/* Small helpers of netd's API: interface names, addresses, errors. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd.h"

int
ifname_valid(const char *s)
{
	if (*s == '\0' || strlen(s) >= NET_NAME_MAX || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return 0;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s) ||
		    !isprint((unsigned char)*s))
			return 0;
	return 1;
}

int
ifname_conf(const char *s)
{
	if (!ifname_valid(s))
		return 0;
	for (; *s; s++)
		if (isupper((unsigned char)*s) || strchr("[];#=\"'\\", *s) != NULL)
			return 0;
	return 1;
}

int
ip_parse(const char *s, unsigned char out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, out) == 1)
		return AF_INET6;
	return -1;
}

static int
all_zero(const unsigned char *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i])
			return 0;
	return 1;
}

int
cidr_parse(const char *s, struct net_addr *a, char *why, size_t len)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/'), *p;
	size_t n;
	int max;

	memset(a, 0, sizeof(*a));
	if (slash == NULL || (n = (size_t)(slash - s)) == 0 || n >= sizeof(ip)) {
		snprintf(why, len, "address must be ADDRESS/PREFIX (CIDR)");
		return -1;
	}
	memcpy(ip, s, n);
	ip[n] = '\0';
	if ((a->family = ip_parse(ip, a->addr)) == -1) {
		snprintf(why, len, "address is not an IPv4 or IPv6 address");
		return -1;
	}
	max = a->family == AF_INET ? 32 : 128;
	for (p = slash + 1; *p; p++)
		if (!isdigit((unsigned char)*p))
			break;
	if (p == slash + 1 || *p || p - slash > 4 ||
	    (a->prefix = atoi(slash + 1)) < 1 || a->prefix > max) {
		snprintf(why, len, "prefix length must be 1-%d", max);
		return -1;
	}
	if (all_zero(a->addr, a->family == AF_INET ? 4 : 16) ||
	    (a->family == AF_INET && a->addr[0] >= 224) ||
	    (a->family == AF_INET6 && a->addr[0] == 0xff)) {
		snprintf(why, len, "address is unspecified, multicast or reserved");
		return -1;
	}
	return 0;
}

void
ip_format(int family, const unsigned char *a, char *buf, size_t len)
{
	if (inet_ntop(family, a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

void
mac_format(const unsigned char m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static int
code_of(int e)
{
	switch (e) {
	case ENODEV:
	case ENOENT:
	case EADDRNOTAVAIL:
		return NAS_ERR_NOT_FOUND;
	case EEXIST:
		return NAS_ERR_EXISTS;
	case EBUSY:
		return NAS_ERR_BUSY;
	case EINVAL:
	case ERANGE:
	case ENETUNREACH:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case EAFNOSUPPORT:
		return NAS_ERR_INVALID;
	default:
		return NAS_ERR_FAILED;
	}
}

void
net_fail(struct rpc_call *c, const char *what)
{
	int e = errno;
	const char *k = net_errmsg();

	rpc_error(c, code_of(e), "%s: %s%s%s", what, strerror(e), *k ? ": " : "", k);
}
