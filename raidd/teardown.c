/*
 * Taking a volume apart: stop what runs (mount, map, arrays), then
 * erase the members. The label goes last, so a power cut during the
 * erase leaves a label that says what was in flight and the next start
 * finishes the job.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "volume.h"
#include "crypt.h"

#define ERASE_HEAD	(16ULL << 20)	/* md superblocks, LUKS headers, fs */
#define ERASE_TAIL	(1ULL << 20)	/* md 0.90/1.0, GPT backup */

/* Unknown (-1) is tried: removing an absent map is not an error. */
int
volume_map_remove(const char *name, char *err, size_t errlen)
{
	if (sys->dm_exists(name) != 0 && sys->dm_remove(name) == -1 && errno != ENXIO) {
		if (errno == EBUSY)
			snprintf(err, errlen, "%s is in use (open by another program): "
			    "close it and try again", name);
		else
			snprintf(err, errlen, "removing %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

int
volume_stop(struct volume *v, char *err, size_t errlen)
{
	struct sys_md_status st;
	char name[SYS_NAME_MAX];

	if (volume_unmount(v, err, errlen) == -1 || crypt_close(v, err, errlen) == -1)
		return -1;
	volume_dm_name(v->name, name, sizeof(name));
	if (volume_map_remove(name, err, errlen) == -1)
		return -1;
	for (int t = 0; t < v->label.ntiers; t++) {
		if (v->label.tier[t].kind == TIER_NONE)
			continue;
		volume_md_name(v, t, name, sizeof(name));
		if (sys->md_status(name, &st) == 0 && sys->md_stop(name) == -1) {
			snprintf(err, errlen, "stopping %s: %s", name, strerror(errno));
			return -1;
		}
	}
	v->assembled = 0;
	return 0;
}

static int
erase(const struct dfd *f, uint64_t off, uint64_t len, uint64_t limit)
{
	if (off >= limit)
		return 0;
	if (len > limit - off)
		len = limit - off;
	return sys->fd_zero(f->fd, off, len);
}

/* One member: its partitions' heads and tails, the GPTs, then the label. */
static int
erase_member(const struct volume *v, int m, const struct dfd *f)
{
	const struct label *l = &v->mlabel[m];
	const char *disk = v->disk[m];
	char why[192];
	uint64_t size = l->member[m].size;

	for (int t = 0; t < l->ntiers; t++) {
		const struct label_tier *lt = &l->tier[t];
		uint64_t end = lt->start + lt->size, head = ERASE_HEAD;

		if (lt->size == 0)
			continue;
		/* The filesystem's own superblock sits past md's data offset. */
		if (lt->kind != TIER_NONE)
			head += plan_data_offset(lt->size / 512, lt->chunk) * 512;
		if (erase(f, lt->start, head, end) == -1 ||
		    erase(f, end > ERASE_TAIL ? end - ERASE_TAIL : 0, ERASE_TAIL, end) == -1)
			return -1;
	}
	if (erase(f, size > ERASE_TAIL ? size - ERASE_TAIL : 0, ERASE_TAIL, size) == -1 ||
	    erase(f, 0, LABEL_SLOT0, size) == -1 ||
	    erase(f, LABEL_SLOT0, PLAN_HEAD - LABEL_SLOT0, size) == -1)
		return -1;
	if (dfd_recheck(f, why, sizeof(why)) == -1)
		log_warnx("%s", why);
	else if (sys->reread_parts(disk, f->fd) == -1)
		log_warnx("%s: the kernel keeps its old partitions until the next boot", disk);
	return 0;
}

/*
 * Erases the present members in mask. A member that is no longer what
 * the volume's labels say (another disk under its kernel name, its
 * label gone) is left alone: raidd erases only what it proved its own.
 */
int
volume_wipe_some(struct volume *v, unsigned mask, char *err, size_t errlen)
{
	char why[256];
	struct dfd f;

	for (int m = 0; m < v->label.ndisks; m++) {
		if (v->disk[m][0] == '\0' || !(mask & (1U << m)))
			continue;
		if (member_open(v, m, &f, why, sizeof(why)) == -1) {
			log_warnx("volume %s: %s", v->name, why);
			continue;
		}
		if (erase_member(v, m, &f) == -1) {
			snprintf(err, errlen, "%s: erasing: %s", v->disk[m], strerror(errno));
			dfd_abandon(&f);
			return -1;
		}
		if (dfd_close(&f, err, errlen) == -1)
			return -1;
	}
	return 0;
}

int
volume_wipe_members(struct volume *v, char *err, size_t errlen)
{
	return volume_wipe_some(v, ~0U, err, errlen);
}
