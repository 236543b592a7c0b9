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
#include "xeon_uncore.h"

#define STEP_S 1.0
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

struct run {
	struct sim *sim;
	struct hw hw;
	char root[256];
	struct cpu_info info;
	struct cpu_topology topo;
	struct conf conf;
	struct sampler *sampler;
	struct snapshot *snap;
	struct regs *before;
	int n_dies;                /* dies per package: die labels when more than 1 */
	bool pcu_down;             /* the PCU collector is expected down: no PROCHOT family */
};

/* Run spec; with_perf false: the machine offers no perf, and the PCU is counted through MSRs. */
static void start_with(struct run *r, const char *spec, bool with_perf)
{
	char dir[4096], err[512];
	struct conf_errors errs = { 0 };

	memset(r, 0, sizeof(*r));
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	r->sim = sim_open(spec, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!r->sim)
		fail_msg("sim_open %s: %s", spec, err);
	sim_bind(r->sim, &r->hw);
	helpers_mkdtemp(r->root, sizeof(r->root));
	assert_int_equal(sim_write_sysfs(r->sim, r->root, err, sizeof(err)), 0);
	if (with_perf) {
		struct perf_sys *ps = calloc(1, sizeof(*ps));

		assert_non_null(ps);
		assert_int_equal(sim_perf_sys(r->sim, r->root, ps), 0);
		hw_set_perf(&r->hw, ps);
	}
	r->n_dies = strstr(spec, "cascade-lake-ap") ? 2 : 1;
	assert_int_equal(cpu_detect(&r->hw, &r->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&r->hw, &r->topo, err, sizeof(err)), 0);
	/*
	 * The shipped defaults, with the core collector through MSRs, so that
	 * every register the run touches is uncored's to put back byte for
	 * byte; through perf the kernel owns the core PMU and leaves a select
	 * it used with EN clear.
	 */
	if (conf_load_string("throttle.conf", "[core]\nengine = msr\n", &r->conf, &errs) != 0)
		fail_msg("[core] engine = msr does not load");
	r->before = calloc(1, sizeof(*r->before));
	assert_non_null(r->before);
	sim_dump(r->sim, collect, r->before);
	if (sampler_new(&r->conf, &r->hw, &r->info, &r->topo, &r->sampler, err, sizeof(err)) != 0)
		fail_msg("%s: sampler_new: %s", spec, err);
}

static void start(struct run *r, const char *spec)
{
	start_with(r, spec, true);
}

static void run_for(struct run *r, double seconds)
{
	for (double t = 0; t < seconds; t += STEP_S) {
		sim_advance(r->sim, STEP_S);
		snapshot_release(r->snap);
		r->snap = sampler_sample(r->sampler);
		assert_non_null(r->snap);
	}
}

/* promtool check metrics on the text, where promtool is installed. */
static void promtool_clean(const struct strbuf *text)
{
	char path[512], cmd[1024];
	FILE *f;

	if (system("command -v promtool >/dev/null 2>&1") != 0)
		return;
	snprintf(path, sizeof(path), "/tmp/uncored-throttle-%d.prom", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text->buf, 1, text->len, f), text->len);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s >/dev/null 2>&1", path);
	if (system(cmd) != 0)
		fail_msg("promtool check metrics fails on %s", path);
	unlink(path);
}

