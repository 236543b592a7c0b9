/*
 * The sample API: a collector declares its metric families once (name,
 * help, type, unit, labels, and how the JSON snapshot and the --once table
 * show them) and adds each value of a sample with snapshot_add_sample().
 * The formatters walk what was added; counter totals carry across reloads
 * and --once intervals by family, place and label, with no knowledge of
 * the collector.  Absent hardware is simply not added.
 *
 * The writers walk the families the registered collectors declare
 * (collector.h), so a family without a value this sample can still be a
 * JSON null.
 *
 * The daemon's own families (self_metrics.h) are declared the same way
 * and come first in /metrics.  The uncore and core collectors still
 * export through the fixed fields of struct snapshot; the writers put
 * those where SPEC §5a has them and the declared families around them: in
 * /metrics between the uncore and the core families, in JSON by json_order (METRIC_JSON_*), in the --once
 * table after the uncore lines of the socket block.
 */
#ifndef UNCORED_METRIC_H
#define UNCORED_METRIC_H

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
	METRIC_SCOPE_DAEMON,           /* where = 0; no place label; not in the JSON objects */
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
};

/*
 * Fixed parts of the JSON objects that the JSON writer puts itself, by
 * json_order position (SPEC §5a): a family's field goes between them by its
 * own json_order.  The socket object opens with "socket", has the fixed
 * counter block at METRIC_JSON_SOCKET_FIXED and "cores" at
 * METRIC_JSON_SOCKET_CORES; a core object opens with "core" and "cpus";
 * a cpu object opens with "cpu", "socket", "core", "online".
 */
#define METRIC_JSON_SOCKET_FIXED 500   /* the uncore counter block, from struct snapshot */
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
	 * NULL.  With it, the JSON field is an object {label value: value}.
	 * A family may name several, comma-separated ("channel,cause"); its
	 * samples then give the values separated by METRIC_LABEL_SEP, and its
	 * JSON field (if it has a key) nests one object per label: the last
	 * label outermost (what the value means: cause, source), then the
	 * others in order ({"thermal": {"CHANNEL": value}}).  An info-style
	 * family (value 1, the facts in its labels) has no JSON key.
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
	 * Without a value, the field is null (the object always has it) rather
	 * than left out.  Not for a family in a group.
	 */
	bool json_null;

	/*
	 * The --once table (counters as the change over the interval, gauges
	 * as the value).  A socket-scope family without a label and with a
	 * title is a line of its socket's block; consecutive families with the
	 * same title and a table_part share one line ("part value, part
	 * value").  A line is left out unless both snapshots have its values.
	 * Values with a signal are shown in the socket header and the core
	 * rows instead (fmt_table.c).
	 */
	const char *table_title;
	const char *table_part;
};

/* One value as added; the family says which member holds it. */
struct metric_sample {
	const struct metric_family *family;
	int where;                     /* by the family's scope (enum metric_scope) */
	const char *label_value;       /* owned by the snapshot; NULL without a label */
	union {
		uint64_t u;
		double d;
	} value;
};

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

/* The value added for f at where with label_value (NULL: none), or NULL. */
const struct metric_sample *snapshot_find_sample(const struct snapshot *s,
						 const struct metric_family *f, int where,
						 const char *label_value);

/*
 * The value at where of the first registered family (collector.h order)
 * with signal and scope and no label, or NULL: how the daemon's own
 * readers (episodes, history, the table) find what they derive from.
 */
const struct metric_sample *snapshot_find_signal(const struct snapshot *s,
						 enum metric_signal signal,
						 enum metric_scope scope, int where);

/* The same for core c of s (METRIC_SCOPE_CORE at c's first CPU). */
const struct metric_sample *snapshot_find_core_signal(const struct snapshot *s,
						      const struct snapshot_core *c,
						      enum metric_signal signal);

/* A METRIC_INT value. */
static inline int64_t metric_sample_int(const struct metric_sample *v)
{
	return (int64_t)v->value.u;
}

/*
 * Add (sign > 0) or subtract (sign < 0) the counter samples of src whose
 * family is one of families[0..n) to those of dst with the same family,
 * place and label.  A value dst lacks stays absent (the hardware is not
 * counted now); gauges and foreign totals are left alone.
 */
int snapshot_add_sample_totals(struct snapshot *dst, const struct snapshot *src,
			       const struct metric_family *const *families, size_t n, int sign);

/*
 * The Prometheus text of every registered family with samples in s, in
 * registration order, then declaration order (samples in the order added).
 * A family two collectors declare is written once; families that share a
 * name (one per label set) are one family: HELP and TYPE of the first,
 * then the samples of each.
 */
void metric_write_prom(const struct snapshot *s, struct strbuf *out);

/* The same for families[0..n) (the daemon's own, self_metrics.h). */
void metric_write_prom_families(const struct snapshot *s,
				const struct metric_family *const *families, size_t n,
				struct strbuf *out);

/*
 * The JSON fields (", \"key\": value" each) at where of the registered
 * families of scope whose json_order is in [from, to) (0 counting as
 * after every other; to = INT_MAX: no end), by json_order: groups as one object, null for a
 * json_null family without a value.
 */
void metric_write_json_fields(const struct snapshot *s, enum metric_scope scope, int where,
			      int from, int to, struct strbuf *out);

/* The --once table lines of socket where between a and b (see table_title). */
void metric_write_table_lines(const struct snapshot *a, const struct snapshot *b, int where,
			      struct strbuf *out);

#endif
