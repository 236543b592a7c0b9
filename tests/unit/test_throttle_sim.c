/*
 * The PCU and iMC collectors on the simulated server models (skylake-sp-2s,
 * sandy-bridge-ep-2s, cascade-lake-ap-2s with two dies per package,
 * icelake-sp-2s, sapphire-rapids-2s, granite-rapids-2s),
 * through the
 * simulated kernel's perf (uncore_pcu or uncore_pcu_N, uncore_imc_N): for each throttling
 * scenario, the generation-independent seconds match the simulator's
 * ground truth within 1 % on the socket (and channel) that throttles, and
 * are 0 everywhere else; every register is as it was after the run; the
 * Prometheus text passes promtool where promtool is installed.  Stepped
 * clock.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"
#include "collector.h"
#include "cpu.h"
#include "prom.h"
#include "helpers.h"
#include "metric.h"
#include "perf_sys.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"
#include "throttle_families.h"
#include "throttle_run.h"
#include "xeon_uncore.h"

/* The simulated server models and their memory channels per socket. */
static const struct {
	const char *name;
	int n_channels;
	bool pcu_msr;              /* the PCU has fixed MSR addresses */
	const char *dram_cause;    /* of DRAM heat: "thermal_or_power", or "thermal" (GNR) */
} models[] = {
	{ "skylake-sp-2s", 6, true, "thermal_or_power" },
	{ "sandy-bridge-ep-2s", 4, true, "thermal_or_power" },
	{ "cascade-lake-ap-2s", 6, true, "thermal_or_power" },  /* 2 dies: die labels */
	{ "icelake-sp-2s", 12, true, NULL },         /* per slot: check_imc() */
	{ "sapphire-rapids-2s", 8, false, NULL },    /* per slot: check_imc() */
	{ "granite-rapids-2s", 12, false, "thermal" },
};

#define N_MODELS (sizeof(models) / sizeof(models[0]))

static void spec_of(char *buf, size_t len, size_t m, const char *scenario)
{
	snprintf(buf, len, "%s:%s", models[m].name, scenario);
}

static void hot_dimms_on_one_channel(void **state)
{
	char spec[128];
	struct run r;

	(void)state;
	for (size_t m = 0; m < N_MODELS; m++) {
		spec_of(spec, sizeof(spec), m, "dimm-hot-channel");
		start(&r, spec);
		run_for(&r, 120);
		check_pcu(&r);
		check_imc(&r, models[m].n_channels);
		/* Socket 1 channel 2 only: 2 periods of 22 s, 4 s of them critical. */
		if (models[m].dram_cause) {
			char label[64];

			snprintf(label, sizeof(label), "2" METRIC_LABEL_SEP "%s",
				 models[m].dram_cause);
			assert_close(exported(&r, &throttle_dram_channel_seconds, 1, label), 44.0,
				     "channel 2 throttled", 1);
		}
		if (models[m].dram_cause && strcmp(models[m].dram_cause, "thermal_or_power") == 0)
			assert_close(exported(&r, &throttle_dram_critical_seconds, 1, "2"
					      METRIC_LABEL_SEP "thermal_or_power"), 8.0,
				     "channel 2 critical", 1);
		/*
		 * Granite Rapids counts critical throttling per DIMM slot, cause untold,
		 * and its BW_SLOT0/1 throttling per slot too, cause thermal_or_power.
		 */
		if (models[m].dram_cause && strcmp(models[m].dram_cause, "thermal") == 0)
			for (int slot = 0; slot < 2; slot++) {
				char label[64];

				snprintf(label, sizeof(label), "2" METRIC_LABEL_SEP "%d"
					 METRIC_LABEL_SEP "thermal_or_power", slot);
				assert_close(exported(&r, &throttle_dram_slot_critical_seconds, 1,
						      label), 8.0, "channel 2 slot critical", 1);
				assert_close(exported(&r, &throttle_dram_bw_slot_seconds, 1, label),
					     44.0, "channel 2 BW_SLOT", 1);
			}
		assert_close(exported(&r, &throttle_prochot_seconds, 1, "external"), 0.0,
			     "external", 1);
		finish(&r);
	}
}

static void external_prochot_without_dram_heat(void **state)
{
	char spec[128];
	struct run r;

	(void)state;
	for (size_t m = 0; m < N_MODELS; m++) {
		spec_of(spec, sizeof(spec), m, "vr-prochot");
		start(&r, spec);
		run_for(&r, 90);
		check_pcu(&r);
		check_imc(&r, models[m].n_channels);
		/* 3 periods of 6 s on socket 0. */
		assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 18.0,
			     "external", 0);
		finish(&r);
	}
}

