/*
 * Growing an array by doubling; see grow.h.
 */
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

void *grow_array(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : first ? first : 1;
	void *grown;

	if (need <= *cap)
		return items;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return NULL;
	grown = realloc(items, n * size);
	if (grown)
		*cap = n;
	return grown;
}
