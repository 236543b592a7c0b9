/*
 * The PMU register ledger.  Every register uncored changes is recorded
 * here with the value it had before the first change: registers uncored
 * owns outright (event selects, counters) and the bits uncored set in
 * shared control registers.  ledger_restore() undoes it all, clearing only
 * uncored's bits in shared registers so other agents' bits survive.  The
 * ledger never decides what to count and never logs.
 *
 * When a journal (the state file) is set, every change is recorded there
 * before the register write it describes, so a restarted daemon can undo
 * what a killed one left programmed; when the record cannot be written the
 * register is not written either.  Undoing (clearing, releasing,
 * restoring) is never held back by the journal.  The journal is
 * process-wide: every live ledger reports to it, and it is rewritten from
 * all of them when it grows or after a restore.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "grow.h"
#include "recovery.h"
#include "state_file.h"

struct ledger_entry {
	int cpu;
	uint32_t msr;
	bool is_owned;       /* owned register; else a shared one with bits */
	uint64_t original;   /* owned: the value found before the first change */
	uint64_t written;    /* owned: the value uncored last wrote */
	bool has_written;    /* owned: false when only remembered */
	uint64_t bits;       /* shared: the bits uncored set */
};

/* Entries in order of first change; restore walks them backwards. */
struct ledger {
	struct ledger_entry *entries;
	size_t n, cap;
	struct ledger *next;   /* the list of live ledgers, for the journal */
};

/* Rewrite the journal from the live ledgers once it holds this many bytes. */
#define JOURNAL_COMPACT_BYTES (64 * 1024)

static struct state_file *journal;
static struct ledger *live_ledgers;
/*
 * Registers whose ledger is gone but which could not be put back (their
 * CPU was offline): journaled with the live ledgers until ledger_finish_left
 * puts them back, so neither a stop nor a crash loses them.
 */
static struct ledger_record *left;
static int *left_err;
static size_t n_left, cap_left;
static size_t journal_compacted;     /* bytes after the last rewrite */
static int journal_refused_err;      /* the error of the last change the journal refused */
static int journal_down_err;         /* ledger_set_no_journal's error: every change refused */
static enum ledger_journal journal_state;

static struct ledger_record entry_record(const struct ledger_entry *e)
{
	if (!e->is_owned)
		return (struct ledger_record){ .kind = LEDGER_BITS, .cpu = e->cpu, .msr = e->msr,
					       .bits = e->bits };
	return (struct ledger_record){ .kind = LEDGER_OWN, .cpu = e->cpu, .msr = e->msr,
				       .original = e->original, .has_written = e->has_written,
				       .written = e->written };
}

/* Replace the journal by the state of every live ledger. */
static void journal_rewrite(void)
{
	struct ledger_record *v;
	size_t n = 0, i = 0;

	if (!journal)
		return;
	for (struct ledger *l = live_ledgers; l; l = l->next)
		n += l->n;
	n += n_left;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return;
	for (struct ledger *l = live_ledgers; l; l = l->next)
		for (size_t k = 0; k < l->n; k++)
			v[i++] = entry_record(&l->entries[k]);
	/* Last, so that on replay they win over a live entry of the same register. */
	for (size_t k = 0; k < n_left; k++)
		v[i++] = left[k];
	state_file_rewrite(journal, v, n);
	journal_compacted = state_file_size(journal);
	free(v);
}

/* Returns 0 or the append's negative errno. */
static int journal_record(const struct ledger_record *r)
{
	int err;

	if (!journal)
		return journal_down_err;
	err = state_file_append(journal, r);
	if (err)
		return err;
	/* Twice the last compacted size too: a large live state must not rewrite at every append. */
	if (state_file_size(journal) > JOURNAL_COMPACT_BYTES + 2 * journal_compacted)
		journal_rewrite();
	return 0;
}

/* Journal the entry as it is now.  Returns 0 or the append's negative errno. */
static int journal_entry(const struct ledger_entry *e)
{
	struct ledger_record r = entry_record(e);

	return journal_record(&r);
}

/* A change the journal could not record is not made: remember why, for ledger_hint. */
static int journal_refused(int err)
{
	journal_refused_err = err;
	return err;
}

const char *ledger_hint(int err, enum hw_op op)
{
	static char buf[160];

	if (err && err == journal_refused_err && journal_state == LEDGER_JOURNAL_DOWN) {
		snprintf(buf, sizeof(buf), "no state file could be set up at start (%s), so no "
			 "register is programmed", strerror(err < 0 ? -err : err));
		return buf;
	}
	if (err && err == journal_refused_err) {
		snprintf(buf, sizeof(buf), "the state file cannot record the change (%s), so it was "
			 "not made", strerror(err < 0 ? -err : err));
		return buf;
	}
	return hw_hint(err, op);
}