static void finish(struct run *r)
{
	struct regs *after = calloc(1, sizeof(*after));
	struct strbuf out;

	assert_non_null(after);
	strbuf_init(&out);
	assert_int_equal(prom_write(r->snap, &out), 0);
	/* The one family name is written once. */
	if (!r->pcu_down)
		assert_non_null(strstr(out.buf, "# TYPE uncored_prochot_seconds_total counter"));
	promtool_clean(&out);
	strbuf_free(&out);
	snapshot_release(r->snap);
	sampler_free(r->sampler);
	snapshot_clear();
	assert_int_equal(sim_perf_open_events(r->sim), 0);
	sim_dump(r->sim, collect, after);
	assert_int_equal(after->n, r->before->n);
	for (size_t i = 0; i < after->n; i++) {
		assert_int_equal(after->r[i].msr, r->before->r[i].msr);
		if (!is_counter(after->r[i].msr) && after->r[i].value != r->before->r[i].value)
			fail_msg("cpu %d msr 0x%x: 0x%llx after the run, 0x%llx before",
				 after->r[i].cpu, after->r[i].msr,
				 (unsigned long long)after->r[i].value,
				 (unsigned long long)r->before->r[i].value);
	}
	free(after);
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
static double exported_die(const struct run *r, const struct metric_family *f, int socket,
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
static double exported(const struct run *r, const struct metric_family *f, int socket,
		       const char *label)
{
	return exported_die(r, f, socket, 0, label);
}

/* Ground truth seconds of a PCU event of a die of socket. */
static double pcu_truth_die(struct run *r, int socket, int die, enum xeon_pcu_event which)
{
	const struct xeon_uncore *xu = xeon_uncore_find(r->info.family, r->info.model);
	uint64_t n = 0;

	assert_int_equal(sim_box_ground_truth(r->sim, false, socket, die, 0,
					      (uint64_t)xu->pcu_code[which], &n), 0);
	return (double)n / (double)sim_box_clock_hz(false);
}

static double pcu_truth(struct run *r, int socket, enum xeon_pcu_event which)
{
	return pcu_truth_die(r, socket, 0, which);
}

/* Ground truth seconds of the iMC event config of a die's channel. */
static double imc_truth(struct run *r, int socket, int die, int channel, uint64_t config)
{
	uint64_t n = 0;

	assert_int_equal(sim_box_ground_truth(r->sim, true, socket, die, channel, config, &n), 0);
	return (double)n / (double)sim_box_clock_hz(true);
}

static void assert_close(double got, double want, const char *what, int socket)
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
static void check_pcu(struct run *r)
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
static void check_channel(struct run *r, const struct xeon_uncore *xu, int sk, int d, int ch)
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
static void check_imc(struct run *r, int n_channels)
{
	const struct xeon_uncore *xu = xeon_uncore_find(r->info.family, r->info.model);

	for (int sk = 0; sk < r->topo.n_sockets; sk++)
		for (int d = 0; d < r->n_dies; d++)
			for (int ch = 0; ch < n_channels; ch++)
				check_channel(r, xu, sk, d, ch);
}

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
	char path[4096], spec[4200];
	struct run r;

	(void)state;
	helpers_source_path("tests/data/scenarios/pcu-taken.ini", path, sizeof(path));
	snprintf(spec, sizeof(spec), "skylake-sp-2s:%s", path);
	start_with(&r, spec, false);
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
	char path[4096], spec[4200];
	struct run r;

	(void)state;
	start(&r, "granite-rapids-2s:vr-prochot");
	run_for(&r, 60);
	check_pcu(&r);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 12.0, "external", 0);
	assert_close(exported(&r, &throttle_prochot_seconds, 1, "external"), 0.0, "external", 1);
	finish(&r);

	helpers_source_path("tests/data/scenarios/prochot-discovery.ini", path, sizeof(path));
	snprintf(spec, sizeof(spec), "granite-rapids-2s:%s", path);
	start(&r, spec);
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

/* Whether the collector's status reason holds text (NULL reason: no). */
static bool reason_has(const struct run *r, const char *collector, const char *text)
{
	const struct snapshot_collector *c = snapshot_find_collector(r->snap, collector);

	assert_non_null(c);
	return c->reason && strstr(c->reason, text);
}

/*
 * A Skylake-SP socket asleep half of every second (package C3/C6: the iMC has
 * no clock, tests/data/scenarios/package-sleep.ini) and throttled whenever
 * awake: about 0.5 s of DRAM throttling per second, as the ground truth, not
 * 1.0 (throttle cycles over the interval's DCLK count times the interval);
 * a channel that sleeps keeps its series.
 */
static void a_sleeping_package_throttles_only_while_awake(void **state)
{
	char path[4096], spec[4200];
	const char *label = "0" METRIC_LABEL_SEP "thermal_or_power";
	struct run r;
	double before;

	(void)state;
	helpers_source_path("tests/data/scenarios/package-sleep.ini", path, sizeof(path));
	snprintf(spec, sizeof(spec), "skylake-sp-2s:%s", path);
	start(&r, spec);
	run_for(&r, 3);
	before = exported(&r, &throttle_dram_channel_seconds, 0, label);
	assert_close(before, 3.0, "awake channel 0", 0);
	run_for(&r, 10);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 0, label) - before, 5.0,
		     "asleep half the time, channel 0", 0);
	check_imc(&r, 6);
	/* Asleep whole intervals: the channels keep their series and are not left out. */
	before = exported(&r, &throttle_dram_channel_seconds, 0, label);
	run_for(&r, 5);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 0, label), before,
		     "asleep, channel 0", 0);
	assert_false(reason_has(&r, "imc", "left out"));
	check_imc(&r, 6);
	finish(&r);
}

/*
 * A 6.12 kernel registers 12 channels on Ice Lake-SP, and the third of each
 * controller has no memory behind it: its clock never advances, so it is
 * left out, said in the status, and the collector is up on the others.
 */
