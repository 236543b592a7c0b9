/*
 * The core-PMC collector: per logical CPU, the three fixed-counter events
 * (instructions, core cycles, reference cycles) and the configured
 * programmable events.  It says what to count on each CPU; the counter
 * engine (engine.h, the msr engine) chooses the counters, applies the
 * ownership rule (a counter is free when its own enable bits are clear)
 * and the conflict policy, and puts every register back on stop.  An
 * event whose fixed counter another agent holds (the NMI watchdog on fixed
 * counter 1) moves to a free GP counter.  Counter widths for the wrap
 * check come from each CPU's CPUID leaf 0xA.  It does not know which
 * events are interesting; the configuration and event.c do.
 *
 * Offline CPUs: a CPU that was offline at start is opened when it comes
 * online; an open CPU whose read says it is offline is skipped without
 * counting an error, its totals kept.
 *
 * [core] per = core or socket exports the sums over the logical CPUs of a
 * core or a socket instead of one series per CPU (fewer series for a
 * fleet to store).  A sum holds each CPU's last total while the CPU is
 * offline or its counter yielded, so it never goes down, and is there
 * while any CPU of the place counts the event.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "col_core.h"
#include "col_engine.h"
#include "counter.h"
#include "engine_msr.h"
#include "event.h"
#include "ledger.h"

extern const struct collector_ops core_collector_ops;

/* The [core] section, in the collector's block of struct conf. */
static const struct core_settings *settings(const struct conf *conf)
{
	return collector_settings(conf, &core_collector_ops);
}

#define N_FIXED 3                 /* instructions, cycles, ref cycles */
#define CORE_MAX_EVENTS 16        /* programmable events, defaults included */

enum cpu_state {
	CPU_PENDING,       /* not opened yet (offline at start) */
	CPU_OPEN,
	CPU_UNUSABLE,      /* cannot be used; noted in the collector's status */
};

struct core_cpu {
	int cpu;
	enum cpu_state state;
	bool is_fresh;             /* read this sample */
	bool has_read;             /* readings hold a read */
	struct cpu_perfmon pm;
	struct engine_group *group;
	size_t n_group;            /* the fixed events, then the events that exist here */
	int slot[CORE_MAX_EVENTS];   /* event k's place in the group, -1 when not asked */
	struct engine_event group_events[N_FIXED + CORE_MAX_EVENTS];
	struct engine_reading readings[N_FIXED + CORE_MAX_EVENTS];
};

struct core_state {
	struct engine engine;
	int n_events;
	const struct event_spec *events[CORE_MAX_EVENTS];
	int n_cpus;
	struct core_cpu *cpus;
};

enum core_per {
	CORE_PER_CPU,
	CORE_PER_CORE,
	CORE_PER_SOCKET,
};

static const char *const core_per_names[] = { "cpu", "core", "socket", NULL };

/*
 * The families, in /metrics order, for each setting of per.  In JSON the
 * per-CPU ones are fields of the cpu objects (SPEC §5a): the fixed
 * counters always (null when not counted), the rest while the CPU is
 * counted; the sums are fields of the core or socket objects.
 */
static const struct metric_family cpu_instructions = {
	.name = "uncored_core_instructions_total",
	.help = "Instructions retired (fixed counter 0).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.signal = METRIC_SIGNAL_INSTRUCTIONS,
	.json_key = "instructions", .json_order = 10, .json_null = true,
};

static const struct metric_family cpu_cycles = {
	.name = "uncored_core_cycles_total", .help = "Unhalted core cycles (fixed counter 1).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CPU, .kind = METRIC_UINT,
	.signal = METRIC_SIGNAL_CYCLES,
	.json_key = "cycles", .json_order = 20, .json_null = true,
};

