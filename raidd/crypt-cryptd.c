/*
 * crypt-cryptd.c: raidd asks cryptd over cryptd's socket (Decision 62),
 * without blocking the loop: cryptd's KDF takes a second or more and
 * raidd keeps answering meanwhile.  One connection per request, so a
 * restarted cryptd costs nothing.  The passphrase is copied into the
 * request only: json-c's string and the client's send buffer are wiped
 * when freed or sent (Decisions 14, 62), and nothing here logs it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon.h"
#include "log.h"
#include "rpc.h"
#include "secret.h"
#include "crypt.h"

/* cryptd calibrates its KDF at the first format (time_ms) and runs it twice. */
#define CRYPTD_TIMEOUT_MS	(300 * 1000)

struct req {
	struct rpc_client	*c;
	const struct secret	*pass;		/* NULL: keyfile */
	char			 dev[256], name[64], keyfile[300];
	const char		*method;	/* crypt.open or crypt.resize */
	int			 then_open;	/* format done: open next */
	int			 slot;		/* crypt.resize: this keyslot only, or -1 */
	int			*slot_out;	/* crypt.resize: the keyslot that opened */
	crypt_done_cb		 cb;
	void			*arg;
};

static struct json_object *
secret_string(const struct secret *s)
{
	return json_object_new_string_len((const char *)s->buf, (int)s->len);
}

static void answer(struct json_object *, const struct rpc_client_error *, void *);

static int
send_open(struct req *r)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "device", json_object_new_string(r->dev));
	json_object_object_add(p, "name", json_object_new_string(r->name));
	if (r->pass)
		json_object_object_add(p, "passphrase", secret_string(r->pass));
	else
		json_object_object_add(p, "keyfile", json_object_new_string(r->keyfile));
	if (r->slot >= 0)
		json_object_object_add(p, "keyslot", json_object_new_int(r->slot));
	return rpc_client_call_ev(r->c, r->method ? r->method : "crypt.open", p,
	    CRYPTD_TIMEOUT_MS, answer, r);
}

static void
finish(struct req *r, int code, const char *msg)
{
	crypt_done_cb cb = r->cb;
	void *arg = r->arg;

	rpc_client_close(r->c);
	free(r);
	cb(code, msg, arg);
}

static void
answer(struct json_object *result, const struct rpc_client_error *err, void *arg)
{
	struct req *r = arg;
	struct json_object *slot;
	char msg[600];

	if (err != NULL) {
		if (err->code == RPC_CLIENT_IO || err->code == RPC_CLIENT_UNREACHABLE) {
			snprintf(msg, sizeof(msg), "cryptd: %s", err->message);
			finish(r, NAS_ERR_FAILED, msg);
		} else
			finish(r, err->code, err->message);
		return;
	}
	if (r->then_open) {
		r->then_open = 0;
		if (send_open(r) == -1) {
			snprintf(msg, sizeof(msg), "cryptd: %s", strerror(errno));
			finish(r, NAS_ERR_FAILED, msg);
		}
		return;
	}
	if (r->slot_out && json_object_object_get_ex(result, "keyslot", &slot) &&
	    json_object_is_type(slot, json_type_int))
		*r->slot_out = json_object_get_int(slot);
	finish(r, 0, "");
}

static struct req *
connect_cryptd(const char *dev, const char *name, const struct secret *pass,
    crypt_done_cb cb, void *arg)
{
	struct rpc_client_error err = { 0 };
	struct req *r;
	char path[300];

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/cryptd.sock", nas_sockdir());
	if ((r->c = rpc_client_open_ev(nas_loop(), path, &err)) == NULL) {
		log_warnx("cryptd: %s", err.message);
		rpc_client_error_clear(&err);
		free(r);
		errno = ECONNREFUSED;
		return NULL;
	}
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->pass = pass;
	r->slot = -1;
	r->cb = cb;
	r->arg = arg;
	return r;
}

static int
cryptd_format_open(const char *dev, const char *name, const char *label,
    const struct secret *pass, crypt_done_cb cb, void *arg)
{
	struct json_object *p;
	struct req *r;

	if ((r = connect_cryptd(dev, name, pass, cb, arg)) == NULL)
		return -1;
	r->then_open = 1;
	p = json_object_new_object();
	json_object_object_add(p, "device", json_object_new_string(dev));
	json_object_object_add(p, "passphrase", secret_string(pass));
	json_object_object_add(p, "label", json_object_new_string(label));
	/* raidd erased these disks and made the array a moment ago: an old
	   header in its data area is a previous volume's, not one in use. */
	json_object_object_add(p, "force", json_object_new_boolean(1));
	if (rpc_client_call_ev(r->c, "crypt.format", p, CRYPTD_TIMEOUT_MS, answer, r) == -1) {
		rpc_client_close(r->c);
		free(r);
		return -1;
	}
	return 0;
}

/*
 * method (crypt.open, crypt.resize) with the passphrase, or the key file
 * path when pass is NULL; crypt.resize of keyslot slot (-1 any), the one
 * that opened into *slot_out.
 */
static int
call_with(const char *method, const char *dev, const char *name, const struct secret *pass,
    const char *path, int slot, int *slot_out, crypt_done_cb cb, void *arg)
{
	struct req *r;

	if ((r = connect_cryptd(dev, name, pass, cb, arg)) == NULL)
		return -1;
	r->method = method;
	r->slot = slot;
	r->slot_out = slot_out;
	snprintf(r->keyfile, sizeof(r->keyfile), "%s", path ? path : "");
	if (send_open(r) == -1) {
		rpc_client_close(r->c);
		free(r);
		return -1;
	}
	return 0;
}

static int
cryptd_open(const char *dev, const char *name, const struct secret *pass,
    crypt_done_cb cb, void *arg)
{
	return call_with("crypt.open", dev, name, pass, NULL, -1, NULL, cb, arg);
}

static int
cryptd_open_keyfile(const char *dev, const char *name, const char *path,
    crypt_done_cb cb, void *arg)
{
	return call_with("crypt.open", dev, name, NULL, path, -1, NULL, cb, arg);
}

/* The same table loaded again with the segment's size now (cryptd's Decision 113). */
static int
cryptd_resize(const char *dev, const char *name, const struct secret *pass,
    const char *path, int slot, int *slot_out, crypt_done_cb cb, void *arg)
{
	return call_with("crypt.resize", dev, name, pass, pass ? NULL : path, slot, slot_out,
	    cb, arg);
}

const struct crypt_ops crypt_cryptd = {
	.name = "cryptd",
	.format_open = cryptd_format_open,
	.open = cryptd_open,
	.open_keyfile = cryptd_open_keyfile,
	.resize = cryptd_resize,
};
