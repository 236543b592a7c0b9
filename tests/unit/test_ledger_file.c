/*
 * The ledger's state file: the records the pmu ledger journals before each
 * write, the start-up recovery that undoes a killed daemon's leftovers on a
 * simulated machine (its own registers restored, another agent's left
 * alone), and the refusals: a foreign file, another backend, a held lock.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "ledger_file.h"
#include "pmu.h"
#include "sim.h"

struct fixture {
	char dir[4096], path[4200];
	struct sim *sim;
	struct hw hw;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	helpers_mkdtemp(f->dir, sizeof(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/ledger", f->dir);
	f->sim = sim_open("westmere-ep-2s", NULL, SIM_CLOCK_STEPPED, err, sizeof(err));
	assert_non_null(f->sim);
	sim_bind(f->sim, &f->hw);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	hw_close(&f->hw);
	helpers_rmtree(f->dir);
	free(f);
	return 0;
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *fp = fopen(path, "r");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static uint64_t reg(struct fixture *f, int cpu, uint32_t msr)
{
	uint64_t v;

	assert_int_equal(hw_read_msr(&f->hw, cpu, msr, &v), 0);
	return v;
}

static void journals_each_change_before_the_write(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct ledger_file *lf;
	struct pmu_ledger *l;
	char err[256] = "";

	assert_int_equal(ledger_file_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_false(rec.found);
	pmu_set_journal(lf);
	l = pmu_ledger_new();
	assert_int_equal(pmu_remember(l, &f->hw, 0, 0x3b0), 0);
	assert_int_equal(pmu_write(l, &f->hw, 0, 0x3c0, 0x420167), 0);
	assert_int_equal(pmu_write(l, &f->hw, 0, 0x3c0, 0x420167), 0);   /* unchanged: no record */
	assert_int_equal(pmu_set_bits(l, &f->hw, 0, 0x391, 0x3), 0);
	assert_int_equal(pmu_forget_bits(l, 0, 0x391, 0x2), 0);
	assert_string_equal(slurp(f->path),
			    "uncored-ledger 1 /\n"
			    "own 0 0x3b0 0x0 -\n"
			    "own 0 0x3c0 0x0 0x420167\n"
			    "bits 0 0x391 0x3\n"
			    "bits 0 0x391 0x1\n");
	assert_int_equal(pmu_restore(l, &f->hw, NULL), 0);
	/* After a restore the journal holds the live state: nothing. */
	assert_string_equal(slurp(f->path), "uncored-ledger 1 /\n");
	pmu_ledger_free(l);
	pmu_set_journal(NULL);
	assert_int_equal(ledger_file_error(lf), 0);
	ledger_file_close(lf);
	assert_int_equal(access(f->path, F_OK), -1);
}

/*
 * A killed daemon's journal: on cpu 0 (socket 0) everything is still as it
 * left it; on cpu 6 (socket 1) another agent has since reprogrammed the
 * event select, so that socket's enable bits and counters are left alone.
 */
static void recovery_restores_ours_and_leaves_theirs(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct ledger_file *lf;
	char err[256] = "";

	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x420167), 0);
	assert_int_equal(sim_poke(f->sim, 0, 0x391, 0x81), 0);
	assert_int_equal(sim_poke(f->sim, 0, 0x3b0, 0x999), 0);
	assert_int_equal(sim_poke(f->sim, 6, 0x3c0, 0x400160), 0);
	assert_int_equal(sim_poke(f->sim, 6, 0x391, 0x1), 0);
	assert_int_equal(sim_poke(f->sim, 6, 0x3b0, 0x888), 0);
	helpers_write_file(f->path,
			   "uncored-ledger 1 /\n"
			   "own 0 0x3b0 0x5 -\n"
			   "own 0 0x3c0 0x0 0x420167\n"
			   "bits 0 0x391 0x1\n"
			   "own 6 0x3b0 0x7 -\n"
			   "own 6 0x3c0 0x0 0x420167\n"
			   "bits 6 0x391 0x1\n"
			   "own 1 0x186 0x0 0x43003c\n"
			   "drop 1 0x186\n"
			   "garbage line\n"
			   "own 0 0x3c1 0x0 0x4601");   /* cut short by the kill */
	assert_int_equal(ledger_file_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_true(rec.found);
	assert_int_equal(rec.cleaned, 3);
	assert_int_equal(rec.left, 2);
	assert_int_equal(rec.failed, 0);
	assert_int_equal(reg(f, 0, 0x3c0), 0);
	assert_int_equal(reg(f, 0, 0x391), 0x80);   /* another agent's bit 7 survives */
	assert_int_equal(reg(f, 0, 0x3b0), 0x5);
	assert_int_equal(reg(f, 6, 0x3c0), 0x400160);
	assert_int_equal(reg(f, 6, 0x391), 0x1);
	assert_int_equal(reg(f, 6, 0x3b0), 0x888);
	assert_string_equal(slurp(f->path), "uncored-ledger 1 /\n");
	ledger_file_close(lf);
}

static void refuses_foreign_files_and_a_held_lock(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct ledger_file *lf, *second;
	char err[256] = "";

	helpers_write_file(f->path, "something else\n");
	assert_int_equal(ledger_file_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not an uncored state file"));
	assert_string_equal(slurp(f->path), "something else\n");

	/* Written for another device root: discarded, nothing applied. */
	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x400167), 0);
	helpers_write_file(f->path, "uncored-ledger 1 /srv/tree\nown 0 0x3c0 0x0 0x400167\n");
	assert_int_equal(ledger_file_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_false(rec.found);
	assert_int_equal(reg(f, 0, 0x3c0), 0x400167);

	err[0] = '\0';
	assert_int_equal(ledger_file_open(f->path, "/", &f->hw, &second, &rec, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "in use by another uncored process"));
	ledger_file_close(lf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(journals_each_change_before_the_write, setup, teardown),
		cmocka_unit_test_setup_teardown(recovery_restores_ours_and_leaves_theirs, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_foreign_files_and_a_held_lock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
