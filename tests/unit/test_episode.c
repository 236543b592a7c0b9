/*
 * Unit tests of the throttle episode tracker: the state machine, the
 * bounded list, and the derivation of every place's state from snapshots.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpu.h"
#include "episode.h"
#include "fake_machines.h"
#include "throttle_families.h"

static void kind_names(void **state)
{
	(void)state;
	assert_string_equal(episode_kind_name(EPISODE_DRAM_THERMAL_THROTTLING),
			    "dram_thermal_throttling");
	assert_string_equal(episode_kind_name(EPISODE_PROCHOT), "prochot");
	assert_string_equal(episode_kind_name(EPISODE_CORE_THERMAL_THROTTLING),
			    "core_thermal_throttling");
	assert_string_equal(episode_kind_name(EPISODE_PACKAGE_THERMAL_THROTTLING),
			    "package_thermal_throttling");
	assert_string_equal(episode_kind_name(EPISODE_KIND_COUNT), "unknown");
}

static void start_end_duration(void **state)
{
	struct episode_tracker *t = episode_tracker_new(8);
	struct episode_change c;

	(void)state;
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, false, 9.0, &c), 0);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, true, 10.0, &c), 1);
	assert_true(c.started);
	assert_string_equal(c.episode.kind, "prochot");
	assert_int_equal(c.episode.socket, 1);
	assert_int_equal(c.episode.core, -1);
	assert_true(c.episode.start == 10.0);
	assert_true(c.episode.end == 0);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, true, 11.0, &c), 0);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, false, 13.5, &c), 1);
	assert_false(c.started);
	assert_true(c.episode.start == 10.0);
	assert_true(c.episode.end == 13.5);
	assert_true(c.duration_s == 3.5);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, false, 14.0, NULL), 0);
	assert_int_equal(episode_update(t, EPISODE_KIND_COUNT, 1, -1, true, 14.0, NULL), -EINVAL);
	episode_tracker_free(t);
	episode_tracker_free(NULL);
}

/* Copy the tracker's list through an empty snapshot. */
static struct snapshot *list_of(struct episode_tracker *t, double now)
{
	struct snapshot *s = snapshot_new(NULL, NULL);

	assert_non_null(s);
	s->time = s->mono = now;
	assert_int_equal(episode_update_from_snapshot(t, NULL, s, NULL, NULL), 0);
	return s;
}

static void places_are_independent(void **state)
{
	struct episode_tracker *t = episode_tracker_new(8);
	struct snapshot *s;

	(void)state;
	assert_int_equal(episode_update(t, EPISODE_CORE_THERMAL_THROTTLING, 0, 1, true, 1, NULL), 1);
	assert_int_equal(episode_update(t, EPISODE_CORE_THERMAL_THROTTLING, 0, 2, true, 2, NULL), 1);
	assert_int_equal(episode_update(t, EPISODE_CORE_THERMAL_THROTTLING, 1, 1, true, 3, NULL), 1);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 0, -1, true, 4, NULL), 1);
	/* Ending one place leaves the others ongoing. */
	assert_int_equal(episode_update(t, EPISODE_CORE_THERMAL_THROTTLING, 0, 2, false, 5, NULL), 1);
	assert_int_equal(episode_update(t, EPISODE_CORE_THERMAL_THROTTLING, 0, 1, true, 5, NULL), 0);
	s = list_of(t, 6);
	assert_int_equal(s->n_episodes, 4);
	/* Newest first by start. */
	assert_string_equal(s->episodes[0].kind, "prochot");
	assert_true(s->episodes[0].end == 0);
	assert_int_equal(s->episodes[1].socket, 1);
	assert_int_equal(s->episodes[2].core, 2);
	assert_true(s->episodes[2].start == 2 && s->episodes[2].end == 5);
	assert_int_equal(s->episodes[3].core, 1);
	assert_true(s->episodes[3].end == 0);
	snapshot_release(s);
	episode_tracker_free(t);
}

