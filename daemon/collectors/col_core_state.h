/*
 * The core-PMC collector's state, shared by its two files: col_core.c
 * (start, sample, stop: what each CPU counts) and col_core_values.c (the
 * families and the values a sample adds).  Internal to the collector.
 */
#ifndef UNCORED_COL_CORE_STATE_H
#define UNCORED_COL_CORE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "cpu.h"
#include "engine.h"
#include "event.h"
#include "metric.h"
#include "snapshot.h"

#define N_FIXED 3                 /* instructions, cycles, ref cycles */
#define CORE_MAX_EVENTS 16        /* programmable events, defaults included */
#define CORE_N_GROUPS 2           /* a CPU's groups: the fixed events, the programmable ones */

enum cpu_state {
	CPU_PENDING,       /* not opened yet (offline at start) */
	CPU_OPEN,
	CPU_UNUSABLE,      /* cannot be used; noted in the collector's status */
};

struct core_cpu {
	int cpu;
	enum cpu_state state;
	bool is_fresh;             /* read this sample */
	bool has_read;             /* readings hold a read */
	bool is_offline;           /* its last read found it offline: not one of the units */
	struct cpu_perfmon pm;
	struct engine_group *groups[CORE_N_GROUPS];  /* the fixed events', the others' (or NULL) */
	int gp_refused;            /* the others' group could not be opened: the errno, else 0 */
	bool split;                /* two groups (perf); one with the msr engine */
	size_t n_fixed;            /* the always-counted events asked: N_FIXED, or 2 on AMD
				      Zen 2/3 (no ref-cycles); slots n_fixed..N_FIXED-1 unused */
	size_t n_group;            /* N_FIXED slots, then the events that exist here */
	int slot[CORE_MAX_EVENTS];   /* event k's place in the group, -1 when not asked */
	/* N_FIXED + the configured events each, in core_state's lists (most never the whole 16). */
	struct engine_event *group_events;
	struct engine_reading *readings;
};

struct core_state {
	struct engine engine;
	bool amd;                  /* AMD's core PMU (hardware-amd.md §3): perf, GP counters only */
	size_t n_fixed;            /* the always-counted events of this CPU (core_cpu.n_fixed) */
	int n_events;
	const struct event_spec *events[CORE_MAX_EVENTS];
	int n_cpus;
	struct core_cpu *cpus;
	struct engine_event *group_events;     /* every CPU's, n_cpus x (N_FIXED + n_events) */
	struct engine_reading *readings;       /* likewise */
};

enum core_per {
	CORE_PER_CPU,
	CORE_PER_CORE,
	CORE_PER_SOCKET,
};
/* The collector's families (collector_ops families), in /metrics order. */
#define CORE_N_FAMILIES 21
extern const struct metric_family *const core_families[CORE_N_FAMILIES];

/*
 * cc's events as two engine groups on the perf engine (col_core_groups.c):
 * group_events[0 .. N_FIXED) and the rest, so that a programmable event
 * that never gets a counter does not keep the fixed events from theirs;
 * one group on the msr engine, which places each event alone.  readings[]
 * keeps the order of group_events.
 *
 * core_groups_open opens both on cc->cpu; returns 0, or the fixed group's
 * negative errno (why says it; nothing is left open).  A refused second
 * group leaves the first counting: its events read as failed, with the
 * errno, until the CPU is opened again.
 */
int core_groups_open(struct engine *e, struct core_cpu *cc, char *why, size_t whylen);

/*
 * Read both groups into cc->readings.  Returns 0, -ENXIO when the CPU is
 * offline, or the first other error.
 */
int core_groups_read(struct engine *e, struct core_cpu *cc);

/* Close both (either may be absent); the first error, failures added in *ret_failed (may be NULL). */
int core_groups_close(struct engine *e, struct core_cpu *cc, unsigned *ret_failed);

/* Whether any group of cc is open. */
bool core_groups_open_any(const struct core_cpu *cc);

/*
 * Slot slot's reading of cc's last read; NULL when not asked (-1, or an
 * always-counted slot at or past cc->n_fixed) or not read yet.
 */
const struct engine_reading *core_reading_of(const struct core_cpu *cc, int slot);

/* Add the values of cc, when it was read this sample, to s (per = cpu). */
void core_fill_cpu(struct collector *c, struct snapshot *s, const struct core_state *st,
		   const struct core_cpu *cc);

/* Add the sums per core or per socket to s (per = core or socket). */
void core_fill_sums(struct collector *c, struct snapshot *s, const struct core_state *st,
		    enum core_per per);

#endif
