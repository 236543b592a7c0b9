/*
 * A scenario checked against the simulated model (daemon/sim/sim_check.c):
 * a rule for hardware the model lacks is refused with FILE:LINE, a rule
 * whose condition nothing on the model reads is accepted with a note, and
 * every shipped scenario opens on every model it is meant for and is
 * refused, saying where, on the others.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "sim.h"

static const char *scenario_dir(void)
{
	static char buf[4096];

	return helpers_source_path("conf/scenarios", buf, sizeof(buf));
}

struct bad_case {
	const char *name;
	const char *model;
	const char *text;
	const char *expected;   /* after "PATH:" */
};

static const struct bad_case bad_cases[] = {
	{ "DIMM slot 1 on one DIMM per channel", "genoa-2s",
	  "[dimm-temperature.1]\nsocket = 0\nchannel = 0\nslot = 1\ncelsius = 90\n",
	  "4: slot: expected 0 or 'all' (model 'genoa-2s' has one DIMM, in slot 0, on each "
	  "channel)" },
	{ "DIMM channel beyond the model", "turin-2s",
	  "[dimm-temperature.1]\nsocket = 1\nchannel = 12\nslot = 0\ncelsius = 90\n",
	  "3: channel: expected 0 to 11 or 'all' (model 'turin-2s' has 12 memory channels per "
	  "socket)" },
	{ "DIMM socket beyond the model", "genoa-2s",
	  "[dimm-temperature.1]\nsocket = 2\nchannel = 0\nslot = 0\ncelsius = 90\n",
	  "2: socket: expected 0 to 1 or 'all' (model 'genoa-2s' has 2 sockets)" },
	{ "DIMM sensor on Westmere", "westmere-ep-2s",
	  "; no HSMP\n[dimm-temperature.1]\nsocket = 0\nchannel = 0\nslot = 0\ncelsius = 90\n",
	  "2: [dimm-temperature.1]: expected a model whose HSMP reports DIMM temperatures "
	  "(GET_DIMM_THERMAL: AMD Genoa and later), model 'westmere-ep-2s' has none" },
	{ "DIMM sensor on Milan", "milan-2s",
	  "[dimm-temperature.1]\nsocket = 0\nchannel = all\nslot = all\ncelsius = 90\n",
	  "1: [dimm-temperature.1]: expected a model whose HSMP reports DIMM temperatures "
	  "(GET_DIMM_THERMAL: AMD Genoa and later), model 'milan-2s' has none" },
	{ "frequency limit on Milan", "milan-2s",
	  "[frequency-limit.1]\nsocket = 0\nreason = thermal\n",
	  "1: [frequency-limit.1]: expected a model whose HSMP reports frequency-limit sources "
	  "(GET_SOCKET_FREQ_LIMIT: AMD Genoa and later), model 'milan-2s' has none" },
	{ "frequency limit on Sapphire Rapids", "sapphire-rapids-2s",
	  "[scenario]\nperiod = 10\n\n[frequency-limit.3]\nsocket = all\nreason = power\n",
	  "4: [frequency-limit.3]: expected a model whose HSMP reports frequency-limit sources "
	  "(GET_SOCKET_FREQ_LIMIT: AMD Genoa and later), model 'sapphire-rapids-2s' has none" },
	{ "DRAM channel beyond the iMC", "skylake-sp-2s",
	  "[dram-throttle.1]\nsocket = 0\nchannel = 6\n",
	  "3: channel: expected 0 to 5 or 'all' (model 'skylake-sp-2s' has 6 memory channels "
	  "per socket)" },
	{ "DRAM channel beyond Genoa's", "genoa-2s",
	  "[dram-critical.1]\nsocket = 0\nchannel = 12\n",
	  "3: channel: expected 0 to 11 or 'all' (model 'genoa-2s' has 12 memory channels per "
	  "socket)" },
	{ "core beyond Genoa's", "genoa-2s",
	  "[temperature.1]\nsocket = 0\ncore = 12\ncelsius = 90\n",
	  "3: core: expected a core id of model 'genoa-2s' (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, "
	  "11) or 'all'" },
	{ "cpu beyond Turin's", "turin-2s", "[load.1]\ncpu = 64\n",
	  "2: cpu: expected 0 to 63 or 'all' (model 'turin-2s' has 64 cpus)" },
};

