/*
 * Crash recovery for the msr engine: which state-file records it accepts
 * (the registers it programs) and how it puts back registers whose own
 * ledger is gone, a killed daemon's or those a stop could not reach.  The
 * state file (state_file.h) only reads and writes the records.
 */
#ifndef UNCORED_RECOVERY_H
#define UNCORED_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>

#include "hw.h"
#include "state_file.h"

/*
 * Whether a record names a register uncored could have changed that way:
 * a register of the msr engine's table (msr_layout.h, the PCU boxes
 * included), and for a shared register only the bits the table lets
 * uncored set.  Recovery replays nothing else.
 */
bool recovery_allowed(const struct ledger_record *r);

/*
 * Undo the n records v (the last record of every register still held) on
 * hw.  Owned registers are judged first: one that no longer holds what
 * uncored wrote belongs to another agent now and is left alone (counted
 * in rec->left), and marks its CPU as shared, so on that CPU the enable
 * bits and the counters uncored only remembered are left alone too (the
 * other agent may rely on them).  A fixed counter's field of the fixed
 * control is uncored's only while it holds exactly the bits uncored set
 * there: otherwise another agent took that counter over, and its field,
 * its gate bit and the counter are left (counted in rec->left).
 * Elsewhere, enable bits still set are cleared first, so nothing counts
 * while the rest is put back.  A register
 * that could not be read or written is counted in rec->failed and its
 * negative errno set in ret_err[i] (may be NULL; 0 for every other
 * record).  Returns 0, or -ENOMEM (every record then counted as failed).
 * This is the rule for every register whose own ledger is gone: a killed
 * daemon's, and one a stop could not restore (ledger_finish_left).
 */
int recovery_undo(struct hw *hw, const struct ledger_record *v, size_t n,
		  struct ledger_recovery *rec, int *ret_err);

/*
 * Open and lock the state file at path (state_file_open, accepting the
 * records recovery_allowed accepts) and, if it holds records of a daemon
 * that did not stop cleanly, undo that daemon's changes on hw
 * (recovery_undo): registers that still hold exactly what it wrote get
 * their original value back, bits it set that are still set are cleared,
 * and counters it only remembered get their original value on CPUs where
 * nothing of it was taken over; registers that hold something else belong
 * to another agent now and are left alone.  The file is then emptied and
 * journals this run (state_file_begin); the records recovery could not
 * apply (their CPU is offline) are journaled again first, and listed by
 * state_file_left.  Damaged lines and refused records are counted in
 * *ret_rec and the file is kept as PATH.damaged.  Returns 0 with *ret_lf
 * and *ret_rec filled, or state_file_open's errors (-EBUSY, -EPERM,
 * -EBADMSG, another negative errno) with a sentence in err; on those
 * nothing was written to hw.
 */
int recovery_open(const char *path, const char *backend_id, struct hw *hw,
		  struct state_file **ret_lf, struct ledger_recovery *ret_rec,
		  char *err, size_t errlen);

#endif
