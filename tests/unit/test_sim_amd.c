/*
 * The simulated AMD core PMU and the kernel's perf over it
 * (hardware-amd.md §3, §4, §7): the boot state a raw-MSR reader sees, the
 * generic events per generation (ref-cycles ENOENT on Zen 2/3), the raw
 * format, the PMU tree, the msr PMU, and counts that are the scenario's
 * truth.  Stepped clock.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "helpers.h"
#include "perf_sys.h"
#include "sim.h"

/* hardware-amd.md §3.1, §7 */
#define PERF_CTL0       0xc0010200u
#define PERF_CTR0       0xc0010201u
#define GLOBAL_CTL      0xc0000301u
#define HWCR            0xc0010015u
#define HWCR_IRPERF_EN  (UINT64_C(1) << 30)
#define IRPERF          0xc00000e9u
#define WATCHDOG_CTL    UINT64_C(0x530076)

struct machine {
	struct sim *sim;
	struct hw hw;
	struct perf_sys ps;
	char root[256];
};

static struct machine boot(const char *model)
{
	char dir[4096], err[1024];
	struct machine m;

	memset(&m, 0, sizeof(m));
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	m.sim = sim_open_boot(model, dir, SIM_CLOCK_STEPPED, SIM_BOOT_LINUX, err, sizeof(err));
	if (!m.sim)
		fail_msg("sim_open_boot(%s): %s", model, err);
	sim_bind(m.sim, &m.hw);
	helpers_mkdtemp(m.root, sizeof(m.root));
	assert_int_equal(sim_write_sysfs(m.sim, m.root, err, sizeof(err)), 0);
	assert_int_equal(sim_perf_sys(m.sim, m.root, &m.ps), 0);
	return m;
}

static void shutdown_machine(struct machine *m)
{
	assert_int_equal(sim_perf_open_events(m->sim), 0);
	perf_sys_free(&m->ps);
	m->hw.ops->close(m->hw.ctx);
	helpers_rmtree(m->root);
}

static uint64_t rd(struct machine *m, int cpu, uint32_t msr)
{
	uint64_t v = 0;
	int r = m->hw.ops->read_msr(m->hw.ctx, cpu, msr, &v);

	if (r != 0)
		fail_msg("read cpu %d msr 0x%x: %d", cpu, msr, r);
	return v;
}

static uint64_t truth(struct machine *m, int cpu, uint16_t code, uint8_t umask)
{
	uint64_t n = 0;

	assert_int_equal(sim_ground_truth(m->sim, false, cpu, code, umask, false, &n), 0);
	return n;
}

