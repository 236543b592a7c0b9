/*
 * The msr engine: see engine_msr.h for the ownership rule it applies.
 * One group per CPU (core PMU) or per uncore box; one register ledger per group,
 * so closing a group restores exactly what it changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "cpu.h"
#include "engine_msr.h"
#include "ledger.h"
#include "msr.h"
#include "msr_layout.h"
#include "xeon_uncore.h"

/*
 * Fixed counters of the gate's geometry (all_gates): the kernel's enable
 * sets one bit for each CPUID lists, though the engine claims only those of
 * its register table.
 */
#define MAX_FIXED     4
#define CORE_FIXED_EN (FIXED_CTR_CTRL_EN_OS | FIXED_CTR_CTRL_EN_USR)   /* what we write */

/*
 * Where one PMU's registers are (copied from its entry of the register
 * table, msr_layout.h, the only place they are listed), and its geometry.
 */
struct layout {
	const struct msr_layout *regs;
	bool uncore;               /* package scope: a box of the socket */
	uint32_t sel0, ctr0, fixed_ctrl, fixed_ctr0, global;
	uint32_t restore0;         /* where GP counters' values are written back (IA32_A_PMC0) */
	unsigned n_gp, gp_width, n_fixed, fixed_width;
	/*
	 * A server PCU box (hardware-linux.md §4.1): no global gate (global is
	 * 0), PCU select layout, and box_ctl read each sample in its place.
	 * The engine never writes the box's BOX_CTL (freeze, reset) or FILTER:
	 * counting needs only a select and the value found in the counter.
	 */
	bool pcu;
	uint32_t box_ctl;
};

enum slot_kind {
	SLOT_NONE,
	SLOT_GP,
	SLOT_FIXED,
};

struct slot {
	struct engine_event ev;
	enum slot_kind kind;
	unsigned index;
	uint64_t sel;              /* GP: the select we wrote, as it reads back; fixed: our nibble */
	struct counter ctr;
	bool counted_since;        /* held the counter since the previous read */
	struct engine_reading r;
};

struct engine_group {
	int cpu;                   /* the CPU the registers are reached through */
	int socket;                /* uncore: the box's socket */
	int die;                   /* and die (a PCU box is per die) */
	struct layout lay;
	struct ledger *ledger;
	int64_t last_ns;
	bool was_offline;          /* the previous read found the CPU offline */
	uint64_t gate_seen;        /* others' gate bits found set when we claimed */
	size_t n;
	struct slot *slots;
};

struct msr_engine {
	struct engine_msr_config cfg;
};

/* A reading whose interval's counts were lost: it has no value this time. */
#define LOST_INTERVAL "its count was reset or cleared by another agent, so this interval's " \
		      "counts are lost; counting again from now"

/* Fixed counter events, hardware.md §5.3 and §1.7. */
static int fixed_index(const struct layout *lay, const struct engine_event *ev)
{
	if (ev->gp_only || ev->edge || ev->inv || ev->cmask)
		return -1;
	if (lay->uncore)
		return ev->code == ENGINE_UNCORE_CLOCK && ev->umask == 0 ? 0 : -1;
	if (ev->code == 0xc0 && ev->umask == 0)
		return 0;
	if (ev->code == 0x3c && ev->umask <= 1)
		return ev->umask == 0 ? 1 : 2;
	return -1;
}

static uint64_t select_of(const struct layout *lay, const struct engine_event *ev)
{
	uint64_t v = ev->code | (uint64_t)ev->umask << PERFEVTSEL_UMASK_SHIFT |
		     (uint64_t)ev->cmask << PERFEVTSEL_CMASK_SHIFT;

	if (lay->pcu)   /* event [7:0], no umask; threshold [28:24] */
		return ev->code | PCU_CTL_EN | (ev->edge ? PCU_CTL_EDGE : 0) |
		       (ev->inv ? PCU_CTL_INV : 0) | (uint64_t)ev->cmask << PERFEVTSEL_CMASK_SHIFT;
	if (lay->uncore)
		return v | UNC_EVTSEL_EN | (ev->edge ? UNC_EVTSEL_EDGE : 0) |
		       (ev->inv ? UNC_EVTSEL_INV : 0);
	return v | PERFEVTSEL_USR | PERFEVTSEL_OS | PERFEVTSEL_EN |
	       (ev->edge ? PERFEVTSEL_EDGE : 0) | (ev->inv ? PERFEVTSEL_INV : 0);
}

