/*
 * Unit tests of cryptd's methods on the simulated keyring and
 * device-mapper (cryptd/system-sim.c), devices being plain files: format,
 * open and close with the key through the keyring (never in the table,
 * unlinked after the load), the rate limit on a fake clock, key
 * add/change/remove, header backup/restore, erase, key files, repair of
 * a damaged primary, the refusals, and cryptd.prom.
 */
#include <sys/inotify.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit-util.h"
#include "rpc.h"
#include "keyfile.h"
#include "secret.h"
#include "cryptd/cryptd.h"
#include "cryptd/prom.h"
#include "cryptd/system.h"

static const struct rpc_peer root = { .uid = 0, .gid = 0 };
static struct rpc_server *srv;
static char *dir, dev[512], p[2048];
static double fake_now;

static double
fake_clock(void)
{
	return fake_now;
}

static void
setup(void)
{
	struct kdf_conf k = { KDF_ARGON2ID, 32, 10, 1 };
	int fd;

	sys = &sys_sim;
	sim_reset();
	kdf_configure(&k);
	fake_now = 1000;
	ratelimit_set_clock(fake_clock);
	dir = unit_tmpdir();
	crypt_set_file_dirs(dir);
	snprintf(dev, sizeof(dev), "%s/disk", dir);
	fd = open(dev, O_RDWR | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (LUKS2_DATA_OFFSET + (4 << 20))), 0);
	close(fd);
	srv = rpc_server_new("cryptd", "test");
	rpc_server_add_methods(srv, cryptd_crypt_methods);
}

static void
teardown(void)
{
	rpc_server_free(srv);
	unit_rmtree(dir);
	free(dir);
}

/* The error code of method with params printed from fmt (0: a result). */
static int
code(const char *method, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int
code(const char *method, const char *fmt, ...)
{
	struct json_object *a;
	va_list ap;
	int c;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	a = unit_call(srv, &root, method, p);
	c = unit_err_code(a);
	json_object_put(a);
	return c;
}

static struct json_object *
result(const char *method, const char *params)
{
	struct json_object *a = unit_call(srv, &root, method, params), *r;

	ck_assert_msg(unit_err_code(a) == 0, "%s: %s", method, unit_err_msg(a));
	json_object_object_get_ex(a, "result", &r);
	json_object_get(r);
	json_object_put(a);
	return r;
}

static void
format(const char *pass)
{
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"%s\"}",
	    dev, pass), 0);
}

static int
opens(const char *name, const char *pass)
{
	int c = code("crypt.open", "{\"device\":\"%s\",\"name\":\"%s\",\"passphrase\":\"%s\"}",
	    dev, name, pass);

	if (c == 0)
		ck_assert_int_eq(code("crypt.close", "{\"name\":\"%s\"}", name), 0);
	fake_now += 100;	/* past any back-off */
	return c;
}

/* The sectors of mapping name as its table says. */
static unsigned long long
map_sectors(const char *name)
{
	char table[1024];
	unsigned long long n = 0;

	ck_assert_int_eq(sys->map_table(name, table, sizeof(table)), 0);
	ck_assert_int_eq(sscanf(table, "0 %llu crypt", &n), 1);
	return n;
}

/* The first n bytes of from written over to's. */
static void
copy_bytes(const char *from, const char *to, size_t n)
{
	char *buf = malloc(n);
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY);

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	ck_assert_int_eq(pread(in, buf, n, 0), (ssize_t)n);
	ck_assert_int_eq(pwrite(out, buf, n, 0), (ssize_t)n);
	close(in);
	close(out);
	free(buf);
}

static void
grow_file(const char *path, off_t size)
{
	ck_assert_int_eq(truncate(path, size), 0);
}

static char grow_to[600];

/* On the KDF worker: the device grows while the passphrase is derived. */
static void
grow_during_kdf(void)
{
	if (grow_to[0])
		grow_file(grow_to, LUKS2_DATA_OFFSET + (12 << 20));
}

/*
 * The device's size is read again after the KDF (it may change while the
 * key is derived), and a table cryptd did not make (options it would
 * drop) is not reloaded.
 */
