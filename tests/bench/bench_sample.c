/*
 * Cost of one sample, per collector, on the simulated 'big' machine
 * (2 sockets x 56 cores x 2 threads): MSR reads per sample against the
 * fewest reads that give every value, and CPU time per sample.  Prints a
 * table; it asserts nothing, so it never fails on a slow machine.
 *
 * Usage: bench_sample [SAMPLES] [MODEL[:SCENARIO]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "col_core.h"
#include "collector.h"

/* Registered in collectors.c; named here to test them one by one. */
extern const struct collector_ops core_collector_ops;
extern const struct collector_ops thermal_collector_ops;
extern const struct collector_ops uncore_collector_ops;
#include "conf.h"
#include "config.h"
#include "cpu.h"
#include "sim.h"
#include "snapshot.h"

static double cpu_time_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

int main(int argc, char **argv)
{
	int samples = argc > 1 ? atoi(argv[1]) : 200;
	const char *spec = argc > 2 ? argv[2] : "big:idle";
	static const struct collector_ops *const ops[] = {
		&uncore_collector_ops, &thermal_collector_ops, &core_collector_ops,
	};
	char err[512];
	struct sim *sim = sim_open(spec, UNCORED_SCENARIO_DIR, SIM_CLOCK_STEPPED, err, sizeof(err));
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
	struct conf conf;

	if (!sim || samples <= 0) {
		fprintf(stderr, "bench_sample: %s\n", sim ? "SAMPLES must be positive" : err);
		return 1;
	}
	sim_bind(sim, &hw);
	if (cpu_detect(&hw, &info, err, sizeof(err)) < 0 ||
	    cpu_topology_load(&hw, &topo, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sample: %s\n", err);
		return 1;
	}
	conf_defaults(&conf);
	printf("machine: %s (%s), %d sockets, %d cpus; %d samples\n\n", spec, info.microarch,
	       topo.n_sockets, topo.n_cpus, samples);
	printf("%-10s %16s %16s %18s\n", "collector", "MSR reads/sample", "minimum needed",
	       "CPU us/sample");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct collector c;
		struct snapshot *s = NULL;
		uint64_t reads0, minimum = 0;
		double t0;

		memset(&c, 0, sizeof(c));
		if (collector_start(&c, ops[i], &hw, &info, &topo, &conf) < 0 || !c.up) {
			printf("%-10s %16s (%s)\n", ops[i]->name, "off", c.status.why_not);
			collector_stop(&c);
			continue;
		}
		reads0 = hw.n_reads;
		t0 = cpu_time_s();
		for (int k = 0; k < samples; k++) {
			sim_advance(sim, conf.interval_s);
			snapshot_release(s);
			s = snapshot_new(&topo, &info);
			collector_sample(&c, s);
		}
		t0 = cpu_time_s() - t0;
		if (ops[i] == &core_collector_ops)
			minimum = core_collector_reads_per_sample(&c);
		else if (ops[i] == &uncore_collector_ops)
			minimum = uncore_minimum(s);
		else
			minimum = thermal_minimum(s);
		printf("%-10s %16.1f %16llu %18.1f\n", ops[i]->name,
		       (double)(hw.n_reads - reads0) / samples, (unsigned long long)minimum,
		       t0 / samples * 1e6);
		snapshot_release(s);
		collector_stop(&c);
	}
	cpu_topology_free(&topo);
	hw_close(&hw);
	return 0;
}
