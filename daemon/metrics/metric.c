/*
 * The sample API's storage and writers.  See metric.h.  A snapshot's
 * values are one array in the order added, with a hash index by family,
 * place and label so that adding and finding stay constant time on a
 * machine with hundreds of cores.  The writers walk the families the
 * registered collectors declare.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "snapshot.h"
#include "strbuf.h"

static bool same_label(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static uint64_t hash_of(const struct metric_family *f, int where, const char *label)
{
	uint64_t h = (uint64_t)(uintptr_t)f * 0x9e3779b97f4a7c15ull ^ (uint64_t)(unsigned)where;

	for (const char *p = label; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return h * 0xff51afd7ed558ccdull;
}

/* The index slot where the value of (f, where, label) is or would go. */
static size_t slot_of(const struct snapshot *s, const struct metric_family *f, int where,
		      const char *label)
{
	size_t mask = (size_t)s->cap_value_index - 1;
	size_t k = (size_t)(hash_of(f, where, label) >> 20) & mask;

	for (;; k = (k + 1) & mask) {
		int i = s->value_index[k] - 1;
		const struct metric_sample *v;

		if (i < 0)
			return k;
		v = &s->values[i];
		if (v->family == f && v->where == where && same_label(v->label_value, label))
			return k;
	}
}

/* The index of the value of f at where with label_value in s, or -1. */
static int find_index(const struct snapshot *s, const struct metric_family *f, int where,
		      const char *label_value)
{
	if (!s->value_index)
		return -1;
	return s->value_index[slot_of(s, f, where, label_value)] - 1;
}

const struct metric_sample *snapshot_find_sample(const struct snapshot *s,
						 const struct metric_family *f, int where,
						 const char *label_value)
{
	int i = find_index(s, f, where, label_value);

	return i < 0 ? NULL : &s->values[i];
}

const struct metric_sample *snapshot_samples(const struct snapshot *s, int *ret_n)
{
	*ret_n = s->n_values;
	return s->values;
}

const struct metric_sample *snapshot_first_labelled(const struct snapshot *s,
						     const struct metric_family *f, int where)
{
	const struct metric_sample *h = snapshot_find_sample(s, f, where, NULL);

	return h && h->next ? &s->values[h->next - 1] : NULL;
}

const struct metric_sample *snapshot_next_labelled(const struct snapshot *s,
						    const struct metric_sample *v)
{
	return v->next ? &s->values[v->next - 1] : NULL;
}

bool metric_same_json_group(const struct metric_family *f, const struct metric_family *g)
{
	return f->scope == g->scope && f->json_group && strcmp(f->json_group, g->json_group) == 0;
}

bool snapshot_json_group_has_value(const struct snapshot *s,
				   const struct metric_family *const *families, size_t n,
				   const struct metric_family *g, int where)
{
	for (size_t k = 0; k < n; k++)
		if (metric_same_json_group(families[k], g) && snapshot_has_value(s, families[k], where))
			return true;
	return false;
}

/*
 * Room for one more value, its index kept at most half full.  The first
 * room is sized for the dozen or so values per CPU the collectors add, so
 * that a sample of a large machine does not regrow and rehash its index.
 */
static int grow(struct snapshot *s)
{
	int cap = s->cap_values ? 2 * s->cap_values : 16;
	struct metric_sample *grown;
	int *index;

	/* A power of two (the index masks with it), 16 per CPU at first. */
	while (!s->cap_values && cap < 16 * s->n_cpus)
		cap *= 2;
	index = calloc((size_t)cap * 2, sizeof(*index));
	if (!index)
		return -ENOMEM;
	grown = realloc(s->values, (size_t)cap * sizeof(*grown));
	if (!grown) {
		free(index);
		return -ENOMEM;
	}
	s->values = grown;
	s->cap_values = cap;
	free(s->value_index);
	s->value_index = index;
	s->cap_value_index = cap * 2;
	for (int i = 0; i < s->n_values; i++) {
		const struct metric_sample *v = &s->values[i];

		index[slot_of(s, v->family, v->where, v->label_value)] = i + 1;
	}
	return 0;
}

