/*
 * The kernel's side of the simulated PMU: see sim_kernel.h.  Each perf
 * rule is a timeline that is 1 while its window is open; the kernel walks
 * the changes of all of them in time order.
 *
 * Simulator's choices where hardware-linux.md is silent: perf restarts the
 * PMCs it programs from 0 (it keeps its counts in the event, not the PMC);
 * the watchdog's PMI reloads and their 0x38F pulses are not modelled
 * (global-disable rules give such windows).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_facts.h"
#include "sim_kernel.h"

#define MAX_GP                8
#define WATCHDOG_FIXED_CTRL   UINT64_C(0xb0)        /* fixed counter 1: PMI|USR|OS, §1.1 */
#define STALE_CYCLES_SELECT   UINT64_C(0x13003c)    /* cycles after perf's disable, §1.1 */
#define NHM_UNC_GLOBAL_ENABLE UINT64_C(0x1000000ff) /* EN_PC_ALL | EN_FC, §1.3 */
#define NHM_WORKAROUND_GP     4                     /* intel_pmu_nhm_workaround, §1.2 */
#define NHM_UNC_RAW_EVENT_MASK UINT64_C(0xff84ffff) /* event|umask|edge|inv|cmask, §1.3 */

static const uint64_t nhm_workaround_sel[NHM_WORKAROUND_GP] = {
	0x4300b5, 0x4300d2, 0x4300b1, 0x4300b1,
};

/* A perf rule: its windows are 1 in on. */
struct agent {
	const struct sim_rule *rule;
	struct sim_timeline on;
	bool active;
	int64_t next;                  /* time of its next change, SIM_FOREVER: none */
};

struct sim_kernel {
	const struct sim_model *m;
	sim_kernel_write_fn write;
	void *ctx;
	int n_cpus;
	uint64_t *perf_sel;            /* [cpu * MAX_GP + n]: perf's select (EN set), 0: not perf's */
	uint64_t *fixed_ctrl_val;      /* [cpu]: perf's cache of 0x38D (cpuc->fixed_ctrl_val) */
	uint64_t *scn_want;            /* [cpu * MAX_GP + n]: a scenario user's select for GP n
					  (EN clear) while its window is on, else 0 */
	sim_kernel_managed_fn managed;
	void *managed_ctx;
	struct agent *agents;
	int n_agents;
};

static struct agent *next_agent(const struct sim_kernel *k);

static bool is_perf_rule(const struct sim_rule *r)
{
	return r->kind == SIM_RULE_PERF_CORE || r->kind == SIM_RULE_PERF_UNCORE ||
	       r->kind == SIM_RULE_GLOBAL_DISABLE;
}

static bool is_uncore_rule(const struct sim_rule *r)
{
	return r->kind == SIM_RULE_PERF_UNCORE || (r->kind == SIM_RULE_GLOBAL_DISABLE && r->uncore);
}

/*
 * The kernel's intel_ctrl: every GP and fixed enable bit (§1.1), and from
 * arch perfmon v5 with perf metrics (Ice Lake and later) EN_PERF_METRICS,
 * bit 48 (hardware-linux.md §6).
 */
static uint64_t intel_ctrl(const struct sim_model *m)
{
	uint64_t ctrl = ((UINT64_C(1) << m->n_gp) - 1) | (((UINT64_C(1) << m->n_fixed) - 1) << 32);

	return m->pmu_version >= 5 ? ctrl | UINT64_C(1) << 48 : ctrl;
}

/* Models whose kernel installs intel_pmu_nhm_enable_all, §1.2. */
static bool has_nhm_workaround(const struct sim_model *m)
{
	static const unsigned models[] = { 0x1e, 0x1a, 0x2e, 0x25, 0x2c, 0x2f };

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if ((m->flags & SIM_F_INTEL) && m->family == 6 && m->model == models[i])
			return true;
	return false;
}

