/*
 * A scenario's rules checked against the model (sim_machine.h), before the
 * machine is built: a socket, core, CPU, channel or register the model
 * lacks is an error that says where ("FILE:LINE: key: what was expected").
 */
#include <errno.h>
#include <stdio.h>

#include "sim_machine.h"

static void core_id_list(const struct sim_model *m, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < m->n_cores && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? ", " : "",
					 sim_model_core_id(m, i));
}

static int check_ids(const struct sim *s, const struct sim_rule *r, char *err, size_t errlen)
{
	const struct sim_model *m = s->model;
	char ids[512];

	if (r->socket >= m->n_sockets) {
		sim_scenario_error(s->scn, sim_rule_line(r, "socket"), "socket", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d sockets)",
				   m->n_sockets - 1, m->name, m->n_sockets);
		return -EINVAL;
	}
	if (r->core >= 0 && sim_model_core_index(m, r->core) < 0) {
		core_id_list(m, ids, sizeof(ids));
		sim_scenario_error(s->scn, sim_rule_line(r, "core"), "core", err, errlen,
				   "expected a core id of model '%s' (%s) or 'all'", m->name, ids);
		return -EINVAL;
	}
	/* A model without channels throttles the socket's memory as a whole. */
	if (r->channel >= 0 && m->n_imc > 0 && r->channel >= m->n_imc) {
		sim_scenario_error(s->scn, sim_rule_line(r, "channel"), "channel", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d memory channels "
				   "per socket)", m->n_imc - 1, m->name, m->n_imc);
		return -EINVAL;
	}
	if (r->cpu >= s->n_cpus) {
		sim_scenario_error(s->scn, sim_rule_line(r, "cpu"), "cpu", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d cpus)",
				   s->n_cpus - 1, m->name, s->n_cpus);
		return -EINVAL;
	}
	return 0;
}

/* Whether msr is a PCU box register of model m (sim_box.h; known before the boxes are built). */
static bool is_pcu_register(const struct sim_model *m, uint32_t msr)
{
	const struct sim_uncore_gen *gen = m->n_imc ? sim_uncore_gen_find(m->family, m->model) : NULL;
	const struct sim_pcu_addr *a = gen ? gen->pcu : NULL;

	return a && (msr == a->box_ctl || msr == a->filter ||
		     (msr >= a->ctl0 && msr < a->ctl0 + SNBEP_PCU_NUM_COUNTERS) ||
		     (msr >= a->ctr0 && msr < a->ctr0 + SNBEP_PCU_NUM_COUNTERS));
}

static int check_register(const struct sim *s, const struct sim_rule *r, char *err, size_t errlen)
{
	const struct reg_desc *d;
	int i;

	if (r->kind != SIM_RULE_PRESET && r->kind != SIM_RULE_REWRITE)
		return 0;
	if (is_pcu_register(s->model, r->msr))
		return 0;
	d = sim_reg_find(s, r->msr, &i);
	if (d && d->write)
		return 0;
	sim_scenario_error(s->scn, sim_rule_line(r, "msr"), "msr", err, errlen,
			   "expected a writable register of model '%s', 0x%x is not one",
			   s->model->name, r->msr);
	return -EINVAL;
}

int sim_check_scenario(const struct sim *s, char *err, size_t errlen)
{
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];
		int e = check_ids(s, r, err, errlen);

		if (e == 0)
			e = check_register(s, r, err, errlen);
		if (e == 0)
			e = sim_kernel_check(s->model, s->scn, r, err, errlen);
		if (e < 0)
			return e;
	}
	return 0;
}
