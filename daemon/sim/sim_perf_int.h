/*
 * The simulated kernel's perf_event state, shared by its parts (never
 * included outside daemon/sim/):
 *   sim_perf.c        events: open, read, ioctl, close, the contexts' lifetime
 *   sim_perf_sched.c  counters and scheduling: placing groups, times, rotation, hotplug
 *   sim_perf_sysfs.c  the PMU tree the kernel writes under /sys
 */
#ifndef UNCORED_SIM_PERF_INT_H
#define UNCORED_SIM_PERF_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_facts.h"
#include "sim_perf.h"

#define FD_BASE        3           /* fds look like fds; the table index is fd - FD_BASE */
#define MAX_SLOTS      16
#define FIXED_SLOT(i)  (8 + (i))   /* slots 0..7 GP counters, 8.. fixed counters */
#define NO_SLOT        (-1)
#define CORE_RAW_MASK  UINT64_C(0xffacffff)  /* event|umask|edge|pc|any|inv|cmask, X86_RAW_EVENT_MASK */
#define UNC_RAW_MASK   UINT64_C(0xff84ffff)  /* event|umask|edge|inv|cmask, NHM_UNC_RAW_EVENT_MASK */
#define REF_PSEUDO     UINT64_C(0x0300)      /* ref-cycles: fixed counter 2 only */
#define UNC_CLOCK      UINT64_C(0xff)        /* the uncore fixed counter */
/* SNBEP_PCU_MSR_PMON_RAW_EVENT_MASK, SNBEP_PMON_RAW_EVENT_MASK (uncore_snbep.c) */
#define PCU_RAW_MASK   UINT64_C(0xdf84c0ff)  /* event|occ_sel|edge|inv|thresh5|occ_invert|occ_edge */
#define IMC_RAW_MASK   UINT64_C(0xff84ffff)  /* event|umask|edge|inv|thresh8 */
#define BOX_N_COUNTERS 4
#define SEL_KERNEL_BITS (ARCH_PERFMON_EVENTSEL_INT | ARCH_PERFMON_EVENTSEL_ENABLE)
#define FIXED_NIBBLE_PERF (INTEL_FIXED_0_ENABLE_PMI | INTEL_FIXED_0_USER | INTEL_FIXED_0_KERNEL)
#define NHM_UNC_GLOBAL_ENABLE UINT64_C(0x1000000ff)
#define READ_FORMATS (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		      PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

struct pev {
	bool used;
	int ctx;                     /* context index */
	int leader;                  /* index of the group leader (itself for a leader) */
	int next;                    /* next member of the group, -1: last */
	uint64_t config;             /* raw config the counter is programmed with */
	uint64_t usr_os;             /* USR/OS select bits (core) */
	uint64_t read_format;
	uint64_t id;
	bool enabled;
	bool dead;                   /* detached by its CPU going offline: counts no more */
	bool pinned;                 /* leader: attr.pinned, scheduled before every flexible group */
	int slot;                    /* NO_SLOT when not on a counter */
	uint64_t count;              /* counted while on earlier counters */
	uint64_t start;              /* the counter's value when placed */
	/* leader only */
	uint64_t time_enabled, time_running;
	int64_t stamp;
};

enum box {
	BOX_NONE,
	BOX_PCU,
	BOX_IMC,
	BOX_MSR,                     /* AMD: a CPU's msr PMU, free-running MSRs, no counter limit */
};

struct ctx {
	bool uncore;                 /* any uncore PMU (NHM/WSM uncore or a server box) */
	enum box box;                /* a server box: counts from the machine model */
	int socket, index;           /* box: its unit, and its channel or PCU instance */
	int cpu;                     /* the CPU its registers are reached through */
	int *groups;                 /* leader indices, in scheduling order */
	int n_groups, cap;
	int64_t next_rotate;         /* SIM_FOREVER when every group fits */
	uint64_t offline_edges;      /* core: the CPU's offline edges when last checked */
};

struct sim_perf {
	const struct sim_model *m;
	struct sim_kernel *k;
	bool watchdog;
	struct sim_perf_io io;
	void *io_ctx;
	int n_cpus;
	struct ctx *ctxs;            /* n_cpus core contexts, one uncore per socket, the boxes,
					and on AMD one msr PMU per CPU */
	int n_ctxs;
	int n_imc;                   /* memory channels per socket; 0: no server boxes */
	int n_pcu;                   /* PCU boxes per die (sim_model_n_pcu) */
	int pcu0, imc0;              /* index of the first PCU and iMC context */
	int msr0;                    /* AMD: index of CPU 0's msr PMU context; 0: none */
	struct pev *ev;
	int n_ev, cap_ev;
	uint64_t next_id;
	/*
	 * The earliest next_rotate of the contexts, asked at every access:
	 * found again only after a context was scheduled in (stale).
	 */
	int64_t next_rotate;
	bool next_stale;
};

/* What e has counted up to t. */
uint64_t sim_perf_ev_value(struct sim_perf *p, const struct pev *e, int64_t t);

/* Place the members of leader into free slots (fixed first); false when one does not fit. */
bool sim_perf_assign_group(const struct sim_perf *p, const struct ctx *c, int leader,
			   uint32_t *free_slots, int *ret_slots);

/* Every counter of context c, as a slot mask. */
uint32_t sim_perf_all_slots(const struct sim_perf *p, const struct ctx *c);

/* Bring the enabled and running times of leader's group up to t. */
void sim_perf_update_times(struct sim_perf *p, int leader, int64_t t);

/* Take every event of c off its counter (counts folded in), or place the groups again. */
void sim_perf_ctx_sched_out(struct sim_perf *p, struct ctx *c, int64_t t);
void sim_perf_ctx_sched_in(struct sim_perf *p, struct ctx *c, int64_t t);

/* Re-schedule the whole context c at t. */
void sim_perf_resched(struct sim_perf *p, struct ctx *c, int64_t t);

/* A CPU found offline by an access (a scenario's offline window) detaches its events. */
void sim_perf_check_online(struct sim_perf *p, struct ctx *c, int64_t t);

#endif
