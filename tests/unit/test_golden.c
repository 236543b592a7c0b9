/*
 * Golden files: /metrics, /api/v1/snapshot and /api/v1/episodes, byte for
 * byte, for every simulated model and every shipped scenario, run with the
 * shipped configuration on the stepped clock.  They pin the output while
 * the code behind it is reshaped.
 *
 * Wall-clock values (the sample time, its duration, episode start and end,
 * and their monotonic stamps)
 * are the only ones the stepped clock does not decide; they are set to
 * fixed values before formatting.
 *
 * UNCORED_GOLDEN_UPDATE=1 writes the files instead of comparing: do that
 * only for a change meant to alter the output, and say so in its commit.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "cpu.h"
#include "json.h"
#include "prom.h"
#include "helpers.h"
#include "sampler.h"
#include "self_metrics.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"

#define N_SAMPLES 12
#define STEP_S 5.0
#define MAX_SCENARIOS 32

/*
 * The big model is for benchmarks; one idle run pins its shape.  The AMD
 * models run the scenarios whose rules they simulate (the Intel registers'
 * scenarios would repeat the idle files): their own (amd-*, which the Intel
 * models leave out), and power-cap, whose
 * package limit is HSMP's PPT source from Genoa on.  A model that refuses
 * a scenario (a rule for hardware it lacks) writes no files for it.
 */
static bool is_wanted(const char *model, const char *scenario)
{
	static const char *const amd_models[] = { "rome-2s", "milan-2s", "genoa-2s", "turin-2s" };
	static const char *const amd_scenarios[] = {
		"idle", "cpu-offline", "prochot-storm", "power-cap", "amd-dimm-hot", "amd-prochot",
		"amd-frequency-limits",
	};

	for (size_t i = 0; i < sizeof(amd_models) / sizeof(amd_models[0]); i++) {
		if (strcmp(model, amd_models[i]) != 0)
			continue;
		for (size_t k = 0; k < sizeof(amd_scenarios) / sizeof(amd_scenarios[0]); k++)
			if (strcmp(scenario, amd_scenarios[k]) == 0)
				return true;
		return false;
	}
	if (strncmp(scenario, "amd-", 4) == 0)
		return false;   /* AMD's own: prochot-storm says the same of an Intel model */
	return strcmp(model, "big") != 0 || strcmp(scenario, "idle") == 0;
}

static int scenario_names(char names[][64], int max)
{
	char dir[4096];
	struct dirent *de;
	DIR *d;
	int n = 0;

	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)) && n < max) {
		size_t len = strlen(de->d_name);

		if (len > 4 && len < 64 && strcmp(de->d_name + len - 4, ".ini") == 0)
			snprintf(names[n++], 64, "%.*s", (int)(len - 4), de->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, 64, (int (*)(const void *, const void *))strcmp);
	return n;
}

static char *read_all(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 131072;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	*ret_len = len;
	return buf;
}

/* Compare text with the golden file name, or write it when updating. */
static void check_golden(const char *name, const struct strbuf *text)
{
	char rel[4300], path[8192];
	size_t len = 0;
	char *want;

	snprintf(rel, sizeof(rel), "tests/golden/%s", name);
	helpers_source_path(rel, path, sizeof(path));
	if (getenv("UNCORED_GOLDEN_UPDATE")) {
		FILE *f = fopen(path, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(text->buf, 1, text->len, f), text->len);
		assert_int_equal(fclose(f), 0);
		return;
	}
	want = read_all(path, &len);
	if (!want)
		fail_msg("%s: no golden file (%s)", path, strerror(errno));
	if (len != text->len || memcmp(want, text->buf, len) != 0) {
		size_t i = 0;

		while (i < len && i < text->len && want[i] == text->buf[i])
			i++;
		fail_msg("%s differs from its golden file at byte %zu: got \"%.60s\", want \"%.60s\"",
			 name, i, text->buf + i, want + i);
	}
	free(want);
}

/* Fix the wall-clock values the stepped clock does not decide (and the daemon's values of them). */
static void pin_wall_clock(struct snapshot *s)
{
	s->time = 1700000000.25;
	s->last_sample_duration_s = 0.001;
	self_metrics_add(s);
	for (int i = 0; i < s->n_episodes; i++) {
		s->episodes[i].start = 1700000000.0 + i;
		s->episodes[i].mono_start = 1000.0 + i;
		s->episodes[i].running_s = 10.0;
		if (s->episodes[i].end != 0) {
			s->episodes[i].end = s->episodes[i].start + 10.0;
			s->episodes[i].mono_end = s->episodes[i].mono_start + 10.0;
		}
	}
}

static void run_one(const char *model, const char *scenario, const struct conf *conf)
{
	char dir[4096], spec[4200], err[256], name[4200];
	struct cpu_topology topo;
	struct cpu_info info;
	struct sampler *sampler;
	struct snapshot *s = NULL;
	struct strbuf out;
	struct sim *sim;
	struct hw hw;

	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	snprintf(spec, sizeof(spec), "%s:%s", model, scenario);
	sim = sim_open(spec, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!sim)
		return;   /* the scenario names hardware this model lacks */
	sim_bind(sim, &hw);
	/* As the daemon runs it: the simulator's kernel perf beside the machine. */
	if (sim_attach_perf(sim, &hw, err, sizeof(err)) != 0)
		fail_msg("%s: sim_attach_perf: %s", spec, err);
	if (cpu_detect(&hw, &info, err, sizeof(err)) != 0) {
		hw_close(&hw);   /* a CPU uncored refuses */
		return;
	}
	assert_int_equal(cpu_topology_load(&hw, &topo, err, sizeof(err)), 0);
	if (sampler_new(conf, &hw, &info, &topo, &sampler, err, sizeof(err)) != 0)
		fail_msg("%s: sampler_new: %s", spec, err);
	for (int i = 0; i < N_SAMPLES; i++) {
		sim_advance(sim, STEP_S);
		snapshot_release(s);
		s = sampler_sample(sampler);
		assert_non_null(s);
	}
	pin_wall_clock(s);

	strbuf_init(&out);
	assert_int_equal(prom_write(s, &out), 0);
	snprintf(name, sizeof(name), "%s-%s.prom", model, scenario);
	check_golden(name, &out);
	strbuf_free(&out);
	assert_int_equal(json_write_snapshot(s, &out), 0);
	snprintf(name, sizeof(name), "%s-%s.json", model, scenario);
	check_golden(name, &out);
	strbuf_free(&out);
	assert_int_equal(json_write_episodes(s, &out), 0);
	snprintf(name, sizeof(name), "%s-%s.episodes.json", model, scenario);
	check_golden(name, &out);
	strbuf_free(&out);

	snapshot_release(s);
	sampler_free(sampler);
	snapshot_clear();
	cpu_topology_free(&topo);
	hw_close(&hw);
}

static void every_model_and_scenario_matches_its_golden_files(void **state)
{
	const char *const *models = sim_model_names();
	char names[MAX_SCENARIOS][64], path[4096];
	struct conf_errors errs = { 0 };
	struct conf conf;
	int n = scenario_names(names, MAX_SCENARIOS);

	(void)state;
	assert_true(n > 0);
	helpers_source_path("conf/uncored.conf", path, sizeof(path));
	if (conf_load(path, &conf, &errs) != 0)
		fail_msg("%s does not load", path);
	for (int m = 0, k = 0; models[m]; m++)
		for (int i = 0; i < n; i++)
			if (is_wanted(models[m], names[i]) && helpers_shard_mine((size_t)k++))
				run_one(models[m], names[i], &conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_model_and_scenario_matches_its_golden_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