static void hardware_the_model_lacks_is_an_error(void **state)
{
	char dir[256];

	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		char path[512], spec[600], err[1024], expected[1024];
		struct sim *s;

		snprintf(path, sizeof(path), "%s/bad%zu.ini", dir, i);
		helpers_write_file(path, c->text);
		snprintf(spec, sizeof(spec), "%s:%s", c->model, path);
		snprintf(expected, sizeof(expected), "%s:%s", path, c->expected);
		s = sim_open(spec, NULL, SIM_CLOCK_STEPPED, err, sizeof(err));
		if (s)
			fail_msg("%s: opened", c->name);
		if (strcmp(err, expected) != 0)
			fail_msg("%s:\n got      %s\n expected %s", c->name, err, expected);
	}
	helpers_rmtree(dir);
}

/* A note expected: the scenario file, the rule's section, and what follows "[SECTION]: ". */
struct note {
	const char *file, *section, *text;
};

/* The line of [section] in the shipped scenario file, so that the header can change. */
static int section_line(const char *file, const char *section)
{
	char path[4400], line[512], want[128];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scenario_dir(), file);
	snprintf(want, sizeof(want), "[%s]\n", section);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strcmp(line, want) == 0) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("%s: no [%s]", path, section);
	return 0;
}

/* Open spec and compare its notes with want (ended by a NULL file). */
static void expect_notes(const char *spec, const struct note *want)
{
	char err[1024], note[1024];
	struct sim *s = sim_open(spec, scenario_dir(), SIM_CLOCK_STEPPED, err, sizeof(err));
	struct hw hw;
	int i;

	if (!s)
		fail_msg("%s: %s", spec, err);
	for (i = 0; want[i].file; i++) {
		snprintf(note, sizeof(note), "%s/%s:%d: [%s]: %s", scenario_dir(), want[i].file,
			 section_line(want[i].file, want[i].section), want[i].section, want[i].text);
		if (!sim_note(s, i))
			fail_msg("%s: note %d missing, expected %s", spec, i, note);
		if (strcmp(sim_note(s, i), note) != 0)
			fail_msg("%s note %d:\n got      %s\n expected %s", spec, i, sim_note(s, i), note);
	}
	if (sim_note(s, i))
		fail_msg("%s: a note more: %s", spec, sim_note(s, i));
	sim_bind(s, &hw);
	hw_close(&hw);
}

#define UNREAD "the rule changes nothing there"
#define CORE_THROTTLE_AMD(model) \
	{ "prochot-storm.ini", "core-throttle.1", "nothing on model '" model "' reads it: AMD " \
	  "EPYC has no per-core throttle status like Intel's IA32_THERM_STATUS; " UNREAD }

static void conditions_nothing_reads_are_noted(void **state)
{
	static const struct note genoa_heatwave[] = {
		{ "dram-heatwave.ini", "dram-throttle.1", "nothing on model 'genoa-2s' reads it: "
		  "AMD EPYC counts no DRAM throttling; a [dimm-temperature.N] rule heats a DIMM, "
		  "which HSMP reports from Genoa on; " UNREAD },
		{ NULL, NULL, NULL },
	};
	static const struct note rome_storm[] = {
		{ "prochot-storm.ini", "prochot.1", "nothing on model 'rome-2s' reads it: PROCHOT is "
		  "read through HSMP, which Zen 2 has no driver for; " UNREAD },
		CORE_THROTTLE_AMD("rome-2s"),
		{ NULL, NULL, NULL },
	};
	static const struct note milan_storm[] = {
		CORE_THROTTLE_AMD("milan-2s"),
		{ NULL, NULL, NULL },
	};
	static const struct note westmere_channel[] = {
		{ "dimm-hot-channel.ini", "dram-throttle.1", "model 'westmere-ep-2s' counts DRAM "
		  "throttling per socket, not per channel: the whole socket's memory reads as "
		  "throttled" },
		{ "dimm-hot-channel.ini", "dram-critical.1", "nothing on model 'westmere-ep-2s' reads "
		  "it: critical DRAM throttling is counted by the server iMC, which it lacks; "
		  UNREAD },
		{ NULL, NULL, NULL },
	};
	/* The package power limit is HSMP's PPT source from Genoa on; the DRAM one nothing's. */
	static const struct note genoa_power[] = {
		{ "power-cap.ini", "power-limit.2", "nothing on model 'genoa-2s' reads it: AMD EPYC "
		  "counts no DRAM power limiting; " UNREAD },
		{ NULL, NULL, NULL },
	};
	static const struct note none[] = { { NULL, NULL, NULL } };

	(void)state;
	expect_notes("genoa-2s:dram-heatwave", genoa_heatwave);
	expect_notes("rome-2s:prochot-storm", rome_storm);
	expect_notes("milan-2s:prochot-storm", milan_storm);
	expect_notes("westmere-ep-2s:dimm-hot-channel", westmere_channel);
	expect_notes("genoa-2s:power-cap", genoa_power);
	expect_notes("skylake-sp-2s:dimm-hot-channel", none);
	expect_notes("sapphire-rapids-2s:power-cap", none);
	expect_notes("westmere-ep-2s:dram-heatwave", none);
	expect_notes("genoa-2s:amd-prochot", none);
	expect_notes("genoa-2s:amd-dimm-hot", none);
	expect_notes("turin-2s:amd-frequency-limits", none);
}

