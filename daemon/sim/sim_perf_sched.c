/*
 * The simulated kernel's perf scheduler (sim_perf_int.h): the counters
 * each event may use, placing groups in list order, enabled and running
 * times, rotation of groups that do not fit, and hotplug.
 */
#include <errno.h>
#include <string.h>

#include "sim_perf_int.h"

/* ---- counters ---- */

static uint32_t ctr_msr(const struct sim_perf *p, const struct ctx *c, int slot)
{
	if (c->uncore)
		return slot >= FIXED_SLOT(0) ? NHM_UNC_FIXED_CTR : NHM_UNC_UNCORE_PMC0 + (uint32_t)slot;
	if (p->m->flags & SIM_F_AMD_PMU)
		return MSR_F15H_PERF_CTR + 2 * (uint32_t)slot;
	return slot >= FIXED_SLOT(0) ? MSR_CORE_PERF_FIXED_CTR0 + (uint32_t)(slot - FIXED_SLOT(0)) :
				       MSR_IA32_PERFCTR0 + (uint32_t)slot;
}

static uint64_t ctr_mask(const struct sim_perf *p, const struct ctx *c, int slot)
{
	int w = c->uncore ? NHM_UNC_CTR_BITS :
		slot >= FIXED_SLOT(0) ? p->m->fixed_width : p->m->gp_width;

	return w >= 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
}

static uint64_t ctr_read(struct sim_perf *p, const struct ctx *c, int slot, int64_t t)
{
	uint64_t v = 0;

	p->io.read(p->io_ctx, c->cpu, ctr_msr(p, c, slot), &v, t);
	return v;
}

/*
 * An msr PMU event's free-running value (arch/x86/events/msr.c): the TSC
 * at the reference rate, or the MSR of APERF, MPERF, IRPERF.
 */
static uint64_t msr_event_read(struct sim_perf *p, const struct ctx *c, uint64_t config, int64_t t)
{
	uint32_t msr = config == PERF_MSR_APERF ? MSR_IA32_APERF :
		       config == PERF_MSR_MPERF ? MSR_IA32_MPERF : MSR_F17H_IRPERF;
	uint64_t v = 0;

	if (config == PERF_MSR_TSC)
		return (uint64_t)((unsigned __int128)(t > 0 ? t : 0) * (uint64_t)p->m->ref_hz /
				  1000000000);
	p->io.read(p->io_ctx, c->cpu, msr, &v, t);
	return v;
}

/* A server box's count of config so far; 0 for an event the model lacks. */
static uint64_t box_read(struct sim_perf *p, const struct ctx *c, uint64_t config, int64_t t)
{
	uint64_t v = 0;

	if (c->box == BOX_MSR)
		return msr_event_read(p, c, config, t);
	if (p->io.box_count(p->io_ctx, c->box == BOX_IMC, c->socket, c->index, config, t, &v) < 0)
		return 0;
	return v;
}

/* What e has counted up to t. */
uint64_t sim_perf_ev_value(struct sim_perf *p, const struct pev *e, int64_t t)
{
	const struct ctx *c = &p->ctxs[e->ctx];

	if (e->slot == NO_SLOT)
		return e->count;
	if (c->box)
		return e->count + (box_read(p, c, e->config, t) - e->start);
	return e->count + ((ctr_read(p, c, e->slot, t) - e->start) & ctr_mask(p, c, e->slot));
}

