/*
 * Unit tests of the core-PMC collector against the register file: which
 * counters it takes and how it programs them, what it reports for the
 * ones it cannot take, wrap handling at the CPUID width, conflicts under
 * both policies, offline CPUs, refused writes and the restore on stop.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "col_core.h"
#include "collector.h"

/* Registered in collectors.c; named here to test them one by one. */
extern const struct collector_ops core_collector_ops;
extern const struct collector_ops thermal_collector_ops;
#include "config.h"
#include "event.h"
#include "metric.h"
#include "msr.h"
#include "prom.h"
#include "regfile.h"
#include "sample_views.h"
#include "sim.h"
#include "snapshot.h"

#define MAX_CPUS 8
#define N_GP 4
#define ALL_FIXED_CTRL UINT64_C(0x333)            /* EN_OS|EN_USR in nibbles 0..2 */
#define ALL_FIXED_GLOBAL (UINT64_C(7) << 32)
#define WATCHDOG_NIBBLE 0xbu                       /* OS|USR|PMI, hardware.md §5.5 */

struct perfmon_regs {
	unsigned version, n_gp, gp_width, ebx_length;
	uint32_t unavailable;
	unsigned n_fixed, fixed_width;
};


/* The collector's status as one sentence list (collector_reason). */
static char reason_buf[2048];
#define REASON(c) collector_reason((c), reason_buf, sizeof(reason_buf))

static const struct perfmon_regs westmere = { 3, N_GP, 48, 7, 0, 3, 48 };

struct fx {
	struct hw_cpu cpus[MAX_CPUS];
	struct cpu_core cores[MAX_CPUS];
	int socket_cpus[MAX_CPUS];
	struct cpu_socket socket;
	struct cpu_topology topo;
	struct cpu_info info;
	struct conf conf;
	struct regfile *rf;
	struct hw hw;
	struct collector c;
	struct snapshot *s;
	int n_cpus;
	struct perfmon_regs pm;
};

static const uint32_t per_cpu_msrs[] = {
	IA32_FIXED_CTR_CTRL, IA32_PERF_GLOBAL_CTRL,
	IA32_FIXED_CTR0, IA32_FIXED_CTR0 + 1, IA32_FIXED_CTR0 + 2,
	IA32_PERFEVTSEL0, IA32_PERFEVTSEL0 + 1, IA32_PERFEVTSEL0 + 2, IA32_PERFEVTSEL0 + 3,
	IA32_PMC0, IA32_PMC0 + 1, IA32_PMC0 + 2, IA32_PMC0 + 3,
};
#define N_PER_CPU_MSRS (sizeof(per_cpu_msrs) / sizeof(per_cpu_msrs[0]))

static void set_perfmon(struct fx *f, const struct perfmon_regs *pm)
{
	f->pm = *pm;
	regfile_set_cpuid(f->rf, 0xa, 0,
			  pm->version | pm->n_gp << 8 | pm->gp_width << 16 | pm->ebx_length << 24,
			  pm->unavailable, 0, pm->n_fixed | pm->fixed_width << 5);
	if (pm->version >= 4)
		regfile_define_all(f->rf, IA32_PERF_GLOBAL_INUSE, 0);
}

/* One socket of n_cpus single-thread cores, every PMU register zero. */
static struct fx *fx_new(int n_cpus)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->n_cpus = n_cpus;
	for (int cpu = 0; cpu < n_cpus; cpu++) {
		f->cpus[cpu] = (struct hw_cpu){ cpu, 0, 0, cpu, 0, true };
		f->cores[cpu] = (struct cpu_core){ .core = cpu, .n_cpus = 1, .cpus = { cpu } };
		f->socket_cpus[cpu] = cpu;
	}
	f->socket = (struct cpu_socket){ .socket = 0, .n_cores = n_cpus, .cores = f->cores,
					 .n_cpus = n_cpus, .cpus = f->socket_cpus };
	f->topo = (struct cpu_topology){ n_cpus, f->cpus, 1, &f->socket };
	core_settings_of(&f->conf)->enabled = true;
	core_settings_of(&f->conf)->on_conflict = CONF_CONFLICT_RECLAIM;
	f->conf.interval_s = 1;
	f->rf = regfile_new(f->cpus, n_cpus);
	regfile_bind(f->rf, &f->hw);
	for (size_t i = 0; i < N_PER_CPU_MSRS; i++)
		regfile_define_all(f->rf, per_cpu_msrs[i], 0);
	set_perfmon(f, &westmere);
	return f;
}

static void add_event(struct fx *f, const char *name, uint8_t code, uint8_t umask,
		      unsigned arch_event)
{
	struct event_spec *ev = &core_settings_of(&f->conf)->events[core_settings_of(&f->conf)->n_events++].spec;

	memset(ev, 0, sizeof(*ev));
	strcpy(ev->name, name);
	ev->code = code;
	ev->umask = umask;
	ev->arch_event = arch_event;
}

static int fx_start(struct fx *f)
{
	return collector_start(&f->c, &core_collector_ops, &f->hw, &f->info, &f->topo, &f->conf);
}

static void fx_sample(struct fx *f)
{
	snapshot_release(f->s);
	f->s = snapshot_new(&f->topo, &f->info);
	assert_non_null(f->s);
	collector_sample(&f->c, f->s);
}

static void fx_free(struct fx *f)
{
	collector_stop(&f->c);
	snapshot_release(f->s);
	hw_close(&f->hw);
	free(f);
}

static const struct cpu_view *cpu_of(struct fx *f, int cpu)
{
	assert_non_null(snapshot_cpu(f->s, cpu));
	return cpu_view(f->s, cpu);
}

static uint64_t get(struct fx *f, int cpu, uint32_t msr)
{
	return regfile_get(f->rf, cpu, msr);
}

/* Values of every per-CPU register, to compare before and after a run. */
struct regs_seen {
	uint64_t v[MAX_CPUS][N_PER_CPU_MSRS];
};

static void save_regs(struct fx *f, struct regs_seen *r)
{
	for (int cpu = 0; cpu < f->n_cpus; cpu++)
		for (size_t i = 0; i < N_PER_CPU_MSRS; i++)
			r->v[cpu][i] = get(f, cpu, per_cpu_msrs[i]);
}

/*
 * Every register as found, the counters included: the engine never writes
 * a counter while counting, and puts back the value each had when claimed.
 */
static void assert_regs_equal(struct fx *f, const struct regs_seen *r)
{
	for (int cpu = 0; cpu < f->n_cpus; cpu++)
		for (size_t i = 0; i < N_PER_CPU_MSRS; i++)
			if (get(f, cpu, per_cpu_msrs[i]) != r->v[cpu][i])
				fail_msg("cpu %d msr 0x%x: found 0x%llx, left 0x%llx", cpu,
					 per_cpu_msrs[i], (unsigned long long)r->v[cpu][i],
					 (unsigned long long)get(f, cpu, per_cpu_msrs[i]));
}

static uint64_t evtsel_of(const struct fx *f, int k)
{
	return event_core_evtsel(&core_settings_in(&f->conf)->events[k].spec);
}

static void programs_fixed_nibbles_and_global_bits(void **state)
{
	struct fx *f = fx_new(2);
	struct regs_seen before;

	(void)state;
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	add_event(f, "ev_b", 0xd1, 0x02, 0);
	save_regs(f, &before);
	assert_int_equal(fx_start(f), 0);
	assert_true(f->c.up);
	assert_string_equal(REASON(&f->c), "");
	for (int cpu = 0; cpu < 2; cpu++) {
		assert_int_equal(get(f, cpu, IA32_FIXED_CTR_CTRL), ALL_FIXED_CTRL);
		assert_int_equal(get(f, cpu, IA32_PERF_GLOBAL_CTRL), ALL_FIXED_GLOBAL | 0x3);
		assert_int_equal(get(f, cpu, IA32_PERFEVTSEL0), evtsel_of(f, 0));
		assert_int_equal(get(f, cpu, IA32_PERFEVTSEL0 + 1), evtsel_of(f, 1));
		assert_int_equal(get(f, cpu, IA32_PERFEVTSEL0 + 2), 0);
		/* Counters are never written. */
		assert_int_equal(regfile_writes(f->rf, cpu, IA32_PMC0), 0);
		assert_int_equal(regfile_writes(f->rf, cpu, IA32_FIXED_CTR0), 0);
	}
	fx_sample(f);
	assert_true(cpu_of(f, 1)->has_core_pmu);
	assert_true(cpu_of(f, 1)->has_instructions);
	assert_true(cpu_of(f, 1)->has_cycles);
	assert_true(cpu_of(f, 1)->has_ref_cycles);
	assert_int_equal(cpu_of(f, 1)->n_events, 2);
	assert_string_equal(cpu_of(f, 1)->events[1].name, "ev_b");
	assert_true(cpu_of(f, 1)->events[1].available);
	collector_stop(&f->c);
	assert_regs_equal(f, &before);
	fx_free(f);
}

