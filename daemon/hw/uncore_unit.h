/*
 * The uncore units of a machine: the server uncore's boxes (PCU, memory
 * channels) exist once per die of each package (hardware-linux.md §2:
 * Cascade Lake-AP has two dies per package; one elsewhere), and the
 * kernel's uncore PMUs are opened on one CPU of each (their cpumask).
 */
#ifndef UNCORED_UNCORE_UNIT_H
#define UNCORED_UNCORE_UNIT_H

#include <stdbool.h>

#include "cpu.h"
#include "hw.h"

struct uncore_unit {
	int socket, die;
	const struct cpu_socket *sock;    /* borrowed from the topology */
};

/*
 * The units of topo, socket by socket and die by die, into a malloc'ed
 * *ret of *ret_n; *ret_multi_die says whether a package has several dies.
 * 0 or -ENOMEM.
 */
int uncore_units(const struct cpu_topology *topo, struct uncore_unit **ret, int *ret_n,
		 bool *ret_multi_die);

/*
 * The same units in a collector's own array: *ret_n + 1 zeroed elements of
 * elem_size bytes, each unit copied into its element at unit_offset (the
 * offsetof its struct uncore_unit member).  Returns the array (free it), or
 * NULL when out of memory.
 */
void *uncore_unit_array(const struct cpu_topology *topo, size_t elem_size, size_t unit_offset,
			int *ret_n, bool *ret_multi_die);

/* The lowest-numbered CPU of unit that hw reports online now, or -1. */
int uncore_unit_first_online(struct hw *hw, const struct cpu_topology *topo,
			     const struct uncore_unit *unit);

/*
 * One number per unit for CPU cpu (socket and die), or a negative errno:
 * what the perf engine's cpu_socket callback returns, so that a box is
 * opened on the cpumask CPU of its own die.
 */
int uncore_unit_key(const struct cpu_topology *topo, int cpu);

#endif
