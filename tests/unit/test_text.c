/*
 * Unit tests of the text helpers (text.h): the escaper every line that
 * shows text others chose goes through (the server's output, a client's
 * request, a configuration key or value) leaves no control character, no
 * byte outside ASCII and no unescaped backslash, stops before what does
 * not fit and says how much it wrote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "text.h"

static void test_escape_plain(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(text_escape("uncored: ok", 11, out, sizeof(out)), 11);
	assert_string_equal(out, "uncored: ok");
	assert_int_equal(text_escape("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

/* A forged line with a terminal escape sequence: one line, each control byte as \xNN. */
static void test_escape_controls(void **state)
{
	static const char in[] = "stopped\x1b[2J\r\n\tnext\x7f\\x1b\xc3\xa9";
	char out[128];

	(void)state;
	assert_int_equal(text_escape(in, sizeof(in) - 1, out, sizeof(out)), sizeof(in) - 1);
	assert_string_equal(out, "stopped\\x1b[2J\\x0d\\x0a\\x09next\\x7f\\x5cx1b\\xc3\\xa9");
	for (const char *c = out; *c; c++)
		assert_true(*c >= 0x20 && *c < 0x7f);
}

/* NUL bytes in the input are shown, not taken for its end. */
static void test_escape_nul(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(text_escape("a\0b", 3, out, sizeof(out)), 3);
	assert_string_equal(out, "a\\x00b");
}

/* What does not fit is left, whole escapes only; the count says where to go on. */
static void test_escape_cut(void **state)
{
	char out[8];

	(void)state;
	assert_int_equal(text_escape("abcdefghij", 10, out, sizeof(out)), 7);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(text_escape("ab\x01\x02", 4, out, sizeof(out)), 3);
	assert_string_equal(out, "ab\\x01");
	assert_int_equal(text_escape("\x01\x02", 2, out, 5), 1);
	assert_string_equal(out, "\\x01");
	assert_int_equal(text_escape("\x01", 1, out, 4), 0);
	assert_string_equal(out, "");
	assert_int_equal(text_escape("a", 1, out, 0), 0);
}

static void test_quote(void **state)
{
	char out[16];

	(void)state;
	text_quote("ab\x1b" "c  \n", out, sizeof(out));
	assert_string_equal(out, "ab?c");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_plain),
		cmocka_unit_test(test_escape_controls),
		cmocka_unit_test(test_escape_nul),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
