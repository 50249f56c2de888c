/*
 * libFuzzer target: a configuration file, through iniparser and the
 * schema checks, as `-c file` or SIGHUP loads it.  The bytes go to a
 * memfd loaded by its /proc path.  A file that loads must give every
 * key a value its getter accepts, and its effective configuration must
 * print.  The schemas are those every daemon has plus raidd's keys.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* raidd/api.c's own table (static there), so raidd.ini loads whole. */
static const struct conf_key raidd_keys[] = {
	{ "raidd", "board", CONF_STRING, "/etc/board.ini", 1, 255, NULL, "" },
	{ "raidd", "mount_root", CONF_STRING, "/volumes", 1, 100, NULL, "" },
	{ NULL, NULL, 0, NULL, 0, 0, NULL, NULL }
};
static const struct conf_key *const schemas[] = {
	nas_common_conf, raidd_keys, NULL
};

static void
read_back(const struct conf *c, FILE *sink)
{
	for (int s = 0; schemas[s]; s++) {
		for (const struct conf_key *k = schemas[s]; k->section; k++) {
			switch (k->type) {
			case CONF_INT:
				(void)conf_int(c, k->section, k->key);
				break;
			case CONF_BOOL:
				(void)conf_bool(c, k->section, k->key);
				break;
			case CONF_STRING:
			case CONF_ENUM:
				if (conf_str(c, k->section, k->key) == NULL)
					abort();
				break;
			}
		}
	}
	conf_print(c, sink);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	char path[64], err[1024];
	struct conf *c;
	int fd;

	if (size > 65536)
		return 0;
	if (sink == NULL && (sink = fopen("/dev/null", "w")) == NULL)
		abort();
	if ((fd = memfd_create("fuzz.ini", MFD_CLOEXEC)) == -1)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = '\0';
	if ((c = conf_load(path, schemas, 0, err, sizeof(err))) != NULL) {
		read_back(c, sink);
		conf_free(c);
	} else if (err[0] == '\0') {
		fprintf(stderr, "conf_load failed without saying why\n");
		abort();
	}
	close(fd);
	return 0;
}