START_TEST(resize_reads_the_size_after_the_kdf)
{
	char q[600], uuid[160], params[700];

	format("pw");
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", dev), 0);
	grow_file(dev, LUKS2_DATA_OFFSET + (8 << 20));
	snprintf(grow_to, sizeof(grow_to), "%s", dev);
	kdf_job_set_hook(grow_during_kdf);
	snprintf(q, sizeof(q), "{\"device\":\"%s\",\"name\":\"g\",\"passphrase\":\"pw\"}", dev);
	json_object_put(result("crypt.resize", q));
	kdf_job_set_hook(NULL);
	grow_to[0] = '\0';
	ck_assert_uint_eq(map_sectors("g"), (12 << 20) / 512);
	/* The same mapping with an option cryptd never sets: left alone. */
	ck_assert_int_eq(sys->map_uuid("g", uuid, sizeof(uuid)), 0);
	ck_assert_int_eq(sys->map_table("g", params, sizeof(params)), 0);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"g\"}"), 0);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"h\","
	    "\"passphrase\":\"pw\"}", dev), 0);
	ck_assert_int_eq(sys->map_table("h", params, sizeof(params)), 0);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"h\"}"), 0);
	fake_now += 100;
	{
		char *p2 = strstr(params, " crypt ") + 7, opt[760];
		long id;
		struct secret *k = secret_new(64);

		k->len = 64;
		snprintf(uuid, sizeof(uuid), "%s", strstr(params, "CRYPT-"));
		uuid[strcspn(uuid, " ")] = '\0';
		ck_assert_int_eq(sys->key_add(uuid, k, &id), 0);
		snprintf(opt, sizeof(opt), "%.*s 2 allow_discards sector_size:4096",
		    (int)(strstr(p2, " 1 sector_size") - p2), p2);
		ck_assert_int_eq(sys->map_create("h", uuid, (8 << 20) / 512, opt), 0);
		sys->key_unlink(id);
		secret_free(k);
	}
	grow_file(dev, LUKS2_DATA_OFFSET + (16 << 20));
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"h\","
	    "\"passphrase\":\"pw\"}", dev), NAS_ERR_NOT_FOUND);
	ck_assert_uint_eq(map_sectors("h"), (8 << 20) / 512);
}
END_TEST

/*
 * crypt.resize: the open mapping grows to the device's size with the
 * right passphrase only, never shrinks, and is refused for a mapping of
 * another device; the key leaves the keyring each time.
 */
START_TEST(resize_grows_its_own_mapping)
{
	char other[600];
	unsigned long long was;
	struct json_object *r, *v;
	int fd;

	format("pw");
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", dev), 0);
	was = map_sectors("g");
	ck_assert_uint_eq(was, (4 << 20) / 512);
	/* Unchanged device: nothing to do, an answer all the same. */
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", dev), 0);
	fake_now += 100;
	grow_file(dev, LUKS2_DATA_OFFSET + (8 << 20) + 4000);
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"nope\"}", dev), NAS_ERR_DENIED);
	ck_assert_uint_eq(map_sectors("g"), was);
	fake_now += 100;
	snprintf(p, sizeof(p), "{\"device\":\"%s\",\"name\":\"g\",\"passphrase\":\"pw\"}",
	    dev);
	r = result("crypt.resize", p);
	json_object_object_get_ex(r, "size_bytes", &v);
	/* Whole 4096-byte sectors: the 4000 bytes over stay out. */
	ck_assert_int_eq(json_object_get_int64(v), 8 << 20);
	json_object_object_get_ex(r, "was_bytes", &v);
	ck_assert_int_eq(json_object_get_int64(v), 4 << 20);
	json_object_put(r);
	ck_assert_uint_eq(map_sectors("g"), (8 << 20) / 512);
	ck_assert_int_eq(sim_keys_linked(), 0);
	/* Never shrunk. */
	grow_file(dev, LUKS2_DATA_OFFSET + (6 << 20));
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", dev), NAS_ERR_FAILED);
	ck_assert_uint_eq(map_sectors("g"), (8 << 20) / 512);
	/* Another LUKS device with the same passphrase: not its mapping. */
	snprintf(other, sizeof(other), "%s/other", dir);
	fd = open(other, O_RDWR | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, LUKS2_DATA_OFFSET + (16 << 20)), 0);
	close(fd);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"pw\"}",
	    other), 0);
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", other), NAS_ERR_NOT_FOUND);
	/* Its clone (the same header, so the same uuid): the table names dev. */
	copy_bytes(dev, other, LUKS2_DATA_OFFSET);
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", other), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"none\","
	    "\"passphrase\":\"pw\"}", dev), NAS_ERR_NOT_FOUND);
	ck_assert_uint_eq(map_sectors("g"), (8 << 20) / 512);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"g\"}"), 0);
}
END_TEST