static void full_list_drops_oldest_finished(void **state)
{
	struct episode_tracker *t = episode_tracker_new(3);
	struct snapshot *s;

	(void)state;
	/* socket 0 finished (oldest), socket 1 ongoing, socket 2 finished. */
	episode_update(t, EPISODE_PROCHOT, 0, -1, true, 1, NULL);
	episode_update(t, EPISODE_PROCHOT, 1, -1, true, 2, NULL);
	episode_update(t, EPISODE_PROCHOT, 2, -1, true, 3, NULL);
	episode_update(t, EPISODE_PROCHOT, 0, -1, false, 4, NULL);
	episode_update(t, EPISODE_PROCHOT, 2, -1, false, 5, NULL);
	episode_update(t, EPISODE_PROCHOT, 3, -1, true, 6, NULL);
	s = list_of(t, 7);
	assert_int_equal(s->n_episodes, 3);
	assert_int_equal(s->episodes[0].socket, 3);
	assert_int_equal(s->episodes[1].socket, 2);
	assert_int_equal(s->episodes[2].socket, 1);
	assert_true(s->episodes[2].end == 0);
	snapshot_release(s);
	episode_tracker_free(t);
}

static void all_ongoing_drops_oldest(void **state)
{
	struct episode_tracker *t = episode_tracker_new(2);
	struct episode_change c;
	struct snapshot *s;

	(void)state;
	episode_update(t, EPISODE_PROCHOT, 0, -1, true, 1, NULL);
	episode_update(t, EPISODE_PROCHOT, 1, -1, true, 2, NULL);
	episode_update(t, EPISODE_PROCHOT, 2, -1, true, 3, NULL);
	s = list_of(t, 4);
	assert_int_equal(s->n_episodes, 2);
	assert_int_equal(s->episodes[0].socket, 2);
	assert_int_equal(s->episodes[1].socket, 1);
	snapshot_release(s);
	/* The dropped one still ends and reports its real start. */
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 0, -1, false, 5, &c), 1);
	assert_true(c.episode.start == 1 && c.duration_s == 4);
	s = list_of(t, 6);
	assert_int_equal(s->n_episodes, 2);
	assert_true(s->episodes[0].end == 0 && s->episodes[1].end == 0);
	snapshot_release(s);
	episode_tracker_free(t);
}

static void zero_capacity_keeps_nothing(void **state)
{
	struct episode_tracker *t = episode_tracker_new(0);
	struct episode_change c;
	struct snapshot *s;

	(void)state;
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 0, -1, true, 1, &c), 1);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 0, -1, false, 2, &c), 1);
	assert_true(c.duration_s == 1);
	s = list_of(t, 3);
	assert_int_equal(s->n_episodes, 0);
	assert_null(s->episodes);
	snapshot_release(s);
	episode_tracker_free(t);
}

/* One socket (id 1) with cores 0 and 1, CPUs 0-1. */
static struct hw_cpu cpus[2] = {
	{ .cpu = 0, .socket = 1, .core = 0, .online = true },
	{ .cpu = 1, .socket = 1, .core = 1, .online = true },
};
static struct cpu_core cores[2] = {
	{ .core = 0, .n_cpus = 1, .cpus = { 0 } },
	{ .core = 1, .n_cpus = 1, .cpus = { 1 } },
};
static struct cpu_socket sockets[1] = { { .socket = 1, .n_cores = 2, .cores = cores } };
static const struct cpu_topology topo = { .n_cpus = 2, .cpus = cpus, .n_sockets = 1,
					  .sockets = sockets };

struct sample {
	double time;
	bool has_uncore;
	uint64_t dram_cycles;
	uint64_t prochot_assertions;
	bool prochot_event_available;
	bool core_status;           /* has_status on both cores */
	bool core1_throttling;
	bool core0_prochot;
	bool has_package_status;
	bool package_throttling;
};

static struct snapshot *make(const struct sample *in)
{
	struct snapshot *s = snapshot_new(&topo, NULL);
	struct snapshot_socket *sock = &s->sockets[0];

