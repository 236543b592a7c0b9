/*
 * Throttle episodes: a condition going quiet → active → quiet at one
 * place.  A condition is DRAM throttled, PROCHOT, frequency limited, core
 * or package thermal throttling; a place is a socket, a die, a memory
 * channel or a core.  Every series that tells the same condition at the
 * same place feeds one episode, which records which took part: a
 * channel's slots and its warning and critical levels, a socket's PROCHOT
 * sources, and on AMD the frequency limited by PROCHOT beside PROCHOT
 * itself.
 *
 * An episode runs from the stamp of the first sample that saw its
 * condition to the stamp of the last one that did (it is over at the first
 * sample that does not); one seen by a single sample is an episode of 0 s.
 * A counter (a family's seconds, an event count) tells what happened in
 * the interval before the sample, so a condition lasting W seconds,
 * sampled every I seconds, gives an episode of W - I to W + I seconds, and
 * one that pauses for a whole interval is two episodes.  A status bit
 * tells the state at the sample's instant: W - 2I to W seconds.
 *
 * The tracker is a pure state machine fed once per sample; it keeps a
 * bounded list of episodes, newest first, and reports which started and
 * ended in that sample so the caller can log them.
 */
#ifndef UNCORED_EPISODE_H
#define UNCORED_EPISODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

struct metric_sample;

enum episode_kind {
	EPISODE_DRAM_THERMAL_THROTTLING,
	EPISODE_PROCHOT,
	EPISODE_CORE_THERMAL_THROTTLING,
	EPISODE_PACKAGE_THERMAL_THROTTLING,
	EPISODE_KIND_COUNT
};

/* "dram_thermal_throttling", "prochot", "core_thermal_throttling", "package_thermal_throttling". */
const char *episode_kind_name(enum episode_kind kind);

struct episode_tracker;

/* A tracker keeping at most max_episodes finished or ongoing episodes. NULL on ENOMEM. */
struct episode_tracker *episode_tracker_new(size_t max_episodes);

void episode_tracker_free(struct episode_tracker *t);

/* What changed in one update, for logging. */
struct episode_change {
	bool started;                 /* false: ended */
	struct snapshot_episode episode;
	double duration_s;            /* ended: end - start */
};

/*
 * Feed the state of one place at time now (core -1 for a per-socket
 * place), now serving as both the wall-clock stamp and the clock the
 * duration is measured on (a pure state machine, for tests).  Returns 1
 * and fills ret_change (may be NULL) when an episode started or ended, 0
 * otherwise, -EINVAL for an unknown kind, -ENOMEM when a new place could
 * not be remembered.  A started episode enters the list with end = 0 and
 * start = now; an active update moves its newest stamp to now, and the
 * first inactive one ends it at that newest stamp.  When the list is full
 * the oldest finished episode is dropped, or the oldest ongoing one when
 * none has finished.
 */
int episode_update(struct episode_tracker *t, enum episode_kind kind, int socket, int core,
		   bool active, double now, struct episode_change *ret_change);

/*
 * Derive every place's state from snapshot s (previous: the one before it,
 * or NULL for the first) and feed them.  Every series of a throttle family
 * (a family with METRIC_SIGNAL_THROTTLE_SECONDS, whichever collector adds
 * it) feeds the place its condition and its socket, die and channel labels
 * name, active while its seconds grow: a channel's slot, critical and
 * cause series are one place (kind "dram_throttled_seconds"), a socket's
 * PROCHOT sources and an AMD frequency limit for PROCHOT another
 * ("prochot_seconds"), the other frequency limits a third
 * ("frequency_limited_seconds").  Their episodes record the series that
 * took part, and add up per sample the most seconds one series counted,
 * the sample intervals covered (their ratio is the share throttled) and
 * the socket's peak temperature.  A place whose series are all gone (their
 * collector stopped) ends its episode.  Then, from the
 * thermal bits and events: DRAM thermal throttling per socket when
 * dram_thermal_throttled_cycles grew (only where the socket has no
 * throttle_dram_socket_seconds value, which is the same event as a
 * series); PROCHOT per socket when any core
 * has prochot_active or prochot_assertions grew; thermal throttling per core
 * and per package from the status bits.  Stamps come from s->time (wall
 * clock); durations from episode_monotonic_clock, and an ended episode's
 * end stamp is its start stamp plus its duration.  Calls log_change for
 * each change (may be NULL).  Then copies the list into s->episodes
 * (allocated; snapshot_release frees it).  Returns 0 or -ENOMEM.
 */
int episode_update_from_snapshot(struct episode_tracker *t, const struct snapshot *previous,
				 struct snapshot *s,
				 void (*log_change)(void *arg, const struct episode_change *c),
				 void *arg);

/*
 * An episode in words (episode_words.c), as the log, the --once table and the page say it:
 * its place ("socket 1 channel 4 slots 0, 1", "socket 0 core 3") into
 * place and its condition ("DRAM throttled for heat", "PROCHOT asserted
 * (external and internal)") into what, each truncated to its length.
 */
void episode_describe(const struct snapshot_episode *e, char *place, size_t place_len,
		      char *what, size_t what_len);

/* The slots e's series name, as a bit mask (bit n: slot n, up to 31). */
uint32_t episode_slots(const struct snapshot_episode *e);

/*
 * Which levels of DRAM throttling e's series tell: critical (the critical
 * families) and warning (the others).
 */
void episode_levels(const struct snapshot_episode *e, bool *ret_warning, bool *ret_critical);

/*
 * The newest episode in s's list that series sample v (a throttle
 * family's) took part in, or NULL: the episode its OpenMetrics exemplar
 * names.
 */
const struct snapshot_episode *episode_of_series(const struct snapshot *s,
						 const struct metric_sample *v);

/* The clock durations are measured on: CLOCK_MONOTONIC in seconds; a test seam. */
extern double (*episode_monotonic_clock)(void);

#endif
