/*
 * The perf engine against the simulated kernel's perf_event_open
 * (sim_perf_sys), on machines in the state Linux leaves the PMU: what
 * counts beside the NMI watchdog, one group read per CPU per sample,
 * multiplexing and its scaled estimates against the simulator's ground
 * truth, the uncore PMU on Westmere, hotplug, and the msr engine sharing a
 * machine with perf.  Nothing here depends on timing: the clock is stepped.
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
#include "engine_perf.h"
#include "helpers.h"
#include "msr.h"
#include "perf_group.h"
#include "perf_sys_linux.h"
#include "sim.h"

#define MAX_CPUS 256

struct machine {
	struct sim *sim;
	struct hw hw;
	struct perf_sys ps;
	struct engine e;
	char root[4096];
	struct hw_cpu cpus[MAX_CPUS];
	int n_cpus;
};

static int cpu_online(void *arg, int cpu)
{
	return hw_cpu_online(&((struct machine *)arg)->hw, cpu);
}

static int cpu_socket(void *arg, int cpu)
{
	struct machine *m = arg;

	return cpu >= 0 && cpu < m->n_cpus ? m->cpus[cpu].socket : -ENOENT;
}

static struct machine *boot(const char *spec)
{
	static struct machine m;
	struct engine_perf_config cfg = { .cpu_online = cpu_online, .cpu_socket = cpu_socket };
	char dir[4096], err[512];

	memset(&m, 0, sizeof(m));
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	m.sim = sim_open_boot(spec, dir, SIM_CLOCK_STEPPED, SIM_BOOT_LINUX, err, sizeof(err));
	if (!m.sim)
		fail_msg("%s: %s", spec, err);
	sim_bind(m.sim, &m.hw);
	assert_int_equal(hw_enumerate(&m.hw, m.cpus, MAX_CPUS, &m.n_cpus), 0);
	assert_true(m.n_cpus <= MAX_CPUS);
	helpers_mkdtemp(m.root, sizeof(m.root));
	if (sim_write_sysfs(m.sim, m.root, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(sim_perf_sys(m.sim, m.root, &m.ps), 0);
	cfg.ps = &m.ps;
	cfg.arg = &m;
	if (engine_perf_new(&cfg, &m.e, err, sizeof(err)) < 0)
		fail_msg("%s: %s", spec, err);
	return &m;
}

static void shut(struct machine *m)
{
	engine_destroy(&m->e);
	assert_int_equal(sim_perf_open_events(m->sim), 0);
	perf_sys_free(&m->ps);
	hw_close(&m->hw);
	helpers_rmtree(m->root);
}

static uint64_t truth(struct machine *m, bool uncore, int where, const struct engine_event *ev)
{
	uint64_t v;

	assert_int_equal(sim_ground_truth(m->sim, uncore, where, ev->code, ev->umask, ev->edge, &v),
			 0);
	return v;
}

static uint64_t rd(struct machine *m, int cpu, uint32_t msr)
{
	uint64_t v;

	assert_int_equal(hw_read_msr(&m->hw, cpu, msr, &v), 0);
	return v;
}

static int64_t sim_ns(void *arg)
{
	return (int64_t)(sim_now(arg) * 1e9 + 0.5);
}

static const struct engine_event fixed3[] = {
	{ .name = "instructions", .code = 0xc0 },
	{ .name = "cycles", .code = 0x3c },
	{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
};
#define N_FIXED3 (sizeof(fixed3) / sizeof(fixed3[0]))

/*
 * Every Intel model in the boot state: instructions, cycles and reference
 * cycles count on every CPU through perf beside the watchdog (which keeps
 * fixed counter 1, so cycles is on a GP counter), exactly as the ground
 * truth says, with one read(2) per CPU per sample; after close the kernel
 * leaves 0x38F = intel_ctrl and the GP select stale with EN clear.
 */