	s->time = s->mono = in->time;
	if (in->has_uncore) {
		add_value(s, "uncore", "uncored_uncore_events_total", sock->socket,
			  "dram_thermal_throttled_cycles", in->dram_cycles);
		if (in->prochot_event_available)
			add_value(s, "uncore", "uncored_uncore_events_total", sock->socket,
				  "prochot_assertions", in->prochot_assertions);
		else
			add_text(s, "uncore", "unavailable", sock->socket, "prochot_assertions", "");
	}
	for (int i = 0; in->core_status && i < 2; i++) {
		int where = sock->cores[i].cpus[0];

		add_thermal(s, "thermal_throttling", where, i == 1 && in->core1_throttling);
		add_thermal(s, "prochot_active", where, i == 0 && in->core0_prochot);
	}
	if (in->has_package_status) {
		add_thermal(s, "package_thermal_throttling", sock->socket, in->package_throttling);
		add_thermal(s, "package_prochot_active", sock->socket, 0);
	}
	return s;
}

struct log {
	int n;
	char lines[16][96];
};

static void log_change(void *arg, const struct episode_change *c)
{
	struct log *l = arg;

	if (l->n < 16)
		snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%s %s s%d c%d %g %g",
			 c->started ? "start" : "end", c->episode.kind, c->episode.socket,
			 c->episode.core, c->started ? c->episode.start : c->episode.end,
			 c->duration_s);
}

/* A monotonic clock the test moves. */
static double fake_mono;

static double fake_clock(void)
{
	return fake_mono;
}

static void derived_from_snapshots(void **state)
{
	static const struct sample samples[] = {
		/* time uncore dram proc avail status thr1 proc0 pkgst pkgthr */
		{ 100, true, 10, 5, true, true, false, false, true, false },
		{ 101, true, 10, 5, true, true, false, false, true, false },
		{ 102, true, 40, 5, true, true, true, false, true, false },   /* dram, core 1 */
		{ 103, true, 40, 6, true, true, true, false, true, true },    /* dram end, prochot, pkg */
		{ 104, true, 40, 7, true, false, false, true, false, false }, /* no status bits read */
		{ 105, true, 40, 7, true, true, false, true, true, false },   /* core 1, pkg end; prochot bit */
		{ 106, false, 90, 9, true, true, false, false, true, false }, /* no uncore: no signal */
	};
	static const char *const expected[] = {
		"start dram_thermal_throttling s1 c-1 102 0",
		"start core_thermal_throttling s1 c1 102 0",
		"end dram_thermal_throttling s1 c-1 103 1",
		"start prochot s1 c-1 103 0",
		"start package_thermal_throttling s1 c-1 103 0",
		"end package_thermal_throttling s1 c-1 105 2",
		"end core_thermal_throttling s1 c1 105 3",
		"end prochot s1 c-1 106 3",
	};
	struct episode_tracker *t = episode_tracker_new(16);
	struct snapshot *prev = NULL, *s = NULL;
	struct log l = { 0 };

	(void)state;
	episode_monotonic_clock = fake_clock;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		s = make(&samples[i]);
		fake_mono = 5000 + samples[i].time;
		assert_int_equal(episode_update_from_snapshot(t, prev, s, log_change, &l), 0);
		snapshot_release(prev);
		prev = s;
	}
	assert_int_equal(l.n, sizeof(expected) / sizeof(expected[0]));
	for (int i = 0; i < l.n; i++)
		assert_string_equal(l.lines[i], expected[i]);
	/* The last snapshot holds all four, newest first, all finished. */
	assert_int_equal(s->n_episodes, 4);
	assert_string_equal(s->episodes[0].kind, "package_thermal_throttling");
	assert_true(s->episodes[0].end == 105);
	assert_string_equal(s->episodes[1].kind, "prochot");
	assert_true(s->episodes[1].end == 106);
	assert_string_equal(s->episodes[3].kind, "dram_thermal_throttling");
	snapshot_release(s);
	episode_tracker_free(t);
}

/*
 * The wall clock steps back two hours in the middle of an episode: its
 * duration is what the monotonic clock measured, and its end stamp is its
 * start stamp plus that.
 */
