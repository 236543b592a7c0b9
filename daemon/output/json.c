/*
 * Snapshot and episodes to JSON (SPEC §5a).  Rule for absent values: a
 * hardware block that does not exist on this machine or is not counted
 * (a declared group such as a socket's "uncore" or "rapl", a cpu's
 * "events" and "conflicts") is left out; a single reading that exists in
 * the shape but has no valid value this sample (a declared family marked
 * json_null) is null.  This file writes the shape (sockets, cores, cpus,
 * collectors) and, by their json_order, the fields of the declared
 * families (metric.h) that fill it: a group as one object, a labelled
 * family as an object nested one level per label.  Pure: reads the
 * snapshot only.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "episode.h"
#include "json.h"
#include "metric.h"
#include "sample_value.h"
#include "throttle_signal.h"

/* "key": — comma handling is the caller's, via *first. */
static void key(struct strbuf *out, bool *first, const char *name)
{
	if (!*first)
		strbuf_append(out, ", ");
	*first = false;
	strbuf_append_json_string(out, name);
	strbuf_append(out, ": ");
}

static void field_u64(struct strbuf *out, bool *first, const char *name, uint64_t v)
{
	key(out, first, name);
	strbuf_printf(out, "%" PRIu64, v);
}

static void field_int(struct strbuf *out, bool *first, const char *name, long long v)
{
	key(out, first, name);
	strbuf_printf(out, "%lld", v);
}

static void field_bool(struct strbuf *out, bool *first, const char *name, bool v)
{
	key(out, first, name);
	strbuf_append(out, v ? "true" : "false");
}

static void field_double(struct strbuf *out, bool *first, const char *name, double v)
{
	key(out, first, name);
	strbuf_append_json_double(out, v);
}

static void field_str(struct strbuf *out, bool *first, const char *name, const char *v)
{
	key(out, first, name);
	strbuf_append_json_string(out, v);
}

static void field_null(struct strbuf *out, bool *first, const char *name)
{
	key(out, first, name);
	strbuf_append(out, "null");
}

/* Nullable variants: the value when has, null otherwise. */
static void opt_int(struct strbuf *out, bool *first, const char *name, bool has, long long v)
{
	if (has)
		field_int(out, first, name, v);
	else
		field_null(out, first, name);
}

static void write_cpu_id(struct strbuf *out, bool *first, const struct snapshot_cpu_id *id)
{
	bool f = true;

	key(out, first, "cpu");
	strbuf_append(out, "{");
	field_str(out, &f, "vendor", id->vendor);
	field_int(out, &f, "family", id->family);
	field_int(out, &f, "model", id->model);
	field_int(out, &f, "stepping", id->stepping);
	field_str(out, &f, "microarch", id->microarch);
	strbuf_append(out, "}");
}

static void write_collectors(struct strbuf *out, bool *first, const struct snapshot *s)
{
	key(out, first, "collectors");
	strbuf_append(out, "[");
	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];
		bool f = true;

		strbuf_append(out, i ? ", {" : "{");
		field_str(out, &f, "name", c->name ? c->name : "");
		field_bool(out, &f, "enabled", c->enabled);
		field_bool(out, &f, "up", c->up);
		field_str(out, &f, "state", snapshot_collector_state(c));
		if (c->units) {   /* partial: counting on some of them */
			field_u64(out, &f, "units", c->units);
			field_u64(out, &f, "units_counting", c->units_counting);
		}
		if (c->reason[0])
			field_str(out, &f, "reason", c->reason);
		else
			field_null(out, &f, "reason");
		field_u64(out, &f, "errors", c->errors);
		if (c->engine) {
			bool fe = true;

			key(out, &f, "engine");
			strbuf_append(out, "{");
			field_str(out, &fe, "name", c->engine);
			field_str(out, &fe, "reason", c->engine_why ? c->engine_why : "");
			strbuf_append(out, "}");
		}
		strbuf_append(out, "}");
	}
	strbuf_append(out, "]");
}

/*
 * "throttling_signals": every generation-independent signal, whether this
 * host sees it, through which collector, and why not (throttle_signal.h).
 */
