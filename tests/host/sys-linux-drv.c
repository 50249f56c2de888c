/*
 * raidd-sysdrv: runs one op of sys_linux (raidd/system.h) per call, so
 * shell tests can drive the real kernel seam and check the result with
 * tools nobody here wrote (blkid, sfdisk, mdadm, dmsetup).
 *
 *   scan                          disks as JSON (RAIDD_SCAN_LOOP=1: loops too)
 *   size DEV | read DEV OFF LEN | write DEV OFF (stdin) | zero DEV OFF LEN
 *   partition DISK START:SIZE:NAME[:GUID]... (bytes; GUID: 32 hex digits, GPT order)
 *   partdev DISK START | reread DISK
 *   md-create PREFIX LEVEL DISK...      plan, partition, raidd superblocks,
 *                                       one array PREFIX_tN per md tier;
 *                                       prints "NAME DEV:ROLE..." per array
 *   md-assemble NAME DEV:ROLE... | md-stop NAME | md-status NAME (JSON)
 *   md-freeze NAME 0|1 | md-reshape NAME RAID_DISKS NEW_OFFSET (sectors)
 *   md-add-new NAME DEV ROLE            DEV's superblock calls it a spare
 *                                       on failure print errno's name
 *   dm-create NAME UUID DEV:OFF:LEN... | dm-remove NAME | dm-exists NAME
 *   dm-table NAME
 *   mkfs FS DEV LABEL | mount DEV DIR FS | umount DIR | mounted DIR
 *   hotplug SECONDS                prints 1 if a disk came or went
 * Exit status 0 on success, 1 when the op failed, 2 on usage errors.
 */
#include <sys/random.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "dm.h"
#include "log.h"
#include "raidd/mdsb.h"
#include "raidd/plan.h"
#include "raidd/system.h"

static int
usage(void)
{
	fprintf(stderr, "usage: raidd-sysdrv OP ARGS... (see the source)\n");
	return 2;
}

static uint64_t
num(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* An op's result for a script: on failure errno's name on stdout (EBUSY ...). */
static int
errno_said(int rc)
{
	if (rc == -1)
		printf("%s\n", errno == EBUSY ? "EBUSY" : errno == EINVAL ? "EINVAL" :
		    strerror(errno));
	return rc == -1;
}

static struct json_object *
disk_json(const struct sys_disk *d)
{
	struct json_object *o = json_object_new_object(), *a, *s;

	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "syspath", json_object_new_string(d->syspath));
	json_object_object_add(o, "major", json_object_new_int(d->major));
	json_object_object_add(o, "minor", json_object_new_int(d->minor));
	json_object_object_add(o, "size", json_object_new_int64(d->size));
	json_object_object_add(o, "model", json_object_new_string(d->model));
	json_object_object_add(o, "serial", json_object_new_string(d->serial));
	json_object_object_add(o, "rotational", json_object_new_int(d->rotational));
	json_object_object_add(o, "logical_block", json_object_new_int(d->logical_block));
	json_object_object_add(o, "physical_block", json_object_new_int(d->physical_block));
	json_object_object_add(o, "removable", json_object_new_int(d->removable));
	json_object_object_add(o, "busy", json_object_new_string(d->busy));
	a = json_object_new_array();
	for (int i = 0; i < d->nsigs; i++) {
		s = json_object_new_object();
		json_object_object_add(s, "type", json_object_new_string(d->sig[i].type));
		json_object_object_add(s, "where", json_object_new_string(d->sig[i].where));
		json_object_object_add(s, "offset", json_object_new_int64(d->sig[i].offset));
		json_object_array_add(a, s);
	}
	json_object_object_add(o, "sigs", a);
	return o;
}

