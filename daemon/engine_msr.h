/*
 * The msr engine behind engine.h: counters programmed directly through
 * struct hw (the Linux msr driver or the simulator), and the only place
 * the ownership rule of hardware-linux.md §1.5 lives:
 *   - a GP counter is free when its own select's EN bit is clear (a stale
 *     select perf left, EN clear and INT set, is reusable); a fixed counter
 *     when the enable bits [4i+1:4i] of its nibble are clear; the uncore
 *     fixed counter when 0x395 bit 0 is clear;
 *   - the global controls (0x38F, 0x391) are shared gates: our bit is set
 *     by read-modify-write and never cleared while others may use it; a
 *     set bit is never proof of an owner;
 *   - every read re-reads the counter's own select or nibble: a changed one
 *     means another agent took the counter (a conflict); with the yield
 *     policy the event is forgotten and taken back once the counter is free
 *     again, with reclaim our select is written back at once;
 *   - our own gate bit found clear is the kernel's transient disable: the
 *     counter kept its count, nothing is written and no conflict counted;
 *     found clear at two reads in a row, the bit is set again.
 * Every register change goes through the pmu ledger (pmu.h), so close and
 * the crash journal restore them byte for byte.  Counters are never
 * written: each is counted from the value found when claimed (wrap-safe,
 * counter.h), so a counter keeps the value it would have had.
 */
#ifndef UNCORED_ENGINE_MSR_H
#define UNCORED_ENGINE_MSR_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "hw.h"

struct engine_msr_config {
	struct hw *hw;                       /* borrowed; outlives the engine */
	enum engine_policy policy;
	/* Monotonic nanoseconds, for enabled/running times; tests pass simulated time. */
	int64_t (*now_ns)(void *arg);
	void *now_arg;
};

/* Build an msr engine into *ret_engine.  Returns 0 or -ENOMEM. */
int engine_msr_new(const struct engine_msr_config *config, struct engine *ret_engine);

#endif
