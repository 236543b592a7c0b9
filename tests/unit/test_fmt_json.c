/*
 * Unit tests of the JSON snapshot and episodes: every document parses as
 * strict JSON (checked with python3 when it is installed, duplicate keys
 * and NaN refused), fields are present or absent by the documented rule,
 * and the episodes document is compared exactly.
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
#include "fmt_json.h"

/*
 * Fake machines.  "big": two sockets of two cores of two threads (CPU n is
 * thread n / 4 of core n % 2 of socket (n % 4) / 2).  "tiny": one socket,
 * one core, CPU 0.
 */
static struct hw_cpu big_cpus[8];
static struct cpu_core big_cores[2][2];
static struct cpu_socket big_sockets[2];
static struct cpu_topology big_topo;

static const struct cpu_topology *big_topology(void)
{
	for (int n = 0; n < 8; n++)
		big_cpus[n] = (struct hw_cpu){ .cpu = n, .socket = (n % 4) / 2, .core = n % 2,
					       .thread = n / 4, .online = true };
	for (int s = 0; s < 2; s++) {
		for (int c = 0; c < 2; c++)
			big_cores[s][c] = (struct cpu_core){ .core = c, .n_cpus = 2,
							     .cpus = { s * 2 + c, 4 + s * 2 + c } };
		big_sockets[s] = (struct cpu_socket){ .socket = s, .n_cores = 2,
						      .cores = big_cores[s] };
	}
	big_topo = (struct cpu_topology){ .n_cpus = 8, .cpus = big_cpus, .n_sockets = 2,
					  .sockets = big_sockets };
	return &big_topo;
}

static struct hw_cpu tiny_cpus[1] = { { .cpu = 0, .online = true } };
static struct cpu_core tiny_cores[1] = { { .core = 0, .n_cpus = 1, .cpus = { 0 } } };
static struct cpu_socket tiny_sockets[1] = { { .socket = 0, .n_cores = 1, .cores = tiny_cores } };
static const struct cpu_topology tiny_topo = { .n_cpus = 1, .cpus = tiny_cpus, .n_sockets = 1,
					       .sockets = tiny_sockets };

static const struct cpu_info westmere = {
	.vendor = "GenuineIntel", .family = 6, .model = 44, .stepping = 2,
	.microarch = "westmere-ep",
};

static const struct cpu_info skylake = {
	.vendor = "GenuineIntel", .family = 6, .model = 85, .stepping = 4,
	.microarch = "skylake-sp",
};

static void set_event(struct snapshot_event *ev, const char *name, bool available, uint64_t total)
{
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->available = available;
	ev->total = total;
	snprintf(ev->reason, sizeof(ev->reason), "%s", available ? "" : "no such event here");
}

static void fill_thermal(struct snapshot *s)
{
	for (int i = 0; i < s->n_sockets; i++) {
		struct snapshot_socket *sock = &s->sockets[i];

		sock->has_tjmax = true;
		sock->tjmax_c = 95;
		sock->has_package_status = true;
		sock->has_package_temperature = true;
		sock->package_temperature_c = 60 + i;
		sock->package_thermal_throttling = i == 1;
		sock->has_kernel_package_throttles = true;
		sock->kernel_package_throttles = 7;
		for (int j = 0; j < sock->n_cores; j++) {
			struct snapshot_core *c = &sock->cores[j];

			c->has_temperature = true;
			c->temperature_c = 50 + j;
			c->has_status = true;
			c->thermal_throttling = j == 1;
			c->has_kernel_throttles = true;
			c->kernel_throttles = 3;
		}
	}
}

static void fill_core_pmu(struct snapshot *s)
{
	for (int i = 0; i < s->n_cpus; i++) {
		struct snapshot_cpu *c = &s->cpus[i];

		c->has_core_pmu = true;
		c->has_instructions = c->has_cycles = c->has_ref_cycles = true;
		c->instructions = 2000 + (uint64_t)i;
		c->cycles = 1000;
		c->ref_cycles = 900;
		c->n_events = 2;
		set_event(&c->events[0], "llc_misses", true, 11);
		set_event(&c->events[1], "branch_misses", false, 0);
	}
}

static void enable_collectors(struct snapshot *s, bool uncore, bool thermal, bool core)
{
	const bool on[SNAPSHOT_COLLECTOR_COUNT] = { uncore, thermal, core };

	for (int i = 0; i < SNAPSHOT_COLLECTOR_COUNT; i++)
		s->collectors[i].enabled = s->collectors[i].up = on[i];
}

/* A 2-socket Westmere-EP: uncore with thermal events, thermal, core PMU, no RAPL. */
static struct snapshot *westmere_snapshot(void)
{
	struct snapshot *s = snapshot_new(big_topology(), &westmere);