static void boot_state_counts_through_perf_on_every_model(void **state)
{
	static const char *const models[] = { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s",
					      "big" };

	(void)state;
	for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		struct machine *m = boot(models[k]);
		struct engine_group *g[MAX_CPUS];
		struct engine_reading r[N_FIXED3];
		uint64_t before[MAX_CPUS][N_FIXED3], ctrl = rd(m, 0, IA32_PERF_GLOBAL_CTRL);
		char err[512];

		for (int c = 0; c < m->n_cpus; c++) {
			if (engine_open(&m->e, ENGINE_PMU_CORE, c, fixed3, N_FIXED3, &g[c], err,
					sizeof(err)) < 0)
				fail_msg("%s: %s", models[k], err);
			for (size_t i = 0; i < N_FIXED3; i++)
				before[c][i] = truth(m, false, c, &fixed3[i]);
		}
		for (int step = 0; step < 3; step++) {
			uint64_t reads = m->ps.counts.n_read, calls = perf_sys_calls(&m->ps);

			sim_advance(m->sim, 2);
			for (int c = 0; c < m->n_cpus; c++) {
				assert_int_equal(engine_read(&m->e, g[c], r), 0);
				for (size_t i = 0; i < N_FIXED3; i++) {
					assert_int_equal(r[i].state, ENGINE_COUNTING);
					assert_int_equal(r[i].total,
							 truth(m, false, c, &fixed3[i]) - before[c][i]);
					assert_int_equal(r[i].delta, r[i].raw_delta);
					assert_true(r[i].enabled_ns == 2000000000u);
					assert_true(engine_reading_ratio(&r[i]) == 1.0);
				}
				assert_int_not_equal(r[1].delta, 0);
			}
			/* One group read per CPU, and no other system call, per sample. */
			assert_int_equal(m->ps.counts.n_read - reads, m->n_cpus);
			assert_int_equal(perf_sys_calls(&m->ps) - calls, m->n_cpus);
		}
		for (int c = 0; c < m->n_cpus; c++) {
			bool cycles_on_gp = false;

			assert_int_equal((rd(m, c, IA32_FIXED_CTR_CTRL) >> 4) & 0xf, 0xb);
			for (uint32_t n = 0; n < 4; n++)
				cycles_on_gp |= rd(m, c, IA32_PERFEVTSEL0 + n) ==
						(0x3c | PERFEVTSEL_USR | PERFEVTSEL_OS |
						 PERFEVTSEL_INT | PERFEVTSEL_EN);
			assert_true(cycles_on_gp);
			assert_int_equal(engine_close(&m->e, g[c], NULL), 0);
			assert_int_equal(rd(m, c, IA32_PERF_GLOBAL_CTRL), ctrl);
			for (uint32_t n = 0; n < 4; n++)
				assert_int_equal(rd(m, c, IA32_PERFEVTSEL0 + n) & PERFEVTSEL_EN, 0);
			assert_int_equal((rd(m, c, IA32_FIXED_CTR_CTRL) >> 4) & 0xf, 0xb);
			assert_int_equal(rd(m, c, IA32_FIXED_CTR_CTRL) & 0xf0f, 0);
		}
		shut(m);
	}
}