static void write_throttling_signals(struct strbuf *out, bool *first, const struct snapshot *s)
{
	struct throttle_signal_view views[THROTTLE_N_SIGNALS];

	throttle_signals_view(s, views);
	key(out, first, "throttling_signals");
	strbuf_append(out, "[");
	for (int i = 0; i < THROTTLE_N_SIGNALS; i++) {
		const struct throttle_signal_info *info = throttle_signal_info((enum throttle_signal)i);
		const struct throttle_signal_view *v = &views[i];
		bool f = true;

		strbuf_append(out, i ? ", {" : "{");
		field_str(out, &f, "signal", info->signal);
		field_str(out, &f, "family", info->family);
		field_str(out, &f, info->label, info->value);
		field_bool(out, &f, "visible", v->visible);
		if (v->collector)
			field_str(out, &f, "collector", v->collector);
		else
			field_null(out, &f, "collector");
		if (v->visible)
			field_null(out, &f, "why_not");
		else
			field_str(out, &f, "why_not", v->why_not);
		strbuf_append(out, "}");
	}
	strbuf_append(out, "]");
}

#define MAX_LABEL_PART 64

/*
 * Part idx (0-based, in the family's label order) of a label value of
 * several labels (METRIC_LABEL_SEP between them), copied into buf.
 */
