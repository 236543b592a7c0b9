/*
 * Fault tests: the real sampler on a simulated two-socket Westmere-EP with
 * a stepped clock, through a CPU going offline and back, an MSR read
 * failing with EIO mid-run, another agent rewriting an uncore counter
 * (both conflict policies) and MSR writes refused from the start.  After
 * every sample every exported total must be at least what it was before,
 * and, where a counter counted from time 0 without a lost interval, equal
 * the simulator's own count of the event.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "cpu.h"
#include "event.h"
#include "helpers.h"
#include "ledger.h"
#include "metric.h"
#include "msr.h"
#include "sample_views.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"

#define MAX_SOCKETS 2
#define MAX_CPUS 24

/* The highest value each exported total has shown so far. */
struct high_water {
	uint64_t clockticks[MAX_SOCKETS], unc_conflicts[MAX_SOCKETS];
	uint64_t unc[MAX_SOCKETS][VIEW_MAX_EVENTS];
	uint64_t fixed[MAX_CPUS][3], core[MAX_CPUS][VIEW_MAX_EVENTS];
};

struct fault_run {
	struct sim *sim;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
	struct sampler *sampler;
	struct high_water hw_mark;
	int n_samples;
};

static void run_open(struct fault_run *r, const char *scenario, const struct conf *conf,
		     bool refuse_writes)
{
	char dir[4096], spec[128], err[256];

	memset(r, 0, sizeof(*r));
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	snprintf(spec, sizeof(spec), "westmere-ep-2s%s%s", scenario ? ":" : "", scenario ? scenario : "");
	r->sim = sim_open(spec, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!r->sim)
		fail_msg("sim_open %s: %s", spec, err);
	sim_bind(r->sim, &r->hw);
	assert_int_equal(cpu_detect(&r->hw, &r->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&r->hw, &r->topo, err, sizeof(err)), 0);
	assert_true(r->topo.n_sockets <= MAX_SOCKETS && r->topo.n_cpus <= MAX_CPUS);
	sim_refuse_writes(r->sim, refuse_writes);
	/* The collectors start at simulated time 0, before any sim_advance. */
	assert_int_equal(sampler_new(conf, &r->hw, &r->info, &r->topo, &r->sampler, err,
				     sizeof(err)), 0);
}

static void run_close(struct fault_run *r)
{
	sampler_free(r->sampler);
	/* A run that stopped with a CPU offline leaves registers of its machine only. */
	ledger_forget_left();
	snapshot_clear();
	cpu_topology_free(&r->topo);
	hw_close(&r->hw);
}

static void rise(const char *what, int idx, const char *name, uint64_t *mark, uint64_t now, int n)
{
	if (now < *mark)
		fail_msg("sample %d: %s %d %s went backwards: %llu -> %llu", n, what, idx, name,
			 (unsigned long long)*mark, (unsigned long long)now);
	*mark = now;
}

/* Every exported total is at least the highest it has been. */
static void assert_monotonic(struct fault_run *r, const struct snapshot *s)
{
	struct high_water *m = &r->hw_mark;

	for (int i = 0; i < s->n_sockets; i++) {
		const struct uncore_view *ss = uncore_view(s, s->sockets[i].socket);

		if (!ss->has_uncore)
			continue;
		if (ss->has_clockticks)
			rise("socket", i, "clockticks", &m->clockticks[i], ss->clockticks,
			     r->n_samples);
		rise("socket", i, "conflicts", &m->unc_conflicts[i], ss->conflicts, r->n_samples);
		for (int k = 0; k < ss->n_events; k++)
			if (ss->events[k].available)
				rise("socket", i, ss->events[k].name, &m->unc[i][k],
				     ss->events[k].total, r->n_samples);
	}
	for (int i = 0; i < s->n_cpus; i++) {
		const struct cpu_view *c = cpu_view(s, s->cpus[i].cpu);
		const int cpu = s->cpus[i].cpu;
		const uint64_t fixed[3] = { c->instructions, c->cycles, c->ref_cycles };
		const bool has[3] = { c->has_instructions, c->has_cycles, c->has_ref_cycles };
		static const char *const names[3] = { "instructions", "cycles", "ref_cycles" };

		if (!c->has_core_pmu)
			continue;
		for (int k = 0; k < 3; k++)
			if (has[k])
				rise("cpu", cpu, names[k], &m->fixed[i][k], fixed[k], r->n_samples);
		for (int k = 0; k < c->n_events; k++)
			if (c->events[k].available)
				rise("cpu", cpu, c->events[k].name, &m->core[i][k], c->events[k].total,
				     r->n_samples);
	}
}

