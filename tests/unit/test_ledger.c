/*
 * Unit tests of the PMU register ledger against the register-file backend:
 * originals remembered once, shared bits set and cleared without touching
 * other agents' bits, restore order and values, release, forget, CPU moves
 * and restore continuing past errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ledger.h"
#include "msr.h"
#include "regfile.h"
#include "state_file.h"

/* Two sockets with two CPUs each; the uncore registers are package scope. */
static const struct hw_cpu cpus[] = {
	{ .cpu = 0, .socket = 0, .core = 0, .online = true },
	{ .cpu = 1, .socket = 0, .core = 1, .online = true },
	{ .cpu = 2, .socket = 1, .core = 0, .online = true },
	{ .cpu = 3, .socket = 1, .core = 1, .online = true },
};

struct fixture {
	struct regfile *rf;
	struct hw hw;
	struct ledger *l;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->rf = regfile_new(cpus, 4);
	for (int s = 0; s < 2; s++) {
		regfile_define_socket(f->rf, s, MSR_UNCORE_PERF_GLOBAL_CTRL, 0);
		regfile_define_socket(f->rf, s, MSR_UNCORE_FIXED_CTR_CTRL, 0);
		regfile_define_socket(f->rf, s, MSR_UNCORE_FIXED_CTR0, 0);
		for (uint32_t n = 0; n < UNCORE_N_COUNTERS; n++) {
			regfile_define_socket(f->rf, s, MSR_UNCORE_PERFEVTSEL0 + n, 0);
			regfile_define_socket(f->rf, s, MSR_UNCORE_PMC0 + n, 0);
		}
	}
	regfile_bind(f->rf, &f->hw);
	f->l = ledger_new();
	assert_non_null(f->l);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ledger_free(f->l);
	ledger_forget_left();
	hw_close(&f->hw);
	free(f);
	return 0;
}

static void write_remembers_original_once(void **state)
{
	struct fixture *f = *state;
	uint32_t sel = MSR_UNCORE_PERFEVTSEL0 + 2;
	uint64_t v = 0;

	regfile_set(f->rf, 0, sel, 0x1234);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel, 0x420183), 0);
	assert_int_equal(regfile_get(f->rf, 0, sel), 0x420183);
	assert_true(ledger_written(f->l, 0, sel, &v));
	assert_int_equal(v, 0x420183);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel, 0x400183), 0);
	assert_true(ledger_written(f->l, 0, sel, &v));
	assert_int_equal(v, 0x400183);
	assert_int_equal(ledger_count(f->l), 1);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	/* The first value found, not the one between the two writes. */
	assert_int_equal(regfile_get(f->rf, 0, sel), 0x1234);
	assert_int_equal(ledger_count(f->l), 0);
	assert_false(ledger_written(f->l, 0, sel, NULL));
}

static void set_bits_preserves_others_and_records_only_clear_bits(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	/* Another agent has counter 7 and the fixed counter. */
	regfile_set(f->rf, 0, ctrl, UINT64_C(0x0000000100000080));
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl,
				      UNC_GLOBAL_CTRL_EN_PC(0) | UNC_GLOBAL_CTRL_EN_PC(1) |
				      UNC_GLOBAL_CTRL_EN_FC0), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), UINT64_C(0x0000000100000083));
	/* Bit 32 was set already: it stays the other agent's. */
	assert_int_equal(ledger_bits(f->l, 0, ctrl), 0x3);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), UINT64_C(0x0000000100000080));
}

static void set_bits_already_set_writes_nothing(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	regfile_set(f->rf, 0, ctrl, 0x1);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x1), 0);
	assert_int_equal(regfile_writes(f->rf, 0, ctrl), 0);
	assert_int_equal(ledger_count(f->l), 0);
}

static void restore_keeps_bits_set_after_start(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x3), 0);
	/* Meanwhile another agent enables counter 5 and PMI freeze. */
	regfile_set(f->rf, 0, ctrl, 0x3 | 0x20 | MSR_BIT(63));
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0x20 | MSR_BIT(63));
}

