/*
 * What the core-PMC collector exposes beyond struct collector_ops: its
 * per-sample cost, for the benchmark and the documentation.
 */
#ifndef UNCORED_COL_CORE_H
#define UNCORED_COL_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "collector.h"
#include "conf.h"

/*
 * The [core] section (uncored.conf(5)), kept in the collector's block of
 * struct conf (collector_settings()); the tests write it there directly.
 */
struct core_settings {
	bool enabled;
	bool default_events;
	enum conf_conflict_policy on_conflict;
	int per;                          /* enum core_per of col_core.c: cpu, core, socket */
	enum conf_engine engine;          /* used from start-up on; a reload keeps the running one */
	int n_events;
	struct conf_event events[CONF_MAX_EVENTS];
};

/* Events per second the wrap-safety check assumes a counter can see. */
#define CORE_MAX_EVENT_RATE_HZ 6e9

/*
 * MSR reads one sample of the core collector c costs in the steady state
 * (every CPU online, no conflict), summed over CPUs: per open CPU, 1 read
 * of IA32_PERF_GLOBAL_CTRL and 2 per counted event (its counter and its
 * own event select or IA32_FIXED_CTR_CTRL, the msr engine's ownership
 * check).  A conflict adds the reads of a new claim; an offline CPU costs
 * its one failing read.  Returns 0 when c is not started, and on the perf
 * engine, which reads no MSR (one group read per CPU instead).
 */
uint64_t core_collector_reads_per_sample(const struct collector *c);

#endif
