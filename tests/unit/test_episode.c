/*
 * Unit tests of the throttle episode tracker: the state machine (an
 * episode from the first to the last sample that saw it), the bounded
 * list, the derivation of every place's state from snapshots, the folding
 * of a place's series into one episode (a channel's slots and levels, a
 * socket's PROCHOT sources, AMD's PROCHOT and its frequency limit), the
 * exemplar's episode and the words.
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
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, true, 12.5, &c), 0);
	/* It ends at the last update that saw it, not at the first that did not. */
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, false, 13.5, &c), 1);
	assert_false(c.started);
	assert_true(c.episode.start == 10.0);
	assert_true(c.episode.end == 12.5);
	assert_true(c.duration_s == 2.5);
	/* Seen once: an episode of 0 s. */
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, true, 20.0, &c), 1);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 1, -1, false, 21.0, &c), 1);
	assert_true(c.episode.start == 20.0 && c.episode.end == 20.0 && c.duration_s == 0);
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
	assert_true(s->episodes[2].start == 2 && s->episodes[2].end == 2);
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
	assert_true(c.episode.start == 1 && c.duration_s == 0);
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
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 0, -1, true, 2, &c), 0);
	assert_int_equal(episode_update(t, EPISODE_PROCHOT, 0, -1, false, 3, &c), 1);
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
	char lines[16][256];
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
	/* Each ends at the last sample that saw it; an unread bit leaves its place as it was. */
	static const char *const expected[] = {
		"start dram_thermal_throttling s1 c-1 102 0",
		"start core_thermal_throttling s1 c1 102 0",
		"end dram_thermal_throttling s1 c-1 102 0",
		"start prochot s1 c-1 103 0",
		"start package_thermal_throttling s1 c-1 103 0",
		"end package_thermal_throttling s1 c-1 103 0",
		"end core_thermal_throttling s1 c1 103 1",
		"end prochot s1 c-1 105 2",
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
	assert_true(s->episodes[0].end == 103);
	assert_string_equal(s->episodes[1].kind, "prochot");
	assert_true(s->episodes[1].end == 105);
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
	assert_string_equal(l.lines[1], "end core_thermal_throttling s1 c1 1002 1");
	assert_int_equal(s->n_episodes, 1);
	assert_true(s->episodes[0].start == 1001 && s->episodes[0].end == 1002);
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

/* A throttle family series of one sample: family, label value, seconds so far. */
struct series {
	const struct metric_family *family;
	const char *labels;
	double seconds;
};

#define SEP METRIC_LABEL_SEP
#define MAX_SERIES 6

/* A snapshot of socket 1 at time (wall clock and monotonic) with the series of in[]. */
static struct snapshot *make_family(const struct series *in, double time)
{
	struct snapshot *s = snapshot_new(&topo, NULL);

	s->time = s->mono = time;
	s->interval_s = 1;
	for (int i = 0; i < MAX_SERIES && in[i].family; i++)
		assert_int_equal(snapshot_add_sample(s, in[i].family, 1, in[i].labels, 0,
						     in[i].seconds), 0);
	add_thermal(s, "package_temperature_celsius", 1, 70 + (int64_t)time % 10);
	return s;
}

/* Each change in words, as the daemon logs it: "start|end PLACE: WHAT DURATION". */
static void log_words(void *arg, const struct episode_change *c)
{
	struct log *l = arg;
	char place[96], what[128];

	episode_describe(&c->episode, place, sizeof(place), what, sizeof(what));
	if (l->n < 16)
		snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%s %s: %s %g",
			 c->started ? "start" : "end", place, what, c->duration_s);
}

/*
 * Feed the snapshots of series[0..n) one second apart from time 100,
 * logging into l; returns the last snapshot (the caller releases it).
 */
