/*
 * kdf-job.c: the methods that derive a key (crypt.format, crypt.open,
 * key.*, crypt.benchmark) run their KDF on a worker thread and answer
 * later (rpc_call_later, Decision 94): one unlock, seconds of CPU and up
 * to a GiB, no longer holds volume.status, events or another device.
 *
 * A job owns all it works on (the device's descriptor, its header, the
 * secrets), so nothing is shared with the loop while it runs. One job
 * per device at a time: two guesses on one device cannot pass the
 * back-off check together, and no header is rewritten under a job
 * (kdf_job_busy, asked by every method that writes a header).
 */
#include <stdlib.h>
#include <string.h>

#include "cryptd.h"
#include "log.h"
#include "rpc.h"
#include "secret.h"

static struct kdf_job *jobs;		/* with a device, in flight */
static void (*hook)(void);

void
kdf_job_set_hook(void (*fn)(void))
{
	hook = fn;
}

struct kdf_job *
kdf_job_new(void)
{
	struct kdf_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->d.fd = -1;
	j->want_slot = j->slot = j->nslot = -1;
	return j;
}

void
kdf_job_free(struct kdf_job *j)
{
	struct kdf_job **pp;

	for (pp = &jobs; *pp; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
	secret_free(j->pass);
	secret_free(j->new_pass);
	secret_free(j->vk);
	luks2_free(j->h);
	cdev_close(&j->d);
	free(j);
}

int
kdf_job_busy(const struct cdev *d)
{
	for (const struct kdf_job *j = jobs; j; j = j->next)
		if (j->d.id_dev == d->id_dev && j->d.id_ino == d->id_ino)
			return 1;
	return 0;
}

static void
job_work(void *arg)
{
	struct kdf_job *j = arg;

	if (hook)
		hook();
	j->work(j);
}

static void
job_done(struct rpc_call *call, void *arg, int ran)
{
	struct kdf_job *j = arg;

	if (ran)
		j->done(call, j);
	kdf_job_free(j);
}

/* Hands the call over; on a refusal the call is answered and j freed. */
void
kdf_job_start(struct rpc_call *call, struct kdf_job *j, void (*work)(struct kdf_job *),
    void (*done)(struct rpc_call *, struct kdf_job *))
{
	j->work = work;
	j->done = done;
	if (j->d.fd >= 0) {
		j->next = jobs;
		jobs = j;
	}
	if (rpc_call_later(call, job_work, job_done, j) != 0)
		kdf_job_free(j);
}
