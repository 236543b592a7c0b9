/*
 * The kernel's CPU list format ("0", "0,18", "0-3,8-11\n"), as sysfs
 * writes it in /sys/devices/system/cpu/online and a PMU's cpumask.
 */
#ifndef UNCORED_CPULIST_H
#define UNCORED_CPULIST_H

#include <stddef.h>

/*
 * Parse a CPU list (trailing white space allowed; empty means none) into
 * a malloc'ed ascending array without duplicates (NULL when empty).
 * 0, -EINVAL on malformed text (a CPU number above 65535 included),
 * -ENOMEM.
 */
int cpulist_parse(const char *text, int **ret_cpus, size_t *ret_n);

#endif
