/*
 * The sample API's shapes (metric.h), through a collector registered by
 * this test only: a core-scope signed value that is null when absent, a
 * boolean, a value only the JSON shows, a JSON group whose two members
 * share one table line, a foreign total, a labelled per-cpu counter; and
 * the value index under many values.  A second collector, "box": texts,
 * an empty labelled object, a json_null group member, percentages in the
 * table, labels that say all of a place, and the carry by source.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "fake_machines.h"
#include "json.h"
#include "prom.h"
#include "table.h"
#include "throttle_families.h"
#include "metric.h"
#include "snapshot.h"
#include "strbuf.h"

static const struct metric_family m_celsius = {
	.name = "uncored_shape_celsius", .help = "A core temperature.", .type = METRIC_GAUGE,
	.unit = "celsius", .scope = METRIC_SCOPE_CORE, .kind = METRIC_INT,
	.signal = METRIC_SIGNAL_TEMPERATURE,
	.json_key = "shape_celsius", .json_order = 5, .json_null = true,
};

static const struct metric_family m_flag = {
	.name = "uncored_shape_flag", .help = "A status bit.", .type = METRIC_GAUGE, .unit = "",
	.scope = METRIC_SCOPE_SOCKET, .kind = METRIC_BOOL,
	.json_key = "shape_flag", .json_order = 5, .json_null = true,
};

static const struct metric_family m_json_only = {
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_BOOL,
	.json_key = "shape_json_only", .json_order = 6,
};

static const struct metric_family m_a = {
	.name = "uncored_shape_a_seconds_total", .help = "Part a.", .type = METRIC_COUNTER,
	.unit = "seconds", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_DOUBLE,
	.json_key = "a_seconds", .json_group = "shape", .json_order = METRIC_JSON_SOCKET_FIXED + 1,
	.table_title = "shape time", .table_part = "a",
};

static const struct metric_family m_b = {
	.name = "uncored_shape_b_seconds_total", .help = "Part b.", .type = METRIC_COUNTER,
	.unit = "seconds", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_DOUBLE,
	.json_key = "b_seconds", .json_group = "shape", .json_order = METRIC_JSON_SOCKET_FIXED + 1,
	.table_title = "shape time", .table_part = "b",
};

static const struct metric_family m_foreign = {
	.name = "uncored_shape_foreign_total", .help = "Someone else's total.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.is_foreign_total = true, .json_key = "shape_foreign", .table_title = "shape foreign",
};

static const struct metric_family m_events = {
	.name = "uncored_shape_events_total", .help = "Counts per cpu and event.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.label = "event", .json_key = "shape_events",
};

static const struct metric_family *const shape_families[] = {
	&m_celsius, &m_flag, &m_json_only, &m_a, &m_b, &m_foreign, &m_events,
};

static int shape_start(struct collector *c)
{
	(void)c;
	return -ENOTSUP;
}

static void shape_sample(struct collector *c, struct snapshot *s)
{
	(void)c;
	(void)s;
}

static void shape_stop(struct collector *c)
{
	(void)c;
}

static const struct conf_section shape_section = { .name = "shape" };

static bool shape_is_enabled(const struct conf *conf)
{
	(void)conf;
	return false;
}

static bool shape_conf_changed(const struct conf *old, const struct conf *new)
{
	(void)old;
	(void)new;
	return false;
}

static const struct collector_ops shape_collector_ops = {
	.name = "shape",
	.start = shape_start,
	.sample = shape_sample,
	.stop = shape_stop,
	.families = shape_families,
	.n_families = sizeof(shape_families) / sizeof(shape_families[0]),
	.conf_section = &shape_section,
	.is_enabled = shape_is_enabled,
	.conf_changed = shape_conf_changed,
};

COLLECTOR_REGISTER(shape_collector_ops)

/*
 * A second collector's box: a group with a null-when-absent clock, event
 * counts labelled by name that the table shows as a percentage of the
 * clock, texts saying why an event is not counted, and a family whose
 * labels say all of its place.
 */
static const struct metric_family m_clock;

static const struct metric_family m_counts = {
	.name = "uncored_box_counts_total", .help = "Counts per socket and event.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "event", .signal = METRIC_SIGNAL_EVENT_COUNTS,
	.json_key = "counts", .json_group = "box", .json_order = METRIC_JSON_SOCKET_FIXED + 51,
	.table_title = "box counts", .table_percent_of = &m_clock, .table_percent_label = "busy",
};

