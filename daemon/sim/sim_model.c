/*
 * The table of simulated machines and what their CPUs answer to CPUID.
 * Each model fixes vendor, signature, topology (Linux numbering: first
 * threads of every core socket by socket, then the second threads),
 * register facilities, PMU geometry and TjMax.  The register semantics
 * live in the register models (sim_machine.h); this file holds only data and topology arithmetic.
 *
 * Simulator's choices: TjMax 95 C on Nehalem/Westmere, 100 C on
 * Skylake-SP and Sandy Bridge-EP; UCLK 2.4 GHz everywhere (hardware.md §1.7 leaves the UCLK
 * rate UNCONFIRMED); full-width counter writes (IA32_PERF_CAPABILITIES
 * bit 13) on Skylake-SP and Cascade Lake-AP only, since hardware.md does not say per model.
 * Server uncore boxes (PCU, iMC: sim_box.h) where n_imc is set.  Ice Lake-SP,
 * Sapphire Rapids and Granite Rapids are shaped like Skylake-SP (perfmon v4, 4 GP
 * counters, no full-width writes) with 32 cores and 8 and 12 memory
 * channels per socket: the hardware files give neither core PMU geometry
 * nor channel counts for them.
 * "big" is a Westmere-EP-shaped machine scaled up to 2 x 56 cores so every
 * collector runs on it; its core ids are 0..55.
 */
#include <string.h>

#include "sim.h"
#include "sim_model.h"

/* CPUID layouts (Intel SDM vol. 2A, CPUID instruction). */
#define CPUID1_STEPPING_SHIFT      0
#define CPUID1_MODEL_SHIFT         4
#define CPUID1_FAMILY_SHIFT        8
#define CPUID1_EXT_MODEL_SHIFT     16
#define CPUID1_EXT_FAMILY_SHIFT    20
#define CPUID1_EBX_LOGICAL_SHIFT   16
#define CPUID1_EBX_APIC_ID_SHIFT   24
#define CPUID1_EDX_MSR             (1u << 5)
#define CPUID1_EDX_ACPI            (1u << 22)  /* IA32_THERM_STATUS exists, hardware.md §3.1 */
#define CPUID1_EDX_HTT             (1u << 28)
#define CPUID6_EAX_DTS             (1u << 0)   /* hardware.md §3.1 */
#define CPUID6_EAX_PTM             (1u << 6)   /* hardware.md §3.2 */
#define CPUIDA_EAX_N_GP_SHIFT      8           /* hardware.md §5.1 */
#define CPUIDA_EAX_GP_WIDTH_SHIFT  16
#define CPUIDA_EAX_EBX_LEN_SHIFT   24
#define CPUIDA_EBX_LENGTH          7           /* seven architectural events, hardware.md §5.2 */
#define CPUIDA_EDX_FIXED_WIDTH_SHIFT 5
#define CPUIDB_ECX_TYPE_SHIFT      8
#define CPUIDB_TYPE_SMT            1
#define CPUIDB_TYPE_CORE           2

static const int wsm_core_ids[] = { 0, 1, 2, 8, 9, 10 };

/* An Intel family 6 CPU: model and stepping. */
#define INTEL6(mod, step) \
	.vendor = "GenuineIntel", .family = 6, .model = (mod), .stepping = (step)
/*
 * The core PMU every simulated Intel model has (of the given perfmon
 * version): 4 general-purpose and 3 fixed counters, 48 bits wide; and UCLK
 * at 2.4 GHz.
 */
#define INTEL_PMU(version) \
	.pmu_version = (version), .n_gp = 4, .gp_width = 48, .n_fixed = 3, .fixed_width = 48, \
	.uclk_hz = 2400000000
/*
 * Ice Lake-SP and later: arch perfmon v5, 8 general-purpose and 4 fixed
 * counters per logical CPU, fixed counter 3 counting TOPDOWN.SLOTS
 * (hardware-linux.md §6; kernel intel_pmu_init).
 */
#define INTEL_PMU_V5 \
	.pmu_version = 5, .n_gp = 8, .gp_width = 48, .n_fixed = 4, .fixed_width = 48, \
	.uclk_hz = 2400000000
/*
 * An AMD CPU: display family, model and stepping, facilities beyond k10temp
 * and the Zen core PMU (6 GP counters of 48 bits, no fixed counters,
 * hardware-amd.md §3.1); CPUID's basic leaves up to 0x10.
 */
#define AMD(fam, mod, step, more_flags) \
	.vendor = "AuthenticAMD", .family = (fam), .model = (mod), .stepping = (step), \
	.max_basic_leaf = 0x10, .flags = SIM_F_K10TEMP | SIM_F_AMD_PMU | (more_flags), \
	.n_gp = 6, .gp_width = 48
