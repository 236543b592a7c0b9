/*
 * Unit tests of the uncore collector against the register-file backend: the
 * exact values written to the event selects, the global control and the
 * fixed counter control (the msr engine's claims); busy counters skipped,
 * gate bits never taken for an owner; everything restored as found;
 * conflicts under both policies, a yielded counter taken back; wraps, read errors, CPU hot-plug,
 * refused writes and the models without the facility or its thermal events.
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

#include "collector.h"

/* Registered in collectors.c; named here to test them one by one. */
extern const struct collector_ops uncore_collector_ops;
#include "counter.h"
#include "sample_views.h"
#include "helpers.h"
#include "msr.h"
#include "regfile.h"
#include "snapshot.h"

#define TOP48 ((UINT64_C(1) << 48) - 1)

/* Westmere-EP, two sockets with two CPUs each. */

/* The collector's status as one sentence list (collector_reason). */
static char reason_buf[2048];
#define REASON(c) collector_reason((c), reason_buf, sizeof(reason_buf))

static struct hw_cpu cpus[] = {
	{ .cpu = 0, .socket = 0, .core = 0, .online = true },
	{ .cpu = 1, .socket = 0, .core = 1, .online = true },
	{ .cpu = 2, .socket = 1, .core = 0, .online = true },
	{ .cpu = 3, .socket = 1, .core = 1, .online = true },
};
static int socket0_cpus[] = { 0, 1 };
static int socket1_cpus[] = { 2, 3 };
static struct cpu_core socket0_cores[] = { { 0, 1, { 0 } }, { 1, 1, { 1 } } };
static struct cpu_core socket1_cores[] = { { 0, 1, { 2 } }, { 1, 1, { 3 } } };
static struct cpu_socket sockets[] = {
	{ .socket = 0, .n_cores = 2, .cores = socket0_cores, .n_cpus = 2, .cpus = socket0_cpus },
	{ .socket = 1, .n_cores = 2, .cores = socket1_cores, .n_cpus = 2, .cpus = socket1_cpus },
};
static const struct cpu_topology topo = {
	.n_cpus = 4, .cpus = cpus, .n_sockets = 2, .sockets = sockets,
};

static const struct cpu_info westmere = {
	.vendor = "GenuineIntel", .family = 6, .model = 0x2c, .microarch = "westmere-ep",
	.fac = { .has_nhm_uncore = true, .has_uncore_thermal_events = true },
};
static const struct cpu_info nehalem = {
	.vendor = "GenuineIntel", .family = 6, .model = 0x1a, .microarch = "nehalem-ep",
	.fac = { .has_nhm_uncore = true },
};
static const struct cpu_info skylake = {
	.vendor = "GenuineIntel", .family = 6, .model = 0x55, .microarch = "skylake-sp",
	.fac = { .has_tjmax = true, .has_package_thermal = true, .has_rapl_perf_status = true },
};

/* Custom events with the encodings of the Westmere built-ins (hardware.md §2.1). */
static const struct event_spec ev_dram_cycles = { "dram_cycles", 0x67, 0x01, false, false, 0, true, 0 };
static const struct event_spec ev_dram_episodes = { "dram_episodes", 0x67, 0x01, true, false, 0, true, 0 };
static const struct event_spec ev_prochot = { "prochot", 0x82, 0x01, false, false, 0, true, 0 };
static const struct event_spec ev_prochot_core0 = { "prochot_core0", 0x83, 0x01, false, false, 0, true, 0 };
static const struct event_spec ev_dram_open = { "dram_open", 0x60, 0x01, false, false, 0, false, 0 };

/* A register-file hw whose reads of one MSR can be made to fail. */
struct faulty {
	const struct hw_ops *inner;
	void *inner_ctx;
	uint32_t fail_read_msr;
};

static struct faulty faulty;

