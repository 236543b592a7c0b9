/*
 * Which throttling signals a host can see.  See throttle_signal.h.
 */
#include <stdio.h>

#include "snapshot.h"
#include "throttle_signal.h"

static const struct throttle_signal_info infos[THROTTLE_N_SIGNALS] = {
	[THROTTLE_DRAM_THERMAL] = { "dram_throttled", "uncored_dram_throttled_seconds_total",
				    "cause", "thermal", "DRAM throttled (thermal)" },
	[THROTTLE_DRAM_POWER] = { "dram_throttled", "uncored_dram_throttled_seconds_total",
				  "cause", "power", "DRAM throttled (power)" },
	[THROTTLE_DRAM_THERMAL_OR_POWER] = { "dram_throttled", "uncored_dram_throttled_seconds_total",
					     "cause", "thermal_or_power",
					     "DRAM throttled (thermal or power)" },
	[THROTTLE_PROCHOT_EXTERNAL] = { "prochot", "uncored_prochot_seconds_total",
					"source", "external", "PROCHOT (external)" },
	[THROTTLE_PROCHOT_INTERNAL] = { "prochot", "uncored_prochot_seconds_total",
					"source", "internal", "PROCHOT (internal)" },
	[THROTTLE_PROCHOT_ANY] = { "prochot", "uncored_prochot_seconds_total",
				   "source", "any", "PROCHOT (any)" },
	[THROTTLE_FREQ_THERMAL] = { "frequency_limited", "uncored_frequency_limited_seconds_total",
				    "reason", "thermal", "Frequency limited (thermal)" },
	[THROTTLE_FREQ_POWER] = { "frequency_limited", "uncored_frequency_limited_seconds_total",
				  "reason", "power", "Frequency limited (power)" },
};

const struct throttle_signal_info *throttle_signal_info(enum throttle_signal sig)
{
	return &infos[sig];
}

/* How good a provider is: an up one sees the signal; of the others, the likeliest to be fixed. */
static int rank(const struct snapshot_collector *c)
{
	if (!c->enabled)
		return 1;
	if (c->not_applicable)
		return 2;
	return c->up ? 4 : 3;
}

static void view_one(const struct snapshot *s, enum throttle_signal sig,
		     struct throttle_signal_view *v)
{
	const struct snapshot_collector *best = NULL;

	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];

		if (c->throttle_signals & THROTTLE_BIT(sig) && (!best || rank(c) > rank(best)))
			best = c;
	}
	v->visible = best && rank(best) == 4;
	v->collector = best ? best->name : NULL;
	v->why_not[0] = '\0';
	if (!best)
		snprintf(v->why_not, sizeof(v->why_not), "no collector measures it on this CPU (%s)",
			 s->cpu_id.microarch[0] ? s->cpu_id.microarch : "unknown");
	else if (!best->enabled)
		snprintf(v->why_not, sizeof(v->why_not),
			 "the %s collector is disabled in the configuration", best->name);
	else if (best->not_applicable)
		snprintf(v->why_not, sizeof(v->why_not), "the %s collector does not apply here: %s",
			 best->name, best->reason);
	else if (!best->up)   /* down, or partial: counting on some of its units only */
		snprintf(v->why_not, sizeof(v->why_not), "the %s collector is %s: %s", best->name,
			 snapshot_collector_state(best), best->reason[0] ? best->reason :
			 "no reason given");
}

void throttle_signals_view(const struct snapshot *s,
			   struct throttle_signal_view views[THROTTLE_N_SIGNALS])
{
	for (int i = 0; i < THROTTLE_N_SIGNALS; i++)
		view_one(s, (enum throttle_signal)i, &views[i]);
}
