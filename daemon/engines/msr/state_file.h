/*
 * The ledger's state file: a journal of every register uncored changed, so
 * that a daemon restarted after being killed (SIGKILL, a crash) can tell
 * its own leftover programming from another agent's and undo it.
 *
 * The file is a text journal, one record per line, each line ending in a
 * CRC-32 of its text, appended before each register write it describes.
 * It protects against the process dying, not the machine: after a reboot
 * every MSR is back at its power-on value and /run is empty anyway.  A
 * rewrite (compaction) first appends the whole live state as one
 * checkpoint, then copies it over the old records and truncates; a kill at
 * any point leaves a complete checkpoint or the old records.  (Not a
 * rename: after the privilege drop the daemon cannot write the directory,
 * which must not be writable by anyone but root.)  A stop that restored
 * everything empties the file; one that could not keeps it
 * (state_file_keep), listing what is left.  Its directory is locked (flock) for the daemon's lifetime, so
 * a second uncored using the same file neither recovers nor journals.
 *
 * The file is trusted only when it is a regular file owned by root (or by
 * the user running uncored), not writable by group or others, in a
 * directory with the same properties; and only registers uncored programs
 * are ever replayed from it.
 */
#ifndef UNCORED_STATE_FILE_H
#define UNCORED_STATE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw.h"

struct state_file;

enum ledger_record_kind {
	LEDGER_OWN,    /* a register uncored owns: original value and what it wrote */
	LEDGER_BITS,   /* a shared register: the bits uncored set and holds now */
	LEDGER_DROP,   /* uncored no longer holds the register (restored or yielded) */
};

/* One journal record; later records for the same (cpu, msr) replace earlier ones. */
struct ledger_record {
	enum ledger_record_kind kind;
	int cpu;
	uint32_t msr;
	uint64_t original;     /* OWN: value found before the first change */
	bool has_written;      /* OWN: false for a register only remembered (a counter) */
	uint64_t written;      /* OWN: value uncored last wrote */
	uint64_t bits;         /* BITS: uncored's bits */
};

/* What start-up recovery did. */
struct ledger_recovery {
	bool found;            /* the file held a dead daemon's records */
	unsigned cleaned;      /* registers restored or bits cleared */
	unsigned left;         /* registers another agent took over, left alone */
	unsigned failed;       /* registers that could not be read or written (their CPU is
				  offline, say): kept in the journal, see state_file_left */
	/* Damage: the file was kept as PATH.damaged when any of these is set. */
	bool header_damaged;   /* the first line was not a valid header; records replayed anyway */
	unsigned damaged;      /* lines that failed their checksum or did not parse */
	unsigned first_damaged_line;
	unsigned refused;      /* valid records naming a register uncored never changes */
	int refused_cpu;       /* the first of them */
	uint32_t refused_msr;
	bool kept;             /* the damaged file was kept as PATH.damaged */
};

/*
 * Whether a record names a register uncored could have changed that way
 * (the PMU registers of msr.h it programs, and for shared registers only
 * the enable bits it sets).  Recovery replays nothing else.
 */
bool ledger_record_allowed(const struct ledger_record *r);

/*
 * Undo the n records v (the last record of every register still held) on
 * hw.  Owned registers are judged first: one that no longer holds what
 * uncored wrote belongs to another agent now and is left alone (counted
 * in rec->left), and marks its CPU as shared, so on that CPU the enable
 * bits and the counters uncored only remembered are left alone too (the
 * other agent may rely on them).  Elsewhere, enable bits still set are
 * cleared first, so nothing counts while the rest is put back.  A register
 * that could not be read or written is counted in rec->failed and its
 * negative errno set in ret_err[i] (may be NULL; 0 for every other
 * record).  Returns 0, or -ENOMEM (every record then counted as failed).
 * This is the rule for every register whose own ledger is gone: a killed
 * daemon's, and one a stop could not restore (ledger_finish_left).
 */
int ledger_undo(struct hw *hw, const struct ledger_record *v, size_t n,
		struct ledger_recovery *rec, int *ret_err);

/*
 * Open (creating it, mode 0600) and lock the state file at path, for the
 * backend identified by backend_id (the device root; a file written for
 * another backend is discarded unapplied).  If it holds records of a
 * daemon that did not stop cleanly, undo that daemon's changes on hw:
 * registers that still hold exactly what it wrote get their original
 * value back, bits it set that are still set are cleared, and counters it
 * only remembered get their original value on CPUs where nothing of it was
 * taken over; registers that hold something else belong to another agent
 * now and are left alone (ledger_undo).  The file is then emptied and
 * journals this run; the records recovery could not apply (their CPU is
 * offline) are journaled again first, and listed by state_file_left.
 * Damaged lines and refused records are counted in *ret_rec and the file
 * is kept as PATH.damaged before a fresh journal starts; records after
 * them are still replayed.  Returns 0 with *ret_lf and *ret_rec filled;
 * -EBUSY when another live process holds the lock; -EPERM when the file or
 * its directory is not trusted (owner, mode, type; left untouched);
 * -EBADMSG when the file is not an uncored state file at all (left
 * untouched); or another negative errno from the file system.  On error
 * err holds a sentence and nothing was written to hw.
 */
int state_file_open(const char *path, const char *backend_id, struct hw *hw,
		     struct state_file **ret_lf, struct ledger_recovery *ret_rec,
		     char *err, size_t errlen);

/*
 * Check, without creating, opening or locking anything, what
 * state_file_open would check of path: its directory is a directory
 * owned by root (or this user) and not writable by group or others, or is
 * missing and can be created in such a directory; path, if it exists and
 * is not a symbolic link, is a regular file with the same properties.
 * Returns 0, or a negative errno with a sentence in err.
 */
int state_file_check_path(const char *path, char *err, size_t errlen);

/*
 * Append one record with a single write(2).  Returns 0 or a negative errno
 * (ENOSPC, EFBIG, ...); after a failure the file is cut back to what it
 * held before, so the journal stays exactly the records that succeeded.
 */
int state_file_append(struct state_file *lf, const struct ledger_record *r);

/*
 * Replace the journal by the n records in r (the live state), crash-safe
 * (see the top of this file); each step is fdatasync'ed.  Returns 0 or a
 * negative errno; after a failure the journal still describes the state.
 */
int state_file_rewrite(struct state_file *lf, const struct ledger_record *r, size_t n);

/* Bytes of records in the journal now. */
size_t state_file_size(const struct state_file *lf);

/* First error of an append or rewrite since open, 0 if none. */
int state_file_error(const struct state_file *lf);

/*
 * Test seam: called between the steps of a rewrite (1: checkpoint
 * appended, 2: checkpoint copied to the front, 3: file truncated) so a
 * test can kill the process there.  NULL (the default) in the daemon.
 */
extern void (*state_file_rewrite_hook)(int step);

/*
 * The records recovery could not apply at open, and each one's negative
 * errno (ret_errs may be NULL).  Valid until state_file_close/keep.
 */
size_t state_file_left(const struct state_file *lf, const struct ledger_record **ret_records,
			const int **ret_errs);

/*
 * After a stop that left registers unrestored: keep the file as it is (it
 * lists them, so the next start finishes the job), sync it, unlock and
 * free.  NULL is allowed.
 */
void state_file_keep(struct state_file *lf);

/*
 * After a clean stop (every register restored): empty the file, try to
 * remove it (which fails harmlessly once privileges are dropped: an empty
 * file means nothing to recover), unlock and free.  NULL is allowed.
 */
void state_file_close(struct state_file *lf);

#endif
