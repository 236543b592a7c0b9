/*
 * The simulator's own hardware facts: the MSR addresses and bit layouts it
 * models, and the server uncore's event codes, box addresses and counter
 * widths per generation.  Written from shared/hardware.md and
 * hardware-linux.md and the sources they name (Intel SDM vol. 3B/4, the
 * kernel's arch/x86/include/asm/msr-index.h, arch/x86/include/asm/
 * perf_event.h, arch/x86/events/intel/uncore_snb.c and uncore_snbep.c,
 * Intel's perfmon JSON), never from the tables uncored programs from: the
 * sim library cannot include those (daemon/meson.build), so that a wrong
 * code or address there makes the simulated counts wrong instead of
 * agreeing with itself.  Names follow the kernel's where it has one.
 */
#ifndef UNCORED_SIM_FACTS_H
#define UNCORED_SIM_FACTS_H

#include <stddef.h>
#include <stdint.h>

#define BIT_ULL(n) (UINT64_C(1) << (n))

/* ---- Nehalem/Westmere uncore PMU: hardware.md §1.3-1.7; uncore_snb.c NHM_UNC_* ---- */

#define NHM_UNC_PERF_GLOBAL_CTL          0x391
#define NHM_UNC_PERF_GLOBAL_STATUS       0x392
#define NHM_UNC_PERF_GLOBAL_OVF_CTRL     0x393  /* write-only */
#define NHM_UNC_FIXED_CTR                0x394
#define NHM_UNC_FIXED_CTR_CTRL           0x395
#define NHM_UNC_ADDR_OPCODE_MATCH        0x396
#define NHM_UNC_UNCORE_PMC0              0x3b0  /* 0x3b0..0x3b7 */
#define NHM_UNC_PERFEVTSEL0              0x3c0  /* 0x3c0..0x3c7 */
#define NHM_UNC_NUM_COUNTERS             8
#define NHM_UNC_CTR_BITS                 48     /* nhm_uncore.perf_ctr_bits */
#define NHM_UNC_EVTSEL_EVENT             0xffu  /* 7:0 */
#define NHM_UNC_EVTSEL_UMASK_SHIFT       8      /* 15:8 */
#define NHM_UNC_EVTSEL_OCC_CTR_RST       BIT_ULL(17)  /* hardware-linux.md §2: reads 0 */
#define NHM_UNC_EVTSEL_EDGE              BIT_ULL(18)
#define NHM_UNC_EVTSEL_ENABLE            BIT_ULL(22)
#define NHM_UNC_GLOBAL_CTL_EN_PC(n)      BIT_ULL(n)   /* NHM_UNC_GLOBAL_CTL_EN_PC_ALL: 7:0 */
#define NHM_UNC_GLOBAL_CTL_EN_FC         BIT_ULL(32)
#define NHM_UNC_FIXED_CTR_CTL_EN         BIT_ULL(0)   /* hardware.md §1.7 */

/* Uncore thermal events of Westmere (Nehalem generates none here), hardware.md §2.1. */
#define NHM_UNC_EV_DRAM_THERMAL_THROTTLED    0x67   /* umask 0x01 */
#define NHM_UNC_EV_THERMAL_THROTTLING_TEMP   0x80   /* umask: CORE_0..3 bits */
#define NHM_UNC_EV_THERMAL_THROTTLED_TEMP    0x81
#define NHM_UNC_EV_PROCHOT_ASSERTION         0x82   /* umask 0x01 */
#define NHM_UNC_EV_PROCHOT_CORE              0x83
#define NHM_UNC_N_CORE_UMASK_BITS            4

/* ---- thermal: hardware.md §3.1, §3.2, §3.4 (SDM vol. 4 table 2-2) ---- */

