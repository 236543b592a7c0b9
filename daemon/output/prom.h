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

/*
 * The Prometheus text of every registered family with samples in s, in
 * registration order, then declaration order (samples in the order added),
 * without the daemon's own.  A family two collectors declare is written
 * once; families that share a name (one per label set) are one family:
 * HELP and TYPE of the first, then the samples of each.
 */
void prom_write_declared(const struct snapshot *s, struct strbuf *out);

#endif
