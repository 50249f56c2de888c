/*
 * Byte I/O through an open descriptor (Decision 21). raidd opens a disk
 * once, compares what the open file is (fstat st_rdev) with the device
 * it proved, and reads the proof and writes through that descriptor:
 * a node swapped afterwards, or another disk given the same name, is
 * never reached (I/O on a removed disk's descriptor fails).
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <linux/fs.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "system-linux.h"

#define ZERO_CHUNK	(1024 * 1024)

int
lnx_dev_open(const char *dev, unsigned *ma, unsigned *mi)
{
	char path[PATH_MAX], self[64];
	struct stat st;
	int pfd, fd;

	if (lnx_devpath(dev, path, sizeof(path)) == -1) {
		log_warn("%s: no device node", dev);
		return -1;
	}
	/*
	 * O_PATH first: opening a node for real runs its driver's open (a
	 * character device swapped in under the name could act on it), so
	 * the node is judged a block device before, then reopened through
	 * the descriptor's own /proc link, which cannot lead elsewhere.
	 */
	if ((pfd = open(path, O_PATH | O_CLOEXEC)) == -1) {
		log_warn("%s", path);
		return -1;
	}
	if (fstat(pfd, &st) == -1 || !S_ISBLK(st.st_mode)) {
		if (errno == 0 || S_ISBLK(st.st_mode) == 0)
			errno = ENOTBLK;
		log_warn("%s", path);
		close(pfd);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDWR | O_CLOEXEC);
	close(pfd);
	if (fd == -1) {
		log_warn("%s", path);
		return -1;
	}
	*ma = major(st.st_rdev);
	*mi = minor(st.st_rdev);
	return fd;
}

int
lnx_node_devnum(const char *dev, unsigned *ma, unsigned *mi)
{
	char path[PATH_MAX];
	struct stat st;

	if (lnx_devpath(dev, path, sizeof(path)) == -1 || stat(path, &st) == -1)
		return -1;
	if (!S_ISBLK(st.st_mode))
		return errno = ENOTBLK, -1;
	*ma = major(st.st_rdev);
	*mi = minor(st.st_rdev);
	return 0;
}

int
lnx_fd_read(int fd, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	/* md writes its members' superblocks past this device's page cache:
	   what raidd reads (labels, superblocks) must be on the disk now. */
	posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;	/* past the end */
			log_warn("read %zu at %llu", len, (unsigned long long)off);
			return -1;
		}
		done += n;
	}
	return 0;
}

int
lnx_fd_write(int fd, uint64_t off, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, (const char *)buf + done, len - done, off + done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;
			log_warn("write %zu at %llu", len, (unsigned long long)off);
			return -1;
		}
		done += n;
	}
	return 0;
}

int
lnx_fd_zero(int fd, uint64_t off, uint64_t len)
{
	static char zero[ZERO_CHUNK];	/* .bss, not 1 MiB of .rodata in the file */
	size_t chunk;

	while (len > 0) {
		chunk = len > ZERO_CHUNK ? ZERO_CHUNK : len;
		if (lnx_fd_write(fd, off, zero, chunk) == -1)
			return -1;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

int
lnx_fd_size(int fd, uint64_t *size)
{
	return ioctl(fd, BLKGETSIZE64, size);
}

int
lnx_fd_sync(int fd)
{
	return fdatasync(fd);
}

/* Durable: the data is on the disk when this returns 0. */
int
lnx_fd_close(int fd)
{
	int saved;

	if (fdatasync(fd) == -1) {
		saved = errno;
		log_warn("sync");
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}
