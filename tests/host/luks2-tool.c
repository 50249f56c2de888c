/*
 * luks2-tool: cryptd's LUKS2 library driven from the shell, so
 * tests/host/luks2.sh can hold it against cryptsetup on plain files.
 * Passphrases are read from stdin, one a line, never from argv.
 *   luks2-tool [kdf options] format FILE        (stdin: passphrase)
 *   luks2-tool dump FILE
 *   luks2-tool unlock FILE [--key]              (stdin: passphrase)
 *   luks2-tool [kdf options] add FILE           (stdin: old, new)
 *   luks2-tool [kdf options] change FILE        (stdin: old, new)
 *   luks2-tool remove FILE                      (stdin: passphrase)
 *   luks2-tool repair FILE
 * kdf options: --kdf pbkdf2|argon2i|argon2id --iter N --time N
 *   --memory KiB --cpus N --sector N --label L
 * Exit 0 on success, 1 with the library's error on stderr.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secret.h"
#include "cryptd/luks2.h"

static char err[LUKS2_ERRLEN];

static void
die(const char *what)
{
	fprintf(stderr, "luks2-tool: %s: %s\n", what, err);
	exit(1);
}

static struct secret *
read_pass(void)
{
	struct secret *s = secret_new(LUKS2_PASS_MAX + 2);
	int c;

	if (s == NULL)
		exit(2);
	while ((c = getchar()) != EOF && c != '\n')
		if (s->len < LUKS2_PASS_MAX)
			s->buf[s->len++] = (unsigned char)c;
	return s;
}

static int
open_dev(const char *path, struct luks2_io *io, int *fd)
{
	struct stat st;

	if ((*fd = open(path, O_RDWR)) < 0 || fstat(*fd, &st) != 0) {
		perror(path);
		exit(2);
	}
	luks2_io_fd(io, fd, (uint64_t)st.st_size);
	return 0;
}

static void
dump(const struct luks2 *h)
{
	int i;

	printf("version %d\nuuid %s\nlabel %s\ncipher %s\nsector_size %u\n"
	    "data_offset %llu\nseqid %llu\nhdr_size %llu\nrepair %d\n", h->version,
	    h->uuid, h->label, h->cipher, h->sector_size,
	    (unsigned long long)h->data_offset, (unsigned long long)h->seqid,
	    (unsigned long long)h->hdr_size, h->repair);
	for (i = 0; i < LUKS2_KEYSLOTS; i++) {
		const struct luks2_keyslot *k = &h->ks[i];

		if (!k->used)
			continue;
		printf("keyslot %d %s", i, luks2_kdf_name(k->kdf.type));
		if (k->kdf.type == KDF_PBKDF2)
			printf(" %s %u\n", k->kdf.hash, k->kdf.iterations);
		else
			printf(" time %u memory %u cpus %u\n", k->kdf.time,
			    k->kdf.memory, k->kdf.cpus);
	}
}

int
main(int argc, char **argv)
{
	struct luks2_format_opts o = { .kdf = { .type = KDF_PBKDF2,
	    .iterations = 1000, .time = 4, .memory = 32, .cpus = 1 } };
	struct secret *p1 = NULL, *p2 = NULL, *vk = NULL;
	struct luks2_io io;
	struct luks2 *h;
	const char *cmd, *path;
	int i, fd, slot;

	for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		const char *v = argv[i + 1];

		if (strcmp(argv[i], "--kdf") == 0)
			o.kdf.type = strcmp(v, "pbkdf2") == 0 ? KDF_PBKDF2 :
			    strcmp(v, "argon2i") == 0 ? KDF_ARGON2I : KDF_ARGON2ID;
		else if (strcmp(argv[i], "--iter") == 0)
			o.kdf.iterations = (uint32_t)atol(v);
		else if (strcmp(argv[i], "--time") == 0)
			o.kdf.time = (uint32_t)atol(v);
		else if (strcmp(argv[i], "--memory") == 0)
			o.kdf.memory = (uint32_t)atol(v);
		else if (strcmp(argv[i], "--cpus") == 0)
			o.kdf.cpus = (uint32_t)atol(v);
		else if (strcmp(argv[i], "--sector") == 0)
			o.sector_size = (uint32_t)atol(v);
		else if (strcmp(argv[i], "--label") == 0)
			o.label = v;
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: luks2-tool [options] format|dump|unlock|add|"
		    "change|remove|repair FILE\n");
		return 2;
	}
	cmd = argv[i];
	path = argv[i + 1];
	open_dev(path, &io, &fd);
	if (strcmp(cmd, "format") == 0) {
		p1 = read_pass();
		if (luks2_format(&io, &o, p1->buf, p1->len, &h, &vk, err,
		    sizeof(err)) != 0)
			die("format");
		printf("%s\n", h->uuid);
		goto done;
	}
	if (luks2_load(&io, &h, err, sizeof(err)) != 0)
		die("load");
	if (strcmp(cmd, "dump") == 0) {
		dump(h);
	} else if (strcmp(cmd, "repair") == 0) {
		if (luks2_store(&io, h, err, sizeof(err)) != 0)
			die("store");
	} else if (strcmp(cmd, "unlock") == 0) {
		p1 = read_pass();
		if (luks2_unlock(&io, h, p1->buf, p1->len, -1, &vk, &slot, err,
		    sizeof(err)) != 0)
			die("unlock");
		printf("slot %d\n", slot);
		if (argc > i + 2 && strcmp(argv[i + 2], "--key") == 0) {
			for (i = 0; i < (int)vk->len; i++)
				printf("%02x", vk->buf[i]);
			printf("\n");
		}
	} else if (strcmp(cmd, "add") == 0 || strcmp(cmd, "change") == 0) {
		p1 = read_pass();
		p2 = read_pass();
		if (luks2_unlock(&io, h, p1->buf, p1->len, -1, &vk, &slot, err,
		    sizeof(err)) != 0)
			die("unlock");
		if (luks2_keyslot_add(&io, h, vk, p2->buf, p2->len, &o.kdf, &i,
		    err, sizeof(err)) != 0 || luks2_store(&io, h, err, sizeof(err)) != 0)
			die("add");
		printf("slot %d\n", i);
		if (strcmp(cmd, "change") == 0) {
			uint64_t off = h->ks[slot].area_offset, size = h->ks[slot].area_size;

			if (luks2_keyslot_drop(h, slot, err, sizeof(err)) != 0 ||
			    luks2_store(&io, h, err, sizeof(err)) != 0 ||
			    luks2_area_wipe(&io, off, size, err, sizeof(err)) != 0)
				die("change");
		}
	} else if (strcmp(cmd, "remove") == 0) {
		uint64_t off, size;

		p1 = read_pass();
		if (luks2_unlock(&io, h, p1->buf, p1->len, -1, &vk, &slot, err,
		    sizeof(err)) != 0)
			die("unlock");
		off = h->ks[slot].area_offset;
		size = h->ks[slot].area_size;
		if (luks2_keyslot_drop(h, slot, err, sizeof(err)) != 0 ||
		    luks2_store(&io, h, err, sizeof(err)) != 0 ||
		    luks2_area_wipe(&io, off, size, err, sizeof(err)) != 0)
			die("remove");
	} else {
		fprintf(stderr, "luks2-tool: unknown command %s\n", cmd);
		return 2;
	}
done:
	secret_free(p1);
	secret_free(p2);
	secret_free(vk);
	luks2_free(h);
	close(fd);
	return 0;
}