static const struct engine_event many[] = {
	{ .name = "instructions", .code = 0xc0 },
	{ .name = "cycles", .code = 0x3c },
	{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
	{ .name = "llc_references", .code = 0x2e, .umask = 0x4f },
	{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
	{ .name = "branches", .code = 0xc4 },
	{ .name = "branch_misses", .code = 0xc5 },
	{ .name = "ref_cycles_gp", .code = 0x3c, .umask = 0x01, .gp_only = true },
};
#define N_MANY (sizeof(many) / sizeof(many[0]))

static bool within_2_percent(uint64_t got, uint64_t want)
{
	double d = (double)got - (double)want;

	return want > 0 && (d < 0 ? -d : d) <= 0.02 * (double)want;
}

/*
 * More events than counters: the kernel refuses the whole group, the
 * engine splits it, the halves rotate, and the scaled counts are within
 * 2 % of the ground truth with the ratio reported below 1.
 */
static void more_events_than_counters_are_scaled(void **state)
{
	struct machine *m = boot("westmere-ep-2s");
	struct engine_group *g;
	struct engine_reading r[N_MANY];
	uint64_t before[N_MANY];
	char err[512];
	int cpu = 3;
	bool some_multiplexed = false;

	(void)state;
	if (engine_open(&m->e, ENGINE_PMU_CORE, cpu, many, N_MANY, &g, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	for (size_t i = 0; i < N_MANY; i++)
		before[i] = truth(m, false, cpu, &many[i]);
	for (int step = 0; step < 3; step++) {
		uint64_t reads = m->ps.counts.n_read;

		sim_advance(m->sim, 1);
		assert_int_equal(engine_read(&m->e, g, r), 0);
		/* two halves, one read each: 4 GP + 3 fixed counters cannot take 8 in one group */
		assert_int_equal(m->ps.counts.n_read - reads, 2);
		for (size_t i = 0; i < N_MANY; i++) {
			uint64_t want = truth(m, false, cpu, &many[i]) - before[i];

			assert_int_equal(r[i].state, ENGINE_COUNTING);
			if (!within_2_percent(r[i].total, want))
				fail_msg("%s: scaled %llu, truth %llu", many[i].name,
					 (unsigned long long)r[i].total, (unsigned long long)want);
			assert_true(r[i].running_ns <= r[i].enabled_ns);
			if (engine_reading_ratio(&r[i]) < 0.9) {
				some_multiplexed = true;
				assert_true(r[i].delta > r[i].raw_delta);
			}
		}
	}
	assert_true(some_multiplexed);
	assert_int_equal(engine_close(&m->e, g, NULL), 0);
	shut(m);
}

/*
 * Another CPU-wide perf user (as `perf stat -a` would be) whose group
 * needs the same GP counters joins the rotation: nobody's counter is
 * overwritten, both see running < enabled, and our scaled counts stay
 * within 2 % of the ground truth.  When it leaves, ours runs all the time.
 */
static void another_perf_user_joins_the_rotation(void **state)
{
	static const struct engine_event four[] = {
		{ .name = "llc_references", .code = 0x2e, .umask = 0x4f },
		{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
		{ .name = "branches", .code = 0xc4 },
		{ .name = "branch_misses", .code = 0xc5 },
	};
	struct machine *m = boot("nehalem-ep-2s");
	struct perf_group_event other[2] = {
		{ .name = "cycles", .type = PERF_TYPE_HARDWARE, .cfg = { { PERF_COUNT_HW_CPU_CYCLES } } },
		{ .name = "branches", .type = PERF_TYPE_HARDWARE,
		  .cfg = { { PERF_COUNT_HW_BRANCH_INSTRUCTIONS } } },
	};
	struct perf_group_delta od[2];
	struct perf_group *pg;
	struct engine_group *g;
	struct engine_reading r[4];
	uint64_t before[4];
	char err[512];
	int cpu = 4;

	(void)state;
	if (engine_open(&m->e, ENGINE_PMU_CORE, cpu, four, 4, &g, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	if (perf_group_open(&m->ps, cpu, other, 2, &pg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(perf_group_enable(pg), 0);
	assert_int_equal(perf_group_read(pg, od), 0);
	for (size_t i = 0; i < 4; i++)
		before[i] = truth(m, false, cpu, &four[i]);
	for (int step = 0; step < 3; step++) {
		sim_advance(m->sim, 1);
		assert_int_equal(engine_read(&m->e, g, r), 0);
		assert_int_equal(perf_group_read(pg, od), 0);
		assert_true(od[0].ran && od[0].ratio < 0.9);
		for (size_t i = 0; i < 4; i++) {
			uint64_t want = truth(m, false, cpu, &four[i]) - before[i];

			assert_true(engine_reading_ratio(&r[i]) < 0.9);
			assert_true(engine_reading_ratio(&r[i]) > 0.1);
			if (!within_2_percent(r[i].total, want))
				fail_msg("%s: scaled %llu, truth %llu", four[i].name,
					 (unsigned long long)r[i].total, (unsigned long long)want);
		}
	}
	perf_group_close(pg);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	for (size_t i = 0; i < 4; i++)
		assert_true(engine_reading_ratio(&r[i]) == 1.0);
	assert_int_equal(engine_close(&m->e, g, NULL), 0);
	shut(m);
}

/* The Westmere uncore through the kernel's uncore PMU: clockticks and DRAM throttling. */
static void uncore_counts_through_the_uncore_pmu(void **state)
{
	static const struct engine_event ev[] = {
		{ .name = "uclk", .code = ENGINE_UNCORE_CLOCK },
		{ .name = "dram_throttled", .code = 0x67, .umask = 0x01 },
	};
	struct machine *m = boot("westmere-ep-2s:dram-heatwave");
	struct engine_group *g[2];
	struct engine_reading r[2];
	uint64_t before[2][2];
	char err[512];

	(void)state;
	for (int sk = 0; sk < 2; sk++) {
		int target = -1;

		/* the socket's last CPU: the engine opens on the cpumask's CPU */
		for (int c = 0; c < m->n_cpus; c++)
			if (m->cpus[c].socket == sk)
				target = c;
		assert_true(target > 0);
		if (engine_open(&m->e, ENGINE_PMU_NHM_UNCORE, target, ev, 2, &g[sk], err,
				sizeof(err)) < 0)
			fail_msg("%s", err);
	}
	for (int sk = 0; sk < 2; sk++)
		for (int i = 0; i < 2; i++)
			before[sk][i] = truth(m, true, sk, &ev[i]);
	sim_advance(m->sim, 10);
	for (int sk = 0; sk < 2; sk++) {
		assert_int_equal(engine_read(&m->e, g[sk], r), 0);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(r[i].state, ENGINE_COUNTING);
			assert_int_equal(r[i].total, truth(m, true, sk, &ev[i]) - before[sk][i]);
		}
	}
	assert_int_not_equal(r[1].total, 0);          /* socket 1's DRAM throttles */
	assert_int_equal(rd(m, 0, MSR_UNCORE_FIXED_CTR_CTRL), UNC_FIXED_CTR_CTRL_EN);
	for (int sk = 0; sk < 2; sk++)
		assert_int_equal(engine_close(&m->e, g[sk], NULL), 0);
	assert_int_equal(rd(m, 0, MSR_UNCORE_FIXED_CTR_CTRL), 0);
	assert_int_equal(rd(m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x1000000ff));
	shut(m);
}

/*
 * The core PMU's geometry as Linux finds it (hardware-linux.md §6): Ice
 * Lake-SP and later report arch perfmon v5 with 8 GP and 4 fixed counters
 * in CPUID leaf 0xA, and the kernel's intel_ctrl in 0x38F carries their
 * enables and EN_PERF_METRICS (bit 48); Skylake-SP has v4, 4 and 3.
 */
static void core_geometry_is_the_generations(void **state)
{
	static const struct { const char *model; unsigned version, gp, fixed; } want[] = {
		{ "skylake-sp-2s", 4, 4, 3 },
		{ "icelake-sp-2s", 5, 8, 4 },
		{ "sapphire-rapids-2s", 5, 8, 4 },
		{ "granite-rapids-2s", 5, 8, 4 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct machine *m = boot(want[i].model);
		struct hw_cpuid r;
		uint64_t ctrl = ((UINT64_C(1) << want[i].gp) - 1) |
				((UINT64_C(1) << want[i].fixed) - 1) << 32;

		assert_int_equal(hw_cpuid(&m->hw, 1, 0xa, 0, &r), 0);
		assert_int_equal(r.eax & 0xff, want[i].version);
		assert_int_equal((r.eax >> 8) & 0xff, want[i].gp);
		assert_int_equal(r.edx & 0x1f, want[i].fixed);
		if (want[i].version >= 5)
			ctrl |= UINT64_C(1) << 48;
		assert_int_equal(rd(m, 1, IA32_PERF_GLOBAL_CTRL), ctrl);
		shut(m);
	}
}

/*
 * perf's PCU box writes reach the box's MSRs (hardware-linux.md §1.4): the
 * select holds the config with EN while perf counts, BOX_CTL.FRZ is clear
 * between schedules, and after the close the select is left stale with EN
 * clear, as a raw-MSR user then finds it.
 */
static void pcu_box_writes_reach_the_registers(void **state)
{
	static const struct engine_event prochot[] = { { .name = "prochot_external", .code = 0x0a } };
	struct machine *m = boot("skylake-sp-2s");
	struct engine_group *g;
	struct engine_reading r[1];
	char err[512];

	(void)state;
	assert_int_equal(rd(m, 0, 0x711), 0);
	assert_int_equal(engine_open(&m->e, ENGINE_PMU_PCU, ENGINE_BOX_TARGET(0, 0), prochot, 1, &g,
				     err, sizeof(err)), 0);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	assert_int_equal(rd(m, 0, 0x711) & 0xff, 0x0a);
	assert_true(rd(m, 0, 0x711) & UINT64_C(1) << 22);
	assert_false(rd(m, 0, 0x710) & UINT64_C(1) << 8);
	assert_int_equal(engine_close(&m->e, g, NULL), 0);
	assert_int_equal(rd(m, 0, 0x711), 0x0a);
	shut(m);
}

/* Open fixed3 on cpu, count 1 s and read: the group, its totals into total. */
static struct engine_group *open_counting(struct machine *m, int cpu, uint64_t *total)
{
	struct engine_group *g;
	struct engine_reading r[N_FIXED3];
	char err[512];

	assert_int_equal(engine_open(&m->e, ENGINE_PMU_CORE, cpu, fixed3, N_FIXED3, &g, err,
				     sizeof(err)), 0);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	for (size_t i = 0; i < N_FIXED3; i++)
		total[i] = r[i].total;
	return g;
}

/* r counts and its totals are total plus what cpu counted since mark (the ground truth). */
static void assert_counts_on(struct machine *m, int cpu, const struct engine_reading *r,
			     const uint64_t *total, const uint64_t *mark)
{
	for (size_t i = 0; i < N_FIXED3; i++) {
		assert_int_equal(r[i].state, ENGINE_COUNTING);
		assert_int_equal(r[i].total, total[i] + truth(m, false, cpu, &fixed3[i]) - mark[i]);
	}
}

/* A CPU going offline and back: read says -ENXIO, then the group is reopened, totals carry on. */
static void hotplug_reopens_and_totals_carry_on(void **state)
{
	struct machine *m = boot("westmere-ep-2s");
	struct engine_reading r[N_FIXED3];
	uint64_t total[N_FIXED3], mark[N_FIXED3];
	int cpu = 5;
	struct engine_group *g = open_counting(m, cpu, total);

	(void)state;
	assert_int_equal(sim_set_online(m->sim, cpu, false), 0);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), -ENXIO);
	assert_int_equal(r[0].state, ENGINE_FAILED);
	assert_non_null(r[0].reason);
	assert_int_equal(r[0].total, total[0]);
	/* still offline: no reopen, no open attempt */
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), -ENXIO);
	assert_int_equal(sim_set_online(m->sim, cpu, true), 0);
	for (size_t i = 0; i < N_FIXED3; i++)
		mark[i] = truth(m, false, cpu, &fixed3[i]);
	/* Reopened and read in the same instant: counting, with nothing yet. */
	assert_int_equal(engine_read(&m->e, g, r), 0);
	for (size_t i = 0; i < N_FIXED3; i++) {
		assert_int_equal(r[i].state, ENGINE_COUNTING);
		assert_int_equal(r[i].delta, 0);
	}
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	assert_counts_on(m, cpu, r, total, mark);
	assert_int_equal(engine_close(&m->e, g, NULL), 0);
	shut(m);
}

/*
 * A CPU offline and back between two reads: the kernel detached the group
 * (a group read of the leader answers nr = 1), so the engine reopens it,
 * loses that interval (waiting, one reset) and counts on from the next.
 */
static void offline_and_back_between_reads_reopens(void **state)
{
	struct machine *m = boot("skylake-sp-2s");
	struct engine_reading r[N_FIXED3];
	uint64_t total[N_FIXED3], mark[N_FIXED3];
	int cpu = 3;
	struct engine_group *g = open_counting(m, cpu, total);

	(void)state;
	assert_int_equal(sim_set_online(m->sim, cpu, false), 0);
	assert_int_equal(sim_set_online(m->sim, cpu, true), 0);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	for (size_t i = 0; i < N_FIXED3; i++) {
		assert_int_equal(r[i].state, ENGINE_WAITING);
		assert_int_equal(r[i].resets, 1);
		assert_int_equal(r[i].total, total[i]);
		mark[i] = truth(m, false, cpu, &fixed3[i]);
	}
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, g, r), 0);
	assert_counts_on(m, cpu, r, total, mark);
	assert_int_equal(engine_close(&m->e, g, NULL), 0);
	shut(m);
}

/*
 * Opening on an offline CPU: ENODEV from the kernel, -ENXIO from the engine
 * as from every engine (engine.h), so that the collector waits for the CPU;
 * the reason said.
 */
static void open_on_offline_cpu_says_why(void **state)
{
	struct machine *m = boot("nehalem-ep-2s");
	struct engine_group *g;
	char err[512];

	(void)state;
	assert_int_equal(sim_set_online(m->sim, 2, false), 0);
	assert_int_equal(engine_open(&m->e, ENGINE_PMU_CORE, 2, fixed3, N_FIXED3, &g, err,
				     sizeof(err)), -ENXIO);
	assert_non_null(strstr(err, "cpu 2 is offline"));
	shut(m);
}

/* A model without the NHM uncore: the uncore PMU is absent and the reason says so. */
static void absent_pmu_is_reported(void **state)
{
	struct machine *m = boot("skylake-sp-2s");
	struct engine_group *g;
	char err[512];

	(void)state;
	assert_int_equal(engine_open(&m->e, ENGINE_PMU_NHM_UNCORE, 0, fixed3, 1, &g, err,
				     sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "uncore"));
	assert_int_equal(engine_perf_probe(&m->ps, ENGINE_PMU_CORE, err, sizeof(err)), 0);
	shut(m);
}

/*
 * The msr engine and a perf user on one machine: perf counts on its
 * counters, the msr engine claims one perf left free (the kernel does not
 * know), and each counts exactly the ground truth.
 */
static void msr_engine_and_perf_share_a_machine(void **state)
{
	static const struct engine_event mine[] = {
		{ .name = "branches", .code = 0xc4 },
	};
	static const struct engine_event theirs[] = {
		{ .name = "instructions", .code = 0xc0 },
		{ .name = "cycles", .code = 0x3c },
		{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
	};
	struct machine *m = boot("westmere-ep-2s");
	struct engine_msr_config mcfg = { .hw = &m->hw, .policy = ENGINE_YIELD, .now_ns = sim_ns,
					  .now_arg = m->sim };
	struct engine msr;
	struct engine_group *gp, *gm;
	struct engine_reading rp[3], rm[1];
	uint64_t bp[3], bm;
	char err[512];
	int cpu = 1;

	(void)state;
	assert_int_equal(engine_open(&m->e, ENGINE_PMU_CORE, cpu, theirs, 3, &gp, err, sizeof(err)),
			 0);
	assert_int_equal(engine_msr_new(&mcfg, &msr), 0);
	assert_int_equal(engine_open(&msr, ENGINE_PMU_CORE, cpu, mine, 1, &gm, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++)
		bp[i] = truth(m, false, cpu, &theirs[i]);
	bm = truth(m, false, cpu, &mine[0]);
	assert_int_equal(engine_read(&msr, gm, rm), 0);
	for (int step = 0; step < 3; step++) {
		sim_advance(m->sim, 1);
		assert_int_equal(engine_read(&m->e, gp, rp), 0);
		assert_int_equal(engine_read(&msr, gm, rm), 0);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(rp[i].state, ENGINE_COUNTING);
			assert_int_equal(rp[i].total, truth(m, false, cpu, &theirs[i]) - bp[i]);
		}
		assert_int_equal(rm[0].state, ENGINE_COUNTING);
		assert_int_equal(rm[0].conflicts, 0);
		assert_int_equal(rm[0].resets, 0);
		assert_int_equal(rm[0].total, truth(m, false, cpu, &mine[0]) - bm);
	}
	assert_int_equal(engine_close(&msr, gm, NULL), 0);
	engine_destroy(&msr);
	/* perf still counts after the msr engine gave its counter back */
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&m->e, gp, rp), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rp[i].total, truth(m, false, cpu, &theirs[i]) - bp[i]);
	assert_int_equal(engine_close(&m->e, gp, NULL), 0);
	shut(m);
}

/*
 * Linux 6.12 writes IA32_FIXED_CTR_CTRL whole from its cache whenever
 * perf's own fixed-counter use changes (hardware-linux.md §6): the msr
 * engine's field for fixed counter 2 (reference cycles) is wiped when
 * perf starts counting instructions on fixed counter 0.  The msr engine
 * sees its enable cleared (a reset), loses that interval (waiting, no
 * value) and counts again from the next read.
 */
static void perf_writes_the_fixed_control_whole(void **state)
{
	static const struct engine_event mine[] = {
		{ .name = "ref_cycles", .code = 0x3c, .umask = 0x01 },
	};
	static const struct engine_event theirs[] = {
		{ .name = "instructions", .code = 0xc0 },
	};
	struct machine *m = boot("skylake-sp-2s");
	struct engine_msr_config mcfg = { .hw = &m->hw, .policy = ENGINE_YIELD, .now_ns = sim_ns,
					  .now_arg = m->sim };
	struct engine msr;
	struct engine_group *gp, *gm;
	struct engine_reading rp[1], rm[1];
	char err[512];
	int cpu = 2;

	(void)state;
	assert_int_equal(engine_msr_new(&mcfg, &msr), 0);
	assert_int_equal(engine_open(&msr, ENGINE_PMU_CORE, cpu, mine, 1, &gm, err, sizeof(err)), 0);
	assert_int_equal(engine_read(&msr, gm, rm), 0);
	assert_int_equal(rm[0].state, ENGINE_COUNTING);
	assert_int_equal(rd(m, cpu, IA32_FIXED_CTR_CTRL) & 0xf00, 0x300);
	assert_int_equal(engine_open(&m->e, ENGINE_PMU_CORE, cpu, theirs, 1, &gp, err, sizeof(err)),
			 0);
	/* perf's cache holds the watchdog's field and its own: ours is gone. */
	assert_int_equal(rd(m, cpu, IA32_FIXED_CTR_CTRL) & 0xf00, 0);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&msr, gm, rm), 0);
	assert_int_equal(rm[0].resets, 1);
	assert_int_equal(rm[0].state, ENGINE_WAITING);
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&msr, gm, rm), 0);
	assert_int_equal(rm[0].state, ENGINE_COUNTING);
	assert_int_equal(engine_read(&m->e, gp, rp), 0);
	assert_int_equal(rp[0].state, ENGINE_COUNTING);
	assert_int_equal(engine_close(&m->e, gp, NULL), 0);
	assert_int_equal(engine_close(&msr, gm, NULL), 0);
	engine_destroy(&msr);
	shut(m);
}