static void clear_bits_only_ours(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	regfile_set(f->rf, 0, ctrl, 0x80);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x3), 0);
	/* 0x80 is not ours: asking to clear it clears only bit 1. */
	assert_int_equal(ledger_clear_bits(f->l, &f->hw, 0, ctrl, 0x82), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0x81);
	assert_int_equal(ledger_bits(f->l, 0, ctrl), 0x1);
	assert_int_equal(ledger_clear_bits(f->l, &f->hw, 0, ctrl, 0x1), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0x80);
	assert_int_equal(ledger_count(f->l), 0);
	assert_int_equal(ledger_clear_bits(f->l, &f->hw, 0, ctrl, 0x1), -ENOENT);
}

/* Records the order of writes the regfile sees, by wrapping its ops. */
struct recorder {
	const struct hw_ops *inner;
	void *inner_ctx;
	uint32_t msrs[64];
	uint64_t values[64];
	int n;
	int fail_msr;            /* write to this MSR fails with -EIO; 0 = none */
};

static struct recorder rec;

static int rec_read(void *ctx, int cpu, uint32_t msr, uint64_t *ret)
{
	(void)ctx;
	return rec.inner->read_msr(rec.inner_ctx, cpu, msr, ret);
}

static int rec_write(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	(void)ctx;
	if (rec.n < 64) {
		rec.msrs[rec.n] = msr;
		rec.values[rec.n++] = value;
	}
	if ((int)msr == rec.fail_msr)
		return -EIO;
	return rec.inner->write_msr(rec.inner_ctx, cpu, msr, value);
}

static const struct hw_ops rec_ops = {
	.name = "recorder",
	.read_msr = rec_read,
	.write_msr = rec_write,
};

static struct hw recording(struct fixture *f)
{
	struct hw hw = { .ops = &rec_ops };

	rec.inner = f->hw.ops;
	rec.inner_ctx = f->hw.ctx;
	rec.n = 0;
	rec.fail_msr = 0;
	return hw;
}

static void restore_order_shared_first_then_reverse(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;
	uint32_t sel0 = MSR_UNCORE_PERFEVTSEL0, sel1 = MSR_UNCORE_PERFEVTSEL0 + 1;
	struct hw hw;
	unsigned failed = 99;

	regfile_set(f->rf, 0, sel0, 0x11);
	regfile_set(f->rf, 0, sel1, 0x22);
	regfile_set(f->rf, 0, MSR_UNCORE_PMC0, 0x33);
	assert_int_equal(ledger_remember(f->l, &f->hw, 0, MSR_UNCORE_PMC0), 0);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel0, 0x420167), 0);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel1, 0x460167), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x3), 0);
	/* A second write does not move sel0 in the order. */
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel0, 0x400167), 0);
	regfile_set(f->rf, 0, MSR_UNCORE_PMC0, 0x999);

	hw = recording(f);
	assert_int_equal(ledger_restore(f->l, &hw, &failed), 0);
	assert_int_equal(failed, 0);
	assert_int_equal(rec.n, 4);
	assert_int_equal(rec.msrs[0], ctrl);
	assert_int_equal(rec.values[0], 0);
	assert_int_equal(rec.msrs[1], sel1);
	assert_int_equal(rec.values[1], 0x22);
	assert_int_equal(rec.msrs[2], sel0);
	assert_int_equal(rec.values[2], 0x11);
	assert_int_equal(rec.msrs[3], MSR_UNCORE_PMC0);
	assert_int_equal(rec.values[3], 0x33);
}

