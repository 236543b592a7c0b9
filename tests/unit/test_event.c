/*
 * Unit tests of the event grammar, the built-in tables and the PERFEVTSEL
 * encoders.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "event.h"
#include "msr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct good_case {
	enum event_pmu pmu;
	const char *line;
	const char *name;
	uint8_t code, umask, cmask;
	bool edge, inv, thermal;
	unsigned arch_event;
};

static const struct good_case good_cases[] = {
	{ EVENT_PMU_UNCORE, "prochot_assertions", "prochot_assertions", 0x82, 0x01, 0, false, false, true, 0 },
	{ EVENT_PMU_UNCORE, "  dram_thermal_throttle_episodes  ", "dram_thermal_throttle_episodes",
	  0x67, 0x01, 1, true, false, true, 0 },
	{ EVENT_PMU_UNCORE, "thermal_throttling_temp_core2", "thermal_throttling_temp_core2",
	  0x80, 0x04, 0, false, false, true, 0 },
	{ EVENT_PMU_UNCORE, "dram_pre_all, event=0x66, umask=0x07", "dram_pre_all", 0x66, 0x07, 0,
	  false, false, false, 0 },
	{ EVENT_PMU_UNCORE, "x1,inv,cmask=3,edge,umask=255,event=102", "x1", 102, 255, 3,
	  true, true, false, 0 },
	{ EVENT_PMU_UNCORE, "hot , event = 0X8A , umask = 0Xf , cmask = 0x10", "hot", 0x8a, 0x0f, 0x10,
	  false, false, false, 0 },
	{ EVENT_PMU_CORE, "llc_misses", "llc_misses", 0x2e, 0x41, 0, false, false, false, 5 },
	{ EVENT_PMU_CORE, "branch_instructions", "branch_instructions", 0xc4, 0x00, 0, false, false, false, 6 },
	{ EVENT_PMU_CORE, "l2_rqsts, event=0x24, umask=0", "l2_rqsts", 0x24, 0x00, 0, false, false, false, 0 },
};

static void parses_good_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good_cases); i++) {
		const struct good_case *c = &good_cases[i];
		struct event_spec ev;
		char err[256] = "";

		assert_int_equal(event_parse(c->pmu, c->line, &ev, err, sizeof(err)), 0);
		assert_string_equal(err, "");
		assert_string_equal(ev.name, c->name);
		assert_int_equal(ev.code, c->code);
		assert_int_equal(ev.umask, c->umask);
		assert_int_equal(ev.cmask, c->cmask);
		assert_int_equal(ev.edge, c->edge);
		assert_int_equal(ev.inv, c->inv);
		assert_int_equal(ev.needs_uncore_thermal, c->thermal);
		assert_int_equal(ev.arch_event, c->arch_event);
	}
}

struct bad_case {
	enum event_pmu pmu;
	const char *line;
	const char *message;
};

static const struct bad_case bad_cases[] = {
	{ EVENT_PMU_UNCORE, "x, event=0x1ff, umask=1", "event: expected 0x00..0xff, got '0x1ff'" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=0x100", "umask: expected 0x00..0xff, got '0x100'" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=256", "umask: expected 0x00..0xff, got '256'" },
	{ EVENT_PMU_UNCORE, "x, event=-1, umask=1", "event: expected 0x00..0xff, got '-1'" },
	{ EVENT_PMU_UNCORE, "x, event=0x, umask=1", "event: expected 0x00..0xff, got '0x'" },
	{ EVENT_PMU_UNCORE, "x, event=1g, umask=1", "event: expected 0x00..0xff, got '1g'" },
	{ EVENT_PMU_UNCORE, "x, event=, umask=1", "event: expected 0x00..0xff, got ''" },
	{ EVENT_PMU_UNCORE, "x, event, umask=1", "event: expected 0x00..0xff, got ''" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1, cmask=300", "cmask: expected 0..255, got '300'" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1, foo", "unknown field 'foo' (expected event, umask, edge, cmask, inv)" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1, foo=2", "unknown field 'foo' (expected event, umask, edge, cmask, inv)" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1, edge=1", "'edge' takes no value" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1, inv=", "'inv' takes no value" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1, event=2", "'event' given twice" },
	{ EVENT_PMU_UNCORE, "x, event=1, umask=1,", "empty field (expected event, umask, edge, cmask, inv)" },
	{ EVENT_PMU_UNCORE, "x, event=1", "umask: missing (a custom event needs event=0xNN and umask=0xNN)" },
	{ EVENT_PMU_UNCORE, "x, umask=1, edge", "event: missing (a custom event needs event=0xNN and umask=0xNN)" },
	{ EVENT_PMU_UNCORE, "X y", "name: expected [a-z][a-z0-9_]*, got 'X y'" },
	{ EVENT_PMU_UNCORE, "", "name: expected [a-z][a-z0-9_]*, got ''" },
	{ EVENT_PMU_UNCORE, "9lives, event=1, umask=1", "name: expected [a-z][a-z0-9_]*, got '9lives'" },
	{ EVENT_PMU_UNCORE, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
	  "name: expected at most 47 characters, got 52" },
	{ EVENT_PMU_UNCORE, "prochot_assertions, event=0x82, umask=2",
	  "name: 'prochot_assertions' is a built-in uncore event; give the custom event another name" },
	{ EVENT_PMU_UNCORE, "llc_misses",
	  "unknown built-in uncore event 'llc_misses' (known: dram_thermal_throttled_cycles, "
	  "dram_thermal_throttle_episodes, prochot_assertions, thermal_throttling_prochot_core0..3, "
	  "thermal_throttling_temp_core0..3, thermal_throttled_temp_core0..3)" },
	{ EVENT_PMU_CORE, "prochot_assertions",
	  "unknown built-in core event 'prochot_assertions' (known: llc_references, llc_misses, "
	  "branch_instructions, branch_misses)" },
};

static void rejects_bad_lines_precisely(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct event_spec ev = { .name = "untouched" };
		char err[256] = "";

		assert_int_equal(event_parse(c->pmu, c->line, &ev, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, c->message);
		assert_string_equal(ev.name, "untouched");
	}
}

static void error_text_is_truncated_safely(void **state)
{
	struct event_spec ev;
	char err[16];

	(void)state;
	assert_int_equal(event_parse(EVENT_PMU_UNCORE, "nope", &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown built-i");
}

static void encodes_uncore_selects(void **state)
{
	struct event_spec ev;
	char err[256];

	(void)state;
	/* hardware.md §2.1 ready-made values. */
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"thermal_throttling_prochot_core0")), 0x400183);
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"thermal_throttling_prochot_core0")) | UNC_EVTSEL_OCC_CTR_RST, 0x420183);
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"dram_thermal_throttled_cycles")), 0x400167);
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"prochot_assertions")), 0x400182);
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"thermal_throttling_temp_core1")), 0x400280);
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"thermal_throttled_temp_core3")), 0x400881);
	assert_int_equal(event_uncore_evtsel(event_builtin(EVENT_PMU_UNCORE,
		"dram_thermal_throttle_episodes")), 0x1440167);   /* edge, cmask 1 */
	assert_int_equal(event_parse(EVENT_PMU_UNCORE, "x, event=0x67, umask=1, inv, cmask=2",
				     &ev, err, sizeof(err)), 0);
	assert_int_equal(event_uncore_evtsel(&ev), 0x02c00167);
	assert_int_equal(event_parse(EVENT_PMU_UNCORE, "x, event=0xff, umask=0xff, edge, inv, cmask=0xff",
				     &ev, err, sizeof(err)), 0);
	assert_int_equal(event_uncore_evtsel(&ev), 0xffc4ffff);
	assert_false(event_uncore_evtsel(&ev) & (UNC_EVTSEL_PMI | UNC_EVTSEL_OCC_CTR_RST));
}

