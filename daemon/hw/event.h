/*
 * Performance events: the config grammar, the built-in tables and the
 * PERFEVTSEL encodings.  Pure: no I/O, no globals beyond const tables.
 *
 * Grammar of one event line (SPEC §7):
 *   NAME                                       a built-in event by name
 *   NAME, event=0xNN, umask=0xNN[, edge][, cmask=N][, inv]
 */
#ifndef UNCORED_EVENT_H
#define UNCORED_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

#define EVENT_NAME_MAX 48

/*
 * Built-in uncore events that other modules follow by name: throttle
 * episodes, the --once table and the history chart.  The one place these
 * names are spelled outside the built-in table.
 */
#define EVENT_DRAM_THERMAL_THROTTLED "dram_thermal_throttled_cycles"
#define EVENT_PROCHOT_ASSERTIONS "prochot_assertions"

enum event_pmu {
	EVENT_PMU_UNCORE,   /* Nehalem/Westmere MSR_UNCORE_PERFEVTSELx */
	EVENT_PMU_CORE,     /* IA32_PERFEVTSELx */
	EVENT_PMU_AMD_CORE, /* AMD PERF_CTLn, through perf (hardware-amd.md §3.3); [core]
			       event lines name these as EVENT_PMU_CORE built-ins too */
};

struct event_spec {
	char name[EVENT_NAME_MAX];   /* [a-z0-9_], starts with a letter */
	uint8_t code;                /* event select */
	uint8_t umask;
	bool edge;
	bool inv;
	uint8_t cmask;
	bool needs_uncore_thermal;   /* built-in Westmere thermal event (absent on Nehalem) */
	unsigned arch_event;         /* core built-ins: CPUID.0AH:EBX bit + 1, 0 = not architectural */
};

/*
 * Parse one event line for pmu.  A bare name must be a built-in of that
 * pmu.  Returns 0, or -EINVAL with what was wrong and what was expected in
 * err (for example "umask: expected 0x00..0xff, got '0x100'").
 */
int event_parse(enum event_pmu pmu, const char *line, struct event_spec *ret_spec,
		char *err, size_t errlen);

/*
 * The built-in event called name for pmu, or NULL.  For EVENT_PMU_CORE a
 * name only AMD's table has (l2_cache_requests, ...) gives AMD's built-in, so
 * that one [core] section serves both vendors; the core collector counts
 * the built-in of its own CPU's vendor by name (event_builtin_own).
 */
const struct event_spec *event_builtin(enum event_pmu pmu, const char *name);

/* The built-in event called name in pmu's own table only, or NULL. */
const struct event_spec *event_builtin_own(enum event_pmu pmu, const char *name);

/* All built-ins of pmu; *ret_n gets their number. */
const struct event_spec *event_builtins(enum event_pmu pmu, size_t *ret_n);

/*
 * The events counted when the config does not turn the defaults off, in
 * counter order.  *ret_n gets their number.  These are pointers into the
 * built-in table.
 */
const struct event_spec *const *event_defaults(enum event_pmu pmu, size_t *ret_n);

/* Whether ev (a built-in of pmu) is one of its defaults. */
bool event_is_default(enum event_pmu pmu, const struct event_spec *ev);

/* "event=0x67 umask=0x01 edge cmask=1" as a config line would give ev; returns buf. */
const char *event_encoding(const struct event_spec *ev, char *buf, size_t len);

/*
 * Write --list-events' list of pmu's built-ins to out, one per line with
 * its encoding, defaults marked, and why_unavailable(ev, arg)'s sentence
 * (NULL: available) after an event this CPU lacks.
 */
void event_list_builtins(enum event_pmu pmu, struct strbuf *out,
			 const char *(*why_unavailable)(const struct event_spec *ev, const void *arg),
			 const void *arg);

/*
 * MSR_UNCORE_PERFEVTSELx value: EN | [INV] | [EDGE] | cmask<<24 | umask<<8 |
 * code, PMI clear (hardware.md §1.4).  OCC_CTR_RST is not included; the
 * collector ORs it in for the first write.
 */
uint64_t event_uncore_evtsel(const struct event_spec *ev);

/* IA32_PERFEVTSELx value: EN | USR | OS | [INV] | [EDGE] | cmask<<24 | umask<<8 | code. */
uint64_t event_core_evtsel(const struct event_spec *ev);

#endif