/*
 * crypt.resize says which keyslot opened; asked with that keyslot after
 * key.change dropped it, it refuses untried, and the back-off counts
 * nothing: the new passphrase is taken at once (Decision 123).
 */
START_TEST(resize_keyslot_gone_counts_no_failure)
{
	struct json_object *r, *v;

	format("pw");
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\"}", dev), 0);
	snprintf(p, sizeof(p), "{\"device\":\"%s\",\"name\":\"g\",\"passphrase\":\"pw\"}",
	    dev);
	r = result("crypt.resize", p);
	ck_assert(json_object_object_get_ex(r, "keyslot", &v));
	ck_assert_int_eq(json_object_get_int(v), 0);
	json_object_put(r);
	ck_assert_int_eq(code("key.change", "{\"device\":\"%s\",\"passphrase\":\"pw\","
	    "\"new_passphrase\":\"pw2\"}", dev), 0);
	ck_assert_int_eq(code("crypt.resize", "{\"device\":\"%s\",\"name\":\"g\","
	    "\"passphrase\":\"pw\",\"keyslot\":0}", dev), NAS_ERR_DENIED);
	/* No clock moved: a counted failure would make this wait. */
	snprintf(p, sizeof(p), "{\"device\":\"%s\",\"name\":\"g\",\"passphrase\":\"pw2\","
	    "\"keyslot\":1}", dev);
	r = result("crypt.resize", p);
	ck_assert(json_object_object_get_ex(r, "keyslot", &v));
	ck_assert_int_eq(json_object_get_int(v), 1);
	json_object_put(r);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"g\"}"), 0);
}
END_TEST

START_TEST(format_open_close)
{
	struct json_object *r, *v;
	char table[1024], q[600];
	const char *s;
	size_t i, run;

	format("correct horse");
	snprintf(q, sizeof(q), "{\"device\":\"%s\"}", dev);
	r = result("crypt.show", q);
	json_object_object_get_ex(r, "version", &v);
	ck_assert_int_eq(json_object_get_int(v), 2);
	json_object_object_get_ex(r, "sector_size", &v);
	ck_assert_int_eq(json_object_get_int(v), 4096);
	json_object_object_get_ex(r, "key_bits", &v);
	ck_assert_int_eq(json_object_get_int(v), 512);
	json_object_object_get_ex(r, "keyslots", &v);
	ck_assert_int_eq(json_object_array_length(v), 1);
	json_object_put(r);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"vol1\","
	    "\"passphrase\":\"correct horse\"}", dev), 0);
	/* The key went through the keyring and left it. */
	ck_assert_int_eq(sim_keys_linked(), 0);
	ck_assert_int_eq(sys->map_table("vol1", table, sizeof(table)), 0);
	ck_assert_ptr_nonnull(strstr(table, " :64:logon:cryptd:CRYPT-LUKS2-"));
	ck_assert_ptr_nonnull(strstr(table, " 1 sector_size:4096"));
	for (s = table, run = 0, i = 0; s[i]; i++) {	/* no key in hex (the uuid is 32 digits) */
		run = strchr("0123456789abcdef", s[i]) ? run + 1 : 0;
		ck_assert_uint_lt(run, 40);
	}
	r = result("crypt.show", q);
	json_object_object_get_ex(r, "open", &v);
	ck_assert_str_eq(json_object_get_string(v), "vol1");
	json_object_put(r);
	r = result("crypt.list", NULL);
	json_object_object_get_ex(r, "mappings", &v);
	ck_assert_int_eq(json_object_array_length(v), 1);
	json_object_put(r);
	/* A name is taken once. */
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"vol1\","
	    "\"passphrase\":\"correct horse\"}", dev), NAS_ERR_EXISTS);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"vol1\"}"), 0);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"vol1\"}"), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(sim_keys_linked(), 0);
}
END_TEST

