/*
 * raidd-mdsb-set: gives one member's md v1.2 superblock another level,
 * layout, chunk and events count, every other byte as md wrote it, for
 * board scenarios that need a state only a power cut inside md's
 * superblock writes leaves (raidd-add-takeover-cut, Decision 136).
 * Test image only.
 *
 *   raidd-mdsb-set DEV LEVEL LAYOUT CHUNK EVENTS
 *   raidd-mdsb-set DEV        prints "level L layout N chunk C events E"
 *
 * The level, layout and chunk go through raidd's own mdsb_set_level; the
 * events are set here (raidd never writes them).  Read and written with
 * O_DIRECT: md writes its superblocks past the page cache, and a stale
 * cached block written back would undo md's last write.
 * Exit status 0 on success, 1 when it failed, 2 on usage errors.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/raid/md_p.h>

#include "raidd/mdsb.h"

#define SB_AT	(MDSB_SUPER_OFFSET * 512ULL)

static int
number(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' ? 0 : -1;
}

/* events, and the checksum over the fixed part and max_dev roles. */
static void
set_events(uint8_t *b, uint64_t events)
{
	uint32_t max_dev, csum;
	uint64_t le = htole64(events);

	memcpy(b + offsetof(struct mdp_superblock_1, events), &le, sizeof(le));
	memcpy(&max_dev, b + offsetof(struct mdp_superblock_1, max_dev), sizeof(max_dev));
	csum = htole32(mdsb_csum(b, sizeof(struct mdp_superblock_1) + 2 * (size_t)le32toh(max_dev)));
	memcpy(b + offsetof(struct mdp_superblock_1, sb_csum), &csum, sizeof(csum));
}

static int
fail(const char *dev, const char *what, const char *why)
{
	fprintf(stderr, "raidd-mdsb-set: %s: %s: %s\n", dev, what, why);
	return 1;
}

int
main(int argc, char **argv)
{
	char err[MDSB_ERRLEN];
	int64_t level, layout, chunk, events;
	struct mdsb was, now;
	const char *dev;
	uint8_t *b;
	int fd;

	if (argc != 2 && (argc != 6 || number(argv[2], &level) || number(argv[3], &layout) ||
	    number(argv[4], &chunk) || number(argv[5], &events) || layout < 0 ||
	    chunk < 0 || events < 0)) {
		fprintf(stderr, "usage: raidd-mdsb-set DEV [LEVEL LAYOUT CHUNK EVENTS]\n");
		return 2;
	}
	dev = argv[1];
	if (posix_memalign((void **)&b, MDSB_BLOCK, MDSB_BLOCK) != 0)
		return fail(dev, "memory", strerror(ENOMEM));
	if ((fd = open(dev, (argc == 2 ? O_RDONLY : O_RDWR) | O_DIRECT)) == -1)
		return fail(dev, "open", strerror(errno));
	if (pread(fd, b, MDSB_BLOCK, SB_AT) != MDSB_BLOCK)
		return fail(dev, "read", strerror(errno));
	if (mdsb_decode(b, MDSB_BLOCK, MDSB_SUPER_OFFSET, &was, err, sizeof(err)) == -1)
		return fail(dev, "superblock", err);
	if (argc == 2) {
		printf("level %d layout %u chunk %u events %" PRIu64 "\n", (int)was.level,
		    was.layout, was.chunksize, was.events);
		return 0;
	}
	if (mdsb_set_level(b, MDSB_BLOCK, MDSB_SUPER_OFFSET, (int32_t)level,
	    (uint32_t)layout, (uint32_t)chunk, err, sizeof(err)) == -1)
		return fail(dev, "level", err);
	set_events(b, (uint64_t)events);
	if (mdsb_decode(b, MDSB_BLOCK, MDSB_SUPER_OFFSET, &now, err, sizeof(err)) == -1)
		return fail(dev, "rewritten superblock", err);
	if (pwrite(fd, b, MDSB_BLOCK, SB_AT) != MDSB_BLOCK || fsync(fd) == -1)
		return fail(dev, "write", strerror(errno));
	close(fd);
	printf("%s: level %d layout %u chunk %u events %" PRIu64 " -> level %d layout %u "
	    "chunk %u events %" PRIu64 "\n", dev, (int)was.level, was.layout, was.chunksize,
	    was.events, (int)now.level, now.layout, now.chunksize, now.events);
	return 0;
}
