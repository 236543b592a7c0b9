/*
 * The counter-engine seam: a collector says what to count, an engine says
 * how.  A collector opens one group per CPU (core PMU) or per box (the
 * Nehalem/Westmere uncore of a socket) with the events it wants there,
 * reads the whole group once per sample, and closes it.  It never names a
 * counter's MSR address and never decides who owns a counter.  The
 * server boxes (PCU, iMC) count events in their box's own encoding
 * (code = event select, umask; cmask is the box's threshold field).
 *
 * Two engines fit behind this header: the msr engine (engine_msr.h: direct
 * programming through struct hw, with the ownership rule of
 * hardware-linux.md §1.5, the register ledger and its restore) and the perf
 * engine (engine_perf.h: perf_event_open groups, perf_group.h, one group
 * per CPU or box, one read(2) per group, time_enabled/time_running).  The engine is chosen
 * at start-up, where the hw backend is; this header imports neither.
 *
 * Calls come from one thread at a time (the sampler's).  Errors are
 * codes: a negative errno, and for a reading also what failed (enum
 * engine_fault); the engine keeps the operator's text beside them (open's
 * err, a reading's reason, engine_reading_reason()) for the log and the
 * snapshot.  Callers decide on the codes, never on the text.  An engine
 * does not log.
 */
#ifndef UNCORED_ENGINE_H
#define UNCORED_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which engine counts: the kind of an engine_ops, and a collector's choice. */
enum engine_kind {
	ENGINE_NONE,             /* no engine: a collector that counts without one, or not chosen yet */
	ENGINE_MSR,              /* direct programming through the msr driver (engine_msr.h) */
	ENGINE_PERF,             /* the kernel's perf_event_open (engine_perf.h) */
};

/*
 * The engine's name as logs, the JSON snapshot and the documentation write
 * it: "msr" or "perf"; NULL for ENGINE_NONE.  The only place the names are
 * spelled.
 */
const char *engine_kind_name(enum engine_kind kind);

/* Which PMU a group counts on. */
enum engine_pmu {
	ENGINE_PMU_CORE,         /* a logical CPU's core PMU; target = the CPU number */
	ENGINE_PMU_NHM_UNCORE,   /* the Nehalem/Westmere uncore box; target = a CPU of its socket */
	ENGINE_PMU_PCU,          /* the server uncore's PCU box (hardware-linux.md §4.1) of a
				    package (die); target = ENGINE_BOX_TARGET(instance, a CPU
				    of it), instance 0 (= the CPU itself) unless the kernel
				    has several (engine_n_boxes) */
	ENGINE_PMU_IMC,          /* a memory channel's iMC box of a package (die); target =
				    ENGINE_BOX_TARGET(channel, a CPU of it) */
};

/*
 * The target of a box that a package has several of (ENGINE_PMU_IMC,
 * ENGINE_PMU_PCU on Granite Rapids): the box's index (the N of the
 * kernel's uncore_imc_N; for the PCU the position of its instance in
 * ascending N) and a CPU of the
 * package.  CPU numbers and indexes below 65536.
 */
#define ENGINE_BOX_TARGET(index, cpu) ((int)((unsigned)(index) << 16 | (unsigned)(cpu)))
#define ENGINE_TARGET_CPU(target)     ((int)((unsigned)(target) & 0xffffu))
#define ENGINE_TARGET_BOX(target)     ((int)((unsigned)(target) >> 16))

/*
 * One event to count, in the PMU's own encoding (hardware.md §2, §5.2).
 * The engine chooses the counter: an event a fixed counter counts
 * (core: 0xC0 instructions, 0x3C cycles, 0x3C umask 0x01 reference
 * cycles; uncore: ENGINE_UNCORE_CLOCK) goes to that fixed counter when it
 * is free, otherwise to a GP counter where the event exists there.
 */
#define ENGINE_UNCORE_CLOCK 0xff   /* code of the uncore fixed counter (UCLK), umask 0 */

struct engine_event {
	const char *name;        /* for reasons, e.g. "instructions"; borrowed until close */
	uint16_t code;           /* event select [7:0]; AMD's core PMU: [11:0] (config 35:32) */
	uint8_t umask;           /* [15:8] */
	bool edge;               /* bit 18 */
	bool inv;                /* bit 23 */
	uint8_t cmask;           /* [31:24] */
	bool occ_reset;          /* uncore occupancy events only: OCC_CTR_RST (bit 17) at claim */
	bool gp_only;            /* never a fixed counter, even for an event one counts */
};