START_TEST(refusals)
{
	format("pw one");
	/* An existing LUKS volume needs force. */
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\"}",
	    dev), NAS_ERR_REFUSED);
	ck_assert_int_eq(opens("vol1", "pw one"), 0);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\","
	    "\"key_bits\":384}", dev), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\","
	    "\"kdf\":\"scrypt\"}", dev), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"a b\","
	    "\"passphrase\":\"pw one\"}", dev), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\"}", dev),
	    RPC_INVALID_PARAMS);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"pw one\",\"keyfile\":\"/etc/passwd\"}", dev), RPC_INVALID_PARAMS);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s/none\",\"name\":\"v\","
	    "\"passphrase\":\"pw one\"}", dir), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(code("crypt.show", "{\"device\":\"%s\"}", dir), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(code("crypt.erase", "{\"device\":\"%s\",\"confirm\":\"x\"}", dev),
	    NAS_ERR_REFUSED);
	ck_assert_int_eq(opens("vol1", "pw one"), 0);
}
END_TEST

START_TEST(rate_limit)
{
	format("right");
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"wrong\"}", dev), NAS_ERR_DENIED);
	/* At once, even the right one waits: the back-off is the device's. */
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"right\"}", dev), NAS_ERR_BUSY);
	ck_assert_int_eq(code("key.add", "{\"device\":\"%s\",\"passphrase\":\"right\","
	    "\"new_passphrase\":\"x\"}", dev), NAS_ERR_BUSY);
	fake_now += 1.5;
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"wrong\"}", dev), NAS_ERR_DENIED);
	fake_now += 1.5;	/* the second failure waits 2 s */
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"right\"}", dev), NAS_ERR_BUSY);
	fake_now += 1;
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"right\"}", dev), 0);
	/* Success clears the count: a wrong one now waits 1 s again. */
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"v\"}"), 0);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"v\","
	    "\"passphrase\":\"wrong\"}", dev), NAS_ERR_DENIED);
	fake_now += 1.1;
	ck_assert_int_eq(opens("v", "right"), 0);
}
END_TEST

START_TEST(keys)
{
	format("first");
	ck_assert_int_eq(code("key.add", "{\"device\":\"%s\",\"passphrase\":\"first\","
	    "\"new_passphrase\":\"second\"}", dev), 0);
	ck_assert_int_eq(opens("v", "second"), 0);
	ck_assert_int_eq(opens("v", "first"), 0);
	ck_assert_int_eq(code("key.change", "{\"device\":\"%s\",\"passphrase\":\"first\","
	    "\"new_passphrase\":\"third\"}", dev), 0);
	ck_assert_int_eq(opens("v", "first"), NAS_ERR_DENIED);
	ck_assert_int_eq(opens("v", "third"), 0);
	ck_assert_int_eq(code("key.remove", "{\"device\":\"%s\",\"passphrase\":\"second\"}",
	    dev), 0);
	fake_now += 100;
	ck_assert_int_eq(opens("v", "second"), NAS_ERR_DENIED);
	/* The last key only with force. */
	ck_assert_int_eq(code("key.remove", "{\"device\":\"%s\",\"passphrase\":\"third\"}",
	    dev), NAS_ERR_REFUSED);
	ck_assert_int_eq(opens("v", "third"), 0);
	ck_assert_int_eq(code("key.list", "{\"device\":\"%s\"}", dev), 0);
}
END_TEST

START_TEST(keyfile)
{
	char *kf = unit_write(dir, "key", "\x01\x02 a key file\n\n");

	ck_assert_int_eq(chmod(kf, 0600), 0);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"keyfile\":\"%s\"}",
	    dev, kf), 0);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"k\","
	    "\"keyfile\":\"%s\"}", dev, kf), 0);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"k\"}"), 0);
	ck_assert_int_eq(code("key.add", "{\"device\":\"%s\",\"keyfile\":\"%s\","
	    "\"new_passphrase\":\"typed\"}", dev, kf), 0);
	ck_assert_int_eq(opens("k", "typed"), 0);
	/* Not a regular file: refused. */
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"k\","
	    "\"keyfile\":\"%s\"}", dev, dir), NAS_ERR_FAILED);
	free(kf);
}
END_TEST

