/*
 * One perf event group on one CPU, counting only (hardware-linux.md §3.1).
 *
 * The leader is opened disabled, the members enabled, all with read_format
 * GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID, pid -1, pinned 0,
 * exclusive 0, no sampling, no inheritance, no exclude bits; the group is
 * started with one PERF_EVENT_IOC_ENABLE on the leader with
 * PERF_IOC_FLAG_GROUP.  The kernel schedules a group all or nothing, so
 * every member of one read shares one window and one pair of times.
 *
 * Each perf_group_read() is one read(2) of the leader that returns every
 * member.  The kernel's counts are 64-bit totals that never wrap; this
 * module keeps the last values and times and gives, per member and
 * interval, Δvalue, Δtime_enabled, Δtime_running, the multiplexing ratio
 * Δrunning / Δenabled and the scaled estimate Δvalue × Δenabled / Δrunning.
 * Δrunning = 0 means the group was never on the PMU in that interval: it is
 * reported as such, not divided by.
 *
 * All system calls go through struct perf_sys; this module does not know
 * whether a real or a simulated kernel answers.  It does not log.
 */
#ifndef UNCORED_PERF_GROUP_H
#define UNCORED_PERF_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_pmu.h"
#include "perf_sys.h"

/* What to count: one event, as attr.type and the config words. */
struct perf_group_event {
	const char *name;              /* for messages, e.g. "msr/tsc/"; copied at open */
	uint32_t type;                 /* attr.type: a PMU's type file, or PERF_TYPE_* */
	struct perf_pmu_config cfg;    /* attr.config, config1, config2, config3 */
};

/* One open event of a group. */
struct perf_group_member {
	char *name;
	int fd;
	uint64_t id;                   /* PERF_EVENT_IOC_ID, matched in every read */
	uint64_t value;                /* the kernel's count at the last read */
	uint64_t total;                /* Σ Δvalue over this group's reads */
	uint64_t total_scaled;         /* Σ scaled estimates over the reads that ran */
};

/* One member's interval, between two reads. */
struct perf_group_delta {
	uint64_t value;                /* Δvalue: what was counted */
	uint64_t enabled_ns;           /* Δtime_enabled */
	uint64_t running_ns;           /* Δtime_running: time actually on the PMU */
	bool ran;                      /* running_ns > 0 */
	uint64_t scaled;               /* value × enabled / running; 0 when !ran */
	double ratio;                  /* running / enabled in [0, 1]; 0 when !ran */
};

struct perf_group {
	struct perf_sys *ps;           /* borrowed; must outlive the group */
	int cpu;
	size_t n;                      /* members; members[0] is the leader */
	struct perf_group_member *members;
	uint64_t time_enabled;         /* ns, at the last read */
	uint64_t time_running;         /* ns, at the last read */
	uint64_t n_reads;              /* successful perf_group_read() calls */
	uint64_t *buf;                 /* the read(2) buffer, 3 + 2n words */
};

/*
 * Open events[0..n-1] as one group on cpu, events[0] the leader, disabled
 * until perf_group_enable().  On success *ret_group is malloc'ed (release
 * with perf_group_close).  On failure every fd opened so far is closed,
 * and err holds "cpu N: open 'NAME' (type T, config 0x...): HINT", with
 * kernel.perf_event_paranoid's value after a permission error; the return
 * is the kernel's negative errno (see perf_group_hint()), -EINVAL for
 * n = 0, or -EOPNOTSUPP for a config3 these kernel headers cannot pass.
 */
int perf_group_open(struct perf_sys *ps, int cpu, const struct perf_group_event *events,
		    size_t n, struct perf_group **ret_group, char *err, size_t errlen);

/* Start (or, after an error state, restart) the whole group.  0 or -errno. */
int perf_group_enable(struct perf_group *g);

/* Stop the whole group; counts and times are kept.  0 or -errno. */
int perf_group_disable(struct perf_group *g);

/*
 * Read every member in one read(2) and advance the interval: when deltas
 * is not NULL it receives g->n entries, in member order.  Returns 0;
 * -ENODATA when the read returns end of file (a group in error state,
 * which a pinned group enters when it cannot be scheduled; enable it
 * again); -EIO when the kernel's answer has the wrong size, member count
 * or ids (as when the kernel detached the group at its CPU's offline edge,
 * hardware-linux.md §6); another -errno from read(2).  On error nothing is
 * updated.
 */
int perf_group_read(struct perf_group *g, struct perf_group_delta *deltas);

/* Close every fd and free the group; NULL is ignored. */
void perf_group_close(struct perf_group *g);

/*
 * The interval arithmetic on its own: fill *ret from Δvalue, Δenabled and
 * Δrunning (nanoseconds).  The estimate is computed without overflow and
 * rounded down; with running > enabled (never from a kernel) running is
 * taken as enabled.
 */
void perf_group_scale(uint64_t value, uint64_t enabled_ns, uint64_t running_ns,
		      struct perf_group_delta *ret);

/* What failed, for perf_group_hint(). */
enum perf_group_op {
	PERF_GROUP_OP_OPEN,
	PERF_GROUP_OP_READ,
};

/*
 * The operator's sentence for err (negative errno) from op, e.g. for
 * -EACCES at open "permission denied: counting all tasks on a CPU needs
 * CAP_PERFMON (...)".  Never NULL; static storage.
 */
const char *perf_group_hint(int err, enum perf_group_op op);

#endif