static int faulty_read(void *ctx, int cpu, uint32_t msr, uint64_t *ret)
{
	(void)ctx;
	if (faulty.fail_read_msr && msr == faulty.fail_read_msr)
		return -EIO;
	return faulty.inner->read_msr(faulty.inner_ctx, cpu, msr, ret);
}

static int faulty_write(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	(void)ctx;
	return faulty.inner->write_msr(faulty.inner_ctx, cpu, msr, value);
}

static int faulty_online(void *ctx, int cpu)
{
	(void)ctx;
	return faulty.inner->cpu_online(faulty.inner_ctx, cpu);
}

static int faulty_enumerate(void *ctx, struct hw_cpu *out, int max, int *ret_n)
{
	(void)ctx;
	return faulty.inner->enumerate(faulty.inner_ctx, out, max, ret_n);
}

static void faulty_close(void *ctx)
{
	(void)ctx;
	faulty.inner->close(faulty.inner_ctx);
}

static const struct hw_ops faulty_ops = {
	.name = "faulty",
	.read_msr = faulty_read,
	.write_msr = faulty_write,
	.cpu_online = faulty_online,
	.enumerate = faulty_enumerate,
	.close = faulty_close,
};

struct fixture {
	struct regfile *rf;
	struct hw hw;
	struct conf conf;
	struct collector c;
	struct snapshot *snap;
};

/* The registers the uncore facility has, per socket (hardware.md §1.3). */
static const uint32_t uncore_msrs[] = {
	MSR_UNCORE_PERF_GLOBAL_CTRL, MSR_UNCORE_PERF_GLOBAL_STATUS, MSR_UNCORE_FIXED_CTR0,
	MSR_UNCORE_FIXED_CTR_CTRL, MSR_UNCORE_ADDR_OPCODE_MATCH,
	0x3b0, 0x3b1, 0x3b2, 0x3b3, 0x3b4, 0x3b5, 0x3b6, 0x3b7,
	0x3c0, 0x3c1, 0x3c2, 0x3c3, 0x3c4, 0x3c5, 0x3c6, 0x3c7,
};
#define N_UNCORE_MSRS (sizeof(uncore_msrs) / sizeof(uncore_msrs[0]))

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->rf = regfile_new(cpus, 4);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < N_UNCORE_MSRS; i++)
			regfile_define_socket(f->rf, s, uncore_msrs[i], 0);
	regfile_bind(f->rf, &f->hw);
	faulty.inner = f->hw.ops;
	faulty.inner_ctx = f->hw.ctx;
	faulty.fail_read_msr = 0;
	f->hw.ops = &faulty_ops;
	f->hw.ctx = NULL;

	memset(&f->conf, 0, sizeof(f->conf));
	f->conf.interval_s = 1;
	uncore_settings_of(&f->conf)->enabled = true;
	uncore_settings_of(&f->conf)->default_events = false;
	uncore_settings_of(&f->conf)->on_conflict = CONF_CONFLICT_RECLAIM;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	collector_stop(&f->c);
	snapshot_release(f->snap);
	hw_close(&f->hw);
	free(f);
	return 0;
}

static void add_event(struct fixture *f, const struct event_spec *spec)
{
	uncore_settings_of(&f->conf)->events[uncore_settings_of(&f->conf)->n_events++].spec = *spec;
}

static int start(struct fixture *f, const struct cpu_info *info)
{
	return collector_start(&f->c, &uncore_collector_ops, &f->hw, info, &topo, &f->conf);
}

/* One sample into a fresh snapshot; returns the socket's entry. */
static const struct uncore_view *sample(struct fixture *f, int socket)
{
	snapshot_release(f->snap);
	f->snap = snapshot_new(&topo, &westmere);
	assert_non_null(f->snap);
	collector_sample(&f->c, f->snap);
	return uncore_view(f->snap, socket);
}

static uint64_t reg(struct fixture *f, int socket, uint32_t msr)
{
	return regfile_get(f->rf, socket == 0 ? 0 : 2, msr);
}

