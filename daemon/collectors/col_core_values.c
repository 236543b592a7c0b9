/*
 * The core-PMC collector's values (col_core.c counts): its families, in
 * /metrics order for each setting of per, the values of each CPU read this
 * sample, and the sums over the logical CPUs of a core or a socket.
 */
#include <stdio.h>
#include <string.h>

#include "col_core_state.h"

/*
 * The families, in /metrics order, for each setting of per.  In JSON the
 * per-CPU ones are fields of the cpu objects (SPEC §5a): the fixed
 * counters always (null when not counted), the rest while the CPU is
 * counted; the sums are fields of the core or socket objects.
 */
static const struct metric_family cpu_instructions = {
	.name = "uncored_core_instructions_total",
	.help = "Instructions retired (Intel: fixed counter 0; AMD: event 0xC0).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.signal = METRIC_SIGNAL_INSTRUCTIONS,
	.json_key = "instructions", .json_order = 10, .json_null = true,
};

static const struct metric_family cpu_cycles = {
	.name = "uncored_core_cycles_total",
	.help = "Unhalted core cycles (Intel: fixed counter 1; AMD: event 0x76).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.signal = METRIC_SIGNAL_CYCLES,
	.json_key = "cycles", .json_order = 20, .json_null = true,
};

static const struct metric_family cpu_ref_cycles = {
	.name = "uncored_core_ref_cycles_total",
	.help = "Unhalted reference cycles (Intel: fixed counter 2; AMD Zen 4 and later: "
		"event 0x120 umask 0x01, absent on Zen 2/3).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.json_key = "ref_cycles", .json_order = 30, .json_null = true,
};

static const struct metric_family cpu_events = {
	.name = "uncored_core_events_total", .help = "Programmable core PMU event counts per CPU.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.label = "event", .signal = METRIC_SIGNAL_EVENT_COUNTS,
	.json_key = "events", .json_order = 40,
};

/* In the JSON snapshot only: why each event that is not counted is not. */
static const struct metric_family cpu_unavailable = {
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_TEXT,
	.label = "event", .json_key = "unavailable", .json_order = 50,
};

/* The CPU's conflicts in JSON; /metrics has them in collector_pmu_conflicts. */
static const struct metric_family cpu_conflicts_json = {
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.json_key = "conflicts", .json_order = 60,
};

/*
 * The perf engine's multiplexing ratio (engine.h): the smallest, over the
 * CPU's events, of time running over time enabled in the last interval.
 * 1 when nothing was multiplexed; below 1 the kernel took turns with
 * other events and the counts are estimates scaled by enabled / running.
 * With per = core or socket, the smallest over the place's CPUs.
 */
#define RATIO_FAMILY(p, scope_, events, order)                                                  \
	static const struct metric_family p##_multiplexing_ratio = {                           \
		.name = "uncored_core_multiplexing_ratio",                                     \
		.help = "Perf engine: the smallest fraction of the last interval that one of " \
			events " was on a counter (time running over time enabled); below 1 "  \
			"the kernel multiplexed them and their counts are scaled by its "      \
			"inverse.",                                                            \
		.type = METRIC_GAUGE, .unit = "ratio", .scope = scope_, .kind = METRIC_DOUBLE, \
		.json_key = "multiplexing_ratio", .json_order = (order),                       \
	};

RATIO_FAMILY(cpu, METRIC_SCOPE_CPU, "the CPU's core events", 70)
RATIO_FAMILY(core, METRIC_SCOPE_CORE, "the core events of the core's logical CPUs", 105)
RATIO_FAMILY(socket, METRIC_SCOPE_SOCKET, "the core events of the socket's logical CPUs",
	     METRIC_JSON_SOCKET_FIXED + 305)

static const struct metric_family *const ratio_families[3] = {
	[CORE_PER_CPU] = &cpu_multiplexing_ratio,
	[CORE_PER_CORE] = &core_multiplexing_ratio,
	[CORE_PER_SOCKET] = &socket_multiplexing_ratio,
};

