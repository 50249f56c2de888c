/*
 * cryptd's kernel seam: the keyring and device-mapper.  system-linux.c
 * talks to the kernel (add_key, lib/dm.c); system-sim.c keeps both in
 * memory, as strict as the kernel about what it accepts, so the unit
 * suites drive every method.  Devices themselves are plain files or
 * block devices opened the same way on both (volume.c).
 */
#ifndef CRYPTD_SYSTEM_H
#define CRYPTD_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

struct secret;

struct cryptd_sys {
	const char *name;
	/*
	 * A `logon` key "cryptd:<desc>" in the thread's keyring; *id for
	 * unlink.  -1 with errno.
	 */
	int	(*key_add)(const char *desc, const struct secret *, long *id);
	int	(*key_unlink)(long id);
	/* One dm-crypt target, DM_SECURE_DATA_FLAG; -1 with errno. */
	int	(*map_create)(const char *name, const char *dm_uuid, uint64_t sectors,
		    const char *params);
	/*
	 * The live table of an existing mapping replaced by one dm-crypt
	 * target (DM_SECURE_DATA_FLAG), I/O suspended across the swap;
	 * -1 with errno (ENXIO when there is no such mapping).
	 */
	int	(*map_reload)(const char *name, uint64_t sectors, const char *params);
	/* -1 with errno (EBUSY while open, ENXIO when gone). */
	int	(*map_remove)(const char *name);
	/* The dm uuid of a mapping into buf; -1 (ENXIO) when none. */
	int	(*map_uuid)(const char *name, char *buf, size_t len);
	/* Appends {name, uuid} of every mapping whose uuid starts "CRYPT-". */
	int	(*map_list)(struct json_object *array);
	/* The table as `dmsetup table --showkeys` prints it. */
	int	(*map_table)(const char *name, char *buf, size_t len);
	/* 1 when path may be formatted/opened (a block device; sim: a file). */
	int	(*device_ok)(const char *path);
};

extern const struct cryptd_sys sys_linux, sys_sim;
extern const struct cryptd_sys *sys;

/* system-sim.c, for the unit suites: keys still linked; forget all. */
int	sim_keys_linked(void);
void	sim_reset(void);

#endif
