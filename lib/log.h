/* log.c: levels, syslog and stderr; printf-checked. */
#ifndef NAS_LOG_H
#define NAS_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

#define NAS_PRINTF(f, a) __attribute__((format(printf, f, a)))

void	log_init(const char *ident, int to_stderr, int to_syslog);
void	log_set_level(enum log_level);
enum log_level log_get_level(void);
int	log_level_parse(const char *, enum log_level *);
const char *log_level_name(enum log_level);
/* Printable ASCII only: others become \n, \t, \xNN (every message goes through it). */
void	log_escape(const char *in, char *out, size_t len);
void	log_msg(enum log_level, const char *, ...) NAS_PRINTF(2, 3);
void	log_vmsg(enum log_level, const char *, va_list) NAS_PRINTF(2, 0);
void	log_warn(const char *, ...) NAS_PRINTF(1, 2);	/* appends strerror(errno) */
void	log_warnx(const char *, ...) NAS_PRINTF(1, 2);
void	log_info(const char *, ...) NAS_PRINTF(1, 2);
void	log_debug(const char *, ...) NAS_PRINTF(1, 2);
void	fatal(const char *, ...) NAS_PRINTF(1, 2) __attribute__((noreturn));
void	fatalx(const char *, ...) NAS_PRINTF(1, 2) __attribute__((noreturn));

#endif
