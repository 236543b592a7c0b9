/*
 * Cost of one sample, per collector and counter engine, on a simulated
 * machine ('big' by default: 2 sockets x 56 cores x 2 threads; a server
 * model such as sapphire-rapids-2s for the pcu and imc collectors, which
 * are off, not applicable, on 'big'), with the simulator's
 * kernel perf beside it as the daemon runs it: MSR reads per sample
 * against the fewest reads that give every value, system calls per sample
 * (each MSR access is one pread or pwrite, each perf call one system
 * call), cross-CPU reads per sample (each MSR read of a CPU's register
 * is one, counted as remote whatever CPU the sampler runs on; each perf
 * group read is one, the kernel reading all its members on that CPU at
 * once), and CPU time per sample.  The uncore, core and pcu collectors
 * are run on both engines (imc has perf only); "default" marks what the
 * shipped configuration uses.  On an AMD model (genoa-2s) the k10temp and
 * hsmp collectors run; hsmp's own 0.1 s tick runs on real time in a thread
 * of its own, which this loop, much shorter than a tick per sample, hardly
 * lets run: its row is the per-sample part, the daemon's figure has both.
 * Prints a table; it asserts nothing, so it never fails on a slow machine.
 *
 * With PACED, it then takes PACED samples as the daemon's sampler does:
 * every registered collector at once, in the shipped configuration, one
 * sample per interval (1 s) of real time on the simulator's real clock, and
 * prints the process's CPU time per sample (hsmp's tick thread included).
 * A loop of samples back to back finds every cache warm; once a second it
 * does not: this is what the collectors cost inside the daemon without the
 * daemon around them.  The same PACED samples back to back, all
 * collectors at once on the same clock, come first, so that the two
 * differ by the pause alone.  Each prints where its time went: each
 * collector that is up and the snapshot, on the sampling thread, and the
 * rest (the sleep, and collectors' threads).  On a model whose core PMU
 * multiplexes (genoa-2s), a pause also carries the simulated kernel's
 * rotations, one per CPU every 4 ms, played out by whichever thread next
 * asks the simulator: that is the simulator's cost, in the figure of the
 * daemon as in this one, where a real kernel would spend it.
 *
 * Usage: bench_sample [SAMPLES] [MODEL[:SCENARIO]] [PACED]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "col_core.h"
#include "collector.h"

/* Registered in collectors.c; named here to test them one by one. */
extern const struct collector_ops core_collector_ops;
extern const struct collector_ops hsmp_collector_ops;
extern const struct collector_ops imc_collector_ops;
extern const struct collector_ops k10temp_collector_ops;
extern const struct collector_ops pcu_collector_ops;
extern const struct collector_ops thermal_collector_ops;
extern const struct collector_ops uncore_collector_ops;
#include "conf.h"
#include "config.h"
#include "cpu.h"
#include "perf_sys.h"
#include "sim.h"
#include "snapshot.h"

/* The CPU time of the process, or with CLOCK_THREAD_CPUTIME_ID of this thread, in seconds. */
static double cpu_time_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This thread's CPU time since *t, in seconds; *t becomes now. */
static double lap(double *t)
{
	double now = cpu_time_s(CLOCK_THREAD_CPUTIME_ID), d = now - *t;

	*t = now;
	return d;
}

/* Reads the uncore collector needs per socket: each owned counter and its select, the fixed counter, its control and the global control. */
static uint64_t uncore_minimum(const struct snapshot *s)
{
	uint64_t n = 0;

	const struct metric_family *events = metric_family_find("uncore", "uncored_uncore_events_total");
	const struct metric_family *clock = metric_family_find("uncore",
								"uncored_uncore_clockticks_total");

	for (int i = 0; i < s->n_values; i++) {
		const struct metric_sample *v = &s->values[i];

		if (v->family == events)
			n += v->label_value ? 2 : 1;   /* the object: the global control */
		else if (v->family == clock)
			n += 2;
	}
	return n;
}

/* Reads the thermal collector needs: one status per physical core, one package status and two RAPL counters per socket where present. */
static uint64_t thermal_minimum(const struct snapshot *s)
{
	const struct metric_family *rapl = NULL;
	uint64_t n = 0;

	/* The RAPL counters come as one group of families; the first of it stands for both. */
	for (size_t k = 0; k < thermal_collector_ops.n_families && !rapl; k++)
		if (thermal_collector_ops.families[k]->json_group)
			rapl = thermal_collector_ops.families[k];

	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *so = &s->sockets[i];

		n += (uint64_t)so->n_cores;
		n += snapshot_find_signal(s, METRIC_SIGNAL_THROTTLING, METRIC_SCOPE_SOCKET,
					  so->socket) ? 1 : 0;
		n += rapl && snapshot_find_sample(s, rapl, so->socket, NULL) ? 2 : 0;
	}
	return n;
}

