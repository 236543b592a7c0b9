/*
 * The sample API's storage and writers.  See metric.h.  A snapshot's
 * values are one array in the order added; the writers group them by
 * family in the order each family first appeared, so a collector's output
 * keeps the order it adds in.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "snapshot.h"
#include "strbuf.h"

/* Distinct families of one snapshot a writer handles; more are left out. */
#define MAX_FAMILIES 64

static bool same_label(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The index of the value of f at where with label_value in s, or -1. */
static int find_index(const struct snapshot *s, const struct metric_family *f, int where,
		      const char *label_value)
{
	for (int i = 0; i < s->n_values; i++) {
		const struct metric_sample *v = &s->values[i];

		if (v->family == f && v->where == where && same_label(v->label_value, label_value))
			return i;
	}
	return -1;
}

const struct metric_sample *snapshot_find_sample(const struct snapshot *s,
						 const struct metric_family *f, int where,
						 const char *label_value)
{
	int i = find_index(s, f, where, label_value);

	return i < 0 ? NULL : &s->values[i];
}

int snapshot_add_sample(struct snapshot *s, const struct metric_family *f, int where,
			const char *label_value, uint64_t u, double d)
{
	int i = find_index(s, f, where, label_value);
	struct metric_sample *v = i < 0 ? NULL : &s->values[i];

	if (!v) {
		const char *label = NULL;

		if (f->label && label_value) {
			label = snapshot_intern(s, label_value);
			if (!label)
				return -ENOMEM;
		}
		if (s->n_values == s->cap_values) {
			int cap = s->cap_values ? 2 * s->cap_values : 16;
			struct metric_sample *grown = realloc(s->values, (size_t)cap * sizeof(*grown));

			if (!grown) {
				s->is_short_of_memory = true;
				return -ENOMEM;
			}
			s->values = grown;
			s->cap_values = cap;
		}
		v = &s->values[s->n_values++];
		*v = (struct metric_sample){ .family = f, .where = where, .label_value = label };
	}
	if (f->is_integer)
		v->value.u = u;
	else
		v->value.d = d;
	return 0;
}

/* Whether f has any value at where. */
static bool has_value_at(const struct snapshot *s, const struct metric_family *f, int where)
{
	for (int i = 0; i < s->n_values; i++)
		if (s->values[i].family == f && s->values[i].where == where)
			return true;
	return false;
}

static bool is_one_of(const struct metric_family *f, const struct metric_family *const *families,
		      size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (families[i] == f)
			return true;
	return false;
}

int snapshot_add_sample_totals(struct snapshot *dst, const struct snapshot *src,
			       const struct metric_family *const *families, size_t n, int sign)
{
	for (int i = 0; i < src->n_values; i++) {
		const struct metric_sample *b = &src->values[i];
		const struct metric_family *f = b->family;
		struct metric_sample *d;
		int k;

		if (f->type != METRIC_COUNTER || !is_one_of(f, families, n))
			continue;
		k = find_index(dst, f, b->where, b->label_value);
		if (k < 0) {
			if (sign < 0)
				continue;
			if (snapshot_add_sample(dst, f, b->where, b->label_value, 0, 0) < 0)
				return -ENOMEM;
			k = dst->n_values - 1;
		}
		d = &dst->values[k];
		if (f->is_integer)
			d->value.u = sign < 0 ? d->value.u - b->value.u : d->value.u + b->value.u;
		else
			d->value.d += sign < 0 ? -b->value.d : b->value.d;
	}
	return 0;
}

/* The distinct families of s in the order first added; returns their number. */
static size_t families_of(const struct snapshot *s, const struct metric_family **ret)
{
	size_t n = 0;

	for (int i = 0; i < s->n_values; i++) {
		const struct metric_family *f = s->values[i].family;

		if (!is_one_of(f, ret, n) && n < MAX_FAMILIES)
			ret[n++] = f;
	}
	return n;
}

static void append_value(struct strbuf *out, const struct metric_sample *v, bool json)
{
	if (v->family->is_integer)
		strbuf_printf(out, "%" PRIu64, v->value.u);
	else if (json)
		strbuf_append_json_double(out, v->value.d);
	else
		strbuf_append_prom_double(out, v->value.d);
}

static const struct snapshot_cpu *find_cpu(const struct snapshot *s, int cpu)
{
	for (int i = 0; i < s->n_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

static void prom_sample(const struct snapshot *s, const struct metric_sample *v, struct strbuf *out)
{
	const struct metric_family *f = v->family;
	const struct snapshot_cpu *c;

	strbuf_append(out, f->name);
	if (f->scope == METRIC_SCOPE_SOCKET) {
		strbuf_printf(out, "{socket=\"%d\"", v->where);
	} else {
		c = find_cpu(s, v->where);
		if (!c)
			return;
		strbuf_printf(out, "{socket=\"%d\",core=\"%d\",cpu=\"%d\"", c->socket, c->core, c->cpu);
	}
	if (f->label && v->label_value) {
		strbuf_printf(out, ",%s=\"", f->label);
		strbuf_append_prom_label(out, v->label_value);
		strbuf_append(out, "\"");
	}
	strbuf_append(out, "} ");
	append_value(out, v, false);
	strbuf_append(out, "\n");
}

void metric_write_prom(const struct snapshot *s, struct strbuf *out)
{
	const struct metric_family *families[MAX_FAMILIES];
	size_t n = families_of(s, families);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];

		strbuf_printf(out, "# HELP %s ", f->name);
		strbuf_append_prom_help(out, f->help);
		strbuf_printf(out, "\n# TYPE %s %s\n", f->name,
			      f->type == METRIC_COUNTER ? "counter" : "gauge");
		for (int i = 0; i < s->n_values; i++)
			if (s->values[i].family == f)
				prom_sample(s, &s->values[i], out);
	}
}

void metric_write_json_fields(const struct snapshot *s, enum metric_scope scope, int where,
			      struct strbuf *out)
{
	const struct metric_family *families[MAX_FAMILIES];
	size_t n = families_of(s, families);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];
		bool first = true;

		if (f->scope != scope || !has_value_at(s, f, where))
			continue;
		strbuf_append(out, ", ");
		strbuf_append_json_string(out, f->json_key);
		strbuf_append(out, f->label ? ": {" : ": ");
		for (int i = 0; i < s->n_values; i++) {
			const struct metric_sample *v = &s->values[i];

			if (v->family != f || v->where != where)
				continue;
			if (f->label) {
				strbuf_append(out, first ? "" : ", ");
				strbuf_append_json_string(out, v->label_value ? v->label_value : "");
				strbuf_append(out, ": ");
			}
			first = false;
			append_value(out, v, true);
			if (!f->label)
				break;
		}
		if (f->label)
			strbuf_append(out, "}");
	}
}

void metric_write_table_lines(const struct snapshot *a, const struct snapshot *b, int where,
			      struct strbuf *out)
{
	const struct metric_family *families[MAX_FAMILIES];
	size_t n = families_of(b, families);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];
		const struct metric_sample *vb, *va;

		if (f->scope != METRIC_SCOPE_SOCKET || f->label || !f->table_title)
			continue;
		vb = snapshot_find_sample(b, f, where, NULL);
		if (!vb)
			continue;
		va = f->type == METRIC_COUNTER ? snapshot_find_sample(a, f, where, NULL) : NULL;
		if (f->type == METRIC_COUNTER && !va)
			strbuf_printf(out, "  %-36s %20s\n", f->table_title, "-");
		else if (f->is_integer)
			strbuf_printf(out, "  %-36s %20" PRIu64 "\n", f->table_title,
				      vb->value.u - (va ? va->value.u : 0));
		else
			strbuf_printf(out, "  %-36s %20.3f\n", f->table_title,
				      vb->value.d - (va ? va->value.d : 0));
	}
}
