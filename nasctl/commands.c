/*
 * The command table: what each "nasctl NOUN VERB" calls, which
 * arguments it takes and how its answer is shown. Most commands need no
 * code of their own: run_generic builds the params, calls, renders.
 */
#include <string.h>

#include "nasctl.h"

#define END_ARGS	{ NULL, NULL, 0, 0, NULL }
#define END_COLS	{ NULL, NULL, NULL, 0 }

static void
fmt_media(struct json_object *v, char *buf, size_t len)
{
	if (!json_object_is_type(v, json_type_boolean)) {
		fmt_plain(v, buf, len);
		return;
	}
	snprintf(buf, len, "%s", json_object_get_boolean(v) ? "hdd" : "ssd");
}

/* An encrypted volume's "locked"; "-" for one that is not encrypted. */
static void
fmt_lock(struct json_object *v, char *buf, size_t len)
{
	if (!json_object_is_type(v, json_type_boolean)) {
		fmt_plain(v, buf, len);
		return;
	}
	snprintf(buf, len, "%s", json_object_get_boolean(v) ? "locked" : "open");
}

static const struct arg no_args[] = { END_ARGS };

static const struct arg disk_args[] = {
	{ "DISK", "disk", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg disk_wipe_args[] = {
	{ "DISK", "disk", ARG_STRING, 0, NULL },
	{ "--confirm", "confirm", ARG_STRING, ARG_REQUIRED, "DISK" },
	END_ARGS
};

static const struct arg volume_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg volume_create_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--level", "level", ARG_STRING, ARG_REQUIRED, NULL },
	{ "--disks", "disks", ARG_LIST, ARG_REQUIRED, "D1,D2[,...]" },
	{ "--fs", "fs", ARG_STRING, 0, "ext4|btrfs|none" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	{ "--encrypt", "encrypt", ARG_BOOL, 0, NULL },
	{ "--passphrase-file", "passphrase", ARG_STRING, ARG_SECRET | ARG_NEW | ARG_WHEN, "FILE" },
	END_ARGS
};

static const struct arg volume_unlock_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--passphrase-file", "passphrase", ARG_STRING, ARG_SECRET | ARG_REQUIRED, "FILE" },
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg volume_start_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

/* An encrypted volume's passphrase: asked by run_volume_grow when volume.show says so. */
#define GROW_PASS_ARG { "--passphrase-file", "passphrase", ARG_STRING, ARG_SECRET, "FILE" }

static const struct arg volume_grow_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	GROW_PASS_ARG,
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg volume_delete_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--confirm", "confirm", ARG_STRING, ARG_REQUIRED, "NAME" },
	END_ARGS
};

static const struct arg volume_scrub_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--repair", "repair", ARG_BOOL, ARG_LOCAL, NULL },
	{ "--stop", "stop", ARG_BOOL, ARG_LOCAL, NULL },
	{ "--wait", "wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg volume_repair_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--disk", "disk", ARG_STRING, ARG_REQUIRED, "D" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg volume_add_disk_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--disk", "disk", ARG_STRING, ARG_REQUIRED, "D" },
	{ "--level", "level", ARG_STRING, 0, "L" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	GROW_PASS_ARG,
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg volume_spare_args[] = {
	{ "ACTION", "action", ARG_STRING, ARG_LOCAL, NULL },
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--disk", "disk", ARG_STRING, ARG_REQUIRED, "D" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg job_list_args[] = {
	{ "--daemon", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg job_id_args[] = {
	{ "ID", "id", ARG_INT, 0, NULL },
	{ "--daemon", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg call_args[] = {
	{ "DAEMON", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	{ "METHOD", "method", ARG_STRING, ARG_LOCAL, NULL },
	{ "PARAMS-JSON", "params", ARG_STRING, ARG_LOCAL | ARG_OPTIONAL, NULL },
	{ "--params-file", "params_file", ARG_STRING, ARG_LOCAL, "FILE|-" },
	{ "--secret", "secrets", ARG_STRING, ARG_LOCAL | ARG_REPEAT, "NAME" },
	END_ARGS
};

static const struct arg events_args[] = {
	{ "DAEMON", "daemons", ARG_STRING, ARG_LOCAL | ARG_OPTIONAL | ARG_REPEAT, NULL },
	{ "--topic", "topics", ARG_STRING, ARG_LOCAL | ARG_REPEAT, "PREFIX" },
	END_ARGS
};

static const struct arg methods_args[] = {
	{ "DAEMON", "daemon", ARG_STRING, ARG_LOCAL, NULL },
	END_ARGS
};

/* The kinds of signature found: "gpt,ext4". */
static void
fmt_sig_type(struct json_object *v, char *buf, size_t len)
{
	fmt_plain(json_object_is_type(v, json_type_object) ? json_path(v, "type") : v,
	    buf, len);
}

static void
fmt_sigs(struct json_object *v, char *buf, size_t len)
{
	fmt_join(v, buf, len, ",", fmt_sig_type);
}

/* Keys as raidd's disk_describe() and volume_describe() write them. */
static const struct column disk_cols[] = {
	{ "DISK", "name", NULL, 0 },
	{ "DEVICE", "device", NULL, 0 },
	{ "SIZE", "size_bytes", fmt_size, 1 },
	{ "TYPE", "rotational", fmt_media, 0 },
	{ "MODEL", "model", NULL, 0 },
	{ "SERIAL", "serial", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "SIGNATURES", "signatures", fmt_sigs, 0 },
	END_COLS
};

static const struct column volume_cols[] = {
	{ "NAME", "name", NULL, 0 },
	{ "LEVEL", "level", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "SIZE", "size_bytes", fmt_size, 1 },
	{ "FS", "fs", NULL, 0 },
	{ "CRYPT", "locked", fmt_lock, 0 },
	{ "MOUNTPOINT", "mountpoint", NULL, 0 },
	{ "PROBLEM", "problem", NULL, 0 },
	END_COLS
};

/* Keys as netd's link_describe(), addr.list and route.list write them. */
static const struct column link_cols[] = {
	{ "LINK", "name", NULL, 0 },
	{ "PORT", "port", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "SPEED", "speed_mbps", NULL, 1 },
	{ "MTU", "mtu", NULL, 1 },
	{ "MAC", "mac", NULL, 0 },
	{ "MASTER", "master", NULL, 0 },
	END_COLS
};

static const struct column addr_cols[] = {
	{ "LINK", "link", NULL, 0 },
	{ "ADDRESS", "address", NULL, 0 },
	END_COLS
};

static const struct column route_cols[] = {
	{ "DESTINATION", "destination", NULL, 0 },
	{ "GATEWAY", "gateway", NULL, 0 },
	{ "LINK", "link", NULL, 0 },
	{ "PROTO", "proto", NULL, 0 },
	END_COLS
};

static const struct arg link_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg link_set_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	{ "--up", "up", ARG_BOOL, 0, NULL },
	{ "--down", "up", ARG_BOOL, ARG_OFF, NULL },
	{ "--mtu", "mtu", ARG_INT, 0, "BYTES" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg addr_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	{ "ADDRESS/PREFIX", "address", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg addr_del_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	{ "ADDRESS/PREFIX", "address", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg addr_list_args[] = {
	{ "LINK", "link", ARG_STRING, ARG_OPTIONAL, NULL },
	END_ARGS
};

static const struct arg vlan_create_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	{ "--id", "id", ARG_INT, ARG_REQUIRED, "1-4094" },
	{ "--name", "name", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg vlan_delete_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg dhcp_start_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	{ "--fallback", "fallback", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg dhcp_stop_args[] = {
	{ "LINK", "link", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg route_default_args[] = {
	{ "GATEWAY", "gateway", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg dns_set_args[] = {
	{ "--servers", "servers", ARG_LIST, ARG_REQUIRED, "A1[,A2,A3]" },
	END_ARGS
};

static const struct arg bond_create_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--mode", "mode", ARG_STRING, ARG_REQUIRED, NULL },
	{ "--ports", "ports", ARG_LIST, ARG_REQUIRED, "P1,P2[,...]" },
	{ "--lacp-rate", "lacp_rate", ARG_STRING, 0, "fast|slow" },
	{ "--hash", "xmit_hash_policy", ARG_STRING, 0, "layer2|layer2+3|layer3+4|encap3+4" },
	{ "--miimon", "miimon", ARG_INT, 0, "MS" },
	{ "--min-links", "min_links", ARG_INT, 0, "N" },
	{ "--ad-select", "ad_select", ARG_STRING, 0, "stable|bandwidth|count" },
	{ "--primary", "primary", ARG_STRING, 0, "PORT" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg bond_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	END_ARGS
};

static const struct arg bond_delete_args[] = {
	{ "NAME", "name", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct arg net_apply_args[] = {
	{ "FILE", "file", ARG_STRING, ARG_LOCAL, NULL },
	{ "--confirm-within", "confirm_s", ARG_INT, 0, "S" },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};

static const struct column bond_cols[] = {
	{ "BOND", "name", NULL, 0 },
	{ "MODE", "mode", NULL, 0 },
	{ "STATE", "state", NULL, 0 },
	{ "MAC", "mac", NULL, 0 },
	{ "HASH", "xmit_hash_policy", NULL, 0 },
	END_COLS
};

static const struct arg power_history_args[] = {
	{ "--seconds", "seconds", ARG_INT, 0, "N" },
	END_ARGS
};

/* Keys as powerd's sensor_describe() writes them. */
static const struct column sensor_cols[] = {
	{ "SENSOR", "name", NULL, 0 },
	{ "KIND", "kind", NULL, 0 },
	{ "LABEL", "label", NULL, 0 },
	{ "VALUE", "value", NULL, 1 },
	{ "UNIT", "unit", NULL, 0 },
	{ "STATUS", "status", NULL, 0 },
	END_COLS
};

static const struct arg drive_set_args[] = {
	{ "DISK", "disk", ARG_STRING, 0, NULL },
	{ "--standby-minutes", "standby_minutes", ARG_INT, ARG_REQUIRED, "N" },
	END_ARGS
};

static const struct arg drive_standby_args[] = {
	{ "DISK", "disk", ARG_STRING, 0, NULL },
	{ "--no-wait", "no_wait", ARG_BOOL, ARG_LOCAL, NULL },
	END_ARGS
};

static const struct arg fan_set_args[] = {
	{ "FAN", "fan", ARG_STRING, 0, NULL },
	{ "--mode", "mode", ARG_STRING, ARG_REQUIRED, "auto|manual" },
	{ "--pwm", "pwm", ARG_INT, 0, "0-255" },
	END_ARGS
};

/* Keys as powerd's drive_describe() writes them. */
static const struct column drive_cols[] = {
	{ "DISK", "disk", NULL, 0 },
	{ "DEVICE", "device", NULL, 0 },
	{ "POWER", "power_state", NULL, 0 },
	{ "REPORTED", "reported", NULL, 0 },
	{ "IDLE S", "idle_seconds", NULL, 1 },
	{ "STANDBY MIN", "standby_minutes", NULL, 1 },
	{ "SPINUPS", "spinups", NULL, 1 },
	{ "TEMP C", "temperature", NULL, 1 },
	END_COLS
};

/* cryptd: passphrases only as ARG_SECRET (terminal, stdin or a file). */
#define PASS_ARG { "--passphrase-file", "passphrase", ARG_STRING, ARG_SECRET | ARG_REQUIRED, "FILE" }
#define NEW_PASS_ARG { "--new-passphrase-file", "new_passphrase", ARG_STRING, \
	ARG_SECRET | ARG_REQUIRED | ARG_NEW, "FILE" }
#define DEVICE_ARG { "DEVICE", "device", ARG_STRING, 0, NULL }
static const struct arg crypt_format_args[] = {
	DEVICE_ARG,
	{ "--passphrase-file", "passphrase", ARG_STRING, ARG_SECRET | ARG_REQUIRED | ARG_NEW, "FILE" },
	{ "--kdf", "kdf", ARG_STRING, 0, "argon2id|argon2i|pbkdf2" },
	{ "--key-bits", "key_bits", ARG_INT, 0, "256|512" },
	{ "--sector-size", "sector_size", ARG_INT, 0, NULL },
	{ "--label", "label", ARG_STRING, 0, NULL },
	{ "--force", "force", ARG_BOOL, 0, NULL },
	END_ARGS
};
static const struct arg crypt_open_args[] = {
	DEVICE_ARG, { "NAME", "name", ARG_STRING, 0, NULL }, PASS_ARG,
	{ "--keyslot", "keyslot", ARG_INT, 0, "N" }, END_ARGS
};
static const struct arg crypt_resize_args[] = {
	DEVICE_ARG, { "NAME", "name", ARG_STRING, 0, NULL }, PASS_ARG, END_ARGS
};
static const struct arg crypt_device_args[] = { DEVICE_ARG, END_ARGS };
static const struct arg crypt_confirm_args[] = {
	DEVICE_ARG, { "--confirm", "confirm", ARG_STRING, ARG_REQUIRED, "DEVICE" }, END_ARGS
};
static const struct arg key_add_args[] = { DEVICE_ARG, PASS_ARG, NEW_PASS_ARG, END_ARGS };
static const struct arg key_remove_args[] = {
	DEVICE_ARG, PASS_ARG, { "--force", "force", ARG_BOOL, 0, NULL }, END_ARGS
};
static const struct arg header_backup_args[] = {
	DEVICE_ARG, { "FILE", "file", ARG_STRING, 0, NULL }, END_ARGS
};
static const struct arg header_restore_args[] = {
	DEVICE_ARG, { "FILE", "file", ARG_STRING, 0, NULL },
	{ "--confirm", "confirm", ARG_STRING, ARG_REQUIRED, "DEVICE" }, END_ARGS
};
static const struct column crypt_cols[] = {
	{ "NAME", "name", NULL, 0 }, { "UUID", "uuid", NULL, 0 }, END_COLS
};
static const struct column keyslot_cols[] = {
	{ "SLOT", "slot", NULL, 1 }, { "KDF", "kdf.type", NULL, 0 },
	{ "TIME", "kdf.time", NULL, 1 }, { "MEMORY", "kdf.memory", NULL, 1 },
	{ "ITERATIONS", "kdf.iterations", NULL, 1 }, END_COLS
};

#define R "raidd"
#define P "powerd"
const struct command nasctl_commands[] = {
	{ "disk", "list", R, "disk.list", no_args, disk_cols, "disks", NULL,
	  "disks in the bays" },
	{ "disk", "show", R, "disk.show", disk_args, NULL, NULL, NULL,
	  "one disk in detail; DISK is a bay (bay1) or a kernel name (sda)" },
	{ "disk", "wipe", R, "disk.wipe", disk_wipe_args, NULL, NULL, NULL,
	  "erase every signature on a disk not in use" },
	{ "volume", "create", R, "volume.create", volume_create_args, NULL, NULL,
	  run_started_job, "create a volume and wait for the job" },
	{ "volume", "list", R, "volume.list", no_args, volume_cols, "volumes", NULL,
	  "volumes and their state" },
	{ "volume", "show", R, "volume.show", volume_args, NULL, NULL, NULL,
	  "one volume with its tiers" },
	{ "volume", "delete", R, "volume.delete", volume_delete_args, NULL, NULL, NULL,
	  "stop a volume and wipe its members" },
	{ "volume", "unlock", R, "volume.unlock", volume_unlock_args, NULL, NULL,
	  run_started_job, "open an encrypted volume (asks its passphrase) and mount it" },
	{ "volume", "lock", R, "volume.lock", volume_args, NULL, NULL, NULL,
	  "unmount an encrypted volume and close its mapping" },
	{ "volume", "mount", R, "volume.mount", volume_args, NULL, NULL, NULL,
	  "mount a volume's filesystem" },
	{ "volume", "unmount", R, "volume.unmount", volume_args, NULL, NULL, NULL,
	  "unmount a volume's filesystem" },
	{ "volume", "import", R, "volume.import", volume_args, NULL, NULL, NULL,
	  "make a foreign (or deleted) volume this unit's and assemble it" },
	{ "volume", "clear", R, "volume.clear", volume_args, NULL, NULL, NULL,
	  "let failed members rejoin (rebuilt in full when the bitmap lacks what they missed)" },
	{ "volume", "start", R, "volume.start", volume_start_args, NULL, NULL, NULL,
	  "make a dirty degraded (read-only) volume writable: needs --force" },
#define N "netd"
	{ "link", "list", N, "link.list", no_args, link_cols, "links", NULL,
	  "the board's ports, then every other link" },
	{ "link", "show", N, "link.show", link_args, NULL, NULL, NULL,
	  "one link: state, speed, duplex, counters" },
	{ "link", "set", N, "link.set", link_set_args, NULL, NULL, NULL,
	  "bring a link up or down or change its MTU (--force: a link you may reach the unit by)" },
	{ "addr", "list", N, "addr.list", addr_list_args, addr_cols, "addresses", NULL,
	  "addresses of every link, or of LINK" },
	{ "addr", "add", N, "addr.add", addr_args, NULL, NULL, NULL,
	  "add an address (CIDR: 192.168.1.10/24) to a link" },
	{ "addr", "del", N, "addr.del", addr_del_args, NULL, NULL, NULL,
	  "delete an address from a link (--force: it may be how you reach the unit)" },
	{ "route", "list", N, "route.list", no_args, route_cols, "routes", NULL,
	  "routes of the main table" },
	{ "route", "default", N, "route.set_default", route_default_args, NULL, NULL, NULL,
	  "make or replace the default route (--force: replace another gateway's)" },
	{ "dns", "set", N, "dns.set", dns_set_args, NULL, NULL, NULL,
	  "replace the name servers" },
	{ "dhcp", "start", N, "dhcp.start", dhcp_start_args, NULL, NULL, NULL,
	  "run a DHCPv4 client on a link (its lease: link show)" },
	{ "dhcp", "stop", N, "dhcp.stop", dhcp_stop_args, NULL, NULL, NULL,
	  "stop it; the lease's address, route and name servers go" },
	{ "dhcp", "renew", N, "dhcp.renew", link_args, NULL, NULL, NULL,
	  "renew the lease now" },
	{ "vlan", "create", N, "vlan.create", vlan_create_args, NULL, NULL, NULL,
	  "an 802.1Q VLAN on a link (named LINK.ID unless --name)" },
	{ "vlan", "delete", N, "vlan.delete", vlan_delete_args, NULL, NULL, NULL,
	  "delete a VLAN link" },
	{ "bond", "create", N, "bond.create", bond_create_args, NULL, NULL, NULL,
	  "make a bond of ports (802.3ad: LACP rate fast and hash layer3+4 unless given)" },
	{ "bond", "list", N, "bond.list", no_args, bond_cols, "bonds", NULL,
	  "bonds and their state" },
	{ "bond", "show", N, "bond.show", bond_args, NULL, NULL, NULL,
	  "a bond: ports, LACP partner and aggregator, diagnosis" },
	{ "bond", "delete", N, "bond.delete", bond_delete_args, NULL, NULL, NULL,
	  "delete a bond; its ports get their own MACs back" },
	{ "net", "apply", N, "net.apply", net_apply_args, NULL, NULL, run_net_apply,
	  "replace the network configuration with FILE's (netd.conf(5)); rolled back "
	  "unless confirmed within S seconds" },
	{ "net", "confirm", N, "net.confirm", no_args, NULL, NULL, NULL,
	  "keep what net apply --confirm-within made" },
	{ "net", "config", N, "net.config", no_args, NULL, NULL, NULL,
	  "the network sections of netd.ini as netd reads them" },
#undef N
	{ "power", "status", P, "power.status", no_args, NULL, NULL, NULL,
	  "watts now, their source (sensor or model), the state, energy per state" },
	{ "power", "history", P, "power.history", power_history_args, NULL, NULL,
	  run_power_history, "the last N seconds (default 600) as a sparkline" },
	{ "sensor", "list", P, "sensor.list", no_args, sensor_cols, "sensors", NULL,
	  "every power, energy, temperature, fan and PWM sensor" },
	{ "drive", "list", P, "drive.list", no_args, drive_cols, "drives", NULL,
	  "bay disks: power state, idle time, standby timer, temperature" },
	{ "drive", "standby", P, "drive.standby", drive_standby_args, NULL, NULL,
	  run_started_job, "spin a disk down now and wait until it took the command; "
	  "DISK is a bay (bay1) or a kernel name (sda)" },
	{ "drive", "set", P, "drive.set", drive_set_args, NULL, NULL, NULL,
	  "a bay's standby timer in minutes (0: never; -1: powerd.ini's), kept across restarts" },
	{ "fan", "set", P, "fan.set", fan_set_args, NULL, NULL, NULL,
	  "a PWM fan (hwmon:<chip>/pwmN) to the chip's automatic control or a fixed --pwm" },
#define C "cryptd"
	{ "crypt", "format", C, "crypt.format", crypt_format_args, NULL, NULL, NULL,
	  "write a new LUKS2 header on DEVICE (its data is lost); asks the passphrase twice" },
	{ "crypt", "open", C, "crypt.open", crypt_open_args, NULL, NULL, NULL,
	  "unlock DEVICE into /dev/mapper/NAME" },
	{ "crypt", "close", C, "crypt.close", volume_args, NULL, NULL, NULL,
	  "close the mapping NAME" },
	{ "crypt", "resize", C, "crypt.resize", crypt_resize_args, NULL, NULL, NULL,
	  "grow DEVICE's open mapping NAME to DEVICE's size now (asks the passphrase)" },
	{ "crypt", "list", C, "crypt.list", no_args, crypt_cols, "mappings", NULL,
	  "open encrypted mappings" },
	{ "crypt", "show", C, "crypt.show", crypt_device_args, NULL, NULL, NULL,
	  "a LUKS header: uuid, cipher, keyslots, open mapping" },
	{ "crypt", "erase", C, "crypt.erase", crypt_confirm_args, NULL, NULL, NULL,
	  "wipe every keyslot: the data is gone for good" },
	{ "crypt", "benchmark", C, "crypt.benchmark", no_args, NULL, NULL, NULL,
	  "calibrate the KDF on this board" },
	{ "key", "add", C, "key.add", key_add_args, NULL, NULL, NULL,
	  "add a passphrase (asks an existing one, then the new one twice)" },
	{ "key", "change", C, "key.change", key_add_args, NULL, NULL, NULL,
	  "change a passphrase (asks the old one, then the new one twice)" },
	{ "key", "remove", C, "key.remove", key_remove_args, NULL, NULL, NULL,
	  "remove the keyslot the passphrase opens (--force for the last)" },
	{ "key", "list", C, "key.list", crypt_device_args, keyslot_cols, "keyslots", NULL,
	  "a LUKS device's keyslots" },
	{ "header", "backup", C, "header.backup", header_backup_args, NULL, NULL, NULL,
	  "copy DEVICE's header and keyslots to a new FILE on the NAS" },
	{ "header", "restore", C, "header.restore", header_restore_args, NULL, NULL, NULL,
	  "put a header backup back (its passphrases replace the current ones)" },
#undef C
	{ "volume", "scrub", R, "volume.scrub", volume_scrub_args, NULL, NULL, run_scrub,
	  "check a volume's copies with md (--repair rewrites what differs, --stop stops "
	  "and keeps the place); prints the job id, or follows it with --wait" },
	{ "volume", "grow", R, "volume.grow", volume_grow_args, NULL, NULL,
	  run_volume_grow, "take the room of bigger disks and wait for the job (an "
	  "encrypted volume: asks its passphrase)" },
	{ "volume", "repair", R, "volume.repair", volume_repair_args, NULL, NULL,
	  run_started_job, "rebuild the missing or failed member on disk D and wait" },
	{ "volume", "add-disk", R, "volume.add_disk", volume_add_disk_args, NULL, NULL,
	  run_volume_grow, "disk D joins the volume (raid5: md reshapes onto it) and wait "
	  "(an encrypted volume: asks its passphrase)" },
	{ "volume", "spare", R, "volume.spare_add", volume_spare_args, NULL, NULL, run_spare,
	  "add or remove a hot spare of volume NAME: spare add|remove NAME --disk D" },
	{ "job", "list", NULL, "job.list", job_list_args, NULL, NULL, run_job_list,
	  "running and recent jobs (of every daemon without --daemon)" },
	{ "job", "status", NULL, "job.status", job_id_args, NULL, NULL, run_job_one,
	  "one job's state and progress" },
	{ "job", "cancel", NULL, "job.cancel", job_id_args, NULL, NULL, run_job_one,
	  "ask a job to stop" },
	{ "job", "wait", NULL, "job.status", job_id_args, NULL, NULL, run_job_wait,
	  "wait for a job to end, showing progress" },
	{ "call", NULL, NULL, NULL, call_args, NULL, NULL, run_call,
	  "call any method with params from the command line, a file or stdin; "
	  "--secret NAME asks for member NAME; the result is printed as JSON" },
	{ "events", NULL, NULL, "events.subscribe", events_args, NULL, NULL, run_events,
	  "stream events (of every daemon when none is named) until interrupted" },
	{ "methods", NULL, NULL, "system.methods", methods_args, NULL, NULL, run_methods,
	  "a daemon's methods and their parameters" },
	{ "version", NULL, NULL, "system.version", no_args, NULL, NULL, run_version,
	  "every daemon's version and missing kernel features" },
	{ "system", "version", NULL, "system.version", no_args, NULL, NULL, run_version,
	  "same as nasctl version" },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }
};
#undef R
#undef P

/* words: how many of the two words name the command (1 or 2). */
const struct command *
command_find(const char *noun, const char *verb, int *words)
{
	for (const struct command *c = nasctl_commands; c->noun; c++) {
		if (strcmp(c->noun, noun) != 0)
			continue;
		if (c->verb == NULL) {
			*words = 1;
			return c;
		}
		if (verb && strcmp(c->verb, verb) == 0) {
			*words = 2;
			return c;
		}
	}
	return NULL;
}

int
noun_known(const char *noun)
{
	for (const struct command *c = nasctl_commands; c->noun; c++)
		if (strcmp(c->noun, noun) == 0)
			return 1;
	return 0;
}

/* The rows of a list answer: the array itself or its member key. */
static struct json_object *
rows_of(const char *key, struct json_object *r)
{
	struct json_object *rows = r;

	if (key && json_object_is_type(r, json_type_object))
		json_object_object_get_ex(r, key, &rows);
	return json_object_is_type(rows, json_type_array) ? rows : NULL;
}

void
print_result(struct ctx *x, const struct column *cols, const char *key,
    struct json_object *r)
{
	struct json_object *rows;
	char buf[256];

	if (x->json) {
		json_print(x->out, r);
		return;
	}
	if (cols && (rows = rows_of(key, r)) != NULL) {
		table_print(x->out, cols, rows);
		return;
	}
	if (json_object_is_type(r, json_type_object)) {
		object_print(x->out, r, 0);
		return;
	}
	if (r == NULL)
		return;
	fmt_plain(r, buf, sizeof(buf));
	text_print(x->out, buf);
	fputc('\n', x->out);
}

/* Calls, then shows the answer: a table of cols when it is a list. */
int
call_and_print(struct ctx *x, const char *daemon, const char *method,
    struct json_object *params, const struct column *cols, const char *key)
{
	struct json_object *r;
	int rc;

	if ((rc = call_once(x, daemon, method, params, &r)) == EXIT_OK)
		print_result(x, cols, key, r);
	json_object_put(r);
	return rc;
}

/*
 * Parses argv for c, reads the secrets its table marks, runs it, and
 * wipes the secrets whatever happened.
 */
int
command_exec(struct ctx *x, const struct command *c, int argc, char **argv)
{
	struct secrets set = { .method = c->method };
	struct json_object *params, *local;
	char why[256];
	int rc;

	if (args_parse(c->args, argc, argv, &params, &local, why, sizeof(why)) == -1) {
		fprintf(x->err, "nasctl: %s %s%s%s\nusage: ", c->noun,
		    c->verb ? c->verb : "", c->verb ? ": " : "", why);
		args_usage(x->err, c);
		return EXIT_USAGE;
	}
	if (secrets_from_args(&set, x->in, c->args, params, local, why, sizeof(why)) == -1) {
		fprintf(x->err, "nasctl: %s\n", why);
		rc = EXIT_USAGE;
		json_object_put(params);
	} else {
		x->secrets = &set;
		rc = (c->run ? c->run : run_generic)(x, c, params, local);
		x->secrets = NULL;
	}
	secrets_free(&set);
	json_object_put(local);
	return rc;
}

int
run_generic(struct ctx *x, const struct command *cmd, struct json_object *params,
    struct json_object *local)
{
	(void)local;
	return call_and_print(x, cmd->daemon, cmd->method, params, cmd->cols, cmd->rows);
}
