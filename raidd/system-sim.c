/*
 * A simulated kernel: sparse in-memory disks, GPT partitions as
 * windows on them, md arrays and dm maps as records, mkfs and mount as
 * marks. Enough for the volume logic's tests, including power cuts at
 * any mutating step (sim_fail_after + sim_power_cut).
 */
#include <linux/raid/md_p.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "label.h"
#include "mdsb.h"
#include "system.h"
#include "system-sim.h"

#define CHUNK		65536
#define MAX_DEVS	64

struct chunk {
	uint64_t	 idx;
	struct chunk	*next;
	uint8_t		 data[CHUNK];
};

enum dev_kind { DEV_DISK, DEV_PART, DEV_MD, DEV_DM };

struct dev {
	enum dev_kind	 kind;
	char		 name[SYS_NAME_MAX];
	char		 serial[64], syspath[256];
	uint64_t	 size;
	struct chunk	*chunks;	/* disks hold data */
	struct chunk	**store;	/* md: its data, kept across power cuts */
	int		 parent;	/* partitions: index of the disk */
	uint64_t	 start;		/* partitions: bytes into the disk */
	int		 nsegs;		/* dm: where the bytes live */
	struct sys_seg	 seg[SYS_MAX_SEGS];
	struct sys_md	 md;		/* md: members (sb pointers unused) */
	int		 level;		/* md: from the members' superblocks */
	uint32_t	 layout;
	char		 fs[16];	/* set by mkfs */
	int		 pulled;	/* disks: out of their bay, data kept */
	int		 erroring;	/* disks: every I/O fails (vmctl disk-error) */
	int		 faulty[SYS_MAX_MEMBERS];	/* md: a member md gave up on */
	int		 broken;	/* md: lost more members than it survives */
	int		 ro;		/* md: started read-only: no write, no resync */
	int		 frozen;	/* md: MD_RECOVERY_FROZEN (in memory) */
	int		 running;	/* md: MD_RECOVERY_RUNNING, sync_action idle or frozen */
	int		 dirty;		/* md: written since it was last marked clean */
	uint64_t	 events;	/* md: the array's event count */
	int		 gone[SYS_MAX_MEMBERS];	/* md: its disk went away: no hold on it */
	int		 rebuilding[SYS_MAX_MEMBERS];	/* md: in a role, not in sync yet */
	uint64_t	 recovery[SYS_MAX_MEMBERS];	/* md: sectors recovered so far */
	int		 partial[SYS_MAX_MEMBERS];	/* md: recovered by the bitmap only */
	uint64_t	 recover_end[SYS_MAX_MEMBERS];	/* md: partial: where it ends */
	uint64_t	 bitmap;	/* md: sectors a bit of its internal bitmap covers (0: none) */
	uint64_t	 events_cleared;	/* md: its bitmap's */
	uint32_t	 slot[SYS_MAX_MEMBERS];	/* md: its desc_nr + 1 (0: not read yet) */
	uint64_t	 member_sectors;	/* md: data sectors of each member */
	char		 mounted[128];
	unsigned	 major, minor;	/* its device number */
	unsigned	 gen;		/* disks: this time in the bay (handles) */
	char		 node[SYS_NAME_MAX];	/* "": its /dev node leads to it */
};

static struct dev devs[MAX_DEVS];
static int ndevs, fail_after = -1, nops;
static unsigned next_minor, next_gen;
static void (*before_step)(void);

/* What an array holds outlives the array, as it does on its members. */
static struct {
	char		 name[SYS_NAME_MAX];
	struct chunk	*chunks;
	/* A reshape md records in the members' superblocks (reshape_position,
	   delta_disks, new_offset), kept here with the data: from_disks 0 if none. */
	int		 from_disks;
	uint64_t	 reshape_pos, new_offset;	/* sectors of each member */
	/* The member sectors the internal bitmap holds dirty (written while
	   the array lacked a member), on the members as the data is: 0, 0 none. */
	uint64_t	 dirty_lo, dirty_hi;
} stores[MAX_DEVS];

static void
free_list(struct chunk **list)
{
	struct chunk *c;

	while ((c = *list) != NULL) {
		*list = c->next;
		free(c);
	}
}

static int
store_index(const char *name)
{
	for (int i = 0; i < MAX_DEVS; i++)
		if (stores[i].name[0] && strcmp(stores[i].name, name) == 0)
			return i;
	return -1;
}

static struct chunk **
md_store(const char *name)
{
	int free_slot = -1;

	for (int i = 0; i < MAX_DEVS; i++) {
		if (stores[i].name[0] && strcmp(stores[i].name, name) == 0)
			return &stores[i].chunks;
		if (!stores[i].name[0] && free_slot == -1)
			free_slot = i;
	}
	if (free_slot == -1)
		return NULL;
	snprintf(stores[free_slot].name, sizeof(stores[0].name), "%s", name);
	return &stores[free_slot].chunks;
}

/* A pulled disk and its partitions are not there for the kernel. */
static int
gone(const struct dev *d)
{
	return d->pulled || (d->kind == DEV_PART && devs[d->parent].pulled);
}

static struct dev *
find(const char *name)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && !gone(&devs[i]) && strcmp(devs[i].name, name) == 0)
			return &devs[i];
	return NULL;
}

/* What opening /dev/<name> reaches: its node may lead elsewhere. */
static struct dev *
by_node(const char *name)
{
	struct dev *d = find(name);

	return d && d->node[0] ? find(d->node) : d;
}

static struct dev *
find_pulled(const char *name)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && devs[i].pulled && strcmp(devs[i].name, name) == 0)
			return &devs[i];
	return NULL;
}

static void sb_sync(struct dev *);
static void md_mark(struct dev *, int dirty);
static void bitmap_write(struct dev *, uint64_t, size_t);
static struct dev *fd_dev(int);
static int zero_dev(struct dev *, uint64_t, uint64_t);
static int zero_dev_nostep(struct dev *, uint64_t, uint64_t);
static void close_all(void);

/* The disk under a member: a partition's parent, or the disk itself. */
static struct dev *
disk_of(struct dev *d)
{
	return d->kind == DEV_PART ? &devs[d->parent] : d;
}

/* A member md can no longer reach: gone, or failing every I/O. */
static int
unreachable(const char *dev)
{
	struct dev *d = find(dev);

	return d == NULL || disk_of(d)->erroring;
}

static int md_survives(struct dev *);
static void take_spares(struct dev *);
static int reshaping(const char *);

/*
 * What md does when I/O to an array finds a member unreachable: marks
 * it faulty (it stays listed, and out, until removed). An idle array
 * notices nothing: pulling a disk alone fails no member.  As for
 * sim_fail_member: md_error(), then remove_and_add_spares() frees its
 * slot and a spare the array holds is recovered into the role at once
 * (not on a read-only array, nor while it reshapes).
 */
static void
md_io_errors(struct dev *a)
{
	int changed = 0;

	for (int m = 0; m < a->md.nmembers; m++)
		if (!a->faulty[m] && unreachable(a->md.member[m].dev))
			a->faulty[m] = changed = 1;
	if (!md_survives(a))
		a->broken = 1;
	if (changed && !a->ro && !reshaping(a->name))
		take_spares(a);
	if (changed) {
		sb_sync(a);
		sim_md_event(a->name);
	}
}

void
sim_pull_disk(const char *name)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_DISK)
		return;
	d->pulled = 1;
	d->gen = ++next_gen;
	/* md notices nothing until I/O or a user fails the member; the
	   kernel lets go of the device, so a disk put back is not held. */
	for (int i = 0; i < ndevs; i++)
		for (int m = 0; devs[i].name[0] && devs[i].kind == DEV_MD &&
		    m < devs[i].md.nmembers; m++)
			if (find(devs[i].md.member[m].dev) == NULL)
				devs[i].gone[m] = 1;
}

/* Every I/O to the disk fails from now on (or works again); md fails its
   members at once (its own superblock and bitmap writes hit them soon). */
void
sim_disk_error(const char *name, int on)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_DISK)
		return;
	d->erroring = on;
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && devs[i].kind == DEV_MD)
			md_io_errors(&devs[i]);
}

void
sim_push_disk(const char *name)
{
	struct dev *d = find_pulled(name);

	if (d) {
		d->pulled = 0;
		d->gen = ++next_gen;	/* a new device for the kernel */
	}
}

static struct dev *
new_dev(enum dev_kind k, const char *name)
{
	struct dev *d = NULL;
	char copy[SYS_NAME_MAX];

	snprintf(copy, sizeof(copy), "%s", name);
	for (int i = 0; i < ndevs && !d; i++)
		if (devs[i].name[0] == '\0')
			d = &devs[i];
	if (d == NULL && ndevs < MAX_DEVS)
		d = &devs[ndevs++];
	if (d == NULL)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->kind = k;
	memcpy(d->name, copy, sizeof(d->name));
	d->major = k == DEV_MD ? 9 : k == DEV_DM ? 253 : 8;
	d->minor = ++next_minor;
	/* sd's index is the lowest free one: a disk inserted where another
	   was pulled takes its name and its device number (sdc is 8:32). */
	if (k == DEV_DISK && strncmp(copy, "sd", 2) == 0 && copy[2] >= 'a' &&
	    copy[2] <= 'z' && copy[3] == '\0')
		d->minor = 1000 + (unsigned)(copy[2] - 'a') * 16;
	d->gen = ++next_gen;
	return d;
}

static void
free_chunks(struct dev *d)
{
	free_list(&d->chunks);
}

static void
drop(struct dev *d)
{
	if (d->kind == DEV_MD)
		sim_md_gone(d->name, 1);
	free_chunks(d);
	memset(d, 0, sizeof(*d));
}

/* Counts a mutating step; fails it once the simulated power is gone. */
static int
step(void)
{
	void (*fn)(void) = before_step;

	before_step = NULL;
	if (fn)
		fn();
	nops++;
	if (fail_after == 0)
		return errno = EIO, -1;
	if (fail_after > 0)
		fail_after--;
	return 0;
}

void
sim_fail_after(int n)
{
	fail_after = n;
}

void
sim_before_step(void (*fn)(void))
{
	before_step = fn;
}

void
sim_node_swap(const char *a, const char *b)
{
	struct dev *x = find(a), *y = find(b);

	if (x == NULL || y == NULL)
		return;
	if (strcmp(x->node, b) == 0) {	/* again: the nodes are put back */
		x->node[0] = y->node[0] = '\0';
		return;
	}
	snprintf(x->node, sizeof(x->node), "%s", b);
	snprintf(y->node, sizeof(y->node), "%s", a);
}

int
sim_ops(void)
{
	return nops;
}

void
sim_add_disk(const char *name, uint64_t size, const char *serial, const char *syspath)
{
	struct dev *d = new_dev(DEV_DISK, name);

	d->size = size;
	snprintf(d->serial, sizeof(d->serial), "%s", serial);
	snprintf(d->syspath, sizeof(d->syspath), "%s", syspath);
}

void
sim_remove_disk(const char *name)
{
	struct dev *d = find(name);
	int idx;

	if (d == NULL)
		return;
	idx = (int)(d - devs);
	for (int i = 0; i < ndevs; i++)
		if (devs[i].kind == DEV_PART && devs[i].parent == idx)
			drop(&devs[i]);
	drop(d);
}

void
sim_swap_disks(const char *a, const char *b)
{
	struct dev *x = find(a), *y = find(b), t;
	int xi, yi;

	if (x == NULL || y == NULL)
		return;
	xi = (int)(x - devs);
	yi = (int)(y - devs);
	t = *x;
	x->chunks = y->chunks;
	x->size = y->size;
	memcpy(x->serial, y->serial, sizeof(x->serial));
	y->chunks = t.chunks;
	y->size = t.size;
	memcpy(y->serial, t.serial, sizeof(y->serial));
	/* Each name is another disk now: what was open on it is gone. */
	x->gen = ++next_gen;
	y->gen = ++next_gen;
	for (int i = 0; i < ndevs; i++) {
		if (devs[i].kind != DEV_PART || !devs[i].name[0])
			continue;
		if (devs[i].parent == xi || devs[i].parent == yi) {
			const char *disk = devs[i].parent == xi ? b : a;
			char name[SYS_NAME_MAX];

			devs[i].parent = devs[i].parent == xi ? yi : xi;
			snprintf(name, sizeof(name), "%s%s", disk,
			    devs[i].name + strlen(devs[i].parent == yi ? a : b));
			memcpy(devs[i].name, name, sizeof(name));
		}
	}
}

