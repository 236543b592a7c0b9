/*
 * Pure decoders and encoders of MSR and CPUID fields (hardware.md §1, §3,
 * §4.1, §5).  No I/O.  Each decoder takes a raw register value and returns
 * a struct of named fields with explicit validity.
 */
#ifndef UNCORED_DECODE_H
#define UNCORED_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "hw.h"

/* IA32_THERM_STATUS (0x19c) or IA32_PACKAGE_THERM_STATUS (0x1b1). */
struct decode_therm_status {
	bool thermal;             /* bit 0: at/above TCC activation now */
	bool thermal_log;         /* bit 1 */
	bool prochot;             /* bit 2: PROCHOT#/FORCEPR# asserted by another agent now */
	bool prochot_log;         /* bit 3 */
	bool critical;            /* bit 4 */
	bool power_limit;         /* bit 10 */
	unsigned readout;         /* bits 22:16, degrees below TjMax */
	unsigned resolution_c;    /* bits 30:27 (core register only) */
	bool reading_valid;       /* bit 31 (core register only) */
};

/* Decode a core thermal status register. */
struct decode_therm_status decode_therm_status(uint64_t raw);

/*
 * Decode a package thermal status register.  It has no reading-valid bit
 * (hardware.md §3.2): reading_valid is set true and resolution_c 0.
 */
struct decode_therm_status decode_package_therm_status(uint64_t raw);

/* TjMax in °C from MSR_TEMPERATURE_TARGET bits 23:16; 0 when the field is 0. */
unsigned decode_tjmax(uint64_t raw);

/* Time unit of MSR_RAPL_POWER_UNIT in seconds: 1 / 2^TU (bits 19:16); a TU of 0 means 0xA. */
double decode_rapl_time_unit_s(uint64_t raw);

/* The 4-bit IA32_FIXED_CTR_CTRL nibble of fixed counter i. */
unsigned decode_fixed_ctrl_nibble(uint64_t fixed_ctr_ctrl, unsigned i);

/* fixed_ctr_ctrl with the nibble of counter i replaced by nibble. */
uint64_t encode_fixed_ctrl_nibble(uint64_t fixed_ctr_ctrl, unsigned i, unsigned nibble);

/* CPUID leaf 0x0: vendor string (12 chars + NUL) from EBX, EDX, ECX. */
void decode_cpuid_vendor(const struct hw_cpuid *leaf0, char ret_vendor[13]);

/* CPUID leaf 0x1 EAX: display family, display model and stepping. */
struct decode_cpuid_signature {
	unsigned family, model, stepping;
};
struct decode_cpuid_signature decode_cpuid_signature(uint32_t eax);

/* CPUID leaf 0xA (architectural performance monitoring). */
struct decode_cpuid_perfmon {
	unsigned version, n_gp, gp_width_bits, ebx_length;
	uint32_t unavailable;     /* EBX masked to ebx_length bits */
	unsigned n_fixed, fixed_width_bits;
};
struct decode_cpuid_perfmon decode_cpuid_perfmon(const struct hw_cpuid *leaf_a);

/* CPUID leaf 0x6 EAX bits uncored uses. */
struct decode_cpuid_thermal {
	bool dts;                 /* bit 0: digital temperature sensor */
	bool ptm;                 /* bit 6: package thermal management */
};
struct decode_cpuid_thermal decode_cpuid_thermal(uint32_t eax);

/* CPUID leaf 0xB (x2APIC topology), one subleaf. */
struct decode_cpuid_topology {
	unsigned shift;           /* EAX[4:0]: bits to shift x2APIC id to the next level */
	unsigned n_logical;       /* EBX[15:0] */
	unsigned level_type;      /* ECX[15:8]: 1 SMT, 2 core, 0 invalid */
	uint32_t x2apic_id;       /* EDX */
};
struct decode_cpuid_topology decode_cpuid_topology(const struct hw_cpuid *leaf_b);

#endif
