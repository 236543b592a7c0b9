/*
 * Where in a socket's memory the heat is, one sample at a time, for the
 * history (history.h): each channel, DIMM slot or die's channel that a
 * throttle family counts or a DIMM sensor reads, with its DRAM throttled
 * share of the interval (the worst of its causes), its hottest sensor and
 * whether it ran at twice the refresh rate.  Found by the families'
 * signals and label names (metric.h), not by any collector's name, so a
 * new collector of these families needs no edit here.
 */
#ifndef UNCORED_MEMORY_PLACES_H
#define UNCORED_MEMORY_PLACES_H

#include "history.h"

struct snapshot;

/*
 * The memory places of socket in s into out[0..max) (prev: the sample
 * before, or NULL: no shares then, only that the place is counted, at
 * 0).  Returns how many; places beyond max are left out.
 */
int memory_places_of(const struct snapshot *prev, const struct snapshot *s, int socket,
		     struct history_place_reading *out, int max);

#endif
