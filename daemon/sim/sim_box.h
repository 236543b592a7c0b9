/*
 * The server uncore boxes of the simulated machine (internal to daemon/sim/):
 * one PCU box per socket and n_imc memory channels per socket, for models
 * whose family/model has a generation in sim_facts.h.  Their events count the
 * box's clock cycles while a condition of the machine model holds:
 *   PCU (pclk): clockticks always; PROCHOT external while the socket's
 *   PROCHOT# is asserted (prochot rules); PROCHOT internal while a core of
 *   the socket is at or above TjMax; FREQ_MAX_LIMIT_THERMAL while a core
 *   of the socket is throttled; FREQ_MAX_POWER while the package power
 *   limit throttles (power-limit rules, domain package);
 *   iMC (dclk, per channel): clockticks always (the DCLK event and the
 *   fixed counter, config 0xff); a throttle event of cause thermal
 *   (Granite Rapids' MR4BLKEN) while a dram-throttle or dram-critical rule
 *   covers the channel, of cause power (RAPLBLK) while the socket's DRAM
 *   power limit holds, of cause thermal_or_power (POWER_THROTTLE_CYCLES
 *   before Granite Rapids) while either holds; a critical-throttle event
 *   while a dram-critical rule covers the channel.  Per-slot events (Ice
 *   Lake-SP, Sapphire Rapids) count alike for every slot of the channel.
 *   While a package-sleep rule covers the socket (package C3/C6) the iMC
 *   has no clock (hardware-linux.md §6): the clock and every iMC event
 *   stop, whatever else holds; the rate is the same when it runs again.
 *   A channel the kernel registers without memory behind it (on Ice
 *   Lake-SP the third channel of each controller, which current kernels
 *   register and which reads 0 when unused, sim_facts.c) counts nothing,
 *   its clock included, whatever the rules say.
 * The PCU box is also a register file at the generation's MSR addresses
 * (hardware-linux.md §4.1) where it has them: BOX_CTL (FRZ stops every
 * counter; RST_CTRL and RST_CTRS clear the controls and the counters and
 * read back 0), CTL0-3 (EN counts; RST, bit 17, clears the counter and
 * reads back 0), FILTER (stored, no effect), STATUS (reads 0), CTR0-3
 * (48 bits).  The kernel's perf counts these events from the same machine
 * model (sim_box_count), not through the registers: in the simulator a
 * raw-MSR user of the PCU box and perf do not disturb each other.
 *
 * A die may have several PCU boxes (sim_model n_pcu: Granite Rapids' one
 * per compute die, the kernel's uncore_pcu_N); each counts clockticks, and
 * only the last of a die counts the conditions above, the others 0: which
 * instance carries PROCHOT on Granite Rapids is unconfirmed
 * (hardware-linux.md §6), so the simulator picks the one a reader that
 * looks only at the first would miss.  Only the first has registers.
 *
 * Simulator's choices: pclk 1 GHz, dclk 1.2 GHz (constant; §4.4 says both
 * are constant-rate and not to hard-code them); event selects other than
 * the listed codes count nothing; EDGE, INV, the threshold and the
 * occupancy fields are ignored.
 */
#ifndef UNCORED_SIM_BOX_H
#define UNCORED_SIM_BOX_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_model.h"
#include "sim_scenario.h"
#include "sim_facts.h"

#define SIM_PCLK_HZ INT64_C(1000000000)
#define SIM_DCLK_HZ INT64_C(1200000000)

/*
 * Boxes exist per uncore unit, one per die: unit = socket * dies + die
 * (sim_model_unit()).  Every "socket" argument below is such a unit; on a
 * single-die package it is the socket.  Scenario rules name sockets: a
 * rule of socket S covers every die of S (and channel C of each).
 */
enum sim_box_kind {
	SIM_BOX_PCU,
	SIM_BOX_IMC,
};

struct sim_boxes;

/*
 * The boxes of model m, or *ret NULL when the model has none.  The
 * conditions are borrowed per socket with sim_boxes_set_socket; the
 * channel timelines are built here from scn.  0 or -ENOMEM.
 */
int sim_boxes_new(const struct sim_model *m, const struct sim_scenario *scn,
		  struct sim_boxes **ret);

void sim_boxes_free(struct sim_boxes *b);

/*
 * The machine conditions of socket, for every die of it (borrowed; they
 * outlive b): the PCU's
 * by enum sim_pcu_cond, and dram_power, while the socket's DRAM power
 * limit holds (power-limit rules, domain dram).  0 or -ENOMEM.
 */
int sim_boxes_set_socket(struct sim_boxes *b, int socket,
			 const struct sim_timeline *pcu_cond[SIM_PCU_N_CONDS],
			 const struct sim_timeline *dram_power, int64_t period);

/* The generation's table (never NULL for a b that exists). */
const struct sim_uncore_gen *sim_boxes_uncore(const struct sim_boxes *b);

/* Whether msr is one of the PCU box's registers (always false without PCU MSRs). */
bool sim_boxes_has_msr(const struct sim_boxes *b, uint32_t msr);

/* Read or write PCU register msr of socket's box at t; -EIO for a read-only one written. */
int sim_boxes_read(struct sim_boxes *b, int socket, uint32_t msr, int64_t t, uint64_t *ret);
int sim_boxes_write(struct sim_boxes *b, int socket, uint32_t msr, int64_t t, uint64_t value);

/* Call fn for every readable PCU register of socket's box, in address order. */
void sim_boxes_dump(struct sim_boxes *b, int socket, int64_t t,
		    void (*fn)(void *arg, uint32_t msr, uint64_t value), void *arg);

/*
 * How many times the event config (perf attr.config: event | umask << 8)
 * of box kind (index = the channel for SIM_BOX_IMC, the PCU instance of
 * the die for SIM_BOX_PCU) of
 * socket occurred in [0, t).  -ENOENT when there is no such box or the
 * model generates no such event.
 */
int sim_boxes_count(const struct sim_boxes *b, enum sim_box_kind kind, int socket, int index,
		    uint64_t config, int64_t t, uint64_t *ret);

/* The number of iMC channels per socket. */
int sim_boxes_n_imc(const struct sim_boxes *b);

#endif
