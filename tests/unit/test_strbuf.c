/*
 * Unit tests of the text buffer: growth, stealing, sticky failure, and the
 * Prometheus and JSON escaping and number forms.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "strbuf.h"

static void append_and_printf_grow(void **state)
{
	struct strbuf sb;
	char big[1000];

	(void)state;
	strbuf_init(&sb);
	assert_null(sb.buf);
	strbuf_append(&sb, "abc");
	strbuf_append_len(&sb, "defgh", 2);
	strbuf_printf(&sb, "-%d-%s", 42, "x");
	assert_string_equal(sb.buf, "abcde-42-x");
	assert_int_equal(sb.len, 10);
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	strbuf_printf(&sb, "%s|%s", big, big);
	assert_int_equal(sb.len, 10 + 2 * 999 + 1);
	assert_int_equal(strlen(sb.buf), sb.len);
	assert_int_equal(sb.buf[10 + 999], '|');
	assert_false(sb.failed);
	strbuf_free(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
}

static void steal_gives_text_and_resets(void **state)
{
	struct strbuf sb;
	size_t len = 0;
	char *text;

	(void)state;
	strbuf_init(&sb);
	assert_null(strbuf_steal(&sb, &len));
	strbuf_append(&sb, "hello");
	text = strbuf_steal(&sb, &len);
	assert_string_equal(text, "hello");
	assert_int_equal(len, 5);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	free(text);
}

static void failure_is_sticky(void **state)
{
	struct strbuf sb;

	(void)state;
	strbuf_init(&sb);
	strbuf_append(&sb, "ok");
	sb.failed = true;
	strbuf_append(&sb, "more");
	strbuf_printf(&sb, "%d", 1);
	strbuf_append_json_string(&sb, "x");
	assert_int_equal(sb.len, 2);
	assert_string_equal(sb.buf, "ok");
	assert_null(strbuf_steal(&sb, NULL));
	assert_null(sb.buf);
	assert_false(sb.failed);
}

struct escape_case {
	const char *name;
	void (*append)(struct strbuf *sb, const char *s);
	const char *in;
	const char *out;
};

static const struct escape_case escape_cases[] = {
	{ "label plain", strbuf_append_prom_label, "westmere-ep", "westmere-ep" },
	{ "label quote", strbuf_append_prom_label, "a\"b", "a\\\"b" },
	{ "label backslash", strbuf_append_prom_label, "a\\b", "a\\\\b" },
	{ "label newline", strbuf_append_prom_label, "a\nb", "a\\nb" },
	{ "label all", strbuf_append_prom_label, "\"\\\n", "\\\"\\\\\\n" },
	{ "help keeps quote", strbuf_append_prom_help, "say \"hi\"\\\n", "say \"hi\"\\\\\\n" },
	{ "json plain", strbuf_append_json_string, "abc", "\"abc\"" },
	{ "json quote backslash", strbuf_append_json_string, "a\"b\\c", "\"a\\\"b\\\\c\"" },
	{ "json controls", strbuf_append_json_string, "\n\t\r\b\f\x01\x1f",
	  "\"\\n\\t\\r\\b\\f\\u0001\\u001f\"" },
	{ "json utf8 untouched", strbuf_append_json_string, "\xc2\xb0" "C", "\"\xc2\xb0" "C\"" },
	{ "json empty", strbuf_append_json_string, "", "\"\"" },
};

static void escaping_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(escape_cases) / sizeof(escape_cases[0]); i++) {
		const struct escape_case *c = &escape_cases[i];
		struct strbuf sb;

		strbuf_init(&sb);
		strbuf_append(&sb, "<");
		c->append(&sb, c->in);
		strbuf_append(&sb, ">");
		if (strncmp(sb.buf + 1, c->out, strlen(c->out)) != 0 ||
		    strcmp(sb.buf + 1 + strlen(c->out), ">") != 0)
			fail_msg("%s: got '%s', expected '<%s>'", c->name, sb.buf, c->out);
		strbuf_free(&sb);
	}
}

struct double_case {
	double v;
	const char *json;
	const char *prom;
};

static void doubles_table(void **state)
{
	const struct double_case cases[] = {
		{ 0.0, "0", "0" },
		{ 1.0, "1", "1" },
		{ -3.0, "-3", "-3" },
		{ 0.1, "0.1", "0.1" },
		{ 1.5, "1.5", "1.5" },
		{ -2.25, "-2.25", "-2.25" },
		{ 1.0 / 3.0, "0.3333333333333333", "0.3333333333333333" },
		{ 1700000000.25, "1700000000.25", "1700000000.25" },
		{ 9007199254740991.0, "9007199254740991", "9007199254740991" },
		{ 1e20, "1e+20", "1e+20" },
		{ 1e300, "1e+300", "1e+300" },
		{ 5e-324, "5e-324", "5e-324" },
		{ 0.000123, "0.000123", "0.000123" },
		{ NAN, "null", "NaN" },
		{ INFINITY, "null", "+Inf" },
		{ -INFINITY, "null", "-Inf" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf a, b;

		strbuf_init(&a);
		strbuf_init(&b);
		strbuf_append_json_double(&a, cases[i].v);
		strbuf_append_prom_double(&b, cases[i].v);
		if (strcmp(a.buf, cases[i].json) != 0)
			fail_msg("json %.17g: got '%s', expected '%s'", cases[i].v, a.buf, cases[i].json);
		if (strcmp(b.buf, cases[i].prom) != 0)
			fail_msg("prom %.17g: got '%s', expected '%s'", cases[i].v, b.buf, cases[i].prom);
		if (isfinite(cases[i].v))
			assert_true(strtod(a.buf, NULL) == cases[i].v);
		strbuf_free(&a);
		strbuf_free(&b);
	}
}

static void doubles_round_trip(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15u;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		struct strbuf sb;
		double v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		strbuf_init(&sb);
		strbuf_append_json_double(&sb, v);
		assert_true(strtod(sb.buf, NULL) == v);
		assert_true(sb.len <= 24);
		strbuf_free(&sb);
	}
}

/* The shortest form by trying every precision from 1, as the reference. */
static void shortest_reference(char *buf, size_t len, double v)
{
	if (v == trunc(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* Values as the daemon formats them (fractions, shares, temperatures,
 * times, rates) and random ones over the whole range give the reference's
 * shortest form, byte for byte. */
static void doubles_shortest_as_reference(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1du;
	char want[40];

	(void)state;
	for (int i = 0; i < 200000; i++) {
		struct strbuf sb;
		double v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (i % 5) {
		case 0: memcpy(&v, &x, sizeof(v)); break;                            /* any bits */
		case 1: v = (double)(x % 1000000) / (double)(1 + x % 997); break;   /* ratios */
		case 2: v = (double)(x % 100000) * 0.001; break;                    /* decimals */
		case 3: v = 1.7e9 + (double)(x % 100000000) / 1e6; break;          /* times */
		default: v = ldexp((double)(x >> 11), (int)(x % 200) - 150); break; /* scales */
		}
		if (!isfinite(v))
			continue;
		shortest_reference(want, sizeof(want), v);
		strbuf_init(&sb);
		strbuf_append_json_double(&sb, v);
		if (strcmp(sb.buf, want) != 0)
			fail_msg("%.17g: got '%s', the shortest form is '%s'", v, sb.buf, want);
		strbuf_free(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(append_and_printf_grow),
		cmocka_unit_test(steal_gives_text_and_resets),
		cmocka_unit_test(failure_is_sticky),
		cmocka_unit_test(escaping_table),
		cmocka_unit_test(doubles_table),
		cmocka_unit_test(doubles_round_trip),
		cmocka_unit_test(doubles_shortest_as_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
