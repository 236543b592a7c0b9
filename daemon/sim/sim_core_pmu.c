/*
 * The simulated core PMU (hardware.md §5.2-5.4), one per logical CPU:
 * general-purpose and fixed counters, their selects and global controls;
 * on AMD models the Zen core PMU (hardware-amd.md §3.1-§3.2): interleaved
 * PERF_CTL/PERF_CTR pairs, PerfMonV2's GlobalCtl, HWCR and IRPERF.
 */
#include <errno.h>

#include "sim_machine.h"

/* An event's encoding: event select (AMD: 12 bits) and umask. */
struct core_code {
	uint16_t code;
	uint8_t umask;
};

/* Architectural events, hardware.md §5.2. */
static const struct core_code intel_codes[EV_COUNT] = {
	[EV_INSTRUCTIONS] = { 0xc0, 0x00 },
	[EV_CYCLES] = { 0x3c, 0x00 },
	[EV_REF_CYCLES] = { 0x3c, 0x01 },
	[EV_LLC_REFS] = { 0x2e, 0x4f },
	[EV_LLC_MISSES] = { 0x2e, 0x41 },
	[EV_BRANCHES] = { 0xc4, 0x00 },
	[EV_BRANCH_MISSES] = { 0xc5, 0x00 },
};

/*
 * The events of AMD's generic map (hardware-amd.md §3.3, sim_facts.h
 * AMD_EV_*): the scenario's cache rates drive the L2 events perf's
 * cache-references and cache-misses count on AMD (the simulator's
 * choice: it models one cache level).  Reference cycles (0x120 umask
 * 0x01) only on PerfMonV2 (Zen 4+) parts; on Zen 2/3 that select counts
 * nothing here.
 */
static const struct core_code amd_codes[EV_COUNT] = {
	[EV_INSTRUCTIONS] = { 0xc0, 0x00 },
	[EV_CYCLES] = { 0x76, 0x00 },
	[EV_REF_CYCLES] = { 0x120, 0x01 },
	[EV_LLC_REFS] = { 0x60, 0xff },
	[EV_LLC_MISSES] = { 0x64, 0x09 },
	[EV_BRANCHES] = { 0xc2, 0x00 },
	[EV_BRANCH_MISSES] = { 0xc3, 0x00 },
};

/* Fixed counters 0..2, hardware.md §5.3. */
static const enum core_event fixed_events[] = { EV_INSTRUCTIONS, EV_CYCLES, EV_REF_CYCLES };

static bool is_amd(const struct sim *s)
{
	return s->model->flags & SIM_F_AMD_PMU;
}

int sim_core_src(const struct sim *s, int cpu, uint16_t code, uint8_t umask,
		 struct count_src *ret)
{
	const struct core_code *codes = is_amd(s) ? amd_codes : intel_codes;

	for (int e = 0; e < EV_COUNT; e++) {
		if (codes[e].code != code || codes[e].umask != umask)
			continue;
		if (is_amd(s) && e == EV_REF_CYCLES && !(s->model->flags & SIM_F_PERFMON_V2))
			return -ENOENT;
		*ret = (struct count_src){ .tl = &s->cpus[cpu].rate[e] };
		return 0;
	}
	return -ENOENT;
}

/* ---- core PMU registers (per logical CPU), hardware.md §5.3-5.4 ---- */

static bool gp_counting(const struct sim_cpu *c, int n)
{
	uint64_t sel = c->evtsel[n];

	return (sel & ARCH_PERFMON_EVENTSEL_ENABLE) &&
	       (sel & (ARCH_PERFMON_EVENTSEL_USR | ARCH_PERFMON_EVENTSEL_OS)) &&
	       (c->global_ctrl & GLOBAL_CTRL_EN_PMC(n));
}

static unsigned fixed_nibble(const struct sim_cpu *c, int i)
{
	return (unsigned)(c->fixed_ctrl >> (INTEL_FIXED_BITS_STRIDE * i)) & 0xfu;
}

static bool fixed_counting(const struct sim_cpu *c, int i)
{
	return (fixed_nibble(c, i) & (INTEL_FIXED_0_KERNEL | INTEL_FIXED_0_USER)) &&
	       (c->global_ctrl & GLOBAL_CTRL_EN_FIXED(i));
}

/*
 * AMD PERF_CTL n counts with EN and USR or OS set; on PerfMonV2 parts
 * only while GlobalCtl bit n is set too (hardware-amd.md §3.1-§3.2).
 */
static bool amd_counting(const struct sim *s, const struct sim_cpu *c, int n)
{
	uint64_t sel = c->evtsel[n];
	bool gate = !(s->model->flags & SIM_F_PERFMON_V2) || (c->global_ctrl & BIT_ULL(n));

	return (sel & ARCH_PERFMON_EVENTSEL_ENABLE) &&
	       (sel & (ARCH_PERFMON_EVENTSEL_USR | ARCH_PERFMON_EVENTSEL_OS)) && gate;
}

