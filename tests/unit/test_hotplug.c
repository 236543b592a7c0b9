/*
 * Unit tests for hotplug.c: the registers left unrestored are tried again
 * only when that can help (at the first check, after a CPU came online,
 * when more were left), never once per sample for nothing; and a check
 * reads the kernel's online list once, not every CPU's online file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "config.h"
#include "hotplug.h"
#include "msr.h"
#include "ledger.h"
#include "regfile.h"
#include "sim.h"

/* Two sockets of two CPUs; cpus 2 and 3 go offline in the test. */
static struct hw_cpu cpus[4];

struct fixture {
	struct regfile *rf;
	struct hw hw;
	struct ledger *l;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	for (int i = 0; i < 4; i++)
		cpus[i] = (struct hw_cpu){ .cpu = i, .socket = i / 2, .core = i % 2, .online = true };
	f->rf = regfile_new(cpus, 4);
	regfile_define_socket(f->rf, 0, MSR_UNCORE_PERFEVTSEL0, 0);
	regfile_define_socket(f->rf, 1, MSR_UNCORE_PERFEVTSEL0, 0);
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

/* Program the select through cpu, take cpu offline and stop: the select is left. */
static void leave_select(struct fixture *f, int cpu)
{
	const struct ledger_record *v;
	size_t before = ledger_left(&v, NULL);

	assert_int_equal(ledger_write(f->l, &f->hw, cpu, MSR_UNCORE_PERFEVTSEL0, 0x420167), 0);
	regfile_set_online(f->rf, cpu, false);
	assert_int_equal(ledger_restore(f->l, &f->hw, NULL), -ENXIO);
	assert_int_equal(ledger_left(&v, NULL), before + 1);
}

static unsigned select_reads(struct fixture *f, int cpu)
{
	return regfile_reads(f->rf, cpu, MSR_UNCORE_PERFEVTSEL0);
}

static void left_registers_are_tried_only_when_due(void **state)
{
	struct fixture *f = *state;
	const struct ledger_record *v;
	struct hotplug *h;
	unsigned reads;

	leave_select(f, 2);
	h = hotplug_new(&f->hw);
	assert_non_null(h);

	/* The first check tries (the state file's leftovers, at start). */
	reads = select_reads(f, 2);
	hotplug_check(h);
	assert_true(select_reads(f, 2) > reads);
	assert_int_equal(ledger_left(&v, NULL), 1);

	/* Samples with nothing new touch nothing. */
	reads = select_reads(f, 2);
	for (int i = 0; i < 5; i++)
		hotplug_check(h);
	assert_int_equal(select_reads(f, 2), reads);

	/* More left (a stop at a reload, cpu 3 offline): tried once, then quiet again. */
	leave_select(f, 3);
	hotplug_check(h);
	assert_true(select_reads(f, 3) > 0);
	assert_int_equal(ledger_left(&v, NULL), 2);
	reads = select_reads(f, 3);
	hotplug_check(h);
	assert_int_equal(select_reads(f, 3), reads);
	assert_int_equal(hotplug_offline_count(h), 1);

	/* The CPU coming online is what puts them back. */
	regfile_set_online(f->rf, 2, true);
	regfile_set_online(f->rf, 3, true);
	hotplug_check(h);
	assert_int_equal(hotplug_online_count(h), 2);
	assert_int_equal(ledger_left(&v, NULL), 0);
	assert_int_equal(regfile_get(f->rf, 2, MSR_UNCORE_PERFEVTSEL0), 0);
	reads = select_reads(f, 2);
	hotplug_check(h);
	assert_int_equal(select_reads(f, 2), reads);
	hotplug_free(h);
}

/* The simulated machine's enumerate, counted: each call reads every CPU's online file. */
static const struct hw_ops *sim_ops;
static int n_enumerates;

static int counted_enumerate(void *ctx, struct hw_cpu *ret_cpus, int max, int *ret_n)
{
	n_enumerates++;
	return sim_ops->enumerate(ctx, ret_cpus, max, ret_n);
}

/*
 * skylake-sp-2s: once started, a check reads /sys/devices/system/cpu/online
 * (one file) and never enumerates the CPUs one by one, yet sees a CPU go
 * offline and come back, and an unchanged list changes nothing.
 */
static void a_check_reads_the_online_list_once(void **state)
{
	struct hw_ops counted;
	struct hw hw;
	struct hotplug *h;
	char err[256], list[64];
	struct sim *sim = sim_open("skylake-sp-2s", UNCORED_SCENARIO_DIR, SIM_CLOCK_STEPPED, err,
				   sizeof(err));

	(void)state;
	assert_non_null(sim);
	sim_bind(sim, &hw);
	sim_ops = hw.ops;
	counted = *hw.ops;
	counted.enumerate = counted_enumerate;
	hw.ops = &counted;
	assert_int_equal(hw_read_online_list(&hw, list, sizeof(list)), 0);
	assert_string_equal(list, "0-111\n");
	h = hotplug_new(&hw);
	assert_non_null(h);
	n_enumerates = 0;
	hotplug_check(h);
	assert_int_equal(sim_set_online(sim, 5, false), 0);
	assert_int_equal(sim_set_online(sim, 6, false), 0);
	assert_int_equal(hw_read_online_list(&hw, list, sizeof(list)), 0);
	assert_string_equal(list, "0-4,7-111\n");
	hotplug_check(h);
	assert_int_equal(hotplug_offline_count(h), 2);
	assert_int_equal(sim_set_online(sim, 5, true), 0);
	hotplug_check(h);
	assert_int_equal(hotplug_online_count(h), 1);
	/* The same list again changes nothing; the next change is still seen. */
	hotplug_check(h);
	assert_int_equal(hotplug_online_count(h), 1);
	assert_int_equal(hotplug_offline_count(h), 2);
	assert_int_equal(sim_set_online(sim, 5, false), 0);
	hotplug_check(h);
	assert_int_equal(hotplug_offline_count(h), 3);
	assert_int_equal(n_enumerates, 0);
	hotplug_free(h);
	hw_close(&hw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_check_reads_the_online_list_once),
		cmocka_unit_test_setup_teardown(left_registers_are_tried_only_when_due, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
