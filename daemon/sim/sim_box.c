/*
 * The simulated server uncore boxes: see sim_box.h.  Counters are stored
 * as (value, time of last change), as in sim_machine.h: a read integrates the
 * condition since then, and any write re-bases every counter of the box.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim_facts.h"
#include "sim_box.h"

struct pcu_box {
	uint64_t box_ctl, filter;
	uint64_t ctl[SNBEP_PCU_NUM_COUNTERS];
	uint64_t base[SNBEP_PCU_NUM_COUNTERS];
	int64_t t0[SNBEP_PCU_NUM_COUNTERS];
	const struct sim_timeline *cond[SIM_PCU_N_CONDS];
};

struct sim_boxes {
	const struct sim_model *m;
	const struct sim_uncore_gen *u;
	int pcu_stopped;                     /* the scenario's pcu_clock_stopped: -1 none */
	int n_units, n_dies, n_imc;          /* units: one per die, socket * n_dies + die */
	struct pcu_box *pcu;                 /* per unit */
	struct sim_timeline *throttle;       /* unit * n_imc + channel: thermal */
	struct sim_timeline *critical;
	struct sim_timeline *either;         /* thermal or the socket's DRAM power limit */
	struct sim_timeline *awake;          /* per unit: 0 while the package sleeps (C3/C6) */
	struct sim_timeline *power;          /* per unit: the DRAM power limit, while awake */
};

static uint64_t mask48(uint64_t v)
{
	return v & ((UINT64_C(1) << SNBEP_PCU_CTR_BITS) - 1);
}

/* Cycles of a clock of hz while tl (NULL: always) is nonzero, over [0, t). */
static uint64_t cycles(const struct sim_timeline *tl, int64_t hz, int64_t t)
{
	unsigned __int128 ns;

	if (t <= 0)
		return 0;
	ns = tl ? sim_timeline_integral(tl, t) : (unsigned __int128)t;
	return (uint64_t)(ns * (uint64_t)hz / SIM_NS_PER_S);
}

/* ---- building ---- */

static bool hits_channel(const struct sim_rule *r, int socket, int channel)
{
	return (r->socket == SIM_ALL || r->socket == socket) &&
	       (r->channel == SIM_ALL || r->channel == SIM_UNSET || r->channel == channel);
}

/* Unit's awake timeline: 1, and 0 while a package-sleep rule of its socket holds. */
static int build_awake(struct sim_boxes *b, const struct sim_scenario *scn, int unit)
{
	struct sim_timeline *tl = &b->awake[unit];

	if (sim_timeline_init(tl, scn->period_ns, 1) < 0)
		return -ENOMEM;
	for (int i = 0; i < scn->n_rules; i++) {
		const struct sim_rule *r = &scn->rules[i];

		if (r->kind == SIM_RULE_PACKAGE_SLEEP &&
		    (r->socket == SIM_ALL || r->socket == unit / b->n_dies) &&
		    sim_timeline_paint_rule(tl, r, 0, SIM_PAINT_SET) < 0)
			return -ENOMEM;
	}
	sim_timeline_finish(tl);
	return 0;
}

static int build_channel(struct sim_boxes *b, const struct sim_scenario *scn, int unit,
			 int channel)
{
	struct sim_timeline *thr = &b->throttle[unit * b->n_imc + channel];
	struct sim_timeline *crit = &b->critical[unit * b->n_imc + channel];
	int socket = unit / b->n_dies;

	if (sim_timeline_init(thr, scn->period_ns, 0) < 0 ||
	    sim_timeline_init(crit, scn->period_ns, 0) < 0)
		return -ENOMEM;
	for (int i = 0; i < scn->n_rules; i++) {
		const struct sim_rule *r = &scn->rules[i];

		if ((r->kind != SIM_RULE_DRAM_THROTTLE && r->kind != SIM_RULE_DRAM_CRITICAL) ||
		    !hits_channel(r, socket, channel))
			continue;
		/* A critical throttle is a throttle too. */
		if (sim_timeline_paint_rule(thr, r, 1, SIM_PAINT_OR) < 0 ||
		    (r->kind == SIM_RULE_DRAM_CRITICAL &&
		     sim_timeline_paint_rule(crit, r, 1, SIM_PAINT_OR) < 0))
			return -ENOMEM;
	}
	/* No clock, no count: nothing is counted while the package sleeps. */
	if (sim_timeline_and(thr, &b->awake[unit]) < 0 || sim_timeline_and(crit, &b->awake[unit]) < 0)
		return -ENOMEM;
	sim_timeline_finish(thr);
	sim_timeline_finish(crit);
	return 0;
}

