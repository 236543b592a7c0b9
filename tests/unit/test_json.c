/*
 * Unit tests of the JSON snapshot and episodes: every document parses as
 * strict JSON (checked with python3 when it is installed, duplicate keys
 * and NaN refused), fields are present or absent by the documented rule,
 * and the episodes document is compared exactly.
 */
#include <errno.h>
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
#include "json.h"
#include "throttle_families.h"

static char *format(const struct snapshot *s)
{
	struct strbuf sb;
	char *text;

	strbuf_init(&sb);
	assert_int_equal(json_write_snapshot(s, &sb), 0);
	text = strbuf_steal(&sb, NULL);
	assert_non_null(text);
	return text;
}

static bool have_python(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

/*
 * Parse text strictly with python3 and evaluate each check (a Python
 * expression over the document d).  Fails listing the checks that were
 * false, or with the parser's complaint.
 */
static const char checker[] =
	"import json, sys\n"
	"def pairs(p):\n"
	"    keys = [k for k, _ in p]\n"
	"    if len(keys) != len(set(keys)): raise ValueError('duplicate key in %s' % keys)\n"
	"    return dict(p)\n"
	"def const(c): raise ValueError('not JSON: ' + c)\n"
	"d = json.load(open(sys.argv[1]), object_pairs_hook=pairs, parse_constant=const)\n"
	"bad = [e for e in open(sys.argv[2]).read().split('\\n') if e and not eval(e, {'d': d})]\n"
	"print('\\n'.join(bad), end='')\n"
	"sys.exit(1 if bad else 0)\n";

static void write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void python_check(const char *name, const char *text, const char *const checks[])
{
	char doc[] = "/tmp/uncored-json-XXXXXX", list[] = "/tmp/uncored-checks-XXXXXX";
	char script[] = "/tmp/uncored-check-XXXXXX";
	char cmd[256], out[4096] = "";
	size_t n, len = 0;
	char all[8192] = "";
	FILE *p;
	int status;

	for (int i = 0; checks && checks[i]; i++)
		len += (size_t)snprintf(all + len, sizeof(all) - len, "%s\n", checks[i]);
	write_temp(doc, text);
	write_temp(list, all);
	write_temp(script, checker);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s 2>&1", script, doc, list);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	unlink(doc);
	unlink(list);
	unlink(script);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: failed checks:\n%s\nin:\n%s", name, out, text);
}

struct json_case {
	const char *name;
	struct snapshot *(*make)(void);
	const char *present[12];    /* substrings, checked without python */
	const char *checks[40];     /* python expressions over d */
};

static const struct json_case json_cases[] = {
	{ "westmere",
	  westmere_snapshot,
	  { "\"time\": 1700000000.25, \"interval_seconds\": 1, ",
	    "{\"name\": \"uncore\", \"enabled\": true, \"up\": true, \"state\": \"up\", \"reason\": null, \"errors\": 0}",
	    "\"dram_thermal_throttled_cycles\": 1234",
	    "\"unavailable\": {\"qhl_requests\": \"no such event here\"}",
	    "\"cpus\": [0, 4]",
	    NULL },
	  { "d['time'] == 1700000000.25 and d['interval_seconds'] == 1",
	    "d['samples'] == 42 and d['last_sample_duration_seconds'] == 0.0015",
	    "d['version'] == '1.2.3'",
	    "d['cpu'] == {'vendor': 'GenuineIntel', 'family': 6, 'model': 44, 'stepping': 2, "
	    "'microarch': 'westmere-ep'}",
	    "[c['name'] for c in d['collectors']] == ['uncore', 'thermal', 'core']",
	    "all(c['up'] and c['enabled'] and c['state'] == 'up' and c['reason'] is None "
	    "and c['errors'] == 0 for c in d['collectors'])",
	    "[s['socket'] for s in d['sockets']] == [0, 1]",
	    "d['sockets'][0]['tjmax_celsius'] == 95",
	    "d['sockets'][1]['package_temperature_celsius'] == 61",
	    "d['sockets'][1]['package_thermal_throttling'] is True",
	    "d['sockets'][0]['package_thermal_throttling'] is False",
	    "d['sockets'][0]['kernel_package_throttles'] == 7",
	    "d['sockets'][0]['uncore'] == {'clockticks': 133000000, 'events': "
	    "{'dram_thermal_throttled_cycles': 1234, 'prochot_assertions': 2}, "
	    "'unavailable': {'qhl_requests': 'no such event here'}, 'conflicts': 1}",
	    "'rapl' not in d['sockets'][0] and 'rapl' not in d['sockets'][1]",
	    "d['sockets'][1]['cores'][1] == {'core': 1, 'cpus': [3, 7], 'temperature_celsius': 51, "
	    "'thermal_throttling': True, 'prochot_active': False, 'kernel_throttles': 3}",
	    "len(d['cpus']) == 8",
	    "d['cpus'][6] == {'cpu': 6, 'socket': 1, 'core': 0, 'online': True, "
	    "'instructions': 2006, 'cycles': 1000, 'ref_cycles': 900, "
	    "'events': {'llc_misses': 11}, 'unavailable': {'branch_misses': 'no such event here'}, "
	    "'conflicts': 0}",
	    NULL } },
	{ "skylake",
	  skylake_snapshot,
	  { "\"rapl\": {\"package_throttled_seconds\": 0.25, \"dram_throttled_seconds\": 1.5}", NULL },
	  { "all('uncore' not in s for s in d['sockets'])",
	    "d['sockets'][0]['rapl'] == {'package_throttled_seconds': 0.25, "
	    "'dram_throttled_seconds': 1.5}",
	    "'rapl' not in d['sockets'][1]",
	    "d['collectors'][0] == {'name': 'uncore', 'enabled': False, 'up': False, "
	    "'state': 'disabled', 'reason': None, 'errors': 0}",
	    "d['collectors'][2]['state'] == 'down'",
	    "d['collectors'][2]['up'] is False and d['collectors'][2]['enabled'] is True",
	    "all(c['instructions'] is None and c['cycles'] is None and c['ref_cycles'] is None "
	    "for c in d['cpus'])",
	    "all('events' not in c and 'conflicts' not in c for c in d['cpus'])",
	    "d['cpu']['microarch'] == 'skylake-sp'",
	    NULL } },
	{ "tiny",
	  tiny_snapshot,
	  { "\"package_temperature_celsius\": null", NULL },
	  { "d['sockets'][0]['tjmax_celsius'] == 100",
	    "d['sockets'][0]['package_temperature_celsius'] is None",
	    "d['sockets'][0]['package_thermal_throttling'] is None",
	    "d['sockets'][0]['kernel_package_throttles'] is None",
	    "d['sockets'][0]['cores'] == [{'core': 0, 'cpus': [0], 'temperature_celsius': 55, "
	    "'thermal_throttling': None, 'prochot_active': None, 'kernel_throttles': None}]",
	    "d['collectors'][1]['errors'] == 2",
	    NULL } },
};

static void snapshot_table(void **state)
{
	bool python = have_python();

	(void)state;
	for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
		const struct json_case *c = &json_cases[i];
		struct snapshot *s = c->make();
		char *text = format(s);

		for (int j = 0; c->present[j]; j++)
			if (!strstr(text, c->present[j]))
				fail_msg("%s: missing '%s' in:\n%s", c->name, c->present[j], text);
		if (python)
			python_check(c->name, text, c->checks);
		free(text);
		snapshot_release(s);
	}
	if (!python)
		skip();
}