static const struct metric_family m_clock = {
	.name = "uncored_box_clock_total", .help = "The box clock.", .type = METRIC_COUNTER,
	.unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT, .signal = METRIC_SIGNAL_CLOCK,
	.json_key = "clock", .json_group = "box", .json_order = METRIC_JSON_SOCKET_FIXED + 50,
	.json_null = true, .table_title = "box clock",
};

static const struct metric_family m_why = {
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_TEXT,
	.label = "event", .json_key = "why", .json_group = "box",
	.json_order = METRIC_JSON_SOCKET_FIXED + 52, .table_title = "unavailable",
};

static const struct metric_family m_placed = {
	.name = "uncored_box_placed_total", .help = "Placed by its labels.", .type = METRIC_COUNTER,
	.unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT, .label = "kind,socket,cpu",
};

static const struct metric_family *const box_families[] = { &m_counts, &m_clock, &m_why,
							    &m_placed };

static const struct collector_ops box_collector_ops = {
	.name = "box",
	.start = shape_start,
	.sample = shape_sample,
	.stop = shape_stop,
	.families = box_families,
	.n_families = sizeof(box_families) / sizeof(box_families[0]),
	.conf_section = &shape_section,
	.is_enabled = shape_is_enabled,
	.conf_changed = shape_conf_changed,
};

COLLECTOR_REGISTER(box_collector_ops)

/*
 * A third collector that declares m_flag too (a shared module's family),
 * a family of the same name with one more label (another label set) and
 * one of several labels with a JSON key.
 */
static const struct metric_family m_flag_kind = {
	.name = "uncored_shape_flag", .help = "A status bit.", .type = METRIC_GAUGE, .unit = "",
	.scope = METRIC_SCOPE_SOCKET, .kind = METRIC_BOOL, .label = "kind",
};

/* Several labels: nested JSON objects, the last label outermost. */
static const struct metric_family m_nested = {
	.name = "uncored_shape_nested_seconds_total", .help = "Per channel, slot and cause.",
	.type = METRIC_COUNTER, .unit = "seconds", .scope = METRIC_SCOPE_SOCKET,
	.kind = METRIC_DOUBLE, .label = "channel,slot,cause", .json_key = "shape_nested",
	.json_order = METRIC_JSON_SOCKET_FIXED + 2,
};

static const struct metric_family *const second_families[] = { &m_flag, &m_flag_kind, &m_nested };

static const struct conf_section second_section = { .name = "second" };

static const struct collector_ops second_collector_ops = {
	.name = "second",
	.start = shape_start,
	.sample = shape_sample,
	.stop = shape_stop,
	.families = second_families,
	.n_families = sizeof(second_families) / sizeof(second_families[0]),
	.conf_section = &second_section,
	.is_enabled = shape_is_enabled,
	.conf_changed = shape_conf_changed,
};

COLLECTOR_REGISTER(second_collector_ops)

static void add(struct snapshot *s, const struct metric_family *f, int where, const char *label,
		uint64_t u, double d)
{
	assert_int_equal(snapshot_add_sample(s, f, where, label, u, d), 0);
}

/*
 * big_topology(): core 0 of socket 1 has CPUs 2 and 6, so its values are
 * at 2.  Socket 0 has the group and the flag, socket 1 neither.
 */
static struct snapshot *shaped(double a, double b)
{
	struct snapshot *s = snapshot_new(big_topology(), &westmere);

	assert_non_null(s);
	add(s, &m_celsius, 2, NULL, (uint64_t)(int64_t)-3, 0);
	add(s, &m_flag, 0, NULL, 1, 0);
	add(s, &m_json_only, 0, NULL, 0, 0);
	add(s, &m_a, 0, NULL, 0, a);
	add(s, &m_b, 0, NULL, 0, b);
	add(s, &m_foreign, 0, NULL, 7, 0);
	add(s, &m_events, 5, "x", 11, 0);
	add(s, &m_events, 5, "y\"z", 12, 0);
	return s;
}

static char *written(int (*write)(const struct snapshot *, struct strbuf *),
		     const struct snapshot *s)
{
	struct strbuf out;

	strbuf_init(&out);
	assert_int_equal(write(s, &out), 0);
	return out.buf;
}

