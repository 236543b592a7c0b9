/*
 * What the core-PMC collector exposes beyond struct collector_ops: its
 * per-sample cost, for the benchmark and the documentation.
 */
#ifndef UNCORED_COL_CORE_H
#define UNCORED_COL_CORE_H

#include <stdint.h>

#include "collector.h"

/* Events per second the wrap-safety check assumes a counter can see. */
#define CORE_MAX_EVENT_RATE_HZ 6e9

/*
 * MSR reads one sample of the core collector c costs in the steady state
 * (every CPU online, no conflict), summed over CPUs.  Per CPU that owns at
 * least one counter: 1 read of IA32_PERF_GLOBAL_CTRL, 1 of
 * IA32_FIXED_CTR_CTRL when it owns a fixed counter, 1 per owned fixed
 * counter, and 2 per owned general-purpose counter (its PERFEVTSEL read
 * back and the counter).  A CPU owning nothing costs 0.  A conflict adds
 * the reads of the reclaim; an offline CPU costs its one failing read.
 * Returns 0 when c is not started.
 */
uint64_t core_collector_reads_per_sample(const struct collector *c);

#endif
