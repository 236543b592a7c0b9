/*
 * The daemon's own metric families.  See self_metrics.h.
 */
#include <stdio.h>

#include "self_metrics.h"
#include "snapshot.h"

static const struct metric_family build_info = {
	.name = "uncored_build_info", .help = "Build identity of uncored; always 1.",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "version",
};

static const struct metric_family cpu_info = {
	.name = "uncored_cpu_info", .help = "Detected CPU per socket; always 1.",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "vendor,family,model,microarch",
};

/* Only collectors that should work here: one that does not apply is never "down". */
static const struct metric_family collector_up = {
	.name = "uncored_collector_up",
	.help = "Whether an enabled collector that applies to this CPU is working (1) or not (0).",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "collector",
};

static const struct metric_family collector_applicable = {
	.name = "uncored_collector_applicable",
	.help = "Whether this machine has an enabled collector's facility (1) or not (0, then the "
		"collector is not in uncored_collector_up).",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "collector",
};

static const struct metric_family collector_units = {
	.name = "uncored_collector_units",
	.help = "The units a collector counts on (core: online CPUs, uncore: sockets, pcu: PCU "
		"boxes, imc: memory channels), by whether "
		"it counts there (counting) or not (not_counting); a collector is up only when none "
		"is not_counting, partial when some are.",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "collector,state",
};

static const struct metric_family samples_total = {
	.name = "uncored_samples_total", .help = "Samples taken since start.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
};

static const struct metric_family sample_errors = {
	.name = "uncored_sample_errors_total", .help = "Failed hardware reads per collector.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "collector",
};

static const struct metric_family sample_duration = {
	.name = "uncored_last_sample_duration_seconds", .help = "Time the last sample took.",
	.type = METRIC_GAUGE, .unit = "seconds", .scope = METRIC_SCOPE_DAEMON,
	.kind = METRIC_DOUBLE,
};

static const struct metric_family cpu_hotplug = {
	.name = "uncored_cpu_hotplug_total",
	.help = "CPUs seen going offline or coming online since start.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "event",
};

static const struct metric_family journal_up = {
	.name = "uncored_journal_up",
	.help = "Whether every register change is journaled to the state file first (1) or not "
		"(0: state_file = none, or no register is programmed since the file could not be "
		"set up).",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
};

const struct metric_family *const self_metric_families[] = {
	&build_info, &cpu_info, &collector_up, &collector_applicable, &collector_units, &samples_total,
	&sample_errors, &sample_duration, &cpu_hotplug, &journal_up,
};

const size_t self_metric_n_families =
	sizeof(self_metric_families) / sizeof(self_metric_families[0]);

/* A collector's units by state, for one that reports units. */
static void add_units(struct snapshot *s, const struct snapshot_collector *c)
{
	char label[96];

	if (!c->units || !c->name || !snapshot_collector_applies(c))
		return;
	snprintf(label, sizeof(label), "%s" METRIC_LABEL_SEP "counting", c->name);
	snapshot_add_sample(s, &collector_units, 0, label, c->units_counting, 0);
	snprintf(label, sizeof(label), "%s" METRIC_LABEL_SEP "not_counting", c->name);
	snapshot_add_sample(s, &collector_units, 0, label, c->units - c->units_counting, 0);
}

void self_metrics_add(struct snapshot *s)
{
	const struct snapshot_cpu_id *id = &s->cpu_id;
	char cpu[128];

	snapshot_add_sample(s, &build_info, 0, s->version, 1, 0);
	snprintf(cpu, sizeof(cpu), "%s" METRIC_LABEL_SEP "%u" METRIC_LABEL_SEP "%u"
		 METRIC_LABEL_SEP "%s", id->vendor, id->family, id->model, id->microarch);
	for (int i = 0; i < s->n_sockets; i++)
		snapshot_add_sample(s, &cpu_info, s->sockets[i].socket, cpu, 1, 0);
	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];

		if (snapshot_collector_applies(c) && c->name)
			snapshot_add_sample(s, &collector_up, 0, c->name, c->up ? 1 : 0, 0);
	}
	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];

		if (c->enabled && c->name)
			snapshot_add_sample(s, &collector_applicable, 0, c->name,
					    c->not_applicable ? 0 : 1, 0);
	}
	for (int i = 0; i < s->n_collectors; i++)
		add_units(s, &s->collectors[i]);
	snapshot_add_sample(s, &samples_total, 0, NULL, s->samples, 0);
	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];

		if (c->enabled && c->name)
			snapshot_add_sample(s, &sample_errors, 0, c->name, c->errors, 0);
	}
	snapshot_add_sample(s, &sample_duration, 0, NULL, 0, s->last_sample_duration_s);
	snapshot_add_sample(s, &cpu_hotplug, 0, "offline", s->cpus_went_offline, 0);
	snapshot_add_sample(s, &cpu_hotplug, 0, "online", s->cpus_came_online, 0);
	if (s->journal)
		snapshot_add_sample(s, &journal_up, 0, NULL, s->journal == SNAPSHOT_JOURNAL_UP, 0);
}