static void encodes_core_selects(void **state)
{
	struct event_spec ev;
	char err[256];

	(void)state;
	assert_int_equal(event_core_evtsel(event_builtin(EVENT_PMU_CORE, "llc_misses")), 0x43412e);
	assert_int_equal(event_core_evtsel(event_builtin(EVENT_PMU_CORE, "llc_references")), 0x434f2e);
	assert_int_equal(event_core_evtsel(event_builtin(EVENT_PMU_CORE, "branch_misses")), 0x4300c5);
	assert_int_equal(event_parse(EVENT_PMU_CORE, "x, event=0x3c, umask=0, edge, inv, cmask=1",
				     &ev, err, sizeof(err)), 0);
	assert_int_equal(event_core_evtsel(&ev), 0x01c7003c);
	assert_false(event_core_evtsel(&ev) & (PERFEVTSEL_INT | PERFEVTSEL_ANY));
}

static void builtin_tables(void **state)
{
	const struct event_spec *t;
	size_t n;

	(void)state;
	t = event_builtins(EVENT_PMU_UNCORE, &n);
	assert_int_equal(n, 15);
	for (size_t i = 0; i < n; i++) {
		assert_true(t[i].needs_uncore_thermal);
		assert_int_equal(t[i].arch_event, 0);
		assert_ptr_equal(event_builtin(EVENT_PMU_UNCORE, t[i].name), &t[i]);
		assert_null(event_builtin(EVENT_PMU_CORE, t[i].name));
	}
	t = event_builtins(EVENT_PMU_CORE, &n);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		assert_false(t[i].needs_uncore_thermal);
		assert_int_equal(t[i].arch_event, i + 4);
	}
	assert_null(event_builtin(EVENT_PMU_CORE, "nope"));
}