static const char *label_part(const char *value, int idx, char *buf, size_t len)
{
	const char *p = value ? value : "", *end;

	for (int i = 0; i < idx && (p = strstr(p, METRIC_LABEL_SEP)) != NULL; i++)
		p += strlen(METRIC_LABEL_SEP);
	if (!p)
		p = "";
	end = strstr(p, METRIC_LABEL_SEP);
	snprintf(buf, len, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
	return buf;
}

/* The label that nesting level depth of the JSON object is keyed by: the last first. */
static int level_label(int n_labels, int depth)
{
	return depth == 0 ? n_labels - 1 : depth - 1;
}

/* Whether a and b have the same label parts at the levels before depth. */
static bool same_path(const char *a, const char *b, int n_labels, int depth)
{
	char pa[MAX_LABEL_PART], pb[MAX_LABEL_PART];

	for (int d = 0; d < depth; d++)
		if (strcmp(label_part(a, level_label(n_labels, d), pa, sizeof(pa)),
			   label_part(b, level_label(n_labels, d), pb, sizeof(pb))) != 0)
			return false;
	return true;
}

/*
 * Level depth of the nested object of a family of n_labels labels at
 * where: the values under rep's path (NULL: all), keyed by their part at
 * this level, in the order first added.
 */
static void json_level(const struct snapshot *s, const struct metric_family *f, int where,
		       int n_labels, int depth, const struct metric_sample *rep, struct strbuf *out)
{
	const struct metric_sample *first_v = snapshot_first_labelled(s, f, where);
	bool first = true;

	strbuf_append(out, "{");
	for (const struct metric_sample *v = first_v; v; v = snapshot_next_labelled(s, v)) {
		char part[MAX_LABEL_PART];
		bool seen = false;

		if (rep && !same_path(v->label_value, rep->label_value, n_labels, depth))
			continue;
		/* This level's key once: at the first value under it. */
		for (const struct metric_sample *w = first_v; w != v && !seen; w = snapshot_next_labelled(s, w))
			seen = same_path(w->label_value, v->label_value, n_labels, depth + 1);
		if (seen)
			continue;
		strbuf_append(out, first ? "" : ", ");
		strbuf_append_json_string(out, label_part(v->label_value,
							  level_label(n_labels, depth), part,
							  sizeof(part)));
		strbuf_append(out, ": ");
		if (depth == n_labels - 1)
			sample_value_append(out, v, true);
		else
			json_level(s, f, where, n_labels, depth + 1, v, out);
		first = false;
	}
	strbuf_append(out, "}");
}

/* "key": value of f at where (an object of label values for a labelled family). */
static void json_field(const struct snapshot *s, const struct metric_family *f, int where,
		       const char *sep, struct strbuf *out)
{
	const struct metric_sample *v;
	bool first = true;

	strbuf_append(out, sep);
	strbuf_append_json_string(out, f->json_key);
	strbuf_append(out, ": ");
	if (!f->label) {
		v = snapshot_find_sample(s, f, where, NULL);
		if (v)
			sample_value_append(out, v, true);
		else
			strbuf_append(out, "null");
		return;
	}
	if (strchr(f->label, ',')) {
		int n_labels = 1;

		for (const char *p = f->label; (p = strchr(p, ',')) != NULL; p++)
			n_labels++;
		json_level(s, f, where, n_labels, 0, NULL, out);
		return;
	}
	strbuf_append(out, "{");
	for (v = snapshot_first_labelled(s, f, where); v; v = snapshot_next_labelled(s, v)) {
		strbuf_append(out, first ? "" : ", ");
		strbuf_append_json_string(out, v->label_value ? v->label_value : "");
		strbuf_append(out, ": ");
		sample_value_append(out, v, true);
		first = false;
	}
	strbuf_append(out, "}");
}

/*
 * The group of families[at]: one object of its members with values (and
 * its json_null members), if any member has one.
 */
static void json_group(const struct snapshot *s, const struct metric_family *const *families,
		       size_t n, size_t at, int where, struct strbuf *out)
{
	const struct metric_family *g = families[at];
	bool first = true;

	if (!snapshot_json_group_has_value(s, families, n, g, where))
		return;
	for (size_t k = at; k < n; k++) {
		const struct metric_family *f = families[k];

		if (!metric_same_json_group(f, g) || (!f->json_null && !snapshot_has_value(s, f, where)))
			continue;
		if (first) {
			strbuf_append(out, ", ");
			strbuf_append_json_string(out, g->json_group);
			strbuf_append(out, ": {");
		}
		json_field(s, f, where, first ? "" : ", ", out);
		first = false;
	}
	if (!first)
		strbuf_append(out, "}");
}

/* Whether a family before families[at] already wrote the group of families[at]. */
static bool group_written(const struct metric_family *const *families, size_t at)
{
	const struct metric_family *g = families[at];

	for (size_t k = 0; k < at; k++)
		if (metric_same_json_group(families[k], g))
			return true;
	return false;
}

static void json_fields(const struct snapshot *s, enum metric_scope scope, int where, int from,
			int to, struct strbuf *out)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];
	size_t n = metric_families_by_json_order(families);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];
		int pos = metric_json_position(f);

		if (f->scope != scope || !f->json_key || pos < from || (pos >= to && to != INT_MAX))
			continue;
		if (f->json_group) {
			if (!group_written(families, k))
				json_group(s, families, n, k, where, out);
		} else if (f->json_null || snapshot_has_value(s, f, where)) {
			json_field(s, f, where, ", ", out);
		}
	}
}

static void write_core(struct strbuf *out, const struct snapshot *s, const struct snapshot_core *c)
{
	bool f = true;

	strbuf_append(out, "{");
	field_int(out, &f, "core", c->core);
	key(out, &f, "cpus");
	strbuf_append(out, "[");
	for (int i = 0; i < c->n_cpus; i++)
		strbuf_printf(out, i ? ", %d" : "%d", c->cpus[i]);
	strbuf_append(out, "]");
	if (c->n_cpus > 0)
		json_fields(s, METRIC_SCOPE_CORE, c->cpus[0], INT_MIN, INT_MAX, out);
	strbuf_append(out, "}");
}

static void write_socket(struct strbuf *out, const struct snapshot *s,
			 const struct snapshot_socket *sock)
{
	bool f = true;

	strbuf_append(out, "{");
	field_int(out, &f, "socket", sock->socket);
	json_fields(s, METRIC_SCOPE_SOCKET, sock->socket, INT_MIN, METRIC_JSON_SOCKET_CORES, out);
	key(out, &f, "cores");
	strbuf_append(out, "[");
	for (int i = 0; i < sock->n_cores; i++) {
		if (i)
			strbuf_append(out, ", ");
		write_core(out, s, &sock->cores[i]);
	}
	strbuf_append(out, "]");
	json_fields(s, METRIC_SCOPE_SOCKET, sock->socket, METRIC_JSON_SOCKET_CORES, INT_MAX, out);
	strbuf_append(out, "}");
}

