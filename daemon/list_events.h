/*
 * --list-events: what each registered collector can count on this CPU, on
 * --model, or on a simulated machine, printed one block per collector.
 */
#ifndef UNCORED_LIST_EVENTS_H
#define UNCORED_LIST_EVENTS_H

#include "cli.h"

/* Print the events; returns the exit status. */
int list_events(const struct options *o, const struct conf *conf);

#endif
