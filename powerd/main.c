/* powerd: power, temperature and disk standby telemetry. */
#include "daemon.h"
#include "powerd.h"

int
main(int argc, char **argv)
{
	return nas_daemon_main(&powerd_daemon, argc, argv);
}