/* crypt.open with key file path: refused, and the message says why. */
static void
keyfile_refused(const char *path, const char *why)
{
	struct json_object *a;

	snprintf(p, sizeof(p), "{\"device\":\"%s\",\"name\":\"k\",\"keyfile\":\"%s\"}",
	    dev, path);
	a = unit_call(srv, &root, "crypt.open", p);
	ck_assert_int_eq(unit_err_code(a), NAS_ERR_FAILED);
	ck_assert_msg(strstr(unit_err_msg(a), why) != NULL, "%s: %s", path, unit_err_msg(a));
	json_object_put(a);
}

/*
 * cryptd is root: a key file is read only under file_dirs, through no
 * symlink, and only when nobody but root could have read or swapped it
 * (Decision 129).  Before, any root-readable path was tried as a key
 * (/etc/shadow's bytes), and a symlinked directory was followed.  None
 * of the refusals tries a key, so none costs a back-off step.
 */
START_TEST(keyfile_only_roots_under_file_dirs)
{
	char *sub = NULL, *kf, *out, path[700], big[KEYFILE_MAX + 2];
	char *outside = unit_tmpdir();

	ck_assert_int_ne(asprintf(&sub, "%s/keys", dir), -1);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	kf = unit_write(sub, "k.key", "the key\n");
	ck_assert_int_eq(chmod(kf, 0600), 0);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"keyfile\":\"%s\"}",
	    dev, kf), 0);
	/* The same bytes outside file_dirs. */
	out = unit_write(outside, "k.key", "the key\n");
	ck_assert_int_eq(chmod(out, 0600), 0);
	keyfile_refused(out, "not under");
	/* A symlink to a directory, or to the file, inside file_dirs. */
	snprintf(path, sizeof(path), "%s/ln", dir);
	ck_assert_int_eq(symlink(sub, path), 0);
	snprintf(path, sizeof(path), "%s/ln/k.key", dir);
	keyfile_refused(path, "symlink");
	snprintf(path, sizeof(path), "%s/file-ln", dir);
	ck_assert_int_eq(symlink(kf, path), 0);
	keyfile_refused(path, "symlink");
	snprintf(path, sizeof(path), "%s/./keys/k.key", dir);
	keyfile_refused(path, "not a plain absolute path");
	snprintf(path, sizeof(path), "%s/keys/", dir);
	keyfile_refused(path, "not a plain absolute path");
	/* Readable by the group. */
	ck_assert_int_eq(chmod(kf, 0640), 0);
	keyfile_refused(kf, "chmod 600");
	ck_assert_int_eq(chmod(kf, 0600), 0);
	/* One byte over the limit. */
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	free(unit_write(sub, "big.key", big));
	snprintf(path, sizeof(path), "%s/big.key", sub);
	ck_assert_int_eq(chmod(path, 0600), 0);
	keyfile_refused(path, "8192 bytes");
	/* The key itself opens at once: no refusal cost a back-off step;
	 * file_dirs written with a trailing slash names the same place. */
	snprintf(path, sizeof(path), "/nowhere %s/", dir);
	crypt_set_file_dirs(path);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"k\","
	    "\"keyfile\":\"%s\"}", dev, kf), 0);
	unit_rmtree(outside);
	free(outside);
	free(out);
	free(kf);
	free(sub);
}
END_TEST

/*
 * One volume under two mappings, each mounted, would be corrupted (dm
 * lets a second table onto a device it holds): the second open is
 * refused before any passphrase is tried.
 */
START_TEST(open_twice_refused)
{
	format("pw");
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"c1\","
	    "\"passphrase\":\"pw\"}", dev), 0);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"c2\","
	    "\"passphrase\":\"pw\"}", dev), NAS_ERR_BUSY);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"c2\"}"), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"c1\"}"), 0);
	ck_assert_int_eq(opens("c2", "pw"), 0);
}
END_TEST

/*
 * A LUKS volume cryptd cannot open (LUKS1 in cbc-essiv, both LUKS2
 * copies damaged, a secondary alone) is still somebody's data: format
 * without force refuses it as it refuses one it opens.
 */
