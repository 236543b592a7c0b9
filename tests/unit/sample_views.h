/*
 * The values the uncore and core collectors add, as the tests read and
 * write them (defined in fake_machines.c): families by name, and a view
 * of one socket's or CPU's values.
 */
#ifndef UNCORED_TEST_SAMPLE_VIEWS_H
#define UNCORED_TEST_SAMPLE_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "col_core.h"
#include "col_uncore.h"
#include "collector.h"
#include "snapshot.h"

/* The settings block of [section]'s collector in conf, to write (fake_machines.c). */
void *conf_settings_of(struct conf *conf, const char *section);

/* The [core] and [uncore] settings in conf (the collectors' blocks), to write. */
static inline struct core_settings *core_settings_of(struct conf *conf)
{
	return conf_settings_of(conf, "core");
}

static inline struct uncore_settings *uncore_settings_of(struct conf *conf)
{
	return conf_settings_of(conf, "uncore");
}

/* The same, to read. */
static inline const struct core_settings *core_settings_in(const struct conf *conf)
{
	return collector_settings(conf, collector_find("core"));
}

static inline const struct uncore_settings *uncore_settings_in(const struct conf *conf)
{
	return collector_settings(conf, collector_find("uncore"));
}

extern struct collector uncore_collector, core_collector;

/* The family name (Prometheus name or JSON key) of collector; fails the test without one. */
const struct metric_family *family_of(const char *collector, const char *name);
void add_value(struct snapshot *s, const char *collector, const char *name, int where,
	       const char *label, uint64_t u);
void add_text(struct snapshot *s, const char *collector, const char *name, int where,
	      const char *label, const char *text);

/*
 * What the uncore and core collectors added for one place, as the tests
 * read it: events in the order added, counted or not.
 */
#define VIEW_MAX_EVENTS 16

struct event_view {
	const char *name;
	const char *reason;        /* "" when available */
	uint64_t total;
	bool available;
};

struct uncore_view {
	bool has_uncore;           /* the socket's "uncore" object exists */
	bool has_clockticks;
	uint64_t clockticks, conflicts;
	int n_events;
	struct event_view events[VIEW_MAX_EVENTS];
};

struct cpu_view {
	bool has_core_pmu;         /* the CPU is counted */
	bool has_instructions, has_cycles, has_ref_cycles;
	uint64_t instructions, cycles, ref_cycles, conflicts;
	int n_events;
	struct event_view events[VIEW_MAX_EVENTS];
};

const struct uncore_view *uncore_view(const struct snapshot *s, int socket);
const struct cpu_view *cpu_view(const struct snapshot *s, int cpu);
/* A counted CPU: its fixed counters and empty event objects. */
void add_core_cpu(struct snapshot *s, int cpu, uint64_t instructions, uint64_t cycles,
		  uint64_t ref_cycles);
/* The thermal collector's family with json_key (fails the test without one). */
#endif
