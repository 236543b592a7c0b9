/*
 * The collector interface.  A collector owns the hardware state it
 * programs and the totals it accumulates; each sample it writes its values
 * into the snapshot being built.  Collectors know nothing of each other,
 * of HTTP or of systemd; they report a status in parts (up or not, why
 * not, and the degradations that hold now) and the sampler decides what
 * to log.
 *
 * Only the sampler thread calls sample(); start() and stop() run before the
 * sampler starts and after it has finished.
 */
#ifndef UNCORED_COLLECTOR_H
#define UNCORED_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "cpu.h"
#include "engine.h"
#include "hw.h"
#include "metric.h"
#include "snapshot.h"
#include "strbuf.h"

struct collector;
struct place_labels;

#define COLLECTOR_TEXT_MAX 192
#define COLLECTOR_MAX_DEGRADATIONS 8

/*
 * A way a running collector works less than fully ("socket 1: no online
 * CPU, no TjMax"), listed while it holds.  key names what it is about, so
 * that the same condition noted again replaces its text instead of adding
 * a copy, and so that it can be cleared when it no longer holds.
 */
struct collector_degradation {
	char key[COLLECTOR_TEXT_MAX];
	char text[COLLECTOR_TEXT_MAX];
};

struct collector_status {
	char why_not[COLLECTOR_TEXT_MAX]; /* why the collector is not up; "" while it is */
	int n_degradations;               /* in the order they were first noted */
	struct collector_degradation degradations[COLLECTOR_MAX_DEGRADATIONS];
	unsigned n_unlisted;              /* noted when the list was full; until restart */
};

struct collector_ops {
	const char *name;                 /* its [section], its collector label, its status entry */

	/*
	 * Allocate state, check the facility, claim counters.  Returns 0 when
	 * the collector runs (possibly degraded: collector_degrade), -ENOTSUP
	 * when the machine lacks the facility (or the configuration turns the
	 * collector off), or another negative errno; in both error cases
	 * collector_refuse says why in one sentence and stop() is still safe.
	 * An enabled collector that returns -ENOTSUP is *not applicable*: it
	 * is reported as such, never as down (collector_start).  A config
	 * error detected here (too many events, say) is -EINVAL.
	 */
	int (*start)(struct collector *c);

	/* One sample: read hardware, accumulate, fill s. Never fails as a whole. */
	void (*sample)(struct collector *c, struct snapshot *s);

	/* Restore every register changed to the value found; free state. */
	void (*stop)(struct collector *c);

	/*
	 * The families the collector adds values of (metric.h), in /metrics
	 * order: the writers, episodes and the history walk them, and their
	 * counters carry across reloads and --once intervals generically.
	 */
	const struct metric_family *const *families;
	size_t n_families;

	/* The collector's [section] of the configuration file, parsed by conf.c. */
	const struct conf_section *conf_section;

	/*
	 * For --list-events: the collector's block of what it can count on the
	 * CPU described by info, lines of "  NAME  how", under a heading line.
	 * NULL for a collector without events.
	 */
	void (*list_events)(const struct cpu_info *info, struct strbuf *out);

	/*
	 * The generation-independent throttling signals it delivers on the
	 * CPU info describes, with conf, while it is up: THROTTLE_BIT()s of
	 * throttle_signal.h, by what the generation has (never by probing).
	 * Asked at every start, whether the collector then runs or not, so
	 * that a signal the host cannot see names the collector that would
	 * see it and why it does not.  NULL for a collector that delivers none.
	 */
	unsigned (*throttle_signals)(const struct cpu_info *info, const struct conf *conf);

	/*
	 * Whether conf turns the collector on (a disabled one is still listed).
	 * NULL: its section's "enabled" key (collector_ops_enabled).
	 */
	bool (*is_enabled)(const struct conf *conf);

	/*
	 * Whether going from old to new changes a setting of the collector's
	 * own, so that a reload must restart it.  The sampling interval is the
	 * sampler's business and not asked about here.  NULL: any key of its
	 * section (collector_ops_conf_changed).
	 */
	bool (*conf_changed)(const struct conf *old, const struct conf *new);

	/*
	 * Whether, with conf, it counts through the kernel's perf ps when it
	 * runs (enabled now or by a later reload; col_engine.h), so that the
	 * privilege drop keeps what a later perf_event_open needs.  NULL for
	 * a collector that never uses perf.
	 */
	bool (*uses_perf)(const struct conf *conf, struct perf_sys *ps);
};

/*
 * uncored_pmu_conflicts_total, the one family every collector that claims
 * PMU counters adds its conflict counts to (list it among its families):
 * labels collector (its name), then socket, core, cpu as far as the count
 * is placed (METRIC_LABEL_SEP-separated, an empty one left out), one
 * sample per place, where = the place's number (a socket id, a CPU).
 */
extern const struct metric_family collector_pmu_conflicts;

/* Add a conflicts count of c to s (collector_pmu_conflicts); socket, core or cpu -1: no label. */
int collector_add_conflicts(struct collector *c, struct snapshot *s, int socket, int core, int cpu,
			    uint64_t n);

/*
 * uncored_pmu_resets_total, labelled as collector_pmu_conflicts: the
 * intervals its counters lost (engine_reading.resets: another agent
 * cleared a counter, or the kernel detached a perf group at a CPU's
 * offline edge), on either engine.  The lost interval itself is absent
 * from the counts, never 0.
 */
extern const struct metric_family collector_pmu_resets;

/* Add a resets count of c to s (collector_pmu_resets); socket, core or cpu -1: no label. */
int collector_add_resets(struct collector *c, struct snapshot *s, int socket, int core, int cpu,
			 uint64_t n);