static void restore_continues_past_errors(void **state)
{
	struct fixture *f = *state;
	struct hw hw;
	unsigned failed = 0;

	regfile_set(f->rf, 0, MSR_UNCORE_PERFEVTSEL0, 0x5);
	regfile_set(f->rf, 0, MSR_UNCORE_PERFEVTSEL0 + 1, 0x6);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0 + 1, 0x420180), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x3), 0);

	hw = recording(f);
	rec.fail_msr = MSR_UNCORE_PERFEVTSEL0 + 1;
	assert_int_equal(ledger_restore(f->l, &hw, &failed), -EIO);
	assert_int_equal(failed, 1);
	assert_int_equal(regfile_get(f->rf, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
	assert_int_equal(regfile_get(f->rf, 0, MSR_UNCORE_PERFEVTSEL0), 0x5);
	assert_int_equal(ledger_count(f->l), 0);
}

static void restore_offline_cpu_counts_failures(void **state)
{
	struct fixture *f = *state;
	unsigned failed = 0;

	assert_int_equal(ledger_write(f->l, &f->hw, 2, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 2, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1), 0);
	regfile_set_online(f->rf, 2, false);
	assert_int_equal(ledger_restore(f->l, &f->hw, &failed), -ENXIO);
	assert_int_equal(failed, 2);
}

/*
 * What a restore could not reach stays as left unrestored, with its error,
 * and is put back once its CPU is online again; nothing is written while
 * it is offline.
 */
static void restore_offline_cpu_keeps_registers_left(void **state)
{
	struct fixture *f = *state;
	const struct ledger_record *v;
	struct ledger_recovery done;
	const int *errs;
	unsigned failed = 0;

	regfile_set(f->rf, 2, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x80);
	assert_int_equal(ledger_write(f->l, &f->hw, 2, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 2, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1), 0);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0, 0x420180), 0);
	regfile_set_online(f->rf, 2, false);
	assert_int_equal(ledger_restore(f->l, &f->hw, &failed), -ENXIO);
	assert_int_equal(failed, 2);
	assert_int_equal(ledger_count(f->l), 0);
	assert_int_equal(regfile_get(f->rf, 0, MSR_UNCORE_PERFEVTSEL0), 0);

	assert_int_equal(ledger_left(&v, &errs), 2);
	assert_int_equal(v[0].kind, LEDGER_BITS);
	assert_int_equal(v[0].cpu, 2);
	assert_int_equal(v[0].msr, MSR_UNCORE_PERF_GLOBAL_CTRL);
	assert_int_equal(v[0].bits, 0x1);
	assert_int_equal(errs[0], -ENXIO);
	assert_int_equal(v[1].kind, LEDGER_OWN);
	assert_int_equal(v[1].msr, MSR_UNCORE_PERFEVTSEL0);
	assert_int_equal(v[1].original, 0);
	assert_int_equal(v[1].written, 0x420167);

	assert_int_equal(ledger_finish_left(&f->hw, &done), 0);
	assert_int_equal(ledger_left(&v, NULL), 2);
	regfile_set_online(f->rf, 2, true);
	assert_int_equal(ledger_finish_left(&f->hw, &done), 2);
	assert_int_equal(done.cleaned, 2);
	assert_int_equal(ledger_left(&v, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERFEVTSEL0), 0);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERF_GLOBAL_CTRL), 0x80);
	assert_int_equal(ledger_finish_left(&f->hw, &done), 0);
}

/* A register another agent took while its CPU was offline is left to it, and so are the gate bits there. */
static void finish_left_leaves_what_another_agent_took(void **state)
{
	struct fixture *f = *state;
	const struct ledger_record *v;
	struct ledger_recovery done;
	unsigned failed = 0;

	assert_int_equal(ledger_write(f->l, &f->hw, 2, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 2, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1), 0);
	regfile_set_online(f->rf, 2, false);
	assert_int_equal(ledger_restore(f->l, &f->hw, &failed), -ENXIO);
	regfile_set(f->rf, 2, MSR_UNCORE_PERFEVTSEL0, 0x400166);
	regfile_set_online(f->rf, 2, true);
	assert_int_equal(ledger_finish_left(&f->hw, &done), 2);
	assert_int_equal(done.left, 1);
	assert_int_equal(done.cleaned, 0);
	assert_int_equal(ledger_left(&v, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERFEVTSEL0), 0x400166);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERF_GLOBAL_CTRL), 0x1);
}