void
sim_power_cut(void)
{
	sim_sync_forget();
	for (int i = 0; i < ndevs; i++) {
		if (devs[i].kind == DEV_DM || devs[i].kind == DEV_MD)
			drop(&devs[i]);
		else
			devs[i].mounted[0] = '\0';
	}
	fail_after = -1;
}

void
sim_reset(void)
{
	sim_sync_reset();
	for (int i = 0; i < ndevs; i++)
		drop(&devs[i]);
	for (int i = 0; i < MAX_DEVS; i++) {
		free_list(&stores[i].chunks);
		stores[i].name[0] = '\0';
		stores[i].from_disks = 0;
		stores[i].dirty_lo = stores[i].dirty_hi = 0;
	}
	ndevs = 0;
	nops = 0;
	fail_after = -1;
	before_step = NULL;
	close_all();
}

static int
count(enum dev_kind k)
{
	int n = 0;

	for (int i = 0; i < ndevs; i++)
		n += devs[i].name[0] && devs[i].kind == k;
	return n;
}

int
sim_md_count(void)
{
	return count(DEV_MD);
}

int
sim_dm_count(void)
{
	return count(DEV_DM);
}

int
sim_mount_count(void)
{
	int n = 0;

	for (int i = 0; i < ndevs; i++)
		n += devs[i].mounted[0] != '\0';
	return n;
}

/* ---- byte I/O: partitions and dm maps resolve to where bytes live ---- */

static uint8_t *
chunk_at(struct dev *d, uint64_t idx, int create)
{
	struct chunk **list = d->store ? d->store : &d->chunks, *c;

	for (c = *list; c; c = c->next)
		if (c->idx == idx)
			return c->data;
	if (!create || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->idx = idx;
	c->next = *list;
	*list = c;
	return c->data;
}

static int dev_io(struct dev *, uint64_t, uint8_t *, const uint8_t *, size_t);

/* What zero_at writes from (.bss: never written). */
static const uint8_t zeros[CHUNK];

static int
dm_io(struct dev *d, uint64_t off, uint8_t *rbuf, const uint8_t *wbuf, size_t len)
{
	uint64_t at = 0;

	for (int i = 0; i < d->nsegs && len > 0; i++) {
		const struct sys_seg *s = &d->seg[i];
		struct dev *under = find(s->dev);

		if (off < at + s->len) {
			size_t n = (size_t)(at + s->len - off) < len ?
			    (size_t)(at + s->len - off) : len;

			if (under == NULL || dev_io(under, s->offset + off - at, rbuf, wbuf, n) == -1)
				return errno = EIO, -1;
			off += n;
			len -= n;
			rbuf = rbuf ? rbuf + n : NULL;
			wbuf = wbuf ? wbuf + n : NULL;
		}
		at += s->len;
	}
	return len ? (errno = EINVAL, -1) : 0;
}

static int
dev_io(struct dev *d, uint64_t off, uint8_t *rbuf, const uint8_t *wbuf, size_t len)
{
	if (off + len > d->size)
		return errno = EINVAL, -1;
	if (disk_of(d)->erroring)
		return errno = EIO, -1;
	if (d->kind == DEV_MD) {
		md_io_errors(d);
		if (d->broken)
			return errno = EIO, -1;
		if (wbuf && d->ro)
			return errno = EROFS, -1;
		/* md_write_start(): the superblocks say dirty before the first write. */
		if (wbuf && !d->dirty)
			md_mark(d, 1);
		if (wbuf)
			bitmap_write(d, off, len);
	}
	if (d->kind == DEV_PART)
		return dev_io(&devs[d->parent], d->start + off, rbuf, wbuf, len);
	if (d->kind == DEV_DM)
		return dm_io(d, off, rbuf, wbuf, len);
	while (len > 0) {
		size_t in = (size_t)(off % CHUNK), n = CHUNK - in < len ? CHUNK - in : len;
		/* Zeros over a chunk never written change nothing: not stored. */
		int blank = wbuf && (uintptr_t)wbuf - (uintptr_t)zeros < sizeof(zeros);
		uint8_t *c = chunk_at(d, off / CHUNK, wbuf != NULL && !blank);

		if (rbuf)
			c ? memcpy(rbuf, c + in, n) : memset(rbuf, 0, n);
		else if (c != NULL)
			memcpy(c + in, wbuf, n);
		else if (!blank)
			return errno = ENOMEM, -1;
		off += n;
		len -= n;
		rbuf = rbuf ? rbuf + n : NULL;
		wbuf = wbuf ? wbuf + n : NULL;
	}
	return 0;
}

static int nreads;

int
sim_reads(void)
{
	return nreads;
}

static int
sim_read_at(const char *name, uint64_t off, void *buf, size_t len)
{
	struct dev *d = by_node(name);

	nreads++;
	return d ? dev_io(d, off, buf, NULL, len) : (errno = ENOENT, -1);
}

static int
sim_write_at(const char *name, uint64_t off, const void *buf, size_t len)
{
	struct dev *d = by_node(name);

	if (d == NULL)
		return errno = ENOENT, -1;
	if (step() == -1)
		return -1;
	return dev_io(d, off, NULL, buf, len);
}

static int
sim_zero_at(const char *name, uint64_t off, uint64_t len)
{
	struct dev *d = by_node(name);

	if (d == NULL)
		return errno = ENOENT, -1;
	return zero_dev(d, off, len);
}

static int
zero_dev(struct dev *d, uint64_t off, uint64_t len)
{
	if (step() == -1)
		return -1;
	return zero_dev_nostep(d, off, len);
}

static int
zero_dev_nostep(struct dev *d, uint64_t off, uint64_t len)
{
	while (len > 0) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;

		if (dev_io(d, off, NULL, zeros, n) == -1)
			return -1;
		off += n;
		len -= n;
	}
	return 0;
}

/* ---- discovery: signatures at the places blkid would look ---- */

static int
has_bytes(struct dev *d, uint64_t off, const void *magic, size_t n)
{
	uint8_t buf[16];

	return off + n <= d->size && dev_io(d, off, buf, NULL, n) == 0 &&
	    memcmp(buf, magic, n) == 0;
}

static void
add_sig(struct sys_disk *s, const char *type, const char *where, uint64_t off)
{
	if (s->nsigs == SYS_MAX_SIGS)
		return;
	snprintf(s->sig[s->nsigs].type, sizeof(s->sig[0].type), "%s", type);
	snprintf(s->sig[s->nsigs].where, sizeof(s->sig[0].where), "%s", where);
	s->sig[s->nsigs++].offset = off;
}

static void
probe(struct dev *d, uint64_t base, struct sys_disk *s)
{
	static const uint8_t md[] = { 0xfc, 0x4e, 0x2b, 0xa9 };
	static const uint8_t ext[] = { 0x53, 0xef };

	if (has_bytes(d, 512, "EFI PART", 8))
		add_sig(s, "gpt", d->name, base + 512);
	if (has_bytes(d, 4096, md, 4))
		add_sig(s, "linux_raid_member", d->name, base + 4096);
	if (has_bytes(d, 1080, ext, 2))
		add_sig(s, "ext4", d->name, base + 1080);
	if (has_bytes(d, 0, "LUKS\xba\xbe", 6))
		add_sig(s, "crypto_LUKS", d->name, base);
}

/* raidd's label magic, as the Linux seam reports it (system-linux-sig.c). */
static void
probe_label(struct dev *d, struct sys_disk *s)
{
	if (has_bytes(d, LABEL_SLOT0, LABEL_MAGIC, 8))
		add_sig(s, "raidd", d->name, LABEL_SLOT0);
	else if (has_bytes(d, LABEL_SLOT1, LABEL_MAGIC, 8))
		add_sig(s, "raidd", d->name, LABEL_SLOT1);
	else if (has_bytes(d, LABEL_SLOT0, SPARE_MAGIC, 8) ||
	    has_bytes(d, LABEL_SLOT1, SPARE_MAGIC, 8))
		add_sig(s, "raidd-spare", d->name, LABEL_SLOT0);
}

static int nprobes;

int
sim_probes(void)
{
	return nprobes;
}

static void
fill_disk(int idx, struct sys_disk *s)
{
	struct dev *d = &devs[idx];

	nprobes++;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", d->name);
	snprintf(s->syspath, sizeof(s->syspath), "%s", d->syspath);
	snprintf(s->serial, sizeof(s->serial), "%s", d->serial);
	snprintf(s->model, sizeof(s->model), "SIM DISK");
	s->major = d->major;
	s->minor = d->minor;
	s->size = d->size;
	s->rotational = 1;
	s->logical_block = s->physical_block = 512;
	probe(d, 0, s);
	probe_label(d, s);
	for (int i = 0; i < ndevs; i++) {
		struct dev *p = &devs[i];

		if (p->name[0] == '\0' || p->kind != DEV_PART || p->parent != idx)
			continue;
		probe(p, p->start, s);
		for (int j = 0; j < ndevs; j++)
			if (devs[j].kind == DEV_MD && devs[j].name[0])
				for (int m = 0; m < devs[j].md.nmembers; m++)
					if (!devs[j].gone[m] &&
					    strcmp(devs[j].md.member[m].dev, p->name) == 0)
						snprintf(s->busy, sizeof(s->busy),
						    "member of %s", devs[j].name);
	}
}

static int
sim_scan_disks(struct sys_disk **out, int *n)
{
	*n = 0;
	if ((*out = calloc(MAX_DEVS, sizeof(**out))) == NULL)
		return -1;
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && devs[i].kind == DEV_DISK && !devs[i].pulled)
			fill_disk(i, &(*out)[(*n)++]);
	return 0;
}

static int
sim_scan_disk(const char *name, struct sys_disk *out)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_DISK)
		return 1;
	fill_disk((int)(d - devs), out);
	return 0;
}

/* ---- partitions ---- */

static int
sim_reread_parts(const char *disk, int fd)
{
	struct dev *d = fd_dev(fd);
	int idx;

	(void)disk;
	if (d == NULL)
		return -1;
	/* Without a GPT the kernel forgets the partitions. */
	if (has_bytes(d, 512, "EFI PART", 8))
		return 0;
	idx = (int)(d - devs);
	for (int i = 0; i < ndevs; i++)
		if (devs[i].kind == DEV_PART && devs[i].parent == idx && devs[i].name[0])
			drop(&devs[i]);
	return 0;
}

/*
 * A GPT as libfdisk writes one, in the fields raidd reads back: the
 * header at LBA 1, 128 entries of 128 bytes from LBA 2, each with a
 * type, first and last LBA and a UTF-16LE name; the backup header in
 * the last sector, with the header's size, place and CRCs (raidd's
 * proof checks them, as the kernel does before it trusts a primary GPT).
 */
static void
write_gpt(struct dev *d, const struct sys_part *parts, int n)
{
	static const uint8_t linux_fs[16] = { 0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
		0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4 };
	static uint8_t ents[128 * 128];
	uint8_t hdr[92] = "EFI PART", ent[128];
	uint64_t lba = 2, mine = 1;
	uint32_t num = 128, size = 128, hsize = 92, crc;

	for (uint32_t i = 0; i < num; i++) {
		memset(ent, 0, sizeof(ent));
		if ((int)i < n) {
			uint64_t first = parts[i].start / 512, last = first + parts[i].size / 512 - 1;

			static const uint8_t zero[16];

			memcpy(ent, memcmp(parts[i].type, zero, 16) ? parts[i].type : linux_fs, 16);
			if (memcmp(parts[i].guid, zero, 16) != 0)
				memcpy(ent + 16, parts[i].guid, 16);
			else
				ent[16] = (uint8_t)(i + 1);
			memcpy(ent + 32, &first, 8);
			memcpy(ent + 40, &last, 8);
			for (int k = 0; k < 36 && parts[i].name[k]; k++)
				ent[56 + 2 * k] = (uint8_t)parts[i].name[k];
		}
		memcpy(ents + i * 128, ent, sizeof(ent));
	}
	memcpy(hdr + 12, &hsize, 4);
	memcpy(hdr + 24, &mine, 8);
	memcpy(hdr + 72, &lba, 8);
	memcpy(hdr + 80, &num, 4);
	memcpy(hdr + 84, &size, 4);
	crc = gpt_crc32(0, ents, sizeof(ents));
	memcpy(hdr + 88, &crc, 4);
	crc = gpt_crc32(0, hdr, sizeof(hdr));
	memcpy(hdr + 16, &crc, 4);
	dev_io(d, 512, NULL, hdr, sizeof(hdr));
	dev_io(d, d->size - 512, NULL, hdr, sizeof(hdr));
	dev_io(d, 1024, NULL, ents, sizeof(ents));
}

