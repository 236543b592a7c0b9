/*
 * The sample API: a collector declares its metric families once (name,
 * help, type, unit, labels, and how the JSON snapshot and the --once table
 * show them) and adds each value of a sample with snapshot_add_sample()
 * (or snapshot_add_text() for a JSON text).  The writers (output/prom.c,
 * json.c, table.c) walk what was added through the lookups below; counter
 * totals carry across reloads and --once intervals by family, place and
 * label, with no knowledge of the collector.  Absent hardware is simply
 * not added.
 *
 * The writers walk the families the registered collectors declare
 * (collector.h; metric_families_declared()), in registration then
 * declaration order, a family listed by several collectors once (where it
 * is first listed), so a family without a value this sample can still be
 * a JSON null.  The daemon's own families (self_metrics.h) are declared
 * the same way and come first in /metrics.
 */
#ifndef UNCORED_METRIC_H
#define UNCORED_METRIC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snapshot;
struct snapshot_core;
struct strbuf;

enum metric_type {
	METRIC_GAUGE,
	METRIC_COUNTER,                /* a total since start; carried across reloads */
};

/* How a value is held and written. */
enum metric_kind {
	METRIC_DOUBLE,                 /* d; Prometheus and JSON as a number */
	METRIC_UINT,                   /* u: an exact count */
	METRIC_INT,                    /* u holds an int64_t (a temperature) */
	METRIC_BOOL,                   /* u is 0 or 1; 0/1 in Prometheus, false/true in JSON */
	METRIC_TEXT,                   /* text, owned by the snapshot: a JSON string only (no name) */
};

/* Where a value belongs, which decides its labels and its place in JSON. */
enum metric_scope {
	METRIC_SCOPE_SOCKET,           /* where = socket id; socket="N"; the socket's JSON object */
	/*
	 * where = the core's first CPU (cpus[0] of its struct cpu_core);
	 * socket, core; the JSON object of the core in its socket's "cores".
	 */
	METRIC_SCOPE_CORE,
	METRIC_SCOPE_CPU,              /* where = cpu; socket, core, cpu; the cpu's JSON object */
	/*
	 * where = 0 (or any number that tells samples apart); no place
	 * label, the labels say it all; not in the JSON objects.
	 */
	METRIC_SCOPE_DAEMON,
	METRIC_SCOPE_COUNT,            /* how many there are; keep it last */
};

/*
 * What a family means to the daemon's own readers: episodes, the history
 * and the --once table find the values they derive from by signal and
 * scope, never by a collector's name.
 */
enum metric_signal {
	METRIC_SIGNAL_NONE,
	METRIC_SIGNAL_TEMPERATURE,     /* degrees Celsius (METRIC_INT) */
	METRIC_SIGNAL_TJMAX,           /* TCC activation temperature (METRIC_INT) */
	METRIC_SIGNAL_THROTTLING,      /* thermally throttled now (METRIC_BOOL) */
	METRIC_SIGNAL_PROCHOT,         /* PROCHOT#/FORCEPR# asserted by another agent now (METRIC_BOOL) */
	METRIC_SIGNAL_THROTTLE_COUNT,  /* times throttled (METRIC_UINT counter) */
	METRIC_SIGNAL_INSTRUCTIONS,    /* instructions retired (counter): IPC */
	METRIC_SIGNAL_CYCLES,          /* unhalted core cycles (counter): IPC */
	/* The clock the event counts of the same place are fractions of (counter). */
	METRIC_SIGNAL_CLOCK,
	/* Event counts labelled by event name (event.h names the built-in ones). */
	METRIC_SIGNAL_EVENT_COUNTS,
	/*
	 * Seconds throttled (a labelled METRIC_DOUBLE counter): each series
	 * that grows is a throttle episode (episode.h), whatever collector
	 * adds it.
	 */
	METRIC_SIGNAL_THROTTLE_SECONDS,
	/*
	 * A socket's temperature sensors labelled by sensor name, where there
	 * is no package sensor (AMD k10temp: Tctl, TccdN; METRIC_DOUBLE).
	 */
	METRIC_SIGNAL_SENSOR_TEMPERATURE,
	/* A DIMM sensor's temperature, labelled channel,slot,sensor (METRIC_DOUBLE). */
	METRIC_SIGNAL_DIMM_TEMPERATURE,
	/* A DIMM's refresh rate multiplier, 1 or 2 (hot), labelled channel,slot (METRIC_UINT). */
	METRIC_SIGNAL_DIMM_REFRESH,
	METRIC_SIGNAL_COUNT,           /* how many there are; keep it last */
};

