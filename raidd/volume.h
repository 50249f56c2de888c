/* Volumes: found on the disks, assembled, created, deleted. */
#ifndef RAIDD_VOLUME_H
#define RAIDD_VOLUME_H

#include <time.h>

#include "label.h"
#include "plan.h"
#include "raidd.h"

#define VOL_NAME_MAX	24	/* md_<name>_tN must fit the kernel's 32 */
#define MAX_VOLUMES	16

enum vol_state {
	VOL_CLEAN, VOL_RESYNCING, VOL_DEGRADED, VOL_FAILED, VOL_CREATING,
	VOL_DELETING, VOL_INCOMPLETE, VOL_FOREIGN, VOL_INCONSISTENT,
	VOL_REBUILDING, VOL_DIRTY_DEGRADED,
	VOL_STATE_COUNT
};

struct volume {
	char		 name[LABEL_NAME_MAX];
	struct label	 label;			/* newest generation among members */
	struct label	 mlabel[PLAN_MAX_DISKS];	/* each present member's own */
	char		 disk[PLAN_MAX_DISKS][SYS_NAME_MAX];	/* member -> kernel name, "" missing */
	int		 next_slot[PLAN_MAX_DISKS];	/* label slot to write next */
	enum vol_state	 state;
	char		 problem[256];		/* why it is not (fully) usable */
	int		 assembled;		/* arrays and map are up */
	int		 held;			/* never assembled: see problem */
	int		 lost_disk;		/* a bare tier's disk went while mapped */
	int		 foreign;		/* made by another unit: volume.import */
	int		 inconsistent;		/* no safe decision: see problem */
	uint8_t		 split;			/* members held out: used on their own */
	uint8_t		 pulled;		/* members whose disk went away meanwhile */
	uint8_t		 left_out;		/* members whose disk a repair replaced */
	uint8_t		 cleared[PLAN_MAX_TIERS];	/* by tier: members volume.clear
						   vouched for, taken back there even when md
						   rebuilds them in full */
	int		 bay[PLAN_MAX_DISKS];	/* member -> bay it was last seen in, 0 unknown */
	struct job	*job;			/* create/delete in flight */
	uint64_t	 crypt_over;		/* bytes of the joined map its crypt mapping
						   was opened or grown over; 0 unknown */
};

/* volume.c */
int	 volume_count(void);
struct volume *volume_at(int);
struct volume *volume_find(const char *name);
struct volume *volume_add(void);
void	 volume_forget(struct volume *);
void	 volume_reset(void);		/* forgets every volume (tests) */
const char *volume_state_name(enum vol_state);
void	 volume_md_name(const struct volume *, int tier, char *, size_t);
void	 volume_dm_name(const char *vol, char *, size_t);
void	 volume_mountpoint(const char *vol, char *, size_t);
int	 volume_name_valid(const char *, char *why, size_t len);
struct volume *volume_of_disk(const char *disk);
void	 volume_refresh_state(struct volume *);
enum vol_state volume_state_now(const struct volume *);
void	 volume_sync_disks(void);
struct json_object *volume_describe(const struct volume *);
void	 volume_set_options(const char *mount_root);
int	 volume_uuid_zero(const uint8_t u[16]);

/* label-io.c */
int	 label_read_disk(const char *disk, struct label *, int *next_slot,
	    char *err, size_t errlen);
int	 label_read_fd(const struct dfd *, struct label *, int *next_slot,
	    char *err, size_t errlen);
int	 label_write_fd(const struct dfd *, const struct label *, int slot,
	    char *err, size_t errlen);
int	 label_new_guids(struct label *);
int	 label_tier_guids(struct label_tier *);
int	 label_write_blank(const struct sys_disk *, const struct label *, char *err,
	    size_t errlen);