	snprintf(s->version, sizeof(s->version), "1.2.3");
	s->time = 1700000000.25;
	s->interval_s = 1;
	s->samples = 42;
	s->last_sample_duration_s = 0.0015;
	enable_collectors(s, true, true, true);
	fill_thermal(s);
	fill_core_pmu(s);
	for (int i = 0; i < s->n_sockets; i++) {
		struct snapshot_socket *sock = &s->sockets[i];

		sock->has_uncore = true;
		sock->has_uncore_clockticks = true;
		sock->uncore_clockticks = 133000000;
		sock->n_uncore_events = 3;
		set_event(&sock->uncore_events[0], "dram_thermal_throttled_cycles", true, 1234);
		set_event(&sock->uncore_events[1], "prochot_assertions", true, 2);
		set_event(&sock->uncore_events[2], "qhl_requests", false, 0);
		sock->uncore_conflicts = 1;
	}
	return s;
}

/* A 2-socket Skylake-SP: no uncore collector, RAPL on socket 0 only. */
static struct snapshot *skylake_snapshot(void)
{
	struct snapshot *s = snapshot_new(big_topology(), &skylake);

	snprintf(s->version, sizeof(s->version), "1.2.3");
	s->samples = 5;
	enable_collectors(s, false, true, true);
	s->collectors[SNAPSHOT_COLLECTOR_CORE].up = false;
	fill_thermal(s);
	s->sockets[0].has_rapl = true;
	s->sockets[0].rapl_package_throttled_s = 0.25;
	s->sockets[0].rapl_dram_throttled_s = 1.5;
	return s;
}

/* One socket, one core, thermal only with just a core temperature and TjMax. */
static struct snapshot *tiny_snapshot(void)
{
	struct snapshot *s = snapshot_new(&tiny_topo, &westmere);

	snprintf(s->version, sizeof(s->version), "1.2.3");
	s->samples = 3;
	s->last_sample_duration_s = 0.25;
	enable_collectors(s, false, true, false);
	s->collectors[SNAPSHOT_COLLECTOR_THERMAL].errors = 2;
	s->sockets[0].has_tjmax = true;
	s->sockets[0].tjmax_c = 100;
	s->sockets[0].cores[0].has_temperature = true;
	s->sockets[0].cores[0].temperature_c = 55;
	return s;
}

static char *format(const struct snapshot *s)
{
	struct strbuf sb;
	char *text;

	strbuf_init(&sb);
	assert_int_equal(fmt_json_snapshot(s, &sb), 0);
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
	    "{\"name\": \"uncore\", \"enabled\": true, \"up\": true, \"reason\": null, \"errors\": 0}",
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
	    "all(c['up'] and c['enabled'] and c['reason'] is None and c['errors'] == 0 "
	    "for c in d['collectors'])",
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
	    "'reason': None, 'errors': 0}",
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
	s->sockets[0].cores[0].temperature_c = -5;
	snprintf(s->version, sizeof(s->version), "1.0 \"x\\y\"\n\tz");
	snprintf(s->collectors[2].reason, sizeof(s->collectors[2].reason), "msr: \"denied\"");
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
		"{\"episodes\": [{\"kind\": \"prochot\", \"socket\": 1, \"core\": null, "
		"\"start\": 100, \"end\": null, \"duration_seconds\": 10.5},\n"
		" {\"kind\": \"core_thermal_throttling\", \"socket\": 0, \"core\": 2, "
		"\"start\": 90, \"end\": 95.5, \"duration_seconds\": 5.5}]}\n";
	struct snapshot *s = tiny_snapshot();
	struct strbuf sb;

	(void)state;
	s->time = 110.5;
	s->n_episodes = 2;
	s->episodes = calloc(2, sizeof(*s->episodes));
	s->episodes[0] = (struct snapshot_episode){ "prochot", 1, -1, 100, 0 };
	s->episodes[1] = (struct snapshot_episode){ "core_thermal_throttling", 0, 2, 90, 95.5 };
	strbuf_init(&sb);
	assert_int_equal(fmt_json_episodes(s, &sb), 0);
	assert_string_equal(sb.buf, expected);
	if (have_python())
		python_check("episodes", sb.buf, (const char *const[]){
			"d['episodes'][0]['end'] is None", "d['episodes'][1]['core'] == 2", NULL });
	strbuf_free(&sb);
	snapshot_release(s);
}

static void episodes_empty(void **state)
{
	struct snapshot *s = tiny_snapshot();
	struct strbuf sb;

	(void)state;
	strbuf_init(&sb);
	assert_int_equal(fmt_json_episodes(s, &sb), 0);
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
