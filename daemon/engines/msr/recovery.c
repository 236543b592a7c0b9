/*
 * Crash recovery for the msr engine: the records it accepts from the state
 * file, and the rule that puts back registers whose ledger is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msr.h"
#include "recovery.h"

/*
 * The registers uncored programs (msr.h): the Nehalem/Westmere uncore PMU
 * and the architectural core PMU.  Shared registers (kind BITS) carry only
 * the enable bits uncored sets in them.
 */
static const struct {
	uint32_t first, n;
	bool shared;
	uint64_t bits;
	bool owned_too;      /* shared now, owned as a whole by earlier versions */
} allowed[] = {
	{ MSR_UNCORE_PERF_GLOBAL_CTRL, 1, true,
	  UNC_GLOBAL_CTRL_EN_FC0 | (MSR_BIT(UNCORE_N_COUNTERS) - 1), false },
	{ MSR_UNCORE_FIXED_CTR0, 1, false, 0, false },
	/* The msr engine sets its enable bit; earlier versions owned the register. */
	{ MSR_UNCORE_FIXED_CTR_CTRL, 1, true, UNC_FIXED_CTR_CTRL_EN, true },
	{ MSR_UNCORE_PMC0, UNCORE_N_COUNTERS, false, 0, false },
	{ MSR_UNCORE_PERFEVTSEL0, UNCORE_N_COUNTERS, false, 0, false },
	{ IA32_PMC0, 8, false, 0, false },
	{ IA32_A_PMC0, 8, false, 0, false },                  /* GP counters' full-width alias */
	{ IA32_PERFEVTSEL0, 8, false, 0, false },
	{ IA32_FIXED_CTR0, 3, false, 0, false },                     /* the counters of FIXED_CTR_CTRL */
	{ IA32_FIXED_CTR_CTRL, 1, true, 0xfff, false },              /* three 4-bit nibbles */
	{ IA32_PERF_GLOBAL_CTRL, 1, true, 0xff | (UINT64_C(7) << 32), false },
};

bool recovery_allowed(const struct ledger_record *r)
{
	if (r->cpu < 0)
		return false;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		if (r->msr - allowed[i].first >= allowed[i].n)
			continue;
		if (r->kind == LEDGER_DROP)
			return true;
		if (allowed[i].owned_too && r->kind != LEDGER_BITS)
			return true;
		if (allowed[i].shared != (r->kind == LEDGER_BITS))
			return false;
		return !allowed[i].shared || !(r->bits & ~allowed[i].bits);
	}
	return false;
}

static bool cpu_listed(const int *cpus, size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

/*
 * Bits a register never reads back as written: OCC_CTR_RST of the uncore
 * event selects always reads 0 (hardware.md §1.4), so a select uncored
 * wrote with it set reads back without it.
 */
static const struct {
	uint32_t first_msr;
	uint32_t n;
	uint64_t write_only;
} write_only_bits[] = {
	{ MSR_UNCORE_PERFEVTSEL0, 8, UNC_EVTSEL_OCC_CTR_RST },
};

/* Whether a register reading now still holds what uncored wrote. */
static bool holds_written(uint32_t msr, uint64_t now, uint64_t written)
{
	for (size_t i = 0; i < sizeof(write_only_bits) / sizeof(write_only_bits[0]); i++)
		if (msr - write_only_bits[i].first_msr < write_only_bits[i].n)
			written &= ~write_only_bits[i].write_only, now &= ~write_only_bits[i].write_only;
	return now == written;
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