static uint64_t gp_value(const struct sim *s, const struct loc *l, int n, int64_t t)
{
	const struct sim_cpu *c = l->cpu;
	struct count_src src;
	uint64_t sel = c->evtsel[n];
	uint16_t code = (uint16_t)(sel & ARCH_PERFMON_EVENTSEL_EVENT);
	bool known, counting = is_amd(s) ? amd_counting(s, c, n) : gp_counting(c, n);

	if (is_amd(s))
		code |= (uint16_t)(((sel & AMD64_EVENTSEL_EVENT_HI) >> AMD64_EVENTSEL_EVENT_HI_SHIFT) << 8);
	known = sim_core_src(s, c->topo.cpu, code, (sel >> ARCH_PERFMON_EVENTSEL_UMASK_SHIFT) & 0xff,
			     &src) == 0;
	return ctr_value(&c->pmc[n], known ? &src : NULL, counting, t, s->model->gp_width);
}

/* IRPERF: instructions retired, free-running while HWCR.IRPERF_EN is set. */
static uint64_t irperf_value(const struct sim *s, const struct sim_cpu *c, int64_t t)
{
	struct count_src src = { .tl = &c->rate[EV_INSTRUCTIONS] };

	(void)s;
	return ctr_value(&c->irperf, &src, c->hwcr & MSR_K7_HWCR_IRPERF_EN, t, 64);
}

static uint64_t fixed_value(const struct sim *s, const struct loc *l, int i, int64_t t)
{
	const struct sim_cpu *c = l->cpu;
	struct count_src src;

	/* Fixed counter 3 (TOPDOWN.SLOTS, v5) is not modelled: no source, it never counts. */
	if (i >= (int)(sizeof(fixed_events) / sizeof(fixed_events[0])))
		return ctr_value(&c->fixed[i], NULL, fixed_counting(c, i), t, s->model->fixed_width);
	src = (struct count_src){ .tl = &c->rate[fixed_events[i]] };
	return ctr_value(&c->fixed[i], &src, fixed_counting(c, i), t, s->model->fixed_width);
}

/*
 * Bring counter n (fixed counter i, IRPERF) up to t: its value so far
 * becomes its base.  Done before a write changes whether or what it
 * counts; a counter whose selection does not change keeps its base, since
 * src_count() counts from 0 and any two bases give the same value.
 */
static void rebase_gp(const struct sim *s, const struct loc *l, int n, int64_t t)
{
	l->cpu->pmc[n] = (struct sim_ctr){ gp_value(s, l, n, t), t };
}

static void rebase_fixed(const struct sim *s, const struct loc *l, int64_t t)
{
	for (int i = 0; i < s->model->n_fixed; i++)
		l->cpu->fixed[i] = (struct sim_ctr){ fixed_value(s, l, i, t), t };
}

static void rebase_irperf(const struct sim *s, const struct loc *l, int64_t t)
{
	l->cpu->irperf = (struct sim_ctr){ irperf_value(s, l->cpu, t), t };
}

static void rebase_all(const struct sim *s, const struct loc *l, int64_t t)
{
	for (int n = 0; n < s->model->n_gp; n++)
		rebase_gp(s, l, n, t);
	rebase_fixed(s, l, t);
}

static int read_gp(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	*v = gp_value(s, l, i, t);
	return 0;
}

/*
 * A plain write to IA32_PMCx keeps the sign extension of its low 32 bits
 * (hardware-linux.md §2, SDM §18.2.5); IA32_A_PMCx takes the full width.
 */
static int write_gp(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	uint64_t extended = (uint64_t)(int64_t)(int32_t)(uint32_t)v;

	l->cpu->pmc[i] = (struct sim_ctr){ extended & width_mask(s->model->gp_width), t };
	return 0;
}

static int write_gp_full(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	l->cpu->pmc[i] = (struct sim_ctr){ v & width_mask(s->model->gp_width), t };
	return 0;
}

static int read_perf_caps(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)l, (void)i, (void)t;
	*v = (s->model->flags & SIM_F_FW_WRITE) ? PERF_CAP_FW_WRITES : 0;
	return 0;
}

static int read_evtsel(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)t;
	*v = l->cpu->evtsel[i];
	return 0;
}

static int write_evtsel(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	rebase_gp(s, l, i, t);
	l->cpu->evtsel[i] = v;
	return 0;
}

static int read_fixed(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	*v = fixed_value(s, l, i, t);
	return 0;
}

static int write_fixed(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	l->cpu->fixed[i] = (struct sim_ctr){ v & width_mask(s->model->fixed_width), t };
	return 0;
}

/*
 * read_FIELD and write_FIELD for a per-CPU control register kept in
 * struct sim_cpu's FIELD; a write first brings the counters it gates up
 * to t with REBASE, since what they count changes with it.
 */
