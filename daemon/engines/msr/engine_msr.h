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
 *   - every read re-reads the counter's own select or nibble: another
 *     agent's enabled one means it took the counter (a conflict); with the
 *     yield policy the event is forgotten and taken back once a counter is
 *     free again, with reclaim our select is written back at once.  One
 *     with EN clear means it was cleared (perf's Nehalem/Westmere
 *     workaround, §1.2, perf's disable over ours, or, for a fixed
 *     counter, Linux 6.12 writing IA32_FIXED_CTR_CTRL whole from its
 *     cache whenever perf's own fixed-counter use changes, which wipes
 *     our field: hardware-linux.md §6): a reset, not a conflict; the
 *     interval's counts are lost (the reading waits that once, with no
 *     value, never 0) and the counter, free again, is re-claimed at once,
 *     so the engine never fights perf.  The Nehalem/Westmere uncore keeps
 *     the count (the kernel clears its select, never writes the counter);
 *   - a gate bit the kernel had set when we claimed, found clear, is the
 *     kernel's transient disable: nothing is written and no conflict is
 *     counted (its next enable sets every bit again; the counts of the
 *     window are lost to every user).  A gate bit we set ourselves is set
 *     again when found clear, unless others' gate bits are set too: then
 *     the kernel manages the gate (we claimed inside one of its disable
 *     windows) and the bit is left to it, also at restore.
 * Every register it programs is listed in one table, msr_layout.h, from
 * which crash recovery takes its rules too.  The server PCU box
 * (ENGINE_PMU_PCU, hardware-linux.md §4.1; the table's box at the
 * generation's addresses of xeon_uncore.h) follows the same rules for its
 * four selects and counters; it has no gate register, and the engine never
 * writes its BOX_CTL (freeze, reset) or FILTER.  The iMC is out of the msr
 * driver's reach (ENGINE_PMU_IMC fails with -ENODEV).  Every register
 * change goes through the register ledger (ledger.h), so close and
 * the crash journal restore them byte for byte.  Counters are not written
 * while counting: each is counted from the value found when claimed
 * (wrap-safe, counter.h); close writes back the value found.  A plain
 * IA32_PMCx write sign-extends bit 31, so a core GP counter goes back
 * through IA32_A_PMCx where full-width writes exist (IA32_PERF_CAPABILITIES
 * bit 13); without them a value sign extension cannot reproduce is left as
 * counted rather than corrupted.
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
