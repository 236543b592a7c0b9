/*
 * The simulator's timelines and scenario loading at scale: paints apply in
 * their order whatever the order of their times, and a scenario of 200,000
 * sections loads in linear time (it took minutes when each section was
 * compared with every earlier one, and each window inserted into the
 * middle of the segment array).
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

#include "sim_scenario.h"

#define SEC 1000000000LL
#define MANY 200000

/* The same windows painted forwards and backwards give the same timeline. */
static void paint_order_does_not_matter_for_disjoint_windows(void **state)
{
	struct sim_timeline fwd, rev;

	(void)state;
	assert_int_equal(sim_timeline_init(&fwd, 100 * SEC, 0), 0);
	assert_int_equal(sim_timeline_init(&rev, 100 * SEC, 0), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(sim_timeline_paint(&fwd, i * 2 * SEC, (i * 2 + 1) * SEC, 1,
						    SIM_PAINT_OR), 0);
	for (int i = 49; i >= 0; i--)
		assert_int_equal(sim_timeline_paint(&rev, i * 2 * SEC, (i * 2 + 1) * SEC, 1,
						    SIM_PAINT_OR), 0);
	sim_timeline_finish(&fwd);
	sim_timeline_finish(&rev);
	assert_int_equal(fwd.n, rev.n);
	assert_true(sim_timeline_integral(&fwd, 100 * SEC) == (unsigned __int128)50 * SEC);
	assert_true(sim_timeline_integral(&rev, 100 * SEC) == (unsigned __int128)50 * SEC);
	assert_int_equal(sim_timeline_rises(&rev, 100 * SEC), 50);
	sim_timeline_free(&fwd);
	sim_timeline_free(&rev);
}

/*
 * sim_timeline_and keeps a timeline only where another is nonzero (the iMC's
 * conditions only while the package is awake): an OR painted after it fills
 * the zeros again, in paint order.
 */
static void and_zeroes_where_the_other_is_zero(void **state)
{
	struct sim_timeline awake, tl;

	(void)state;
	assert_int_equal(sim_timeline_init(&awake, 10 * SEC, 1), 0);
	assert_int_equal(sim_timeline_paint(&awake, 2 * SEC, 4 * SEC, 0, SIM_PAINT_SET), 0);
	sim_timeline_finish(&awake);
	assert_int_equal(sim_timeline_init(&tl, 10 * SEC, 0), 0);
	assert_int_equal(sim_timeline_paint(&tl, 1 * SEC, 6 * SEC, 5, SIM_PAINT_SET), 0);
	assert_int_equal(sim_timeline_and(&tl, &awake), 0);
	assert_int_equal(sim_timeline_paint(&tl, 3 * SEC, 7 * SEC, 1, SIM_PAINT_OR), 0);
	sim_timeline_finish(&tl);
	assert_int_equal(sim_timeline_value_at(&tl, 1 * SEC), 5);
	assert_int_equal(sim_timeline_value_at(&tl, 2 * SEC), 0);
	assert_int_equal(sim_timeline_value_at(&tl, 3 * SEC), 1);
	assert_int_equal(sim_timeline_value_at(&tl, 5 * SEC), 5);
	assert_int_equal(sim_timeline_value_at(&tl, 6 * SEC), 1);
	assert_int_equal(sim_timeline_value_at(&tl, 7 * SEC), 0);
	/* Over one period: 5 over 1..2 and 4..6, 1 over 3..4 and 6..7. */
	assert_true(sim_timeline_integral(&tl, 10 * SEC) == (unsigned __int128)17 * SEC);
	sim_timeline_free(&tl);
	sim_timeline_free(&awake);
}

/* Overlapping paints keep their order: a later SET wins, an OR fills only zeros. */
static void overlapping_paints_apply_in_order(void **state)
{
	struct sim_timeline tl;

	(void)state;
	assert_int_equal(sim_timeline_init(&tl, 0, 40), 0);
	assert_int_equal(sim_timeline_paint(&tl, 10 * SEC, 30 * SEC, 80, SIM_PAINT_SET), 0);
	assert_int_equal(sim_timeline_paint(&tl, 0, 20 * SEC, 90, SIM_PAINT_SET), 0);
	assert_int_equal(sim_timeline_paint(&tl, 25 * SEC, SIM_FOREVER, 0, SIM_PAINT_SET), 0);
	assert_int_equal(sim_timeline_paint(&tl, 20 * SEC, 40 * SEC, 7, SIM_PAINT_OR), 0);
	sim_timeline_finish(&tl);
	assert_int_equal(sim_timeline_value_at(&tl, 5 * SEC), 90);
	assert_int_equal(sim_timeline_value_at(&tl, 15 * SEC), 90);
	assert_int_equal(sim_timeline_value_at(&tl, 22 * SEC), 80);
	assert_int_equal(sim_timeline_value_at(&tl, 27 * SEC), 7);
	assert_int_equal(sim_timeline_value_at(&tl, 45 * SEC), 0);
	sim_timeline_free(&tl);
}

/* 200,000 windows in reverse order: each would once have been a memmove of all the others. */
static void many_windows_in_reverse_order(void **state)
{
	struct sim_timeline tl;

	(void)state;
	assert_int_equal(sim_timeline_init(&tl, 0, 0), 0);
	for (int i = MANY - 1; i >= 0; i--)
		assert_int_equal(sim_timeline_paint(&tl, i * 2000000LL, i * 2000000LL + 1000000LL, 1,
						    SIM_PAINT_OR), 0);
	sim_timeline_finish(&tl);
	assert_int_equal(sim_timeline_rises(&tl, MANY * 2000000LL), MANY);
	assert_true(sim_timeline_integral(&tl, MANY * 2000000LL) ==
		    (unsigned __int128)MANY * 1000000LL);
	sim_timeline_free(&tl);
}

/* Write a scenario of n dram-throttle windows, latest first; dup repeats the first section. */
static void write_scenario(const char *path, int n, int dup)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "[scenario]\nperiod = 6000\n");
	for (int i = n; i >= 1; i--)
		fprintf(f, "[dram-throttle.%d]\nsocket = 1\nstart = %.3f\nend = %.3f\n", i,
			(i - 1) * 0.002, (i - 1) * 0.002 + 0.001);
	if (dup)
		fprintf(f, "[dram-throttle.%d]\nsocket = 0\n", n);
	fclose(f);
}

static void scenario_of_200000_sections_loads(void **state)
{
	char path[] = "/tmp/uncored-test-scenario.XXXXXX", err[512];
	struct sim_scenario *scn = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_scenario(path, MANY, 0);
	assert_int_equal(sim_scenario_load(path, &scn, err, sizeof(err)), 0);
	assert_int_equal(scn->n_rules, MANY);
	sim_scenario_free(scn);
	/* The check for a section given twice still holds, at the end of a big file. */
	write_scenario(path, MANY, 1);
	assert_int_equal(sim_scenario_load(path, &scn, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "section given twice"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paint_order_does_not_matter_for_disjoint_windows),
		cmocka_unit_test(overlapping_paints_apply_in_order),
		cmocka_unit_test(and_zeroes_where_the_other_is_zero),
		cmocka_unit_test(many_windows_in_reverse_order),
		cmocka_unit_test(scenario_of_200000_sections_loads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
