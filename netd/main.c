/* netd: links, addresses and LACP bonds through rtnetlink. */
#include "daemon.h"
#include "netd.h"
#include "netconf.h"

int
main(int argc, char **argv)
{
	conf_set_foreign(netconf_section);
	return nas_daemon_main(&netd_daemon, argc, argv);
}