/*
 * After an entry changed: the CRCs again and the backup in the disk's
 * last sector, as libfdisk writes the whole table back (a grown disk's
 * backup moves to its new end).
 */
static void
gpt_reseal(struct dev *d)
{
	static uint8_t ents[128 * 128];
	uint8_t hdr[92];
	uint32_t crc = 0;

	if (dev_io(d, 512, hdr, NULL, sizeof(hdr)) == -1 ||
	    dev_io(d, 1024, ents, NULL, sizeof(ents)) == -1)
		return;
	crc = gpt_crc32(0, ents, sizeof(ents));
	memcpy(hdr + 88, &crc, 4);
	memset(hdr + 16, 0, 4);
	crc = gpt_crc32(0, hdr, sizeof(hdr));
	memcpy(hdr + 16, &crc, 4);
	dev_io(d, 512, NULL, hdr, sizeof(hdr));
	dev_io(d, d->size - 512, NULL, hdr, sizeof(hdr));
}

/* As libfdisk and BLKRRPART on the descriptor: the disk it is open on. */
static int
sim_partition(const char *disk, int fd, const struct sys_part *parts, int n)
{
	struct dev *d = fd_dev(fd), *p;
	char name[SYS_NAME_MAX];
	int idx;

	(void)disk;
	if (d == NULL)
		return -1;
	if (step() == -1)
		return -1;
	idx = (int)(d - devs);
	for (int i = 0; i < ndevs; i++)
		if (devs[i].kind == DEV_PART && devs[i].parent == idx && devs[i].name[0])
			drop(&devs[i]);
	write_gpt(d, parts, n);
	for (int i = 0; i < n; i++) {
		if (parts[i].start + parts[i].size > d->size)
			return errno = EINVAL, -1;
		snprintf(name, sizeof(name), "%.60s%c", d->name, '1' + i);
		if ((p = new_dev(DEV_PART, name)) == NULL)
			return errno = ENOSPC, -1;
		p->parent = idx;
		p->start = parts[i].start;
		p->size = parts[i].size;
	}
	return 0;
}

static int
sim_part_dev(const char *disk, uint64_t start, char *out, size_t len)
{
	struct dev *d = find(disk);

	if (d == NULL)
		return errno = ENOENT, -1;
	for (int i = 0; i < ndevs; i++) {
		if (devs[i].kind == DEV_PART && devs[i].name[0] &&
		    &devs[devs[i].parent] == d && devs[i].start == start) {
			snprintf(out, len, "%s", devs[i].name);
			return 0;
		}
	}
	return errno = ENOENT, -1;
}

/* ---- md: an array is a record; its data lives in its own chunks ---- */

#define SB_AT	(MDSB_SUPER_OFFSET * 512ULL)

static int
sb_read(struct dev *m, struct mdsb *sb)
{
	static uint8_t buf[MDSB_BLOCK];
	char err[MDSB_ERRLEN];

	return dev_io(m, SB_AT, buf, NULL, sizeof(buf)) == 0 &&
	    mdsb_decode(buf, sizeof(buf), MDSB_SUPER_OFFSET, sb, err, sizeof(err)) == 0 ? 0 : -1;
}

static void
sb_write(struct dev *m, const struct mdsb *sb)
{
	static uint8_t buf[MDSB_BLOCK];
	char err[MDSB_ERRLEN];

	if (mdsb_encode(sb, buf, sizeof(buf), err, sizeof(err)) == 0)
		dev_io(m, SB_AT, NULL, buf, sizeof(buf));
}

/*
 * A member's slot (desc_nr), remembered from its own superblock: md keeps
 * it in the rdev, so a member whose disk fails or goes away still holds
 * its slot (written faulty) until it is removed.
 */
static uint32_t
member_slot(struct dev *a, int i)
{
	struct dev *m = find(a->md.member[i].dev);
	struct mdsb own;

	if (m && sb_read(m, &own) == 0)
		a->slot[i] = own.dev_number + 1;
	return a->slot[i] ? a->slot[i] - 1 : UINT32_MAX;
}

/*
 * As md does on every change of membership: each working member's
 * superblock gets the new event count and the roles as they are now: a
 * member still bound that failed or went missing faulty (md keeps its
 * rdev and slot until it is removed), every other slot spare, whatever
 * it held before (super_1_sync fills every slot spare first).
 */
static void
sb_sync(struct dev *a)
{
	struct mdsb sb;
	uint16_t roles[SYS_MAX_MEMBERS];
	uint32_t num[SYS_MAX_MEMBERS];

	a->events++;
	for (int i = 0; i < a->md.nmembers; i++) {
		struct dev *m = find(a->md.member[i].dev);

		num[i] = member_slot(a, i);
		roles[i] = a->faulty[i] || m == NULL ? MDSB_ROLE_FAULTY :
		    (uint16_t)a->md.member[i].role;
	}
	for (int i = 0; i < a->md.nmembers; i++) {
		struct dev *m = find(a->md.member[i].dev);

		if (a->faulty[i] || m == NULL || sb_read(m, &sb) == -1)
			continue;
		sb.events = a->events;
		/* md keeps a rebuilding member's progress in its own superblock. */
		if (a->rebuilding[i]) {
			sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
			sb.recovery_offset = a->recovery[i];
		} else {
			sb.feature_map &= ~(uint32_t)MD_FEATURE_RECOVERY_OFFSET;
			sb.recovery_offset = 0;
		}
		/* super_1_sync: every slot spare, then each bound device's own
		   (a faulty one, or one gone unremoved, still holds its slot). */
		for (uint32_t r = 0; r < sb.max_dev && r < MDSB_MAX_DEV_LIMIT; r++)
			sb.dev_roles[r] = MDSB_ROLE_SPARE;
		for (int k = 0; k < a->md.nmembers; k++)
			if (num[k] < sb.max_dev)
				sb.dev_roles[num[k]] = roles[k];
		sb_write(m, &sb);
	}
}

/* Which roles a member holds in sync; the count of those none does (md's degraded). */
static int
roles_ok(const struct dev *a, int *ok)
{
	int lacking = 0;

	for (int m = 0; m < a->md.nmembers; m++)
		if (!a->faulty[m] && !a->rebuilding[m] && a->md.member[m].role >= 0 &&
		    a->md.member[m].role < SYS_MAX_MEMBERS)
			ok[a->md.member[m].role] = 1;
	for (int r = 0; r < a->md.raid_disks && r < SYS_MAX_MEMBERS; r++)
		lacking += !ok[r];
	return lacking;
}

static int
md_lacking(const struct dev *a)
{
	int ok[SYS_MAX_MEMBERS] = { 0 };

	return roles_ok(a, ok);
}

/*
 * raid5.c run(): a RAID 4/5/6 array that was being written when it
 * stopped (resync_offset not "in sync") and lacks a member may hold
 * stripes whose parity disagrees with their data, and the missing
 * member's blocks would be made from it: md refuses to start it unless
 * start_dirty_degraded is set. RAID 1 and 10 have no parity: they start.
 */
static int
dirty_degraded(const struct dev *a, uint64_t resync)
{
	return (a->level == 4 || a->level == 5 || a->level == 6) &&
	    resync != MDSB_RESYNC_CLEAN && md_lacking(a) > 0;
}

/* What md writes in its members' superblocks on going dirty or clean. */
static void
md_mark(struct dev *a, int dirty)
{
	struct mdsb sb;

	a->dirty = dirty;
	for (int i = 0; i < a->md.nmembers; i++) {
		struct dev *m = find(a->md.member[i].dev);

		(void)member_slot(a, i);	/* learnt while it can be read */
		if (a->faulty[i] || m == NULL || sb_read(m, &sb) == -1)
			continue;
		sb.resync_offset = dirty ? 0 : MDSB_RESYNC_CLEAN;
		sb_write(m, &sb);
	}
}

/* Whether md runs the array with the members it has in sync. */
static int
md_survives(struct dev *a)
{
	int ok[SYS_MAX_MEMBERS] = { 0 }, n = a->md.raid_disks, lacking = roles_ok(a, ok);

	switch (a->level) {
	case 1:
		return lacking < n;
	case 5:
		return lacking <= 1;
	case 10:
		/* near=2: each pair of roles holds one copy of its chunks. */
		for (int r = 0; r + 1 < n; r += 2)
			if (!ok[r] && !ok[r + 1])
				return 0;
		return (a->layout & 0xff) == 2 && n % 2 == 0;
	default:
		return lacking == 0;
	}
}

/*
 * super_1_load() against the member bound before it (md_add_new_disk():
 * "has different UUID"): the same array, at the same level, layout and
 * chunk, or md refuses it.  Each is compared to the one before, so all
 * it takes match the first.  A cut in md_update_sb() after a takeover
 * leaves members at both levels: those unlike the first are left out.
 */
static int
same_array(const struct mdsb *a, const struct mdsb *ref)
{
	return memcmp(a->set_uuid, ref->set_uuid, 16) == 0 && a->level == ref->level &&
	    a->layout == ref->layout && a->chunksize == ref->chunksize;
}

/* super_1_load(): a spare's events never make it the freshest (nor a faulty one's). */
static int
sb_in_role(const struct mdsb *sb)
{
	return sb->dev_number < sb->max_dev && sb->dev_roles[sb->dev_number] < MD_DISK_ROLE_MAX;
}

/*
 * Assembly as the kernel does it from v1.2 superblocks: a member of
 * another array, or at another level, layout or chunk than the first,
 * is refused; the freshest member in a role decides (none: no array);
 * one more than an event behind it is kicked (analyze_sbs: non-fresh),
 * whatever its bitmap; one the freshest calls faulty stays bound,
 * Faulty, in no slot (super_1_validate), and never runs. What is left
 * runs, degraded or not.
 */
static int
assemble_members(const struct sys_md *md, struct sys_md *out, struct mdsb *geom,
    uint64_t *recovery, int *faulty)
{
	struct mdsb sb[SYS_MAX_MEMBERS], *fresh = NULL, *ref = NULL;
	int ok[SYS_MAX_MEMBERS] = { 0 };

	*out = *md;
	out->nmembers = 0;
	for (int i = 0; i < md->nmembers; i++) {
		struct dev *m = find(md->member[i].dev);

		if (m == NULL || sb_read(m, &sb[i]) == -1)
			continue;
		if (ref && !same_array(&sb[i], ref))
			continue;
		if (ref == NULL)
			ref = &sb[i];
		ok[i] = 1;
		if (sb_in_role(&sb[i]) && (fresh == NULL || sb[i].events > fresh->events))
			fresh = &sb[i];
	}
	if (fresh == NULL)
		return errno = EINVAL, -1;
	*geom = *fresh;
	for (int i = 0; i < md->nmembers; i++) {
		struct dev *m = find(md->member[i].dev);

		uint16_t role;

		if (!ok[i] || sb[i].dev_number >= fresh->max_dev)
			continue;
		/* super_1_validate: a member in a role by its own superblock more
		   than one event behind the freshest is kicked (the bitmap only
		   serves a re-add once the array runs); one behind takes the role
		   the freshest gives it (faulty for one md failed), whatever the
		   caller asked. */
		role = sb[i].dev_number < sb[i].max_dev ? sb[i].dev_roles[sb[i].dev_number] :
		    MDSB_ROLE_SPARE;
		if (role < MDSB_ROLE_FAULTY && sb[i].events + 1 < fresh->events)
			continue;
		if (sb[i].events < fresh->events)
			role = fresh->dev_roles[sb[i].dev_number];
		faulty[out->nmembers] = role == MDSB_ROLE_FAULTY;
		if (role == MDSB_ROLE_FAULTY) {
			recovery[out->nmembers] = UINT64_MAX;
			out->member[out->nmembers] = md->member[i];
			out->member[out->nmembers++].role = -1;
			continue;
		}
		/* md: a device smaller than the array's component is refused. */
		if (sb[i].data_offset + fresh->size > m->size / 512)
			continue;
		/* A member md was rebuilding resumes where its superblock says. */
		recovery[out->nmembers] = role != MDSB_ROLE_SPARE &&
		    (sb[i].feature_map & MD_FEATURE_RECOVERY_OFFSET) ?
		    sb[i].recovery_offset : UINT64_MAX;
		out->member[out->nmembers] = md->member[i];
		out->member[out->nmembers++].role = role == MDSB_ROLE_SPARE ? -1 : role;
	}
	for (int i = 0; i < out->nmembers; i++)
		if (!faulty[i])
			return 0;
	return errno = EINVAL, -1;
}

