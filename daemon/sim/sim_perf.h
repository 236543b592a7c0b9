/*
 * The kernel's perf_event subsystem over the simulated machine (internal
 * to daemon/sim/; sim_attach.c exposes it as a struct perf_sys:
 * sim_perf_sys() in sim.h).  It implements perf_event_open(2) semantics for counting
 * CPU-wide events (hardware-linux.md §3.1, §3.2):
 *   - the core PMU "cpu" (type 4, PERF_TYPE_RAW, and the
 *     generic PERF_TYPE_HARDWARE events) per CPU, on NHM/WSM models the
 *     "uncore" PMU per package, and on server models (sim_box.h)
 *     the PCU per package (4 counters; "uncore_pcu", or "uncore_pcu_N"
 *     for each of several PCUs of a die, by the kernel's naming rule)
 *     and "uncore_imc_N" per memory
 *     channel N of each package (4 counters and the fixed DCLK counter,
 *     config 0xff), whose counts come from the machine model
 *     (sim_perf_io.box_count) rather than from registers, while the kernel's
 *     writes to a PCU box that has MSRs (up to Ice Lake-SP) reach them as
 *     uncore_snbep.c makes them: FRZ around each schedule, each select
 *     written with EN on add and back without it on remove;
 *   - groups scheduled all or nothing onto the counters the NMI watchdog
 *     leaves free (it holds fixed counter 1 in the Linux boot state);
 *   - the scenario's perf-core users as task events, placed after the
 *     CPU-wide groups (perf_event_sched_in: CPU flexible before task
 *     flexible): on their own counter when free, else the lowest free GP
 *     counter, else not at all;
 *   - pinned groups (attr.pinned) first, never rotated (a pinned group that
 *     does not fit just waits: the kernel's error state is not modelled),
 *     then flexible groups in list order, scheduling stopping at the first
 *     group that does not fit; while one does not fit the list rotates
 *     every SIM_PERF_MUX_NS and time_running lags time_enabled;
 *   - hotplug: open on an offline CPU fails with ENODEV; a CPU going
 *     offline detaches its events, which stop counting and are never
 *     re-attached (their reads keep the last counts and times);
 *   - registers left as the kernel leaves them: 0x38F = intel_ctrl after
 *     each change, a released GP counter's select stale with EN clear, a
 *     released fixed counter's nibble cleared, the NHM/WSM workaround on
 *     adds (through sim_kernel), the uncore's 0x391 re-enabled.
 * Counts come from the simulated counters themselves, so another agent
 * writing a counter perf uses corrupts perf's count as on a real host.
 *
 * On AMD models (hardware-amd.md §3, §7) the core PMU "cpu" is AMD's: 6 GP
 * counters, no fixed ones, the NMI watchdog holding GP counter 0, the
 * Zen 2/3 or Zen 4+ generic map (ref-cycles ENOENT on Zen 2/3, mapped on
 * PerfMonV2 models), the raw format's fields only; the kernel's writes
 * are AMD's (sim_kernel_core_events).  The msr PMU counts tsc, aperf, mperf
 * and irperf per CPU from the free-running MSRs (a software context: never
 * short of counters, never rotated); amd_df, amd_l3 and amd_umc_N exist in
 * sysfs only: opening their events fails with ENOENT, and any open with
 * cpu < 0 with EINVAL.
 *
 * Simulator's choices where the kernel is more elaborate: events are only
 * CPU-wide (pid -1), no sampling, counters are assigned first-fit (fixed
 * counter first) after a full re-schedule of the PMU, and a detached
 * event reads its last counts and times.
 */
#ifndef UNCORED_SIM_PERF_H
#define UNCORED_SIM_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim_kernel.h"
#include "sim_model.h"

#define SIM_PERF_CPU_TYPE     4                        /* the core PMU registers as PERF_TYPE_RAW */
#define SIM_PERF_UNCORE_TYPE  10                       /* a dynamic type: the simulator's choice */
#define SIM_PERF_PCU_TYPE     11                       /* uncore_pcu[_0]: the simulator's choice */
#define SIM_PERF_PCU_TYPE_N   100                      /* uncore_pcu_N, N >= 1, is type 100 + N */
#define SIM_PERF_IMC_TYPE0    12                       /* uncore_imc_N is type 12 + N: ditto */
/* AMD's dynamic types (the simulator's choice). */
#define SIM_PERF_AMD_DF_TYPE  200                      /* amd_df */
#define SIM_PERF_AMD_L3_TYPE  201                      /* amd_l3 */
#define SIM_PERF_MSR_TYPE     202                      /* msr (aperf, mperf, tsc, irperf) */
#define SIM_PERF_AMD_UMC_TYPE0 210                     /* amd_umc_N is type 210 + N */
#define SIM_PERF_MUX_MS       4                        /* perf_event_mux_interval_ms, HZ=250 */
#define SIM_PERF_MUX_NS       (SIM_PERF_MUX_MS * INT64_C(1000000))

