/* metrics.c (this header is prom.h: lib has metrics.h): raidd's node_exporter textfile (docs/metrics.md). */
#ifndef RAIDD_PROM_H
#define RAIDD_PROM_H

/* Where raidd.prom goes ([raidd] metrics_dir); "" writes nothing. */
void	raidd_metrics_set_dir(const char *dir);
/* Writes <dir>/raidd.prom from what volume.list shows now; a failure is logged once. */
void	raidd_metrics_write(void);

#endif
