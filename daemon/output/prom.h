/*
 * Snapshot to Prometheus text exposition format 0.0.4 (SPEC §5).  Pure.
 */
#ifndef UNCORED_PROM_H
#define UNCORED_PROM_H

#include "snapshot.h"
#include "strbuf.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Append the exposition of s to out: every family with HELP and TYPE,
 * families in a fixed order, absent hardware omitted.  Returns 0, or
 * -ENOMEM when out failed.
 */
int prom_write(const struct snapshot *s, struct strbuf *out);

#endif