static struct snapshot *feed_family(struct episode_tracker *t, const struct series (*series)[MAX_SERIES],
				    size_t n, struct log *l)
{
	struct snapshot *prev = NULL, *s = NULL;

	episode_monotonic_clock = fake_clock;
	for (size_t i = 0; i < n; i++) {
		s = make_family(series[i], 100 + (double)i);
		fake_mono = 100 + (double)i;
		assert_int_equal(episode_update_from_snapshot(t, prev, s, log_words, l), 0);
		snapshot_release(prev);
		prev = s;
	}
	return s;
}

/*
 * A channel's series (two slots, each with a warning and a critical
 * level) are one episode of the channel, which records the slots and
 * levels that took part; another channel is a place of its own, and a
 * place whose series are gone ends its episode.
 */
static void a_channels_slots_and_levels_are_one_episode(void **state)
{
#define W0(v) { &throttle_dram_slot_seconds, "2" SEP "0" SEP "thermal", v }
#define W1(v) { &throttle_dram_slot_seconds, "2" SEP "1" SEP "thermal", v }
#define C0(v) { &throttle_dram_slot_critical_seconds, "2" SEP "0" SEP "thermal", v }
#define C1(v) { &throttle_dram_slot_critical_seconds, "2" SEP "1" SEP "thermal", v }
#define CH3(v) { &throttle_dram_slot_seconds, "3" SEP "0" SEP "thermal", v }
	static const struct series samples[][MAX_SERIES] = {
		{ W0(0), W1(0), C0(0), C1(0), CH3(0) },
		{ W0(0.5), W1(0), C0(0), C1(0), CH3(0) },       /* 101: slot 0 starts it */
		{ W0(1), W1(0.75), C0(0.25), C1(0), CH3(0) },   /* 102: slot 1, critical join */
		{ W0(1), W1(0.75), C0(0.25), C1(0), CH3(0) },   /* 103: quiet: it ended at 102 */
		{ W0(1), W1(0.75), C0(0.25), C1(0), CH3(0.5) }, /* 104: channel 3 */
		{ W0(1), W1(0.75), C0(0.25), C1(0) },           /* 105: channel 3's series gone */
	};
	static const char *const expected[] = {
		"start socket 1 channel 2 slot 0: DRAM throttled for heat 0",
		"end socket 1 channel 2 slots 0, 1: DRAM throttled for heat, critical level reached 1",
		"start socket 1 channel 3 slot 0: DRAM throttled for heat 0",
		"end socket 1 channel 3 slot 0: DRAM throttled for heat 0",
	};
	struct episode_tracker *t = episode_tracker_new(8);
	struct log l = { 0 };
	struct snapshot *s = feed_family(t, samples, sizeof(samples) / sizeof(samples[0]), &l);
	const struct snapshot_episode *e;
	bool warning, critical;

	(void)state;
	assert_int_equal(l.n, sizeof(expected) / sizeof(expected[0]));
	for (int i = 0; i < l.n; i++)
		assert_string_equal(l.lines[i], expected[i]);
	assert_int_equal(s->n_episodes, 2);
	e = &s->episodes[1];
	assert_string_equal(e->kind, "dram_throttled_seconds");
	assert_ptr_equal(e->family, &throttle_dram_channel_seconds);
	assert_int_equal(e->channel, 2);
	assert_int_equal(e->die, -1);
	assert_true(e->start == 101 && e->end == 102);
	assert_int_equal(e->n_parts, 3);
	assert_int_equal(episode_slots(e), 0x3);
	episode_levels(e, &warning, &critical);
	assert_true(warning && critical);
	/* Per sample the most one series counted: 0.5, then 0.75. */
	assert_true(e->throttled_s == 1.25 && e->sampled_s == 2);
	assert_true(e->has_peak && e->peak_celsius == 72);
	assert_int_equal(s->episodes[0].channel, 3);
	assert_true(s->episodes[0].end == 104);
	snapshot_release(s);
	episode_tracker_free(t);
#undef W0
#undef W1
#undef C0
#undef C1
#undef CH3
}