/*
 * A profiler's task event (the perf-profiler scenario: branch instructions
 * wanted on GP counter 2 for 5 s of every 10 s) competes as the kernel
 * schedules it: after the CPU-wide groups.  With our group on all four GP
 * counters it never gets one; with ours on three it gets the one left.
 * Our counts are exact either way.
 */
static void scenario_task_event_comes_after_cpu_wide_groups(void **state)
{
	static const struct engine_event four[] = {
		{ .name = "cycles", .code = 0x3c },
		{ .name = "llc_references", .code = 0x2e, .umask = 0x4f },
		{ .name = "llc_misses", .code = 0x2e, .umask = 0x41 },
		{ .name = "branch_misses", .code = 0xc5 },
	};
	const uint64_t profiler = 0x1300c4 | PERFEVTSEL_EN;

	(void)state;
	for (size_t n = 4; n >= 3; n--) {
		struct machine *m = boot("westmere-ep-2s:perf-profiler");
		struct engine_group *g;
		struct engine_reading r[4];
		uint64_t before[4];
		char err[512];
		int cpu = 2;

		if (engine_open(&m->e, ENGINE_PMU_CORE, cpu, four, n, &g, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		for (size_t i = 0; i < n; i++)
			before[i] = truth(m, false, cpu, &four[i]);
		for (int step = 0; step < 10; step++) {
			int profiler_on = 0;

			sim_advance(m->sim, 1);
			assert_int_equal(engine_read(&m->e, g, r), 0);
			for (size_t i = 0; i < n; i++) {
				assert_int_equal(r[i].state, ENGINE_COUNTING);
				assert_true(engine_reading_ratio(&r[i]) == 1.0);
				assert_int_equal(r[i].total, truth(m, false, cpu, &four[i]) - before[i]);
			}
			for (uint32_t k = 0; k < 4; k++)
				profiler_on += rd(m, cpu, IA32_PERFEVTSEL0 + k) == profiler;
			/* the window is on from 2 s to 7 s: sampled at 2..6 s */
			assert_int_equal(profiler_on, n == 3 && step + 1 >= 2 && step + 1 < 7);
		}
		assert_int_equal(engine_close(&m->e, g, NULL), 0);
		shut(m);
	}
}

/* A kernel that answers one group read with end of file, as for a group in error state. */
struct eof_kernel {
	struct perf_sys *inner;
	int eof_reads;
};

static int eof_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		    unsigned long flags)
{
	struct perf_sys *in = ((struct eof_kernel *)ctx)->inner;

	return in->ops->open(in->ctx, attr, pid, cpu, group_fd, flags);
}

static ssize_t eof_read(void *ctx, int fd, void *buf, size_t len)
{
	struct eof_kernel *k = ctx;

	if (k->eof_reads > 0) {
		k->eof_reads--;
		return 0;
	}
	return k->inner->ops->read(k->inner->ctx, fd, buf, len);
}

static int eof_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct perf_sys *in = ((struct eof_kernel *)ctx)->inner;

	return in->ops->ioctl(in->ctx, fd, request, arg);
}