static uint64_t gate_bit(const struct layout *lay, const struct slot *s)
{
	(void)lay;
	return MSR_BIT(s->kind == SLOT_FIXED ? 32 + s->index : s->index);
}

/* Every gate bit of the PMU: what the kernel's enable writes. */
static uint64_t all_gates(const struct layout *lay)
{
	return (MSR_BIT(lay->n_gp) - 1) | (MSR_BIT(lay->n_fixed) - 1) << 32;
}

static unsigned fixed_shift(const struct layout *lay, unsigned i)
{
	return lay->uncore ? 0 : FIXED_CTR_CTRL_STRIDE * i;
}

/* The enable bits of fixed counter i: set by anyone means in use. */
static uint64_t fixed_enable_mask(const struct layout *lay, unsigned i)
{
	return (lay->uncore ? UNC_FIXED_CTR_CTRL_EN : (uint64_t)CORE_FIXED_EN) << fixed_shift(lay, i);
}

static uint64_t fixed_nibble_mask(const struct layout *lay, unsigned i)
{
	return (lay->uncore ? UNC_FIXED_CTR_CTRL_EN : UINT64_C(0xf)) << fixed_shift(lay, i);
}

static uint32_t ctr_addr(const struct layout *lay, const struct slot *s)
{
	return s->kind == SLOT_FIXED ? lay->fixed_ctr0 + s->index : lay->ctr0 + s->index;
}

static bool gp_used_by_group(const struct engine_group *g, unsigned n)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->slots[i].kind == SLOT_GP && g->slots[i].index == n)
			return true;
	return false;
}

/* Make sure our gate bit is set: set by read-modify-write only when clear. */
static int open_gate(struct msr_engine *e, struct engine_group *g, struct slot *s)
{
	uint64_t v;
	int err;

	if (!g->lay.global)
		return 0;   /* a box without a gate register (the PCU) */
	err = hw_read_msr(e->cfg.hw, g->cpu, g->lay.global, &v);

	if (err == 0)
		g->gate_seen |= v & ~ledger_bits(g->ledger, g->cpu, g->lay.global);
	if (err == 0 && !(v & gate_bit(&g->lay, s)))
		err = ledger_set_bits(g->ledger, e->cfg.hw, g->cpu, g->lay.global, gate_bit(&g->lay, s));
	return err;
}

static int start_counting(struct msr_engine *e, struct engine_group *g, struct slot *s)
{
	uint64_t raw;
	int err = open_gate(e, g, s);

	if (err == 0)
		err = hw_read_msr(e->cfg.hw, g->cpu, ctr_addr(&g->lay, s), &raw);
	if (err < 0)
		return err;
	counter_init(&s->ctr, s->kind == SLOT_FIXED ? g->lay.fixed_width : g->lay.gp_width, raw);
	return 0;
}

static int claim_fixed(struct msr_engine *e, struct engine_group *g, struct slot *s, unsigned i)
{
	struct hw *hw = e->cfg.hw;
	uint64_t ctrl;
	int err = hw_read_msr(hw, g->cpu, g->lay.fixed_ctrl, &ctrl);

	if (err < 0)
		return err;
	if (ctrl & fixed_enable_mask(&g->lay, i))
		return -EBUSY;
	s->kind = SLOT_FIXED;
	s->index = i;
	s->sel = (ctrl & fixed_nibble_mask(&g->lay, i)) | fixed_enable_mask(&g->lay, i);
	err = ledger_remember(g->ledger, hw, g->cpu, ctr_addr(&g->lay, s));
	if (err == 0)
		err = ledger_set_bits(g->ledger, hw, g->cpu, g->lay.fixed_ctrl,
				   fixed_enable_mask(&g->lay, i));
	return err;
}

/*
 * Remember GP counter n's value so that close writes it back.  A plain
 * IA32_PMCx write sign-extends bit 31 (hardware-linux.md §2, SDM §18.2.5):
 * with full-width writes the value goes back through IA32_A_PMCx;
 * without, only a value that sign extension reproduces goes back through
 * IA32_PMCx, and any other is left as counted rather than corrupted.
 */