/* A socket's PROCHOT sources (external, internal) are one episode, which names them. */
static void prochot_sources_are_one_episode(void **state)
{
#define EXT(v) { &throttle_prochot_seconds, "external", v }
#define INT(v) { &throttle_prochot_seconds, "internal", v }
#define FT(v) { &throttle_frequency_limited_seconds, "thermal", v }
	static const struct series samples[][MAX_SERIES] = {
		{ EXT(0), INT(0), FT(0) },
		{ EXT(0.3), INT(0), FT(0) },
		{ EXT(0.6), INT(1), FT(1) },
		{ EXT(0.9), INT(2), FT(2) },
		{ EXT(0.9), INT(2), FT(2) },
	};
	static const char *const expected[] = {
		"start socket 1: PROCHOT asserted (external) 0",
		"start socket 1: frequency limited by heat 0",
		"end socket 1: PROCHOT asserted (external and internal) 2",
		"end socket 1: frequency limited by heat 1",
	};
	struct episode_tracker *t = episode_tracker_new(8);
	struct log l = { 0 };
	struct snapshot *s = feed_family(t, samples, sizeof(samples) / sizeof(samples[0]), &l);

	(void)state;
	assert_int_equal(l.n, sizeof(expected) / sizeof(expected[0]));
	for (int i = 0; i < l.n; i++)
		assert_string_equal(l.lines[i], expected[i]);
	assert_int_equal(s->n_episodes, 2);
	assert_string_equal(s->episodes[1].kind, "prochot_seconds");
	assert_int_equal(s->episodes[1].n_parts, 2);
	assert_string_equal(s->episodes[0].kind, "frequency_limited_seconds");
	snapshot_release(s);
	episode_tracker_free(t);
#undef EXT
#undef INT
#undef FT
}

/*
 * On AMD, HSMP's PROCHOT ("any") and the frequency it limits ("frequency
 * limited", reason prochot) are one assertion: one episode; the other
 * limits are the frequency limit's own.
 */
static void amd_prochot_and_its_frequency_limit_are_one_episode(void **state)
{
#define ANY(v) { &throttle_prochot_seconds, "any", v }
#define FP(v) { &throttle_frequency_limited_seconds, "prochot", v }
#define FH(v) { &throttle_frequency_limited_seconds, "host_software", v }
	static const struct series samples[][MAX_SERIES] = {
		{ ANY(0), FP(0), FH(0) },
		{ ANY(1), FP(1), FH(0) },
		{ ANY(2), FP(2), FH(0.5) },
		{ ANY(2), FP(2), FH(0.5) },
	};
	static const char *const expected[] = {
		"start socket 1: PROCHOT asserted, frequency limited 0",
		"start socket 1: frequency limited by host software 0",
		"end socket 1: PROCHOT asserted, frequency limited 1",
		"end socket 1: frequency limited by host software 0",
	};
	struct episode_tracker *t = episode_tracker_new(8);
	struct log l = { 0 };
	struct snapshot *s = feed_family(t, samples, sizeof(samples) / sizeof(samples[0]), &l);

	(void)state;
	assert_int_equal(l.n, sizeof(expected) / sizeof(expected[0]));
	for (int i = 0; i < l.n; i++)
		assert_string_equal(l.lines[i], expected[i]);
	assert_int_equal(s->n_episodes, 2);
	assert_string_equal(s->episodes[1].kind, "prochot_seconds");
	assert_int_equal(s->episodes[1].n_parts, 2);
	snapshot_release(s);
	episode_tracker_free(t);
#undef ANY
#undef FP
#undef FH
}

/*
 * A 35 s wave from 100.5 to 135.5, sampled every second on the second:
 * the samples from 101 to 136 see it, and the episode runs from 101 to
 * 136, 35 s (the first and last sample that saw it; a sample late, it was
 * 36 s).  While it runs its length is the running one.
 */
