/*
 * The sample API: a collector declares its metric families once (name,
 * help, type, unit, labels, and how the JSON snapshot and the --once table
 * show them) and adds each value of a sample with snapshot_add_sample().
 * The formatters walk what was added; counter totals carry across reloads
 * and --once intervals by family, place and label, with no knowledge of
 * the collector.  Absent hardware is simply not added.
 *
 * The built-in collectors still export through the fixed fields of struct
 * snapshot; a family added here appears after theirs in every output: in
 * /metrics after the built-in families, in the JSON snapshot as extra
 * fields at the end of its socket or cpu object (SPEC §5a allows extra
 * fields), in the --once table as lines at the end of the socket block.
 */
#ifndef UNCORED_METRIC_H
#define UNCORED_METRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snapshot;
struct strbuf;

enum metric_type {
	METRIC_GAUGE,
	METRIC_COUNTER,                /* a total since start; carried across reloads */
};

/* Where a value belongs, which decides its labels and its place in JSON. */
enum metric_scope {
	METRIC_SCOPE_SOCKET,           /* socket="N"; a field of the socket's JSON object */
	METRIC_SCOPE_CPU,              /* socket, core, cpu; a field of the cpu's JSON object */
};

struct metric_family {
	const char *name;              /* Prometheus name, "uncored_..." (SPEC §5 naming) */
	const char *help;
	enum metric_type type;
	const char *unit;              /* "seconds", "celsius", ... or "": for documentation; the
					  Prometheus name ends in it (SPEC §5 naming) */
	enum metric_scope scope;
	bool is_integer;               /* values are exact uint64_t (counts), else double */
	/*
	 * One more label, whose value each sample gives (e.g. "event"), or
	 * NULL.  With it, the JSON field is an object {label value: value}.
	 */
	const char *label;
	const char *json_key;          /* field name in the JSON object of the scope */
	/*
	 * Line title in the socket block of the --once table (counters as the
	 * change over the interval, gauges as the value), or NULL for none.
	 * Only socket-scope families without a label are shown there.
	 */
	const char *table_title;
};

/* One value as added; the family says which member holds it. */
struct metric_sample {
	const struct metric_family *family;
	int where;                     /* socket id or cpu number, by the family's scope */
	const char *label_value;       /* owned by the snapshot; NULL without a label */
	union {
		uint64_t u;
		double d;
	} value;
};

/*
 * Add one value of family f at socket or cpu where (by f->scope), with
 * label_value when f has a label (copied once per distinct text), as u
 * (f->is_integer) or d.  A second value for the same family, place and
 * label replaces the first.  0 or -ENOMEM (then s->is_short_of_memory is
 * set and the value is left out).  Only while s is being filled.
 */
int snapshot_add_sample(struct snapshot *s, const struct metric_family *f, int where,
			const char *label_value, uint64_t u, double d);

/* The value added for f at where with label_value (NULL: none), or NULL. */
const struct metric_sample *snapshot_find_sample(const struct snapshot *s,
						 const struct metric_family *f, int where,
						 const char *label_value);

/*
 * Add (sign > 0) or subtract (sign < 0) the counter samples of src whose
 * family is one of families[0..n) to those of dst with the same family,
 * place and label; a counter in src that dst lacks is added to dst when
 * sign > 0.  Gauges are left alone.
 */
int snapshot_add_sample_totals(struct snapshot *dst, const struct snapshot *src,
			       const struct metric_family *const *families, size_t n, int sign);

/* The Prometheus text of every family with samples in s, in the order first added. */
void metric_write_prom(const struct snapshot *s, struct strbuf *out);

/*
 * The JSON fields (", \"key\": value" each) of the families of scope with
 * samples at where, in the order first added.
 */
void metric_write_json_fields(const struct snapshot *s, enum metric_scope scope, int where,
			      struct strbuf *out);

/* The --once table lines of socket where between a and b. */
void metric_write_table_lines(const struct snapshot *a, const struct snapshot *b, int where,
			      struct strbuf *out);

#endif
