/*
 * The ledger's state file: a journal of every register uncored changed, so
 * that a daemon restarted after being killed (SIGKILL, a crash) can tell
 * its own leftover programming from another agent's and undo it.
 *
 * The file is a text journal, one record per line, appended before each
 * register write it describes.  It protects against the process dying,
 * not the machine: after a reboot every MSR is back at its power-on value
 * and /run is empty anyway, so appends are not fsync'ed.  A clean stop
 * empties the file.  The open file is locked (flock) for the daemon's
 * lifetime, so a second uncored using the same file neither recovers nor
 * journals.
 */
#ifndef UNCORED_LEDGER_FILE_H
#define UNCORED_LEDGER_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw.h"

struct ledger_file;

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
	unsigned failed;       /* registers that could not be read or written */
};

/*
 * Open (creating it, mode 0600) and lock the state file at path, for the
 * backend identified by backend_id (the device root; a file written for
 * another backend is discarded unapplied).  If it holds records of a
 * daemon that did not stop cleanly, undo that daemon's changes on hw:
 * registers that still hold exactly what it wrote get their original
 * value back, bits it set that are still set are cleared, and counters it
 * only remembered get their original value on CPUs where nothing of it was
 * taken over; registers that hold something else belong to another agent
 * now and are left alone.  The file is then emptied and journals this run.
 * Returns 0 with *ret_lf and *ret_rec filled; -EBUSY when another live
 * process holds the lock; -EBADMSG when the file is not an uncored state
 * file (left untouched); or another negative errno from the file system.
 * On error err holds a sentence and nothing was written to hw.
 */
int ledger_file_open(const char *path, const char *backend_id, struct hw *hw,
		     struct ledger_file **ret_lf, struct ledger_recovery *ret_rec,
		     char *err, size_t errlen);

/*
 * Append one record with a single write(2).  Returns 0 or a negative errno;
 * after a failure the journal is incomplete and the error is sticky.
 */
int ledger_file_append(struct ledger_file *lf, const struct ledger_record *r);

/*
 * Replace the journal by the n records in r (the live state), as one write
 * after emptying the file.  Returns 0 or a negative errno.
 */
int ledger_file_rewrite(struct ledger_file *lf, const struct ledger_record *r, size_t n);

/* Bytes of records in the journal now. */
size_t ledger_file_size(const struct ledger_file *lf);

/* First error of an append or rewrite since open, 0 if none. */
int ledger_file_error(const struct ledger_file *lf);

/*
 * After a clean stop (every register restored): empty the file, try to
 * remove it (which fails harmlessly once privileges are dropped: an empty
 * file means nothing to recover), unlock and free.  NULL is allowed.
 */
void ledger_file_close(struct ledger_file *lf);

#endif