int sim_boxes_new(const struct sim_model *m, const struct sim_scenario *scn,
		  struct sim_boxes **ret)
{
	const struct sim_uncore_gen *u = sim_uncore_gen_find(m->family, m->model);
	struct sim_boxes *b;
	size_t n_ch;

	*ret = NULL;
	if (!u || !(m->flags & SIM_F_INTEL) || !m->n_imc)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->m = m;
	b->u = u;
	b->pcu_stopped = scn->pcu_clock_stopped;
	b->n_dies = sim_model_n_dies(m);
	b->n_units = m->n_sockets * b->n_dies;
	b->n_imc = m->n_imc;
	n_ch = (size_t)(b->n_units * b->n_imc);
	b->pcu = calloc((size_t)b->n_units, sizeof(*b->pcu));
	b->throttle = calloc(n_ch, sizeof(*b->throttle));
	b->critical = calloc(n_ch, sizeof(*b->critical));
	b->either = calloc(n_ch, sizeof(*b->either));
	b->awake = calloc((size_t)b->n_units, sizeof(*b->awake));
	b->power = calloc((size_t)b->n_units, sizeof(*b->power));
	if (!b->pcu || !b->throttle || !b->critical || !b->either || !b->awake || !b->power) {
		sim_boxes_free(b);
		return -ENOMEM;
	}
	for (int unit = 0; unit < b->n_units; unit++) {
		int r = build_awake(b, scn, unit);

		for (int ch = 0; ch < b->n_imc && r == 0; ch++)
			r = build_channel(b, scn, unit, ch);
		if (r < 0) {
			sim_boxes_free(b);
			return -ENOMEM;
		}
	}
	*ret = b;
	return 0;
}

void sim_boxes_free(struct sim_boxes *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n_units * b->n_imc; i++) {
		if (b->throttle)
			sim_timeline_free(&b->throttle[i]);
		if (b->critical)
			sim_timeline_free(&b->critical[i]);
		if (b->either)
			sim_timeline_free(&b->either[i]);
	}
	for (int i = 0; i < b->n_units; i++) {
		if (b->awake)
			sim_timeline_free(&b->awake[i]);
		if (b->power)
			sim_timeline_free(&b->power[i]);
	}
	free(b->awake);
	free(b->power);
	free(b->either);
	free(b->throttle);
	free(b->critical);
	free(b->pcu);
	free(b);
}

int sim_boxes_set_socket(struct sim_boxes *b, int socket,
			 const struct sim_timeline *pcu_cond[SIM_PCU_N_CONDS],
			 const struct sim_timeline *dram_power, int64_t period)
{
	for (int unit = socket * b->n_dies; unit < (socket + 1) * b->n_dies; unit++) {
		for (int e = 0; e < SIM_PCU_N_CONDS; e++)
			b->pcu[unit].cond[e] = pcu_cond[e];
		if (sim_timeline_init(&b->power[unit], period, 0) < 0 ||
		    sim_timeline_or_where(&b->power[unit], dram_power, 1) < 0 ||
		    sim_timeline_and(&b->power[unit], &b->awake[unit]) < 0)
			return -ENOMEM;
		sim_timeline_finish(&b->power[unit]);
		for (int ch = 0; ch < b->n_imc; ch++) {
			struct sim_timeline *tl = &b->either[unit * b->n_imc + ch];

			if (sim_timeline_init(tl, period, 0) < 0 ||
			    sim_timeline_or_where(tl, &b->throttle[unit * b->n_imc + ch], 1) < 0 ||
			    sim_timeline_or_where(tl, &b->power[unit], 1) < 0)
				return -ENOMEM;
			sim_timeline_finish(tl);
		}
	}
	return 0;
}

