/*
 * A socket's memory places from whole simulated samples: on Granite
 * Rapids (dimm-hot-channel) socket 1's channel 2 is throttled, as a
 * channel and in both its slots, every other place is counted at 0, and
 * socket 0 has the same places, all at 0; on Genoa (a DIMM of socket 1
 * at 90 C) each DIMM has its hotter sensor and its refresh, the hot one
 * doubled.  Without a sample before, the shares are 0 but the places are
 * there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helpers.h"
#include "memory_places.h"
#include "throttle_run.h"

static const struct history_place_reading *find(const struct history_place_reading *p, int n,
						int channel, int slot)
{
	for (int i = 0; i < n; i++)
		if (p[i].channel == channel && p[i].slot == slot)
			return &p[i];
	return NULL;
}

static void granite_rapids_hot_channel(void **state)
{
	struct run r;
	struct history_place_reading p[HISTORY_MAX_PLACES];
	struct snapshot *prev;
	int n;

	(void)state;
	start(&r, "granite-rapids-2s:dimm-hot-channel");
	run_for(&r, 1);
	n = memory_places_of(NULL, r.snap, 1, p, HISTORY_MAX_PLACES);
	/* 12 channels as a whole and 2 slots each. */
	assert_int_equal(n, 36);
	assert_true(find(p, n, 2, 0)->has_dram_share);
	assert_true(find(p, n, 2, 0)->dram_share == 0);
	prev = snapshot_acquire();
	assert_ptr_equal(prev, r.snap);
	/* 0-40 s: channel 2 throttled half of each 2 s cycle; 2 s cover one whole cycle's on part. */
	run_for(&r, 1);
	n = memory_places_of(prev, r.snap, 1, p, HISTORY_MAX_PLACES);
	snapshot_release(prev);
	prev = snapshot_acquire();
	run_for(&r, 1);
	{
		struct history_place_reading q[HISTORY_MAX_PLACES];
		int m = memory_places_of(prev, r.snap, 1, q, HISTORY_MAX_PLACES);
		double ch = find(p, n, 2, -1)->dram_share + find(q, m, 2, -1)->dram_share;

		assert_int_equal(m, 36);
		/* Over two 1 s intervals, one of them throttled: a share of about 1 in one of the two. */
		assert_true(ch > 0.9 && ch < 1.1);
		assert_true(find(p, n, 2, 0)->dram_share + find(q, m, 2, 0)->dram_share > 0.9);
		assert_true(find(p, n, 2, 1)->dram_share + find(q, m, 2, 1)->dram_share > 0.9);
		for (int i = 0; i < m; i++) {
			assert_int_equal(q[i].die, -1);
			assert_false(q[i].has_celsius);
			if (q[i].channel != 2)
				assert_true(q[i].dram_share == 0);
		}
	}
	n = memory_places_of(prev, r.snap, 0, p, HISTORY_MAX_PLACES);
	assert_int_equal(n, 36);
	for (int i = 0; i < n; i++)
		assert_true(p[i].has_dram_share && p[i].dram_share == 0);
	snapshot_release(prev);
	finish(&r);
}

static void genoa_hot_dimm(void **state)
{
	struct run r;
	struct history_place_reading p[HISTORY_MAX_PLACES];
	char path[4096], spec[4200];
	int n;

	(void)state;
	helpers_source_path("tests/e2e/amd_dimm_heat.ini", path, sizeof(path));
	snprintf(spec, sizeof(spec), "genoa-2s:%s", path);
	start(&r, spec);
	run_for(&r, 2);
	n = memory_places_of(NULL, r.snap, 1, p, HISTORY_MAX_PLACES);
	assert_int_equal(n, 12);
	for (int i = 0; i < n; i++) {
		bool hot = p[i].channel == 3 && p[i].slot == 0;

		assert_false(p[i].has_dram_share);
		assert_true(p[i].has_celsius && p[i].has_refresh);
		assert_true(p[i].celsius == (hot ? 90 : 40));
		assert_int_equal(p[i].refresh_doubled, hot);
	}
	n = memory_places_of(NULL, r.snap, 0, p, HISTORY_MAX_PLACES);
	assert_int_equal(n, 12);
	for (int i = 0; i < n; i++)
		assert_false(p[i].refresh_doubled);
	/* Not finish(): its checks are the PCU's and Intel's registers. */
	stop_sampler(&r);
	close_machine(&r);
}

/* Westmere's DRAM event is per socket: no place, and max bounds what is written. */
static void no_channels_no_places(void **state)
{
	struct run r;
	struct history_place_reading p[4];

	(void)state;
	start(&r, "westmere-ep-2s:dram-heatwave");
	run_for(&r, 2);
	assert_int_equal(memory_places_of(NULL, r.snap, 1, p, 4), 0);
	stop_sampler(&r);
	close_machine(&r);
	start(&r, "granite-rapids-2s:idle");
	run_for(&r, 1);
	assert_int_equal(memory_places_of(NULL, r.snap, 0, p, 4), 4);
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(granite_rapids_hot_channel),
		cmocka_unit_test(genoa_hot_dimm),
		cmocka_unit_test(no_channels_no_places),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
