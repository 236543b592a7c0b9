/*
 * The health of the PCU and iMC collectors on the simulated server models:
 * a package asleep (no iMC clock) converts throttle cycles at the DCLK
 * rate, channels that never clock are left out, a frozen PCU box is
 * waiting rather than 0, each Granite Rapids PCU instance stands alone, a box shared with another perf user exports its
 * multiplexing ratio, and a group waiting its turn on the counters is no
 * error.  Stepped clock (throttle_run.h).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "helpers.h"
#include "metric.h"
#include "perf_sys.h"
#include "snapshot.h"
#include "throttle_families.h"
#include "throttle_run.h"

/*
 * A Skylake-SP socket asleep half of every second (package C3/C6: the iMC has
 * no clock, tests/data/scenarios/package-sleep.ini) and throttled whenever
 * awake: about 0.5 s of DRAM throttling per second, as the ground truth, not
 * 1.0 (throttle cycles over the interval's DCLK count times the interval);
 * a channel that sleeps keeps its series.
 */
static void a_sleeping_package_throttles_only_while_awake(void **state)
{
	const char *label = "0" METRIC_LABEL_SEP "thermal_or_power";
	struct run r;
	double before;

	(void)state;
	start_data_scenario(&r, "skylake-sp-2s", "package-sleep.ini", true);
	run_for(&r, 3);
	before = exported(&r, &throttle_dram_channel_seconds, 0, label);
	assert_close(before, 3.0, "awake channel 0", 0);
	run_for(&r, 10);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 0, label) - before, 5.0,
		     "asleep half the time, channel 0", 0);
	check_imc(&r, 6);
	/* Asleep whole intervals: the channels keep their series and are not left out. */
	before = exported(&r, &throttle_dram_channel_seconds, 0, label);
	run_for(&r, 5);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 0, label), before,
		     "asleep, channel 0", 0);
	assert_false(reason_has(&r, "imc", "left out"));
	check_imc(&r, 6);
	finish(&r);
}

/*
 * Current kernels (6.12 among them) register 12 channels on Ice Lake-SP, 3
 * per controller, and one not in use reads 0; the simulator leaves the third
 * of each without memory: its clock never advances, so it is left out,
 * said in the status, and the collector is up on the others.
 */
static void channels_without_a_clock_are_left_out(void **state)
{
	const struct snapshot_collector *c;
	struct run r;

	(void)state;
	start(&r, "icelake-sp-2s:idle");
	run_for(&r, 3);
	assert_true(reason_has(&r, "imc", "socket 1: memory channel 2, 5, 8, 11 left out"));
	c = snapshot_find_collector(r.snap, "imc");
	assert_string_equal(snapshot_collector_state(c), "up");
	check_imc(&r, 12);
	finish(&r);
}

/*
 * Another agent freezes socket 0's PCU box (BOX_CTL.FRZ, tests/data/scenarios/
 * pcu-frozen.ini) from 10 s to 20 s: through MSRs the collector says the box
 * is waiting and counts it as not counting while it is frozen, instead of
 * adding 0 s with the collector up, and takes up again once it thaws.
 */
static void a_frozen_pcu_box_reads_as_waiting(void **state)
{
	struct run r;

	(void)state;
	start_data_scenario(&r, "skylake-sp-2s", "pcu-frozen.ini", false);
	run_for(&r, 9);
	assert_false(reason_has(&r, "pcu", "frozen"));
	run_for(&r, 5);
	assert_true(reason_has(&r, "pcu", "waiting: the box is frozen"));
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.snap, "pcu")),
			    "partial");
	run_for(&r, 10);
	assert_false(reason_has(&r, "pcu", "frozen"));
	/* 30 s of PROCHOT less the 10 frozen. */
	run_for(&r, 6);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 20.0, "external", 0);
	finish(&r);
}

/* The kernel's files of uncore_pcu_0 with a type that is not a number: that instance does not parse. */
static void damage_pcu_0(const char *root)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/uncore_pcu_0/type", root);
	helpers_write_file(path, "pcu\n");
}

/*
 * Granite Rapids' two PCU instances per die stand alone: one whose sysfs
 * files do not parse (uncore_pcu_0) is said in the status, with what did
 * not parse, and the other (uncore_pcu_1, which carries the package's
 * conditions in the simulator) counts PROCHOT and the frequency limits
 * right, where the one that did not parse took every instance, and the
 * perf engine of every collector, with it.
 */
static void an_unparsable_pcu_instance_stands_alone(void **state)
{
	const struct snapshot_collector *c;
	struct run r;

	(void)state;
	start_edited(&r, "granite-rapids-2s:vr-prochot", damage_pcu_0);
	run_for(&r, 60);
	c = snapshot_find_collector(r.snap, "pcu");
	assert_string_equal(snapshot_collector_state(c), "partial");
	assert_true(reason_has(&r, "pcu", "die 0 PCU 0: "));
	assert_true(reason_has(&r, "pcu", "uncore_pcu_0/type: expected a PMU type number, got 'pcu'"));
	assert_false(reason_has(&r, "pcu", "PCU 1"));
	check_pcu(&r);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 12.0, "external", 0);
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.snap, "imc")), "up");
	finish(&r);
}

