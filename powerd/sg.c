/*
 * Disk power commands through SG_IO, the kernel's seam for powerd's
 * disks (drive_ops; the unit suite plugs in its own). ATA disks behind
 * libata get ATA commands in ATA PASS-THROUGH(16); other SCSI disks
 * (the virtual board's scsi-hd, SAS, most USB bridges) get SCSI
 * commands. Asking a disk its power state never wakes it: CHECK POWER
 * MODE and REQUEST SENSE touch no media.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <scsi/sg.h>

#include "powerd.h"

#define SG_TIMEOUT_MS	15000	/* a spin-down flushes the disk's cache first */

/* ATA PASS-THROUGH(16), non-data; ck_cond asks for the registers back. */
static void
cdb_ata(uint8_t cdb[16], uint8_t command, int ck_cond)
{
	memset(cdb, 0, 16);
	cdb[0] = 0x85;			/* ATA PASS-THROUGH(16) */
	cdb[1] = 3 << 1;		/* protocol 3: non-data */
	cdb[2] = ck_cond ? 0x20 : 0;	/* CK_COND, no transfer */
	cdb[14] = command;
}

void
sg_cdb_ata_standby(uint8_t cdb[16])
{
	cdb_ata(cdb, 0xe0, 0);		/* STANDBY IMMEDIATE */
}

void
sg_cdb_ata_check_power(uint8_t cdb[16])
{
	cdb_ata(cdb, 0xe5, 1);		/* CHECK POWER MODE */
}

void
sg_cdb_scsi_standby(uint8_t cdb[6])
{
	memset(cdb, 0, 6);
	cdb[0] = 0x1b;			/* START STOP UNIT */
	/*
	 * POWER CONDITION 3h (STANDBY), START ignored: the disk returns to
	 * active by itself at the next media access, where a plain stop
	 * (START 0) would leave it stopped until a START UNIT.
	 */
	cdb[4] = 0x30;
}

void
sg_cdb_request_sense(uint8_t cdb[6], uint8_t len)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x03;			/* REQUEST SENSE, fixed format */
	cdb[4] = len;
}

/* The ATA sector count CHECK POWER MODE left, from its sense data. */
int
sg_ata_power_from_sense(const uint8_t *sb, size_t len)
{
	int count = -1;

	if (len < 8)
		return -1;
	/*
	 * Registers only with ASC/ASCQ 00h/1Dh (ATA PASS-THROUGH INFORMATION
	 * AVAILABLE): a bridge that refuses the command answers ILLEGAL
	 * REQUEST, whose zero INFORMATION bytes would read as count 0, standby.
	 */
	if ((sb[0] & 0x7f) == 0x72 || (sb[0] & 0x7f) == 0x73) {
		if (sb[2] != 0x00 || sb[3] != 0x1d)
			return -1;
	} else if (len < 14 || sb[12] != 0x00 || sb[13] != 0x1d)
		return -1;
	if ((sb[0] & 0x7f) == 0x72 || (sb[0] & 0x7f) == 0x73) {
		/* Descriptor format: find the ATA Status Return (09h). */
		size_t end = 8 + (size_t)sb[7], i = 8;

		if (end > len)
			end = len;
		while (i + 1 < end) {
			if (sb[i] == 0x09 && sb[i + 1] >= 0x0c && i + 14 <= end) {
				count = sb[i + 5];
				break;
			}
			i += 2 + (size_t)sb[i + 1];
		}
	} else if ((sb[0] & 0x7f) == 0x70 || (sb[0] & 0x7f) == 0x71) {
		/* Fixed format: libata puts ERROR, STATUS, DEVICE, COUNT at 3..6. */
		count = sb[6];
	}
	switch (count) {
	case 0x00:
		return DP_STANDBY;
	case 0x40:	/* NV cache power mode, spun down */
	case 0x41:
		return DP_STANDBY;
	case 0x80:
	case 0x81:
	case 0x82:
	case 0x83:
		return DP_IDLE;
	case 0xff:
		return DP_ACTIVE;
	default:
		return -1;
	}
}

/* SPC's power condition in fixed-format sense data (ASC 5Eh), or -1. */
int
sg_scsi_power_from_sense(const uint8_t *sb, size_t len)
{
	if (len < 14 || ((sb[0] & 0x7f) != 0x70 && (sb[0] & 0x7f) != 0x71) || sb[12] != 0x5e)
		return -1;
	switch (sb[13]) {
	case 0x02: case 0x04: case 0x09: case 0x0a: case 0x43:
		return DP_STANDBY;
	case 0x00: case 0x01: case 0x03: case 0x05: case 0x06: case 0x07: case 0x08:
	case 0x42:
		return DP_IDLE;
	case 0x41:
		return DP_ACTIVE;
	default:
		return -1;
	}
}

/* ---- Linux ---- */

static int
sg_run(const char *name, uint8_t *cdb, int cdb_len, uint8_t *data, int dlen,
    uint8_t *sense, int slen, int *sense_got)
{
	char dev[PATH_MAX];
	struct sg_io_hdr h;
	int fd, rc, e;

	if (pathf(dev, sizeof(dev), "/dev/%s", name) == -1 || strchr(name, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	/* O_NONBLOCK: no wait for a medium; the command itself still waits. */
	if ((fd = open(dev, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return -1;
	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	h.cmd_len = (unsigned char)cdb_len;
	h.cmdp = cdb;
	h.dxfer_direction = dlen > 0 ? SG_DXFER_FROM_DEV : SG_DXFER_NONE;
	h.dxferp = data;
	h.dxfer_len = (unsigned)dlen;
	h.sbp = sense;
	h.mx_sb_len = (unsigned char)slen;
	h.timeout = SG_TIMEOUT_MS;
	rc = ioctl(fd, SG_IO, &h);
	e = errno;
	close(fd);
	if (rc == -1) {
		errno = e;
		return -1;
	}
	*sense_got = h.sb_len_wr;
	if (h.host_status != 0 || h.driver_status & 0x0f) {	/* not DRIVER_SENSE alone */
		errno = EIO;
		return -1;
	}
	return h.status;
}

static int
linux_standby(const char *name, int ata)
{
	uint8_t cdb[16], sense[64];
	int got = 0, st;

	if (ata)
		sg_cdb_ata_standby(cdb);
	else
		sg_cdb_scsi_standby(cdb);
	if ((st = sg_run(name, cdb, ata ? 16 : 6, NULL, 0, sense, sizeof(sense), &got)) == -1)
		return -1;
	if (st != 0) {		/* anything but GOOD: not done */
		errno = EIO;
		return -1;
	}
	return 0;
}

static int
linux_power_mode(const char *name, int ata)
{
	uint8_t cdb[16], sense[64], data[64];
	int got = 0;

	if (ata) {
		sg_cdb_ata_check_power(cdb);
		if (sg_run(name, cdb, 16, NULL, 0, sense, sizeof(sense), &got) == -1)
			return -1;
		return sg_ata_power_from_sense(sense, (size_t)got);
	}
	sg_cdb_request_sense(cdb, sizeof(data));
	memset(data, 0, sizeof(data));
	if (sg_run(name, cdb, 6, data, sizeof(data), sense, sizeof(sense), &got) != 0)
		return -1;
	return sg_scsi_power_from_sense(data, sizeof(data));
}

const struct drive_ops drive_linux = {
	.standby = linux_standby,
	.power_mode = linux_power_mode,
};
