/*
 * Pure decoders and encoders of the MSR and CPUID fields uncored reads.
 * Each takes raw register values and returns named fields; none does I/O
 * or keeps state.  MSR field positions come from msr.h; the CPUID fields,
 * used only here, are named below with their hardware.md sections.
 */
#include <string.h>

#include "decode.h"
#include "msr.h"

/* CPUID leaf 0x1 EAX signature fields (display family/model rules of the SDM CPUID chapter). */
#define CPUID_SIG_STEPPING_SHIFT    0
#define CPUID_SIG_MODEL_SHIFT       4
#define CPUID_SIG_FAMILY_SHIFT      8
#define CPUID_SIG_EXT_MODEL_SHIFT   16
#define CPUID_SIG_EXT_FAMILY_SHIFT  20
#define CPUID_SIG_NIBBLE_MASK       0xfu
#define CPUID_SIG_EXT_FAMILY_MASK   0xffu
#define CPUID_FAMILY_P6             0x6u
#define CPUID_FAMILY_EXTENDED       0xfu

/* CPUID leaf 0xA, hardware.md §5.1 */
#define CPUID_PERFMON_VERSION_SHIFT     0
#define CPUID_PERFMON_N_GP_SHIFT        8
#define CPUID_PERFMON_GP_WIDTH_SHIFT    16
#define CPUID_PERFMON_EBX_LENGTH_SHIFT  24
#define CPUID_PERFMON_BYTE_MASK         0xffu
#define CPUID_PERFMON_N_FIXED_MASK      0x1fu  /* EDX[4:0] */
#define CPUID_PERFMON_FIXED_WIDTH_SHIFT 5      /* EDX[12:5] */
#define CPUID_PERFMON_FIXED_MIN_VERSION 2

/* CPUID leaf 0x6 EAX, hardware.md §3.1-3.2 */
#define CPUID_THERMAL_DTS           (1u << 0)
#define CPUID_THERMAL_PTM           (1u << 6)

/* CPUID leaf 0xB (x2APIC topology) */
#define CPUID_TOPO_SHIFT_MASK       0x1fu   /* EAX[4:0] */
#define CPUID_TOPO_N_LOGICAL_MASK   0xffffu /* EBX[15:0] */
#define CPUID_TOPO_LEVEL_TYPE_SHIFT 8       /* ECX[15:8] */
#define CPUID_TOPO_LEVEL_TYPE_MASK  0xffu

static unsigned field(uint64_t raw, unsigned shift, uint64_t mask)
{
	return (unsigned)((raw >> shift) & mask);
}

/* The bits both thermal status registers share, hardware.md §3.1-3.2. */
static struct decode_therm_status decode_common_status(uint64_t raw)
{
	struct decode_therm_status s = {
		.thermal = raw & THERM_STATUS_THERMAL,
		.thermal_log = raw & THERM_STATUS_THERMAL_LOG,
		.prochot = raw & THERM_STATUS_PROCHOT,
		.prochot_log = raw & THERM_STATUS_PROCHOT_LOG,
		.critical = raw & THERM_STATUS_CRITICAL,
		.power_limit = raw & THERM_STATUS_POWER_LIMIT,
		.readout = field(raw, THERM_STATUS_READOUT_SHIFT, THERM_STATUS_READOUT_MASK),
	};

	return s;
}

struct decode_therm_status decode_therm_status(uint64_t raw)
{
	struct decode_therm_status s = decode_common_status(raw);

	s.resolution_c = field(raw, THERM_STATUS_RESOLUTION_SHIFT, THERM_STATUS_RESOLUTION_MASK);
	s.reading_valid = raw & THERM_STATUS_READING_VALID;
	return s;
}

struct decode_therm_status decode_package_therm_status(uint64_t raw)
{
	struct decode_therm_status s = decode_common_status(raw);

	/* hardware.md §3.2: no resolution or reading-valid field at package level. */
	s.resolution_c = 0;
	s.reading_valid = true;
	return s;
}

unsigned decode_tjmax(uint64_t raw)
{
	return field(raw, TEMPERATURE_TARGET_TJMAX_SHIFT, TEMPERATURE_TARGET_TJMAX_MASK);
}

#define RAPL_TIME_UNIT_DEFAULT 0xa

double decode_rapl_time_unit_s(uint64_t raw)
{
	unsigned tu = field(raw, RAPL_POWER_UNIT_TIME_SHIFT, RAPL_POWER_UNIT_TIME_MASK);

	/* A TU of 0 is taken as 0xA (1/1024 s), as turbostat does (hardware-linux.md §2). */
	if (tu == 0)
		tu = RAPL_TIME_UNIT_DEFAULT;
	return 1.0 / (double)(UINT64_C(1) << tu);
}

#define FIXED_CTRL_NIBBLE_MASK ((UINT64_C(1) << FIXED_CTR_CTRL_STRIDE) - 1)