static int remember_gp(struct msr_engine *e, struct engine_group *g, unsigned n)
{
	uint64_t v, mask = g->lay.gp_width >= 64 ? UINT64_MAX : MSR_BIT(g->lay.gp_width) - 1;
	int err;

	if (g->lay.restore0 != g->lay.ctr0)
		return ledger_remember(g->ledger, e->cfg.hw, g->cpu, g->lay.restore0 + n);
	if (g->lay.uncore)
		return ledger_remember(g->ledger, e->cfg.hw, g->cpu, g->lay.ctr0 + n);
	err = hw_read_msr(e->cfg.hw, g->cpu, g->lay.ctr0 + n, &v);
	if (err < 0)
		return err;
	if ((v & mask) != ((uint64_t)(int64_t)(int32_t)(uint32_t)v & mask))
		return 0;
	return ledger_remember(g->ledger, e->cfg.hw, g->cpu, g->lay.ctr0 + n);
}

static int claim_gp(struct msr_engine *e, struct engine_group *g, struct slot *s, unsigned n)
{
	struct hw *hw = e->cfg.hw;
	uint64_t sel, want = select_of(&g->lay, &s->ev);
	int err = hw_read_msr(hw, g->cpu, g->lay.sel0 + n, &sel);

	if (err < 0)
		return err;
	if (sel & PERFEVTSEL_EN)      /* EN is bit 22 in both PMUs */
		return -EBUSY;
	if (g->lay.uncore && s->ev.occ_reset)
		want |= UNC_EVTSEL_OCC_CTR_RST;
	s->kind = SLOT_GP;
	s->index = n;
	s->sel = want & ~g->lay.regs->sel_write_only;   /* as it reads back */
	err = remember_gp(e, g, n);
	if (err == 0)
		err = ledger_write(g->ledger, hw, g->cpu, g->lay.sel0 + n, want);
	return err;
}

/* Give up whatever the slot holds without writing: it is another agent's now. */
static void forget(struct engine_group *g, struct slot *s)
{
	if (s->kind == SLOT_GP)
		ledger_forget(g->ledger, g->cpu, g->lay.sel0 + s->index);
	else if (s->kind == SLOT_FIXED)
		ledger_forget_bits(g->ledger, g->cpu, g->lay.fixed_ctrl,
				fixed_enable_mask(&g->lay, s->index));
	if (s->kind == SLOT_FIXED)
		ledger_forget(g->ledger, g->cpu, ctr_addr(&g->lay, s));
	else if (s->kind == SLOT_GP)
		ledger_forget(g->ledger, g->cpu, g->lay.restore0 + s->index);   /* if remembered */
	s->kind = SLOT_NONE;
	s->counted_since = false;
}

/* Find the slot a free counter: its fixed counter first, then any free GP counter. */
static void try_claim(struct msr_engine *e, struct engine_group *g, struct slot *s)
{
	int fi = fixed_index(&g->lay, &s->ev);
	int err = -EBUSY;

	if (fi >= 0 && (unsigned)fi < g->lay.n_fixed && (unsigned)fi < g->lay.regs->max_fixed)
		err = claim_fixed(e, g, s, (unsigned)fi);
	if (err == -EBUSY && !(g->lay.uncore && fi >= 0)) {   /* UCLK exists only fixed */
		for (unsigned n = 0; n < g->lay.n_gp && err == -EBUSY; n++) {
			if (gp_used_by_group(g, n))
				continue;
			err = claim_gp(e, g, s, n);
			if (err == -EBUSY)
				s->kind = SLOT_NONE;
		}
	}
	if (err == 0)
		err = start_counting(e, g, s);
	if (err == 0) {
		s->r.state = ENGINE_COUNTING;
		s->r.reason = NULL;
		s->r.err = 0;
		s->r.fault = ENGINE_FAULT_NONE;
		return;
	}
	forget(g, s);
	if (err == -EBUSY) {
		if (s->r.state != ENGINE_YIELDED) {
			s->r.state = ENGINE_WAITING;
			s->r.reason = "every counter that can count it is in use by another agent";
		}
	} else {
		s->r.state = ENGINE_FAILED;
		s->r.reason = "the hardware refused the counter's registers";
		s->r.err = err;
		s->r.fault = ENGINE_FAULT_PROGRAM;
	}
}

