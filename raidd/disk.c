/*
 * Disks: what the kernel shows, placed in the board's bays. The table
 * is rebuilt from the seam on start-up and on every hotplug event;
 * differences become disk.added / disk.removed events.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volume.h"

/* Chosen at start-up: sys_linux, or sys_sim for tests and simulation. */
const struct sys_ops *sys;

static struct disk *disks;
static int ndisks;
static struct board board;

void
disk_set_board(const struct board *b)
{
	board = *b;
}

const struct board *
disk_board(void)
{
	return &board;
}

/*
 * Without a board description raidd cannot tell the firmware's flash
 * from a bay disk: then no disk may be erased (wiped, or taken by a new
 * volume).
 */
int
disk_board_known(void)
{
	return board.nbays > 0;
}

int
disk_count(void)
{
	return ndisks;
}

struct disk *
disk_at(int i)
{
	return i >= 0 && i < ndisks ? &disks[i] : NULL;
}

/*
 * raidd's own label: the seam reports its magic like any signature;
 * here it is read once per scan and decoded, as is a hot spare's label. Disks without the magic
 * are not read again, and volume_scan() uses what was read here.
 */
static void
read_label(struct disk *d)
{
	struct sys_disk *s = &d->sys;
	struct sys_sig *sig = NULL;
	char err[160];

	d->label_rc = 1;
	d->spare_rc = 1;
	for (int i = 0; i < s->nsigs; i++) {
		if (strcmp(s->sig[i].type, "raidd") == 0)
			sig = &s->sig[i];
		if (strcmp(s->sig[i].type, "raidd-spare") == 0 && !d->flash)
			d->spare_rc = spare_label_read(s->name, &d->spare, err, sizeof(err)) ? 2 : 0;
	}
	if (sig == NULL || d->flash)
		return;
	d->label_rc = label_read_disk(s->name, &d->label, &d->label_next, err, sizeof(err));
	if (d->label_rc == 0 && !disk_proven(d, &d->label, d->label_why, sizeof(d->label_why))) {
		d->label_rc = 3;
		log_warnx("%s: a raidd label of volume %s, but %s: foreign, left alone",
		    s->name, d->label.name, d->label_why);
		snprintf(sig->type, sizeof(sig->type), "raidd (not this disk's)");
		return;
	}
	if (d->label_rc == 0)
		return;
	log_warnx("%s: %s raidd label: %s", s->name,
	    d->label_rc == 2 ? "damaged" : "unreadable", err);
	if (d->label_rc == 2)
		snprintf(sig->type, sizeof(sig->type), "raidd (damaged)");
}

/* The same disk across rescans: same kernel name and serial. */
static struct disk *
find_same(struct disk *tab, int n, const struct disk *d)
{
	for (int i = 0; i < n; i++)
		if (strcmp(tab[i].sys.name, d->sys.name) == 0 &&
		    strcmp(tab[i].sys.serial, d->sys.serial) == 0)
			return &tab[i];
	return NULL;
}

static void
announce(const char *topic, const struct disk *d)
{
	struct json_object *o = json_object_new_object();
	char spec[SYS_NAME_MAX];

	json_object_object_add(o, "disk", json_object_new_string(d->sys.name));
	json_object_object_add(o, "bay", d->bay ? json_object_new_int(d->bay) : NULL);
	json_object_object_add(o, "serial", json_object_new_string(d->sys.serial));
	json_object_object_add(o, "name", json_object_new_string(disk_spec(d, spec, sizeof(spec))));
	log_info("%s: %s (%s, serial %s)", topic, d->sys.name, spec, d->sys.serial);
	nas_event(topic, o);
}

/* Where the board puts it, and its label. */
static void
place(struct disk *d)
{
	d->bay = board_bay_of(&board, d->sys.syspath);
	d->flash = board_is_flash(&board, d->sys.syspath, d->sys.name);
	read_label(d);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct disk *)a)->sys.name, ((const struct disk *)b)->sys.name);
}

/* next (n disks, sorted) becomes the table; differences are announced. */
static void
install(struct disk *next, int n, int announce_changes)
{
	if (announce_changes) {
		for (int i = 0; i < ndisks; i++)
			if (!find_same(next, n, &disks[i]))
				announce("disk.removed", &disks[i]);
		for (int i = 0; i < n; i++)
			if (!find_same(disks, ndisks, &next[i]))
				announce("disk.added", &next[i]);
	}
	free(disks);
	disks = next;
	ndisks = n;
	volume_sync_disks();
	/* libblkid's probe buffers are freed but would stay in the heap. */
	malloc_trim(0);
}

int
disk_refresh(int announce_changes)
{
	struct sys_disk *found = NULL;
	struct disk *next;
	int n = 0;

	if (sys->scan_disks(&found, &n) == -1) {
		log_warnx("disk scan failed");
		return -1;
	}
	if ((next = calloc((size_t)n + 1, sizeof(*next))) == NULL) {
		free(found);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		next[i].sys = found[i];
		place(&next[i]);
	}
	free(found);
	install(next, n, announce_changes);
	return 0;
}

/*
 * Only the named disks again (a uevent names them): the others are not
 * probed, so a disk in standby stays asleep. Falls back to a full scan
 * when a disk cannot be read.
 */
