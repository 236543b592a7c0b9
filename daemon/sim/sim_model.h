/*
 * Machine models of the simulated hardware (internal to daemon/sim/): identity,
 * topology, which register facilities exist, PMU geometry and the CPUID
 * answers.  Pure data and arithmetic on it; no state.
 */
#ifndef UNCORED_SIM_MODEL_H
#define UNCORED_SIM_MODEL_H

#include <stdint.h>

#include "hw.h"

/* Facility flags of a model. */
#define SIM_F_INTEL           (1u << 0) /* Intel architectural MSRs (thermal, core PMU) */
#define SIM_F_NHM_UNCORE      (1u << 1) /* MSR_UNCORE_* facility, hardware.md §1.1 */
#define SIM_F_UNCORE_THERMAL  (1u << 2) /* uncore events 0x67, 0x80-0x83, hardware.md §2.1-2.2 */
#define SIM_F_PTM             (1u << 3) /* IA32_PACKAGE_THERM_STATUS, hardware.md §3.2 */
#define SIM_F_RAPL            (1u << 4) /* 0x606, 0x613, 0x61b, hardware.md §4.1 */
#define SIM_F_PERFMON_V4      (1u << 5) /* 0x391 STATUS_SET, 0x392 INUSE, hardware.md §5.3 */
#define SIM_F_FW_WRITE        (1u << 6) /* IA32_PERF_CAPABILITIES bit 13, IA32_A_PMCx */
#define SIM_F_K10TEMP         (1u << 7) /* one k10temp hwmon device per socket, hardware-amd.md §2.1 */
#define SIM_F_AMD_PMU         (1u << 8) /* Zen core PMU (PERF_CTL/CTR), amd_df, amd_l3, the msr
					   PMU, HWCR.IRPERF: hardware-amd.md §3, §4 */
#define SIM_F_PERFMON_V2      (1u << 9) /* AMD PerfMonV2 (Zen 4+): GlobalCtl, amd_umc_N, ref-cycles */

struct sim_model {
	const char *name;
	const char *vendor;        /* 12 characters */
	unsigned family;           /* display family */
	unsigned model;            /* display model */
	unsigned stepping;
	int n_sockets;
	int n_cores;               /* per socket */
	int n_threads;             /* per core */
	const int *core_ids;       /* n_cores ascending physical core ids; NULL means 0..n_cores-1 */
	unsigned flags;
	int tjmax_c;
	int pmu_version;
	int n_gp, gp_width;
	int n_fixed, fixed_width;
	int64_t uclk_hz;           /* simulated uncore clock */
	int n_imc;                 /* server uncore (sim_box.h): memory channels per die; 0: none */
	int n_dies;                /* dies per package (Cascade Lake-AP: 2); 0 means 1 */
	int n_pcu;                 /* PCU boxes per die, the kernel's uncore_pcu_N (Granite
				      Rapids' discovery table: one per compute die); 0 means 1 */
	int64_t ref_hz;            /* reference (TSC) clock, default core clock */
	int n_tccd;                /* k10temp: Tccd channels (temp3 ...) of a socket; 0: Tctl only */
	int hsmp_proto;            /* the SMU's HSMP protocol (sim_hsmp.c); 0: no /dev/hsmp */
	int n_dimm_channels;       /* channels with a DIMM HSMP reports on (sim_hsmp.c) */
	int n_l3;                  /* AMD: L3 complexes (CCX) per socket, amd_l3's cpumask */
	int n_umc;                 /* AMD PerfMonV2: UMCs per socket, one amd_umc_N each */
	uint32_t max_basic_leaf;
};

/* The model called name, or NULL. */
const struct sim_model *sim_model_find(const char *name);

/* Dies per package of m (at least 1). */
int sim_model_n_dies(const struct sim_model *m);

/* PCU boxes per die of m (at least 1): the instances of the kernel's PCU PMU. */
int sim_model_n_pcu(const struct sim_model *m);

/*
 * The uncore unit (one per die: its PCU, its memory channels) of logical
 * CPU cpu: socket * dies per package + die.
 */
int sim_model_unit(const struct sim_model *m, int cpu);

/* The first logical CPU of unit (its die's first core, first thread). */
int sim_model_unit_cpu(const struct sim_model *m, int unit);

/* Number of logical CPUs of m. */
int sim_model_n_cpus(const struct sim_model *m);

/* Physical core id of the core with index core_index (0..n_cores-1) in its socket. */
int sim_model_core_id(const struct sim_model *m, int core_index);

/* Index (0..n_cores-1) of physical core id core_id, or -1 when the model has no such core. */
int sim_model_core_index(const struct sim_model *m, int core_id);

/* Topology of logical CPU cpu (0..n_cpus-1); *ret_core_index gets the core's index. */
void sim_model_topology(const struct sim_model *m, int cpu, struct hw_cpu *ret_cpu,
			int *ret_core_index);

/* Logical CPU number of thread thread of core index core_index of socket socket. */
int sim_model_cpu_of(const struct sim_model *m, int socket, int core_index, int thread);

/* CPUID leaf/subleaf as CPU cpu of m answers it; unknown leaves give zeros. */
void sim_model_cpuid(const struct sim_model *m, int cpu, uint32_t leaf, uint32_t subleaf,
		     struct hw_cpuid *ret_regs);

#endif