static char *written_table(const struct snapshot *a, const struct snapshot *b)
{
	struct strbuf out;

	strbuf_init(&out);
	assert_int_equal(table_write(a, b, &out), 0);
	return out.buf;
}

static void expect(const char *text, const char *part)
{
	assert_non_null(text);
	if (!strstr(text, part)) {
		print_message("in:\n%s\n", text);
		fail_msg("missing: %s", part);
	}
}

static void refuse(const char *text, const char *part)
{
	assert_non_null(text);
	if (strstr(text, part)) {
		print_message("in:\n%s\n", text);
		fail_msg("unexpected: %s", part);
	}
}

static void prometheus_labels_kinds_and_json_only(void **state)
{
	struct snapshot *s = shaped(1.5, 2);
	char *text = written(prom_write, s);

	(void)state;
	expect(text, "# TYPE uncored_shape_celsius gauge\n"
		     "uncored_shape_celsius{socket=\"1\",core=\"0\"} -3\n");
	expect(text, "uncored_shape_flag{socket=\"0\"} 1\n");
	expect(text, "uncored_shape_a_seconds_total{socket=\"0\"} 1.5\n");
	expect(text, "uncored_shape_events_total{socket=\"0\",core=\"1\",cpu=\"5\",event=\"x\"} 11\n"
		     "uncored_shape_events_total{socket=\"0\",core=\"1\",cpu=\"5\",event=\"y\\\"z\"} 12\n");
	refuse(text, "json_only");
	free(text);
	snapshot_release(s);
}

/* A family two collectors declare, and two families of one name, are one family in /metrics. */
static void one_name_is_one_family(void **state)
{
	struct snapshot *s = shaped(1.5, 2);
	char *text, *first;

	(void)state;
	add(s, &m_flag_kind, 1, "k", 0, 0);
	text = written(prom_write, s);
	first = strstr(text, "# TYPE uncored_shape_flag gauge\n");
	assert_non_null(first);
	assert_null(strstr(first + 1, "# TYPE uncored_shape_flag gauge"));
	assert_null(strstr(strstr(text, "# HELP uncored_shape_flag ") + 1, "# HELP uncored_shape_flag "));
	expect(text, "# TYPE uncored_shape_flag gauge\n"
		     "uncored_shape_flag{socket=\"0\"} 1\n"
		     "uncored_shape_flag{socket=\"1\",kind=\"k\"} 0\n");
	free(text);
	snapshot_release(s);
}

/* A family of several labels: one object per label in JSON, one label set per sample in /metrics. */
static void several_labels_nest_in_json(void **state)
{
	struct snapshot *s = shaped(1.5, 2);
	char *json, *prom;

	(void)state;
	add(s, &m_nested, 0, "0" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "thermal", 0, 1);
	add(s, &m_nested, 0, "0" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP "thermal", 0, 2);
	add(s, &m_nested, 0, "1" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "thermal", 0, 3);
	add(s, &m_nested, 0, "0" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "power", 0, 4);
	json = written(json_write_snapshot, s);
	expect(json, "\"shape_nested\": {\"thermal\": {\"0\": {\"0\": 1, \"1\": 2}, "
		     "\"1\": {\"0\": 3}}, \"power\": {\"0\": {\"0\": 4}}}");
	/* Socket 1 has none: no field. */
	refuse(strstr(json, "{\"socket\": 1"), "shape_nested");
	prom = written(prom_write, s);
	expect(prom, "uncored_shape_nested_seconds_total{socket=\"0\",channel=\"1\",slot=\"0\","
		     "cause=\"thermal\"} 3\n");
	free(json);
	free(prom);
	snapshot_release(s);
}

