/*
 * A collector added by one file and one registration line: the test
 * collector of tests/collectors/col_tick.c, linked into this test only,
 * shows up in the configuration (its section, keys and messages), in
 * --list-events, in every snapshot's status and values (JSON, Prometheus,
 * table), and is restarted by a reload that changes its settings with its
 * counter carried over, with nothing else edited.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "collector.h"
#include "conf.h"
#include "cpu.h"
#include "json.h"
#include "metric.h"
#include "prom.h"
#include "table.h"
#include "helpers.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"

static void registered_after_the_built_in_collectors(void **state)
{
	const struct collector_ops *tick = collector_find("tick");

	(void)state;
	assert_non_null(tick);
	assert_ptr_equal(collector_registry[collector_registry_n - 1], tick);
	assert_int_equal(collector_register(tick), -EEXIST);
}

/* The writers handle METRIC_MAX_FAMILIES families: the registry stays below, none left out. */
static void every_declared_family_fits_the_writers(void **state)
{
	const struct metric_family *declared[METRIC_MAX_FAMILIES];

	(void)state;
	/* At the limit, some would have been left out. */
	assert_true(metric_families_declared(declared) < METRIC_MAX_FAMILIES);
}

static void its_section_is_parsed_like_any_other(void **state)
{
	static struct conf conf;
	static struct conf_errors errs;
	char buf[512];
	const bool *settings;

	(void)state;
	assert_int_equal(conf_load_string("t.conf", "[tick]\nrefuse = yes\n", &conf, &errs), 0);
	settings = collector_settings(&conf, collector_find("tick"));
	assert_true(settings[0]);       /* enabled, by default */
	assert_true(settings[1]);       /* refuse */
	assert_false(settings[2]);      /* degrade, by default */

	assert_int_equal(conf_load_string("t.conf", "[tick]\nbogus = 1\nrefuse = maybe\n", &conf,
					  &errs), -EINVAL);
	assert_int_equal(errs.n, 2);
	assert_string_equal(conf_error_format(&errs.list[0], buf, sizeof(buf)),
			    "t.conf:2: bogus: unknown key in [tick] (expected enabled, refuse, degrade)");
	assert_string_equal(conf_error_format(&errs.list[1], buf, sizeof(buf)),
			    "t.conf:3: refuse: expected yes/no, true/false, on/off or 1/0, got 'maybe'");

	assert_int_equal(conf_load_string("t.conf", "[tock]\n", &conf, &errs), -EINVAL);
	assert_string_equal(conf_error_format(&errs.list[0], buf, sizeof(buf)),
			    "t.conf:1: unknown section '[tock]' (expected [daemon], [uncore], "
			    "[thermal], [core], [pcu], [imc], [k10temp], [hsmp] or [tick])");
}

static void it_lists_its_events(void **state)
{
	struct strbuf out;
	struct cpu_info info;

	(void)state;
	memset(&info, 0, sizeof(info));
	strbuf_init(&out);
	collector_find("tick")->list_events(&info, &out);
	assert_string_equal(out.buf, "tick (a test collector, one count per sample):\n"
			    "  ticks                                one per sample\n");
	strbuf_free(&out);
}

/* A sampler on the simulated Westmere-EP with the configuration text. */
struct run {
	struct sim *sim;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
	struct sampler *sampler;
	struct conf conf;
};

