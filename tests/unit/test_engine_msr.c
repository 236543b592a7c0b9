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
#include "ledger.h"
#include "msr.h"
#include "recovery.h"
#include "sim.h"
#include "state_file.h"

#define MAX_DUMP 16384
#define N_EV 4
#define UCLK_10S (UINT64_C(2400000000) * 10)

struct dump {
	int n;
	int cpu[MAX_DUMP];
	uint32_t msr[MAX_DUMP];
	uint64_t value[MAX_DUMP];
};

static struct dump dump_a, dump_b;

static const char *slurp_file(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

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

/*
 * After close, every register reads as on the twin that never ran the
 * engine, except msr on the CPUs of socket, which must read `extra` more:
 * the counts we made on a counter before another agent that never writes
 * it took it over.
 */
static void assert_like_twin_but(const char *what, struct machine *m, struct machine *twin,
				 int socket, uint32_t msr, uint64_t extra)
{
	struct hw_cpu cpus[256];
	int n_cpus;

	assert_int_equal(hw_enumerate(&m->hw, cpus, 256, &n_cpus), 0);
	dump_a.n = dump_b.n = 0;
	sim_dump(m->sim, dump_one, &dump_a);
	sim_dump(twin->sim, dump_one, &dump_b);
	assert_int_equal(dump_a.n, dump_b.n);
	for (int i = 0; i < dump_a.n; i++)
		if (socket >= 0 && cpus[dump_a.cpu[i]].socket == socket && dump_a.msr[i] == msr)
			assert_int_equal(dump_a.value[i], dump_b.value[i] + extra);
		else if (dump_a.value[i] != dump_b.value[i] || dump_a.msr[i] != dump_b.msr[i])
			fail_msg("%s: cpu %d msr 0x%x: 0x%llx, twin 0x%llx", what, dump_a.cpu[i],
				 dump_a.msr[i], (unsigned long long)dump_a.value[i],
				 (unsigned long long)dump_b.value[i]);
}

static void assert_like_twin(const char *what, struct machine *m, struct machine *twin)
{
	assert_like_twin_but(what, m, twin, -1, 0, 0);
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
	static const char *const models[] = { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s",
					      "big" };

	(void)state;
	for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		struct machine m = boot(models[k]), twin = boot(models[k]);
		struct engine e = new_engine(&m);
		struct engine_group *g[256];
		struct engine_reading r[N_EV];
		char err[256];
		int n_cpus = 0;
		struct hw_cpu cpus[256];

		assert_int_equal(hw_enumerate(&m.hw, cpus, 256, &n_cpus), 0);
		assert_true(n_cpus <= 256);
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

/* cycles on GP 0 (fixed 1 is the watchdog's), then GP 1, 2 (llc_misses), 3 */
static const struct engine_event six[6] = {
	{ .name = "instructions", .code = 0xc0 },
	{ .name = "cycles", .code = 0x3c },
	{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
	{ .name = "llc_refs", .code = 0x2e, .umask = 0x4f },
	{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
	{ .name = "branches", .code = 0xc4 },
};

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


/*
 * Nehalem/Westmere: every perf add rewrites all four GP selects and zeroes
 * PMC0..3 (hardware-linux.md §1.2).  The fixed-counter events lose
 * nothing; GP events lose the interval before each add, are re-claimed at
 * once (their select was left 0, so the counter is free), and the one on
 * perf's counter waits until perf leaves.  The engine never writes perf's
 * select, so it does not fight perf; one conflict per add.
 */
static void nhm_workaround_costs_one_interval_and_no_fight(void **state)
{
	struct machine m = boot("westmere-ep-2s:perf-profiler"),
		       twin = boot("westmere-ep-2s:perf-profiler");
	struct engine e = new_engine(&m);
	struct engine_group *g;
	struct engine_reading r[6];
	uint64_t lost[6] = { 0 }, before[6] = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 5, six, 6, &g, err, sizeof(err)), 0);
	for (int t = 1; t <= 60; t++) {
		uint64_t sel;

		advance_both(&m, &twin, 1);
		assert_int_equal(engine_read(&e, g, r), 0);
		for (int i = 0; i < 6; i++) {
			uint64_t now = truth(&m, false, 5, six[i].code, six[i].umask);

			if (r[i].running_ns == 0)
				lost[i] += now - before[i] - r[i].delta;
			before[i] = now;
			assert_int_equal(r[i].total + lost[i], now);
		}
		assert_int_equal(r[0].total, before[0]);   /* fixed counters: nothing lost */
		assert_int_equal(r[2].total, before[2]);
		assert_int_equal(hw_read_msr(&m.hw, 5, IA32_PERFEVTSEL0 + 2, &sel), 0);
		if (t % 10 >= 2 && t % 10 <= 6)
			assert_int_equal(sel, 0x5300c4);   /* perf's, untouched */
	}
	/* GP 0, 1 and 3 were cleared by each add (resets); GP 2 taken (conflicts) */
	for (int i = 0; i < 6; i++) {
		bool gp = i == 1 || i >= 3;

		assert_int_equal(r[i].conflicts, i == 4 ? 6 : 0);
		assert_int_equal(r[i].resets, gp && i != 4 ? 6 : 0);
	}
	assert_int_equal(engine_close(&e, g, NULL), 0);
	assert_like_twin("nhm workaround", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

/*
 * The kernel's transient disables (0x38F = 0 for 1 ms every second) cost
 * exactly the windows' counts, are no conflicts, and the engine never
 * writes the kernel's gate.
 */
static void transient_global_disable_is_no_conflict(void **state)
{
	struct machine m = boot("skylake-sp-2s:global-disable"),
		       twin = boot("skylake-sp-2s:global-disable");
	struct engine e = new_engine(&m);
	struct engine_group *g;
	struct engine_reading r[N_EV];
	char err[256];
	uint64_t writes, at_open[N_EV];

	(void)state;
	advance_both(&m, &twin, 0.5);   /* claim and read between the windows */
	for (int i = 0; i < N_EV; i++)
		at_open[i] = truth(&m, false, 7, core_events[i].code, core_events[i].umask);
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 7, core_events, N_EV, &g, err,
				     sizeof(err)), 0);
	writes = m.hw.n_writes;
	for (int t = 1; t <= 10; t++) {
		advance_both(&m, &twin, 1);
		assert_int_equal(engine_read(&e, g, r), 0);
	}
	assert_int_equal(m.hw.n_writes, writes);
	for (int i = 0; i < N_EV; i++) {
		uint64_t all = truth(&m, false, 7, core_events[i].code, core_events[i].umask) -
			       at_open[i];
		uint64_t expected = all - all / 1000;   /* ten 1 ms windows in 10 s */

		assert_int_equal(r[i].state, ENGINE_COUNTING);
		assert_int_equal(r[i].conflicts, 0);
		assert_true(r[i].total + 10 >= expected && r[i].total <= expected + 10);
	}
	assert_int_equal(engine_close(&e, g, NULL), 0);
	assert_like_twin("global-disable", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

/* In the reset state nobody manages the gates: the engine sets its bits and clears them. */
static void reset_state_gates_set_and_restored(void **state)
{
	char dir[4096], err[512];
	struct machine m, twin;
	struct engine e;
	struct engine_group *g;
	struct engine_reading r[N_EV];
	uint64_t v;

	(void)state;
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	/* The reset state, on purpose: the engine sets the gate bits itself there. */
	m.sim = sim_open_boot("nehalem-ep-2s", dir, SIM_CLOCK_STEPPED, SIM_BOOT_RESET, err,
			      sizeof(err));
	twin.sim = sim_open_boot("nehalem-ep-2s", dir, SIM_CLOCK_STEPPED, SIM_BOOT_RESET, err,
				 sizeof(err));
	assert_non_null(m.sim);
	assert_non_null(twin.sim);
	sim_bind(m.sim, &m.hw);
	sim_bind(twin.sim, &twin.hw);
	e = new_engine(&m);
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 1, core_events, N_EV, &g, err,
				     sizeof(err)), 0);
	assert_int_equal(hw_read_msr(&m.hw, 1, IA32_PERF_GLOBAL_CTRL, &v), 0);
	assert_int_equal(v, 0x700000001);     /* fixed 0..2 and GP 0 */
	advance_both(&m, &twin, 3);
	assert_int_equal(hw_write_msr(&m.hw, 1, IA32_PERF_GLOBAL_CTRL, 0), 0);  /* someone */
	assert_int_equal(hw_write_msr(&twin.hw, 1, IA32_PERF_GLOBAL_CTRL, 0), 0);
	assert_int_equal(engine_read(&e, g, r), 0);
	assert_int_equal(hw_read_msr(&m.hw, 1, IA32_PERF_GLOBAL_CTRL, &v), 0);
	assert_int_equal(v, 0x700000001);     /* our bits, set again */
	advance_both(&m, &twin, 2);
	assert_int_equal(engine_read(&e, g, r), 0);
	for (int i = 0; i < N_EV; i++)
		assert_int_equal(r[i].total, truth(&m, false, 1, core_events[i].code,
						   core_events[i].umask));
	assert_int_equal(engine_close(&e, g, NULL), 0);
	assert_like_twin("reset state", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

/*
 * reclaim: the select is written back at once; still one conflict per
 * real takeover.  A read that finds our enable cleared (a reset) has lost
 * its interval: it reads as waiting, with no value, then counts again.
 */
static void reclaim_counts_takeovers_not_samples(void **state)
{
	struct machine m = boot("skylake-sp-2s:perf-profiler");
	struct engine_msr_config cfg = { .hw = &m.hw, .policy = ENGINE_RECLAIM, .now_ns = sim_ns,
					 .now_arg = m.sim };
	struct engine e;
	struct engine_group *g;
	struct engine_reading r[6];
	char err[256];
	uint64_t resets = 0;

	(void)state;
	assert_int_equal(engine_msr_new(&cfg, &e), 0);
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 0, six, 6, &g, err, sizeof(err)), 0);
	for (int t = 1; t <= 60; t++) {
		sim_advance(m.sim, 0.5);
		assert_int_equal(engine_read(&e, g, r), 0);
		assert_int_equal(r[4].state, r[4].resets > resets ? ENGINE_WAITING : ENGINE_COUNTING);
		resets = r[4].resets;
	}
	assert_int_equal(r[4].conflicts, 3);   /* perf adds at 2, 12 and 22 s */
	assert_int_equal(r[4].resets, 3);      /* perf's disable over ours at 7, 17, 27 s */
	assert_int_equal(engine_close(&e, g, NULL), 0);
	engine_destroy(&e);
	hw_close(&m.hw);
}

/* Perf uncore use comes and goes on the box the engine counts on. */
static void perf_uncore_use_and_restore(void **state)
{
	static const struct engine_event ev[2] = {
		{ .name = "prochot", .code = 0x82, .umask = 0x01 },
		{ .name = "uclk", .code = ENGINE_UNCORE_CLOCK },
	};
	struct machine m = boot("westmere-ep-2s:perf-uncore"),
		       twin = boot("westmere-ep-2s:perf-uncore");
	struct engine e = new_engine(&m);
	struct engine_group *g;
	struct engine_reading r[2];
	char err[256];

	(void)state;
	assert_int_equal(engine_open(&e, ENGINE_PMU_NHM_UNCORE, 6, ev, 2, &g, err, sizeof(err)),
			 0);
	for (int t = 1; t <= 60; t++) {
		advance_both(&m, &twin, 1);
		assert_int_equal(engine_read(&e, g, r), 0);
		/* perf takes counter 0 at 10 s: prochot moves to counter 1 at once */
		assert_int_equal(r[0].state, ENGINE_COUNTING);
		assert_int_equal(r[0].conflicts, t < 10 ? 0 : 1);
		assert_int_equal(r[1].state, ENGINE_COUNTING);
	}
	assert_int_equal(r[1].resets, 1);     /* perf's fixed counter release at 20 s */
	assert_int_equal(engine_close(&e, g, NULL), 0);
	/*
	 * Perf enabled the uncore fixed counter at 10 s exactly as we had (0x395
	 * = 1), so nothing showed the takeover until its release at 20 s, and
	 * perf never writes uncore counters: the UCLK counts we made from 0 to
	 * 10 s stay in 0x394 (perf reads deltas, so its counts are intact).  On
	 * counter 0 the same holds for prochot, which did not occur.
	 */
	assert_like_twin_but("perf-uncore", &m, &twin, 1, MSR_UNCORE_FIXED_CTR0, UCLK_10S);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

/*
 * The uncore box is reached through another CPU of its socket when its CPU
 * goes offline; a core group on an offline CPU reads -ENXIO.
 */
static void box_moves_to_another_cpu_of_its_socket(void **state)
{
	static const struct engine_event ev[2] = {
		{ .name = "dram_throttle", .code = 0x67, .umask = 0x01 },
		{ .name = "uclk", .code = ENGINE_UNCORE_CLOCK },
	};
	struct machine m = boot("westmere-ep-2s:dram-heatwave"),
		       twin = boot("westmere-ep-2s:dram-heatwave");
	struct engine e = new_engine(&m);
	struct engine_group *box, *core;
	struct engine_reading r[N_EV];
	char err[256];

	(void)state;
	assert_int_equal(engine_open(&e, ENGINE_PMU_NHM_UNCORE, 6, ev, 2, &box, err, sizeof(err)),
			 0);
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 6, core_events, N_EV, &core, err,
				     sizeof(err)), 0);
	advance_both(&m, &twin, 10);
	assert_int_equal(engine_read(&e, box, r), 0);
	assert_int_equal(sim_set_online(m.sim, 6, false), 0);
	advance_both(&m, &twin, 10);
	assert_int_equal(engine_read(&e, core, r), -ENXIO);
	assert_int_equal(engine_read(&e, box, r), 0);
	assert_int_equal(r[0].state, ENGINE_COUNTING);
	assert_int_equal(r[0].total, truth(&m, true, 1, 0x67, 0x01));
	assert_int_equal(r[1].total, truth(&m, true, 1, SIM_UNCORE_CLOCK_CODE, 0));
	assert_int_equal(engine_close(&e, box, NULL), 0);
	assert_int_equal(sim_set_online(m.sim, 6, true), 0);
	assert_int_equal(engine_close(&e, core, NULL), 0);
	assert_like_twin("box moved", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
}

/*
 * The crash journal keeps working through the engine: a daemon killed
 * while perf holds one of its counters leaves a state file from which the
 * next start restores every register as on the twin.
 */
static void killed_engine_is_undone_from_the_journal(void **state)
{
	struct machine m = boot("skylake-sp-2s:perf-profiler"),
		       twin = boot("skylake-sp-2s:perf-profiler");
	struct engine e = new_engine(&m);
	struct engine_group *g[4];
	struct engine_reading r[6];
	struct ledger_recovery rec;
	struct state_file *lf;
	char dir[256], path[300], copy[300], err[256];

	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/ledger", dir);
	snprintf(copy, sizeof(copy), "%s/ledger.at-kill", dir);
	assert_int_equal(recovery_open(path, "/", &m.hw, &lf, &rec, err, sizeof(err)), 0);
	ledger_set_journal(lf);
	for (int c = 0; c < 4; c++)
		assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, c, six, 6, &g[c], err,
					     sizeof(err)), 0);
	for (int t = 1; t <= 4; t++) {
		advance_both(&m, &twin, 1);
		for (int c = 0; c < 4; c++)
			assert_int_equal(engine_read(&e, g[c], r), 0);
	}
	assert_int_equal(r[4].state, ENGINE_YIELDED);
	assert_int_equal(state_file_error(lf), 0);
	/* the kill: the file as it is now; nothing of ours is restored */
	helpers_write_file(copy, slurp_file(path));
	ledger_set_journal(NULL);
	sim_refuse_writes(m.sim, true);
	for (int c = 0; c < 4; c++)
		engine_close(&e, g[c], NULL);
	sim_refuse_writes(m.sim, false);
	state_file_close(lf);
	advance_both(&m, &twin, 1);
	/* the next start */
	assert_int_equal(recovery_open(copy, "/", &m.hw, &lf, &rec, err, sizeof(err)), 0);
	assert_true(rec.found);
	assert_int_not_equal(rec.cleaned, 0);
	assert_int_equal(rec.failed, 0);
	state_file_close(lf);
	assert_like_twin("recovered", &m, &twin);
	engine_destroy(&e);
	hw_close(&m.hw);
	hw_close(&twin.hw);
	helpers_rmtree(dir);
}