#define MSR_IA32_THERM_STATUS            0x19c
#define MSR_IA32_TEMPERATURE_TARGET      0x1a2
#define MSR_IA32_PACKAGE_THERM_STATUS    0x1b1
/* The fields of both status registers, by the SDM's names. */
#define THERM_BIT_STATUS                 BIT_ULL(0)   /* at or above TCC activation */
#define THERM_BIT_STATUS_LOG             BIT_ULL(1)
#define THERM_BIT_PROCHOT_EVENT          BIT_ULL(2)   /* PROCHOT#/FORCEPR# asserted */
#define THERM_BIT_PROCHOT_LOG            BIT_ULL(3)
#define THERM_DIGITAL_READOUT_SHIFT      16           /* 22:16, degrees below TjMax */
#define THERM_DIGITAL_READOUT_MAX        0x7f
#define THERM_RESOLUTION_SHIFT           27           /* 30:27 */
#define THERM_READING_VALID              BIT_ULL(31)
#define TEMPERATURE_TARGET_TJMAX_SHIFT   16           /* 23:16 */

/* ---- RAPL: hardware.md §4.1 ---- */

#define MSR_RAPL_POWER_UNIT              0x606
#define MSR_PKG_PERF_STATUS              0x613
#define MSR_DRAM_PERF_STATUS             0x61b
#define RAPL_POWER_UNIT_SHIFT            0            /* 3:0 */
#define RAPL_ENERGY_UNIT_SHIFT           8            /* 12:8 */
#define RAPL_TIME_UNIT_SHIFT             16           /* 19:16: 1/2^TU s */
#define RAPL_PERF_STATUS_BITS            32           /* 31:0, throttled time in TU units */

/* ---- core PMU: hardware.md §5.3-5.4; msr-index.h, perf_event.h ---- */

#define MSR_IA32_PERFCTR0                0x0c1
#define MSR_ARCH_PERFMON_EVENTSEL0       0x186
#define MSR_CORE_PERF_FIXED_CTR0         0x309        /* instructions, cycles, ref-cycles */
#define MSR_IA32_PERF_CAPABILITIES       0x345
#define MSR_CORE_PERF_FIXED_CTR_CTRL     0x38d
#define MSR_CORE_PERF_GLOBAL_STATUS      0x38e
#define MSR_CORE_PERF_GLOBAL_CTRL        0x38f
#define MSR_CORE_PERF_GLOBAL_OVF_CTRL    0x390
#define MSR_CORE_PERF_GLOBAL_STATUS_SET  0x391        /* perfmon v4+ */
#define MSR_CORE_PERF_GLOBAL_INUSE       0x392        /* perfmon v4+ */
#define MSR_IA32_PMC0                    0x4c1        /* full-width alias of PERFCTR0 */
#define PERF_CAP_FW_WRITES               BIT_ULL(13)
#define ARCH_PERFMON_EVENTSEL_EVENT      0xffu
#define ARCH_PERFMON_EVENTSEL_UMASK_SHIFT 8
#define ARCH_PERFMON_EVENTSEL_USR        BIT_ULL(16)
#define ARCH_PERFMON_EVENTSEL_OS         BIT_ULL(17)
#define ARCH_PERFMON_EVENTSEL_INT        BIT_ULL(20)
#define ARCH_PERFMON_EVENTSEL_ENABLE     BIT_ULL(22)
/* IA32_FIXED_CTR_CTRL: a 4-bit field per fixed counter (intel_fixed_bits_by_idx). */
#define INTEL_FIXED_0_KERNEL             0x1u
#define INTEL_FIXED_0_USER               0x2u
#define INTEL_FIXED_0_ENABLE_PMI         0x8u
#define INTEL_FIXED_BITS_STRIDE          4
#define INTEL_PMC_IDX_FIXED              32
/* IA32_PERF_GLOBAL_CTRL: GP counter n at bit n, fixed counter i at bit 32 + i. */
#define GLOBAL_CTRL_EN_PMC(n)            BIT_ULL(n)
#define GLOBAL_CTRL_EN_FIXED(i)          BIT_ULL(INTEL_PMC_IDX_FIXED + (i))

/*
 * ---- AMD core PMU: hardware-amd.md §3.1-§3.3, §7 (msr-index.h, asm/perf_event.h,
 * arch/x86/events/amd/core.c, kernel/watchdog_perf.c) ----
 */