/* Which counters e may use, as a slot mask. */
static uint32_t allowed_slots(const struct sim_perf *p, const struct ctx *c, const struct pev *e)
{
	uint32_t gp;

	if (c->box == BOX_PCU)
		return (1u << BOX_N_COUNTERS) - 1;
	if (c->box == BOX_MSR)
		return (1u << MAX_SLOTS) - 1;
	if (c->box == BOX_IMC)
		return e->config == UNC_CLOCK ? 1u << FIXED_SLOT(0) : (1u << BOX_N_COUNTERS) - 1;
	if (c->uncore)
		return e->config == UNC_CLOCK ? 1u << FIXED_SLOT(0) :
		       (1u << NHM_UNC_NUM_COUNTERS) - 1;
	gp = (1u << p->m->n_gp) - 1;
	if (!(p->m->flags & SIM_F_INTEL))
		return gp;   /* AMD: no fixed counters */
	if (e->config == REF_PSEUDO)
		return p->m->n_fixed > 2 ? 1u << FIXED_SLOT(2) : 0;
	if (e->config == 0xc0 && p->m->n_fixed > 0)
		return gp | 1u << FIXED_SLOT(0);
	if (e->config == 0x3c && p->m->n_fixed > 1)
		return gp | 1u << FIXED_SLOT(1);
	return gp;
}

/* Place the members of leader into free slots (fixed first); false when one does not fit. */
bool sim_perf_assign_group(const struct sim_perf *p, const struct ctx *c, int leader,
			 uint32_t *free_slots, int *ret_slots)
{
	uint32_t avail = *free_slots;
	int k = 0;

	for (int i = leader; i >= 0; i = p->ev[i].next, k++) {
		uint32_t ok = allowed_slots(p, c, &p->ev[i]) & avail;
		uint32_t fixed = ok & ~((1u << FIXED_SLOT(0)) - 1);
		int slot;

		if (!ok)
			return false;
		slot = __builtin_ctz(fixed ? fixed : ok);
		avail &= ~(1u << slot);
		ret_slots[k] = slot;
	}
	*free_slots = avail;
	return true;
}

uint32_t sim_perf_all_slots(const struct sim_perf *p, const struct ctx *c)
{
	if (c->box == BOX_PCU)
		return (1u << BOX_N_COUNTERS) - 1;
	if (c->box == BOX_MSR)
		return (1u << MAX_SLOTS) - 1;   /* software context: never short of counters */
	if (c->box == BOX_IMC)
		return ((1u << BOX_N_COUNTERS) - 1) | 1u << FIXED_SLOT(0);
	if (c->uncore)
		return ((1u << NHM_UNC_NUM_COUNTERS) - 1) | 1u << FIXED_SLOT(0);
	return ((1u << p->m->n_gp) - 1) |
	       (((1u << p->m->n_fixed) - 1) << FIXED_SLOT(0));
}

/* ---- times ---- */

static bool group_on(const struct sim_perf *p, int leader)
{
	return p->ev[leader].slot != NO_SLOT;
}

void sim_perf_update_times(struct sim_perf *p, int leader, int64_t t)
{
	struct pev *l = &p->ev[leader];
	uint64_t dt = t > l->stamp ? (uint64_t)(t - l->stamp) : 0;

	if (l->enabled && !l->dead) {
		l->time_enabled += dt;
		if (group_on(p, leader))
			l->time_running += dt;
	}
	l->stamp = t;
}

/* ---- scheduling ---- */

static void program_core(struct sim_perf *p, struct ctx *c, uint32_t gp_mask, const uint64_t *gp_sel,
			 uint32_t fixed_off, uint32_t fixed_on, int64_t t)
{
	uint64_t fixed_ctrl = SIM_KERNEL_KEEP, cur = 0;

	if (fixed_off | fixed_on) {
		/* From the kernel's cache, not the register: written whole (hardware-linux.md §6). */
		cur = sim_kernel_fixed_ctrl(p->k, c->cpu);
		for (int i = 0; i < p->m->n_fixed; i++) {
			uint64_t nib = UINT64_C(0xf) << (INTEL_FIXED_BITS_STRIDE * i);

			if (fixed_off & (1u << i))
				cur &= ~nib;
			if (fixed_on & (1u << i))
				cur = (cur & ~nib) |
				      (uint64_t)FIXED_NIBBLE_PERF << (INTEL_FIXED_BITS_STRIDE * i);
		}
		fixed_ctrl = cur;
	}
	sim_kernel_core_events(p->k, c->cpu, gp_mask, gp_sel, fixed_ctrl, fixed_on, t);
}