static void a_wave_lasts_from_its_first_to_its_last_sample(void **state)
{
	struct episode_tracker *t = episode_tracker_new(4);
	struct snapshot *prev = NULL, *s = NULL;
	struct log l = { 0 };
	double seconds = 0;

	(void)state;
	episode_monotonic_clock = fake_clock;
	for (int i = 0; i <= 40; i++) {
		double time = 100 + i;
		struct series in[MAX_SERIES] = {
			{ &throttle_dram_channel_seconds, "4" SEP "thermal", seconds },
		};

		s = make_family(in, time);
		fake_mono = 7000 + time;
		assert_int_equal(episode_update_from_snapshot(t, prev, s, log_words, &l), 0);
		if (time == 120) {
			assert_int_equal(s->n_episodes, 1);
			assert_true(s->episodes[0].end == 0);
			assert_true(s->episodes[0].running_s == 19);
		}
		snapshot_release(prev);
		prev = s;
		/* The interval up to the next sample: throttled where it meets the wave. */
		if (time + 1 > 100.5 && time < 135.5)
			seconds += (time + 1 < 135.5 ? time + 1 : 135.5) - (time > 100.5 ? time : 100.5);
	}
	assert_int_equal(l.n, 2);
	assert_string_equal(l.lines[0], "start socket 1 channel 4: DRAM throttled for heat 0");
	assert_string_equal(l.lines[1],
			    "end socket 1 channel 4: DRAM throttled for heat 35");
	assert_int_equal(s->n_episodes, 1);
	assert_true(s->episodes[0].start == 101 && s->episodes[0].end == 136);
	assert_true(s->episodes[0].mono_start == 7101 && s->episodes[0].mono_end == 7136);
	assert_true(s->episodes[0].running_s == 35);
	snapshot_release(s);
	episode_tracker_free(t);
}

/*
 * The OpenMetrics exemplar of a series names the newest episode it took
 * part in: a slot's series its channel's episode, a series that never
 * counted none.
 */
static void the_exemplar_series_finds_its_episode(void **state)
{
	static const struct series samples[][MAX_SERIES] = {
		{ { &throttle_dram_slot_seconds, "2" SEP "0" SEP "thermal", 0 },
		  { &throttle_dram_slot_seconds, "2" SEP "1" SEP "thermal", 0 } },
		{ { &throttle_dram_slot_seconds, "2" SEP "0" SEP "thermal", 1 },
		  { &throttle_dram_slot_seconds, "2" SEP "1" SEP "thermal", 0 } },
		{ { &throttle_dram_slot_seconds, "2" SEP "0" SEP "thermal", 1 },
		  { &throttle_dram_slot_seconds, "2" SEP "1" SEP "thermal", 0 } },
		{ { &throttle_dram_slot_seconds, "2" SEP "0" SEP "thermal", 2 },
		  { &throttle_dram_slot_seconds, "2" SEP "1" SEP "thermal", 0 } },
	};
	struct episode_tracker *t = episode_tracker_new(4);
	struct log l = { 0 };
	struct snapshot *s = feed_family(t, samples, sizeof(samples) / sizeof(samples[0]), &l);
	int n;
	const struct metric_sample *v = snapshot_samples(s, &n);
	const struct metric_sample *slot0 = NULL, *slot1 = NULL;

	(void)state;
	for (int i = 0; i < n; i++) {
		if (v[i].family != &throttle_dram_slot_seconds || !v[i].label_value)
			continue;
		if (strcmp(v[i].label_value, "2" SEP "0" SEP "thermal") == 0)
			slot0 = &v[i];
		else
			slot1 = &v[i];
	}
	assert_non_null(slot0);
	assert_non_null(slot1);
	assert_int_equal(s->n_episodes, 2);
	assert_ptr_equal(episode_of_series(s, slot0), &s->episodes[0]);
	assert_int_equal(episode_of_series(s, slot0)->id, 2);
	assert_null(episode_of_series(s, slot1));
	snapshot_release(s);
	episode_tracker_free(t);
}

