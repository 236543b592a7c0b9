/*
 * Which counter engine a PMU collector counts with (engine.h), and why.
 *
 * The choice weighs the collector's engine key (engine = auto, perf or
 * msr in its section) against what the kernel behind hw->perf has
 * (engine_probe, engine_build.h):
 *   - msr: the msr engine;
 *   - perf: the perf engine when the kernel has the PMU, else the
 *     collector does not start, with the probe's reason;
 *   - auto, core PMU: perf when the kernel has a core PMU and a trial
 *     open of one of its events succeeds, else msr with the probe's
 *     reason (a virtual machine, a kernel without perf hardware support,
 *     a backend without perf, kernel.perf_event_paranoid above 2 without
 *     CAP_SYS_ADMIN);
 *   - auto, Nehalem/Westmere uncore: msr, the product's own programming
 *     of the uncore; the kernel's "uncore" PMU only when asked for;
 *   - auto, server PCU: perf when the kernel has uncore_pcu, else msr at
 *     the PCU's fixed addresses where the generation has them (the pcu
 *     collector also falls back to msr when the kernel refuses every
 *     event of a uncore_pcu that sysfs lists);
 *   - the iMC, and the PCU from Sapphire Rapids on, have no msr path: a
 *     kernel without their PMUs means the facility is missing (not
 *     applicable); a kernel that refuses the trial open leaves the
 *     collector down with the reason.
 * Collectors choose at start, and start-up asks the same question to
 * decide which privilege the hardware side keeps (collector_ops
 * uses_perf, asked by main.c).  This module
 * does not log; the sampler logs the choice once per collector start.
 */
#ifndef UNCORED_COL_ENGINE_H
#define UNCORED_COL_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "collector.h"
#include "conf.h"
#include "engine.h"
#include "perf_sys.h"

struct col_engine_choice {
	enum engine_kind kind;              /* ENGINE_PERF or ENGINE_MSR */
	char why[COLLECTOR_TEXT_MAX];       /* the operator's sentence, without a final period */
};

/*
 * Choose for pmu, given the configured want (the engine key of
 * [section], named in the reasons) and the kernel's perf interface ps
 * (NULL: the backend has none).  0 with *ret filled, or
 * -ENODEV (or the probe's negative errno) when want is perf and the
 * kernel cannot give it: ret->why then says why, for the collector's
 * refusal.
 */
int col_engine_choose(enum conf_engine want, enum engine_pmu pmu, const char *section,
		      struct perf_sys *ps, struct col_engine_choice *ret);

/*
 * Choose for c (its hw->perf) as above and build the engine into
 * *ret_engine (engine_build.h, on c's hw and topology; policy, the
 * collector's on_conflict, for the msr engine).  Where the msr engine cannot count pmu on c's CPU
 * (engine_msr_reaches), a kernel without the PMU refuses the collector
 * with -ENOTSUP (not applicable) under auto, and -ENODEV when engine =
 * msr.  Records the engine and its reason in c (collector.h: c->engine,
 * c->engine_why).  On failure the collector is refused with the reason
 * (collector_refuse) and a negative errno is returned: -ENODEV when perf
 * was asked for and is not there, -ENOMEM, or the perf engine's error.
 */
int col_engine_open(struct collector *c, enum conf_engine want, enum engine_pmu pmu,
		    const char *section, enum conf_conflict_policy policy,
		    struct engine *ret_engine);

/*
 * Record kind in c->engine and build that engine for c into *ret_engine,
 * as col_engine_open does once it has chosen (the caller writes
 * c->engine_why).  For a collector that changes its engine while it starts
 * (the PCU's fall back to msr).  0, or a negative errno with err set.
 */
int col_engine_new(struct collector *c, enum engine_kind kind, enum conf_conflict_policy policy,
		   struct engine *ret_engine, char *err, size_t errlen);

/* What reading a group gave for an interval (col_engine_read). */
enum col_engine_read {
	COL_ENGINE_COUNTED,      /* its readings hold the interval's counts */
	COL_ENGINE_WAITS,        /* perf has not put it on the counters yet: nothing to add, no error */
	COL_ENGINE_LOST,         /* an error (counted in c->errors, the reason in why): nothing */
};

/*
 * Read group g of c's engine e into r (one reading per member, the leader
 * first) and say what the interval gave.  A read that fails is lost.
 * Under perf, a group not put on the counters in an interval waits its
 * turn, which perf's rotation gives it within milliseconds (its PMU's
 * perf_event_mux_interval_ms), as in the first samples just after the
 * open: the unit it counts in still counts.  Waiting half of c's sampling
 * interval or more, another user holds the counters (hardware-linux.md
 * §4.5 item 6): lost.  *waiting_ns, the caller's for the group (0 at
 * open), adds up the wait and is cleared when the group counts.  A lost
 * group's reason goes to why (whylen bytes) unless it holds one already,
 * so that a unit of several groups keeps its first.
 */
enum col_engine_read col_engine_read(struct collector *c, struct engine *e, struct engine_group *g,
				     struct engine_reading *r, uint64_t *waiting_ns, char *why,
				     size_t whylen);

/*
 * Count a group the caller finds lost after col_engine_read (an error in
 * c->errors), with its reason text in why unless it holds one already.
 */
void col_engine_lost(struct collector *c, char *why, size_t whylen, const char *text);

/*
 * Say in c's status that n of its of units (what: "PCU boxes", "memory
 * channels") were not read this interval, with why, the first one's
 * reason; or, with n 0, that every one was (the note goes).
 */
void col_engine_note_unread(struct collector *c, unsigned n, unsigned of, const char *what,
			    const char *why);

#endif