/*
 * Places in the JSON objects, by json_order (SPEC §5a): a family's field
 * goes among the others by its own json_order.  The socket object opens
 * with "socket" (the JSON writer's), has the gauges before
 * METRIC_JSON_SOCKET_FIXED, the counter blocks from there on, and "cores"
 * (the writer's) at METRIC_JSON_SOCKET_CORES; a core object opens with
 * "core" and "cpus"; a cpu object opens with "cpu", "socket", "core",
 * "online".
 */
#define METRIC_JSON_SOCKET_FIXED 500
#define METRIC_JSON_SOCKET_CORES 1000

#define METRIC_LABEL_SEP "\x1f"

struct metric_family {
	/*
	 * Prometheus name, "uncored_..." (SPEC §5 naming); NULL for a value
	 * that only the JSON snapshot shows.
	 */
	const char *name;
	const char *help;
	enum metric_type type;
	const char *unit;              /* "seconds", "celsius", ... or "": for documentation; the
					  Prometheus name ends in it (SPEC §5 naming) */
	enum metric_scope scope;
	enum metric_kind kind;
	/*
	 * One more label, whose value each sample gives (e.g. "event"), or
	 * NULL.  With it, the JSON field is an object {label value: value};
	 * a sample with label_value NULL adds no value but makes the object
	 * exist ({} when nothing else is added).  A family may name several,
	 * comma-separated ("channel,cause"); its samples then give the values
	 * separated by METRIC_LABEL_SEP, and a label whose value is empty is
	 * left out (Prometheus reads it as absent).  Its JSON field, if it has
	 * a key, nests one object per label: the last label outermost (what
	 * the value means: cause, source), then the others in order
	 * ({"thermal": {"CHANNEL": value}}).  An info-style family (value 1,
	 * the facts in its labels, "vendor,family") has no JSON key.
	 */
	const char *label;
	/*
	 * A total the source keeps itself (a kernel count): not carried
	 * across reloads and not turned into a per-interval count by --once.
	 */
	bool is_foreign_total;
	enum metric_signal signal;

	const char *json_key;          /* field name in the JSON object of the scope (or group) */
	/*
	 * The object the field is in within the scope's object (e.g. "rapl"),
	 * or NULL for the scope's object itself.  A group is written where its
	 * first member goes and only when one of its members has a value.
	 */
	const char *json_group;
	/*
	 * Position in the object (see METRIC_JSON_*); 0 puts the field after
	 * everything else.  Equal positions keep registration order.
	 */
	int json_order;
	/*
	 * Without a value, the field is null (the object, or the group when
	 * it is written, always has it) rather than left out.
	 */
	bool json_null;

	/*
	 * The --once table (counters as the change over the interval, gauges
	 * as the value).  A socket-scope family with a title is shown in its
	 * socket's block:
	 * - without a label, as one line; consecutive families with the same
	 *   title and a table_part share one line ("part value, part value").
	 *   A line is left out unless both snapshots have its values, but a
	 *   json_null member of a group the second snapshot has shows "-".
	 * - with a label, as one line per label value of the second
	 *   snapshot, titled by the label value ("-" when the first lacks
	 *   it); a METRIC_TEXT family's line is "title: text".  With
	 *   table_labels_titled, the line's title is the table_title, each
	 *   label but the last as ", NAME VALUE" and the last (what the
	 *   value means: cause, source) as ", VALUE", empty ones left out
	 *   ("DRAM throttled, channel 2, thermal"); seconds end in " s".
	 * The lines go by json_order.  A family with a signal and no title is
	 * shown only where output/table.c derives from it (the socket header and
	 * the core rows).
	 */
	const char *table_title;
	const char *table_part;
	bool table_labels_titled;
	/*
	 * For a labelled counter: the line of label value table_percent_label
	 * also shows its change as a percentage of the change of
	 * table_percent_of (a family of the same place without a label).
	 */
	const struct metric_family *table_percent_of;
	const char *table_percent_label;
};