/*
 * A Granite Rapids PCU instance whose clock does not advance under perf
 * (tests/data/scenarios/pcu-clock-stopped.ini: uncore_pcu_0 of each die)
 * is waiting, and its reason says what was seen, the clock, not a BOX_CTL
 * that perf does not show; the other instance counts on.
 */
static void a_pcu_instance_without_a_clock_says_what_was_seen(void **state)
{
	struct run r;

	(void)state;
	start_data_scenario(&r, "granite-rapids-2s", "pcu-clock-stopped.ini", true);
	run_for(&r, 60);
	assert_true(reason_has(&r, "pcu", "socket 0 die 0 PCU 0: waiting: its clock did not advance "
			       "(clockticks counted 0 while running)"));
	assert_false(reason_has(&r, "pcu", "FRZ"));
	assert_false(reason_has(&r, "pcu", "PCU 1"));
	assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.snap, "pcu")),
			    "partial");
	check_pcu(&r);
	assert_close(exported(&r, &throttle_prochot_seconds, 0, "external"), 12.0, "external", 0);
	assert_close(exported(&r, &throttle_frequency_limited_seconds, 1, "power"), 30.0, "power",
		     1);
	finish(&r);
}

/* A number from a file of the simulated PMU tree: the first, or the one after the comma. */
static int sysfs_number(const struct run *r, const char *file, bool second)
{
	char path[512], buf[64] = "";
	const char *at;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/%s", r->root, file);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	at = second ? strchr(buf, ',') : buf;
	assert_non_null(at);
	return atoi(second ? at + 1 : at);
}

/*
 * Another perf user (perf stat, PCM) opens a group of 4 events, the clock
 * and the throttle events, on socket 1's memory channel 2, the channel's 4
 * counters; pinned, the kernel schedules it before uncored's groups.
 */
static void other_user_opens(struct run *r, bool pinned, int fd[4])
{
	static const uint64_t config[4] = { 0x0000, 0xff41, 0x0086, 0x0000 };
	int type = sysfs_number(r, "uncore_imc_2/type", false);
	int cpu = sysfs_number(r, "uncore_imc_2/cpumask", true);

	for (int i = 0; i < 4; i++) {
		struct perf_event_attr attr = {
			.type = (uint32_t)type, .size = sizeof(attr), .config = config[i],
			.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING,
			.pinned = pinned && i == 0,
		};

		fd[i] = perf_sys_open(r->hw.perf, &attr, cpu, i ? fd[0] : -1);
		assert_true(fd[i] >= 0);
	}
}

/* The other user closes its group, members first. */
static void other_user_closes(struct run *r, const int fd[4])
{
	for (int i = 3; i >= 0; i--)
		assert_int_equal(perf_sys_close(r->hw.perf, fd[i]), 0);
}

/*
 * Another perf user (perf stat, PCM) opens a group of 4 events on socket 1's
 * memory channel 2, the channel's 4 counters: the kernel takes turns with
 * uncored's group there.  uncored exports that channel's multiplexing ratio
 * (about 0.5; 1 on the others) and its DRAM seconds stay right, scaled.
 */
static void a_shared_channel_exports_its_multiplexing_ratio(void **state)
{
	const struct metric_sample *v;
	int fd[4];
	struct run r;

	(void)state;
	start_data_scenario(&r, "skylake-sp-2s", "throttle-steady.ini", true);
	other_user_opens(&r, false, fd);
	run_for(&r, 20);
	v = snapshot_find_sample(r.snap, &collector_pmu_multiplexing, 1,
				 "imc" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP METRIC_LABEL_SEP "2");
	assert_non_null(v);
	if (v->value.d < 0.3 || v->value.d > 0.7)
		fail_msg("socket 1 channel 2 multiplexing ratio %.3f, expected about 0.5",
			 v->value.d);
	v = snapshot_find_sample(r.snap, &collector_pmu_multiplexing, 1,
				 "imc" METRIC_LABEL_SEP "1" METRIC_LABEL_SEP METRIC_LABEL_SEP "1");
	assert_non_null(v);
	assert_true(v->value.d == 1.0);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 1,
			      "2" METRIC_LABEL_SEP "thermal_or_power"), 20.0, "channel 2", 1);
	other_user_closes(&r, fd);
	finish(&r);
}

static uint64_t errors_of(const struct run *r, const char *collector)
{
	const struct snapshot_collector *c = snapshot_find_collector(r->snap, collector);

	assert_non_null(c);
	return c->errors;
}