static const struct metric_family cpu_ref_cycles = {
	.name = "uncored_core_ref_cycles_total",
	.help = "Unhalted reference cycles (fixed counter 2).",
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
static const struct metric_family cpu_multiplexing_ratio = {
	.name = "uncored_core_multiplexing_ratio",
	.help = "Perf engine: the smallest fraction of the last interval that one of the CPU's "
		"core events was on a counter (time running over time enabled); below 1 the "
		"kernel multiplexed them and their counts are scaled by its inverse.",
	.type = METRIC_GAUGE, .unit = "ratio", .scope = METRIC_SCOPE_CPU, .kind = METRIC_DOUBLE,
	.json_key = "multiplexing_ratio", .json_order = 70,
};

#define RATIO_FAMILY(p, scope_, what, order)                                                    \
	static const struct metric_family p##_multiplexing_ratio = {                           \
		.name = "uncored_core_multiplexing_ratio",                                     \
		.help = "Perf engine: the smallest fraction of the last interval that one "    \
			"core event of one of the " what " was on a counter (time running "    \
			"over time enabled); below 1 the kernel multiplexed them and their "   \
			"counts are scaled by its inverse.",                                   \
		.type = METRIC_GAUGE, .unit = "ratio", .scope = scope_, .kind = METRIC_DOUBLE, \
		.json_key = "multiplexing_ratio", .json_order = (order),                       \
	};

RATIO_FAMILY(core, METRIC_SCOPE_CORE, "logical CPUs of the core", 105)
RATIO_FAMILY(socket, METRIC_SCOPE_SOCKET, "logical CPUs of the socket",
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
		.help = "Instructions retired (fixed counter 0), summed over the " what ".",   \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.signal = METRIC_SIGNAL_INSTRUCTIONS,                                           \
		.json_key = "instructions", .json_order = (order),                              \
	};                                                                                      \
	static const struct metric_family p##_cycles = {                                       \
		.name = "uncored_core_cycles_total",                                           \
		.help = "Unhalted core cycles (fixed counter 1), summed over the " what ".",   \
		.type = METRIC_COUNTER, .unit = "", .scope = scope_, .kind = METRIC_UINT,      \
		.signal = METRIC_SIGNAL_CYCLES,                                                 \
		.json_key = "cycles", .json_order = (order) + 1,                                \
	};                                                                                      \
	static const struct metric_family p##_ref_cycles = {                                   \
		.name = "uncored_core_ref_cycles_total",                                       \
		.help = "Unhalted reference cycles (fixed counter 2), summed over the " what ".", \
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

