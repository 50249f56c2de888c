/* The seam netd runs on, and the kernel's words about the last failure. */
#include <stdio.h>

#include "system.h"

const struct net_ops *net;

static char errmsg[256];

const char *
net_errmsg(void)
{
	return errmsg;
}

void
net_set_errmsg(const char *s)
{
	snprintf(errmsg, sizeof(errmsg), "%s", s);
}