/* Is the counter still ours?  1 yes, 0 taken (enabled by another), -1 cleared by another. */
static int check_own(struct msr_engine *e, struct engine_group *g, const struct slot *s, int *err)
{
	uint64_t v;

	*err = hw_read_msr(e->cfg.hw, g->cpu, s->kind == SLOT_GP ? g->lay.sel0 + s->index :
					      g->lay.fixed_ctrl, &v);
	if (*err < 0)
		return 1;   /* unknown: keep it, report the error */
	if (s->kind == SLOT_GP)
		return v == s->sel ? 1 : (v & PERFEVTSEL_EN) ? 0 : -1;
	v &= fixed_nibble_mask(&g->lay, s->index);
	if (v == s->sel)
		return 1;
	return (v & fixed_enable_mask(&g->lay, s->index)) ? 0 : -1;
}

/*
 * Our gate bit found clear.  If we set it (the ledger holds it), someone
 * cleared it: set it again.  If it was set when we claimed the counter, the
 * kernel manages the gate and a clear bit is its transient disable (every
 * perf disable and PMI, hardware-linux.md §1.1): the counter kept its count
 * and the next enable sets every bit again, so nothing is written.
 */
static void check_gate(struct msr_engine *e, struct engine_group *g, struct slot *s,
		       uint64_t global)
{
	uint64_t bit = gate_bit(&g->lay, s), ours = ledger_bits(g->ledger, g->cpu, g->lay.global);

	if ((global & all_gates(&g->lay)) == all_gates(&g->lay) &&
	    (global & ~ours & ~bit & ~g->gate_seen)) {
		/*
		 * Every gate bit is set, some by someone else since our claims:
		 * that is the kernel's wholesale enable (intel_ctrl,
		 * 0x1000000FF; hardware-linux.md §1.1, §1.3), so a bit we set
		 * inside one of its disable windows is its to keep, and
		 * restore leaves it.  Bits another agent had set before our
		 * claims (which ours may complete) are no such sign.
		 */
		if (ours & bit)
			ledger_forget_bits(g->ledger, g->cpu, g->lay.global, bit);
		return;
	}
	if (!(global & bit) && (ours & bit))
		ledger_set_bits(g->ledger, e->cfg.hw, g->cpu, g->lay.global, bit);
}

/*
 * Policy reclaim of a fixed counter: our nibble gets exactly its value
 * again.  Setting our enable bits would not do, since the taker's other
 * bits (PMI) in the nibble must go too, or the next read sees a taker
 * again.  The register is written directly: the ledger (and the journal)
 * still hold our enable bits of it from the claim, so restore clears the
 * nibble to what it was then.
 */
static int rewrite_nibble(struct msr_engine *e, struct engine_group *g, const struct slot *s)
{
	uint64_t v;
	int err = hw_read_msr(e->cfg.hw, g->cpu, g->lay.fixed_ctrl, &v);
	uint64_t want = (v & ~fixed_nibble_mask(&g->lay, s->index)) | s->sel;

	if (err == 0 && want != v)
		err = hw_write_msr(e->cfg.hw, g->cpu, g->lay.fixed_ctrl, want);
	return err;
}