int	 label_write_all(struct volume *, char *err, size_t errlen);
int	 label_write_some(struct volume *, unsigned mask, char *err, size_t errlen);
int	 label_next(struct volume *, char *err, size_t errlen);
int	 label_agrees(const struct volume *, int m);
/* What member m's disk carries at v's generation: v's label, m's own fields. */
void	 label_for_member(const struct volume *, int m, struct label *);
/* Member m's own label, at a generation the others hold (a join's first). */
int	 label_write_own(struct volume *, int m, const struct label *, char *err,
	    size_t errlen);
int	 label_change(struct volume *, unsigned mask, const struct label *was,
	    char *err, size_t errlen);
int	 member_open(const struct volume *, int m, struct dfd *, char *err, size_t errlen);
/*
 * fn(f, arg) through member m's proven descriptor, the node rechecked
 * before and after it (the kernel's part of a partition change names the
 * disk); then closed, synced, or abandoned when anything failed.
 */
int	 member_through(const struct volume *, int m,
	    int (*fn)(struct dfd *, void *arg, char *err, size_t errlen), void *arg,
	    char *err, size_t errlen);
/* member_through() of part_del: member m's partition at start, of size. */
int	 member_part_del(const struct volume *, int m, uint64_t start, uint64_t size,
	    char *err, size_t errlen);
/* member_through() of libfdisk's table: parts, n of them. */
int	 member_partition(const struct volume *, int m, const struct sys_part *parts, int n,
	    char *err, size_t errlen);

/* diskfd.c */
int	 member_readd(struct volume *, int m, const char *md, const char *dev, int role,
	    char *err, size_t errlen);
int	 member_is(const struct disk *, const struct volume *, int m);

/* proof.c */
int	 disk_proven(const struct disk *, const struct label *, char *why, size_t len);
int	 gpt_proven(const struct dfd *, const struct label *, char *why, size_t len);
int	 grow_making(const struct label *, int t);

/* unit.c */
int	 unit_load(const char *path);
void	 unit_set(const uint8_t u[16]);
const uint8_t *unit_id(const char **problem);
int	 unit_is_local(const uint8_t u[16]);
void	 unit_hex(const uint8_t u[16], char *buf, size_t len);
int	 unit_deleted_load(const char *path);
int	 unit_deleted(const uint8_t volume_uuid[16]);
int	 unit_deleted_set(const uint8_t volume_uuid[16], int on);
void	 unit_reset(void);
int	 unit_file_replace(const char *path, const char *text);

/* health.c */
enum vol_state volume_tier_state(const struct volume *, int tier, struct sys_md_status *);
void	 volume_fail_missing(struct volume *);
int	 volume_check_states(void);
void	 volume_set_degraded_start(int ok);
int	 volume_waits(const struct volume *);
const char *volume_member_state(const struct volume *, int tier, int role,
	    const struct sys_md_status *, int *idx);
int	 volume_state_rank(enum vol_state);
void	 volume_state_reason(const struct volume *, enum vol_state old, char *, size_t);
void	 volume_state_event(const struct volume *, enum vol_state old, const char *reason);

/* watch.c */
int	 watch_start(void);
void	 watch_update(void);
void	 watch_stop(void);
void	 watch_sync_fields(struct json_object *, const struct sys_md_status *);
struct json_object *watch_percent(uint64_t, uint64_t);

/* led.c */
void	 led_update(void);
void	 led_set_off(void);
void	 led_set_sysfs(const char *root);

/* assemble.c */
struct mdsb;
void	 volume_scan(void);
int	 member_read_sb(const char *dev, struct mdsb *);
int	 tier_sb(const struct volume *, int t, int m, struct mdsb *);
void	 volume_note_failed(struct volume *);
int	 volume_assemble(struct volume *, char *err, size_t errlen);
int	 volume_assemble_as_was(struct volume *, char *err, size_t errlen);
int	 volume_start_arrays(struct volume *, char *err, size_t errlen);
int	 volume_segments(struct volume *, struct sys_seg *, int *n, char *err, size_t errlen);
int	 volume_mount(struct volume *, char *err, size_t errlen);
int	 volume_unmount(struct volume *, char *err, size_t errlen);