static void counts_deltas_and_wraps_at_the_cpuid_width(void **state)
{
	static const struct perfmon_regs narrow = { 3, N_GP, 40, 7, 0, 3, 48 };
	const uint64_t top40 = (UINT64_C(1) << 40) - 1, top48 = (UINT64_C(1) << 48) - 1;
	struct fx *f = fx_new(1);

	(void)state;
	f->conf.interval_s = 0.01;
	set_perfmon(f, &narrow);
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	regfile_set(f->rf, 0, IA32_PMC0, top40 - 9);
	regfile_set(f->rf, 0, IA32_FIXED_CTR0, top48);
	regfile_set(f->rf, 0, IA32_FIXED_CTR0 + 1, 1000);
	assert_int_equal(fx_start(f), 0);
	regfile_set(f->rf, 0, IA32_PMC0, 5);
	regfile_set(f->rf, 0, IA32_FIXED_CTR0, 9);
	regfile_set(f->rf, 0, IA32_FIXED_CTR0 + 1, 3000);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->events[0].total, 15);
	assert_int_equal(cpu_of(f, 0)->instructions, 10);
	assert_int_equal(cpu_of(f, 0)->cycles, 2000);
	assert_int_equal(cpu_of(f, 0)->ref_cycles, 0);
	/* A 40-bit counter read with bits above 39 set does not add them. */
	regfile_set(f->rf, 0, IA32_PMC0, (UINT64_C(0xff) << 40) | 25);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->events[0].total, 35);
	fx_free(f);
}

static void watchdog_on_fixed_counter_1_is_left_alone(void **state)
{
	struct fx *f = fx_new(2);
	struct regs_seen before;

	(void)state;
	for (int cpu = 0; cpu < 2; cpu++) {
		regfile_set(f->rf, cpu, IA32_FIXED_CTR_CTRL, (uint64_t)WATCHDOG_NIBBLE << 4);
		regfile_set(f->rf, cpu, IA32_PERF_GLOBAL_CTRL, PERF_GLOBAL_CTRL_EN_FIXED(1));
	}
	regfile_set(f->rf, 0, IA32_FIXED_CTR0 + 1, 12345);   /* the watchdog's count */
	save_regs(f, &before);
	assert_int_equal(fx_start(f), 0);
	assert_true(f->c.up);
	/* Cycles moves to the first free GP counter: everything counts. */
	assert_string_equal(REASON(&f->c), "");
	for (int cpu = 0; cpu < 2; cpu++) {
		assert_int_equal(get(f, cpu, IA32_FIXED_CTR_CTRL), 0x3b3);
		assert_int_equal(get(f, cpu, IA32_PERFEVTSEL0),
				 PERFEVTSEL_EN | PERFEVTSEL_USR | PERFEVTSEL_OS | 0x3c);
		assert_int_equal(get(f, cpu, IA32_PERF_GLOBAL_CTRL),
				 ALL_FIXED_GLOBAL | PERF_GLOBAL_CTRL_EN_PMC(0));
	}
	regfile_set(f->rf, 0, IA32_PMC0, 777);
	fx_sample(f);
	assert_true(cpu_of(f, 0)->has_instructions);
	assert_true(cpu_of(f, 0)->has_cycles);
	assert_int_equal(cpu_of(f, 0)->cycles, 777);
	assert_true(cpu_of(f, 0)->has_ref_cycles);
	/* The watchdog's counter is never read nor written. */
	assert_int_equal(regfile_reads(f->rf, 0, IA32_FIXED_CTR0 + 1), 0);
	assert_int_equal(regfile_writes(f->rf, 0, IA32_FIXED_CTR0 + 1), 0);
	assert_int_equal(cpu_of(f, 0)->conflicts, 0);
	collector_stop(&f->c);
	assert_regs_equal(f, &before);
	fx_free(f);
}

struct busy_case {
	const char *name;
	unsigned version;
	uint32_t msr;
	uint64_t value;
	bool busy;       /* only the select's own EN bit means an owner (hardware-linux.md §1.5) */
};

static const struct busy_case busy_cases[] = {
	{ "enable bit", 3, IA32_PERFEVTSEL0, PERFEVTSEL_EN | PERFEVTSEL_OS | 0xc0, true },
	{ "interrupt bit", 3, IA32_PERFEVTSEL0, PERFEVTSEL_INT, false },
	{ "stale select perf left", 3, IA32_PERFEVTSEL0, 0x13003c, false },
	{ "global enable bit", 3, IA32_PERF_GLOBAL_CTRL, PERF_GLOBAL_CTRL_EN_PMC(0), false },
	{ "in-use bit (v4)", 4, IA32_PERF_GLOBAL_INUSE, PERF_GLOBAL_CTRL_EN_PMC(0), false },
};

static void busy_gp_counter_shifts_events_to_free_ones(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(busy_cases) / sizeof(busy_cases[0]); i++) {
		const struct busy_case *t = &busy_cases[i];
		struct perfmon_regs pm = westmere;
		struct fx *f = fx_new(2);
		struct regs_seen before;

		print_message("case: %s\n", t->name);
		pm.version = t->version;
		set_perfmon(f, &pm);
		add_event(f, "ev_a", 0xd1, 0x01, 0);
		add_event(f, "ev_b", 0xd1, 0x02, 0);
		regfile_set(f->rf, 0, t->msr, t->value);
		save_regs(f, &before);
		assert_int_equal(fx_start(f), 0);
		if (t->busy) {
			assert_int_equal(get(f, 0, IA32_PERFEVTSEL0 + 1), evtsel_of(f, 0));
			assert_int_equal(get(f, 0, IA32_PERFEVTSEL0 + 2), evtsel_of(f, 1));
			assert_int_equal(regfile_writes(f->rf, 0, IA32_PERFEVTSEL0), 0);
			assert_int_equal(get(f, 0, IA32_PERF_GLOBAL_CTRL) & 0x7, 0x6);
		} else {
			assert_int_equal(get(f, 0, IA32_PERFEVTSEL0), evtsel_of(f, 0));
			assert_int_equal(get(f, 0, IA32_PERFEVTSEL0 + 1), evtsel_of(f, 1));
			assert_int_equal(get(f, 0, IA32_PERF_GLOBAL_CTRL) & 0x7, 0x3);
		}
		/* The other CPU is unaffected. */
		assert_int_equal(get(f, 1, IA32_PERFEVTSEL0), evtsel_of(f, 0));
		fx_sample(f);
		assert_true(cpu_of(f, 0)->events[0].available);
		assert_true(cpu_of(f, 0)->events[1].available);
		collector_stop(&f->c);
		assert_regs_equal(f, &before);
		fx_free(f);
	}
}

static void too_many_events_are_unavailable_with_a_reason(void **state)
{
	static const char *const names[N_GP + 1] = { "ev0", "ev1", "ev2", "ev3", "ev_last" };
	struct fx *f = fx_new(1);

	(void)state;
	for (int k = 0; k < N_GP + 1; k++)
		add_event(f, names[k], 0xd1, (uint8_t)(1 << k), 0);
	regfile_set(f->rf, 0, IA32_PERFEVTSEL0 + 3, PERFEVTSEL_EN | 0x3c);
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	assert_true(cpu_of(f, 0)->events[2].available);
	assert_false(cpu_of(f, 0)->events[3].available);
	assert_false(cpu_of(f, 0)->events[4].available);
	assert_string_equal(cpu_of(f, 0)->events[4].name, "ev_last");
	assert_string_equal(cpu_of(f, 0)->events[4].reason,
			    "every counter that can count it is in use by another agent");
	assert_int_equal(cpu_of(f, 0)->events[4].total, 0);
	fx_free(f);
}

