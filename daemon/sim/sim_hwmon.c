/*
 * The simulated hwmon class: one k10temp device per socket
 * (hardware-amd.md §2.1, §7), registered first, so socket S is hwmonS.
 * Files, 0444 text in m°C: name "k10temp"; temp1_input/temp1_label "Tctl";
 * temp3..temp(2+n_tccd) "Tccd1"...; no temp2 (Tdie is desktop-only), no
 * max, crit or crit_hyst (hidden on Zen).
 *
 * Simulator's choices: Tctl is the hottest core of the socket, Tccd i the
 * hottest core of CCD i, the socket's cores split evenly over its CCDs
 * (the driver reports the real temperature on 17h+, §2.1, so no offset).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim_machine.h"

#define MILLI 1000

/* The hottest core with index in [first, last) of socket at t. */
static int64_t hottest(const struct sim *s, int socket, int first, int last, int64_t t)
{
	int64_t best = INT64_MIN;

	for (int i = first; i < last; i++) {
		int64_t c = sim_timeline_value_at(&s->cores[socket * s->model->n_cores + i].temp, t);

		best = c > best ? c : best;
	}
	return best;
}

/* Channel ch (1 = Tctl, 3.. = Tccd) of socket at t, in °C; -ENOENT for one the device lacks. */
static int channel_celsius(const struct sim *s, int socket, int ch, int64_t t, int64_t *ret)
{
	int n = s->model->n_cores, k = ch - 3;

	if (ch == 1) {
		*ret = hottest(s, socket, 0, n, t);
		return 0;
	}
	if (k < 0 || k >= s->model->n_tccd)
		return -ENOENT;
	*ret = hottest(s, socket, k * n / s->model->n_tccd, (k + 1) * n / s->model->n_tccd, t);
	return 0;
}

/* What snprintf returned, as the read's result: -EINVAL when buf was too small. */
static int fitted(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

int sim_hwmon_read(const struct sim *s, const char *relpath, int64_t t, char *buf, size_t len)
{
	char attr[32], kind[8], tail[2];
	int dev, ch;
	int64_t c;

	if (!(s->model->flags & SIM_F_K10TEMP) ||
	    sscanf(relpath, "hwmon%d/%31s%1s", &dev, attr, tail) != 2 || dev < 0 ||
	    dev >= s->model->n_sockets)
		return -ENOENT;
	if (strcmp(attr, "name") == 0)
		return fitted(snprintf(buf, len, "k10temp\n"), len);
	if (sscanf(attr, "temp%d_%7s", &ch, kind) != 2 || channel_celsius(s, dev, ch, t, &c) < 0)
		return -ENOENT;
	if (strcmp(kind, "input") == 0)
		return fitted(snprintf(buf, len, "%lld\n", (long long)(c * MILLI)), len);
	if (strcmp(kind, "label") != 0)
		return -ENOENT;
	if (ch == 1)
		return fitted(snprintf(buf, len, "Tctl\n"), len);
	return fitted(snprintf(buf, len, "Tccd%d\n", ch - 2), len);
}