static void set_reg(struct fixture *f, int socket, uint32_t msr, uint64_t value)
{
	regfile_set(f->rf, socket == 0 ? 0 : 2, msr, value);
}

/* Every uncore register of both sockets, for before/after comparison. */
static void dump(struct fixture *f, uint64_t out[2][N_UNCORE_MSRS])
{
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < N_UNCORE_MSRS; i++)
			out[s][i] = reg(f, s, uncore_msrs[i]);
}

static void assert_dump_equal(uint64_t a[2][N_UNCORE_MSRS], uint64_t b[2][N_UNCORE_MSRS])
{
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < N_UNCORE_MSRS; i++) {
			if (a[s][i] != b[s][i])
				fail_msg("socket %d msr 0x%x: found 0x%llx, left 0x%llx", s,
					 uncore_msrs[i], (unsigned long long)a[s][i],
					 (unsigned long long)b[s][i]);
		}
	}
}

static void programs_exact_values(void **state)
{
	struct fixture *f = *state;

	add_event(f, &ev_dram_cycles);
	add_event(f, &ev_dram_episodes);
	add_event(f, &ev_prochot);
	add_event(f, &ev_prochot_core0);
	assert_int_equal(start(f, &westmere), 0);
	assert_true(f->c.up);
	assert_string_equal(REASON(&f->c), "");
	for (int s = 0; s < 2; s++) {
		/*
		 * EN | umask<<8 | code; no OCC_CTR_RST, since none of these is an
		 * occupancy event (hardware-linux.md §2, correction to §1.4).
		 */
		assert_int_equal(reg(f, s, 0x3c0), 0x400167);
		assert_int_equal(reg(f, s, 0x3c1), 0x440167);
		assert_int_equal(reg(f, s, 0x3c2), 0x400182);
		assert_int_equal(reg(f, s, 0x3c3), 0x400183);
		assert_int_equal(reg(f, s, 0x3c4), 0);
		assert_int_equal(reg(f, s, MSR_UNCORE_FIXED_CTR_CTRL), 0x1);
		assert_int_equal(reg(f, s, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x10000000f));
		/* Each claim sets its own gate bit by read-modify-write; counters are never written. */
		assert_int_equal(regfile_writes(f->rf, s == 0 ? 0 : 2, MSR_UNCORE_PERF_GLOBAL_CTRL), 5);
		assert_int_equal(regfile_writes(f->rf, s == 0 ? 0 : 2, MSR_UNCORE_PMC0), 0);
	}
}

static void snapshot_reports_events_and_clockticks(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;

	add_event(f, &ev_dram_cycles);
	add_event(f, &ev_prochot);
	assert_int_equal(start(f, &westmere), 0);
	set_reg(f, 1, 0x3b0, 1000);
	set_reg(f, 1, 0x3b1, 3);
	set_reg(f, 1, MSR_UNCORE_FIXED_CTR0, 2660000000u);
	ss = sample(f, 1);
	assert_true(ss->has_uncore);
	assert_true(ss->has_clockticks);
	assert_int_equal(ss->clockticks, 2660000000u);
	assert_int_equal(ss->n_events, 2);
	assert_string_equal(ss->events[0].name, "dram_cycles");
	assert_true(ss->events[0].available);
	assert_int_equal(ss->events[0].total, 1000);
	assert_string_equal(ss->events[1].name, "prochot");
	assert_int_equal(ss->events[1].total, 3);
	assert_int_equal(ss->conflicts, 0);
	ss = sample(f, 0);
	assert_int_equal(ss->events[0].total, 0);
	assert_string_equal(COLLECTOR(f->snap, "uncore")->name, "uncore");
	assert_true(COLLECTOR(f->snap, "uncore")->enabled);
	assert_true(COLLECTOR(f->snap, "uncore")->up);
	assert_int_equal(COLLECTOR(f->snap, "uncore")->errors, 0);
}

