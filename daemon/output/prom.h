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

#define OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/*
 * The same in the OpenMetrics text format, for a client that asks for it:
 * counter families named without "_total", "# EOF" at the end, and each
 * series of a throttle family (METRIC_SIGNAL_THROTTLE_SECONDS) with the
 * id of the newest episode it took part in as an exemplar,
 * "# {episode_id=\"ID\"} SECONDS" (the episode's seconds so far), where
 * the bounded episode list still holds one (a channel's episode for each
 * of its slot, level and cause series, episode_of_series()); /api/v1/episodes?id=ID
 * returns it.  Returns 0, or -ENOMEM when out failed.
 */
int prom_write_openmetrics(const struct snapshot *s, struct strbuf *out);

#endif