int sim_kernel_check(const struct sim_model *m, const struct sim_scenario *scn,
		     const struct sim_rule *r, char *err, size_t errlen)
{
	bool uncore = is_uncore_rule(r);
	char section[sizeof(r->section) + 2];

	if (!is_perf_rule(r))
		return 0;
	snprintf(section, sizeof(section), "[%s]", r->section);
	if (uncore && !(m->flags & SIM_F_NHM_UNCORE)) {
		sim_scenario_error(scn, r->section_line, section, err, errlen,
				   "expected a model with the Nehalem/Westmere uncore PMU, "
				   "model '%s' has none", m->name);
		return -EINVAL;
	}
	if (!uncore && !(m->flags & SIM_F_INTEL)) {
		sim_scenario_error(scn, r->section_line, section, err, errlen,
				   "expected a model with the Intel core PMU, model '%s' has none",
				   m->name);
		return -EINVAL;
	}
	if (r->kind == SIM_RULE_PERF_CORE && r->counter >= m->n_gp) {
		sim_scenario_error(scn, sim_rule_line(r, "counter"), "counter", err, errlen,
				   "expected 0 to %d (model '%s' has %d GP counters)", m->n_gp - 1,
				   m->name, m->n_gp);
		return -EINVAL;
	}
	if (r->kind == SIM_RULE_PERF_UNCORE && r->counter >= NHM_UNC_NUM_COUNTERS) {
		sim_scenario_error(scn, sim_rule_line(r, "counter"), "counter", err, errlen,
				   "expected 0 to %d or 'fixed'", NHM_UNC_NUM_COUNTERS - 1);
		return -EINVAL;
	}
	if (r->kind == SIM_RULE_PERF_UNCORE && (r->value & ~NHM_UNC_RAW_EVENT_MASK)) {
		sim_scenario_error(scn, sim_rule_line(r, "value"), "value", err, errlen,
				   "expected only event, umask, edge, inv and cmask bits (0x%llx); "
				   "perf cannot set the others",
				   (unsigned long long)NHM_UNC_RAW_EVENT_MASK);
		return -EINVAL;
	}
	if (r->kind == SIM_RULE_PERF_CORE && (r->value & ARCH_PERFMON_EVENTSEL_ENABLE)) {
		sim_scenario_error(scn, sim_rule_line(r, "value"), "value", err, errlen,
				   "expected the select without EN (bit 22): the kernel sets it");
		return -EINVAL;
	}
	return 0;
}

/* All of AMD's GP counters, GlobalCtl's value whenever perf enables (hardware-amd.md §3.2). */
static uint64_t amd_global_ctl(const struct sim_model *m)
{
	return (UINT64_C(1) << m->n_gp) - 1;
}

/*
 * An AMD host after boot (hardware-amd.md §7): HWCR.IRPERF_EN, GlobalCtl
 * 0x3F on PerfMonV2 parts, and the NMI watchdog's cycles on GP counter 0.
 */
static void amd_boot(struct sim_kernel *k)
{
	for (int cpu = 0; cpu < k->n_cpus; cpu++) {
		k->write(k->ctx, cpu, MSR_K7_HWCR, MSR_K7_HWCR_IRPERF_EN, 0);
		if (k->m->flags & SIM_F_PERFMON_V2)
			k->write(k->ctx, cpu, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, amd_global_ctl(k->m), 0);
		k->write(k->ctx, cpu, MSR_F15H_PERF_CTL + 2 * AMD_WATCHDOG_COUNTER,
			 AMD_WATCHDOG_PERF_CTL, 0);
	}
}

void sim_kernel_boot(struct sim_kernel *k)
{
	const struct sim_model *m = k->m;

	if (m->flags & SIM_F_AMD_PMU)
		amd_boot(k);
	if (!(m->flags & SIM_F_INTEL))
		return;
	for (int cpu = 0; cpu < k->n_cpus; cpu++) {
		k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, intel_ctrl(m), 0);
		if (m->n_fixed > 1) {
			k->fixed_ctrl_val[cpu] = WATCHDOG_FIXED_CTRL;
			k->write(k->ctx, cpu, MSR_CORE_PERF_FIXED_CTR_CTRL, WATCHDOG_FIXED_CTRL, 0);
		}
		k->write(k->ctx, cpu, MSR_ARCH_PERFMON_EVENTSEL0, STALE_CYCLES_SELECT, 0);
	}
	if (m->flags & SIM_F_NHM_UNCORE)
		for (int sk = 0; sk < m->n_sockets; sk++)
			k->write(k->ctx, sim_model_cpu_of(m, sk, 0, 0), NHM_UNC_PERF_GLOBAL_CTL,
				 NHM_UNC_GLOBAL_ENABLE, 0);
}

/*
 * intel_pmu_nhm_workaround (§1.2): magic selects on GP 0..3, PMCs zeroed,
 * a 0xF/0 pulse of the global control, then perf's own selects back and 0
 * in every select perf does not own.
 */