struct sim_perf;

/* The machine as the kernel's perf reaches it, at simulated time t. */
struct sim_perf_io {
	int (*read)(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value, int64_t t);
	int (*write)(void *ctx, int cpu, uint32_t msr, uint64_t value, int64_t t);
	bool (*online)(void *ctx, int cpu, int64_t t);
	/* How many times cpu went offline in [0, t] (scenario windows): each edge detaches. */
	uint64_t (*offline_edges)(void *ctx, int cpu, int64_t t);
	/*
	 * The server uncore boxes (sim_box.h): occurrences of event config of
	 * socket's PCU (imc false, index 0) or memory channel index in [0, t);
	 * -ENOENT when there is no such event.
	 */
	int (*box_count)(void *ctx, bool imc, int socket, int index, uint64_t config, int64_t t,
			 uint64_t *ret);
	/* The PCU box's MSRs (sim_facts.h); NULL where only the discovery table has them. */
	const struct sim_pcu_addr *(*pcu_addr)(void *ctx);
};

/*
 * The perf subsystem of model m; k programs the core PMU, watchdog says
 * whether the NMI watchdog holds fixed counter 1.  0 or -ENOMEM.
 */
int sim_perf_new(const struct sim_model *m, struct sim_kernel *k, bool watchdog,
		 const struct sim_perf_io *io, void *ctx, struct sim_perf **ret_perf);

void sim_perf_free(struct sim_perf *p);

/* Time of the next rotation; SIM_FOREVER when no PMU multiplexes. */
int64_t sim_perf_next(struct sim_perf *p);

/* Rotate the PMUs due at sim_perf_next(). */
void sim_perf_step(struct sim_perf *p);

/*
 * Take every core event off its counter at t (before a scenario perf user
 * changes one), and put them back (after); the kernel re-schedules the
 * same way when an event is added.
 */
void sim_perf_core_sched_out(struct sim_perf *p, int64_t t);
void sim_perf_core_sched_in(struct sim_perf *p, int64_t t);

/* A CPU went offline or came online at t. */
void sim_perf_hotplug(struct sim_perf *p, int cpu, bool online, int64_t t);

/* The system calls, at simulated time t, with the kernel's errno meanings. */
int sim_perf_open(struct sim_perf *p, const struct perf_event_attr *attr, pid_t pid, int cpu,
		  int group_fd, unsigned long flags, int64_t t);
ssize_t sim_perf_read(struct sim_perf *p, int fd, void *buf, size_t len, int64_t t);
int sim_perf_ioctl(struct sim_perf *p, int fd, unsigned long request, unsigned long arg,
		   int64_t t);
int sim_perf_close(struct sim_perf *p, int fd, int64_t t);

/* Events still open (tests: every fd closed). */
size_t sim_perf_n_open(const struct sim_perf *p);

/* Whether fd is an open event of a server box (PCU, iMC). */
bool sim_perf_is_box_event(struct sim_perf *p, int fd);

/*
 * Write the PMU tree the kernel would show for m under
 * root/sys/bus/event_source/devices: cpu (type, format, events), on
 * NHM/WSM models uncore (type, format, events/clockticks, cpumask with the
 * first CPU of each package, perf_event_mux_interval_ms), and on server
 * models the PCU and uncore_imc_N (the generation's formats and aliases,
 * a cpumask with the first CPU of each die).  The PCU is named as
 * uncore.c uncore_get_pmu_name does: uncore_pcu for one box per die,
 * uncore_pcu_N for several; on discovery generations (Sapphire Rapids
 * on) with an "alias" file uncore_type_4[_N], and with discovery_names
 * (a kernel without the platform's table) named uncore_type_4[_N]
 * itself.  On AMD models: cpu with AMD's format and events (ref-cycles
 * on PerfMonV2 models only), amd_df and amd_umc_N (PerfMonV2) with one
 * CPU per socket in cpumask, amd_l3 with one per L3 complex, and msr.
 * 0, or -errno with err naming the file.
 */
int sim_perf_write_sysfs(const struct sim_model *m, bool discovery_names, const char *root,
			 char *err, size_t errlen);

#endif
