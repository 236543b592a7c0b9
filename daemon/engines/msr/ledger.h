/*
 * The ledger of PMU registers uncored changed.  Which counter is free is
 * the msr engine's decision (engine_msr.h, the only place the ownership
 * rule lives); every register it changes goes through a ledger that
 * remembers the value found, and ledger_restore() puts everything back:
 * registers uncored owns get their original value, shared control
 * registers get exactly uncored's bits cleared so bits other agents set
 * meanwhile survive.  It decides neither what to count nor who owns a
 * counter.  Non-logging: errors are returned.
 */
#ifndef UNCORED_LEDGER_H
#define UNCORED_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include "hw.h"

struct ledger;
struct state_file;
struct ledger_record;
struct ledger_recovery;

/*
 * Journal every ledger's changes to lf from now on (state_file.h), each
 * before the register write it describes; NULL stops journaling.  The
 * journal is process-wide and is rewritten at once with the state of every
 * live ledger.  A change the journal cannot record is not made: ledger_write,
 * ledger_set_bits and ledger_remember then return the journal's error and leave
 * register and ledger as they were.  Undoing (ledger_clear_bits, ledger_release,
 * ledger_forget*, ledger_restore) goes ahead whatever the journal says.  The first
 * error is kept in lf (state_file_error).  Ledgers are used from one thread
 * at a time (the sampler's), and so is this.
 */
void ledger_set_journal(struct state_file *lf);

/* Whether the register changes of this process are journaled (ledger_journal_state). */
enum ledger_journal {
	LEDGER_JOURNAL_UNSET,   /* none asked for: a simulated machine, a test */
	LEDGER_JOURNAL_UP,      /* ledger_set_journal: every change journaled first */
	LEDGER_JOURNAL_DOWN,    /* required but not set up: no change is made */
	LEDGER_JOURNAL_NONE,    /* state_file = none: changes made unjournaled */
};

/*
 * Run without a journal.  err < 0: the state file could not be set up
 * (-ENOSPC, -EFBIG, ...), so no register is programmed at all: from now on
 * ledger_write, ledger_set_bits and ledger_remember return err (ledger_hint
 * explains it) and change nothing, while undoing still works.  err == 0:
 * the journal was turned off on purpose (state_file = none) and changes are
 * made unjournaled, so a crash leaves them for no one to clean up.
 */
void ledger_set_no_journal(int err);

/* What ledger_set_journal or ledger_set_no_journal last decided. */
enum ledger_journal ledger_journal_state(void);

/*
 * hw_hint() for an error a pmu function returned, except that an error the
 * journal returned is explained as such ("the state file cannot record the
 * change (...)").  The text is valid until the next call.
 */
const char *ledger_hint(int err, enum hw_op op);

/* An empty ledger, or NULL on ENOMEM. */
struct ledger *ledger_new(void);

/* Free the ledger without restoring anything. NULL is allowed. */
void ledger_free(struct ledger *l);

/*
 * Write value to (cpu, msr), a register uncored owns from now on (an event
 * select or a counter).  The first time, the value found is read and
 * remembered.  Returns 0 or a negative errno from the read or the write.
 */
int ledger_write(struct ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t value);

/*
 * Read-modify-write a shared control register: set the bits in set_bits
 * that were clear, remembering them as uncored's.  Other bits are left as
 * they are.  Returns 0 or a negative errno.
 */
int ledger_set_bits(struct ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t set_bits);

/*
 * Clear bits uncored set earlier with ledger_set_bits (a subset of them) and
 * forget them.  Returns 0 or a negative errno.
 */
int ledger_clear_bits(struct ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t bits);

/* The value uncored last wrote to an owned register; false if not owned. */
bool ledger_written(const struct ledger *l, int cpu, uint32_t msr, uint64_t *ret_value);

/*
 * Forget an owned register and write back its original value (a yielded
 * counter).  Returns 0 or a negative errno; the entry is forgotten anyway.
 */
int ledger_release(struct ledger *l, struct hw *hw, int cpu, uint32_t msr);

/*
 * Take (cpu, msr) as owned without writing it: the value found is read and
 * remembered, so ledger_restore() writes it back.  For a register that changes
 * as a side effect of another write (a counter zeroed by OCC_CTR_RST, a
 * counter uncored enables).  Nothing happens if it is owned already.
 * Returns 0 or a negative errno from the read.
 */
int ledger_remember(struct ledger *l, struct hw *hw, int cpu, uint32_t msr);

/*
 * Forget an owned register without writing anything: another agent has
 * taken it and it is theirs now.  Returns 0, or -ENOENT if not owned.
 */
int ledger_forget(struct ledger *l, int cpu, uint32_t msr);

/*
 * Stop treating bits of a shared register as uncored's without writing
 * anything (another agent set them again for its own use).  Bits uncored
 * did not set are ignored.  Returns 0, or -ENOENT if none of them were.
 */
int ledger_forget_bits(struct ledger *l, int cpu, uint32_t msr, uint64_t bits);

/* The bits of shared register (cpu, msr) uncored set and still holds; 0 when none. */
uint64_t ledger_bits(const struct ledger *l, int cpu, uint32_t msr);

/* Number of registers the ledger holds (owned plus shared). */
unsigned ledger_count(const struct ledger *l);

/*
 * Restore everything, in reverse order of first change: shared registers
 * first get uncored's bits cleared, then owned registers their original
 * value.  Continues past errors; returns 0 or the first negative errno and
 * counts failures in *ret_failed (may be NULL).  The ledger is empty after:
 * a register that could not be restored (its CPU is offline, say) is kept
 * process-wide as left unrestored (ledger_left), and stays in the journal.
 */
int ledger_restore(struct ledger *l, struct hw *hw, unsigned *ret_failed);

/*
 * The registers left unrestored: what ledger_restore could not put back, and
 * what the state file's recovery could not (state_file_left, taken over
 * by ledger_set_journal).  Returns how many, with their records and each
 * one's last negative errno (ret_errs may be NULL).  Valid until the next
 * pmu call.
 */
size_t ledger_left(const struct ledger_record **ret_records, const int **ret_errs);

/*
 * Try the registers left unrestored again (a CPU came back online), by
 * the rule for registers whose ledger is gone (recovery_undo): each is put
 * back if it still holds what uncored wrote, or left to the agent that
 * took it over.  Those that still cannot be reached stay.  A register a
 * live ledger has taken meanwhile is settled by giving that ledger the
 * older original value (or the bits), so its restore puts back the value
 * found first.  Returns how many were settled, with the details of those
 * tried on the hardware in *ret_rec (may be NULL); the journal is
 * rewritten when any was.
 */
unsigned ledger_finish_left(struct hw *hw, struct ledger_recovery *ret_rec);

/* Forget every register left unrestored without writing anything (tests). */
void ledger_forget_left(void);

/*
 * Move every entry recorded for from_cpu to to_cpu (package-scope registers
 * now reached through another CPU of the same socket).  Nothing is read or
 * written.  If to_cpu already has an entry for the same register, the
 * older one is kept (its original value) and shared bits are merged.
 */
void ledger_move_cpu(struct ledger *l, int from_cpu, int to_cpu);

#endif
