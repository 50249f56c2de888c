/* raidd: RAID volumes through md and device-mapper. */
#include "daemon.h"
#include "raidd.h"

int
main(int argc, char **argv)
{
	return nas_daemon_main(&raidd_daemon, argc, argv);
}
