/*
 * Crash recovery for the msr engine: the records it accepts from the state
 * file, and the rule that puts back registers whose ledger is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msr_layout.h"
#include "recovery.h"

bool recovery_allowed(const struct ledger_record *r)
{
	struct msr_reg reg;

	if (r->cpu < 0 || !msr_layout_reg(r->msr, &reg))
		return false;
	if (r->kind == LEDGER_DROP)
		return true;
	if (reg.owned_too && r->kind != LEDGER_BITS)
		return true;
	if (reg.shared != (r->kind == LEDGER_BITS))
		return false;
	return !reg.shared || !(r->bits & ~reg.shared_bits);
}

static bool cpu_listed(const int *cpus, size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

/*
 * Whether a register reading now still holds what uncored wrote, by the
 * register table's read-back rule: its write-only bits (OCC_CTR_RST of the
 * Nehalem/Westmere uncore selects) read 0 whatever was written.
 */
static bool holds_written(uint32_t msr, uint64_t now, uint64_t written)
{
	struct msr_reg reg;
	uint64_t mask = msr_layout_reg(msr, &reg) ? ~reg.write_only : ~UINT64_C(0);

	return (now & mask) == (written & mask);
}

/*
 * Restore an owned register if it still holds what uncored wrote.  Returns
 * 1 when done (or nothing was to do), 0 when another agent took it over,
 * or the negative errno of the read or write.
 */
static int restore_if_ours(struct hw *hw, const struct ledger_record *r,
			   struct ledger_recovery *rec)
{
	uint64_t now;
	int e = hw_read_msr(hw, r->cpu, r->msr, &now);

	if (e)
		return e;
	/* Put back already (its drop record was lost to a full disk): nothing to do. */
	if (holds_written(r->msr, now, r->original) && !holds_written(r->msr, now, r->written))
		return 1;
	if (!holds_written(r->msr, now, r->written)) {
		rec->left++;
		return 0;
	}
	e = hw_write_msr(hw, r->cpu, r->msr, r->original);
	if (e)
		return e;
	rec->cleaned++;
	return 1;
}

/* Clear the bits of r still set.  Returns 0 or a negative errno. */
static int clear_bits(struct hw *hw, const struct ledger_record *r, struct ledger_recovery *rec)
{
	uint64_t now;
	int e = hw_read_msr(hw, r->cpu, r->msr, &now);

	if (e)
		return e;
	if (!(now & r->bits))
		return 0;
	e = hw_write_msr(hw, r->cpu, r->msr, now & ~r->bits);
	if (e == 0)
		rec->cleaned++;
	return e;
}

/* Count a failure of record i in rec and in ret_err. */
static void note_failed(int e, size_t i, struct ledger_recovery *rec, int *ret_err)
{
	rec->failed++;
	if (ret_err)
		ret_err[i] = e;
}

int recovery_undo(struct hw *hw, const struct ledger_record *v, size_t n,
		  struct ledger_recovery *rec, int *ret_err)
{
	int *taken = calloc(n + 1, sizeof(*taken));
	size_t n_taken = 0;
	int e;

	if (ret_err)
		memset(ret_err, 0, n * sizeof(*ret_err));
	if (!taken) {
		for (size_t i = 0; i < n; i++)
			note_failed(-ENOMEM, i, rec, ret_err);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ledger_record *r = &v[i];

		if (r->kind != LEDGER_OWN || !r->has_written)
			continue;
		e = restore_if_ours(hw, r, rec);
		if (e < 0)
			note_failed(e, i, rec, ret_err);
		else if (e == 0 && !cpu_listed(taken, n_taken, r->cpu))
			taken[n_taken++] = r->cpu;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == LEDGER_BITS && !cpu_listed(taken, n_taken, v[i].cpu) &&
		    (e = clear_bits(hw, &v[i], rec)) < 0)
			note_failed(e, i, rec, ret_err);
	for (size_t i = 0; i < n; i++) {
		const struct ledger_record *r = &v[i];

		if (r->kind != LEDGER_OWN || r->has_written)
			continue;
		if (cpu_listed(taken, n_taken, r->cpu))
			rec->left++;
		else if ((e = hw_write_msr(hw, r->cpu, r->msr, r->original)) < 0)
			note_failed(e, i, rec, ret_err);
		else
			rec->cleaned++;
	}
	free(taken);
	return 0;
}

int recovery_open(const char *path, const char *backend_id, struct hw *hw,
		  struct state_file **ret_lf, struct ledger_recovery *ret_rec,
		  char *err, size_t errlen)
{
	const struct ledger_record *v;
	struct state_file *lf;
	int *errs = NULL, r;
	size_t n;

	r = state_file_open(path, backend_id, recovery_allowed, &lf, ret_rec, err, errlen);
	if (r < 0)
		return r;
	n = state_file_found(lf, &v);
	if (n) {
		errs = calloc(n, sizeof(*errs));
		if (!errs) {
			snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
			state_file_keep(lf);
			return -ENOMEM;
		}
		recovery_undo(hw, v, n, ret_rec, errs);
	}
	r = state_file_begin(lf, errs, ret_rec, err, errlen);
	free(errs);
	if (r == 0)
		*ret_lf = lf;
	return r;
}
