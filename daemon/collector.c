/*
 * The generic side of a collector: setting up its shared context, running
 * start/sample/stop in the right states, and copying its status into each
 * snapshot.  What a collector reads and how it claims hardware is the
 * collector's own business (col_*.c); this file knows nothing of it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"

/* Where the configuration says whether each collector is on. */
static const size_t enabled_offset[SNAPSHOT_COLLECTOR_COUNT] = {
	[SNAPSHOT_COLLECTOR_UNCORE] = offsetof(struct conf, uncore_enabled),
	[SNAPSHOT_COLLECTOR_THERMAL] = offsetof(struct conf, thermal_enabled),
	[SNAPSHOT_COLLECTOR_CORE] = offsetof(struct conf, core_enabled),
};

static bool is_enabled(const struct collector *c)
{
	const char *base = (const char *)c->conf;

	if (!c->conf || (unsigned)c->ops->id >= SNAPSHOT_COLLECTOR_COUNT)
		return false;
	return *(const bool *)(base + enabled_offset[c->ops->id]);
}

int collector_start(struct collector *c, const struct collector_ops *ops, struct hw *hw,
		    const struct cpu_info *info, const struct cpu_topology *topo,
		    const struct conf *conf)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->hw = hw;
	c->info = info;
	c->topo = topo;
	c->conf = conf;
	err = ops->start(c);
	c->up = err == 0;
	c->started = err == 0;
	if (err && !c->reason[0])
		snprintf(c->reason, sizeof(c->reason), "%s collector failed to start: %s",
			 ops->name, strerror(-err));
	return err;
}

void collector_sample(struct collector *c, struct snapshot *s)
{
	struct snapshot_collector *sc;

	if (!c->ops || (unsigned)c->ops->id >= SNAPSHOT_COLLECTOR_COUNT)
		return;
	if (c->started)
		c->ops->sample(c, s);
	sc = &s->collectors[c->ops->id];
	sc->name = c->ops->name;
	sc->enabled = is_enabled(c);
	sc->up = c->up;
	snprintf(sc->reason, sizeof(sc->reason), "%s", c->reason);
	sc->errors = c->errors;
}

void collector_stop(struct collector *c)
{
	if (!c->ops)
		return;
	c->ops->stop(c);
	c->started = false;
	c->up = false;
	c->ops = NULL;
}

void collector_note(struct collector *c, const char *fmt, ...)
{
	size_t used = strlen(c->reason);
	va_list ap;

	if (used && used + 2 < sizeof(c->reason)) {
		memcpy(c->reason + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= sizeof(c->reason))
		return;
	va_start(ap, fmt);
	vsnprintf(c->reason + used, sizeof(c->reason) - used, fmt, ap);
	va_end(ap);
}
