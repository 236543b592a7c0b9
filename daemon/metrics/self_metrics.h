/*
 * The daemon's own metric families (build, CPU, collector status, sample
 * count and timing, CPU hotplug, the journal), declared with the sample API (metric.h) like a
 * collector's, and added to each snapshot from its own fields.
 */
#ifndef UNCORED_SELF_METRICS_H
#define UNCORED_SELF_METRICS_H

#include <stddef.h>

#include "metric.h"

struct snapshot;

/* The families, in /metrics order (before every collector's). */
extern const struct metric_family *const self_metric_families[];
extern const size_t self_metric_n_families;

/*
 * Add the daemon's values of s from its version, cpu_id, collectors,
 * samples, last_sample_duration_s, the hotplug counts and journal (again after changing them: a value
 * added again replaces the first).  Only while s is being filled.
 */
void self_metrics_add(struct snapshot *s);

#endif
