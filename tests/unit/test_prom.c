/*
 * Unit tests of the Prometheus exposition: exact text for a small machine,
 * expected and forbidden lines for the shapes the hardware can take,
 * escaping, 64-bit counters, the per-snapshot cache, and promtool's
 * verdict when promtool is installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpu.h"
#include "fake_machines.h"
#include "prom.h"
#include "self_metrics.h"
#include "throttle_families.h"

static const char tiny_expected[] =
	"# HELP uncored_build_info Build identity of uncored; always 1.\n"
	"# TYPE uncored_build_info gauge\n"
	"uncored_build_info{version=\"1.2.3\"} 1\n"
	"# HELP uncored_cpu_info Detected CPU per socket; always 1.\n"
	"# TYPE uncored_cpu_info gauge\n"
	"uncored_cpu_info{socket=\"0\",vendor=\"GenuineIntel\",family=\"6\",model=\"44\","
	"microarch=\"westmere-ep\"} 1\n"
	"# HELP uncored_collector_up Whether an enabled collector that applies to this CPU is "
	"working (1) or not (0).\n"
	"# TYPE uncored_collector_up gauge\n"
	"uncored_collector_up{collector=\"thermal\"} 1\n"
	"# HELP uncored_collector_applicable Whether this machine has an enabled collector's "
	"facility (1) or not (0, then the collector is not in uncored_collector_up).\n"
	"# TYPE uncored_collector_applicable gauge\n"
	"uncored_collector_applicable{collector=\"thermal\"} 1\n"
	"# HELP uncored_samples_total Samples taken since start.\n"
	"# TYPE uncored_samples_total counter\n"
	"uncored_samples_total 3\n"
	"# HELP uncored_sample_errors_total Failed hardware reads per collector.\n"
	"# TYPE uncored_sample_errors_total counter\n"
	"uncored_sample_errors_total{collector=\"thermal\"} 2\n"
	"# HELP uncored_last_sample_duration_seconds Time the last sample took.\n"
	"# TYPE uncored_last_sample_duration_seconds gauge\n"
	"uncored_last_sample_duration_seconds 0.25\n"
	"# HELP uncored_cpu_hotplug_total CPUs seen going offline or coming online since start.\n"
	"# TYPE uncored_cpu_hotplug_total counter\n"
	"uncored_cpu_hotplug_total{event=\"offline\"} 0\n"
	"uncored_cpu_hotplug_total{event=\"online\"} 0\n"
	"# HELP uncored_core_temperature_celsius Core temperature.\n"
	"# TYPE uncored_core_temperature_celsius gauge\n"
	"uncored_core_temperature_celsius{socket=\"0\",core=\"0\"} 55\n"
	"# HELP uncored_tjmax_celsius TCC activation temperature (TjMax).\n"
	"# TYPE uncored_tjmax_celsius gauge\n"
	"uncored_tjmax_celsius{socket=\"0\"} 100\n";

/* The text of s, with the daemon's own values added from its fields as the sampler does. */
static char *format(struct snapshot *s)
{
	struct strbuf sb;
	char *text;

	self_metrics_add(s);
	strbuf_init(&sb);
	assert_int_equal(prom_write(s, &sb), 0);
	text = strbuf_steal(&sb, NULL);
	assert_non_null(text);
	return text;
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void tiny_exact(void **state)
{
	struct snapshot *s = tiny_snapshot();
	char *text = format(s);

	(void)state;
	assert_string_equal(text, tiny_expected);
	free(text);
	snapshot_release(s);
}

struct line_case {
	const char *name;
	struct snapshot *(*make)(void);
	const char *present[20];
	const char *absent[20];
};

static const struct line_case line_cases[] = {
	{ "westmere",
	  westmere_snapshot,
	  { "uncored_uncore_events_total{socket=\"1\",event=\"dram_thermal_throttled_cycles\"} 1234\n",
	    "uncored_uncore_events_total{socket=\"0\",event=\"prochot_assertions\"} 2\n",
	    "uncored_uncore_clockticks_total{socket=\"1\"} 133000000\n",
	    "uncored_pmu_conflicts_total{collector=\"uncore\",socket=\"0\"} 1\n",
	    "uncored_pmu_conflicts_total{collector=\"core\",cpu=\"7\"} 0\n",
	    "uncored_core_thermal_throttling{socket=\"0\",core=\"1\"} 1\n",
	    "uncored_core_prochot_active{socket=\"1\",core=\"0\"} 0\n",
	    "uncored_package_thermal_throttling{socket=\"1\"} 1\n",
	    "uncored_package_temperature_celsius{socket=\"1\"} 61\n",
	    "uncored_kernel_core_throttles_total{socket=\"1\",core=\"1\"} 3\n",
	    "uncored_kernel_package_throttles_total{socket=\"0\"} 7\n",
	    "uncored_core_instructions_total{socket=\"1\",core=\"0\",cpu=\"6\"} 2006\n",
	    "uncored_core_ref_cycles_total{socket=\"0\",core=\"1\",cpu=\"1\"} 900\n",
	    "uncored_core_events_total{socket=\"0\",core=\"0\",cpu=\"4\",event=\"llc_misses\"} 11\n",
	    "uncored_last_sample_duration_seconds 0.0015\n",
	    "uncored_collector_up{collector=\"core\"} 1\n" },
	  { "qhl_requests", "branch_misses", "uncored_rapl_", NULL } },
	{ "skylake without uncore, RAPL on socket 0",
	  skylake_snapshot,
	  { "uncored_rapl_package_throttled_seconds_total{socket=\"0\"} 0.25\n",
	    "uncored_rapl_dram_throttled_seconds_total{socket=\"0\"} 1.5\n",
	    "power limit (MSR_PKG_PERF_STATUS); power-limit throttling, not thermal.\n",
	    "uncored_collector_up{collector=\"core\"} 0\n",
	    "microarch=\"skylake-sp\"",
	    NULL },
	  { "uncored_uncore_", "collector=\"uncore\"",
	    "uncored_rapl_package_throttled_seconds_total{socket=\"1\"}",
	    "uncored_core_instructions_total", "uncored_core_events_total", "conflicts", NULL } },
	{ "tiny",
	  tiny_snapshot,
	  { "uncored_samples_total 3\n", NULL },
	  { "uncored_package_", "uncored_core_thermal_throttling", "uncored_kernel_",
	    "collector=\"core\"", "collector=\"uncore\"", NULL } },
};

static void lines_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(line_cases) / sizeof(line_cases[0]); i++) {
		const struct line_case *c = &line_cases[i];
		struct snapshot *s = c->make();
		char *text = format(s);

		for (int j = 0; c->present[j]; j++)
			if (!strstr(text, c->present[j]))
				fail_msg("%s: missing '%s' in:\n%s", c->name, c->present[j], text);
		for (int j = 0; c->absent[j]; j++)
			if (strstr(text, c->absent[j]))
				fail_msg("%s: unexpected '%s' in:\n%s", c->name, c->absent[j], text);
		free(text);
		snapshot_release(s);
	}
}