static int
op_scan(void)
{
	struct json_object *a = json_object_new_array();
	struct sys_disk *d;
	int n, i;

	if (sys_linux.scan_disks(&d, &n) == -1)
		return 1;
	for (i = 0; i < n; i++)
		json_object_array_add(a, disk_json(&d[i]));
	puts(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
	json_object_put(a);
	free(d);
	return 0;
}

static int
op_read(char **av)
{
	size_t len = num(av[2]);
	char *buf = malloc(len ? len : 1);
	int r;

	if (buf == NULL)
		return 1;
	r = sys_linux.read_at(av[0], num(av[1]), buf, len) == -1 ||
	    fwrite(buf, 1, len, stdout) != len;
	free(buf);
	return r;
}

static int
op_write(char **av)
{
	static char buf[16 << 20];
	size_t len = fread(buf, 1, sizeof(buf), stdin);

	return sys_linux.write_at(av[0], num(av[1]), buf, len) == -1;
}

/* partition and reread work through a descriptor, as raidd's do. */
static int
partition_disk(const char *disk, const struct sys_part *p, int n)
{
	unsigned ma, mi;
	int fd, r;

	if ((fd = sys_linux.dev_open(disk, &ma, &mi)) == -1)
		return -1;
	r = n ? sys_linux.partition(disk, fd, p, n) : sys_linux.reread_parts(disk, fd);
	if (sys_linux.fd_close(fd) == -1)
		r = -1;
	return r;
}

static int
op_partition(const char *disk, int n, char **av)
{
	struct sys_part p[SYS_MAX_PARTS];
	int i;

	if (n < 1 || n > SYS_MAX_PARTS)
		return usage();
	memset(p, 0, sizeof(p));
	for (i = 0; i < n; i++) {
		char *g;

		if (sscanf(av[i], "%" SCNu64 ":%" SCNu64 ":%35[^:]", &p[i].start, &p[i].size,
		    p[i].name) != 3)
			return usage();
		/* :GUID: 32 hex digits in GPT byte order, as raidd's label keeps it. */
		if ((g = strchr(strchr(strchr(av[i], ':') + 1, ':') + 1, ':')) != NULL)
			for (int k = 0; k < 16; k++)
				if (sscanf(g + 1 + 2 * k, "%2hhx", &p[i].guid[k]) != 1)
					return usage();
	}
	return partition_disk(disk, p, n) == -1;
}

static int
op_partdev(char **av)
{
	char name[SYS_NAME_MAX];

	if (sys_linux.part_dev(av[0], num(av[1]), name, sizeof(name)) == -1)
		return 1;
	puts(name);
	return 0;
}

/* Every disk's partitions as the plan lays them out, in tier order. */
static int
partition_disks(const struct plan *p)
{
	struct sys_part parts[SYS_MAX_PARTS];
	int d, t, i, n;

	for (d = 0; d < p->ndisks; d++) {
		n = 0;
		for (t = 0; t < p->ntiers; t++)
			for (i = 0; i < p->tier[t].nmembers; i++) {
				if (p->tier[t].part[i].disk != d || n == SYS_MAX_PARTS)
					continue;
				parts[n].start = p->tier[t].part[i].start;
				parts[n].size = p->tier[t].part[i].size;
				snprintf(parts[n].name, sizeof(parts[n].name),
				    "raidd-t%d", t);
				n++;
			}
		if (partition_disk(p->disk[d].id, parts, n) == -1)
			return -1;
	}
	return 0;
}

/* One tier's array from raidd-built superblocks and bitmaps. */
static int
create_tier(const struct plan *p, int t, const char *name)
{
	static uint8_t sb[SYS_MAX_MEMBERS][MDSB_BLOCK];
	static uint8_t bm[SYS_MAX_MEMBERS][MDSB_BITMAP_ROOM * 512];
	const struct plan_tier *pt = &p->tier[t];
	char err[MDSB_ERRLEN], setname[40];
	struct mdsb_bitmap b;
	struct sys_md m;
	struct mdsb s;
	uint8_t uuid[16];
	int i;

	if (getrandom(uuid, sizeof(uuid), 0) != sizeof(uuid))
		return -1;
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", name);
	snprintf(setname, sizeof(setname), "nas:%.27s", name + 3);
	m.nmembers = pt->nmembers;
	for (i = 0; i < pt->nmembers; i++) {
		const struct plan_part *pp = &pt->part[i];

		if (mdsb_init_tier(&s, pt, i, uuid, setname, time(NULL), err,
		    sizeof(err)) == -1 ||
		    mdsb_encode(&s, sb[i], sizeof(sb[i]), err, sizeof(err)) == -1 ||
		    mdsb_bitmap_init(&b, &s, err, sizeof(err)) == -1 ||
		    mdsb_bitmap_encode(&b, 1, bm[i], sizeof(bm[i]), err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "md-create: %s\n", err);
			return -1;
		}
		if (sys_linux.part_dev(p->disk[pp->disk].id, pp->start,
		    m.member[i].dev, sizeof(m.member[i].dev)) == -1)
			return -1;
		m.member[i].role = i;
		m.member[i].sb = sb[i];
		m.member[i].sb_len = sizeof(sb[i]);
		m.member[i].bitmap = (s.feature_map & 1) ? bm[i] : NULL;
		m.member[i].bitmap_len = (s.feature_map & 1) ?
		    mdsb_bitmap_bytes(&b) : 0;
	}
	if (sys_linux.md_create(&m) == -1)
		return -1;
	printf("%s", m.name);
	for (i = 0; i < m.nmembers; i++)
		printf(" %s:%d", m.member[i].dev, m.member[i].role);
	printf("\n");
	return 0;
}

static int
op_md_create(const char *prefix, const char *level, int n, char **disks)
{
	struct plan_disk d[PLAN_MAX_DISKS];
	char err[PLAN_ERRLEN], name[SYS_NAME_MAX];
	enum vol_level l;
	struct plan p;
	int i, t;

	if (n < 1 || n > PLAN_MAX_DISKS || plan_level_parse(level, &l) == -1)
		return usage();
	memset(d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		snprintf(d[i].id, sizeof(d[i].id), "%s", disks[i]);
		if (sys_linux.dev_size(disks[i], &d[i].size) == -1)
			return 1;
	}
	if (plan_make(l, d, n, &p, err, sizeof(err)) == -1) {
		fprintf(stderr, "md-create: %s\n", err);
		return 1;
	}
	if (partition_disks(&p) == -1)
		return 1;
	for (t = 0; t < p.ntiers; t++) {
		if (p.tier[t].kind == TIER_NONE)
			continue;
		snprintf(name, sizeof(name), "%s_t%d", prefix, t);
		if (create_tier(&p, t, name) == -1)
			return 1;
	}
	return 0;
}

static int
op_md_assemble(const char *name, int n, char **av)
{
	struct sys_md m;
	char *colon;
	int i;

	if (n < 1 || n > SYS_MAX_MEMBERS)
		return usage();
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.nmembers = n;
	for (i = 0; i < n; i++) {
		if ((colon = strchr(av[i], ':')) == NULL)
			return usage();
		snprintf(m.member[i].dev, sizeof(m.member[i].dev), "%.*s",
		    (int)(colon - av[i]), av[i]);
		m.member[i].role = atoi(colon + 1);
	}
	return sys_linux.md_assemble(&m) == -1;
}

static int
op_md_status(const char *name)
{
	struct json_object *o, *a, *mo;
	struct sys_md_status st;

	if (sys_linux.md_status(name, &st) == -1)
		return 1;
	o = json_object_new_object();
	json_object_object_add(o, "level", json_object_new_string(st.level));
	json_object_object_add(o, "array_state", json_object_new_string(st.array_state));
	json_object_object_add(o, "sync_action", json_object_new_string(st.sync_action));
	json_object_object_add(o, "sync_done", json_object_new_int64(st.sync_done));
	json_object_object_add(o, "sync_total", json_object_new_int64(st.sync_total));
	json_object_object_add(o, "degraded", json_object_new_int(st.degraded));
	json_object_object_add(o, "raid_disks", json_object_new_int(st.raid_disks));
	json_object_object_add(o, "size", json_object_new_int64(st.size));
	a = json_object_new_array();
	for (int i = 0; i < st.nmembers; i++) {
		mo = json_object_new_object();
		json_object_object_add(mo, "dev", json_object_new_string(st.member[i].dev));
		json_object_object_add(mo, "slot", json_object_new_int(st.member[i].slot));
		json_object_object_add(mo, "state", json_object_new_string(st.member[i].state));
		json_object_array_add(a, mo);
	}
	json_object_object_add(o, "members", a);
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
	json_object_put(o);
	return 0;
}

static int
op_dm_create(const char *name, const char *uuid, int n, char **av)
{
	struct sys_seg s[SYS_MAX_SEGS];
	int i;

	if (n < 1 || n > SYS_MAX_SEGS)
		return usage();
	memset(s, 0, sizeof(s));
	for (i = 0; i < n; i++)
		if (sscanf(av[i], "%63[^:]:%" SCNu64 ":%" SCNu64, s[i].dev, &s[i].offset,
		    &s[i].len) != 3)
			return usage();
	return sys_linux.dm_create(name, uuid, s, n) == -1;
}

static int
op_dm_table(const char *name)
{
	char buf[8192];

	if (dm_table(name, buf, sizeof(buf)) == -1)
		return 1;
	fputs(buf, stdout);
	return 0;
}

static void
mkfs_done(int status, const char *output, void *arg)
{
	int *rc = arg;

	fputs(output, stderr);
	*rc = status == 0 ? 0 : 1;
	ev_break(nas_loop(), EVBREAK_ALL);
}

static int
op_mkfs(char **av)
{
	int rc = 1;

	if (sys_linux.mkfs(av[0], av[1], av[2], mkfs_done, &rc) == -1)
		return 1;
	ev_run(nas_loop(), 0);
	return rc;
}

static int
op_hotplug(const char *secs)
{
	struct pollfd pfd;
	char names[8][SYS_NAME_MAX];
	int fd, changed = 0;
	time_t end = time(NULL) + atoi(secs);

	if ((fd = sys_linux.hotplug_open()) == -1)
		return 1;
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!changed && time(NULL) < end)
		if (poll(&pfd, 1, 200) > 0)
			changed = sys_linux.hotplug_read(fd, names, 8);
	printf("%d\n", changed != 0);
	close(fd);
	return 0;
}