#define MSR_F15H_PERF_CTL                0xc0010200   /* PERF_CTL n at + 2n */
#define MSR_F15H_PERF_CTR                0xc0010201   /* PERF_CTR n at + 2n */
#define MSR_AMD64_PERF_CNTR_GLOBAL_CTL   0xc0000301   /* PerfMonV2 (Zen 4+): bit n gates counter n */
#define MSR_K7_HWCR                      0xc0010015
#define MSR_K7_HWCR_IRPERF_EN            BIT_ULL(30)  /* set at boot where CPUID has IRPERF */
#define MSR_F17H_IRPERF                  0xc00000e9   /* instructions retired, free-running */
#define MSR_IA32_MPERF                   0xe7         /* C0 cycles at the P0 (reference) rate */
#define MSR_IA32_APERF                   0xe8         /* C0 cycles at the actual rate */
/* The msr PMU's events (arch/x86/events/msr.c PERF_MSR_*, its events/ strings). */
#define PERF_MSR_TSC                     0
#define PERF_MSR_APERF                   1
#define PERF_MSR_MPERF                   2
#define PERF_MSR_IRPERF                  6
#define AMD64_NUM_COUNTERS_CORE          6
#define AMD64_CTR_BITS                   48           /* cntval_bits */
/* PERF_CTL: event [7:0] and [35:32], umask [15:8]; USR 16, OS 17, EN 22 as Intel's. */
#define AMD64_EVENTSEL_EVENT_HI_SHIFT    32
#define AMD64_EVENTSEL_EVENT_HI          (UINT64_C(0xf) << AMD64_EVENTSEL_EVENT_HI_SHIFT)
/* The raw format's fields (core.c:1071-1075): event, umask, edge, inv, cmask. */
#define AMD64_RAW_EVENT_MASK             (UINT64_C(0xff84ffff) | AMD64_EVENTSEL_EVENT_HI)
/*
 * The NMI watchdog's cycles (event 0x76 | USR | OS | INT | EN) on GP counter
 * 0, the first event scheduled (§3.2, derived from code).
 */
#define AMD_WATCHDOG_PERF_CTL            UINT64_C(0x530076)
#define AMD_WATCHDOG_COUNTER             0

/* The generic events' encodings (§3.3): event | umask << 8 | event[11:8] << 32. */
#define AMD_EV_CYCLES                    UINT64_C(0x0076)
#define AMD_EV_INSTRUCTIONS              UINT64_C(0x00c0)
#define AMD_EV_CACHE_REFERENCES          UINT64_C(0xff60)   /* L2 requests, not L3 */
#define AMD_EV_CACHE_MISSES              UINT64_C(0x0964)   /* L2 misses, not LLC */
#define AMD_EV_BRANCHES                  UINT64_C(0x00c2)
#define AMD_EV_BRANCH_MISSES             UINT64_C(0x00c3)
#define AMD_EV_REF_CYCLES                UINT64_C(0x100000120)  /* Zen 4+ only: 0x120 umask 0x01 */

/* ---- server uncore: hardware-linux.md §4.1-§4.3, hardware.md §4.3-§4.4 ---- */

/*
 * The PCU PMON box (uncore_snbep.c SNBEP_PMON_*): box control, and the
 * select layout 7:0 event (no umask), 17 reset, 18 edge, 22 enable,
 * 23 invert; 4 counters of 48 bits (snbep_uncore_pcu).
 */
#define SNBEP_PMON_BOX_CTL_RST_CTRL      BIT_ULL(0)
#define SNBEP_PMON_BOX_CTL_RST_CTRS      BIT_ULL(1)
#define SNBEP_PMON_BOX_CTL_FRZ           BIT_ULL(8)
#define SNBEP_PMON_BOX_CTL_FRZ_EN        BIT_ULL(16)
#define SNBEP_PMON_CTL_EV_SEL_MASK       0xffu
#define SNBEP_PMON_CTL_RST               BIT_ULL(17)
#define SNBEP_PMON_CTL_EN                BIT_ULL(22)
#define SNBEP_PCU_NUM_COUNTERS           4
#define SNBEP_PCU_CTR_BITS               48

