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

/*
 * The fixed counters another agent took over on one CPU's PMU: their field
 * of the fixed control no longer holds uncored's bits alone.  Their gate
 * bits and counters are that agent's too.
 */
struct taken_fixed {
	int cpu;
	const struct msr_layout *layout;
	unsigned mask;             /* bit i: fixed counter i */
};

struct undo {
	struct hw *hw;
	struct ledger_recovery *rec;
	int *taken_cpus;           /* CPUs where an owned register was taken over */
	size_t n_taken_cpus;
	struct taken_fixed *fixed;
	size_t n_fixed;
};

static unsigned fixed_taken(const struct undo *u, int cpu, const struct msr_layout *l)
{
	for (size_t i = 0; i < u->n_fixed; i++)
		if (u->fixed[i].cpu == cpu && u->fixed[i].layout == l)
			return u->fixed[i].mask;
	return 0;
}

/*
 * Judge a fixed control's record: a field where uncored set bits belongs
 * to it still only if it holds exactly those bits; anything else there
 * was set by an agent that took the counter over.
 */
static void judge_fixed(struct undo *u, const struct ledger_record *r, const struct msr_reg *reg)
{
	const struct msr_layout *l = reg->layout;
	unsigned mask = 0;
	uint64_t now;

	if (hw_read_msr(u->hw, r->cpu, r->msr, &now))
		return;   /* counted when it is cleared */
	for (unsigned i = 0; i < l->max_fixed; i++) {
		uint64_t field = msr_layout_fixed_field(l, i);

		if ((r->bits & field) && (now & field) != (r->bits & field))
			mask |= 1u << i;
	}
	if (mask)
		u->fixed[u->n_fixed++] = (struct taken_fixed){ .cpu = r->cpu, .layout = l,
							       .mask = mask };
}

/* Of uncored's bits in a shared register, those another agent took over with their counter. */
static uint64_t taken_bits(const struct undo *u, const struct ledger_record *r,
			   const struct msr_reg *reg)
{
	const struct msr_layout *l = reg->layout;
	unsigned mask = fixed_taken(u, r->cpu, l);
	uint64_t bits = 0;

	for (unsigned i = 0; i < l->max_fixed; i++)
		if (mask & (1u << i))
			bits |= r->msr == l->fixed_ctrl ? msr_layout_fixed_field(l, i) :
				msr_layout_fixed_gate(i);
	return bits;
}

/*
 * Clear the bits of r still set that are still uncored's; leave those of a
 * counter another agent took over.  Returns 0 or a negative errno.
 */
static int clear_bits(struct undo *u, const struct ledger_record *r)
{
	struct msr_reg reg;
	uint64_t now, theirs = msr_layout_reg(r->msr, &reg) ? taken_bits(u, r, &reg) : 0;
	int e = hw_read_msr(u->hw, r->cpu, r->msr, &now);

	if (e)
		return e;
	if (now & r->bits & theirs)
		u->rec->left++;
	if (!(now & r->bits & ~theirs))
		return 0;
	e = hw_write_msr(u->hw, r->cpu, r->msr, now & ~(r->bits & ~theirs));
	if (e == 0)
		u->rec->cleaned++;
	return e;
}

/* Count a failure of record i in rec and in ret_err. */
static void note_failed(int e, size_t i, struct ledger_recovery *rec, int *ret_err)
{
	rec->failed++;
	if (ret_err)
		ret_err[i] = e;
}

/* Whether r is a fixed counter another agent took over with its control field. */
static bool counter_taken(const struct undo *u, const struct ledger_record *r)
{
	struct msr_reg reg;
	const struct msr_layout *l;

	if (!msr_layout_reg(r->msr, &reg))
		return false;
	l = reg.layout;
	return l->fixed_ctr0 && r->msr - l->fixed_ctr0 < l->max_fixed &&
	       (fixed_taken(u, r->cpu, l) & (1u << (r->msr - l->fixed_ctr0)));
}

/* Whether r is a fixed control record recovery judges field by field. */
static bool is_fixed_bits(const struct ledger_record *r, struct msr_reg *reg)
{
	return r->kind == LEDGER_BITS && msr_layout_reg(r->msr, reg) &&
	       r->msr == reg->layout->fixed_ctrl;
}

int recovery_undo(struct hw *hw, const struct ledger_record *v, size_t n,
		  struct ledger_recovery *rec, int *ret_err)
{
	struct undo u = { .hw = hw, .rec = rec };
	struct msr_reg reg;
	int e;

	if (ret_err)
		memset(ret_err, 0, n * sizeof(*ret_err));
	u.taken_cpus = calloc(n + 1, sizeof(*u.taken_cpus));
	u.fixed = calloc(n + 1, sizeof(*u.fixed));
	if (!u.taken_cpus || !u.fixed) {
		free(u.taken_cpus);
		free(u.fixed);
		for (size_t i = 0; i < n; i++)
			note_failed(-ENOMEM, i, rec, ret_err);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (is_fixed_bits(&v[i], &reg))
			judge_fixed(&u, &v[i], &reg);
	for (size_t i = 0; i < n; i++) {
		const struct ledger_record *r = &v[i];

		if (r->kind != LEDGER_OWN || !r->has_written)
			continue;
		e = restore_if_ours(hw, r, rec);
		if (e < 0)
			note_failed(e, i, rec, ret_err);
		else if (e == 0 && !cpu_listed(u.taken_cpus, u.n_taken_cpus, r->cpu))
			u.taken_cpus[u.n_taken_cpus++] = r->cpu;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == LEDGER_BITS && !cpu_listed(u.taken_cpus, u.n_taken_cpus, v[i].cpu) &&
		    (e = clear_bits(&u, &v[i])) < 0)
			note_failed(e, i, rec, ret_err);
	for (size_t i = 0; i < n; i++) {
		const struct ledger_record *r = &v[i];

		if (r->kind != LEDGER_OWN || r->has_written)
			continue;
		if (cpu_listed(u.taken_cpus, u.n_taken_cpus, r->cpu) || counter_taken(&u, r))
			rec->left++;
		else if ((e = hw_write_msr(hw, r->cpu, r->msr, r->original)) < 0)
			note_failed(e, i, rec, ret_err);
		else
			rec->cleaned++;
	}
	free(u.taken_cpus);
	free(u.fixed);
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
