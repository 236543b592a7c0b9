/*
 * The msr engine against the simulator in the state Linux leaves the PMU
 * (hardware-linux.md §1): what counts, what is left alone, what is yielded
 * and taken back, conflicts, and a byte-for-byte restore against a twin
 * machine that runs the same scenario without the engine.  Totals are
 * compared with the simulator's ground truth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine_msr.h"
#include "helpers.h"
#include "msr.h"
#include "sim.h"

#define MAX_DUMP 8192
#define N_EV 4

struct dump {
	int n;
	int cpu[MAX_DUMP];
	uint32_t msr[MAX_DUMP];
	uint64_t value[MAX_DUMP];
};

static struct dump dump_a, dump_b;

static void dump_one(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	struct dump *d = arg;

	assert_true(d->n < MAX_DUMP);
	d->cpu[d->n] = cpu;
	d->msr[d->n] = msr;
	d->value[d->n++] = value;
}

struct machine {
	struct sim *sim;
	struct hw hw;
};

static struct machine boot(const char *spec)
{
	char dir[4096], err[512];
	struct machine m;

	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	m.sim = sim_open_boot(spec, dir, SIM_CLOCK_STEPPED, SIM_BOOT_LINUX, err, sizeof(err));
	if (!m.sim)
		fail_msg("%s: %s", spec, err);
	sim_bind(m.sim, &m.hw);
	return m;
}

static int64_t sim_ns(void *arg)
{
	return (int64_t)(sim_now(arg) * 1e9 + 0.5);
}

static struct engine new_engine(struct machine *m)
{
	struct engine_msr_config cfg = { .hw = &m->hw, .policy = ENGINE_YIELD, .now_ns = sim_ns,
					 .now_arg = m->sim };
	struct engine e;

	assert_int_equal(engine_msr_new(&cfg, &e), 0);
	return e;
}

/* After close, every register reads as on the twin that never ran the engine. */
static void assert_like_twin(const char *what, struct machine *m, struct machine *twin)
{
	dump_a.n = dump_b.n = 0;
	sim_dump(m->sim, dump_one, &dump_a);
	sim_dump(twin->sim, dump_one, &dump_b);
	assert_int_equal(dump_a.n, dump_b.n);
	for (int i = 0; i < dump_a.n; i++)
		if (dump_a.value[i] != dump_b.value[i] || dump_a.msr[i] != dump_b.msr[i])
			fail_msg("%s: cpu %d msr 0x%x: 0x%llx, twin 0x%llx", what, dump_a.cpu[i],
				 dump_a.msr[i], (unsigned long long)dump_a.value[i],
				 (unsigned long long)dump_b.value[i]);
}

static void advance_both(struct machine *m, struct machine *twin, double s)
{
	sim_advance(m->sim, s);
	sim_advance(twin->sim, s);
}

static uint64_t truth(struct machine *m, bool uncore, int where, uint8_t code, uint8_t umask)
{
	uint64_t v;

	assert_int_equal(sim_ground_truth(m->sim, uncore, where, code, umask, false, &v), 0);
	return v;
}

static const struct engine_event core_events[N_EV] = {
	{ .name = "instructions", .code = 0xc0 },
	{ .name = "cycles", .code = 0x3c },
	{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
	{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
};

static void boot_state_counts_on_every_cpu_of_every_model(void **state)
{
	static const char *const models[] = { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s" };

	(void)state;
	for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		struct machine m = boot(models[k]), twin = boot(models[k]);
		struct engine e = new_engine(&m);
		struct engine_group *g[128];
		struct engine_reading r[N_EV];
		char err[256];
		int n_cpus = 0;
		struct hw_cpu cpus[128];

		assert_int_equal(hw_enumerate(&m.hw, cpus, 128, &n_cpus), 0);
		for (int c = 0; c < n_cpus; c++)
			assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, c, core_events, N_EV, &g[c],
						     err, sizeof(err)), 0);
		for (int step = 0; step < 3; step++) {
			advance_both(&m, &twin, 5);
			for (int c = 0; c < n_cpus; c++) {
				uint64_t v;

				assert_int_equal(engine_read(&e, g[c], r), 0);
				for (int i = 0; i < N_EV; i++) {
					assert_int_equal(r[i].state, ENGINE_COUNTING);
					assert_int_equal(r[i].total, truth(&m, false, c,
									   core_events[i].code,
									   core_events[i].umask));
					assert_int_equal(r[i].running_ns, r[i].enabled_ns);
				}
				/* the watchdog keeps fixed counter 1 */
				assert_int_equal(hw_read_msr(&m.hw, c, IA32_FIXED_CTR_CTRL, &v), 0);
				assert_int_equal((v >> 4) & 0xf, 0xb);
			}
		}
		assert_int_not_equal(r[1].total, 0);
		for (int c = 0; c < n_cpus; c++) {
			unsigned failed = 1;

			assert_int_equal(engine_close(&e, g[c], &failed), 0);
			assert_int_equal(failed, 0);
		}
		assert_like_twin(models[k], &m, &twin);
		engine_destroy(&e);
		hw_close(&m.hw);
		hw_close(&twin.hw);
	}
}

