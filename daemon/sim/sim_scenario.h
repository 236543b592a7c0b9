/*
 * Scenario files of the simulated hardware (internal to daemon/sim/): parsing
 * the ini format into rules, and timelines, the piecewise-constant
 * functions of time that the simulator integrates to count events.
 *
 * Times are integer nanoseconds since the simulated machine was opened.
 */
#ifndef UNCORED_SIM_SCENARIO_H
#define UNCORED_SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_NS_PER_S   INT64_C(1000000000)
#define SIM_ALL        (-1)          /* socket/core/cpu = all */
#define SIM_UNSET      (-2)          /* key not given */
#define SIM_FOREVER    INT64_MAX     /* end not given */
#define SIM_FIXED      (-3)          /* counter = fixed */

/*
 * Shortest scenario period: each period replays every timed register
 * write, so a period of a few nanoseconds would keep the simulator busy
 * replaying forever.
 */
#define SIM_MIN_PERIOD_NS (SIM_NS_PER_S / 10)

enum sim_rule_kind {
	SIM_RULE_DRAM_THROTTLE,
	SIM_RULE_TEMPERATURE,
	SIM_RULE_PROCHOT,
	SIM_RULE_CORE_THROTTLE,
	SIM_RULE_POWER_LIMIT,
	SIM_RULE_PRESET,
	SIM_RULE_REWRITE,
	SIM_RULE_OFFLINE,
	SIM_RULE_LOAD,
	SIM_RULE_PERF_CORE,        /* a perf event on a GP counter of a CPU comes and goes */
	SIM_RULE_PERF_UNCORE,      /* perf uncore use on a socket comes and goes */
	SIM_RULE_GLOBAL_DISABLE,   /* the kernel's transient global-disable windows */
	SIM_RULE_DRAM_CRITICAL,    /* a memory channel's critical throttling (server iMC) */
	SIM_RULE_PACKAGE_SLEEP,    /* the package is in C3/C6: the iMC has no clock (server iMC) */
	SIM_RULE_FREQ_LIMIT,       /* an HSMP frequency-limit source bit of a socket (AMD) */
	SIM_RULE_DIMM_TEMP,        /* a DIMM's temperature as HSMP reports it (AMD) */
	SIM_RULE_KIND_COUNT,
};

enum sim_power_domain {
	SIM_DOMAIN_PACKAGE,
	SIM_DOMAIN_DRAM,
};

/* Per-CPU load; rates are per instruction. */
struct sim_load {
	double busy;           /* fraction of time unhalted, 0..1 */
	double ghz;            /* core clock while unhalted */
	double ipc;
	double llc_refs;
	double llc_misses;
	double branches;
	double branch_misses;
};

#define SIM_RULE_MAX_KEYS 32

struct sim_rule {
	enum sim_rule_kind kind;
	char section[64];
	int section_line;
	int key_line[SIM_RULE_MAX_KEYS];   /* line of each key of the key table; 0 = not given */
	int socket, core, cpu;             /* SIM_ALL, SIM_UNSET or a number */
	int channel;                       /* dram rules: memory channel; SIM_UNSET: all */
	int slot;                          /* dimm-temperature: the DIMM of the channel, 0 or 1 */
	int bit;                           /* frequency-limit: the source bit its reason names */
	int64_t start_ns, end_ns;          /* end SIM_FOREVER: to the period's end or forever */
	double duty;                       /* fraction of each cycle active, default 1 */
	int64_t cycle_ns;                  /* default 1 s */
	int celsius;
	enum sim_power_domain domain;
	uint32_t msr;
	uint64_t value;
	int64_t at_ns;
	int counter;                       /* perf rules: GP counter index, or SIM_FIXED */
	bool uncore;                       /* global-disable: pmu = uncore */
	struct sim_load load;
};