static void architectural_event_the_cpu_lacks_is_unavailable(void **state)
{
	struct perfmon_regs pm = westmere;
	struct fx *f = fx_new(1);

	(void)state;
	pm.unavailable = UINT32_C(1) << 4;      /* LLC misses, hardware.md §5.1 */
	set_perfmon(f, &pm);
	add_event(f, "llc_misses", 0x2e, 0x41, 4 + 1);
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	assert_int_equal(fx_start(f), 0);
	/* The missing event takes no counter. */
	assert_int_equal(get(f, 0, IA32_PERFEVTSEL0), evtsel_of(f, 1));
	fx_sample(f);
	assert_false(cpu_of(f, 0)->events[0].available);
	assert_string_equal(cpu_of(f, 0)->events[0].reason,
			    "architectural event not available on this CPU (CPUID.0AH:EBX bit 4)");
	assert_true(cpu_of(f, 0)->events[1].available);
	fx_free(f);
}

static void default_events_come_first(void **state)
{
	const struct event_spec *const *defaults;
	struct fx *f = fx_new(1);
	size_t n;

	(void)state;
	defaults = event_defaults(EVENT_PMU_CORE, &n);
	core_settings_of(&f->conf)->default_events = true;
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	add_event(f, defaults[0]->name, defaults[0]->code, defaults[0]->umask, 0);
	assert_int_equal(fx_start(f), 0);
	assert_string_equal(REASON(&f->c), "core event 'llc_references' listed twice, counted once");
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->n_events, (int)n + 1);
	for (size_t k = 0; k < n; k++) {
		assert_string_equal(cpu_of(f, 0)->events[k].name, defaults[k]->name);
		assert_int_equal(get(f, 0, IA32_PERFEVTSEL0 + (uint32_t)k),
				 event_core_evtsel(defaults[k]));
	}
	assert_string_equal(cpu_of(f, 0)->events[n].name, "ev_a");
	fx_free(f);
}

static void conflict_reclaim_rewrites_and_rebases(void **state)
{
	struct fx *f = fx_new(1);
	struct regs_seen before;

	(void)state;
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	save_regs(f, &before);
	assert_int_equal(fx_start(f), 0);
	regfile_set(f->rf, 0, IA32_PMC0, 1000);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->events[0].total, 1000);

	/* Another agent reprograms counter 0 and it counts its own event. */
	regfile_set(f->rf, 0, IA32_PERFEVTSEL0, PERFEVTSEL_EN | PERFEVTSEL_OS | 0x3c);
	regfile_set(f->rf, 0, IA32_PMC0, 5000);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->conflicts, 1);
	assert_int_equal(get(f, 0, IA32_PERFEVTSEL0), evtsel_of(f, 0));
	assert_int_equal(cpu_of(f, 0)->events[0].total, 1000);
	assert_true(cpu_of(f, 0)->events[0].available);
	regfile_set(f->rf, 0, IA32_PMC0, 5100);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->events[0].total, 1100);

	/*
	 * The watchdog takes fixed counter 1 (a takeover) and someone clears
	 * our global bits (a shared gate: no takeover, set again).
	 */
	regfile_set(f->rf, 0, IA32_FIXED_CTR_CTRL, 0x3b3);
	regfile_set(f->rf, 0, IA32_PERF_GLOBAL_CTRL, PERF_GLOBAL_CTRL_EN_FIXED(1));
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->conflicts, 1 + 1);
	assert_int_equal(get(f, 0, IA32_FIXED_CTR_CTRL), ALL_FIXED_CTRL);
	assert_int_equal(get(f, 0, IA32_PERF_GLOBAL_CTRL), ALL_FIXED_GLOBAL | 0x1);
	assert_true(cpu_of(f, 0)->has_cycles);
	assert_int_equal(f->c.errors, 0);
	/* Reclaimed once: the next sample sees no takeover again. */
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->conflicts, 1 + 1);
	collector_stop(&f->c);
	assert_regs_equal(f, &before);
	fx_free(f);
}

static void conflict_yield_forgets_without_writing(void **state)
{
	const uint64_t theirs = PERFEVTSEL_EN | PERFEVTSEL_OS | 0x3c;
	struct fx *f = fx_new(1);

	(void)state;
	core_settings_of(&f->conf)->on_conflict = CONF_CONFLICT_YIELD;
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	/* GP counters 1..3 are another agent's: nothing is left to move to. */
	for (uint32_t n = 1; n < N_GP; n++)
		regfile_set(f->rf, 0, IA32_PERFEVTSEL0 + n, theirs);
	assert_int_equal(fx_start(f), 0);
	regfile_set(f->rf, 0, IA32_PMC0, 1000);
	fx_sample(f);
	regfile_set(f->rf, 0, IA32_PERFEVTSEL0, theirs);
	regfile_set(f->rf, 0, IA32_PMC0, 5000);
	regfile_set(f->rf, 0, IA32_FIXED_CTR_CTRL, 0x3b3);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->conflicts, 2);
	assert_false(cpu_of(f, 0)->events[0].available);   /* its total not exported meanwhile */
	assert_string_equal(cpu_of(f, 0)->events[0].reason,
			    "yielded: another agent took its counter");
	assert_false(cpu_of(f, 0)->has_cycles);
	assert_true(cpu_of(f, 0)->has_instructions);
	assert_true(f->c.up);
	assert_string_equal(REASON(&f->c),
			    "cycles yielded on 1 of 1 CPUs: another agent took its counter; "
			    "ev_a yielded on 1 of 1 CPUs: another agent took its counter");
	assert_int_equal(regfile_writes(f->rf, 0, IA32_PERFEVTSEL0), 1);
	/* Later samples leave the yielded counters alone. */
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->conflicts, 2);
	assert_int_equal(regfile_writes(f->rf, 0, IA32_PERFEVTSEL0), 1);

	/* The agent leaves (perf's disable: EN clear, the rest kept): both are taken back. */
	regfile_set(f->rf, 0, IA32_PERFEVTSEL0, theirs & ~PERFEVTSEL_EN);
	regfile_set(f->rf, 0, IA32_FIXED_CTR_CTRL, 0x303);
	fx_sample(f);
	assert_true(cpu_of(f, 0)->events[0].available);
	assert_true(cpu_of(f, 0)->has_cycles);
	assert_string_equal(REASON(&f->c), "");
	regfile_set(f->rf, 0, IA32_PMC0, 5000 + 7);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->events[0].total, 1007);
	assert_int_equal(cpu_of(f, 0)->conflicts, 2);
	collector_stop(&f->c);
	/* What the agent left is put back as it left it; the rest as found at start. */
	assert_int_equal(get(f, 0, IA32_PERFEVTSEL0), theirs & ~PERFEVTSEL_EN);
	assert_int_equal(get(f, 0, IA32_PMC0), 5000);
	assert_int_equal(get(f, 0, IA32_FIXED_CTR_CTRL), 0);
	assert_int_equal(get(f, 0, IA32_PERF_GLOBAL_CTRL), 0);
	for (uint32_t n = 1; n < N_GP; n++)
		assert_int_equal(get(f, 0, IA32_PERFEVTSEL0 + n), theirs);
	fx_free(f);
}

static void offline_cpu_skipped_and_rebased_on_return(void **state)
{
	struct fx *f = fx_new(2);

	(void)state;
	regfile_set_online(f->rf, 1, false);
	assert_int_equal(fx_start(f), 0);
	assert_int_equal(regfile_writes(f->rf, 1, IA32_PERF_GLOBAL_CTRL), 0);
	fx_sample(f);
	assert_false(cpu_of(f, 1)->has_core_pmu);
	/* Online again: claimed at the next sample. */
	regfile_set_online(f->rf, 1, true);
	fx_sample(f);
	assert_true(cpu_of(f, 1)->has_core_pmu);
	assert_int_equal(get(f, 1, IA32_FIXED_CTR_CTRL), ALL_FIXED_CTRL);

	regfile_set(f->rf, 0, IA32_FIXED_CTR0, 100);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->instructions, 100);
	regfile_set_online(f->rf, 0, false);
	fx_sample(f);
	assert_false(cpu_of(f, 0)->has_core_pmu);
	assert_true(cpu_of(f, 1)->has_core_pmu);
	assert_int_equal(f->c.errors, 0);
	/*
	 * Back with a lower count: re-based; the interval's counts are lost,
	 * so it has no value (absent, not 0), and the total carries on.
	 */
	regfile_set(f->rf, 0, IA32_FIXED_CTR0, 50);
	regfile_set_online(f->rf, 0, true);
	fx_sample(f);
	assert_false(cpu_of(f, 0)->has_instructions);
	regfile_set(f->rf, 0, IA32_FIXED_CTR0, 80);
	fx_sample(f);
	assert_int_equal(cpu_of(f, 0)->instructions, 130);
	assert_int_equal(cpu_of(f, 0)->conflicts, 0);
	fx_free(f);
}

