/*
 * Unit tests of the simulated hardware: CPUID and topology per model, PMU
 * enable semantics, OCC_CTR_RST, wrap, absent registers, thermal status,
 * RAPL, kernel counts, offline CPUs, refused writes, the shipped scenarios
 * and scenario errors.  All use the stepped clock.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "msr.h"
#include "sim.h"

#define UCLK_HZ UINT64_C(2400000000)

struct machine {
	struct sim *sim;
	struct hw hw;
};

static const char *scenario_dir(void)
{
	static char buf[4096];

	return helpers_source_path("conf/scenarios", buf, sizeof(buf));
}

static struct machine boot(const char *spec)
{
	struct machine m;
	char err[1024];

	/* The hardware model's own tests start from power-on values. */
	m.sim = sim_open_boot(spec, scenario_dir(), SIM_CLOCK_STEPPED, SIM_BOOT_RESET,
			      err, sizeof(err));
	if (!m.sim)
		fail_msg("sim_open(%s): %s", spec, err);
	sim_bind(m.sim, &m.hw);
	return m;
}

static void shutdown_machine(struct machine *m)
{
	m->hw.ops->close(m->hw.ctx);
}

static int rd_err(struct machine *m, int cpu, uint32_t msr, uint64_t *v)
{
	return m->hw.ops->read_msr(m->hw.ctx, cpu, msr, v);
}

static uint64_t rd(struct machine *m, int cpu, uint32_t msr)
{
	uint64_t v = 0;
	int r = rd_err(m, cpu, msr, &v);

	if (r != 0)
		fail_msg("read cpu %d msr 0x%x: %d", cpu, msr, r);
	return v;
}

static int wr_err(struct machine *m, int cpu, uint32_t msr, uint64_t v)
{
	return m->hw.ops->write_msr(m->hw.ctx, cpu, msr, v);
}

static void wr(struct machine *m, int cpu, uint32_t msr, uint64_t v)
{
	int r = wr_err(m, cpu, msr, v);

	if (r != 0)
		fail_msg("write cpu %d msr 0x%x: %d", cpu, msr, r);
}

static struct hw_cpuid cpuid(struct machine *m, int cpu, uint32_t leaf, uint32_t subleaf)
{
	struct hw_cpuid regs;

	assert_int_equal(m->hw.ops->cpuid(m->hw.ctx, cpu, leaf, subleaf, &regs), 0);
	return regs;
}

/* ---- CPUID ---- */

struct cpuid_case {
	const char *model;
	const char *vendor;
	uint32_t sig;
	unsigned family, display_model, stepping;
	uint32_t leaf6_eax, leafa_eax, leafa_edx;
};

static const struct cpuid_case cpuid_cases[] = {
	{ "westmere-ep-2s", "GenuineIntel", 0x000206c2, 6, 0x2c, 2, 0x01, 0x07300403, 0x603 },
	{ "nehalem-ep-2s", "GenuineIntel", 0x000106a5, 6, 0x1a, 5, 0x01, 0x07300403, 0x603 },
	{ "skylake-sp-2s", "GenuineIntel", 0x00050654, 6, 0x55, 4, 0x41, 0x07300404, 0x603 },
	{ "rome-2s", "AuthenticAMD", 0x00830f10, 0x17, 0x31, 0, 0, 0, 0 },
	{ "milan-2s", "AuthenticAMD", 0x00a00f11, 0x19, 0x01, 1, 0, 0, 0 },
	{ "genoa-2s", "AuthenticAMD", 0x00a10f11, 0x19, 0x11, 1, 0, 0, 0 },
	{ "turin-2s", "AuthenticAMD", 0x00b00f21, 0x1a, 0x02, 1, 0, 0, 0 },
	{ "big", "GenuineIntel", 0x000206c2, 6, 0x2c, 2, 0x01, 0x07300403, 0x603 },
};

static void cpuid_every_model(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cpuid_cases) / sizeof(cpuid_cases[0]); i++) {
		const struct cpuid_case *c = &cpuid_cases[i];
		struct machine m = boot(c->model);
		struct hw_cpuid r0 = cpuid(&m, 0, 0, 0), r1 = cpuid(&m, 0, 1, 0);
		char vendor[13];
		unsigned base_family = (r1.eax >> 8) & 0xf, family, model;

		memcpy(vendor, &r0.ebx, 4);
		memcpy(vendor + 4, &r0.edx, 4);
		memcpy(vendor + 8, &r0.ecx, 4);
		vendor[12] = '\0';
		assert_string_equal(vendor, c->vendor);
		assert_int_equal(r1.eax, c->sig);
		family = base_family == 0xf ? base_family + ((r1.eax >> 20) & 0xff) : base_family;
		model = (r1.eax >> 4) & 0xf;
		if (base_family == 6 || base_family == 0xf)
			model |= ((r1.eax >> 16) & 0xf) << 4;
		assert_int_equal(family, c->family);
		assert_int_equal(model, c->display_model);
		assert_int_equal(r1.eax & 0xf, c->stepping);
		assert_true(r1.edx & (1u << 5));
		assert_int_equal(cpuid(&m, 0, 6, 0).eax, c->leaf6_eax);
		assert_int_equal(cpuid(&m, 0, 0xa, 0).eax, c->leafa_eax);
		assert_int_equal(cpuid(&m, 0, 0xa, 0).ebx, 0);
		assert_int_equal(cpuid(&m, 0, 0xa, 0).edx, c->leafa_edx);
		assert_int_equal(cpuid(&m, 0, 0x4, 0).eax, 0);
		if (strcmp(c->vendor, "GenuineIntel") == 0) {
			assert_int_equal(r0.eax, 0xb);
			assert_true(r1.edx & (1u << 22));
		}
		shutdown_machine(&m);
	}
}

static void cpuid_topology_leaf(void **state)
{
	struct machine m = boot("westmere-ep-2s");
	struct hw_cpuid r;

	(void)state;
	r = cpuid(&m, 0, 0xb, 0);
	assert_int_equal(r.eax, 1);
	assert_int_equal(r.ebx, 2);
	assert_int_equal(r.ecx, 0x100);
	assert_int_equal(r.edx, 0);
	r = cpuid(&m, 0, 0xb, 1);
	assert_int_equal(r.eax, 5);
	assert_int_equal(r.ebx, 12);
	assert_int_equal(r.ecx, 0x201);
	r = cpuid(&m, 0, 0xb, 2);
	assert_int_equal(r.eax, 0);
	assert_int_equal(r.ecx, 2);
	assert_int_equal(cpuid(&m, 12, 0xb, 0).edx, 1);       /* sibling of cpu 0 */
	assert_int_equal(cpuid(&m, 5, 0xb, 0).edx, 10 << 1);  /* socket 0 core 10 */
	assert_int_equal(cpuid(&m, 6, 0xb, 0).edx, 1 << 5);   /* socket 1 core 0 */
	assert_int_equal(cpuid(&m, 23, 0xb, 0).edx, (1 << 5) | (10 << 1) | 1);
	shutdown_machine(&m);
}

