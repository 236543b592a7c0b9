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
 * AMD EPYC (hardware-amd.md §3) has no fixed counters and no CPUID leaf
 * 0xA: there the collector counts through perf only, instructions,
 * cycles and (Zen 4 on) reference cycles in AMD's encodings on GP
 * counters in the first group's slots, the programmable events from AMD's
 * table (l2_cache_requests and l2_cache_misses for what perf calls cache
 * references and misses, which are L2 on AMD), six 48-bit counters of
 * the generation for the wrap check; engine = msr is not applicable.
 *
 * On the perf engine each CPU's events are two groups (col_core_groups.c):
 * the fixed events in one, the programmable events in the other, so that
 * events that find no counter never keep instructions and cycles from
 * theirs.
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
 *
 * This file counts; the families and the values a sample adds are in
 * col_core_values.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "col_core.h"
#include "col_core_state.h"
#include "col_engine.h"
#include "counter.h"
#include "event.h"
#include "perf_sys.h"

extern const struct collector_ops core_collector_ops;

/* The [core] section, in the collector's block of struct conf. */
static const struct core_settings *settings(const struct conf *conf)
{
	return collector_settings(conf, &core_collector_ops);
}

static const char *const core_per_names[] = { "cpu", "core", "socket", NULL };

/* The fixed-counter events in the core PMU's encoding (hardware.md §5.3). */
static const struct engine_event fixed_events[N_FIXED] = {
	{ .name = "instructions", .code = 0xc0, .umask = 0x00 },
	{ .name = "cycles", .code = 0x3c, .umask = 0x00 },
	{ .name = "ref cycles", .code = 0x3c, .umask = 0x01 },
};

/*
 * The same events on AMD's core PMU (hardware-amd.md §3.3), on GP
 * counters: ex_ret_instr 0xC0, ls_not_halted_cyc 0x76, and from Zen 4 on
 * ls_not_halted_p0_cyc.p0_freq_cyc 0x120 umask 0x01 (perf's ref-cycles;
 * Zen 2/3 have no such event: not asked there, so the series is absent).
 */
static const struct engine_event amd_fixed_events[N_FIXED] = {
	{ .name = "instructions", .code = 0xc0, .umask = 0x00, .gp_only = true },
	{ .name = "cycles", .code = 0x76, .umask = 0x00, .gp_only = true },
	{ .name = "ref cycles", .code = 0x120, .umask = 0x01, .gp_only = true },
};

/* Whether slot i of cc is asked: an always-counted slot below cc->n_fixed, or an event's. */
static bool slot_asked(const struct core_cpu *cc, size_t i)
{
	return i >= N_FIXED || i < cc->n_fixed;
}

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

/*
 * A configured event as this CPU counts it: a custom one as written; a
 * built-in by name from the table of the CPU's vendor (branch_misses is
 * 0xC5 on Intel, 0xC3 on AMD), or NULL with a note when only the other
 * vendor has it (llc_misses on AMD, l2_cache_misses on Intel).
 */
static const struct event_spec *own_event(struct collector *c, const struct core_state *st,
					  const struct event_spec *ev)
{
	const struct event_spec *b;

	if (!event_builtin(EVENT_PMU_CORE, ev->name))
		return ev;
	b = event_builtin_own(st->amd ? EVENT_PMU_AMD_CORE : EVENT_PMU_CORE, ev->name);
	if (!b)
		collector_note(c, "core event '%s' is a built-in of the %s core PMU only: not counted "
			       "on this CPU%s", ev->name, st->amd ? "Intel" : "AMD",
			       st->amd ? " (AMD's core PMU counts L2, l2_cache_requests and "
			       "l2_cache_misses, and no last-level cache event)" : "");
	return b;
}