/*
 * Another agent takes every counter of CPU 1: the collector counts on one
 * of its two CPUs, so it is partial, not up; an offline CPU is no unit.
 */
static void counting_on_some_cpus_is_partial(void **state)
{
	struct fx *f = fx_new(2);
	const struct snapshot_collector *sc;

	(void)state;
	core_settings_of(&f->conf)->on_conflict = CONF_CONFLICT_YIELD;
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	assert_true(f->c.up);
	assert_int_equal(f->c.units, 2);
	assert_int_equal(f->c.units_counting, 2);
	/* Every fixed counter and, so that nothing moves there, every GP counter. */
	regfile_set(f->rf, 1, IA32_FIXED_CTR_CTRL, 0xbbb);
	for (uint32_t n = 0; n < N_GP; n++)
		regfile_set(f->rf, 1, IA32_PERFEVTSEL0 + n, PERFEVTSEL_EN | PERFEVTSEL_OS | 0x3c);
	fx_sample(f);
	assert_false(f->c.up);
	assert_int_equal(f->c.units, 2);
	assert_int_equal(f->c.units_counting, 1);
	sc = snapshot_find_collector(f->s, "core");
	assert_non_null(sc);
	assert_string_equal(snapshot_collector_state(sc), "partial");
	assert_int_equal(sc->units_counting, 1);
	/* CPU 1 offline: the one CPU left counts, so the collector is up. */
	regfile_set_online(f->rf, 1, false);
	fx_sample(f);
	assert_true(f->c.up);
	assert_int_equal(f->c.units, 1);
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(f->s, "core")), "up");
	fx_free(f);
}

static void refused_writes_leave_everything_alone(void **state)
{
	struct fx *f = fx_new(2);
	struct regs_seen before;

	(void)state;
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	regfile_refuse_writes(f->rf, true);
	save_regs(f, &before);
	assert_int_equal(fx_start(f), -EPERM);
	assert_false(f->c.up);
	assert_memory_equal(REASON(&f->c), "cpu 0: cannot program the core PMU: ", 36);
	assert_true(strlen(REASON(&f->c)) > 36);
	assert_regs_equal(f, &before);
	for (size_t i = 0; i < N_PER_CPU_MSRS; i++)
		assert_int_equal(regfile_writes(f->rf, -1, per_cpu_msrs[i]), 0);
	fx_free(f);
}

static void interval_too_long_for_the_counter_width_is_refused(void **state)
{
	static const struct perfmon_regs narrow = { 3, N_GP, 32, 7, 0, 3, 48 };
	struct fx *f = fx_new(1);

	(void)state;
	set_perfmon(f, &narrow);
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	assert_int_equal(fx_start(f), -EINVAL);
	assert_string_equal(REASON(&f->c),
			    "interval 1 s is too long for 32-bit core counters: at 6e+09 events/s "
			    "they wrap every 0.716 s, so the interval must be at most 0.179 s");
	assert_int_equal(f->hw.n_writes, 0);
	fx_free(f);

	f = fx_new(1);
	set_perfmon(f, &narrow);
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	f->conf.interval_s = 0.1;
	assert_int_equal(fx_start(f), 0);
	fx_free(f);
}

static void reads_per_sample_match_what_a_sample_reads(void **state)
{
	struct fx *f = fx_new(2);
	uint64_t reads;

	(void)state;
	add_event(f, "ev_a", 0xd1, 0x01, 0);
	add_event(f, "ev_b", 0xd1, 0x02, 0);
	regfile_set(f->rf, 1, IA32_FIXED_CTR_CTRL, (uint64_t)WATCHDOG_NIBBLE << 4);
	assert_int_equal(fx_start(f), 0);
	/*
	 * Each CPU: 1 (global control) + 2 per counted event (the counter and
	 * its own select or fixed control), 5 events each (on cpu 1 cycles
	 * counts on a GP counter, the watchdog holding fixed counter 1).
	 */
	assert_int_equal(core_collector_reads_per_sample(&f->c), 11 + 11);
	reads = f->hw.n_reads;
	fx_sample(f);
	assert_int_equal(f->hw.n_reads - reads, 22);
	fx_free(f);
}

static void disabled_in_config_does_not_start(void **state)
{
	struct fx *f = fx_new(1);

	(void)state;
	core_settings_of(&f->conf)->enabled = false;
	assert_int_equal(fx_start(f), -ENOTSUP);
	assert_string_equal(REASON(&f->c), "disabled in the configuration");
	assert_int_equal(f->hw.n_writes, 0);
	assert_int_equal(core_collector_reads_per_sample(&f->c), 0);
	fx_free(f);
}

/*
 * End to end on the simulator: the thermal and core collectors together on
 * every simulated Intel model, with the values checked for plausibility
 * and the whole register file compared, after stop, with a twin machine
 * that ran the same time without uncored.  Only the core counters uncored
 * enabled may differ: they counted, and uncored never writes counters.
 */
static const char *const sim_models[] = { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s" };

struct reg_dump {
	size_t n, cap;
	struct { int cpu; uint32_t msr; uint64_t value; } *regs;
};

static void dump_one(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	struct reg_dump *d = arg;

	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->regs = realloc(d->regs, d->cap * sizeof(*d->regs));
		assert_non_null(d->regs);
	}
	d->regs[d->n].cpu = cpu;
	d->regs[d->n].msr = msr;
	d->regs[d->n++].value = value;
}

static bool is_core_counter(uint32_t msr)
{
	return (msr >= IA32_PMC0 && msr < IA32_PMC0 + 8) ||
	       (msr >= IA32_FIXED_CTR0 && msr < IA32_FIXED_CTR0 + 4);
}

struct sim_machine {
	struct sim *sim;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
};

static void machine_open(struct sim_machine *m, const char *model)
{
	char err[256];

	m->sim = sim_open(model, UNCORED_SCENARIO_DIR, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!m->sim)
		fail_msg("%s: %s", model, err);
	sim_bind(m->sim, &m->hw);
	if (cpu_detect(&m->hw, &m->info, err, sizeof(err)))
		fail_msg("%s: %s", model, err);
	if (cpu_topology_load(&m->hw, &m->topo, err, sizeof(err)))
		fail_msg("%s: %s", model, err);
}

static void machine_close(struct sim_machine *m)
{
	cpu_topology_free(&m->topo);
	hw_close(&m->hw);
}

/* The thermal collector's family with json_key. */
static const struct metric_family *thermal_family(const char *json_key)
{
	const struct collector_ops *ops = collector_find("thermal");

	for (size_t i = 0; ops && i < ops->n_families; i++)
		if (strcmp(ops->families[i]->json_key, json_key) == 0)
			return ops->families[i];
	fail_msg("no thermal family %s", json_key);
	return NULL;
}

static void check_thermal_values(const struct sim_machine *m, const struct snapshot *s)
{
	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *ss = &s->sockets[i];
		const struct metric_sample *tjmax =
			snapshot_find_signal(s, METRIC_SIGNAL_TJMAX, METRIC_SCOPE_SOCKET, ss->socket);
		const struct metric_sample *pkg =
			snapshot_find_signal(s, METRIC_SIGNAL_THROTTLING, METRIC_SCOPE_SOCKET, ss->socket);

		assert_non_null(tjmax);
		assert_in_range(metric_sample_int(tjmax), 70, 125);
		assert_int_equal(pkg != NULL, m->info.fac.has_package_thermal);
		assert_int_equal(snapshot_find_sample(s, thermal_family("package_throttled_seconds"),
						      ss->socket, NULL) != NULL,
				 m->info.fac.has_rapl_perf_status);
		for (int k = 0; k < ss->n_cores; k++) {
			const struct metric_sample *temp =
				snapshot_find_core_signal(s, &ss->cores[k], METRIC_SIGNAL_TEMPERATURE);

			assert_non_null(snapshot_find_core_signal(s, &ss->cores[k],
								  METRIC_SIGNAL_THROTTLING));
			if (temp)
				assert_in_range(metric_sample_int(temp), 1, metric_sample_int(tjmax));
		}
	}
}

