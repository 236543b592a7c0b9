/*
 * The core collector on the simulated AMD EPYC models through perf
 * (hardware-amd.md §3): what /metrics exports per CPU against the
 * simulator's ground truth, while the NMI watchdog's counter leaves 5 GP
 * counters for 6 or 7 events and the kernel multiplexes them; ref-cycles
 * absent on Zen 2/3 and counted from Zen 4 on; the msr engine not
 * applicable; a CPU offline at start waited for; promtool takes the text.
 * Stepped clock.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "prom.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"
#include "throttle_run.h"

/* A run of throttle_run.h and its last /metrics text. */
struct amd_run {
	struct run m;
	struct strbuf prom;
};

/* Run model with the configuration text conf for seconds, one sample a second. */
static void run_amd(struct amd_run *r, const char *model, const char *conf, int seconds)
{
	start_conf(&r->m, model, true, conf);
	run_for(&r->m, seconds);
	strbuf_init(&r->prom);
	assert_int_equal(prom_write(r->m.snap, &r->prom), 0);
}

/* Every perf event closed, the machine gone; no register check: the kernel owns the core PMU. */
static void stop_amd(struct amd_run *r)
{
	strbuf_free(&r->prom);
	stop_sampler(&r->m);
	close_machine(&r->m);
}

/* The value of family{...cpu="cpu"[,event="event"]} in the /metrics text; -1 when absent. */
static double exported_cpu(const struct amd_run *r, const char *family, int cpu, const char *event)
{
	char key[160];
	const char *at = r->prom.buf;

	if (event)
		snprintf(key, sizeof(key), ",cpu=\"%d\",event=\"%s\"} ", cpu, event);
	else
		snprintf(key, sizeof(key), ",cpu=\"%d\"} ", cpu);
	while ((at = strstr(at, family))) {
		const char *eol = strchr(at, '\n'), *k;

		if (at == r->prom.buf || at[-1] == '\n') {
			k = strstr(at, key);
			if (k && (!eol || k < eol) && at[strlen(family)] == '{')
				return strtod(k + strlen(key), NULL);
		}
		at += strlen(family);
	}
	return -1;
}

static uint64_t truth(struct amd_run *r, int cpu, uint16_t code, uint8_t umask)
{
	uint64_t n = 0;

	assert_int_equal(sim_ground_truth(r->m.sim, false, cpu, code, umask, false, &n), 0);
	return n;
}

/* Within 1 % of the truth (multiplexing scales by enabled over running). */
static void assert_near(double got, uint64_t want, const char *what, int cpu)
{
	if (want == 0 || got < 0.99 * (double)want || got > 1.01 * (double)want)
		fail_msg("cpu %d %s: exported %.0f, ground truth %" PRIu64, cpu, what, got, want);
}

/* Every always-counted event and default event of cpu against the truth. */
static void check_cpu(struct amd_run *r, int cpu, bool ref_cycles)
{
	static const struct {
		const char *event;
		uint16_t code;
		uint8_t umask;
	} events[] = {
		{ "l2_cache_requests", 0x60, 0xff }, { "l2_cache_misses", 0x64, 0x09 },
		{ "branch_instructions", 0xc2, 0x00 }, { "branch_misses", 0xc3, 0x00 },
	};

	assert_near(exported_cpu(r, "uncored_core_instructions_total", cpu, NULL),
		    truth(r, cpu, 0xc0, 0x00), "instructions", cpu);
	assert_near(exported_cpu(r, "uncored_core_cycles_total", cpu, NULL), truth(r, cpu, 0x76, 0x00),
		    "cycles", cpu);
	if (ref_cycles)
		assert_near(exported_cpu(r, "uncored_core_ref_cycles_total", cpu, NULL),
			    truth(r, cpu, 0x120, 0x01), "ref cycles", cpu);
	else
		assert_true(exported_cpu(r, "uncored_core_ref_cycles_total", cpu, NULL) < 0);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		assert_near(exported_cpu(r, "uncored_core_events_total", cpu, events[i].event),
			    truth(r, cpu, events[i].code, events[i].umask), events[i].event, cpu);
	/* 6 or 7 events on the 5 counters the watchdog leaves: multiplexed. */
	assert_true(exported_cpu(r, "uncored_core_multiplexing_ratio", cpu, NULL) < 1.0);
	assert_true(exported_cpu(r, "uncored_core_multiplexing_ratio", cpu, NULL) > 0.3);
}

static void counts_match_the_truth(const char *model, bool ref_cycles)
{
	const struct snapshot_collector *c;
	struct amd_run r;

	run_amd(&r, model, "", 10);
	c = snapshot_find_collector(r.m.snap, "core");
	assert_non_null(c);
	if (strcmp(snapshot_collector_state(c), "up") != 0)
		fail_msg("%s: core %s: %s", model, snapshot_collector_state(c), c->reason);
	assert_string_equal(c->engine, "perf");
	for (int cpu = 0; cpu < r.m.topo.n_cpus; cpu += 7)
		check_cpu(&r, cpu, ref_cycles);
	check_cpu(&r, r.m.topo.n_cpus - 1, ref_cycles);
	helpers_promtool_clean(r.prom.buf, r.prom.len, model);
	stop_amd(&r);
}

/* Milan (Zen 3): 6 events on 5 counters; no ref-cycles series at all. */
static void milan_counts_without_ref_cycles(void **state)
{
	(void)state;
	counts_match_the_truth("milan-2s", false);
}

/* Genoa (Zen 4) and Turin (Zen 5): ref-cycles too, 7 events on 5 counters. */
static void genoa_and_turin_count_ref_cycles(void **state)
{
	(void)state;
	counts_match_the_truth("genoa-2s", true);
	counts_match_the_truth("turin-2s", true);
}

