/*
 * Unit tests of the `--once` table: header, per-socket lines with deltas
 * and the DRAM throttled fraction, per-core rows with flags and IPC, and
 * collector status lines, the shared throttling seconds by label value;
 * the episodes that ended in the interval or still
 * run at its end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpu.h"
#include "fake_machines.h"
#include "helpers.h"
#include "table.h"
#include "throttle_families.h"

/* Add delta to the thermal value json_key at where (or set it, delta for a bool). */
static void bump(struct snapshot *s, const char *json_key, int where, int64_t delta)
{
	const struct metric_sample *v = snapshot_find_sample(s, thermal_family(json_key), where, NULL);

	assert_non_null(v);
	add_thermal(s, json_key, where, v->family->kind == METRIC_BOOL ? delta
					: (int64_t)v->value.u + delta);
}

/* The second sample of a Westmere interval: one second and some counts later. */
static struct snapshot *westmere_later(void)
{
	struct snapshot *s;

	/* CPU 3 (socket 1 core 1, with CPU 7) is not counted in the second sample. */
	fake_uncounted_cpus = 1u << 3 | 1u << 7;
	s = westmere_snapshot();
	fake_uncounted_cpus = 0;

	s->time += 1;
	s->samples++;
	for (int i = 0; i < s->n_sockets; i++) {
		int id = s->sockets[i].socket;

		add_value(s, "uncore", "uncored_uncore_clockticks_total", id, NULL,
			  uncore_view(s, id)->clockticks + 1000);
		add_value(s, "uncore", "uncored_uncore_events_total", id, "dram_thermal_throttled_cycles",
			  uncore_view(s, id)->events[0].total + 50);
		bump(s, "kernel_package_throttles", s->sockets[i].socket, 2);
		bump(s, "kernel_throttles", s->sockets[i].cores[0].cpus[0], 4);
		bump(s, "prochot_active", s->sockets[i].cores[0].cpus[0], 1);
	}
	for (int i = 0; i < s->n_cpus; i++) {
		const struct cpu_view *c = cpu_view(s, i);

		if (i == 3 || i == 7)
			continue;
		add_value(s, "core", "uncored_core_instructions_total", i, NULL,
			  c->instructions + (i < 4 ? 3000 : 1000));
		add_value(s, "core", "uncored_core_cycles_total", i, NULL, c->cycles + 1000);
	}
	COLLECTOR(s, "core")->up = false;
	COLLECTOR(s, "core")->reason = "cpu 3: offline, skipping";
	return s;
}

static char *table(const struct snapshot *a, const struct snapshot *b)
{
	struct strbuf sb;
	char *text;

	strbuf_init(&sb);
	assert_int_equal(table_write(a, b, &sb), 0);
	text = strbuf_steal(&sb, NULL);
	assert_non_null(text);
	return text;
}

static void assert_lines(const char *name, const char *text, const char *const present[],
			 const char *const absent[])
{
	for (int i = 0; present[i]; i++)
		if (!strstr(text, present[i]))
			fail_msg("%s: missing '%s' in:\n%s", name, present[i], text);
	for (int i = 0; absent && absent[i]; i++)
		if (strstr(text, absent[i]))
			fail_msg("%s: unexpected '%s' in:\n%s", name, absent[i], text);
}

static void westmere_interval(void **state)
{
	static const char *const present[] = {
		"uncored 1.2.3: GenuineIntel family 6 model 0x2c (westmere-ep), interval 1.000 s\n",
		"\nsocket 0: TjMax 95 C, package 60 C, package throttling no, IPC 2.00\n",
		"\nsocket 1: TjMax 95 C, package 61 C, package throttling YES, IPC 2.00\n",
		"  uncore clockticks                                    1000\n",
		"  dram_thermal_throttled_cycles                          50    5.00 % of clockticks\n",
		"  prochot_assertions                                      0\n",
		"  qhl_requests                         unavailable: no such event here\n",
		"  kernel package throttles                                2\n",
		"   core  cpus            temp  flags              kernel throttles    IPC  IPC per cpu\n",
		"      0  0,4             50 C  PROCHOT                           4   2.00  3.00/1.00\n",
		"      1  1,5             51 C  THROTTLING                        0   2.00  3.00/1.00\n",
		"      1  3,7             51 C  THROTTLING                        0      -  -/-\n",
		"  uncore   up       errors 0\n",
		"  core     down     errors 0: cpu 3: offline, skipping\n",
		NULL,
	};
	static const char *const absent[] = { "RAPL", NULL };
	struct snapshot *a = westmere_snapshot(), *b = westmere_later();
	char *text = table(a, b);

	(void)state;
	assert_lines("westmere", text, present, absent);
	free(text);
	snapshot_release(a);
	snapshot_release(b);
}

