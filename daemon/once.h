/*
 * --once: take two samples one interval apart, restore every register,
 * and print the interval as a table, JSON or Prometheus text.
 */
#ifndef UNCORED_ONCE_H
#define UNCORED_ONCE_H

#include "cli.h"

/* Run --once with o and conf; returns the exit status. */
int run_once(const struct options *o, const struct conf *conf);

#endif