/* The sums of per = core (scope core) and per = socket (scope socket). */
#define SUM_FAMILIES(p, scope_, what, order)                                                   \
	static const struct metric_family p##_instructions = {                                 \
		.name = "uncored_core_instructions_total",                                     \
		.help = "Instructions retired (Intel: fixed counter 0; AMD: event 0xC0), summed " \
			"over the " what ".",                                                  \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.signal = METRIC_SIGNAL_INSTRUCTIONS,                                           \
		.json_key = "instructions", .json_order = (order),                              \
	};                                                                                      \
	static const struct metric_family p##_cycles = {                                       \
		.name = "uncored_core_cycles_total",                                           \
		.help = "Unhalted core cycles (Intel: fixed counter 1; AMD: event 0x76), summed " \
			"over the " what ".",                                                  \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.signal = METRIC_SIGNAL_CYCLES,                                                 \
		.json_key = "cycles", .json_order = (order) + 1,                                \
	};                                                                                      \
	static const struct metric_family p##_ref_cycles = {                                   \
		.name = "uncored_core_ref_cycles_total",                                       \
		.help = "Unhalted reference cycles (Intel: fixed counter 2; AMD Zen 4 and later: " \
			"event 0x120 umask 0x01), summed over the " what ".",                  \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.json_key = "ref_cycles", .json_order = (order) + 2,                            \
	};                                                                                      \
	static const struct metric_family p##_events = {                                       \
		.name = "uncored_core_events_total",                                           \
		.help = "Programmable core PMU event counts, summed over the " what ".",       \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.label = "event", .signal = METRIC_SIGNAL_EVENT_COUNTS,                         \
		.json_key = "events", .json_order = (order) + 3,                                \
	};                                                                                      \
	static const struct metric_family p##_conflicts_json = {                               \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.json_key = "conflicts", .json_order = (order) + 4,                             \
	};

SUM_FAMILIES(core, METRIC_SCOPE_CORE, "logical CPUs of the core", 100)
SUM_FAMILIES(socket, METRIC_SCOPE_SOCKET, "logical CPUs of the socket",
	     METRIC_JSON_SOCKET_FIXED + 300)

const struct metric_family *const core_families[CORE_N_FAMILIES] = {
	&cpu_multiplexing_ratio, &core_multiplexing_ratio, &socket_multiplexing_ratio,
	&cpu_instructions, &core_instructions, &socket_instructions,
	&cpu_cycles, &core_cycles, &socket_cycles,
	&cpu_ref_cycles, &core_ref_cycles, &socket_ref_cycles,
	&cpu_events, &core_events, &socket_events,
	&collector_pmu_conflicts, &collector_pmu_resets,
	&cpu_unavailable, &cpu_conflicts_json, &core_conflicts_json, &socket_conflicts_json,
};

/* Each setting's families: the fixed counters, the events, the JSON conflicts. */
static const struct metric_family *const per_families[3][N_FIXED + 2] = {
	[CORE_PER_CPU] = { &cpu_instructions, &cpu_cycles, &cpu_ref_cycles, &cpu_events,
			   &cpu_conflicts_json },
	[CORE_PER_CORE] = { &core_instructions, &core_cycles, &core_ref_cycles, &core_events,
			    &core_conflicts_json },
	[CORE_PER_SOCKET] = { &socket_instructions, &socket_cycles, &socket_ref_cycles,
			      &socket_events, &socket_conflicts_json },
};

static const struct metric_family *const *const fixed_families = per_families[CORE_PER_CPU];


const struct engine_reading *core_reading_of(const struct core_cpu *cc, int slot)
{
	if (slot >= (int)cc->n_fixed && slot < N_FIXED)
		return NULL;
	return slot >= 0 && cc->has_read ? &cc->readings[slot] : NULL;
}

/* Why event k does not count on cc, as the snapshot says it. */
static const char *event_reason(const struct core_state *st, const struct core_cpu *cc, int k,
				char *buf, size_t len)
{
	const struct engine_reading *r = core_reading_of(cc, cc->slot[k]);

	if (cc->slot[k] < 0) {
		snprintf(buf, len, "architectural event not available on this CPU (CPUID.0AH:EBX bit %u)",
			 st->events[k]->arch_event - 1);
		return buf;
	}
	if (!r)
		return "counter not read this sample";
	if (r->state == ENGINE_YIELDED)
		snprintf(buf, len, "yielded: %s", r->reason ? r->reason : "another agent");
	else
		return engine_reading_reason(&st->engine, r, buf, len);
	return buf;
}

