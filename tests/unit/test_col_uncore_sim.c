/*
 * The uncore collector against the simulated Westmere-EP: in every shipped
 * scenario it leaves every register as a twin machine that never ran it,
 * after perf's uncore use it counts every event again, and in the DRAM
 * heatwave it counts throttled cycles where the scenario
 * heats the DRAM and nowhere else.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"

/* Registered in collectors.c; named here to test them one by one. */
extern const struct collector_ops uncore_collector_ops;
#include "cpu.h"
#include "helpers.h"
#include "sample_views.h"
#include "sim.h"
#include "snapshot.h"
#include "throttle_families.h"

/*
 * A twin machine runs the same scenario with no collector.  Before start
 * both read the same; after stop every register must still read as on the
 * twin.  (The scenario moves thermal status and other agents' state on its
 * own, so a plain before/after comparison would also see its changes.)
 */
#define SIM_MODEL "westmere-ep-2s"
#define MAX_DUMP 4096

struct dump {
	int n;
	int cpu[MAX_DUMP];
	uint32_t msr[MAX_DUMP];
	uint64_t value[MAX_DUMP];
};

static void dump_one(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	struct dump *d = arg;

	assert_true(d->n < MAX_DUMP);
	d->cpu[d->n] = cpu;
	d->msr[d->n] = msr;
	d->value[d->n++] = value;
}

/*
 * In perf-uncore, perf counts on the uncore fixed counter and counter 0
 * while uncored holds them with the same programming, and perf never
 * writes a counter: the value it leaves includes what uncored's own
 * enable counted before perf came, which the twin, with no uncored, never
 * counted.  Those counters' values are perf's then; every other register
 * must match.
 */
static bool skip_counter(const char *what, uint32_t msr)
{
	return strcmp(what, "perf-uncore") == 0 && (msr == 0x394 || msr == 0x3b0);
}

static void assert_dumps_equal(const char *what, const struct dump *a, const struct dump *b)
{
	assert_int_equal(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		assert_int_equal(a->cpu[i], b->cpu[i]);
		assert_int_equal(a->msr[i], b->msr[i]);
		if (a->value[i] != b->value[i] && !skip_counter(what, a->msr[i]))
			fail_msg("%s: cpu %d msr 0x%x: 0x%llx, expected 0x%llx", what, a->cpu[i],
				 a->msr[i], (unsigned long long)a->value[i],
				 (unsigned long long)b->value[i]);
	}
}

struct sim_run {
	struct sim *sim;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
};

static void sim_run_open(struct sim_run *r, const char *scenario)
{
	char dir[4096], spec[256], err[256];

	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	snprintf(spec, sizeof(spec), "%s:%s", SIM_MODEL, scenario);
	r->sim = sim_open(spec, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!r->sim)
		fail_msg("sim_open %s: %s", spec, err);
	sim_bind(r->sim, &r->hw);
	assert_int_equal(cpu_detect(&r->hw, &r->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&r->hw, &r->topo, err, sizeof(err)), 0);
}

static void sim_run_close(struct sim_run *r)
{
	cpu_topology_free(&r->topo);
	hw_close(&r->hw);
}

/* Start, sample n times one simulated second apart, keep the last snapshot. */
static struct snapshot *run_collector(struct sim_run *r, struct sim_run *twin,
				      const struct conf *conf, int n, struct collector *c)
{
	struct snapshot *s = NULL;

	assert_int_equal(collector_start(c, &uncore_collector_ops, &r->hw, &r->info, &r->topo,
					 conf), 0);
	assert_true(c->up);
	for (int i = 0; i < n; i++) {
		sim_advance(r->sim, 1.0);
		sim_advance(twin->sim, 1.0);
		snapshot_release(s);
		s = snapshot_new(&r->topo, &r->info);
		assert_non_null(s);
		collector_sample(c, s);
	}
	collector_stop(c);
	return s;
}