static void json_positions_nulls_and_groups(void **state)
{
	struct snapshot *s = shaped(1.5, 2);
	char *text = written(json_write_snapshot, s);

	(void)state;
	/* Socket 0: the flag and the JSON-only value first, the group at its place. */
	expect(text, "{\"socket\": 0, \"shape_flag\": true, \"shape_json_only\": false, ");
	expect(text, "\"shape\": {\"a_seconds\": 1.5, \"b_seconds\": 2}, "
		     "\"kernel_package_throttles\": null, \"cores\": [");
	/* Socket 1: the flag null, the JSON-only value and the group left out. */
	expect(text, "{\"socket\": 1, \"shape_flag\": null, \"tjmax_celsius\": null, ");
	refuse(text, "\"uncore\": {}, \"shape\"");
	/* Core values in the core object; null where the core has none. */
	expect(text, "{\"core\": 0, \"cpus\": [2, 6], \"shape_celsius\": -3, ");
	expect(text, "{\"core\": 1, \"cpus\": [3, 7], \"shape_celsius\": null, ");
	/* Order 0: after everything else; the foreign total only where it is. */
	expect(text, "null}], \"shape_foreign\": 7},\n {\"socket\": 1");
	expect(text, "\"kernel_throttles\": null}]}], \"cpus\"");
	expect(text, "\"shape_events\": {\"x\": 11, \"y\\\"z\": 12}}");
	free(text);
	snapshot_release(s);
}

static void table_lines_shared_by_parts(void **state)
{
	struct snapshot *a = shaped(1.5, 2), *b = shaped(2, 3.25);
	struct snapshot *c = snapshot_new(big_topology(), &westmere);
	char *text, line[128];

	(void)state;
	text = written_table(a, b);
	snprintf(line, sizeof(line), "  %-36s a 0.500 s, b 1.250 s\n", "shape time");
	expect(text, line);
	snprintf(line, sizeof(line), "  %-36s %20d\n", "shape foreign", 0);
	expect(text, line);
	free(text);
	/* A value missing from the first snapshot: no line, no guess. */
	text = written_table(c, b);
	refuse(text, "shape time");
	refuse(text, "shape foreign");
	free(text);
	snapshot_release(a);
	snapshot_release(b);
	snapshot_release(c);
}

static void carry_skips_foreign_and_absent(void **state)
{
	struct snapshot *a = shaped(1.5, 2), *b = shaped(1, 1);
	struct snapshot *empty = snapshot_new(big_topology(), &westmere);

	(void)state;
	add(b, &m_a, 1, NULL, 0, 4);   /* socket 1 has none in a */
	assert_int_equal(snapshot_add_sample_totals(a, b, shape_families,
						    sizeof(shape_families) / sizeof(shape_families[0]),
						    0, 1), 0);
	assert_true(snapshot_find_sample(a, &m_a, 0, NULL)->value.d == 2.5);
	assert_null(snapshot_find_sample(a, &m_a, 1, NULL));
	assert_int_equal(snapshot_find_sample(a, &m_foreign, 0, NULL)->value.u, 7);
	assert_int_equal(snapshot_find_sample(a, &m_events, 5, "y\"z")->value.u, 24);
	assert_int_equal(snapshot_find_sample(a, &m_flag, 0, NULL)->value.u, 1);
	assert_int_equal(snapshot_add_sample_totals(a, b, shape_families, 7, 0, -1), 0);
	assert_true(snapshot_find_sample(a, &m_a, 0, NULL)->value.d == 1.5);
	assert_int_equal(snapshot_find_sample(a, &m_events, 5, "x")->value.u, 11);
	/* Into a snapshot without values: nothing appears. */
	assert_int_equal(snapshot_add_sample_totals(empty, b, shape_families, 7, 0, 1), 0);
	assert_int_equal(empty->n_values, 0);
	snapshot_release(a);
	snapshot_release(b);
	snapshot_release(empty);
}

static void signals_and_many_values(void **state)
{
	struct snapshot *s = shaped(0, 0);
	char label[16];

	(void)state;
	assert_int_equal(metric_sample_int(snapshot_find_core_signal(s, &s->sockets[1].cores[0],
								     METRIC_SIGNAL_TEMPERATURE)), -3);
	assert_null(snapshot_find_core_signal(s, &s->sockets[1].cores[1], METRIC_SIGNAL_TEMPERATURE));
	assert_null(snapshot_find_signal(s, METRIC_SIGNAL_TEMPERATURE, METRIC_SCOPE_SOCKET, 0));
	for (int i = 0; i < 3000; i++) {
		snprintf(label, sizeof(label), "e%d", i % 300);
		add(s, &m_events, i / 300, label, (uint64_t)i, 0);
	}
	add(s, &m_events, 0, "e1", 99, 0);      /* replaces, adds nothing */
	assert_int_equal(s->n_values, 8 + 3000 + 10);   /* and the head of each new place's chain */
	for (int i = 0; i < 3000; i++) {
		const struct metric_sample *v;

		snprintf(label, sizeof(label), "e%d", i % 300);
		v = snapshot_find_sample(s, &m_events, i / 300, label);
		assert_non_null(v);
		assert_int_equal(v->value.u, i == 1 ? 99 : (uint64_t)i);
	}
	assert_int_equal(snapshot_find_sample(s, &m_events, 5, "x")->value.u, 11);
	snapshot_release(s);
}