const struct sim_uncore_gen *sim_boxes_uncore(const struct sim_boxes *b)
{
	return b->u;
}

int sim_boxes_n_imc(const struct sim_boxes *b)
{
	return b ? b->n_imc : 0;
}

/* ---- event sources ---- */

/* The condition of PCU event code, or -ENOENT; *ret NULL means always. */
static int pcu_cond(const struct sim_boxes *b, int socket, uint64_t code,
		    const struct sim_timeline **ret)
{
	for (int e = 0; e < SIM_PCU_N_CONDS; e++) {
		if (b->u->pcu_code[e] != code)
			continue;
		*ret = e == SIM_PCU_CLOCKTICKS ? NULL : b->pcu[socket].cond[e];
		if (e != SIM_PCU_CLOCKTICKS && !*ret)
			return -ENOENT;
		return 0;
	}
	return -ENOENT;
}

/* Whether channel exists only on paper: registered, no memory behind it, no clock. */
static bool on_paper(const struct sim_boxes *b, int channel)
{
	return b->u->imc_per_controller &&
	       channel % b->u->imc_per_controller >= b->u->imc_real_per_controller;
}

/* The condition of iMC event config on channel, or -ENOENT; the clock runs while awake. */
static int imc_cond(const struct sim_boxes *b, int socket, int channel, uint64_t config,
		    const struct sim_timeline **ret)
{
	if (config == SIM_IMC_FIXED_CONFIG || config == b->u->imc_dclk) {
		*ret = &b->awake[socket];
		return 0;
	}
	for (size_t i = 0; i < b->u->n_imc; i++) {
		const struct sim_imc_event *e = &b->u->imc[i];

		if (config != e->config)
			continue;
		if (e->cond == SIM_IMC_CRITICAL)
			*ret = &b->critical[socket * b->n_imc + channel];
		else if (e->cond == SIM_IMC_THERMAL)
			*ret = &b->throttle[socket * b->n_imc + channel];
		else if (e->cond == SIM_IMC_POWER)
			*ret = &b->power[socket];
		else
			*ret = &b->either[socket * b->n_imc + channel];
		return 0;
	}
	return -ENOENT;
}

int sim_boxes_count(const struct sim_boxes *b, enum sim_box_kind kind, int socket, int index,
		    uint64_t config, int64_t t, uint64_t *ret)
{
	const struct sim_timeline *tl;
	int r;

	if (!b || socket < 0 || socket >= b->n_units)
		return -ENOENT;
	if (kind == SIM_BOX_PCU) {
		int n_pcu = sim_model_n_pcu(b->m);

		if (index < 0 || index >= n_pcu || (r = pcu_cond(b, socket, config, &tl)) < 0)
			return -ENOENT;
		/* Only the last PCU of a die sees the package's conditions (sim_box.h). */
		*ret = (tl && index != n_pcu - 1) || index == b->pcu_stopped ? 0 :
		       cycles(tl, SIM_PCLK_HZ, t);
		return 0;
	}
	if (index < 0 || index >= b->n_imc || (r = imc_cond(b, socket, index, config, &tl)) < 0)
		return -ENOENT;
	*ret = on_paper(b, index) ? 0 : cycles(tl, SIM_DCLK_HZ, t);
	return 0;
}

/* ---- PCU registers ---- */

bool sim_boxes_has_msr(const struct sim_boxes *b, uint32_t msr)
{
	const struct sim_pcu_addr *a = b ? b->u->pcu : NULL;

	if (!a)
		return false;
	return msr == a->box_ctl || (msr >= a->ctl0 && msr < a->ctl0 + SNBEP_PCU_NUM_COUNTERS) ||
	       msr == a->filter || msr == a->status ||
	       (msr >= a->ctr0 && msr < a->ctr0 + SNBEP_PCU_NUM_COUNTERS);
}

static bool counting(const struct pcu_box *p, int n)
{
	return (p->ctl[n] & SNBEP_PMON_CTL_EN) && !(p->box_ctl & SNBEP_PMON_BOX_CTL_FRZ);
}

