/*
 * Unit tests of the generic collector side: the status in parts (why not
 * up, degradations that come and go, a bounded list), how start
 * failures are explained, the refusal of a disabled collector, and the
 * engine choice where the backend has no perf interface.
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

#include "col_engine.h"
#include "collector.h"
#include "engine_build.h"
#include "helpers.h"
#include "perf_sys.h"
#include "place_labels.h"
#include "sim.h"

static char buf[4096];
#define REASON(c) collector_reason((c), buf, sizeof(buf))

static void degradations_are_listed_while_they_hold(void **state)
{
	struct collector c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_string_equal(REASON(&c), "");
	collector_degrade(&c, "stale 0", "socket %d: unreadable", 0);
	collector_degrade(&c, "stale 1", "socket %d: unreadable", 1);
	assert_string_equal(REASON(&c), "socket 0: unreadable; socket 1: unreadable");
	/* Noted again: replaced in place, not added. */
	collector_degrade(&c, "stale 0", "socket 0: still unreadable");
	assert_string_equal(REASON(&c), "socket 0: still unreadable; socket 1: unreadable");
	collector_recover(&c, "stale 0");
	assert_string_equal(REASON(&c), "socket 1: unreadable");
	collector_recover(&c, "stale 0");      /* not listed: nothing */
	collector_recover(&c, "stale 1");
	assert_string_equal(REASON(&c), "");
	assert_int_equal(c.status.n_degradations, 0);
}

static void notes_are_kept_once(void **state)
{
	struct collector c;

	(void)state;
	memset(&c, 0, sizeof(c));
	collector_note(&c, "event '%s' listed twice", "x");
	collector_note(&c, "event '%s' listed twice", "x");
	collector_note(&c, "event '%s' listed twice", "y");
	assert_string_equal(REASON(&c), "event 'x' listed twice; event 'y' listed twice");
}

static void the_list_is_bounded(void **state)
{
	struct collector c;
	char key[16], expected[512] = "";

	(void)state;
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < COLLECTOR_MAX_DEGRADATIONS + 3; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		collector_degrade(&c, key, "d%d", i);
	}
	assert_int_equal(c.status.n_degradations, COLLECTOR_MAX_DEGRADATIONS);
	for (int i = 0; i < COLLECTOR_MAX_DEGRADATIONS; i++)
		snprintf(expected + strlen(expected), sizeof(expected) - strlen(expected), "d%d; ", i);
	strcat(expected, "3 more");
	assert_string_equal(REASON(&c), expected);
	/* A listed one still clears; an unlisted one stays counted until restart. */
	collector_recover(&c, "k0");
	assert_int_equal(c.status.n_degradations, COLLECTOR_MAX_DEGRADATIONS - 1);
	assert_int_equal(c.status.n_unlisted, 3);
}

static void reason_truncates_safely(void **state)
{
	struct collector c;
	char small[12];

	(void)state;
	memset(&c, 0, sizeof(c));
	collector_refuse(&c, "why not: %s", "no facility");
	collector_degrade(&c, "a", "degraded");
	assert_string_equal(REASON(&c), "why not: no facility; degraded");
	assert_string_equal(collector_reason(&c, small, sizeof(small)), "why not: no");
	assert_string_equal(collector_reason(&c, small, 1), "");
}

/* A fake collector whose start does what the test says. */
static int start_result;
static const char *start_refusal;
static const char *start_note;

static int fake_start(struct collector *c)
{
	if (start_note)
		collector_note(c, "%s", start_note);
	if (start_refusal)
		collector_refuse(c, "%s", start_refusal);
	return start_result;
}

static void fake_sample(struct collector *c, struct snapshot *s)
{
	(void)c;
	(void)s;
}

static void fake_stop(struct collector *c)
{
	(void)c;
}

static bool fake_enabled = true;

static bool fake_is_enabled(const struct conf *conf)
{
	(void)conf;
	return fake_enabled;
}

static bool fake_conf_changed(const struct conf *old, const struct conf *new)
{
	(void)old;
	(void)new;
	return false;
}

static const struct collector_ops fake_ops = {
	.name = "fake",
	.start = fake_start, .sample = fake_sample, .stop = fake_stop,
	.is_enabled = fake_is_enabled, .conf_changed = fake_conf_changed,
};

