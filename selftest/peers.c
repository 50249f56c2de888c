/* --peers: the iperf3 servers the network tests send to (net.c). */
#include <stdio.h>
#include <string.h>

#include "selftest.h"

/* A peer is an address or a host name: no spaces, no options, no paths. */
static int
peer_ok(const char *p, size_t len)
{
	if (len == 0 || len > 63 || p[0] == '-')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(p[i] == '.' || p[i] == ':' || p[i] == '-' ||
		    (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
		    (p[i] >= 'A' && p[i] <= 'Z')))
			return 0;
	return 1;
}

int
st_peers_parse(const char *list, char peers[][64], int max, char *err, size_t errlen)
{
	const char *p = list, *e;
	int n = 0;

	if (list == NULL || *list == '\0') {
		snprintf(err, errlen, "no peers");
		return -1;
	}
	for (; *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		if (!peer_ok(p, (size_t)(e - p))) {
			snprintf(err, errlen, "bad peer \"%.*s\"", (int)(e - p > 63 ? 63 : e - p), p);
			return -1;
		}
		if (n == max) {
			snprintf(err, errlen, "more than %d peers", max);
			return -1;
		}
		snprintf(peers[n++], 64, "%.*s", (int)(e - p), p);
	}
	return n;
}