static const struct metric_family *const core_families[] = {
	&cpu_multiplexing_ratio, &core_multiplexing_ratio, &socket_multiplexing_ratio,
	&cpu_instructions, &core_instructions, &socket_instructions,
	&cpu_cycles, &core_cycles, &socket_cycles,
	&cpu_ref_cycles, &core_ref_cycles, &socket_ref_cycles,
	&cpu_events, &core_events, &socket_events,
	&collector_pmu_conflicts,
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

/* The fixed-counter events in the core PMU's encoding (hardware.md §5.3). */
static const struct engine_event fixed_events[N_FIXED] = {
	{ .name = "instructions", .code = 0xc0, .umask = 0x00 },
	{ .name = "cycles", .code = 0x3c, .umask = 0x00 },
	{ .name = "ref cycles", .code = 0x3c, .umask = 0x01 },
};

static unsigned n_fixed_of(const struct cpu_perfmon *pm)
{
	return pm->n_fixed < N_FIXED ? pm->n_fixed : N_FIXED;
}

static bool find_event(const struct core_state *st, const char *name)
{
	for (int k = 0; k < st->n_events; k++)
		if (strcmp(st->events[k]->name, name) == 0)
			return true;
	return false;
}

/* The defaults (when configured) then the configured events. */
static int collect_events(struct collector *c, struct core_state *st)
{
	const struct event_spec *const *defaults = NULL;
	size_t n_defaults = 0;
	size_t total;

	if (settings(c->conf)->default_events)
		defaults = event_defaults(EVENT_PMU_CORE, &n_defaults);
	total = n_defaults + (size_t)settings(c->conf)->n_events;
	if (total > CORE_MAX_EVENTS) {
		collector_refuse(c,
				 "%zu core events configured (defaults included), at most %d can be counted",
				 total, CORE_MAX_EVENTS);
		return -EINVAL;
	}
	for (size_t i = 0; i < n_defaults; i++)
		st->events[st->n_events++] = defaults[i];
	for (int i = 0; i < settings(c->conf)->n_events; i++) {
		const struct event_spec *ev = &settings(c->conf)->events[i].spec;

		/* One name is one metric series: a default configured again counts once. */
		if (find_event(st, ev->name)) {
			collector_note(c, "core event '%s' listed twice, counted once", ev->name);
			continue;
		}
		st->events[st->n_events++] = ev;
	}
	return 0;
}

/*
 * Refuse an interval in which a counter of this CPU could wrap more than
 * a quarter of the way round at CORE_MAX_EVENT_RATE_HZ.
 */
static int check_wrap(struct collector *c, const struct core_state *st,
		      const struct cpu_perfmon *pm, char *why, size_t whylen)
{
	unsigned widths[2] = { 0, 0 };
	double period_s;

	if (n_fixed_of(pm) > 0)
		widths[0] = pm->fixed_width_bits;
	if (st->n_events > 0 && pm->n_gp > 0)
		widths[1] = pm->gp_width_bits;
	for (int i = 0; i < 2; i++) {
		if (widths[i] == 0)
			continue;
		period_s = counter_wrap_period_s(widths[i], CORE_MAX_EVENT_RATE_HZ);
		if (c->conf->interval_s > period_s / 4) {
			snprintf(why, whylen,
				 "interval %g s is too long for %u-bit core counters: at %.0e events/s "
				 "they wrap every %.3g s, so the interval must be at most %.3g s",
				 c->conf->interval_s, widths[i], CORE_MAX_EVENT_RATE_HZ, period_s,
				 period_s / 4);
			return -EINVAL;
		}
	}
	return 0;
}

static bool arch_event_missing(const struct cpu_perfmon *pm, const struct event_spec *ev)
{
	unsigned bit;

	if (ev->arch_event == 0)
		return false;
	bit = ev->arch_event - 1;
	return bit >= pm->ebx_length || bit >= 32 || (pm->unavailable & (UINT32_C(1) << bit));
}


/*
 * Why a reading does not count, as the operator reads it: the engine's
 * reason, and for a hardware or state-file error what it was.
 */
static const char *reading_reason(const struct engine_reading *r, char *buf, size_t len)
{
	const char *why = r->reason ? r->reason : "not counted";

	if (r->state != ENGINE_FAILED || !r->err)
		return why;
	snprintf(buf, len, "%s: %s", why,
		 ledger_hint(r->err, strstr(why, "could not be read") ? HW_OP_READ : HW_OP_WRITE));
	return buf;
}

/* Monotonic nanoseconds for the engine's enabled/running times. */
static int64_t mono_ns(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The CPU's list for the engine: the three fixed events, then each configured event it has. */
static void build_group(const struct core_state *st, struct core_cpu *cc)
{
	cc->n_group = 0;
	for (unsigned i = 0; i < N_FIXED; i++)
		cc->group_events[cc->n_group++] = fixed_events[i];
	for (int k = 0; k < st->n_events; k++) {
		const struct event_spec *ev = st->events[k];

		cc->slot[k] = -1;
		if (arch_event_missing(&cc->pm, ev))
			continue;
		cc->slot[k] = (int)cc->n_group;
		/* A configured event is its own series: always a GP counter. */
		cc->group_events[cc->n_group++] = (struct engine_event){
			.name = ev->name, .code = ev->code, .umask = ev->umask, .edge = ev->edge,
			.inv = ev->inv, .cmask = ev->cmask, .gp_only = true };
	}
}

/* Every event failed because writes are refused (lockdown, allow_writes=off). */
static bool all_refused(const struct core_cpu *cc)
{
	for (size_t i = 0; i < cc->n_group; i++)
		if (cc->readings[i].state != ENGINE_FAILED ||
		    (cc->readings[i].err != -EPERM && cc->readings[i].err != -EACCES))
			return false;
	return cc->n_group > 0;
}

/*
 * Open the CPU's group and read it once, so that its first sample already
 * knows what counts.  -ENXIO: the CPU is offline (stays pending).
 */
static int open_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc,
		    char *why, size_t whylen)
{
	int err;

	build_group(st, cc);
	err = engine_open(&st->engine, ENGINE_PMU_CORE, cc->cpu, cc->group_events, cc->n_group,
			  &cc->group, why, whylen);
	if (err < 0)
		return err;
	cc->state = CPU_OPEN;
	err = engine_read(&st->engine, cc->group, cc->readings);
	if (err == 0 && all_refused(cc)) {
		snprintf(why, whylen, "cpu %d: cannot program the core PMU: %s", cc->cpu,
			 hw_hint(cc->readings[0].err, HW_OP_WRITE));
		return cc->readings[0].err;
	}
	cc->has_read = err == 0;
	(void)c;
	return 0;
}

/*
 * CPUID leaf 0xA of the CPU, and the checks that do not touch registers;
 * a refusal is explained in why.
 */
static int prepare_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc,
		       char *why, size_t whylen)
{
	int err;

	err = cpu_perfmon_read(c->hw, cc->cpu, &cc->pm);
	if (err)
		return err;
	if (cc->pm.version < 2) {
		cc->state = CPU_UNUSABLE;
		collector_note(c, "cpu %d: architectural perfmon version %u, version 2 or later needed",
			       cc->cpu, cc->pm.version);
		return 0;
	}
	return check_wrap(c, st, &cc->pm, why, whylen);
}