static int eof_close(void *ctx, int fd)
{
	struct perf_sys *in = ((struct eof_kernel *)ctx)->inner;

	return in->ops->close(in->ctx, fd);
}

static void eof_free(void *ctx)
{
	(void)ctx;
}

static const struct perf_sys_ops eof_ops = {
	.name = "eof", .open = eof_open, .read = eof_read, .ioctl = eof_ioctl,
	.close = eof_close, .free = eof_free,
};

/*
 * A group read that returns end of file (-ENODATA: a group in error
 * state) reads as failed for that sample, the group is enabled again with
 * one ioctl, and the next read counts on with nothing lost.
 */
static void error_state_is_enabled_again(void **state)
{
	struct machine *m = boot("skylake-sp-2s");
	struct eof_kernel k = { .inner = &m->ps };
	struct engine_perf_config cfg = { .cpu_online = cpu_online, .arg = m };
	struct perf_sys ps;
	struct engine e;
	struct engine_group *g;
	struct engine_reading r[N_FIXED3];
	uint64_t before[N_FIXED3], ioctls;
	char err[512];

	(void)state;
	assert_int_equal(perf_sys_init(&ps, &eof_ops, &k, m->root), 0);
	cfg.ps = &ps;
	assert_int_equal(engine_perf_new(&cfg, &e, err, sizeof(err)), 0);
	assert_int_equal(engine_open(&e, ENGINE_PMU_CORE, 0, fixed3, N_FIXED3, &g, err, sizeof(err)),
			 0);
	for (size_t i = 0; i < N_FIXED3; i++)
		before[i] = truth(m, false, 0, &fixed3[i]);
	sim_advance(m->sim, 1);
	k.eof_reads = 1;
	ioctls = ps.counts.n_ioctl;
	assert_int_equal(engine_read(&e, g, r), 0);
	assert_int_equal(ps.counts.n_ioctl - ioctls, 1);
	for (size_t i = 0; i < N_FIXED3; i++) {
		assert_int_equal(r[i].state, ENGINE_FAILED);
		assert_int_equal(r[i].err, -ENODATA);
		assert_non_null(strstr(r[i].reason, "error state"));
		assert_int_equal(r[i].total, 0);
	}
	sim_advance(m->sim, 1);
	assert_int_equal(engine_read(&e, g, r), 0);
	for (size_t i = 0; i < N_FIXED3; i++) {
		assert_int_equal(r[i].state, ENGINE_COUNTING);
		assert_int_equal(r[i].total, truth(m, false, 0, &fixed3[i]) - before[i]);
	}
	assert_int_equal(engine_close(&e, g, NULL), 0);
	engine_destroy(&e);
	perf_sys_free(&ps);
	shut(m);
}

