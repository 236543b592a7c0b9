/*
 * Growing an array by doubling: the one way every table of uncored that
 * grows (ledger entries, state-file records, episode places, label
 * entries, CPU lists) makes room.
 */
#ifndef UNCORED_GROW_H
#define UNCORED_GROW_H

#include <stddef.h>

/*
 * items (an array of *cap elements of size bytes, or NULL with *cap 0)
 * with room for at least need elements: *cap doubled (from first when it
 * is 0) until it holds need, the elements kept.  Returns the array, which
 * may have moved, or NULL without memory (or when the size would
 * overflow), items and *cap then unchanged.
 */
void *grow_array(void *items, size_t *cap, size_t need, size_t size, size_t first);

#endif
