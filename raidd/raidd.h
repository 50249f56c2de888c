/* raidd: RAID volumes through md and device-mapper. */
#ifndef RAIDD_H
#define RAIDD_H

#include "daemon.h"
#include "feature.h"

/* api.c */
extern const struct nas_daemon raidd_daemon;
extern const struct nas_feature raidd_features[];

#endif
