/*
 * Bay LEDs (board.ini: a bay's led, a name under /sys/class/leds): on for a
 * bay whose member is faulty or missing from a running volume, blinking
 * while md rebuilds onto it, off otherwise. A missing disk's bay is the
 * one it was last seen in (kept by serial while raidd runs).
 */
#include <stdio.h>
#include <string.h>

#include "volume.h"

static char sysfs[128] = "/sys";
static enum sys_led shown[BOARD_MAX_BAYS];
static int known[BOARD_MAX_BAYS];

/* Where each member disk was last seen, by serial. */
static struct {
	char	serial[64];
	int	bay;
} seen[BOARD_MAX_BAYS * 2];

static void
seen_at(const char *serial, int bay)
{
	int k, free_slot = -1;

	if (serial[0] == '\0' || bay < 1)
		return;
	for (k = 0; k < BOARD_MAX_BAYS * 2; k++) {
		if (strcmp(seen[k].serial, serial) == 0)
			break;
		if (seen[k].serial[0] == '\0' && free_slot == -1)
			free_slot = k;
	}
	if (k == BOARD_MAX_BAYS * 2 && (k = free_slot) == -1)
		k = 0;
	snprintf(seen[k].serial, sizeof(seen[k].serial), "%s", serial);
	seen[k].bay = bay;
}

static int
seen_bay(const char *serial)
{
	for (int k = 0; serial[0] && k < BOARD_MAX_BAYS * 2; k++)
		if (strcmp(seen[k].serial, serial) == 0)
			return seen[k].bay;
	return 0;
}

/* The worse of two things to show: fault over rebuild over off. */
static void
show(enum sys_led *want, int bay, enum sys_led mode)
{
	if (bay >= 1 && bay <= BOARD_MAX_BAYS && mode > want[bay - 1])
		want[bay - 1] = mode;
}

static void
volume_leds(const struct volume *v, enum sys_led *want)
{
	struct sys_md_status st;
	char md[SYS_NAME_MAX];
	int idx;

	for (int t = 0; t < v->label.ntiers; t++) {
		const struct label_tier *lt = &v->label.tier[t];

		memset(&st, 0, sizeof(st));
		if (lt->kind != TIER_NONE) {
			volume_md_name(v, t, md, sizeof(md));
			if (sys->md_status(md, &st) == -1)
				continue;
		}
		for (int r = 0; r < lt->nmembers; r++) {
			int m = lt->member[r];
			const char *s = volume_member_state(v, t, r, &st, &idx);
			const struct disk *d = v->disk[m][0] ? disk_find(v->disk[m]) : NULL;
			int bay = d ? d->bay : seen_bay(v->label.member[m].serial);

			if (d)
				seen_at(v->label.member[m].serial, d->bay);
			if (strcmp(s, "faulty") == 0 || strcmp(s, "missing") == 0)
				show(want, bay, SYS_LED_FAULT);
			else if (strcmp(s, "rebuilding") == 0)
				show(want, bay, SYS_LED_REBUILD);
		}
	}
}

/* Every bay LED as the running volumes say; written only on a change. */
void
led_update(void)
{
	const struct board *b = disk_board();
	enum sys_led want[BOARD_MAX_BAYS] = { 0 };
	struct volume *v;

	if (b == NULL)
		return;
	for (int i = 0; (v = volume_at(i)) != NULL; i++)
		if (v->assembled && !v->foreign && !v->inconsistent)
			volume_leds(v, want);
	for (int i = 0; i < b->nbays && i < BOARD_MAX_BAYS; i++) {
		char dir[256];

		if (b->bay[i].led[0] == '\0' || (known[i] && shown[i] == want[i]))
			continue;
		snprintf(dir, sizeof(dir), "%s/class/leds/%s", sysfs, b->bay[i].led);
		if (sys->led_set(dir, want[i]) == -1) {
			log_warn("bay %d: LED %s", i + 1, dir);
			known[i] = 1;	/* said once, not at every event */
			shown[i] = want[i];
			continue;
		}
		shown[i] = want[i];
		known[i] = 1;
	}
}

/* Where sysfs is (tests: a fixture tree). */
void
led_set_sysfs(const char *root)
{
	snprintf(sysfs, sizeof(sysfs), "%s", root);
	led_set_off();
}

/* Tests and a new board: every LED is written again at the next update. */
void
led_set_off(void)
{
	memset(known, 0, sizeof(known));
	memset(seen, 0, sizeof(seen));
}