#define CPU_CTL_HANDLERS(field, rebase)                                                         \
	static int read_##field(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v) \
	{                                                                                       \
		(void)s, (void)i, (void)t;                                                      \
		*v = l->cpu->field;                                                             \
		return 0;                                                                       \
	}                                                                                       \
	static int write_##field(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v) \
	{                                                                                       \
		(void)i;                                                                        \
		rebase(s, l, t);                                                                \
		l->cpu->field = v;                                                              \
		return 0;                                                                       \
	}

CPU_CTL_HANDLERS(fixed_ctrl, rebase_fixed)
CPU_CTL_HANDLERS(global_ctrl, rebase_all)   /* Intel IA32_PERF_GLOBAL_CTRL, AMD PerfMonV2 GlobalCtl */
CPU_CTL_HANDLERS(hwcr, rebase_irperf)       /* AMD HWCR: IRPERF_EN */

static int read_inuse(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)i, (void)t;
	*v = 0;
	for (int n = 0; n < s->model->n_gp; n++)
		if (l->cpu->evtsel[n] & ARCH_PERFMON_EVENTSEL_ENABLE)
			*v |= BIT_ULL(n);
	for (int f = 0; f < s->model->n_fixed; f++)
		if (fixed_nibble(l->cpu, f))
			*v |= BIT_ULL(32 + f);
	return 0;
}

/* ---- the AMD core PMU, hardware-amd.md §3.1 ---- */

/* PERF_CTL n and PERF_CTR n interleave from 0xC0010200: i = 2n select, 2n + 1 counter. */
static int read_amd_pmc(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	*v = (i & 1) ? gp_value(s, l, i / 2, t) : l->cpu->evtsel[i / 2];
	return 0;
}

static int write_amd_pmc(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	if (i & 1) {
		l->cpu->pmc[i / 2] = (struct sim_ctr){ v & width_mask(s->model->gp_width), t };
	} else {
		rebase_gp(s, l, i / 2, t);
		l->cpu->evtsel[i / 2] = v;
	}
	return 0;
}

static int read_irperf(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)i;
	*v = irperf_value(s, l->cpu, t);
	return 0;
}

/*
 * MPERF (i = 0) and APERF (i = 1): cycles in C0 at the reference and at
 * the actual rate since boot, free-running (the simulator's reading of
 * hardware-amd.md §3.1: its busy reference cycles and its cycles).
 */
static int read_amperf(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	struct count_src src = { .tl = &l->cpu->rate[i ? EV_CYCLES : EV_REF_CYCLES] };

	(void)s;
	*v = src_count(&src, t);
	return 0;
}

#define V4 (SIM_F_INTEL | SIM_F_PERFMON_V4)
#define AMD_V2 (SIM_F_AMD_PMU | SIM_F_PERFMON_V2)

const struct reg_desc sim_core_regs[] = {
	{ MSR_IA32_PERFCTR0, COUNT_GP, SIM_F_INTEL, read_gp, write_gp },
	{ MSR_IA32_PMC0, COUNT_GP, SIM_F_INTEL | SIM_F_FW_WRITE, read_gp, write_gp_full },
	{ MSR_IA32_PERF_CAPABILITIES, 1, SIM_F_INTEL, read_perf_caps, NULL },
	{ MSR_ARCH_PERFMON_EVENTSEL0, COUNT_GP, SIM_F_INTEL, read_evtsel, write_evtsel },
	{ MSR_CORE_PERF_FIXED_CTR0, COUNT_FIXED, SIM_F_INTEL, read_fixed, write_fixed },
	{ MSR_CORE_PERF_FIXED_CTR_CTRL, 1, SIM_F_INTEL, read_fixed_ctrl, write_fixed_ctrl },
	{ MSR_CORE_PERF_GLOBAL_STATUS, 1, SIM_F_INTEL, sim_read_zero, NULL },
	{ MSR_CORE_PERF_GLOBAL_CTRL, 1, SIM_F_INTEL, read_global_ctrl, write_global_ctrl },
	{ MSR_CORE_PERF_GLOBAL_OVF_CTRL, 1, SIM_F_INTEL, sim_read_zero, sim_write_ignored },
	{ MSR_CORE_PERF_GLOBAL_STATUS_SET, 1, V4, NULL, sim_write_ignored },
	{ MSR_CORE_PERF_GLOBAL_INUSE, 1, V4, read_inuse, NULL },
	{ MSR_F15H_PERF_CTL, COUNT_GP_PAIRS, SIM_F_AMD_PMU, read_amd_pmc, write_amd_pmc },
	{ MSR_AMD64_PERF_CNTR_GLOBAL_CTL, 1, AMD_V2, read_global_ctrl, write_global_ctrl },
	{ MSR_K7_HWCR, 1, SIM_F_AMD_PMU, read_hwcr, write_hwcr },
	{ MSR_F17H_IRPERF, 1, SIM_F_AMD_PMU, read_irperf, NULL },
	{ MSR_IA32_MPERF, 2, SIM_F_AMD_PMU, read_amperf, NULL },
};

const size_t sim_n_core_regs = sizeof(sim_core_regs) / sizeof(sim_core_regs[0]);
