/*
 * Piecewise-constant timelines over a scenario's period (sim_scenario.h).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim_scenario.h"

/* ---- timelines ---- */

int sim_timeline_init(struct sim_timeline *tl, int64_t period, int64_t value)
{
	tl->period = period;
	tl->cap = 8;
	tl->n = 1;
	tl->seg = calloc((size_t)tl->cap, sizeof(*tl->seg));
	if (!tl->seg)
		return -ENOMEM;
	tl->seg[0].start = 0;
	tl->seg[0].value = value;
	tl->ops = NULL;
	tl->n_ops = tl->cap_ops = 0;
	return 0;
}

void sim_timeline_free(struct sim_timeline *tl)
{
	free(tl->seg);
	free(tl->ops);
	tl->seg = NULL;
	tl->ops = NULL;
	tl->n = tl->cap = tl->n_ops = tl->cap_ops = 0;
}

/* Index of the segment holding local time t (0 <= t). */
static int find_seg(const struct sim_timeline *tl, int64_t t)
{
	int lo = 0, hi = tl->n - 1;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (tl->seg[mid].start <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Painting is batched: each paint is recorded, and sim_timeline_finish
 * applies them all in their order at once, with every new boundary placed
 * by one sort.  Painting n windows one by one would insert each boundary
 * into the middle of the segment array (quadratic for a scenario whose
 * windows come in reverse order).
 */
struct sim_timeline_op {
	int64_t start, end;     /* end: SIM_FOREVER or the period for "to the end" */
	int64_t value;
	enum sim_paint op;
};

int sim_timeline_paint(struct sim_timeline *tl, int64_t start, int64_t end, int64_t value,
		       enum sim_paint op)
{
	if (tl->period && end > tl->period)
		end = tl->period;
	if (start >= end)
		return 0;
	if (tl->n_ops == tl->cap_ops) {
		int cap = tl->cap_ops ? 2 * tl->cap_ops : 8;
		struct sim_timeline_op *ops = realloc(tl->ops, sizeof(*ops) * (size_t)cap);

		if (!ops)
			return -ENOMEM;
		tl->ops = ops;
		tl->cap_ops = cap;
	}
	/* Room for the two boundaries it may add, so that finishing allocates nothing. */
	if (tl->n + 2 * (tl->n_ops + 1) > tl->cap) {
		int cap = 2 * (tl->n + 2 * (tl->n_ops + 1));
		struct sim_timeline_seg *seg = realloc(tl->seg, sizeof(*seg) * (size_t)cap);

		if (!seg)
			return -ENOMEM;
		tl->seg = seg;
		tl->cap = cap;
	}
	tl->ops[tl->n_ops++] = (struct sim_timeline_op){ start, end, value, op };
	return 0;
}

/* By start; at one time the existing segment (rises 0) before a new boundary (rises 1). */
static int by_start(const void *a, const void *b)
{
	const struct sim_timeline_seg *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->rises > y->rises) - (x->rises < y->rises);
}

static bool bounded(const struct sim_timeline *tl, int64_t end)
{
	return end != SIM_FOREVER && end != tl->period;
}

/* Apply the recorded paints in order (see above). */
static void apply_paints(struct sim_timeline *tl)
{
	int n = tl->n, m;
	int64_t value = 0;

	if (!tl->n_ops)
		return;
	for (int i = 0; i < n; i++)
		tl->seg[i].rises = 0;
	for (int k = 0; k < tl->n_ops; k++) {
		tl->seg[n++] = (struct sim_timeline_seg){ .start = tl->ops[k].start, .rises = 1 };
		if (bounded(tl, tl->ops[k].end))
			tl->seg[n++] = (struct sim_timeline_seg){ .start = tl->ops[k].end, .rises = 1 };
	}
	qsort(tl->seg, (size_t)n, sizeof(*tl->seg), by_start);
	/* A new boundary takes the value in force there; one time, one segment. */
	m = 0;
	for (int i = 0; i < n; i++) {
		if (tl->seg[i].rises == 0)
			value = tl->seg[i].value;
		else
			tl->seg[i].value = value;
		if (m > 0 && tl->seg[m - 1].start == tl->seg[i].start)
			continue;
		tl->seg[m++] = tl->seg[i];
	}
	tl->n = m;
	for (int k = 0; k < tl->n_ops; k++) {
		const struct sim_timeline_op *o = &tl->ops[k];
		int stop = bounded(tl, o->end) ? find_seg(tl, o->end) : tl->n;

		for (int i = find_seg(tl, o->start); i < stop; i++) {
			if (o->op == SIM_PAINT_SET)
				tl->seg[i].value = o->value;
			else if (o->value && !tl->seg[i].value)
				tl->seg[i].value = o->value;
		}
	}
	tl->n_ops = 0;
}

int sim_timeline_paint_rule(struct sim_timeline *tl, const struct sim_rule *rule, int64_t value,
			    enum sim_paint op)
{
	int64_t end = rule->end_ns, on;
	int r;

	if (end == SIM_FOREVER && tl->period)
		end = tl->period;
	if (rule->duty >= 1.0)
		return sim_timeline_paint(tl, rule->start_ns, end, value, op);
	on = llround(rule->duty * (double)rule->cycle_ns);
	for (int64_t c = rule->start_ns; c < end && on > 0; c += rule->cycle_ns) {
		r = sim_timeline_paint(tl, c, c + on < end ? c + on : end, value, op);
		if (r < 0)
			return r;
	}
	return 0;
}

static int64_t seg_end(const struct sim_timeline *tl, int i)
{
	if (i + 1 < tl->n)
		return tl->seg[i + 1].start;
	return tl->period ? tl->period : SIM_FOREVER;
}

/* Paint value (by op) wherever src is within [lo, hi]. */
static int paint_where(struct sim_timeline *tl, const struct sim_timeline *src, int64_t lo,
		       int64_t hi, int64_t value, enum sim_paint op)
{
	for (int i = 0; i < src->n; i++) {
		int r;

		if (src->seg[i].value < lo || src->seg[i].value > hi)
			continue;
		r = sim_timeline_paint(tl, src->seg[i].start, seg_end(src, i), value, op);
		if (r < 0)
			return r;
	}
	return 0;
}

int sim_timeline_or_where(struct sim_timeline *tl, const struct sim_timeline *src,
			  int64_t threshold)
{
	return paint_where(tl, src, threshold, INT64_MAX, 1, SIM_PAINT_OR);
}

int sim_timeline_and(struct sim_timeline *tl, const struct sim_timeline *src)
{
	return paint_where(tl, src, 0, 0, 0, SIM_PAINT_SET);
}

static bool rise_at(const struct sim_timeline *tl, int i)
{
	return tl->seg[i].value && !tl->seg[i - 1].value;
}

void sim_timeline_finish(struct sim_timeline *tl)
{
	int n = 1;

	apply_paints(tl);
	for (int i = 1; i < tl->n; i++) {
		if (tl->seg[i].value == tl->seg[n - 1].value)
			continue;
		tl->seg[n++] = tl->seg[i];
	}
	tl->n = n;
	tl->seg[0].integral = 0;
	tl->seg[0].rises = 0;
	for (int i = 1; i < n; i++) {
		struct sim_timeline_seg *prev = &tl->seg[i - 1];

		tl->seg[i].integral = prev->integral + (unsigned __int128)prev->value *
						       (uint64_t)(tl->seg[i].start - prev->start);
		tl->seg[i].rises = prev->rises + (i >= 2 && rise_at(tl, i - 1));
	}
}

int64_t sim_timeline_value_at(const struct sim_timeline *tl, int64_t t)
{
	if (t < 0)
		t = 0;
	if (tl->period)
		t %= tl->period;
	return tl->seg[find_seg(tl, t)].value;
}

/* Integral over [0, t) of one period, 0 <= t <= period. */
static unsigned __int128 local_integral(const struct sim_timeline *tl, int64_t t)
{
	const struct sim_timeline_seg *s = &tl->seg[find_seg(tl, t)];

	return s->integral + (unsigned __int128)s->value * (uint64_t)(t - s->start);
}

unsigned __int128 sim_timeline_integral(const struct sim_timeline *tl, int64_t t)
{
	if (t <= 0)
		return 0;
	if (!tl->period)
		return local_integral(tl, t);
	return (unsigned __int128)(uint64_t)(t / tl->period) * local_integral(tl, tl->period) +
	       local_integral(tl, t % tl->period);
}

/* Rises at segments 1.. with start < t, within one period, 0 < t <= period. */
static uint64_t local_inner_rises(const struct sim_timeline *tl, int64_t t)
{
	int i = find_seg(tl, t - 1);

	return tl->seg[i].rises + (i >= 1 && rise_at(tl, i));
}

uint64_t sim_timeline_rises(const struct sim_timeline *tl, int64_t t)
{
	bool v0 = tl->seg[0].value, wraps_on = v0 && tl->seg[tl->n - 1].value;
	uint64_t k, per_period, total;

	if (t <= 0)
		return 0;
	if (!tl->period)
		return v0 + local_inner_rises(tl, t);
	k = (uint64_t)(t / tl->period);
	t %= tl->period;
	per_period = local_inner_rises(tl, tl->period) + (v0 && !wraps_on);
	total = 0;
	if (k > 0)
		total = v0 + local_inner_rises(tl, tl->period) + (k - 1) * per_period;
	if (t > 0)
		total += (k == 0 ? v0 : v0 && !wraps_on) + local_inner_rises(tl, t);
	return total;
}