/* One value as added; the family says which member holds it. */
struct metric_sample {
	const struct metric_family *family;
	int where;                     /* by the family's scope (enum metric_scope) */
	const char *label_value;       /* owned by the snapshot; NULL without a label */
	int source;                    /* who added it: struct snapshot's source then */
	/*
	 * The values of a labelled family at one place are a chain, from the
	 * one without a label (which exists with the first, holds the index
	 * + 1 of the last in value.u and is no value itself): index + 1 of
	 * the next, 0 at the end.
	 */
	int next;
	union {
		uint64_t u;
		double d;
		const char *text;      /* METRIC_TEXT; owned by the snapshot */
	} value;
};

/*
 * Size s, before its first value, for n values (the previous sample's
 * count and some room), so that filling it neither regrows nor rehashes
 * and it holds no room it will not use.  0, or -ENOMEM (then
 * s->is_short_of_memory is set); a no-op once s has values or room.
 */
int snapshot_reserve_values(struct snapshot *s, int n);

/*
 * Add one value of family f at where (by f->scope), with label_value when
 * f has a label (copied once per distinct text), as u (METRIC_UINT and
 * METRIC_BOOL; a METRIC_INT's int64_t converted) or d (METRIC_DOUBLE).  A
 * second value for the same family, place and label replaces the first.
 * 0 or -ENOMEM (then s->is_short_of_memory is set and the value is left
 * out).  Only while s is being filled.
 */
int snapshot_add_sample(struct snapshot *s, const struct metric_family *f, int where,
			const char *label_value, uint64_t u, double d);

/*
 * Add text (copied once per distinct text) as the value of the
 * METRIC_TEXT family f at where with label_value.  As snapshot_add_sample.
 */
int snapshot_add_text(struct snapshot *s, const struct metric_family *f, int where,
		      const char *label_value, const char *text);

/* The value added for f at where with label_value (NULL: none), or NULL. */
const struct metric_sample *snapshot_find_sample(const struct snapshot *s,
						 const struct metric_family *f, int where,
						 const char *label_value);

/*
 * The declared families (metric_families_declared()) with signal and
 * scope, those with a label (is_labelled) or those without, in that order,
 * *ret_n of them (NULL and 0 for a signal or scope out of range): what the
 * lookups by signal below try, in turn.  Worked out once, and again only
 * when the registry has grown; any thread may ask.
 */
const struct metric_family *const *metric_families_with_signal(enum metric_signal signal,
								enum metric_scope scope,
								bool is_labelled, size_t *ret_n);

/*
 * The value at where of the first registered family (collector.h order)
 * with signal and scope and no label, or NULL: how the daemon's own
 * readers (episodes, history, the table) find what they derive from.
 */
const struct metric_sample *snapshot_find_signal(const struct snapshot *s,
						 enum metric_signal signal,
						 enum metric_scope scope, int where);

/*
 * The value labelled label at where of the first registered family with
 * signal and scope that has it (an event count by name), or NULL.
 */
const struct metric_sample *snapshot_find_labelled_signal(const struct snapshot *s,
							  enum metric_signal signal,
							  enum metric_scope scope, int where,
							  const char *label);

/* The same for core c of s (METRIC_SCOPE_CORE at c's first CPU). */
const struct metric_sample *snapshot_find_core_signal(const struct snapshot *s,
						      const struct snapshot_core *c,
						      enum metric_signal signal);