/* What became of an event, as of the last read. */
enum engine_state {
	ENGINE_COUNTING,         /* it has a counter now; running_ns says for how long */
	ENGINE_WAITING,          /* no free counter yet; retried at every read */
	ENGINE_YIELDED,          /* another agent took its counter; taken back once free */
	ENGINE_FAILED,           /* the hardware refused (err says how); retried at every read */
};

/*
 * What failed, for a reading in ENGINE_FAILED (its err holds the negative
 * errno).  It says which of the hardware's operations the errno belongs
 * to, so that the text for it (engine_reading_reason) reads right: -EPERM
 * on a read is a permission, on a write the kernel's refusal of MSR
 * writes.
 */
enum engine_fault {
	ENGINE_FAULT_NONE,       /* nothing failed (err is 0) */
	ENGINE_FAULT_READ,       /* reading the counts: msr, the counter or its own select;
				    perf, the group (an offline CPU, -ENXIO, and a group in
				    error state, -ENODATA, included) */
	ENGINE_FAULT_PROGRAM,    /* claiming a counter: programming its select, enable bits or
				    gate (msr; a change the crash journal refused included) */
};

/* One event's result of engine_read(). */
struct engine_reading {
	uint64_t total;          /* running 64-bit total since open; never decreases */
	uint64_t delta;          /* what this read added to total (perf: the scaled estimate) */
	uint64_t raw_delta;      /* what the counter itself counted this interval: = delta,
				    except under perf multiplexing, where delta =
				    raw_delta × enabled_ns / running_ns */
	uint64_t enabled_ns;     /* this interval: time the event was wanted (as perf's) */
	uint64_t running_ns;     /* this interval: time it was really counted; <= enabled_ns */
	enum engine_state state;
	const char *reason;      /* why not counting (static text, without the errno's
				    meaning: engine_reading_reason adds it); NULL while
				    counting */
	uint64_t conflicts;      /* times another agent really took its counter, since open */
	uint64_t resets;         /* times another agent cleared its counter's enable (perf's
				    NHM/WSM workaround, perf's disable over ours), since open;
				    the interval's counts are lost, the counter is re-claimed */
	int err;                 /* the last hardware error (negative errno), 0 when none */
	enum engine_fault fault; /* what err failed in; ENGINE_FAULT_NONE when err is 0 */
};

/* What to do when another agent has taken a counter (the conf's pmu_conflict). */
enum engine_policy {
	ENGINE_YIELD,            /* forget it, report yielded, take it back once free (default) */
	ENGINE_RECLAIM,          /* write our select back at once */
};

struct engine_group;         /* an engine's state of one open group */

struct engine_ops {
	enum engine_kind kind;   /* which engine: its name is engine_kind_name(kind) */
	/*
	 * Whether another agent can take one of this engine's counters (a
	 * conflict).  The msr engine: yes.  The perf engine: no, the kernel
	 * shares counters by rotation, so a conflicts count from it could
	 * never change and is not exported.
	 */
	bool has_conflicts;
	/*
	 * Open a group of n events on pmu/target and start counting what can
	 * be counted.  An event that finds no counter is not an error: it reads
	 * as ENGINE_WAITING.  Returns 0, or a negative errno with a sentence in
	 * err: -ENXIO when the target CPU is offline (every engine), another
	 * when, for example, it has no such PMU.
	 */
	int (*open)(void *ctx, enum engine_pmu pmu, int target, const struct engine_event *events,
		    size_t n, struct engine_group **ret_group, char *err, size_t errlen);

	/*
	 * Read every event of the group at once (one group read for perf):
	 * fills readings[0..n-1] in the order of open.  Re-checks ownership of
	 * every counter and applies the conflict policy.  A box whose target
	 * CPU went offline is read through another CPU of its socket.  Returns
	 * 0, or -ENXIO when nothing could be read (the CPU, or every CPU of
	 * the box's socket, is offline); per-event trouble is in the readings.
	 */
	int (*read)(void *ctx, struct engine_group *g, struct engine_reading *readings);