/*
 * A snapshot sized for the values of the sample before holds that many and
 * no more room, and still takes more than it was sized for, every one
 * found again after the regrowth.
 */
static void reserved_room_is_what_is_asked_and_grows_beyond(void **state)
{
	struct snapshot *s = snapshot_new(big_topology(), &westmere);
	char label[16];

	(void)state;
	assert_non_null(s);
	assert_int_equal(snapshot_reserve_values(s, 100), 0);
	assert_int_equal(s->cap_values, 100);
	assert_true(s->cap_value_index >= 200);
	assert_int_equal(s->cap_value_index & (s->cap_value_index - 1), 0);
	for (int i = 0; i < 98; i++) {
		snprintf(label, sizeof(label), "e%d", i);
		add(s, &m_events, 0, label, (uint64_t)i, 0);
	}
	assert_int_equal(s->n_values, 99);      /* with the head of the chain */
	assert_int_equal(s->cap_values, 100);
	assert_int_equal(snapshot_reserve_values(s, 5000), 0);   /* sized already: no-op */
	assert_int_equal(s->cap_values, 100);
	add(s, &m_celsius, 2, NULL, 40, 0);     /* room is made for two (a head and its value) */
	add(s, &m_celsius, 3, NULL, 41, 0);
	assert_true(s->cap_values > 100);
	for (int i = 0; i < 98; i++) {
		snprintf(label, sizeof(label), "e%d", i);
		assert_int_equal(snapshot_find_sample(s, &m_events, 0, label)->value.u, (uint64_t)i);
	}
	assert_int_equal(snapshot_find_sample(s, &m_celsius, 2, NULL)->value.u, 40);
	assert_int_equal(snapshot_find_sample(s, &m_celsius, 3, NULL)->value.u, 41);
	snapshot_release(s);
}

/* One interval of the box on socket 0: clock, busy and idle counts, and ones not counted. */
static struct snapshot *boxed(uint64_t clock, uint64_t busy, bool with_new, const char *why)
{
	struct snapshot *s = snapshot_new(big_topology(), &westmere);

	assert_non_null(s);
	if (clock)
		add(s, &m_clock, 0, NULL, clock, 0);
	add(s, &m_counts, 0, NULL, 0, 0);      /* the object, even empty */
	if (busy)
		add(s, &m_counts, 0, "busy", busy, 0);
	add(s, &m_counts, 0, "idle", 5, 0);
	if (with_new)
		add(s, &m_counts, 0, "new", 7, 0);
	if (why)
		assert_int_equal(snapshot_add_text(s, &m_why, 0, "gone", why), 0);
	return s;
}