static void read_slot(struct msr_engine *e, struct engine_group *g, struct slot *s,
		      uint64_t global, bool have_global, uint64_t interval_ns, bool returning)
{
	uint64_t raw;
	int err, own;
	bool kept;

	s->r.delta = 0;
	s->r.raw_delta = 0;
	s->r.enabled_ns = interval_ns;
	s->r.running_ns = 0;
	if (s->kind == SLOT_NONE) {
		try_claim(e, g, s);
		s->counted_since = s->kind != SLOT_NONE;
		return;
	}
	err = hw_read_msr(e->cfg.hw, g->cpu, ctr_addr(&g->lay, s), &raw);
	own = err < 0 ? 1 : check_own(e, g, s, &err);
	if (err < 0) {
		s->r.err = err;
		s->r.fault = ENGINE_FAULT_READ;
		s->r.state = ENGINE_FAILED;
		s->r.reason = "the counter could not be read";
		return;
	}
	if (own == 1 && returning &&
	    (raw & counter_width_mask(s->ctr.width_bits)) < s->ctr.last_raw) {
		/*
		 * Back from offline with a lower count: it was reset; the
		 * interval's counts are lost, so it has no value (not 0).
		 */
		counter_rebase(&s->ctr, raw);
		s->r.delta = 0;
		s->r.state = ENGINE_WAITING;
		s->r.reason = LOST_INTERVAL;
		s->r.err = 0;
		s->r.fault = ENGINE_FAULT_NONE;
		s->counted_since = false;
		if (have_global)
			check_gate(e, g, s, global);
		return;
	}
	if (own == 1) {
		s->r.delta = counter_add(&s->ctr, raw);
		s->r.raw_delta = s->r.delta;
		s->r.total += s->r.delta;
		s->r.running_ns = s->counted_since ? interval_ns : 0;
		s->r.state = ENGINE_COUNTING;
		s->r.reason = NULL;
		s->r.err = 0;
		s->r.fault = ENGINE_FAULT_NONE;
		s->counted_since = true;
		if (have_global)
			check_gate(e, g, s, global);
		return;
	}
	if (own == 0)
		s->r.conflicts++;
	else
		s->r.resets++;
	kept = own == -1 && g->lay.regs->counts_kept &&
	       (raw & counter_width_mask(s->ctr.width_bits)) >= s->ctr.last_raw;
	if (kept) {
		/* The counter froze at the clear, never rewritten: its count is this interval's. */
		s->r.delta = counter_add(&s->ctr, raw);
		s->r.raw_delta = s->r.delta;
		s->r.total += s->r.delta;
		s->r.running_ns = s->counted_since ? interval_ns : 0;
	}
	if (own == 0 && e->cfg.policy == ENGINE_RECLAIM) {
		if (s->kind == SLOT_GP)
			err = ledger_write(g->ledger, e->cfg.hw, g->cpu, g->lay.sel0 + s->index, s->sel);
		else
			err = rewrite_nibble(e, g, s);
		if (err == 0)
			err = hw_read_msr(e->cfg.hw, g->cpu, ctr_addr(&g->lay, s), &raw);
		if (err == 0) {
			counter_rebase(&s->ctr, raw);
			s->r.state = ENGINE_COUNTING;
			s->r.reason = NULL;
			return;
		}
	}
	forget(g, s);
	s->r.state = ENGINE_YIELDED;
	s->r.reason = own == 0 ? "another agent took its counter" :
		      "another agent reset its counter (perf's Nehalem/Westmere workaround, or "
		      "a release)";
	try_claim(e, g, s);   /* a counter that was cleared is free again at once */
	if (s->kind != SLOT_NONE) {
		/* Counting again from now; a reset's interval is lost unless the count was kept. */
		s->r.state = own == -1 && !kept ? ENGINE_WAITING : ENGINE_COUNTING;
		s->r.reason = s->r.state == ENGINE_WAITING ? LOST_INTERVAL : NULL;
	} else {
		s->r.state = ENGINE_YIELDED;
	}
}

/*
 * The uncore box is package scope (a PCU box: die scope): when the CPU it
 * is reached through goes offline, reach it through another online CPU of
 * its socket and die, and move the ledger's entries with it.  Returns 0, or -ENXIO when none is online.
 */
static int move_box(struct msr_engine *e, struct engine_group *g)
{
	struct hw_cpu cpus[1024];
	int n;

	if (!g->lay.uncore || hw_enumerate(e->cfg.hw, cpus, 1024, &n) < 0)
		return -ENXIO;
	for (int i = 0; i < n && i < 1024; i++) {
		if (cpus[i].socket != g->socket || cpus[i].die != g->die || !cpus[i].online ||
		    cpus[i].cpu == g->cpu)
			continue;
		ledger_move_cpu(g->ledger, g->cpu, cpus[i].cpu);
		g->cpu = cpus[i].cpu;
		return 0;
	}
	return -ENXIO;
}