/* The defaults (when configured) then the configured events. */
static int collect_events(struct collector *c, struct core_state *st)
{
	const struct event_spec *const *defaults = NULL;
	size_t n_defaults = 0;
	size_t total;

	if (settings(c->conf)->default_events)
		defaults = event_defaults(st->amd ? EVENT_PMU_AMD_CORE : EVENT_PMU_CORE, &n_defaults);
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
		const struct event_spec *ev = own_event(c, st, &settings(c->conf)->events[i].spec);

		if (!ev)
			continue;
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
	/* On AMD every event, instructions and cycles included, has a GP counter. */
	if ((st->n_events > 0 || st->amd) && pm->n_gp > 0)
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

static bool arch_event_missing(const struct core_state *st, const struct cpu_perfmon *pm,
			       const struct event_spec *ev)
{
	unsigned bit;

	if (ev->arch_event == 0 || st->amd)
		return false;
	bit = ev->arch_event - 1;
	return bit >= pm->ebx_length || bit >= 32 || (pm->unavailable & (UINT32_C(1) << bit));
}


/*
 * The CPU's list for the engine: the three fixed events (AMD: the
 * always-counted ones in their slots), then each configured event it has.
 */
static void build_group(const struct core_state *st, struct core_cpu *cc)
{
	cc->n_group = 0;
	cc->n_fixed = st->n_fixed;
	for (unsigned i = 0; i < N_FIXED; i++)
		cc->group_events[cc->n_group++] = st->amd ? amd_fixed_events[i] : fixed_events[i];
	for (int k = 0; k < st->n_events; k++) {
		const struct event_spec *ev = st->events[k];

		cc->slot[k] = -1;
		if (arch_event_missing(st, &cc->pm, ev))
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
		if (slot_asked(cc, i) && (cc->readings[i].state != ENGINE_FAILED ||
		    (cc->readings[i].err != -EPERM && cc->readings[i].err != -EACCES)))
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
	err = core_groups_open(&st->engine, cc, why, whylen);
	if (err < 0)
		return err;
	cc->state = CPU_OPEN;
	if (cc->gp_refused)
		collector_note(c, "cpu %d: the programmable events cannot be counted (%s); the "
			       "fixed events are", cc->cpu, why);
	err = core_groups_read(&st->engine, cc);
	if (err == 0 && all_refused(cc)) {
		snprintf(why, whylen, "cpu %d: cannot program the core PMU: %s", cc->cpu,
			 hw_hint(cc->readings[0].err, HW_OP_WRITE));
		return cc->readings[0].err;
	}
	cc->has_read = err == 0;
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

	if (st->amd) {
		/* No CPUID leaf 0xA: the generation's counters (hardware-amd.md §3.1). */
		cc->pm = (struct cpu_perfmon){ .n_gp = c->info->fac.amd_core_counters,
					       .gp_width_bits = c->info->fac.amd_core_counter_bits };
		return check_wrap(c, st, &cc->pm, why, whylen);
	}
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

		if (!core_groups_open_any(cc))
			continue;
		err = core_groups_close(&st->engine, cc, &failed);
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

		/*
		 * An offline CPU was not prepared (no CPUID leaf 0xA on Intel, and
		 * AMD needs none): it waits, and late_open opens it once it is back.
		 */
		if (cc->state != CPU_PENDING || hw_cpu_online(c->hw, cc->cpu) != 1 ||
		    (!st->amd && cc->pm.version < 2))
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
	free(st->readings);
	free(st->group_events);
	free(st->cpus);
	free(st);
}

/*
 * Each CPU's event list and readings, as long as the configured events
 * make them: 224 CPUs with room for every possible event held 0.4 MiB,
 * most of it never used.  0 or -ENOMEM.
 */
static int alloc_lists(struct core_state *st)
{
	size_t per = N_FIXED + (size_t)st->n_events, n = (size_t)(st->n_cpus ? st->n_cpus : 1);

	st->group_events = calloc(n * per, sizeof(*st->group_events));
	st->readings = calloc(n * per, sizeof(*st->readings));
	if (!st->group_events || !st->readings)
		return -ENOMEM;
	for (int i = 0; i < st->n_cpus; i++) {
		st->cpus[i].group_events = st->group_events + (size_t)i * per;
		st->cpus[i].readings = st->readings + (size_t)i * per;
	}
	return 0;
}

static int core_start(struct collector *c)
{
	bool amd = c->info->fac.amd_zen > 0;
	struct core_state *st;
	unsigned failed;
	int err, ignored;

	if (!settings(c->conf)->enabled) {
		collector_refuse(c, "disabled in the configuration");
		return -ENOTSUP;
	}
	if (amd && settings(c->conf)->engine == CONF_ENGINE_MSR) {
		collector_refuse(c, "engine = msr in [core]: the msr engine programs Intel's core PMU "
				 "only; %s's core PMU is counted through perf (engine = auto or perf)",
				 c->info->microarch);
		return -ENOTSUP;
	}
	if (c->info->fac.lacks_intel_core_pmu && !amd) {
		collector_refuse(c, "%s has no fixed counters and no CPUID leaf 0xA: this collector "
				 "counts Intel's core PMU only", c->info->microarch ?
				 c->info->microarch : "this CPU");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->cpus = calloc((size_t)(c->topo->n_cpus ? c->topo->n_cpus : 1), sizeof(*st->cpus));
	if (!st->cpus) {
		core_free(st);
		return -ENOMEM;
	}
	err = col_engine_open(c, settings(c->conf)->engine, ENGINE_PMU_CORE,
			      c->ops->conf_section->name, settings(c->conf)->on_conflict, &st->engine);
	if (err) {
		core_free(st);
		return err;
	}
	st->n_cpus = c->topo->n_cpus;
	st->amd = amd;
	st->n_fixed = amd && !c->info->fac.has_ref_cycles ? N_FIXED - 1 : N_FIXED;
	for (int i = 0; i < st->n_cpus; i++)
		st->cpus[i].cpu = c->topo->cpus[i].cpu;
	c->state = st;
	err = collect_events(c, st);
	if (!err)
		err = alloc_lists(st);
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
	char why[COLLECTOR_TEXT_MAX] = "", level[PERF_SYS_PARANOID_TEXT_MAX];
	int err;

	if (hw_cpu_online(c->hw, cc->cpu) != 1)
		return;
	err = prepare_cpu(c, st, cc, why, sizeof(why));
	if (!err && cc->state == CPU_PENDING)
		err = open_cpu(c, st, cc, why, sizeof(why));
	if (!err || (err == -ENXIO && hw_cpu_online(c->hw, cc->cpu) != 1)) {
		if (err && core_groups_open_any(cc)) {
			core_groups_close(&st->engine, cc, NULL);
			cc->state = CPU_PENDING;
		}
		return;
	}
	core_groups_close(&st->engine, cc, NULL);
	cc->state = CPU_UNUSABLE;
	c->errors++;
	/*
	 * Refused now, where the start could open: the privileges it had are
	 * gone.  Above paranoid 2 the perf engine's why says so itself.
	 */
	if (err == -EACCES && why[0] && c->hw->perf && perf_sys_paranoid_text(c->hw->perf, level,
									      sizeof(level)))
		collector_note(c, "cpu %d: back online, but %s", cc->cpu, why);
	else if ((err == -EACCES || err == -EPERM) && why[0])
		collector_note(c, "cpu %d: back online, but the kernel refused its events: %s",
			       cc->cpu, why);
	else
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
	err = core_groups_read(&st->engine, cc);
	cc->is_offline = err == -ENXIO;
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
			const struct engine_reading *r = core_reading_of(cc, slot);

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
				  engine_reading_reason(&st->engine, first, buf, sizeof(buf)));
	}
	return counts;
}

/*
 * The units: every CPU but those offline (not opened yet, or found offline
 * by the last read); one counts when an event counts there.  Up only when
 * every one does.
 */
static void count_units(struct collector *c, const struct core_state *st)
{
	unsigned n = 0, counting = 0;

	for (int j = 0; j < st->n_cpus; j++) {
		const struct core_cpu *cc = &st->cpus[j];
		bool counts = false;

		if (cc->state == CPU_PENDING || cc->is_offline)
			continue;
		n++;
		for (size_t i = 0; cc->state == CPU_OPEN && i < cc->n_group && !counts; i++)
			counts = slot_asked(cc, i) && cc->readings[i].state == ENGINE_COUNTING;
		counting += counts;
	}
	collector_units(c, n, counting);
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
			core_fill_cpu(c, s, st, cc);
		}
	}
	if (s && settings(c->conf)->per != CORE_PER_CPU)
		core_fill_sums(c, s, st, settings(c->conf)->per);
	counts = note_states(c, st);
	count_units(c, st);
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

	if (!st || c->engine == ENGINE_PERF)
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