/* The CPU's counters' conflicts and resets since open, summed. */
static void cpu_losses(const struct core_cpu *cc, uint64_t *conflicts, uint64_t *resets)
{
	*conflicts = *resets = 0;
	for (size_t i = 0; cc->has_read && i < cc->n_group; i++) {
		*conflicts += cc->readings[i].conflicts;
		*resets += cc->readings[i].resets;
	}
}

/*
 * cc's multiplexing ratio into *ratio when the perf engine read it this
 * sample (the msr engine never multiplexes).  Returns whether it did.
 */
static bool cpu_ratio(const struct collector *c, const struct core_cpu *cc, double *ratio)
{
	double r = 2.0;

	if (c->engine != ENGINE_PERF || !cc->is_fresh)
		return false;
	for (size_t i = 0; i < cc->n_group; i++)
		if (cc->readings[i].enabled_ns > 0 && engine_reading_ratio(&cc->readings[i]) < r)
			r = engine_reading_ratio(&cc->readings[i]);
	if (r > 1.0)
		return false;
	*ratio = r;
	return true;
}

/* Add cc's multiplexing ratio to s when the perf engine read it this sample. */
static void add_ratio(const struct collector *c, const struct core_cpu *cc, struct snapshot *s)
{
	double ratio;

	if (cpu_ratio(c, cc, &ratio))
		snapshot_add_sample(s, &cpu_multiplexing_ratio, cc->cpu, NULL, 0, ratio);
}

/* The values of a CPU read this sample. */
static void fill_cpu(struct collector *c, struct snapshot *s, const struct core_state *st,
		     const struct core_cpu *cc)
{
	uint64_t conflicts, resets;

	cpu_losses(cc, &conflicts, &resets);
	if (!cc->is_fresh)
		return;
	for (unsigned i = 0; i < N_FIXED; i++) {
		const struct engine_reading *r = core_reading_of(cc, (int)i);

		if (r && r->state == ENGINE_COUNTING)
			snapshot_add_sample(s, fixed_families[i], cc->cpu, NULL, r->total, 0);
	}
	/* The objects exist, empty or not. */
	snapshot_add_sample(s, &cpu_events, cc->cpu, NULL, 0, 0);
	snapshot_add_sample(s, &cpu_unavailable, cc->cpu, NULL, 0, 0);
	for (int k = 0; k < st->n_events; k++) {
		const struct engine_reading *r = core_reading_of(cc, cc->slot[k]);
		char buf[128];

		if (r && r->state == ENGINE_COUNTING)
			snapshot_add_sample(s, &cpu_events, cc->cpu, st->events[k]->name, r->total, 0);
		else
			snapshot_add_text(s, &cpu_unavailable, cc->cpu, st->events[k]->name,
					  event_reason(st, cc, k, buf, sizeof(buf)));
	}
	collector_add_resets(c, s, -1, -1, cc->cpu, resets);
	/* A count that cannot change on this engine is no series. */
	if (!st->engine.ops->has_conflicts)
		return;
	collector_add_conflicts(c, s, -1, -1, cc->cpu, conflicts);
	snapshot_add_sample(s, &cpu_conflicts_json, cc->cpu, NULL, conflicts, 0);
}

/* Totals summed over the CPUs of one place (per = core or socket). */
struct core_sum {
	uint64_t total[N_FIXED + CORE_MAX_EVENTS];   /* the fixed events, then st->events */
	bool counts[N_FIXED + CORE_MAX_EVENTS];      /* some CPU of the place counts it now */
	uint64_t conflicts, resets;
	bool any;                                    /* some CPU of the place has been read */
	bool has_ratio;                              /* some CPU's ratio was read this sample */
	double ratio;                                /* the smallest of them */
};

