/*
 * grow_array: doubling from the first size, the elements kept, no move
 * when there is room, and NULL with nothing changed when the size would
 * overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "grow.h"

static void doubles_from_first_and_keeps_elements(void **state)
{
	int *v = NULL, *w;
	size_t cap = 0;

	(void)state;
	for (int i = 0; i < 100; i++) {
		v = grow_array(v, &cap, (size_t)i + 1, sizeof(*v), 16);
		assert_non_null(v);
		v[i] = i;
	}
	assert_int_equal(cap, 128);   /* 16, 32, 64, 128 */
	for (int i = 0; i < 100; i++)
		assert_int_equal(v[i], i);
	w = grow_array(v, &cap, 128, sizeof(*v), 16);
	assert_ptr_equal(w, v);       /* room enough: the same array */
	w = grow_array(v, &cap, 1000, sizeof(*v), 16);
	assert_non_null(w);
	assert_int_equal(cap, 1024);  /* doubled as often as need asks, at once */
	free(w);
}

static void overflow_changes_nothing(void **state)
{
	char *v = malloc(8);
	size_t cap = 8;

	(void)state;
	assert_non_null(v);
	assert_null(grow_array(v, &cap, SIZE_MAX / 2 + 2, 1, 8));
	assert_int_equal(cap, 8);
	assert_null(grow_array(v, &cap, SIZE_MAX / 16, 64, 8));
	assert_int_equal(cap, 8);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(doubles_from_first_and_keeps_elements),
		cmocka_unit_test(overflow_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