static void nhm_workaround(struct sim_kernel *k, int cpu, int64_t t)
{
	const uint64_t *perf_sel = &k->perf_sel[cpu * MAX_GP];
	int n_gp = k->m->n_gp < NHM_WORKAROUND_GP ? k->m->n_gp : NHM_WORKAROUND_GP;

	for (int n = 0; n < n_gp; n++)
		k->write(k->ctx, cpu, MSR_ARCH_PERFMON_EVENTSEL0 + (uint32_t)n, nhm_workaround_sel[n], t);
	for (int n = 0; n < n_gp; n++)
		k->write(k->ctx, cpu, MSR_IA32_PERFCTR0 + (uint32_t)n, 0, t);
	k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, 0xf, t);
	k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, 0, t);
	for (int n = 0; n < n_gp; n++)
		k->write(k->ctx, cpu, MSR_ARCH_PERFMON_EVENTSEL0 + (uint32_t)n, perf_sel[n], t);
}

/*
 * A perf event on GP counter n comes (on) or goes: x86_pmu_disable writes
 * 0x38F = 0, the event is added (select = config | EN, PMC restarted) or
 * removed (select = config, EN clear), and x86_pmu_enable writes 0x38F =
 * intel_ctrl, through the NHM/WSM workaround after an add (§1.1, §1.2).
 */
static void perf_core_change(struct sim_kernel *k, int cpu, const struct sim_rule *r, bool on,
			     int64_t t)
{
	uint64_t *perf_sel = &k->perf_sel[cpu * MAX_GP];
	uint32_t n = (uint32_t)r->counter;

	k->scn_want[cpu * MAX_GP + n] = on ? r->value : 0;
	if (k->managed && k->managed(k->managed_ctx, cpu))
		return;   /* sim_perf schedules it, after its own CPU-wide groups */
	k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, 0, t);
	if (!on) {
		k->write(k->ctx, cpu, MSR_ARCH_PERFMON_EVENTSEL0 + n,
			 r->value & ~ARCH_PERFMON_EVENTSEL_ENABLE, t);
		perf_sel[n] = 0;
	} else {
		perf_sel[n] = r->value | ARCH_PERFMON_EVENTSEL_ENABLE;
		if (has_nhm_workaround(k->m)) {
			nhm_workaround(k, cpu, t);
		} else {
			k->write(k->ctx, cpu, MSR_IA32_PERFCTR0 + n, 0, t);
			k->write(k->ctx, cpu, MSR_ARCH_PERFMON_EVENTSEL0 + n, perf_sel[n], t);
		}
	}
	k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, intel_ctrl(k->m), t);
}

/* Where GP counter n's select and counter are: sel0 + stride * n, ctr0 + stride * n. */
struct gp_regs {
	uint32_t sel0, ctr0, stride;
};

static const struct gp_regs intel_gp_regs = { MSR_ARCH_PERFMON_EVENTSEL0, MSR_IA32_PERFCTR0, 1 };
static const struct gp_regs amd_gp_regs = { MSR_F15H_PERF_CTL, MSR_F15H_PERF_CTR, 2 };

/*
 * x86_pmu_del/x86_pmu_add on the GP counters in gp_mask: gp_sel[n] != 0
 * adds an event (counter restarted from 0, select = gp_sel[n]), 0 removes
 * perf's (select left stale, EN clear).  Returns whether one was added.
 */
static bool gp_changes(struct sim_kernel *k, int cpu, uint32_t gp_mask, const uint64_t *gp_sel,
		       const struct gp_regs *r, int64_t t)
{
	uint64_t *perf_sel = &k->perf_sel[cpu * MAX_GP];
	bool added = false;

	for (uint32_t n = 0; n < (uint32_t)k->m->n_gp && n < MAX_GP; n++) {
		if (!(gp_mask & (1u << n)))
			continue;
		if (gp_sel[n]) {
			perf_sel[n] = gp_sel[n];
			added = true;
			k->write(k->ctx, cpu, r->ctr0 + r->stride * n, 0, t);
			k->write(k->ctx, cpu, r->sel0 + r->stride * n, perf_sel[n], t);
		} else if (perf_sel[n]) {
			k->write(k->ctx, cpu, r->sel0 + r->stride * n,
				 perf_sel[n] & ~ARCH_PERFMON_EVENTSEL_ENABLE, t);
			perf_sel[n] = 0;
		}
	}
	return added;
}

/*
 * The same on AMD (hardware-amd.md §3.2): on PerfMonV2 parts GlobalCtl = 0,
 * the changes, GlobalCtl = 0x3F; on Zen 2/3 only the counters that change
 * are written (the disable's EN round trip on perf's other counters,
 * the watchdog's included, happens at one instant and is not modelled).
 */
