/*
 * The collector registration table: one line per collector, in the order
 * their families appear in every output.  Nothing else in the daemon names
 * a collector.
 */
#include <string.h>

#include "collector.h"

extern const struct collector_ops uncore_collector_ops;
extern const struct collector_ops thermal_collector_ops;
extern const struct collector_ops core_collector_ops;

const struct collector_ops *const collector_registry[] = {
	&uncore_collector_ops,
	&thermal_collector_ops,
	&core_collector_ops,
};

const size_t collector_registry_n = sizeof(collector_registry) / sizeof(collector_registry[0]);

const struct collector_ops *collector_find(const char *name)
{
	for (size_t i = 0; i < collector_registry_n; i++)
		if (strcmp(collector_registry[i]->name, name) == 0)
			return collector_registry[i];
	return NULL;
}