/* Room for n more values; -ENOMEM (is_short_of_memory set) when there is none. */
static int make_room(struct snapshot *s, int n)
{
	while (s->cap_values - s->n_values < n)
		if (grow(s) < 0) {
			s->is_short_of_memory = true;
			return -ENOMEM;
		}
	return 0;
}

/* A new value of f at where with label (interned) at index slot k; room made.  Its index. */
static int append_at(struct snapshot *s, size_t k, const struct metric_family *f, int where,
		     const char *label)
{
	s->values[s->n_values] = (struct metric_sample){ .family = f, .where = where,
							 .label_value = label, .source = s->source };
	s->value_index[k] = ++s->n_values;
	return s->n_values - 1;
}

/* The index of the head of the chain of labelled f at where, added if need be; room made. */
static int chain_head(struct snapshot *s, const struct metric_family *f, int where)
{
	size_t k = slot_of(s, f, where, NULL);
	int i = s->value_index[k] - 1;

	return i >= 0 ? i : append_at(s, k, f, where, NULL);
}

int snapshot_add_sample(struct snapshot *s, const struct metric_family *f, int where,
			const char *label_value, uint64_t u, double d)
{
	const char *label = f->label ? label_value : NULL;
	struct metric_sample *v;
	size_t k;
	int i;

	/* A value and the head of its chain at most: no regrowing in between. */
	if (make_room(s, 2) < 0)
		return -ENOMEM;
	if (f->label && !label) {
		chain_head(s, f, where);
		return 0;
	}
	k = slot_of(s, f, where, label);
	i = s->value_index[k] - 1;
	if (i < 0) {
		int head = -1, n = s->n_values;

		if (label) {
			label = snapshot_intern(s, label);
			if (!label)
				return -ENOMEM;
			head = chain_head(s, f, where);
			/* A new head may have taken the slot found for the value. */
			if (s->n_values != n)
				k = slot_of(s, f, where, label);
		}
		i = append_at(s, k, f, where, label);
		if (head >= 0) {
			struct metric_sample *h = &s->values[head];

			if (h->value.u)
				s->values[h->value.u - 1].next = i + 1;
			else
				h->next = i + 1;
			h->value.u = (uint64_t)i + 1;
		}
	}
	v = &s->values[i];
	if (f->kind == METRIC_DOUBLE)
		v->value.d = d;
	else
		v->value.u = u;
	return 0;
}

int snapshot_add_text(struct snapshot *s, const struct metric_family *f, int where,
		      const char *label_value, const char *text)
{
	const char *copy = snapshot_intern(s, text ? text : "");
	int err;

	if (!copy)
		return -ENOMEM;
	err = snapshot_add_sample(s, f, where, label_value, 0, 0);
	if (err)
		return err;
	s->values[find_index(s, f, where, label_value)].value.text = copy;
	return 0;
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
			       const struct metric_family *const *families, size_t n, int source,
			       int sign)
{
	for (int i = 0; i < src->n_values; i++) {
		const struct metric_sample *b = &src->values[i];
		const struct metric_family *f = b->family;
		struct metric_sample *d;
		int k;

		if (f->type != METRIC_COUNTER || f->is_foreign_total || f->kind == METRIC_TEXT ||
		    (f->label && !b->label_value) || (source && b->source != source) ||
		    !is_one_of(f, families, n))
			continue;
		k = find_index(dst, f, b->where, b->label_value);
		if (k < 0)
			continue;
		d = &dst->values[k];
		if (f->kind == METRIC_DOUBLE)
			d->value.d += sign < 0 ? -b->value.d : b->value.d;
		else
			d->value.u = sign < 0 ? d->value.u - b->value.u : d->value.u + b->value.u;
	}
	return 0;
}

/*
 * The families the registered collectors declare, in registration then
 * declaration order, and the same by json_order (stably): worked out once
 * and again only when the registry has grown, since every JSON object asks.
 */
