/*
 * Two snapshots to the human table of `uncored --once` (SPEC §9): per
 * socket a header, the lines of the collectors' declared families (event
 * deltas, kernel throttle counts, ...), then per core the temperature,
 * throttling state, kernel throttle count and IPC, then the throttle
 * episodes that ended in the interval or are still running.  Pure.
 */
#ifndef UNCORED_TABLE_H
#define UNCORED_TABLE_H

#include <stdbool.h>

#include "snapshot.h"
#include "strbuf.h"

/*
 * Append the table for the interval from first to second (same shape).
 * Returns 0 or -ENOMEM.
 */
int table_write(const struct snapshot *first, const struct snapshot *second, struct strbuf *out);

/*
 * The same, each socket opening with a summary: its hottest core, and per
 * throttle family (DRAM throttled, PROCHOT, frequency limited) the series
 * that counted the most in the interval ("worst channel 2, slot 1") or
 * "0 s in all N series".  Unless verbose, a throttle family series that
 * counted nothing has no line of its own and a core row is left out
 * unless the core is throttling, has PROCHOT or was throttled by the
 * kernel (a line counts them): what `--once` prints, `--verbose` asking
 * for everything.  table_write() is the verbose one.  0 or -ENOMEM.
 */
int table_write_brief(const struct snapshot *first, const struct snapshot *second, bool verbose,
		      struct strbuf *out);

#endif