static int open_event(struct machine *m, uint32_t type, uint64_t config, int cpu)
{
	struct perf_event_attr attr = {
		.type = type, .size = sizeof(attr), .config = config,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	return perf_sys_open(&m->ps, &attr, cpu, -1);
}

/* A file of the PMU tree, trimmed; "" when absent. */
static const char *sysfs(const struct machine *m, const char *rel)
{
	static char buf[256];
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/%s", m->root, rel);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * After boot every CPU shows the NMI watchdog's cycles on PERF_CTL0
 * (0x530076), counting the scenario's cycles; HWCR.IRPERF_EN with IRPERF
 * counting instructions; GlobalCtl 0x3F on Zen 4+, absent (EIO) on Zen 2/3.
 */
static void boot_state_per_generation(void **state)
{
	static const struct {
		const char *model;
		bool v2;
	} cases[] = { { "rome-2s", false }, { "milan-2s", false }, { "genoa-2s", true },
		      { "turin-2s", true } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct machine m = boot(cases[i].model);
		uint64_t v;

		sim_advance(m.sim, 1.5);
		for (int cpu = 0; cpu < 3; cpu++) {
			assert_int_equal(rd(&m, cpu, PERF_CTL0), WATCHDOG_CTL);
			assert_int_equal(rd(&m, cpu, PERF_CTL0 + 2), 0);
			assert_int_not_equal(truth(&m, cpu, 0x76, 0), 0);
			assert_int_equal(rd(&m, cpu, PERF_CTR0), truth(&m, cpu, 0x76, 0));
			assert_int_equal(rd(&m, cpu, PERF_CTR0 + 2), 0);
			assert_true(rd(&m, cpu, HWCR) & HWCR_IRPERF_EN);
			assert_int_equal(rd(&m, cpu, IRPERF), truth(&m, cpu, 0xc0, 0));
			if (cases[i].v2)
				assert_int_equal(rd(&m, cpu, GLOBAL_CTL), 0x3f);
			else
				assert_int_equal(m.hw.ops->read_msr(m.hw.ctx, cpu, GLOBAL_CTL, &v),
						 -EIO);
			/* Intel's registers are not there. */
			assert_int_equal(m.hw.ops->read_msr(m.hw.ctx, cpu, 0x38f, &v), -EIO);
		}
		shutdown_machine(&m);
	}
}

/*
 * The PMU tree: AMD's raw format, the generic events' aliases with
 * ref-cycles on Zen 4+ only, amd_df, amd_l3, amd_umc_N on Zen 4+, msr.
 */
static void pmu_tree_per_generation(void **state)
{
	struct machine milan = boot("milan-2s"), genoa = boot("genoa-2s");

	(void)state;
	assert_string_equal(sysfs(&milan, "cpu/type"), "4");
	assert_string_equal(sysfs(&milan, "cpu/format/event"), "config:0-7,32-35");
	assert_string_equal(sysfs(&milan, "cpu/format/cmask"), "config:24-31");
	assert_string_equal(sysfs(&milan, "cpu/events/cpu-cycles"), "event=0x76");
	assert_string_equal(sysfs(&milan, "cpu/events/cache-misses"), "event=0x64,umask=0x09");
	assert_string_equal(sysfs(&milan, "cpu/events/ref-cycles"), "");
	assert_string_equal(sysfs(&genoa, "cpu/events/ref-cycles"), "event=0x120,umask=0x01");
	assert_string_equal(sysfs(&milan, "amd_df/format/event"), "config:0-7,32-35,59-60");
	assert_string_equal(sysfs(&genoa, "amd_df/format/umask"), "config:8-15,24-27");
	assert_string_equal(sysfs(&milan, "amd_df/cpumask"), "0,8");
	assert_string_equal(sysfs(&genoa, "amd_l3/format/threadmask"), "config:56-57");
	assert_string_equal(sysfs(&milan, "amd_umc_0/type"), "");
	assert_string_equal(sysfs(&genoa, "amd_umc_0/format/rdwrmask"), "config:8-9");
	assert_string_equal(sysfs(&genoa, "amd_umc_23/cpumask"), "12");
	assert_string_equal(sysfs(&genoa, "amd_umc_24/type"), "");
	assert_string_equal(sysfs(&genoa, "msr/events/irperf"), "event=0x06");
	shutdown_machine(&milan);
	shutdown_machine(&genoa);
}

/* Generic events: AMD's map; ref-cycles ENOENT on Zen 2/3, counted on Zen 4+. */
static void generic_events_and_raw_format(void **state)
{
	struct machine milan = boot("milan-2s"), genoa = boot("genoa-2s");
	int fd;

	(void)state;
	assert_int_equal(open_event(&milan, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 0),
			 -ENOENT);
	fd = open_event(&genoa, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 0);
	assert_true(fd >= 0);
	assert_int_equal(perf_sys_close(&genoa.ps, fd), 0);
	/* Only the raw format's fields: event, umask, edge, inv, cmask. */
	assert_int_equal(open_event(&milan, 4, UINT64_C(1) << 21, 0), -EINVAL);
	fd = open_event(&milan, 4, UINT64_C(0xf000000ff), 0);
	assert_true(fd >= 0);
	assert_int_equal(perf_sys_close(&milan.ps, fd), 0);
	/* The uncore PMUs take no per-task event: cpu < 0 is EINVAL. */
	assert_int_equal(open_event(&genoa, (uint32_t)atoi(sysfs(&genoa, "amd_df/type")), 0, -1),
			 -EINVAL);
	shutdown_machine(&milan);
	shutdown_machine(&genoa);
}

/*
 * Seven events on one CPU of Genoa, each its own group: the watchdog
 * leaves 5 counters, so the kernel rotates them and time running falls
 * short of time enabled; scaled, each count is the scenario's truth.  An
 * Intel encoding (0x3C, Intel's cycles) counts nothing on AMD.
 */
static void counts_are_the_truth_under_multiplexing(void **state)
{
	static const struct {
		uint64_t config;
		uint16_t code;
		uint8_t umask;
	} ev[] = {
		{ 0x00c0, 0xc0, 0x00 }, { 0x0076, 0x76, 0x00 }, { 0x100000120, 0x120, 0x01 },
		{ 0xff60, 0x60, 0xff }, { 0x0964, 0x64, 0x09 }, { 0x00c2, 0xc2, 0x00 },
		{ 0x00c3, 0xc3, 0x00 },
	};
	struct machine m = boot("genoa-2s");
	int fd[8], intel;
	uint64_t v[3];

	(void)state;
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		fd[i] = open_event(&m, 4, ev[i].config, 5);
		assert_true(fd[i] >= 0);
	}
	intel = open_event(&m, 4, 0x003c, 5);
	assert_true(intel >= 0);
	sim_advance(m.sim, 2.0);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		double scaled, want = (double)truth(&m, 5, ev[i].code, ev[i].umask);

		assert_int_equal(perf_sys_read(&m.ps, fd[i], v, sizeof(v)), (ssize_t)sizeof(v));
		assert_true(v[2] < v[1]);
		scaled = (double)v[0] * (double)v[1] / (double)v[2];
		if (want == 0 || scaled < 0.99 * want || scaled > 1.01 * want)
			fail_msg("event 0x%llx: %.0f scaled, truth %.0f",
				 (unsigned long long)ev[i].config, scaled, want);
		assert_int_equal(perf_sys_close(&m.ps, fd[i]), 0);
	}
	assert_int_equal(perf_sys_read(&m.ps, intel, v, sizeof(v)), (ssize_t)sizeof(v));
	assert_int_equal(v[0], 0);
	assert_int_equal(perf_sys_close(&m.ps, intel), 0);
	/* Perf left its selects stale (EN clear); the watchdog still counts on counter 0. */
	assert_int_equal(rd(&m, 5, PERF_CTL0), WATCHDOG_CTL);
	for (int n = 1; n < 6; n++)
		assert_int_equal(rd(&m, 5, PERF_CTL0 + 2 * (uint32_t)n) & (UINT64_C(1) << 22), 0);
	shutdown_machine(&m);
}

