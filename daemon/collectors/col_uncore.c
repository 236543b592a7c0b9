/*
 * The uncore collector: counts Nehalem/Westmere uncore events (DRAM thermal
 * throttling, PROCHOT, core thermal throttling) and the uncore clock on
 * every socket, through one online CPU of the socket since the registers
 * are package scope (hardware.md §1.1).  It says what to count; the
 * counter engine (engine.h, the msr engine) claims the counters, applies
 * the ownership rule and the conflict policy, and puts every register back
 * on stop.  It does not log; it reports through the collector status
 * (an event not counted is a degradation with the engine's reason) and the
 * families it declares.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "col_engine.h"
#include "col_uncore.h"
#include "collector.h"
#include "counter.h"
#include "event.h"
#include "msr.h"
#include "throttle_signal.h"
#include "throttle_families.h"
#include "xeon_uncore.h"

extern const struct collector_ops uncore_collector_ops;

/* The [uncore] section, in the collector's block of struct conf. */
static const struct uncore_settings *settings(const struct conf *conf)
{
	return collector_settings(conf, &uncore_collector_ops);
}

/*
 * A generous upper bound of the uncore clock.  Real parts run UCLK at
 * about 2-3 GHz (hardware.md §1.3); the bound only serves the check that
 * the sampling interval stays far below the counters' wrap period.
 */
#define UNCORE_MAX_CLOCK_HZ 4e9

#define UNCORE_MAX_EVENTS 16

struct uncore_event {
	const struct event_spec *spec;   /* into uncore_state.specs */
	int slot;                        /* its place in the engine group, -1 when not asked for */
	char reason[96];                 /* why it is not asked for */
};

struct uncore_socket {
	int socket;
	int cpu;                         /* the CPU the group was opened through */
	bool is_up;                      /* its group is open */
	bool is_stale;                   /* no CPU of the socket could be read */
	bool has_read;                   /* readings hold a first read */
	int n_events;
	struct uncore_event events[UNCORE_MAX_EVENTS];
	size_t n_group;                  /* the events asked of the engine, clock last */
	int clock_slot;
	struct engine_event group_events[UNCORE_MAX_EVENTS + 1];
	struct engine_reading readings[UNCORE_MAX_EVENTS + 1];
	uint64_t seen_conflicts[UNCORE_MAX_EVENTS + 1];   /* as of the previous read */
	struct engine_group *group;
	/* DRAM thermal throttled cycles as seconds (throttle_families.h), once counted. */
	bool has_dram_seconds;
	double dram_seconds;
};

struct uncore_state {
	struct engine engine;
	int n_specs;
	struct event_spec specs[UNCORE_MAX_EVENTS];
	int n_sockets;
	struct uncore_socket *sockets;
};

/*
 * The families, in /metrics order; in JSON they are the socket's "uncore"
 * object (SPEC §5a), which exists while the socket is counted.
 */
static const struct metric_family uncore_clockticks;

static const struct metric_family uncore_events = {
	.name = "uncored_uncore_events_total", .help = "Uncore PMU event counts per socket.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "event", .signal = METRIC_SIGNAL_EVENT_COUNTS,
	.json_key = "events", .json_group = "uncore", .json_order = METRIC_JSON_SOCKET_FIXED + 1,
	.table_title = "uncore events", .table_percent_of = &uncore_clockticks,
	.table_percent_label = EVENT_DRAM_THERMAL_THROTTLED,
};

static const struct metric_family uncore_clockticks = {
	.name = "uncored_uncore_clockticks_total",
	.help = "Uncore fixed counter (uncore clock ticks).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.signal = METRIC_SIGNAL_CLOCK,
	.json_key = "clockticks", .json_group = "uncore", .json_order = METRIC_JSON_SOCKET_FIXED,
	.json_null = true, .table_title = "uncore clockticks",
};

/* In the JSON snapshot only: why each event that is not counted is not. */
static const struct metric_family uncore_unavailable = {
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_TEXT,
	.label = "event", .json_key = "unavailable", .json_group = "uncore",
	.json_order = METRIC_JSON_SOCKET_FIXED + 2,
	.table_title = "unavailable",
};