static void texts_empty_objects_and_percentages(void **state)
{
	struct snapshot *s = snapshot_new(big_topology(), &westmere);
	struct snapshot *a = boxed(100, 10, false, NULL), *b = boxed(300, 60, true, "not here");
	struct snapshot *c = boxed(0, 60, false, NULL);
	const struct metric_sample *v;
	char *text, line[160];

	(void)state;
	/* An empty labelled object, the group's null member, no texts object without one. */
	add(s, &m_counts, 0, NULL, 0, 0);
	text = written(json_write_snapshot, s);
	expect(text, "\"box\": {\"clock\": null, \"counts\": {}}");
	refuse(text, "\"why\"");
	free(text);
	/* Nor in Prometheus: the object alone is no sample. */
	text = written(prom_write, s);
	refuse(text, "uncored_box_counts_total");
	free(text);
	text = written(json_write_snapshot, b);
	expect(text, "\"box\": {\"clock\": 300, \"counts\": {\"busy\": 60, \"idle\": 5, "
		     "\"new\": 7}, \"why\": {\"gone\": \"not here\"}}");
	free(text);
	/* Labelled values are found by signal and label. */
	v = snapshot_find_labelled_signal(b, METRIC_SIGNAL_EVENT_COUNTS, METRIC_SCOPE_SOCKET, 0,
					  "busy");
	assert_non_null(v);
	assert_int_equal(v->value.u, 60);
	assert_null(snapshot_find_labelled_signal(b, METRIC_SIGNAL_EVENT_COUNTS,
						  METRIC_SCOPE_SOCKET, 0, "gone"));
	/* The table: a line per label, a percentage of the clock, "-" without a first value. */
	text = written_table(a, b);
	snprintf(line, sizeof(line), "  %-36s %20d\n", "box clock", 200);
	expect(text, line);
	snprintf(line, sizeof(line), "  %-36s %20d   25.00 %% of clock\n", "busy", 50);
	expect(text, line);
	snprintf(line, sizeof(line), "  %-36s %20d\n", "idle", 0);
	expect(text, line);
	snprintf(line, sizeof(line), "  %-36s %20s\n", "new", "-");
	expect(text, line);
	snprintf(line, sizeof(line), "  %-36s unavailable: not here\n", "gone");
	expect(text, line);
	free(text);
	/* The clock missing while its group is there: "-", and no percentage. */
	text = written_table(a, c);
	snprintf(line, sizeof(line), "  %-36s %20s\n", "box clock", "-");
	expect(text, line);
	refuse(text, "% of clock");
	free(text);
	snapshot_release(s);
	snapshot_release(a);
	snapshot_release(b);
	snapshot_release(c);
}

static void labels_left_out_when_empty_and_carry_by_source(void **state)
{
	struct snapshot *a = snapshot_new(big_topology(), &westmere);
	struct snapshot *b = snapshot_new(big_topology(), &westmere);
	char *text;

	(void)state;
	a->source = 2;
	add(a, &m_placed, 0, "x" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP, 3, 0);
	add(a, &m_placed, 5, "y" METRIC_LABEL_SEP METRIC_LABEL_SEP "5", 4, 0);
	a->source = 0;
	text = written(prom_write, a);
	expect(text, "uncored_box_placed_total{kind=\"x\",socket=\"0\"} 3\n"
		     "uncored_box_placed_total{kind=\"y\",cpu=\"5\"} 4\n");
	free(text);
	/* b's first value is the source's, its second another's: only the first carries. */
	b->source = 2;
	add(b, &m_placed, 0, "x" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP, 10, 0);
	b->source = 3;
	add(b, &m_placed, 5, "y" METRIC_LABEL_SEP METRIC_LABEL_SEP "5", 20, 0);
	assert_int_equal(snapshot_add_sample_totals(a, b, box_families, 4, 2, 1), 0);
	assert_int_equal(snapshot_find_sample(a, &m_placed, 0, "x" METRIC_LABEL_SEP "0"
					      METRIC_LABEL_SEP)->value.u, 13);
	assert_int_equal(snapshot_find_sample(a, &m_placed, 5, "y" METRIC_LABEL_SEP
					      METRIC_LABEL_SEP "5")->value.u, 4);
	snapshot_release(a);
	snapshot_release(b);
}

/*
 * The history's worst throttled shares: per json_key, the largest growth
 * of one series at the socket over the interval, whichever family of the
 * key adds it (the critical DRAM seconds are none of them), and whether
 * the socket has such a series at all.
 */