/*
 * A register left unrestored that a live ledger has taken since (its CPU
 * came back before the left records were tried): that ledger restores it,
 * to the value found first.
 */
static void finish_left_hands_a_taken_register_to_its_ledger(void **state)
{
	struct fixture *f = *state;
	const struct ledger_record *v;
	struct ledger *b = ledger_new();
	unsigned failed = 0;

	regfile_set(f->rf, 2, MSR_UNCORE_PERFEVTSEL0, 0x5);
	assert_int_equal(ledger_write(f->l, &f->hw, 2, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	regfile_set_online(f->rf, 2, false);
	assert_int_equal(ledger_restore(f->l, &f->hw, &failed), -ENXIO);
	regfile_set_online(f->rf, 2, true);
	assert_int_equal(ledger_write(b, &f->hw, 2, MSR_UNCORE_PERFEVTSEL0, 0x420180), 0);
	assert_int_equal(ledger_finish_left(&f->hw, NULL), 1);
	assert_int_equal(ledger_left(&v, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERFEVTSEL0), 0x420180);
	assert_int_equal(ledger_restore(b, &f->hw, &failed), 0);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERFEVTSEL0), 0x5);
	ledger_free(b);
}

static void failed_first_write_records_nothing(void **state)
{
	struct fixture *f = *state;

	regfile_refuse_writes(f->rf, true);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0, 0x420167), -EPERM);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1), -EPERM);
	assert_int_equal(ledger_count(f->l), 0);
	/* Reading an undefined register fails before anything is written. */
	regfile_refuse_writes(f->rf, false);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, 0x397, 1), -EIO);
	assert_int_equal(ledger_count(f->l), 0);
}

/* No state file could be set up: nothing is programmed, undoing still works. */
static void no_journal_programs_nothing(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL, sel = MSR_UNCORE_PERFEVTSEL0;

	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x1), 0);
	ledger_set_no_journal(-ENOSPC);
	assert_int_equal(ledger_journal_state(), LEDGER_JOURNAL_DOWN);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel, 0x420167), -ENOSPC);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x2), -ENOSPC);
	assert_int_equal(ledger_remember(f->l, &f->hw, 0, MSR_UNCORE_PMC0), -ENOSPC);
	assert_non_null(strstr(ledger_hint(-ENOSPC, HW_OP_WRITE), "no state file could be set up"));
	assert_int_equal(regfile_writes(f->rf, 0, sel), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0x1);
	assert_int_equal(ledger_count(f->l), 1);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0);
	/* state_file = none: changes are made, unjournaled. */
	ledger_set_no_journal(0);
	assert_int_equal(ledger_journal_state(), LEDGER_JOURNAL_NONE);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel, 0x420167), 0);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	ledger_set_journal(NULL);
	assert_int_equal(ledger_journal_state(), LEDGER_JOURNAL_UNSET);
}

static void release_writes_original_and_forgets(void **state)
{
	struct fixture *f = *state;
	uint32_t sel = MSR_UNCORE_PERFEVTSEL0 + 3;

	regfile_set(f->rf, 0, sel, 0x77);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel, 0x420180), 0);
	assert_int_equal(ledger_release(f->l, &f->hw, 0, sel), 0);
	assert_int_equal(regfile_get(f->rf, 0, sel), 0x77);
	assert_int_equal(ledger_count(f->l), 0);
	assert_int_equal(ledger_release(f->l, &f->hw, 0, sel), -ENOENT);
}

static void forget_writes_nothing(void **state)
{
	struct fixture *f = *state;
	uint32_t sel = MSR_UNCORE_PERFEVTSEL0 + 3;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	assert_int_equal(ledger_write(f->l, &f->hw, 0, sel, 0x420180), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x9), 0);
	/* Another agent takes counter 3. */
	regfile_set(f->rf, 0, sel, 0x4300c0);
	assert_int_equal(ledger_forget(f->l, 0, sel), 0);
	assert_int_equal(ledger_forget_bits(f->l, 0, ctrl, 0x8), 0);
	assert_int_equal(ledger_forget(f->l, 0, sel), -ENOENT);
	assert_int_equal(ledger_forget_bits(f->l, 0, ctrl, 0x8), -ENOENT);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 0, sel), 0x4300c0);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0x8);
}