/* ---- topology ---- */

struct topo_case {
	const char *model;
	int n_cpus, n_sockets, n_cores;
	int core_ids[6];   /* first six cores of socket 0 */
};

static const struct topo_case topo_cases[] = {
	{ "westmere-ep-2s", 24, 2, 6, { 0, 1, 2, 8, 9, 10 } },
	{ "nehalem-ep-2s", 16, 2, 4, { 0, 1, 2, 3, -1, -1 } },
	{ "skylake-sp-2s", 112, 2, 28, { 0, 1, 2, 3, 4, 5 } },
	{ "rome-2s", 32, 2, 8, { 0, 1, 2, 3, 4, 5 } },
	{ "genoa-2s", 48, 2, 12, { 0, 1, 2, 3, 4, 5 } },
	{ "big", 224, 2, 56, { 0, 1, 2, 3, 4, 5 } },
};

static void topology_every_model(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(topo_cases) / sizeof(topo_cases[0]); i++) {
		const struct topo_case *c = &topo_cases[i];
		struct machine m = boot(c->model);
		struct hw_cpu cpus[256];
		int n = 0, half = c->n_cpus / 2;

		assert_int_equal(m.hw.ops->enumerate(m.hw.ctx, cpus, 256, &n), 0);
		assert_int_equal(n, c->n_cpus);
		for (int cpu = 0; cpu < n; cpu++) {
			assert_int_equal(cpus[cpu].cpu, cpu);
			assert_true(cpus[cpu].online);
			assert_int_equal(cpus[cpu].thread, cpu >= half);
			assert_int_equal(cpus[cpu].socket, (cpu % half) / c->n_cores);
		}
		for (int cpu = 0; cpu < half; cpu++) {
			assert_int_equal(cpus[cpu + half].core, cpus[cpu].core);
			assert_int_equal(cpus[cpu + half].socket, cpus[cpu].socket);
		}
		for (int k = 0; k < 6 && c->core_ids[k] >= 0; k++)
			assert_int_equal(cpus[k].core, c->core_ids[k]);
		assert_int_equal(cpus[n - 1].socket, c->n_sockets - 1);
		assert_int_equal(m.hw.ops->cpu_online(m.hw.ctx, n - 1), 1);
		shutdown_machine(&m);
	}
}

/* ---- uncore PMU ---- */

static void uncore_counts_only_with_both_enables(void **state)
{
	struct machine m = boot("westmere-ep-2s:dram-heatwave");
	const uint64_t per_s = UCLK_HZ * 4 / 10;   /* duty 0.4 */

	(void)state;
	wr(&m, 6, MSR_UNCORE_PERFEVTSEL0, 0x400167);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), 0);        /* 0x391 bit 0 clear */
	wr(&m, 6, MSR_UNCORE_PERF_GLOBAL_CTRL, UNC_GLOBAL_CTRL_EN_PC(0));
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), per_s);
	assert_int_equal(rd(&m, 18, MSR_UNCORE_PMC0), per_s);   /* any CPU of socket 1 */
	assert_int_equal(rd(&m, 17, MSR_UNCORE_PMC0), 0);       /* socket 0 */
	wr(&m, 7, MSR_UNCORE_PERF_GLOBAL_CTRL, 0);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), per_s);    /* stopped */
	wr(&m, 6, MSR_UNCORE_PERF_GLOBAL_CTRL, UNC_GLOBAL_CTRL_EN_PC(0));
	wr(&m, 6, MSR_UNCORE_PERFEVTSEL0, 0x000167);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), per_s);    /* EN clear */

	wr(&m, 0, MSR_UNCORE_FIXED_CTR_CTRL, UNC_FIXED_CTR_CTRL_EN);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), 0);
	wr(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, UNC_GLOBAL_CTRL_EN_FC0);
	sim_advance(m.sim, 0.5);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), UCLK_HZ / 2);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_FIXED_CTR0), 0);  /* socket 1 not enabled */
	wr(&m, 0, MSR_UNCORE_FIXED_CTR_CTRL, 0);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), UCLK_HZ / 2);
	shutdown_machine(&m);
}

/* OCC_CTR_RST clears the occupancy accumulator, not the PMC (hardware-linux.md §2). */
static void occ_ctr_rst_keeps_the_pmc_and_reads_back_clear(void **state)
{
	struct machine m = boot("westmere-ep-2s");

	(void)state;
	wr(&m, 0, MSR_UNCORE_PMC0 + 2, 12345);
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0 + 2, 0x420183);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0 + 2), 0x400183);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0 + 2), 12345);
	shutdown_machine(&m);
}

/* A plain IA32_PMCx write sign-extends bit 31; IA32_A_PMCx takes the full width (§2). */
static void pmc_writes_sign_extend_unless_full_width(void **state)
{
	struct machine w = boot("westmere-ep-2s"), k = boot("skylake-sp-2s");
	uint64_t v;

	(void)state;
	wr(&w, 0, IA32_PMC0, 0xffff1194d800);
	assert_int_equal(rd(&w, 0, IA32_PMC0), 0x1194d800);
	wr(&w, 0, IA32_PMC0 + 1, 0x80000000);
	assert_int_equal(rd(&w, 0, IA32_PMC0 + 1), 0xffff80000000);
	assert_int_equal(rd(&w, 0, IA32_PERF_CAPABILITIES) & PERF_CAP_FW_WRITE, 0);
	assert_int_equal(wr_err(&w, 0, IA32_A_PMC0, 1), -EIO);
	assert_int_equal(rd_err(&w, 0, IA32_A_PMC0, &v), -EIO);
	assert_int_equal(rd(&k, 0, IA32_PERF_CAPABILITIES) & PERF_CAP_FW_WRITE, PERF_CAP_FW_WRITE);
	wr(&k, 0, IA32_A_PMC0 + 3, 0xffff1194d800);
	assert_int_equal(rd(&k, 0, IA32_PMC0 + 3), 0xffff1194d800);
	assert_int_equal(rd(&k, 0, IA32_A_PMC0 + 3), 0xffff1194d800);
	wr(&k, 0, IA32_PMC0 + 3, 0xffff1194d800);
	assert_int_equal(rd(&k, 0, IA32_PMC0 + 3), 0x1194d800);
	shutdown_machine(&w);
	shutdown_machine(&k);
}

static void uncore_counters_wrap_at_48_bits(void **state)
{
	struct machine m = boot("westmere-ep-2s");

	(void)state;
	wr(&m, 0, MSR_UNCORE_FIXED_CTR0, (UINT64_C(1) << 48) - 1000);
	wr(&m, 0, MSR_UNCORE_FIXED_CTR_CTRL, UNC_FIXED_CTR_CTRL_EN);
	wr(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, UNC_GLOBAL_CTRL_EN_FC0);
	sim_advance(m.sim, 1e-6);   /* 2400 UCLK cycles */
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), 1400);
	wr(&m, 0, MSR_UNCORE_FIXED_CTR0, UINT64_MAX);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), (UINT64_C(1) << 48) - 1);
	shutdown_machine(&m);
}

