/*
 * --once: take two samples one interval apart, restore every register,
 * and print the interval as a table, JSON or Prometheus text.
 * On the simulator the interval is stepped on the simulated clock, not slept.
 */
#ifndef UNCORED_ONCE_H
#define UNCORED_ONCE_H

#include "cli.h"

/* Run --once with o and conf; returns the exit status. */
int run_once(const struct options *o, const struct conf *conf);

#endif