/* The socket's conflicts in JSON; /metrics has them in collector_pmu_conflicts. */
static const struct metric_family uncore_conflicts = {
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.json_key = "conflicts", .json_group = "uncore", .json_order = METRIC_JSON_SOCKET_FIXED + 3,
};

static const struct metric_family *const uncore_families[] = {
	&uncore_events, &uncore_clockticks, &collector_pmu_conflicts, &collector_pmu_resets,
	&uncore_unavailable,
	&uncore_conflicts, &throttle_dram_socket_seconds,
};

/* Whether the collector is on and this model has the Nehalem/Westmere uncore PMU. */
static int check_facility(struct collector *c)
{
	const struct cpu_info *info = c->info;

	if (collector_refuse_disabled(c))
		return -ENOTSUP;
	if (!info->fac.has_nhm_uncore) {
		collector_refuse(c,
				 "this CPU (%s, family %u model 0x%02x) has no Nehalem/Westmere uncore PMU at "
				 "MSR 0x391/0x3c0; uncore thermal events are not available",
				 info->microarch ? info->microarch : "unknown", info->family, info->model);
		return -ENOTSUP;
	}
	return 0;
}

/* A counter that may wrap twice between two samples cannot be accumulated. */
static int check_interval(struct collector *c)
{
	double wrap_s = counter_wrap_period_s(UNCORE_COUNTER_WIDTH, UNCORE_MAX_CLOCK_HZ);

	if (c->conf->interval_s <= wrap_s / 4)
		return 0;
	collector_refuse(c,
			 "interval %.0f s is too long: the %d-bit uncore counters can wrap every %.0f s, "
			 "so the interval must be at most %.0f s", c->conf->interval_s,
			 UNCORE_COUNTER_WIDTH, wrap_s, wrap_s / 4);
	return -EINVAL;
}

static int add_spec(struct collector *c, struct uncore_state *st, const struct event_spec *spec)
{
	for (int i = 0; i < st->n_specs; i++)
		if (strcmp(st->specs[i].name, spec->name) == 0)
			return 0;
	if (st->n_specs == UNCORE_MAX_EVENTS) {
		collector_refuse(c,
				 "too many uncore events: at most %d can be reported, defaults included; "
				 "remove some or turn the default events off", UNCORE_MAX_EVENTS);
		return -EINVAL;
	}
	st->specs[st->n_specs++] = *spec;
	return 0;
}

/* The defaults when configured, then the configured events; names once. */
static int build_event_list(struct collector *c, struct uncore_state *st)
{
	const struct conf *conf = c->conf;
	int err;

	if (settings(conf)->default_events) {
		size_t n;
		const struct event_spec *const *defaults = event_defaults(EVENT_PMU_UNCORE, &n);

		for (size_t i = 0; i < n; i++) {
			err = add_spec(c, st, defaults[i]);
			if (err)
				return err;
		}
	}
	for (int i = 0; i < settings(conf)->n_events; i++) {
		err = add_spec(c, st, &settings(conf)->events[i].spec);
		if (err)
			return err;
	}
	return 0;
}

/* What the engine counts for one event: no occupancy event is built in, so no OCC_CTR_RST. */
static struct engine_event engine_event_of(const struct event_spec *spec)
{
	return (struct engine_event){ .name = spec->name, .code = spec->code, .umask = spec->umask,
				      .edge = spec->edge, .inv = spec->inv, .cmask = spec->cmask,
				      .gp_only = true };
}

/* The socket's list for the engine: the events the model has, then the uncore clock. */
static void build_group(struct collector *c, struct uncore_state *st, struct uncore_socket *us)
{
	us->n_events = st->n_specs;
	us->n_group = 0;
	for (int i = 0; i < st->n_specs; i++) {
		struct uncore_event *ev = &us->events[i];

		ev->spec = &st->specs[i];
		ev->slot = -1;
		if (ev->spec->needs_uncore_thermal && !c->info->fac.has_uncore_thermal_events) {
			snprintf(ev->reason, sizeof(ev->reason), "not available on %s",
				 c->info->microarch ? c->info->microarch : "this model");
			continue;
		}
		ev->slot = (int)us->n_group;
		us->group_events[us->n_group++] = engine_event_of(ev->spec);
	}
	us->clock_slot = (int)us->n_group;
	us->group_events[us->n_group++] = (struct engine_event){ .name = "clockticks",
								 .code = ENGINE_UNCORE_CLOCK };
}

