/*
 * The harness of the tests that run the PCU and iMC collectors on the
 * simulated server models through whole scenarios: a machine, the shipped
 * defaults with the core collector through MSRs, a stepped clock, and
 * checks against the simulator's ground truth.
 */
#ifndef UNCORED_TEST_THROTTLE_RUN_H
#define UNCORED_TEST_THROTTLE_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "conf.h"
#include "cpu.h"
#include "hw.h"
#include "metric.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"
#include "xeon_uncore.h"

#define STEP_S 1.0

struct regs;

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
	bool with_perf;            /* the machine offers perf */
};

/*
 * Start spec (model:scenario) with the shipped defaults; with_perf false:
 * the machine offers no perf, and the PCU is counted through MSRs.  Every
 * register is recorded for finish().
 */
void start_with(struct run *r, const char *spec, bool with_perf);

/* start_with, with perf. */
void start(struct run *r, const char *spec);

/*
 * start_with with the configuration text conf_text instead of the shipped
 * defaults with [core] engine = msr.
 */
void start_conf(struct run *r, const char *spec, bool with_perf, const char *conf_text);

/*
 * start, with edit_tree called on the simulated kernel's files under root
 * (its sysfs PMU tree) after they are written and before any collector
 * reads them: a kernel whose files differ from the simulator's own.
 */
void start_edited(struct run *r, const char *spec, void (*edit_tree)(const char *root));

/* start_with on model with the scenario tests/data/scenarios/FILE. */
void start_data_scenario(struct run *r, const char *model, const char *file, bool with_perf);

/* Advance the stepped clock by seconds, one sample each STEP_S; r->snap is the last. */
void run_for(struct run *r, double seconds);

/*
 * Stop: the Prometheus text passes promtool (where installed), every perf
 * event is closed and every control register is as it was at start.
 */
void finish(struct run *r);

/* The first half of finish() without its checks: the sampler freed, every perf event closed. */
void stop_sampler(struct run *r);

/* The second half: the machine closed and its files removed. */
void close_machine(struct run *r);

/* The seconds exported in family f (its die variant on packages of several) for die die, or -1. */
double exported_die(const struct run *r, const struct metric_family *f, int socket, int die,
		    const char *label);

/* exported_die for die 0. */
double exported(const struct run *r, const struct metric_family *f, int socket,
		const char *label);

/* Ground truth seconds of a PCU event of a die of socket (of socket's die 0). */
double pcu_truth_die(struct run *r, int socket, int die, enum xeon_pcu_event which);
double pcu_truth(struct run *r, int socket, enum xeon_pcu_event which);

/* Ground truth seconds of the iMC event config of a die's channel. */
double imc_truth(struct run *r, int socket, int die, int channel, uint64_t config);

/* Fail unless got is within 1 % of want (exactly 0 when want is). */
void assert_close(double got, double want, const char *what, int socket);

/* Every PCU seconds series of every socket (and die) against the ground truth. */
void check_pcu(struct run *r);

/* One channel's DRAM seconds against the ground truth; a clockless channel has none. */
void check_channel(struct run *r, const struct xeon_uncore *xu, int sk, int d, int ch);

/* check_channel for every channel of every socket and die. */
void check_imc(struct run *r, int n_channels);

/* Whether collector's status reason in the last snapshot holds text. */
bool reason_has(const struct run *r, const char *collector, const char *text);

#endif