static void check_core_values(const struct snapshot *s, double seconds)
{
	const uint64_t most = (uint64_t)(seconds * CORE_MAX_EVENT_RATE_HZ);

	for (int i = 0; i < s->n_cpus; i++) {
		const struct cpu_view *sp = cpu_view(s, s->cpus[i].cpu);

		assert_true(sp->has_core_pmu);
		assert_true(sp->has_instructions);
		assert_true(sp->has_ref_cycles);
		assert_in_range(sp->instructions, 0, most);
		assert_in_range(sp->ref_cycles, 0, most);
		/* The watchdog holds fixed counter 1 at boot: cycles counts on a GP counter. */
		assert_true(sp->has_cycles);
		assert_in_range(sp->cycles, 0, most);
		assert_int_equal(sp->conflicts, 0);
		for (int k = 0; k < sp->n_events; k++)
			if (sp->events[k].available)
				assert_in_range(sp->events[k].total, 0, most);
	}
}

static void assert_exact(struct sim_machine *m, int cpu, uint8_t code, uint8_t umask,
			 uint64_t total)
{
	uint64_t truth;

	assert_int_equal(sim_ground_truth(m->sim, false, cpu, code, umask, false, &truth), 0);
	assert_int_equal(total, truth);
}

/*
 * The collectors start at simulated time 0, so every total must equal
 * what the simulated hardware generated since open.
 */
static void check_core_exact(struct sim_machine *m, const struct snapshot *s)
{
	uint64_t all_instructions = 0;

	for (int i = 0; i < s->n_cpus; i++) {
		const struct cpu_view *sp = cpu_view(s, s->cpus[i].cpu);

		assert_exact(m, s->cpus[i].cpu, 0xc0, 0x00, sp->instructions);
		assert_exact(m, s->cpus[i].cpu, 0x3c, 0x01, sp->ref_cycles);
		assert_exact(m, s->cpus[i].cpu, 0x3c, 0x00, sp->cycles);
		for (int k = 0; k < sp->n_events; k++) {
			const struct event_spec *ev = event_builtin(EVENT_PMU_CORE, sp->events[k].name);

			if (sp->events[k].available && ev)
				assert_exact(m, s->cpus[i].cpu, ev->code, ev->umask, sp->events[k].total);
		}
		all_instructions += sp->instructions;
	}
	assert_true(all_instructions > 0);
}

static struct snapshot *sample_both(struct sim_machine *m, struct collector *cols)
{
	struct snapshot *s = snapshot_new(&m->topo, &m->info);

	assert_non_null(s);
	collector_sample(&cols[0], s);
	collector_sample(&cols[1], s);
	return s;
}

/* The value of the core collector's family name of scope at where with label, or NULL. */
static const struct metric_sample *core_value(const struct snapshot *s, const char *name,
					      enum metric_scope scope, int where, const char *label)
{
	const struct collector_ops *ops = collector_find("core");

	for (size_t i = 0; i < ops->n_families; i++) {
		const struct metric_family *f = ops->families[i];

		if (f->name && strcmp(f->name, name) == 0 && f->scope == scope)
			return snapshot_find_sample(s, f, where, label);
	}
	fail_msg("no family %s of that scope", name);
	return NULL;
}

/* The per-CPU value of name (with label) summed over cpus[0..n); *ret_any: some CPU had it. */
static uint64_t cpu_sum(const struct snapshot *s, const char *name, const char *label,
			const int *cpus, int n, bool *ret_any)
{
	uint64_t sum = 0;

	*ret_any = false;
	for (int i = 0; i < n; i++) {
		const struct metric_sample *v = core_value(s, name, METRIC_SCOPE_CPU, cpus[i], label);

		if (v) {
			sum += v->value.u;
			*ret_any = true;
		}
	}
	return sum;
}

/* What per = core or socket exports at where equals the sum of per = cpu over cpus. */
static void assert_sums(const struct snapshot *by_cpu, const struct snapshot *summed,
			enum metric_scope scope, int where, const int *cpus, int n)
{
	static const char *const fixed[] = { "uncored_core_instructions_total",
					     "uncored_core_cycles_total",
					     "uncored_core_ref_cycles_total" };
	static const char *const events[] = { "llc_references", "llc_misses", "branch_misses" };
	bool any;

	for (size_t k = 0; k < 3; k++) {
		const struct metric_sample *v = core_value(summed, fixed[k], scope, where, NULL);
		uint64_t want = cpu_sum(by_cpu, fixed[k], NULL, cpus, n, &any);

		assert_true(any);
		assert_non_null(v);
		assert_true(v->value.u > 0);
		assert_int_equal(v->value.u, want);
		assert_null(core_value(summed, fixed[k], METRIC_SCOPE_CPU, cpus[0], NULL));
	}
	for (size_t k = 0; k < 3; k++) {
		const struct metric_sample *v = core_value(summed, "uncored_core_events_total", scope,
							   where, events[k]);
		uint64_t want = cpu_sum(by_cpu, "uncored_core_events_total", events[k], cpus, n, &any);

		assert_true(any);
		assert_non_null(v);
		assert_int_equal(v->value.u, want);
	}
}

static char *prom_text(const struct snapshot *s)
{
	struct strbuf sb;
	char *text;

	strbuf_init(&sb);
	assert_int_equal(prom_write(s, &sb), 0);
	text = strbuf_steal(&sb, NULL);
	assert_non_null(text);
	return text;
}

/*
 * [core] per = core and per = socket: on twin simulated machines that
 * run the same time, every sum equals the sum of the per-CPU values of
 * the CPUs of its place, with labels socket,core or socket and no per-CPU
 * series left.
 */
static void per_core_and_socket_sum_the_cpus(void **state)
{
	static const char *const names[] = { "cpu", "core", "socket" };

	(void)state;
	for (int per = 1; per <= 2; per++) {
		struct sim_machine m, twin;
		struct collector by_cpu, summed;
		struct conf conf, conf_summed;
		struct snapshot *a = NULL, *b = NULL;
		char *text;

		print_message("per = %s\n", names[per]);
		machine_open(&m, "westmere-ep-2s");
		machine_open(&twin, "westmere-ep-2s");
		conf_defaults(&conf);
		conf_summed = conf;
		core_settings_of(&conf_summed)->per = per;
		assert_int_equal(collector_start(&by_cpu, &core_collector_ops, &m.hw, &m.info, &m.topo,
						 &conf), 0);
		assert_int_equal(collector_start(&summed, &core_collector_ops, &twin.hw, &twin.info,
						 &twin.topo, &conf_summed), 0);
		for (int i = 0; i < 3; i++) {
			snapshot_release(a);
			snapshot_release(b);
			sim_advance(m.sim, 1.0);
			sim_advance(twin.sim, 1.0);
			a = snapshot_new(&m.topo, &m.info);
			b = snapshot_new(&twin.topo, &twin.info);
			assert_non_null(a);
			assert_non_null(b);
			collector_sample(&by_cpu, a);
			collector_sample(&summed, b);
		}
		for (int i = 0; i < twin.topo.n_sockets; i++) {
			const struct cpu_socket *cs = &twin.topo.sockets[i];

			if (per == 2) {
				assert_sums(a, b, METRIC_SCOPE_SOCKET, cs->socket, cs->cpus, cs->n_cpus);
				continue;
			}
			for (int j = 0; j < cs->n_cores; j++)
				assert_sums(a, b, METRIC_SCOPE_CORE, cs->cores[j].cpus[0],
					    cs->cores[j].cpus, cs->cores[j].n_cpus);
		}
		text = prom_text(b);
		if (per == 1) {
			assert_non_null(strstr(text, "\nuncored_core_instructions_total{socket=\"1\","
						     "core=\"0\"} "));
			assert_non_null(strstr(text, "\nuncored_core_events_total{socket=\"0\",core=\"1\","
						     "event=\"llc_misses\"} "));
			assert_non_null(strstr(text, "\nuncored_pmu_conflicts_total{collector=\"core\","
						     "socket=\"1\",core=\"0\"} 0\n"));
		} else {
			assert_non_null(strstr(text, "\nuncored_core_instructions_total{socket=\"1\"} "));
			assert_non_null(strstr(text, "\nuncored_core_events_total{socket=\"0\","
						     "event=\"llc_misses\"} "));
			assert_non_null(strstr(text, "\nuncored_pmu_conflicts_total{collector=\"core\","
						     "socket=\"1\"} 0\n"));
			assert_null(strstr(text, "core=\""));
		}
		assert_null(strstr(text, "cpu=\""));
		free(text);
		snapshot_release(a);
		snapshot_release(b);
		collector_stop(&summed);
		collector_stop(&by_cpu);
		machine_close(&twin);
		machine_close(&m);
	}
}