static void run_open(struct run *r, const char *conf_text)
{
	char dir[4096], err[256];
	static struct conf_errors errs;

	memset(r, 0, sizeof(*r));
	assert_int_equal(conf_load_string("t.conf", conf_text, &r->conf, &errs), 0);
	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	r->sim = sim_open("westmere-ep-2s", dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	assert_non_null(r->sim);
	sim_bind(r->sim, &r->hw);
	assert_int_equal(cpu_detect(&r->hw, &r->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&r->hw, &r->topo, err, sizeof(err)), 0);
	assert_int_equal(sampler_new(&r->conf, &r->hw, &r->info, &r->topo, &r->sampler, err,
				     sizeof(err)), 0);
}

static void run_close(struct run *r)
{
	sampler_free(r->sampler);
	snapshot_clear();
	cpu_topology_free(&r->topo);
	hw_close(&r->hw);
}

/* The three documents of snapshot s (the table from s to itself), concatenated. */
static char *documents(struct snapshot *s)
{
	struct strbuf out;

	strbuf_init(&out);
	assert_int_equal(json_write_snapshot(s, &out), 0);
	assert_int_equal(prom_write(s, &out), 0);
	assert_int_equal(table_write(s, s, &out), 0);
	return out.buf;
}

static void it_reports_its_status_everywhere(void **state)
{
	struct run r;
	struct snapshot *s;
	char *text;

	(void)state;
	run_open(&r, "[tick]\ndegrade = yes\n");
	s = sampler_sample(r.sampler);
	text = documents(s);
	if (!strstr(text, "{\"name\": \"tick\", \"enabled\": true, \"up\": true, "
		    "\"state\": \"up\", \"reason\": \"degraded by its configuration\", "
		    "\"errors\": 0}") ||
	    !strstr(text, "uncored_collector_up{collector=\"tick\"} 1\n") ||
	    !strstr(text, "  tick     up       errors 0: degraded by its configuration\n"))
		fail_msg("tick missing from:\n%s", text);
	/* Its values: a JSON field of each socket, a family, a table line (no change: 0). */
	if (!strstr(text, "}], \"tick_samples\": 1},\n {\"socket\": 1") ||
	    !strstr(text, "\"tick_samples\": 1}], \"cpus\"") ||
	    !strstr(text, "# HELP uncored_tick_samples_total Samples the tick test collector took.\n"
			  "# TYPE uncored_tick_samples_total counter\n"
			  "uncored_tick_samples_total{socket=\"0\"} 1\n"
			  "uncored_tick_samples_total{socket=\"1\"} 1\n") ||
	    !strstr(text, "  tick samples                                            0\n"))
	{
		fprintf(stderr, "%s", text);
		fail_msg("tick values missing");
	}
	/* The built-in collectors are where they were. */
	assert_ptr_equal(snapshot_find_collector(s, "uncore"), &s->collectors[0]);
	assert_ptr_equal(snapshot_find_collector(s, "tick"), &s->collectors[s->n_collectors - 1]);
	free(text);
	snapshot_release(s);
	run_close(&r);

	run_open(&r, "[tick]\nrefuse = yes\n");
	s = sampler_sample(r.sampler);
	text = documents(s);
	if (!strstr(text, "{\"name\": \"tick\", \"enabled\": true, \"up\": false, "
		    "\"state\": \"down\", \"reason\": \"refused by its configuration\", "
		    "\"errors\": 0}") ||
	    !strstr(text, "uncored_collector_up{collector=\"tick\"} 0\n") ||
	    !strstr(text, "uncored_collector_applicable{collector=\"tick\"} 1\n"))
		fail_msg("tick not down in:\n%s", text);
	free(text);
	snapshot_release(s);
	run_close(&r);
}

/*
 * Wait (up to 30 s, for a hang) until the current snapshot shows tick up
 * as want with reason; *ret_ticks gets its counter of socket 0 (0 if none).
 */
static bool wait_for_tick(bool want, const char *reason, uint64_t *ret_ticks)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 3000; i++) {
		struct snapshot *s = snapshot_acquire();
		const struct snapshot_collector *c = s ? snapshot_find_collector(s, "tick") : NULL;
		const struct collector_ops *ops = collector_find("tick");
		const struct metric_sample *v = s ? snapshot_find_sample(s, ops->families[0], 0, NULL)
						  : NULL;
		bool ok = c && c->up == want && strcmp(c->reason, reason) == 0;

		*ret_ticks = v ? v->value.u : 0;
		snapshot_release(s);
		if (ok)
			return true;
		nanosleep(&pause, NULL);
	}
	return false;
}

static void a_reload_that_changes_its_settings_restarts_it(void **state)
{
	struct run r;
	struct conf fresh;
	static struct conf_errors errs;
	uint64_t before, after;

	(void)state;
	run_open(&r, "[daemon]\ninterval = 0.05\n[tick]\nrefuse = yes\n");
	assert_int_equal(sampler_start(r.sampler), 0);
	assert_true(wait_for_tick(false, "refused by its configuration", &before));
	assert_int_equal(before, 0);    /* down: nothing added */

	assert_int_equal(conf_load_string("t.conf", "[daemon]\ninterval = 0.05\n[tick]\n"
					  "degrade = yes\n", &fresh, &errs), 0);
	sampler_post_conf(r.sampler, &fresh);
	assert_true(wait_for_tick(true, "degraded by its configuration", &before));
	assert_true(before >= 1);

	/* Restarted with the degradation off: its count goes on from where it was. */
	assert_int_equal(conf_load_string("t.conf", "[daemon]\ninterval = 0.05\n", &fresh, &errs),
			 0);
	sampler_post_conf(r.sampler, &fresh);
	assert_true(wait_for_tick(true, "", &after));
	assert_true(after > before);
	run_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registered_after_the_built_in_collectors),
		cmocka_unit_test(every_declared_family_fits_the_writers),
		cmocka_unit_test(its_section_is_parsed_like_any_other),
		cmocka_unit_test(it_lists_its_events),
		cmocka_unit_test(it_reports_its_status_everywhere),
		cmocka_unit_test(a_reload_that_changes_its_settings_restarts_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