/* The bytes an array offers: component sectors times the members' worth of data. */
static uint64_t
md_bytes(int level, uint32_t raid_disks, uint64_t sectors)
{
	uint64_t n = level == 0 ? raid_disks : level == 5 ? raid_disks - 1 :
	    level == 10 ? raid_disks / 2 : 1;

	return sectors * 512 * n;
}

/* ---- md's internal write-intent bitmap ---- */

/* The array's bitmap superblock, as md reads it from a working member. */
static int
bitmap_sb(struct dev *a, struct mdsb_bitmap *b)
{
	uint8_t buf[MDSB_BITMAP_SB];
	char err[MDSB_ERRLEN];
	struct mdsb sb;
	struct dev *m;

	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && (m = find(a->md.member[i].dev)) && sb_read(m, &sb) == 0 &&
		    sb.bitmap_offset > 0 && dev_io(m, SB_AT + (uint64_t)sb.bitmap_offset * 512,
		    buf, NULL, sizeof(buf)) == 0 &&
		    mdsb_bitmap_decode(buf, sizeof(buf), b, err, sizeof(err)) == 0)
			return 0;
	return -1;
}

/*
 * md_bitmap_update_sb(): events and events_cleared (bytes 24 and 32 of
 * bitmap_super_t, little-endian) go to every working member's bitmap.
 */
static void
bitmap_cleared_sync(struct dev *a)
{
	uint8_t le[16];
	struct mdsb sb;
	struct dev *m;

	for (int k = 0; k < 8; k++) {
		le[k] = (uint8_t)(a->events >> (8 * k));
		le[8 + k] = (uint8_t)(a->events_cleared >> (8 * k));
	}
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && (m = find(a->md.member[i].dev)) && sb_read(m, &sb) == 0 &&
		    sb.bitmap_offset > 0)
			dev_io(m, SB_AT + (uint64_t)sb.bitmap_offset * 512 + 24, NULL, le,
			    sizeof(le));
}

/*
 * md_bitmap_startwrite/endwrite on a write to the array. While it lacks
 * a member (missing, or being rebuilt) the chunks written stay dirty:
 * what a member re-added later is given back. A write the whole array
 * takes moves events_cleared up to the array's events: a member gone
 * before that can no longer be re-added in its role (super_1_validate).
 */
static void
bitmap_write(struct dev *a, uint64_t off, size_t len)
{
	uint64_t per = md_bytes(a->level, a->md.raid_disks, 1), lo, hi;
	int s = store_index(a->name);

	if (!a->bitmap || s < 0 || per == 0)
		return;
	if (md_lacking(a) == 0) {
		if (a->events_cleared < a->events) {
			a->events_cleared = a->events;
			bitmap_cleared_sync(a);
		}
		return;
	}
	/* Member sectors, out to whole bitmap chunks (a->bitmap: sectors each). */
	lo = off / per / a->bitmap * a->bitmap;
	hi = ((off + len + per - 1) / per + a->bitmap - 1) / a->bitmap * a->bitmap;
	if (hi > a->member_sectors)
		hi = a->member_sectors;
	if (stores[s].dirty_hi == 0 || lo < stores[s].dirty_lo)
		stores[s].dirty_lo = lo;
	if (hi > stores[s].dirty_hi)
		stores[s].dirty_hi = hi;
}

/*
 * mdadm --grow --bitmap=none, then --bitmap=internal, on a running array:
 * a new bitmap, nothing dirty, cleared up to the array's events
 * (md_bitmap_create), so no member gone before it can come back in its
 * role.
 */
int
sim_md_bitmap_renew(const char *name)
{
	struct dev *a = find(name);
	int s = store_index(name);

	if (a == NULL || a->kind != DEV_MD || !a->bitmap)
		return errno = ENODEV, -1;
	a->events_cleared = a->events;
	if (s >= 0)
		stores[s].dirty_lo = stores[s].dirty_hi = 0;
	bitmap_cleared_sync(a);
	return 0;
}

/* At start: md loads its bitmap (chunk size, events_cleared) from a member. */
static void
bitmap_load(struct dev *a)
{
	struct mdsb_bitmap b;

	a->bitmap = 0;
	if (bitmap_sb(a, &b) == -1 || b.chunksize < 512)
		return;
	a->bitmap = b.chunksize / 512;
	a->events_cleared = b.events_cleared;
}

/* A recovery that made the array whole synced every dirty chunk (md_bitmap_end_sync). */
static void
bitmap_synced(struct dev *a)
{
	int s = store_index(a->name);

	if (s >= 0 && md_lacking(a) == 0)
		stores[s].dirty_lo = stores[s].dirty_hi = 0;
}

/* Whether a member in sync, or being rebuilt, holds role r. */
static int
role_held(const struct dev *a, int r)
{
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && a->md.member[i].role == r)
			return 1;
	return 0;
}

/*
 * md's recovery: a spare of a degraded redundant array takes the lowest
 * role nobody holds and is rebuilt into it from the start. Only a spare
 * is ever recovered onto.
 */
static void
take_spares(struct dev *a)
{
	/* md_check_recovery: no remove_and_add_spares while frozen. */
	if (a->frozen)
		return;
	if (a->level != 1 && a->level != 5 && a->level != 10)
		return;
	for (int i = 0; i < a->md.nmembers; i++) {
		if (a->faulty[i] || a->md.member[i].role >= 0 || a->broken)
			continue;
		for (int r = 0; r < a->md.raid_disks && r < SYS_MAX_MEMBERS; r++) {
			if (role_held(a, r))
				continue;
			a->md.member[i].role = r;
			a->rebuilding[i] = 1;
			a->recovery[i] = 0;
			break;
		}
	}
}

/* The running array that has dev as a member (not failed out), or NULL. */
static struct dev *
md_holder(const char *dev)
{
	for (int i = 0; i < ndevs; i++) {
		if (devs[i].kind != DEV_MD || devs[i].name[0] == '\0')
			continue;
		for (int k = 0; k < devs[i].md.nmembers; k++)
			if (!devs[i].faulty[k] && strcmp(devs[i].md.member[k].dev, dev) == 0)
				return &devs[i];
	}
	return NULL;
}

static int
md_start(const struct sys_md *md, int create)
{
	struct sys_md use;
	struct dev *a, *m;
	static struct mdsb fresh;
	uint64_t recovery[SYS_MAX_MEMBERS];
	int faulty[SYS_MAX_MEMBERS] = { 0 };

	if (find(md->name))
		return errno = EEXIST, -1;
	use.nmembers = 0;
	for (int i = 0; i < md->nmembers; i++) {
		/* md claims its members: a device another array holds is busy. */
		if (md_holder(md->member[i].dev) != NULL)
			return errno = EBUSY, -1;
		if ((m = find(md->member[i].dev)) == NULL) {
			if (create)
				return errno = ENODEV, -1;
			continue;
		}
		if (create && md->member[i].sb && (dev_io(m, 4096, NULL, md->member[i].sb, md->member[i].sb_len) == -1 ||
		    (md->member[i].bitmap_len && dev_io(m, 4096 + md->member[i].sb_len, NULL,
		    md->member[i].bitmap, md->member[i].bitmap_len) == -1)))
			return -1;
	}
	/* A create too takes only members that carry this array's superblock.
	   The geometry is the freshest superblock's (analyze_sbs' refdev): md
	   writes its members' one after another, and a cut may leave the
	   first behind the others. */
	if (assemble_members(md, &use, &fresh, recovery, faulty) == -1)
		return create ? (errno = EINVAL, -1) : -1;
	if (create && use.nmembers != md->nmembers)
		return errno = EINVAL, -1;
	if ((a = new_dev(DEV_MD, md->name)) == NULL)
		return errno = ENOSPC, -1;
	a->md = use;
	/* md's geometry is the superblocks', whatever the caller counted. */
	a->md.raid_disks = (int)fresh.raid_disks;
	a->events = fresh.events;
	a->level = fresh.level;
	a->layout = fresh.layout;
	a->member_sectors = fresh.size;
	for (int i = 0; i < use.nmembers; i++) {
		a->md.member[i].sb = a->md.member[i].bitmap = NULL;
		a->faulty[i] = faulty[i];
		a->rebuilding[i] = recovery[i] != UINT64_MAX;
		a->recovery[i] = a->rebuilding[i] ? recovery[i] : 0;
	}
	bitmap_load(a);
	if (!md_survives(a) || (!create && dirty_degraded(a, fresh.resync_offset) &&
	    !(md->flags & SYS_MD_START_DIRTY))) {
		drop(a);
		return errno = EIO, -1;
	}
	a->store = md_store(md->name);
	/* Size: the superblock's component size times the data members, as md;
	   while a reshape is under way, the old geometry's until it ends. */
	a->size = md_bytes(a->level, fresh.raid_disks, fresh.size);
	if (store_index(md->name) >= 0 && stores[store_index(md->name)].from_disks)
		a->size = md_bytes(a->level, (uint32_t)stores[store_index(md->name)].from_disks,
		    fresh.size);
	a->dirty = fresh.resync_offset != MDSB_RESYNC_CLEAN;
	a->ro = !create && (md->flags & SYS_MD_READONLY);
	/* Roles nobody fills are recorded as missing, as md does; read-only,
	   md writes no superblock and recovers nothing. */
	if (!create && !a->ro) {
		take_spares(a);
		sb_sync(a);
	}
	/* The simulated initial resync is over at once (sync_action idle). */
	if (create)
		md_mark(a, 0);
	sim_md_event(a->name);
	return 0;
}

static int
sim_md_create(const struct sys_md *md)
{
	return step() == -1 ? -1 : md_start(md, 1);
}

static int
sim_md_assemble(const struct sys_md *md)
{
	return md_start(md, 0);
}

static int
sim_md_stop(const char *name)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_MD)
		return errno = ENODEV, -1;
	for (int i = 0; i < ndevs; i++)
		if (devs[i].kind == DEV_DM)
			for (int s = 0; s < devs[i].nsegs; s++)
				if (strcmp(devs[i].seg[s].dev, name) == 0)
					return errno = EBUSY, -1;
	/* A clean stop marks it clean; read-only, md writes nothing. */
	if (d->dirty && !d->ro)
		md_mark(d, 0);
	drop(d);
	return 0;
}

/* RESTART_ARRAY_RW: writable; md now does what it held back (recovery). */
static int
sim_md_set_rw(const char *name)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_MD)
		return errno = ENODEV, -1;
	if (step() == -1)
		return -1;
	if (!d->ro)
		return 0;
	d->ro = 0;
	take_spares(d);
	sb_sync(d);
	sim_md_event(d->name);
	return 0;
}

void
sim_md_idle(const char *name)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && devs[i].kind == DEV_MD && devs[i].dirty && !devs[i].ro &&
		    (name == NULL || strcmp(devs[i].name, name) == 0))
			md_mark(&devs[i], 0);
}

int
sim_md_dirty(const char *name)
{
	struct dev *d = find(name);

	return d && d->kind == DEV_MD ? d->dirty : -1;
}

/* Member from takes index to (the array's per-member records move with it). */
static void
member_move(struct dev *a, int to, int from)
{
	a->md.member[to] = a->md.member[from];
	a->faulty[to] = a->faulty[from];
	a->gone[to] = a->gone[from];
	a->slot[to] = a->slot[from];
	a->rebuilding[to] = a->rebuilding[from];
	a->recovery[to] = a->recovery[from];
	a->partial[to] = a->partial[from];
	a->recover_end[to] = a->recover_end[from];
}