static void extremes_and_escaping(void **state)
{
	static const char *const checks[] = {
		"d['samples'] == 18446744073709551615",
		"d['version'] == '1.0 \"x\\\\y\"\\n\\tz'",
		"d['collectors'][2]['reason'] == 'msr: \"denied\"'",
		"d['last_sample_duration_seconds'] is None",
		"d['sockets'][0]['cores'][0]['temperature_celsius'] == -5",
		NULL,
	};
	struct snapshot *s = tiny_snapshot();
	char *text;

	(void)state;
	s->samples = UINT64_MAX;
	s->last_sample_duration_s = 0.0 / 0.0;
	add_thermal(s, "temperature_celsius", 0, -5);
	snprintf(s->version, sizeof(s->version), "1.0 \"x\\y\"\n\tz");
	s->collectors[2].reason = "msr: \"denied\"";
	text = format(s);
	assert_non_null(strstr(text, "\"samples\": 18446744073709551615,"));
	assert_non_null(strstr(text, "\"version\": \"1.0 \\\"x\\\\y\\\"\\n\\tz\""));
	assert_non_null(strstr(text, "\"last_sample_duration_seconds\": null"));
	if (have_python())
		python_check("extremes", text, checks);
	free(text);
	snapshot_release(s);
}

static void episodes_exact(void **state)
{
	static const char expected[] =
		"{\"episodes\": [{\"id\": 3, \"kind\": \"dram_throttled_seconds\", "
		"\"socket\": 1, \"core\": null, \"start\": 104, \"end\": null, "
		"\"duration_seconds\": 6.5, \"place\": \"socket 1 channel 2 slots 0, 1\", "
		"\"what\": \"DRAM throttled for heat, critical level reached\", "
		"\"family\": \"uncored_dram_throttled_seconds_total\", "
		"\"labels\": {\"channel\": \"2\"}, \"slots\": [0, 1], "
		"\"levels\": [\"warning\", \"critical\"], "
		"\"parts\": [{\"family\": \"uncored_dram_throttled_seconds_total\", "
		"\"labels\": {\"channel\": \"2\", \"slot\": \"0\", \"cause\": \"thermal\"}}, "
		"{\"family\": \"uncored_dram_critical_throttled_seconds_total\", "
		"\"labels\": {\"channel\": \"2\", \"slot\": \"1\", \"cause\": \"thermal\"}}], "
		"\"monotonic_start\": 7, \"monotonic_end\": null, \"peak_celsius\": 91, "
		"\"throttled_seconds\": 1.5, \"throttled_share\": 0.75},\n"
		" {\"id\": 2, \"kind\": \"prochot\", \"socket\": 1, \"core\": null, "
		"\"start\": 100, \"end\": null, \"duration_seconds\": 10.5, "
		"\"place\": \"socket 1\", \"what\": \"PROCHOT asserted\"},\n"
		" {\"id\": 1, \"kind\": \"core_thermal_throttling\", \"socket\": 0, \"core\": 2, "
		"\"start\": 90, \"end\": 95.5, \"duration_seconds\": 5.5, "
		"\"place\": \"socket 0 core 2\", \"what\": \"core throttled for heat\"}]}\n";
	static const char only_2[] =
		"{\"episodes\": [{\"id\": 2, \"kind\": \"prochot\", \"socket\": 1, "
		"\"core\": null, \"start\": 100, \"end\": null, \"duration_seconds\": 10.5, "
		"\"place\": \"socket 1\", \"what\": \"PROCHOT asserted\"}]}\n";
	struct snapshot *s = tiny_snapshot();
	struct strbuf sb;

	(void)state;
	s->time = 110.5;
	s->n_episodes = 3;
	s->episodes = calloc(3, sizeof(*s->episodes));
	s->episodes[0] = (struct snapshot_episode){
		.kind = "dram_throttled_seconds", .id = 3, .socket = 1, .core = -1, .die = -1,
		.channel = 2, .start = 104, .running_s = 6.5,
		.mono_start = 7, .family = &throttle_dram_channel_seconds, .n_parts = 2,
		.parts = {
			{ &throttle_dram_slot_seconds,
			  "2" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "thermal" },
			{ &throttle_dram_slot_critical_seconds,
			  "2" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP "thermal" },
		},
		.has_peak = true, .peak_celsius = 91, .throttled_s = 1.5, .sampled_s = 2,
	};
	s->episodes[1] = (struct snapshot_episode){
		.kind = "prochot", .id = 2, .socket = 1, .core = -1, .die = -1, .channel = -1,
		.start = 100, .running_s = 10.5,
	};
	s->episodes[2] = (struct snapshot_episode){
		.kind = "core_thermal_throttling", .id = 1, .socket = 0, .core = 2, .die = -1,
		.channel = -1, .start = 90, .end = 95.5,
	};
	strbuf_init(&sb);
	assert_int_equal(json_write_episodes(s, &sb), 0);
	assert_string_equal(sb.buf, expected);
	if (have_python())
		python_check("episodes", sb.buf, (const char *const[]){
			"d['episodes'][1]['end'] is None", "d['episodes'][2]['core'] == 2",
			"d['episodes'][0]['labels']['channel'] == '2'", NULL });
	strbuf_free(&sb);
	strbuf_init(&sb);
	assert_int_equal(json_write_episode_by_id(s, 2, &sb), 0);
	assert_string_equal(sb.buf, only_2);
	strbuf_free(&sb);
	/* The HTTP server picks the same from the rendered document. */
	for (uint64_t id = 1; id <= 4; id++) {
		struct strbuf all, picked, by_id;

		strbuf_init(&all);
		strbuf_init(&picked);
		strbuf_init(&by_id);
		assert_int_equal(json_write_episodes(s, &all), 0);
		assert_int_equal(json_episodes_pick(all.buf, all.len, id, &picked), 0);
		assert_int_equal(json_write_episode_by_id(s, id, &by_id), 0);
		assert_string_equal(picked.buf, by_id.buf);
		strbuf_free(&all);
		strbuf_free(&picked);
		strbuf_free(&by_id);
	}
	strbuf_init(&sb);
	assert_int_equal(json_episodes_pick("nonsense", 8, 1, &sb), -EINVAL);
	strbuf_free(&sb);
	strbuf_init(&sb);
	assert_int_equal(json_write_episode_by_id(s, 99, &sb), 0);
	assert_string_equal(sb.buf, "{\"episodes\": []}\n");
	strbuf_free(&sb);
	snapshot_release(s);
}

static void episodes_empty(void **state)
{
	struct snapshot *s = tiny_snapshot();
	struct strbuf sb;

	(void)state;
	strbuf_init(&sb);
	assert_int_equal(json_write_episodes(s, &sb), 0);
	assert_string_equal(sb.buf, "{\"episodes\": []}\n");
	strbuf_free(&sb);
	snapshot_release(s);
}

static void empty_machine(void **state)
{
	struct snapshot *s = snapshot_new(NULL, NULL);
	char *text = format(s);

	(void)state;
	assert_non_null(strstr(text, "\"sockets\": [], \"cpus\": []}\n"));
	if (have_python())
		python_check("empty", text, (const char *const[]){ "d['cpu']['vendor'] == ''", NULL });
	free(text);
	snapshot_release(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(snapshot_table),
		cmocka_unit_test(extremes_and_escaping),
		cmocka_unit_test(episodes_exact),
		cmocka_unit_test(episodes_empty),
		cmocka_unit_test(empty_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