static const struct core_cpu *find_cpu(const struct core_state *st, int cpu)
{
	if (cpu >= 0 && cpu < st->n_cpus && st->cpus[cpu].cpu == cpu)
		return &st->cpus[cpu];
	for (int i = 0; i < st->n_cpus; i++)
		if (st->cpus[i].cpu == cpu)
			return &st->cpus[i];
	return NULL;
}

/*
 * Add the totals of cpus[0..n) into sum: each CPU's last read, held while
 * it is not read; and the smallest multiplexing ratio read this sample.
 */
static void sum_cpus(const struct collector *c, const struct core_state *st, const int *cpus,
		     int n, struct core_sum *sum)
{
	for (int i = 0; i < n; i++) {
		const struct core_cpu *cc = find_cpu(st, cpus[i]);
		double ratio;

		if (!cc || !cc->has_read)
			continue;
		sum->any = true;
		if (cpu_ratio(c, cc, &ratio) && (!sum->has_ratio || ratio < sum->ratio)) {
			sum->ratio = ratio;
			sum->has_ratio = true;
		}
		uint64_t conflicts, resets;

		cpu_losses(cc, &conflicts, &resets);
		sum->conflicts += conflicts;
		sum->resets += resets;
		for (int k = 0; k < N_FIXED + st->n_events; k++) {
			const struct engine_reading *r =
				core_reading_of(cc, k < N_FIXED ? k : cc->slot[k - N_FIXED]);

			if (!r)
				continue;
			sum->total[k] += r->total;
			sum->counts[k] |= r->state == ENGINE_COUNTING;
		}
	}
}

/*
 * The sums of one place: where by the families' scope (a core's first CPU,
 * a socket id), socket and core (-1 for a socket) for the conflicts labels.
 */
static void fill_sum(struct collector *c, struct snapshot *s, const struct core_state *st,
		     enum core_per per, int where, int socket, int core, const struct core_sum *sum)
{
	const struct metric_family *const *fam = per_families[per];

	if (!sum->any)
		return;
	if (sum->has_ratio)
		snapshot_add_sample(s, ratio_families[per], where, NULL, 0, sum->ratio);
	for (int k = 0; k < N_FIXED; k++)
		if (sum->counts[k])
			snapshot_add_sample(s, fam[k], where, NULL, sum->total[k], 0);
	snapshot_add_sample(s, fam[N_FIXED], where, NULL, 0, 0);
	for (int k = 0; k < st->n_events; k++)
		if (sum->counts[N_FIXED + k])
			snapshot_add_sample(s, fam[N_FIXED], where, st->events[k]->name,
					    sum->total[N_FIXED + k], 0);
	collector_add_resets(c, s, socket, core, -1, sum->resets);
	if (!st->engine.ops->has_conflicts)
		return;
	collector_add_conflicts(c, s, socket, core, -1, sum->conflicts);
	snapshot_add_sample(s, fam[N_FIXED + 1], where, NULL, sum->conflicts, 0);
}

/* The sums per core or per socket (per_families). */
void core_fill_sums(struct collector *c, struct snapshot *s, const struct core_state *st,
		      enum core_per per)
{
	for (int i = 0; i < c->topo->n_sockets; i++) {
		const struct cpu_socket *cs = &c->topo->sockets[i];
		struct core_sum sum;

		if (per == CORE_PER_SOCKET) {
			memset(&sum, 0, sizeof(sum));
			sum_cpus(c, st, cs->cpus, cs->n_cpus, &sum);
			fill_sum(c, s, st, per, cs->socket, cs->socket, -1, &sum);
			continue;
		}
		for (int j = 0; j < cs->n_cores; j++) {
			const struct cpu_core *cr = &cs->cores[j];

			if (cr->n_cpus <= 0)
				continue;
			memset(&sum, 0, sizeof(sum));
			sum_cpus(c, st, cr->cpus, cr->n_cpus, &sum);
			fill_sum(c, s, st, per, cr->cpus[0], cs->socket, cr->core, &sum);
		}
	}
}

void core_fill_cpu(struct collector *c, struct snapshot *s, const struct core_state *st,
		   const struct core_cpu *cc)
{
	fill_cpu(c, s, st, cc);
	add_ratio(c, cc, s);
}