/*
 * The shipped scenarios meant for some models only: each is refused on
 * every model not listed (NULL-terminated), and opens on those listed.
 * Every scenario not here opens on every model.
 */
static const struct {
	const char *scenario;
	const char *models[4];
} scoped[] = {
	{ "conflict", { "westmere-ep-2s", "nehalem-ep-2s", "big" } },           /* 0x3c0 */
	{ "counter-wrap", { "westmere-ep-2s", "nehalem-ep-2s", "big" } },       /* 0x394 */
	{ "perf-uncore", { "westmere-ep-2s", "nehalem-ep-2s", "big" } },        /* NHM uncore */
	{ "perf-profiler", { "INTEL" } },                                       /* Intel core PMU */
	{ "global-disable", { "INTEL" } },
	{ "amd-dimm-hot", { "genoa-2s", "turin-2s" } },                         /* HSMP DIMMs */
	{ "amd-frequency-limits", { "genoa-2s", "turin-2s" } },                 /* HSMP 0x19 */
};

static bool is_amd(const char *model)
{
	return strcmp(model, "rome-2s") == 0 || strcmp(model, "milan-2s") == 0 ||
	       strcmp(model, "genoa-2s") == 0 || strcmp(model, "turin-2s") == 0;
}

static bool meant_for(const char *scenario, const char *model)
{
	for (size_t i = 0; i < sizeof(scoped) / sizeof(scoped[0]); i++) {
		if (strcmp(scoped[i].scenario, scenario) != 0)
			continue;
		for (int k = 0; k < 4 && scoped[i].models[k]; k++)
			if (strcmp(scoped[i].models[k], model) == 0 ||
			    (strcmp(scoped[i].models[k], "INTEL") == 0 && !is_amd(model)))
				return true;
		return false;
	}
	return true;
}

static void every_shipped_scenario_on_every_model(void **state)
{
	int n_scenarios = 0, n_refused = 0;
	struct dirent *de;
	DIR *d = opendir(scenario_dir());

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char name[256], prefix[4400];

		if (len <= 4 || len >= sizeof(name) || strcmp(de->d_name + len - 4, ".ini") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 4), de->d_name);
		snprintf(prefix, sizeof(prefix), "%s/%s:", scenario_dir(), de->d_name);
		n_scenarios++;
		for (const char *const *m = sim_model_names(); *m; m++) {
			char spec[300], err[1024];
			struct sim *s;
			struct hw hw;

			snprintf(spec, sizeof(spec), "%s:%s", *m, name);
			s = sim_open(spec, scenario_dir(), SIM_CLOCK_STEPPED, err, sizeof(err));
			if (s) {
				if (!meant_for(name, *m))
					fail_msg("%s: opened, but it is meant for other models", spec);
				sim_bind(s, &hw);
				sim_advance(s, 70);
				hw_close(&hw);
				continue;
			}
			n_refused++;
			if (meant_for(name, *m))
				fail_msg("%s: refused: %s", spec, err);
			/* FILE:LINE: where the rule is, then what was expected. */
			if (strncmp(err, prefix, strlen(prefix)) != 0 ||
			    strspn(err + strlen(prefix), "0123456789") == 0 ||
			    !strstr(err, "expected"))
				fail_msg("%s: refused without FILE:LINE: %s", spec, err);
		}
	}
	closedir(d);
	assert_true(n_scenarios >= 16);
	assert_true(n_refused > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hardware_the_model_lacks_is_an_error),
		cmocka_unit_test(conditions_nothing_reads_are_noted),
		cmocka_unit_test(every_shipped_scenario_on_every_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