/* The core collector's multiplexing ratio of scope at where in s, or -1 when it has none. */
static double ratio_at(const struct snapshot *s, enum metric_scope scope, int where)
{
	const struct collector_ops *ops = &core_collector_ops;

	for (size_t i = 0; i < ops->n_families; i++) {
		const struct metric_family *f = ops->families[i];
		const struct metric_sample *v;

		if (!f->name || strcmp(f->name, "uncored_core_multiplexing_ratio") != 0 ||
		    f->scope != scope)
			continue;
		v = snapshot_find_sample(s, f, where, NULL);
		return v ? v->value.d : -1.0;
	}
	fail_msg("no multiplexing ratio of scope %d", (int)scope);
	return -1.0;
}

/*
 * per = core and socket on the perf engine with more events than counters
 * (westmere-ep-2s): the multiplexing ratio of a core or socket is the
 * smallest of its CPUs' (a twin machine counted per CPU), below 1, and no
 * CPU has one of its own.
 */
static void per_core_and_socket_ratio_is_the_smallest_of_the_cpus(void **state)
{
	static const char text[] =
		"[core]\n"
		"event = branch_instructions\n"
		"event = ref_cycles_gp, event=0x3c, umask=0x01\n"
		"event = branch_misses_again, event=0xc5, umask=0x00\n";
	static const char *const names[] = { "cpu", "core", "socket" };

	(void)state;
	for (int per = 1; per <= 2; per++) {
		struct sim_machine m, twin;
		struct collector by_cpu, summed;
		struct conf conf, conf_summed;
		struct conf_errors errs;
		struct snapshot *a, *b;
		char err[512];

		print_message("per = %s\n", names[per]);
		machine_open(&m, "westmere-ep-2s");
		machine_open(&twin, "westmere-ep-2s");
		if (sim_attach_perf(m.sim, &m.hw, err, sizeof(err)) ||
		    sim_attach_perf(twin.sim, &twin.hw, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(conf_load_string("t.conf", text, &conf, &errs), 0);
		conf_summed = conf;
		core_settings_of(&conf_summed)->per = per;
		assert_int_equal(collector_start(&by_cpu, &core_collector_ops, &m.hw, &m.info, &m.topo,
						 &conf), 0);
		assert_int_equal(collector_start(&summed, &core_collector_ops, &twin.hw, &twin.info,
						 &twin.topo, &conf_summed), 0);
		assert_int_equal(summed.engine, ENGINE_PERF);
		sim_advance(m.sim, 1.0);
		sim_advance(twin.sim, 1.0);
		a = snapshot_new(&m.topo, &m.info);
		b = snapshot_new(&twin.topo, &twin.info);
		assert_non_null(a);
		assert_non_null(b);
		collector_sample(&by_cpu, a);
		collector_sample(&summed, b);
		for (int i = 0; i < twin.topo.n_cpus; i++)
			assert_true(ratio_at(b, METRIC_SCOPE_CPU, twin.topo.cpus[i].cpu) == -1.0);
		for (int i = 0; i < twin.topo.n_sockets; i++) {
			const struct cpu_socket *cs = &twin.topo.sockets[i];

			for (int j = 0; j < cs->n_cores; j++) {
				const struct cpu_core *cr = &cs->cores[j];
				double core_min = 2.0;

				for (int k = 0; k < cr->n_cpus; k++) {
					double r = ratio_at(a, METRIC_SCOPE_CPU, cr->cpus[k]);

					assert_true(r > 0.0 && r < 1.0);
					if (r < core_min)
						core_min = r;
				}
				if (per == 1)
					assert_true(ratio_at(b, METRIC_SCOPE_CORE, cr->cpus[0]) == core_min);
			}
			if (per == 2) {
				double socket_min = 2.0;

				for (int k = 0; k < cs->n_cpus; k++)
					if (ratio_at(a, METRIC_SCOPE_CPU, cs->cpus[k]) < socket_min)
						socket_min = ratio_at(a, METRIC_SCOPE_CPU, cs->cpus[k]);
				assert_true(ratio_at(b, METRIC_SCOPE_SOCKET, cs->socket) == socket_min);
			}
		}
		snapshot_release(a);
		snapshot_release(b);
		collector_stop(&summed);
		collector_stop(&by_cpu);
		machine_close(&twin);
		machine_close(&m);
	}
}

static void run_model(const char *model)
{
	struct sim_machine m, twin;
	struct reg_dump ours = { 0 }, theirs = { 0 };
	struct collector cols[2];
	struct snapshot *s;
	struct conf conf;

	print_message("model: %s\n", model);
	machine_open(&m, model);
	machine_open(&twin, model);
	conf_defaults(&conf);
	assert_int_equal(collector_start(&cols[0], &thermal_collector_ops, &m.hw, &m.info,
					 &m.topo, &conf), 0);
	assert_int_equal(collector_start(&cols[1], &core_collector_ops, &m.hw, &m.info,
					 &m.topo, &conf), 0);
	snapshot_release(sample_both(&m, cols));
	/* The machine boots as Linux leaves it: the NMI watchdog's nibble is left alone. */
	for (int i = 0; i < m.topo.n_cpus; i++) {
		uint64_t v;

		assert_int_equal(hw_read_msr(&m.hw, m.topo.cpus[i].cpu, IA32_FIXED_CTR_CTRL, &v), 0);
		assert_int_equal((v >> 4) & 0xf, WATCHDOG_NIBBLE);
	}
	for (int i = 0; i < 3; i++) {
		sim_advance(m.sim, 1.0);
		sim_advance(twin.sim, 1.0);
		s = sample_both(&m, cols);
		check_thermal_values(&m, s);
		check_core_values(s, 1.0 + i);
		check_core_exact(&m, s);
		snapshot_release(s);
	}
	assert_int_equal(cols[0].errors, 0);
	assert_int_equal(cols[1].errors, 0);
	collector_stop(&cols[1]);
	collector_stop(&cols[0]);
	sim_dump(m.sim, dump_one, &ours);
	sim_dump(twin.sim, dump_one, &theirs);
	assert_true(ours.n > 0);
	assert_int_equal(ours.n, theirs.n);
	for (size_t i = 0; i < ours.n; i++) {
		assert_int_equal(ours.regs[i].cpu, theirs.regs[i].cpu);
		assert_int_equal(ours.regs[i].msr, theirs.regs[i].msr);
		if (!is_core_counter(ours.regs[i].msr) && ours.regs[i].value != theirs.regs[i].value)
			fail_msg("%s: cpu %d msr 0x%x is 0x%llx, untouched twin has 0x%llx", model,
				 ours.regs[i].cpu, (unsigned)ours.regs[i].msr,
				 (unsigned long long)ours.regs[i].value,
				 (unsigned long long)theirs.regs[i].value);
	}
	free(ours.regs);
	free(theirs.regs);
	machine_close(&twin);
	machine_close(&m);
}

static void both_collectors_on_every_simulated_model(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sim_models) / sizeof(sim_models[0]); i++)
		run_model(sim_models[i]);
}

/* The core collector's multiplexing ratio of cpu in s, or -1 when it has none. */
static double multiplexing_ratio(const struct snapshot *s, int cpu)
{
	const struct metric_sample *v =
		snapshot_find_sample(s, family_of("core", "uncored_core_multiplexing_ratio"), cpu, NULL);

	return v ? v->value.d : -1.0;
}

/*
 * Every simulated Intel model, booted as Linux leaves it, with the
 * simulator's kernel perf beside it as the daemon runs it: the core
 * collector counts through perf by default (exactly the ground truth: in
 * the boot state every event has a counter, the ratio is 1), and through
 * the msr engine with engine = msr.
 */