static void journal_drop(int cpu, uint32_t msr)
{
	(void)journal_record(&(struct ledger_record){ .kind = LEDGER_DROP, .cpu = cpu, .msr = msr });
}

/*
 * Keep r as a register left unrestored, with the error that stopped it.
 * A register held already keeps its older record (its original value);
 * shared bits are merged.  Returns 0 or -ENOMEM.
 */
static int left_add(const struct ledger_record *r, int err)
{
	for (size_t i = 0; i < n_left; i++) {
		if (left[i].cpu != r->cpu || left[i].msr != r->msr)
			continue;
		if (left[i].kind == LEDGER_BITS && r->kind == LEDGER_BITS)
			left[i].bits |= r->bits;
		left_err[i] = err;
		return 0;
	}
	if (n_left == cap_left) {
		size_t cap = cap_left ? 2 * cap_left : 16;
		struct ledger_record *v = realloc(left, cap * sizeof(*v));
		int *ev;

		if (!v)
			return -ENOMEM;
		left = v;
		ev = realloc(left_err, cap * sizeof(*ev));
		if (!ev)
			return -ENOMEM;
		left_err = ev;
		cap_left = cap;
	}
	left[n_left] = *r;
	left_err[n_left++] = err;
	return 0;
}

void ledger_set_journal(struct state_file *lf)
{
	journal = lf;
	journal_down_err = 0;
	journal_state = lf ? LEDGER_JOURNAL_UP : LEDGER_JOURNAL_UNSET;
	if (lf) {
		const struct ledger_record *v;
		const int *errs;
		size_t n = state_file_left(lf, &v, &errs);

		for (size_t i = 0; i < n; i++)
			(void)left_add(&v[i], errs[i]);
	}
	journal_rewrite();
}

void ledger_set_no_journal(int err)
{
	ledger_set_journal(NULL);
	journal_down_err = err < 0 ? err : 0;
	journal_state = err < 0 ? LEDGER_JOURNAL_DOWN : LEDGER_JOURNAL_NONE;
}

enum ledger_journal ledger_journal_state(void)
{
	return journal_state;
}

size_t ledger_left(const struct ledger_record **ret_records, const int **ret_errs)
{
	*ret_records = left;
	if (ret_errs)
		*ret_errs = left_err;
	return n_left;
}

static struct ledger_entry *find(const struct ledger *l, int cpu, uint32_t msr);

/*
 * A live ledger holds (cpu, msr) now: it restores the register itself, so
 * give it the older record's original value (or bits) and settle the
 * left record.  Returns whether one did.
 */
static bool merge_into_live(const struct ledger_record *r)
{
	for (struct ledger *l = live_ledgers; l; l = l->next) {
		struct ledger_entry *e = find(l, r->cpu, r->msr);

		if (!e)
			continue;
		if (e->is_owned && r->kind == LEDGER_OWN)
			e->original = r->original;
		else if (!e->is_owned && r->kind == LEDGER_BITS)
			e->bits |= r->bits;
		else
			continue;   /* kinds differ: not the same use of it; leave the record */
		return true;
	}
	return false;
}

unsigned ledger_finish_left(struct hw *hw, struct ledger_recovery *ret_rec)
{
	struct ledger_recovery rec = { 0 };
	size_t kept = 0, n;
	unsigned merged = 0;
	int *errs;

	if (ret_rec)
		*ret_rec = rec;
	/* First the registers a live ledger has taken since: they are its to restore now. */
	for (size_t i = 0; i < n_left; i++) {
		if (merge_into_live(&left[i])) {
			merged++;
			continue;
		}
		left[kept] = left[i];
		left_err[kept++] = left_err[i];
	}
	n = n_left = kept;
	kept = 0;
	if (!n || !(errs = calloc(n, sizeof(*errs)))) {
		if (merged)
			journal_rewrite();
		return merged;
	}
	recovery_undo(hw, left, n, &rec, errs);
	for (size_t i = 0; i < n; i++) {
		if (!errs[i])
			continue;
		left[kept] = left[i];
		left_err[kept++] = errs[i];
	}
	free(errs);
	if (ret_rec)
		*ret_rec = rec;
	n_left = kept;
	if (kept < n || merged)
		journal_rewrite();
	return (unsigned)(n - kept) + merged;
}

void ledger_forget_left(void)
{
	n_left = 0;
	journal_rewrite();
}

struct ledger *ledger_new(void)
{
	struct ledger *l = calloc(1, sizeof(struct ledger));