static void busy_counters_are_skipped(void **state)
{
	static const char *names[] = { "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8" };
	struct fixture *f = *state;
	const struct uncore_view *ss;

	for (int i = 0; i < 8; i++) {
		struct event_spec e = ev_dram_open;

		snprintf(e.name, sizeof(e.name), "%s", names[i]);
		e.umask = (uint8_t)(i + 1);
		add_event(f, &e);
	}
	/*
	 * Socket 0: counter 0 in use by its select; counter 7 and the fixed
	 * counter have their gate bits set in 0x391 only, which is no owner
	 * (hardware-linux.md §1.5): both are free.
	 */
	set_reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, UINT64_C(0x0000000100000080));
	set_reg(f, 0, 0x3c0, 0x4000ff);
	assert_int_equal(start(f, &westmere), 0);
	assert_true(f->c.up);
	assert_string_equal(REASON(&f->c),
			    "socket 0: uncore e8 not counted: every counter that can count it is in "
			    "use by another agent");
	assert_int_equal(reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x00000001000000fe));
	assert_int_equal(reg(f, 0, 0x3c0), 0x4000ff);
	assert_int_equal(reg(f, 0, 0x3c1), 0x400160);
	assert_int_equal(reg(f, 0, 0x3c6), 0x400660);
	assert_int_equal(reg(f, 0, 0x3c7), 0x400760);
	assert_int_equal(reg(f, 0, MSR_UNCORE_FIXED_CTR_CTRL), 1);
	assert_int_equal(reg(f, 1, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x1000000ff));

	ss = sample(f, 0);
	assert_true(ss->has_clockticks);
	assert_true(ss->events[6].available);
	assert_false(ss->events[7].available);
	assert_string_equal(ss->events[7].reason,
			    "every counter that can count it is in use by another agent");
	ss = sample(f, 1);
	assert_true(ss->events[7].available);
	assert_true(ss->has_clockticks);
}

static void restore_leaves_every_register_as_found(void **state)
{
	struct fixture *f = *state;
	uint64_t before[2][N_UNCORE_MSRS], after[2][N_UNCORE_MSRS];

	add_event(f, &ev_dram_cycles);
	add_event(f, &ev_dram_episodes);
	add_event(f, &ev_prochot_core0);
	for (int s = 0; s < 2; s++) {
		for (uint32_t n = 0; n < 8; n++)
			set_reg(f, s, 0x3b0 + n, 0x1000 * (n + 1) + (uint64_t)s);
		set_reg(f, s, MSR_UNCORE_FIXED_CTR0, 0xabcdef);
		/* Another agent's PMI routing and counter 5. */
		set_reg(f, s, MSR_UNCORE_PERF_GLOBAL_CTRL, MSR_BIT(48) | MSR_BIT(5));
		set_reg(f, s, 0x3c5, 0x400160);
		set_reg(f, s, 0x3c1, 0x100067); /* PMI set, EN clear: free */
	}
	dump(f, before);
	assert_int_equal(start(f, &westmere), 0);
	for (int i = 0; i < 3; i++) {
		set_reg(f, 0, 0x3b0, 0x5000 + (uint64_t)i);
		set_reg(f, 1, MSR_UNCORE_FIXED_CTR0, 0xffffff + (uint64_t)i);
		sample(f, 0);
	}
	collector_stop(&f->c);
	dump(f, after);
	assert_dump_equal(before, after);
	assert_string_equal(REASON(&f->c), "");
}

