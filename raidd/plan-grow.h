/*
 * plan-grow.c: the expansion planner.  Given a volume's layout (a plan)
 * and what changed - its disks are bigger now, or one more disk joins -
 * decide the layout after the expansion and what each tier must do to
 * get there.  Existing data never moves: a tier keeps its arrays, its
 * partitions keep their starts, and what a tier gains is appended to
 * the end of the volume's dm-linear map.  Pure arithmetic, like plan.c.
 */
#ifndef RAIDD_PLAN_GROW_H
#define RAIDD_PLAN_GROW_H

#include "plan.h"

/* What tier t of the layout after must do (plan_change.what[t]). */
#define PLAN_CH_PART	0x01	/* its partitions grow in place, md's component size too */
#define PLAN_CH_MEMBERS	0x02	/* members join: md reshape to more raid_disks */
#define PLAN_CH_LEVEL	0x04	/* a two-disk raid1 becomes raid5 (md takeover) */
#define PLAN_CH_NEW	0x08	/* a new tier on free space */

/*
 * md's raid5 takeover of a raid1 picks the largest chunk up to 64 KiB
 * that divides the array; raidd's members are whole MiB, so 64 KiB.
 */
#define PLAN_TAKEOVER_CHUNK	128	/* sectors */

struct plan_change {
	struct plan	before;
	struct plan	after;
	unsigned	what[PLAN_MAX_TIERS];	/* PLAN_CH_* per tier of after */
};

int	 plan_check_layout(const struct plan *, char *err, size_t errlen);
int	 plan_grow(const struct plan *, const uint64_t *disk_size,
	    struct plan_change *, char *err, size_t errlen);
int	 plan_add_disk(const struct plan *, const struct plan_disk *,
	    enum vol_level, struct plan_change *, char *err, size_t errlen);
int	 plan_grow_join(const struct plan *, const uint64_t *disk_size, int m,
	    unsigned tiers, struct plan_change *, char *err, size_t errlen);
int	 plan_joiners(const struct plan_change *, int t, int *disks);

#endif