static int op_read(void *ctx, struct engine_group *g, struct engine_reading *readings)
{
	struct msr_engine *e = ctx;
	int64_t now = e->cfg.now_ns(e->cfg.now_arg);
	uint64_t interval = now > g->last_ns ? (uint64_t)(now - g->last_ns) : 0;
	uint64_t global = 0;
	/* The gate register, or for a box without one (the PCU) its BOX_CTL, read in its place. */
	uint32_t probe = g->lay.global ? g->lay.global : g->lay.box_ctl;
	int err = hw_read_msr(e->cfg.hw, g->cpu, probe, &global);

	/* -ENXIO: the CPU is offline (checked only then, to spare a sysfs read per sample) */
	if (err == -ENXIO && hw_cpu_online(e->cfg.hw, g->cpu) == 0) {
		if (move_box(e, g) < 0) {
			g->was_offline = true;
			return -ENXIO;
		}
		err = hw_read_msr(e->cfg.hw, g->cpu, probe, &global);
	}
	if (err == -ENXIO) {
		g->was_offline = true;
		return -ENXIO;
	}
	g->last_ns = now;
	for (size_t i = 0; i < g->n; i++) {
		read_slot(e, g, &g->slots[i], global, err == 0 && g->lay.global, interval,
			  g->was_offline);
		readings[i] = g->slots[i].r;
	}
	g->was_offline = false;
	return 0;
}

/* The layout of table entry m; for a GP counter whose width CPUID tells, gp_width 0. */
static struct layout from_table(const struct msr_layout *m)
{
	return (struct layout){
		.regs = m, .uncore = m->uncore, .sel0 = m->sel0, .ctr0 = m->ctr0,
		.fixed_ctrl = m->fixed_ctrl, .fixed_ctr0 = m->fixed_ctr0, .global = m->global,
		.restore0 = m->ctr0, .n_gp = m->max_gp, .gp_width = m->gp_width,
		.n_fixed = m->max_fixed, .fixed_width = m->fixed_width, .pcu = m->pcu,
		.box_ctl = m->box_ctl,
	};
}

/* The PCU box at the generation's fixed MSR addresses (xeon_uncore.h), from the register table. */
static int pcu_layout(struct msr_engine *e, struct layout *lay, char *err, size_t errlen)
{
	const struct msr_layout *regs = NULL;
	const struct xeon_uncore *xu;
	struct cpu_info info;
	int r = cpu_detect(e->cfg.hw, &info, err, errlen);

	if (r < 0)
		return r;
	xu = xeon_uncore_find(info.family, info.model);
	if (xu && xu->pcu_msr)
		regs = msr_layout_pcu(xu->pcu_msr->ctl0, xu->pcu_msr->ctr0, xu->pcu_msr->box_ctl);
	if (!regs) {
		snprintf(err, errlen, "%s (family %u model 0x%x) has no PCU box at fixed MSR "
			 "addresses", info.microarch ? info.microarch : "this CPU", info.family,
			 info.model);
		return -ENODEV;
	}
	*lay = from_table(regs);
	return 0;
}

static int layout_of(struct msr_engine *e, enum engine_pmu pmu, int cpu, struct layout *lay,
		     char *err, size_t errlen)
{
	struct cpu_perfmon pm;
	uint64_t caps;
	int r;

	if (pmu == ENGINE_PMU_IMC) {
		snprintf(err, errlen, "the memory controller's counters are in PCI configuration "
			 "space or MMIO, which the msr driver does not reach: count them with perf");
		return -ENODEV;
	}
	if (pmu == ENGINE_PMU_PCU)
		return pcu_layout(e, lay, err, errlen);
	if (pmu == ENGINE_PMU_NHM_UNCORE) {
		*lay = from_table(&msr_layout_nhm_uncore);
		return 0;
	}
	r = cpu_perfmon_read(e->cfg.hw, cpu, &pm);
	if (r < 0) {
		snprintf(err, errlen, "cpu %d: CPUID leaf 0xa: %s", cpu, hw_hint(r, HW_OP_READ));
		return r;
	}
	if (pm.version < 2 || pm.n_gp == 0) {
		snprintf(err, errlen, "cpu %d: no architectural performance monitoring v2", cpu);
		return -ENOTSUP;
	}
	/*
	 * A plain write to IA32_PMCx sign-extends bit 31 (hardware-linux.md
	 * §2, SDM §18.2.5): a GP counter's value can be put back only through
	 * IA32_A_PMCx, where IA32_PERF_CAPABILITIES says full-width writes
	 * exist.  Elsewhere the counter keeps what it counted.
	 */
	if (hw_read_msr(e->cfg.hw, cpu, IA32_PERF_CAPABILITIES, &caps) < 0)
		caps = 0;
	*lay = from_table(&msr_layout_core);
	if (caps & PERF_CAP_FW_WRITE)
		lay->restore0 = msr_layout_core.ctr_alias0;
	if (pm.n_gp < lay->n_gp)
		lay->n_gp = pm.n_gp;
	lay->gp_width = pm.gp_width_bits;
	lay->n_fixed = pm.n_fixed < MAX_FIXED ? pm.n_fixed : MAX_FIXED;
	lay->fixed_width = pm.fixed_width_bits;
	return 0;
}

