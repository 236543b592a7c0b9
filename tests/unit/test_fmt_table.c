/*
 * Unit tests of the `--once` table: header, per-socket lines with deltas
 * and the DRAM throttled fraction, per-core rows with flags and IPC, and
 * collector status lines.
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
#include "fmt_table.h"

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

/* The second sample of a Westmere interval: one second and some counts later. */
static struct snapshot *westmere_later(void)
{
	struct snapshot *s = westmere_snapshot();

	s->time += 1;
	s->samples++;
	for (int i = 0; i < s->n_sockets; i++) {
		s->sockets[i].uncore_clockticks += 1000;
		s->sockets[i].uncore_events[0].total += 50;
		s->sockets[i].kernel_package_throttles += 2;
		s->sockets[i].cores[0].kernel_throttles += 4;
		s->sockets[i].cores[0].prochot_active = true;
	}
	for (int i = 0; i < s->n_cpus; i++) {
		s->cpus[i].instructions += i < 4 ? 3000 : 1000;
		s->cpus[i].cycles += 1000;
	}
	/* CPU 3 (socket 1 core 1, with CPU 7) is not counted in the second sample. */
	s->cpus[3].has_core_pmu = false;
	s->cpus[7].has_core_pmu = false;
	s->collectors[SNAPSHOT_COLLECTOR_CORE].up = false;
	snprintf(s->collectors[SNAPSHOT_COLLECTOR_CORE].reason,
		 sizeof(s->collectors[0].reason), "cpu 3: offline, skipping");
	return s;
}

static char *table(const struct snapshot *a, const struct snapshot *b)
{
	struct strbuf sb;
	char *text;

	strbuf_init(&sb);
	assert_int_equal(fmt_table_write(a, b, &sb), 0);
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
		NULL,
	};
	static const char *const absent[] = { "clockticks", "dram_thermal", NULL };
	struct snapshot *a = skylake_snapshot(), *b = skylake_snapshot();
	char *text;

	(void)state;
	b->time = a->time + 2;
	b->sockets[0].rapl_package_throttled_s += 0.5;
	text = table(a, b);
	assert_lines("skylake", text, present, absent);
	free(text);
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
	struct snapshot *a = tiny_snapshot(), *b = tiny_snapshot();
	char *text;

	(void)state;
	b->interval_s = 1;
	b->sockets[0].cores[0].has_temperature = false;
	text = table(a, b);
	assert_lines("tiny", text, present, NULL);
	free(text);
	snapshot_release(a);
	snapshot_release(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(westmere_interval),
		cmocka_unit_test(skylake_interval),
		cmocka_unit_test(missing_readings_print_dashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