static void skylake_interval(void **state)
{
	static const char *const present[] = {
		"(skylake-sp), interval 2.000 s\n",
		"  RAPL power-limit throttled           package 0.500 s, dram 0.000 s\n",
		"socket 1: TjMax 95 C, package 61 C, package throttling YES, IPC -\n",
		"  uncore   disabled errors 0\n",
		"  core     not applicable errors 0: no architectural performance monitoring v2\n",
		NULL,
	};
	static const char *const absent[] = { "clockticks", "dram_thermal", NULL };
	struct snapshot *a = skylake_snapshot(), *b = skylake_snapshot();
	char *text;

	(void)state;
	b->time = a->time + 2;
	b->mono = a->mono + 2;
	b->collectors[2].not_applicable = true;
	b->collectors[2].reason = "no architectural performance monitoring v2";
	add_thermal_seconds(b, "package_throttled_seconds", 0,
			    snapshot_find_sample(b, thermal_family("package_throttled_seconds"), 0,
						 NULL)->value.d + 0.5);
	text = table(a, b);
	assert_lines("skylake", text, present, absent);
	free(text);
	snapshot_release(a);
	snapshot_release(b);
}

/* Add a throttling family's seconds at socket where, label value label, to a and a + delta to b. */
static void add_seconds(struct snapshot *a, struct snapshot *b, const struct metric_family *f,
			int where, const char *label, double at_a, double delta)
{
	assert_int_equal(snapshot_add_sample(a, f, where, label, 0, at_a), 0);
	assert_int_equal(snapshot_add_sample(b, f, where, label, 0, at_a + delta), 0);
}

/* The shared throttling families: a titled line per label value, over the interval. */
static void throttle_seconds_lines(void **state)
{
	static const char *const present[] = {
		"socket 1: TjMax 95 C, package 61 C, package throttling YES, IPC -\n"
		"  hottest core                         core ",
		/* The summary: each family's worst series, by its labels. */
		"  DRAM throttled                       channel 2, thermal_or_power: 0.750 s\n"
		"  PROCHOT                              external: 0.500 s\n"
		"  frequency limited                    power: 1.000 s\n"
		"  kernel package throttles                                0\n"
		"  DRAM throttled, channel 2, thermal_or_power         0.750 s\n"
		"  DRAM throttled, channel 3, slot 1, power            0.000 s\n"
		"  DRAM throttled, channel 4, thermal                  0.250 s\n"
		"  DRAM throttled, die 1, channel 0, thermal           0.125 s\n"
		"  PROCHOT, external                                   0.500 s\n"
		"  frequency limited, power                            1.000 s\n"
		"\n   core",
		NULL,
	};
	static const char *const brief_present[] = {
		"  DRAM throttled, channel 2, thermal_or_power         0.750 s\n"
		"  DRAM throttled, channel 4, thermal                  0.250 s\n",
		/* Socket 0's core 1 is throttling; its core 0 is not. */
		"      1  1,5             51 C  THROTTLING",
		"  1 core neither throttling nor PROCHOT (--verbose lists it)\n",
		NULL,
	};
	static const char *const brief_absent[] = { "channel 3, slot 1", "      0  0,4", NULL };
	struct snapshot *a = skylake_snapshot(), *b = skylake_snapshot();
	struct strbuf sb;
	char *text;

	(void)state;
	b->time = a->time + 2;
	b->mono = a->mono + 2;
	add_seconds(a, b, &throttle_dram_channel_seconds, 1, "2" METRIC_LABEL_SEP "thermal_or_power",
		    3.0, 0.75);
	add_seconds(a, b, &throttle_dram_die_channel_seconds, 1,
		    "1" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "thermal", 0.0, 0.125);
	add_seconds(a, b, &throttle_dram_slot_seconds, 1,
		    "3" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP "power", 2.0, 0.0);
	/* An empty label value (no slot) is left out of the title. */
	add_seconds(a, b, &throttle_dram_slot_seconds, 1,
		    "4" METRIC_LABEL_SEP "" METRIC_LABEL_SEP "thermal", 0.0, 0.25);
	add_seconds(a, b, &throttle_prochot_seconds, 1, "external", 10.0, 0.5);
	add_seconds(a, b, &throttle_frequency_limited_seconds, 1, "power", 0.0, 1.0);
	text = table(a, b);
	assert_lines("throttle seconds", text, present, NULL);
	free(text);
	/* Brief: a series that counted nothing, and the quiet cores, have no line. */
	strbuf_init(&sb);
	assert_int_equal(table_write_brief(a, b, false, &sb), 0);
	assert_lines("throttle seconds, brief", sb.buf, brief_present, brief_absent);
	strbuf_free(&sb);
	snapshot_release(a);
	snapshot_release(b);
}

