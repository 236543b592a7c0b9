/*
 * The throttling time series every generation exports the same way, so
 * that one alert rule serves a mixed fleet (issue 16): seconds of DRAM
 * throttling, of PROCHOT and of limited frequency.  Declared here once;
 * each collector that can tell one of them lists the family in its
 * collector_ops.families (metric.c writes a family two collectors list
 * once) and adds seconds with throttle_add_seconds().
 *
 * Each socket's JSON object carries them under the family name without
 * "uncored_" and "_total" ("prochot_seconds": {"external": x, ...}),
 * nested by channel, slot or die where the family has those labels
 * (metric.h), as the page's signals section reads them.
 *
 * Seconds come from cycles: Δevent / Δclockticks × Δwall over one
 * interval, the clockticks of the same box read in the same group
 * (hardware-linux.md §4.4), so nothing assumes a clock rate.
 *
 * Which of these signals a host can and cannot see, and why, is
 * throttle_signal.h's job.
 */
#ifndef UNCORED_THROTTLE_FAMILIES_H
#define UNCORED_THROTTLE_FAMILIES_H

#include <stdbool.h>
#include <stdint.h>

#include "metric.h"

/*
 * uncored_dram_throttled_seconds_total{socket,channel,cause}: a memory
 * channel's throttled time; cause is only what the hardware tells apart
 * ("thermal", "power" or "thermal_or_power", xeon_dram_cause_name()).
 * Label value "CHANNEL" METRIC_LABEL_SEP "CAUSE".
 */
extern const struct metric_family throttle_dram_channel_seconds;

/*
 * The same name for hardware without channels ({socket,cause}, label value
 * "CAUSE"), such as the Nehalem/Westmere uncore's DRAM event.
 */
extern const struct metric_family throttle_dram_socket_seconds;

/* uncored_dram_critical_throttled_seconds_total{socket,channel,cause}: critical throttling. */
extern const struct metric_family throttle_dram_critical_seconds;

/* uncored_prochot_seconds_total{socket,source}: source "external" or "internal". */
extern const struct metric_family throttle_prochot_seconds;

/* uncored_frequency_limited_seconds_total{socket,reason}: reason "thermal" or "power". */
extern const struct metric_family throttle_frequency_limited_seconds;

/*
 * The same names where the hardware counts each DIMM slot of a channel on
 * its own (Ice Lake-SP, Sapphire/Emerald Rapids): {socket,channel,slot,cause}.
 */
extern const struct metric_family throttle_dram_slot_seconds;
extern const struct metric_family throttle_dram_slot_critical_seconds;

/*
 * Granite Rapids' per-slot POWER_THROTTLE_CYCLES.BW_SLOT0/1 beside its
 * per-channel causes: the same Prometheus family {socket,channel,slot,cause},
 * in a JSON field of its own ("dram_slot_throttled_seconds"), since one
 * JSON object cannot nest both shapes.
 */
extern const struct metric_family throttle_dram_bw_slot_seconds;

/*
 * The same names on packages of several dies (Cascade Lake-AP), whose
 * uncore boxes are per die: a die label first ("DIE" METRIC_LABEL_SEP ...).
 */
extern const struct metric_family throttle_dram_die_channel_seconds;    /* die,channel,cause */
extern const struct metric_family throttle_dram_die_critical_seconds;   /* die,channel,cause */
extern const struct metric_family throttle_prochot_die_seconds;         /* die,source */
extern const struct metric_family throttle_frequency_limited_die_seconds; /* die,reason */

/*
 * Seconds an event of events cycles covers, of an interval of wall_ns
 * nanoseconds in which its box counted clockticks cycles: 0 when the box
 * counted no clock.  The ratio is kept at most 1 (a larger one would be a
 * clock mismatch, §4.4).
 */
double throttle_seconds(uint64_t events, uint64_t clockticks, uint64_t wall_ns);

/* What throttle_worst_shares() measures: the families by json_key. */
enum throttle_share {
	THROTTLE_SHARE_DRAM,               /* "dram_throttled_seconds" */
	THROTTLE_SHARE_PROCHOT,            /* "prochot_seconds" */
	THROTTLE_SHARE_FREQUENCY_LIMITED,  /* "frequency_limited_seconds" */
	THROTTLE_SHARE_COUNT,
};

/*
 * For each enum throttle_share, the largest share of the interval from
 * prev to s (their hardware clock's times, mono) that one series of the
 * throttle families with that json_key counted on socket, whichever
 * collector adds it, into share[] (0 to 1; 0 without prev or an
 * interval), and into has[] whether s has such a series on the socket at
 * all (false: no collector measures the family there).  Looked up by the
 * families, not by walking s's values.
 */
void throttle_worst_shares(const struct snapshot *prev, const struct snapshot *s, int socket,
			   bool has[THROTTLE_SHARE_COUNT], double share[THROTTLE_SHARE_COUNT]);

#endif