/* Every event of the socket failed because writes are refused (lockdown, allow_writes=off). */
static bool all_refused(const struct uncore_socket *us)
{
	for (size_t i = 0; i < us->n_group; i++)
		if (us->readings[i].state != ENGINE_FAILED ||
		    (us->readings[i].err != -EPERM && us->readings[i].err != -EACCES))
			return false;
	return us->n_group > 0;
}

/* Each event that does not count is a degradation, with the engine's reason. */
static void note_states(struct collector *c, const struct uncore_state *st,
			const struct uncore_socket *us)
{
	for (size_t i = 0; i < us->n_group; i++) {
		const struct engine_reading *r = &us->readings[i];
		char key[64];

		char buf[COLLECTOR_TEXT_MAX];

		snprintf(key, sizeof(key), "socket %d %s", us->socket, us->group_events[i].name);
		if (r->state == ENGINE_COUNTING)
			collector_recover(c, key);
		else
			collector_degrade(c, key, "socket %d: uncore %s %s: %s", us->socket,
					  us->group_events[i].name,
					  r->state == ENGINE_YIELDED ? "yielded" : "not counted",
					  engine_reading_reason(&st->engine, r, buf, sizeof(buf)));
	}
}

static int open_socket(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
		       const struct cpu_socket *cs)
{
	char err[160];
	int r;

	us->socket = cs->socket;
	us->cpu = cpu_socket_first_online(c->hw, cs);
	if (us->cpu < 0) {
		collector_note(c, "socket %d: no online CPU, no uncore counting there", us->socket);
		return -ENXIO;
	}
	build_group(c, st, us);
	r = engine_open(&st->engine, ENGINE_PMU_NHM_UNCORE, us->cpu, us->group_events, us->n_group,
			&us->group, err, sizeof(err));
	if (r < 0) {
		collector_note(c, "socket %d: %s", us->socket, err);
		return r;
	}
	us->is_up = true;
	/* A first read says at once which events found a counter. */
	if (engine_read(&st->engine, us->group, us->readings) == 0) {
		us->has_read = true;
		if (all_refused(us))
			return us->readings[0].err;
		note_states(c, st, us);
	}
	return 0;
}

static void mark_events_down(struct uncore_socket *us, const char *why)
{
	for (int i = 0; i < us->n_events; i++)
		snprintf(us->events[i].reason, sizeof(us->events[i].reason), "%s", why);
}

static void free_state(struct uncore_state *st)
{
	if (!st)
		return;
	free(st->sockets);
	free(st);
}

static unsigned close_all(struct collector *c, struct uncore_state *st, int *ret_err)
{
	unsigned n_failed = 0;

	*ret_err = 0;
	for (int i = 0; i < st->n_sockets; i++) {
		struct uncore_socket *us = &st->sockets[i];
		unsigned failed = 0;
		int err;

		if (!us->group)
			continue;
		err = engine_close(&st->engine, us->group, &failed);
		us->group = NULL;
		us->is_up = false;
		n_failed += failed;
		if (err && !*ret_err)
			*ret_err = err;
	}
	(void)c;
	return n_failed;
}

static int fail_start(struct collector *c, struct uncore_state *st, int err)
{
	int ignored;

	close_all(c, st, &ignored);
	engine_destroy(&st->engine);
	free_state(st);
	c->state = NULL;
	return err;
}

