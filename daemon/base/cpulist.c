/*
 * CPU lists: see cpulist.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "grow.h"
#include "text.h"

/* No CPU number above the kernel's NR_CPUS limit of 8192 could appear. */
#define CPU_MAX 65535

/* A decimal number in [0, CPU_MAX] that ends at *ret_end. */
static int parse_cpu(const char *s, long *ret_value, const char **ret_end)
{
	return text_parse_dec(s, CPU_MAX, ret_value, ret_end);
}

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int append_range(int **cpus, size_t *n, size_t *cap, long lo, long hi)
{
	for (long c = lo; c <= hi; c++) {
		int *p = grow_array(*cpus, cap, *n + 1, sizeof(**cpus), 16);

		if (!p)
			return -ENOMEM;
		*cpus = p;
		(*cpus)[(*n)++] = (int)c;
	}
	return 0;
}

int cpulist_parse(const char *text, int **ret_cpus, size_t *ret_n)
{
	size_t len = strlen(text), n = 0, cap = 0, out = 0;
	const char *p = text, *end;
	int *cpus = NULL;
	long lo, hi;
	int r = 0;

	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	end = text + len;
	while (p < end && r == 0) {
		if (parse_cpu(p, &lo, &p) < 0) {
			r = -EINVAL;
			break;
		}
		hi = lo;
		if (*p == '-' && (parse_cpu(p + 1, &hi, &p) < 0 || hi < lo)) {
			r = -EINVAL;
			break;
		}
		r = append_range(&cpus, &n, &cap, lo, hi);
		if (r == 0 && p < end && (*p++ != ',' || p >= end))
			r = -EINVAL;
	}
	if (r == 0 && p != end)
		r = -EINVAL;
	if (r < 0) {
		free(cpus);
		return r;
	}
	if (n > 0)
		qsort(cpus, n, sizeof(*cpus), compare_int);
	for (size_t i = 0; i < n; i++)
		if (out == 0 || cpus[out - 1] != cpus[i])
			cpus[out++] = cpus[i];
	*ret_cpus = cpus;
	*ret_n = out;
	return 0;
}