START_TEST(format_over_unreadable_luks)
{
	static const char luks1_cbc[] = "LUKS\xba\xbe\0\1aes";
	int fd = open(dev, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, luks1_cbc, sizeof(luks1_cbc), 0), sizeof(luks1_cbc));
	ck_assert_int_eq(pwrite(fd, "cbc-essiv:sha256", 17, 40), 17);
	ck_assert_int_ne(code("crypt.show", "{\"device\":\"%s\"}", dev), 0);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\"}",
	    dev), NAS_ERR_REFUSED);
	/* LUKS2 with both checksums broken; then the secondary alone. */
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\","
	    "\"force\":true}", dev), 0);
	ck_assert_int_eq(pwrite(fd, "garbage", 7, LUKS2_BIN_SIZE + 100), 7);
	ck_assert_int_eq(pwrite(fd, "garbage", 7, LUKS2_HDR_DEFAULT + LUKS2_BIN_SIZE + 100), 7);
	ck_assert_int_ne(code("crypt.show", "{\"device\":\"%s\"}", dev), 0);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\"}",
	    dev), NAS_ERR_REFUSED);
	ck_assert_int_eq(pwrite(fd, "\0\0\0\0\0\0", 6, 0), 6);
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\"}",
	    dev), NAS_ERR_REFUSED);
	close(fd);
	/* Force still does it. */
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"x\","
	    "\"force\":true}", dev), 0);
	ck_assert_int_eq(code("crypt.show", "{\"device\":\"%s\"}", dev), 0);
}
END_TEST

/*
 * A FIFO (or a character device) put where a device or key file is
 * named is never opened for real: the open of a FIFO would block cryptd
 * for every client, and a device's open runs its driver.  The read
 * group's crypt.show may name any path.
 */
START_TEST(fifo_never_opened)
{
	char fifo[600];

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(code("crypt.show", "{\"device\":\"%s\"}", fifo),
	    NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(code("key.list", "{\"device\":\"%s\"}", fifo),
	    NAS_ERR_NOT_FOUND);
	format("pw");
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"%s\",\"name\":\"k\","
	    "\"keyfile\":\"%s\"}", dev, fifo), NAS_ERR_FAILED);
	ck_assert_int_eq(code("crypt.open", "{\"device\":\"/dev/null\",\"name\":\"k\","
	    "\"passphrase\":\"pw\"}"), NAS_ERR_NOT_FOUND);
	/* header.restore's file too: its open hung cryptd (review of Decision 129). */
	ck_assert_int_eq(code("header.restore", "{\"device\":\"%s\",\"file\":\"%s\","
	    "\"confirm\":\"%s\"}", dev, fifo, dev), NAS_ERR_NOT_FOUND);
	ck_assert_int_eq(opens("k", "pw"), 0);
}
END_TEST