int
disk_refresh_named(char (*names)[SYS_NAME_MAX], int n)
{
	struct disk *next;
	int k = 0, r;

	if ((next = calloc((size_t)ndisks + n + 1, sizeof(*next))) == NULL)
		return -1;
	for (int i = 0; i < ndisks; i++) {
		int named = 0;

		for (int j = 0; j < n && !named; j++)
			named = strcmp(disks[i].sys.name, names[j]) == 0;
		if (!named)
			next[k++] = disks[i];
	}
	for (int j = 0; j < n; j++) {
		if ((r = sys->scan_disk(names[j], &next[k].sys)) == -1) {
			free(next);
			return disk_refresh(1);
		}
		if (r == 0)
			place(&next[k++]);
	}
	qsort(next, (size_t)k, sizeof(*next), by_name);
	install(next, k, 1);
	return 0;
}

/* A disk is named by bay ("bay1"), kernel name ("sda", "/dev/sda") or serial. */
struct disk *
disk_find(const char *spec)
{
	int bay;
	char end;

	if (strncmp(spec, "/dev/", 5) == 0)
		spec += 5;
	if (sscanf(spec, "bay%d%c", &bay, &end) == 1) {
		for (int i = 0; i < ndisks; i++)
			if (disks[i].bay == bay)
				return &disks[i];
		return NULL;
	}
	for (int i = 0; i < ndisks; i++)
		if (strcmp(disks[i].sys.name, spec) == 0)
			return &disks[i];
	for (int i = 0; i < ndisks; i++)
		if (disks[i].sys.serial[0] && strcmp(disks[i].sys.serial, spec) == 0)
			return &disks[i];
	return NULL;
}

/* The name the UI shows: the bay where there is one. */
const char *
disk_spec(const struct disk *d, char *buf, size_t len)
{
	if (d->bay)
		snprintf(buf, len, "bay%d", d->bay);
	else
		snprintf(buf, len, "%s", d->sys.name);
	return buf;
}

/* Signatures other than raidd's own label mean someone's data. */
int
disk_has_foreign(const struct disk *d, char *why, size_t len)
{
	for (int i = 0; i < d->sys.nsigs; i++) {
		const struct sys_sig *s = &d->sys.sig[i];

		if (strcmp(s->type, "raidd") == 0)
			continue;
		snprintf(why, len, "%s holds %s (on %s at byte %llu)", d->sys.name,
		    s->type, s->where, (unsigned long long)s->offset);
		return 1;
	}
	return 0;
}

static struct json_object *
describe_sigs(const struct disk *d)
{
	struct json_object *a = json_object_new_array(), *o;

	for (int i = 0; i < d->sys.nsigs; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "type", json_object_new_string(d->sys.sig[i].type));
		json_object_object_add(o, "on", json_object_new_string(d->sys.sig[i].where));
		json_object_object_add(o, "offset", json_object_new_int64((int64_t)d->sys.sig[i].offset));
		json_object_array_add(a, o);
	}
	return a;
}

static const char *
disk_state(const struct disk *d)
{
	char why[8];

	if (d->flash)
		return "system";
	if (volume_of_disk(d->sys.name))
		return "member";
	if (d->sys.busy[0])
		return "in-use";
	/* A hot spare's label alone (spare.c): which volume's, volume.show says. */
	if (d->sys.nsigs == 1 && strcmp(d->sys.sig[0].type, "raidd-spare") == 0)
		return "spare";
	if (disk_has_foreign(d, why, sizeof(why)))
		return "foreign";
	for (int i = 0; i < d->sys.nsigs; i++)
		if (strcmp(d->sys.sig[i].type, "raidd") == 0)
			return "member";
	return "free";
}

struct json_object *
disk_describe(const struct disk *d)
{
	struct json_object *o = json_object_new_object();
	const struct sys_disk *s = &d->sys;
	char spec[SYS_NAME_MAX];

	json_object_object_add(o, "name", json_object_new_string(disk_spec(d, spec, sizeof(spec))));
	json_object_object_add(o, "device", json_object_new_string(s->name));
	json_object_object_add(o, "bay", d->bay ? json_object_new_int(d->bay) : NULL);
	json_object_object_add(o, "bay_label", d->bay ?
	    json_object_new_string(board.bay[d->bay - 1].label) : NULL);
	json_object_object_add(o, "model", json_object_new_string(s->model));
	json_object_object_add(o, "serial", json_object_new_string(s->serial));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)s->size));
	json_object_object_add(o, "rotational", json_object_new_boolean(s->rotational));
	json_object_object_add(o, "logical_block_size", json_object_new_int((int)s->logical_block));
	json_object_object_add(o, "physical_block_size", json_object_new_int((int)s->physical_block));
	json_object_object_add(o, "removable", json_object_new_boolean(s->removable));
	json_object_object_add(o, "state", json_object_new_string(disk_state(d)));
	json_object_object_add(o, "busy", s->busy[0] ? json_object_new_string(s->busy) : NULL);
	json_object_object_add(o, "signatures", describe_sigs(d));
	return o;
}

/*
 * A disk raidd has just written a label on: the table must hold what is
 * on it now. Only a uevent naming that disk would probe it again, and
 * one naming another disk keeps this entry as it was (blank), which made
 * volume_sync_disks() drop the new member from its volume.
 */
int
disk_refresh_one(const char *name)
{
	char names[1][SYS_NAME_MAX];

	snprintf(names[0], sizeof(names[0]), "%s", name);
	return disk_refresh_named(names, 1);
}