static void default_sets(void **state)
{
	static const char *const uncore[] = {
		"dram_thermal_throttled_cycles", "dram_thermal_throttle_episodes", "prochot_assertions",
		"thermal_throttled_temp_core0", "thermal_throttled_temp_core1",
		"thermal_throttled_temp_core2", "thermal_throttled_temp_core3",
	};
	static const char *const core[] = { "llc_references", "llc_misses", "branch_misses" };
	const struct event_spec *const *d;
	size_t n;

	(void)state;
	d = event_defaults(EVENT_PMU_UNCORE, &n);
	assert_int_equal(n, ARRAY_SIZE(uncore));
	assert_true(n < UNCORE_N_COUNTERS);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(d[i]->name, uncore[i]);
		assert_ptr_equal(d[i], event_builtin(EVENT_PMU_UNCORE, uncore[i]));
	}
	d = event_defaults(EVENT_PMU_CORE, &n);
	assert_int_equal(n, ARRAY_SIZE(core));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(d[i]->name, core[i]);
}

/*
 * AMD's core table (hardware-amd.md §3.3): its own encodings for the names
 * both vendors have, L2 names for what perf calls cache references and
 * misses there, all four counted by default; [core] lines name either
 * vendor's built-ins, each table keeps its own.
 */
static void amd_core_table(void **state)
{
	static const struct {
		const char *name;
		uint8_t code, umask;
	} amd[] = {
		{ "l2_cache_requests", 0x60, 0xff }, { "l2_cache_misses", 0x64, 0x09 },
		{ "branch_instructions", 0xc2, 0x00 }, { "branch_misses", 0xc3, 0x00 },
	};
	const struct event_spec *const *d;
	const struct event_spec *b;
	size_t n;

	(void)state;
	d = event_defaults(EVENT_PMU_AMD_CORE, &n);
	assert_int_equal(n, ARRAY_SIZE(amd));
	for (size_t i = 0; i < n; i++) {
		b = event_builtin_own(EVENT_PMU_AMD_CORE, amd[i].name);
		assert_ptr_equal(d[i], b);
		assert_int_equal(b->code, amd[i].code);
		assert_int_equal(b->umask, amd[i].umask);
		assert_int_equal(b->arch_event, 0);
	}
	/* Intel's branch_misses stays Intel's for [core]; the L2 names reach AMD's table. */
	assert_int_equal(event_builtin(EVENT_PMU_CORE, "branch_misses")->code, 0xc5);
	assert_ptr_equal(event_builtin(EVENT_PMU_CORE, "l2_cache_misses"),
			 event_builtin_own(EVENT_PMU_AMD_CORE, "l2_cache_misses"));
	assert_null(event_builtin_own(EVENT_PMU_CORE, "l2_cache_misses"));
	assert_null(event_builtin_own(EVENT_PMU_AMD_CORE, "llc_misses"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_good_lines),
		cmocka_unit_test(rejects_bad_lines_precisely),
		cmocka_unit_test(error_text_is_truncated_safely),
		cmocka_unit_test(encodes_uncore_selects),
		cmocka_unit_test(encodes_core_selects),
		cmocka_unit_test(builtin_tables),
		cmocka_unit_test(default_sets),
		cmocka_unit_test(amd_core_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