static void every_family_once_with_help_and_type(void **state)
{
	struct snapshot *s = westmere_snapshot();
	char *text = format(s);

	(void)state;
	assert_int_equal(count(text, "# HELP uncored_pmu_conflicts_total "), 1);
	assert_int_equal(count(text, "# TYPE uncored_pmu_conflicts_total counter\n"), 1);
	assert_int_equal(count(text, "# HELP "), count(text, "# TYPE "));
	assert_int_equal(count(text, "# TYPE "), 23);
	/* Fixed order: build info first, core events last. */
	assert_ptr_equal(strstr(text, "# HELP uncored_build_info "), text);
	assert_true(strstr(text, "uncored_core_ref_cycles_total") <
		    strstr(text, "# HELP uncored_core_events_total"));
	assert_true(strstr(text, "uncored_tjmax_celsius") >
		    strstr(text, "uncored_package_temperature_celsius"));
	free(text);
	snapshot_release(s);
}

/*
 * A collector that does not apply is in uncored_collector_applicable (0)
 * and not in uncored_collector_up, so its alert cannot fire; a disabled
 * one is in neither.
 */
static void not_applicable_is_not_down(void **state)
{
	struct snapshot *s = skylake_snapshot();
	char *text;

	(void)state;
	s->collectors[0].enabled = true;
	s->collectors[0].not_applicable = true;
	s->collectors[0].reason = "no Nehalem/Westmere uncore PMU";
	text = format(s);
	assert_null(strstr(text, "uncored_collector_up{collector=\"uncore\"}"));
	assert_non_null(strstr(text, "uncored_collector_applicable{collector=\"uncore\"} 0\n"));
	assert_non_null(strstr(text, "uncored_collector_applicable{collector=\"thermal\"} 1\n"));
	assert_non_null(strstr(text, "uncored_collector_up{collector=\"thermal\"} 1\n"));
	/* Down is still down. */
	assert_non_null(strstr(text, "uncored_collector_up{collector=\"core\"} 0\n"));
	assert_non_null(strstr(text, "uncored_collector_applicable{collector=\"core\"} 1\n"));
	free(text);
	snapshot_release(s);
	s = skylake_snapshot();
	text = format(s);
	assert_null(strstr(text, "collector=\"uncore\""));
	free(text);
	snapshot_release(s);
}