static void close_all(struct core_state *st, unsigned *ret_failed, int *ret_err)
{
	*ret_failed = 0;
	*ret_err = 0;
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];
		unsigned failed = 0;
		int err;

		if (!cc->group)
			continue;
		err = engine_close(&st->engine, cc->group, &failed);
		cc->group = NULL;
		cc->state = CPU_PENDING;
		*ret_failed += failed;
		if (err && !*ret_err)
			*ret_err = err;
	}
}

static bool note_states(struct collector *c, const struct core_state *st);

static int start_cpus(struct collector *c, struct core_state *st)
{
	char why[COLLECTOR_TEXT_MAX];
	int err;

	/* All checks first: a refused interval must leave every register alone. */
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];

		if (hw_cpu_online(c->hw, cc->cpu) != 1)
			continue;
		err = prepare_cpu(c, st, cc, c->status.why_not, sizeof(c->status.why_not));
		if (err == -ENXIO)
			continue;
		if (err && !c->status.why_not[0])
			collector_refuse(c, "cpu %d: CPUID leaf 0xA: %s",
					 cc->cpu, hw_hint(err, HW_OP_READ));
		if (err)
			return err;
	}
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];

		if (cc->state != CPU_PENDING || cc->pm.version < 2)
			continue;
		why[0] = '\0';
		err = open_cpu(c, st, cc, why, sizeof(why));
		if (err == -ENXIO && hw_cpu_online(c->hw, cc->cpu) != 1)
			continue;
		if (err) {
			collector_refuse(c, "%s", why[0] ? why : hw_hint(err, HW_OP_READ));
			return err;
		}
	}
	note_states(c, st);
	return 0;
}

static void core_free(struct core_state *st)
{
	if (!st)
		return;
	free(st->cpus);
	free(st);
}