/* nhm_uncore_msr_disable_box, disable_event / enable_event, enable_box (§1.3). */
static void program_uncore(struct sim_perf *p, struct ctx *c, uint32_t off, const uint64_t *sel,
			   uint32_t on, int64_t t)
{
	p->io.write(p->io_ctx, c->cpu, NHM_UNC_PERF_GLOBAL_CTL, 0, t);
	for (int n = 0; n < NHM_UNC_NUM_COUNTERS; n++) {
		if (off & (1u << n))
			p->io.write(p->io_ctx, c->cpu, NHM_UNC_PERFEVTSEL0 + (uint32_t)n, 0, t);
		if (on & (1u << n)) {
			p->io.write(p->io_ctx, c->cpu, NHM_UNC_UNCORE_PMC0 + (uint32_t)n, 0, t);
			p->io.write(p->io_ctx, c->cpu, NHM_UNC_PERFEVTSEL0 + (uint32_t)n, sel[n], t);
		}
	}
	if (off & (1u << FIXED_SLOT(0)))
		p->io.write(p->io_ctx, c->cpu, NHM_UNC_FIXED_CTR_CTRL, 0, t);
	if (on & (1u << FIXED_SLOT(0))) {
		p->io.write(p->io_ctx, c->cpu, NHM_UNC_FIXED_CTR, 0, t);
		p->io.write(p->io_ctx, c->cpu, NHM_UNC_FIXED_CTR_CTRL, NHM_UNC_FIXED_CTR_CTL_EN, t);
	}
	p->io.write(p->io_ctx, c->cpu, NHM_UNC_PERF_GLOBAL_CTL, NHM_UNC_GLOBAL_ENABLE, t);
}

/*
 * A PCU box with MSRs (hardware-linux.md §1.4, uncore_snbep.c):
 * snbep_uncore_msr_disable_box sets BOX_CTL.FRZ, disable_event writes the
 * select back with EN clear, enable_event with EN set, enable_box clears
 * FRZ.  sel[n] holds the event's config.
 */
static void program_pcu(struct sim_perf *p, struct ctx *c, uint32_t off, uint32_t on,
			const uint64_t *sel, int64_t t)
{
	const struct sim_pcu_addr *a = p->io.pcu_addr ? p->io.pcu_addr(p->io_ctx) : NULL;
	uint64_t box = 0;

	if (!a)
		return;
	p->io.read(p->io_ctx, c->cpu, a->box_ctl, &box, t);
	p->io.write(p->io_ctx, c->cpu, a->box_ctl, box | SNBEP_PMON_BOX_CTL_FRZ, t);
	for (int n = 0; n < BOX_N_COUNTERS; n++) {
		uint64_t ctl = sel[n] & ~SNBEP_PMON_CTL_EN;

		if (off & (1u << n))
			p->io.write(p->io_ctx, c->cpu, a->ctl0 + (uint32_t)n, ctl, t);
		if (on & (1u << n))
			p->io.write(p->io_ctx, c->cpu, a->ctl0 + (uint32_t)n, ctl | SNBEP_PMON_CTL_EN, t);
	}
	p->io.write(p->io_ctx, c->cpu, a->box_ctl, box & ~SNBEP_PMON_BOX_CTL_FRZ, t);
}

static void program(struct sim_perf *p, struct ctx *c, uint32_t off, uint32_t on,
		    const uint64_t *sel, int64_t t)
{
	uint32_t gp_mask = (off | on) & ((1u << FIXED_SLOT(0)) - 1);

	if (!(off | on))
		return;
	if (c->box) {
		/* The boxes count from the machine model; the PCU's MSRs see the kernel's writes. */
		if (c->box == BOX_PCU)
			program_pcu(p, c, off, on, sel, t);
		return;
	}
	if (c->uncore)
		program_uncore(p, c, off, sel, on, t);
	else
		program_core(p, c, gp_mask, sel, off >> FIXED_SLOT(0), on >> FIXED_SLOT(0), t);
}