/*
 * Binds dev to a running array as a spare, after the faulty leftovers
 * (the Linux seam removes them first): its index, or -1.
 */
static int
bind_spare(struct dev *a, const char *dev)
{
	int n = 0;

	for (int i = 0; i < a->md.nmembers; i++)
		n += !a->faulty[i];
	if (n == SYS_MAX_MEMBERS)
		return errno = ENOSPC, -1;
	n = 0;
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i])
			member_move(a, n++, i);
	memset(&a->md.member[n], 0, sizeof(a->md.member[n]));
	snprintf(a->md.member[n].dev, sizeof(a->md.member[n].dev), "%s", dev);
	a->md.member[n].role = -1;
	a->faulty[n] = a->gone[n] = a->rebuilding[n] = a->partial[n] = 0;
	a->recovery[n] = a->recover_end[n] = 0;
	a->slot[n] = 0;
	a->md.nmembers = n + 1;
	return n;
}

/*
 * super_1_validate() for a device added to a running array: the role
 * its own superblock gives it when md takes it back in it, else -1 (a
 * spare). With a bitmap, one at or past the bitmap's events_cleared
 * comes back (what it missed is dirty in the bitmap); with none, one at
 * or past the array's events. Nothing else is compared: a device ahead
 * of the array, or of another array altogether, comes back as well
 * (mdadm checks the UUID, md does not; raidd's may_rejoin must).
 */
static int
validate_role(const struct dev *a, const struct mdsb *sb, int *faulty)
{
	uint16_t role;

	*faulty = 0;
	if (sb->events < (a->bitmap ? a->events_cleared : a->events) ||
	    sb->dev_number >= sb->max_dev)
		return -1;
	role = sb->dev_roles[sb->dev_number];
	*faulty = role == MDSB_ROLE_FAULTY;
	return role < MD_DISK_ROLE_MAX ? role : -1;
}

/*
 * super_1_validate: a device whose superblock says md was recovering it
 * (RECOVERY_OFFSET) but not from the bitmap (no RECOVERY_BITMAP) was
 * being rebuilt in full: md gives it no saved role (saved_raid_disk -1),
 * though raid_disk, which an ADD_NEW_DISK in a role is checked against,
 * is the role.  The personality then recovers it in full (fullsync).
 */
static int
saved_role(const struct mdsb *sb, int role)
{
	if ((sb->feature_map & MD_FEATURE_RECOVERY_OFFSET) &&
	    !(sb->feature_map & MD_FEATURE_RECOVERY_BITMAP))
		return -1;
	return role;
}

/* bind_rdev_to_array(): desc_nr is unique in the array (md has no other). */
static int
slot_taken(struct dev *a, uint32_t nr)
{
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && member_slot(a, i) == nr)
			return 1;
	return 0;
}

/*
 * The personality's hot_add_disk (raid1/raid5/raid10_add_disk): a member
 * back in its saved role, nobody holding it, is recovered where the
 * bitmap is dirty only (none dirty: in sync once the recovery thread
 * has run, one step); with no bitmap, in full. In_sync is cleared
 * either way (md_add_new_disk: "just to be sure").
 */
static void
readd_in_role(struct dev *a, int i, int role)
{
	int s = store_index(a->name);

	a->md.member[i].role = role;
	a->rebuilding[i] = 1;
	a->recovery[i] = 0;
	a->partial[i] = a->bitmap != 0;
	a->recover_end[i] = 0;
	if (a->partial[i] && s >= 0) {
		a->recovery[i] = stores[s].dirty_lo;
		a->recover_end[i] = stores[s].dirty_hi;
	}
}

/*
 * ADD_NEW_DISK on a running v1.2 array, as md_add_new_disk() does: the
 * device needs a v1.2 superblock; asked into a role (MD_DISK_SYNC), md
 * refuses it (EINVAL: "events doesn't match") unless super_1_validate
 * gives it that very role, and raidd's Linux seam then adds it as a
 * spare. Taken, it is bound (its desc_nr free, or EBUSY) and the
 * personality puts it back in its role, or keeps it a spare that md
 * recovers in full into the lowest free role. A faulty one in its own
 * superblock stays bound Faulty.
 */
static int
md_hot_add(struct dev *d, struct dev *m, const char *dev, int role)
{
	struct mdsb sb;
	int n, saved, faulty;

	if (step() == -1)
		return -1;
	/* raid0 and linear have no hot_add_disk. */
	if (d->level != 1 && d->level != 5 && d->level != 10)
		return errno = EINVAL, -1;
	for (int i = 0; i < d->md.nmembers; i++)
		if (strcmp(d->md.member[i].dev, dev) == 0 && !d->faulty[i])
			return errno = EBUSY, -1;
	/* super_1_load(): the device must hold the data_size it claims. */
	if (sb_read(m, &sb) == -1 || sb.data_offset + sb.data_size > m->size / 512)
		return errno = EINVAL, -1;
	saved = validate_role(d, &sb, &faulty);
	if (role >= 0 && saved != role)
		return errno = EINVAL, -1;
	saved = saved_role(&sb, saved);
	if (sb.dev_number < sb.max_dev && slot_taken(d, sb.dev_number))
		return errno = EBUSY, -1;
	/* bind_rdev_to_array(): a component shorter than the array's is refused. */
	if (sb.data_size < d->member_sectors)
		return errno = ENOSPC, -1;
	if ((n = bind_spare(d, dev)) == -1)
		return -1;
	d->faulty[n] = faulty;
	if (saved >= 0 && !faulty && !role_held(d, saved))
		readd_in_role(d, n, saved);
	take_spares(d);
	sb_sync(d);
	sim_md_event(d->name);
	return 0;
}

/* super_1_sync(): md writes its level, layout and chunk into m's superblock (not its set). */
static void
sb_take_geometry(struct dev *a, struct dev *m)
{
	struct mdsb sb, ref;

	for (int i = 0; i < a->md.nmembers; i++) {
		struct dev *p = find(a->md.member[i].dev);

		if (a->faulty[i] || p == NULL || p == m || sb_read(p, &ref) == -1)
			continue;
		if (sb_read(m, &sb) == -1)
			return;
		sb.level = ref.level;
		sb.layout = ref.layout;
		sb.chunksize = ref.chunksize;
		sb_write(m, &sb);
		return;
	}
}

/*
 * The seam's re-add, as lnx_md_readd: asked into its old role first;
 * refused that (behind the bitmap, its slot held), added again as a
 * spare, which md rebuilds in full - two ioctls, two steps.
 */
static int
sim_md_readd(const char *name, const char *dev, int role)
{
	struct dev *d = find(name), *m = find(dev);

	if (d == NULL || d->kind != DEV_MD || m == NULL)
		return errno = ENODEV, -1;
	if (d->ro)
		return errno = EROFS, -1;
	if (md_hot_add(d, m, dev, role) == 0)
		return 0;
	if (role < 0)
		return -1;
	return md_hot_add(d, m, dev, -1);
}

/*
 * A new member as mdadm --add makes one: its superblock must call it a
 * spare; it is bound as a spare, then its slot set to role (sysfs
 * dev-X/slot), which starts recovery onto it from sector 0.  The Linux
 * seam binds it with ADD_NEW_DISK, and md_add_new_disk() on a running
 * array imports it with super_1_load() against no bound member: md
 * compares neither set, level, layout nor chunk (new_dev_store() does,
 * which raidd does not use), and its next superblock write gives the
 * member the array's.
 */
static int
sim_md_add_new(const struct sys_md *one)
{
	struct dev *d = find(one->name), *m;
	struct mdsb sb;
	int n, role = one->member[0].role;

	if (d == NULL || d->kind != DEV_MD || one->nmembers != 1 ||
	    (m = find(one->member[0].dev)) == NULL)
		return errno = ENODEV, -1;
	if (d->ro)
		return errno = EROFS, -1;
	if (step() == -1)
		return -1;
	/* A faulty leftover of the same device is removed first (below). */
	for (int i = 0; i < d->md.nmembers; i++)
		if (strcmp(d->md.member[i].dev, one->member[0].dev) == 0 && !d->faulty[i])
			return errno = EBUSY, -1;
	/* raidd writes them through its proven descriptor and passes none. */
	if (one->member[0].sb && (dev_io(m, SB_AT, NULL, one->member[0].sb,
	    one->member[0].sb_len) == -1 || (one->member[0].bitmap_len &&
	    dev_io(m, SB_AT + one->member[0].sb_len, NULL, one->member[0].bitmap,
	    one->member[0].bitmap_len) == -1)))
		return -1;
	/* The superblock is on the disk before md takes the member: a cut here
	   leaves a spare's superblock that no array holds. */
	if (step() == -1)
		return -1;
	if (sb_read(m, &sb) == -1 || sb.dev_number >= sb.max_dev ||
	    sb.dev_roles[sb.dev_number] != MDSB_ROLE_SPARE)
		return errno = EINVAL, -1;
	/* super_1_load(): the device holds data_offset + data_size (the
	   encoder never writes a data_size below the array's size). */
	if (sb.data_offset + sb.data_size > m->size / 512)
		return errno = EINVAL, -1;
	if (role >= d->md.raid_disks || (role >= 0 && role_held(d, role)))
		return errno = EBUSY, -1;
	/* Faulty leftovers go first, as the Linux seam removes them. */
	if ((n = bind_spare(d, one->member[0].dev)) == -1)
		return -1;
	d->md.member[n].role = role;
	d->rebuilding[n] = role >= 0;
	take_spares(d);
	sb_take_geometry(d, m);
	sb_sync(d);
	sim_md_event(d->name);	/* a member added, its recovery started */
	return 0;
}

/* md's recovery thread moves on by sectors; a member done is in sync. */
void
sim_md_recover(const char *name, uint64_t sectors)
{
	struct dev *d = find(name);
	int done = 0;

	if (d == NULL || d->kind != DEV_MD)
		return;
	for (int i = 0; i < d->md.nmembers; i++) {
		uint64_t end = d->partial[i] ? d->recover_end[i] : d->member_sectors;

		if (!d->rebuilding[i] || d->faulty[i] || find(d->md.member[i].dev) == NULL)
			continue;
		if (d->recovery[i] < end)
			d->recovery[i] = end - d->recovery[i] > sectors ?
			    d->recovery[i] + sectors : end;
		if (d->recovery[i] >= end) {
			d->rebuilding[i] = d->partial[i] = 0;
			done = 1;
		}
	}
	if (done)
		bitmap_synced(d);
	sb_sync(d);
	if (done)
		sim_md_event(d->name);	/* the recovery ended */
}

/* md fails a member on I/O errors: it stays in the list, faulty. */
void
sim_fail_member(const char *md, const char *dev)
{
	struct dev *d = find(md);

	for (int i = 0; d && d->kind == DEV_MD && i < d->md.nmembers; i++)
		if (strcmp(d->md.member[i].dev, dev) == 0 && !d->faulty[i]) {
			d->faulty[i] = 1;
			/* md_error(), then remove_and_add_spares(): a spare the
			   array holds is recovered into the role at once (not on a
			   read-only array, nor while it reshapes). */
			if (!d->ro && !reshaping(d->name))
				take_spares(d);
			sb_sync(d);
			sim_md_event(d->name);
		}
}

/* ---- reshape: a raid5 array grows by members (volume.add_disk) ---- */

static int
reshaping(const char *name)
{
	int i = store_index(name);

	return i >= 0 && stores[i].from_disks != 0;
}

/* md shows a reshape as sync_action "reshape", its place in sync_completed. */
static void
sim_reshape_status(const struct dev *a, struct sys_md_status *st)
{
	int i = store_index(a->name);

	if (i < 0 || stores[i].from_disks == 0)
		return;
	snprintf(st->sync_action, sizeof(st->sync_action), "reshape");
	st->sync_done = stores[i].reshape_pos;
	st->sync_total = a->member_sectors;
	st->sync_speed = 10000;
}

/* Pages of the array's internal bitmap (md keeps one, from a member that has it). */
static uint64_t
bitmap_pages(struct dev *a)
{
	struct mdsb_bitmap b;

	return bitmap_sb(a, &b) == 0 ? (mdsb_bitmap_bytes(&b) + 4095) / 4096 : 0;
}

