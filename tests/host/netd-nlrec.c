/*
 * netd-nlrec NAME...: records the kernel's RTM_NEWLINK of each named link
 * as one line "NAME HEX" (a raw RTM_GETLINK dump, no library), for the
 * unit suite's recorded states (tests/unit/netd-recorded.h). Run on the
 * board by the scenario netd-lacp; not installed by `make install`.
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *
name_of(const struct nlmsghdr *h)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	const struct rtattr *a = IFLA_RTA(ifi);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_IFNAME)
			return RTA_DATA(a);
	return "";
}

static void
print(const struct nlmsghdr *h, int argc, char **argv)
{
	const unsigned char *p = (const unsigned char *)h;
	const char *name = name_of(h);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], name) != 0)
			continue;
		printf("%s ", name);
		for (unsigned k = 0; k < h->nlmsg_len; k++)
			printf("%02x", p[k]);
		putchar('\n');
	}
}

int
main(int argc, char **argv)
{
	struct {
		struct nlmsghdr		h;
		struct ifinfomsg	ifi;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 } };
	static char buf[65536];
	int fd, done = 0;
	ssize_t n;

	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) == -1 ||
	    send(fd, &req, sizeof(req), 0) == -1) {
		perror("netd-nlrec");
		return 1;
	}
	while (!done && (n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		int len = (int)n;

		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == RTM_NEWLINK)
				print(h, argc, argv);
		}
	}
	close(fd);
	return 0;
}