static void kinds_do_not_mix(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x1), 0);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, ctrl, 0), -EINVAL);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0, 1), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0, 2), -EINVAL);
	assert_int_equal(regfile_get(f->rf, 0, ctrl), 0x1);
}

static void move_cpu_restores_through_new_cpu(void **state)
{
	struct fixture *f = *state;
	unsigned failed = 9;

	regfile_set(f->rf, 2, MSR_UNCORE_PERFEVTSEL0, 0x42);
	assert_int_equal(ledger_write(f->l, &f->hw, 2, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 2, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x1), 0);
	regfile_set_online(f->rf, 2, false);
	ledger_move_cpu(f->l, 2, 3);
	assert_false(ledger_written(f->l, 2, MSR_UNCORE_PERFEVTSEL0, NULL));
	assert_true(ledger_written(f->l, 3, MSR_UNCORE_PERFEVTSEL0, NULL));
	assert_int_equal(ledger_bits(f->l, 3, MSR_UNCORE_PERF_GLOBAL_CTRL), 0x1);
	assert_int_equal(ledger_restore(f->l, &f->hw, &failed), 0);
	assert_int_equal(failed, 0);
	assert_int_equal(regfile_get(f->rf, 3, MSR_UNCORE_PERFEVTSEL0), 0x42);
	assert_int_equal(regfile_get(f->rf, 3, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
	/* Socket 0 was never touched. */
	assert_int_equal(regfile_writes(f->rf, 0, MSR_UNCORE_PERFEVTSEL0), 0);
}

static void move_cpu_merges_keeping_oldest_original(void **state)
{
	struct fixture *f = *state;
	uint32_t ctrl = MSR_UNCORE_PERF_GLOBAL_CTRL;

	regfile_set(f->rf, 0, MSR_UNCORE_PERFEVTSEL0, 0x10);
	assert_int_equal(ledger_write(f->l, &f->hw, 0, MSR_UNCORE_PERFEVTSEL0, 0x20), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 0, ctrl, 0x1), 0);
	/* Same package register reached through CPU 1: it now reads 0x20. */
	assert_int_equal(ledger_write(f->l, &f->hw, 1, MSR_UNCORE_PERFEVTSEL0, 0x30), 0);
	assert_int_equal(ledger_set_bits(f->l, &f->hw, 1, ctrl, 0x2), 0);
	ledger_move_cpu(f->l, 0, 1);
	assert_int_equal(ledger_count(f->l), 2);
	assert_int_equal(ledger_bits(f->l, 1, ctrl), 0x3);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 1, MSR_UNCORE_PERFEVTSEL0), 0x10);
	assert_int_equal(regfile_get(f->rf, 1, ctrl), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(write_remembers_original_once, setup, teardown),
		cmocka_unit_test_setup_teardown(set_bits_preserves_others_and_records_only_clear_bits,
						setup, teardown),
		cmocka_unit_test_setup_teardown(set_bits_already_set_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_keeps_bits_set_after_start, setup, teardown),
		cmocka_unit_test_setup_teardown(clear_bits_only_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_order_shared_first_then_reverse, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_continues_past_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_offline_cpu_counts_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_offline_cpu_keeps_registers_left, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_left_leaves_what_another_agent_took, setup,
						teardown),
		cmocka_unit_test_setup_teardown(finish_left_hands_a_taken_register_to_its_ledger, setup,
						teardown),
		cmocka_unit_test_setup_teardown(failed_first_write_records_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(no_journal_programs_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(release_writes_original_and_forgets, setup, teardown),
		cmocka_unit_test_setup_teardown(forget_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(kinds_do_not_mix, setup, teardown),
		cmocka_unit_test_setup_teardown(move_cpu_restores_through_new_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(move_cpu_merges_keeping_oldest_original, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
