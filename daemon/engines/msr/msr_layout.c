/*
 * The msr engine's register table (msr_layout.h): every address and bit
 * from hardware.md and hardware-linux.md by way of msr.h.
 */
#include "msr.h"
#include "msr_layout.h"

/*
 * hardware.md §5.3-5.4.  Eight GP counters at most; the fixed counters of
 * instructions, cycles and reference cycles (a fourth, where CPUID lists
 * one, is never claimed).  The gate bits are each counter's enable; in
 * IA32_FIXED_CTR_CTRL each counter's 4-bit nibble (the engine sets the
 * enable bits, and a reclaim rewrites the whole nibble).
 */
const struct msr_layout msr_layout_core = {
	.name = "core", .sel0 = IA32_PERFEVTSEL0, .ctr0 = IA32_PMC0, .ctr_alias0 = IA32_A_PMC0,
	.max_gp = 8, .fixed_ctrl = IA32_FIXED_CTR_CTRL, .fixed_ctr0 = IA32_FIXED_CTR0,
	.max_fixed = 3, .global = IA32_PERF_GLOBAL_CTRL,
	.global_shared = 0xff | (UINT64_C(7) << 32), .fixed_ctrl_shared = 0xfff,
	.fixed_field0 = MSR_BIT(FIXED_CTR_CTRL_STRIDE) - 1, .fixed_stride = FIXED_CTR_CTRL_STRIDE,
};

/*
 * hardware.md §1.3-1.7: eight GP counters and one fixed (UCLK) counter of
 * 48 bits; the engine sets one enable bit in the fixed control (earlier
 * versions owned the register).  OCC_CTR_RST (bit 17) of a select always
 * reads 0 (§1.4).
 */
const struct msr_layout msr_layout_nhm_uncore = {
	.name = "nhm-uncore", .uncore = true, .sel0 = MSR_UNCORE_PERFEVTSEL0,
	.ctr0 = MSR_UNCORE_PMC0, .max_gp = UNCORE_N_COUNTERS, .gp_width = UNCORE_COUNTER_WIDTH,
	.fixed_ctrl = MSR_UNCORE_FIXED_CTR_CTRL, .fixed_ctr0 = MSR_UNCORE_FIXED_CTR0,
	.max_fixed = 1, .fixed_width = UNCORE_COUNTER_WIDTH, .global = MSR_UNCORE_PERF_GLOBAL_CTRL,
	.global_shared = UNC_GLOBAL_CTRL_EN_FC0 | (MSR_BIT(UNCORE_N_COUNTERS) - 1),
	.fixed_ctrl_shared = UNC_FIXED_CTR_CTRL_EN, .fixed_ctrl_owned_too = true,
	.fixed_field0 = UNC_FIXED_CTR_CTRL_EN,
	.sel_write_only = UNC_EVTSEL_OCC_CTR_RST, .counts_kept = true,
};

/*
 * hardware-linux.md §4.1: the server PCU box, four 48-bit counters and
 * their selects; no gate register, and the engine never writes its
 * BOX_CTL (freeze, reset) or FILTER.
 */
static const struct msr_layout pcu_snbep = {
	.name = "pcu-snb-ep", .uncore = true, .pcu = true, .sel0 = SNBEP_PCU_MSR_CTL0,
	.ctr0 = SNBEP_PCU_MSR_CTR0, .max_gp = PCU_N_COUNTERS, .gp_width = PCU_COUNTER_WIDTH,
	.box_ctl = SNBEP_PCU_MSR_BOX_CTL,
};

static const struct msr_layout pcu_hswep = {
	.name = "pcu-hsx", .uncore = true, .pcu = true, .sel0 = HSWEP_PCU_MSR_CTL0,
	.ctr0 = HSWEP_PCU_MSR_CTR0, .max_gp = PCU_N_COUNTERS, .gp_width = PCU_COUNTER_WIDTH,
	.box_ctl = HSWEP_PCU_MSR_BOX_CTL,
};

static const struct msr_layout *const layouts[] = {
	&msr_layout_core, &msr_layout_nhm_uncore, &pcu_snbep, &pcu_hswep,
};

#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

const struct msr_layout *msr_layout_pcu(uint32_t ctl0, uint32_t ctr0, uint32_t box_ctl)
{
	for (size_t i = 0; i < N_LAYOUTS; i++)
		if (layouts[i]->pcu && layouts[i]->sel0 == ctl0 && layouts[i]->ctr0 == ctr0 &&
		    layouts[i]->box_ctl == box_ctl)
			return layouts[i];
	return NULL;
}

uint64_t msr_layout_fixed_field(const struct msr_layout *l, unsigned i)
{
	return l->fixed_field0 << (l->fixed_stride * i);
}

/* hardware.md §5.3 and §1.3: the fixed counters' enables from bit 32 up, in both gates. */
uint64_t msr_layout_fixed_gate(unsigned i)
{
	return MSR_BIT(32 + i);
}

/* Whether msr is one of the n registers from first on (none when first is 0). */
static bool in_range(uint32_t msr, uint32_t first, unsigned n)
{
	return first && msr - first < n;
}

bool msr_layout_reg(uint32_t msr, struct msr_reg *ret_reg)
{
	for (size_t i = 0; i < N_LAYOUTS; i++) {
		const struct msr_layout *l = layouts[i];

		*ret_reg = (struct msr_reg){ .layout = l };
		if (in_range(msr, l->sel0, l->max_gp)) {
			ret_reg->write_only = l->sel_write_only;
			return true;
		}
		if (in_range(msr, l->ctr0, l->max_gp) || in_range(msr, l->ctr_alias0, l->max_gp) ||
		    in_range(msr, l->fixed_ctr0, l->max_fixed))
			return true;
		if (in_range(msr, l->fixed_ctrl, 1) || in_range(msr, l->global, 1)) {
			bool fixed = msr == l->fixed_ctrl;

			ret_reg->shared = true;
			ret_reg->shared_bits = fixed ? l->fixed_ctrl_shared : l->global_shared;
			ret_reg->owned_too = fixed && l->fixed_ctrl_owned_too;
			return true;
		}
	}
	return false;
}
