/*
 * Building an engine of a kind: see engine_build.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_build.h"
#include "engine_msr.h"
#include "engine_perf.h"
#include "uncore_unit.h"
#include "xeon_uncore.h"

/*
 * The msr engine's clock for enabled/running times: the machine's
 * monotonic nanoseconds (hw_now_ns: the simulator's own time under
 * --simulate), which make the wall time of the throttled seconds.
 */
static int64_t machine_ns(void *arg)
{
	return hw_now_ns(arg);
}

/* For the perf engine: CPU online state and boxes, from a copy of the machine. */
static int cpu_online(void *arg, int cpu)
{
	const struct engine_machine *m = arg;

	return hw_cpu_online(m->hw, cpu);
}

/*
 * The box a CPU's uncore PMU events reach: its package's, or its die's on
 * packages of several dies (the server uncore, uncore_unit.h).  The perf
 * engine only compares these numbers.
 */
static int cpu_socket(void *arg, int cpu)
{
	const struct engine_machine *m = arg;

	return uncore_unit_key(m->topo, cpu);
}

int engine_build(enum engine_kind kind, const struct engine_machine *machine,
		 enum engine_policy policy, struct engine *ret_engine, char *err, size_t errlen)
{
	struct engine_machine *copy;

	if (kind == ENGINE_MSR) {
		struct engine_msr_config cfg = {
			.hw = machine->hw, .policy = policy, .now_ns = machine_ns,
			.now_arg = machine->hw,
		};

		return engine_msr_new(&cfg, ret_engine);
	}
	if (kind != ENGINE_PERF)
		return -EINVAL;
	copy = malloc(sizeof(*copy));
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*copy = *machine;
	return engine_perf_new(&(struct engine_perf_config){
		.ps = machine->hw->perf, .cpu_online = cpu_online, .cpu_socket = cpu_socket,
		.arg = copy, .free_arg = free,
	}, ret_engine, err, errlen);
}

int engine_probe(enum engine_kind kind, struct perf_sys *ps, enum engine_pmu pmu, char *reason,
		 size_t reasonlen)
{
	if (kind == ENGINE_MSR)
		return 0;
	if (kind != ENGINE_PERF)
		return -EINVAL;
	if (!ps) {
		snprintf(reason, reasonlen, "this backend has no perf interface");
		return -ENODEV;
	}
	return engine_perf_probe(ps, pmu, reason, reasonlen);
}

bool engine_msr_reaches(const struct cpu_info *info, enum engine_pmu pmu)
{
	const struct xeon_uncore *xu;

	switch (pmu) {
	case ENGINE_PMU_CORE:
		/* The msr engine programs Intel's core PMU only (hardware-amd.md §3). */
		return !info || !info->fac.lacks_intel_core_pmu;
	case ENGINE_PMU_NHM_UNCORE:
		return true;
	case ENGINE_PMU_PCU:
		xu = info ? xeon_uncore_find(info->family, info->model) : NULL;
		return xu && xu->pcu_msr;
	default:
		return false;
	}
}
