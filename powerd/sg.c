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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <scsi/sg.h>

#include "powerd.h"

/*
 * A spin-down flushes the disk's cache first; a question is answered by
 * the disk's electronics at once, so a disk still silent after 3 s is not
 * going to answer it (the worker reports that, the loop never waits).
 */
#define SG_STANDBY_MS	15000
#define SG_QUERY_MS	3000

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

void
sg_cdb_inquiry_vpd(uint8_t cdb[6], uint8_t page, uint16_t len)
{
	memset(cdb, 0, 6);
	cdb[0] = 0x12;			/* INQUIRY */
	cdb[1] = 0x01;			/* EVPD */
	cdb[2] = page;
	cdb[3] = (uint8_t)(len >> 8);
	cdb[4] = (uint8_t)len;
}

int
sg_vpd_length(const uint8_t *buf, size_t got, uint8_t page)
{
	size_t len;

	/* Peripheral qualifier 0 (a device is there), the page asked for. */
	if (got < 4 || (buf[0] & 0xe0) != 0 || buf[1] != page)
		return -1;
	len = 4 + ((size_t)buf[2] << 8 | buf[3]);
	return (int)(len < got ? len : got);
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

int
sg_io_status(unsigned host_status, unsigned driver_status, unsigned status)
{
	unsigned drv = driver_status & 0x0f;

	if (host_status != 0) {
		errno = host_status == 0x03 ? ETIMEDOUT : EIO;	/* DID_TIME_OUT */
		return -1;
	}
	/*
	 * DRIVER_SENSE (08h) only says that sense data came back, which the
	 * kernel sets with every CHECK CONDITION: the answer to CHECK POWER
	 * MODE with CK_COND is one, its registers are in the sense data.
	 */
	if (drv != 0 && drv != 0x08) {
		errno = drv == 0x06 ? ETIMEDOUT : EIO;		/* DRIVER_TIMEOUT */
		return -1;
	}
	return (int)(status & 0xff);
}

/* ---- Linux ---- */

/* fd is a block device with the recorded number. */
static int
is_disk(int fd, unsigned maj, unsigned min)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) == maj &&
	    minor(st.st_rdev) == min;
}

static int
linux_open(const char *name, unsigned maj, unsigned min)
{
	char dev[PATH_MAX], self[64];
	int pfd, fd;

	if (pathf(dev, sizeof(dev), "/dev/%s", name) == -1 || strchr(name, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * O_PATH first: opening a node for real runs its driver's open (a
	 * character device swapped in under the name: a tape rewinds, a tty
	 * becomes our terminal), so the node is judged before, then reopened
	 * through the descriptor's own /proc link, which cannot lead elsewhere
	 * (as raidd's lnx_dev_open and cryptd's node_open).
	 */
	if ((pfd = open(dev, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (!is_disk(pfd, maj, min)) {
		close(pfd);
		errno = ESTALE;
		return -1;
	}
	pathf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	/* O_NONBLOCK: no wait for a medium; the commands themselves still wait. */
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	close(pfd);
	if (fd == -1)
		return -1;
	/* Every command goes to this descriptor: it is the disk the kernel named. */
	if (!is_disk(fd, maj, min)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

static void
linux_close(int fd)
{
	close(fd);
}

static int
sg_run(int fd, uint8_t *cdb, int cdb_len, uint8_t *data, int dlen,
    uint8_t *sense, int slen, int *sense_got, int *resid, unsigned timeout_ms)
{
	struct sg_io_hdr h;

	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	h.cmd_len = (unsigned char)cdb_len;
	h.cmdp = cdb;
	h.dxfer_direction = dlen > 0 ? SG_DXFER_FROM_DEV : SG_DXFER_NONE;
	h.dxferp = data;
	h.dxfer_len = (unsigned)dlen;
	h.sbp = sense;
	h.mx_sb_len = (unsigned char)slen;
	h.timeout = timeout_ms;
	if (ioctl(fd, SG_IO, &h) == -1)
		return -1;
	*sense_got = h.sb_len_wr;
	if (resid != NULL)
		*resid = h.resid;
	return sg_io_status(h.host_status, h.driver_status, h.status);
}

static int
linux_vpd(int fd, uint8_t page, uint8_t *buf, size_t len)
{
	uint8_t cdb[6], sense[64];
	int got = 0, resid = 0, n;

	if (len > 0xffff)
		len = 0xffff;
	sg_cdb_inquiry_vpd(cdb, page, (uint16_t)len);
	memset(buf, 0, len);
	if (sg_run(fd, cdb, 6, buf, (int)len, sense, sizeof(sense), &got, &resid,
	    SG_QUERY_MS) != 0) {
		errno = EIO;
		return -1;
	}
	if (resid < 0 || (size_t)resid > len ||
	    (n = sg_vpd_length(buf, len - (size_t)resid, page)) == -1) {
		errno = EIO;
		return -1;
	}
	return n;
}

static int
linux_standby(int fd, int ata)
{
	uint8_t cdb[16], sense[64];
	int got = 0, st;

	if (ata)
		sg_cdb_ata_standby(cdb);
	else
		sg_cdb_scsi_standby(cdb);
	if ((st = sg_run(fd, cdb, ata ? 16 : 6, NULL, 0, sense, sizeof(sense), &got, NULL,
	    SG_STANDBY_MS)) == -1)
		return -1;
	if (st != 0) {		/* anything but GOOD: not done */
		errno = EIO;
		return -1;
	}
	return 0;
}

static int
linux_power_mode(int fd, int ata)
{
	uint8_t cdb[16], sense[64], data[64];
	int got = 0;

	if (ata) {
		sg_cdb_ata_check_power(cdb);
		if (sg_run(fd, cdb, 16, NULL, 0, sense, sizeof(sense), &got, NULL,
		    SG_QUERY_MS) == -1)
			return -1;
		return sg_ata_power_from_sense(sense, (size_t)got);
	}
	sg_cdb_request_sense(cdb, sizeof(data));
	memset(data, 0, sizeof(data));
	if (sg_run(fd, cdb, 6, data, sizeof(data), sense, sizeof(sense), &got, NULL,
	    SG_QUERY_MS) != 0)
		return -1;
	return sg_scsi_power_from_sense(data, sizeof(data));
}

const struct drive_ops drive_linux = {
	.open = linux_open,
	.vpd = linux_vpd,
	.standby = linux_standby,
	.power_mode = linux_power_mode,
	.close = linux_close,
};
