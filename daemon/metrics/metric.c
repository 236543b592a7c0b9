/*
 * The sample API's storage and lookups.  See metric.h.  A snapshot's
 * values are one array in the order added, with a hash index by family,
 * place and label so that adding and finding stay constant time on a
 * machine with hundreds of cores.  It also keeps the list of the families
 * the registered collectors declare, which the writers (output/) walk; it
 * writes no text itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "snapshot.h"

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
 * Room for cap values in all, its index (a power of two, masked with) at
 * least twice that, so at most half full.
 */
static int resize(struct snapshot *s, int cap)
{
	int index_cap = 16;
	struct metric_sample *grown;
	int *index;

	while (index_cap < 2 * cap)
		index_cap *= 2;
	index = calloc((size_t)index_cap, sizeof(*index));
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
	s->cap_value_index = index_cap;
	for (int i = 0; i < s->n_values; i++) {
		const struct metric_sample *v = &s->values[i];

		index[slot_of(s, v->family, v->where, v->label_value)] = i + 1;
	}
	return 0;
}

/*
 * Room for one more value.  The first room is sized for the dozen or so
 * values per CPU the collectors add (16 per CPU), so that a sample of a
 * large machine does not regrow and rehash its index, unless
 * snapshot_reserve_values() sized it already.
 */
static int grow(struct snapshot *s)
{
	int cap = s->cap_values ? 2 * s->cap_values : 16;

	while (!s->cap_values && cap < 16 * s->n_cpus)
		cap *= 2;
	return resize(s, cap);
}

int snapshot_reserve_values(struct snapshot *s, int n)
{
	if (s->cap_values || n <= 0)
		return 0;
	if (resize(s, n) < 0) {
		s->is_short_of_memory = true;
		return -ENOMEM;
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

/*
 * The declared families by signal, scope and whether they have a label,
 * each list in declaration order: the readers look values up by signal
 * hundreds of times a sample, and the families never change once the
 * collectors are registered (at program start).  Made again only when the
 * registry has grown, as family_cache.
 */
static struct {
	pthread_mutex_t lock;
	_Atomic size_t registry_n;         /* what the lists were made from */
	uint8_t at[METRIC_SIGNAL_COUNT][METRIC_SCOPE_COUNT][2];  /* first in families[] */
	uint8_t n[METRIC_SIGNAL_COUNT][METRIC_SCOPE_COUNT][2];
	const struct metric_family *families[METRIC_MAX_FAMILIES];
} signal_cache = { .lock = PTHREAD_MUTEX_INITIALIZER, .registry_n = SIZE_MAX };
_Static_assert(METRIC_MAX_FAMILIES <= UINT8_MAX, "signal_cache counts families in a uint8_t");

static void make_signal_lists(void)
{
	const struct metric_family *declared[METRIC_MAX_FAMILIES];
	size_t n_declared = metric_families_declared(declared), n = 0;

	for (int sig = 0; sig < METRIC_SIGNAL_COUNT; sig++)
		for (int scope = 0; scope < METRIC_SCOPE_COUNT; scope++)
			for (int labelled = 0; labelled < 2; labelled++) {
				signal_cache.at[sig][scope][labelled] = (uint8_t)n;
				for (size_t i = 0; i < n_declared; i++) {
					const struct metric_family *f = declared[i];

					if ((int)f->signal == sig && (int)f->scope == scope &&
					    (f->label != NULL) == labelled)
						signal_cache.families[n++] = f;
				}
				signal_cache.n[sig][scope][labelled] =
					(uint8_t)(n - signal_cache.at[sig][scope][labelled]);
			}
}

const struct metric_family *const *metric_families_with_signal(enum metric_signal signal,
								enum metric_scope scope,
								bool is_labelled, size_t *ret_n)
{
	size_t registry_n = metric_source_count();

	*ret_n = 0;
	if ((unsigned)signal >= METRIC_SIGNAL_COUNT || (unsigned)scope >= METRIC_SCOPE_COUNT)
		return NULL;
	if (atomic_load_explicit(&signal_cache.registry_n, memory_order_acquire) != registry_n) {
		pthread_mutex_lock(&signal_cache.lock);
		if (atomic_load_explicit(&signal_cache.registry_n, memory_order_relaxed) !=
		    registry_n) {
			make_signal_lists();
			atomic_store_explicit(&signal_cache.registry_n, registry_n,
					      memory_order_release);
		}
		pthread_mutex_unlock(&signal_cache.lock);
	}
	*ret_n = signal_cache.n[signal][scope][is_labelled];
	return &signal_cache.families[signal_cache.at[signal][scope][is_labelled]];
}

/*
 * The value at where, labelled label, of the first registered family with
 * signal and scope that has one, among the labelled families (is_labelled)
 * or those without a label (label NULL).
 */
static const struct metric_sample *find_signal(const struct snapshot *s, enum metric_signal signal,
					       enum metric_scope scope, int where,
					       bool is_labelled, const char *label)
{
	size_t n;
	const struct metric_family *const *fam = metric_families_with_signal(signal, scope,
									     is_labelled, &n);

	for (size_t k = 0; k < n; k++) {
		const struct metric_sample *v = snapshot_find_sample(s, fam[k], where, label);

		if (v)
			return v;
	}
	return NULL;
}

const struct metric_sample *snapshot_find_signal(const struct snapshot *s,
						 enum metric_signal signal,
						 enum metric_scope scope, int where)
{
	return find_signal(s, signal, scope, where, false, NULL);
}

const struct metric_sample *snapshot_find_labelled_signal(const struct snapshot *s,
							  enum metric_signal signal,
							  enum metric_scope scope, int where,
							  const char *label)
{
	return find_signal(s, signal, scope, where, true, label);
}

const struct metric_sample *snapshot_find_core_signal(const struct snapshot *s,
						      const struct snapshot_core *c,
						      enum metric_signal signal)
{
	if (c->n_cpus <= 0)
		return NULL;
	return snapshot_find_signal(s, signal, METRIC_SCOPE_CORE, c->cpus[0]);
}

bool metric_label_value(const struct metric_family *f, const char *labels, const char *name,
			 char *buf, size_t len)
{
	const char *names = f->label ? f->label : "";
	size_t want = strlen(name);

	while (*names && labels) {
		size_t nl = strcspn(names, ",");
		size_t vl = strcspn(labels, METRIC_LABEL_SEP);

		if (nl == want && memcmp(names, name, nl) == 0) {
			if (vl == 0 || vl >= len)
				return false;
			memcpy(buf, labels, vl);
			buf[vl] = '\0';
			return true;
		}
		names += nl + (names[nl] != 0);
		labels += vl + (labels[vl] != 0);
	}
	return false;
}

int metric_label_number(const struct metric_family *f, const char *labels, const char *name)
{
	char buf[16], *end;
	long v;

	if (!metric_label_value(f, labels, name, buf, sizeof(buf)))
		return -1;
	v = strtol(buf, &end, 10);
	return *end == '\0' && v >= 0 && v < 1 << 20 ? (int)v : -1;
}