static void start_failures_are_explained(void **state)
{
	struct conf conf;
	struct collector c;

	(void)state;
	conf_defaults(&conf);
	/* Refused with a reason: the notes made before do not hold for a collector that is off. */
	start_result = -ENOTSUP;
	start_refusal = "no such facility";
	start_note = "socket 0: something";
	assert_int_equal(collector_start(&c, &fake_ops, NULL, NULL, NULL, &conf), -ENOTSUP);
	assert_false(c.up);
	assert_string_equal(REASON(&c), "no such facility");
	collector_stop(&c);
	/* Failed without a reason: what it noted is why. */
	start_refusal = NULL;
	start_result = -ENODEV;
	assert_int_equal(collector_start(&c, &fake_ops, NULL, NULL, NULL, &conf), -ENODEV);
	assert_string_equal(REASON(&c), "socket 0: something");
	assert_int_equal(c.status.n_degradations, 0);
	collector_stop(&c);
	/* Nothing said at all: a generic sentence. */
	start_note = NULL;
	assert_int_equal(collector_start(&c, &fake_ops, NULL, NULL, NULL, &conf), -ENODEV);
	assert_string_equal(REASON(&c), "fake collector failed to start: No such device");
	collector_stop(&c);
	/* Up, degraded. */
	start_result = 0;
	start_note = "socket 1: no TjMax";
	assert_int_equal(collector_start(&c, &fake_ops, NULL, NULL, NULL, &conf), 0);
	assert_true(c.up);
	assert_string_equal(REASON(&c), "socket 1: no TjMax");
	collector_stop(&c);
}

/* -ENOTSUP from an enabled collector is "not applicable", in the snapshot too; nothing else is. */
static void lacking_the_facility_is_not_applicable(void **state)
{
	static const struct {
		bool enabled;
		int result;
		bool not_applicable;
		const char *state;
	} cases[] = {
		{ true, -ENOTSUP, true, "not_applicable" },
		{ false, -ENOTSUP, false, "disabled" },
		{ true, -EIO, false, "down" },
		{ true, -EPERM, false, "down" },
		{ true, 0, false, "up" },
	};
	struct conf conf;
	struct collector c;

	(void)state;
	conf_defaults(&conf);
	start_note = NULL;
	start_refusal = "no such facility";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snapshot *s = snapshot_new(&(struct cpu_topology){ 0 }, NULL);
		const struct snapshot_collector *sc;

		assert_non_null(s);
		fake_enabled = cases[i].enabled;
		start_result = cases[i].result;
		assert_int_equal(collector_start(&c, &fake_ops, NULL, NULL, NULL, &conf),
				 cases[i].result);
		assert_int_equal(c.not_applicable, cases[i].not_applicable);
		collector_sample(&c, s);
		sc = snapshot_find_collector(s, "fake");
		assert_non_null(sc);
		assert_int_equal(sc->not_applicable, cases[i].not_applicable);
		assert_string_equal(snapshot_collector_state(sc), cases[i].state);
		assert_int_equal(snapshot_collector_applies(sc),
				 cases[i].enabled && !cases[i].not_applicable);
		collector_stop(&c);
		snapshot_release(s);
	}
	fake_enabled = true;
}

/*
 * Every built-in collector whose section's enabled key says no refuses to
 * start with the one sentence for it (collector_refuse_disabled), before it
 * looks at the machine: -ENOTSUP, and disabled, not "not applicable".
 */
static void a_disabled_collector_says_so(void **state)
{
	const struct cpu_info info = { .vendor = "GenuineIntel" };
	const struct cpu_topology topo = { 0 };
	struct conf conf;
	struct collector c;

	(void)state;
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct collector_ops *ops = collector_registry[i];
		const struct conf_section *sec = ops->conf_section;

		conf_defaults(&conf);
		for (size_t k = 0; k < sec->n_keys; k++)
			if (strcmp(sec->keys[k].name, "enabled") == 0)
				*(bool *)(conf.settings[i] + sec->keys[k].offset) = false;
		assert_false(collector_ops_enabled(ops, &conf));
		assert_int_equal(collector_start(&c, ops, NULL, &info, &topo, &conf), -ENOTSUP);
		assert_string_equal(REASON(&c), "disabled in the configuration");
		assert_false(c.not_applicable);
		assert_false(c.up);
		collector_stop(&c);
	}
}

/*
 * A backend without a perf interface (hw->perf NULL): engine = auto counts
 * through msr and says why, engine = perf is refused with the reason, and
 * a PMU only perf reaches (the iMC) leaves its collector not applicable.
 */
