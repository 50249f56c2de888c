/*
 * system-linux.c: the keyring through add_key/keyctl, dm-crypt through
 * lib/dm.c (DM_SECURE_DATA_FLAG on every load), mappings found in
 * /sys/block/dm-N/dm.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dm.h"
#include "log.h"
#include "secret.h"
#include "system.h"

static int
linux_key_add(const char *desc, const struct secret *key, long *id)
{
	char d[160];

	snprintf(d, sizeof(d), "cryptd:%s", desc);
	/* The thread keyring: dm-crypt looks the key up from this thread. */
	*id = syscall(SYS_add_key, "logon", d, key->buf, key->len,
	    KEY_SPEC_THREAD_KEYRING);
	return *id < 0 ? -1 : 0;
}

static int
linux_key_unlink(long id)
{
	/* Revoked first: a reference anyone holds is dead at once. */
	syscall(SYS_keyctl, KEYCTL_REVOKE, id);
	return (int)syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_THREAD_KEYRING);
}

static int
linux_map_create(const char *name, const char *uuid, uint64_t sectors,
    const char *params)
{
	struct dm_target t = { 0, sectors, "crypt", params };

	return dm_create(name, uuid, &t, 1, DM_LOAD_SECURE);
}

static int
linux_map_reload(const char *name, uint64_t sectors, const char *params)
{
	struct dm_target t = { 0, sectors, "crypt", params };

	int saved;

	if (dm_exists(name) != 1)
		return errno = ENXIO, -1;
	if (dm_load(name, &t, 1, DM_LOAD_SECURE) != 0)
		return -1;
	if (dm_resume(name) == 0)
		return 0;
	/* do_resume() left the device suspended (the swap failed, e.g. the
	   table past the device's end): the old table goes on, not a frozen
	   filesystem. */
	saved = errno;
	if (dm_clear(name) != 0 || dm_resume(name) != 0)
		log_warn("dm: %s stays suspended", name);
	errno = saved;
	return -1;
}

static int
linux_map_remove(const char *name)
{
	return dm_remove(name);
}

static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int rc = -1;

	if (f == NULL)
		return -1;
	if (fgets(buf, (int)len, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	fclose(f);
	return rc;
}

static int
linux_map_list(struct json_object *arr)
{
	char path[300], name[160], uuid[200];
	struct dirent *e;
	DIR *d = opendir("/sys/block");

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		struct json_object *o;

		if (strncmp(e->d_name, "dm-", 3) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dm/name", e->d_name);
		if (read_line(path, name, sizeof(name)) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dm/uuid", e->d_name);
		if (read_line(path, uuid, sizeof(uuid)) != 0 ||
		    strncmp(uuid, "CRYPT-", 6) != 0)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(o, "uuid", json_object_new_string(uuid));
		json_object_array_add(arr, o);
	}
	closedir(d);
	return 0;
}

static int
linux_map_uuid(const char *name, char *buf, size_t len)
{
	struct json_object *arr = json_object_new_array();
	size_t i;
	int rc = -1;

	linux_map_list(arr);
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *v;

		json_object_object_get_ex(o, "name", &v);
		if (strcmp(json_object_get_string(v), name) == 0) {
			json_object_object_get_ex(o, "uuid", &v);
			snprintf(buf, len, "%s", json_object_get_string(v));
			rc = 0;
		}
	}
	json_object_put(arr);
	if (rc != 0)
		errno = ENXIO;
	return rc;
}

static int
linux_map_table(const char *name, char *buf, size_t len)
{
	return dm_table(name, buf, len);
}

static int
linux_device_ok(const char *path)
{
	struct stat st;

	return strncmp(path, "/dev/", 5) == 0 && stat(path, &st) == 0 &&
	    S_ISBLK(st.st_mode);
}

const struct cryptd_sys sys_linux = {
	.name = "linux",
	.key_add = linux_key_add,
	.key_unlink = linux_key_unlink,
	.map_create = linux_map_create,
	.map_reload = linux_map_reload,
	.map_remove = linux_map_remove,
	.map_uuid = linux_map_uuid,
	.map_list = linux_map_list,
	.map_table = linux_map_table,
	.device_ok = linux_device_ok,
};