/* --list-events on AMD (hardware-amd.md §3.3): every event on a GP counter, through perf. */
static void amd_list_events(const struct cpu_info *info, struct strbuf *out)
{
	strbuf_printf(out, "core (per logical CPU, %u programmable counters of %u bits, no fixed "
		      "counters; the NMI watchdog holds one; perf engine only):\n",
		      info->fac.amd_core_counters, info->fac.amd_core_counter_bits);
	strbuf_append(out, "  always counted:\n");
	strbuf_printf(out, "    %-34s %s\n", "instructions", "event=0xc0");
	strbuf_printf(out, "    %-34s %s\n", "cycles", "event=0x76");
	if (info->fac.has_ref_cycles)
		strbuf_printf(out, "    %-34s %s\n", "ref_cycles", "event=0x120 umask=0x01");
	else
		strbuf_printf(out, "    %-34s %s\n", "ref_cycles",
			      "not counted: Zen 2/3 have no reference-cycles event (Zen 4 and later)");
	event_list_builtins(EVENT_PMU_AMD_CORE, out, NULL, NULL);
	strbuf_append(out, "  l2_cache_requests and l2_cache_misses are what perf's cache-references and "
		      "cache-misses count on AMD: L2, not the last-level cache\n");
}

static void core_list_events(const struct cpu_info *info, struct strbuf *out)
{
	const struct cpu_perfmon *pm = &info->perfmon;

	if (info->fac.amd_zen) {
		amd_list_events(info, out);
		return;
	}
	if (info->fac.lacks_intel_core_pmu) {
		strbuf_append(out, "core: not available (no fixed counters, no CPUID leaf 0xA on this model)\n");
		return;
	}
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

/* The engine choice start-up makes (col_engine.h), asked before the privilege drop. */
static bool core_uses_perf(const struct conf *conf, struct perf_sys *ps)
{
	struct col_engine_choice ch;

	return col_engine_choose(settings(conf)->engine, ENGINE_PMU_CORE, core_conf_section.name,
				 ps, &ch) == 0 && ch.kind == ENGINE_PERF;
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
	.uses_perf = core_uses_perf,
};