/* ---- absent registers ---- */

struct absent_case {
	const char *model;
	uint32_t msr;
	int read_err, write_err;
};

static const struct absent_case absent_cases[] = {
	{ "skylake-sp-2s", MSR_UNCORE_PERFEVTSEL0, -EIO, -EIO },
	{ "skylake-sp-2s", MSR_UNCORE_PMC0, -EIO, -EIO },
	{ "skylake-sp-2s", IA32_PERF_GLOBAL_STATUS_SET, -EIO, 0 },
	{ "skylake-sp-2s", IA32_PERF_GLOBAL_INUSE, 0, -EIO },
	{ "rome-2s", IA32_THERM_STATUS, -EIO, -EIO },
	{ "rome-2s", IA32_PMC0, -EIO, -EIO },
	{ "rome-2s", MSR_UNCORE_PERF_GLOBAL_CTRL, -EIO, -EIO },
	{ "westmere-ep-2s", MSR_UNCORE_PERF_GLOBAL_OVF_CTRL, -EIO, 0 },
	{ "westmere-ep-2s", IA32_PACKAGE_THERM_STATUS, -EIO, -EIO },
	{ "westmere-ep-2s", MSR_PKG_PERF_STATUS, -EIO, -EIO },
	{ "westmere-ep-2s", MSR_TEMPERATURE_TARGET, 0, -EIO },
	{ "westmere-ep-2s", IA32_PMC0 + 4, -EIO, -EIO },
	{ "westmere-ep-2s", 0x397, -EIO, -EIO },
};

static void absent_registers_fail_with_eio(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(absent_cases) / sizeof(absent_cases[0]); i++) {
		const struct absent_case *c = &absent_cases[i];
		struct machine m = boot(c->model);
		uint64_t v;

		if (rd_err(&m, 1, c->msr, &v) != c->read_err)
			fail_msg("%s read 0x%x", c->model, c->msr);
		if (wr_err(&m, 1, c->msr, 0) != c->write_err)
			fail_msg("%s write 0x%x", c->model, c->msr);
		shutdown_machine(&m);
	}
}

/* ---- thermal ---- */

#define VALID_RES (THERM_STATUS_READING_VALID | (UINT64_C(1) << THERM_STATUS_RESOLUTION_SHIFT))

static void thermal_status_readout_and_logs(void **state)
{
	struct machine m = boot("westmere-ep-2s:prochot-storm");
	const uint64_t all4 = THERM_STATUS_THERMAL | THERM_STATUS_THERMAL_LOG |
			      THERM_STATUS_PROCHOT | THERM_STATUS_PROCHOT_LOG;

	(void)state;
	assert_int_equal(rd(&m, 0, MSR_TEMPERATURE_TARGET), 95 << 16);
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS), VALID_RES | (50 << 16));
	sim_advance(m.sim, 6);   /* core 0 at 101 C, PROCHOT burst 6.0-6.6 s */
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS), VALID_RES | all4);
	assert_int_equal(rd(&m, 12, IA32_THERM_STATUS), VALID_RES | all4);   /* sibling */
	assert_int_equal(rd(&m, 6, IA32_THERM_STATUS), VALID_RES | (50 << 16));
	sim_advance(m.sim, 0.7);
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS),
			 VALID_RES | (all4 & ~THERM_STATUS_PROCHOT));
	sim_advance(m.sim, 10);  /* t = 16.7: cool again, between PROCHOT bursts */
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS), VALID_RES | (50 << 16) |
			 THERM_STATUS_THERMAL_LOG | THERM_STATUS_PROCHOT_LOG);
	wr(&m, 12, IA32_THERM_STATUS, THERM_STATUS_PROCHOT_LOG);  /* 0 to bit 1 clears it */
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS),
			 VALID_RES | (50 << 16) | THERM_STATUS_PROCHOT_LOG);
	wr(&m, 0, IA32_THERM_STATUS, ~UINT64_C(0));               /* 1s are ignored */
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS),
			 VALID_RES | (50 << 16) | THERM_STATUS_PROCHOT_LOG);
	wr(&m, 0, IA32_THERM_STATUS, 0);
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS), VALID_RES | (50 << 16));
	sim_advance(m.sim, 30);  /* next period: logs set again by the new episode */
	assert_int_equal(rd(&m, 0, IA32_THERM_STATUS), VALID_RES | (50 << 16) |
			 THERM_STATUS_THERMAL_LOG | THERM_STATUS_PROCHOT_LOG);
	shutdown_machine(&m);
}

static void kernel_throttle_counts(void **state)
{
	struct machine m = boot("westmere-ep-2s:prochot-storm");
	uint64_t v;

	(void)state;
	sim_advance(m.sim, 16);
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 0, "thermal_throttle/core_throttle_count",
						 &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 14, "thermal_throttle/core_throttle_count",
						 &v), 0);
	assert_int_equal(v, 1);   /* core 2, forced */
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 3, "thermal_throttle/core_throttle_count",
						 &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 0,
						 "thermal_throttle/package_throttle_count", &v),
			 -ENOENT);
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 0, "cpufreq/scaling_cur_freq", &v),
			 -ENOENT);
	shutdown_machine(&m);

	m = boot("skylake-sp-2s:prochot-storm");
	sim_advance(m.sim, 31);
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 0,
						 "thermal_throttle/package_throttle_count", &v), 0);
	assert_int_equal(v, 1);   /* one episode per period, 5-15 s */
	sim_advance(m.sim, 6);    /* t = 37: package hot again, between PROCHOT bursts */
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 0,
						 "thermal_throttle/package_throttle_count", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(rd(&m, 3, IA32_PACKAGE_THERM_STATUS),
			 THERM_STATUS_THERMAL | THERM_STATUS_THERMAL_LOG |
			 THERM_STATUS_PROCHOT_LOG);
	shutdown_machine(&m);
}

static void rapl_throttled_time(void **state)
{
	char dir[256], path[512], spec[600];
	struct machine m;

	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/limit.ini", dir);
	helpers_write_file(path, "[power-limit.1]\nsocket = 1\ndomain = dram\nstart = 1\nend = 3\n");
	snprintf(spec, sizeof(spec), "skylake-sp-2s:%s", path);
	m = boot(spec);
	assert_int_equal(rd(&m, 0, MSR_RAPL_POWER_UNIT), 0xa0e03);
	sim_advance(m.sim, 2.5);
	assert_int_equal(rd(&m, 28, MSR_DRAM_PERF_STATUS), 1536);
	assert_int_equal(rd(&m, 28, MSR_PKG_PERF_STATUS), 0);
	assert_int_equal(rd(&m, 0, MSR_DRAM_PERF_STATUS), 0);
	sim_advance(m.sim, 10);
	assert_int_equal(rd(&m, 28, MSR_DRAM_PERF_STATUS), 2048);
	shutdown_machine(&m);
	helpers_rmtree(dir);
}