static int op_close(void *ctx, struct engine_group *g, unsigned *ret_failed)
{
	struct msr_engine *e = ctx;
	int r;

	if (ret_failed)
		*ret_failed = 0;
	if (!g)
		return 0;
	/* A box whose CPU went offline since the last read is restored through another. */
	if (g->lay.uncore && hw_cpu_online(e->cfg.hw, g->cpu) == 0)
		(void)move_box(e, g);
	/* What cannot be reached is kept by the ledger as left unrestored (ledger.h). */
	r = ledger_restore(g->ledger, e->cfg.hw, ret_failed);
	ledger_free(g->ledger);
	free(g->slots);
	free(g);
	return r;
}

/* The socket and die of cpu into *ret_die; the socket, or -1 when unknown. */
static int socket_of(struct msr_engine *e, int cpu, int *ret_die)
{
	struct hw_cpu cpus[1024];
	int n;

	*ret_die = 0;
	if (hw_enumerate(e->cfg.hw, cpus, 1024, &n) < 0)
		return -1;
	for (int i = 0; i < n && i < 1024; i++)
		if (cpus[i].cpu == cpu) {
			*ret_die = cpus[i].die;
			return cpus[i].socket;
		}
	return -1;
}

static int op_open(void *ctx, enum engine_pmu pmu, int target, const struct engine_event *events,
		   size_t n, struct engine_group **ret_group, char *err, size_t errlen)
{
	struct msr_engine *e = ctx;
	struct engine_group *g = calloc(1, sizeof(*g));
	int r;

	if (!g || !(g->slots = calloc(n ? n : 1, sizeof(*g->slots))) ||
	    !(g->ledger = ledger_new())) {
		if (g)
			free(g->slots);
		free(g);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->cpu = target;
	g->socket = -1;
	g->n = n;
	r = layout_of(e, pmu, target, &g->lay, err, errlen);
	if (r < 0) {
		op_close(e, g, NULL);
		return r;
	}
	if (g->lay.uncore)
		g->socket = socket_of(e, target, &g->die);
	g->last_ns = e->cfg.now_ns(e->cfg.now_arg);
	for (size_t i = 0; i < n; i++) {
		g->slots[i].ev = events[i];
		try_claim(e, g, &g->slots[i]);
		g->slots[i].counted_since = g->slots[i].kind != SLOT_NONE;
	}
	*ret_group = g;
	return 0;
}

static void op_destroy(void *ctx)
{
	free(ctx);
}

/* The ledger's hint: it knows the errors its crash journal returned. */
static const char *op_hint(void *ctx, int err, enum engine_fault fault)
{
	(void)ctx;
	return ledger_hint(err, fault == ENGINE_FAULT_READ ? HW_OP_READ : HW_OP_WRITE);
}

static const struct engine_ops msr_engine_ops = {
	.has_conflicts = true,
	.kind = ENGINE_MSR,
	.open = op_open,
	.read = op_read,
	.close = op_close,
	.destroy = op_destroy,
	.hint = op_hint,
};

int engine_msr_new(const struct engine_msr_config *config, struct engine *ret_engine)
{
	struct msr_engine *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->cfg = *config;
	*ret_engine = (struct engine){ .ops = &msr_engine_ops, .ctx = e };
	return 0;
}