	if (l) {
		l->next = live_ledgers;
		live_ledgers = l;
	}
	return l;
}

void ledger_free(struct ledger *l)
{
	if (!l)
		return;
	for (struct ledger **p = &live_ledgers; *p; p = &(*p)->next) {
		if (*p == l) {
			*p = l->next;
			break;
		}
	}
	free(l->entries);
	free(l);
}

static struct ledger_entry *find(const struct ledger *l, int cpu, uint32_t msr)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->entries[i].cpu == cpu && l->entries[i].msr == msr)
			return &l->entries[i];
	return NULL;
}

static struct ledger_entry *append(struct ledger *l, int cpu, uint32_t msr, bool is_owned)
{
	struct ledger_entry *e;

	e = grow_array(l->entries, &l->cap, l->n + 1, sizeof(*e), 16);
	if (!e)
		return NULL;
	l->entries = e;
	e = &l->entries[l->n++];
	memset(e, 0, sizeof(*e));
	e->cpu = cpu;
	e->msr = msr;
	e->is_owned = is_owned;
	return e;
}

/* Remove one entry keeping the order of the others. */
static void drop(struct ledger *l, struct ledger_entry *e)
{
	size_t i = (size_t)(e - l->entries);

	memmove(e, e + 1, (l->n - i - 1) * sizeof(*e));
	l->n--;
}

/* The owned entry for (cpu, msr), created from a read of the value found. */
static int owned_entry(struct ledger *l, struct hw *hw, int cpu, uint32_t msr,
		       struct ledger_entry **ret_entry)
{
	struct ledger_entry *e = find(l, cpu, msr);
	uint64_t found;
	int err;

	if (e) {
		if (!e->is_owned)
			return -EINVAL;
		*ret_entry = e;
		return 0;
	}
	err = hw_read_msr(hw, cpu, msr, &found);
	if (err)
		return err;
	e = append(l, cpu, msr, true);
	if (!e)
		return -ENOMEM;
	e->original = found;
	*ret_entry = e;
	return 0;
}

int ledger_write(struct ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t value)
{
	bool is_new = !find(l, cpu, msr);
	struct ledger_entry *e;
	int err;

	struct ledger_entry before;

	err = owned_entry(l, hw, cpu, msr, &e);
	if (err)
		return err;
	before = *e;
	e->written = value;
	e->has_written = true;
	/* Journaled before the write: a kill in between leaves a record that matches. */
	if (is_new || !before.has_written || before.written != value)
		err = journal_entry(e);
	if (err) {
		if (is_new)
			drop(l, e);
		else
			*e = before;
		return journal_refused(err);
	}
	err = hw_write_msr(hw, cpu, msr, value);
	if (err) {
		/* Nothing changed: a register first seen here is not ours. */
		if (is_new) {
			drop(l, e);
			journal_drop(cpu, msr);
		} else if (!before.has_written || before.written != value) {
			*e = before;
			(void)journal_entry(e);
		}
		return err;
	}
	return 0;
}

int ledger_remember(struct ledger *l, struct hw *hw, int cpu, uint32_t msr)
{
	bool is_new = !find(l, cpu, msr);
	struct ledger_entry *e;
	int err = owned_entry(l, hw, cpu, msr, &e);

	if (err == 0 && is_new) {
		err = journal_entry(e);
		if (err) {
			drop(l, e);
			return journal_refused(err);
		}
	}
	return err;
}

int ledger_set_bits(struct ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t set_bits)
{
	struct ledger_entry *e = find(l, cpu, msr);
	uint64_t value, new_bits;
	int err;

	if (e && e->is_owned)
		return -EINVAL;
	err = hw_read_msr(hw, cpu, msr, &value);
	if (err)
		return err;
	/* Bits already set belong to whoever set them, not to uncored. */
	new_bits = set_bits & ~value;
	if (!new_bits)
		return 0;
	if (!e) {
		e = append(l, cpu, msr, false);
		if (!e)
			return -ENOMEM;
	}
	e->bits |= new_bits;
	err = journal_entry(e);
	if (err) {
		e->bits &= ~new_bits;
		if (!e->bits)
			drop(l, e);
		return journal_refused(err);
	}
	err = hw_write_msr(hw, cpu, msr, value | new_bits);
	if (err) {
		e->bits &= ~new_bits;
		if (e->bits) {
			(void)journal_entry(e);
		} else {
			drop(l, e);
			journal_drop(cpu, msr);
		}
		return err;
	}
	return 0;
}