/* ---- scenarios driving the uncore ---- */

static void dram_heatwave_throttles_socket_1_only(void **state)
{
	struct machine m = boot("westmere-ep-2s:dram-heatwave");
	uint64_t truth;

	(void)state;
	for (int cpu = 0; cpu <= 6; cpu += 6) {
		wr(&m, cpu, MSR_UNCORE_PERFEVTSEL0, 0x400167);
		wr(&m, cpu, MSR_UNCORE_PERFEVTSEL0 + 1, 0x400167 | UNC_EVTSEL_EDGE);
		wr(&m, cpu, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x3);
	}
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), 960000000);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0), 0);
	sim_advance(m.sim, 2.2);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0 + 1), 4);   /* episodes at 0, 1, 2, 3 s */
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0 + 1), 0);
	assert_int_equal(sim_ground_truth(m.sim, true, 1, 0x67, 0x01, true, &truth), 0);
	assert_int_equal(truth, 4);
	sim_advance(m.sim, 60);    /* t = 63.2: one full period more: 35 episodes, 14 s */
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0 + 1), 39);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), UCLK_HZ * 4 / 10 * 3 + UCLK_HZ * 14 +
			 UCLK_HZ * 2 / 10);
	assert_int_equal(sim_ground_truth(m.sim, true, 0, 0x67, 0x01, false, &truth), 0);
	assert_int_equal(truth, 0);
	shutdown_machine(&m);
}

static void prochot_and_core_events(void **state)
{
	struct machine m = boot("westmere-ep-2s:prochot-storm");
	uint64_t truth;

	(void)state;
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0, 0x400182);   /* PROCHOT assertions */
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0 + 1, 0x400380); /* temp, cores 0|1 */
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0 + 2, 0x400481); /* throttled, core 2 */
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0 + 3, 0x400183); /* PROCHOT throttling, core 0 */
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0 + 4, 0x400184); /* not generated */
	wr(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1f);
	sim_advance(m.sim, 30);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0), 9);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0 + 1), UCLK_HZ * 10);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0 + 2), UCLK_HZ * 4);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0 + 3), UCLK_HZ * 54 / 10);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0 + 4), 0);
	assert_int_equal(sim_ground_truth(m.sim, true, 0, 0x84, 0x01, false, &truth), -ENOENT);
	shutdown_machine(&m);

	m = boot("nehalem-ep-2s:prochot-storm");   /* no thermal uncore events */
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0, 0x400182);
	wr(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1);
	sim_advance(m.sim, 30);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PMC0), 0);
	assert_int_equal(sim_ground_truth(m.sim, true, 0, 0x82, 0x01, false, &truth), -ENOENT);
	shutdown_machine(&m);
}

static void conflict_rewrites_evtsel(void **state)
{
	struct machine m = boot("westmere-ep-2s:conflict");

	(void)state;
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0, 0x400167);
	sim_advance(m.sim, 2.9);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0), 0x400167);
	sim_advance(m.sim, 0.2);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0), 0x400160);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PERFEVTSEL0), 0);
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0, 0x400167);
	sim_advance(m.sim, 10);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0), 0x400160);
	shutdown_machine(&m);
}

/* ---- core PMU ---- */

static void enable_core(struct machine *m, int cpu)
{
	wr(m, cpu, IA32_PERFEVTSEL0, 0x4300c0);       /* instructions */
	wr(m, cpu, IA32_PERFEVTSEL0 + 1, 0x43412e);   /* LLC misses */
	wr(m, cpu, IA32_PERFEVTSEL0 + 2, 0x4300c5 & ~(PERFEVTSEL_USR | PERFEVTSEL_OS));
	wr(m, cpu, IA32_FIXED_CTR_CTRL, 0x333);
	wr(m, cpu, IA32_PERF_GLOBAL_CTRL, 0x700000007);
}

static void ground_truth_matches_counters_from_zero(void **state)
{
	struct machine m = boot("westmere-ep-2s:dram-heatwave");
	uint64_t truth;

	(void)state;
	enable_core(&m, 3);
	wr(&m, 6, MSR_UNCORE_PERFEVTSEL0, 0x400167);
	wr(&m, 6, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1);
	sim_advance(m.sim, 2.345678);
	assert_int_equal(sim_ground_truth(m.sim, false, 3, 0xc0, 0x00, false, &truth), 0);
	assert_int_equal(rd(&m, 3, IA32_PMC0), truth);
	assert_int_equal(rd(&m, 3, IA32_FIXED_CTR0), truth);
	assert_int_not_equal(truth, 0);
	assert_int_equal(sim_ground_truth(m.sim, false, 3, 0x2e, 0x41, false, &truth), 0);
	assert_int_equal(rd(&m, 3, IA32_PMC0 + 1), truth);
	assert_int_equal(rd(&m, 3, IA32_PMC0 + 2), 0);   /* neither USR nor OS */
	assert_int_equal(sim_ground_truth(m.sim, false, 3, 0x3c, 0x00, false, &truth), 0);
	assert_int_equal(rd(&m, 3, IA32_FIXED_CTR0 + 1), truth);
	assert_int_equal(sim_ground_truth(m.sim, false, 3, 0x3c, 0x01, false, &truth), 0);
	assert_int_equal(rd(&m, 3, IA32_FIXED_CTR0 + 2), truth);
	assert_int_equal(sim_ground_truth(m.sim, true, 1, 0x67, 0x01, false, &truth), 0);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PMC0), truth);
	assert_int_equal(sim_ground_truth(m.sim, false, 3, 0x99, 0x00, false, &truth), -ENOENT);
	assert_int_equal(rd(&m, 4, IA32_FIXED_CTR0), 0);   /* not enabled there */
	shutdown_machine(&m);
}

static void counter_wrap_scenario_wraps(void **state)
{
	struct machine m = boot("westmere-ep-2s:counter-wrap");
	uint64_t before;

	(void)state;
	assert_int_equal(rd(&m, 5, IA32_FIXED_CTR0), 0xffff1194d800);
	enable_core(&m, 5);
	wr(&m, 0, MSR_UNCORE_FIXED_CTR_CTRL, UNC_FIXED_CTR_CTRL_EN);
	wr(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, UNC_GLOBAL_CTRL_EN_FC0);
	sim_advance(m.sim, 1);
	before = rd(&m, 5, IA32_FIXED_CTR0);
	assert_int_equal(before, 0xffff1194d800 + 2000000000);
	sim_advance(m.sim, 2);
	assert_int_equal(rd(&m, 5, IA32_FIXED_CTR0), 2000000000);   /* 6e9 - 4e9 */
	assert_int_equal(rd(&m, 5, IA32_PMC0), 6000000000 - 0x80000000);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), 0);      /* exactly 3 s: 7.2e9 */
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), UCLK_HZ);
	shutdown_machine(&m);
}