static void write_cpu(struct strbuf *out, const struct snapshot *s, const struct snapshot_cpu *c)
{
	bool f = true;

	strbuf_append(out, "{");
	field_int(out, &f, "cpu", c->cpu);
	field_int(out, &f, "socket", c->socket);
	field_int(out, &f, "core", c->core);
	field_bool(out, &f, "online", c->online);
	json_fields(s, METRIC_SCOPE_CPU, c->cpu, INT_MIN, INT_MAX, out);
	strbuf_append(out, "}");
}

int json_write_snapshot(const struct snapshot *s, struct strbuf *out)
{
	bool f = true;

	strbuf_append(out, "{");
	field_double(out, &f, "time", s->time);
	field_double(out, &f, "interval_seconds", s->interval_s);
	field_str(out, &f, "version", s->version);
	field_u64(out, &f, "samples", s->samples);
	field_double(out, &f, "last_sample_duration_seconds", s->last_sample_duration_s);
	write_cpu_id(out, &f, &s->cpu_id);
	write_collectors(out, &f, s);
	write_throttling_signals(out, &f, s);
	key(out, &f, "sockets");
	strbuf_append(out, "[");
	for (int i = 0; i < s->n_sockets; i++) {
		if (i)
			strbuf_append(out, ",\n ");
		write_socket(out, s, &s->sockets[i]);
	}
	strbuf_append(out, "]");
	key(out, &f, "cpus");
	strbuf_append(out, "[");
	for (int i = 0; i < s->n_cpus; i++) {
		if (i)
			strbuf_append(out, ",\n ");
		write_cpu(out, s, &s->cpus[i]);
	}
	strbuf_append(out, "]}\n");
	return out->failed ? -ENOMEM : 0;
}

/* {name: value, ...} of a throttle family's series (METRIC_LABEL_SEP-separated values). */
static void write_series_labels(struct strbuf *out, const struct metric_family *fam,
				const char *values)
{
	const char *names = fam->label ? fam->label : "";
	bool f = true;

	strbuf_append(out, "{");
	while (*names) {
		size_t nl = strcspn(names, ","), vl = strcspn(values, METRIC_LABEL_SEP);
		char name[32], value[SNAPSHOT_EPISODE_PART_LABELS];

		snprintf(name, sizeof(name), "%.*s", (int)nl, names);
		snprintf(value, sizeof(value), "%.*s", (int)vl, values);
		if (value[0])
			field_str(out, &f, name, value);
		names += nl + (names[nl] != 0);
		values += vl + (values[vl] != 0);
	}
	strbuf_append(out, "}");
}

/*
 * What a throttle family's episode adds: its family, its place's labels
 * (die, channel), the slots and levels that took part (DRAM), every
 * series that took part, and what they counted.
 */
static void write_episode_family(struct strbuf *out, bool *first, const struct snapshot_episode *e)
{
	bool dram = strcmp(e->kind ? e->kind : "", "dram_throttled_seconds") == 0;
	bool f = true, warning, critical;
	uint32_t slots = episode_slots(e);
	char text[16];

	field_str(out, first, "family", e->family->name);
	key(out, first, "labels");
	strbuf_append(out, "{");
	if (e->die >= 0) {
		snprintf(text, sizeof(text), "%d", e->die);
		field_str(out, &f, "die", text);
	}
	if (e->channel >= 0) {
		snprintf(text, sizeof(text), "%d", e->channel);
		field_str(out, &f, "channel", text);
	}
	strbuf_append(out, "}");
	episode_levels(e, &warning, &critical);
	if (slots) {
		key(out, first, "slots");
		strbuf_append(out, "[");
		for (int i = 0, n = 0; i < 32; i++)
			if (slots & (1u << i))
				strbuf_printf(out, "%s%d", n++ ? ", " : "", i);
		strbuf_append(out, "]");
	}
	if (dram) {
		key(out, first, "levels");
		strbuf_printf(out, "[%s%s%s]", warning ? "\"warning\"" : "",
			      warning && critical ? ", " : "", critical ? "\"critical\"" : "");
	}
	key(out, first, "parts");
	strbuf_append(out, "[");
	for (int i = 0; i < e->n_parts; i++) {
		bool pf = true;

		strbuf_append(out, i ? ", {" : "{");
		field_str(out, &pf, "family", e->parts[i].family->name);
		key(out, &pf, "labels");
		write_series_labels(out, e->parts[i].family, e->parts[i].labels);
		strbuf_append(out, "}");
	}
	strbuf_append(out, "]");
	if (e->parts_dropped)
		field_bool(out, first, "parts_incomplete", true);
}

