/* metrics.c (this header is prom.h: lib has metrics.h): netd.prom. */
#ifndef NETD_PROM_H
#define NETD_PROM_H

/* Where netd.prom goes ([netd] metrics_dir); "" writes nothing. */
void	netd_metrics_set_dir(const char *dir);
/* Writes <dir>/netd.prom from the bonds the kernel reports now; a failure is logged once. */
void	netd_metrics_write(void);

#endif