/* One member added as raidd's repair adds it, its superblock there already. */
static int
op_md_add_new(char **av)
{
	static struct sys_md m;

	snprintf(m.name, sizeof(m.name), "%s", av[0]);
	m.nmembers = 1;
	snprintf(m.member[0].dev, sizeof(m.member[0].dev), "%s", av[1]);
	m.member[0].role = atoi(av[2]);
	return errno_said(sys_linux.md_add_new(&m));
}

/* Ops with a fixed number of arguments after the op's name. */
static int
simple(const char *op, int ac, char **av)
{
	uint64_t size;
	int r;

	if (strcmp(op, "scan") == 0 && ac == 0)
		return op_scan();
	if (strcmp(op, "size") == 0 && ac == 1) {
		if (sys_linux.dev_size(av[0], &size) == -1)
			return 1;
		printf("%llu\n", (unsigned long long)size);
		return 0;
	}
	if (strcmp(op, "read") == 0 && ac == 3)
		return op_read(av);
	if (strcmp(op, "write") == 0 && ac == 2)
		return op_write(av);
	if (strcmp(op, "zero") == 0 && ac == 3)
		return sys_linux.zero_at(av[0], num(av[1]), num(av[2])) == -1;
	if (strcmp(op, "partdev") == 0 && ac == 2)
		return op_partdev(av);
	if (strcmp(op, "reread") == 0 && ac == 1)
		return partition_disk(av[0], NULL, 0) == -1;
	if (strcmp(op, "md-stop") == 0 && ac == 1)
		return sys_linux.md_stop(av[0]) == -1;
	if (strcmp(op, "md-status") == 0 && ac == 1)
		return op_md_status(av[0]);
	if (strcmp(op, "md-freeze") == 0 && ac == 2)
		return errno_said(sys_linux.md_freeze(av[0], (int)num(av[1])));
	if (strcmp(op, "md-add-new") == 0 && ac == 3)
		return op_md_add_new(av);
	if (strcmp(op, "md-reshape") == 0 && ac == 3)
		return errno_said(sys_linux.md_reshape(av[0], (int)num(av[1]), num(av[2])));
	if (strcmp(op, "dm-remove") == 0 && ac == 1)
		return sys_linux.dm_remove(av[0]) == -1;
	if (strcmp(op, "dm-exists") == 0 && ac == 1) {
		r = sys_linux.dm_exists(av[0]);
		printf("%d\n", r);
		return r == -1;
	}
	if (strcmp(op, "dm-table") == 0 && ac == 1)
		return op_dm_table(av[0]);
	if (strcmp(op, "mkfs") == 0 && ac == 3)
		return op_mkfs(av);
	if (strcmp(op, "mount") == 0 && ac == 3)
		return sys_linux.mount(av[0], av[1], av[2]) == -1;
	if (strcmp(op, "umount") == 0 && ac == 1)
		return sys_linux.umount(av[0]) == -1;
	if (strcmp(op, "mounted") == 0 && ac == 1) {
		printf("%d\n", sys_linux.is_mounted(av[0]));
		return 0;
	}
	if (strcmp(op, "hotplug") == 0 && ac == 1)
		return op_hotplug(av[0]);
	return usage();
}

int
main(int argc, char **argv)
{
	const char *op;

	log_init("raidd-sysdrv", 1, 0);
	if (argc < 2)
		return usage();
	op = argv[1];
	if (strcmp(op, "partition") == 0 && argc >= 4)
		return op_partition(argv[2], argc - 3, argv + 3);
	if (strcmp(op, "md-create") == 0 && argc >= 5)
		return op_md_create(argv[2], argv[3], argc - 4, argv + 4);
	if (strcmp(op, "md-assemble") == 0 && argc >= 4)
		return op_md_assemble(argv[2], argc - 3, argv + 3);
	if (strcmp(op, "dm-create") == 0 && argc >= 5)
		return op_dm_create(argv[2], argv[3], argc - 4, argv + 4);
	return simple(op, argc - 2, argv + 2);
}