/* teardown.c */
int	 volume_stop(struct volume *, char *err, size_t errlen);
int	 volume_map_remove(const char *dm, char *err, size_t errlen);
int	 volume_wipe_members(struct volume *, char *err, size_t errlen);
int	 volume_wipe_some(struct volume *, unsigned mask, char *err, size_t errlen);

/* create.c */
struct create_req {
	char		 name[LABEL_NAME_MAX];
	enum vol_level	 level;
	enum label_fs	 fs;
	int		 force;
	int		 ndisks;
	char		 disk[PLAN_MAX_DISKS][SYS_NAME_MAX];	/* kernel names */
	int		 encrypt;
	struct secret	*pass;		/* encrypt: the job's from create_start on */
};
int	 create_check(const struct create_req *, struct plan *, int *code,
	    char *err, size_t errlen);
int	 volume_make_array(struct volume *, int t, const struct plan_tier *,
	    const uint8_t uuid[16], char *err, size_t errlen);
struct job *create_start(const struct create_req *, const struct plan *,
	    char *err, size_t errlen);
int	 disk_check_free(int force, const struct disk *, int *code, char *err,
	    size_t errlen);

/* repair.c */
int	 repair_check(struct volume *, const char *disk, int force, int *code,
	    char *err, size_t errlen);
struct job *repair_start(struct volume *, const char *disk, int force,
	    char *err, size_t errlen);
int	 repair_decide(struct volume *);
void	 repair_resume(struct volume *);
void	 repair_set_poll(double seconds);
int	 repair_member_partitions(struct volume *, int m, char *err, size_t errlen);
int	 repair_member_join(struct volume *, int m, int t, int role, char *err, size_t errlen);
void	 repair_set_auto(int on);
const char *repair_disk_busy(const char *disk);
void	 repair_note_resume(const struct volume *, const char *md, const char *dev);
void	 repair_auto(char (*names)[SYS_NAME_MAX], int n);

int	 repair_lacks_member(const struct volume *);
struct job *repair_spare_start(struct volume *, const struct disk *, const uint8_t uuid[16],
	    char *err, size_t errlen);

/* spare.c */
void	 spare_label_encode(const struct spare_label *, uint8_t buf[LABEL_SLOT_SIZE]);
int	 spare_label_decode(const uint8_t *buf, size_t len, struct spare_label *,
	    char *err, size_t errlen);
int	 spare_label_read(const char *disk, struct spare_label *, char *err, size_t errlen);
int	 spare_proven(const struct volume *, const char *disk, const uint8_t uuid[16],
	    char *err, size_t errlen);
int	 spare_add(struct volume *, const char *disk, int force, int *code, char *err,
	    size_t errlen);
int	 spare_remove(struct volume *, const char *disk, int *code, char *err, size_t errlen);
void	 spare_drop_taken(struct label *);
struct json_object *spare_describe(const struct volume *);
void	 spare_takeover(void);
void	 spare_reset(void);
extern const struct rpc_method spare_methods[];

/* grow.c */
int	 grow_check(const struct volume *, struct plan *after, int *code,
	    char *err, size_t errlen);
struct plan_change;
int	 grow_is_join(const struct volume *, struct plan_change *, int *code, char *err,
	    size_t errlen);
struct crypt_key;
struct job *grow_start(struct volume *, const struct plan *after, struct crypt_key *,
	    char *err, size_t errlen);
int	 volume_fs_grow(struct volume *, struct crypt_key *, sys_done_cb done,
	    void *arg, char *err, size_t errlen);
int	 grow_label(struct volume *, const struct plan *after, char *err, size_t errlen);
void	 grow_resume(struct volume *);
int	 grow_decide(struct volume *, char *why, size_t len);
/* Member m's new partition of tier t where its label says, proven and zeroed
   where the plan's tier pt says: refused unless both say one band. */
int	 grow_part_new(struct volume *, int m, int t, const struct plan_tier *pt,
	    char *err, size_t errlen);
int	 volume_plan(const struct volume *, struct plan *, char *err, size_t errlen);
int	 volume_plan_labels(const struct volume *, struct plan *, char *err, size_t errlen);
void	 grow_label_from(struct volume *, const struct plan *after);
int	 volume_map_reload(struct volume *, char *err, size_t errlen);