/* Reads the pcu collector needs through MSRs: one counter per event it exports. */
static uint64_t pcu_minimum(const struct snapshot *s)
{
	const struct metric_family *events = metric_family_find("pcu", "uncored_pcu_events_total");
	uint64_t n = 0;

	for (int i = 0; i < s->n_values; i++)
		if (s->values[i].family == events && s->values[i].label_value)
			n++;
	return n;
}

/* One row: a collector on an engine ("-" for one without engines). */
struct bench_row {
	const struct collector_ops *ops;
	const char *engine;
	bool is_default;
};

/* The configuration of a row: the defaults, and engine = its engine in its collector's section. */
static int row_conf(const struct bench_row *row, struct conf *conf)
{
	struct conf_errors errs;
	char text[128];

	if (strcmp(row->engine, "-") == 0)
		snprintf(text, sizeof(text), "[daemon]\n");
	else
		snprintf(text, sizeof(text), "[%s]\nengine = %s\n", row->ops->name, row->engine);
	return conf_load_string("bench.conf", text, conf, &errs);
}

/* The machine of spec on the clock given, in hw, info and topo.  0, or -1 after a message. */
static int open_machine(const char *spec, enum sim_clock clock, struct hw *hw,
			struct cpu_info *info, struct cpu_topology *topo, struct sim **ret_sim)
{
	char err[512];
	struct sim *sim = sim_open(spec, UNCORED_SCENARIO_DIR, clock, err, sizeof(err));

