/*
 * The generation-independent throttling signals (SPEC §5): DRAM throttled
 * time by cause, PROCHOT time by source, frequency-limited time by
 * reason, the label values of uncored_dram_throttled_seconds_total,
 * uncored_prochot_seconds_total and uncored_frequency_limited_seconds_total.
 *
 * A collector says which of them it delivers on a CPU (collector_ops
 * throttle_signals, a mask of THROTTLE_BIT()s); the sampler copies that
 * into each snapshot's collector list.  From the list alone this module
 * tells which signals the host can see now, and for each one it cannot
 * see, why: the collector that would deliver it is down, not applicable
 * or disabled, or no collector measures it on this CPU.  The JSON, the
 * --once table and the page say it from here, so a new collector that
 * declares its signals needs no edit of theirs.  The families themselves
 * are declared in throttle_families.h.
 */
#ifndef UNCORED_THROTTLE_SIGNAL_H
#define UNCORED_THROTTLE_SIGNAL_H

#include <stdbool.h>
#include <stddef.h>

struct snapshot;
struct snapshot_collector;

enum throttle_signal {
	THROTTLE_DRAM_THERMAL,          /* DRAM throttled, cause="thermal" */
	THROTTLE_DRAM_POWER,            /* cause="power" (a RAPL limit) */
	THROTTLE_DRAM_THERMAL_OR_POWER, /* cause="thermal_or_power": the iMC cannot tell them apart */
	THROTTLE_PROCHOT_EXTERNAL,      /* PROCHOT time, source="external" */
	THROTTLE_PROCHOT_INTERNAL,      /* source="internal" */
	THROTTLE_PROCHOT_ANY,           /* source="any": the reading does not say who (AMD HSMP) */
	THROTTLE_FREQ_THERMAL,          /* frequency limited, reason="thermal" */
	THROTTLE_FREQ_POWER,            /* reason="power" */
	THROTTLE_N_SIGNALS,
};

#define THROTTLE_BIT(sig) (1u << (sig))

struct throttle_signal_info {
	const char *signal;             /* "dram_throttled", "prochot", "frequency_limited" */
	const char *family;             /* its Prometheus family */
	const char *label;              /* "cause", "source", "reason" */
	const char *value;              /* the label's value */
	const char *title;              /* for people: "DRAM throttled (thermal)" */
};

/* The fixed facts of sig (which must be below THROTTLE_N_SIGNALS). */
const struct throttle_signal_info *throttle_signal_info(enum throttle_signal sig);

#define THROTTLE_WHY_MAX 512

/* What a snapshot says of one signal. */
struct throttle_signal_view {
	bool visible;                   /* a collector that delivers it is up */
	/*
	 * The up collector that delivers it; when none is up, the one that
	 * would (down before not applicable before disabled); NULL when no
	 * collector delivers it on this CPU.  A static string.
	 */
	const char *collector;
	char why_not[THROTTLE_WHY_MAX]; /* one sentence; "" when visible */
};

/*
 * Fill views[0..THROTTLE_N_SIGNALS) from the collector list of s (their
 * state and throttle_signals masks) and its CPU name.
 */
void throttle_signals_view(const struct snapshot *s,
			   struct throttle_signal_view views[THROTTLE_N_SIGNALS]);

#endif