START_TEST(backup_restore_erase)
{
	char file[600], link[600];

	format("old");
	snprintf(file, sizeof(file), "%s/hdr", dir);
	ck_assert_int_eq(code("header.backup", "{\"device\":\"%s\",\"file\":\"%s\"}",
	    dev, file), 0);
	/* Never over an existing file, nor outside file_dirs, nor through a symlink. */
	ck_assert_int_eq(code("header.backup", "{\"device\":\"%s\",\"file\":\"%s\"}",
	    dev, file), NAS_ERR_FAILED);
	ck_assert_int_eq(code("header.backup", "{\"device\":\"%s\",\"file\":\"%s/../x\"}",
	    dev, dir), NAS_ERR_FAILED);
	ck_assert_int_eq(code("header.backup", "{\"device\":\"%s\",\"file\":\"/tmp/x%d\"}",
	    dev, (int)getpid()), NAS_ERR_FAILED);
	snprintf(link, sizeof(link), "%s/ln", dir);
	ck_assert_int_eq(symlink("/tmp", link), 0);
	ck_assert_int_eq(code("header.backup", "{\"device\":\"%s\",\"file\":\"%s/x\"}",
	    dev, link), NAS_ERR_FAILED);
	ck_assert_int_eq(code("key.change", "{\"device\":\"%s\",\"passphrase\":\"old\","
	    "\"new_passphrase\":\"new\"}", dev), 0);
	ck_assert_int_eq(opens("v", "old"), NAS_ERR_DENIED);
	ck_assert_int_eq(code("header.restore", "{\"device\":\"%s\",\"file\":\"%s\","
	    "\"confirm\":\"nope\"}", dev, file), NAS_ERR_REFUSED);
	ck_assert_int_eq(code("header.restore", "{\"device\":\"%s\",\"file\":\"%s\","
	    "\"confirm\":\"%s\"}", dev, dev, dev), NAS_ERR_INVALID);
	/* A backup others may write could be theirs: refused, nothing changed. */
	ck_assert_int_eq(chmod(file, 0620), 0);
	ck_assert_int_eq(code("header.restore", "{\"device\":\"%s\",\"file\":\"%s\","
	    "\"confirm\":\"%s\"}", dev, file, dev), NAS_ERR_REFUSED);
	ck_assert_int_eq(opens("v", "old"), NAS_ERR_DENIED);
	ck_assert_int_eq(chmod(file, 0600), 0);
	ck_assert_int_eq(code("header.restore", "{\"device\":\"%s\",\"file\":\"%s\","
	    "\"confirm\":\"%s\"}", dev, file, dev), 0);
	/* The backup's keys are back, the newer ones gone. */
	ck_assert_int_eq(opens("v", "old"), 0);
	ck_assert_int_eq(opens("v", "new"), NAS_ERR_DENIED);
	/* Never over another volume: its data would be lost. */
	ck_assert_int_eq(code("crypt.format", "{\"device\":\"%s\",\"passphrase\":\"other\","
	    "\"force\":true}", dev), 0);
	ck_assert_int_eq(code("header.restore", "{\"device\":\"%s\",\"file\":\"%s\","
	    "\"confirm\":\"%s\"}", dev, file, dev), NAS_ERR_INVALID);
	ck_assert_int_eq(opens("v", "other"), 0);
	ck_assert_int_eq(code("crypt.erase", "{\"device\":\"%s\",\"confirm\":\"%s\"}",
	    dev, dev), 0);
	ck_assert_int_eq(opens("v", "old"), NAS_ERR_DENIED);
}
END_TEST

/* header.backup opens the device read only: inotify sees no close after a write open. */
START_TEST(backup_read_only)
{
	char file[600], buf[4096];
	int in, wd, nowrite = 0;
	ssize_t n;

	format("pw");
	ck_assert_int_ge(in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), 0);
	ck_assert_int_ge(wd = inotify_add_watch(in, dev, IN_CLOSE_WRITE | IN_CLOSE_NOWRITE), 0);
	snprintf(file, sizeof(file), "%s/hdr", dir);
	ck_assert_int_eq(code("header.backup", "{\"device\":\"%s\",\"file\":\"%s\"}",
	    dev, file), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (char *q = buf; q < buf + n; q += sizeof(struct inotify_event) +
		    ((struct inotify_event *)q)->len) {
			const struct inotify_event *e = (const struct inotify_event *)q;

			ck_assert_msg(!(e->mask & IN_CLOSE_WRITE), "the device was opened to write");
			nowrite += (e->mask & IN_CLOSE_NOWRITE) != 0;
		}
	}
	ck_assert_int_gt(nowrite, 0);
	close(in);
}
END_TEST

START_TEST(damaged_primary)
{
	struct json_object *r, *v;
	char q[600];
	int fd;

	format("pw");
	fd = open(dev, O_RDWR);
	ck_assert_int_eq(pwrite(fd, "garbage", 7, 4200), 7);
	close(fd);
	snprintf(q, sizeof(q), "{\"device\":\"%s\"}", dev);
	r = result("crypt.show", q);
	json_object_object_get_ex(r, "header_repair_needed", &v);
	ck_assert(json_object_get_boolean(v));
	json_object_put(r);
	ck_assert_int_eq(opens("v", "pw"), 0);
	r = result("crypt.show", q);
	json_object_object_get_ex(r, "header_repair_needed", &v);
	ck_assert(!json_object_get_boolean(v));
	json_object_put(r);
}
END_TEST