/*
 * super_1_allow_new_offset(): the data may move down only clear of the
 * superblock (36 KiB past its start) and of the array's internal bitmap.
 */
static int
offset_room(const struct mdsb *sb, uint64_t pages, uint64_t new_offset)
{
	if (MDSB_SUPER_OFFSET + (32 + 4) * 2 > new_offset)
		return 0;
	return sb->bitmap_offset <= 0 ||
	    MDSB_SUPER_OFFSET + (uint64_t)sb->bitmap_offset + pages * 8 <= new_offset;
}

/*
 * md holds MD_RECOVERY_RUNNING while its sync_action still reads idle or
 * frozen (md_check_recovery sets it for a moment even while frozen; a
 * sync thread that ended keeps it until reaped): held here until turned
 * off, longer than any retry of the Linux seam, and a "frozen" or
 * "idle" write does not end it.
 */
void
sim_md_recovery_running(const char *name, int on)
{
	struct dev *a = find(name);

	if (a != NULL && a->kind == DEV_MD)
		a->running = on;
}

/*
 * As md takes new_offset, raid_disks and "reshape" in turn, refusing
 * what it refuses: a level that has no such reshape, fewer disks (raidd
 * never shrinks), a read-only array (EROFS), a sync thread running or a resync owed (EBUSY), an
 * offset that does not move down or steps on the metadata (EINVAL,
 * E2BIG), too few spares for even a degraded array (EINVAL).
 * md itself takes an unchanged offset when mdadm backs up the critical
 * section in a file; raidd has no such file, so the simulator refuses
 * it: a raidd that forgot the room fails its tests, not a user's data.
 */
static int
sim_md_reshape(const char *name, int raid_disks, uint64_t new_offset)
{
	struct dev *a = find(name), *m;
	struct mdsb sb;
	int spares = 0, lacking = 0, delta, si, role;

	if (a == NULL || a->kind != DEV_MD)
		return errno = ENODEV, -1;
	if (a->md.raid_disks == raid_disks)
		return 0;
	if (step() == -1)
		return -1;
	delta = raid_disks - a->md.raid_disks;
	if (a->level != 5 || delta < 1 || raid_disks > SYS_MAX_MEMBERS)
		return errno = EINVAL, -1;
	/* update_raid_disks(): not on a read-only array. */
	if (a->ro)
		return errno = EROFS, -1;
	/* new_offset, raid_disks and action_store refuse while MD_RECOVERY_RUNNING,
	   nothing started; the Linux seam asks again a while, then fails, the
	   array frozen as it found it (lnx_md_reshape). */
	if (sim_md_syncing(name) || reshaping(name) || a->running)
		return errno = EBUSY, -1;
	for (int i = 0; i < a->md.nmembers; i++) {
		if (a->faulty[i] || (m = find(a->md.member[i].dev)) == NULL)
			continue;
		if (a->rebuilding[i])
			return errno = EBUSY, -1;
		if (sb_read(m, &sb) == -1 || new_offset >= sb.data_offset)
			return errno = EINVAL, -1;
		if (!offset_room(&sb, bitmap_pages(a), new_offset))
			return errno = E2BIG, -1;
		spares += a->md.member[i].role < 0;
	}
	for (int r = 0; r < a->md.raid_disks; r++)
		lacking += !role_held(a, r);
	/* raid5_start_reshape(): enough for a degraded array of the new size
	   is enough for md; with no spare at all it reshapes to a degraded
	   array, so raidd must never ask without its new member. */
	if (spares - lacking < delta - 1)
		return errno = EINVAL, -1;
	if (md_store(name) == NULL || (si = store_index(name)) < 0)
		return errno = ENOSPC, -1;
	/* raid5_start_reshape(): spares take the new roles, in sync. */
	role = a->md.raid_disks;
	for (int i = 0; i < a->md.nmembers && role < raid_disks; i++)
		if (!a->faulty[i] && a->md.member[i].role < 0 && find(a->md.member[i].dev))
			a->md.member[i].role = role++;
	a->frozen = 0;		/* lnx_md_reshape's sync_action "reshape" */
	stores[si].from_disks = a->md.raid_disks;
	stores[si].reshape_pos = 0;
	stores[si].new_offset = new_offset;
	a->md.raid_disks = raid_disks;
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && (m = find(a->md.member[i].dev)) && sb_read(m, &sb) == 0) {
			sb.raid_disks = (uint32_t)raid_disks;
			sb_write(m, &sb);
		}
	sb_sync(a);
	sim_md_event(a->name);
	return 0;
}

/*
 * md/level as level_store() and raid5_takeover_raid1() take it: nothing
 * to do for the level the array has; EROFS read-only; EBUSY while a
 * sync, recovery or reshape runs; EINVAL for any takeover but raid1 to
 * raid5, for a raid1 that has not exactly two raid disks or lacks both,
 * or whose size no chunk of 4 KiB or more divides.  md picks the largest
 * chunk up to 64 KiB that divides the array, left-symmetric, and writes
 * every member's superblock, spares' too; the data stays where it is (a
 * raid5 of two holds each block and its parity, a copy, as raid1 did).
 * Other takeovers md has (raid0, raid4, raid6 ...) raidd never asks.
 */
static int
sim_md_set_level(const char *name, const char *level)
{
	struct dev *a = find(name), *m;
	uint64_t sectors;
	uint32_t chunk = 64 * 2;
	struct mdsb sb;
	int want, lacking = 0;

	if (a == NULL || a->kind != DEV_MD)
		return errno = ENODEV, -1;
	if (sscanf(level, "raid%d", &want) != 1)
		return errno = EINVAL, -1;
	if (want == a->level)
		return 0;
	if (step() == -1)
		return -1;
	if (a->ro)
		return errno = EROFS, -1;
	/* level_store(): EBUSY while MD_RECOVERY_RUNNING. */
	if (sim_md_syncing(name) || reshaping(name) || a->running)
		return errno = EBUSY, -1;
	for (int i = 0; i < a->md.nmembers; i++)
		if (a->rebuilding[i] && !a->faulty[i])
			return errno = EBUSY, -1;
	if (a->level != 1 || want != 5 || a->md.raid_disks != 2)
		return errno = EINVAL, -1;
	for (int r = 0; r < a->md.raid_disks; r++)
		lacking += !role_held(a, r);
	if (lacking > 1)
		return errno = EINVAL, -1;
	sectors = a->size / 512;
	while (chunk && (sectors & (chunk - 1)))
		chunk >>= 1;
	if (chunk < 4096 / 512)
		return errno = EINVAL, -1;
	a->level = 5;
	a->layout = 2;		/* ALGORITHM_LEFT_SYMMETRIC */
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && (m = find(a->md.member[i].dev)) && sb_read(m, &sb) == 0) {
			sb.level = 5;
			sb.layout = a->layout;
			sb.chunksize = chunk;
			sb_write(m, &sb);
		}
	sb_sync(a);
	sim_md_event(a->name);
	return 0;
}

/*
 * sync_action "frozen" as lnx_md_freeze writes it: EBUSY unless md is
 * idle (a sync, recovery or reshape would be interrupted); "idle" lets
 * go, and md at once recovers a lost member onto a spare the array
 * holds (action_store sets MD_RECOVERY_NEEDED).  No superblock changes.
 */
static int
sim_md_freeze(const char *name, int frozen)
{
	struct dev *a = find(name);
	int busy = 0;

	if (a == NULL || a->kind != DEV_MD)
		return errno = ENODEV, -1;
	if (a->level == 0)
		return errno = EINVAL, -1;	/* raid0 has no sync_action */
	for (int i = 0; i < a->md.nmembers; i++)
		busy |= a->rebuilding[i] && !a->faulty[i];
	busy |= sim_md_syncing(name) || reshaping(name);
	if (a->frozen == frozen)
		return 0;
	if (frozen && busy)
		return errno = EBUSY, -1;
	a->frozen = frozen;
	if (frozen)
		return 0;
	/* md_check_recovery: spares are taken only with no sync thread running. */
	if (!a->ro && !busy) {
		take_spares(a);
		sb_sync(a);
	}
	sim_md_event(a->name);
	return 0;
}

/*
 * action_store(): no check or repair while the reshape thread runs.  Any
 * command but "frozen" clears MD_RECOVERY_FROZEN (a check, a repair, an
 * idle): md may then recover onto a spare at once.
 */
static int
sim_md_sync_now(const char *name, const struct sys_md_sync *req)
{
	struct dev *a = find(name);

	if (reshaping(name) && strcmp(req->action, "idle") != 0)
		return errno = EBUSY, -1;
	if (sim_md_sync(name, req) == -1)
		return -1;
	if (a != NULL && a->kind == DEV_MD && a->frozen)
		sim_md_freeze(name, 0);
	return 0;
}

/*
 * md's reshape moves on by sectors of each member; at the end every
 * member's data starts at the new offset and the array has its new size.
 */
void
sim_md_reshape_step(const char *name, uint64_t sectors)
{
	struct dev *a = find(name), *m;
	struct mdsb sb;
	int si = store_index(name);

	/* md_do_sync() runs no reshape on a read-only array. */
	if (a == NULL || a->kind != DEV_MD || si < 0 || stores[si].from_disks == 0 || a->ro)
		return;
	stores[si].reshape_pos = a->member_sectors - stores[si].reshape_pos > sectors ?
	    stores[si].reshape_pos + sectors : a->member_sectors;
	if (stores[si].reshape_pos < a->member_sectors)
		return;
	for (int i = 0; i < a->md.nmembers; i++)
		if (!a->faulty[i] && (m = find(a->md.member[i].dev)) && sb_read(m, &sb) == 0) {
			sb.data_offset = stores[si].new_offset;
			sb.data_size = m->size / 512 - sb.data_offset;
			sb_write(m, &sb);
		}
	stores[si].from_disks = 0;
	a->size = md_bytes(a->level, (uint32_t)a->md.raid_disks, a->member_sectors);
	sb_sync(a);
	sim_md_event(a->name);
}

/* md's own view: a pulled member it has not failed yet is in sync. */
static int
sim_md_status(const char *name, struct sys_md_status *st)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_MD)
		return errno = ENODEV, -1;
	memset(st, 0, sizeof(*st));
	snprintf(st->level, sizeof(st->level), "raid%d", d->level);
	snprintf(st->array_state, sizeof(st->array_state), "%s", d->broken ? "broken" :
	    d->ro ? "readonly" : "clean");
	snprintf(st->sync_action, sizeof(st->sync_action), "%s", d->level == 0 ? "" :
	    d->frozen ? "frozen" : "idle");
	st->raid_disks = d->md.raid_disks;
	st->degraded = d->level == 0 ? 0 : d->md.raid_disks;
	st->size = d->size;
	st->nmembers = d->md.nmembers;
	for (int i = 0; i < d->md.nmembers; i++) {
		int in_sync = !d->faulty[i] && !d->rebuilding[i] && d->md.member[i].role >= 0;

		/* md shows a member it rebuilds as a spare in its slot. */
		if (d->rebuilding[i] && !d->faulty[i]) {
			snprintf(st->sync_action, sizeof(st->sync_action), "recover");
			st->sync_done = d->recovery[i];
			st->sync_total = d->member_sectors;
		}
		snprintf(st->member[i].dev, sizeof(st->member[i].dev), "%s", d->md.member[i].dev);
		st->member[i].slot = d->faulty[i] ? -1 : d->md.member[i].role;
		snprintf(st->member[i].state, sizeof(st->member[i].state), "%s",
		    d->faulty[i] ? "faulty" : in_sync ? "in_sync" : "spare");
		st->member[i].present = find(d->md.member[i].dev) != NULL;
		if (d->level != 0)
			st->degraded -= in_sync;
	}
	sim_sync_status(name, st);
	sim_reshape_status(d, st);
	return 0;
}

/*
 * dev-X/state "faulty" then "remove". As md: raid5 marks the member
 * faulty even when that breaks the array; raid0, raid1 and raid10 refuse
 * to fail their last copy (the array is broken, the member stays) and a
 * member that is not faulty cannot be removed.
 */