static void a_backend_without_perf_chooses_msr(void **state)
{
	const struct cpu_info info = { .vendor = "GenuineIntel" };
	struct hw hw = { .perf = NULL };
	struct collector c = { .hw = &hw, .info = &info };
	struct col_engine_choice ch;
	struct engine e = { 0 };
	char reason[128];

	(void)state;
	assert_int_equal(engine_probe(ENGINE_PERF, NULL, ENGINE_PMU_CORE, reason, sizeof(reason)),
			 -ENODEV);
	assert_string_equal(reason, "this backend has no perf interface");
	assert_int_equal(engine_probe(ENGINE_MSR, NULL, ENGINE_PMU_CORE, reason, sizeof(reason)), 0);
	assert_int_equal(engine_probe(ENGINE_NONE, NULL, ENGINE_PMU_CORE, reason, sizeof(reason)),
			 -EINVAL);

	assert_int_equal(col_engine_choose(CONF_ENGINE_AUTO, ENGINE_PMU_CORE, "core", NULL, &ch), 0);
	assert_int_equal(ch.kind, ENGINE_MSR);
	assert_string_equal(ch.why, "this backend has no perf interface; engine = auto falls back "
			    "to msr");
	assert_int_equal(col_engine_choose(CONF_ENGINE_PERF, ENGINE_PMU_CORE, "core", NULL, &ch),
			 -ENODEV);
	assert_string_equal(ch.why, "engine = perf in [core], but this backend has no perf "
			    "interface");

	assert_int_equal(col_engine_open(&c, CONF_ENGINE_AUTO, ENGINE_PMU_IMC, "imc",
					 CONF_CONFLICT_YIELD, &e), -ENOTSUP);
	assert_null(e.ops);
	assert_string_equal(REASON(&c), "this CPU's imc is counted through perf only, and this "
			    "backend has no perf interface");
}

/*
 * The simulated kernel at its default perf_event_paranoid, 2, its /proc as
 * mounted with subset=pid (scenario proc_subset = pid) or whole, for a
 * process that drops CAP_SYS_ADMIN at start: readable, 2 lets it reopen
 * perf events and the core collector counts through perf; hidden, the
 * level counts as the strictest, so engine = auto takes the msr route and
 * says why (ProcSubset=pid hid the level, and the daemon chose perf).
 */
static void an_unreadable_paranoid_level_counts_as_the_strictest(void **state)
{
	for (int hidden = 0; hidden < 2; hidden++) {
		char dir[256], root[256], path[600], spec[700], err[512], level[PERF_SYS_PARANOID_TEXT_MAX];
		struct col_engine_choice ch;
		struct perf_sys *ps = calloc(1, sizeof(*ps));
		struct sim *sim;
		struct hw hw;

		(void)state;
		assert_non_null(ps);
		helpers_mkdtemp(dir, sizeof(dir));
		helpers_mkdtemp(root, sizeof(root));
		snprintf(path, sizeof(path), "%s/s.ini", dir);
		helpers_write_file(path, hidden ? "[scenario]\nproc_subset = pid\n" :
				   "[scenario]\nproc_subset = all\n");
		snprintf(spec, sizeof(spec), "skylake-sp-2s:%s", path);
		sim = sim_open(spec, NULL, SIM_CLOCK_STEPPED, err, sizeof(err));
		if (!sim)
			fail_msg("sim_open(%s): %s", spec, err);
		sim_bind(sim, &hw);
		assert_int_equal(sim_write_sysfs(sim, root, err, sizeof(err)), 0);
		assert_int_equal(sim_perf_sys(sim, root, ps), 0);
		hw_set_perf(&hw, ps);
		snprintf(path, sizeof(path), "%s/proc/sys/kernel/perf_event_paranoid", root);
		assert_int_equal(access(path, F_OK) == 0, !hidden);

		assert_true(perf_sys_paranoid_text(ps, level, sizeof(level)) == (bool)hidden);
		assert_string_equal(level, hidden ? "unreadable" : "2");
		perf_sys_set_drops_sys_admin(ps, true);
		assert_int_equal(col_engine_choose(CONF_ENGINE_AUTO, ENGINE_PMU_CORE, "core", ps, &ch),
				 0);
		if (hidden) {
			assert_int_equal(ch.kind, ENGINE_MSR);
			assert_string_equal(ch.why, "perf_event_paranoid is unreadable and CAP_SYS_ADMIN "
					    "is dropped at start (user): no perf group could be "
					    "reopened after a CPU comes back or a reload; engine = "
					    "auto falls back to msr");
		} else {
			assert_int_equal(ch.kind, ENGINE_PERF);
			assert_string_equal(ch.why, "the kernel has a core PMU (engine = auto)");
		}
		hw_close(&hw);
		helpers_rmtree(root);
		helpers_rmtree(dir);
	}
}

