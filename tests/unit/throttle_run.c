/*
 * The harness of the tests that run the server-uncore collectors on the
 * simulated models through whole scenarios (test_throttle_sim.c,
 * test_uncore_health_sim.c): see throttle_run.h.
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
#include "cpu.h"
#include "helpers.h"
#include "metric.h"
#include "perf_sys.h"
#include "prom.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"
#include "throttle_families.h"
#include "throttle_run.h"
#include "xeon_uncore.h"

#define MAX_REGS 65536

struct reg {
	int cpu;
	uint32_t msr;
	uint64_t value;
};

struct regs {
	size_t n;
	struct reg r[MAX_REGS];
};

static void collect(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	struct regs *rs = arg;

	if (rs->n < MAX_REGS)
		rs->r[rs->n++] = (struct reg){ cpu, msr, value };
}

/* A counter's value moves with time; a control register must come back byte for byte. */
static bool is_counter(uint32_t msr)
{
	return (msr >= 0xc1 && msr < 0xc9) || (msr >= 0x309 && msr < 0x30c) ||
	       (msr >= 0x717 && msr < 0x71b) || (msr >= 0xc36 && msr < 0xc3a) || msr == 0x19c || msr == 0x1b1 || msr == 0x613 ||
	       msr == 0x61b;
}

/*
 * A PCU select the kernel's perf left stale: its config without EN
 * (hardware-linux.md §1.4, snbep_uncore_msr_disable_event).  The kernel's,
 * not uncored's, and what a real host shows after perf.
 */
static bool kernel_left_pcu_select(uint32_t msr, uint64_t value)
{
	bool select = (msr >= 0x711 && msr < 0x715) || (msr >= 0xc30 && msr < 0xc34);

	return select && !(value & (UINT64_C(1) << 22));
}

/* start_conf, with edit_tree (NULL: none) called on the kernel's files before the collectors start. */
static void start_full(struct run *r, const char *spec, bool with_perf, const char *conf_text,
		       void (*edit_tree)(const char *root))
{
	char dir[4096], err[512];
	struct conf_errors errs = { 0 };

	memset(r, 0, sizeof(*r));
	r->with_perf = with_perf;
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	r->sim = sim_open(spec, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!r->sim)
		fail_msg("sim_open %s: %s", spec, err);
	sim_bind(r->sim, &r->hw);
	helpers_mkdtemp(r->root, sizeof(r->root));
	assert_int_equal(sim_write_sysfs(r->sim, r->root, err, sizeof(err)), 0);
	if (edit_tree)
		edit_tree(r->root);
	if (with_perf) {
		struct perf_sys *ps = calloc(1, sizeof(*ps));

		assert_non_null(ps);
		assert_int_equal(sim_perf_sys(r->sim, r->root, ps), 0);
		hw_set_perf(&r->hw, ps);
	}
	r->n_dies = strstr(spec, "cascade-lake-ap") ? 2 : 1;
	assert_int_equal(cpu_detect(&r->hw, &r->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&r->hw, &r->topo, err, sizeof(err)), 0);
	if (conf_load_string("throttle.conf", conf_text, &r->conf, &errs) != 0)
		fail_msg("%s does not load", conf_text);
	r->before = calloc(1, sizeof(*r->before));
	assert_non_null(r->before);
	sim_dump(r->sim, collect, r->before);
	if (sampler_new(&r->conf, &r->hw, &r->info, &r->topo, &r->sampler, err, sizeof(err)) != 0)
		fail_msg("%s: sampler_new: %s", spec, err);
}

void start_conf(struct run *r, const char *spec, bool with_perf, const char *conf_text)
{
	start_full(r, spec, with_perf, conf_text, NULL);
}

void start_edited(struct run *r, const char *spec, void (*edit_tree)(const char *root))
{
	start_full(r, spec, true, "[core]\nengine = msr\n", edit_tree);
}

void start_with(struct run *r, const char *spec, bool with_perf)
{
	/*
	 * The shipped defaults, with the core collector through MSRs, so that
	 * every register the run touches is uncored's to put back byte for
	 * byte; through perf the kernel owns the core PMU and leaves a select
	 * it used with EN clear.
	 */
	start_conf(r, spec, with_perf, "[core]\nengine = msr\n");
}

