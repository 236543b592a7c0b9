/*
 * Unit tests of which throttling signals a host can see: derived from the
 * collectors' declared signals and state alone, so that a new collector
 * (a PCU or iMC one) shows up in the JSON and the --once table by
 * declaring its signals, with no edit of theirs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "fake_machines.h"
#include "json.h"
#include "table.h"
#include "sample_views.h"
#include "strbuf.h"
#include "throttle_signal.h"

extern const struct collector_ops uncore_collector_ops;

static struct snapshot_collector *add(struct snapshot *s, const char *name, bool enabled,
				      bool not_applicable, bool up, const char *reason,
				      unsigned signals)
{
	struct snapshot_collector *c = snapshot_add_collector(s, name);

	assert_non_null(c);
	c->enabled = enabled;
	c->not_applicable = not_applicable;
	c->up = up;
	c->reason = reason;
	c->throttle_signals = signals;
	return c;
}

static void nothing_declared_is_not_measured_on_this_cpu(void **state)
{
	struct throttle_signal_view v[THROTTLE_N_SIGNALS];
	struct snapshot *s = skylake_snapshot();

	(void)state;
	throttle_signals_view(s, v);
	for (int i = 0; i < THROTTLE_N_SIGNALS; i++) {
		assert_false(v[i].visible);
		assert_null(v[i].collector);
		assert_string_equal(v[i].why_not, "no collector measures it on this CPU (skylake-sp)");
	}
	snapshot_release(s);
}

/* The best provider speaks for a signal: up, else down, else not applicable, else disabled. */
static void the_best_provider_speaks(void **state)
{
	struct throttle_signal_view v[THROTTLE_N_SIGNALS];
	struct snapshot *s = snapshot_new(&tiny_topo, &skylake);

	(void)state;
	add(s, "off", false, false, false, "", THROTTLE_BIT(THROTTLE_FREQ_POWER) |
	    THROTTLE_BIT(THROTTLE_PROCHOT_EXTERNAL) | THROTTLE_BIT(THROTTLE_DRAM_POWER));
	add(s, "na", true, true, false, "no uncore_pcu PMU (no uncore PMU inside a VM)",
	    THROTTLE_BIT(THROTTLE_PROCHOT_EXTERNAL) | THROTTLE_BIT(THROTTLE_PROCHOT_INTERNAL) |
	    THROTTLE_BIT(THROTTLE_DRAM_POWER));
	add(s, "broken", true, false, false, "perf_event_open: Permission denied",
	    THROTTLE_BIT(THROTTLE_PROCHOT_INTERNAL) | THROTTLE_BIT(THROTTLE_DRAM_POWER));
	add(s, "fine", true, false, true, "", THROTTLE_BIT(THROTTLE_DRAM_POWER));
	throttle_signals_view(s, v);

	assert_true(v[THROTTLE_DRAM_POWER].visible);
	assert_string_equal(v[THROTTLE_DRAM_POWER].collector, "fine");
	assert_string_equal(v[THROTTLE_DRAM_POWER].why_not, "");

	assert_false(v[THROTTLE_PROCHOT_INTERNAL].visible);
	assert_string_equal(v[THROTTLE_PROCHOT_INTERNAL].collector, "broken");
	assert_string_equal(v[THROTTLE_PROCHOT_INTERNAL].why_not,
			    "the broken collector is down: perf_event_open: Permission denied");

	assert_false(v[THROTTLE_PROCHOT_EXTERNAL].visible);
	assert_string_equal(v[THROTTLE_PROCHOT_EXTERNAL].collector, "na");
	assert_string_equal(v[THROTTLE_PROCHOT_EXTERNAL].why_not,
			    "the na collector does not apply here: no uncore_pcu PMU "
			    "(no uncore PMU inside a VM)");

	assert_false(v[THROTTLE_FREQ_POWER].visible);
	assert_string_equal(v[THROTTLE_FREQ_POWER].collector, "off");
	assert_string_equal(v[THROTTLE_FREQ_POWER].why_not,
			    "the off collector is disabled in the configuration");

	assert_false(v[THROTTLE_FREQ_THERMAL].visible);
	assert_null(v[THROTTLE_FREQ_THERMAL].collector);
	snapshot_release(s);
}

/* The uncore collector sees DRAM thermal throttling on Westmere only, with its default events. */
static void the_uncore_collector_declares_westmere_dram(void **state)
{
	struct cpu_info info;
	struct conf conf;
	char err[256];

	(void)state;
	conf_defaults(&conf);
	assert_int_equal(cpu_info_for_name("westmere-ep", &info, err, sizeof(err)), 0);
	assert_int_equal(uncore_collector_ops.throttle_signals(&info, &conf),
			 THROTTLE_BIT(THROTTLE_DRAM_THERMAL));
	uncore_settings_of(&conf)->default_events = false;
	assert_int_equal(uncore_collector_ops.throttle_signals(&info, &conf), 0);
	uncore_settings_of(&conf)->default_events = true;
	assert_int_equal(cpu_info_for_name("nehalem-ep", &info, err, sizeof(err)), 0);
	assert_int_equal(uncore_collector_ops.throttle_signals(&info, &conf), 0);
	assert_int_equal(cpu_info_for_name("skylake-sp", &info, err, sizeof(err)), 0);
	assert_int_equal(uncore_collector_ops.throttle_signals(&info, &conf), 0);
}