static void throttle_shares_by_key_and_socket(void **state)
{
	struct snapshot *a = snapshot_new(big_topology(), &westmere);
	struct snapshot *b = snapshot_new(big_topology(), &westmere);
	bool has[THROTTLE_SHARE_COUNT];
	double share[THROTTLE_SHARE_COUNT];
	const char *ch0 = "0" METRIC_LABEL_SEP "thermal", *ch1 = "1" METRIC_LABEL_SEP "thermal";

	(void)state;
	/* The hardware clock's times make the interval; the wall clock's do not. */
	a->mono = 10;
	b->mono = 12;
	a->time = 1000;
	b->time = 1001;
	add(a, &throttle_dram_channel_seconds, 0, ch0, 0, 1.0);
	add(a, &throttle_dram_channel_seconds, 0, ch1, 0, 2.0);
	add(a, &throttle_dram_critical_seconds, 0, ch0, 0, 0);
	add(a, &throttle_prochot_seconds, 0, "external", 0, 0.5);
	add(a, &throttle_frequency_limited_seconds, 1, "thermal", 0, 0);
	add(b, &throttle_dram_channel_seconds, 0, ch0, 0, 1.5);
	add(b, &throttle_dram_channel_seconds, 0, ch1, 0, 3.0);
	add(b, &throttle_dram_critical_seconds, 0, ch0, 0, 1.9);
	add(b, &throttle_prochot_seconds, 0, "external", 0, 0.5);
	add(b, &throttle_dram_socket_seconds, 1, "power", 0, 0.25);
	add(b, &throttle_frequency_limited_seconds, 1, "thermal", 0, 5.0);

	throttle_worst_shares(a, b, 0, has, share);
	assert_true(has[THROTTLE_SHARE_DRAM]);
	assert_true(share[THROTTLE_SHARE_DRAM] == 0.5);
	assert_true(has[THROTTLE_SHARE_PROCHOT]);
	assert_true(share[THROTTLE_SHARE_PROCHOT] == 0);
	assert_false(has[THROTTLE_SHARE_FREQUENCY_LIMITED]);
	assert_true(share[THROTTLE_SHARE_FREQUENCY_LIMITED] == 0);
	/* Socket 1: a series new in b grew by nothing yet; one grown by more than the span is 1. */
	throttle_worst_shares(a, b, 1, has, share);
	assert_true(has[THROTTLE_SHARE_DRAM]);
	assert_true(share[THROTTLE_SHARE_DRAM] == 0);
	assert_false(has[THROTTLE_SHARE_PROCHOT]);
	assert_true(has[THROTTLE_SHARE_FREQUENCY_LIMITED]);
	assert_true(share[THROTTLE_SHARE_FREQUENCY_LIMITED] == 1);
	/* Without a sample before, no interval: every share 0, the series still there. */
	throttle_worst_shares(NULL, b, 0, has, share);
	assert_true(has[THROTTLE_SHARE_DRAM] && has[THROTTLE_SHARE_PROCHOT]);
	assert_true(share[THROTTLE_SHARE_DRAM] == 0 && share[THROTTLE_SHARE_PROCHOT] == 0);
	snapshot_release(a);
	snapshot_release(b);
}

/* One label's value out of a series' label value, by the family's label names. */
static void label_values_by_name(void **state)
{
	const char *v = "1" METRIC_LABEL_SEP "3" METRIC_LABEL_SEP "thermal";
	char buf[16];

	(void)state;
	assert_true(metric_label_value(&throttle_dram_die_channel_seconds, v, "cause", buf,
				       sizeof(buf)));
	assert_string_equal(buf, "thermal");
	assert_false(metric_label_value(&throttle_dram_die_channel_seconds, v, "slot", buf,
					sizeof(buf)));
	assert_false(metric_label_value(&throttle_dram_die_channel_seconds, v, "cause", buf, 7));
	assert_int_equal(metric_label_number(&throttle_dram_die_channel_seconds, v, "die"), 1);
	assert_int_equal(metric_label_number(&throttle_dram_die_channel_seconds, v, "channel"), 3);
	assert_int_equal(metric_label_number(&throttle_dram_die_channel_seconds, v, "cause"), -1);
	/* An empty value is none. */
	assert_int_equal(metric_label_number(&throttle_dram_slot_seconds,
					     "2" METRIC_LABEL_SEP METRIC_LABEL_SEP "thermal", "slot"), -1);
	assert_int_equal(metric_label_number(&throttle_prochot_seconds, "external", "channel"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prometheus_labels_kinds_and_json_only),
		cmocka_unit_test(one_name_is_one_family),
		cmocka_unit_test(several_labels_nest_in_json),
		cmocka_unit_test(json_positions_nulls_and_groups),
		cmocka_unit_test(table_lines_shared_by_parts),
		cmocka_unit_test(label_values_by_name),
		cmocka_unit_test(carry_skips_foreign_and_absent),
		cmocka_unit_test(signals_and_many_values),
		cmocka_unit_test(reserved_room_is_what_is_asked_and_grows_beyond),
		cmocka_unit_test(texts_empty_objects_and_percentages),
		cmocka_unit_test(labels_left_out_when_empty_and_carry_by_source),
		cmocka_unit_test(throttle_shares_by_key_and_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