/* Advance one simulated second, sample, check monotonicity; the caller releases. */
static struct snapshot *step(struct fault_run *r)
{
	struct snapshot *s;

	sim_advance(r->sim, 1.0);
	s = sampler_sample(r->sampler);
	assert_non_null(s);
	r->n_samples++;
	assert_monotonic(r, s);
	return s;
}

static uint64_t truth(struct fault_run *r, bool uncore, int where, const struct event_spec *ev)
{
	uint64_t t;

	assert_non_null(ev);
	assert_int_equal(sim_ground_truth(r->sim, uncore, where, ev->code, ev->umask, ev->edge, &t), 0);
	return t;
}

/*
 * Uncore events and clockticks of socket index i against the ground truth:
 * equal, or at most (a lost interval).  skip names an event not to check
 * (NULL: none).  Returns how many were checked.
 */
static int check_uncore(struct fault_run *r, const struct snapshot *s, int i, bool exact,
			const char *skip)
{
	const struct uncore_view *ss = uncore_view(s, s->sockets[i].socket);
		const int socket = s->sockets[i].socket;
	int n = 0;

	assert_true(ss->has_uncore);
	for (int k = 0; k < ss->n_events; k++) {
		const struct event_view *e = &ss->events[k];
		uint64_t t;

		if (!e->available || (skip && strcmp(e->name, skip) == 0))
			continue;
		t = truth(r, true, socket, event_builtin(EVENT_PMU_UNCORE, e->name));
		if (exact ? e->total != t : e->total > t)
			fail_msg("socket %d %s: %llu, simulator counted %llu", socket, e->name,
				 (unsigned long long)e->total, (unsigned long long)t);
		n++;
	}
	if (ss->has_clockticks) {
		uint64_t t;

		assert_int_equal(sim_ground_truth(r->sim, true, socket, SIM_UNCORE_CLOCK_CODE, 0,
						  false, &t), 0);
		if (exact ? ss->clockticks != t : ss->clockticks > t)
			fail_msg("socket %d clockticks: %llu, simulator counted %llu", socket,
				 (unsigned long long)ss->clockticks, (unsigned long long)t);
		n++;
	}
	return n;
}

/*
 * Core fixed counters and events equal the ground truth on every CPU the
 * core collector counts on this sample.  Returns how many CPUs were checked.
 */