static void channels_without_a_clock_are_left_out(void **state)
{
	const struct snapshot_collector *c;
	struct run r;

	(void)state;
	start(&r, "icelake-sp-2s:idle");
	run_for(&r, 3);
	assert_true(reason_has(&r, "imc", "socket 1: memory channel 2, 5, 8, 11 left out"));
	c = snapshot_find_collector(r.snap, "imc");
	assert_string_equal(snapshot_collector_state(c), "up");
	check_imc(&r, 12);
	finish(&r);
}

/*
 * Another agent freezes socket 0's PCU box (BOX_CTL.FRZ, tests/data/scenarios/
 * pcu-frozen.ini) from 10 s to 20 s: through MSRs the collector says the box
 * is waiting and counts it as not counting while it is frozen, instead of
 * adding 0 s with the collector up, and takes up again once it thaws.
 */
static void a_frozen_pcu_box_reads_as_waiting(void **state)
{
	char path[4096], spec[4200];
	struct run r;

	(void)state;
	helpers_source_path("tests/data/scenarios/pcu-frozen.ini", path, sizeof(path));
	snprintf(spec, sizeof(spec), "skylake-sp-2s:%s", path);
	start_with(&r, spec, false);
	run_for(&r, 9);
	assert_false(reason_has(&r, "pcu", "frozen"));
	run_for(&r, 5);
	assert_true(reason_has(&r, "pcu", "waiting: the box is frozen"));
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.snap, "pcu")),
			    "partial");
	run_for(&r, 10);
	assert_false(reason_has(&r, "pcu", "frozen"));
	/* 30 s of PROCHOT less the 10 frozen. */
	run_for(&r, 6);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 20.0, "external", 0);
	finish(&r);
}

/* A number from a file of the simulated PMU tree: the first, or the one after the comma. */
static int sysfs_number(const struct run *r, const char *file, bool second)
{
	char path[512], buf[64] = "";
	const char *at;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/%s", r->root, file);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	at = second ? strchr(buf, ',') : buf;
	assert_non_null(at);
	return atoi(second ? at + 1 : at);
}

/*
 * Another perf user (perf stat, PCM) opens a group of 4 events on socket 1's
 * memory channel 2, the channel's 4 counters: the kernel takes turns with
 * uncored's group there.  uncored exports that channel's multiplexing ratio
 * (about 0.5; 1 on the others) and its DRAM seconds stay right, scaled.
 */
static void a_shared_channel_exports_its_multiplexing_ratio(void **state)
{
	static const uint64_t config[4] = { 0x0000, 0xff41, 0x0086, 0x0000 };
	char path[4096], spec[4200];
	const struct metric_sample *v;
	int fd[4], cpu, type;
	struct run r;

	(void)state;
	helpers_source_path("tests/data/scenarios/throttle-steady.ini", path, sizeof(path));
	snprintf(spec, sizeof(spec), "skylake-sp-2s:%s", path);
	start(&r, spec);
	type = sysfs_number(&r, "uncore_imc_2/type", false);
	cpu = sysfs_number(&r, "uncore_imc_2/cpumask", true);
	for (int i = 0; i < 4; i++) {
		struct perf_event_attr attr = {
			.type = (uint32_t)type, .size = sizeof(attr), .config = config[i],
			.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING,
		};

		fd[i] = perf_sys_open(r.hw.perf, &attr, cpu, i ? fd[0] : -1);
		assert_true(fd[i] >= 0);
	}
	run_for(&r, 20);
	v = snapshot_find_sample(r.snap, &collector_pmu_multiplexing, 1,
				 "imc" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP METRIC_LABEL_SEP "2");
	assert_non_null(v);
	if (v->value.d < 0.3 || v->value.d > 0.7)
		fail_msg("socket 1 channel 2 multiplexing ratio %.3f, expected about 0.5",
			 v->value.d);
	v = snapshot_find_sample(r.snap, &collector_pmu_multiplexing, 1,
				 "imc" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP METRIC_LABEL_SEP "1");
	assert_non_null(v);
	assert_true(v->value.d == 1.0);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 1,
			      "2" METRIC_LABEL_SEP "thermal_or_power"), 20.0, "channel 2", 1);
	for (int i = 3; i >= 0; i--)
		assert_int_equal(perf_sys_close(r.hw.perf, fd[i]), 0);
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
		cmocka_unit_test(a_sleeping_package_throttles_only_while_awake),
		cmocka_unit_test(channels_without_a_clock_are_left_out),
		cmocka_unit_test(a_frozen_pcu_box_reads_as_waiting),
		cmocka_unit_test(a_shared_channel_exports_its_multiplexing_ratio),
		cmocka_unit_test(a_wrong_fact_in_the_production_table_makes_the_counts_wrong),
	};
	size_t n = helpers_shard_tests(tests, sizeof(tests) / sizeof(tests[0]));

	return _cmocka_run_group_tests("throttle_sim", tests, n, NULL, NULL);
}
