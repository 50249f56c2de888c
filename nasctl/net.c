/*
 * nasctl net apply FILE: FILE in netd.conf(5)'s form (the network
 * sections of netd.ini) read with the same checks as every
 * configuration file (lib/config.c), sent to netd as net.apply's config
 * object. Sections that are not the network's ([api], [log], [netd])
 * are left out, so a copy of netd.ini itself can be given.
 */
#include <iniparser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "nasctl.h"

static int
network_section(const char *s)
{
	return !strcmp(s, "route") || !strcmp(s, "dns") || !strncmp(s, "port ", 5) ||
	    !strncmp(s, "bond ", 5) || !strncmp(s, "vlan ", 5);
}

/* The network sections of the file as {"section": {"key": "value"}}; NULL with err. */
static struct json_object *
read_config(const char *path, char *err, size_t len)
{
	struct json_object *cfg;
	dictionary *d;
	int missing, nsec;

	if ((d = conf_load_ini(path, 0, &missing, err, len)) == NULL)
		return NULL;
	cfg = json_object_new_object();
	nsec = iniparser_getnsec(d);
	for (int i = 0; i < nsec; i++) {
		const char *sec = iniparser_getsecname(d, i);
		int nk = iniparser_getsecnkeys(d, sec);
		struct json_object *o;
		const char **keys;

		if (!network_section(sec))
			continue;
		o = json_object_new_object();
		json_object_object_add(cfg, sec, o);
		if (nk <= 0 || (keys = calloc((size_t)nk, sizeof(*keys))) == NULL)
			continue;
		iniparser_getseckeys(d, sec, keys);
		for (int k = 0; k < nk; k++)
			json_object_object_add(o, keys[k] + strlen(sec) + 1,
			    json_object_new_string(iniparser_getstring(d, keys[k], "")));
		free(keys);
	}
	iniparser_freedict(d);
	return cfg;
}

int
run_net_apply(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	struct json_object *cfg;
	char err[512];
	const char *file = NULL;
	struct json_object *v;

	if (json_object_object_get_ex(local, "file", &v))
		file = json_object_get_string(v);
	if (file == NULL || (cfg = read_config(file, err, sizeof(err))) == NULL) {
		fprintf(stderr, "nasctl: %s\n", file ? err : "net apply: FILE is required");
		return EXIT_USAGE;
	}
	json_object_object_add(params, "config", cfg);
	return run_generic(x, cmd, params, local);
}