static int
sim_md_fail(const char *name, const char *dev)
{
	struct dev *d = find(name);
	int m;

	if (d == NULL || d->kind != DEV_MD)
		return errno = ENODEV, -1;
	for (m = 0; m < d->md.nmembers; m++)
		if (strcmp(d->md.member[m].dev, dev) == 0)
			break;
	if (m == d->md.nmembers)
		return errno = ENODEV, -1;
	if (!d->faulty[m]) {
		d->faulty[m] = 1;
		if (!md_survives(d)) {
			d->broken = 1;
			d->faulty[m] = d->level == 5;
		}
	}
	if (!d->faulty[m])
		return 1;
	sb_sync(d);	/* md records the failure in the others' superblocks */
	sim_md_event(d->name);
	for (int i = m; i + 1 < d->md.nmembers; i++)
		member_move(d, i, i + 1);
	d->md.nmembers--;
	d->faulty[d->md.nmembers] = d->gone[d->md.nmembers] = 0;
	d->slot[d->md.nmembers] = 0;
	d->rebuilding[d->md.nmembers] = d->partial[d->md.nmembers] = 0;
	take_spares(d);		/* a spare in the array takes over at once */
	sb_sync(d);
	return 0;
}

/* ---- dm, mkfs, mount ---- */

/* dm refuses a table reaching past the end of a device it maps. */
static int
segs_check(const struct sys_seg *segs, int n)
{
	struct dev *u;

	if (n < 1 || n > SYS_MAX_SEGS)
		return errno = EINVAL, -1;
	for (int i = 0; i < n; i++) {
		if ((u = find(segs[i].dev)) == NULL)
			return errno = ENODEV, -1;
		if (segs[i].len == 0 || segs[i].offset > u->size ||
		    segs[i].len > u->size - segs[i].offset)
			return errno = EINVAL, -1;
	}
	return 0;
}

static int
sim_dm_create(const char *name, const char *uuid, const struct sys_seg *segs, int n)
{
	struct dev *d;

	(void)uuid;
	if (step() == -1)
		return -1;
	if (find(name) || n > SYS_MAX_SEGS)
		return errno = EEXIST, -1;
	if (segs_check(segs, n) == -1)
		return -1;
	if ((d = new_dev(DEV_DM, name)) == NULL)
		return errno = ENOSPC, -1;
	d->nsegs = n;
	for (int i = 0; i < n; i++) {
		d->seg[i] = segs[i];
		d->size += segs[i].len;
	}
	return 0;
}

static int
sim_dm_remove(const char *name)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_DM)
		return errno = ENXIO, -1;
	if (d->mounted[0])
		return errno = EBUSY, -1;
	/* As the kernel: a map another map sits on (dm-crypt) is open. */
	for (int i = 0; i < ndevs; i++)
		for (int k = 0; devs[i].name[0] && devs[i].kind == DEV_DM && k < devs[i].nsegs; k++)
			if (strcmp(devs[i].seg[k].dev, name) == 0)
				return errno = EBUSY, -1;
	drop(d);
	return 0;
}

static int
sim_dm_exists(const char *name)
{
	struct dev *d = find(name);

	return d && d->kind == DEV_DM;
}

static int
sim_dev_size(const char *name, uint64_t *size)
{
	struct dev *d = find(name);

	if (d == NULL)
		return errno = ENOENT, -1;
	*size = d->size;
	return 0;
}

struct mkfs_done {
	ev_timer	 t;
	sys_done_cb	 cb;
	void		*arg;
	int		 status;
};

static void
mkfs_timer(struct ev_loop *l, ev_timer *w, int revents)
{
	struct mkfs_done *m = (struct mkfs_done *)w;

	(void)l;
	(void)revents;
	m->cb(m->status, m->status ? "mkfs: simulated failure" : "", m->arg);
	free(m);
}

/* The filesystem's own record of its size, on the device as ext4's block count is. */
#define FS_SIZE_AT	1088

static void
fs_set_size(struct dev *d)
{
	dev_io(d, FS_SIZE_AT, NULL, (const uint8_t *)&d->size, 8);
}

static int
sim_mkfs(const char *fs, const char *dev, const char *label, sys_done_cb cb, void *arg)
{
	struct mkfs_done *m;
	struct dev *d = find(dev);

	(void)label;
	if (d == NULL)
		return errno = ENOENT, -1;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -1;
	m->cb = cb;
	m->arg = arg;
	m->status = step() == -1 ? 1 << 8 : 0;
	if (m->status == 0) {
		snprintf(d->fs, sizeof(d->fs), "%s", fs);
		dev_io(d, 1080, NULL, (const uint8_t *)"\x53\xef", 2);
		fs_set_size(d);
		/* mkfs has ended long before anything else writes: md marked it clean. */
		sim_md_idle(NULL);
	}
	ev_timer_init(&m->t, mkfs_timer, 0., 0.);
	ev_timer_start(EV_DEFAULT, &m->t);
	return 0;
}

/* Whether a write to d would reach a read-only array (through maps). */
static int
reaches_ro(const struct dev *d)
{
	if (d->kind == DEV_MD)
		return d->ro;
	for (int i = 0; d->kind == DEV_DM && i < d->nsegs; i++) {
		const struct dev *under = find(d->seg[i].dev);

		if (under && reaches_ro(under))
			return 1;
	}
	return 0;
}

static int
mount_dev(const char *dev, const char *dir, int ro)
{
	struct dev *d = find(dev);

	if (d == NULL)
		return errno = ENOENT, -1;
	if (step() == -1)
		return -1;
	if (!has_bytes(d, 1080, "\x53\xef", 2))
		return errno = EINVAL, -1;
	/* A read-write mount writes (the journal, the superblock): refused. */
	if (!ro && reaches_ro(d))
		return errno = EROFS, -1;
	snprintf(d->mounted, sizeof(d->mounted), "%s", dir);
	return 0;
}

static int
sim_mount(const char *dev, const char *dir, const char *fs)
{
	(void)fs;
	return mount_dev(dev, dir, 0);
}

/* The simulated filesystems keep no journal: nothing is left unreplayed. */
static int
sim_mount_ro(const char *dev, const char *dir, const char *fs)
{
	(void)fs;
	return mount_dev(dev, dir, 1);
}

static int
sim_umount(const char *dir)
{
	for (int i = 0; i < ndevs; i++) {
		if (devs[i].name[0] && strcmp(devs[i].mounted, dir) == 0) {
			devs[i].mounted[0] = '\0';
			return 0;
		}
	}
	return errno = EINVAL, -1;
}

static int
sim_is_mounted(const char *dir)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && strcmp(devs[i].mounted, dir) == 0)
			return 1;
	return 0;
}

static int
sim_hotplug_open(void)
{
	return -1;
}

static int
sim_hotplug_read(int fd, char (*names)[SYS_NAME_MAX], int max)
{
	(void)fd;
	(void)names;
	(void)max;
	return 0;
}

/* ---- handles: what an open file descriptor on a disk is ---- */

#define MAX_FDS		16
#define FD_BASE		1000	/* not mistaken for a real descriptor */

static struct {
	int		 used;
	int		 dev;	/* index in devs[] */
	unsigned	 gen;	/* the dev's incarnation when opened */
} fds[MAX_FDS];

static void
close_all(void)
{
	memset(fds, 0, sizeof(fds));
}

/*
 * The device a handle is open on, if it is still there: once the disk
 * was pulled, removed or replaced (even under the same name and
 * number), I/O through the old descriptor fails, as on a dead gendisk.
 */
static struct dev *
fd_dev(int fd)
{
	int i = fd - FD_BASE;
	struct dev *d;

	if (i < 0 || i >= MAX_FDS || !fds[i].used)
		return errno = EBADF, NULL;
	d = &devs[fds[i].dev];
	if (!d->name[0] || gone(d) || d->gen != fds[i].gen)
		return errno = ENXIO, NULL;
	return d;
}

static int
sim_dev_open(const char *name, unsigned *ma, unsigned *mi)
{
	struct dev *d = by_node(name);

	if (d == NULL)
		return errno = ENOENT, -1;
	for (int i = 0; i < MAX_FDS; i++) {
		if (fds[i].used)
			continue;
		fds[i].used = 1;
		fds[i].dev = (int)(d - devs);
		fds[i].gen = d->gen;
		*ma = d->major;
		*mi = d->minor;
		return FD_BASE + i;
	}
	return errno = EMFILE, -1;
}

static int
sim_node_devnum(const char *name, unsigned *ma, unsigned *mi)
{
	struct dev *d = by_node(name);

	if (d == NULL)
		return errno = ENOENT, -1;
	*ma = d->major;
	*mi = d->minor;
	return 0;
}

static int
sim_fd_read(int fd, uint64_t off, void *buf, size_t len)
{
	struct dev *d = fd_dev(fd);

	return d ? dev_io(d, off, buf, NULL, len) : -1;
}

static int
sim_fd_write(int fd, uint64_t off, const void *buf, size_t len)
{
	struct dev *d;

	if (step() == -1)
		return -1;
	/* Looked up after the step: a disk may go in the meantime. */
	return (d = fd_dev(fd)) ? dev_io(d, off, NULL, buf, len) : -1;
}

static int
sim_fd_zero(int fd, uint64_t off, uint64_t len)
{
	struct dev *d;

	if (step() == -1)
		return -1;
	return (d = fd_dev(fd)) ? zero_dev_nostep(d, off, len) : -1;
}

static int
sim_fd_size(int fd, uint64_t *size)
{
	struct dev *d = fd_dev(fd);

	if (d == NULL)
		return -1;
	*size = d->size;
	return 0;
}

/* A descriptor on a device that went away cannot be synced. */
static int
sim_fd_sync(int fd)
{
	return fd_dev(fd) ? 0 : (errno = EIO, -1);
}

static int
sim_fd_close(int fd)
{
	struct dev *d = fd_dev(fd);
	int i = fd - FD_BASE;

	if (i >= 0 && i < MAX_FDS)
		fds[i].used = 0;
	return d ? 0 : (errno = EIO, -1);
}

/* ---- growing in place ---- */

void
sim_grow_disk(const char *name, uint64_t size)
{
	struct dev *d = find(name);

	if (d && d->kind == DEV_DISK && size > d->size)
		d->size = size;
}

/* A partition only the kernel has (BLKPG, or an entry the GPT lost): named disk + no. */
void
sim_kernel_part(const char *disk, int no, uint64_t start, uint64_t size)
{
	struct dev *d = find(disk), *p;
	char name[SYS_NAME_MAX];

	snprintf(name, sizeof(name), "%.60s%d", disk, no);
	if (d == NULL || find(name) != NULL || (p = new_dev(DEV_PART, name)) == NULL)
		return;
	p->parent = (int)(d - devs);
	p->start = start;
	p->size = size;
}

uint64_t
sim_fs_size(const char *dev)
{
	struct dev *d = find(dev);
	uint64_t size = 0;

	if (d == NULL || dev_io(d, FS_SIZE_AT, (uint8_t *)&size, NULL, 8) == -1)
		return 0;
	return size;
}

/* The partition the kernel has on d at start (bytes), or NULL. */
static struct dev *
kernel_part_at(const struct dev *d, uint64_t start)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].kind == DEV_PART && devs[i].name[0] && &devs[devs[i].parent] == d &&
		    devs[i].start == start)
			return &devs[i];
	return NULL;
}

/*
 * BLKPG_RESIZE_PARTITION and the GPT entry, through fd (as libfdisk by
 * fd and the ioctl on it): a dead handle fails; same start, never past
 * the backup GPT.
 */
static int
sim_part_resize(const char *disk, int fd, uint64_t start, uint64_t size)
{
	struct dev *d = fd_dev(fd), *p;
	uint64_t first = start / 512, last = (start + size) / 512 - 1, f;

	(void)disk;
	if (d == NULL)
		return -1;
	p = kernel_part_at(d, start);
	if (p == NULL)
		return errno = ENOENT, -1;
	if (p->size == size)
		return 0;
	if (step() == -1)
		return -1;
	if (size < p->size || size % 512 || start + size > d->size - 33 * 512)
		return errno = EINVAL, -1;
	for (int i = 0; i < ndevs; i++)
		if (devs[i].kind == DEV_PART && devs[i].name[0] && &devs[devs[i].parent] == d &&
		    &devs[i] != p && devs[i].start < start + size && start < devs[i].start + devs[i].size)
			return errno = EBUSY, -1;
	for (uint32_t i = 0; i < 128; i++) {
		if (dev_io(d, 1024 + i * 128 + 32, (uint8_t *)&f, NULL, 8) == 0 && f == first) {
			dev_io(d, 1024 + i * 128 + 40, NULL, (const uint8_t *)&last, 8);
			gpt_reseal(d);
			break;
		}
	}
	p->size = size;
	return 0;
}