/*
 * The scenario's task events come after the CPU-wide groups
 * (perf_event_sched_in: CPU flexible, then task flexible): each takes its
 * own counter when free, else the lowest free GP counter, else it waits.
 */
static uint32_t place_task_events(struct sim_perf *p, struct ctx *c, uint32_t *free_slots,
				  uint64_t *sel)
{
	uint32_t on = 0;

	for (int n = 0; n < p->m->n_gp; n++) {
		uint64_t want = sim_kernel_scn_select(p->k, c->cpu, n);
		uint32_t gp = *free_slots & ((1u << p->m->n_gp) - 1);
		int slot;

		if (!want || !gp)
			continue;
		slot = (gp & (1u << n)) ? n : __builtin_ctz(gp);
		*free_slots &= ~(1u << slot);
		sel[slot] = want | ARCH_PERFMON_EVENTSEL_ENABLE;
		on |= 1u << slot;
	}
	return on;
}

void sim_perf_ctx_sched_out(struct sim_perf *p, struct ctx *c, int64_t t)
{
	uint64_t sel[MAX_SLOTS] = { 0 };
	uint32_t off = 0;

	for (int g = 0; g < c->n_groups; g++) {
		int leader = c->groups[g];

		sim_perf_update_times(p, leader, t);
		for (int i = leader; i >= 0; i = p->ev[i].next) {
			struct pev *e = &p->ev[i];

			if (e->slot == NO_SLOT)
				continue;
			if (e->enabled)
				e->count = sim_perf_ev_value(p, e, t);
			if (c->box)
				sel[e->slot] = e->config;   /* written back without EN */
			off |= 1u << e->slot;
			e->slot = NO_SLOT;
		}
	}
	if (!c->uncore)
		off |= sim_kernel_gp_perf(p->k, c->cpu);   /* the scenario's task events too */
	program(p, c, off, 0, sel, t);
}

void sim_perf_ctx_sched_in(struct sim_perf *p, struct ctx *c, int64_t t)
{
	uint32_t free_slots = sim_perf_all_slots(p, c), on = 0;
	uint64_t sel[MAX_SLOTS] = { 0 };
	bool left_out = false;

	c->next_rotate = SIM_FOREVER;
	p->next_stale = true;
	if (!c->uncore && p->watchdog && (p->m->flags & SIM_F_AMD_PMU))
		free_slots &= ~(1u << AMD_WATCHDOG_COUNTER);   /* hardware-amd.md §3.2 */
	else if (!c->uncore && p->watchdog && p->m->n_fixed > 1)
		free_slots &= ~(1u << FIXED_SLOT(1));
	/* ctx_sched_in: the pinned groups first, then the flexible ones. */
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < c->n_groups; g++) {
			int leader = c->groups[g], slots[MAX_SLOTS], k = 0;
			bool pinned = p->ev[leader].pinned;

			if (pinned != (pass == 0))
				continue;
			sim_perf_update_times(p, leader, t);
			if (!p->ev[leader].enabled)
				continue;
			/* merge_sched_in: after the first flexible group that fails, no more. */
			if ((left_out && !pinned) ||
			    !sim_perf_assign_group(p, c, leader, &free_slots, slots)) {
				left_out |= !pinned;
				continue;
			}
			for (int i = leader; i >= 0; i = p->ev[i].next, k++) {
				struct pev *e = &p->ev[i];

				e->slot = slots[k];
				on |= 1u << e->slot;
				sel[e->slot] = c->uncore ? e->config | NHM_UNC_EVTSEL_ENABLE :
					       e->config | e->usr_os | SEL_KERNEL_BITS;
			}
		}
	if (!c->uncore)
		on |= place_task_events(p, c, &free_slots, sel);
	program(p, c, 0, on, sel, t);
	/* Counters start where the kernel left them (0, or what the workaround wrote). */
	for (int g = 0; g < c->n_groups; g++)
		for (int i = c->groups[g]; i >= 0; i = p->ev[i].next)
			if (p->ev[i].slot != NO_SLOT)
				p->ev[i].start = c->box ? box_read(p, c, p->ev[i].config, t) :
					  ctr_read(p, c, p->ev[i].slot, t);
	if (left_out)
		c->next_rotate = t + SIM_PERF_MUX_NS;
}

