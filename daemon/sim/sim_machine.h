/*
 * The simulated machine's state, shared by the files that model it (sim.c
 * and its parts; never included outside daemon/sim/): the register file
 * per socket, physical core and logical CPU, the counter arithmetic, and
 * the register table each model contributes to.
 *
 *   sim.c          lifetime, time and agents, the hw_ops backend
 *   sim_build.c    the machine's timelines from the scenario; the scenario checked
 *   sim_regs.c     the register table: lookup, raw access, dump
 *   sim_uncore.c   the Nehalem/Westmere uncore PMU
 *   sim_core_pmu.c the core PMU
 *   sim_thermal.c  thermal status, TjMax, RAPL throttled time
 *   sim_probe.c    the tests' and tools' probe (sim.h)
 *   sim_attach.c   the simulated kernel's perf_event syscalls and PMU tree
 */
#ifndef UNCORED_SIM_MACHINE_H
#define UNCORED_SIM_MACHINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "hw.h"
#include "sim_facts.h"
#include "sim.h"
#include "sim_box.h"
#include "sim_kernel.h"
#include "sim_model.h"
#include "sim_perf.h"
#include "sim_scenario.h"

#define MAX_GP              8
#define MAX_FIXED           4
#define N_UMASKS            16

enum core_event {
	EV_INSTRUCTIONS,
	EV_CYCLES,
	EV_REF_CYCLES,
	EV_LLC_REFS,
	EV_LLC_MISSES,
	EV_BRANCHES,
	EV_BRANCH_MISSES,
	EV_COUNT,
};

struct sim_ctr {
	uint64_t base;     /* value at t0 */
	int64_t t0;
};

/* How an event accumulates: rate integral, or rising edges, of a timeline. */
struct count_src {
	const struct sim_timeline *tl;   /* NULL: always on */
	int64_t hz;                      /* events/s while tl is nonzero; 0: tl holds the rate */
	bool edge;
};

struct sim_uncore {
	uint64_t global_ctrl, fixed_ctrl, addr_match;
	uint64_t evtsel[NHM_UNC_NUM_COUNTERS];
	struct sim_ctr pmc[NHM_UNC_NUM_COUNTERS];
	struct sim_ctr fixed;
};

struct sim_socket {
	struct sim_uncore unc;
	struct sim_timeline dram, prochot, pkg_limit, dram_limit, pkg_thermal;
	struct sim_timeline pkg_hot;                /* a core at or above TjMax */
	struct sim_timeline temp_or[N_UMASKS];      /* 0x80 by umask */
	struct sim_timeline throttled_or[N_UMASKS]; /* 0x81 by umask */
	int64_t pkg_log_from[2];
};

struct sim_core {
	struct sim_timeline temp, hot, throttled;
	int64_t log_from[2];     /* thermal log, PROCHOT log: rises before this are cleared */
};

struct sim_cpu {
	struct hw_cpu topo;
	int core_index;
	bool manual_offline;
	struct sim_timeline rate[EV_COUNT];
	struct sim_timeline offline;
	uint64_t evtsel[MAX_GP];
	struct sim_ctr pmc[MAX_GP];
	uint64_t fixed_ctrl, global_ctrl;     /* AMD PerfMonV2: GlobalCtl in global_ctrl */
	struct sim_ctr fixed[MAX_FIXED];
	uint64_t hwcr;                        /* AMD: HWCR (IRPERF_EN) */
	struct sim_ctr irperf;                /* AMD: IRPERF */
};

#define SIM_REG_CACHE 32   /* a power of two */

struct reg_desc;

/* A register found in the model's table: its entry and its index in it. */
struct sim_reg_hit {
	uint32_t msr;
	int index;
	const struct reg_desc *d;   /* NULL: nothing cached here */
};

struct sim {
	const struct sim_model *model;
	struct sim_scenario *scn;
	enum sim_clock clock;
	int64_t stepped_ns;
	struct timespec opened;
	bool refuse_writes;
	struct { int cpu; uint32_t msr; int err; } fail_read;   /* tests: err 0 = none */
	int fail_box_read;                                      /* tests: perf box reads; 0 = none */
	pthread_mutex_t lock;
	int n_cpus;
	struct sim_socket *sockets;
	struct sim_core *cores;        /* socket * n_cores + core index */
	struct sim_cpu *cpus;
	enum sim_boot boot;
	struct sim_kernel *kernel;
	struct sim_perf *perf;
	struct sim_boxes *boxes;       /* server uncore; NULL when the model has none */
	char *pmu_root;                /* sim_attach_perf's PMU tree, removed at close */
	const struct sim_rule **rewrites;
	int n_rewrites, rw_idx;
	char **notes;                  /* sim_note: rules whose condition nothing reads */
	int n_notes;
	int64_t rw_period;
	/* sim_reg_find's answers by address (a multiplexed PMU rewrites the same few). */
	struct sim_reg_hit reg_cache[SIM_REG_CACHE];
};

/* Where an access lands. */
struct loc {
	struct sim_cpu *cpu;
	struct sim_core *core;
	struct sim_socket *socket;
};