/* Skylake-SP and its successors: package thermal, RAPL, perfmon v4. */
#define SKX_FLAGS (SIM_F_INTEL | SIM_F_PTM | SIM_F_RAPL | SIM_F_PERFMON_V4)
/*
 * A two-socket Ice Lake-SP or later: cores per socket and reference clock;
 * two threads per core, TjMax 100 C, perfmon v5.
 */
#define SKX_V5_2S(cores, ref) \
	.n_sockets = 2, .n_cores = (cores), .n_threads = 2, .flags = SKX_FLAGS, \
	.tjmax_c = 100, INTEL_PMU_V5, .ref_hz = (ref), .max_basic_leaf = 0xb

static const struct sim_model models[] = {
	{
		.name = "westmere-ep-2s", INTEL6(0x2c, 2),
		.n_sockets = 2, .n_cores = 6, .n_threads = 2, .core_ids = wsm_core_ids,
		.flags = SIM_F_INTEL | SIM_F_NHM_UNCORE | SIM_F_UNCORE_THERMAL,
		.tjmax_c = 95, INTEL_PMU(3),
		.ref_hz = 2930000000, .max_basic_leaf = 0xb,
	},
	{
		.name = "nehalem-ep-2s", INTEL6(0x1a, 5),
		.n_sockets = 2, .n_cores = 4, .n_threads = 2,
		.flags = SIM_F_INTEL | SIM_F_NHM_UNCORE,
		.tjmax_c = 95, INTEL_PMU(3),
		.ref_hz = 2660000000, .max_basic_leaf = 0xb,
	},
	{
		.name = "skylake-sp-2s", INTEL6(0x55, 4),
		.n_sockets = 2, .n_cores = 28, .n_threads = 2,
		.flags = SKX_FLAGS | SIM_F_FW_WRITE,
		.tjmax_c = 100, INTEL_PMU(4),
		.ref_hz = 2500000000, .max_basic_leaf = 0xb,
		.n_imc = 6,   /* the kernel's skx_uncore_imc: 6 boxes */
	},
	{
		/* Xeon E5-2600 (Sandy Bridge-EP): PCU at 0xC24..., uncore_imc_0..3 (§4.1) */
		.name = "sandy-bridge-ep-2s", INTEL6(0x2d, 7),
		.n_sockets = 2, .n_cores = 8, .n_threads = 2,
		.flags = SIM_F_INTEL | SIM_F_PTM | SIM_F_RAPL,
		.tjmax_c = 100, INTEL_PMU(3),
		.ref_hz = 2600000000, .max_basic_leaf = 0xd,
		.n_imc = 4,
	},
	{
		/*
		 * Cascade Lake-AP: two dies per package (hardware-linux.md §2), each
		 * with its own PCU at 0x710... and 6 memory channels
		 */
		.name = "cascade-lake-ap-2s", INTEL6(0x55, 7),
		.n_sockets = 2, .n_cores = 48, .n_threads = 2,
		.flags = SKX_FLAGS | SIM_F_FW_WRITE,
		.tjmax_c = 100, INTEL_PMU(4),
		.ref_hz = 2300000000, .max_basic_leaf = 0xb,
		.n_imc = 6, .n_dies = 2,
	},
	{
		/*
		 * PCU at 0x710... as Skylake-SP; 12 iMC channels (kernel icx_uncore_imc up to
		 * 6.12), of which 2, 5, 8 and 11 have no memory behind them (sim_facts.c)
		 */
		.name = "icelake-sp-2s", INTEL6(0x6a, 6), SKX_V5_2S(28, 2300000000),
		.n_imc = 12,
	},
	{
		/* PCU and iMC through perf only (§4.1: no fixed PCU addresses) */
		.name = "sapphire-rapids-2s", INTEL6(0x8f, 8), SKX_V5_2S(32, 2000000000),
		.n_imc = 8,
	},
	{
		/*
		 * perf only; the iMC tells RAPL (power) from MR4 (DRAM heat)
		 * throttling; two compute dies, so two PCUs per package
		 * (hardware-linux.md §6: uncore_pcu_0, uncore_pcu_1)
		 */
		.name = "granite-rapids-2s", INTEL6(0xad, 1), SKX_V5_2S(32, 2100000000),
		.n_imc = 12, .n_pcu = 2,
	},
	/*
	 * AMD EPYC (hardware-amd.md §0): none of Intel's MSRs; k10temp with
	 * the Tccd channels the 6.12 driver lists (§2.1: eight on 17h 31h and
	 * 19h 00h-01h, twelve on 19h 10h-1Fh, none on family 1Ah EPYC); HSMP
	 * protocol 2 on Milan, 5 on Genoa, 7 on Turin (§0).  Core counts
	 * are the simulator's choice, kept small (one core per CCD on Genoa,
	 * so its twelve Tccd channels each have a core); the models are
	 * within the generations' ranges.  The core PMU (§3): 6 GP counters,
	 * PerfMonV2 on Genoa and Turin (Zen 5's by CPUID is UNCONFIRMED there:
	 * the simulator gives Turin Genoa's); one L3 complex per core and, on
	 * PerfMonV2, one UMC per DIMM channel: the simulator's choice.
	 */
	{
		/* Zen 2, 17h 31h: reduced (no mainline HSMP driver, §1.7) */
		.name = "rome-2s", AMD(0x17, 0x31, 0, 0),
		.n_sockets = 2, .n_cores = 8, .n_threads = 2, .n_tccd = 8, .n_l3 = 8,
		.ref_hz = 2000000000,
	},
	{
		.name = "milan-2s", AMD(0x19, 0x01, 1, 0),
		.n_sockets = 2, .n_cores = 8, .n_threads = 2, .n_tccd = 8, .n_l3 = 8,
		.ref_hz = 2450000000, .hsmp_proto = 2,
	},
	{
		.name = "genoa-2s", AMD(0x19, 0x11, 1, SIM_F_PERFMON_V2),
		.n_sockets = 2, .n_cores = 12, .n_threads = 2, .n_tccd = 12, .n_l3 = 12,
		.ref_hz = 2400000000, .hsmp_proto = 5, .n_dimm_channels = 12, .n_umc = 12,
	},
	{
		.name = "turin-2s", AMD(0x1a, 0x02, 1, SIM_F_PERFMON_V2),
		.n_sockets = 2, .n_cores = 16, .n_threads = 2, .n_l3 = 16,
		.ref_hz = 2500000000, .hsmp_proto = 7, .n_dimm_channels = 12, .n_umc = 12,
	},
	{
		.name = "big", INTEL6(0x2c, 2),
		.n_sockets = 2, .n_cores = 56, .n_threads = 2,
		.flags = SIM_F_INTEL | SIM_F_NHM_UNCORE | SIM_F_UNCORE_THERMAL,
		.tjmax_c = 95, INTEL_PMU(3),
		.ref_hz = 2930000000, .max_basic_leaf = 0xb,
	},
};