void sim_perf_resched(struct sim_perf *p, struct ctx *c, int64_t t)
{
	sim_perf_ctx_sched_out(p, c, t);
	sim_perf_ctx_sched_in(p, c, t);
}

int64_t sim_perf_next(struct sim_perf *p)
{
	if (p->next_stale) {
		p->next_rotate = SIM_FOREVER;
		for (int i = 0; i < p->n_ctxs; i++)
			if (p->ctxs[i].next_rotate < p->next_rotate)
				p->next_rotate = p->ctxs[i].next_rotate;
		p->next_stale = false;
	}
	return p->next_rotate;
}

void sim_perf_step(struct sim_perf *p)
{
	int64_t t = sim_perf_next(p);

	if (t == SIM_FOREVER)
		return;
	for (int i = 0; i < p->n_ctxs; i++) {
		struct ctx *c = &p->ctxs[i];

		if (c->next_rotate != t)
			continue;
		sim_perf_ctx_sched_out(p, c, t);
		/* rotate_ctx: the first group goes to the end of the list. */
		if (c->n_groups > 1) {
			int first = c->groups[0];

			memmove(c->groups, c->groups + 1, (size_t)(c->n_groups - 1) * sizeof(int));
			c->groups[c->n_groups - 1] = first;
		}
		sim_perf_ctx_sched_in(p, c, t);
	}
}

void sim_perf_core_sched_out(struct sim_perf *p, int64_t t)
{
	for (int i = 0; i < p->n_cpus; i++)
		if (p->ctxs[i].n_groups)
			sim_perf_ctx_sched_out(p, &p->ctxs[i], t);
}

void sim_perf_core_sched_in(struct sim_perf *p, int64_t t)
{
	for (int i = 0; i < p->n_cpus; i++)
		if (p->ctxs[i].n_groups)
			sim_perf_ctx_sched_in(p, &p->ctxs[i], t);
}

/*
 * __perf_event_exit_context: the CPU's events are removed with
 * DETACH_GROUP and stop counting; the members become singletons, so a
 * group read of the old leader returns nr = 1 (perf_read_group).  They
 * stay open, out of the context, until closed; events opened once the CPU
 * is back start a fresh context (hardware-linux.md §6).
 */
static void detach(struct sim_perf *p, struct ctx *c, int64_t t)
{
	sim_perf_ctx_sched_out(p, c, t);
	for (int g = 0; g < c->n_groups; g++)
		for (int i = c->groups[g], next; i >= 0; i = next) {
			next = p->ev[i].next;
			p->ev[i].dead = true;
			p->ev[i].leader = i;
			p->ev[i].next = -1;
		}
	c->n_groups = 0;
	sim_perf_ctx_sched_in(p, c, t);   /* the scenario's task events, now alone */
}

void sim_perf_hotplug(struct sim_perf *p, int cpu, bool online, int64_t t)
{
	if (cpu < 0 || cpu >= p->n_cpus || online)
		return;
	detach(p, &p->ctxs[cpu], t);
}

/*
 * A scenario's offline window is noticed at the next access: a CPU that is
 * offline now, or went offline since the last access (and may be back),
 * had its events detached at that edge.
 */
void sim_perf_check_online(struct sim_perf *p, struct ctx *c, int64_t t)
{
	uint64_t edges;

	if (c->uncore)
		return;
	edges = p->io.offline_edges(p->io_ctx, c->cpu, t);
	if (c->n_groups && (edges != c->offline_edges || !p->io.online(p->io_ctx, c->cpu, t)))
		detach(p, c, t);
	c->offline_edges = edges;
}
