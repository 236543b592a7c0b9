/*
 * The simulated thermal status registers with their sticky log bits,
 * TjMax (hardware.md §3) and RAPL's throttled-time counters (§4.1).
 */
#include <stdint.h>

#include "sim_machine.h"

#define RAPL_POWER_UNIT_VALUE ((UINT64_C(10) << RAPL_TIME_UNIT_SHIFT) | \
			       (UINT64_C(14) << RAPL_ENERGY_UNIT_SHIFT) | UINT64_C(3))
#define RAPL_TIME_UNITS_PER_S 1024

/* ---- thermal, hardware.md §3 ---- */

static bool logged(const struct sim_timeline *tl, int64_t from, int64_t t)
{
	return sim_timeline_value_at(tl, t) ||
	       sim_timeline_rises(tl, t + 1) > sim_timeline_rises(tl, from);
}

static uint64_t status_bits(const struct sim_timeline *thermal, const struct sim_timeline *prochot,
			    const int64_t log_from[2], int64_t t)
{
	uint64_t v = 0;

	if (sim_timeline_value_at(thermal, t))
		v |= THERM_BIT_STATUS;
	if (logged(thermal, log_from[0], t))
		v |= THERM_BIT_STATUS_LOG;
	if (sim_timeline_value_at(prochot, t))
		v |= THERM_BIT_PROCHOT_EVENT;
	if (logged(prochot, log_from[1], t))
		v |= THERM_BIT_PROCHOT_LOG;
	return v;
}

/* R/WC0: a 0 written to a log bit clears it; everything else is ignored. */
static void clear_logs(int64_t log_from[2], uint64_t v, int64_t t)
{
	if (!(v & THERM_BIT_STATUS_LOG))
		log_from[0] = t + 1;
	if (!(v & THERM_BIT_PROCHOT_LOG))
		log_from[1] = t + 1;
}

static uint64_t readout(const struct sim *s, int64_t celsius)
{
	int64_t below = s->model->tjmax_c - celsius;

	below = below < 0 ? 0 : below > THERM_DIGITAL_READOUT_MAX ? THERM_DIGITAL_READOUT_MAX : below;
	return (uint64_t)below << THERM_DIGITAL_READOUT_SHIFT;
}

static int read_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)i;
	*v = status_bits(&l->core->throttled, &l->socket->prochot, l->core->log_from, t) |
	     readout(s, sim_timeline_value_at(&l->core->temp, t)) |
	     (uint64_t)1 << THERM_RESOLUTION_SHIFT | THERM_READING_VALID;
	return 0;
}

static int write_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)i;
	clear_logs(l->core->log_from, v, t);
	return 0;
}

static int read_pkg_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	const struct sim_core *cores = &s->cores[l->cpu->topo.socket * s->model->n_cores];
	int64_t hottest = INT64_MIN;

	(void)i;
	for (int c = 0; c < s->model->n_cores; c++) {
		int64_t temp = sim_timeline_value_at(&cores[c].temp, t);

		hottest = temp > hottest ? temp : hottest;
	}
	*v = status_bits(&l->socket->pkg_thermal, &l->socket->prochot, l->socket->pkg_log_from, t) |
	     readout(s, hottest);
	return 0;
}

static int write_pkg_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)i;
	clear_logs(l->socket->pkg_log_from, v, t);
	return 0;
}

static int read_tjmax(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)l, (void)i, (void)t;
	*v = (uint64_t)s->model->tjmax_c << TEMPERATURE_TARGET_TJMAX_SHIFT;
	return 0;
}

/* ---- RAPL, hardware.md §4.1 ---- */

static int read_rapl_unit(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)l, (void)i, (void)t;
	*v = RAPL_POWER_UNIT_VALUE;
	return 0;
}

static uint64_t throttled_time(const struct sim_timeline *tl, int64_t t)
{
	struct count_src src = { .tl = tl, .hz = RAPL_TIME_UNITS_PER_S };

	return src_count(&src, t) & width_mask(RAPL_PERF_STATUS_BITS);
}

static int read_pkg_perf(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i;
	*v = throttled_time(&l->socket->pkg_limit, t);
	return 0;
}

static int read_dram_perf(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i;
	*v = throttled_time(&l->socket->dram_limit, t);
	return 0;
}

const struct reg_desc sim_thermal_regs[] = {
	{ MSR_IA32_THERM_STATUS, 1, SIM_F_INTEL, read_therm, write_therm },
	{ MSR_IA32_TEMPERATURE_TARGET, 1, SIM_F_INTEL, read_tjmax, NULL },
	{ MSR_IA32_PACKAGE_THERM_STATUS, 1, SIM_F_PTM, read_pkg_therm, write_pkg_therm },
	{ MSR_RAPL_POWER_UNIT, 1, SIM_F_RAPL, read_rapl_unit, NULL },
	{ MSR_PKG_PERF_STATUS, 1, SIM_F_RAPL, read_pkg_perf, NULL },
	{ MSR_DRAM_PERF_STATUS, 1, SIM_F_RAPL, read_dram_perf, NULL },
};

const size_t sim_n_thermal_regs = sizeof(sim_thermal_regs) / sizeof(sim_thermal_regs[0]);