void start_data_scenario(struct run *r, const char *model, const char *file, bool with_perf)
{
	char rel[256], path[4096], spec[4400];

	snprintf(rel, sizeof(rel), "tests/data/scenarios/%s", file);
	helpers_source_path(rel, path, sizeof(path));
	snprintf(spec, sizeof(spec), "%s:%s", model, path);
	start_with(r, spec, with_perf);
}

void start(struct run *r, const char *spec)
{
	start_with(r, spec, true);
}

void run_for(struct run *r, double seconds)
{
	for (double t = 0; t < seconds; t += STEP_S) {
		sim_advance(r->sim, STEP_S);
		snapshot_release(r->snap);
		r->snap = sampler_sample(r->sampler);
		assert_non_null(r->snap);
	}
}

void finish(struct run *r)
{
	struct regs *after = calloc(1, sizeof(*after));
	struct strbuf out;

	assert_non_null(after);
	strbuf_init(&out);
	assert_int_equal(prom_write(r->snap, &out), 0);
	/* The one family name is written once. */
	if (!r->pcu_down)
		assert_non_null(strstr(out.buf, "# TYPE uncored_prochot_seconds_total counter"));
	helpers_promtool_clean(out.buf, out.len, "throttle run");
	strbuf_free(&out);
	stop_sampler(r);
	sim_dump(r->sim, collect, after);
	assert_int_equal(after->n, r->before->n);
	for (size_t i = 0; i < after->n; i++) {
		assert_int_equal(after->r[i].msr, r->before->r[i].msr);
		if (r->with_perf && kernel_left_pcu_select(after->r[i].msr, after->r[i].value))
			continue;
		if (!is_counter(after->r[i].msr) && after->r[i].value != r->before->r[i].value)
			fail_msg("cpu %d msr 0x%x: 0x%llx after the run, 0x%llx before",
				 after->r[i].cpu, after->r[i].msr,
				 (unsigned long long)after->r[i].value,
				 (unsigned long long)r->before->r[i].value);
	}
	free(after);
	close_machine(r);
}

void stop_sampler(struct run *r)
{
	snapshot_release(r->snap);
	r->snap = NULL;
	sampler_free(r->sampler);
	r->sampler = NULL;
	snapshot_clear();
	assert_int_equal(sim_perf_open_events(r->sim), 0);
}

void close_machine(struct run *r)
{
	free(r->before);
	cpu_topology_free(&r->topo);
	hw_close(&r->hw);
	helpers_rmtree(r->root);
}

/* The family of the same name with a die label first, on packages of several dies. */
static const struct metric_family *die_family(const struct run *r, const struct metric_family *f)
{
	if (r->n_dies <= 1)
		return f;
	if (f == &throttle_prochot_seconds)
		return &throttle_prochot_die_seconds;
	if (f == &throttle_frequency_limited_seconds)
		return &throttle_frequency_limited_die_seconds;
	if (f == &throttle_dram_channel_seconds)
		return &throttle_dram_die_channel_seconds;
	if (f == &throttle_dram_critical_seconds)
		return &throttle_dram_die_critical_seconds;
	return f;
}

/* The seconds the collector exported for die die, or -1 when absent. */
double exported_die(const struct run *r, const struct metric_family *f, int socket,
			   int die, const char *label)
{
	const struct metric_sample *v;
	char buf[96];

	if (r->n_dies > 1) {
		snprintf(buf, sizeof(buf), "%d" METRIC_LABEL_SEP "%s", die, label);
		label = buf;
	}
	v = snapshot_find_sample(r->snap, die_family(r, f), socket, label);
	return v ? v->value.d : -1.0;
}

/* The seconds the collector exported (die 0), or -1 when absent. */
double exported(const struct run *r, const struct metric_family *f, int socket,
		       const char *label)
{
	return exported_die(r, f, socket, 0, label);
}

/* Ground truth seconds of a PCU event of a die of socket. */
double pcu_truth_die(struct run *r, int socket, int die, enum xeon_pcu_event which)
{
	const struct xeon_uncore *xu = xeon_uncore_find(r->info.family, r->info.model);
	uint64_t n = 0;

	assert_int_equal(sim_box_ground_truth(r->sim, false, socket, die, 0,
					      (uint64_t)xu->pcu_code[which], &n), 0);
	return (double)n / (double)sim_box_clock_hz(false);
}

double pcu_truth(struct run *r, int socket, enum xeon_pcu_event which)
{
	return pcu_truth_die(r, socket, 0, which);
}

