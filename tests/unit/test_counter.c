/*
 * Unit tests of wrap-safe counter accumulation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "counter.h"

static void delta_without_wrap(void **state)
{
	(void)state;
	assert_int_equal(counter_delta(100, 150, 48), 50);
	assert_int_equal(counter_delta(0, 0, 48), 0);
}

static void delta_across_wrap_at_each_width(void **state)
{
	static const unsigned widths[] = { 32, 40, 44, 48, 64 };

	(void)state;
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		unsigned w = widths[i];
		uint64_t top = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;

		assert_int_equal(counter_delta(top - 4, 5, w), 10);
		assert_int_equal(counter_delta(top, 0, w), 1);
	}
}

static void bits_above_width_are_ignored(void **state)
{
	(void)state;
	/* A 48-bit counter read with junk above bit 47 must not add it. */
	assert_int_equal(counter_delta(UINT64_C(0xffff000000000010), 0x20, 48), 0x10);
}

static void accumulates_past_width(void **state)
{
	struct counter c;
	uint64_t top = (UINT64_C(1) << 48) - 1;

	(void)state;
	counter_init(&c, 48, top - 99);
	assert_int_equal(counter_add(&c, top), 99);
	assert_int_equal(counter_add(&c, 50), 51);
	assert_int_equal(counter_add(&c, 50), 0);
	assert_int_equal(c.total, 150);
	/* A 64-bit total keeps growing past the hardware width. */
	for (int i = 0; i < 4; i++) {
		counter_add(&c, top / 2);
		counter_add(&c, 50);
	}
	assert_true(c.total > top);
}

static void rebase_adds_nothing(void **state)
{
	struct counter c;

	(void)state;
	counter_init(&c, 48, 10);
	counter_add(&c, 20);
	counter_rebase(&c, 5);
	assert_int_equal(c.total, 10);
	assert_int_equal(counter_add(&c, 7), 2);
	assert_int_equal(c.total, 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(delta_without_wrap),
		cmocka_unit_test(delta_across_wrap_at_each_width),
		cmocka_unit_test(bits_above_width_are_ignored),
		cmocka_unit_test(accumulates_past_width),
		cmocka_unit_test(rebase_adds_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