START_TEST(benchmark)
{
	struct json_object *r = result("crypt.benchmark", "{\"kdf\":\"argon2id\"}"), *k, *v;

	json_object_object_get_ex(r, "kdf", &k);
	json_object_object_get_ex(k, "memory", &v);
	ck_assert_int_le(json_object_get_int(v), 32);	/* the cap holds */
	json_object_object_get_ex(k, "time", &v);
	ck_assert_int_ge(json_object_get_int(v), 4);
	json_object_put(r);
}
END_TEST

/* cryptd.prom now, into buf (NUL-terminated). */
static const char *
prom(char *buf, size_t len)
{
	char path[600];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics/cryptd.prom", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* crypt.open of dev as v1: the path may hold what JSON escapes. */
static int
open_v1(const char *pass)
{
	struct json_object *o = json_object_new_object();
	int c;

	json_object_object_add(o, "device", json_object_new_string(dev));
	json_object_object_add(o, "name", json_object_new_string("v1"));
	json_object_object_add(o, "passphrase", json_object_new_string(pass));
	c = code("crypt.open", "%s", json_object_to_json_string(o));
	json_object_put(o);
	return c;
}

START_TEST(metrics_file)
{
	char mdir[600], want[1200], buf[8192];

	snprintf(mdir, sizeof(mdir), "%s/metrics", dir);
	cryptd_metrics_set_dir(mdir);
	format("correct horse");
	/* A device path that needs escaping: the helper does it. */
	snprintf(want, sizeof(want), "%s", dev);
	snprintf(dev, sizeof(dev), "%s/di\"sk\\", dir);
	ck_assert_int_eq(rename(want, dev), 0);
	cryptd_metrics_write();
	ck_assert_ptr_nonnull(strstr(prom(buf, sizeof(buf)), "\nnas_crypt_mappings_open 0\n"));
	ck_assert_int_eq(open_v1("wrong"), NAS_ERR_DENIED);
	snprintf(want, sizeof(want), "\nnas_crypt_unlock_failures{device=\"%s/di\\\"sk\\\\\"} 1\n", dir);
	ck_assert_msg(strstr(prom(buf, sizeof(buf)), want), "%s", buf);
	fake_now += 100;
	ck_assert_int_eq(open_v1("correct horse"), 0);
	snprintf(want, sizeof(want),
	    "\nnas_crypt_mapping_open{name=\"v1\",device=\"%s/di\\\"sk\\\\\"} 1\n", dir);
	ck_assert_msg(strstr(prom(buf, sizeof(buf)), want), "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "\nnas_crypt_mappings_open 1\n"));
	ck_assert_ptr_null(strstr(buf, "nas_crypt_unlock_failures{"));
	ck_assert_ptr_null(strstr(buf, "logon"));
	ck_assert_ptr_null(strstr(buf, "horse"));
	ck_assert_int_eq(code("crypt.close", "{\"name\":\"v1\"}"), 0);
	ck_assert_ptr_nonnull(strstr(prom(buf, sizeof(buf)), "\nnas_crypt_mappings_open 0\n"));
	ck_assert_ptr_null(strstr(buf, "name=\"v1\""));
	cryptd_metrics_set_dir("");
}
END_TEST

static Suite *
cryptd_suite(void)
{
	Suite *s = suite_create("cryptd");
	TCase *tc = tcase_create("methods");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, format_open_close);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, rate_limit);
	tcase_add_test(tc, keys);
	tcase_add_test(tc, keyfile);
	tcase_add_test(tc, keyfile_only_roots_under_file_dirs);
	tcase_add_test(tc, open_twice_refused);
	tcase_add_test(tc, format_over_unreadable_luks);
	tcase_add_test(tc, fifo_never_opened);
	tcase_add_test(tc, backup_restore_erase);
	tcase_add_test(tc, damaged_primary);
	tcase_add_test(tc, backup_read_only);
	tcase_add_test(tc, benchmark);
	tcase_add_test(tc, metrics_file);
	tcase_add_test(tc, resize_grows_its_own_mapping);
	tcase_add_test(tc, resize_keyslot_gone_counts_no_failure);
	tcase_add_test(tc, resize_reads_the_size_after_the_kdf);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(cryptd_suite());
}