static void conflict_reclaim_reprograms_and_loses_interval(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;

	add_event(f, &ev_dram_cycles);
	add_event(f, &ev_dram_episodes);
	assert_int_equal(start(f, &westmere), 0);
	set_reg(f, 0, 0x3b1, 10);
	ss = sample(f, 0);
	assert_int_equal(ss->events[1].total, 10);

	/* Another agent reprograms counter 1 and it counts its own event. */
	set_reg(f, 0, 0x3c1, 0x4300aa);
	set_reg(f, 0, 0x3b1, 999999);
	ss = sample(f, 0);
	assert_int_equal(ss->conflicts, 1);
	assert_int_equal(ss->events[1].total, 10);
	assert_true(ss->events[1].available);
	assert_int_equal(reg(f, 0, 0x3c1), 0x440167);
	assert_non_null(strstr(REASON(&f->c), "socket 0: uncore dram_episodes was reprogrammed by "
				"another agent and reclaimed; the counts of that interval are lost"));

	/* Counting resumes from the value after the reclaim. */
	set_reg(f, 0, 0x3b1, 1000005);
	ss = sample(f, 0);
	assert_int_equal(ss->events[1].total, 16);
	assert_int_equal(ss->conflicts, 1);

	/*
	 * Our gate bit cleared in 0x391 is no takeover (the select is still
	 * ours): no conflict; our bit is set again, others' bits kept.
	 */
	set_reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, UINT64_C(0x100000002) | MSR_BIT(50));
	ss = sample(f, 0);
	assert_int_equal(ss->conflicts, 1);
	assert_int_equal(reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x100000003) | MSR_BIT(50));
	/* Socket 1 saw nothing. */
	assert_int_equal(uncore_view(f->snap, 1)->conflicts, 0);
}

static void conflict_yield_forgets_without_writing(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;

	uncore_settings_of(&f->conf)->on_conflict = CONF_CONFLICT_YIELD;
	add_event(f, &ev_dram_cycles);
	add_event(f, &ev_dram_episodes);
	add_event(f, &ev_prochot);
	/* Counters 3..7 are another agent's: ours get 0..2 and nothing is left free. */
	for (uint32_t n = 3; n < 8; n++)
		set_reg(f, 0, 0x3c0 + n, 0x4000ff);
	set_reg(f, 0, 0x3b1, 0x77);
	set_reg(f, 0, 0x3b2, 0x88);
	assert_int_equal(start(f, &westmere), 0);
	set_reg(f, 0, 0x3b1, 0x77 + 4);
	sample(f, 0);

	set_reg(f, 0, 0x3c1, 0x4300aa);
	set_reg(f, 0, 0x3b1, 12345);
	ss = sample(f, 0);
	assert_int_equal(ss->conflicts, 1);
	assert_false(ss->events[1].available);   /* its total is not exported while it is not counted */
	assert_string_equal(ss->events[1].reason, "another agent took its counter");
	assert_true(ss->events[0].available);
	assert_non_null(strstr(REASON(&f->c), "socket 0: uncore dram_episodes yielded: another agent "
				"took its counter"));
	/* Nothing was written to the taken counter. */
	assert_int_equal(reg(f, 0, 0x3c1), 0x4300aa);
	assert_int_equal(reg(f, 0, 0x3b1), 12345);

	/* Only our gate bit of counter 2 cleared: no takeover, the bit is set again. */
	set_reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL) & ~MSR_BIT(2));
	ss = sample(f, 0);
	assert_int_equal(ss->conflicts, 1);
	assert_true(ss->events[2].available);
	assert_true(reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL) & MSR_BIT(2));

	/* Later samples do not count the yielded counter again. */
	ss = sample(f, 0);
	assert_int_equal(ss->conflicts, 1);

	/* The other agent leaves counter 1: the event takes it back, its total goes on. */
	set_reg(f, 0, 0x3c1, 0x0300aa);
	ss = sample(f, 0);
	assert_true(ss->events[1].available);
	assert_int_equal(reg(f, 0, 0x3c1), 0x440167);
	assert_int_equal(ss->events[1].total, 4);
	set_reg(f, 0, 0x3b1, 12345 + 6);
	ss = sample(f, 0);
	assert_int_equal(ss->events[1].total, 10);
	assert_int_equal(ss->conflicts, 1);
	assert_null(strstr(REASON(&f->c), "yielded"));

	collector_stop(&f->c);
	/* Everything as found, the other agent's leftovers included. */
	assert_int_equal(reg(f, 0, 0x3c1), 0x0300aa);
	assert_int_equal(reg(f, 0, 0x3b1), 12345);
	assert_int_equal(reg(f, 0, 0x3c7), 0x4000ff);
	assert_int_equal(reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
	assert_int_equal(reg(f, 0, 0x3c0), 0);
	assert_int_equal(reg(f, 0, MSR_UNCORE_FIXED_CTR_CTRL), 0);
}

