/*
 * system-sim.c: the keyring and device-mapper in memory, as strict as
 * the kernel: a logon key needs a "prefix:" description; a crypt table
 * must name its key as ":<size>:logon:<desc>" of a key that is linked
 * and of that size (the kernel's crypt_set_keyring_key); a name is
 * taken once (EEXIST) and checked by dm_name_ok; a target past its
 * device's end is refused (EINVAL); the params are kept
 * as given (the kernel would show them) so a test can look for a key.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "secret.h"
#include "system.h"

#define SIM_KEYS	16
#define SIM_MAPS	16

static struct {
	long		 id;
	char		 desc[160];
	size_t		 len;
} keys[SIM_KEYS];
static long next_id = 1;

static struct {
	char		 name[128];
	char		 uuid[160];
	char		 params[512];
	uint64_t	 sectors;
} maps[SIM_MAPS];

static int
sim_key_add(const char *desc, const struct secret *key, long *id)
{
	int i;

	if (key->len == 0 || key->len > 4096)
		return errno = EINVAL, -1;
	for (i = 0; i < SIM_KEYS && keys[i].id != 0; i++)
		;
	if (i == SIM_KEYS)
		return errno = EDQUOT, -1;
	keys[i].id = *id = next_id++;
	snprintf(keys[i].desc, sizeof(keys[i].desc), "cryptd:%s", desc);
	keys[i].len = key->len;
	return 0;
}

static int
sim_key_unlink(long id)
{
	int i;

	for (i = 0; i < SIM_KEYS; i++)
		if (keys[i].id == id && id != 0) {
			memset(&keys[i], 0, sizeof(keys[i]));
			return 0;
		}
	return errno = ENOKEY, -1;
}

static int
find_map(const char *name)
{
	int i;

	for (i = 0; i < SIM_MAPS; i++)
		if (maps[i].name[0] && strcmp(maps[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * The table's device (a file here) holds its sectors after the offset:
 * the kernel refuses a crypt target past the device's end (a create, or
 * a reload's swap; the seam puts the old table back then).
 */
static int
fits_device(const char *params, uint64_t sectors)
{
	char dev[512];
	unsigned long long off;
	struct stat st;

	if (sscanf(params, "%*s %*s %*s %511s %llu", dev, &off) != 2 || stat(dev, &st) != 0)
		return 0;
	return (off + sectors) * 512 <= (unsigned long long)st.st_size;
}

/* "<cipher> :<size>:logon:<desc> <iv> <dev> <offset> ..." with a linked key. */
static int
key_ref_ok(const char *params)
{
	char desc[160];
	size_t size;
	int i, n = 0;

	if (sscanf(params, "%*s :%zu:logon:%159s%n", &size, desc, &n) != 2 || n == 0)
		return 0;
	for (i = 0; i < SIM_KEYS; i++)
		if (keys[i].id != 0 && strcmp(keys[i].desc, desc) == 0 &&
		    keys[i].len == size)
			return 1;
	return 0;
}

static int
sim_map_create(const char *name, const char *uuid, uint64_t sectors,
    const char *params)
{
	int i;

	if (!dm_name_ok(name) || sectors == 0 || strlen(params) >= sizeof(maps[0].params))
		return errno = EINVAL, -1;
	if (find_map(name) >= 0)
		return errno = EEXIST, -1;
	if (!key_ref_ok(params))
		return errno = ENOKEY, -1;
	if (!fits_device(params, sectors))
		return errno = EINVAL, -1;
	for (i = 0; i < SIM_MAPS && maps[i].name[0]; i++)
		;
	if (i == SIM_MAPS)
		return errno = ENOMEM, -1;
	snprintf(maps[i].name, sizeof(maps[i].name), "%s", name);
	snprintf(maps[i].uuid, sizeof(maps[i].uuid), "%s", uuid);
	snprintf(maps[i].params, sizeof(maps[i].params), "%s", params);
	maps[i].sectors = sectors;
	return 0;
}

/* do_resume() with a new table: the mapping must exist; the key as for a create. */
static int
sim_map_reload(const char *name, uint64_t sectors, const char *params)
{
	int i;

	if (!dm_name_ok(name) || sectors == 0 || strlen(params) >= sizeof(maps[0].params))
		return errno = EINVAL, -1;
	if ((i = find_map(name)) < 0)
		return errno = ENXIO, -1;
	if (!key_ref_ok(params))
		return errno = ENOKEY, -1;
	if (!fits_device(params, sectors))
		return errno = EINVAL, -1;
	snprintf(maps[i].params, sizeof(maps[i].params), "%s", params);
	maps[i].sectors = sectors;
	return 0;
}

static int
sim_map_remove(const char *name)
{
	int i = find_map(name);

	if (i < 0)
		return errno = ENXIO, -1;
	memset(&maps[i], 0, sizeof(maps[i]));
	return 0;
}

static int
sim_map_uuid(const char *name, char *buf, size_t len)
{
	int i = find_map(name);

	if (i < 0)
		return errno = ENXIO, -1;
	snprintf(buf, len, "%s", maps[i].uuid);
	return 0;
}

static int
sim_map_list(struct json_object *arr)
{
	int i;

	for (i = 0; i < SIM_MAPS; i++) {
		struct json_object *o;

		if (!maps[i].name[0] || strncmp(maps[i].uuid, "CRYPT-", 6) != 0)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(maps[i].name));
		json_object_object_add(o, "uuid", json_object_new_string(maps[i].uuid));
		json_object_array_add(arr, o);
	}
	return 0;
}

static int
sim_map_table(const char *name, char *buf, size_t len)
{
	int i = find_map(name);

	if (i < 0)
		return errno = ENXIO, -1;
	snprintf(buf, len, "0 %llu crypt %s", (unsigned long long)maps[i].sectors,
	    maps[i].params);
	return 0;
}

static int
sim_device_ok(const char *path)
{
	return path[0] == '/';
}

int
sim_keys_linked(void)
{
	int i, n = 0;

	for (i = 0; i < SIM_KEYS; i++)
		n += keys[i].id != 0;
	return n;
}

void
sim_reset(void)
{
	memset(keys, 0, sizeof(keys));
	memset(maps, 0, sizeof(maps));
}

const struct cryptd_sys sys_sim = {
	.name = "sim",
	.key_add = sim_key_add,
	.key_unlink = sim_key_unlink,
	.map_create = sim_map_create,
	.map_reload = sim_map_reload,
	.map_remove = sim_map_remove,
	.map_uuid = sim_map_uuid,
	.map_list = sim_map_list,
	.map_table = sim_map_table,
	.device_ok = sim_device_ok,
};