/* Whether s has a value of f at where (for a labelled family: any, or its empty object). */
static inline bool snapshot_has_value(const struct snapshot *s, const struct metric_family *f,
				      int where)
{
	return snapshot_find_sample(s, f, where, NULL) != NULL;
}

/*
 * Every value of s in the order added, *ret_n of them.  The head of a
 * labelled family's chain (label_value NULL) is among them and is no
 * value itself.
 */
const struct metric_sample *snapshot_samples(const struct snapshot *s, int *ret_n);

/*
 * The values of the labelled family f at where, in the order first added:
 * the first (NULL: none), then snapshot_next_labelled() until NULL.
 */
const struct metric_sample *snapshot_first_labelled(const struct snapshot *s,
						     const struct metric_family *f, int where);
const struct metric_sample *snapshot_next_labelled(const struct snapshot *s,
						    const struct metric_sample *v);

/* A METRIC_INT value. */
static inline int64_t metric_sample_int(const struct metric_sample *v)
{
	return (int64_t)v->value.u;
}

/*
 * Add (sign > 0) or subtract (sign < 0) the counter samples of src whose
 * family is one of families[0..n), and that source added (0: whoever did),
 * to those of dst with the same family, place and label.  A value dst
 * lacks stays absent (the hardware is not counted now); gauges and foreign
 * totals are left alone.
 */
int snapshot_add_sample_totals(struct snapshot *dst, const struct snapshot *src,
			       const struct metric_family *const *families, size_t n, int source,
			       int sign);

/*
 * Where the declared families come from: the sources (the registered
 * collectors) in registration order, each with its name and the families
 * it declares, n_families of them into *ret_n.  Declared here and
 * implemented by the collector registry (collectors/registry.c), so that
 * this layer never includes the collectors'.
 */
size_t metric_source_count(void);
const char *metric_source_name(size_t i);
const struct metric_family *const *metric_source_families(size_t i, size_t *ret_n);

/* The most declared families the writers handle (test_registry checks the registry stays below). */
#define METRIC_MAX_FAMILIES 128

/*
 * The families the registered collectors declare, in registration then
 * declaration order, a family listed by several collectors once (where it
 * is first listed), into ret; how many.  Worked out again only when the
 * registry has grown; any thread may ask.
 */
size_t metric_families_declared(const struct metric_family *ret[METRIC_MAX_FAMILIES]);

/* The same, stably sorted by metric_json_position(). */
size_t metric_families_by_json_order(const struct metric_family *ret[METRIC_MAX_FAMILIES]);

/* Where f goes among the fields of its JSON object: its json_order, 0 after every other. */
static inline int metric_json_position(const struct metric_family *f)
{
	return f->json_order ? f->json_order : INT_MAX;
}

/* Whether f and g are in the same JSON group (same scope and json_group; f has one). */
bool metric_same_json_group(const struct metric_family *f, const struct metric_family *g);

/*
 * Whether a member of the JSON group of g among families[0..n) has a value
 * at where in s: whether the group is written (and, in the --once table,
 * whether its json_null members show "-").
 */
bool snapshot_json_group_has_value(const struct snapshot *s,
				   const struct metric_family *const *families, size_t n,
				   const struct metric_family *g, int where);

/*
 * The value of label name in a series of family f whose label value is
 * label_value (METRIC_LABEL_SEP-separated, in the order of f->label), into
 * buf (len bytes); false when f has no such label, the value is empty or
 * it does not fit.
 */
bool metric_label_value(const struct metric_family *f, const char *label_value, const char *name,
			char *buf, size_t len);

/* The same of a number from 0 to 2^20 - 1 (a die, channel or slot), or -1. */
int metric_label_number(const struct metric_family *f, const char *label_value, const char *name);

/*
 * The registered family named name (its Prometheus name, or for a family
 * without one its json_key) that collector (NULL: any) declares, or NULL.
 */
const struct metric_family *metric_family_find(const char *collector, const char *name);

#endif