static void a_wall_clock_step_does_not_change_durations(void **state)
{
	static const struct sample samples[] = {
		{ 1000, true, 10, 5, true, true, false, false, true, false },
		{ 1001, true, 10, 5, true, true, true, false, true, false },   /* core 1 starts */
		{ 1002 - 7200, true, 10, 5, true, true, true, false, true, false },
		{ 1003 - 7200, true, 10, 5, true, true, false, false, true, false }, /* ends */
	};
	struct episode_tracker *t = episode_tracker_new(4);
	struct snapshot *prev = NULL, *s = NULL;
	struct log l = { 0 };

	(void)state;
	episode_monotonic_clock = fake_clock;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		s = make(&samples[i]);
		fake_mono = 50.0 + (double)i;
		assert_int_equal(episode_update_from_snapshot(t, prev, s, log_change, &l), 0);
		snapshot_release(prev);
		prev = s;
	}
	assert_int_equal(l.n, 2);
	assert_string_equal(l.lines[0], "start core_thermal_throttling s1 c1 1001 0");
	assert_string_equal(l.lines[1], "end core_thermal_throttling s1 c1 1003 2");
	assert_int_equal(s->n_episodes, 1);
	assert_true(s->episodes[0].start == 1001 && s->episodes[0].end == 1003);
	snapshot_release(s);
	episode_tracker_free(t);
}

