/*
 * The PMU register ledger.  Every register uncored changes is recorded
 * here with the value it had before the first change: registers uncored
 * owns outright (event selects, counters) and the bits uncored set in
 * shared control registers.  pmu_restore() undoes it all, clearing only
 * uncored's bits in shared registers so other agents' bits survive.  The
 * ledger never decides what to count and never logs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmu.h"

struct pmu_entry {
	int cpu;
	uint32_t msr;
	bool is_owned;       /* owned register; else a shared one with bits */
	uint64_t original;   /* owned: the value found before the first change */
	uint64_t written;    /* owned: the value uncored last wrote */
	bool has_written;    /* owned: false when only remembered */
	uint64_t bits;       /* shared: the bits uncored set */
};

/* Entries in order of first change; restore walks them backwards. */
struct pmu_ledger {
	struct pmu_entry *entries;
	size_t n, cap;
};

struct pmu_ledger *pmu_ledger_new(void)
{
	return calloc(1, sizeof(struct pmu_ledger));
}

void pmu_ledger_free(struct pmu_ledger *l)
{
	if (!l)
		return;
	free(l->entries);
	free(l);
}

static struct pmu_entry *find(const struct pmu_ledger *l, int cpu, uint32_t msr)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->entries[i].cpu == cpu && l->entries[i].msr == msr)
			return &l->entries[i];
	return NULL;
}

static struct pmu_entry *append(struct pmu_ledger *l, int cpu, uint32_t msr, bool is_owned)
{
	struct pmu_entry *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct pmu_entry *v = realloc(l->entries, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->entries = v;
		l->cap = cap;
	}
	e = &l->entries[l->n++];
	memset(e, 0, sizeof(*e));
	e->cpu = cpu;
	e->msr = msr;
	e->is_owned = is_owned;
	return e;
}

/* Remove one entry keeping the order of the others. */
static void drop(struct pmu_ledger *l, struct pmu_entry *e)
{
	size_t i = (size_t)(e - l->entries);

	memmove(e, e + 1, (l->n - i - 1) * sizeof(*e));
	l->n--;
}

/* The owned entry for (cpu, msr), created from a read of the value found. */
static int owned_entry(struct pmu_ledger *l, struct hw *hw, int cpu, uint32_t msr,
		       struct pmu_entry **ret_entry)
{
	struct pmu_entry *e = find(l, cpu, msr);
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

int pmu_write(struct pmu_ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t value)
{
	bool is_new = !find(l, cpu, msr);
	struct pmu_entry *e;
	int err;

	err = owned_entry(l, hw, cpu, msr, &e);
	if (err)
		return err;
	err = hw_write_msr(hw, cpu, msr, value);
	if (err) {
		/* Nothing changed: a register first seen here is not ours. */
		if (is_new)
			drop(l, e);
		return err;
	}
	e->written = value;
	e->has_written = true;
	return 0;
}

int pmu_remember(struct pmu_ledger *l, struct hw *hw, int cpu, uint32_t msr)
{
	struct pmu_entry *e;

	return owned_entry(l, hw, cpu, msr, &e);
}

int pmu_set_bits(struct pmu_ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t set_bits)
{
	struct pmu_entry *e = find(l, cpu, msr);
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
	err = hw_write_msr(hw, cpu, msr, value | new_bits);
	if (err) {
		if (!e->bits)
			drop(l, e);
		return err;
	}
	e->bits |= new_bits;
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

int pmu_clear_bits(struct pmu_ledger *l, struct hw *hw, int cpu, uint32_t msr, uint64_t bits)
{
	struct pmu_entry *e = find(l, cpu, msr);
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
	if (!e->bits)
		drop(l, e);
	return 0;
}

bool pmu_written(const struct pmu_ledger *l, int cpu, uint32_t msr, uint64_t *ret_value)
{
	const struct pmu_entry *e = find(l, cpu, msr);

	if (!e || !e->is_owned || !e->has_written)
		return false;
	if (ret_value)
		*ret_value = e->written;
	return true;
}

int pmu_release(struct pmu_ledger *l, struct hw *hw, int cpu, uint32_t msr)
{
	struct pmu_entry *e = find(l, cpu, msr);
	uint64_t original;

	if (!e || !e->is_owned)
		return -ENOENT;
	original = e->original;
	drop(l, e);
	return hw_write_msr(hw, cpu, msr, original);
}

int pmu_forget(struct pmu_ledger *l, int cpu, uint32_t msr)
{
	struct pmu_entry *e = find(l, cpu, msr);

	if (!e || !e->is_owned)
		return -ENOENT;
	drop(l, e);
	return 0;
}

int pmu_forget_bits(struct pmu_ledger *l, int cpu, uint32_t msr, uint64_t bits)
{
	struct pmu_entry *e = find(l, cpu, msr);

	if (!e || e->is_owned || !(e->bits & bits))
		return -ENOENT;
	e->bits &= ~bits;
	if (!e->bits)
		drop(l, e);
	return 0;
}

uint64_t pmu_bits(const struct pmu_ledger *l, int cpu, uint32_t msr)
{
	const struct pmu_entry *e = find(l, cpu, msr);

	return e && !e->is_owned ? e->bits : 0;
}

unsigned pmu_count(const struct pmu_ledger *l)
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

int pmu_restore(struct pmu_ledger *l, struct hw *hw, unsigned *ret_failed)
{
	unsigned n_failed = 0;
	int first_err = 0;

	/* Disable first: clearing uncored's enable bits stops its counting. */
	for (size_t i = l->n; i-- > 0;) {
		const struct pmu_entry *e = &l->entries[i];

		if (!e->is_owned)
			note_failure(clear_in_register(hw, e->cpu, e->msr, e->bits),
				     &first_err, &n_failed);
	}
	for (size_t i = l->n; i-- > 0;) {
		const struct pmu_entry *e = &l->entries[i];

		if (e->is_owned)
			note_failure(hw_write_msr(hw, e->cpu, e->msr, e->original),
				     &first_err, &n_failed);
	}
	l->n = 0;
	if (ret_failed)
		*ret_failed = n_failed;
	return first_err;
}

void pmu_move_cpu(struct pmu_ledger *l, int from_cpu, int to_cpu)
{
	size_t i = 0;

	if (from_cpu == to_cpu)
		return;
	while (i < l->n) {
		struct pmu_entry *e = &l->entries[i];
		struct pmu_entry *dup;

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
}
