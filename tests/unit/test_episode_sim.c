/*
 * Throttle episodes from whole scenarios on the simulated Granite Rapids,
 * on the stepped clock, one sample a second: a PROCHOT storm over 15
 * minutes is one episode at a time per place, at six places (socket 0's
 * PROCHOT, its frequency limit, its package and three cores), and the DRAM
 * heat wave of 35 s every minute is one episode per channel and wave,
 * 35 s long within one sample interval, with both slots in it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "episode.h"
#include "hw.h"
#include "throttle_run.h"

/* Every episode kept, whatever the run's length. */
static const char conf_text[] = "[daemon]\ninterval = 1\nmax_episodes = 10000\n"
				"[core]\nengine = msr\n";

static struct run *clocked;

/* The episodes' monotonic clock: the simulator's stepped one. */
static double sim_clock(void)
{
	return (double)hw_now_ns(&clocked->hw) / 1e9;
}

static void run_scenario(struct run *r, const char *spec, double seconds)
{
	start_conf(r, spec, true, conf_text);
	clocked = r;
	episode_monotonic_clock = sim_clock;
	run_for(r, seconds);
}

static bool same_place(const struct snapshot_episode *a, const struct snapshot_episode *b)
{
	return strcmp(a->kind, b->kind) == 0 && a->socket == b->socket && a->core == b->core &&
	       a->die == b->die && a->channel == b->channel;
}

/* The places of s's episodes into places[] (at most max); returns how many. */
static int places_of(const struct snapshot *s, const struct snapshot_episode **places, int max)
{
	int n = 0;

	for (int i = 0; i < s->n_episodes; i++) {
		int k = 0;

		while (k < n && !same_place(places[k], &s->episodes[i]))
			k++;
		if (k == n && n < max)
			places[n++] = &s->episodes[i];
	}
	return n;
}

/*
 * 15 minutes of granite-rapids-2s:prochot-storm: six places, all on socket
 * 0, each with one episode at a time (none starts before the one before it
 * ended), one at most ongoing.
 */
static void a_prochot_storm_is_six_places(void **state)
{
	struct run r;
	const struct snapshot_episode *places[32];
	int n;

	(void)state;
	run_scenario(&r, "granite-rapids-2s:prochot-storm", 900);
	n = places_of(r.snap, places, 32);
	printf("prochot-storm, 15 min: %d episodes at %d places\n", r.snap->n_episodes, n);
	for (int k = 0; k < n; k++) {
		const struct snapshot_episode *newer = NULL;
		int count = 0;
		char place[96], what[128];

		assert_int_equal(places[k]->socket, 0);
		for (int i = 0; i < r.snap->n_episodes; i++) {   /* newest first */
			const struct snapshot_episode *e = &r.snap->episodes[i];

			if (!same_place(e, places[k]))
				continue;
			count++;
			if (newer) {
				/* The wall clock hardly moves on the stepped one: its stamps. */
				assert_true(e->mono_end != 0);
				assert_true(e->mono_end < newer->mono_start);
			}
			newer = e;
		}
		episode_describe(places[k], place, sizeof(place), what, sizeof(what));
		printf("  %s: %s: %d episodes\n", place, what, count);
	}
	assert_int_equal(n, 6);
	finish(&r);
}

/*
 * Two minutes of granite-rapids-2s:dram-heatwave (socket 1 throttled in
 * 1 s cycles from 0 to 35 s of every minute): one episode per channel and
 * wave, both slots and the channel's own series in it, the second wave
 * 35 s within one sample interval (bursts from 60 to 94.4 s: the samples
 * at 61 and 95 see the first and the last).
 */
static void a_heat_wave_is_one_episode_per_channel(void **state)
{
	struct run r;
	int n_ended = 0;

	(void)state;
	run_scenario(&r, "granite-rapids-2s:dram-heatwave", 120);
	printf("dram-heatwave, 2 min: %d episodes\n", r.snap->n_episodes);
	for (int i = 0; i < r.snap->n_episodes; i++) {
		const struct snapshot_episode *e = &r.snap->episodes[i];

		assert_string_equal(e->kind, "dram_throttled_seconds");
		assert_int_equal(e->socket, 1);
		assert_true(e->channel >= 0 && e->channel < 12);
		if (e->end == 0)
			continue;
		n_ended++;
		assert_int_equal(episode_slots(e), 0x3);
		assert_int_equal(e->n_parts, 3);
		/*
		 * The first wave's first second comes before the first sample
		 * that has one before it to count from.
		 */
		if (e->mono_start < 10)
			continue;
		if (fabs((e->mono_end - e->mono_start) - 35.0) > 1.0)
			fail_msg("channel %d: an episode of %.1f s for a 35 s wave", e->channel,
				 e->mono_end - e->mono_start);
	}
	/* Two waves (0 to 35 s and 60 to 95 s), both over. */
	assert_int_equal(r.snap->n_episodes, 12 * 2);
	assert_int_equal(n_ended, 12 * 2);
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_prochot_storm_is_six_places),
		cmocka_unit_test(a_heat_wave_is_one_episode_per_channel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
