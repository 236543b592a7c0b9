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
 * (state_file_keep), listing what is left.  The file itself is locked
 * (flock) for the daemon's lifetime, so a second uncored using the same
 * file neither recovers nor journals; being root's and 0600, no other user
 * can open it to take that lock.
 *
 * The file is trusted only when it is a regular file owned by root (or by
 * the user running uncored), not writable by group or others, in a
 * directory with the same properties reached from "/" through no symbolic
 * link and only through directories no other user can change
 * (trusted_dir.h); and only records its reader allows (the registers the
 * msr engine programs, recovery.h) are replayed from it.
 */
#ifndef UNCORED_STATE_FILE_H
#define UNCORED_STATE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * Open (creating it, mode 0600) and lock the state file at path, for the
 * backend identified by backend_id (the device root; a file written for
 * another backend is discarded unapplied), and read what a daemon that
 * did not stop cleanly left in it: the last record of every register it
 * still held, for the caller to undo (recovery.h) and then hand to
 * state_file_begin.  Only records allowed(r) accepts are replayed; the
 * others are counted as refused in *ret_rec, and damaged lines as
 * damaged (records after them are still replayed).  Returns 0 with *ret_lf
 * and *ret_rec filled (ret_rec->found when there were records); -EBUSY
 * when another live process holds the lock; -EPERM when the file or its
 * directory is not trusted (owner, mode, type; left untouched); -EBADMSG
 * when the file is not an uncored state file at all (left untouched); or
 * another negative errno from the file system.  On error err holds a
 * sentence.  Nothing is written to the file until state_file_begin.
 */
int state_file_open(const char *path, const char *backend_id,
		    bool (*allowed)(const struct ledger_record *r), struct state_file **ret_lf,
		    struct ledger_recovery *ret_rec, char *err, size_t errlen);

/*
 * The records state_file_open read: the last record of every register the
 * dead daemon still held.  Valid until state_file_begin.
 */
size_t state_file_found(const struct state_file *lf, const struct ledger_record **ret_records);

/*
 * Start journaling this run, after the records found were undone.  errs
 * (may be NULL when none failed) has one entry per record found: a
 * negative errno for a register that could not be undone (its CPU is
 * offline), 0 otherwise; those records are kept (state_file_left) and
 * journaled again first.  A file rec says is damaged or held refused
 * records is kept as PATH.damaged (rec->kept) before the fresh journal
 * starts.  Returns 0, or a negative errno with a sentence in err: lf is
 * then closed and freed.
 */
int state_file_begin(struct state_file *lf, const int *errs, struct ledger_recovery *rec,
		     char *err, size_t errlen);

/*
 * Check, without creating, opening or locking anything, what
 * state_file_open would check of path: its directory, reached from "/"
 * through no symbolic link and no directory another user could change
 * (trusted_dir_open), is owned by root (or this user) and not writable by
 * group or others, or is missing and can be created in such a directory;
 * path, if it exists, is not a symbolic link but a regular file with the
 * same properties.
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
