/*
 * volume.delete: the labels first say "deleting", then the volume is
 * stopped and its members erased, label last. A power cut anywhere in
 * between is finished at the next start (assemble.c).
 */
#include <stdio.h>

#include "volume.h"

int
delete_volume(struct volume *v, char *err, size_t errlen)
{
	struct json_object *ev;
	char name[LABEL_NAME_MAX];

	if (label_bump(&v->label, err, errlen) == -1)
		return -1;
	v->label.intent.op = LABEL_OP_DELETING;
	v->label.intent.target = v->label.generation + 1;
	if (label_write_all(v, err, errlen) == -1)
		return -1;
	v->state = VOL_DELETING;
	if (volume_stop(v, err, errlen) == -1 ||
	    volume_wipe_members(v, err, errlen) == -1)
		return -1;
	snprintf(name, sizeof(name), "%s", v->name);
	volume_forget(v);
	disk_refresh(1);
	log_info("volume %s deleted", name);
	ev = json_object_new_object();
	json_object_object_add(ev, "name", json_object_new_string(name));
	nas_event("volume.deleted", ev);
	return 0;
}