/*
 * Failed reads of the boxes' perf groups are errors and add nothing: while
 * every PCU and iMC read fails, the pcu and imc error counts grow, their
 * status says how many boxes were not read and why, and the hot channel's
 * seconds stand still; once reads work again the kernel's
 * counts, which went on, are caught up to the ground truth.
 */
static void failed_box_reads_are_errors_and_add_nothing(void **state)
{
	const char *label = "2" METRIC_LABEL_SEP "thermal_or_power";
	uint64_t imc_errors, pcu_errors;
	struct run r;
	double before;

	(void)state;
	start(&r, "skylake-sp-2s:dimm-hot-channel");
	run_for(&r, 3);
	imc_errors = errors_of(&r, "imc");
	pcu_errors = errors_of(&r, "pcu");
	before = exported(&r, &throttle_dram_channel_seconds, 1, label);
	assert_true(before > 0);
	sim_fail_box_reads(r.sim, -EIO);
	run_for(&r, 3);
	assert_true(errors_of(&r, "imc") > imc_errors);
	assert_true(errors_of(&r, "pcu") > pcu_errors);
	assert_true(reason_has(&r, "pcu", "2 of 2 PCU boxes not read this interval: the group "
			       "could not be read"));
	assert_true(reason_has(&r, "imc", "memory channels not read this interval"));
	assert_close(exported(&r, &throttle_dram_channel_seconds, 1, label), before,
		     "reads failing, channel 2", 1);
	sim_fail_box_reads(r.sim, 0);
	run_for(&r, 2);
	assert_false(reason_has(&r, "pcu", "not read"));
	assert_false(reason_has(&r, "imc", "not read"));
	check_imc(&r, 6);
	check_pcu(&r);
	finish(&r);
}

/*
 * A channel whose counters another user holds with a pinned group (the
 * kernel schedules pinned groups first): uncored's flexible groups there
 * never run, time_running stays 0, and each such read is an error that adds
 * nothing, never 0 counts, with the reason in the status; once the other user closes, the channel counts
 * again.
 */
static void a_group_that_never_runs_is_an_error(void **state)
{
	const char *label = "2" METRIC_LABEL_SEP "thermal_or_power";
	uint64_t errors;
	int fd[4];
	struct run r;
	double before;

	(void)state;
	start_data_scenario(&r, "skylake-sp-2s", "throttle-steady.ini", true);
	run_for(&r, 3);
	other_user_opens(&r, true, fd);
	run_for(&r, 1);
	errors = errors_of(&r, "imc");
	before = exported(&r, &throttle_dram_channel_seconds, 1, label);
	run_for(&r, 4);
	if (errors_of(&r, "imc") < errors + 4)
		fail_msg("imc errors %llu, expected at least %llu",
			 (unsigned long long)errors_of(&r, "imc"), (unsigned long long)errors + 4);
	assert_close(exported(&r, &throttle_dram_channel_seconds, 1, label), before,
		     "channel 2 held by a pinned group", 1);
	assert_true(reason_has(&r, "imc", "1 of 12 memory channels not read this interval: "
			       "another user holds the counters"));
	other_user_closes(&r, fd);
	run_for(&r, 3);
	assert_true(exported(&r, &throttle_dram_channel_seconds, 1, label) > before + 1.0);
	finish(&r);
}

/*
 * perf puts a group that waits for counters on them at the PMU's next
 * rotation, every 4 ms (perf_event_mux_interval_ms): read 1 ms after the
 * open, as the daemon's first samples are, the PCU box's second group has
 * not run yet.  That is its turn to come, not another user holding the
 * counters: the pcu and imc collectors are up, with no error, then and a
 * second later.
 */
static void a_group_waiting_its_first_turn_is_no_error(void **state)
{
	struct run r;

	(void)state;
	start(&r, "skylake-sp-2s:idle");
	sim_advance(r.sim, 0.001);
	r.snap = sampler_sample(r.sampler);
	assert_non_null(r.snap);
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "imc" : "pcu";

		assert_string_equal(snapshot_collector_state(snapshot_find_collector(r.snap, name)),
				    "up");
		assert_int_equal(errors_of(&r, name), 0);
	}
	run_for(&r, 1);
	assert_int_equal(errors_of(&r, "pcu"), 0);
	assert_int_equal(errors_of(&r, "imc"), 0);
	check_pcu(&r);
	finish(&r);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(a_group_waiting_its_first_turn_is_no_error),
		cmocka_unit_test(a_group_that_never_runs_is_an_error),
		cmocka_unit_test(failed_box_reads_are_errors_and_add_nothing),
		cmocka_unit_test(a_sleeping_package_throttles_only_while_awake),
		cmocka_unit_test(channels_without_a_clock_are_left_out),
		cmocka_unit_test(a_frozen_pcu_box_reads_as_waiting),
		cmocka_unit_test(an_unparsable_pcu_instance_stands_alone),
		cmocka_unit_test(a_pcu_instance_without_a_clock_says_what_was_seen),
		cmocka_unit_test(a_shared_channel_exports_its_multiplexing_ratio),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