/* Ground truth seconds of the iMC event config of a die's channel. */
double imc_truth(struct run *r, int socket, int die, int channel, uint64_t config)
{
	uint64_t n = 0;

	assert_int_equal(sim_box_ground_truth(r->sim, true, socket, die, channel, config, &n), 0);
	return (double)n / (double)sim_box_clock_hz(true);
}

void assert_close(double got, double want, const char *what, int socket)
{
	if (want == 0.0 ? got != 0.0 : fabs(got - want) > 0.01 * want)
		fail_msg("socket %d %s: exported %.6f s, ground truth %.6f s", socket, what, got,
			 want);
}

/*
 * Every PCU seconds series of every socket against the ground truth; through
 * MSRs (no perf) the power limit is not counted (the box's 4 counters hold
 * the other events) and is absent.
 */
void check_pcu(struct run *r)
{
	static const struct {
		enum xeon_pcu_event which;
		const struct metric_family *f;
		const char *label;
	} series[] = {
		{ XEON_PCU_PROCHOT_EXTERNAL, &throttle_prochot_seconds, "external" },
		{ XEON_PCU_PROCHOT_INTERNAL, &throttle_prochot_seconds, "internal" },
		{ XEON_PCU_FREQ_THERMAL, &throttle_frequency_limited_seconds, "thermal" },
		{ XEON_PCU_FREQ_POWER, &throttle_frequency_limited_seconds, "power" },
	};

	for (int sk = 0; sk < r->topo.n_sockets; sk++)
		for (int d = 0; d < r->n_dies; d++)
			for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++) {
				double got = exported_die(r, series[i].f, sk, d, series[i].label);

				if (!r->hw.perf && series[i].which == XEON_PCU_FREQ_POWER)
					assert_true(got == -1.0);
				else
					assert_close(got, pcu_truth_die(r, sk, d, series[i].which),
						     series[i].label, sk);
			}
}

/*
 * One channel's DRAM seconds, event by event of the generation, against the
 * ground truth; a channel whose clock never ran (Ice Lake-SP's channels
 * without memory) has none at all, not zeros.
 */
void check_channel(struct run *r, const struct xeon_uncore *xu, int sk, int d, int ch)
{
	bool clockless = imc_truth(r, sk, d, ch, xu->imc_clock_code |
				   (uint64_t)xu->imc_clock_umask << 8) == 0.0;
	char label[64], what[96];

	for (size_t i = 0; i < xu->n_imc_events; i++) {
		const struct xeon_imc_event *e = &xu->imc_events[i];

		const struct metric_family *f = e->critical ?
			(e->per_slot ? &throttle_dram_slot_critical_seconds :
				       &throttle_dram_critical_seconds) :
			(e->per_slot ? (xu->imc_events[0].per_slot ? &throttle_dram_slot_seconds :
					&throttle_dram_bw_slot_seconds) :
				       &throttle_dram_channel_seconds);

		if (e->per_slot)
			snprintf(label, sizeof(label), "%d" METRIC_LABEL_SEP "%d" METRIC_LABEL_SEP "%s",
				 ch, e->slot, xeon_dram_cause_name(e->cause));
		else
			snprintf(label, sizeof(label), "%d" METRIC_LABEL_SEP "%s", ch,
				 xeon_dram_cause_name(e->cause));
		snprintf(what, sizeof(what), "die %d channel %d %s", d, ch, e->name);
		if (clockless) {
			if (exported_die(r, f, sk, d, label) != -1.0)
				fail_msg("socket %d %s: exported, but its clock never ran", sk, what);
			continue;
		}
		assert_close(exported_die(r, f, sk, d, label),
			     imc_truth(r, sk, d, ch, e->code | (uint64_t)e->umask << 8), what, sk);
	}
}

/* Every channel's DRAM seconds against the ground truth. */
void check_imc(struct run *r, int n_channels)
{
	const struct xeon_uncore *xu = xeon_uncore_find(r->info.family, r->info.model);

	for (int sk = 0; sk < r->topo.n_sockets; sk++)
		for (int d = 0; d < r->n_dies; d++)
			for (int ch = 0; ch < n_channels; ch++)
				check_channel(r, xu, sk, d, ch);
}

/* Whether the collector's status reason holds text (NULL reason: no). */
bool reason_has(const struct run *r, const char *collector, const char *text)
{
	const struct snapshot_collector *c = snapshot_find_collector(r->snap, collector);

	assert_non_null(c);
	return c->reason && strstr(c->reason, text);
}
