/*
 * Two snapshots to the human table of `uncored --once` (SPEC §9): per
 * socket a header, the lines of the collectors' declared families (event
 * deltas, kernel throttle counts, ...), then per core the temperature,
 * throttling state, kernel throttle count and IPC, then the throttle
 * episodes that ended in the interval or are still running.  Pure.
 */
#ifndef UNCORED_TABLE_H
#define UNCORED_TABLE_H

#include "snapshot.h"
#include "strbuf.h"

/*
 * Append the table for the interval from first to second (same shape).
 * Returns 0 or -ENOMEM.
 */
int table_write(const struct snapshot *first, const struct snapshot *second, struct strbuf *out);

#endif