static struct {
	pthread_mutex_t lock;
	size_t registry_n;                 /* what the lists were made from */
	size_t n;
	const struct metric_family *declared[METRIC_MAX_FAMILIES];
	const struct metric_family *by_json_order[METRIC_MAX_FAMILIES];
} family_cache = { .lock = PTHREAD_MUTEX_INITIALIZER, .registry_n = SIZE_MAX };

static void make_family_lists(void)
{
	const struct metric_family **by = family_cache.by_json_order;
	size_t n = 0;

	for (size_t i = 0; i < metric_source_count(); i++) {
		size_t n_fam;
		const struct metric_family *const *fam = metric_source_families(i, &n_fam);

		for (size_t k = 0; k < n_fam && n < METRIC_MAX_FAMILIES; k++)
			if (!is_one_of(fam[k], family_cache.declared, n))
				family_cache.declared[n++] = fam[k];
	}
	memcpy(by, family_cache.declared, n * sizeof(*by));
	/* An insertion sort of a few. */
	for (size_t i = 1; i < n; i++) {
		const struct metric_family *f = by[i];
		size_t j = i;

		for (; j > 0 && metric_json_position(by[j - 1]) > metric_json_position(f); j--)
			by[j] = by[j - 1];
		by[j] = f;
	}
	family_cache.n = n;
	family_cache.registry_n = metric_source_count();
}

/* The declared families (by json_order when asked) into ret; how many. */
static size_t copy_families(const struct metric_family **ret, bool by_json_order)
{
	size_t n;

	pthread_mutex_lock(&family_cache.lock);
	if (family_cache.registry_n != metric_source_count())
		make_family_lists();
	n = family_cache.n;
	memcpy(ret, by_json_order ? family_cache.by_json_order : family_cache.declared,
	       n * sizeof(*ret));
	pthread_mutex_unlock(&family_cache.lock);
	return n;
}

size_t metric_families_declared(const struct metric_family *ret[METRIC_MAX_FAMILIES])
{
	return copy_families(ret, false);
}

size_t metric_families_by_json_order(const struct metric_family *ret[METRIC_MAX_FAMILIES])
{
	return copy_families(ret, true);
}

const struct metric_family *metric_family_find(const char *collector, const char *name)
{
	for (size_t i = 0; i < metric_source_count(); i++) {
		size_t n_fam;
		const struct metric_family *const *fam = metric_source_families(i, &n_fam);

		if (collector && strcmp(metric_source_name(i), collector) != 0)
			continue;
		for (size_t k = 0; k < n_fam; k++) {
			const struct metric_family *f = fam[k];
			const char *its = f->name ? f->name : f->json_key;

			if (its && strcmp(its, name) == 0)
				return f;
		}
	}
	return NULL;
}

const struct metric_sample *snapshot_find_signal(const struct snapshot *s,
						 enum metric_signal signal,
						 enum metric_scope scope, int where)
{
	for (size_t i = 0; i < metric_source_count(); i++) {
		size_t n_fam;
		const struct metric_family *const *fam = metric_source_families(i, &n_fam);

		for (size_t k = 0; k < n_fam; k++) {
			const struct metric_family *f = fam[k];
			const struct metric_sample *v;

			if (f->signal != signal || f->scope != scope || f->label)
				continue;
			v = snapshot_find_sample(s, f, where, NULL);
			if (v)
				return v;
		}
	}
	return NULL;
}

const struct metric_sample *snapshot_find_labelled_signal(const struct snapshot *s,
							  enum metric_signal signal,
							  enum metric_scope scope, int where,
							  const char *label)
{
	for (size_t i = 0; i < metric_source_count(); i++) {
		size_t n_fam;
		const struct metric_family *const *fam = metric_source_families(i, &n_fam);

		for (size_t k = 0; k < n_fam; k++) {
			const struct metric_family *f = fam[k];
			const struct metric_sample *v;

			if (f->signal != signal || f->scope != scope || !f->label)
				continue;
			v = snapshot_find_sample(s, f, where, label);
			if (v)
				return v;
		}
	}
	return NULL;
}

