/*
 * The history ring: steps fold samples into points, the ring keeps the
 * newest points in order, absent readings are null, and documents stay
 * valid while a reader holds them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "history.h"

static const int ids[2] = { 0, 1 };

static struct history_reading hot_reading(uint64_t k)
{
	struct history_reading r = {
		.has_hottest_core = true, .hottest_core_celsius = 60 + (double)k,
		.has_package = true, .package_celsius = 55,
		.has_tjmax = true, .tjmax_celsius = 95,
		.has_dram = true, .dram_throttled_cycles = 250 * k, .clockticks = 1000 * k,
		.has_prochot = true, .prochot_active = k % 2 == 0,
		.has_ipc = true, .instructions = 3000 * k, .cycles = 2000 * k,
	};
	return r;
}

/* d's text, formatted on this first read. */
static const char *doc_text(struct history_doc *d)
{
	const char *text;
	size_t len;

	assert_int_equal(history_doc_text(d, &text, &len), 0);
	assert_int_equal(len, strlen(text));
	return text;
}

static void assert_doc(struct history *h, const char *want)
{
	struct history_doc *d = history_acquire(h);
	const char *text;
	size_t len;

	assert_non_null(d);
	assert_int_equal(history_doc_text(d, &text, &len), 0);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	history_release(d);
}

static void empty_history_has_every_socket_and_no_points(void **state)
{
	struct history *h = history_new(2, ids, 5, 20);

	(void)state;
	assert_non_null(h);
	assert_int_equal(history_points(h), 0);
	assert_doc(h, "{\"step_seconds\": 5, \"capacity\": 4, \"sockets\": ["
		   "{\"socket\": 0, \"time\": [], \"hottest_core_celsius\": [], \"package_celsius\": [], "
		   "\"margin_celsius\": [], \"dram_throttled_fraction\": [], \"prochot_fraction\": [], \"frequency_limited_fraction\": [], "
		   "\"ipc\": [], \"places\": []}, "
		   "{\"socket\": 1, \"time\": [], \"hottest_core_celsius\": [], \"package_celsius\": [], "
		   "\"margin_celsius\": [], \"dram_throttled_fraction\": [], \"prochot_fraction\": [], \"frequency_limited_fraction\": [], "
		   "\"ipc\": [], \"places\": []}]}\n");
	history_free(h);
}

/*
 * Samples at 0..5 s close one 5 s step: socket 0 measured everything,
 * socket 1 nothing, which is null and never zero.
 */
static void a_step_folds_its_samples(void **state)
{
	struct history *h = history_new(2, ids, 5, 20);
	struct history_reading r[2];

	(void)state;
	for (uint64_t k = 0; k <= 5; k++) {
		memset(r, 0, sizeof(r));
		r[0] = hot_reading(k);
		assert_int_equal(history_add(h, 100.0 + (double)k, 1700000000.0 + (double)k, r), k == 5);
	}
	assert_int_equal(history_points(h), 1);
	/* Hottest 65 °C, package 55, margin 95-65 = 30, DRAM 1250/5000, PROCHOT 3 of 6, IPC 1.5. */
	assert_doc(h, "{\"step_seconds\": 5, \"capacity\": 4, \"sockets\": ["
		   "{\"socket\": 0, \"time\": [1700000005], \"hottest_core_celsius\": [65], "
		   "\"package_celsius\": [55], \"margin_celsius\": [30], "
		   "\"dram_throttled_fraction\": [0.25], \"prochot_fraction\": [0.5], "
		   "\"frequency_limited_fraction\": [null], \"ipc\": [1.5], \"places\": []}, "
		   "{\"socket\": 1, \"time\": [1700000005], \"hottest_core_celsius\": [null], "
		   "\"package_celsius\": [null], \"margin_celsius\": [null], "
		   "\"dram_throttled_fraction\": [null], \"prochot_fraction\": [null], "
		   "\"frequency_limited_fraction\": [null], \"ipc\": [null], \"places\": []}]}\n");
	history_free(h);
}

/*
 * Where a throttle family is measured, its worst series' share is what the
 * step shows (the mean over the samples that had it), in place of the
 * uncore cycles and the PROCHOT bit.
 */