/*
 * A GP counter found above 2^31 (another agent counted on it) goes back
 * exactly where full-width writes exist (skylake-sp: IA32_A_PMCx), and is
 * never corrupted by a sign-extended IA32_PMCx write where they do not
 * (westmere-ep): there it keeps what it counted (hardware-linux.md §2).
 */
static void gp_counter_goes_back_at_full_width_or_not_at_all(void **state)
{
	static const char *const models[] = { "skylake-sp-2s", "westmere-ep-2s" };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct machine m = boot(models[k]);
		struct engine e = new_engine(&m);
		struct engine_group *g;
		struct engine_reading r[N_EV];
		uint64_t found, after, caps;
		char err[256];

		/* Another agent counts cycles on GP counter 1 for 12 s, then lets it go. */
		assert_int_equal(sim_poke(m.sim, 0, IA32_PERFEVTSEL0 + 1, 0x43003c), 0);
		sim_advance(m.sim, 12.0);
		assert_int_equal(sim_poke(m.sim, 0, IA32_PERFEVTSEL0 + 1, 0x03003c), 0);
		assert_int_equal(hw_read_msr(&m.hw, 0, IA32_PMC0 + 1, &found), 0);
		assert_true(found > UINT32_MAX / 2);
		assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 0, core_events, N_EV, &g, err,
					     sizeof(err)), 0);
		sim_advance(m.sim, 1.0);
		assert_int_equal(engine_read(&e, g, r), 0);
		assert_int_equal(hw_read_msr(&m.hw, 0, IA32_PERFEVTSEL0 + 1, &after), 0);
		assert_int_equal(after & 0xffff, 0x412e);   /* llc_misses took GP counter 1 */
		assert_int_equal(engine_close(&e, g, NULL), 0);
		assert_int_equal(hw_read_msr(&m.hw, 0, IA32_PMC0 + 1, &after), 0);
		if (hw_read_msr(&m.hw, 0, IA32_PERF_CAPABILITIES, &caps) == 0 &&
		    (caps & PERF_CAP_FW_WRITE))
			assert_int_equal(after, found);
		else   /* what 1 s of llc_misses added, not a sign-extended 0xffff... */
			assert_true(after >= found && after - found < UINT64_C(1) << 32);
		engine_destroy(&e);
		hw_close(&m.hw);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(boot_state_counts_on_every_cpu_of_every_model),
		cmocka_unit_test(uncore_counts_on_westmere_after_perf_uncore_use),
		cmocka_unit_test(perf_user_takes_a_gp_counter_repeatedly),
		cmocka_unit_test(nhm_workaround_costs_one_interval_and_no_fight),
		cmocka_unit_test(transient_global_disable_is_no_conflict),
		cmocka_unit_test(reset_state_gates_set_and_restored),
		cmocka_unit_test(reclaim_counts_takeovers_not_samples),
		cmocka_unit_test(perf_uncore_use_and_restore),
		cmocka_unit_test(killed_engine_is_undone_from_the_journal),
		cmocka_unit_test(box_moves_to_another_cpu_of_its_socket),
		cmocka_unit_test(gp_counter_goes_back_at_full_width_or_not_at_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