/*
 * np's place on d as lnx_part_add proves it: no partition the kernel has
 * and no entry of the table overlaps it, except one exactly there (start
 * and size; *kp, *have), else EBUSY.  *slot: the first unused entry.
 */
static int
sim_band(struct dev *d, const struct sys_part *np, struct dev **kp, int *have, int *slot)
{
	static const uint8_t zero[16];
	uint64_t first = np->start / 512, last = (np->start + np->size) / 512 - 1, f, l;
	uint8_t ent[128];

	*kp = NULL;
	*have = *slot = -1;
	for (int i = 0; i < ndevs; i++) {
		struct dev *q = &devs[i];

		if (q->kind != DEV_PART || !q->name[0] || &devs[q->parent] != d ||
		    q->start >= np->start + np->size || np->start >= q->start + q->size)
			continue;
		if (q->start != np->start || q->size != np->size)
			return errno = EBUSY, -1;
		*kp = q;
	}
	for (int i = 127; i >= 0; i--) {
		if (dev_io(d, 1024 + (uint64_t)i * 128, ent, NULL, sizeof(ent)) == -1)
			return -1;
		if (memcmp(ent, zero, 16) == 0) {
			*slot = i;
			continue;
		}
		memcpy(&f, ent + 32, 8);
		memcpy(&l, ent + 40, 8);
		if (f == first && l == last)
			*have = i;
		else if (f <= last && first <= l)
			return errno = EBUSY, -1;
	}
	return 0;
}

static int
sim_part_free(const char *disk, int fd, const struct sys_part *np)
{
	struct dev *d = fd_dev(fd), *kp;
	int have, slot;

	(void)disk;
	if (d == NULL)
		return -1;
	return sim_band(d, np, &kp, &have, &slot);
}

/*
 * As libfdisk adds an entry to the table there and BLKPG_ADD_PARTITION
 * tells the kernel: the first free entry, refused (EBUSY) when the
 * place overlaps another entry of the table or a partition the kernel
 * has, or one starts there with another size, or lies outside the
 * usable LBAs.  What is there already (entry or kernel's) is kept.
 */
static int
sim_part_add(const char *disk, int fd, const struct sys_part *np)
{
	struct dev *d = fd_dev(fd), *p;
	uint64_t first = np->start / 512, last = (np->start + np->size) / 512 - 1;
	uint8_t ent[128];
	char name[SYS_NAME_MAX];
	int slot, have;

	(void)disk;
	if (d == NULL || sim_band(d, np, &p, &have, &slot) == -1)
		return -1;
	if (p != NULL && have >= 0)
		return 0;
	if (step() == -1)
		return -1;
	if (!has_bytes(d, 512, "EFI PART", 8) || np->size == 0 || np->start % 512 ||
	    np->size % 512 || np->start < 34 * 512 || np->start + np->size > d->size - 33 * 512)
		return errno = EINVAL, -1;
	if (have < 0) {
		if (slot < 0 || slot > 8)
			return errno = ENOSPC, -1;
		memset(ent, 0, sizeof(ent));
		memcpy(ent, np->type, 16);
		memcpy(ent + 16, np->guid, 16);
		memcpy(ent + 32, &first, 8);
		memcpy(ent + 40, &last, 8);
		for (int k = 0; k < 36 && np->name[k]; k++)
			ent[56 + 2 * k] = (uint8_t)np->name[k];
		dev_io(d, 1024 + (uint64_t)slot * 128, NULL, ent, sizeof(ent));
		gpt_reseal(d);
		have = slot;
	}
	if (p != NULL)
		return 0;
	if (have > 8)
		return errno = ENOSPC, -1;
	/* The kernel's number for it is the GPT entry's. */
	snprintf(name, sizeof(name), "%.60s%c", d->name, '1' + have);
	if (find(name) != NULL || (p = new_dev(DEV_PART, name)) == NULL)
		return errno = EBUSY, -1;
	p->parent = (int)(d - devs);
	p->start = np->start;
	p->size = np->size;
	return 0;
}

/*
 * Whether the kernel would call p in use (bd_openers): a running array
 * lists it (md holds a failed member's device until it is removed), a
 * dm map reads from it, it is mounted, or a handle is open on it.
 */
static int
part_held(const struct dev *p)
{
	int idx = (int)(p - devs);

	if (p->mounted[0])
		return 1;
	for (int i = 0; i < MAX_FDS; i++)
		if (fds[i].used && fds[i].dev == idx && fds[i].gen == p->gen)
			return 1;
	for (int i = 0; i < ndevs; i++) {
		const struct dev *q = &devs[i];

		if (!q->name[0])
			continue;
		for (int k = 0; q->kind == DEV_MD && k < q->md.nmembers; k++)
			if (strcmp(q->md.member[k].dev, p->name) == 0)
				return 1;
		for (int k = 0; q->kind == DEV_DM && k < q->nsegs; k++)
			if (strcmp(q->seg[k].dev, p->name) == 0)
				return 1;
	}
	return 0;
}

/*
 * As BLKPG_DEL_PARTITION and libfdisk's delete through fd: the place as
 * lnx_part_del proves it (sim_band: exactly the partition or nothing
 * there, in the kernel and the table; an overlap or another size is
 * EBUSY), and the kernel refuses (EBUSY) while the partition is held, so
 * nothing is written then; the kernel lets go first, the entry is
 * cleared next (two steps: a power cut between leaves the entry, removed
 * by the next call).
 */
static int
sim_part_del(const char *disk, int fd, uint64_t start, uint64_t size)
{
	static const uint8_t none[128];
	const struct sys_part np = { .start = start, .size = size };
	struct dev *d = fd_dev(fd), *p;
	int e, slot;

	(void)disk;
	if (d == NULL || sim_band(d, &np, &p, &e, &slot) == -1)
		return -1;
	if (p != NULL && part_held(p))
		return errno = EBUSY, -1;
	if (p != NULL) {
		if (step() == -1)
			return -1;
		drop(p);
	}
	if (e >= 0) {
		if (step() == -1)
			return -1;
		dev_io(d, 1024 + (uint64_t)e * 128, NULL, none, sizeof(none));
		gpt_reseal(d);
	}
	return 0;
}

/*
 * md's component_size: every member's device must hold data_offset +
 * sectors (-ENOSPC otherwise); raid0 has no resize at all.  The
 * superblocks record the new size, as md writes them.
 */
static int
sim_md_grow(const char *name, uint64_t sectors)
{
	struct dev *a = find(name), *m;
	struct mdsb sb;

	if (a == NULL || a->kind != DEV_MD)
		return errno = ENODEV, -1;
	if (a->level == 0)
		return errno = EINVAL, -1;
	if (a->size == md_bytes(a->level, (uint32_t)a->md.raid_disks, sectors))
		return 0;
	if (step() == -1)
		return -1;
	/* update_size(): not while a sync thread runs, nor on a read-only array. */
	if (sim_md_syncing(name) || reshaping(name))
		return errno = EBUSY, -1;
	if (a->ro)
		return errno = EROFS, -1;
	for (int i = 0; i < a->md.nmembers; i++) {
		if (a->faulty[i] || (m = find(a->md.member[i].dev)) == NULL)
			continue;
		if (sb_read(m, &sb) == -1 || sb.data_offset + sectors > m->size / 512)
			return errno = ENOSPC, -1;
	}
	for (int i = 0; i < a->md.nmembers; i++) {
		if (a->faulty[i] || (m = find(a->md.member[i].dev)) == NULL || sb_read(m, &sb) == -1)
			continue;
		sb.size = sectors;
		sb.data_size = m->size / 512 - sb.data_offset;
		sb_write(m, &sb);
	}
	/* update_size() sets dev_sectors: a takeover and a reshape after keep it. */
	a->member_sectors = sectors;
	a->size = md_bytes(a->level, (uint32_t)a->md.raid_disks, sectors);
	/* md_new_event(): the new room is resynced, and sync_action notifies. */
	sim_md_event(a->name);
	return 0;
}

int
sim_dm_seg(const char *name, struct sys_seg *seg)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_DM || d->nsegs < 1)
		return -1;
	*seg = d->seg[0];
	return d->nsegs;
}

static int
sim_dm_reload(const char *name, const struct sys_seg *segs, int n)
{
	struct dev *d = find(name);

	if (d == NULL || d->kind != DEV_DM)
		return errno = ENXIO, -1;
	if (step() == -1)
		return -1;
	if (segs_check(segs, n) == -1)
		return -1;
	d->nsegs = n;
	d->size = 0;
	for (int i = 0; i < n; i++) {
		d->seg[i] = segs[i];
		d->size += segs[i].len;
	}
	return 0;
}

/* resize2fs and btrfs grow a mounted filesystem only (online). */
static int
sim_fs_grow(const char *fs, const char *dev, const char *dir, sys_done_cb cb, void *arg)
{
	struct mkfs_done *m;
	struct dev *d = find(dev);
	uint8_t sb[2];

	if (d == NULL)
		return errno = ENOENT, -1;
	if ((strcmp(fs, "ext4") != 0 && strcmp(fs, "btrfs") != 0) ||
	    !has_bytes(d, 1080, "\x53\xef", 2) || strcmp(d->mounted, dir) != 0)
		return errno = EINVAL, -1;
	/* resize2fs writes the superblock: not through a read-only array. */
	if (dev_io(d, 1080, sb, NULL, 2) == -1 || dev_io(d, 1080, NULL, sb, 2) == -1)
		return errno = EROFS, -1;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -1;
	m->cb = cb;
	m->arg = arg;
	m->status = step() == -1 ? 1 << 8 : 0;
	if (m->status == 0)
		fs_set_size(d);
	ev_timer_init(&m->t, mkfs_timer, 0., 0.);
	ev_timer_start(EV_DEFAULT, &m->t);
	return 0;
}

const struct sys_ops sys_sim = {
	.scan_disks = sim_scan_disks,
	.scan_disk = sim_scan_disk,
	.read_at = sim_read_at,
	.write_at = sim_write_at,
	.zero_at = sim_zero_at,
	.dev_open = sim_dev_open,
	.fd_read = sim_fd_read,
	.fd_write = sim_fd_write,
	.fd_zero = sim_fd_zero,
	.fd_size = sim_fd_size,
	.fd_sync = sim_fd_sync,
	.fd_close = sim_fd_close,
	.node_devnum = sim_node_devnum,
	.reread_parts = sim_reread_parts,
	.partition = sim_partition,
	.part_dev = sim_part_dev,
	.md_create = sim_md_create,
	.md_assemble = sim_md_assemble,
	.md_set_rw = sim_md_set_rw,
	.md_stop = sim_md_stop,
	.md_readd = sim_md_readd,
	.md_add_new = sim_md_add_new,
	.md_status = sim_md_status,
	.md_fail = sim_md_fail,
	.dm_create = sim_dm_create,
	.dm_remove = sim_dm_remove,
	.dm_exists = sim_dm_exists,
	.dev_size = sim_dev_size,
	.mkfs = sim_mkfs,
	.mount = sim_mount,
	.mount_ro = sim_mount_ro,
	.umount = sim_umount,
	.is_mounted = sim_is_mounted,
	.part_resize = sim_part_resize,
	.part_add = sim_part_add,
	.part_free = sim_part_free,
	.part_del = sim_part_del,
	.md_grow = sim_md_grow,
	.dm_reload = sim_dm_reload,
	.fs_grow = sim_fs_grow,
	.hotplug_open = sim_hotplug_open,
	.hotplug_read = sim_hotplug_read,
	.watch_open = sim_watch_open,
	.watch_arrays = sim_watch_arrays,
	.watch_read = sim_watch_read,
	.md_sync = sim_md_sync_now,
	.led_set = sim_led_set,
	.md_reshape = sim_md_reshape,
	.md_set_level = sim_md_set_level,
	.md_freeze = sim_md_freeze,
};
