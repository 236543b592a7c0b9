/*
 * The text helpers the PMU loader (perf_pmu.c) shares with the parsers of
 * perf_pmu_format.c.  Internal to the perf engine.
 */
#ifndef UNCORED_PERF_PMU_TEXT_H
#define UNCORED_PERF_PMU_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The longest sysfs attribute read: at most a page. */
#define PERF_PMU_TEXT_MAX 4096

/* Strip trailing whitespace (sysfs ends every attribute with a newline). */
void perf_pmu_trim(char *s);

/*
 * Parse an unsigned number (decimal, 0x hex, 0 octal) that fills all of s.
 * 0, or -EINVAL.
 */
int perf_pmu_parse_u64(const char *s, uint64_t *ret_value);

#endif