static void missing_readings_print_dashes(void **state)
{
	static const char *const present[] = {
		"uncored 1.2.3: GenuineIntel family 6 model 0x2c (westmere-ep), interval 1.000 s\n",
		"socket 0: TjMax 100 C, package -, package throttling -, IPC -\n",
		"      0  0                  -  -                                 -      -  -\n",
		"  thermal  up       errors 2\n",
		NULL,
	};
	struct snapshot *a = tiny_snapshot(), *b = snapshot_new(&tiny_topo, &westmere);
	char *text;

	(void)state;
	/* tiny_snapshot() without its core temperature. */
	snprintf(b->version, sizeof(b->version), "1.2.3");
	enable_collectors(b, false, true, false);
	b->collectors[1].errors = 2;
	add_thermal(b, "tjmax_celsius", 0, 100);
	b->interval_s = 1;
	text = table(a, b);
	assert_lines("tiny", text, present, NULL);
	free(text);
	snapshot_release(a);
	snapshot_release(b);
}

/* Episode e of b's list (allocated here; snapshot_release frees it). */
static void add_episodes(struct snapshot *b, const struct snapshot_episode *list, int n)
{
	b->episodes = calloc((size_t)n, sizeof(*list));
	assert_non_null(b->episodes);
	memcpy(b->episodes, list, (size_t)n * sizeof(*list));
	b->n_episodes = n;
}

static void episodes_of_the_interval(void **state)
{
	struct snapshot *a = westmere_snapshot(), *b = westmere_snapshot();
	double t0 = a->time;
	/* Newest first, as the tracker lists them. */
	const struct snapshot_episode list[] = {
		{ .kind = "dram_throttled_seconds", .socket = 0, .core = -1, .die = -1, .channel = 2,
		  .start = t0 + 2, .family = &throttle_dram_channel_seconds, .n_parts = 1,
		  .parts = { { &throttle_dram_slot_seconds,
			       "2" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP "thermal" } } },
		{ .kind = "dram_thermal_throttling", .socket = 1, .core = -1, .die = -1,
		  .channel = -1, .start = t0 + 2 },
		{ .kind = "core_thermal_throttling", .socket = 0, .core = 8, .die = -1,
		  .channel = -1, .start = t0, .end = t0 + 2.04 },
		{ .kind = "prochot", .socket = 0, .core = -1, .die = -1, .channel = -1, .start = t0,
		  .running_s = 2 },
		{ .kind = "package_thermal_throttling", .socket = 1, .core = -1, .die = -1,
		  .channel = -1, .start = t0 - 10, .end = t0 - 5 },
	};
	static const char *const present[] = {
		"\nepisodes:\n"
		"  socket 0: PROCHOT asserted still running after 2.0 s\n"
		"  socket 0 core 8: core throttled for heat ended after 2.0 s\n"
		"  socket 1: DRAM throttled for heat started, still running\n"
		"  socket 0 channel 2 slot 1: DRAM throttled for heat started, still running\n"
		"\ncollectors:\n",
		NULL,
	};
	static const char *const absent[] = { "package throttled", NULL };
	char *text;

	(void)state;
	b->time = t0 + 2;
	b->mono = a->mono + 2;
	add_episodes(b, list, 5);
	text = table(a, b);
	assert_lines("episodes", text, present, absent);
	free(text);
	snapshot_release(a);
	snapshot_release(b);
}

static void no_episodes_said_so(void **state)
{
	struct snapshot *a = westmere_snapshot(), *b = westmere_later();
	static const char *const present[] = { "\nepisodes: none\n\ncollectors:\n", NULL };
	char *text;

	(void)state;
	text = table(a, b);
	assert_lines("no episodes", text, present, NULL);
	free(text);
	snapshot_release(a);
	snapshot_release(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(westmere_interval),
		cmocka_unit_test(skylake_interval),
		cmocka_unit_test(throttle_seconds_lines),
		cmocka_unit_test(missing_readings_print_dashes),
		cmocka_unit_test(episodes_of_the_interval),
		cmocka_unit_test(no_episodes_said_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