static int check_core_exact(struct fault_run *r, const struct snapshot *s)
{
	int n = 0;

	static const struct event_spec fixed[3] = {
		{ .name = "instructions", .code = 0xc0, .umask = 0x00 },
		{ .name = "cycles", .code = 0x3c, .umask = 0x00 },
		{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
	};

	for (int i = 0; i < s->n_cpus; i++) {
		const struct cpu_view *c = cpu_view(s, s->cpus[i].cpu);
		const int cpu = s->cpus[i].cpu;
		const uint64_t v[3] = { c->instructions, c->cycles, c->ref_cycles };

		if (!c->has_core_pmu)
			continue;
		n++;
		for (int k = 0; k < 3; k++)
			if (v[k] != truth(r, false, cpu, &fixed[k]))
				fail_msg("sample %d: cpu %d %s: %llu, simulator counted %llu", r->n_samples,
					 cpu, fixed[k].name, (unsigned long long)v[k],
					 (unsigned long long)truth(r, false, cpu, &fixed[k]));
		for (int k = 0; k < c->n_events; k++)
			if (c->events[k].available)
				assert_int_equal(c->events[k].total,
						 truth(r, false, cpu,
						       event_builtin(EVENT_PMU_CORE, c->events[k].name)));
	}
	return n;
}

static void default_conf(struct conf *conf)
{
	conf_defaults(conf);
	conf->interval_s = 1.0;
}

/*
 * cpu-offline: cpu 6, the first CPU of socket 1 and the one its uncore is
 * reached through, is offline from 3 s to 8 s of every 15 s.  The socket's
 * uncore moves to another CPU of the socket and keeps counting: the uncore
 * counters are package scope and never stop, so every uncore total stays
 * exact.  Core totals too: an offline CPU executes nothing, so there is
 * nothing to count meanwhile.
 */
static void cpu_offline_and_back_loses_nothing(void **state)
{
	struct fault_run r;
	struct conf conf;
	int offline_seen = 0, back_seen = 0;

	(void)state;
	default_conf(&conf);
	run_open(&r, "cpu-offline", &conf, false);
	for (int i = 0; i < 20; i++) {
		struct snapshot *s = step(&r);
		const struct cpu_view *c6 = cpu_view(s, 6);
		bool c6_counted;

		assert_non_null(c6);
		/* Read now: check_core_exact() reuses the ring of views c6 points into. */
		c6_counted = c6->has_core_pmu;
		offline_seen += !c6_counted;
		back_seen += offline_seen && c6_counted;
		assert_true(uncore_view(s, s->sockets[1].socket)->has_uncore);
		assert_true(check_uncore(&r, s, 0, true, NULL) > 0);
		assert_true(check_uncore(&r, s, 1, true, NULL) > 0);
		/* Every CPU counted on, cpu 6 included once it is back, is exact. */
		assert_int_equal(check_core_exact(&r, s), s->n_cpus - !c6_counted);
		snapshot_release(s);
	}
	assert_true(offline_seen >= 4);
	assert_true(back_seen >= 4);
	run_close(&r);
}

/* The same by hand: offline for several samples mid-run, then back. */
static void manual_offline_moves_the_uncore_and_recovers(void **state)
{
	struct fault_run r;
	struct conf conf;
	uint64_t before = 0;

	(void)state;
	default_conf(&conf);
	run_open(&r, "dram-heatwave", &conf, false);
	for (int i = 0; i < 12; i++) {
		struct snapshot *s;

		if (i == 3)
			assert_int_equal(sim_set_online(r.sim, 6, false), 0);
		if (i == 8)
			assert_int_equal(sim_set_online(r.sim, 6, true), 0);
		s = step(&r);
		assert_true(uncore_view(s, s->sockets[1].socket)->has_uncore);
		assert_true(check_uncore(&r, s, 1, true, NULL) > 0);
		assert_true(check_uncore(&r, s, 0, true, NULL) > 0);
		/* The socket's uncore clock keeps counting through another CPU. */
		assert_true(uncore_view(s, s->sockets[1].socket)->clockticks > before);
		before = uncore_view(s, s->sockets[1].socket)->clockticks;
		if (i < 3 || i >= 8)
			assert_int_equal(check_core_exact(&r, s), s->n_cpus);
		snapshot_release(s);
	}
	run_close(&r);
}

/*
 * EIO on uncore PMC0 of socket 0 for samples 4-6: the read errors are
 * counted, the total holds still meanwhile, and once reads work again the
 * counter (which kept counting) gives the whole delta: exact again.
 */
static void eio_mid_run_is_counted_and_caught_up(void **state)
{
	struct fault_run r;
	struct conf conf;
	uint64_t errors_before = 0;

	(void)state;
	default_conf(&conf);
	run_open(&r, "dram-heatwave", &conf, false);
	for (int i = 0; i < 10; i++) {
		struct snapshot *s;
		uint64_t errors;

		if (i == 4)
			sim_fail_reads(r.sim, 0, MSR_UNCORE_PMC0, -EIO);
		if (i == 7)
			sim_fail_reads(r.sim, 0, 0, 0);
		s = step(&r);
		errors = COLLECTOR(s, "uncore")->errors;
		if (i >= 4 && i < 7) {
			assert_true(errors > errors_before);
			/* Counts since the last good read are pending, not lost. */
			assert_true(check_uncore(&r, s, 0, false, NULL) > 0);
		} else {
			assert_int_equal(errors, errors_before);
			assert_true(check_uncore(&r, s, 0, true, NULL) > 0);
		}
		assert_true(check_uncore(&r, s, 1, true, NULL) > 0);
		assert_int_equal(check_core_exact(&r, s), s->n_cpus);
		errors_before = errors;
		snapshot_release(s);
	}
	run_close(&r);
}

/*
 * The conflict scenario: at 3 s of every 10 s another agent rewrites
 * socket 0's counter 0 (dram_thermal_throttled_cycles).  What the counter
 * counted between the rewrite and the next sample is lost by either policy
 * (the other agent's event replaced ours), so that event is at most the
 * ground truth; every other event, socket 1 and the core side are exact.
 */
static void conflict_run(enum conf_conflict_policy policy)
{
	struct fault_run r;
	struct conf conf;
	uint64_t conflicts = 0;

	default_conf(&conf);
	uncore_settings_of(&conf)->on_conflict = policy;
	run_open(&r, "conflict", &conf, false);
	for (int i = 0; i < 25; i++) {
		struct snapshot *s = step(&r);

		check_uncore(&r, s, 0, true, "dram_thermal_throttled_cycles");
		check_uncore(&r, s, 0, false, NULL);
		assert_true(check_uncore(&r, s, 1, true, NULL) > 0);
		assert_int_equal(check_core_exact(&r, s), s->n_cpus);
		conflicts = uncore_view(s, s->sockets[0].socket)->conflicts;
		snapshot_release(s);
	}
	/* Rewrites at 3 s, 13 s and 23 s: at least one is counted as a conflict. */
	assert_true(conflicts >= 1);
	run_close(&r);
}

static void conflict_reclaim_loses_only_the_rewritten_interval(void **state)
{
	(void)state;
	conflict_run(CONF_CONFLICT_RECLAIM);
}

static void conflict_yield_loses_only_the_yielded_counter(void **state)
{
	(void)state;
	conflict_run(CONF_CONFLICT_YIELD);
}

/*
 * Lockdown: writes refused from the start.  The uncore and core collectors
 * cannot program anything and are down with a reason saying why; the
 * thermal collector only reads and stays up; no register changes.
 */
static void refused_writes_leave_a_read_only_daemon(void **state)
{
	struct fault_run r;
	struct conf conf;

	(void)state;
	default_conf(&conf);
	run_open(&r, NULL, &conf, true);
	for (int i = 0; i < 3; i++) {
		struct snapshot *s = step(&r);
		const struct snapshot_collector *u = COLLECTOR(s, "uncore");
		const struct snapshot_collector *c = COLLECTOR(s, "core");
		const struct snapshot_collector *t = COLLECTOR(s, "thermal");

		assert_false(u->up);
		assert_false(c->up);
		assert_true(t->up);
		if (!strstr(u->reason, "refuses MSR writes") || !strstr(u->reason, "read-only"))
			fail_msg("uncore reason: %s", u->reason);
		if (!strstr(c->reason, "refuses MSR writes") || !strstr(c->reason, "read-only"))
			fail_msg("core reason: %s", c->reason);
		for (int k = 0; k < s->n_sockets; k++) {
			assert_false(uncore_view(s, s->sockets[k].socket)->has_uncore);
			assert_non_null(snapshot_find_signal(s, METRIC_SIGNAL_TJMAX, METRIC_SCOPE_SOCKET,
							     s->sockets[k].socket));
		}
		snapshot_release(s);
	}
	run_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_offline_and_back_loses_nothing),
		cmocka_unit_test(manual_offline_moves_the_uncore_and_recovers),
		cmocka_unit_test(eio_mid_run_is_counted_and_caught_up),
		cmocka_unit_test(conflict_reclaim_loses_only_the_rewritten_interval),
		cmocka_unit_test(conflict_yield_loses_only_the_yielded_counter),
		cmocka_unit_test(refused_writes_leave_a_read_only_daemon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