static int core_start(struct collector *c)
{
	struct engine_msr_config ecfg = { .hw = c->hw, .now_ns = mono_ns };
	struct core_state *st;
	unsigned failed;
	int err, ignored;

	if (!settings(c->conf)->enabled) {
		collector_refuse(c, "disabled in the configuration");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ecfg.policy = settings(c->conf)->on_conflict == CONF_CONFLICT_RECLAIM ? ENGINE_RECLAIM :
									    ENGINE_YIELD;
	st->cpus = calloc((size_t)(c->topo->n_cpus ? c->topo->n_cpus : 1), sizeof(*st->cpus));
	if (!st->cpus) {
		core_free(st);
		return -ENOMEM;
	}
	err = col_engine_open(c, settings(c->conf)->engine, ENGINE_PMU_CORE,
			      c->ops->conf_section->name, &ecfg, &st->engine);
	if (err) {
		core_free(st);
		return err;
	}
	st->n_cpus = c->topo->n_cpus;
	for (int i = 0; i < st->n_cpus; i++)
		st->cpus[i].cpu = c->topo->cpus[i].cpu;
	c->state = st;
	err = collect_events(c, st);
	if (!err)
		err = start_cpus(c, st);
	if (err) {
		/* Whatever was programmed goes back before start reports failure. */
		close_all(st, &failed, &ignored);
		engine_destroy(&st->engine);
		core_free(st);
		c->state = NULL;
	}
	return err;
}

/* A CPU offline at start came online: open it now. */
static void late_open(struct collector *c, struct core_state *st, struct core_cpu *cc)
{
	char why[COLLECTOR_TEXT_MAX] = "";
	int err;

	if (hw_cpu_online(c->hw, cc->cpu) != 1)
		return;
	err = prepare_cpu(c, st, cc, why, sizeof(why));
	if (!err && cc->state == CPU_PENDING)
		err = open_cpu(c, st, cc, why, sizeof(why));
	if (!err || (err == -ENXIO && hw_cpu_online(c->hw, cc->cpu) != 1)) {
		if (err && cc->group) {
			unsigned failed;

			engine_close(&st->engine, cc->group, &failed);
			cc->group = NULL;
			cc->state = CPU_PENDING;
		}
		return;
	}
	if (cc->group) {
		unsigned failed;

		engine_close(&st->engine, cc->group, &failed);
		cc->group = NULL;
	}
	cc->state = CPU_UNUSABLE;
	c->errors++;
	collector_note(c, "cpu %d: %s", cc->cpu, why[0] ? why : hw_hint(err, HW_OP_READ));
}

static void sample_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc)
{
	int err;

	cc->is_fresh = false;
	if (cc->state == CPU_PENDING) {
		late_open(c, st, cc);
		if (cc->state == CPU_OPEN && cc->has_read) {
			cc->is_fresh = true;
			return;
		}
	}
	if (cc->state != CPU_OPEN)
		return;
	err = engine_read(&st->engine, cc->group, cc->readings);
	if (err == -ENXIO)
		return;   /* offline: totals kept, not an error */
	if (err) {
		c->errors++;
		return;
	}
	cc->has_read = true;
	cc->is_fresh = true;
	for (size_t i = 0; i < cc->n_group; i++)
		if (cc->readings[i].state == ENGINE_FAILED && cc->readings[i].err)
			c->errors++;
}

static const struct engine_reading *reading_of(const struct core_cpu *cc, int slot)
{
	return slot >= 0 && cc->has_read ? &cc->readings[slot] : NULL;
}

/* Why event k does not count on cc, as the snapshot says it. */
static const char *event_reason(const struct core_state *st, const struct core_cpu *cc, int k,
				char *buf, size_t len)
{
	const struct engine_reading *r = reading_of(cc, cc->slot[k]);

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
		return reading_reason(r, buf, len);
	return buf;
}

static uint64_t cpu_conflicts(const struct core_cpu *cc)
{
	uint64_t n = 0;

	for (size_t i = 0; cc->has_read && i < cc->n_group; i++)
		n += cc->readings[i].conflicts;
	return n;
}

/*
 * cc's multiplexing ratio into *ratio when the perf engine read it this
 * sample (the msr engine never multiplexes).  Returns whether it did.
 */