static void write_episode(struct strbuf *out, const struct snapshot_episode *e)
{
	bool f = true;
	bool ongoing = e->end == 0;
	char place[96], what[128];

	episode_describe(e, place, sizeof(place), what, sizeof(what));
	strbuf_append(out, "{");
	field_u64(out, &f, "id", e->id);
	field_str(out, &f, "kind", e->kind ? e->kind : "");
	field_int(out, &f, "socket", e->socket);
	opt_int(out, &f, "core", e->core >= 0, e->core);
	field_double(out, &f, "start", e->start);
	if (ongoing)
		field_null(out, &f, "end");
	else
		field_double(out, &f, "end", e->end);
	field_double(out, &f, "duration_seconds", ongoing ? e->running_s : e->end - e->start);
	field_str(out, &f, "place", place);
	field_str(out, &f, "what", what);
	if (e->family) {
		write_episode_family(out, &f, e);
		field_double(out, &f, "monotonic_start", e->mono_start);
		if (ongoing)
			field_null(out, &f, "monotonic_end");
		else
			field_double(out, &f, "monotonic_end", e->mono_end);
		opt_int(out, &f, "peak_celsius", e->has_peak, e->peak_celsius);
		field_double(out, &f, "throttled_seconds", e->throttled_s);
		if (e->sampled_s > 0)
			field_double(out, &f, "throttled_share",
				     e->throttled_s < e->sampled_s ? e->throttled_s / e->sampled_s : 1);
		else
			field_null(out, &f, "throttled_share");
	}
	strbuf_append(out, "}");
}

int json_write_episodes(const struct snapshot *s, struct strbuf *out)
{
	return json_write_episode_by_id(s, 0, out);
}

int json_write_episode_by_id(const struct snapshot *s, uint64_t id, struct strbuf *out)
{
	bool first = true;

	strbuf_append(out, "{\"episodes\": [");
	for (int i = 0; i < s->n_episodes; i++) {
		if (id && s->episodes[i].id != id)
			continue;
		if (!first)
			strbuf_append(out, ",\n ");
		first = false;
		write_episode(out, &s->episodes[i]);
	}
	strbuf_append(out, "]}\n");
	return out->failed ? -ENOMEM : 0;
}

int json_episodes_pick(const char *doc, size_t len, uint64_t id, struct strbuf *out)
{
	static const char head[] = "{\"episodes\": [";
	char prefix[40];
	const char *p = doc + sizeof(head) - 1, *end = doc + len;
	size_t plen = (size_t)snprintf(prefix, sizeof(prefix), "{\"id\": %" PRIu64 ",", id);

	if (len < sizeof(head) - 1 || memcmp(doc, head, sizeof(head) - 1) != 0)
		return -EINVAL;
	strbuf_append(out, head);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t line = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (line >= plen && memcmp(p, prefix, plen) == 0) {
			/* The episode's object: up to its line's separator or the list's end. */
			if (line >= 2 && p[line - 1] == ',')
				line--;
			else if (line >= 3 && memcmp(p + line - 2, "]}", 2) == 0)
				line -= 2;
			strbuf_printf(out, "%.*s", (int)line, p);
			break;
		}
		p += line + 1;
		if (p < end && *p == ' ')
			p++;
	}
	strbuf_append(out, "]}\n");
	return out->failed ? -ENOMEM : 0;
}
