/*
 * The board description. Bays and ports are named by where they sit on
 * the board (sysfs path globs), because kernel names such as sda follow
 * probe order and change after hot-plug.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <iniparser.h>

#include "board.h"

static void
copy_key(dictionary *d, const char *sec, const char *key, char *out, size_t len)
{
	char name[96];

	snprintf(name, sizeof(name), "%s:%s", sec, key);
	snprintf(out, len, "%s", iniparser_getstring(d, name, ""));
}

static int
load_slots(dictionary *d, const char *path, const char *kind, int n,
    struct board_slot *slots, char *err, size_t errlen)
{
	char sec[32];

	for (int i = 0; i < n; i++) {
		snprintf(sec, sizeof(sec), "%s%d", kind, i + 1);
		copy_key(d, sec, "label", slots[i].label, sizeof(slots[i].label));
		copy_key(d, sec, "path", slots[i].path, sizeof(slots[i].path));
		copy_key(d, sec, "led", slots[i].led, sizeof(slots[i].led));
		if (slots[i].led[0] && (strchr(slots[i].led, '/') || slots[i].led[0] == '.')) {
			snprintf(err, errlen, "%s: [%s] led: a name under /sys/class/leds", path, sec);
			return -1;
		}
		copy_key(d, sec, "name", slots[i].name, sizeof(slots[i].name));
		if (slots[i].path[0] != '/') {
			snprintf(err, errlen, "%s: [%s] path: missing or not absolute",
			    path, sec);
			return -1;
		}
		if (slots[i].label[0] == '\0')
			snprintf(slots[i].label, sizeof(slots[i].label), "%s %d",
			    strcmp(kind, "bay") ? "Port" : "Bay", i + 1);
	}
	return 0;
}

int
board_load(const char *path, struct board *b, char *err, size_t errlen)
{
	dictionary *d;
	int rc = -1;

	memset(b, 0, sizeof(*b));
	/* iniparser would print its own complaint on stderr. */
	if (access(path, R_OK) == -1 || (d = iniparser_load(path)) == NULL) {
		snprintf(err, errlen, "%s: cannot read the board description", path);
		return -1;
	}
	copy_key(d, "board", "name", b->name, sizeof(b->name));
	copy_key(d, "board", "model", b->model, sizeof(b->model));
	copy_key(d, "flash", "path", b->flash_path, sizeof(b->flash_path));
	b->nbays = iniparser_getint(d, "board:bays", -1);
	b->nports = iniparser_getint(d, "board:ports", 0);
	if (b->nbays < 1 || b->nbays > BOARD_MAX_BAYS)
		snprintf(err, errlen, "%s: [board] bays: must be 1..%d", path, BOARD_MAX_BAYS);
	else if (b->nports < 0 || b->nports > BOARD_MAX_PORTS)
		snprintf(err, errlen, "%s: [board] ports: must be 0..%d", path, BOARD_MAX_PORTS);
	else if (load_slots(d, path, "bay", b->nbays, b->bay, err, errlen) == 0 &&
	    load_slots(d, path, "port", b->nports, b->port, err, errlen) == 0)
		rc = 0;
	iniparser_freedict(d);
	return rc;
}

int
board_bay_of(const struct board *b, const char *syspath)
{
	for (int i = 0; i < b->nbays; i++)
		if (fnmatch(b->bay[i].path, syspath, FNM_PATHNAME) == 0)
			return i + 1;
	return 0;
}

int
board_is_flash(const struct board *b, const char *syspath, const char *name)
{
	char node[512];

	if (b->flash_path[0] == '\0')
		return 0;
	if (fnmatch(b->flash_path, syspath, FNM_PATHNAME) == 0)
		return 1;
	/* The pattern may name the block node below the device. */
	snprintf(node, sizeof(node), "%s/block/%s", syspath, name);
	return fnmatch(b->flash_path, node, FNM_PATHNAME) == 0;
}