static int scenario_names(char names[][64], int max)
{
	char dir[4096];
	struct dirent *de;
	DIR *d;
	int n = 0;

	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)) && n < max) {
		size_t len = strlen(de->d_name);

		if (len > 4 && len < 64 && strcmp(de->d_name + len - 4, ".ini") == 0) {
			snprintf(names[n], 64, "%.*s", (int)(len - 4), de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static void sim_every_scenario_restores_every_register(void **state)
{
	char names[32][64];
	int n = scenario_names(names, 32);

	(void)state;
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		struct sim_run r, twin;
		struct collector c;
		struct conf conf;
		struct snapshot *s;
		static struct dump before, twin_before, after, twin_after;

		/*
		 * In the conflict scenario another agent takes counter 0 of
		 * socket 0; the policies differ there on purpose and have tests
		 * of their own below.  In the lockdown scenario every write is
		 * refused and the collector cannot start at all (test_faults).
		 * The AMD scenarios (amd-*) name HSMP's DIMMs and frequency
		 * limits, which this Intel model refuses.
		 */
		if (strcmp(names[i], "conflict") == 0 || strcmp(names[i], "lockdown") == 0 ||
		    strncmp(names[i], "amd-", 4) == 0)
			continue;
		sim_run_open(&r, names[i]);
		sim_run_open(&twin, names[i]);
		conf_defaults(&conf);
		uncore_settings_of(&conf)->enabled = true;
		uncore_settings_of(&conf)->default_events = true;
		before.n = twin_before.n = after.n = twin_after.n = 0;
		sim_dump(r.sim, dump_one, &before);
		sim_dump(twin.sim, dump_one, &twin_before);
		assert_dumps_equal(names[i], &before, &twin_before);

		/* A whole minute: every scenario's agents come and go in it. */
		s = run_collector(&r, &twin, &conf, 60, &c);
		for (int k = 0; k < s->n_sockets; k++)
			assert_true(uncore_view(s, s->sockets[k].socket)->has_uncore);
		snapshot_release(s);

		sim_dump(r.sim, dump_one, &after);
		sim_dump(twin.sim, dump_one, &twin_after);
		assert_dumps_equal(names[i], &after, &twin_after);
		sim_run_close(&r);
		sim_run_close(&twin);
	}
}

/*
 * Reclaim in the conflict scenario: every register as on the twin but the
 * rewritten select, which holds what uncored found at start (uncored took
 * the counter back and puts back what it found).
 */
static void reclaim_restores_the_value_found(void **state)
{
	struct sim_run r, twin;
	struct collector c;
	struct conf conf;
	static struct dump before, after, twin_after;

	(void)state;
	sim_run_open(&r, "conflict");
	sim_run_open(&twin, "conflict");
	conf_defaults(&conf);
	uncore_settings_of(&conf)->on_conflict = CONF_CONFLICT_RECLAIM;
	before.n = after.n = twin_after.n = 0;
	sim_dump(r.sim, dump_one, &before);
	snapshot_release(run_collector(&r, &twin, &conf, 5, &c));
	sim_dump(r.sim, dump_one, &after);
	sim_dump(twin.sim, dump_one, &twin_after);
	assert_int_equal(after.n, twin_after.n);
	for (int i = 0; i < after.n; i++) {
		if (after.msr[i] == 0x3c0 && after.value[i] != twin_after.value[i]) {
			assert_int_equal(after.value[i], before.value[i]);
			continue;
		}
		if (after.value[i] != twin_after.value[i])
			fail_msg("cpu %d msr 0x%x: 0x%llx, twin 0x%llx", after.cpu[i], after.msr[i],
				 (unsigned long long)after.value[i],
				 (unsigned long long)twin_after.value[i]);
	}
	sim_run_close(&r);
	sim_run_close(&twin);
}

/*
 * Yield in the conflict scenario: every register as on the twin but the
 * enable bit of the taken counter in MSR_UNCORE_PERF_GLOBAL_CTRL, which
 * uncored hands over with the counter: the agent that took the counter
 * relies on it, and clearing it would stop that agent's counting.
 */
static void yield_hands_the_counter_over(void **state)
{
	struct sim_run r, twin;
	struct collector c;
	struct conf conf;
	static struct dump after, twin_after;

	(void)state;
	sim_run_open(&r, "conflict");
	sim_run_open(&twin, "conflict");
	conf_defaults(&conf);
	uncore_settings_of(&conf)->on_conflict = CONF_CONFLICT_YIELD;
	after.n = twin_after.n = 0;
	snapshot_release(run_collector(&r, &twin, &conf, 5, &c));
	sim_dump(r.sim, dump_one, &after);
	sim_dump(twin.sim, dump_one, &twin_after);
	assert_int_equal(after.n, twin_after.n);
	for (int i = 0; i < after.n; i++) {
		uint64_t diff = after.value[i] ^ twin_after.value[i];

		if (after.msr[i] == 0x391 && diff == 0x1)
			continue;
		if (diff)
			fail_msg("cpu %d msr 0x%x: 0x%llx, twin 0x%llx", after.cpu[i], after.msr[i],
				 (unsigned long long)after.value[i],
				 (unsigned long long)twin_after.value[i]);
	}
	sim_run_close(&r);
	sim_run_close(&twin);
}

/*
 * After perf used the uncore PMU (perf-uncore: 10 s to 20 s), 0x391 stays
 * 0x1000000ff with every select zero (hardware-linux.md §1.3): every event
 * and the uncore clock count again on both sockets, with no conflict,
 * the collector up and nothing to say.
 */
static void sim_uncore_counts_after_perf_uncore_use(void **state)
{
	struct sim_run r;
	struct collector c;
	struct conf conf;
	struct snapshot *s = NULL;
	uint64_t clock[2] = { 0, 0 };
	char reason[1024];

	(void)state;
	sim_run_open(&r, "perf-uncore");
	conf_defaults(&conf);
	assert_int_equal(collector_start(&c, &uncore_collector_ops, &r.hw, &r.info, &r.topo,
					 &conf), 0);
	for (int t = 1; t <= 28; t++) {
		sim_advance(r.sim, 1.0);
		snapshot_release(s);
		s = snapshot_new(&r.topo, &r.info);
		assert_non_null(s);
		collector_sample(&c, s);
		if (t < 22)
			continue;
		assert_true(c.up);
		assert_string_equal(collector_reason(&c, reason, sizeof(reason)), "");
		for (int k = 0; k < s->n_sockets; k++) {
			const struct uncore_view *ss = uncore_view(s, s->sockets[k].socket);

			assert_true(ss->has_uncore);
			assert_true(ss->has_clockticks);
			assert_true(ss->clockticks > clock[k]);
			clock[k] = ss->clockticks;
			assert_int_equal(ss->conflicts, 0);
			assert_int_equal(ss->n_events, 7);
			for (int i = 0; i < ss->n_events; i++)
				assert_true(ss->events[i].available);
		}
	}
	snapshot_release(s);
	collector_stop(&c);
	sim_run_close(&r);
}

static const struct event_view *find_event(const struct snapshot *s, int socket, const char *name)
{
	const struct uncore_view *ss = uncore_view(s, socket);

	for (int i = 0; i < ss->n_events; i++)
		if (strcmp(ss->events[i].name, name) == 0)
			return &ss->events[i];
	fail_msg("socket %d: no event '%s'", socket, name);
	return NULL;
}

static void sim_dram_heatwave_counts_on_socket_1_only(void **state)
{
	struct sim_run r, twin;
	struct collector c;
	struct conf conf;
	struct snapshot *s;
	const struct event_view *e0, *e1;

	(void)state;
	sim_run_open(&r, "dram-heatwave");
	sim_run_open(&twin, "dram-heatwave");
	conf_defaults(&conf);
	uncore_settings_of(&conf)->enabled = true;
	uncore_settings_of(&conf)->default_events = true;
	s = run_collector(&r, &twin, &conf, 30, &c);
	e0 = find_event(s, 0, "dram_thermal_throttled_cycles");
	e1 = find_event(s, 1, "dram_thermal_throttled_cycles");
	assert_true(e0->available);
	assert_true(e1->available);
	assert_int_equal(e0->total, 0);
	assert_true(e1->total > 0);
	assert_true(uncore_view(s, 1)->clockticks > 0);
	/*
	 * The same as the generation-independent family, cause thermal: the
	 * throttled share of the constant uncore clock times the 30 s, within
	 * 1 %, and 0 on socket 0.
	 */
	{
		const struct metric_sample *d0 = snapshot_find_sample(s, &throttle_dram_socket_seconds,
								      0, "thermal");
		const struct metric_sample *d1 = snapshot_find_sample(s, &throttle_dram_socket_seconds,
								      1, "thermal");
		double want = (double)e1->total / (double)uncore_view(s, 1)->clockticks * 30.0;

		assert_non_null(d0);
		assert_non_null(d1);
		assert_true(d0->value.d == 0.0);
		print_message("socket 1: %.4f s DRAM throttled, %.4f s expected\n", d1->value.d, want);
		assert_true(want > 0 && fabs(d1->value.d - want) <= 0.01 * want);
	}
	snapshot_release(s);
	sim_run_close(&r);
	sim_run_close(&twin);
}

/*
 * What start-up asks before the privilege drop: the uncore counts through
 * the kernel's perf only with engine = perf and a kernel with the uncore
 * PMU (the simulated one has it); by default it programs the registers.
 */
static void uses_perf_only_when_asked_and_there(void **state)
{
	static const struct {
		const char *text;
		bool with_perf, want;
	} cases[] = {
		{ "", true, false },
		{ "[uncore]\nengine = perf\n", true, true },
		{ "[uncore]\nengine = perf\n", false, false },
		{ "[uncore]\nengine = msr\n", true, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sim_run r;
		struct conf conf;
		struct conf_errors errs;
		char err[256];

		sim_run_open(&r, "idle");
		if (cases[i].with_perf && sim_attach_perf(r.sim, &r.hw, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(conf_load_string("t.conf", cases[i].text, &conf, &errs), 0);
		assert_non_null(uncore_collector_ops.uses_perf);
		assert_int_equal(uncore_collector_ops.uses_perf(&conf, r.hw.perf), cases[i].want);
		sim_run_close(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_every_scenario_restores_every_register),
		cmocka_unit_test(reclaim_restores_the_value_found),
		cmocka_unit_test(yield_hands_the_counter_over),
		cmocka_unit_test(sim_dram_heatwave_counts_on_socket_1_only),
		cmocka_unit_test(sim_uncore_counts_after_perf_uncore_use),
		cmocka_unit_test(uses_perf_only_when_asked_and_there),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