/*
 * PCU box addresses, hardware-linux.md §4.1 (uncore_snbep.c; STATUS from
 * likwid): SNB-EP and IVT; HSX, BDX, BDX-DE, SKX/CLX and ICX.  From SPR on
 * only the discovery table has them.
 */
#define SNBEP_PCU_MSR_PMON_BOX_CTL       0xc24
#define SNBEP_PCU_MSR_PMON_CTL0          0xc30
#define SNBEP_PCU_MSR_PMON_BOX_FILTER    0xc34
#define SNBEP_PCU_MSR_PMON_BOX_STATUS    0xc35
#define SNBEP_PCU_MSR_PMON_CTR0          0xc36
#define HSWEP_PCU_MSR_PMON_BOX_CTL       0x710
#define HSWEP_PCU_MSR_PMON_CTL0          0x711
#define HSWEP_PCU_MSR_PMON_BOX_FILTER    0x715
#define HSWEP_PCU_MSR_PMON_BOX_STATUS    0x716
#define HSWEP_PCU_MSR_PMON_CTR0          0x717

/* A PCU box's MSR addresses. */
struct sim_pcu_addr {
	uint32_t box_ctl, ctl0, filter, status, ctr0;
};

/* The conditions a PCU event counts, each with its code per generation (§4.2). */
enum sim_pcu_cond {
	SIM_PCU_CLOCKTICKS,            /* UNC_P_CLOCKTICKS: always */
	SIM_PCU_PROCHOT_EXTERNAL,      /* UNC_P_PROCHOT_EXTERNAL_CYCLES */
	SIM_PCU_PROCHOT_INTERNAL,      /* UNC_P_PROCHOT_INTERNAL_CYCLES */
	SIM_PCU_FREQ_MAX_THERMAL,      /* UNC_P_FREQ_MAX_LIMIT_THERMAL_CYCLES */
	SIM_PCU_FREQ_MAX_POWER,        /* UNC_P_FREQ_MAX_POWER_CYCLES */
	SIM_PCU_N_CONDS,
};

/* What an iMC throttle event counts (§4.3; the simulator's model in sim_box.h). */
enum sim_imc_cond {
	SIM_IMC_THERMAL_OR_POWER,      /* POWER_THROTTLE_CYCLES: thermal or the PCU's limit */
	SIM_IMC_THERMAL,               /* GNR .MR4BLKEN */
	SIM_IMC_POWER,                 /* GNR .RAPLBLK */
	SIM_IMC_CRITICAL,              /* POWER_CRIT(ICAL)_THROTTLE_CYCLES */
};

/* One iMC event: its perf config (umask << 8 | event) and what it counts. */
struct sim_imc_event {
	uint16_t config;
	enum sim_imc_cond cond;
};

/* The config of the iMC's fixed counter (the kernel's `clockticks` alias 0xff). */
#define SIM_IMC_FIXED_CONFIG 0xff

/* One generation of the server uncore. */
struct sim_uncore_gen {
	const char *name;
	const struct sim_pcu_addr *pcu;      /* NULL: discovery only, perf alone reaches it */
	uint8_t pcu_code[SIM_PCU_N_CONDS];
	uint16_t imc_dclk;                   /* the channel's DCLK event config */
	const struct sim_imc_event *imc;     /* the throttle events the simulator generates */
	size_t n_imc;
	/*
	 * Channels the kernel registers per memory controller, and how many of
	 * them have memory behind them; the rest exist only on paper and never
	 * clock.  0: every channel is real.
	 */
	uint8_t imc_per_controller, imc_real_per_controller;
};

/* The generation of Intel family/model, or NULL for a model without a server uncore. */
const struct sim_uncore_gen *sim_uncore_gen_find(unsigned family, unsigned model);

#endif