/* The words of places and conditions the log, the table and the page share. */
static void episodes_in_words(void **state)
{
	struct snapshot_episode e = {
		.kind = "dram_throttled_seconds", .socket = 0, .core = -1, .die = 1, .channel = 3,
		.family = &throttle_dram_channel_seconds, .n_parts = 2,
		.parts = { { &throttle_dram_die_channel_seconds, "1" SEP "3" SEP "power" },
			   { &throttle_dram_die_critical_seconds, "1" SEP "3" SEP "thermal" } },
	};
	char place[96], what[128];

	(void)state;
	episode_describe(&e, place, sizeof(place), what, sizeof(what));
	assert_string_equal(place, "socket 0 die 1 channel 3");
	assert_string_equal(what, "DRAM throttled for heat and power, critical level reached");
	e.n_parts = 1;
	e.parts[0] = (struct snapshot_episode_part){ &throttle_dram_bw_slot_seconds,
						     "3" SEP "1" SEP "thermal_or_power" };
	e.die = -1;
	episode_describe(&e, place, sizeof(place), what, sizeof(what));
	assert_string_equal(place, "socket 0 channel 3 slot 1");
	assert_string_equal(what, "DRAM throttled for heat or power");
	e = (struct snapshot_episode){ .kind = "core_thermal_throttling", .socket = 1, .core = 7,
				       .die = -1, .channel = -1 };
	episode_describe(&e, place, sizeof(place), what, sizeof(what));
	assert_string_equal(place, "socket 1 core 7");
	assert_string_equal(what, "core throttled for heat");
	e.kind = "package_thermal_throttling";
	e.core = -1;
	episode_describe(&e, place, sizeof(place), what, sizeof(what));
	assert_string_equal(place, "socket 1");
	assert_string_equal(what, "package throttled for heat");
	/* Truncated to the room given. */
	episode_describe(&e, place, 5, what, 8);
	assert_string_equal(place, "sock");
	assert_string_equal(what, "package");
}

/*
 * A throttle family series that stops growing ends its episode at its
 * last growing sample, and one that is gone ends it too.
 */
static void family_series_are_episodes(void **state)
{
	static const struct series samples[][MAX_SERIES] = {
		{ { &throttle_dram_channel_seconds, "2" SEP "thermal", 0 } },
		{ { &throttle_dram_channel_seconds, "2" SEP "thermal", 0.5 } },
		{ { &throttle_dram_channel_seconds, "2" SEP "thermal", 1.5 } },
		{ { &throttle_dram_channel_seconds, "2" SEP "thermal", 1.5 } },
		{ { &throttle_dram_channel_seconds, "2" SEP "thermal", 2 } },
		{ { NULL, NULL, 0 } },
	};
	static const char *const expected[] = {
		"start socket 1 channel 2: DRAM throttled for heat 0",
		"end socket 1 channel 2: DRAM throttled for heat 1",
		"start socket 1 channel 2: DRAM throttled for heat 0",
		"end socket 1 channel 2: DRAM throttled for heat 0",
	};
	struct episode_tracker *t = episode_tracker_new(8);
	struct log l = { 0 };
	struct snapshot *s = feed_family(t, samples, sizeof(samples) / sizeof(samples[0]), &l);

	(void)state;
	assert_int_equal(l.n, sizeof(expected) / sizeof(expected[0]));
	for (int i = 0; i < l.n; i++)
		assert_string_equal(l.lines[i], expected[i]);
	assert_int_equal(s->n_episodes, 2);
	assert_int_equal(s->episodes[1].id, 1);
	assert_true(s->episodes[1].start == 101 && s->episodes[1].end == 102);
	assert_true(s->episodes[1].throttled_s == 1.5 && s->episodes[1].sampled_s == 2);
	assert_true(s->episodes[0].start == 104 && s->episodes[0].end == 104);
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
		cmocka_unit_test(a_channels_slots_and_levels_are_one_episode),
		cmocka_unit_test(prochot_sources_are_one_episode),
		cmocka_unit_test(amd_prochot_and_its_frequency_limit_are_one_episode),
		cmocka_unit_test(a_wave_lasts_from_its_first_to_its_last_sample),
		cmocka_unit_test(the_exemplar_series_finds_its_episode),
		cmocka_unit_test(episodes_in_words),
		cmocka_unit_test(prochot_measured_by_its_family_is_one_episode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