static void every_model_counts_through_perf_by_default(void **state)
{
	(void)state;
	for (const char *const *model = sim_model_names(); *model; model++) {
		for (int want_msr = 0; want_msr < 2; want_msr++) {
			struct sim_machine m;
			struct collector c;
			struct conf conf;
			struct conf_errors errs;
			char err[512];
			struct snapshot *s;

			m.sim = sim_open(*model, UNCORED_SCENARIO_DIR, SIM_CLOCK_STEPPED, err, sizeof(err));
			assert_non_null(m.sim);
			sim_bind(m.sim, &m.hw);
			if (cpu_detect(&m.hw, &m.info, err, sizeof(err)) ||
			    m.info.fac.lacks_intel_core_pmu) {
				hw_close(&m.hw);   /* not a CPU with Intel's core PMU */
				break;
			}
			print_message("%s, %s\n", *model, want_msr ? "engine = msr" : "default");
			assert_int_equal(cpu_topology_load(&m.hw, &m.topo, err, sizeof(err)), 0);
			if (sim_attach_perf(m.sim, &m.hw, err, sizeof(err)))
				fail_msg("%s", err);
			assert_int_equal(conf_load_string("t.conf", want_msr ? "[core]\nengine = msr\n" : "",
							  &conf, &errs), 0);
			assert_int_equal(collector_start(&c, &core_collector_ops, &m.hw, &m.info, &m.topo,
							 &conf), 0);
			assert_int_equal(c.engine, want_msr ? ENGINE_MSR : ENGINE_PERF);
			assert_string_equal(c.engine_why, want_msr ? "engine = msr in [core]" :
					    "the kernel has a core PMU (engine = auto)");
			sim_advance(m.sim, 1.0);
			s = snapshot_new(&m.topo, &m.info);
			assert_non_null(s);
			collector_sample(&c, s);
			assert_true(c.up);
			check_core_exact(&m, s);
			for (int i = 0; i < s->n_cpus; i++)
				assert_true(multiplexing_ratio(s, s->cpus[i].cpu) == (want_msr ? -1.0 : 1.0));
			assert_string_equal(s->collectors[0].engine, want_msr ? "msr" : "perf");
			snapshot_release(s);
			assert_int_equal(c.errors, 0);
			collector_stop(&c);
			assert_int_equal(sim_perf_open_events(m.sim), 0);
			machine_close(&m);
		}
	}
}

static bool within_2_percent(uint64_t got, uint64_t want)
{
	double d = (double)got - (double)want;

	return want > 0 && (d < 0 ? -d : d) <= 0.02 * (double)want;
}