/* A collector of a later generation's PCU, as one file would add it: only its ops. */
static int pcu_start_result;

static int pcu_start(struct collector *c)
{
	if (pcu_start_result)
		collector_refuse(c, "no uncore_pcu PMU: no uncore PMU inside a virtual machine");
	return pcu_start_result;
}

static void pcu_sample(struct collector *c, struct snapshot *s)
{
	(void)c;
	(void)s;
}

static void pcu_stop(struct collector *c)
{
	(void)c;
}

static unsigned pcu_signals(const struct cpu_info *info, const struct conf *conf)
{
	(void)conf;
	return info->model == 0x55 ? THROTTLE_BIT(THROTTLE_PROCHOT_EXTERNAL) |
		THROTTLE_BIT(THROTTLE_PROCHOT_INTERNAL) | THROTTLE_BIT(THROTTLE_FREQ_THERMAL) |
		THROTTLE_BIT(THROTTLE_FREQ_POWER) : 0;
}

static bool pcu_is_enabled(const struct conf *conf)
{
	(void)conf;
	return true;
}

static bool pcu_conf_changed(const struct conf *old, const struct conf *new)
{
	(void)old;
	(void)new;
	return false;
}

static const struct collector_ops pcu_ops = {
	.name = "pcu",
	.start = pcu_start, .sample = pcu_sample, .stop = pcu_stop,
	.throttle_signals = pcu_signals,
	.is_enabled = pcu_is_enabled, .conf_changed = pcu_conf_changed,
};

static char *json_of(const struct snapshot *s)
{
	struct strbuf sb;

	strbuf_init(&sb);
	assert_int_equal(json_write_snapshot(s, &sb), 0);
	return strbuf_steal(&sb, NULL);
}

static char *table_of(const struct snapshot *a, const struct snapshot *b)
{
	struct strbuf sb;

	strbuf_init(&sb);
	assert_int_equal(table_write(a, b, &sb), 0);
	return strbuf_steal(&sb, NULL);
}

static void a_new_collector_plugs_in_by_its_declaration(void **state)
{
	struct collector c;
	struct conf conf;
	struct snapshot *s;
	char *text;

	(void)state;
	conf_defaults(&conf);
	/* Up on Skylake-SP: its four signals are seen, in the JSON and the table. */
	pcu_start_result = 0;
	s = snapshot_new(&tiny_topo, &skylake);
	assert_int_equal(collector_start(&c, &pcu_ops, NULL, &skylake, &tiny_topo, &conf), 0);
	collector_sample(&c, s);
	text = json_of(s);
	assert_non_null(strstr(text,
		"{\"signal\": \"prochot\", \"family\": \"uncored_prochot_seconds_total\", "
		"\"source\": \"external\", \"visible\": true, \"collector\": \"pcu\", "
		"\"why_not\": null}"));
	assert_non_null(strstr(text,
		"{\"signal\": \"frequency_limited\", \"family\": "
		"\"uncored_frequency_limited_seconds_total\", \"reason\": \"power\", "
		"\"visible\": true, \"collector\": \"pcu\", \"why_not\": null}"));
	assert_non_null(strstr(text,
		"{\"signal\": \"dram_throttled\", \"family\": \"uncored_dram_throttled_seconds_total\", "
		"\"cause\": \"thermal_or_power\", \"visible\": false, \"collector\": null, "
		"\"why_not\": \"no collector measures it on this CPU (skylake-sp)\"}"));
	free(text);
	text = table_of(s, s);
	assert_non_null(strstr(text, "\nthrottling signals:\n"
		"  DRAM throttled (thermal)           not seen: no collector measures it on this "
		"CPU (skylake-sp)\n"));
	assert_non_null(strstr(text,
		"  PROCHOT (external)                 seen (pcu collector)\n"
		"  PROCHOT (internal)                 seen (pcu collector)\n"
		"  PROCHOT (any)                      not seen: no collector measures it on this "
		"CPU (skylake-sp)\n"
		"  Frequency limited (thermal)        seen (pcu collector)\n"
		"  Frequency limited (power)          seen (pcu collector)\n"));
	free(text);
	collector_stop(&c);
	snapshot_release(s);

	/* Not applicable (no uncore PMU in a VM): the same signals, not seen, with why. */
	pcu_start_result = -ENOTSUP;
	s = snapshot_new(&tiny_topo, &skylake);
	assert_int_equal(collector_start(&c, &pcu_ops, NULL, &skylake, &tiny_topo, &conf),
			 -ENOTSUP);
	collector_sample(&c, s);
	text = json_of(s);
	assert_non_null(strstr(text,
		"\"source\": \"internal\", \"visible\": false, \"collector\": \"pcu\", "
		"\"why_not\": \"the pcu collector does not apply here: no uncore_pcu PMU: no uncore "
		"PMU inside a virtual machine\"}"));
	assert_non_null(strstr(text, "\"state\": \"not_applicable\""));
	free(text);
	collector_stop(&c);
	snapshot_release(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_declared_is_not_measured_on_this_cpu),
		cmocka_unit_test(the_best_provider_speaks),
		cmocka_unit_test(the_uncore_collector_declares_westmere_dram),
		cmocka_unit_test(a_new_collector_plugs_in_by_its_declaration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
