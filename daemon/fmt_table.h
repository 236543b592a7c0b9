/*
 * Two snapshots to the human table of `uncored --once` (SPEC §9): per
 * socket and core the temperature, throttling state, uncore event deltas,
 * kernel throttle counts and IPC, then the throttle episodes that ended in
 * the interval or are still running.  Pure.
 */
#ifndef UNCORED_FMT_TABLE_H
#define UNCORED_FMT_TABLE_H

#include "snapshot.h"
#include "strbuf.h"

/*
 * Append the table for the interval from first to second (same shape).
 * Returns 0 or -ENOMEM.
 */
int fmt_table_write(const struct snapshot *first, const struct snapshot *second, struct strbuf *out);

#endif
