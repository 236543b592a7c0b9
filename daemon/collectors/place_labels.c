/*
 * Kept label texts of places.  See place_labels.h.  An open-addressing
 * index (at most half full) over the entries, whose texts are packed in
 * one pool: a few hundred places on a large machine, some kilobytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "grow.h"
#include "place_labels.h"

/* The longest text kept (a collector's name and three numbers fit with room). */
#define PLACE_LABEL_MAX 64

struct place_entry {
	int place[3];
	uint32_t at;                   /* the text's offset in the pool */
};

struct place_labels {
	uint32_t *index;               /* cap_index slots: entry number + 1, 0 empty */
	size_t cap_index;              /* a power of two */
	struct place_entry *entries;
	size_t n, cap;
	char *pool;
	size_t used, cap_pool;
};

static size_t hash_place(const int place[3])
{
	uint64_t h = (uint64_t)(uint32_t)place[0] * 0x9e3779b97f4a7c15ull;

	h = (h ^ (uint32_t)place[1]) * 0xff51afd7ed558ccdull;
	h = (h ^ (uint32_t)place[2]) * 0xc4ceb9fe1a85ec53ull;
	return (size_t)(h >> 32);
}

/* The index slot where place is or would go. */
static size_t slot_of(const struct place_labels *l, const int place[3])
{
	size_t mask = l->cap_index - 1;

	for (size_t k = hash_place(place) & mask;; k = (k + 1) & mask) {
		uint32_t i = l->index[k];

		if (!i || memcmp(l->entries[i - 1].place, place, 3 * sizeof(*place)) == 0)
			return k;
	}
}

/* Room for one more entry of len bytes; false without memory. */
static bool make_room(struct place_labels *l, size_t len)
{
	struct place_entry *e = grow_array(l->entries, &l->cap, l->n + 1, sizeof(*e), 64);
	char *p;

	if (!e)
		return false;
	l->entries = e;
	p = grow_array(l->pool, &l->cap_pool, l->used + len, 1, 1024);
	if (!p)
		return false;
	l->pool = p;
	if (2 * (l->n + 1) > l->cap_index) {
		size_t cap = l->cap_index ? 2 * l->cap_index : 128;
		uint32_t *index = calloc(cap, sizeof(*index));

		if (!index)
			return false;
		free(l->index);
		l->index = index;
		l->cap_index = cap;
		for (size_t i = 0; i < l->n; i++)
			index[slot_of(l, l->entries[i].place)] = (uint32_t)i + 1;
	}
	return true;
}

const char *place_label(struct place_labels **labels, const char *name, const int place[3],
			char *buf, size_t len)
{
	struct place_labels *l = *labels;
	char num[3][16];
	size_t k, n;
	int w;

	if (l && l->cap_index) {
		uint32_t i = l->index[slot_of(l, place)];

		if (i)
			return l->pool + l->entries[i - 1].at;
	}
	for (int j = 0; j < 3; j++)
		if (place[j] >= 0)
			snprintf(num[j], sizeof(num[j]), "%d", place[j]);
		else
			num[j][0] = '\0';
	w = snprintf(buf, len, "%s" METRIC_LABEL_SEP "%s" METRIC_LABEL_SEP "%s"
		     METRIC_LABEL_SEP "%s", name, num[0], num[1], num[2]);
	n = w < 0 ? 0 : (size_t)w + 1;
	if (!l)
		l = *labels = calloc(1, sizeof(*l));
	if (w < 0 || n > len || n > PLACE_LABEL_MAX || !l || !make_room(l, n))
		return buf;
	k = slot_of(l, place);
	memcpy(l->entries[l->n].place, place, 3 * sizeof(*place));
	l->entries[l->n].at = (uint32_t)l->used;
	memcpy(l->pool + l->used, buf, n);
	l->used += n;
	l->index[k] = (uint32_t)++l->n;
	return l->pool + l->entries[l->n - 1].at;
}

void place_labels_free(struct place_labels *labels)
{
	if (!labels)
		return;
	free(labels->index);
	free(labels->entries);
	free(labels->pool);
	free(labels);
}
