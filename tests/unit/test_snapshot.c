/*
 * Unit tests of snapshots: the shape built from a hand-made topology,
 * lookups, and publish/acquire/release with readers racing a publisher.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "cpu.h"
#include "fake_machines.h"
#include "helpers.h"
#include "snapshot.h"

/*
 * Two sockets of two cores of two threads; CPU n is thread n / 4 of core
 * n % 2 of socket (n % 4) / 2, as Linux numbers a 2-socket machine.  CPU 8
 * is offline with unknown topology and belongs to no core.
 */
#define N_CPUS 9
static struct hw_cpu cpus[N_CPUS];
static struct cpu_core cores[2][2];
static struct cpu_socket sockets[2];
static struct cpu_topology topo;

static const struct cpu_topology *fake_topology(void)
{
	for (int n = 0; n < 8; n++)
		cpus[n] = (struct hw_cpu){ .cpu = n, .socket = (n % 4) / 2, .core = n % 2,
					   .thread = n / 4, .online = true };
	cpus[8] = (struct hw_cpu){ .cpu = 8, .socket = -1, .core = -1, .online = false };
	for (int s = 0; s < 2; s++) {
		for (int c = 0; c < 2; c++)
			cores[s][c] = (struct cpu_core){ .core = c, .n_cpus = 2,
							 .cpus = { s * 2 + c, 4 + s * 2 + c } };
		sockets[s] = (struct cpu_socket){ .socket = s, .n_cores = 2, .cores = cores[s] };
	}
	topo = (struct cpu_topology){ .n_cpus = N_CPUS, .cpus = cpus, .n_sockets = 2,
				      .sockets = sockets };
	return &topo;
}

static void shape_follows_topology(void **state)
{
	struct snapshot *s = snapshot_new(fake_topology(), &westmere);

	(void)state;
	assert_non_null(s);
	assert_int_equal(atomic_load(&s->refs), 1);
	assert_int_equal(s->n_sockets, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s->sockets[i].socket, i);
		assert_int_equal(s->sockets[i].n_cores, 2);
		assert_null(snapshot_find_signal(s, METRIC_SIGNAL_TJMAX, METRIC_SCOPE_SOCKET, i));
	}
	assert_int_equal(s->sockets[1].cores[1].core, 1);
	assert_int_equal(s->sockets[1].cores[1].n_cpus, 2);
	assert_int_equal(s->sockets[1].cores[1].cpus[0], 3);
	assert_int_equal(s->sockets[1].cores[1].cpus[1], 7);
	assert_int_equal(s->n_cpus, N_CPUS);
	assert_int_equal(s->cpus[6].cpu, 6);
	assert_int_equal(s->cpus[6].socket, 1);
	assert_int_equal(s->cpus[6].core, 0);
	assert_true(s->cpus[6].online);
	assert_false(s->cpus[8].online);
	assert_int_equal(s->n_values, 0);
	/* Collectors are listed as they report, in that order, each once. */
	assert_int_equal(s->n_collectors, 0);
	assert_ptr_equal(snapshot_add_collector(s, "b"), &s->collectors[0]);
	assert_ptr_equal(snapshot_add_collector(s, "a"), &s->collectors[1]);
	assert_ptr_equal(snapshot_add_collector(s, "b"), &s->collectors[0]);
	assert_string_equal(s->collectors[1].name, "a");
	assert_string_equal(s->collectors[1].reason, "");
	assert_ptr_equal(snapshot_find_collector(s, "a"), &s->collectors[1]);
	assert_null(snapshot_find_collector(s, "c"));
	assert_string_equal(s->cpu_id.vendor, "GenuineIntel");
	assert_int_equal(s->cpu_id.model, 44);
	assert_int_equal(s->cpu_id.stepping, 2);
	assert_string_equal(s->cpu_id.microarch, "westmere-ep");
	assert_true(strlen(s->version) > 0);
	assert_int_equal(s->n_episodes, 0);
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++)
		assert_null(atomic_load(&s->rendered[i]));
	snapshot_release(s);
}

static void info_may_be_null(void **state)
{
	struct snapshot *s = snapshot_new(fake_topology(), NULL);

	(void)state;
	assert_non_null(s);
	assert_string_equal(s->cpu_id.vendor, "");
	assert_string_equal(s->cpu_id.microarch, "");
	snapshot_release(s);
}