/*
 * The msr PMU (arch/x86/events/msr.c): irperf, aperf and mperf count from
 * the free-running MSRs (instructions, cycles, reference cycles), tsc at
 * the reference rate, beside the 7 core events that multiplex: never
 * short of a counter.  An event it does not list is EINVAL.
 */
static void msr_pmu_counts_free_running(void **state)
{
	static const struct {
		uint64_t config;
		uint16_t code;
		uint8_t umask;
	} ev[] = { { 6, 0xc0, 0x00 }, { 1, 0x76, 0x00 }, { 2, 0x120, 0x01 } };
	struct machine m = boot("genoa-2s");
	uint32_t type = (uint32_t)atoi(sysfs(&m, "msr/type"));
	int fd[3], core[7], tsc;
	uint64_t v[3];

	(void)state;
	assert_int_equal(open_event(&m, type, 3, 2), -EINVAL);
	for (int i = 0; i < 7; i++) {
		core[i] = open_event(&m, 4, 0x00c0, 2);
		assert_true(core[i] >= 0);
	}
	for (size_t i = 0; i < 3; i++) {
		fd[i] = open_event(&m, type, ev[i].config, 2);
		assert_true(fd[i] >= 0);
	}
	tsc = open_event(&m, type, 0, 2);
	assert_true(tsc >= 0);
	sim_advance(m.sim, 2.0);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(perf_sys_read(&m.ps, fd[i], v, sizeof(v)), (ssize_t)sizeof(v));
		assert_int_equal(v[1], v[2]);
		assert_int_not_equal(v[0], 0);
		assert_int_equal(v[0], truth(&m, 2, ev[i].code, ev[i].umask));
		assert_int_equal(perf_sys_close(&m.ps, fd[i]), 0);
	}
	assert_int_equal(perf_sys_read(&m.ps, tsc, v, sizeof(v)), (ssize_t)sizeof(v));
	assert_int_equal(v[0], UINT64_C(4800000000));   /* 2 s at Genoa's 2.4 GHz */
	assert_int_equal(perf_sys_close(&m.ps, tsc), 0);
	for (int i = 0; i < 7; i++)
		assert_int_equal(perf_sys_close(&m.ps, core[i]), 0);
	shutdown_machine(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(boot_state_per_generation),
		cmocka_unit_test(pmu_tree_per_generation),
		cmocka_unit_test(generic_events_and_raw_format),
		cmocka_unit_test(counts_are_the_truth_under_multiplexing),
		cmocka_unit_test(msr_pmu_counts_free_running),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