/* model booted as Linux leaves it, with the kernel's perf, and the core collector started on it with text. */
static void start_on_perf(struct sim_machine *m, struct collector *c, struct conf *conf,
			  const char *model, const char *text)
{
	struct conf_errors errs;
	char err[512];

	machine_open(m, model);
	if (sim_attach_perf(m->sim, &m->hw, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(conf_load_string("t.conf", text, conf, &errs), 0);
	assert_int_equal(collector_start(c, &core_collector_ops, &m->hw, &m->info, &m->topo, conf), 0);
	assert_int_equal(c->engine, ENGINE_PERF);
}

/* One simulated second later, a sample of c (up), for the caller to release. */
static struct snapshot *sample_second(struct sim_machine *m, struct collector *c)
{
	struct snapshot *s = snapshot_new(&m->topo, &m->info);

	sim_advance(m->sim, 1.0);
	assert_non_null(s);
	collector_sample(c, s);
	assert_true(c->up);
	return s;
}

/*
 * More core events than counters on the perf engine (westmere-ep: 4 GP
 * counters per CPU; cycles on one of them beside the NMI watchdog, and 6
 * configured events, none of which a fixed counter could take): the
 * engine splits the group the kernel refuses, the kernel takes turns, and the collector's totals,
 * scaled by time enabled over time running, stay within 2 % of the
 * simulator's ground truth, while the multiplexing ratio below 1 is
 * exported for every CPU.
 */
static void multiplexed_events_are_scaled_and_the_ratio_exported(void **state)
{
	static const char text[] =
		"[core]\n"
		"event = branch_instructions\n"
		"event = ref_cycles_gp, event=0x3c, umask=0x01\n"
		"event = branch_misses_again, event=0xc5, umask=0x00\n";
	struct sim_machine m;
	struct collector c;
	struct conf conf;

	(void)state;
	start_on_perf(&m, &c, &conf, "westmere-ep-2s", text);
	for (int step = 0; step < 5; step++) {
		struct snapshot *s = sample_second(&m, &c);

		for (int i = 0; i < s->n_cpus; i++) {
			const struct cpu_view *sp = cpu_view(s, s->cpus[i].cpu);
			int cpu = s->cpus[i].cpu;
			double ratio = multiplexing_ratio(s, cpu);
			uint64_t truth;

			assert_int_equal(sp->n_events, 6);
			for (int k = 0; k < sp->n_events; k++) {
				const struct conf_event *ce = NULL;
				const struct event_spec *ev = event_builtin(EVENT_PMU_CORE, sp->events[k].name);

				for (int j = 0; !ev && j < core_settings_of(&conf)->n_events; j++)
					if (strcmp(core_settings_of(&conf)->events[j].spec.name, sp->events[k].name) == 0)
						ce = &core_settings_of(&conf)->events[j];
				if (!ev)
					ev = &ce->spec;
				if (!sp->events[k].available)
					fail_msg("cpu %d %s: %s", cpu, sp->events[k].name,
						 sp->events[k].reason);
				assert_int_equal(sim_ground_truth(m.sim, false, cpu, ev->code, ev->umask,
								  ev->edge, &truth), 0);
				if (!within_2_percent(sp->events[k].total, truth))
					fail_msg("cpu %d %s: scaled %llu, truth %llu", cpu,
						 sp->events[k].name, (unsigned long long)sp->events[k].total,
						 (unsigned long long)truth);
			}
			assert_int_equal(sim_ground_truth(m.sim, false, cpu, 0x3c, 0, false, &truth), 0);
			assert_true(within_2_percent(sp->cycles, truth));
			/* Six GP events and cycles on four GP counters: each runs part of the time. */
			assert_true(ratio > 0.1 && ratio < 0.9);
		}
		snapshot_release(s);
	}
	assert_int_equal(c.errors, 0);
	collector_stop(&c);
	assert_int_equal(sim_perf_open_events(m.sim), 0);
	machine_close(&m);
}

/*
 * skylake-sp-2s has 4 GP counters per CPU, and the NMI watchdog holds
 * fixed counter 1, so cycles needs a GP counter.  The 3 default events and
 * one configured event fill the 4 GP counters: in one group with the fixed
 * events (5 GP counters wanted) the kernel never scheduled any of them,
 * instructions included.  In two groups they take turns: every CPU counts
 * instructions and cycles (scaled, within 2 % of the simulator's ground
 * truth), and the configured event too.
 */
static void a_gp_group_that_does_not_fit_leaves_the_fixed_group_counting(void **state)
{
	static const char text[] = "[core]\nevent = branch_instructions\n";
	struct sim_machine m;
	struct collector c;
	struct conf conf;
	const struct event_spec *bi = event_builtin(EVENT_PMU_CORE, "branch_instructions");

	(void)state;
	start_on_perf(&m, &c, &conf, "skylake-sp-2s", text);
	for (int step = 0; step < 3; step++) {
		struct snapshot *s = sample_second(&m, &c);

		for (int i = 0; i < s->n_cpus; i++) {
			const struct cpu_view *sp = cpu_view(s, s->cpus[i].cpu);
			int cpu = s->cpus[i].cpu;
			uint64_t truth;

			assert_true(sp->has_instructions && sp->has_cycles);
			assert_int_equal(sim_ground_truth(m.sim, false, cpu, 0xc0, 0, false, &truth), 0);
			if (!within_2_percent(sp->instructions, truth))
				fail_msg("cpu %d instructions: scaled %llu, truth %llu", cpu,
					 (unsigned long long)sp->instructions, (unsigned long long)truth);
			assert_int_equal(sim_ground_truth(m.sim, false, cpu, 0x3c, 0, false, &truth), 0);
			assert_true(within_2_percent(sp->cycles, truth));
			for (int k = 0; k < sp->n_events; k++) {
				if (strcmp(sp->events[k].name, "branch_instructions") != 0)
					continue;
				assert_true(sp->events[k].available);
				assert_int_equal(sim_ground_truth(m.sim, false, cpu, bi->code, bi->umask,
								  false, &truth), 0);
				assert_true(within_2_percent(sp->events[k].total, truth));
			}
			/* The two groups take turns. */
			assert_true(multiplexing_ratio(s, cpu) > 0.1 && multiplexing_ratio(s, cpu) < 0.9);
		}
		snapshot_release(s);
	}
	assert_int_equal(c.errors, 0);
	collector_stop(&c);
	assert_int_equal(sim_perf_open_events(m.sim), 0);
	machine_close(&m);
}

/*
 * skylake-sp-2s:perf-profiler: a perf event takes GP counter 2 of every
 * CPU for 5 s of every 10 s, from 2 s.  On the boot state our events sit
 * on cycles GP 0 (the watchdog holds fixed counter 1), llc_references GP 1,
 * llc_misses GP 2, branch_misses GP 3: no GP counter is left to move to.
 * The events that keep their counter lose nothing (exact against the
 * simulator's ground truth); llc_misses is yielded with the reason while
 * perf holds its counter and taken back when perf leaves; the conflicts
 * counter grows by one per real takeover; stop restores every register.
 */
static void perf_user_takes_a_gp_counter_again_and_again(void **state)
{
	struct sim_machine m, twin;
	struct reg_dump ours = { 0 }, theirs = { 0 };
	struct collector c;
	struct conf conf;
	char reason[1024];

	(void)state;
	machine_open(&m, "skylake-sp-2s:perf-profiler");
	machine_open(&twin, "skylake-sp-2s:perf-profiler");
	conf_defaults(&conf);
	assert_int_equal(core_settings_of(&conf)->on_conflict, CONF_CONFLICT_YIELD);
	assert_int_equal(collector_start(&c, &core_collector_ops, &m.hw, &m.info, &m.topo, &conf), 0);
	sim_advance(m.sim, 0.5);
	sim_advance(twin.sim, 0.5);
	for (int step = 0; step < 30; step++) {
		double t = 0.5 + step;
		bool perf_holds = t - 10.0 * (int)(t / 10.0) > 2.0 && t - 10.0 * (int)(t / 10.0) < 7.0;
		uint64_t takeovers = (uint64_t)(t > 2.0) + (t > 12.0) + (t > 22.0);
		struct snapshot *s = snapshot_new(&m.topo, &m.info);

		assert_non_null(s);
		collector_sample(&c, s);
		for (int i = 0; i < s->n_cpus; i++) {
			const struct cpu_view *sp = cpu_view(s, s->cpus[i].cpu);

			assert_true(sp->has_instructions && sp->has_cycles && sp->has_ref_cycles);
			assert_exact(&m, s->cpus[i].cpu, 0xc0, 0x00, sp->instructions);
			assert_exact(&m, s->cpus[i].cpu, 0x3c, 0x00, sp->cycles);
			assert_exact(&m, s->cpus[i].cpu, 0x3c, 0x01, sp->ref_cycles);
			assert_int_equal(sp->n_events, 3);
			assert_string_equal(sp->events[0].name, "llc_references");
			assert_true(sp->events[0].available);
			assert_exact(&m, s->cpus[i].cpu, 0x2e, 0x4f, sp->events[0].total);
			assert_string_equal(sp->events[2].name, "branch_misses");
			assert_true(sp->events[2].available);
			assert_exact(&m, s->cpus[i].cpu, 0xc5, 0x00, sp->events[2].total);
			assert_string_equal(sp->events[1].name, "llc_misses");
			if (perf_holds) {
				assert_false(sp->events[1].available);
				assert_string_equal(sp->events[1].reason,
						    "yielded: another agent took its counter");
			} else {
				assert_true(sp->events[1].available);
			}
			assert_int_equal(sp->conflicts, takeovers);
		}
		collector_reason(&c, reason, sizeof(reason));
		if (perf_holds)
			assert_non_null(strstr(reason, "llc_misses yielded on 112 of 112 CPUs: another "
						       "agent took its counter"));
		else
			assert_string_equal(reason, "");
		assert_true(c.up);
		snapshot_release(s);
		sim_advance(m.sim, 1.0);
		sim_advance(twin.sim, 1.0);
	}
	assert_int_equal(c.errors, 0);
	collector_stop(&c);
	sim_dump(m.sim, dump_one, &ours);
	sim_dump(twin.sim, dump_one, &theirs);
	assert_int_equal(ours.n, theirs.n);
	for (size_t i = 0; i < ours.n; i++)
		if (!is_core_counter(ours.regs[i].msr) && ours.regs[i].value != theirs.regs[i].value)
			fail_msg("cpu %d msr 0x%x is 0x%llx, untouched twin has 0x%llx",
				 ours.regs[i].cpu, (unsigned)ours.regs[i].msr,
				 (unsigned long long)ours.regs[i].value,
				 (unsigned long long)theirs.regs[i].value);
	free(ours.regs);
	free(theirs.regs);
	machine_close(&twin);
	machine_close(&m);
}

/*
 * What start-up asks before the privilege drop: the core collector counts
 * through the kernel's perf wherever the kernel has a core PMU, unless
 * engine = msr; engine = perf without one is no perf (the collector is
 * then refused at start).
 */
static void uses_perf_follows_the_engine_choice(void **state)
{
	static const struct {
		const char *text;
		bool with_perf, want;
	} cases[] = {
		{ "", true, true },
		{ "", false, false },
		{ "[core]\nengine = perf\n", true, true },
		{ "[core]\nengine = perf\n", false, false },
		{ "[core]\nengine = msr\n", true, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim_machine m;
		struct conf conf;
		struct conf_errors errs;
		char err[512];

		machine_open(&m, "westmere-ep-2s");
		if (cases[i].with_perf && sim_attach_perf(m.sim, &m.hw, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(conf_load_string("t.conf", cases[i].text, &conf, &errs), 0);
		assert_non_null(core_collector_ops.uses_perf);
		assert_int_equal(core_collector_ops.uses_perf(&conf, m.hw.perf), cases[i].want);
		machine_close(&m);
	}
}

/*
 * A reload restarts the collector only for a key of its own that changed:
 * not for an event moved to another line, nor for engine (kept until
 * restart by the reload itself).
 */
static void conf_changed_asks_its_own_keys(void **state)
{
	static const struct {
		const char *a, *b;
		bool want;
	} cases[] = {
		{ "[core]\nevent = branch_instructions\n",
		  "\n\n[core]\n\nevent = branch_instructions\n", false },
		{ "[core]\nevent = branch_instructions\n",
		  "[core]\nevent = llc_misses\ndefault_events = no\n", true },
		{ "", "[core]\nper = socket\n", true },
		{ "", "[core]\non_conflict = reclaim\n", true },
		{ "", "[core]\nengine = msr\n", false },
		{ "", "[thermal]\nrapl = no\n", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct conf a, b;
		struct conf_errors errs;

		assert_int_equal(conf_load_string("a.conf", cases[i].a, &a, &errs), 0);
		assert_int_equal(conf_load_string("b.conf", cases[i].b, &b, &errs), 0);
		if (collector_ops_conf_changed(&core_collector_ops, &a, &b) != cases[i].want)
			fail_msg("case %zu: conf_changed is not %d", i, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(programs_fixed_nibbles_and_global_bits),
		cmocka_unit_test(conf_changed_asks_its_own_keys),
		cmocka_unit_test(counts_deltas_and_wraps_at_the_cpuid_width),
		cmocka_unit_test(watchdog_on_fixed_counter_1_is_left_alone),
		cmocka_unit_test(busy_gp_counter_shifts_events_to_free_ones),
		cmocka_unit_test(too_many_events_are_unavailable_with_a_reason),
		cmocka_unit_test(architectural_event_the_cpu_lacks_is_unavailable),
		cmocka_unit_test(default_events_come_first),
		cmocka_unit_test(conflict_reclaim_rewrites_and_rebases),
		cmocka_unit_test(conflict_yield_forgets_without_writing),
		cmocka_unit_test(offline_cpu_skipped_and_rebased_on_return),
		cmocka_unit_test(counting_on_some_cpus_is_partial),
		cmocka_unit_test(refused_writes_leave_everything_alone),
		cmocka_unit_test(interval_too_long_for_the_counter_width_is_refused),
		cmocka_unit_test(reads_per_sample_match_what_a_sample_reads),
		cmocka_unit_test(disabled_in_config_does_not_start),
		cmocka_unit_test(both_collectors_on_every_simulated_model),
		cmocka_unit_test(perf_user_takes_a_gp_counter_again_and_again),
		cmocka_unit_test(per_core_and_socket_sum_the_cpus),
		cmocka_unit_test(every_model_counts_through_perf_by_default),
		cmocka_unit_test(multiplexed_events_are_scaled_and_the_ratio_exported),
		cmocka_unit_test(a_gp_group_that_does_not_fit_leaves_the_fixed_group_counting),
		cmocka_unit_test(per_core_and_socket_ratio_is_the_smallest_of_the_cpus),
		cmocka_unit_test(uses_perf_follows_the_engine_choice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
