/* metrics.c (this header is prom.h: lib has metrics.h): cryptd.prom. */
#ifndef CRYPTD_PROM_H
#define CRYPTD_PROM_H

/* Where cryptd.prom goes ([cryptd] metrics_dir); "" writes nothing. */
void	cryptd_metrics_set_dir(const char *dir);
/* Writes <dir>/cryptd.prom from the mappings open now; a failure is logged once. */
void	cryptd_metrics_write(void);

#endif
