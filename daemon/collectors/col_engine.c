/*
 * The engine choice of a PMU collector: see col_engine.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "col_engine.h"
#include "engine_build.h"

/* What the kernel has when engine = auto chooses perf. */
static const char *kernel_has(enum engine_pmu pmu)
{
	switch (pmu) {
	case ENGINE_PMU_CORE:
		return "the kernel has a core PMU";
	case ENGINE_PMU_PCU:
		return "the kernel has the uncore_pcu PMU";
	case ENGINE_PMU_IMC:
		return "the kernel has the uncore_imc PMUs";
	default:
		return "the kernel has the uncore PMU";
	}
}

/* col_engine_choose; with_msr false: the PMU has no msr path on this CPU. */
static int choose(enum conf_engine want, enum engine_pmu pmu, const char *section,
		  struct perf_sys *ps, bool with_msr, struct col_engine_choice *ret)
{
	char reason[COLLECTOR_TEXT_MAX] = "", level[PERF_SYS_PARANOID_TEXT_MAX];
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->kind = ENGINE_MSR;
	if (want == CONF_ENGINE_MSR && !with_msr) {
		snprintf(ret->why, sizeof(ret->why), "engine = msr in [%s], but this CPU's %s "
			 "cannot be counted through MSRs", section, section);
		return -ENODEV;
	}
	if (want == CONF_ENGINE_MSR) {
		snprintf(ret->why, sizeof(ret->why), "engine = msr in [%s]", section);
		return 0;
	}
	if (want == CONF_ENGINE_AUTO && pmu == ENGINE_PMU_NHM_UNCORE) {
		snprintf(ret->why, sizeof(ret->why), "the default for the Nehalem/Westmere uncore "
			 "(engine = perf counts through the kernel's uncore PMU)");
		return 0;
	}
	r = engine_probe(ENGINE_PERF, ps, pmu, reason, sizeof(reason));
	/*
	 * Opened now, but refused after the privilege drop: with an msr
	 * route, take it rather than lose every CPU that comes back online.
	 */
	if (r == 0 && want == CONF_ENGINE_AUTO && with_msr && perf_sys_reopens_refused(ps, level, sizeof(level))) {
		snprintf(reason, sizeof(reason), "perf_event_paranoid is %s and CAP_SYS_ADMIN is "
			 "dropped at start (user): no perf group could be reopened after a CPU comes "
			 "back or a reload", level);
		r = -EACCES;
	}
	if (r == 0) {
		size_t n;

		ret->kind = ENGINE_PERF;
		if (want == CONF_ENGINE_PERF)
			snprintf(ret->why, sizeof(ret->why), "engine = perf in [%s]", section);
		else
			snprintf(ret->why, sizeof(ret->why), "%s (engine = auto)", kernel_has(pmu));
		/* perf with no way around the drop (no msr route, or asked for): say what it costs. */
		n = strlen(ret->why);
		if (perf_sys_reopens_refused(ps, level, sizeof(level)))
			snprintf(ret->why + n, sizeof(ret->why) - n, "; at perf_event_paranoid %s, "
				 "without CAP_SYS_ADMIN after the drop, a CPU back online or a reload "
				 "cannot open its events again", level);
		return 0;
	}
	if (want == CONF_ENGINE_PERF) {
		snprintf(ret->why, sizeof(ret->why), "engine = perf in [%s], but %s", section,
			 reason);
		return r;
	}
	if (!with_msr) {
		/*
		 * Nothing to fall back to: the machine lacks the facility, or
		 * has it and the kernel refuses this process (down, not "not
		 * applicable").
		 */
		snprintf(ret->why, sizeof(ret->why), "this CPU's %s is counted through perf only, "
			 "and %s", section, reason);
		return r == -EACCES || r == -EPERM ? r : -ENOTSUP;
	}
	snprintf(ret->why, sizeof(ret->why), "%s; engine = auto falls back to msr", reason);
	return 0;
}

int col_engine_choose(enum conf_engine want, enum engine_pmu pmu, const char *section,
		      struct perf_sys *ps, struct col_engine_choice *ret)
{
	return choose(want, pmu, section, ps, true, ret);
}

int col_engine_new(struct collector *c, enum engine_kind kind, enum conf_conflict_policy policy,
		   struct engine *ret_engine, char *err, size_t errlen)
{
	const struct engine_machine machine = { .hw = c->hw, .topo = c->topo };
	enum engine_policy p = policy == CONF_CONFLICT_RECLAIM ? ENGINE_RECLAIM : ENGINE_YIELD;

	err[0] = '\0';
	c->engine = kind;
	return engine_build(kind, &machine, p, ret_engine, err, errlen);
}

int col_engine_open(struct collector *c, enum conf_engine want, enum engine_pmu pmu,
		    const char *section, enum conf_conflict_policy policy,
		    struct engine *ret_engine)
{
	struct col_engine_choice ch;
	char err[COLLECTOR_TEXT_MAX];
	int r = choose(want, pmu, section, c->hw->perf, engine_msr_reaches(c->info, pmu), &ch);

	if (r < 0) {
		collector_refuse(c, "%s", ch.why);
		return r;
	}
	r = col_engine_new(c, ch.kind, policy, ret_engine, err, sizeof(err));
	snprintf(c->engine_why, sizeof(c->engine_why), "%s", ch.why);
	if (r < 0 && ch.kind == ENGINE_PERF && err[0])
		collector_refuse(c, "perf engine: %s", err);
	return r;
}

void col_engine_lost(struct collector *c, char *why, size_t whylen, const char *text)
{
	c->errors++;
	if (!why[0])
		snprintf(why, whylen, "%s", text);
}

enum col_engine_read col_engine_read(struct collector *c, struct engine *e, struct engine_group *g,
				     struct engine_reading *r, uint64_t *waiting_ns, char *why,
				     size_t whylen)
{
	char buf[COLLECTOR_TEXT_MAX];

	if (engine_read(e, g, r) < 0) {
		col_engine_lost(c, why, whylen, "the group could not be read");
		return COL_ENGINE_LOST;
	}
	if (r[0].state == ENGINE_FAILED) {
		col_engine_lost(c, why, whylen, engine_reading_reason(e, &r[0], buf, sizeof(buf)));
		return COL_ENGINE_LOST;
	}
	if (c->engine != ENGINE_PERF || !r[0].enabled_ns || r[0].running_ns) {
		*waiting_ns = 0;
		return COL_ENGINE_COUNTED;
	}
	*waiting_ns += r[0].enabled_ns;
	if ((double)*waiting_ns < c->conf->interval_s * 1e9 / 2)
		return COL_ENGINE_WAITS;
	col_engine_lost(c, why, whylen, "another user holds the counters: perf kept the group off "
			"them for half the interval or more");
	return COL_ENGINE_LOST;
}

void col_engine_note_unread(struct collector *c, unsigned n, unsigned of, const char *what,
			    const char *why)
{
	if (!n)
		collector_recover(c, "unread");
	else
		collector_degrade(c, "unread", "%u of %u %s not read this interval: %s", n, of, what,
				  why);
}