static int open_all(struct collector *c, struct uncore_state *st)
{
	int first_err = 0, n_up = 0;

	for (int i = 0; i < st->n_sockets; i++) {
		struct uncore_socket *us = &st->sockets[i];
		int err = open_socket(c, st, us, &c->topo->sockets[i]);

		if (err == -EPERM || err == -EACCES) {
			collector_refuse(c, "uncore counting needs MSR writes: %s",
					 hw_hint(err, HW_OP_WRITE));
			return err;
		}
		if (err) {
			c->errors++;
			mark_events_down(us, "no uncore access on this socket");
			if (!first_err)
				first_err = err;
			continue;
		}
		n_up++;
	}
	return n_up ? 0 : (first_err ? first_err : -ENODEV);
}

static int uncore_start(struct collector *c)
{
	struct uncore_state *st;
	int err;

	err = check_facility(c);
	if (!err)
		err = check_interval(c);
	if (err)
		return err;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	c->state = st;
	st->n_sockets = c->topo->n_sockets;
	st->sockets = calloc((size_t)(st->n_sockets ? st->n_sockets : 1), sizeof(*st->sockets));
	if (!st->sockets)
		return fail_start(c, st, -ENOMEM);
	err = col_engine_open(c, settings(c->conf)->engine, ENGINE_PMU_NHM_UNCORE,
			      c->ops->conf_section->name, settings(c->conf)->on_conflict, &st->engine);
	if (err)
		return fail_start(c, st, err);
	err = build_event_list(c, st);
	if (!err)
		err = open_all(c, st);
	if (err)
		return fail_start(c, st, err);
	return 0;
}

/*
 * Westmere's DRAM thermal throttled cycles as the generation-independent
 * DRAM family (cause thermal, per socket): the interval's cycles over the
 * uncore clock's of the same group, times the interval (hardware-linux.md
 * §4.4, throttle_seconds()).
 */
static void add_dram_seconds(struct uncore_socket *us)
{
	const struct engine_reading *clock = &us->readings[us->clock_slot];

	for (int i = 0; i < us->n_events; i++) {
		const struct uncore_event *ev = &us->events[i];
		const struct engine_reading *r;

		if (ev->slot < 0 || strcmp(ev->spec->name, EVENT_DRAM_THERMAL_THROTTLED) != 0)
			continue;
		r = &us->readings[ev->slot];
		if (r->state != ENGINE_COUNTING || clock->state != ENGINE_COUNTING)
			return;
		us->dram_seconds += throttle_seconds(r->raw_delta, clock->raw_delta,
						     clock->enabled_ns);
		us->has_dram_seconds = true;
		return;
	}
}

static bool sample_socket(struct collector *c, struct uncore_state *st, struct uncore_socket *us)
{
	bool counts = false;
	char key[32];
	int err;

	/* A degradation while it holds: cleared by the first good read. */
	snprintf(key, sizeof(key), "stale socket %d", us->socket);
	err = engine_read(&st->engine, us->group, us->readings);
	if (err < 0) {
		/* Totals stay as they were; the counters keep counting meanwhile. */
		us->is_stale = true;
		c->errors++;
		collector_degrade(c, key, "socket %d: no CPU of the socket can be read, "
				  "uncore totals held", us->socket);
		return false;
	}
	us->is_stale = false;
	us->has_read = true;
	collector_recover(c, key);
	for (size_t i = 0; i < us->n_group; i++) {
		const struct engine_reading *r = &us->readings[i];

		if (r->state == ENGINE_FAILED && r->err)
			c->errors++;
		counts |= r->state == ENGINE_COUNTING;
		if (r->conflicts > us->seen_conflicts[i] && r->state == ENGINE_COUNTING &&
		    settings(c->conf)->on_conflict == CONF_CONFLICT_RECLAIM)
			collector_note(c, "socket %d: uncore %s was reprogrammed by another agent "
				       "and reclaimed; the counts of that interval are lost",
				       us->socket, us->group_events[i].name);
		us->seen_conflicts[i] = r->conflicts;
	}
	add_dram_seconds(us);
	note_states(c, st, us);
	return counts;
}

/* The socket's counters' conflicts and resets since open, summed. */
static void socket_losses(const struct uncore_socket *us, uint64_t *conflicts, uint64_t *resets)
{
	*conflicts = *resets = 0;
	for (size_t i = 0; us->has_read && i < us->n_group; i++) {
		*conflicts += us->readings[i].conflicts;
		*resets += us->readings[i].resets;
	}
}

