/*
 * The core collector on the simulated AMD EPYC models through perf
 * (hardware-amd.md §3): what /metrics exports per CPU against the
 * simulator's ground truth, while the NMI watchdog's counter leaves 5 GP
 * counters for 6 or 7 events and the kernel multiplexes them; ref-cycles
 * absent on Zen 2/3 and counted from Zen 4 on; the msr engine not
 * applicable; promtool takes the text.  Stepped clock.
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

#include "conf.h"
#include "cpu.h"
#include "helpers.h"
#include "perf_sys.h"
#include "prom.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"

struct run {
	struct sim *sim;
	struct hw hw;
	char root[256];
	struct cpu_info info;
	struct cpu_topology topo;
	struct conf conf;
	struct sampler *sampler;
	struct snapshot *snap;
	struct strbuf prom;
};

/* Run model with the configuration text conf for seconds, one sample a second. */
static void run(struct run *r, const char *model, const char *conf, int seconds)
{
	char dir[4096], err[512];
	struct conf_errors errs = { 0 };
	struct perf_sys *ps = calloc(1, sizeof(*ps));

	memset(r, 0, sizeof(*r));
	assert_non_null(ps);
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	r->sim = sim_open(model, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!r->sim)
		fail_msg("sim_open %s: %s", model, err);
	sim_bind(r->sim, &r->hw);
	helpers_mkdtemp(r->root, sizeof(r->root));
	assert_int_equal(sim_write_sysfs(r->sim, r->root, err, sizeof(err)), 0);
	assert_int_equal(sim_perf_sys(r->sim, r->root, ps), 0);
	hw_set_perf(&r->hw, ps);
	assert_int_equal(cpu_detect(&r->hw, &r->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&r->hw, &r->topo, err, sizeof(err)), 0);
	if (conf_load_string("core.conf", conf, &r->conf, &errs) != 0)
		fail_msg("%s does not load", conf);
	if (sampler_new(&r->conf, &r->hw, &r->info, &r->topo, &r->sampler, err, sizeof(err)) != 0)
		fail_msg("%s: sampler_new: %s", model, err);
	for (int t = 0; t < seconds; t++) {
		sim_advance(r->sim, 1.0);
		snapshot_release(r->snap);
		r->snap = sampler_sample(r->sampler);
		assert_non_null(r->snap);
	}
	strbuf_init(&r->prom);
	assert_int_equal(prom_write(r->snap, &r->prom), 0);
}

static void finish(struct run *r)
{
	strbuf_free(&r->prom);
	snapshot_release(r->snap);
	sampler_free(r->sampler);
	snapshot_clear();
	assert_int_equal(sim_perf_open_events(r->sim), 0);
	cpu_topology_free(&r->topo);
	hw_close(&r->hw);
	helpers_rmtree(r->root);
}

/* The value of family{...cpu="cpu"[,event="event"]} in the /metrics text; -1 when absent. */
static double exported(const struct run *r, const char *family, int cpu, const char *event)
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

static uint64_t truth(struct run *r, int cpu, uint16_t code, uint8_t umask)
{
	uint64_t n = 0;

	assert_int_equal(sim_ground_truth(r->sim, false, cpu, code, umask, false, &n), 0);
	return n;
}

/* Within 1 % of the truth (multiplexing scales by enabled over running). */
static void assert_near(double got, uint64_t want, const char *what, int cpu)
{
	if (want == 0 || got < 0.99 * (double)want || got > 1.01 * (double)want)
		fail_msg("cpu %d %s: exported %.0f, ground truth %" PRIu64, cpu, what, got, want);
}