struct sim_scenario {
	char file[512];
	char description[160];
	int64_t period_ns;                 /* 0: the timeline runs once */
	bool refuse_writes;
	bool kernel_thermal_throttle;
	bool discovery_names;              /* uncore_pmu_names = discovery: no platform table */
	int perf_event_paranoid;           /* kernel.perf_event_paranoid, -1..4; default 2 */
	bool proc_subset_pid;              /* proc_subset = pid: the procfs ProcSubset=pid mounts,
					      PID directories only (no /proc/sys); default all */
	int pcu_clock_stopped;             /* this PCU instance of every die counts nothing, its
					      clock included (under perf: no BOX_CTL to say why);
					      -1 (default) none */
	struct sim_rule *rules;
	int n_rules;
};

/* Defaults of a load rule (and of CPUs no rule covers); ghz 0 means the model's reference clock. */
extern const struct sim_load sim_load_default;

/*
 * Parse the scenario file at path.  On error returns a negative errno and
 * writes "FILE:LINE: key: what was expected" to err.  The caller frees
 * *ret_scn with sim_scenario_free().
 */
int sim_scenario_load(const char *path, struct sim_scenario **ret_scn, char *err, size_t errlen);

void sim_scenario_free(struct sim_scenario *scn);

/* Line of key in rule, or the rule's section line when the key was not given. */
int sim_rule_line(const struct sim_rule *rule, const char *key);

/* "FILE:LINE: key: " prefix plus message, for errors found later against a model. */
void sim_scenario_error(const struct sim_scenario *scn, int line, const char *key, char *err,
			size_t errlen, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * A piecewise-constant function of time.  With a period it covers
 * [0, period) and repeats; without one the last segment lasts forever.
 */
struct sim_timeline_seg {
	int64_t start;
	int64_t value;
	unsigned __int128 integral;        /* of value over [0, start) within one period */
	uint64_t rises;                    /* zero-to-nonzero steps at segments 1..i-1 */
};

struct sim_timeline_op;

struct sim_timeline {
	int64_t period;
	int n, cap;
	struct sim_timeline_seg *seg;
	struct sim_timeline_op *ops;     /* paints not yet applied (sim_timeline_finish) */
	int n_ops, cap_ops;
};

enum sim_paint {
	SIM_PAINT_SET,
	SIM_PAINT_OR,
};

/* Start a timeline that is value everywhere.  Returns 0 or -ENOMEM. */
int sim_timeline_init(struct sim_timeline *tl, int64_t period, int64_t value);

void sim_timeline_free(struct sim_timeline *tl);

/*
 * Paint value over [start, end) (clipped to the period); OR paints value
 * where the timeline is zero.  Paints take effect, in their order, at
 * sim_timeline_finish.  Returns 0 or -ENOMEM.
 */
int sim_timeline_paint(struct sim_timeline *tl, int64_t start, int64_t end, int64_t value,
		       enum sim_paint op);

/* Paint every active stretch of rule (its window, cut into duty cycles). */
int sim_timeline_paint_rule(struct sim_timeline *tl, const struct sim_rule *rule, int64_t value,
			    enum sim_paint op);

/* OR 1 into tl wherever src is at least threshold. */
int sim_timeline_or_where(struct sim_timeline *tl, const struct sim_timeline *src,
			  int64_t threshold);

/*
 * Zero tl wherever src is zero (a paint, in order with the others): tl
 * then holds only while src does too.  0 or -ENOMEM.
 */
int sim_timeline_and(struct sim_timeline *tl, const struct sim_timeline *src);

/* Apply the paints, merge equal neighbours and compute the integrals; call after painting. */
void sim_timeline_finish(struct sim_timeline *tl);

int64_t sim_timeline_value_at(const struct sim_timeline *tl, int64_t t);

/* Integral of the value over [0, t), in value x nanoseconds. */
unsigned __int128 sim_timeline_integral(const struct sim_timeline *tl, int64_t t);

/* Number of zero-to-nonzero steps at times in [0, t); nonzero at 0 counts as one. */
uint64_t sim_timeline_rises(const struct sim_timeline *tl, int64_t t);

#endif