/*
 * uncored_pmu_multiplexing_ratio, the family the uncore box collectors (pcu,
 * imc) add their perf groups' time running over time enabled to (list it
 * among the families): labels collector, socket, die (left out on a
 * single-die package), box (the PCU instance, the memory channel).
 */
extern const struct metric_family collector_pmu_multiplexing;

/* Add box's smallest ratio of the last interval to s; die -1: no die label. */
int collector_add_multiplexing(struct collector *c, struct snapshot *s, int socket, int die,
			       int box, double ratio);

struct collector {
	const struct collector_ops *ops;
	struct hw *hw;
	const struct cpu_info *info;
	const struct cpu_topology *topo;
	const struct conf *conf;
	void *state;                      /* the collector's own */

	bool up;
	/*
	 * The units it counts on (core: its online CPUs; uncore: its sockets
	 * with an online CPU) and on how many it counts, from collector_units;
	 * units 0: the collector reports no units.
	 */
	unsigned units, units_counting;
	/*
	 * Enabled, but start() said the machine lacks the facility (-ENOTSUP):
	 * the collector is left out of uncored_collector_up and its alert.
	 */
	bool not_applicable;
	unsigned throttle_signals;        /* ops->throttle_signals at start; collector.c's */
	bool started;                     /* start() returned 0, stop() not run yet; collector.c's */
	struct collector_status status;   /* through the calls below */
	uint64_t errors;                  /* failed hardware reads since start */

	/* A PMU collector's counter engine (col_engine.h); ENGINE_NONE for none or not chosen yet. */
	enum engine_kind engine;
	char engine_why[COLLECTOR_TEXT_MAX];

	/* The label texts of its places, made once (place_labels.h); collector.c's. */
	struct place_labels *place_labels;
};

/*
 * The registered collectors, in output order: a collector is one file with
 * its collector_ops and one line in the table of collectors.c, or, for one
 * that is not built into the daemon (a test's), one COLLECTOR_REGISTER
 * line in its file.  Each sample lists their status in
 * snapshot->collectors in this order.
 */
extern const struct collector_ops *collector_registry[SNAPSHOT_MAX_COLLECTORS];
extern size_t collector_registry_n;

/*
 * Register ops after the built-in collectors.  Only before anything runs
 * (at program start).  -ENOSPC when SNAPSHOT_MAX_COLLECTORS are
 * registered, -EEXIST when the name is taken, -E2BIG when its settings do
 * not fit CONF_SETTINGS_BYTES.
 */
int collector_register(const struct collector_ops *ops);

/*
 * The settings block of ops in conf (conf_section.settings_size), or NULL
 * when ops is not registered.
 */
const void *collector_settings(const struct conf *conf, const struct collector_ops *ops);

/*
 * Whether conf turns ops on: ops->is_enabled, or without one the bool of
 * its section's "enabled" key (true when it has none).
 */
bool collector_ops_enabled(const struct collector_ops *ops, const struct conf *conf);

/*
 * Whether ops must restart to go from old to new: ops->conf_changed, or
 * without one whether any key of its section changed.
 */
bool collector_ops_conf_changed(const struct collector_ops *ops, const struct conf *old,
				const struct conf *new);

/* Register ops at program start, from the collector's own file. */
#define COLLECTOR_REGISTER(ops) \
	__attribute__((constructor)) static void register_##ops(void) { collector_register(&ops); }

/*
 * What the values ops adds are marked with (struct metric_sample's
 * source): its registry index + 1, or 0 when it is not registered.
 */
int collector_source(const struct collector_ops *ops);

/* The registered collector called name, or NULL. */
const struct collector_ops *collector_find(const char *name);

/*
 * Set up c for ops with the shared context (borrowed; must outlive c),
 * note the throttling signals it delivers here and call ops->start.
 * Returns what start returned; c->up, c->not_applicable and c->status tell
 * the result.  When start fails without saying why, the degradations it
 * noted become the reason, or else a generic sentence with the errno.
 */
int collector_start(struct collector *c, const struct collector_ops *ops, struct hw *hw,
		    const struct cpu_info *info, const struct cpu_topology *topo,
		    const struct conf *conf);

/* Run one sample and list the status in s (snapshot_add_collector). */
void collector_sample(struct collector *c, struct snapshot *s);

/*
 * How many of its n units (online CPUs, sockets) c counts on in this
 * sample: it is up only when it counts on all of them, partial on some,
 * down on none.  Sets c->up, c->units and c->units_counting.
 */
void collector_units(struct collector *c, unsigned n, unsigned counting);

/* Say why c is not up (replacing what was said before); truncated to COLLECTOR_TEXT_MAX. */
void collector_refuse(struct collector *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * For start(): when c's configuration turns it off (collector_ops_enabled),
 * refuse c with "disabled in the configuration" and return true; start()
 * then returns -ENOTSUP.  False, and nothing said, when it is on.
 */
bool collector_refuse_disabled(struct collector *c);

/*
 * Note degradation key, or replace its text when it is already listed.
 * When COLLECTOR_MAX_DEGRADATIONS are listed, a new one is only counted.
 */
void collector_degrade(struct collector *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Clear degradation key: it no longer holds.  Nothing when it is not listed. */
void collector_recover(struct collector *c, const char *key);

/*
 * Note a degradation that holds until the collector restarts, keyed by its
 * own text (noting it again changes nothing).
 */
void collector_note(struct collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The status as one sentence list: why not up, then each degradation, then
 * "N more" for the unlisted ones, "; "-separated; "" when there is nothing
 * to say.  Writes at most len bytes (NUL included) to buf and returns buf.
 */
const char *collector_reason(const struct collector *c, char *buf, size_t len);

/* Stop c (restore) if it was started; idempotent. */
void collector_stop(struct collector *c);

#endif