/* The socket's values, while its group is open (totals held when a read failed). */
static void fill_snapshot(struct collector *c, const struct uncore_state *st,
			  const struct uncore_socket *us, struct snapshot *s)
{
	const struct engine_reading *clock = us->has_read ? &us->readings[us->clock_slot] : NULL;
	uint64_t conflicts, resets;

	socket_losses(us, &conflicts, &resets);
	if (!us->is_up)
		return;
	if (clock && clock->state == ENGINE_COUNTING)
		snapshot_add_sample(s, &uncore_clockticks, us->socket, NULL, clock->total, 0);
	/* The objects exist, empty or not. */
	snapshot_add_sample(s, &uncore_events, us->socket, NULL, 0, 0);
	snapshot_add_sample(s, &uncore_unavailable, us->socket, NULL, 0, 0);
	for (int i = 0; i < us->n_events; i++) {
		const struct uncore_event *ev = &us->events[i];
		const struct engine_reading *r = ev->slot >= 0 && us->has_read ?
						 &us->readings[ev->slot] : NULL;
		const char *reason = ev->reason;
		char buf[COLLECTOR_TEXT_MAX];

		if (r && r->state == ENGINE_COUNTING) {
			snapshot_add_sample(s, &uncore_events, us->socket, ev->spec->name, r->total,
					    0);
			continue;
		}
		if (ev->slot >= 0)
			reason = r ? engine_reading_reason(&st->engine, r, buf, sizeof(buf)) :
				     "not counted";
		snapshot_add_text(s, &uncore_unavailable, us->socket, ev->spec->name, reason);
	}
	if (us->has_dram_seconds)
		snapshot_add_sample(s, &throttle_dram_socket_seconds, us->socket,
				    xeon_dram_cause_name(XEON_CAUSE_THERMAL), 0, us->dram_seconds);
	collector_add_resets(c, s, us->socket, -1, -1, resets);
	/* A count that cannot change on this engine is no series. */
	if (!st->engine.ops->has_conflicts)
		return;
	collector_add_conflicts(c, s, us->socket, -1, -1, conflicts);
	snapshot_add_sample(s, &uncore_conflicts, us->socket, NULL, conflicts, 0);
}

static void uncore_sample(struct collector *c, struct snapshot *s)
{
	struct uncore_state *st = c->state;
	unsigned n = 0, counting = 0;
	bool counts = false;

	if (!st)
		return;
	for (int i = 0; i < st->n_sockets; i++) {
		struct uncore_socket *us = &st->sockets[i];
		bool here = us->is_up && sample_socket(c, st, us);

		/* The units: the sockets with an online CPU to count through. */
		n += us->cpu >= 0;
		counting += here;
		counts |= here;
		if (s)
			fill_snapshot(c, st, us, s);
	}
	/* Up only while every socket counts. */
	collector_units(c, n, counting);
	if (counts)
		c->status.why_not[0] = '\0';
	else
		collector_refuse(c, "no uncore event is counted on any socket");
}

static void uncore_stop(struct collector *c)
{
	struct uncore_state *st = c->state;
	unsigned n_failed;
	int err;

	if (!st)
		return;
	n_failed = close_all(c, st, &err);
	if (err)
		collector_note(c, "restoring %u uncore registers failed: %s", n_failed,
			       hw_hint(err, HW_OP_WRITE));
	engine_destroy(&st->engine);
	free_state(st);
	c->state = NULL;
}

static const char *uncore_not_here(const struct event_spec *ev, const void *arg)
{
	const struct cpu_info *info = arg;

	return ev->needs_uncore_thermal && !info->fac.has_uncore_thermal_events ?
	       "not on this model" : NULL;
}