static void counters_exact_at_max(void **state)
{
	struct snapshot *s = westmere_snapshot();
	char *text;

	(void)state;
	s->samples = UINT64_MAX;
	add_value(s, "uncore", "uncored_uncore_events_total", 0, "dram_thermal_throttled_cycles",
		  UINT64_MAX);
	add_value(s, "core", "uncored_core_instructions_total", 3, NULL, UINT64_MAX - 1);
	text = format(s);
	assert_non_null(strstr(text, "uncored_samples_total 18446744073709551615\n"));
	assert_non_null(strstr(text, "{socket=\"0\",event=\"dram_thermal_throttled_cycles\"} "
				     "18446744073709551615\n"));
	assert_non_null(strstr(text, "{socket=\"1\",core=\"1\",cpu=\"3\"} 18446744073709551614\n"));
	free(text);
	snapshot_release(s);
}

static void label_values_escaped(void **state)
{
	struct snapshot *s = tiny_snapshot();
	char *text;

	(void)state;
	snprintf(s->version, sizeof(s->version), "1.0 \"x\\y\"\nz");
	snprintf(s->cpu_id.microarch, sizeof(s->cpu_id.microarch), "a\"b");
	text = format(s);
	assert_non_null(strstr(text, "uncored_build_info{version=\"1.0 \\\"x\\\\y\\\"\\nz\"} 1\n"));
	assert_non_null(strstr(text, "microarch=\"a\\\"b\"} 1\n"));
	free(text);
	snapshot_release(s);
}

static void negative_temperature_signed(void **state)
{
	struct snapshot *s = tiny_snapshot();
	char *text;

	(void)state;
	add_thermal(s, "temperature_celsius", 0, -5);
	text = format(s);
	assert_non_null(strstr(text, "uncored_core_temperature_celsius{socket=\"0\",core=\"0\"} -5\n"));
	free(text);
	snapshot_release(s);
}

/*
 * OpenMetrics: counter families named without "_total", "# EOF" last, and
 * a throttle family's series carrying its current episode's id.
 */