static uint64_t ctr_value(const struct sim_boxes *b, int socket, int n, int64_t t)
{
	const struct pcu_box *p = &b->pcu[socket];
	const struct sim_timeline *tl;
	uint64_t v = p->base[n];

	if (counting(p, n) && pcu_cond(b, socket, p->ctl[n] & SNBEP_PMON_CTL_EV_SEL_MASK, &tl) == 0)
		v += cycles(tl, SIM_PCLK_HZ, t) - cycles(tl, SIM_PCLK_HZ, p->t0[n]);
	return mask48(v);
}

static void rebase(struct sim_boxes *b, int socket, int64_t t)
{
	struct pcu_box *p = &b->pcu[socket];

	for (int n = 0; n < SNBEP_PCU_NUM_COUNTERS; n++) {
		p->base[n] = ctr_value(b, socket, n, t);
		p->t0[n] = t;
	}
}

int sim_boxes_read(struct sim_boxes *b, int socket, uint32_t msr, int64_t t, uint64_t *ret)
{
	const struct sim_pcu_addr *a = b->u->pcu;
	struct pcu_box *p = &b->pcu[socket];

	if (msr == a->box_ctl)
		*ret = p->box_ctl;
	else if (msr >= a->ctl0 && msr < a->ctl0 + SNBEP_PCU_NUM_COUNTERS)
		*ret = p->ctl[msr - a->ctl0];
	else if (msr == a->filter)
		*ret = p->filter;
	else if (msr == a->status)
		*ret = 0;
	else if (msr >= a->ctr0 && msr < a->ctr0 + SNBEP_PCU_NUM_COUNTERS)
		*ret = ctr_value(b, socket, (int)(msr - a->ctr0), t);
	else
		return -EIO;
	return 0;
}

int sim_boxes_write(struct sim_boxes *b, int socket, uint32_t msr, int64_t t, uint64_t value)
{
	const struct sim_pcu_addr *a = b->u->pcu;
	struct pcu_box *p = &b->pcu[socket];

	if (msr == a->status)
		return -EIO;
	rebase(b, socket, t);
	if (msr == a->box_ctl) {
		for (int n = 0; n < SNBEP_PCU_NUM_COUNTERS; n++) {
			if (value & SNBEP_PMON_BOX_CTL_RST_CTRL)
				p->ctl[n] = 0;
			if (value & SNBEP_PMON_BOX_CTL_RST_CTRS)
				p->base[n] = 0;
		}
		p->box_ctl = value & ~(SNBEP_PMON_BOX_CTL_RST_CTRL | SNBEP_PMON_BOX_CTL_RST_CTRS);
	} else if (msr >= a->ctl0 && msr < a->ctl0 + SNBEP_PCU_NUM_COUNTERS) {
		int n = (int)(msr - a->ctl0);

		if (value & SNBEP_PMON_CTL_RST)
			p->base[n] = 0;
		p->ctl[n] = value & ~SNBEP_PMON_CTL_RST;
	} else if (msr == a->filter) {
		p->filter = value;
	} else if (msr >= a->ctr0 && msr < a->ctr0 + SNBEP_PCU_NUM_COUNTERS) {
		p->base[msr - a->ctr0] = mask48(value);
	} else {
		return -EIO;
	}
	return 0;
}

void sim_boxes_dump(struct sim_boxes *b, int socket, int64_t t,
		    void (*fn)(void *arg, uint32_t msr, uint64_t value), void *arg)
{
	const struct sim_pcu_addr *a = b ? b->u->pcu : NULL;
	uint32_t lo, hi;

	if (!a)
		return;
	lo = a->box_ctl < a->ctl0 ? a->box_ctl : a->ctl0;
	hi = a->ctr0 + SNBEP_PCU_NUM_COUNTERS;
	for (uint32_t msr = lo; msr < hi; msr++) {
		uint64_t v;

		if (sim_boxes_has_msr(b, msr) && sim_boxes_read(b, socket, msr, t, &v) == 0)
			fn(arg, msr, v);
	}
}