static void totals_accumulate_across_wrap(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;

	add_event(f, &ev_dram_cycles);
	set_reg(f, 0, 0x3b0, TOP48 - 9);
	set_reg(f, 0, MSR_UNCORE_FIXED_CTR0, TOP48);
	assert_int_equal(start(f, &westmere), 0);
	set_reg(f, 0, 0x3b0, 5);
	set_reg(f, 0, MSR_UNCORE_FIXED_CTR0, 99);
	ss = sample(f, 0);
	assert_int_equal(ss->events[0].total, 15);
	assert_int_equal(ss->clockticks, 100);
	set_reg(f, 0, 0x3b0, TOP48);
	ss = sample(f, 0);
	assert_int_equal(ss->events[0].total, TOP48 + 10);
	set_reg(f, 0, 0x3b0, 10);
	ss = sample(f, 0);
	assert_int_equal(ss->events[0].total, TOP48 + 21);
}

static void read_errors_keep_totals(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;

	add_event(f, &ev_dram_cycles);
	assert_int_equal(start(f, &westmere), 0);
	set_reg(f, 0, 0x3b0, 50);
	ss = sample(f, 0);
	assert_int_equal(ss->events[0].total, 50);

	faulty.fail_read_msr = 0x3b0;
	set_reg(f, 0, 0x3b0, 80);
	ss = sample(f, 0);
	assert_false(ss->events[0].available);
	assert_string_equal(ss->events[0].reason,
			    "the counter could not be read: no such register on this CPU");
	/* One failed read per socket. */
	assert_int_equal(f->c.errors, 2);
	assert_int_equal(COLLECTOR(f->snap, "uncore")->errors, 2);

	faulty.fail_read_msr = 0;
	ss = sample(f, 0);
	assert_int_equal(ss->events[0].total, 80);
}

static void offline_access_cpu_moves_to_sibling(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;
	uint64_t before[2][N_UNCORE_MSRS], after[2][N_UNCORE_MSRS];

	add_event(f, &ev_dram_cycles);
	dump(f, before);
	assert_int_equal(start(f, &westmere), 0);
	set_reg(f, 1, 0x3b0, 100);
	ss = sample(f, 1);
	assert_int_equal(ss->events[0].total, 100);

	/* CPU 2 goes; the package counter kept counting meanwhile. */
	regfile_set_online(f->rf, 2, false);
	regfile_set(f->rf, 3, 0x3b0, 250);
	ss = sample(f, 1);
	assert_true(ss->has_uncore);
	assert_int_equal(ss->events[0].total, 250);
	assert_int_equal(f->c.errors, 0);

	/* The whole socket offline: totals kept, errors counted, a degradation while it lasts. */
	assert_string_equal(REASON(&f->c), "");
	regfile_set_online(f->rf, 3, false);
	ss = sample(f, 1);
	assert_true(ss->has_uncore);
	assert_int_equal(ss->events[0].total, 250);
	assert_int_equal(f->c.errors, 1);
	ss = sample(f, 1);
	assert_int_equal(f->c.errors, 2);
	assert_string_equal(REASON(&f->c),
			    "socket 1: no CPU of the socket can be read, uncore totals held");

	/* CPU 2 back: counting goes on through it, and the degradation is gone. */
	regfile_set_online(f->rf, 2, true);
	regfile_set(f->rf, 2, 0x3b0, 300);
	ss = sample(f, 1);
	assert_int_equal(ss->events[0].total, 300);
	assert_string_equal(REASON(&f->c), "");

	collector_stop(&f->c);
	regfile_set_online(f->rf, 3, true);
	dump(f, after);
	assert_dump_equal(before, after);
}