unsigned decode_fixed_ctrl_nibble(uint64_t fixed_ctr_ctrl, unsigned i)
{
	if (i >= 64 / FIXED_CTR_CTRL_STRIDE)
		return 0;
	return field(fixed_ctr_ctrl, i * FIXED_CTR_CTRL_STRIDE, FIXED_CTRL_NIBBLE_MASK);
}

uint64_t encode_fixed_ctrl_nibble(uint64_t fixed_ctr_ctrl, unsigned i, unsigned nibble)
{
	unsigned shift = i * FIXED_CTR_CTRL_STRIDE;

	if (i >= 64 / FIXED_CTR_CTRL_STRIDE)
		return fixed_ctr_ctrl;
	fixed_ctr_ctrl &= ~(FIXED_CTRL_NIBBLE_MASK << shift);
	return fixed_ctr_ctrl | ((nibble & FIXED_CTRL_NIBBLE_MASK) << shift);
}

void decode_cpuid_vendor(const struct hw_cpuid *leaf0, char ret_vendor[13])
{
	/* The vendor string is EBX, EDX, ECX in that order, little-endian. */
	memcpy(ret_vendor, &leaf0->ebx, 4);
	memcpy(ret_vendor + 4, &leaf0->edx, 4);
	memcpy(ret_vendor + 8, &leaf0->ecx, 4);
	ret_vendor[12] = '\0';
}

struct decode_cpuid_signature decode_cpuid_signature(uint32_t eax)
{
	struct decode_cpuid_signature sig = {
		.family = field(eax, CPUID_SIG_FAMILY_SHIFT, CPUID_SIG_NIBBLE_MASK),
		.model = field(eax, CPUID_SIG_MODEL_SHIFT, CPUID_SIG_NIBBLE_MASK),
		.stepping = field(eax, CPUID_SIG_STEPPING_SHIFT, CPUID_SIG_NIBBLE_MASK),
	};
	unsigned base_family = sig.family;

	if (base_family == CPUID_FAMILY_EXTENDED)
		sig.family += field(eax, CPUID_SIG_EXT_FAMILY_SHIFT, CPUID_SIG_EXT_FAMILY_MASK);
	if (base_family == CPUID_FAMILY_P6 || base_family == CPUID_FAMILY_EXTENDED)
		sig.model |= field(eax, CPUID_SIG_EXT_MODEL_SHIFT, CPUID_SIG_NIBBLE_MASK) << 4;
	return sig;
}

struct decode_cpuid_perfmon decode_cpuid_perfmon(const struct hw_cpuid *leaf_a)
{
	struct decode_cpuid_perfmon p = {
		.version = field(leaf_a->eax, CPUID_PERFMON_VERSION_SHIFT, CPUID_PERFMON_BYTE_MASK),
		.n_gp = field(leaf_a->eax, CPUID_PERFMON_N_GP_SHIFT, CPUID_PERFMON_BYTE_MASK),
		.gp_width_bits = field(leaf_a->eax, CPUID_PERFMON_GP_WIDTH_SHIFT, CPUID_PERFMON_BYTE_MASK),
		.ebx_length = field(leaf_a->eax, CPUID_PERFMON_EBX_LENGTH_SHIFT, CPUID_PERFMON_BYTE_MASK),
	};

	/* Only the first EAX[31:24] bits of EBX are meaningful (hardware.md §5.1). */
	p.unavailable = p.ebx_length >= 32 ? leaf_a->ebx
					   : leaf_a->ebx & (uint32_t)((UINT64_C(1) << p.ebx_length) - 1);
	if (p.version >= CPUID_PERFMON_FIXED_MIN_VERSION) {
		p.n_fixed = field(leaf_a->edx, 0, CPUID_PERFMON_N_FIXED_MASK);
		p.fixed_width_bits = field(leaf_a->edx, CPUID_PERFMON_FIXED_WIDTH_SHIFT,
					   CPUID_PERFMON_BYTE_MASK);
	}
	return p;
}

struct decode_cpuid_thermal decode_cpuid_thermal(uint32_t eax)
{
	struct decode_cpuid_thermal t = {
		.dts = eax & CPUID_THERMAL_DTS,
		.ptm = eax & CPUID_THERMAL_PTM,
	};

	return t;
}

struct decode_cpuid_topology decode_cpuid_topology(const struct hw_cpuid *leaf_b)
{
	struct decode_cpuid_topology t = {
		.shift = field(leaf_b->eax, 0, CPUID_TOPO_SHIFT_MASK),
		.n_logical = field(leaf_b->ebx, 0, CPUID_TOPO_N_LOGICAL_MASK),
		.level_type = field(leaf_b->ecx, CPUID_TOPO_LEVEL_TYPE_SHIFT, CPUID_TOPO_LEVEL_TYPE_MASK),
		.x2apic_id = leaf_b->edx,
	};

	return t;
}