static void openmetrics_exemplar(void **state)
{
	struct snapshot *s = tiny_snapshot();
	struct strbuf sb;

	(void)state;
	assert_int_equal(snapshot_add_sample(s, &throttle_dram_channel_seconds, 0,
					     "2" METRIC_LABEL_SEP "thermal", 0, 1.5), 0);
	assert_int_equal(snapshot_add_sample(s, &throttle_dram_channel_seconds, 0,
					     "3" METRIC_LABEL_SEP "thermal", 0, 0), 0);
	s->n_episodes = 2;
	s->episodes = calloc(2, sizeof(*s->episodes));
	s->episodes[0] = (struct snapshot_episode){
		.kind = "dram_throttled_seconds", .id = 7, .socket = 0, .core = -1, .die = -1,
		.channel = 2, .family = &throttle_dram_channel_seconds, .n_parts = 1,
		.parts = { { &throttle_dram_channel_seconds, "2" METRIC_LABEL_SEP "thermal" } },
		.throttled_s = 1.25,
	};
	s->episodes[1] = (struct snapshot_episode){
		.kind = "dram_throttled_seconds", .id = 5, .socket = 0, .core = -1, .die = -1,
		.channel = 2, .family = &throttle_dram_channel_seconds, .n_parts = 1,
		.parts = { { &throttle_dram_channel_seconds, "2" METRIC_LABEL_SEP "thermal" } },
		.throttled_s = 0.5, .end = 3,
	};
	self_metrics_add(s);
	strbuf_init(&sb);
	assert_int_equal(prom_write_openmetrics(s, &sb), 0);
	assert_non_null(strstr(sb.buf, "# TYPE uncored_dram_throttled_seconds counter\n"));
	assert_non_null(strstr(sb.buf, "# TYPE uncored_samples counter\n"));
	assert_non_null(strstr(sb.buf, "\nuncored_dram_throttled_seconds_total{socket=\"0\","
				       "channel=\"2\",cause=\"thermal\"} 1.5 "
				       "# {episode_id=\"7\"} 1.25\n"));
	/* A series without an episode has no exemplar. */
	assert_non_null(strstr(sb.buf, "channel=\"3\",cause=\"thermal\"} 0\n"));
	assert_null(strstr(sb.buf, "_total counter"));
	assert_true(sb.len > 6 && strcmp(sb.buf + sb.len - 6, "# EOF\n") == 0);
	strbuf_free(&sb);
	/* The text format has none. */
	strbuf_init(&sb);
	assert_int_equal(prom_write(s, &sb), 0);
	assert_null(strstr(sb.buf, "episode_id"));
	assert_null(strstr(sb.buf, "# EOF"));
	strbuf_free(&sb);
	snapshot_release(s);
}

static bool have_program(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* Run promtool check metrics on text; its output goes to *ret_out. */
static int promtool_check(const char *text, char *out, size_t outlen)
{
	char path[] = "/tmp/uncored-prom-XXXXXX", cmd[128];
	int fd = mkstemp(path), status;
	size_t n;
	FILE *p;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	status = pclose(p);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void promtool_accepts(void **state)
{
	struct snapshot *(*const makers[])(void) = { westmere_snapshot, skylake_snapshot,
						     tiny_snapshot };

	(void)state;
	if (!have_program("promtool"))
		skip();
	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++) {
		struct snapshot *s = makers[i]();
		char *text = format(s);
		char out[4096];
		int rc = promtool_check(text, out, sizeof(out));
		if (rc != 0 || out[0] != '\0')
			fail_msg("case %zu: promtool exit %d: %s", i, rc, out);
		free(text);
		snapshot_release(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiny_exact),
		cmocka_unit_test(lines_table),
		cmocka_unit_test(every_family_once_with_help_and_type),
		cmocka_unit_test(not_applicable_is_not_down),
		cmocka_unit_test(counters_exact_at_max),
		cmocka_unit_test(label_values_escaped),
		cmocka_unit_test(negative_temperature_signed),
		cmocka_unit_test(promtool_accepts),
		cmocka_unit_test(openmetrics_exemplar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
