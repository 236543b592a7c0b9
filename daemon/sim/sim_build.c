/*
 * The simulated machine built from its scenario: each core's temperature
 * and throttle timelines, each socket's conditions (and the umask ORs of
 * the uncore thermal events), each CPU's event rates and offline windows,
 * and the server boxes' conditions (the scenario was checked against the
 * model first, sim_check.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_machine.h"

#define IDLE_CELSIUS        45       /* simulator's choice */
#define N_CORE_UMASK_CORES  4        /* CORE_0..3 umask bits, hardware.md §2.1 */

static bool rule_hits_core(const struct sim_rule *r, int socket, int core_id)
{
	return (r->socket == SIM_ALL || r->socket == socket) &&
	       (r->core == SIM_ALL || r->core == SIM_UNSET || r->core == core_id);
}

/* OR every rule of kind covering (socket, core_id) into tl. */
static int paint_kind(struct sim *s, struct sim_timeline *tl, enum sim_rule_kind kind,
		      int socket, int core_id, int domain)
{
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];
		int err;

		if (r->kind != kind || !rule_hits_core(r, socket, core_id))
			continue;
		if (kind == SIM_RULE_POWER_LIMIT && (int)r->domain != domain)
			continue;
		err = sim_timeline_paint_rule(tl, r, kind == SIM_RULE_TEMPERATURE ? r->celsius : 1,
					      kind == SIM_RULE_TEMPERATURE ? SIM_PAINT_SET :
									     SIM_PAINT_OR);
		if (err < 0)
			return err;
	}
	sim_timeline_finish(tl);
	return 0;
}

static int build_core(struct sim *s, int socket, int core_index)
{
	struct sim_core *c = &s->cores[socket * s->model->n_cores + core_index];
	int64_t period = s->scn->period_ns;
	int id = sim_model_core_id(s->model, core_index);
	int r;

	if (sim_timeline_init(&c->temp, period, IDLE_CELSIUS) < 0 ||
	    sim_timeline_init(&c->hot, period, 0) < 0 ||
	    sim_timeline_init(&c->throttled, period, 0) < 0)
		return -ENOMEM;
	r = paint_kind(s, &c->temp, SIM_RULE_TEMPERATURE, socket, id, 0);
	if (r == 0)
		r = sim_timeline_or_where(&c->hot, &c->temp, s->model->tjmax_c);
	sim_timeline_finish(&c->hot);
	if (r == 0)
		r = sim_timeline_or_where(&c->throttled, &c->hot, 1);
	if (r == 0)
		r = paint_kind(s, &c->throttled, SIM_RULE_CORE_THROTTLE, socket, id, 0);
	return r;
}

/* The OR of the conditions of cores whose bits are set in umask. */
static int build_umask_or(struct sim *s, int socket, struct sim_timeline *tl, bool throttled)
{
	int64_t period = s->scn->period_ns;
	int n = s->model->n_cores < N_CORE_UMASK_CORES ? s->model->n_cores : N_CORE_UMASK_CORES;

	for (int umask = 0; umask < N_UMASKS; umask++) {
		if (sim_timeline_init(&tl[umask], period, 0) < 0)
			return -ENOMEM;
		for (int k = 0; k < n; k++) {
			const struct sim_core *c = &s->cores[socket * s->model->n_cores + k];

			if ((umask & (1 << k)) &&
			    sim_timeline_or_where(&tl[umask], throttled ? &c->throttled : &c->hot,
						  1) < 0)
				return -ENOMEM;
		}
		sim_timeline_finish(&tl[umask]);
	}
	return 0;
}

static int build_socket(struct sim *s, int socket)
{
	struct sim_socket *sk = &s->sockets[socket];
	int64_t period = s->scn->period_ns;
	struct sim_timeline *tls[] = { &sk->dram, &sk->prochot, &sk->pkg_limit, &sk->dram_limit,
				       &sk->pkg_thermal, &sk->pkg_hot };
	int r = 0;

	for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++)
		if (sim_timeline_init(tls[i], period, 0) < 0)
			return -ENOMEM;
	for (int c = 0; c < s->model->n_cores && r == 0; c++) {
		r = build_core(s, socket, c);
		if (r == 0)
			r = sim_timeline_or_where(&sk->pkg_thermal,
						  &s->cores[socket * s->model->n_cores + c].throttled, 1);
		if (r == 0)
			r = sim_timeline_or_where(&sk->pkg_hot,
						  &s->cores[socket * s->model->n_cores + c].hot, 1);
	}
	sim_timeline_finish(&sk->pkg_thermal);
	sim_timeline_finish(&sk->pkg_hot);
	if (r == 0)
		r = paint_kind(s, &sk->dram, SIM_RULE_DRAM_THROTTLE, socket, SIM_ALL, 0);
	if (r == 0)
		r = paint_kind(s, &sk->prochot, SIM_RULE_PROCHOT, socket, SIM_ALL, 0);
	if (r == 0)
		r = paint_kind(s, &sk->pkg_limit, SIM_RULE_POWER_LIMIT, socket, SIM_ALL,
			       SIM_DOMAIN_PACKAGE);
	if (r == 0)
		r = paint_kind(s, &sk->dram_limit, SIM_RULE_POWER_LIMIT, socket, SIM_ALL,
			       SIM_DOMAIN_DRAM);
	if (r == 0)
		r = build_umask_or(s, socket, sk->temp_or, false);
	if (r == 0)
		r = build_umask_or(s, socket, sk->throttled_or, true);
	return r;
}