static void the_registry_is_complete_and_consistent(void **state)
{
	(void)state;
	assert_true(collector_registry_n > 0);
	assert_true(collector_registry_n <= SNAPSHOT_MAX_COLLECTORS);
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct collector_ops *ops = collector_registry[i];

		assert_non_null(ops->conf_section);
		assert_string_equal(ops->conf_section->name, ops->name);
		assert_non_null(ops->start);
		assert_non_null(ops->sample);
		assert_non_null(ops->stop);
		/* Without is_enabled, the section's enabled key says it. */
		if (!ops->is_enabled) {
			bool has_key = false;

			for (size_t k = 0; k < ops->conf_section->n_keys; k++)
				has_key |= ops->conf_section->keys[k].kind == CONF_KIND_BOOL &&
					   strcmp(ops->conf_section->keys[k].name, "enabled") == 0;
			assert_true(has_key);
		}
		assert_ptr_equal(collector_find(ops->name), ops);
	}
	assert_null(collector_find("no such collector"));
}

/* What place_label() must give: the name, then each number or nothing. */
static void expected_label(char *out, size_t len, const char *name, const int place[3])
{
	char num[3][16];

	for (int i = 0; i < 3; i++)
		if (place[i] >= 0)
			snprintf(num[i], sizeof(num[i]), "%d", place[i]);
		else
			num[i][0] = '\0';
	snprintf(out, len, "%s" METRIC_LABEL_SEP "%s" METRIC_LABEL_SEP "%s" METRIC_LABEL_SEP "%s",
		 name, num[0], num[1], num[2]);
}

static void place_labels_are_made_once_and_stay_right(void **state)
{
	struct place_labels *labels = NULL;
	char lb[96], want[96];
	const char *first = NULL;

	(void)state;
	/* Twice over more places than the first index and pool hold: found again after growing. */
	for (int round = 0; round < 2; round++)
		for (int cpu = -1; cpu < 600; cpu++) {
			int place[3] = { cpu < 0 ? 1 : -1, cpu < 0 ? 7 : -1, cpu };
			const char *text = place_label(&labels, "core", place, lb, sizeof(lb));

			expected_label(want, sizeof(want), "core", place);
			assert_string_equal(text, want);
			assert_ptr_not_equal(text, lb);
			if (cpu == -1 && round == 1)
				assert_ptr_equal(text, first);
			if (cpu == 599)
				first = place_label(&labels, "core", (const int[3]){ 1, 7, -1 }, lb,
						    sizeof(lb));
		}
	assert_string_equal(place_label(&labels, "core", (const int[3]){ -1, -1, -1 }, lb,
					sizeof(lb)),
			    "core" METRIC_LABEL_SEP METRIC_LABEL_SEP METRIC_LABEL_SEP);
	assert_string_equal(place_label(&labels, "core", (const int[3]){ 0, 0, 0 }, lb,
					sizeof(lb)),
			    "core" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "0");
	/* A text too long to keep is written to lb, whole or truncated. */
	{
		char name[80];
		char small[8];

		memset(name, 'x', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		expected_label(want, sizeof(want), name, (const int[3]){ 2, -1, 3 });
		assert_ptr_equal(place_label(&labels, name, (const int[3]){ 2, -1, 3 }, lb,
					     sizeof(lb)), lb);
		assert_string_equal(lb, want);
		assert_ptr_equal(place_label(&labels, "core", (const int[3]){ 5, 5, 5 }, small,
					     sizeof(small)), small);
		assert_string_equal(small, "core" METRIC_LABEL_SEP "5" METRIC_LABEL_SEP);
	}
	place_labels_free(labels);
	place_labels_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(degradations_are_listed_while_they_hold),
		cmocka_unit_test(notes_are_kept_once),
		cmocka_unit_test(the_list_is_bounded),
		cmocka_unit_test(reason_truncates_safely),
		cmocka_unit_test(start_failures_are_explained),
		cmocka_unit_test(lacking_the_facility_is_not_applicable),
		cmocka_unit_test(a_disabled_collector_says_so),
		cmocka_unit_test(a_backend_without_perf_chooses_msr),
		cmocka_unit_test(an_unreadable_paranoid_level_counts_as_the_strictest),
		cmocka_unit_test(the_registry_is_complete_and_consistent),
		cmocka_unit_test(place_labels_are_made_once_and_stay_right),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