const struct metric_sample *snapshot_find_core_signal(const struct snapshot *s,
						      const struct snapshot_core *c,
						      enum metric_signal signal)
{
	if (c->n_cpus <= 0)
		return NULL;
	return snapshot_find_signal(s, signal, METRIC_SCOPE_CORE, c->cpus[0]);
}

static void append_value(struct strbuf *out, const struct metric_sample *v, bool json)
{
	switch (v->family->kind) {
	case METRIC_UINT:
		strbuf_printf(out, "%" PRIu64, v->value.u);
		break;
	case METRIC_INT:
		strbuf_printf(out, "%" PRId64, metric_sample_int(v));
		break;
	case METRIC_BOOL:
		strbuf_append(out, json ? (v->value.u ? "true" : "false") : (v->value.u ? "1" : "0"));
		break;
	case METRIC_DOUBLE:
		if (json)
			strbuf_append_json_double(out, v->value.d);
		else
			strbuf_append_prom_double(out, v->value.d);
		break;
	case METRIC_TEXT:
		strbuf_append_json_string(out, v->value.text ? v->value.text : "");
		break;
	}
}

static const struct snapshot_cpu *find_cpu(const struct snapshot *s, int cpu)
{
	if (cpu >= 0 && cpu < s->n_cpus && s->cpus[cpu].cpu == cpu)
		return &s->cpus[cpu];
	for (int i = 0; i < s->n_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

/*
 * The labels names (comma-separated) = values (METRIC_LABEL_SEP-separated),
 * an empty value left out, after a comma when more_than_place, else
 * opening the braces.
 */
static void prom_labels(const char *names, const char *values, bool more_than_place,
			struct strbuf *out)
{
	const char *n = names, *v = values;
	bool first = !more_than_place;

	if (first)
		strbuf_append(out, "{");
	while (*n) {
		size_t nlen = strcspn(n, ","), vlen = strcspn(v, METRIC_LABEL_SEP);
		char value[256];

		if (vlen > 0) {
			snprintf(value, sizeof(value), "%.*s", (int)vlen, v);
			strbuf_printf(out, "%s%.*s=\"", first ? "" : ",", (int)nlen, n);
			strbuf_append_prom_label(out, value);
			strbuf_append(out, "\"");
			first = false;
		}
		n += nlen + (n[nlen] == ',');
		v += vlen + (v[vlen] != '\0');
	}
}

static void prom_sample(const struct snapshot *s, const struct metric_sample *v, struct strbuf *out)
{
	const struct metric_family *f = v->family;
	const struct snapshot_cpu *c = NULL;

	if (f->scope == METRIC_SCOPE_CORE || f->scope == METRIC_SCOPE_CPU) {
		c = find_cpu(s, v->where);
		if (!c)
			return;
	}
	strbuf_append(out, f->name);
	if (f->scope == METRIC_SCOPE_SOCKET)
		strbuf_printf(out, "{socket=\"%d\"", v->where);
	else if (f->scope == METRIC_SCOPE_CORE)
		strbuf_printf(out, "{socket=\"%d\",core=\"%d\"", c->socket, c->core);
	else if (f->scope == METRIC_SCOPE_CPU)
		strbuf_printf(out, "{socket=\"%d\",core=\"%d\",cpu=\"%d\"", c->socket, c->core, c->cpu);
	if (f->label && v->label_value)
		prom_labels(f->label, v->label_value, f->scope != METRIC_SCOPE_DAEMON, out);
	if (f->scope != METRIC_SCOPE_DAEMON || (f->label && v->label_value))
		strbuf_append(out, "}");
	strbuf_append(out, " ");
	append_value(out, v, false);
	strbuf_append(out, "\n");
}

void metric_write_prom(const struct snapshot *s, struct strbuf *out)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];

	metric_write_prom_families(s, families, metric_families_declared(families), out);
}

