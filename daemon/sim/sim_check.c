/*
 * A scenario's rules checked against the model (sim_machine.h), before the
 * machine is built.  Hardware the model lacks is an error that says where
 * ("FILE:LINE: key: what was expected"): a socket, core, CPU, memory
 * channel, DIMM slot or register beyond it, a perf rule for a PMU it does
 * not have, and the AMD rules defined by what HSMP reports
 * (frequency-limit, dimm-temperature) on a model whose HSMP does not
 * report it.  A condition the model's hardware has but that nothing on it
 * reads (DRAM throttling on AMD EPYC, PROCHOT on Rome, which has no HSMP)
 * is accepted, and said in a note (sim_note), so that one scenario runs on
 * every model it means to and a user learns why a rule shows nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_machine.h"

static void core_id_list(const struct sim_model *m, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < m->n_cores && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? ", " : "",
					 sim_model_core_id(m, i));
}

/* Memory channels per socket the model tells apart: the server iMC's, or HSMP's DIMMs'; 0: none. */
static int n_channels(const struct sim_model *m)
{
	return m->n_imc > 0 ? m->n_imc : m->n_dimm_channels;
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
	/* A model that does not count channels throttles the socket's memory as a whole. */
	if (r->channel >= 0 && n_channels(m) > 0 && r->channel >= n_channels(m)) {
		sim_scenario_error(s->scn, sim_rule_line(r, "channel"), "channel", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d memory channels "
				   "per socket)", n_channels(m) - 1, m->name, n_channels(m));
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

/* The AMD rules, which name what HSMP reports: refused where the model's HSMP does not. */
static int check_hsmp(const struct sim *s, const struct sim_rule *r, char *err, size_t errlen)
{
	const struct sim_model *m = s->model;
	char section[sizeof(r->section) + 2];

	snprintf(section, sizeof(section), "[%s]", r->section);
	if (r->kind == SIM_RULE_FREQ_LIMIT && !sim_hsmp_has_freq_limit(m)) {
		sim_scenario_error(s->scn, r->section_line, section, err, errlen,
				   "expected a model whose HSMP reports frequency-limit sources "
				   "(GET_SOCKET_FREQ_LIMIT: AMD Genoa and later), model '%s' has none",
				   m->name);
		return -EINVAL;
	}
	if (r->kind != SIM_RULE_DIMM_TEMP)
		return 0;
	if (!sim_hsmp_has_dimms(m)) {
		sim_scenario_error(s->scn, r->section_line, section, err, errlen,
				   "expected a model whose HSMP reports DIMM temperatures "
				   "(GET_DIMM_THERMAL: AMD Genoa and later), model '%s' has none",
				   m->name);
		return -EINVAL;
	}
	if (r->slot >= SIM_DIMM_SLOTS) {
		sim_scenario_error(s->scn, sim_rule_line(r, "slot"), "slot", err, errlen,
				   "expected 0 or 'all' (model '%s' has one DIMM, in slot 0, on each "
				   "channel)", m->name);
		return -EINVAL;
	}
	return 0;
}

/* Whether the model has the Intel server uncore boxes (sim_box.h): the PCU and the iMC. */
static bool has_boxes(const struct sim_model *m)
{
	return (m->flags & SIM_F_INTEL) && m->n_imc > 0;
}

/*
 * Why nothing on the model reads rule r's condition, or NULL when
 * something does.  What reads each (the simulator's registers and files):
 * DRAM throttling the Nehalem/Westmere uncore's thermal events or the
 * server iMC; critical DRAM throttling and package sleep the server iMC;
 * PROCHOT Intel's thermal status or HSMP; a forced core throttle Intel's
 * thermal status; power limits RAPL's throttled time, the server PCU, or
 * (the package's) HSMP's PPT source bit.
 */
static const char *unread_because(const struct sim_model *m, const struct sim_rule *r)
{
	bool amd = !(m->flags & SIM_F_INTEL);

	switch (r->kind) {
	case SIM_RULE_DRAM_THROTTLE:
		if ((m->flags & SIM_F_UNCORE_THERMAL) || has_boxes(m))
			return NULL;
		return amd ? "AMD EPYC counts no DRAM throttling; a [dimm-temperature.N] rule heats "
			     "a DIMM, which HSMP reports from Genoa on" :
			     "it has no DRAM thermal throttle event";
	case SIM_RULE_DRAM_CRITICAL:
		if (has_boxes(m))
			return NULL;
		return amd ? "AMD EPYC counts no DRAM throttling; a [dimm-temperature.N] rule heats "
			     "a DIMM, which HSMP reports from Genoa on" :
			     "critical DRAM throttling is counted by the server iMC, which it lacks";
	case SIM_RULE_PACKAGE_SLEEP:
		return has_boxes(m) ? NULL : "the package sleep stops the server iMC's clock, "
					     "which it lacks";
	case SIM_RULE_PROCHOT:
		return !amd || sim_hsmp_has_prochot(m) ? NULL :
		       "PROCHOT is read through HSMP, which Zen 2 has no driver for";
	case SIM_RULE_CORE_THROTTLE:
		return !amd ? NULL : "AMD EPYC has no per-core throttle status like Intel's "
				     "IA32_THERM_STATUS";
	case SIM_RULE_POWER_LIMIT:
		if ((m->flags & SIM_F_RAPL) || has_boxes(m))
			return NULL;
		if (r->domain == SIM_DOMAIN_PACKAGE && sim_hsmp_has_freq_limit(m))
			return NULL;
		return amd ? (r->domain == SIM_DOMAIN_PACKAGE ?
			      "its HSMP has no frequency-limit sources (the PPT limit, Genoa on)" :
			      "AMD EPYC counts no DRAM power limiting") :
			     "it has no RAPL throttled-time counters and no server PCU";
	default:
		return NULL;
	}
}

/* Add a note "FILE:LINE: [SECTION]: ..." to s. */
static int add_note(struct sim *s, const struct sim_rule *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_note(struct sim *s, const struct sim_rule *r, const char *fmt, ...)
{
	char msg[512], *note, **notes;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	notes = realloc(s->notes, sizeof(*notes) * (size_t)(s->n_notes + 1));
	if (!notes)
		return -ENOMEM;
	s->notes = notes;
	if (asprintf(&note, "%s:%d: [%s]: %s", s->scn->file, r->section_line, r->section, msg) < 0)
		return -ENOMEM;
	s->notes[s->n_notes++] = note;
	return 0;
}

/* The notes of rule r: its condition is read by nothing on the model, or read per socket only. */
static int note_rule(struct sim *s, const struct sim_rule *r)
{
	const struct sim_model *m = s->model;
	const char *why = unread_because(m, r);

	if (why)
		return add_note(s, r, "nothing on model '%s' reads it: %s; the rule changes nothing "
				"there", m->name, why);
	if ((r->kind == SIM_RULE_DRAM_THROTTLE || r->kind == SIM_RULE_DRAM_CRITICAL) &&
	    r->channel >= 0 && n_channels(m) == 0)
		return add_note(s, r, "model '%s' counts DRAM throttling per socket, not per "
				"channel: the whole socket's memory reads as throttled", m->name);
	return 0;
}

int sim_check_scenario(struct sim *s, char *err, size_t errlen)
{
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];
		int e = check_ids(s, r, err, errlen);

		if (e == 0)
			e = check_register(s, r, err, errlen);
		if (e == 0)
			e = check_hsmp(s, r, err, errlen);
		if (e == 0)
			e = sim_kernel_check(s->model, s->scn, r, err, errlen);
		if (e == 0 && note_rule(s, r) < 0) {
			snprintf(err, errlen, "simulated machine: %s", strerror(ENOMEM));
			e = -ENOMEM;
		}
		if (e < 0)
			return e;
	}
	return 0;
}

const char *sim_note(const struct sim *s, int i)
{
	return i >= 0 && i < s->n_notes ? s->notes[i] : NULL;
}