static void family_shares_replace_cycles_and_bits(void **state)
{
	struct history *h = history_new(1, ids, 2, 10);
	struct history_reading r;

	(void)state;
	for (uint64_t k = 0; k <= 2; k++) {
		r = hot_reading(k);
		r.has_dram_share = r.has_prochot_share = r.has_frequency_limited_share = true;
		r.dram_share = 0.5 * (double)k;      /* 0, 0.5, 1: the step's three samples */
		r.prochot_share = 0;
		r.frequency_limited_share = k == 0 ? 0.75 : 0;
		history_add(h, (double)k, (double)k, &r);
	}
	assert_int_equal(history_points(h), 1);
	{
		struct history_doc *d = history_acquire(h);

		assert_non_null(strstr(doc_text(d), "\"dram_throttled_fraction\": [0.5]"));
		assert_non_null(strstr(doc_text(d), "\"prochot_fraction\": [0]"));
		assert_non_null(strstr(doc_text(d), "\"frequency_limited_fraction\": [0.25]"));
		history_release(d);
	}
	history_free(h);
}

/*
 * A socket whose package line is another sensor (AMD: Tctl, no package
 * sensor, no TjMax) names it; one with a package sensor names none.
 */
static void a_package_line_from_another_sensor_is_named(void **state)
{
	struct history *h = history_new(2, ids, 1, 10);
	struct history_reading r[2];

	(void)state;
	for (uint64_t k = 0; k <= 1; k++) {
		memset(r, 0, sizeof(r));
		r[0] = hot_reading(k);
		r[1].has_package = true;
		r[1].package_celsius = 47.5;
		r[1].package_sensor = "Tctl";
		history_add(h, (double)k, (double)k, r);
	}
	assert_doc(h, "{\"step_seconds\": 1, \"capacity\": 10, \"sockets\": ["
		   "{\"socket\": 0, \"time\": [1], \"hottest_core_celsius\": [61], "
		   "\"package_celsius\": [55], \"margin_celsius\": [34], "
		   "\"dram_throttled_fraction\": [0.25], \"prochot_fraction\": [0.5], "
		   "\"frequency_limited_fraction\": [null], \"ipc\": [1.5], \"places\": []}, "
		   "{\"socket\": 1, \"package_sensor\": \"Tctl\", \"time\": [1], "
		   "\"hottest_core_celsius\": [null], \"package_celsius\": [47.5], "
		   "\"margin_celsius\": [null], \"dram_throttled_fraction\": [null], "
		   "\"prochot_fraction\": [null], \"frequency_limited_fraction\": [null], "
		   "\"ipc\": [null], \"places\": []}]}\n");
	history_free(h);
}

/* Consecutive steps share their boundary sample: no cycle is lost between them. */
static void steps_follow_each_other_without_gaps(void **state)
{
	struct history *h = history_new(1, ids, 2, 10);
	struct history_reading r;

	(void)state;
	for (uint64_t k = 0; k <= 4; k++) {
		r = hot_reading(k);
		if (k > 2)
			r.dram_throttled_cycles = 500 + 1000 * (k - 2);   /* all throttled after 2 s */
		history_add(h, (double)k, (double)k, &r);
	}
	assert_int_equal(history_points(h), 2);
	{
		struct history_doc *d = history_acquire(h);

		assert_non_null(strstr(doc_text(d), "\"dram_throttled_fraction\": [0.25, 1]"));
		history_release(d);
	}
	history_free(h);
}

/* The ring keeps the newest capacity points, oldest first. */
static void the_ring_keeps_the_newest_points(void **state)
{
	struct history *h = history_new(1, ids, 1, 3);
	struct history_reading r = { 0 };
	struct history_doc *d;

	(void)state;
	for (int k = 0; k <= 6; k++) {
		r.has_package = true;
		r.package_celsius = 40 + k;
		history_add(h, k, 1000 + k, &r);
	}
	assert_int_equal(history_points(h), 3);
	d = history_acquire(h);
	assert_non_null(strstr(doc_text(d), "\"time\": [1004, 1005, 1006]"));
	assert_non_null(strstr(doc_text(d), "\"package_celsius\": [44, 45, 46]"));
	history_release(d);
	history_free(h);
}

/* A total that goes backwards starts a new base instead of a huge fraction. */
static void a_total_going_backwards_restarts_the_step(void **state)
{
	struct history *h = history_new(1, ids, 3, 30);
	struct history_reading r = hot_reading(0);
	struct history_doc *d;

	(void)state;
	r.dram_throttled_cycles = 900000;
	r.clockticks = 1000000;
	history_add(h, 0, 0, &r);
	for (uint64_t k = 1; k <= 3; k++) {
		r = hot_reading(k);
		history_add(h, (double)k, (double)k, &r);
	}
	d = history_acquire(h);
	assert_non_null(strstr(doc_text(d), "\"dram_throttled_fraction\": [0.25]"));
	history_release(d);
	history_free(h);
}

