/*
 * Building an engine of a kind for the machine: the one place that knows
 * both implementations (engine.h imports neither).  A caller says which
 * engine and on what machine; each engine builds its own configuration
 * from that (the msr engine its register layouts and counter choice from
 * the CPU, the perf engine its PMUs from sysfs).
 */
#ifndef UNCORED_ENGINE_BUILD_H
#define UNCORED_ENGINE_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu.h"
#include "engine.h"
#include "hw.h"

/* The machine an engine counts on. */
struct engine_machine {
	struct hw *hw;                    /* borrowed, outlives the engine: registers, time,
					     perf_event_open (hw->perf), which CPUs are online */
	const struct cpu_topology *topo;  /* borrowed, outlives the engine: the package or die
					     (uncore_unit.h) whose box a CPU's uncore events reach */
};

/*
 * Build the engine of kind (ENGINE_MSR or ENGINE_PERF) for machine into
 * *ret_engine; policy is what the msr engine does when another agent takes
 * a counter (the perf engine never meets one).  Returns 0, -ENOMEM, -EINVAL
 * for ENGINE_NONE, or the perf engine's error (a PMU directory that does
 * not parse) with its sentence in err.
 */
int engine_build(enum engine_kind kind, const struct engine_machine *machine,
		 enum engine_policy policy, struct engine *ret_engine, char *err, size_t errlen);

/*
 * Whether the msr engine can count pmu on a CPU like info: Intel's core
 * PMU (not AMD's) and the Nehalem/Westmere uncore yes, the server PCU where the generation
 * has it at fixed MSR addresses (xeon_uncore.h), the iMC never.
 */
bool engine_msr_reaches(const struct cpu_info *info, enum engine_pmu pmu);

/*
 * Whether an engine of kind could count pmu through the kernel behind ps
 * (hw->perf; NULL: the backend has no perf interface), asked before one is
 * built, to choose between them.  ENGINE_PERF: the PMU is in sysfs and a
 * trial open of one of its events is not refused (engine_perf.h,
 * engine_perf_probe); 0, or a negative errno with the operator's sentence
 * in reason: -ENODEV when the kernel or the backend lacks it, -EACCES or
 * -EPERM when the kernel refuses this process.  ENGINE_MSR asks nothing of
 * the kernel: 0 (whether it reaches pmu on a CPU is engine_msr_reaches).
 * -EINVAL for ENGINE_NONE.
 */
int engine_probe(enum engine_kind kind, struct perf_sys *ps, enum engine_pmu pmu, char *reason,
		 size_t reasonlen);

#endif
