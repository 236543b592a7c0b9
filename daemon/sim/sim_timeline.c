/*
 * Piecewise-constant timelines over a scenario's period (sim_scenario.h).
 */
#include <errno.h>
#include <math.h>
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
	return 0;
}

void sim_timeline_free(struct sim_timeline *tl)
{
	free(tl->seg);
	tl->seg = NULL;
	tl->n = tl->cap = 0;
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

/* Make a segment boundary at t; returns the index of the segment starting at t. */
static int split_at(struct sim_timeline *tl, int64_t t)
{
	int i = find_seg(tl, t);

	if (tl->seg[i].start == t)
		return i;
	if (tl->n == tl->cap) {
		struct sim_timeline_seg *seg = realloc(tl->seg, sizeof(*seg) * (size_t)tl->cap * 2);

		if (!seg)
			return -ENOMEM;
		tl->seg = seg;
		tl->cap *= 2;
	}
	memmove(&tl->seg[i + 2], &tl->seg[i + 1], sizeof(*tl->seg) * (size_t)(tl->n - i - 1));
	tl->seg[i + 1].start = t;
	tl->seg[i + 1].value = tl->seg[i].value;
	tl->n++;
	return i + 1;
}

int sim_timeline_paint(struct sim_timeline *tl, int64_t start, int64_t end, int64_t value,
		       enum sim_paint op)
{
	int first, stop;

	if (tl->period && end > tl->period)
		end = tl->period;
	if (start >= end)
		return 0;
	first = split_at(tl, start);
	if (first < 0)
		return first;
	if (end != SIM_FOREVER && end != tl->period) {
		stop = split_at(tl, end);
		if (stop < 0)
			return stop;
	} else {
		stop = tl->n;
	}
	for (int i = first; i < stop; i++) {
		if (op == SIM_PAINT_SET)
			tl->seg[i].value = value;
		else if (value)
			tl->seg[i].value = tl->seg[i].value ? tl->seg[i].value : value;
	}
	return 0;
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

int sim_timeline_or_where(struct sim_timeline *tl, const struct sim_timeline *src,
			  int64_t threshold)
{
	for (int i = 0; i < src->n; i++) {
		int r;

		if (src->seg[i].value < threshold)
			continue;
		r = sim_timeline_paint(tl, src->seg[i].start, seg_end(src, i), 1, SIM_PAINT_OR);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool rise_at(const struct sim_timeline *tl, int i)
{
	return tl->seg[i].value && !tl->seg[i - 1].value;
}

void sim_timeline_finish(struct sim_timeline *tl)
{
	int n = 1;

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