static void lookups(void **state)
{
	struct snapshot *s = snapshot_new(fake_topology(), &westmere);

	(void)state;
	assert_ptr_equal(snapshot_socket(s, 1), &s->sockets[1]);
	assert_null(snapshot_socket(s, 2));
	assert_null(snapshot_socket(s, -1));
	assert_ptr_equal(snapshot_core(s, 0, 1), &s->sockets[0].cores[1]);
	assert_null(snapshot_core(s, 0, 2));
	assert_null(snapshot_core(s, 5, 0));
	assert_ptr_equal(snapshot_cpu(s, 7), &s->cpus[7]);
	assert_ptr_equal(snapshot_cpu(s, 8), &s->cpus[8]);
	assert_null(snapshot_cpu(s, 9));
	snapshot_release(s);
}

static void publish_acquire_release(void **state)
{
	struct snapshot *a = snapshot_new(fake_topology(), &westmere);
	struct snapshot *b = snapshot_new(fake_topology(), &westmere);
	struct snapshot *r1, *r2;

	(void)state;
	assert_null(snapshot_acquire());
	snapshot_publish(a);
	r1 = snapshot_acquire();
	assert_ptr_equal(r1, a);
	assert_int_equal(atomic_load(&a->refs), 2);
	/* Episodes and cached text hang off the snapshot and go with it. */
	b->episodes = calloc(2, sizeof(*b->episodes));
	b->n_episodes = 2;
	atomic_store(&b->rendered[0], calloc(1, sizeof(struct snapshot_bytes) + 1));
	snapshot_publish(b);
	assert_int_equal(atomic_load(&a->refs), 1);
	r2 = snapshot_acquire();
	assert_ptr_equal(r2, b);
	snapshot_release(r1);
	snapshot_release(r2);
	snapshot_release(NULL);
	snapshot_clear();
	assert_null(snapshot_acquire());
	snapshot_clear();
}

/*
 * Readers check that what they hold is internally consistent while the
 * publisher replaces it as fast as it can; ASan reports any use after
 * free or leak.
 */
#define N_PUBLISHES 3000
#define N_READERS 3

static atomic_bool stop_readers;

static void *reader(void *arg)
{
	unsigned long *seen = arg;

	while (!atomic_load(&stop_readers)) {
		struct snapshot *s = snapshot_acquire();

		if (!s)
			continue;
		if (s->time != (double)s->samples || s->sockets[1].cores[0].cpus[1] != 6)
			abort();
		if (s->samples > 0)
			(*seen)++;
		snapshot_release(s);
	}
	return NULL;
}

static void readers_race_publisher(void **state)
{
	pthread_t threads[N_READERS];
	unsigned long seen[N_READERS] = { 0 };

	(void)state;
	atomic_store(&stop_readers, false);
	for (int i = 0; i < N_READERS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, reader, &seen[i]), 0);
	for (uint64_t n = 1; n <= N_PUBLISHES; n++) {
		struct snapshot *s = snapshot_new(fake_topology(), &westmere);

		assert_non_null(s);
		s->samples = n;
		s->time = (double)n;
		atomic_store(&s->rendered[0], calloc(1, sizeof(struct snapshot_bytes) + 1));
		snapshot_publish(s);
	}
	atomic_store(&stop_readers, true);
	for (int i = 0; i < N_READERS; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
	{
		struct snapshot *last = snapshot_acquire();

		assert_int_equal(last->samples, N_PUBLISHES);
		assert_int_equal(atomic_load(&last->refs), 2);
		snapshot_release(last);
	}
	snapshot_clear();
}

/*
 * Adding a snapshot's totals and taking them away again, collector by
 * collector (the generic carry of the families it declares and added).
 */
static void add_totals(struct snapshot *dst, const struct snapshot *src, const char *collector,
		       int sign)
{
	const struct collector_ops *ops = collector_find(collector);

	assert_non_null(ops);
	assert_int_equal(snapshot_add_sample_totals(dst, src, ops->families, ops->n_families,
						    collector_source(ops), sign), 0);
}

static double seconds_at(const struct snapshot *s, const char *json_key, int where)
{
	const struct metric_sample *v = snapshot_find_sample(s, thermal_family(json_key), where, NULL);

	assert_non_null(v);
	return v->value.d;
}

static uint64_t count_at(const struct snapshot *s, const char *json_key, int where)
{
	const struct metric_sample *v = snapshot_find_sample(s, thermal_family(json_key), where, NULL);

	assert_non_null(v);
	return v->value.u;
}

/* The shared conflicts count of collector at where (a socket or a CPU). */
static uint64_t conflicts_at(const struct snapshot *s, const char *collector, int where)
{
	for (int i = 0; i < s->n_values; i++) {
		const struct metric_sample *v = &s->values[i];

		if (v->family == &collector_pmu_conflicts && v->where == where && v->label_value &&
		    strncmp(v->label_value, collector, strlen(collector)) == 0)
			return v->value.u;
	}
	fail_msg("no conflicts of %s at %d", collector, where);
	return 0;
}

