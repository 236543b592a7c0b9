/*
 * The throttling facilities of the server uncore, generation by
 * generation (hardware-linux.md §4): where the PCU box is reachable
 * through the msr driver, the PCU event codes, and the memory
 * controller's clock and throttle events.  Pure data, chosen by exact
 * family and model; the collectors (col_pcu.c, col_imc.c) and the
 * simulator read it.
 *
 * Every code here is a perf attr.config of the uncore_pcu and
 * uncore_imc_N PMUs (event | umask << 8) and, for the PCU, the event
 * select field of the PCU control registers.
 */
#ifndef UNCORED_XEON_UNCORE_H
#define UNCORED_XEON_UNCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The PCU events uncored counts (§4.2), in group order. */
enum xeon_pcu_event {
	XEON_PCU_CLOCKTICKS,           /* UNC_P_CLOCKTICKS: pclk, constant rate */
	XEON_PCU_PROCHOT_EXTERNAL,     /* UNC_P_PROCHOT_EXTERNAL_CYCLES */
	XEON_PCU_PROCHOT_INTERNAL,     /* UNC_P_PROCHOT_INTERNAL_CYCLES */
	XEON_PCU_FREQ_THERMAL,         /* UNC_P_FREQ_MAX_LIMIT_THERMAL_CYCLES */
	XEON_PCU_FREQ_POWER,           /* UNC_P_FREQ_MAX_POWER_CYCLES */
	XEON_PCU_N_EVENTS,
};

#define XEON_NO_EVENT (-1)

/* The PCU box's MSR addresses (§4.1). */
struct xeon_pcu_msr {
	uint32_t box_ctl, ctl0, filter, status, ctr0;
};

/* What an iMC throttle event can tell about its cause (§4.5 item 3). */
enum xeon_dram_cause {
	XEON_CAUSE_THERMAL,
	XEON_CAUSE_POWER,
	XEON_CAUSE_THERMAL_OR_POWER,
};

/* The cause label value: "thermal", "power" or "thermal_or_power". */
const char *xeon_dram_cause_name(enum xeon_dram_cause cause);

/* One iMC throttle event of a channel (§4.3). */
struct xeon_imc_event {
	const char *name;              /* the raw event's label, e.g. "power_throttle_cycles" */
	uint8_t code, umask;
	bool critical;                 /* a critical-throttle event */
	enum xeon_dram_cause cause;
	bool per_slot;                 /* counts one DIMM slot of the channel (ICX … EMR; GNR critical) */
	uint8_t slot;                  /* which, when per_slot */
};

struct xeon_uncore {
	const char *generation;        /* "skylake-sp", for messages */
	/* The PCU box through the msr driver; NULL where only perf reaches it (SPR+). */
	const struct xeon_pcu_msr *pcu_msr;
	/* Event code of each enum xeon_pcu_event, XEON_NO_EVENT where the generation lacks it. */
	int pcu_code[XEON_PCU_N_EVENTS];
	/* The channel's own DCLK event (0xff: the iMC fixed counter, config 0xff). */
	uint8_t imc_clock_code, imc_clock_umask;
	/* Throttle events per channel; none where uncored does not count them yet. */
	const struct xeon_imc_event *imc_events;
	size_t n_imc_events;
};

/*
 * The facilities of Intel family 6 display model model, or NULL for a
 * model without a server PCU (client parts, Nehalem/Westmere: the 0x3c0
 * uncore of col_uncore.c).
 */
const struct xeon_uncore *xeon_uncore_find(unsigned family, unsigned model);

/*
 * Tests only: from now on xeon_uncore_find() answers u for every model
 * that has a row (NULL: the table again), so that a test can hand the
 * collectors a table with a deliberately wrong fact and see the simulator,
 * which keeps its own facts, disagree.
 */
void xeon_uncore_override(const struct xeon_uncore *u);

#endif