/* A reader's document outlives newer documents and the history itself. */
static void documents_outlive_their_history(void **state)
{
	struct history *h = history_new(1, ids, 1, 10);
	struct history_reading r = { 0 };
	struct history_doc *old;

	(void)state;
	old = history_acquire(h);
	history_add(h, 0, 0, &r);
	history_add(h, 1, 1, &r);
	history_free(h);
	assert_non_null(strstr(doc_text(old), "\"time\": []"));
	history_release(old);
}

/*
 * A document is the ring as it stood when its step closed, whenever it is
 * read: a handle read after later steps closed has its own points only, the
 * same bytes as one read at the time, and one read after the ring has
 * overwritten its oldest points has the points still there.
 */
static void a_document_read_late_has_its_own_points(void **state)
{
	struct history *h = history_new(1, ids, 1, 3);
	struct history_reading r;
	struct history_doc *early, *again, *late;
	char *at_the_time;

	(void)state;
	for (int k = 0; k <= 2; k++) {
		r = hot_reading((uint64_t)k);
		r.package_celsius = 40 + k;
		history_add(h, k, 1000 + k, &r);
	}
	early = history_acquire(h);     /* steps ending at 1001 and 1002 */
	again = history_acquire(h);
	at_the_time = strdup(doc_text(again));
	assert_non_null(at_the_time);
	r.package_celsius = 43;
	history_add(h, 3, 1003, &r);
	assert_string_equal(doc_text(early), at_the_time);
	assert_non_null(strstr(at_the_time, "\"time\": [1001, 1002]"));
	history_release(early);
	late = history_acquire(h);      /* 1001 .. 1003, not yet read */
	for (int k = 4; k <= 5; k++) {
		r.package_celsius = 40 + k;
		history_add(h, k, 1000 + k, &r);
	}
	/* The ring (3 points) now holds 1003 .. 1005: 1001 and 1002 are gone. */
	assert_non_null(strstr(doc_text(late), "\"time\": [1003]"));
	assert_non_null(strstr(doc_text(late), "\"package_celsius\": [43]"));
	history_release(late);
	history_release(again);
	free(at_the_time);
	history_free(h);
}

static void bad_arguments_are_refused(void **state)
{
	(void)state;
	assert_null(history_new(1, ids, 0, 10));
	assert_null(history_new(1, ids, 5, 1));
	assert_null(history_new(-1, ids, 5, 10));
}

/* Socket 0's part of d's text from its "places" on, to the end of its object. */
static char *places_of_socket0(const char *text)
{
	const char *at = strstr(text, "\"places\": ");
	const char *end;

	assert_non_null(at);
	end = strstr(at, "]}, {\"socket\": 1");
	assert_non_null(end);
	return strndup(at, (size_t)(end - at) + 1);
}

/*
 * Channel 2 throttled half of one step and none of the next; channel 3
 * counted, never throttled; a DIMM at 90.3 C then 91 C with its refresh
 * doubled in one sample of the first step (6 samples).  Each place has only the figures of its
 * kind of reading, over the points held: mean share and the last
 * throttled step's end; highest and last temperature (1/16 C packing).
 */
static void places_keep_where_the_heat_was(void **state)
{
	struct history *h = history_new(2, ids, 5, 20);
	struct history_reading r[2] = { { 0 }, { 0 } };
	struct history_place_reading p[3];
	struct history_doc *d;
	char *places;

	(void)state;
	assert_non_null(h);
	for (int k = 0; k <= 10; k++) {
		p[0] = (struct history_place_reading){ .die = -1, .channel = 2, .slot = -1,
			.has_dram_share = true, .dram_share = k <= 5 ? 0.5 : 0 };
		p[1] = (struct history_place_reading){ .die = -1, .channel = 3, .slot = -1,
			.has_dram_share = true, .dram_share = 0 };
		p[2] = (struct history_place_reading){ .die = -1, .channel = 1, .slot = 0,
			.has_celsius = true, .celsius = k <= 5 ? 90.3 : 91, .has_refresh = true,
			.refresh_doubled = k == 2 };
		r[0].places = p;
		r[0].n_places = 3;
		history_add(h, k, 1000 + k, r);
	}
	assert_int_equal(history_points(h), 2);
	d = history_acquire(h);
	places = places_of_socket0(doc_text(d));
	assert_string_equal(places, "\"places\": ["
		"{\"channel\": 2, \"dram_throttled_fraction\": 0.25, \"dram_throttled_last\": 1005}, "
		"{\"channel\": 3, \"dram_throttled_fraction\": 0, \"dram_throttled_last\": null}, "
		"{\"channel\": 1, \"slot\": 0, \"celsius_max\": 91, \"celsius_last\": 91, "
		"\"refresh_doubled_fraction\": 0.08333, \"refresh_doubled_last\": 1005}]");
	assert_non_null(strstr(doc_text(d), "\"hottest_dimm_celsius\": [90.3125, 91]"));
	/* Socket 1 had no places: none, and no DIMM series. */
	assert_non_null(strstr(doc_text(d), "\"ipc\": [null, null], \"places\": []}]}"));
	free(places);
	history_release(d);
	history_free(h);
}

