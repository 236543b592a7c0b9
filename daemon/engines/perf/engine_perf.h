/*
 * The perf engine behind engine.h: the kernel arbitrates the counters
 * (hardware-linux.md §3).  Each engine group is one perf_group (one
 * perf_event_open group, one read(2) per sample) on:
 *   - ENGINE_PMU_CORE: the "cpu" PMU of CPU target.  Every event is built
 *     through the PMU's sysfs formats as a raw config (event, umask, edge,
 *     inv, cmask); 0x3C umask 0x01 (reference cycles), unless gp_only, is
 *     the PMU's "ref-cycles" alias, which only fixed counter 2 counts.  The
 *     kernel places 0xC0 and 0x3C on their fixed counters when free (the
 *     NMI watchdog usually holds fixed counter 1, so cycles lands on a GP
 *     counter) and gp_only cannot be honoured for them;
 *   - ENGINE_PMU_NHM_UNCORE: the "uncore" PMU (Nehalem/Westmere), opened
 *     on the CPU of its cpumask in target's package; ENGINE_UNCORE_CLOCK
 *     is the PMU's "clockticks" alias (the fixed counter).  occ_reset has
 *     no perf format and is refused;
 *   - ENGINE_PMU_PCU: the instance ENGINE_TARGET_BOX(target) of the PCU
 *     PMU, in ascending order of the kernel's names: "uncore_pcu" (one
 *     box per package), "uncore_pcu_N" (several: Granite Rapids), or
 *     "uncore_type_4[_N]" (a kernel without the platform's table;
 *     hardware-linux.md §6); engine_n_boxes says how many.
 *     ENGINE_PMU_IMC: "uncore_imc_N" for N = ENGINE_TARGET_BOX(target)
 *     (hardware-linux.md §4.1), or "uncore_type_6_N" where the kernel has
 *     no uncore_imc_N (discovery table without the platform's, §6).  Each
 *     opened on the CPU of its cpumask in the target CPU's package.  An
 *     event is "event=code" with ",umask=" only when umask is not 0 (the
 *     SNB-EP PCU has no umask field), cmask as "thresh", edge and inv;
 *     code 0xff on an iMC is the fixed (DCLK) counter, as the kernel
 *     reads config 0xff.  A box PMU that is absent fails open with
 *     -ENODEV and a sentence naming what is missing.
 * A group the kernel refuses as too large (EINVAL at open, §3.1) is split
 * in halves until each part opens; each part is then read separately (one
 * read per part), and open's err does not change.
 *
 * Readings: delta is the scaled estimate Δvalue × Δenabled / Δrunning,
 * raw_delta the counted Δvalue, enabled_ns/running_ns the interval's
 * times (engine_reading_ratio() is the multiplexing ratio).  An event
 * multiplexed out for a whole interval reads ENGINE_WAITING with delta 0;
 * a group in error state (read returns end of file, -ENODATA) is enabled
 * again and reads ENGINE_FAILED for that interval.  state is never
 * ENGINE_YIELDED and conflicts and resets stay 0: the kernel shares
 * counters by rotation, nobody's counter is taken.
 *
 * Hotplug: a core group whose CPU went offline (its read fails, or its
 * enabled time stops while the CPU reports offline) is closed and read
 * returns -ENXIO; once the CPU is online again it is reopened at the next
 * read, and totals carry on from where they stopped.  The kernel migrates
 * uncore events itself.
 *
 * close() gives nothing back to restore (the kernel owns the registers);
 * ret_failed is 0.
 */
#ifndef UNCORED_ENGINE_PERF_H
#define UNCORED_ENGINE_PERF_H

#include <stddef.h>

#include "engine.h"
#include "perf_sys.h"

struct engine_perf_config {
	struct perf_sys *ps;                 /* borrowed; outlives the engine */
	/*
	 * 1 when cpu is online, 0 when it is offline, a negative errno when
	 * unknown (hw_cpu_online() fits).  NULL: an offline CPU is found by a
	 * reopen failing with ENODEV.
	 */
	int (*cpu_online)(void *arg, int cpu);
	/*
	 * The package of cpu, or a negative errno.  NULL: uncore events are
	 * opened on target itself (the kernel moves them to the box's CPU).
	 */
	int (*cpu_socket)(void *arg, int cpu);
	void *arg;
	/* Called with arg when the engine is destroyed or engine_perf_new fails; may be NULL. */
	void (*free_arg)(void *arg);
};

/*
 * Build a perf engine into *ret_engine.  The PMUs are loaded from
 * perf_sys_root(ps) now (before any privilege drop); a PMU that is absent
 * is not an error here: opening a group on it fails with -ENODEV and the
 * reason of engine_perf_probe().  Returns 0, -ENOMEM, or the negative
 * errno of a PMU directory that exists but does not parse (err names
 * the file).
 */
int engine_perf_new(const struct engine_perf_config *config, struct engine *ret_engine, char *err,
		    size_t errlen);

/*
 * Whether this process can count on pmu through the kernel under
 * perf_sys_root(ps): the PMU is in sysfs, and a trial open of one of its
 * events (opened and closed at once) is not refused.  0, or -ENODEV with
 * the operator's sentence in reason (e.g. "this kernel has no core PMU
 * (...)"), or -EACCES/-EPERM when the kernel refuses this process every
 * open (reason names kernel.perf_event_paranoid above 2 without
 * CAP_SYS_ADMIN where that is the cause): the caller falls back to the msr
 * engine.  Another negative errno when the PMU's files cannot be read.
 */
int engine_perf_probe(struct perf_sys *ps, enum engine_pmu pmu, char *reason, size_t reasonlen);

#endif