/*
 * The real kernel's sysfs: the engine builds whatever PMUs exist; a PMU
 * that is absent (no core PMU on a virtual machine, no NHM uncore
 * elsewhere) makes open fail with -ENODEV and the sentence the fallback
 * to the msr engine is logged with.
 */
static void real_kernel_absent_pmu_gives_the_fallback_reason(void **state)
{
	struct engine_perf_config cfg = { 0 };
	struct perf_sys ps;
	struct engine e;
	struct engine_group *g;
	char err[512], reason[512];

	(void)state;
	assert_int_equal(perf_sys_linux_init(&ps, "/"), 0);
	cfg.ps = &ps;
	assert_int_equal(engine_perf_new(&cfg, &e, err, sizeof(err)), 0);
	for (int pmu = ENGINE_PMU_CORE; pmu <= ENGINE_PMU_NHM_UNCORE; pmu++) {
		int r = engine_perf_probe(&ps, (enum engine_pmu)pmu, reason, sizeof(reason));

		if (r == 0)
			continue;   /* present: opening it is test_perf_real's business */
		assert_int_equal(r, -ENODEV);
		assert_int_equal(engine_open(&e, (enum engine_pmu)pmu, 0, fixed3, 1, &g, err,
					     sizeof(err)), -ENODEV);
		assert_string_equal(err, reason);
		assert_non_null(strstr(err, pmu == ENGINE_PMU_CORE ? "no core PMU" : "uncore PMU"));
	}
	engine_destroy(&e);
	perf_sys_free(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(boot_state_counts_through_perf_on_every_model),
		cmocka_unit_test(more_events_than_counters_are_scaled),
		cmocka_unit_test(another_perf_user_joins_the_rotation),
		cmocka_unit_test(uncore_counts_through_the_uncore_pmu),
		cmocka_unit_test(hotplug_reopens_and_totals_carry_on),
		cmocka_unit_test(core_geometry_is_the_generations),
		cmocka_unit_test(pcu_box_writes_reach_the_registers),
		cmocka_unit_test(offline_and_back_between_reads_reopens),
		cmocka_unit_test(open_on_offline_cpu_says_why),
		cmocka_unit_test(absent_pmu_is_reported),
		cmocka_unit_test(msr_engine_and_perf_share_a_machine),
		cmocka_unit_test(perf_writes_the_fixed_control_whole),
		cmocka_unit_test(scenario_task_event_comes_after_cpu_wide_groups),
		cmocka_unit_test(error_state_is_enabled_again),
		cmocka_unit_test(real_kernel_absent_pmu_gives_the_fallback_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
