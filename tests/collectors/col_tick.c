/*
 * A collector for tests only, never built into the daemon: it reads no
 * hardware and shows that a collector is one file and one registration
 * line.  Its [tick] section has "enabled" and "refuse" (start fails with a
 * reason) and "degrade" (runs with a degradation that clears when the key
 * is turned off by a reload).  --list-events shows one event, "ticks".
 * Each sample adds one counter per socket, uncored_tick_samples_total:
 * samples since the collector started, so a reload that restarts it
 * shows the generic carry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"

struct tick_settings {
	bool enabled;
	bool refuse;
	bool degrade;
};

struct tick_state {
	uint64_t ticks;
};

static const struct conf_key tick_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct tick_settings, enabled), .def = "yes" },
	{ "refuse", CONF_KIND_BOOL, CONF_SETTING(struct tick_settings, refuse), .def = "no" },
	{ "degrade", CONF_KIND_BOOL, CONF_SETTING(struct tick_settings, degrade), .def = "no" },
};

static const struct conf_section tick_section = {
	.name = "tick", .keys = tick_keys, .n_keys = sizeof(tick_keys) / sizeof(tick_keys[0]),
	.settings_size = sizeof(struct tick_settings),
};

static const struct metric_family tick_samples = {
	.name = "uncored_tick_samples_total",
	.help = "Samples the tick test collector took.",
	.type = METRIC_COUNTER,
	.unit = "",
	.scope = METRIC_SCOPE_SOCKET,
	.kind = METRIC_UINT,
	.json_key = "tick_samples",
	.table_title = "tick samples",
};

static const struct metric_family *const tick_families[] = { &tick_samples };

extern const struct collector_ops tick_collector_ops;

static const struct tick_settings *settings(const struct conf *conf)
{
	return collector_settings(conf, &tick_collector_ops);
}

static int tick_start(struct collector *c)
{
	const struct tick_settings *ts = settings(c->conf);

	if (!ts->enabled) {
		collector_refuse(c, "disabled in the configuration");
		return -ENOTSUP;
	}
	/* A failure, not a missing facility (-ENOTSUP): the collector is down, not "not applicable". */
	if (ts->refuse) {
		collector_refuse(c, "refused by its configuration");
		return -EIO;
	}
	c->state = calloc(1, sizeof(struct tick_state));
	if (!c->state)
		return -ENOMEM;
	if (ts->degrade)
		collector_degrade(c, "degrade", "degraded by its configuration");
	return 0;
}

static void tick_sample(struct collector *c, struct snapshot *s)
{
	struct tick_state *st = c->state;

	st->ticks++;
	for (int i = 0; i < c->topo->n_sockets; i++)
		snapshot_add_sample(s, &tick_samples, c->topo->sockets[i].socket, NULL, st->ticks, 0);
}

static void tick_stop(struct collector *c)
{
	free(c->state);
	c->state = NULL;
}

static void tick_list_events(const struct cpu_info *info, struct strbuf *out)
{
	(void)info;
	strbuf_append(out, "tick (a test collector, one count per sample):\n");
	strbuf_printf(out, "  %-36s %s\n", "ticks", "one per sample");
}

const struct collector_ops tick_collector_ops = {
	.name = "tick",
	.start = tick_start,
	.sample = tick_sample,
	.stop = tick_stop,
	.families = tick_families,
	.n_families = sizeof(tick_families) / sizeof(tick_families[0]),
	.conf_section = &tick_section,
	.list_events = tick_list_events,
};

COLLECTOR_REGISTER(tick_collector_ops)