	/*
	 * Stop counting and give back every register the group changed, byte
	 * for byte.  Returns 0 or the first negative errno; counts registers
	 * that could not be restored in *ret_failed (may be NULL).  The group is
	 * freed in any case.
	 */
	int (*close)(void *ctx, struct engine_group *g, unsigned *ret_failed);

	/* Free the engine; every group must be closed first. */
	void (*destroy)(void *ctx);

	/*
	 * The operator's text for err, a negative errno this engine returned
	 * in a reading that failed in fault (for example "the kernel refuses
	 * MSR writes (...)", or that the crash journal could not record the
	 * change).  Static text, or valid until the next call.
	 */
	const char *(*hint)(void *ctx, int err, enum engine_fault fault);

	/*
	 * How many boxes of pmu a package (die) has, box indexes 0 .. n-1 of
	 * ENGINE_BOX_TARGET: the perf engine's count of the kernel's
	 * instances of the PMU (uncore_pcu_N: Granite Rapids has several
	 * PCUs per package).  NULL: one (the msr engine reaches one PCU).
	 */
	int (*n_boxes)(void *ctx, enum engine_pmu pmu);
};

struct engine {
	const struct engine_ops *ops;
	void *ctx;
};

/*
 * The multiplexing ratio of a reading: running_ns / enabled_ns in [0, 1];
 * 1 when the event had its counter all the interval, 0 when it never did
 * (or nothing was wanted).
 */
static inline double engine_reading_ratio(const struct engine_reading *r)
{
	if (r->enabled_ns == 0)
		return 0.0;
	return r->running_ns >= r->enabled_ns ? 1.0 : (double)r->running_ns / (double)r->enabled_ns;
}

/*
 * Why a reading does not count, as the operator reads it: its reason
 * ("not counted" when it has none), and for a failure with an errno
 * "<reason>: <the engine's hint for it>" in buf.  Returns the reason's
 * static text or buf.
 */
const char *engine_reading_reason(const struct engine *e, const struct engine_reading *r,
				  char *buf, size_t len);

static inline int engine_open(struct engine *e, enum engine_pmu pmu, int target,
			      const struct engine_event *events, size_t n,
			      struct engine_group **ret_group, char *err, size_t errlen)
{
	return e->ops->open(e->ctx, pmu, target, events, n, ret_group, err, errlen);
}

static inline int engine_read(struct engine *e, struct engine_group *g,
			      struct engine_reading *readings)
{
	return e->ops->read(e->ctx, g, readings);
}

static inline int engine_close(struct engine *e, struct engine_group *g, unsigned *ret_failed)
{
	return e->ops->close(e->ctx, g, ret_failed);
}

/* The boxes of pmu per package (die) that e can open: engine_ops n_boxes, 1 without one. */
static inline int engine_n_boxes(struct engine *e, enum engine_pmu pmu)
{
	return e->ops->n_boxes ? e->ops->n_boxes(e->ctx, pmu) : 1;
}

static inline void engine_destroy(struct engine *e)
{
	if (e->ops)
		e->ops->destroy(e->ctx);
	e->ops = NULL;
}

/*
 * Registers left unrestored, process-wide (engine_left.c): what a closed
 * group could not give back because its CPU was offline, and what crash
 * recovery could not reach.  Only the msr engine leaves any (the kernel
 * puts perf's back); the sampler tries them again when a CPU comes online,
 * through these two calls, without knowing which engine left them.
 */
struct hw;

/* What engine_finish_left settled. */
struct engine_left_result {
	unsigned settled;        /* registers settled by this try */
	unsigned restored;       /* of those tried on the hardware, put back */
	unsigned taken_over;     /* left to the agent that took them over */
	size_t remaining;        /* still left unrestored after the try */
};

/* How many registers are left unrestored now. */
size_t engine_left_count(void);

/*
 * Try every register left unrestored again on hw (a CPU came back
 * online): each is put back if it still holds what uncored wrote, or left
 * to the agent that took it over; those still out of reach stay.  Fills
 * *ret (never NULL) and returns ret->settled.
 */
unsigned engine_finish_left(struct hw *hw, struct engine_left_result *ret);

#endif