/* ---- the kernel's side: boot state and perf users, hardware-linux.md §1 ---- */

static struct machine boot_linux(const char *spec)
{
	struct machine m;
	char err[1024];

	m.sim = sim_open_boot(spec, scenario_dir(), SIM_CLOCK_STEPPED, SIM_BOOT_LINUX, err,
			      sizeof(err));
	if (!m.sim)
		fail_msg("sim_open_boot(%s): %s", spec, err);
	sim_bind(m.sim, &m.hw);
	return m;
}

static void linux_boot_state_every_intel_model(void **state)
{
	static const struct {
		const char *model;
		uint64_t intel_ctrl;
		bool nhm_uncore;
	} cases[] = {
		{ "westmere-ep-2s", 0x70000000f, true },
		{ "nehalem-ep-2s", 0x70000000f, true },
		{ "skylake-sp-2s", 0x70000000f, false },
		{ "big", 0x70000000f, true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct machine m = boot_linux(cases[i].model);
		uint64_t truth;

		sim_advance(m.sim, 1.5);
		for (int cpu = 0; cpu < 4; cpu++) {
			assert_int_equal(rd(&m, cpu, IA32_PERF_GLOBAL_CTRL), cases[i].intel_ctrl);
			assert_int_equal(rd(&m, cpu, IA32_FIXED_CTR_CTRL), 0xb0);
			assert_int_equal(rd(&m, cpu, IA32_PERFEVTSEL0), 0x13003c);
			assert_int_equal(rd(&m, cpu, IA32_PERFEVTSEL0 + 1), 0);
			/* the watchdog's cycles count; fixed counters 0 and 2 do not */
			assert_int_equal(sim_ground_truth(m.sim, false, cpu, 0x3c, 0, false, &truth),
					 0);
			assert_int_not_equal(truth, 0);
			assert_int_equal(rd(&m, cpu, IA32_FIXED_CTR0 + 1), truth);
			assert_int_equal(rd(&m, cpu, IA32_FIXED_CTR0), 0);
			assert_int_equal(rd(&m, cpu, IA32_FIXED_CTR0 + 2), 0);
			assert_int_equal(rd(&m, cpu, IA32_PMC0), 0);
		}
		if (cases[i].nhm_uncore) {
			assert_int_equal(rd(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), 0x1000000ff);
			assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0), 0);
			assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR_CTRL), 0);
		}
		shutdown_machine(&m);
	}
}

static struct machine boot_text(const char *model, const char *text, char *dir, size_t len)
{
	char path[512], spec[600];

	helpers_mkdtemp(dir, len);
	snprintf(path, sizeof(path), "%s/s.ini", dir);
	helpers_write_file(path, text);
	snprintf(spec, sizeof(spec), "%s:%s", model, path);
	return boot_linux(spec);
}

static void perf_core_takes_and_leaves_a_gp_counter(void **state)
{
	char dir[256];
	struct machine m = boot_text("skylake-sp-2s", "[scenario]\nperiod = 10\n"
				     "[perf-core.1]\ncpu = 1\ncounter = 2\nvalue = 0x1300c4\n"
				     "start = 2\nend = 5\n", dir, sizeof(dir));

	(void)state;
	wr(&m, 1, IA32_PERFEVTSEL0 + 1, 0x4300c0);
	wr(&m, 1, IA32_PERFEVTSEL0 + 2, 0x43412e);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 1, IA32_PERFEVTSEL0 + 2), 0x43412e);
	sim_advance(m.sim, 2);
	assert_int_equal(rd(&m, 1, IA32_PERFEVTSEL0 + 2), 0x5300c4);
	assert_int_equal(rd(&m, 1, IA32_PERFEVTSEL0 + 1), 0x4300c0);   /* others keep theirs */
	assert_int_equal(rd(&m, 1, IA32_PERF_GLOBAL_CTRL), 0x70000000f);
	assert_int_not_equal(rd(&m, 1, IA32_PMC0 + 2), 0);               /* perf counts */
	assert_int_equal(rd(&m, 2, IA32_PERFEVTSEL0 + 2), 0);             /* other CPUs: nothing */
	sim_advance(m.sim, 3);
	assert_int_equal(rd(&m, 1, IA32_PERFEVTSEL0 + 2), 0x1300c4);    /* stale, EN clear */
	sim_advance(m.sim, 7);                                             /* next period */
	assert_int_equal(rd(&m, 1, IA32_PERFEVTSEL0 + 2), 0x5300c4);
	shutdown_machine(&m);
	helpers_rmtree(dir);
}

static void nhm_workaround_rewrites_every_gp_select(void **state)
{
	char dir[256];
	struct machine m = boot_text("westmere-ep-2s", "[perf-core.1]\ncpu = 0\ncounter = 1\n"
				     "value = 0x1300c4\nstart = 1\nend = 2\n", dir, sizeof(dir));

	(void)state;
	wr(&m, 0, IA32_PERFEVTSEL0 + 2, 0x43412e);
	wr(&m, 0, IA32_PERFEVTSEL0 + 3, 0x4300c0);
	sim_advance(m.sim, 1.5);
	assert_int_equal(rd(&m, 0, IA32_PERFEVTSEL0), 0);      /* the stale select too */
	assert_int_equal(rd(&m, 0, IA32_PERFEVTSEL0 + 1), 0x5300c4);
	assert_int_equal(rd(&m, 0, IA32_PERFEVTSEL0 + 2), 0);
	assert_int_equal(rd(&m, 0, IA32_PERFEVTSEL0 + 3), 0);
	assert_int_equal(rd(&m, 0, IA32_PMC0 + 2), 0);
	assert_int_equal(rd(&m, 0, IA32_PMC0 + 3), 0);
	assert_int_equal(rd(&m, 0, IA32_PERF_GLOBAL_CTRL), 0x70000000f);
	sim_advance(m.sim, 1);
	assert_int_equal(rd(&m, 0, IA32_PERFEVTSEL0 + 1), 0x1300c4);
	shutdown_machine(&m);
	helpers_rmtree(dir);
}