#define N_MODELS (sizeof(models) / sizeof(models[0]))

static const char *const model_names[] = {
	"westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "sandy-bridge-ep-2s",
	"cascade-lake-ap-2s", "icelake-sp-2s", "sapphire-rapids-2s", "granite-rapids-2s",
	"rome-2s", "milan-2s", "genoa-2s", "turin-2s", "big", NULL,
};

const char *const *sim_model_names(void)
{
	return model_names;
}

const struct sim_model *sim_model_find(const char *name)
{
	for (size_t i = 0; i < N_MODELS; i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}

int sim_model_n_dies(const struct sim_model *m)
{
	return m->n_dies > 1 ? m->n_dies : 1;
}

int sim_model_n_pcu(const struct sim_model *m)
{
	return m->n_pcu > 1 ? m->n_pcu : 1;
}

int sim_model_unit(const struct sim_model *m, int cpu)
{
	struct hw_cpu t;

	sim_model_topology(m, cpu, &t, NULL);
	return t.socket * sim_model_n_dies(m) + t.die;
}

int sim_model_unit_cpu(const struct sim_model *m, int unit)
{
	int dies = sim_model_n_dies(m);

	return sim_model_cpu_of(m, unit / dies, (unit % dies) * (m->n_cores / dies), 0);
}

int sim_model_n_cpus(const struct sim_model *m)
{
	return m->n_sockets * m->n_cores * m->n_threads;
}

int sim_model_core_id(const struct sim_model *m, int core_index)
{
	return m->core_ids ? m->core_ids[core_index] : core_index;
}

int sim_model_core_index(const struct sim_model *m, int core_id)
{
	for (int i = 0; i < m->n_cores; i++)
		if (sim_model_core_id(m, i) == core_id)
			return i;
	return -1;
}

void sim_model_topology(const struct sim_model *m, int cpu, struct hw_cpu *ret_cpu,
			int *ret_core_index)
{
	int per_thread = m->n_sockets * m->n_cores;
	int rem = cpu % per_thread;

	ret_cpu->cpu = cpu;
	ret_cpu->thread = cpu / per_thread;
	ret_cpu->socket = rem / m->n_cores;
	ret_cpu->die = (rem % m->n_cores) / (m->n_cores / sim_model_n_dies(m));
	ret_cpu->core = sim_model_core_id(m, rem % m->n_cores);
	ret_cpu->online = true;
	if (ret_core_index)
		*ret_core_index = rem % m->n_cores;
}

int sim_model_cpu_of(const struct sim_model *m, int socket, int core_index, int thread)
{
	return thread * m->n_sockets * m->n_cores + socket * m->n_cores + core_index;
}

/* Bits needed to hold values 0..n-1. */
static unsigned bits_for(unsigned n)
{
	unsigned bits = 0;

	while ((1u << bits) < n)
		bits++;
	return bits;
}

static unsigned smt_shift(const struct sim_model *m)
{
	return bits_for((unsigned)m->n_threads);
}

static unsigned package_shift(const struct sim_model *m)
{
	int max_id = sim_model_core_id(m, m->n_cores - 1);

	return smt_shift(m) + bits_for((unsigned)max_id + 1);
}

static uint32_t x2apic_id(const struct sim_model *m, int cpu)
{
	struct hw_cpu t;

	sim_model_topology(m, cpu, &t, NULL);
	return ((uint32_t)t.socket << package_shift(m)) | ((uint32_t)t.core << smt_shift(m)) |
	       (uint32_t)t.thread;
}

static uint32_t signature(const struct sim_model *m)
{
	unsigned base_family = m->family >= 0xf ? 0xf : m->family;
	unsigned ext_family = m->family >= 0xf ? m->family - 0xf : 0;

	return m->stepping << CPUID1_STEPPING_SHIFT |
	       (m->model & 0xf) << CPUID1_MODEL_SHIFT |
	       base_family << CPUID1_FAMILY_SHIFT |
	       (m->model >> 4) << CPUID1_EXT_MODEL_SHIFT |
	       ext_family << CPUID1_EXT_FAMILY_SHIFT;
}

static void leaf_vendor(const struct sim_model *m, struct hw_cpuid *r)
{
	r->eax = m->max_basic_leaf;
	memcpy(&r->ebx, m->vendor, 4);
	memcpy(&r->edx, m->vendor + 4, 4);
	memcpy(&r->ecx, m->vendor + 8, 4);
}

static void leaf_signature(const struct sim_model *m, int cpu, struct hw_cpuid *r)
{
	uint32_t logical = 1u << package_shift(m);

	r->eax = signature(m);
	r->edx = CPUID1_EDX_MSR;
	if (!(m->flags & SIM_F_INTEL))
		return;
	r->ebx = (x2apic_id(m, cpu) & 0xff) << CPUID1_EBX_APIC_ID_SHIFT |
		 (logical > 0xff ? 0xff : logical) << CPUID1_EBX_LOGICAL_SHIFT;
	r->edx |= CPUID1_EDX_ACPI | (m->n_threads > 1 ? CPUID1_EDX_HTT : 0);
}

static void leaf_thermal(const struct sim_model *m, struct hw_cpuid *r)
{
	r->eax = CPUID6_EAX_DTS | ((m->flags & SIM_F_PTM) ? CPUID6_EAX_PTM : 0);
}

static void leaf_perfmon(const struct sim_model *m, struct hw_cpuid *r)
{
	r->eax = (uint32_t)m->pmu_version | (uint32_t)m->n_gp << CPUIDA_EAX_N_GP_SHIFT |
		 (uint32_t)m->gp_width << CPUIDA_EAX_GP_WIDTH_SHIFT |
		 (uint32_t)CPUIDA_EBX_LENGTH << CPUIDA_EAX_EBX_LEN_SHIFT;
	r->ebx = 0;
	r->edx = (uint32_t)m->n_fixed | (uint32_t)m->fixed_width << CPUIDA_EDX_FIXED_WIDTH_SHIFT;
}

static void leaf_topology(const struct sim_model *m, int cpu, uint32_t subleaf,
			  struct hw_cpuid *r)
{
	r->edx = x2apic_id(m, cpu);
	r->ecx = subleaf & 0xff;
	if (subleaf == 0) {
		r->eax = smt_shift(m);
		r->ebx = (uint32_t)m->n_threads;
		r->ecx |= CPUIDB_TYPE_SMT << CPUIDB_ECX_TYPE_SHIFT;
	} else if (subleaf == 1) {
		r->eax = package_shift(m);
		r->ebx = (uint32_t)(m->n_threads * m->n_cores);
		r->ecx |= CPUIDB_TYPE_CORE << CPUIDB_ECX_TYPE_SHIFT;
	}
}

void sim_model_cpuid(const struct sim_model *m, int cpu, uint32_t leaf, uint32_t subleaf,
		     struct hw_cpuid *ret_regs)
{
	bool intel = m->flags & SIM_F_INTEL;

	memset(ret_regs, 0, sizeof(*ret_regs));
	if (leaf == 0)
		leaf_vendor(m, ret_regs);
	else if (leaf == 1)
		leaf_signature(m, cpu, ret_regs);
	else if (leaf == 6 && intel)
		leaf_thermal(m, ret_regs);
	else if (leaf == 0xa && intel)
		leaf_perfmon(m, ret_regs);
	else if (leaf == 0xb && intel)
		leaf_topology(m, cpu, subleaf, ret_regs);
}
