/*
 * Throttle episodes: a signal going quiet → active → quiet, per kind and
 * place (socket, optionally core).  The tracker is a pure state machine fed
 * once per sample; it keeps a bounded list of episodes, newest first, and
 * reports which started and ended in that sample so the caller can log
 * them.
 */
#ifndef UNCORED_EPISODE_H
#define UNCORED_EPISODE_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

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
 * not be remembered.  A started episode enters the list
 * with end = 0; when the list is full the oldest finished episode is
 * dropped, or the oldest ongoing one when none has finished.
 */
int episode_update(struct episode_tracker *t, enum episode_kind kind, int socket, int core,
		   bool active, double now, struct episode_change *ret_change);

/*
 * Derive every place's state from snapshot s (previous: the one before it,
 * or NULL for the first) and feed them.  Every series of a throttle family
 * (a family with METRIC_SIGNAL_THROTTLE_SECONDS, whichever collector adds
 * it) is a place of its own, active while its seconds grow: its episodes
 * have the family's json_key as kind, the family and label value, and add
 * up the seconds counted, the sample intervals covered (their ratio is the
 * share throttled) and the socket's peak temperature.  Then, from the
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

/* The clock durations are measured on: CLOCK_MONOTONIC in seconds; a test seam. */
extern double (*episode_monotonic_clock)(void);

#endif