/* Whether a family before families[k] has the name of families[k]. */
static bool same_name_before(const struct metric_family *const *families, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (families[j]->name && strcmp(families[j]->name, families[k]->name) == 0)
			return true;
	return false;
}

void metric_write_prom_families(const struct snapshot *s,
				const struct metric_family *const *families, size_t n,
				struct strbuf *out)
{
	int n_values;
	const struct metric_sample *values = snapshot_samples(s, &n_values);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];
		size_t mark = out->len;
		bool any = false;

		if (!f->name || f->kind == METRIC_TEXT || same_name_before(families, k))
			continue;
		strbuf_printf(out, "# HELP %s ", f->name);
		strbuf_append_prom_help(out, f->help);
		strbuf_printf(out, "\n# TYPE %s %s\n", f->name,
			      f->type == METRIC_COUNTER ? "counter" : "gauge");
		/*
		 * One name is one family in the exposition, even when it is
		 * declared as several (one per label set, say): the first
		 * declaration's HELP and TYPE, then every declaration's samples.
		 */
		for (size_t m = k; m < n; m++) {
			const struct metric_family *g = families[m];

			if (m != k && (!g->name || strcmp(g->name, f->name) != 0))
				continue;
			for (int i = 0; i < n_values; i++)
				if (values[i].family == g && (!g->label || values[i].label_value)) {
					prom_sample(s, &values[i], out);
					any = true;
				}
		}
		/* A family without samples is left out, HELP and TYPE included. */
		if (!any && !out->failed) {
			out->len = mark;
			out->buf[mark] = '\0';
		}
	}
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
			append_value(out, v, true);
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
			append_value(out, v, true);
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
		append_value(out, v, true);
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

void metric_write_json_fields(const struct snapshot *s, enum metric_scope scope, int where,
			      int from, int to, struct strbuf *out)
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

static double table_value(const struct metric_sample *va, const struct metric_sample *vb,
			  uint64_t *ret_u)
{
	const struct metric_family *f = vb->family;
	bool delta = f->type == METRIC_COUNTER;

	*ret_u = vb->value.u - (delta ? va->value.u : 0);
	return vb->value.d - (delta ? va->value.d : 0);
}

/* A value of the table: right-aligned on a line of its own, else after its part name. */
/* The --once table: "  " and a title in 38 columns, a space, a number in 20. */
#define TABLE_TITLE_COLUMNS 38
#define TABLE_NUMBER_WIDTH 20

static void table_number(const struct metric_family *g, const struct metric_sample *va,
			 const struct metric_sample *vb, int width, struct strbuf *out)
{
	uint64_t u;
	double d = table_value(va, vb, &u);

	if (g->kind == METRIC_DOUBLE)
		strbuf_printf(out, "%*.3f", width, d);
	else if (g->kind == METRIC_INT)
		strbuf_printf(out, "%*" PRId64, width, (int64_t)u);
	else
		strbuf_printf(out, "%*" PRIu64, width, u);
}

/*
 * The title of a table_labels_titled line: f's table title, then each
 * label of f with its part of value (see table_labels_titled).
 */
static void table_label_title(const struct metric_family *f, const char *value,
			      struct strbuf *out)
{
	const char *name = f->label;

	strbuf_append(out, f->table_title);
	while (*name) {
		size_t name_len = strcspn(name, ",");
		size_t value_len = strcspn(value, METRIC_LABEL_SEP);
		bool last = name[name_len] == '\0';

		if (value_len > 0) {
			if (last)
				strbuf_printf(out, ", %.*s", (int)value_len, value);
			else
				strbuf_printf(out, ", %.*s %.*s", (int)name_len, name,
					      (int)value_len, value);
		}
		name += name_len + !last;
		value += value_len + (value[value_len] != '\0');
	}
}

