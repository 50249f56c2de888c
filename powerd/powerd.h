/* powerd: power, temperature and disk standby telemetry. */
#ifndef POWERD_H
#define POWERD_H

#include "daemon.h"
#include "feature.h"

/* api.c */
extern const struct nas_daemon powerd_daemon;
extern const struct nas_feature powerd_features[];

#endif
