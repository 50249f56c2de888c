/* netd: links, addresses and LACP bonds through rtnetlink. */
#include "daemon.h"
#include "netd.h"

int
main(int argc, char **argv)
{
	return nas_daemon_main(&netd_daemon, argc, argv);
}
