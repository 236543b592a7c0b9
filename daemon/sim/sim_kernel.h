/*
 * The kernel's side of the simulated PMU (internal to daemon/sim/), as
 * hardware-linux.md §1 describes it: the state Linux leaves at boot, and
 * the scenario's perf users (perf-core, perf-uncore and global-disable
 * rules) as register writes at the times their windows open and close.
 * It holds no register: every change goes through the write callback, at
 * the time of the change, as another agent's write would.
 */
#ifndef UNCORED_SIM_KERNEL_H
#define UNCORED_SIM_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_model.h"
#include "sim_scenario.h"

struct sim_kernel;

/* Write value to (cpu, msr) at simulated time t; 0 or a negative errno. */
typedef int (*sim_kernel_write_fn)(void *ctx, int cpu, uint32_t msr, uint64_t value, int64_t t);

/*
 * Check a perf rule of scn against model m (the PMU it names exists, the
 * counter is one of the model's, the value is one perf can program).
 * Other rules pass.  Returns 0, or -EINVAL with "FILE:LINE: key: ..." in err.
 */
int sim_kernel_check(const struct sim_model *m, const struct sim_scenario *scn,
		     const struct sim_rule *r, char *err, size_t errlen);

/* The kernel of a machine m running scn.  Returns 0 or -ENOMEM. */
int sim_kernel_new(const struct sim_model *m, const struct sim_scenario *scn,
		   sim_kernel_write_fn write, void *ctx, struct sim_kernel **ret_kernel);

/*
 * Write the state a Linux host leaves at time 0 (§1.1-§1.3): on every CPU
 * of an Intel model 0x38F = intel_ctrl, 0x38D = 0xB0 (the NMI watchdog's
 * cycles on fixed counter 1) and a stale select 0x13003C on GP counter 0;
 * on the NHM/WSM uncore 0x391 = 0x1000000FF; on every CPU of an AMD model
 * HWCR.IRPERF_EN, PERF_CTL0 = 0x530076 (the watchdog's cycles) and, on
 * PerfMonV2 parts, GlobalCtl = 0x3F (hardware-amd.md §7).
 */
void sim_kernel_boot(struct sim_kernel *k);

/* Time of the next change a perf rule makes; SIM_FOREVER when there is none. */
int64_t sim_kernel_next(const struct sim_kernel *k);

/* Make the change due at sim_kernel_next(). */
void sim_kernel_step(struct sim_kernel *k);

/*
 * Perf's own counting events on cpu (sim_perf.c) change at t, as
 * x86_pmu_disable, x86_pmu_del/x86_pmu_add and x86_pmu_enable do
 * (hardware-linux.md §1.1, §1.2): 0x38F = 0; for every GP counter n in
 * gp_mask, gp_sel[n] != 0 adds an event (PMC restarted from 0, select =
 * gp_sel[n], EN included) and 0 removes one (the select is left stale, EN
 * clear); 0x38D = fixed_ctrl, written whole (Linux 6.12 writes its
 * cache cpuc->fixed_ctrl_val, wiping any other agent's fields:
 * hardware-linux.md §6), unless it is SIM_KERNEL_KEEP, the fixed
 * counters in fixed_added restarted from 0; 0x38F = intel_ctrl, through
 * the NHM/WSM workaround when something was added.  On AMD models the
 * same changes to PERF_CTL/PERF_CTR n, between GlobalCtl = 0 and 0x3F on
 * PerfMonV2 parts (fixed_ctrl and fixed_added unused).
 */
#define SIM_KERNEL_KEEP UINT64_MAX
void sim_kernel_core_events(struct sim_kernel *k, int cpu, uint32_t gp_mask, const uint64_t *gp_sel,
			    uint64_t fixed_ctrl, uint32_t fixed_added, int64_t t);

/*
 * perf's cache of cpu's IA32_FIXED_CTR_CTRL (cpuc->fixed_ctrl_val): the
 * fields of the fixed counters perf uses (the NMI watchdog's included),
 * never another agent's.  What the next fixed-counter change writes whole.
 */
uint64_t sim_kernel_fixed_ctrl(const struct sim_kernel *k, int cpu);

/*
 * Whether sim_perf schedules cpu's core PMU (it has CPU-wide groups
 * there).  Then a scenario perf-core rule only records what its task event
 * wants (sim_kernel_scn_select) and sim_perf places it after its own
 * groups, as the kernel schedules task flexible groups after CPU flexible
 * ones; otherwise the rule programs its own counter directly.
 */
typedef bool (*sim_kernel_managed_fn)(void *ctx, int cpu);
void sim_kernel_set_manager(struct sim_kernel *k, sim_kernel_managed_fn fn, void *ctx);

/* The select (EN clear) a scenario's perf user wants on GP counter n of cpu now; 0: none. */
uint64_t sim_kernel_scn_select(const struct sim_kernel *k, int cpu, int n);

/* The GP counters of cpu perf programs now (its own events and the scenario's), as a mask. */
uint32_t sim_kernel_gp_perf(const struct sim_kernel *k, int cpu);

/* Whether the change due at sim_kernel_next() is a perf-core rule's (one of perf's events). */
bool sim_kernel_next_is_core_event(const struct sim_kernel *k);

void sim_kernel_free(struct sim_kernel *k);

#endif
