/*
 * The registers the msr engine may program: one entry per PMU it drives,
 * at fixed MSR addresses (msr.h), with the bits of each shared register
 * uncored may set and the select bits that never read back as written.
 * This table is the only list of them: the engine takes every address it
 * writes from here, and crash recovery (recovery.c) accepts a state-file
 * record only for a register listed here, and reads registers back by the
 * same rules.
 */
#ifndef UNCORED_MSR_LAYOUT_H
#define UNCORED_MSR_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One PMU's registers.  An address of 0 means the PMU has no such register. */
struct msr_layout {
	const char *name;          /* for messages and tests: "core", "pcu-hsx", ... */
	bool uncore;               /* package (PCU: die) scope, reached through one CPU */
	bool pcu;                  /* a server PCU box: PCU select layout, no gate */
	uint32_t sel0, ctr0;       /* the GP event selects and counters */
	uint32_t ctr_alias0;       /* the GP counters' full-width write alias (IA32_A_PMCx) */
	unsigned max_gp;           /* GP counters the engine may use */
	unsigned gp_width;         /* their width in bits; 0: from CPUID leaf 0xa */
	uint32_t fixed_ctrl, fixed_ctr0;
	unsigned max_fixed;        /* fixed counters the engine may use */
	unsigned fixed_width;      /* 0: from CPUID leaf 0xa */
	uint32_t global;           /* the gate register */
	uint32_t box_ctl;          /* read each sample, never written (the PCU's) */
	uint64_t global_shared;    /* gate bits uncored may set (shared register) */
	uint64_t fixed_ctrl_shared;    /* fixed-control bits uncored may set (shared) */
	uint64_t fixed_field0;     /* fixed counter 0's field of the fixed control ... */
	unsigned fixed_stride;     /* ... and how far counter i's is shifted per i */
	bool fixed_ctrl_owned_too; /* earlier versions owned fixed_ctrl as a whole */
	uint64_t sel_write_only;   /* select bits that take effect when written and read 0 */
	bool counts_kept;          /* the kernel clears a select but never writes the counter: a
				      count found after another agent cleared our enable is
				      still ours (NHM/WSM uncore, hardware-linux.md §6) */
};

/* The PMUs of the table. */
extern const struct msr_layout msr_layout_core;        /* architectural core PMU */
extern const struct msr_layout msr_layout_nhm_uncore;  /* Nehalem/Westmere uncore, 0x391... */

/*
 * The server PCU box whose select 0, counter 0 and BOX_CTL are at these
 * addresses (a generation's, xeon_uncore.h), or NULL when the table has
 * no such box: the engine does not program it.
 */
const struct msr_layout *msr_layout_pcu(uint32_t ctl0, uint32_t ctr0, uint32_t box_ctl);

/*
 * Fixed counter i's field of the fixed control (msr_layout.fixed_ctrl):
 * the bits that configure it, of which uncored sets the enable bits.
 */
uint64_t msr_layout_fixed_field(const struct msr_layout *l, unsigned i);

/* Fixed counter i's enable bit in the gate register (msr_layout.global). */
uint64_t msr_layout_fixed_gate(unsigned i);

/* What the table says of one register. */
struct msr_reg {
	const struct msr_layout *layout;
	bool shared;               /* a shared control register: uncored sets only shared_bits */
	uint64_t shared_bits;
	bool owned_too;            /* shared, but owned as a whole by earlier versions */
	uint64_t write_only;       /* bits that read back 0 whatever was written */
};

/*
 * Whether msr is a register of the table (in any PMU's range, for as many
 * counters as the engine may use), filling *ret_reg.  False for every
 * other register: the engine never writes it.
 */
bool msr_layout_reg(uint32_t msr, struct msr_reg *ret_reg);

#endif
