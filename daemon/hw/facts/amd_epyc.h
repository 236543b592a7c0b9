/*
 * AMD EPYC generations as hardware-amd.md describes them: which family and
 * model ranges uncored knows, and what each has (HSMP messages, k10temp
 * channels, perf's ref-cycles mapping).  Facilities come from this table
 * by exact family and model range, never from probing.
 */
#ifndef UNCORED_AMD_EPYC_H
#define UNCORED_AMD_EPYC_H

#include <stdbool.h>
#include <stddef.h>

/* One generation's facts (hardware-amd.md §0, §1.7, §2.1, §3.3). */
struct amd_epyc {
	const char *microarch;         /* "rome", "milan", "genoa", ... (cpu_info.microarch) */
	unsigned family;               /* display family, 0x17 / 0x19 / 0x1a */
	unsigned model_first, model_last; /* display model range, inclusive */
	unsigned zen;                  /* 2 … 6 */
	/*
	 * The HSMP protocol version esmi maps the part to (§0, §1.7); 0 where
	 * mainline Linux binds no HSMP driver (Zen 2).
	 */
	unsigned hsmp_proto;
	bool hsmp_prochot;             /* GET_PROC_HOT 0x0B */
	bool hsmp_freq_limit;          /* GET_SOCKET_FREQ_LIMIT 0x19 with its source bitmap (§1.4) */
	bool hsmp_dimm;                /* GET_DIMM_TEMP_RANGE/POWER/THERMAL 0x16-0x18 (§1.5) */
	unsigned n_tccd;               /* k10temp Tccd channels the 6.12 driver lists (§2.1) */
	bool ref_cycles;               /* perf maps ref-cycles (Zen 4+, §3.3); ENOENT elsewhere */
};

/*
 * The core PMU of every Zen generation (hardware-amd.md §3.1): 6 GP
 * counters (AMD64_NUM_COUNTERS_CORE; Zen 4+ say so in CPUID 0x80000022,
 * which uncored does not read), 48 bits wide, no fixed counters.
 */
#define AMD_CORE_COUNTERS     6
#define AMD_CORE_COUNTER_BITS 48

/* The generation of an AuthenticAMD family/model, or NULL for one uncored does not know. */
const struct amd_epyc *amd_epyc_find(unsigned family, unsigned model);

/* The generation named name (amd_epyc.microarch), or NULL. */
const struct amd_epyc *amd_epyc_by_name(const char *name);

/* Generation i of the table (0, 1, ...), or NULL past its end. */
const struct amd_epyc *amd_epyc_at(size_t i);

#endif