static void perf_uncore_leaves_global_enabled_and_selects_zero(void **state)
{
	struct machine m = boot("westmere-ep-2s:perf-uncore");
	uint64_t truth;

	(void)state;
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);    /* reset boot */
	sim_advance(m.sim, 15);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PERF_GLOBAL_CTRL), 0x1000000ff);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PERFEVTSEL0), 0x400167);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_FIXED_CTR_CTRL), 1);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), UCLK_HZ * 5);
	sim_advance(m.sim, 10);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PERF_GLOBAL_CTRL), 0x1000000ff);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_PERFEVTSEL0), 0);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_FIXED_CTR_CTRL), 0);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), UCLK_HZ * 10);
	/* socket 0's 10 ms windows (30 s, 40 s) stop its fixed counter */
	wr(&m, 0, MSR_UNCORE_FIXED_CTR_CTRL, 1);
	wr(&m, 6, MSR_UNCORE_FIXED_CTR_CTRL, 1);
	sim_advance(m.sim, 25);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_FIXED_CTR0), UCLK_HZ * 35 - UCLK_HZ / 50);
	assert_int_equal(rd(&m, 6, MSR_UNCORE_FIXED_CTR0), UCLK_HZ * 35);
	assert_int_equal(sim_ground_truth(m.sim, true, 0, SIM_UNCORE_CLOCK_CODE, 0, false, &truth),
			 0);
	assert_int_equal(truth, UCLK_HZ * 50);
	shutdown_machine(&m);
}

static void global_disable_windows_stop_counting(void **state)
{
	struct machine m = boot_linux("skylake-sp-2s:global-disable");
	uint64_t truth;

	(void)state;
	sim_advance(m.sim, 0.0005);
	assert_int_equal(rd(&m, 3, IA32_PERF_GLOBAL_CTRL), 0);
	sim_advance(m.sim, 0.001);
	assert_int_equal(rd(&m, 3, IA32_PERF_GLOBAL_CTRL), 0x70000000f);
	sim_advance(m.sim, 9.9985);   /* 10 s: ten 1 ms windows */
	assert_int_equal(sim_ground_truth(m.sim, false, 3, 0x3c, 0, false, &truth), 0);
	assert_int_equal(rd(&m, 3, IA32_FIXED_CTR0 + 1), truth - truth / 1000);
	shutdown_machine(&m);
}

static void inuse_reflects_enables_on_skylake(void **state)
{
	struct machine m = boot("skylake-sp-2s");

	(void)state;
	assert_int_equal(rd(&m, 2, IA32_PERF_GLOBAL_INUSE), 0);
	wr(&m, 2, IA32_PERFEVTSEL0 + 1, 0x43003c);
	wr(&m, 2, IA32_FIXED_CTR_CTRL, 0xb0);
	assert_int_equal(rd(&m, 2, IA32_PERF_GLOBAL_INUSE), MSR_BIT(1) | MSR_BIT(33));
	assert_int_equal(rd(&m, 2, IA32_PACKAGE_THERM_STATUS), 55 << 16);
	assert_int_equal(rd(&m, 2, MSR_TEMPERATURE_TARGET), 100 << 16);
	shutdown_machine(&m);
}

/* ---- offline, refused writes ---- */

static void offline_cpu_and_recovery(void **state)
{
	struct machine m = boot("westmere-ep-2s:cpu-offline");
	struct hw_cpu cpus[24];
	struct hw_cpuid regs;
	uint64_t v;
	int n;

	(void)state;
	sim_advance(m.sim, 4);
	assert_int_equal(rd_err(&m, 6, IA32_THERM_STATUS, &v), -ENXIO);
	assert_int_equal(wr_err(&m, 6, IA32_PERF_GLOBAL_CTRL, 0), -ENXIO);
	assert_int_equal(m.hw.ops->cpuid(m.hw.ctx, 6, 0, 0, &regs), -ENXIO);
	assert_int_equal(m.hw.ops->cpu_online(m.hw.ctx, 6), 0);
	assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 6,
						 "thermal_throttle/core_throttle_count", &v), -ENOENT);
	assert_int_equal(m.hw.ops->enumerate(m.hw.ctx, cpus, 24, &n), 0);
	assert_false(cpus[6].online);
	assert_int_equal(cpus[6].socket, 1);
	assert_int_equal(cpus[6].core, 0);
	assert_true(cpus[7].online);
	assert_int_equal(rd(&m, 7, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
	sim_advance(m.sim, 5);
	assert_int_equal(m.hw.ops->cpu_online(m.hw.ctx, 6), 1);
	assert_int_equal(rd(&m, 6, MSR_TEMPERATURE_TARGET), 95 << 16);
	assert_int_equal(sim_set_online(m.sim, 7, false), 0);
	assert_int_equal(rd_err(&m, 7, IA32_THERM_STATUS, &v), -ENXIO);
	assert_int_equal(sim_set_online(m.sim, 7, true), 0);
	assert_int_equal(rd_err(&m, 7, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(rd_err(&m, 24, IA32_THERM_STATUS, &v), -ENXIO);
	shutdown_machine(&m);
}

static void refused_writes_fail_with_eperm(void **state)
{
	char dir[256], path[512], spec[600];
	struct machine m = boot("westmere-ep-2s");

	(void)state;
	sim_refuse_writes(m.sim, true);
	assert_int_equal(wr_err(&m, 0, MSR_UNCORE_PERFEVTSEL0, 0x400167), -EPERM);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0), 0);
	assert_int_equal(sim_poke(m.sim, 0, MSR_UNCORE_PERFEVTSEL0, 0x400182), 0);
	assert_int_equal(rd(&m, 0, MSR_UNCORE_PERFEVTSEL0), 0x400182);
	sim_refuse_writes(m.sim, false);
	wr(&m, 0, MSR_UNCORE_PERFEVTSEL0, 0);
	shutdown_machine(&m);

	helpers_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/locked.ini", dir);
	helpers_write_file(path, "[scenario]\nwrites = refused\nkernel_thermal_throttle = no\n");
	snprintf(spec, sizeof(spec), "westmere-ep-2s:%s", path);
	m = boot(spec);
	assert_int_equal(wr_err(&m, 3, IA32_PERF_GLOBAL_CTRL, 1), -EPERM);
	assert_int_equal(rd(&m, 3, IA32_PERF_GLOBAL_CTRL), 0);
	{
		uint64_t v;

		assert_int_equal(m.hw.ops->read_cpu_attr(m.hw.ctx, 0,
				 "thermal_throttle/core_throttle_count", &v), -ENOENT);
	}
	shutdown_machine(&m);
	helpers_rmtree(dir);
}

/* ---- dump ---- */

struct dump_acc {
	int n;
	uint64_t sum;
	int last_cpu;
	bool ordered;
};

static void count_reg(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	struct dump_acc *acc = arg;

	acc->ordered = acc->ordered && cpu >= acc->last_cpu;
	acc->last_cpu = cpu;
	acc->n++;
	acc->sum += value ^ msr;
}

static void dump_is_fixed_and_complete(void **state)
{
	struct machine m = boot("westmere-ep-2s");
	struct dump_acc a = { .ordered = true }, b = { .ordered = true };

	(void)state;
	sim_dump(m.sim, count_reg, &a);
	sim_dump(m.sim, count_reg, &b);
	/*
	 * per CPU: 6 uncore singles minus write-only 0x393 + 16 uncore + 2 thermal + 4+4+3 +
	 * 4 core + IA32_PERF_CAPABILITIES
	 */
	assert_int_equal(a.n, 24 * (5 + 16 + 2 + 11 + 4 + 1));
	assert_true(a.ordered);
	assert_int_equal(a.sum, b.sum);
	shutdown_machine(&m);
}

/* ---- scenarios ---- */

struct shipped_case {
	const char *scenario;
	const char *models[5];
};

static const struct shipped_case shipped_cases[] = {
	{ "idle", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "rome-2s", "big" } },
	{ "dram-heatwave", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "big" } },
	{ "prochot-storm", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "big" } },
	{ "counter-wrap", { "westmere-ep-2s", "nehalem-ep-2s", "big" } },
	{ "conflict", { "westmere-ep-2s", "nehalem-ep-2s", "big" } },
	{ "cpu-offline", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "rome-2s", "big" } },
	{ "perf-profiler", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "big" } },
	{ "perf-uncore", { "westmere-ep-2s", "nehalem-ep-2s", "big" } },
	{ "global-disable", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "big" } },
	{ "dimm-hot-channel", { "westmere-ep-2s", "skylake-sp-2s", "big" } },
	{ "vr-prochot", { "westmere-ep-2s", "nehalem-ep-2s", "skylake-sp-2s", "big" } },
	{ "power-cap", { "westmere-ep-2s", "skylake-sp-2s", "big" } },
};