/*
 * Rome (Zen 2) counts through perf with k10temp, and HSMP says why not.
 * Configured events by name are the CPU's vendor's: branch_misses is
 * 0xC3 here, Intel's llc_misses is not counted on AMD, and a custom event
 * with Intel's cycles encoding counts nothing.  Four events and the
 * always-counted two fit the 5 free counters: no multiplexing.
 */
static void rome_and_the_other_vendors_events(void **state)
{
	const struct snapshot_collector *c;
	struct amd_run r;

	(void)state;
	run_amd(&r, "rome-2s", "[core]\ndefault_events = no\nevent = llc_misses\nevent = branch_misses\n"
	    "event = intel_cycles, event=0x3c, umask=0x00\n", 3);
	c = snapshot_find_collector(r.m.snap, "core");
	assert_string_equal(snapshot_collector_state(c), "up");
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.m.snap, "k10temp")),
			    "up");
	c = snapshot_find_collector(r.m.snap, "hsmp");
	assert_true(c->not_applicable);
	assert_non_null(strstr(c->reason, "no HSMP mailbox"));
	assert_near(exported_cpu(&r, "uncored_core_instructions_total", 3, NULL),
		    truth(&r, 3, 0xc0, 0x00), "instructions", 3);
	assert_near(exported_cpu(&r, "uncored_core_events_total", 3, "branch_misses"),
		    truth(&r, 3, 0xc3, 0x00), "branch_misses", 3);
	assert_true(exported_cpu(&r, "uncored_core_ref_cycles_total", 3, NULL) < 0);
	assert_true(exported_cpu(&r, "uncored_core_events_total", 3, "llc_misses") < 0);
	assert_true(exported_cpu(&r, "uncored_core_events_total", 3, "intel_cycles") == 0);
	assert_true(exported_cpu(&r, "uncored_core_multiplexing_ratio", 3, NULL) == 1.0);
	helpers_promtool_clean(r.prom.buf, r.prom.len, "rome-2s");
	stop_amd(&r);
}

/* engine = msr: the msr engine programs Intel's core PMU only; not applicable, and why. */
static void msr_engine_is_not_applicable(void **state)
{
	const struct snapshot_collector *c;
	struct amd_run r;

	(void)state;
	run_amd(&r, "genoa-2s", "[core]\nengine = msr\n", 2);
	c = snapshot_find_collector(r.m.snap, "core");
	assert_true(c->not_applicable);
	assert_non_null(strstr(c->reason, "msr engine programs Intel's core PMU only"));
	assert_true(exported_cpu(&r, "uncored_core_instructions_total", 0, NULL) < 0);
	stop_amd(&r);
}

/*
 * A CPU offline at start (tests/data/scenarios/cpu-offline-at-start.ini:
 * cpu 12, back 2 s later) is waited for, as on Intel: the collector is up
 * on the others from the first sample, and counts cpu 12 once it is back,
 * where the open of its events turned the collector off for the run.
 */
static void a_cpu_offline_at_start_is_waited_for(void **state)
{
	static const char *const models[] = { "genoa-2s", "rome-2s", "turin-2s" };
	char path[4096], spec[4400];

	(void)state;
	helpers_source_path("tests/data/scenarios/cpu-offline-at-start.ini", path, sizeof(path));
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		const struct snapshot_collector *c;
		struct amd_run r;
		double before, after;

		snprintf(spec, sizeof(spec), "%s:%s", models[m], path);
		run_amd(&r, spec, "", 1);
		c = snapshot_find_collector(r.m.snap, "core");
		if (strcmp(snapshot_collector_state(c), "up") != 0)
			fail_msg("%s: core %s: %s", models[m], snapshot_collector_state(c), c->reason);
		assert_true(exported_cpu(&r, "uncored_core_instructions_total", 12, NULL) <= 0);
		assert_near(exported_cpu(&r, "uncored_core_instructions_total", 11, NULL),
			    truth(&r, 11, 0xc0, 0x00), "instructions", 11);
		strbuf_free(&r.prom);
		run_for(&r.m, 3);
		strbuf_init(&r.prom);
		assert_int_equal(prom_write(r.m.snap, &r.prom), 0);
		before = exported_cpu(&r, "uncored_core_instructions_total", 12, NULL);
		strbuf_free(&r.prom);
		run_for(&r.m, 2);
		strbuf_init(&r.prom);
		assert_int_equal(prom_write(r.m.snap, &r.prom), 0);
		after = exported_cpu(&r, "uncored_core_instructions_total", 12, NULL);
		c = snapshot_find_collector(r.m.snap, "core");
		assert_string_equal(snapshot_collector_state(c), "up");
		assert_int_equal(c->units_counting, c->units);
		if (!(before > 0 && after > before))
			fail_msg("%s: cpu 12 back online counts %.0f, then %.0f", models[m], before,
				 after);
		/* Everything it ran after the first sample back: at most a second's worth short. */
		if (after > (double)truth(&r, 12, 0xc0, 0x00) * 1.01)
			fail_msg("%s: cpu 12 exported %.0f instructions, ground truth %" PRIu64,
				 models[m], after, truth(&r, 12, 0xc0, 0x00));
		stop_amd(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(milan_counts_without_ref_cycles),
		cmocka_unit_test(genoa_and_turin_count_ref_cycles),
		cmocka_unit_test(rome_and_the_other_vendors_events),
		cmocka_unit_test(msr_engine_is_not_applicable),
		cmocka_unit_test(a_cpu_offline_at_start_is_waited_for),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