static bool cpu_ratio(const struct collector *c, const struct core_cpu *cc, double *ratio)
{
	double r = 2.0;

	if (!c->engine || strcmp(c->engine, "perf") != 0 || !cc->is_fresh)
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
	uint64_t conflicts = cpu_conflicts(cc);

	if (!cc->is_fresh)
		return;
	for (unsigned i = 0; i < N_FIXED; i++) {
		const struct engine_reading *r = reading_of(cc, (int)i);

		if (r && r->state == ENGINE_COUNTING)
			snapshot_add_sample(s, fixed_families[i], cc->cpu, NULL, r->total, 0);
	}
	/* The objects exist, empty or not. */
	snapshot_add_sample(s, &cpu_events, cc->cpu, NULL, 0, 0);
	snapshot_add_sample(s, &cpu_unavailable, cc->cpu, NULL, 0, 0);
	for (int k = 0; k < st->n_events; k++) {
		const struct engine_reading *r = reading_of(cc, cc->slot[k]);
		char buf[128];

		if (r && r->state == ENGINE_COUNTING)
			snapshot_add_sample(s, &cpu_events, cc->cpu, st->events[k]->name, r->total, 0);
		else
			snapshot_add_text(s, &cpu_unavailable, cc->cpu, st->events[k]->name,
					  event_reason(st, cc, k, buf, sizeof(buf)));
	}
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
	uint64_t conflicts;
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
		sum->conflicts += cpu_conflicts(cc);
		for (int k = 0; k < N_FIXED + st->n_events; k++) {
			const struct engine_reading *r =
				reading_of(cc, k < N_FIXED ? k : cc->slot[k - N_FIXED]);

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
	if (!st->engine.ops->has_conflicts)
		return;
	collector_add_conflicts(c, s, socket, core, -1, sum->conflicts);
	snapshot_add_sample(s, fam[N_FIXED + 1], where, NULL, sum->conflicts, 0);
}

/* The sums per core or per socket (per_families). */
static void fill_sums(struct collector *c, struct snapshot *s, const struct core_state *st,
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

/*
 * One degradation per event that does not count somewhere: on how many
 * CPUs, and the reason of the first.  Cleared when it counts everywhere.
 * Returns whether anything counts.
 */
static bool note_states(struct collector *c, const struct core_state *st)
{
	bool counts = false;

	for (size_t i = 0; i < N_FIXED + (size_t)st->n_events; i++) {
		const char *name = i < N_FIXED ? fixed_events[i].name : st->events[i - N_FIXED]->name;
		const struct engine_reading *first = NULL;
		unsigned n_not = 0, n_open = 0, n_yielded = 0;
		char key[64], buf[COLLECTOR_TEXT_MAX];

		for (int j = 0; j < st->n_cpus; j++) {
			const struct core_cpu *cc = &st->cpus[j];
			int slot = i < N_FIXED ? (int)i : cc->slot[i - N_FIXED];
			const struct engine_reading *r = reading_of(cc, slot);

			if (cc->state != CPU_OPEN || !r)
				continue;
			n_open++;
			if (r->state == ENGINE_COUNTING) {
				counts = true;
				continue;
			}
			n_not++;
			n_yielded += r->state == ENGINE_YIELDED;
			if (!first)
				first = r;
		}
		snprintf(key, sizeof(key), "core %s", name);
		if (!n_not) {
			collector_recover(c, key);
			continue;
		}
		collector_degrade(c, key, "%s %s on %u of %u CPUs: %s", name,
				  n_yielded ? "yielded" : "not counted", n_not, n_open,
				  reading_reason(first, buf, sizeof(buf)));
	}
	return counts;
}

static void core_sample(struct collector *c, struct snapshot *s)
{
	struct core_state *st = c->state;
	bool counts;

	if (!st)
		return;
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];

		sample_cpu(c, st, cc);
		if (s && settings(c->conf)->per == CORE_PER_CPU) {
			fill_cpu(c, s, st, cc);
			add_ratio(c, cc, s);
		}
	}
	if (s && settings(c->conf)->per != CORE_PER_CPU)
		fill_sums(c, s, st, settings(c->conf)->per);
	/* Up only while something is counted. */
	counts = note_states(c, st);
	c->up = counts;
	if (counts)
		c->status.why_not[0] = '\0';
	else
		collector_refuse(c, "no core event is counted on any CPU");
}

static void core_stop(struct collector *c)
{
	struct core_state *st = c->state;
	unsigned n_failed = 0;
	int err;

	if (!st)
		return;
	close_all(st, &n_failed, &err);
	if (err)
		collector_note(c, "%u core PMU registers not restored: %s", n_failed, hw_hint(err, HW_OP_WRITE));
	engine_destroy(&st->engine);
	core_free(st);
	c->state = NULL;
}

uint64_t core_collector_reads_per_sample(const struct collector *c)
{
	const struct core_state *st = c->state;
	uint64_t n = 0;

	if (!st || (c->engine && strcmp(c->engine, "perf") == 0))
		return 0;
	for (int i = 0; i < st->n_cpus; i++) {
		const struct core_cpu *cc = &st->cpus[i];
		unsigned n_counting = 0;

		if (cc->state != CPU_OPEN)
			continue;
		for (size_t k = 0; cc->has_read && k < cc->n_group; k++)
			n_counting += cc->readings[k].state == ENGINE_COUNTING;
		n += 1 + 2 * n_counting;
	}
	return n;
}

static const char *core_unavailable(const struct event_spec *ev, const void *arg)
{
	const struct cpu_perfmon *pm = arg;

	return pm->version && ev->arch_event && (pm->unavailable & (1u << (ev->arch_event - 1))) ?
	       "marked unavailable by CPUID leaf 0xA" : NULL;
}

