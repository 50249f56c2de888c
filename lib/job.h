/* job.c: long operations the API starts and reports on. */
#ifndef NAS_JOB_H
#define NAS_JOB_H

#include <json-c/json.h>

#include "rpc.h"

enum job_state { JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_CANCELLED };

struct job;
struct job_ops {
	/* Asked to stop; the job later ends with job_cancelled(). */
	void	(*cancel)(struct job *, void *arg);
	/* Frees arg when the job ends. */
	void	(*release)(void *arg);
};

struct job *job_start(const char *kind, const char *target,
	    const struct job_ops *, void *arg);
unsigned job_id(const struct job *);
enum job_state job_state(const struct job *);
void	job_progress(struct job *, double percent, const char *step);
void	job_done(struct job *, struct json_object *result);
/*
 * A result that may carry a secret (a recovery key, a passphrase hint):
 * shown only to root and the admin group in job.status and job.list,
 * never in events or job_describe(); they say "sensitive": true.
 */
void	job_done_sensitive(struct job *, struct json_object *result);
void	job_fail(struct job *, int code, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	job_cancelled(struct job *);
struct job *job_find(unsigned id);
/* The job as the read group may see it. */
struct json_object *job_describe(const struct job *);
int	job_running_count(void);
void	job_reset(void);	/* drops every job; for tests and shutdown */

extern const struct rpc_method job_methods[];

#endif
