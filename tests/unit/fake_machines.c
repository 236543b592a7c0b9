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

/* Collectors as far as collector_add_conflicts needs them (their name). */
static const struct collector_ops uncore_ops = { .name = "uncore" };
static const struct collector_ops core_ops = { .name = "core" };
struct collector uncore_collector = { .ops = &uncore_ops };
struct collector core_collector = { .ops = &core_ops };

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

const struct metric_family *family_of(const char *collector, const char *name)
{
	const struct metric_family *f = metric_family_find(collector, name);

	if (!f)
		fail_msg("no family %s of collector %s", name, collector);
	return f;
}

void add_value(struct snapshot *s, const char *collector, const char *name, int where,
	       const char *label, uint64_t u)
{
	assert_int_equal(snapshot_add_sample(s, family_of(collector, name), where, label, u, 0), 0);
}

void add_text(struct snapshot *s, const char *collector, const char *name, int where,
	      const char *label, const char *text)
{
	assert_int_equal(snapshot_add_text(s, family_of(collector, name), where, label, text), 0);
}

/* Views rotate through a few buffers, so that a test may hold several at once. */
#define N_VIEWS 8

/* The events of family counts (and texts) at where, in the order added. */
static int view_events(const struct snapshot *s, const struct metric_family *counts,
		       const struct metric_family *texts, int where, struct event_view *ev, int max)
{
	int n = 0;

	for (int i = 0; i < s->n_values && n < max; i++) {
		const struct metric_sample *v = &s->values[i];

		if ((v->family != counts && v->family != texts) || v->where != where || !v->label_value)
			continue;
		ev[n++] = (struct event_view){ .name = v->label_value, .available = v->family == counts,
					       .total = v->family == counts ? v->value.u : 0,
					       .reason = v->family == texts ? v->value.text : "" };
	}
	return n;
}

const struct uncore_view *uncore_view(const struct snapshot *s, int socket)
{
	static struct uncore_view views[N_VIEWS];
	static int next;
	struct uncore_view *u = &views[next++ % N_VIEWS];
	const struct metric_family *events = family_of("uncore", "uncored_uncore_events_total");
	const struct metric_sample *v;

	memset(u, 0, sizeof(*u));
	u->has_uncore = snapshot_find_sample(s, events, socket, NULL) != NULL;
	v = snapshot_find_sample(s, family_of("uncore", "uncored_uncore_clockticks_total"), socket,
				 NULL);
	u->has_clockticks = v != NULL;
	u->clockticks = v ? v->value.u : 0;
	v = snapshot_find_sample(s, family_of("uncore", "conflicts"), socket, NULL);
	u->conflicts = v ? v->value.u : 0;
	u->n_events = view_events(s, events, family_of("uncore", "unavailable"), socket, u->events,
				  VIEW_MAX_EVENTS);
	return u;
}

const struct cpu_view *cpu_view(const struct snapshot *s, int cpu)
{
	static struct cpu_view views[N_VIEWS];
	static int next;
	struct cpu_view *c = &views[next++ % N_VIEWS];
	const struct metric_family *events = family_of("core", "uncored_core_events_total");
	static const char *const fixed[3] = { "uncored_core_instructions_total",
					      "uncored_core_cycles_total",
					      "uncored_core_ref_cycles_total" };
	bool *has[3] = { &c->has_instructions, &c->has_cycles, &c->has_ref_cycles };
	uint64_t *value[3] = { &c->instructions, &c->cycles, &c->ref_cycles };
	const struct metric_sample *v;

	memset(c, 0, sizeof(*c));
	c->has_core_pmu = snapshot_find_sample(s, events, cpu, NULL) != NULL;
	for (int i = 0; i < 3; i++) {
		v = snapshot_find_sample(s, family_of("core", fixed[i]), cpu, NULL);
		*has[i] = v != NULL;
		*value[i] = v ? v->value.u : 0;
	}
	v = snapshot_find_sample(s, family_of("core", "conflicts"), cpu, NULL);
	c->conflicts = v ? v->value.u : 0;
	c->n_events = view_events(s, events, family_of("core", "unavailable"), cpu, c->events,
				  VIEW_MAX_EVENTS);
	return c;
}

void add_core_cpu(struct snapshot *s, int cpu, uint64_t instructions, uint64_t cycles,
		  uint64_t ref_cycles)
{
	add_value(s, "core", "uncored_core_instructions_total", cpu, NULL, instructions);
	add_value(s, "core", "uncored_core_cycles_total", cpu, NULL, cycles);
	add_value(s, "core", "uncored_core_ref_cycles_total", cpu, NULL, ref_cycles);
	add_value(s, "core", "uncored_core_events_total", cpu, NULL, 0);
	add_value(s, "core", "unavailable", cpu, NULL, 0);
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

void *conf_settings_of(struct conf *conf, const char *section)
{
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct conf_section *sec = collector_registry[i]->conf_section;

		if (sec && strcmp(sec->name, section) == 0 && sec->settings_size)
			return conf->settings[i];
	}
	fail_msg("no settings block of [%s]", section);
	return NULL;
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

	/* Added as the thermal collector adds them. */
	s->source = collector_source(collector_find("thermal"));
	assert_int_equal(snapshot_add_sample(s, f, where, NULL, (uint64_t)v, (double)v), 0);
	s->source = 0;
}

void add_thermal_seconds(struct snapshot *s, const char *json_key, int where, double v)
{
	s->source = collector_source(collector_find("thermal"));
	assert_int_equal(snapshot_add_sample(s, thermal_family(json_key), where, NULL, 0, v), 0);
	s->source = 0;
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

unsigned fake_uncounted_cpus;

void fill_core_pmu(struct snapshot *s)
{
	s->source = collector_source(collector_find("core"));
	for (int i = 0; i < s->n_cpus; i++) {
		int cpu = s->cpus[i].cpu;

		if (cpu < 32 && (fake_uncounted_cpus & (1u << cpu)))
			continue;
		add_core_cpu(s, cpu, 2000 + (uint64_t)i, 1000, 900);
		add_value(s, "core", "uncored_core_events_total", cpu, "llc_misses", 11);
		add_text(s, "core", "unavailable", cpu, "branch_misses", "no such event here");
		assert_int_equal(collector_add_conflicts(&core_collector, s, -1, -1, cpu, 0), 0);
		add_value(s, "core", "conflicts", cpu, NULL, 0);
	}
	s->source = 0;
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
	s->source = collector_source(collector_find("uncore"));
	for (int i = 0; i < s->n_sockets; i++) {
		int id = s->sockets[i].socket;

		add_value(s, "uncore", "uncored_uncore_clockticks_total", id, NULL, 133000000);
		add_value(s, "uncore", "uncored_uncore_events_total", id, "dram_thermal_throttled_cycles",
			  1234);
		add_value(s, "uncore", "uncored_uncore_events_total", id, "prochot_assertions", 2);
		add_text(s, "uncore", "unavailable", id, "qhl_requests", "no such event here");
		assert_int_equal(collector_add_conflicts(&uncore_collector, s, id, -1, -1, 1), 0);
		add_value(s, "uncore", "conflicts", id, NULL, 1);
	}
	s->source = 0;
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