/* A place that appears late has no reading for the points before it; the ring forgets them too. */
static void a_place_seen_late_counts_from_then(void **state)
{
	struct history *h = history_new(1, ids, 5, 10);
	struct history_reading r = { 0 };
	struct history_place_reading p = { .die = 1, .channel = 0, .slot = 1,
		.has_dram_share = true, .dram_share = 1 };
	struct history_doc *d;
	size_t before;

	(void)state;
	for (int k = 0; k <= 5; k++)
		history_add(h, k, 2000 + k, &r);
	before = history_memory_bytes(h);
	r.places = &p;
	r.n_places = 1;
	for (int k = 6; k <= 10; k++)
		history_add(h, k, 2000 + k, &r);
	/* One place of shares: its struct and 2 bytes a point, nothing for temperatures. */
	assert_true(history_memory_bytes(h) > before + 2 * 2);
	assert_true(history_memory_bytes(h) < before + 2 * 2 + 256);
	d = history_acquire(h);
	assert_non_null(strstr(doc_text(d), "\"places\": [{\"die\": 1, \"channel\": 0, \"slot\": 1, "
			       "\"dram_throttled_fraction\": 1, \"dram_throttled_last\": 2010}]"));
	history_release(d);
	/* Two more steps without it: the ring (2 points) has no reading of it left. */
	r.n_places = 0;
	for (int k = 11; k <= 20; k++)
		history_add(h, k, 2000 + k, &r);
	d = history_acquire(h);
	assert_non_null(strstr(doc_text(d), "\"dram_throttled_fraction\": null, \"dram_throttled_last\": null}]"));
	history_release(d);
	history_free(h);
}

/* At most HISTORY_MAX_PLACES places a socket; more readings are left out, not kept. */
static void places_are_bounded(void **state)
{
	struct history *h = history_new(1, ids, 5, 10);
	struct history_place_reading p[HISTORY_MAX_PLACES + 3];
	struct history_reading r = { .places = p, .n_places = HISTORY_MAX_PLACES + 3 };
	struct history_doc *d;
	const char *text;
	int n = 0;

	(void)state;
	for (int i = 0; i < HISTORY_MAX_PLACES + 3; i++)
		p[i] = (struct history_place_reading){ .die = -1, .channel = i, .slot = -1,
			.has_dram_share = true };
	for (int k = 0; k <= 5; k++)
		history_add(h, k, 3000 + k, &r);
	d = history_acquire(h);
	text = doc_text(d);
	for (const char *at = text; (at = strstr(at, "\"channel\": ")); at++)
		n++;
	assert_int_equal(n, HISTORY_MAX_PLACES);
	history_release(d);
	history_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_history_has_every_socket_and_no_points),
		cmocka_unit_test(a_step_folds_its_samples),
		cmocka_unit_test(family_shares_replace_cycles_and_bits),
		cmocka_unit_test(a_package_line_from_another_sensor_is_named),
		cmocka_unit_test(steps_follow_each_other_without_gaps),
		cmocka_unit_test(the_ring_keeps_the_newest_points),
		cmocka_unit_test(a_total_going_backwards_restarts_the_step),
		cmocka_unit_test(documents_outlive_their_history),
		cmocka_unit_test(a_document_read_late_has_its_own_points),
		cmocka_unit_test(bad_arguments_are_refused),
		cmocka_unit_test(places_keep_where_the_heat_was),
		cmocka_unit_test(a_place_seen_late_counts_from_then),
		cmocka_unit_test(places_are_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
