/*
 * What the Nehalem/Westmere uncore collector exposes beyond struct
 * collector_ops: its settings.
 */
#ifndef UNCORED_COL_UNCORE_H
#define UNCORED_COL_UNCORE_H

#include <stdbool.h>

#include "conf.h"

/*
 * The [uncore] section (uncored.conf(5)), kept in the collector's block of
 * struct conf (collector_settings()); the tests write it there directly.
 */
struct uncore_settings {
	bool enabled;
	bool default_events;
	enum conf_conflict_policy on_conflict;
	enum conf_engine engine;          /* used from start-up on; a reload keeps the running one */
	int n_events;
	struct conf_event events[CONF_MAX_EVENTS];
};

#endif
