/*
 * Hand-built machines and snapshots shared by the formatter tests.  "big":
 * two sockets of two cores of two threads (CPU n is thread n / 4 of core
 * n % 2 of socket (n % 4) / 2).  "tiny": one socket, one core, CPU 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_machines.h"

static struct hw_cpu big_cpus[8];
static struct cpu_core big_cores[2][2];
static struct cpu_socket big_sockets[2];
static struct cpu_topology big_topo;

const struct cpu_topology *big_topology(void)
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
const struct cpu_topology tiny_topo = { .n_cpus = 1, .cpus = tiny_cpus, .n_sockets = 1,
					       .sockets = tiny_sockets };

const struct cpu_info westmere = {
	.vendor = "GenuineIntel", .family = 6, .model = 44, .stepping = 2,
	.microarch = "westmere-ep",
};

const struct cpu_info skylake = {
	.vendor = "GenuineIntel", .family = 6, .model = 85, .stepping = 4,
	.microarch = "skylake-sp",
};

void set_event(struct snapshot *s, struct snapshot_event *ev, const char *name, bool available,
	       uint64_t total)
{
	assert_int_equal(snapshot_set_event(s, ev, name, available, total,
					    available ? NULL : "no such event here"), 0);
}

const struct metric_family *thermal_family(const char *json_key)
{
	const struct collector_ops *ops = collector_find("thermal");

	assert_non_null(ops);
	for (size_t i = 0; i < ops->n_families; i++)
		if (strcmp(ops->families[i]->json_key, json_key) == 0)
			return ops->families[i];
	fail_msg("no thermal family %s", json_key);
	return NULL;
}

/* The offset of the boolean key of [section] in conf, past settings[*ret_index]. */
static size_t setting_offset(const char *section, const char *key, size_t *ret_index)
{
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct conf_section *sec = collector_registry[i]->conf_section;

		if (!sec || strcmp(sec->name, section) != 0 || !sec->settings_size)
			continue;
		for (size_t k = 0; k < sec->n_keys; k++)
			if (strcmp(sec->keys[k].name, key) == 0) {
				assert_int_equal(sec->keys[k].kind, CONF_KIND_BOOL);
				*ret_index = i;
				return sec->keys[k].offset;
			}
	}
	fail_msg("no setting [%s] %s", section, key);
	return 0;
}

bool *conf_setting_bool(struct conf *conf, const char *section, const char *key)
{
	size_t i, offset = setting_offset(section, key, &i);

	return (bool *)(void *)(conf->settings[i] + offset);
}

bool conf_setting_is(const struct conf *conf, const char *section, const char *key)
{
	size_t i, offset = setting_offset(section, key, &i);
	bool v;

	memcpy(&v, conf->settings[i] + offset, sizeof(v));
	return v;
}

void add_thermal(struct snapshot *s, const char *json_key, int where, int64_t v)
{
	const struct metric_family *f = thermal_family(json_key);

	assert_int_equal(snapshot_add_sample(s, f, where, NULL, (uint64_t)v, (double)v), 0);
}

void add_thermal_seconds(struct snapshot *s, const char *json_key, int where, double v)
{
	assert_int_equal(snapshot_add_sample(s, thermal_family(json_key), where, NULL, 0, v), 0);
}

void fill_thermal(struct snapshot *s)
{
	for (int i = 0; i < s->n_sockets; i++) {
		struct snapshot_socket *sock = &s->sockets[i];
		int id = sock->socket;

		add_thermal(s, "tjmax_celsius", id, 95);
		for (int j = 0; j < sock->n_cores; j++) {
			int where = sock->cores[j].cpus[0];

			add_thermal(s, "temperature_celsius", where, 50 + j);
			add_thermal(s, "thermal_throttling", where, j == 1);
			add_thermal(s, "prochot_active", where, 0);
			add_thermal(s, "kernel_throttles", where, 3);
		}
		add_thermal(s, "package_temperature_celsius", id, 60 + i);
		add_thermal(s, "package_thermal_throttling", id, i == 1);
		add_thermal(s, "package_prochot_active", id, 0);
		add_thermal(s, "kernel_package_throttles", id, 7);
	}
}

void fill_core_pmu(struct snapshot *s)
{
	for (int i = 0; i < s->n_cpus; i++) {
		struct snapshot_cpu *c = &s->cpus[i];

		c->has_core_pmu = true;
		c->has_instructions = c->has_cycles = c->has_ref_cycles = true;
		c->instructions = 2000 + (uint64_t)i;
		c->cycles = 1000;
		c->ref_cycles = 900;
		c->n_events = 2;
		c->events = snapshot_alloc_events(s, 2);
		assert_non_null(c->events);
		set_event(s, &c->events[0], "llc_misses", true, 11);
		set_event(s, &c->events[1], "branch_misses", false, 0);
	}
}

void enable_collectors(struct snapshot *s, bool uncore, bool thermal, bool core)
{
	static const char *const names[] = { "uncore", "thermal", "core" };
	const bool on[] = { uncore, thermal, core };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct snapshot_collector *c = snapshot_add_collector(s, names[i]);

		assert_non_null(c);
		c->enabled = c->up = on[i];
	}
}

/* A 2-socket Westmere-EP: uncore with thermal events, thermal, core PMU, no RAPL. */
struct snapshot *westmere_snapshot(void)
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
		sock->uncore_events = snapshot_alloc_events(s, 3);
		assert_non_null(sock->uncore_events);
		set_event(s, &sock->uncore_events[0], "dram_thermal_throttled_cycles", true, 1234);
		set_event(s, &sock->uncore_events[1], "prochot_assertions", true, 2);
		set_event(s, &sock->uncore_events[2], "qhl_requests", false, 0);
		sock->uncore_conflicts = 1;
	}
	return s;
}

/* A 2-socket Skylake-SP: no uncore collector, RAPL on socket 0 only. */
struct snapshot *skylake_snapshot(void)
{
	struct snapshot *s = snapshot_new(big_topology(), &skylake);

	snprintf(s->version, sizeof(s->version), "1.2.3");
	s->samples = 5;
	enable_collectors(s, false, true, true);
	s->collectors[2].up = false;
	fill_thermal(s);
	add_thermal_seconds(s, "package_throttled_seconds", 0, 0.25);
	add_thermal_seconds(s, "dram_throttled_seconds", 0, 1.5);
	return s;
}

/* One socket, one core, thermal only with just a core temperature and TjMax. */
struct snapshot *tiny_snapshot(void)
{
	struct snapshot *s = snapshot_new(&tiny_topo, &westmere);

	snprintf(s->version, sizeof(s->version), "1.2.3");
	s->samples = 3;
	s->last_sample_duration_s = 0.25;
	enable_collectors(s, false, true, false);
	s->collectors[1].errors = 2;
	add_thermal(s, "tjmax_celsius", 0, 100);
	add_thermal(s, "temperature_celsius", 0, 55);
	return s;
}
