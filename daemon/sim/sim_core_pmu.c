/*
 * The simulated core PMU (hardware.md §5.2-5.4), one per logical CPU:
 * general-purpose and fixed counters, their selects and global controls.
 */
#include <errno.h>

#include "sim_machine.h"

/* Architectural events, hardware.md §5.2. */
static const struct {
	uint8_t code, umask;
} core_event_codes[EV_COUNT] = {
	[EV_INSTRUCTIONS] = { 0xc0, 0x00 },
	[EV_CYCLES] = { 0x3c, 0x00 },
	[EV_REF_CYCLES] = { 0x3c, 0x01 },
	[EV_LLC_REFS] = { 0x2e, 0x4f },
	[EV_LLC_MISSES] = { 0x2e, 0x41 },
	[EV_BRANCHES] = { 0xc4, 0x00 },
	[EV_BRANCH_MISSES] = { 0xc5, 0x00 },
};

/* Fixed counters 0..2, hardware.md §5.3. */
static const enum core_event fixed_events[] = { EV_INSTRUCTIONS, EV_CYCLES, EV_REF_CYCLES };

int sim_core_src(const struct sim *s, int cpu, uint8_t code, uint8_t umask,
		 struct count_src *ret)
{
	for (int e = 0; e < EV_COUNT; e++) {
		if (core_event_codes[e].code != code || core_event_codes[e].umask != umask)
			continue;
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

static uint64_t gp_value(const struct sim *s, const struct loc *l, int n, int64_t t)
{
	const struct sim_cpu *c = l->cpu;
	struct count_src src;
	uint64_t sel = c->evtsel[n];
	bool known = sim_core_src(s, c->topo.cpu, sel & 0xff, (sel >> 8) & 0xff, &src) == 0;

	return ctr_value(&c->pmc[n], known ? &src : NULL, gp_counting(c, n), t, s->model->gp_width);
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

static void core_rebase(const struct sim *s, const struct loc *l, int64_t t)
{
	struct sim_cpu *c = l->cpu;

	for (int n = 0; n < s->model->n_gp; n++)
		c->pmc[n] = (struct sim_ctr){ gp_value(s, l, n, t), t };
	for (int i = 0; i < s->model->n_fixed; i++)
		c->fixed[i] = (struct sim_ctr){ fixed_value(s, l, i, t), t };
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

	core_rebase(s, l, t);
	l->cpu->pmc[i] = (struct sim_ctr){ extended & width_mask(s->model->gp_width), t };
	return 0;
}

static int write_gp_full(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	core_rebase(s, l, t);
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
	core_rebase(s, l, t);
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
	core_rebase(s, l, t);
	l->cpu->fixed[i] = (struct sim_ctr){ v & width_mask(s->model->fixed_width), t };
	return 0;
}

static int read_fixed_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->cpu->fixed_ctrl;
	return 0;
}

static int write_fixed_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	core_rebase(s, l, t);
	l->cpu->fixed_ctrl = v;
	return 0;
}

static int read_global_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->cpu->global_ctrl;
	return 0;
}

static int write_global_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	core_rebase(s, l, t);
	l->cpu->global_ctrl = v;
	return 0;
}

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

#define V4 (SIM_F_INTEL | SIM_F_PERFMON_V4)

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
};

const size_t sim_n_core_regs = sizeof(sim_core_regs) / sizeof(sim_core_regs[0]);
