/*
 * A socket's memory places in one sample; see memory_places.h.  The DRAM
 * throttle families with channels ("dram_throttled_seconds" and the
 * per-slot "dram_slot_throttled_seconds", critical throttling left out:
 * it is a part of the throttled time) give shares, the DIMM temperature
 * and refresh families give the rest.  A label value is split by the
 * family's label names; "cause" and "sensor" fold (the worst, the
 * hottest), "die", "channel" and "slot" name the place.
 */
#include <stdlib.h>
#include <string.h>

#include "memory_places.h"
#include "metric.h"
#include "snapshot.h"

/* The place that label_value of f names, in *ret; false when it names no channel. */
static bool place_of_labels(const struct metric_family *f, const char *label_value,
			    struct history_place_reading *ret)
{
	const char *name = f->label, *value = label_value;

	memset(ret, 0, sizeof(*ret));
	ret->die = ret->channel = ret->slot = -1;
	while (name && value) {
		size_t name_len = strcspn(name, ",");
		char *end;
		long v = strtol(value, &end, 10);
		bool number = end != value && (*end == '\0' || *end == METRIC_LABEL_SEP[0]) && v >= 0 &&
			      v < 1 << 16;

		if (number && name_len == 3 && strncmp(name, "die", 3) == 0)
			ret->die = (int)v;
		else if (number && name_len == 7 && strncmp(name, "channel", 7) == 0)
			ret->channel = (int)v;
		else if (number && name_len == 4 && strncmp(name, "slot", 4) == 0)
			ret->slot = (int)v;
		name = name[name_len] ? name + name_len + 1 : NULL;
		value = strchr(value, METRIC_LABEL_SEP[0]);
		value = value ? value + 1 : NULL;
	}
	return ret->channel >= 0;
}

/* The entry of out[0..*n) for place p, added when new (NULL: out is full). */
static struct history_place_reading *entry(struct history_place_reading *out, int *n, int max,
					   const struct history_place_reading *p)
{
	for (int i = 0; i < *n; i++)
		if (out[i].die == p->die && out[i].channel == p->channel && out[i].slot == p->slot)
			return &out[i];
	if (*n >= max)
		return NULL;
	out[*n] = *p;
	return &out[(*n)++];
}

static bool is_dram_throttle(const struct metric_family *f)
{
	return f->json_key && (strcmp(f->json_key, "dram_throttled_seconds") == 0 ||
			       strcmp(f->json_key, "dram_slot_throttled_seconds") == 0);
}

/* Fold the DRAM throttled shares of socket's places, from prev to s, into out. */
static void add_shares(const struct snapshot *prev, const struct snapshot *s, int socket,
		       struct history_place_reading *out, int *n, int max)
{
	double span = prev && s->mono > prev->mono ? s->mono - prev->mono : 0;
	size_t n_fam;
	const struct metric_family *const *fam = metric_families_with_signal(
		METRIC_SIGNAL_THROTTLE_SECONDS, METRIC_SCOPE_SOCKET, true, &n_fam);

	for (size_t i = 0; i < n_fam; i++) {
		if (!is_dram_throttle(fam[i]))
			continue;
		for (const struct metric_sample *v = snapshot_first_labelled(s, fam[i], socket); v;
		     v = snapshot_next_labelled(s, v)) {
			struct history_place_reading p, *e;
			const struct metric_sample *was;
			double share = 0;

			if (!place_of_labels(fam[i], v->label_value, &p) || !(e = entry(out, n, max, &p)))
				continue;
			was = span > 0 ? snapshot_find_sample(prev, fam[i], socket, v->label_value) : NULL;
			if (was && v->value.d > was->value.d)
				share = (v->value.d - was->value.d) / span;
			if (!e->has_dram_share || share > e->dram_share)
				e->dram_share = share > 1 ? 1 : share;
			e->has_dram_share = true;
		}
	}
}

/* Fold the DIMM temperatures and refresh multipliers of socket's places into out. */
static void add_dimms(const struct snapshot *s, int socket, enum metric_signal signal,
		      struct history_place_reading *out, int *n, int max)
{
	size_t n_fam;
	const struct metric_family *const *fam = metric_families_with_signal(
		signal, METRIC_SCOPE_SOCKET, true, &n_fam);

	for (size_t i = 0; i < n_fam; i++)
		for (const struct metric_sample *v = snapshot_first_labelled(s, fam[i], socket); v;
		     v = snapshot_next_labelled(s, v)) {
			struct history_place_reading p, *e;

			if (!place_of_labels(fam[i], v->label_value, &p) || !(e = entry(out, n, max, &p)))
				continue;
			if (signal == METRIC_SIGNAL_DIMM_TEMPERATURE) {
				if (!e->has_celsius || v->value.d > e->celsius)
					e->celsius = v->value.d;
				e->has_celsius = true;
			} else {
				e->has_refresh = true;
				e->refresh_doubled |= v->value.u >= 2;
			}
		}
}

int memory_places_of(const struct snapshot *prev, const struct snapshot *s, int socket,
		     struct history_place_reading *out, int max)
{
	int n = 0;

	add_shares(prev, s, socket, out, &n, max);
	add_dimms(s, socket, METRIC_SIGNAL_DIMM_TEMPERATURE, out, &n, max);
	add_dimms(s, socket, METRIC_SIGNAL_DIMM_REFRESH, out, &n, max);
	return n;
}