static inline uint64_t width_mask(int width)
{
	return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

/* Events of src in [0, t). */
static inline uint64_t src_count(const struct count_src *src, int64_t t)
{
	unsigned __int128 integral;

	if (src->edge)
		return sim_timeline_rises(src->tl, t);
	integral = src->tl ? sim_timeline_integral(src->tl, t) : (unsigned __int128)(t > 0 ? t : 0);
	if (src->hz)
		integral *= (uint64_t)src->hz;
	/* The same quotient; a 64-bit division where it fits is several times cheaper. */
	if (integral <= UINT64_MAX)
		return (uint64_t)integral / SIM_NS_PER_S;
	return (uint64_t)(integral / SIM_NS_PER_S);
}

/* A counter's value at t: its base plus what src counted since, while counting, at width. */
static inline uint64_t ctr_value(const struct sim_ctr *c, const struct count_src *src,
				 bool counting, int64_t t, int width)
{
	uint64_t v = c->base;

	if (counting && src)
		v += src_count(src, t) - src_count(src, c->t0);
	return v & width_mask(width);
}

/* ---- the register table (sim_regs.c) ---- */

#define COUNT_GP    (-1)
#define COUNT_FIXED (-2)
#define COUNT_GP_PAIRS (-3)   /* two registers per GP counter (AMD PERF_CTL/PERF_CTR) */

struct reg_desc {
	uint32_t first;
	int count;            /* registers from first, or COUNT_GP / COUNT_FIXED / COUNT_GP_PAIRS */
	unsigned need;        /* model flags required */
	int (*read)(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v);  /* NULL: EIO */
	int (*write)(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v);   /* NULL: EIO */
};

/*
 * Each model's part of the table.  Order matters: the first entry that
 * covers an address and the model wins (uncore, then thermal and RAPL,
 * then the core PMU); it is also the dump order.
 */
extern const struct reg_desc sim_uncore_regs[];
extern const size_t sim_n_uncore_regs;
extern const struct reg_desc sim_thermal_regs[];
extern const size_t sim_n_thermal_regs;
extern const struct reg_desc sim_core_regs[];
extern const size_t sim_n_core_regs;

/* Handlers for a register that reads 0, and one whose writes are ignored. */
int sim_read_zero(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v);
int sim_write_ignored(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v);

/* The entry of the model's register msr and its index in it, or NULL. */
const struct reg_desc *sim_reg_find(const struct sim *s, uint32_t msr, int *ret_index);

/* Where an access from cpu lands. */
struct loc sim_loc_of(struct sim *s, int cpu);

/* The uncore unit (sim_box.h: socket * dies + die) of cpu. */
int sim_unit_of(const struct sim *s, int cpu);

/* Read or write msr of cpu at t, server boxes included, without the msr driver's checks. */
int sim_raw_write(struct sim *s, int cpu, uint32_t msr, uint64_t value, int64_t t);
int sim_raw_read(struct sim *s, int cpu, uint32_t msr, uint64_t *value, int64_t t);

/* Call fn for every readable register of cpu at t, in table order, then its server boxes'. */
void sim_regs_dump(struct sim *s, int cpu, int64_t t,
		   void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value), void *arg);

/* ---- event sources (sim_uncore.c, sim_core_pmu.c) ---- */

/* The source of uncore event code/umask of socket, or -ENOENT. */
int sim_uncore_src(const struct sim *s, int socket, uint8_t code, uint8_t umask, bool edge,
		   struct count_src *ret);

/* The source of core event code/umask of cpu (AMD: a 12-bit code), or -ENOENT. */
int sim_core_src(const struct sim *s, int cpu, uint16_t code, uint8_t umask,
		 struct count_src *ret);

/* ---- time, agents and lifetime (sim.c) ---- */

/* Nanoseconds since open: stepped, or CLOCK_MONOTONIC. */
int64_t sim_now_ns(const struct sim *s);

/* Run every scenario rewrite and agent change due by now, in time order; returns now. */
int64_t sim_sync_time(struct sim *s);

/*
 * Read hwmon attribute relpath (relative to /sys/class/hwmon/) of s at t
 * into buf, as hw_ops.read_hwmon (sim_hwmon.c): the k10temp devices.
 */
int sim_hwmon_read(const struct sim *s, const char *relpath, int64_t t, char *buf, size_t len);

/* Answer HSMP message m at t as /dev/hsmp would (sim_hsmp.c, hw_ops.hsmp). */
int sim_hsmp_send(const struct sim *s, struct hw_hsmp_msg *m, int64_t t);

/* DIMM slots of each channel the simulated boards populate (sim_hsmp.c): slot 0 only. */
#define SIM_DIMM_SLOTS 1

/* Whether m's /dev/hsmp answers GET_PROC_HOT (Milan on). */
bool sim_hsmp_has_prochot(const struct sim_model *m);

/* Whether m's /dev/hsmp answers GET_SOCKET_FREQ_LIMIT (Genoa on). */
bool sim_hsmp_has_freq_limit(const struct sim_model *m);

/* Whether m's /dev/hsmp reports DIMMs (GET_DIMM_THERMAL, Genoa on) on channels of its own. */
bool sim_hsmp_has_dimms(const struct sim_model *m);

/* Whether cpu is online at t (not taken offline by a test nor by the scenario). */
bool sim_cpu_is_online(const struct sim *s, int cpu, int64_t t);

/* Remove the PMU tree sim_attach_perf wrote, if any (best effort). */
void sim_remove_pmu_root(struct sim *s);

/* ---- checking (sim_check.c) and building (sim_build.c) ---- */

/*
 * Check every rule of the scenario against the model: 0, or -EINVAL with
 * a sentence in err (-ENOMEM).  Keeps a note (sim_note) for each rule
 * whose condition nothing on the model reads.
 */
int sim_check_scenario(struct sim *s, char *err, size_t errlen);

/* Allocate and paint the sockets, cores, CPUs and server boxes: 0 or -ENOMEM. */
int sim_build_machine(struct sim *s);

#endif
