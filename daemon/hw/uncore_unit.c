/*
 * Uncore units: see uncore_unit.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uncore_unit.h"

#define MAX_DIES 64

static int die_of(const struct cpu_topology *topo, int cpu)
{
	const struct hw_cpu *h = cpu_topology_find(topo, cpu);

	return h && h->die >= 0 && h->die < MAX_DIES ? h->die : 0;
}

int uncore_units(const struct cpu_topology *topo, struct uncore_unit **ret, int *ret_n,
		 bool *ret_multi_die)
{
	struct uncore_unit *u = calloc((size_t)topo->n_cpus + 1, sizeof(*u));
	int n = 0;

	if (!u)
		return -ENOMEM;
	*ret_multi_die = false;
	for (int i = 0; i < topo->n_sockets; i++) {
		const struct cpu_socket *sock = &topo->sockets[i];
		bool seen[MAX_DIES] = { false };

		for (int k = 0; k < sock->n_cpus; k++)
			seen[die_of(topo, sock->cpus[k])] = true;
		for (int d = 0; d < MAX_DIES; d++) {
			if (!seen[d])
				continue;
			u[n++] = (struct uncore_unit){ .socket = sock->socket, .die = d, .sock = sock };
			if (d > 0)
				*ret_multi_die = true;
		}
	}
	*ret = u;
	*ret_n = n;
	return 0;
}

int uncore_unit_first_online(struct hw *hw, const struct cpu_topology *topo,
			     const struct uncore_unit *unit)
{
	for (int k = 0; k < unit->sock->n_cpus; k++) {
		int cpu = unit->sock->cpus[k];

		if (die_of(topo, cpu) == unit->die && hw_cpu_online(hw, cpu) == 1)
			return cpu;
	}
	return -1;
}

int uncore_unit_key(const struct cpu_topology *topo, int cpu)
{
	const struct hw_cpu *h = cpu_topology_find(topo, cpu);

	if (!h)
		return -ENOENT;
	return h->socket * MAX_DIES + die_of(topo, cpu);
}

void *uncore_unit_array(const struct cpu_topology *topo, size_t elem_size, size_t unit_offset,
			int *ret_n, bool *ret_multi_die)
{
	struct uncore_unit *units;
	char *array;

	if (uncore_units(topo, &units, ret_n, ret_multi_die) < 0)
		return NULL;
	array = calloc((size_t)*ret_n + 1, elem_size);
	for (int i = 0; array && i < *ret_n; i++)
		memcpy(array + (size_t)i * elem_size + unit_offset, &units[i], sizeof(units[i]));
	free(units);
	return array;
}