static void shipped_scenarios_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shipped_cases) / sizeof(shipped_cases[0]); i++) {
		for (int k = 0; k < 5 && shipped_cases[i].models[k]; k++) {
			char spec[128];
			struct machine m;

			snprintf(spec, sizeof(spec), "%s:%s", shipped_cases[i].models[k],
				 shipped_cases[i].scenario);
			m = boot(spec);
			sim_advance(m.sim, 100);
			shutdown_machine(&m);
		}
	}
}

struct bad_case {
	const char *name;
	const char *model;
	const char *text;
	const char *expected;   /* after "PATH:" */
};

static const struct bad_case bad_cases[] = {
	{ "malformed period", "westmere-ep-2s", "[scenario]\nperiod = abc\n",
	  "2: period: expected 0 (run once) or seconds from 0.1 to 10000000" },
	{ "period too short", "westmere-ep-2s", "[scenario]\nperiod = 0.000000001\n",
	  "2: period: expected 0 (run once) or seconds from 0.1 to 10000000" },
	{ "perf-core counter", "skylake-sp-2s",
	  "[perf-core.1]\ncpu = all\ncounter = 4\nvalue = 0x1300c4\n",
	  "3: counter: expected 0 to 3 (model 'skylake-sp-2s' has 4 GP counters)" },
	{ "perf-core fixed", "skylake-sp-2s",
	  "[perf-core.1]\ncpu = all\ncounter = fixed\nvalue = 0x1300c4\n",
	  "3: counter: expected a GP counter number (perf-core takes GP counters)" },
	{ "perf-core EN", "skylake-sp-2s",
	  "[perf-core.1]\ncpu = 1\ncounter = 0\nvalue = 0x5300c4\n",
	  "4: value: expected the select without EN (bit 22): the kernel sets it" },
	{ "perf-uncore model", "skylake-sp-2s",
	  "[perf-uncore.1]\nsocket = 0\ncounter = 0\nvalue = 0x167\n",
	  "1: [perf-uncore.1]: expected a model with the Nehalem/Westmere uncore PMU, "
	  "model 'skylake-sp-2s' has none" },
	{ "perf-uncore raw mask", "westmere-ep-2s",
	  "[perf-uncore.1]\nsocket = 0\ncounter = 0\nvalue = 0x20167\n",
	  "4: value: expected only event, umask, edge, inv and cmask bits (0xff84ffff); "
	  "perf cannot set the others" },
	{ "perf-uncore value", "westmere-ep-2s",
	  "[perf-uncore.1]\nsocket = 0\ncounter = 1\n",
	  "1: value: missing in [perf-uncore.1] (needed unless counter = fixed)" },
	{ "global-disable target", "westmere-ep-2s",
	  "[global-disable.1]\npmu = uncore\ncpu = 0\n",
	  "1: socket: expected socket (and not cpu) with pmu = uncore in [global-disable.1]" },
	{ "unknown section", "westmere-ep-2s", "; c\n[bogus.1]\nsocket = 0\n",
	  "2: [bogus.1]: expected [scenario] or [KIND.N] with KIND one of dram-throttle, "
	  "temperature, prochot, core-throttle, power-limit, preset, rewrite, offline, load, "
	  "perf-core, perf-uncore, global-disable, dram-critical, package-sleep, frequency-limit, dimm-temperature" },
	{ "package-sleep socket", "skylake-sp-2s", "[package-sleep.1]\nduty = 0.5\n",
	  "1: socket: missing in [package-sleep.1]" },
	{ "package-sleep channel", "skylake-sp-2s", "[package-sleep.1]\nsocket = 0\nchannel = 1\n",
	  "3: channel: unknown key in [package-sleep.1]" },
	{ "unknown key", "westmere-ep-2s", "[dram-throttle.1]\nsocket = 0\ncolour = red\n",
	  "3: colour: unknown key in [dram-throttle.1]" },
	{ "end before start", "westmere-ep-2s",
	  "[scenario]\nperiod = 60\n\n[prochot.1]\nsocket = 0\nstart = 10\nend = 5\n",
	  "7: end: expected a time after start" },
	{ "socket out of range", "westmere-ep-2s", "[dram-throttle.1]\nsocket = 2\n",
	  "2: socket: expected 0 to 1 or 'all' (model 'westmere-ep-2s' has 2 sockets)" },
	{ "core id absent", "westmere-ep-2s",
	  "[temperature.1]\nsocket = 0\ncore = 3\ncelsius = 70\n",
	  "3: core: expected a core id of model 'westmere-ep-2s' (0, 1, 2, 8, 9, 10) or 'all'" },
	{ "missing key", "westmere-ep-2s", "\n[temperature.1]\nsocket = 0\ncore = 1\n",
	  "2: celsius: missing in [temperature.1]" },
	{ "duty out of range", "westmere-ep-2s", "[prochot.1]\nsocket = 0\nend = 5\nduty = 1.5\n",
	  "4: duty: expected a number from 0 to 1, got '1.5'" },
	{ "syntax", "westmere-ep-2s", "[scenario]\nthis is not ini\n",
	  "2: syntax: expected '[section]', 'key = value' or a comment" },
	{ "cpu out of range", "westmere-ep-2s", "[offline.1]\ncpu = 24\n",
	  "2: cpu: expected 0 to 23 or 'all' (model 'westmere-ep-2s' has 24 cpus)" },
	{ "register absent", "skylake-sp-2s", "[preset.1]\ncpu = 0\nmsr = 0x3c0\nvalue = 1\n",
	  "3: msr: expected a writable register of model 'skylake-sp-2s', 0x3c0 is not one" },
	{ "duplicate key", "westmere-ep-2s", "[scenario]\nperiod = 1\nperiod = 2\n",
	  "3: period: key given twice" },
	{ "end after period", "westmere-ep-2s",
	  "[scenario]\nperiod = 10\n[prochot.1]\nsocket = 0\nend = 20\n",
	  "5: end: expected a time at most the period" },
	{ "key before section", "westmere-ep-2s", "socket = 1\n",
	  "1: socket: expected a [section] before the first key" },
	{ "bad writes", "westmere-ep-2s", "[scenario]\nwrites = maybe\n",
	  "2: writes: expected 'allowed' or 'refused'" },
	{ "register rule target", "westmere-ep-2s",
	  "[rewrite.1]\nmsr = 0x3c0\nvalue = 1\nat = 2\n",
	  "1: cpu: expected exactly one of cpu or socket in [rewrite.1]" },
	{ "negative value", "westmere-ep-2s", "[preset.1]\ncpu = 0\nmsr = 0x3c0\nvalue = -1\n",
	  "4: value: expected an unsigned 64-bit number (decimal or 0x hex), got '-1'" },
	{ "duty without end", "westmere-ep-2s", "[prochot.1]\nsocket = 0\nduty = 0.5\n",
	  "3: duty: expected 1 unless the window has an end (give end, or a scenario period)" },
	{ "line too long", "westmere-ep-2s",
	  "[scenario]\ndescription = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nperiod = 5\n",
	  "2: syntax: expected lines of at most 198 characters" },
	{ "duplicate section", "westmere-ep-2s",
	  "[prochot.1]\nsocket = 0\n[prochot.2]\nsocket = 1\n[prochot.1]\nsocket = 1\n",
	  "5: [prochot.1]: section given twice" },
};