static void amd_core_events(struct sim_kernel *k, int cpu, uint32_t gp_mask, const uint64_t *gp_sel,
			    int64_t t)
{
	bool v2 = k->m->flags & SIM_F_PERFMON_V2;

	if (v2)
		k->write(k->ctx, cpu, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, 0, t);
	gp_changes(k, cpu, gp_mask, gp_sel, &amd_gp_regs, t);
	if (v2)
		k->write(k->ctx, cpu, MSR_AMD64_PERF_CNTR_GLOBAL_CTL, amd_global_ctl(k->m), t);
}

void sim_kernel_core_events(struct sim_kernel *k, int cpu, uint32_t gp_mask, const uint64_t *gp_sel,
			    uint64_t fixed_ctrl, uint32_t fixed_added, int64_t t)
{
	bool added = fixed_added != 0;

	if (k->m->flags & SIM_F_AMD_PMU) {
		amd_core_events(k, cpu, gp_mask, gp_sel, t);
		return;
	}
	k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, 0, t);
	added |= gp_changes(k, cpu, gp_mask, gp_sel, &intel_gp_regs, t);
	if (fixed_ctrl != SIM_KERNEL_KEEP) {
		k->fixed_ctrl_val[cpu] = fixed_ctrl;
		k->write(k->ctx, cpu, MSR_CORE_PERF_FIXED_CTR_CTRL, fixed_ctrl, t);
	}
	for (uint32_t i = 0; i < (uint32_t)k->m->n_fixed; i++)
		if (fixed_added & (1u << i))
			k->write(k->ctx, cpu, MSR_CORE_PERF_FIXED_CTR0 + i, 0, t);
	if (added && has_nhm_workaround(k->m))
		nhm_workaround(k, cpu, t);
	k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, intel_ctrl(k->m), t);
}

void sim_kernel_set_manager(struct sim_kernel *k, sim_kernel_managed_fn fn, void *ctx)
{
	k->managed = fn;
	k->managed_ctx = ctx;
}

uint64_t sim_kernel_fixed_ctrl(const struct sim_kernel *k, int cpu)
{
	return cpu >= 0 && cpu < k->n_cpus ? k->fixed_ctrl_val[cpu] : 0;
}

uint64_t sim_kernel_scn_select(const struct sim_kernel *k, int cpu, int n)
{
	return n < MAX_GP ? k->scn_want[cpu * MAX_GP + n] : 0;
}

uint32_t sim_kernel_gp_perf(const struct sim_kernel *k, int cpu)
{
	uint32_t mask = 0;

	for (int n = 0; n < k->m->n_gp && n < MAX_GP; n++)
		if (k->perf_sel[cpu * MAX_GP + n])
			mask |= 1u << n;
	return mask;
}

bool sim_kernel_next_is_core_event(const struct sim_kernel *k)
{
	const struct agent *a = next_agent(k);

	return a && a->next != SIM_FOREVER && a->rule->kind == SIM_RULE_PERF_CORE;
}

/*
 * Perf uncore use on a socket comes or goes (§1.3): disable_box (0x391 =
 * 0), enable_event (select = config | EN, fixed: 0x395 = 1) or
 * disable_event (0), enable_box (0x391 = 0x1000000FF).
 */
static void perf_uncore_change(struct sim_kernel *k, int socket, const struct sim_rule *r,
			       bool on, int64_t t)
{
	int cpu = sim_model_cpu_of(k->m, socket, 0, 0);

	k->write(k->ctx, cpu, NHM_UNC_PERF_GLOBAL_CTL, 0, t);
	if (r->counter == SIM_FIXED)
		k->write(k->ctx, cpu, NHM_UNC_FIXED_CTR_CTRL, on ? NHM_UNC_FIXED_CTR_CTL_EN : 0, t);
	else
		k->write(k->ctx, cpu, NHM_UNC_PERFEVTSEL0 + (uint32_t)r->counter,
			 on ? r->value | NHM_UNC_EVTSEL_ENABLE : 0, t);
	k->write(k->ctx, cpu, NHM_UNC_PERF_GLOBAL_CTL, NHM_UNC_GLOBAL_ENABLE, t);
}

/* A transient global disable starts (on) or ends: 0 now, the kernel's enable value after. */
static void global_disable_change(struct sim_kernel *k, int cpu, const struct sim_rule *r,
				  bool on, int64_t t)
{
	if (r->uncore)
		k->write(k->ctx, cpu, NHM_UNC_PERF_GLOBAL_CTL, on ? 0 : NHM_UNC_GLOBAL_ENABLE, t);
	else
		k->write(k->ctx, cpu, MSR_CORE_PERF_GLOBAL_CTRL, on ? 0 : intel_ctrl(k->m), t);
}

