/*
 * volume.delete: the volume is stopped first - a share holding a file
 * open refuses, and then nothing has changed. Only then do the labels
 * say "deleting" and the members get erased, label last. A power cut
 * after the labels is finished at the next start (assemble.c); one
 * before them finds the volume whole.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "volume.h"

int
delete_volume(struct volume *v, char *err, size_t errlen)
{
	struct json_object *ev;
	struct label was = v->label;
	char name[LABEL_NAME_MAX], again[256];
	unsigned covered = 0;

	if (volume_stop(v, err, errlen) == -1) {
		/* Put back what was stopped before the refusal. */
		if (volume_assemble(v, again, sizeof(again)) == -1 ||
		    volume_mount(v, again, sizeof(again)) == -1)
			log_warnx("volume %s: %s", v->name, again);
		return -1;
	}
	/* A member absent now still says the volume exists: the unit
	   remembers the delete, and the labels say whom it covered. */
	for (int m = 0; m < v->label.ndisks; m++)
		if (v->disk[m][0])
			covered |= 1U << m;
	if (covered != (1U << v->label.ndisks) - 1 &&
	    unit_deleted_set(v->label.volume_uuid, 1) == -1) {
		snprintf(err, errlen, "the delete could not be recorded on the flash (%s): "
		    "nothing was erased", strerror(errno));
		goto put_back;
	}
	if (label_next(v, err, errlen) == -1)
		goto put_back;
	v->label.intent.op = LABEL_OP_DELETING;
	v->label.intent.covered = (uint8_t)covered;
	v->label.intent.target = v->label.generation + 1;
	v->state = VOL_DELETING;
	/* From here on the next start finishes what this one could not. */
	if (label_write_all(v, err, errlen) == -1 ||
	    volume_wipe_members(v, err, errlen) == -1) {
		snprintf(v->problem, sizeof(v->problem),
		    "deletion stopped (%.180s): it is finished at the next start", err);
		return -1;
	}
	if (covered == (1U << v->label.ndisks) - 1)
		unit_deleted_set(v->label.volume_uuid, 0);
	snprintf(name, sizeof(name), "%s", v->name);
	volume_forget(v);
	disk_refresh(1);
	log_info("volume %s deleted", name);
	ev = json_object_new_object();
	json_object_object_add(ev, "name", json_object_new_string(name));
	nas_event("volume.deleted", ev);
	return 0;
put_back:
	v->label = was;
	v->state = VOL_CLEAN;
	if (volume_assemble(v, again, sizeof(again)) == -1 ||
	    volume_mount(v, again, sizeof(again)) == -1)
		log_warnx("volume %s: %s", v->name, again);
	volume_refresh_state(v);
	return -1;
}