static void refused_writes_leave_nothing_changed(void **state)
{
	struct fixture *f = *state;
	uint64_t before[2][N_UNCORE_MSRS], after[2][N_UNCORE_MSRS];

	add_event(f, &ev_dram_cycles);
	set_reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, 0x80);
	dump(f, before);
	regfile_refuse_writes(f->rf, true);
	assert_int_equal(start(f, &westmere), -EPERM);
	assert_false(f->c.up);
	assert_non_null(strstr(REASON(&f->c), "uncore counting needs MSR writes: "));
	dump(f, after);
	assert_dump_equal(before, after);
	/* Sampling and stopping a collector that did not start are harmless. */
	sample(f, 0);
	assert_false(COLLECTOR(f->snap, "uncore")->up);
	assert_false(uncore_view(f->snap, 0)->has_uncore);
	collector_stop(&f->c);
	collector_stop(&f->c);
}

static void skylake_has_no_facility(void **state)
{
	struct fixture *f = *state;

	add_event(f, &ev_dram_cycles);
	assert_int_equal(start(f, &skylake), -ENOTSUP);
	assert_false(f->c.up);
	assert_string_equal(REASON(&f->c),
			    "this CPU (skylake-sp, family 6 model 0x55) has no Nehalem/Westmere uncore "
			    "PMU at MSR 0x391/0x3c0; uncore thermal events are not available");
	assert_int_equal(regfile_writes(f->rf, -1, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
}

static void disabled_in_configuration(void **state)
{
	struct fixture *f = *state;

	uncore_settings_of(&f->conf)->enabled = false;
	assert_int_equal(start(f, &westmere), -ENOTSUP);
	assert_string_equal(REASON(&f->c), "disabled in the configuration");
	sample(f, 0);
	assert_false(COLLECTOR(f->snap, "uncore")->enabled);
	assert_false(COLLECTOR(f->snap, "uncore")->up);
}

static void nehalem_has_no_thermal_events(void **state)
{
	struct fixture *f = *state;
	const struct uncore_view *ss;

	add_event(f, &ev_dram_cycles);
	add_event(f, &ev_dram_open);
	assert_int_equal(start(f, &nehalem), 0);
	/* The thermal event takes no counter; the other one gets counter 0. */
	assert_int_equal(reg(f, 0, 0x3c0), 0x400160);
	assert_int_equal(reg(f, 0, 0x3c1), 0);
	assert_int_equal(reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x100000001));
	ss = sample(f, 0);
	assert_false(ss->events[0].available);
	assert_string_equal(ss->events[0].reason, "not available on nehalem-ep");
	assert_true(ss->events[1].available);
}

static void interval_must_stay_below_wrap(void **state)
{
	struct fixture *f = *state;
	double wrap_s = counter_wrap_period_s(48, 4e9);

	/* 2^48 / 4 GHz */
	assert_true(wrap_s > 70368.74 && wrap_s < 70368.75);
	assert_true(counter_wrap_period_s(32, 1e9) > 4.29 && counter_wrap_period_s(32, 1e9) < 4.30);
	add_event(f, &ev_dram_cycles);
	f->conf.interval_s = 20000;
	assert_int_equal(start(f, &westmere), -EINVAL);
	assert_string_equal(REASON(&f->c),
			    "interval 20000 s is too long: the 48-bit uncore counters can wrap every "
			    "70369 s, so the interval must be at most 17592 s");
	assert_int_equal(regfile_writes(f->rf, -1, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
	collector_stop(&f->c);
	f->conf.interval_s = 60;
	assert_int_equal(start(f, &westmere), 0);
}

static void builtin_lands_in_first_free_counter(void **state)
{
	struct fixture *f = *state;
	const struct event_spec *spec = event_builtin(EVENT_PMU_UNCORE,
						      "thermal_throttling_prochot_core0");

	assert_non_null(spec);
	add_event(f, spec);
	/*
	 * Counter 0 is another agent's by its select; counter 1 has only its
	 * gate bit set in 0x391, which is no owner (hardware-linux.md §1.5).
	 */
	set_reg(f, 0, 0x3c0, 0x400160);
	set_reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL, MSR_BIT(1));
	assert_int_equal(start(f, &westmere), 0);
	assert_int_equal(reg(f, 0, 0x3c1), 0x400183);
	assert_int_equal(reg(f, 0, MSR_UNCORE_PERF_GLOBAL_CTRL), UINT64_C(0x100000002));
	assert_int_equal(reg(f, 1, 0x3c0), 0x400183);
	assert_int_equal(sample(f, 0)->conflicts, 0);
	assert_int_equal(uncore_view(f->snap, 1)->conflicts, 0);
}

static void duplicate_names_counted_once(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 3; i++)
		add_event(f, &ev_dram_cycles);
	assert_int_equal(start(f, &westmere), 0);
	sample(f, 0);
	assert_int_equal(uncore_view(f->snap, 0)->n_events, 1);
	assert_int_equal(reg(f, 0, 0x3c1), 0);
}

static void defaults_come_first(void **state)
{
	struct fixture *f = *state;
	const struct event_spec *const *defaults;
	const struct uncore_view *ss;
	size_t n;

	defaults = event_defaults(EVENT_PMU_UNCORE, &n);
	assert_true(n > 0 && n <= UNCORE_N_COUNTERS);
	uncore_settings_of(&f->conf)->default_events = true;
	add_event(f, &ev_dram_open);
	assert_int_equal(start(f, &westmere), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(reg(f, 0, 0x3c0 + (uint32_t)i),
				 event_uncore_evtsel(defaults[i]));
	ss = sample(f, 0);
	assert_int_equal(ss->n_events, n + 1);
	assert_string_equal(ss->events[0].name, defaults[0]->name);
	assert_string_equal(ss->events[n].name, "dram_open");
}

static void too_many_events_refused(void **state)
{
	struct fixture *f = *state;

	uncore_settings_of(&f->conf)->default_events = true;
	for (int i = 0; i < CONF_MAX_EVENTS; i++) {
		struct event_spec e = ev_dram_open;

		snprintf(e.name, sizeof(e.name), "custom%d", i);
		add_event(f, &e);
	}
	assert_int_equal(start(f, &westmere), -EINVAL);
	assert_string_equal(REASON(&f->c),
			    "too many uncore events: at most 16 can be reported, defaults included; "
			    "remove some or turn the default events off");
	assert_int_equal(regfile_writes(f->rf, -1, MSR_UNCORE_PERF_GLOBAL_CTRL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(programs_exact_values, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_reports_events_and_clockticks, setup, teardown),
		cmocka_unit_test_setup_teardown(busy_counters_are_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(restore_leaves_every_register_as_found, setup, teardown),
		cmocka_unit_test_setup_teardown(conflict_reclaim_reprograms_and_loses_interval, setup,
						teardown),
		cmocka_unit_test_setup_teardown(conflict_yield_forgets_without_writing, setup, teardown),
		cmocka_unit_test_setup_teardown(totals_accumulate_across_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(read_errors_keep_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(offline_access_cpu_moves_to_sibling, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_writes_leave_nothing_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(skylake_has_no_facility, setup, teardown),
		cmocka_unit_test_setup_teardown(disabled_in_configuration, setup, teardown),
		cmocka_unit_test_setup_teardown(nehalem_has_no_thermal_events, setup, teardown),
		cmocka_unit_test_setup_teardown(interval_must_stay_below_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(builtin_lands_in_first_free_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_names_counted_once, setup, teardown),
		cmocka_unit_test_setup_teardown(defaults_come_first, setup, teardown),
		cmocka_unit_test_setup_teardown(too_many_events_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
