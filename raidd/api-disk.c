/*
 * disk.* methods: parse, call the module, answer. Listing answers from
 * the table kept current by hotplug events and raidd's own changes:
 * probing on every poll of a web UI would wake disks from standby.
 */
#include <string.h>

#include "volume.h"

static struct disk *
find_or_fail(struct rpc_call *c, const char *spec)
{
	struct disk *d = disk_find(spec);

	if (d == NULL)
		rpc_error(c, NAS_ERR_NOT_FOUND, "no disk %s", spec);
	return d;
}

static void
disk_list(struct rpc_call *c, struct json_object *params)
{
	struct json_object *a = json_object_new_array();

	(void)params;
	for (int i = 0; i < disk_count(); i++)
		json_object_array_add(a, disk_describe(disk_at(i)));
	rpc_result(c, a);
}

static void
disk_show(struct rpc_call *c, struct json_object *params)
{
	struct disk *d;

	if ((d = find_or_fail(c, rpc_param_str(params, "disk", ""))) != NULL)
		rpc_result(c, disk_describe(d));
}

/* Why a disk may not be wiped, or NULL. */
static const char *
wipe_refusal(const struct disk *d, int *code)
{
	*code = NAS_ERR_REFUSED;
	if (d->flash)
		return "is the firmware's own device";
	if (!disk_board_known())
		return "may be the firmware's own device: the board description is missing";
	*code = NAS_ERR_BUSY;
	if (volume_of_disk(d->sys.name))
		return "belongs to a volume: delete the volume instead";
	if (d->sys.busy[0])
		return d->sys.busy;
	return NULL;
}

static void
disk_wipe(struct rpc_call *c, struct json_object *params)
{
	const char *spec = rpc_param_str(params, "disk", "");
	const char *confirm = rpc_param_str(params, "confirm", "");
	const char *why;
	char err[256], name[SYS_NAME_MAX];
	struct disk *d;
	int code;

	disk_refresh(1);
	if ((d = find_or_fail(c, spec)) == NULL)
		return;
	disk_spec(d, name, sizeof(name));
	if (strcmp(confirm, spec) != 0 && strcmp(confirm, d->sys.name) != 0 &&
	    strcmp(confirm, name) != 0) {
		rpc_error(c, NAS_ERR_REFUSED, "confirm must repeat the disk's name (%s)", spec);
		return;
	}
	if ((why = wipe_refusal(d, &code)) != NULL) {
		rpc_error(c, code, "%s (%s) %s: nothing was written", name, d->sys.name, why);
		return;
	}
	if (wipe_disk(d, err, sizeof(err)) == -1) {
		rpc_error(c, NAS_ERR_FAILED, "%s", err);
		return;
	}
	disk_refresh(1);
	if ((d = disk_find(name)) == NULL) {
		rpc_error(c, NAS_ERR_FAILED, "%s disappeared while it was wiped", name);
		return;
	}
	nas_event("disk.wiped", disk_describe(d));
	rpc_result(c, disk_describe(d));
}

static const struct rpc_param disk_params[] = {
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "bay (bay1), kernel name (sda) or serial" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct rpc_param wipe_params[] = {
	{ "disk", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "bay (bay1), kernel name (sda) or serial" },
	{ "confirm", RPC_STRING, RPC_REQUIRED, 1, 64, NULL, "the disk's name again" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

const struct rpc_method disk_methods[] = {
	{ "disk.list", disk_list, NULL, 0, "every disk, its bay, state and signatures" },
	{ "disk.show", disk_show, disk_params, 0, "one disk" },
	{ "disk.wipe", disk_wipe, wipe_params, RPC_MUTATES,
	  "erase every signature (md, GPT, LUKS, filesystems, raidd label)" },
	{ NULL, NULL, NULL, 0, NULL }
};