static void uncore_counts_on_westmere_after_perf_uncore_use(void **state)
{
	static const struct engine_event ev[2] = {
		{ .name = "dram_throttle", .code = 0x67, .umask = 0x01 },
		{ .name = "uclk", .code = ENGINE_UNCORE_CLOCK },
	};
	struct machine m = boot("westmere-ep-2s:dram-heatwave"),
		       twin = boot("westmere-ep-2s:dram-heatwave");
	struct engine e = new_engine(&m);
	struct engine_group *g[2];
	struct engine_reading r[2];
	char err[256];

	(void)state;
	for (int sk = 0; sk < 2; sk++)
		assert_int_equal(engine_open(&e, ENGINE_PMU_NHM_UNCORE, sk * 6, ev, 2, &g[sk], err,
					     sizeof(err)), 0);
	for (int step = 0; step < 12; step++) {
		advance_both(&m, &twin, 5);
		for (int sk = 0; sk < 2; sk++) {
			assert_int_equal(engine_read(&e, g[sk], r), 0);
			assert_int_equal(r[0].state, ENGINE_COUNTING);
			assert_int_equal(r[1].state, ENGINE_COUNTING);
			assert_int_equal(r[0].total, truth(&m, true, sk, 0x67, 0x01));
			assert_int_equal(r[1].total, truth(&m, true, sk, SIM_UNCORE_CLOCK_CODE, 0));
		}
	}
	assert_int_not_equal(r[0].total, 0);   /* socket 1 throttles */
	for (int sk = 0; sk < 2; sk++)
		assert_int_equal(engine_close(&e, g[sk], NULL), 0);
	assert_like_twin("uncore", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

/*
 * perf-profiler: perf takes GP counter 2 of every CPU at 2 s of every 10 s
 * for 5 s.  On Skylake-SP only the event on GP 2 (llc_misses) is yielded;
 * the others lose nothing.  One conflict per real takeover.
 */
static void perf_user_takes_a_gp_counter_repeatedly(void **state)
{
	struct machine m = boot("skylake-sp-2s:perf-profiler"),
		       twin = boot("skylake-sp-2s:perf-profiler");
	struct engine e = new_engine(&m);
	struct engine_group *g;
	struct engine_reading r[6];
	char err[256];
	uint64_t lost = 0, before = 0;
	/* cycles on GP 0 (fixed 1 is the watchdog's), then GP 1, 2 (llc_misses), 3 */
	static const struct engine_event six[6] = {
		{ .name = "instructions", .code = 0xc0 },
		{ .name = "cycles", .code = 0x3c },
		{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
		{ .name = "llc_refs", .code = 0x2e, .umask = 0x4f },
		{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
		{ .name = "branches", .code = 0xc4 },
	};

	(void)state;
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 3, six, 6, &g, err,
				     sizeof(err)), 0);
	for (int t = 1; t <= 60; t++) {
		advance_both(&m, &twin, 1);
		assert_int_equal(engine_read(&e, g, r), 0);
		for (int i = 0; i < 6; i++) {
			if (i == 4)
				continue;
			assert_int_equal(r[i].state, ENGINE_COUNTING);
			assert_int_equal(r[i].total, truth(&m, false, 3, six[i].code, six[i].umask));
		}
		/* perf holds GP 2 in [2,7) of every 10 s: reads at 2..6 see it taken */
		if (t % 10 >= 2 && t % 10 <= 6) {
			assert_int_equal(r[4].state, ENGINE_YIELDED);
			assert_non_null(r[4].reason);
		} else {
			if (r[4].state != ENGINE_COUNTING)
				fail_msg("t %d: %s", t, r[4].reason);
		}
		if (r[4].running_ns == 0)
			lost += truth(&m, false, 3, 0x2e, 0x41) - before - r[4].delta;
		before = truth(&m, false, 3, 0x2e, 0x41);
	}
	assert_int_equal(r[4].conflicts, 6);
	assert_int_equal(r[0].conflicts + r[1].conflicts + r[2].conflicts + r[3].conflicts +
			 r[5].conflicts, 0);
	assert_true(r[4].total < truth(&m, false, 3, 0x2e, 0x41));
	assert_int_equal(r[4].total + lost, truth(&m, false, 3, 0x2e, 0x41));
	assert_int_equal(engine_close(&e, g, NULL), 0);
	assert_like_twin("perf-profiler", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(boot_state_counts_on_every_cpu_of_every_model),
		cmocka_unit_test(uncore_counts_on_westmere_after_perf_uncore_use),
		cmocka_unit_test(perf_user_takes_a_gp_counter_repeatedly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
