/* netd: links, addresses and LACP bonds through rtnetlink. */
#ifndef NETD_H
#define NETD_H

#include "daemon.h"
#include "feature.h"

/* api.c */
extern const struct nas_daemon netd_daemon;
extern const struct nas_feature netd_features[];

#endif
