/*
 * MSR addresses and bit fields uncored uses, with their SDM names.
 * Every value comes from shared/hardware.md, which names its sources;
 * the section is given beside each group.
 */
#ifndef UNCORED_MSR_H
#define UNCORED_MSR_H

#include <stdint.h>

#define MSR_BIT(n) (UINT64_C(1) << (n))

/* Nehalem/Westmere uncore PMU, hardware.md §1.3-1.7 (models 0x1A, 0x1E, 0x1F, 0x25, 0x2C only). */
#define MSR_UNCORE_PERF_GLOBAL_CTRL      0x391
#define MSR_UNCORE_PERF_GLOBAL_STATUS    0x392
#define MSR_UNCORE_PERF_GLOBAL_OVF_CTRL  0x393 /* write-only: never read or restore it */
#define MSR_UNCORE_FIXED_CTR0            0x394
#define MSR_UNCORE_FIXED_CTR_CTRL        0x395
#define MSR_UNCORE_ADDR_OPCODE_MATCH     0x396
#define MSR_UNCORE_PMC0                  0x3b0 /* 0x3b0..0x3b7 */
#define MSR_UNCORE_PERFEVTSEL0           0x3c0 /* 0x3c0..0x3c7 */
#define UNCORE_N_COUNTERS                8
#define UNCORE_COUNTER_WIDTH             48

/* MSR_UNCORE_PERFEVTSELx fields, hardware.md §1.4 */
#define UNC_EVTSEL_EVENT_MASK            0xffu
#define UNC_EVTSEL_UMASK_SHIFT           8
#define UNC_EVTSEL_OCC_CTR_RST           MSR_BIT(17) /* write 1 clears the queue-occupancy
                                                         accumulator (not the PMC); reads 0,
                                                         hardware-linux.md §2 */
#define UNC_EVTSEL_EDGE                  MSR_BIT(18)
#define UNC_EVTSEL_PMI                   MSR_BIT(20)
#define UNC_EVTSEL_EN                    MSR_BIT(22)
#define UNC_EVTSEL_INV                   MSR_BIT(23)
#define UNC_EVTSEL_CMASK_SHIFT           24

/* MSR_UNCORE_PERF_GLOBAL_CTRL fields, hardware.md §1.5 */
#define UNC_GLOBAL_CTRL_EN_PC(n)         MSR_BIT(n)
#define UNC_GLOBAL_CTRL_EN_FC0           MSR_BIT(32)

/* MSR_UNCORE_FIXED_CTR_CTRL fields, hardware.md §1.7 */
#define UNC_FIXED_CTR_CTRL_EN            MSR_BIT(0)
#define UNC_FIXED_CTR_CTRL_PMI           MSR_BIT(2)

/* Thermal, hardware.md §3 */
#define IA32_THERM_STATUS                0x19c
#define IA32_PACKAGE_THERM_STATUS        0x1b1
#define MSR_TEMPERATURE_TARGET           0x1a2
#define THERM_STATUS_THERMAL             MSR_BIT(0)  /* at/above TCC activation now */
#define THERM_STATUS_THERMAL_LOG         MSR_BIT(1)
#define THERM_STATUS_PROCHOT             MSR_BIT(2)  /* PROCHOT#/FORCEPR# asserted by another agent now */
#define THERM_STATUS_PROCHOT_LOG         MSR_BIT(3)
#define THERM_STATUS_CRITICAL            MSR_BIT(4)
#define THERM_STATUS_CRITICAL_LOG        MSR_BIT(5)
#define THERM_STATUS_POWER_LIMIT         MSR_BIT(10)
#define THERM_STATUS_POWER_LIMIT_LOG     MSR_BIT(11)
#define THERM_STATUS_READOUT_SHIFT       16          /* bits 22:16, degrees below TjMax */
#define THERM_STATUS_READOUT_MASK        0x7fu
#define THERM_STATUS_RESOLUTION_SHIFT    27          /* bits 30:27 */
#define THERM_STATUS_RESOLUTION_MASK     0xfu
#define THERM_STATUS_READING_VALID       MSR_BIT(31)
#define TEMPERATURE_TARGET_TJMAX_SHIFT   16          /* bits 23:16 */
#define TEMPERATURE_TARGET_TJMAX_MASK    0xffu

/* RAPL, hardware.md §4.1 */
#define MSR_RAPL_POWER_UNIT              0x606
#define MSR_PKG_PERF_STATUS              0x613
#define MSR_DRAM_PERF_STATUS             0x61b
#define RAPL_POWER_UNIT_TIME_SHIFT       16          /* bits 19:16: time unit 1/2^TU s */
#define RAPL_POWER_UNIT_TIME_MASK        0xfu
#define RAPL_PERF_STATUS_WIDTH           32