static void power_capped_socket(void **state)
{
	char spec[128];
	struct run r;

	(void)state;
	for (size_t m = 0; m < N_MODELS; m++) {
		spec_of(spec, sizeof(spec), m, "power-cap");
		start(&r, spec);
		run_for(&r, 60);
		check_pcu(&r);
		check_imc(&r, models[m].n_channels);
		/* 3 periods of 15 s on socket 1; its DRAM power limit 3 periods of 5 s. */
		assert_close(exported(&r, &throttle_frequency_limited_seconds, 1, "power"), 45.0,
			     "power", 1);
		if (models[m].dram_cause) {
			char label[64];

			snprintf(label, sizeof(label), "0" METRIC_LABEL_SEP "%s",
				 strcmp(models[m].dram_cause, "thermal") == 0 ? "power" :
				 "thermal_or_power");
			assert_close(exported(&r, &throttle_dram_channel_seconds, 1, label), 15.0,
				     "channel 0 power-limited", 1);
		}
		finish(&r);
	}
}

static void hot_cores_limit_frequency_thermally(void **state)
{
	char spec[128];
	struct run r;

	(void)state;
	for (size_t m = 0; m < N_MODELS; m++) {
		spec_of(spec, sizeof(spec), m, "prochot-storm");
		start(&r, spec);
		run_for(&r, 60);
		check_pcu(&r);
		check_imc(&r, models[m].n_channels);
		finish(&r);
	}
}

/*
 * The same scenarios through the PCU's MSRs (0x710 on Skylake-SP, 0xC24 on
 * Sandy Bridge-EP; no perf): the same seconds.
 */
static void pcu_through_msrs(void **state)
{
	static const char *const scenarios[] = { "vr-prochot", "power-cap", "prochot-storm" };
	char spec[128];

	(void)state;
	for (size_t m = 0; m < N_MODELS; m++)
		for (size_t i = 0; models[m].pcu_msr && i < sizeof(scenarios) / sizeof(scenarios[0]);
		     i++) {
			struct run r;

			spec_of(spec, sizeof(spec), m, scenarios[i]);
			start_with(&r, spec, false);
			run_for(&r, 60);
			check_pcu(&r);
			/* No perf: the iMC is not counted, and not exported as 0. */
			assert_null(snapshot_find_sample(r.snap, &throttle_dram_channel_seconds, 0,
							 "0" METRIC_LABEL_SEP "thermal_or_power"));
			finish(&r);
		}
}

/*
 * Another agent holds PCU counter 0 of socket 0 (tests/data/scenarios/
 * pcu-taken.ini): the msr engine leaves it alone, counts what fits in the
 * other three counters, leaves the thermal frequency limit of socket 0
 * out rather than exporting 0, and the agent's select is untouched after
 * the run (finish() compares every control register).
 */
static void pcu_counter_held_by_another_agent(void **state)
{
	struct run r;

	(void)state;
	start_data_scenario(&r, "skylake-sp-2s", "pcu-taken.ini", false);
	run_for(&r, 60);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"),
		     pcu_truth(&r, 0, XEON_PCU_PROCHOT_EXTERNAL), "external", 0);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 12.0, "external", 0);
	assert_true(exported(&r, &throttle_frequency_limited_seconds, 0, "thermal") == -1.0);
	assert_close(exported(&r, &throttle_frequency_limited_seconds, 1, "thermal"),
		     pcu_truth(&r, 1, XEON_PCU_FREQ_THERMAL), "thermal", 1);
	finish(&r);
}

/*
 * Through MSRs, a die's PCU box is reached through another CPU of the same
 * die when its CPU goes offline (cascade-lake-ap-2s: CPU 24 is the first
 * of socket 0's die 1): the seconds of both dies still match.
 */
static void pcu_msr_box_follows_its_die_when_a_cpu_goes_offline(void **state)
{
	struct run r;

	(void)state;
	start_with(&r, "cascade-lake-ap-2s:vr-prochot", false);
	run_for(&r, 30);
	assert_int_equal(sim_set_online(r.sim, 24, false), 0);
	run_for(&r, 30);
	check_pcu(&r);
	assert_close(exported_die(&r, &throttle_prochot_seconds, 0, 1, "external"), 12.0,
		     "die 1 external", 0);
	assert_int_equal(sim_set_online(r.sim, 24, true), 0);
	finish(&r);
}

/*
 * Granite Rapids has two PCUs per package, uncore_pcu_0 and uncore_pcu_1
 * (the kernel's name for a type of several boxes), and the simulator's
 * second one carries the package's conditions: PROCHOT and the frequency
 * limits are exported on the socket that has them, through either name
 * the kernel gives (tests/data/scenarios/prochot-discovery.ini: a kernel
 * without the platform's table, uncore_type_4_N); so are the memory
 * channels' seconds, through uncore_type_6_N there.
 */
static void granite_rapids_pcu_instances(void **state)
{
	struct run r;

	(void)state;
	start(&r, "granite-rapids-2s:vr-prochot");
	run_for(&r, 60);
	check_pcu(&r);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 12.0, "external", 0);
	assert_close(exported(&r, &throttle_prochot_seconds, 1, "external"), 0.0, "external", 1);
	finish(&r);

	start_data_scenario(&r, "granite-rapids-2s", "prochot-discovery.ini", true);
	run_for(&r, 60);
	check_pcu(&r);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 12.0, "external", 0);
	assert_close(exported(&r, &throttle_frequency_limited_seconds, 1, "power"), 30.0,
		     "power", 1);
	assert_close(exported(&r, &throttle_frequency_limited_seconds, 0, "power"), 0.0,
		     "power", 0);
	/* The memory channels as uncore_type_6_N: 2 periods of 10 s hot on socket 1 channel 2. */
	check_imc(&r, 12);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 1, "2" METRIC_LABEL_SEP "thermal"),
		     20.0, "channel 2 thermal", 1);
	finish(&r);
}

