/*
 * The simulated machine's register table (sim_machine.h): which model's
 * part covers an address, raw access with the server boxes first, and the
 * dump of every readable register.
 */
#include <errno.h>

#include "sim_machine.h"

static const struct {
	const struct reg_desc *d;
	const size_t *n;
} tables[] = {
	{ sim_uncore_regs, &sim_n_uncore_regs },
	{ sim_thermal_regs, &sim_n_thermal_regs },
	{ sim_core_regs, &sim_n_core_regs },
};

#define N_TABLES (sizeof(tables) / sizeof(tables[0]))

int sim_read_zero(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)l, (void)i, (void)t;
	*v = 0;
	return 0;
}

int sim_write_ignored(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)l, (void)i, (void)t, (void)v;
	return 0;
}

static int reg_count(const struct sim *s, const struct reg_desc *d)
{
	if (d->count == COUNT_GP)
		return s->model->n_gp;
	if (d->count == COUNT_FIXED)
		return s->model->n_fixed;
	if (d->count == COUNT_GP_PAIRS)
		return 2 * s->model->n_gp;
	return d->count;
}

static bool reg_present(const struct sim *s, const struct reg_desc *d)
{
	return (s->model->flags & d->need) == d->need;
}

const struct reg_desc *sim_reg_find(const struct sim *s, uint32_t msr, int *ret_index)
{
	for (size_t k = 0; k < N_TABLES; k++) {
		for (size_t i = 0; i < *tables[k].n; i++) {
			const struct reg_desc *d = &tables[k].d[i];

			if (!reg_present(s, d) || msr < d->first ||
			    msr - d->first >= (uint32_t)reg_count(s, d))
				continue;
			*ret_index = (int)(msr - d->first);
			return d;
		}
	}
	return NULL;
}

/* sim_reg_find through s's cache: the model's table never changes, so an answer holds. */
static const struct reg_desc *reg_find_cached(struct sim *s, uint32_t msr, int *ret_index)
{
	struct sim_reg_hit *hit = &s->reg_cache[msr & (SIM_REG_CACHE - 1)];
	const struct reg_desc *d;

	if (hit->d && hit->msr == msr) {
		*ret_index = hit->index;
		return hit->d;
	}
	d = sim_reg_find(s, msr, ret_index);
	if (d)
		*hit = (struct sim_reg_hit){ .msr = msr, .index = *ret_index, .d = d };
	return d;
}

struct loc sim_loc_of(struct sim *s, int cpu)
{
	struct sim_cpu *c = &s->cpus[cpu];

	return (struct loc){
		.cpu = c,
		.core = &s->cores[c->topo.socket * s->model->n_cores + c->core_index],
		.socket = &s->sockets[c->topo.socket],
	};
}

int sim_unit_of(const struct sim *s, int cpu)
{
	const struct hw_cpu *t = &s->cpus[cpu].topo;

	return t->socket * sim_model_n_dies(s->model) + t->die;
}

int sim_raw_write(struct sim *s, int cpu, uint32_t msr, uint64_t value, int64_t t)
{
	const struct reg_desc *d;
	struct loc l;
	int i;

	if (sim_boxes_has_msr(s->boxes, msr))
		return sim_boxes_write(s->boxes, sim_unit_of(s, cpu), msr, t, value);
	d = reg_find_cached(s, msr, &i);
	if (!d || !d->write)
		return -EIO;
	l = sim_loc_of(s, cpu);
	return d->write(s, &l, i, t, value);
}

int sim_raw_read(struct sim *s, int cpu, uint32_t msr, uint64_t *value, int64_t t)
{
	const struct reg_desc *d;
	struct loc l;
	int i;

	if (sim_boxes_has_msr(s->boxes, msr))
		return sim_boxes_read(s->boxes, sim_unit_of(s, cpu), msr, t, value);
	d = reg_find_cached(s, msr, &i);
	if (!d || !d->read)
		return -EIO;
	l = sim_loc_of(s, cpu);
	return d->read(s, &l, i, t, value);
}

struct dump_ctx {
	void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value);
	void *arg;
	int cpu;
};

static void dump_box(void *arg, uint32_t msr, uint64_t value)
{
	struct dump_ctx *dc = arg;

	dc->fn(dc->arg, dc->cpu, msr, value);
}

void sim_regs_dump(struct sim *s, int cpu, int64_t t,
		   void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value), void *arg)
{
	for (size_t k = 0; k < N_TABLES; k++) {
		for (size_t i = 0; i < *tables[k].n; i++) {
			const struct reg_desc *d = &tables[k].d[i];
			struct loc l = sim_loc_of(s, cpu);

			if (!reg_present(s, d) || !d->read || d->first == MSR_IA32_PMC0)
				continue;   /* absent, write-only, or an alias of IA32_PMCx */
			for (int n = 0; n < reg_count(s, d); n++) {
				uint64_t v;

				if (d->read(s, &l, n, t, &v) == 0)
					fn(arg, cpu, d->first + (uint32_t)n, v);
			}
		}
	}
	if (s->boxes) {
		struct dump_ctx dc = { fn, arg, cpu };

		sim_boxes_dump(s->boxes, sim_unit_of(s, cpu), t, dump_box, &dc);
	}
}