/* The lines of labelled f at where: one per label value of b. */
static void table_labelled(const struct snapshot *a, const struct snapshot *b,
			   const struct metric_family *f, int where, struct strbuf *out)
{
	for (const struct metric_sample *vb = snapshot_first_labelled(b, f, where); vb;
	     vb = snapshot_next_labelled(b, vb)) {
		const struct metric_sample *va = snapshot_find_sample(a, f, where, vb->label_value);
		const struct metric_family *p = f->table_percent_of;
		const struct metric_sample *pa, *pb;
		int width = TABLE_NUMBER_WIDTH;

		if (f->table_labels_titled) {
			size_t mark = out->len;

			strbuf_append(out, "  ");
			table_label_title(f, vb->label_value, out);
			/* A long title takes from the number's field, so numbers still end in one column. */
			if (!out->failed && out->len - mark > TABLE_TITLE_COLUMNS)
				width -= (int)(out->len - mark - TABLE_TITLE_COLUMNS);
			else if (!out->failed)
				strbuf_printf(out, "%*s", (int)(TABLE_TITLE_COLUMNS - (out->len - mark)), "");
			if (width < 1)
				width = 1;
			strbuf_append(out, " ");
		} else {
			strbuf_printf(out, "  %-36s ", vb->label_value);
		}
		if (f->kind == METRIC_TEXT) {
			strbuf_printf(out, "%s: %s\n", f->table_title, vb->value.text);
			continue;
		}
		if (!va) {
			strbuf_printf(out, "%*s\n", width, "-");
			continue;
		}
		table_number(f, va, vb, width, out);
		if (f->table_labels_titled && strcmp(f->unit, "seconds") == 0)
			strbuf_append(out, " s");
		pa = p ? snapshot_find_sample(a, p, where, NULL) : NULL;
		pb = p ? snapshot_find_sample(b, p, where, NULL) : NULL;
		if (pa && pb && f->table_percent_label &&
		    strcmp(f->table_percent_label, vb->label_value) == 0 && pb->value.u > pa->value.u)
			strbuf_printf(out, "  %6.2f %% of %s",
				      100.0 * (double)(vb->value.u - va->value.u) /
				      (double)(pb->value.u - pa->value.u),
				      p->json_key ? p->json_key : p->name);
		strbuf_append(out, "\n");
	}
}

void metric_write_table_lines(const struct snapshot *a, const struct snapshot *b, int where,
			      struct strbuf *out)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];
	size_t n = metric_families_by_json_order(families);

	for (size_t k = 0; k < n;) {
		const struct metric_family *f = families[k];
		size_t end = k + 1, mark = out->len;
		bool whole = true;

		if (f->scope != METRIC_SCOPE_SOCKET || !f->table_title) {
			k++;
			continue;
		}
		if (f->label) {
			table_labelled(a, b, f, where, out);
			k++;
			continue;
		}
		/* Families that share f's line. */
		while (f->table_part && end < n && families[end]->table_part &&
		       families[end]->table_title && strcmp(families[end]->table_title, f->table_title) == 0)
			end++;
		strbuf_printf(out, "  %-36s", f->table_title);
		for (size_t i = k; i < end; i++) {
			const struct metric_family *g = families[i];
			const struct metric_sample *va = snapshot_find_sample(a, g, where, NULL);
			const struct metric_sample *vb = snapshot_find_sample(b, g, where, NULL);

			if (!va || !vb) {
				whole = g->json_null && g->json_group && end == k + 1 &&
					snapshot_json_group_has_value(b, families, n, g, where);
				if (whole)
					strbuf_printf(out, " %20s", "-");
				break;
			}
			if (g->table_part)
				strbuf_printf(out, "%s %s ", i > k ? "," : "", g->table_part);
			else
				strbuf_append(out, " ");
			table_number(g, va, vb, g->table_part ? 0 : TABLE_NUMBER_WIDTH, out);
			if (g->table_part && strcmp(g->unit, "seconds") == 0)
				strbuf_append(out, " s");
		}
		if (whole) {
			strbuf_append(out, "\n");
		} else if (!out->failed) {
			out->len = mark;
			out->buf[mark] = '\0';
		}
		k = end;
	}
}