/* Socket 0's external PROCHOT seconds on Skylake-SP under vr-prochot, collectors reading table. */
static double prochot_external_with(const struct xeon_uncore *table, bool with_perf)
{
	struct run r;
	double got;

	xeon_uncore_override(table);
	start_with(&r, "skylake-sp-2s:vr-prochot", with_perf);
	run_for(&r, 90);
	got = exported(&r, &throttle_prochot_seconds, 0, "external");
	r.pcu_down = got == -1.0;
	finish(&r);
	xeon_uncore_override(NULL);
	return got;
}

/* Socket 1 channel 2's DRAM seconds on Skylake-SP under dimm-hot-channel, collectors reading table. */
static double dram_channel_with(const struct xeon_uncore *table)
{
	struct run r;
	double got;

	xeon_uncore_override(table);
	start(&r, "skylake-sp-2s:dimm-hot-channel");
	run_for(&r, 120);
	got = exported(&r, &throttle_dram_channel_seconds, 1, "2" METRIC_LABEL_SEP "thermal_or_power");
	finish(&r);
	xeon_uncore_override(NULL);
	return got;
}

static void assert_missed(double got, double truth, const char *what)
{
	if (fabs(got - truth) < 1.0)
		fail_msg("%s: exported %.3f s, as the ground truth %.3f s; the simulator agreed with "
			 "a wrong production table", what, got, truth);
}

/*
 * The simulator keeps its own event codes and box addresses (sim_facts.c)
 * and cannot include the production table (xeon_uncore.c): a copy of the
 * table with one deliberately wrong fact makes the exported seconds miss
 * the simulator's ground truth, which the right table meets.  On
 * Skylake-SP: vr-prochot holds socket 0's external PROCHOT 3 periods of
 * 6 s in 90 s; dimm-hot-channel throttles socket 1 channel 2 2 periods of
 * 22 s in 120 s.
 */
static void a_wrong_fact_in_the_production_table_makes_the_counts_wrong(void **state)
{
	const struct xeon_uncore *right = xeon_uncore_find(6, 0x55);
	struct xeon_imc_event imc[8];
	struct xeon_pcu_msr box;
	struct xeon_uncore wrong;

	(void)state;
	assert_non_null(right);
	assert_true(right->n_imc_events <= sizeof(imc) / sizeof(imc[0]));
	assert_close(prochot_external_with(right, true), 18.0, "right table, perf", 0);
	assert_close(prochot_external_with(right, false), 18.0, "right table, msr", 0);
	assert_close(dram_channel_with(right), 44.0, "right table, channel 2", 1);

	/* UNC_P_PROCHOT_EXTERNAL_CYCLES is 0x0A, not 0x0B. */
	wrong = *right;
	wrong.pcu_code[XEON_PCU_PROCHOT_EXTERNAL] = 0x0b;
	assert_missed(prochot_external_with(&wrong, true), 18.0, "PCU event 0x0b, perf");
	assert_missed(prochot_external_with(&wrong, false), 18.0, "PCU event 0x0b, msr");

	/* Skylake-SP's PCU box is at 0x710: its select registers are not at 0x721. */
	wrong = *right;
	box = *right->pcu_msr;
	box.ctl0 = 0x721;
	wrong.pcu_msr = &box;
	assert_missed(prochot_external_with(&wrong, false), 18.0, "PCU CTL0 at 0x721");

	/* UNC_M_POWER_THROTTLE_CYCLES is event 0x41; 0x42 is POWER_PCU_THROTTLING. */
	wrong = *right;
	memcpy(imc, right->imc_events, right->n_imc_events * sizeof(imc[0]));
	imc[0].code = 0x42;
	wrong.imc_events = imc;
	assert_missed(dram_channel_with(&wrong), 44.0, "iMC event 0x42");
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(hot_dimms_on_one_channel),
		cmocka_unit_test(external_prochot_without_dram_heat),
		cmocka_unit_test(power_capped_socket),
		cmocka_unit_test(hot_cores_limit_frequency_thermally),
		cmocka_unit_test(pcu_through_msrs),
		cmocka_unit_test(pcu_counter_held_by_another_agent),
		cmocka_unit_test(pcu_msr_box_follows_its_die_when_a_cpu_goes_offline),
		cmocka_unit_test(granite_rapids_pcu_instances),
		cmocka_unit_test(a_wrong_fact_in_the_production_table_makes_the_counts_wrong),
	};
	size_t n = helpers_shard_tests(tests, sizeof(tests) / sizeof(tests[0]));

	return _cmocka_run_group_tests("throttle_sim", tests, n, NULL, NULL);
}
