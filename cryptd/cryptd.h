/* cryptd: encrypted volumes through dm-crypt with LUKS2 headers. */
#ifndef CRYPTD_H
#define CRYPTD_H

#include "daemon.h"
#include "feature.h"

/* api.c */
extern const struct nas_daemon cryptd_daemon;
extern const struct nas_feature cryptd_features[];

#endif
