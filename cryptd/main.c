/* cryptd: encrypted volumes through dm-crypt with LUKS2 headers. */
#include "daemon.h"
#include "cryptd.h"

int
main(int argc, char **argv)
{
	return nas_daemon_main(&cryptd_daemon, argc, argv);
}