static void core_list_events(const struct cpu_info *info, struct strbuf *out)
{
	const struct cpu_perfmon *pm = &info->perfmon;

	if (pm->version)
		strbuf_printf(out, "core (per logical CPU, %u programmable counters of %u bits, "
			      "%u fixed of %u bits):\n", pm->n_gp, pm->gp_width_bits, pm->n_fixed,
			      pm->fixed_width_bits);
	else
		strbuf_append(out, "core (per logical CPU; the number of counters is read from CPUID at start):\n");
	strbuf_append(out, "  always counted:\n");
	strbuf_printf(out, "    %-34s %s\n", "instructions", "fixed counter 0");
	strbuf_printf(out, "    %-34s %s\n", "cycles", "fixed counter 1");
	strbuf_printf(out, "    %-34s %s\n", "ref_cycles", "fixed counter 2");
	event_list_builtins(EVENT_PMU_CORE, out, core_unavailable, pm);
}

/* Programmable core events allowed in a config; the CPU may have fewer (CPUID, at start). */
#define CONF_MAX_CORE_EVENTS 8

static void core_check_conf(const struct conf *conf, struct conf_check *chk)
{
	const struct core_settings *cs = settings(conf);
	char taken[96];
	int i = conf_check_events(chk, cs->events, cs->n_events, EVENT_PMU_CORE, cs->default_events,
				  CONF_MAX_CORE_EVENTS, taken, sizeof(taken));

	if (i >= 0)
		conf_check_error(chk, cs->events[i].line, "event",
				 "event '%s' does not fit: at most %d core events, and %d are already "
				 "taken by %s (the CPU's own counter count, from CPUID, is checked at "
				 "start)", cs->events[i].spec.name, CONF_MAX_CORE_EVENTS,
				 CONF_MAX_CORE_EVENTS, taken);
}

static const struct conf_key core_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct core_settings, enabled), .def = "yes" },
	{ "default_events", CONF_KIND_BOOL, CONF_SETTING(struct core_settings, default_events),
	  .def = "yes" },
	{ "on_conflict", CONF_KIND_ENUM, CONF_SETTING(struct core_settings, on_conflict),
	  .names = conf_conflict_names, .def = "yield" },
	{ "per", CONF_KIND_ENUM, CONF_SETTING(struct core_settings, per), .names = core_per_names,
	  .def = "cpu" },
	/* auto = perf wherever the kernel has a core PMU, else msr. */
	{ "engine", CONF_KIND_ENUM, CONF_SETTING(struct core_settings, engine),
	  .names = conf_engine_names, .def = "auto", .restart = true },
	{ "event", CONF_KIND_EVENT, CONF_SETTING(struct core_settings, events),
	  .pmu = EVENT_PMU_CORE,
	  .count_offset = offsetof(struct core_settings, n_events) },
};

static const struct conf_section core_conf_section = {
	.name = "core", .keys = core_keys, .n_keys = sizeof(core_keys) / sizeof(core_keys[0]),
	.check = core_check_conf,
	.settings_size = sizeof(struct core_settings),
};

static bool core_is_enabled(const struct conf *conf)
{
	return settings(conf)->enabled;
}

static bool core_conf_changed(const struct conf *old, const struct conf *new)
{
	return conf_settings_changed(&core_conf_section, settings(old), settings(new));
}

/* The engine choice start-up makes (col_engine.h), asked before the privilege drop. */
static bool core_uses_perf(const struct conf *conf, struct perf_sys *ps)
{
	struct col_engine_choice ch;

	return col_engine_choose(settings(conf)->engine, ENGINE_PMU_CORE, core_conf_section.name,
				 ps, &ch) == 0 && ch.perf;
}

_Static_assert(sizeof(struct core_settings) <= CONF_SETTINGS_BYTES,
	       "the [core] settings fit the collector's block of struct conf");

const struct collector_ops core_collector_ops = {
	.name = "core",
	.start = core_start,
	.sample = core_sample,
	.stop = core_stop,
	.families = core_families,
	.n_families = sizeof(core_families) / sizeof(core_families[0]),
	.conf_section = &core_conf_section,
	.list_events = core_list_events,
	.is_enabled = core_is_enabled,
	.conf_changed = core_conf_changed,
	.uses_perf = core_uses_perf,
};