/* Every always-counted event and default event of cpu against the truth. */
static void check_cpu(struct run *r, int cpu, bool ref_cycles)
{
	static const struct {
		const char *event;
		uint16_t code;
		uint8_t umask;
	} events[] = {
		{ "l2_cache_requests", 0x60, 0xff }, { "l2_cache_misses", 0x64, 0x09 },
		{ "branch_instructions", 0xc2, 0x00 }, { "branch_misses", 0xc3, 0x00 },
	};

	assert_near(exported(r, "uncored_core_instructions_total", cpu, NULL),
		    truth(r, cpu, 0xc0, 0x00), "instructions", cpu);
	assert_near(exported(r, "uncored_core_cycles_total", cpu, NULL), truth(r, cpu, 0x76, 0x00),
		    "cycles", cpu);
	if (ref_cycles)
		assert_near(exported(r, "uncored_core_ref_cycles_total", cpu, NULL),
			    truth(r, cpu, 0x120, 0x01), "ref cycles", cpu);
	else
		assert_true(exported(r, "uncored_core_ref_cycles_total", cpu, NULL) < 0);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		assert_near(exported(r, "uncored_core_events_total", cpu, events[i].event),
			    truth(r, cpu, events[i].code, events[i].umask), events[i].event, cpu);
	/* 6 or 7 events on the 5 counters the watchdog leaves: multiplexed. */
	assert_true(exported(r, "uncored_core_multiplexing_ratio", cpu, NULL) < 1.0);
	assert_true(exported(r, "uncored_core_multiplexing_ratio", cpu, NULL) > 0.3);
}

static void counts_match_the_truth(const char *model, bool ref_cycles)
{
	const struct snapshot_collector *c;
	struct run r;

	run(&r, model, "", 10);
	c = snapshot_find_collector(r.snap, "core");
	assert_non_null(c);
	if (strcmp(snapshot_collector_state(c), "up") != 0)
		fail_msg("%s: core %s: %s", model, snapshot_collector_state(c), c->reason);
	assert_string_equal(c->engine, "perf");
	for (int cpu = 0; cpu < r.topo.n_cpus; cpu += 7)
		check_cpu(&r, cpu, ref_cycles);
	check_cpu(&r, r.topo.n_cpus - 1, ref_cycles);
	helpers_promtool_clean(r.prom.buf, r.prom.len, model);
	finish(&r);
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
	struct run r;

	(void)state;
	run(&r, "rome-2s", "[core]\ndefault_events = no\nevent = llc_misses\nevent = branch_misses\n"
	    "event = intel_cycles, event=0x3c, umask=0x00\n", 3);
	c = snapshot_find_collector(r.snap, "core");
	assert_string_equal(snapshot_collector_state(c), "up");
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.snap, "k10temp")),
			    "up");
	c = snapshot_find_collector(r.snap, "hsmp");
	assert_true(c->not_applicable);
	assert_non_null(strstr(c->reason, "no HSMP mailbox"));
	assert_near(exported(&r, "uncored_core_instructions_total", 3, NULL),
		    truth(&r, 3, 0xc0, 0x00), "instructions", 3);
	assert_near(exported(&r, "uncored_core_events_total", 3, "branch_misses"),
		    truth(&r, 3, 0xc3, 0x00), "branch_misses", 3);
	assert_true(exported(&r, "uncored_core_ref_cycles_total", 3, NULL) < 0);
	assert_true(exported(&r, "uncored_core_events_total", 3, "llc_misses") < 0);
	assert_true(exported(&r, "uncored_core_events_total", 3, "intel_cycles") == 0);
	assert_true(exported(&r, "uncored_core_multiplexing_ratio", 3, NULL) == 1.0);
	helpers_promtool_clean(r.prom.buf, r.prom.len, "rome-2s");
	finish(&r);
}

/* engine = msr: the msr engine programs Intel's core PMU only; not applicable, and why. */
static void msr_engine_is_not_applicable(void **state)
{
	const struct snapshot_collector *c;
	struct run r;

	(void)state;
	run(&r, "genoa-2s", "[core]\nengine = msr\n", 2);
	c = snapshot_find_collector(r.snap, "core");
	assert_true(c->not_applicable);
	assert_non_null(strstr(c->reason, "msr engine programs Intel's core PMU only"));
	assert_true(exported(&r, "uncored_core_instructions_total", 0, NULL) < 0);
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(milan_counts_without_ref_cycles),
		cmocka_unit_test(genoa_and_turin_count_ref_cycles),
		cmocka_unit_test(rome_and_the_other_vendors_events),
		cmocka_unit_test(msr_engine_is_not_applicable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