static void malformed_scenarios_report_file_line(void **state)
{
	char dir[256];

	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		char path[512], spec[600], err[1024], expected[1024];
		struct sim *s;

		snprintf(path, sizeof(path), "%s/bad%zu.ini", dir, i);
		helpers_write_file(path, c->text);
		snprintf(spec, sizeof(spec), "%s:%s", c->model, path);
		snprintf(expected, sizeof(expected), "%s:%s", path, c->expected);
		s = sim_open_boot(spec, NULL, SIM_CLOCK_STEPPED, SIM_BOOT_RESET, err, sizeof(err));
		if (s)
			fail_msg("%s: opened", c->name);
		if (strcmp(err, expected) != 0)
			fail_msg("%s:\n got      %s\n expected %s", c->name, err, expected);
	}
	helpers_rmtree(dir);
}

static void open_errors(void **state)
{
	char err[512], expected[1024];
	struct sim *s;

	(void)state;
	s = sim_open_boot("pentium:idle", scenario_dir(), SIM_CLOCK_STEPPED, SIM_BOOT_RESET,
			      err, sizeof(err));
	assert_null(s);
	assert_string_equal(err, "unknown simulated model 'pentium', expected one of: "
			    "westmere-ep-2s, nehalem-ep-2s, skylake-sp-2s, sandy-bridge-ep-2s, "
			    "cascade-lake-ap-2s, icelake-sp-2s, sapphire-rapids-2s, granite-rapids-2s, rome-2s, milan-2s, genoa-2s, "
			    "turin-2s, big");
	s = sim_open_boot("big:no-such", scenario_dir(), SIM_CLOCK_STEPPED, SIM_BOOT_RESET,
			      err, sizeof(err));
	assert_null(s);
	/* A name that is not there is answered with the shipped scenarios, sorted. */
	snprintf(expected, sizeof(expected), "unknown scenario 'no-such' in %s; known: "
		 "amd-dimm-hot, amd-frequency-limits, amd-prochot, conflict, "
		 "counter-wrap, cpu-offline, dimm-hot-channel, dram-heatwave, global-disable, idle, "
		 "lockdown, perf-profiler, perf-uncore, power-cap, prochot-storm, vr-prochot",
		 scenario_dir());
	assert_string_equal(err, expected);
	/* A path is read as it is, and its error names it. */
	s = sim_open_boot("big:/nonexistent/x.ini", scenario_dir(), SIM_CLOCK_STEPPED, SIM_BOOT_RESET,
			  err, sizeof(err));
	assert_null(s);
	assert_string_equal(err, "/nonexistent/x.ini: cannot open scenario: No such file or directory");
	assert_string_equal(sim_model_names()[0], "westmere-ep-2s");
	assert_null(sim_model_names()[13]);
}

static void stepped_clock(void **state)
{
	struct machine m = boot("rome-2s");

	(void)state;
	assert_true(sim_now(m.sim) == 0.0);
	sim_advance(m.sim, 1.5);
	sim_advance(m.sim, -3);
	assert_true(sim_now(m.sim) == 1.5);
	shutdown_machine(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpuid_every_model),
		cmocka_unit_test(cpuid_topology_leaf),
		cmocka_unit_test(topology_every_model),
		cmocka_unit_test(uncore_counts_only_with_both_enables),
		cmocka_unit_test(occ_ctr_rst_keeps_the_pmc_and_reads_back_clear),
		cmocka_unit_test(pmc_writes_sign_extend_unless_full_width),
		cmocka_unit_test(linux_boot_state_every_intel_model),
		cmocka_unit_test(perf_core_takes_and_leaves_a_gp_counter),
		cmocka_unit_test(nhm_workaround_rewrites_every_gp_select),
		cmocka_unit_test(perf_uncore_leaves_global_enabled_and_selects_zero),
		cmocka_unit_test(global_disable_windows_stop_counting),
		cmocka_unit_test(uncore_counters_wrap_at_48_bits),
		cmocka_unit_test(absent_registers_fail_with_eio),
		cmocka_unit_test(thermal_status_readout_and_logs),
		cmocka_unit_test(kernel_throttle_counts),
		cmocka_unit_test(rapl_throttled_time),
		cmocka_unit_test(dram_heatwave_throttles_socket_1_only),
		cmocka_unit_test(prochot_and_core_events),
		cmocka_unit_test(conflict_rewrites_evtsel),
		cmocka_unit_test(ground_truth_matches_counters_from_zero),
		cmocka_unit_test(counter_wrap_scenario_wraps),
		cmocka_unit_test(inuse_reflects_enables_on_skylake),
		cmocka_unit_test(offline_cpu_and_recovery),
		cmocka_unit_test(refused_writes_fail_with_eperm),
		cmocka_unit_test(dump_is_fixed_and_complete),
		cmocka_unit_test(shipped_scenarios_parse),
		cmocka_unit_test(malformed_scenarios_report_file_line),
		cmocka_unit_test(open_errors),
		cmocka_unit_test(stepped_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