/* Read-modify-write: clear bits in (cpu, msr), leaving every other bit. */
static int clear_in_register(struct hw *hw, int cpu, uint32_t msr, uint64_t bits)
{
	uint64_t value;
	int err;

	err = hw_read_msr(hw, cpu, msr, &value);
	if (err)
		return err;
	if (!(value & bits))
		return 0;
	return hw_write_msr(hw, cpu, msr, value & ~bits);
}

int ledger_clear_bits(struct ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t bits)
{
	struct ledger_entry *e = find(l, cpu, msr);
	int err;

	if (!e || e->is_owned)
		return -ENOENT;
	bits &= e->bits;
	if (!bits)
		return 0;
	err = clear_in_register(hw, cpu, msr, bits);
	if (err)
		return err;
	e->bits &= ~bits;
	(void)journal_entry(e);
	if (!e->bits)
		drop(l, e);
	return 0;
}

bool ledger_written(const struct ledger *l, int cpu, uint32_t msr, uint64_t *ret_value)
{
	const struct ledger_entry *e = find(l, cpu, msr);

	if (!e || !e->is_owned || !e->has_written)
		return false;
	if (ret_value)
		*ret_value = e->written;
	return true;
}

int ledger_release(struct ledger *l, struct hw *hw, int cpu, uint32_t msr)
{
	struct ledger_entry *e = find(l, cpu, msr);
	uint64_t original;
	int err;

	if (!e || !e->is_owned)
		return -ENOENT;
	original = e->original;
	drop(l, e);
	err = hw_write_msr(hw, cpu, msr, original);
	journal_drop(cpu, msr);
	return err;
}

int ledger_forget(struct ledger *l, int cpu, uint32_t msr)
{
	struct ledger_entry *e = find(l, cpu, msr);

	if (!e || !e->is_owned)
		return -ENOENT;
	drop(l, e);
	journal_drop(cpu, msr);
	return 0;
}

int ledger_forget_bits(struct ledger *l, int cpu, uint32_t msr, uint64_t bits)
{
	struct ledger_entry *e = find(l, cpu, msr);

	if (!e || e->is_owned || !(e->bits & bits))
		return -ENOENT;
	e->bits &= ~bits;
	(void)journal_entry(e);
	if (!e->bits)
		drop(l, e);
	return 0;
}

uint64_t ledger_bits(const struct ledger *l, int cpu, uint32_t msr)
{
	const struct ledger_entry *e = find(l, cpu, msr);

	return e && !e->is_owned ? e->bits : 0;
}

unsigned ledger_count(const struct ledger *l)
{
	return (unsigned)l->n;
}

static void note_failure(int err, int *first_err, unsigned *n_failed)
{
	if (!err)
		return;
	if (!*first_err)
		*first_err = err;
	(*n_failed)++;
}

/* One entry's restore failed: count it, and keep it as left unrestored. */
static void restore_failed(const struct ledger_entry *e, int err, int *first_err, unsigned *n_failed)
{
	struct ledger_record r = entry_record(e);

	note_failure(err, first_err, n_failed);
	(void)left_add(&r, err);
}

int ledger_restore(struct ledger *l, struct hw *hw, unsigned *ret_failed)
{
	unsigned n_failed = 0;
	int first_err = 0, err;

	/* Disable first: clearing uncored's enable bits stops its counting. */
	for (size_t i = l->n; i-- > 0;) {
		const struct ledger_entry *e = &l->entries[i];

		if (!e->is_owned && (err = clear_in_register(hw, e->cpu, e->msr, e->bits)))
			restore_failed(e, err, &first_err, &n_failed);
	}
	for (size_t i = l->n; i-- > 0;) {
		const struct ledger_entry *e = &l->entries[i];

		if (e->is_owned && (err = hw_write_msr(hw, e->cpu, e->msr, e->original)))
			restore_failed(e, err, &first_err, &n_failed);
	}
	l->n = 0;
	journal_rewrite();
	if (ret_failed)
		*ret_failed = n_failed;
	return first_err;
}

void ledger_move_cpu(struct ledger *l, int from_cpu, int to_cpu)
{
	size_t i = 0;

	if (from_cpu == to_cpu)
		return;
	while (i < l->n) {
		struct ledger_entry *e = &l->entries[i];
		struct ledger_entry *dup;

		if (e->cpu != from_cpu) {
			i++;
			continue;
		}
		dup = find(l, to_cpu, e->msr);
		if (!dup) {
			e->cpu = to_cpu;
			i++;
			continue;
		}
		/* Keep whichever was changed first; it holds the value found. */
		if (dup > e) {
			e->bits |= dup->bits;
			e->cpu = to_cpu;
			drop(l, dup);
			i++;
		} else {
			dup->bits |= e->bits;
			drop(l, e);
		}
	}
	journal_rewrite();
}