/* Event rates (events/s) of a load on model m. */
static void load_rates(const struct sim_model *m, const struct sim_load *ld, int64_t rate[EV_COUNT])
{
	double ghz = ld->ghz > 0 ? ld->ghz : (double)m->ref_hz / 1e9;
	double cycles = ld->busy * ghz * 1e9, instructions = cycles * ld->ipc;

	rate[EV_CYCLES] = llround(cycles);
	rate[EV_INSTRUCTIONS] = llround(instructions);
	rate[EV_REF_CYCLES] = llround(ld->busy * (double)m->ref_hz);
	rate[EV_LLC_REFS] = llround(instructions * ld->llc_refs);
	rate[EV_LLC_MISSES] = llround(instructions * ld->llc_misses);
	rate[EV_BRANCHES] = llround(instructions * ld->branches);
	rate[EV_BRANCH_MISSES] = llround(instructions * ld->branch_misses);
}

static int paint_rates(struct sim_cpu *c, const struct sim_rule *r, const int64_t rate[EV_COUNT])
{
	for (int e = 0; e < EV_COUNT; e++)
		if (sim_timeline_paint_rule(&c->rate[e], r, rate[e], SIM_PAINT_SET) < 0)
			return -ENOMEM;
	return 0;
}

static int build_cpu(struct sim *s, int cpu)
{
	static const int64_t idle[EV_COUNT];
	struct sim_cpu *c = &s->cpus[cpu];
	int64_t period = s->scn->period_ns, rate[EV_COUNT];

	sim_model_topology(s->model, cpu, &c->topo, &c->core_index);
	load_rates(s->model, &sim_load_default, rate);
	for (int e = 0; e < EV_COUNT; e++)
		if (sim_timeline_init(&c->rate[e], period, rate[e]) < 0)
			return -ENOMEM;
	if (sim_timeline_init(&c->offline, period, 0) < 0)
		return -ENOMEM;
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];

		if (r->kind != SIM_RULE_LOAD || (r->cpu != SIM_ALL && r->cpu != cpu))
			continue;
		load_rates(s->model, &r->load, rate);
		if (paint_rates(c, r, rate) < 0)
			return -ENOMEM;
	}
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];

		if (r->kind != SIM_RULE_OFFLINE || (r->cpu != SIM_ALL && r->cpu != cpu))
			continue;
		if (paint_rates(c, r, idle) < 0 ||
		    sim_timeline_paint_rule(&c->offline, r, 1, SIM_PAINT_OR) < 0)
			return -ENOMEM;
	}
	for (int e = 0; e < EV_COUNT; e++)
		sim_timeline_finish(&c->rate[e]);
	sim_timeline_finish(&c->offline);
	return 0;
}

int sim_build_machine(struct sim *s)
{
	const struct sim_model *m = s->model;

	s->n_cpus = sim_model_n_cpus(m);
	s->sockets = calloc((size_t)m->n_sockets, sizeof(*s->sockets));
	s->cores = calloc((size_t)(m->n_sockets * m->n_cores), sizeof(*s->cores));
	s->cpus = calloc((size_t)s->n_cpus, sizeof(*s->cpus));
	if (!s->sockets || !s->cores || !s->cpus)
		return -ENOMEM;
	for (int sk = 0; sk < m->n_sockets; sk++)
		if (build_socket(s, sk) < 0)
			return -ENOMEM;
	for (int cpu = 0; cpu < s->n_cpus; cpu++)
		if (build_cpu(s, cpu) < 0)
			return -ENOMEM;
	if (sim_boxes_new(m, s->scn, &s->boxes) < 0)
		return -ENOMEM;
	for (int sk = 0; s->boxes && sk < m->n_sockets; sk++) {
		struct sim_socket *so = &s->sockets[sk];
		const struct sim_timeline *cond[SIM_PCU_N_CONDS] = {
			[SIM_PCU_CLOCKTICKS] = NULL,
			[SIM_PCU_PROCHOT_EXTERNAL] = &so->prochot,
			[SIM_PCU_PROCHOT_INTERNAL] = &so->pkg_hot,
			[SIM_PCU_FREQ_MAX_THERMAL] = &so->pkg_thermal,
			[SIM_PCU_FREQ_MAX_POWER] = &so->pkg_limit,
		};

		if (sim_boxes_set_socket(s->boxes, sk, cond, &so->dram_limit, s->scn->period_ns) < 0)
			return -ENOMEM;
	}
	return 0;
}