	if (!sim) {
		fprintf(stderr, "bench_sample: %s\n", err);
		return -1;
	}
	sim_bind(sim, hw);
	if (sim_attach_perf(sim, hw, err, sizeof(err)) < 0 ||
	    cpu_detect(hw, info, err, sizeof(err)) < 0 ||
	    cpu_topology_load(hw, topo, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sample: %s\n", err);
		return -1;
	}
	*ret_sim = sim;
	return 0;
}

/*
 * N samples of every collector at once, one per interval of real time
 * (see the top), or with pause false back to back: the same work with
 * every cache warm, which tells what the pause itself costs.
 */
static int paced(const char *spec, int n, bool pause)
{
	static struct collector cs[SNAPSHOT_MAX_COLLECTORS];
	size_t n_c = collector_registry_n < SNAPSHOT_MAX_COLLECTORS ? collector_registry_n
								    : SNAPSHOT_MAX_COLLECTORS;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
	struct conf conf;
	struct sim *sim;
	struct timespec nap;
	double t0, t, snap = 0, part[SNAPSHOT_MAX_COLLECTORS] = { 0 };

	if (open_machine(spec, SIM_CLOCK_REAL, &hw, &info, &topo, &sim) < 0)
		return 1;
	conf_defaults(&conf);
	for (size_t i = 0; i < n_c; i++)
		collector_start(&cs[i], collector_registry[i], &hw, &info, &topo, &conf);
	nap.tv_sec = (time_t)conf.interval_s;
	nap.tv_nsec = (long)((conf.interval_s - (double)nap.tv_sec) * 1e9);
	t0 = cpu_time_s(CLOCK_PROCESS_CPUTIME_ID);
	for (int k = 0; k < n; k++) {
		struct snapshot *s;

		if (pause)
			nanosleep(&nap, NULL);
		t = cpu_time_s(CLOCK_THREAD_CPUTIME_ID);
		s = snapshot_new(&topo, &info);
		snap += lap(&t);
		for (size_t i = 0; i < n_c && s; i++) {
			collector_sample(&cs[i], s);
			part[i] += lap(&t);
		}
		snapshot_release(s);
		snap += lap(&t);
	}
	t0 = cpu_time_s(CLOCK_PROCESS_CPUTIME_ID) - t0;
	if (pause)
		printf("paced: every collector at once, one sample per %.3g s of real time, %d samples: "
		       "%.1f us CPU per sample\n", conf.interval_s, n, t0 / n * 1e6);
	else
		printf("\nback to back: every collector at once, %d samples: %.1f us CPU per sample\n",
		       n, t0 / n * 1e6);
	/*
	 * Where it went, in this thread: each collector that is up, and the
	 * snapshot; the rest is the sleep itself and the threads of collectors
	 * (hsmp's tick).
	 */
	for (size_t i = 0; i < n_c; i++) {
		if (cs[i].up)
			printf("  %-26s %9.1f us\n", cs[i].ops->name, part[i] / n * 1e6);
		t0 -= part[i];
	}
	printf("  %-26s %9.1f us\n", "snapshot, new and freed", snap / n * 1e6);
	printf("  %-26s %9.1f us\n", "the rest (sleep, threads)", (t0 - snap) / n * 1e6);
	for (size_t i = n_c; i-- > 0;)
		collector_stop(&cs[i]);
	cpu_topology_free(&topo);
	hw_close(&hw);
	return 0;
}

int main(int argc, char **argv)
{
	int samples = argc > 1 ? atoi(argv[1]) : 200;
	const char *spec = argc > 2 ? argv[2] : "big:idle";
	static const struct bench_row rows[] = {
		{ &uncore_collector_ops, "msr", true },
		{ &uncore_collector_ops, "perf", false },
		{ &thermal_collector_ops, "-", true },
		{ &core_collector_ops, "msr", false },
		{ &core_collector_ops, "perf", true },
		{ &pcu_collector_ops, "msr", false },
		{ &pcu_collector_ops, "perf", true },
		{ &imc_collector_ops, "-", true },
		{ &k10temp_collector_ops, "-", true },
		{ &hsmp_collector_ops, "-", true },
	};
	int n_paced = argc > 3 ? atoi(argv[3]) : 0;
	struct sim *sim;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
	struct conf conf;

	if (samples <= 0 || n_paced < 0) {
		fprintf(stderr, "bench_sample: SAMPLES must be positive, PACED not negative\n");
		return 1;
	}
	if (open_machine(spec, SIM_CLOCK_STEPPED, &hw, &info, &topo, &sim) < 0)
		return 1;
	conf_defaults(&conf);
	printf("machine: %s (%s), %d sockets, %d cpus; %d samples\n\n", spec, info.microarch,
	       topo.n_sockets, topo.n_cpus, samples);
	printf("%-10s %-6s %16s %16s %16s %22s %14s %8s\n", "collector", "engine", "MSR reads/sample",
	       "minimum needed", "syscalls/sample", "cross-CPU reads/sample", "CPU us/sample",
	       "default");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct collector_ops *ops = rows[i].ops;
		struct collector c;
		struct snapshot *s = NULL;
		uint64_t reads0, writes0, calls0, group_reads0, minimum = 0;
		double t0, reads, calls, cross;

		memset(&c, 0, sizeof(c));
		if (row_conf(&rows[i], &conf) < 0) {
			fprintf(stderr, "bench_sample: no configuration for %s\n", ops->name);
			return 1;
		}
		if (collector_start(&c, ops, &hw, &info, &topo, &conf) < 0 || !c.up) {
			printf("%-10s %-6s %16s (%s)\n", ops->name, rows[i].engine, "off",
			       c.status.why_not);
			collector_stop(&c);
			continue;
		}
		reads0 = hw.n_reads;
		writes0 = hw.n_writes;
		calls0 = perf_sys_calls(hw.perf);
		group_reads0 = hw.perf->counts.n_read;
		t0 = cpu_time_s(CLOCK_PROCESS_CPUTIME_ID);
		for (int k = 0; k < samples; k++) {
			sim_advance(sim, conf.interval_s);
			snapshot_release(s);
			s = snapshot_new(&topo, &info);
			collector_sample(&c, s);
		}
		t0 = cpu_time_s(CLOCK_PROCESS_CPUTIME_ID) - t0;
		if (ops == &core_collector_ops)
			minimum = core_collector_reads_per_sample(&c);
		else if (ops == &uncore_collector_ops)
			minimum = strcmp(rows[i].engine, "perf") == 0 ? 0 : uncore_minimum(s);
		else if (ops == &pcu_collector_ops)
			minimum = strcmp(rows[i].engine, "perf") == 0 ? 0 : pcu_minimum(s);
		else if (ops == &imc_collector_ops || ops == &k10temp_collector_ops ||
			 ops == &hsmp_collector_ops)
			minimum = 0;   /* perf, hwmon files and HSMP messages: no MSR */
		else
			minimum = thermal_minimum(s);
		reads = (double)(hw.n_reads - reads0) / samples;
		calls = reads + (double)(hw.n_writes - writes0) / samples +
			(double)(perf_sys_calls(hw.perf) - calls0) / samples;
		cross = reads + (double)(hw.perf->counts.n_read - group_reads0) / samples;
		printf("%-10s %-6s %16.1f %16llu %16.1f %22.1f %14.1f %8s\n", ops->name,
		       rows[i].engine, reads, (unsigned long long)minimum, calls, cross,
		       t0 / samples * 1e6, rows[i].is_default ? "yes" : "-");
		snapshot_release(s);
		collector_stop(&c);
	}
	cpu_topology_free(&topo);
	hw_close(&hw);
	return n_paced ? paced(spec, n_paced, false) || paced(spec, n_paced, true) : 0;
}