static void run_agent(struct sim_kernel *k, struct agent *a, int64_t t)
{
	const struct sim_rule *r = a->rule;

	a->active = !a->active;
	if (is_uncore_rule(r)) {
		for (int sk = 0; sk < k->m->n_sockets; sk++) {
			if (r->socket != SIM_ALL && r->socket != sk)
				continue;
			if (r->kind == SIM_RULE_PERF_UNCORE)
				perf_uncore_change(k, sk, r, a->active, t);
			else
				global_disable_change(k, sim_model_cpu_of(k->m, sk, 0, 0), r,
						      a->active, t);
		}
		return;
	}
	for (int cpu = 0; cpu < k->n_cpus; cpu++) {
		if (r->cpu != SIM_ALL && r->cpu != cpu)
			continue;
		if (r->kind == SIM_RULE_PERF_CORE)
			perf_core_change(k, cpu, r, a->active, t);
		else
			global_disable_change(k, cpu, r, a->active, t);
	}
}

/* The first time after `after` at which tl's on/off state differs from cur. */
static int64_t next_change(const struct sim_timeline *tl, int64_t after, bool cur)
{
	int64_t base = 0;
	int rounds = 1;

	if (tl->period) {
		base = after > 0 ? after / tl->period * tl->period : 0;
		rounds = 2;
	}
	for (int i = 0; i < rounds; i++, base += tl->period)
		for (int s = 0; s < tl->n; s++) {
			int64_t t = base + tl->seg[s].start;

			if (t > after && (tl->seg[s].value != 0) != cur)
				return t;
		}
	return SIM_FOREVER;
}

static struct agent *next_agent(const struct sim_kernel *k)
{
	struct agent *best = NULL;

	for (int i = 0; i < k->n_agents; i++)
		if (!best || k->agents[i].next < best->next)
			best = &k->agents[i];
	return best;
}

int64_t sim_kernel_next(const struct sim_kernel *k)
{
	const struct agent *a = next_agent(k);

	return a ? a->next : SIM_FOREVER;
}

void sim_kernel_step(struct sim_kernel *k)
{
	struct agent *a = next_agent(k);
	int64_t t;

	if (!a || a->next == SIM_FOREVER)
		return;
	t = a->next;
	run_agent(k, a, t);
	a->next = next_change(&a->on, t, a->active);
}

int sim_kernel_new(const struct sim_model *m, const struct sim_scenario *scn,
		   sim_kernel_write_fn write, void *ctx, struct sim_kernel **ret_kernel)
{
	struct sim_kernel *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	*k = (struct sim_kernel){ .m = m, .write = write, .ctx = ctx, .n_cpus = sim_model_n_cpus(m) };
	k->perf_sel = calloc((size_t)k->n_cpus * MAX_GP, sizeof(*k->perf_sel));
	k->scn_want = calloc((size_t)k->n_cpus * MAX_GP, sizeof(*k->scn_want));
	k->fixed_ctrl_val = calloc((size_t)k->n_cpus + 1, sizeof(*k->fixed_ctrl_val));
	k->agents = calloc((size_t)scn->n_rules + 1, sizeof(*k->agents));
	if (!k->perf_sel || !k->scn_want || !k->fixed_ctrl_val || !k->agents) {
		sim_kernel_free(k);
		return -ENOMEM;
	}
	for (int i = 0; i < scn->n_rules; i++) {
		struct agent *a = &k->agents[k->n_agents];

		if (!is_perf_rule(&scn->rules[i]))
			continue;
		a->rule = &scn->rules[i];
		if (sim_timeline_init(&a->on, scn->period_ns, 0) < 0) {
			sim_kernel_free(k);
			return -ENOMEM;
		}
		k->n_agents++;
		if (sim_timeline_paint_rule(&a->on, a->rule, 1, SIM_PAINT_OR) < 0) {
			sim_kernel_free(k);
			return -ENOMEM;
		}
		sim_timeline_finish(&a->on);
		a->next = next_change(&a->on, -1, false);
	}
	*ret_kernel = k;
	return 0;
}

void sim_kernel_free(struct sim_kernel *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n_agents; i++)
		sim_timeline_free(&k->agents[i].on);
	free(k->agents);
	free(k->perf_sel);
	free(k->fixed_ctrl_val);
	free(k->scn_want);
	free(k);
}