static void uncore_list_events(const struct cpu_info *info, struct strbuf *out)
{
	if (!info->fac.has_nhm_uncore) {
		strbuf_append(out, "uncore: not available (no Nehalem/Westmere uncore PMU on this model)\n");
		return;
	}
	strbuf_printf(out, "uncore (per socket, %d counters of %d bits, and the uncore clock):\n",
		      UNCORE_N_COUNTERS, UNCORE_COUNTER_WIDTH);
	strbuf_append(out, "  always counted:\n");
	strbuf_printf(out, "    %-34s %s\n", "clockticks", "the uncore clock, fixed counter (MSR 0x394)");
	event_list_builtins(EVENT_PMU_UNCORE, out, uncore_not_here, info);
	/* hardware-linux.md §2: the PCU's core numbering is documented nowhere. */
	strbuf_append(out, "  coreN in an event name is the uncore's own core number (0-3), not a Linux core\n"
		      "  id: which Linux core each one watches is documented nowhere, and a socket with\n"
		      "  more than four cores has cores no such event watches.\n");
}

static void uncore_check_conf(const struct conf *conf, struct conf_check *chk)
{
	const struct uncore_settings *us = settings(conf);
	char taken[96];
	int i = conf_check_events(chk, us->events, us->n_events, EVENT_PMU_UNCORE,
				  us->default_events, UNCORE_N_COUNTERS, taken, sizeof(taken));

	if (i >= 0)
		conf_check_error(chk, us->events[i].line, "event",
				 "event '%s' does not fit: the uncore has %d counters and %d are "
				 "already taken by %s", us->events[i].spec.name,
				 UNCORE_N_COUNTERS, UNCORE_N_COUNTERS, taken);
}

static const struct conf_key uncore_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct uncore_settings, enabled), .def = "yes" },
	{ "default_events", CONF_KIND_BOOL, CONF_SETTING(struct uncore_settings, default_events),
	  .def = "yes" },
	{ "on_conflict", CONF_KIND_ENUM, CONF_SETTING(struct uncore_settings, on_conflict),
	  .names = conf_conflict_names, .def = "yield" },
	/* auto = msr here: the direct uncore programming is the product's own (README). */
	{ "engine", CONF_KIND_ENUM, CONF_SETTING(struct uncore_settings, engine),
	  .names = conf_engine_names, .def = "auto", .restart = true },
	{ "event", CONF_KIND_EVENT, CONF_SETTING(struct uncore_settings, events),
	  .pmu = EVENT_PMU_UNCORE,
	  .count_offset = offsetof(struct uncore_settings, n_events) },
};

static const struct conf_section uncore_conf_section = {
	.name = "uncore", .keys = uncore_keys, .n_keys = sizeof(uncore_keys) / sizeof(uncore_keys[0]),
	.check = uncore_check_conf,
	.settings_size = sizeof(struct uncore_settings),
};

/*
 * Westmere's DRAM thermal throttled cycles (event 0x67, a default event;
 * hardware.md §2.1) are DRAM throttling for heat, per socket.
 */
static unsigned uncore_throttle_signals(const struct cpu_info *info, const struct conf *conf)
{
	if (info->fac.has_nhm_uncore && info->fac.has_uncore_thermal_events &&
	    settings(conf)->default_events)
		return THROTTLE_BIT(THROTTLE_DRAM_THERMAL);
	return 0;
}

/* The engine choice start-up makes (col_engine.h), asked before the privilege drop. */
static bool uncore_uses_perf(const struct conf *conf, struct perf_sys *ps)
{
	struct col_engine_choice ch;

	return col_engine_choose(settings(conf)->engine, ENGINE_PMU_NHM_UNCORE,
				 uncore_conf_section.name, ps, &ch) == 0 && ch.kind == ENGINE_PERF;
}

_Static_assert(sizeof(struct uncore_settings) <= CONF_SETTINGS_BYTES,
	       "the [uncore] settings fit the collector's block of struct conf");

const struct collector_ops uncore_collector_ops = {
	.name = "uncore",
	.start = uncore_start,
	.sample = uncore_sample,
	.stop = uncore_stop,
	.families = uncore_families,
	.n_families = sizeof(uncore_families) / sizeof(uncore_families[0]),
	.conf_section = &uncore_conf_section,
	.list_events = uncore_list_events,
	.throttle_signals = uncore_throttle_signals,
	.uses_perf = uncore_uses_perf,
};
