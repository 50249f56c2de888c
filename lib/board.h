/* board.c: the board description (/etc/board.ini): bays, ports, flash. */
#ifndef NAS_BOARD_H
#define NAS_BOARD_H

#include <stddef.h>

#define BOARD_MAX_BAYS	16
#define BOARD_MAX_PORTS	8

struct board_slot {
	char	label[32];	/* "Bay 1" */
	char	path[256];	/* sysfs glob naming the controller position */
	char	name[32];	/* ports: the interface name init gives it */
	char	led[64];	/* bays: LED name under /sys/class/leds, or "" */
};

struct board {
	char			name[64];
	char			model[128];
	int			nbays;
	struct board_slot	bay[BOARD_MAX_BAYS];	/* bay N is bay[N-1] */
	int			nports;
	struct board_slot	port[BOARD_MAX_PORTS];
	char			flash_path[256];
};

/* Loads path; on error fills err ("file: [section] key: why") and returns -1. */
int	board_load(const char *path, struct board *, char *err, size_t errlen);
/* Bay number (1-based) whose pattern matches a resolved sysfs path, or 0. */
int	board_bay_of(const struct board *, const char *syspath);
/* 1 when the disk (device path, kernel name) is the firmware's flash. */
int	board_is_flash(const struct board *, const char *syspath, const char *name);

#endif