static void add_and_subtract_totals(void **state)
{
	struct snapshot *a = westmere_snapshot(), *b = westmere_snapshot();
	uint64_t ticks = uncore_view(a, 1)->clockticks, dram = uncore_view(a, 1)->events[0].total;
	uint64_t instr = cpu_view(a, 3)->instructions, llc = cpu_view(a, 3)->events[0].total;
	uint64_t unc_conflicts = conflicts_at(a, "uncore", 1);
	double rapl = 0.75;

	(void)state;
	add_thermal_seconds(a, "dram_throttled_seconds", 1, rapl);
	add_thermal_seconds(b, "dram_throttled_seconds", 1, rapl);
	add_thermal_seconds(a, "package_throttled_seconds", 0, 0.5);
	add_thermal_seconds(b, "package_throttled_seconds", 1, 1.0);
	add_totals(a, b, "uncore", 1);
	assert_int_equal(uncore_view(a, 1)->clockticks, 2 * ticks);
	assert_int_equal(uncore_view(a, 1)->events[0].total, 2 * dram);
	assert_int_equal(cpu_view(a, 3)->instructions, instr);   /* core totals untouched */
	/* The shared family: only what the uncore collector added. */
	assert_int_equal(conflicts_at(a, "uncore", 1), 2 * unc_conflicts);
	assert_int_equal(conflicts_at(a, "core", 3), 0);
	add_totals(a, b, "core", 1);
	assert_int_equal(cpu_view(a, 3)->instructions, 2 * instr);
	assert_int_equal(cpu_view(a, 3)->events[0].total, 2 * llc);
	assert_int_equal(conflicts_at(a, "uncore", 1), 2 * unc_conflicts);
	add_totals(a, b, "thermal", 1);
	assert_true(seconds_at(a, "dram_throttled_seconds", 1) == 2 * rapl);
	/* Absent in b: left as it is; a kernel count is the kernel's own total. */
	assert_true(seconds_at(a, "package_throttled_seconds", 0) == 0.5);
	assert_int_equal(count_at(a, "kernel_package_throttles", 1), 7);
	/* Absent in a: stays absent. */
	assert_null(snapshot_find_sample(a, thermal_family("package_throttled_seconds"), 1, NULL));
	for (size_t i = 0; i < collector_registry_n; i++)
		add_totals(a, b, collector_registry[i]->name, -1);
	assert_int_equal(uncore_view(a, 1)->clockticks, ticks);
	assert_int_equal(uncore_view(a, 1)->events[0].total, dram);
	assert_int_equal(cpu_view(a, 3)->instructions, instr);
	assert_int_equal(cpu_view(a, 3)->events[0].total, llc);
	assert_int_equal(conflicts_at(a, "uncore", 1), unc_conflicts);
	assert_true(seconds_at(a, "dram_throttled_seconds", 1) == rapl);
	/* Subtraction wraps like the counters: 0 - 1 is 2^64 - 1. */
	b->source = collector_source(collector_find("uncore"));
	add_value(b, "uncore", "uncored_uncore_clockticks_total", 0, NULL,
		  uncore_view(a, 0)->clockticks + 1);
	b->source = 0;
	add_totals(a, b, "uncore", -1);
	assert_int_equal(uncore_view(a, 0)->clockticks, UINT64_MAX);
	snapshot_release(a);
	snapshot_release(b);
}

/* Texts are copied into the snapshot once per distinct text. */
static void text_storage(void **state)
{
	struct snapshot *s = snapshot_new(fake_topology(), NULL);
	const char *first, *again;
	char name[32];

	(void)state;
	snprintf(name, sizeof(name), "llc_misses");
	first = snapshot_intern(s, name);
	name[0] = 'X';                  /* the snapshot holds its own copy */
	assert_string_equal(first, "llc_misses");
	again = snapshot_intern(s, "llc_misses");
	assert_ptr_equal(first, again);  /* one copy per text */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "ev_%d", i);
		assert_string_equal(snapshot_intern(s, name), name);
	}
	assert_ptr_equal(snapshot_intern(s, "llc_misses"), first);
	assert_false(s->is_short_of_memory);
	snapshot_release(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shape_follows_topology),
		cmocka_unit_test(info_may_be_null),
		cmocka_unit_test(lookups),
		cmocka_unit_test(publish_acquire_release),
		cmocka_unit_test(readers_race_publisher),
		cmocka_unit_test(add_and_subtract_totals),
		cmocka_unit_test(text_storage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