/* add.c */
/* A join's layout, from its labels (Decision 133): plan_grow() before it. */
int	 add_join_replan(const struct volume *, struct plan *after, char *err,
	    size_t errlen);
/* A join md never began undone: partitions out of md and off the disk, then labels. */
int	 add_join_roll_back(struct volume *, char *err, size_t errlen);
void	 add_join_settle(struct volume *);
/* A join's job (Decision 133), one join's plan: labels, partitions, md's reshape. */
struct job *add_join_start(struct volume *, const struct plan_change *,
	    struct crypt_key *, char *err, size_t errlen);
/* The first of the joins a volume.grow's plan makes; that join's job. */
int	 add_join_first(const struct plan_change *full, struct plan_change *first,
	    char *err, size_t errlen);
struct job *add_join_grow(struct volume *, const struct plan_change *full,
	    struct crypt_key *, char *err, size_t errlen);
int	 add_check(struct volume *, const char *disk, const char *level, int force,
	    struct plan *after, int *code, char *err, size_t errlen);
struct job *add_start(struct volume *, const char *disk, int force, const struct plan *after,
	    struct crypt_key *, char *err, size_t errlen);
struct job *add_join_carry_on(struct volume *, struct crypt_key *, int *code, char *err,
	    size_t errlen);
struct job *add_carry_on(struct volume *, const struct disk *, int force, struct crypt_key *,
	    int *code, char *err, size_t errlen);
int	 add_decide(struct volume *);
int	 add_mend_takeover(struct volume *, char *err, size_t errlen);
int	 add_spare_held_out(const struct volume *, int t, int m);
int	 add_rolled_back(const struct label *, const struct label *newest);
void	 add_left_out(struct volume *);
void	 add_resume(struct volume *);
/* volume.start force's: add_resume, or the add undone when md never began
   and the volume lacks a member. */
void	 add_resume_forced(struct volume *);
void	 add_set_poll(double seconds);
const char *add_disk_busy(const char *disk);

/* delete.c */
int	 delete_volume(struct volume *, char *err, size_t errlen);

/* scrub.c */
struct job *scrub_start(struct volume *, const char *action, int *code, char *err,
	    size_t errlen);
int	 scrub_stop(const char *name);
struct job *scrub_job(const char *name);
const char *scrub_pending(const struct volume *);
void	 scrub_set_options(const char *state_path, double budget_s, unsigned speed_min,
	    unsigned speed_max, double tick_s);
void	 scrub_reset(void);
extern const struct rpc_method scrub_methods[];

/* scrub-schedule.c */
struct scrub_sched {
	int		 every;		/* 0 off, 1 daily, 2 weekly, 3 monthly */
	int		 day;		/* weekly: 0 = Sunday; monthly: 1-28 */
	int		 hour;		/* 0-23, local time */
};
int	 scrub_sched_parse(const char *, struct scrub_sched *, char *err, size_t len);
int	 scrub_sched_day(const struct scrub_sched *, const struct tm *);
void	 scrub_sched_set(const struct scrub_sched *);
void	 scrub_sched_tick(const struct tm *);

extern const struct rpc_method volume_methods[];

/* dirty.c: a dirty degraded RAID 5 tier runs read-only (Decision 90) */
int	 volume_read_only(const struct volume *);
int	 dirty_start_tier(struct volume *, int tier, struct sys_md *);
void	 dirty_reason(const struct volume *, char *, size_t);
int	 dirty_mount(struct volume *, const char *dev, const char *mp, const char *fs,
	    char *err, size_t errlen);
void	 dirty_announce(struct volume *, enum vol_state before);
void	 volume_start_m(struct rpc_call *, struct json_object *);
extern const struct rpc_param volume_start_params[];
/* api-volume.c: the volume params name, idle, or an error answered. */
struct volume *volume_find_idle(struct rpc_call *, struct json_object *params);

#endif