static void unavailable_event_is_no_signal(void **state)
{
	const struct sample a = { 1, true, 0, 0, false, false, false, false, false, false };
	const struct sample b = { 2, true, 0, 50, false, false, false, false, false, false };
	struct episode_tracker *t = episode_tracker_new(4);
	struct snapshot *sa = make(&a), *sb = make(&b);
	struct log l = { 0 };

	(void)state;
	assert_int_equal(episode_update_from_snapshot(t, NULL, sa, log_change, &l), 0);
	assert_int_equal(episode_update_from_snapshot(t, sa, sb, log_change, &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(sb->n_episodes, 0);
	snapshot_release(sa);
	snapshot_release(sb);
	episode_tracker_free(t);
}

/* One throttle family series per label value of dram[], plus PROCHOT and a temperature. */
struct series_sample {
	double dram2, dram3;        /* channel 2 and 3 thermal seconds; < 0: not added */
	double prochot;             /* external PROCHOT seconds */
	int64_t package_celsius;
};

static struct snapshot *make_series(const struct series_sample *in, double time)
{
	struct snapshot *s = snapshot_new(&topo, NULL);

	s->time = s->mono = time;
	s->interval_s = 1;
	if (in->dram2 >= 0)
		snapshot_add_sample(s, &throttle_dram_channel_seconds, 1, "2" METRIC_LABEL_SEP "thermal",
				    0, in->dram2);
	if (in->dram3 >= 0)
		snapshot_add_sample(s, &throttle_dram_channel_seconds, 1, "3" METRIC_LABEL_SEP "thermal",
				    0, in->dram3);
	snapshot_add_sample(s, &throttle_prochot_seconds, 1, "external", 0, in->prochot);
	add_thermal(s, "package_temperature_celsius", 1, in->package_celsius);
	return s;
}

/*
 * Each throttle family series is a place of its own: one channel's seconds
 * growing opens an episode for that channel only, which adds up its seconds,
 * intervals and peak temperature, and ends when they stop growing or the
 * series goes away.
 */
static void family_series_are_episodes(void **state)
{
	static const struct series_sample samples[] = {
		{ 0, 0, 0, 60 },
		{ 0.5, 0, 0, 70 },       /* channel 2 starts */
		{ 1.5, 0, 0, 90 },
		{ 1.5, 0, 0.25, 80 },    /* channel 2 ends, PROCHOT starts */
		{ 1.5, 0, 0.25, 80 },    /* PROCHOT ends */
		{ 1.5, 0.5, 0.25, 80 },  /* channel 3 starts */
		{ 1.5, -1, 0.25, 80 },   /* its series is gone: it ends */
	};
	static const char *const expected[] = {
		"start dram_throttled_seconds s1 c-1 101 0",
		"end dram_throttled_seconds s1 c-1 103 2",
		"start prochot_seconds s1 c-1 103 0",
		"end prochot_seconds s1 c-1 104 1",
		"start dram_throttled_seconds s1 c-1 105 0",
		"end dram_throttled_seconds s1 c-1 106 1",
	};
	struct episode_tracker *t = episode_tracker_new(8);
	struct snapshot *prev = NULL, *s = NULL;
	struct log l = { 0 };
	const struct snapshot_episode *e;

	(void)state;
	episode_monotonic_clock = fake_clock;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		s = make_series(&samples[i], 100 + (double)i);
		fake_mono = 10 + (double)i;
		assert_int_equal(episode_update_from_snapshot(t, prev, s, log_change, &l), 0);
		snapshot_release(prev);
		prev = s;
	}
	assert_int_equal(l.n, sizeof(expected) / sizeof(expected[0]));
	for (int i = 0; i < l.n; i++)
		assert_string_equal(l.lines[i], expected[i]);
	assert_int_equal(s->n_episodes, 3);
	e = &s->episodes[2];                     /* the oldest: channel 2 */
	assert_int_equal(e->id, 1);
	assert_ptr_equal(e->family, &throttle_dram_channel_seconds);
	assert_string_equal(e->labels, "2" METRIC_LABEL_SEP "thermal");
	assert_true(e->mono_start == 11 && e->mono_end == 13);
	assert_true(e->has_peak && e->peak_celsius == 90);
	assert_true(e->throttled_s == 1.5 && e->sampled_s == 2);
	e = &s->episodes[1];
	assert_int_equal(e->id, 2);
	assert_string_equal(e->kind, "prochot_seconds");
	assert_string_equal(e->labels, "external");
	assert_true(e->throttled_s == 0.25 && e->sampled_s == 1);
	e = &s->episodes[0];
	assert_int_equal(e->id, 3);
	assert_string_equal(e->labels, "3" METRIC_LABEL_SEP "thermal");
	assert_true(e->end == 106);
	snapshot_release(s);
	episode_tracker_free(t);
}

/*
 * A PROCHOT that a core's status bits show and a family measures (the
 * PCU's prochot cycles, Skylake-SP on): one episode, the family's, where
 * the status bits opened a second one for the same assertion.
 */
static void prochot_measured_by_its_family_is_one_episode(void **state)
{
	const struct sample quiet = { 1, false, 0, 0, false, true, false, false, false, false };
	const struct sample hot = { 2, false, 0, 0, false, true, false, true, false, false };
	struct episode_tracker *t = episode_tracker_new(4);
	struct snapshot *sa = make(&quiet), *sb = make(&hot);
	struct log l = { 0 };

	(void)state;
	episode_monotonic_clock = fake_clock;
	snapshot_add_sample(sa, &throttle_prochot_seconds, 1, "external", 0, 0);
	snapshot_add_sample(sb, &throttle_prochot_seconds, 1, "external", 0, 0.5);
	assert_int_equal(episode_update_from_snapshot(t, NULL, sa, log_change, &l), 0);
	assert_int_equal(episode_update_from_snapshot(t, sa, sb, log_change, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(sb->n_episodes, 1);
	assert_string_equal(sb->episodes[0].kind, "prochot_seconds");
	snapshot_release(sa);
	snapshot_release(sb);
	episode_tracker_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kind_names),
		cmocka_unit_test(start_end_duration),
		cmocka_unit_test(a_wall_clock_step_does_not_change_durations),
		cmocka_unit_test(places_are_independent),
		cmocka_unit_test(full_list_drops_oldest_finished),
		cmocka_unit_test(all_ongoing_drops_oldest),
		cmocka_unit_test(zero_capacity_keeps_nothing),
		cmocka_unit_test(derived_from_snapshots),
		cmocka_unit_test(unavailable_event_is_no_signal),
		cmocka_unit_test(family_series_are_episodes),
		cmocka_unit_test(prochot_measured_by_its_family_is_one_episode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