/* Core PMU, hardware.md §5.3-5.4 */
#define IA32_PMC0                        0x0c1
#define IA32_PERFEVTSEL0                 0x186
#define IA32_FIXED_CTR0                  0x309 /* instructions retired */
#define IA32_FIXED_CTR1                  0x30a /* unhalted core cycles */
#define IA32_FIXED_CTR2                  0x30b /* unhalted reference cycles */
#define IA32_FIXED_CTR_CTRL              0x38d
#define IA32_PERF_GLOBAL_STATUS          0x38e
#define IA32_PERF_GLOBAL_CTRL            0x38f
#define IA32_PERF_GLOBAL_OVF_CTRL        0x390 /* v1-3; STATUS_RESET on v4+ */
#define IA32_PERF_GLOBAL_STATUS_SET      0x391 /* perfmon v4+ only: never write */
#define IA32_PERF_GLOBAL_INUSE           0x392 /* perfmon v4+ only */
#define IA32_PERF_CAPABILITIES           0x345
#define PERF_CAP_FW_WRITE                MSR_BIT(13) /* full-width writes via IA32_A_PMCx */
#define IA32_A_PMC0                      0x4c1 /* full-width write alias of IA32_PMC0, hardware.md §5.3 */
#define PERFEVTSEL_UMASK_SHIFT           8
#define PERFEVTSEL_USR                   MSR_BIT(16)
#define PERFEVTSEL_OS                    MSR_BIT(17)
#define PERFEVTSEL_EDGE                  MSR_BIT(18)
#define PERFEVTSEL_INT                   MSR_BIT(20)
#define PERFEVTSEL_ANY                   MSR_BIT(21)
#define PERFEVTSEL_EN                    MSR_BIT(22)
#define PERFEVTSEL_INV                   MSR_BIT(23)
#define PERFEVTSEL_CMASK_SHIFT           24
#define FIXED_CTR_CTRL_EN_OS             0x1u  /* per 4-bit nibble, counter i at bits 4i+3..4i */
#define FIXED_CTR_CTRL_EN_USR            0x2u
#define FIXED_CTR_CTRL_ANY               0x4u
#define FIXED_CTR_CTRL_PMI               0x8u
#define FIXED_CTR_CTRL_STRIDE            4
#define PERF_GLOBAL_CTRL_EN_PMC(n)       MSR_BIT(n)
#define PERF_GLOBAL_CTRL_EN_FIXED(i)     MSR_BIT(32 + (i))

/*
 * PCU PMON box of the server uncore (hardware-linux.md §4.1; kernel
 * arch/x86/events/intel/uncore_snbep.c SNBEP_PCU_MSR_PMON_*,
 * HSWEP_PCU_MSR_PMON_*, SNBEP_PMON_BOX_CTL_*, SNBEP_PMON_CTL_*).  One box
 * per package (per die on multi-die packages), 4 counters of 48 bits.
 */
#define SNBEP_PCU_MSR_BOX_CTL            0xc24 /* SNB-EP, IVT */
#define SNBEP_PCU_MSR_CTL0               0xc30 /* 0xc30..0xc33 */
#define SNBEP_PCU_MSR_FILTER             0xc34
#define SNBEP_PCU_MSR_STATUS             0xc35
#define SNBEP_PCU_MSR_CTR0               0xc36 /* 0xc36..0xc39 */
#define HSWEP_PCU_MSR_BOX_CTL            0x710 /* HSX, BDX, BDX-DE, SKX/CLX, ICX */
#define HSWEP_PCU_MSR_CTL0               0x711 /* 0x711..0x714 */
#define HSWEP_PCU_MSR_FILTER             0x715
#define HSWEP_PCU_MSR_STATUS             0x716
#define HSWEP_PCU_MSR_CTR0               0x717 /* 0x717..0x71a */
#define PCU_N_COUNTERS                   4
#define PCU_COUNTER_WIDTH                48
#define PMON_BOX_CTL_RST_CTRL            MSR_BIT(0)  /* reset the control registers */
#define PMON_BOX_CTL_RST_CTRS            MSR_BIT(1)  /* reset the counters */
#define PMON_BOX_CTL_FRZ                 MSR_BIT(8)  /* freeze every counter of the box */
#define PMON_BOX_CTL_FRZ_EN              MSR_BIT(16)
#define PCU_CTL_EVENT_MASK               0xffu       /* 7:0, no umask on the PCU */
#define PCU_CTL_RST                      MSR_BIT(17)
#define PCU_CTL_EDGE                     MSR_BIT(18)
#define PCU_CTL_EN                       MSR_BIT(22)
#define PCU_CTL_INV                      MSR_BIT(23)

#endif
