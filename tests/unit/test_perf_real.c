/*
 * Tests of the real system-call path against the running kernel: PMU
 * discovery from the real /sys, a group opened on CPU 0 with the msr PMU's
 * tsc event as leader and software events as members, one read per
 * sample, scaling, close, the kernel's own errors, and the core-PMU probe
 * (present on a host with a core PMU, the msr fallback where it is absent,
 * as the collectors choose their engine, with its reason and the refusal
 * of engine = perf).
 *
 * Kernel facts relied on: the msr PMU (arch/x86/events/msr.c) registers
 * with a dynamic type, format "event" = config:0-63 and the alias
 * tsc = event=0x00, and lives in the software context (task_ctx_nr =
 * perf_sw_context), so software events may join its group and the group
 * never fails to schedule (kernel/events/core.c, perf_event_open group
 * checks).  Software events have PERF_TYPE_SOFTWARE (perf_event_open(2)).
 *
 * Every test skips, saying why, when the kernel refuses perf_event_open
 * altogether (a seccomp filter, no perf events, or no privilege); any
 * other failure fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "col_engine.h"
#include "collector.h"
#include "engine_msr.h"
#include "perf_group.h"
#include "perf_pmu.h"
#include "perf_sys.h"
#include "perf_sys_linux.h"
#include "privdrop.h"

struct fixture {
	struct perf_sys ps;
	char err[1024];
	struct perf_pmu *msr;
	struct perf_group *g;
};

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	assert_int_equal(perf_sys_linux_init(&f.ps, "/"), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	perf_group_close(f->g);
	perf_pmu_free(f->msr);
	perf_sys_free(&f->ps);
	return 0;
}

/*
 * Skip when this is no place to test the real thing: the kernel refuses
 * perf_event_open as such, or there is no PMU tree in sysfs (a chroot or
 * container without /sys, as a package build may be).  Fail otherwise.
 */
static void require_perf(struct perf_sys *ps)
{
	struct perf_event_attr attr;
	char dir[4200];
	int fd;

	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices", perf_sys_root(ps));
	if (access(dir, F_OK) != 0) {
		print_message("skipping: no %s here (no sysfs)\n", dir);
		skip();
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	fd = perf_sys_open(ps, &attr, 0, -1);
	if (fd == -ENOSYS || fd == -EPERM || fd == -EACCES) {
		print_message("skipping: this kernel refuses perf_event_open: %s\n",
			      perf_group_hint(fd, PERF_GROUP_OP_OPEN));
		skip();
	}
	assert_true(fd >= 0);
	assert_int_equal(perf_sys_close(ps, fd), 0);
}

static void discovers_real_pmus(void **state)
{
	struct fixture *f = *state;
	const struct perf_pmu *sw, *msr, *p;
	const struct perf_pmu_format *fmt;
	struct perf_pmu_config cfg;
	struct perf_pmu_set set;

	require_perf(&f->ps);
	assert_int_equal(perf_pmu_scan(perf_sys_root(&f->ps), &set, f->err, sizeof(f->err)), 0);
	print_message("%zu PMUs:", set.n);
	for (size_t i = 0; i < set.n; i++)
		print_message(" %s(type %u, %zu formats, %zu events%s)", set.pmus[i]->name,
			      set.pmus[i]->type, set.pmus[i]->n_formats, set.pmus[i]->n_aliases,
			      set.pmus[i]->has_cpumask ? ", cpumask" : "");
	print_message("\n");

	sw = perf_pmu_set_find(&set, "software");
	assert_non_null(sw);
	assert_int_equal(sw->type, PERF_TYPE_SOFTWARE);
	p = perf_pmu_set_find(&set, "tracepoint");
	if (p)
		assert_int_equal(p->type, PERF_TYPE_TRACEPOINT);
	p = perf_pmu_set_find(&set, "breakpoint");
	if (p)
		assert_int_equal(p->type, PERF_TYPE_BREAKPOINT);

	msr = perf_pmu_set_find(&set, "msr");
	assert_non_null(msr);
	/* Dynamic types come after the fixed PERF_TYPE_* ones. */
	assert_true(msr->type >= PERF_TYPE_MAX);
	fmt = perf_pmu_find_format(msr, "event");
	assert_non_null(fmt);
	assert_int_equal(fmt->target, PERF_PMU_CONFIG);
	assert_int_equal(fmt->mask, UINT64_MAX);
	assert_string_equal(fmt->spec, "config:0-63");
	assert_int_equal(perf_pmu_alias_config(msr, "tsc", &cfg, f->err, sizeof(f->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0);

	/* Every cpumask names CPUs that exist. */
	for (size_t i = 0; i < set.n; i++) {
		char path[128];
		struct stat st;

		p = set.pmus[i];
		for (size_t k = 0; p->has_cpumask && k < p->n_cpus; k++) {
			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", p->cpus[k]);
			assert_int_equal(stat(path, &st), 0);
		}
	}
	perf_pmu_set_free(&set);
}

static void core_pmu_probe(void **state)
{
	struct fixture *f = *state;
	struct perf_pmu *cpu = NULL;
	struct stat st;
	int r;

	r = perf_pmu_probe_core(perf_sys_root(&f->ps), &cpu, f->err, sizeof(f->err));
	if (stat("/sys/bus/event_source/devices/cpu", &st) == 0) {
		print_message("this kernel has a core PMU\n");
		assert_int_equal(r, PERF_PMU_CORE_PRESENT);
		assert_non_null(cpu);
		assert_non_null(perf_pmu_find_format(cpu, "event"));
		perf_pmu_free(cpu);
		return;
	}
	print_message("%s\n", f->err);
	assert_int_equal(r, PERF_PMU_CORE_ABSENT);
	assert_null(cpu);
	assert_string_equal(f->err, "this kernel has no core PMU (cpu PMU absent from sysfs: "
			    "a virtual machine or a kernel without perf hardware support)");
}

/*
 * The collectors' choice on this kernel (col_engine.h).  Where the core
 * PMU is absent (a virtual machine, as CI runs on): engine = auto counts
 * the core through the msr engine and says why in one sentence, and
 * engine = perf refuses the collector with that reason.  Where it is
 * present, auto chooses perf.
 */
static void core_pmu_absent_falls_back_to_msr(void **state)
{
	static const char absent[] = "this kernel has no core PMU (cpu PMU absent from sysfs: a "
				     "virtual machine or a kernel without perf hardware support)";
	struct fixture *f = *state;
	struct col_engine_choice ch;
	struct hw hw = { .perf = &f->ps };
	struct collector c = { .hw = &hw };
	struct engine e = { 0 };
	struct stat st;

	require_perf(&f->ps);
	assert_int_equal(col_engine_choose(CONF_ENGINE_AUTO, ENGINE_PMU_CORE, "core", &f->ps, &ch), 0);
	if (stat("/sys/bus/event_source/devices/cpu", &st) == 0) {
		print_message("this kernel has a core PMU: %s\n", ch.why);
		assert_int_equal(ch.kind, ENGINE_PERF);
		assert_string_equal(ch.why, "the kernel has a core PMU (engine = auto)");
		return;
	}
	print_message("auto: %s\n", ch.why);
	assert_int_equal(ch.kind, ENGINE_MSR);
	assert_string_equal(ch.why, "this kernel has no core PMU (cpu PMU absent from sysfs: a "
			    "virtual machine or a kernel without perf hardware support); engine = auto falls "
			    "back to msr");
	assert_int_equal(col_engine_choose(CONF_ENGINE_PERF, ENGINE_PMU_CORE, "core", &f->ps, &ch), -ENODEV);
	print_message("perf: %s\n", ch.why);
	assert_int_equal(ch.kind, ENGINE_MSR);
	assert_true(strncmp(ch.why, "engine = perf in [core], but ", 29) == 0);
	assert_string_equal(ch.why + 29, absent);

	/* What a collector gets: the msr engine and its reason, or the refusal. */
	assert_int_equal(col_engine_open(&c, CONF_ENGINE_AUTO, ENGINE_PMU_CORE, "core", CONF_CONFLICT_YIELD, &e), 0);
	assert_int_equal(c.engine, ENGINE_MSR);
	assert_int_equal(e.ops->kind, ENGINE_MSR);
	assert_non_null(strstr(c.engine_why, absent));
	engine_destroy(&e);
	memset(&c, 0, sizeof(c));
	c.hw = &hw;
	assert_int_equal(col_engine_open(&c, CONF_ENGINE_PERF, ENGINE_PMU_CORE, "core", CONF_CONFLICT_YIELD, &e), -ENODEV);
	assert_int_equal(c.engine, ENGINE_NONE);
	assert_null(e.ops);
	assert_string_equal(c.status.why_not + 29, absent);
}

/*
 * The iMC has no msr path: on a kernel without uncore_imc_N PMUs (a virtual
 * machine, as CI runs on) the collector is refused as not applicable
 * (-ENOTSUP) with the probe's reason; on a server that has them, perf.
 */
static void server_imc_without_pmu_is_not_applicable(void **state)
{
	struct fixture *f = *state;
	struct hw hw = { .perf = &f->ps };
	struct collector c = { .hw = &hw };
	struct engine e = { 0 };
	struct stat st;
	int r;

	require_perf(&f->ps);
	r = col_engine_open(&c, CONF_ENGINE_AUTO, ENGINE_PMU_IMC, "imc", CONF_CONFLICT_YIELD, &e);
	if (stat("/sys/bus/event_source/devices/uncore_imc_0", &st) == 0) {
		print_message("this kernel has uncore_imc_0: %s\n", c.engine_why);
		assert_int_equal(r, 0);
		assert_int_equal(c.engine, ENGINE_PERF);
		engine_destroy(&e);
		return;
	}
	print_message("imc: %s\n", c.status.why_not);
	assert_int_equal(r, -ENOTSUP);
	assert_int_equal(c.engine, ENGINE_NONE);
	assert_null(e.ops);
	assert_true(strncmp(c.status.why_not, "this CPU's imc is counted through perf only, and this "
			    "kernel has no memory controller PMU", 89) == 0);
	/* engine = msr where there is no msr path: refused, and down (-ENODEV). */
	memset(&c, 0, sizeof(c));
	c.hw = &hw;
	assert_int_equal(col_engine_open(&c, CONF_ENGINE_MSR, ENGINE_PMU_PCU, "pcu", CONF_CONFLICT_YIELD,
					 &e), -ENODEV);
	assert_string_equal(c.status.why_not, "engine = msr in [pcu], but this CPU's pcu cannot be "
			    "counted through MSRs");
}

static void open_msr_group(struct fixture *f)
{
	struct perf_group_event ev[4] = {
		{ "msr/tsc/", 0, { { 0 } } },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, { { PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0 } } },
		{ "task-clock", PERF_TYPE_SOFTWARE, { { PERF_COUNT_SW_TASK_CLOCK, 0, 0, 0 } } },
		{ "context-switches", PERF_TYPE_SOFTWARE,
		  { { PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, 0 } } },
	};

	assert_int_equal(perf_pmu_load(perf_sys_root(&f->ps), "msr", &f->msr, f->err,
				       sizeof(f->err)), 0);
	ev[0].type = f->msr->type;
	assert_int_equal(perf_pmu_alias_config(f->msr, "tsc", &ev[0].cfg, f->err,
					       sizeof(f->err)), 0);
	if (perf_group_open(&f->ps, 0, ev, 4, &f->g, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

/* Let some time pass without judging how much. */
static void pause_briefly(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static void group_on_cpu0_reads_in_one_call(void **state)
{
	struct fixture *f = *state;
	struct perf_group_delta d[4];
	uint64_t reads, calls, first_tsc;

	require_perf(&f->ps);
	open_msr_group(f);
	for (size_t i = 0; i < 4; i++)
		assert_true(fcntl(f->g->members[i].fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(perf_group_enable(f->g), 0);

	pause_briefly();
	reads = f->ps.counts.n_read;
	calls = perf_sys_calls(&f->ps);
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(f->ps.counts.n_read, reads + 1);
	assert_int_equal(perf_sys_calls(&f->ps), calls + 1);
	first_tsc = f->g->members[0].total;
	assert_true(first_tsc > 0);
	assert_true(f->g->time_enabled > 0);
	assert_true(f->g->time_running <= f->g->time_enabled);

	pause_briefly();
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(perf_sys_calls(&f->ps), calls + 2);
	print_message("interval: enabled %llu ns, running %llu ns, tsc %llu, cpu-clock %llu, "
		      "task-clock %llu, context-switches %llu\n",
		      (unsigned long long)d[0].enabled_ns, (unsigned long long)d[0].running_ns,
		      (unsigned long long)d[0].value, (unsigned long long)d[1].value,
		      (unsigned long long)d[2].value, (unsigned long long)d[3].value);
	/* The TSC and the CPU clock advance whenever time passes. */
	assert_true(d[0].value > 0);
	assert_true(d[1].value > 0);
	assert_true(f->g->members[0].total > first_tsc);
	for (size_t i = 0; i < 4; i++) {
		/* A software-context group is never rotated out. */
		assert_true(d[i].ran);
		assert_true(d[i].enabled_ns > 0);
		assert_true(d[i].running_ns <= d[i].enabled_ns);
		assert_true(d[i].ratio > 0.0 && d[i].ratio <= 1.0);
		if (d[i].running_ns == d[i].enabled_ns)
			assert_int_equal(d[i].scaled, d[i].value);
		else
			assert_true(d[i].scaled >= d[i].value);
		assert_int_equal(f->g->members[i].total, f->g->members[i].value);
	}

	/* Disabled, the counts stand still. */
	assert_int_equal(perf_group_disable(f->g), 0);
	assert_int_equal(perf_group_read(f->g, d), 0);
	pause_briefly();
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(d[0].value, 0);
	assert_int_equal(d[0].enabled_ns, 0);
	assert_false(d[0].ran);
}

static void close_releases_fds(void **state)
{
	struct fixture *f = *state;
	int fds[4];

	require_perf(&f->ps);
	open_msr_group(f);
	for (size_t i = 0; i < 4; i++)
		fds[i] = f->g->members[i].fd;
	perf_group_close(f->g);
	f->g = NULL;
	for (size_t i = 0; i < 4; i++) {
		errno = 0;
		assert_int_equal(fcntl(fds[i], F_GETFD), -1);
		assert_int_equal(errno, EBADF);
	}
}

static void kernel_errors_become_sentences(void **state)
{
	struct fixture *f = *state;
	struct perf_group_event ev[2] = {
		{ "msr/event=0xffff/", 0, { { 0xffff, 0, 0, 0 } } },
		{ "no-such-type", 0x7ffffff0, { { 0 } } },
	};

	require_perf(&f->ps);
	assert_int_equal(perf_pmu_load(perf_sys_root(&f->ps), "msr", &f->msr, f->err,
				       sizeof(f->err)), 0);
	/* msr_event_init: a config past the last msr event is EINVAL. */
	ev[0].type = f->msr->type;
	assert_int_equal(perf_group_open(&f->ps, 0, &ev[0], 1, &f->g, f->err, sizeof(f->err)),
			 -EINVAL);
	print_message("%s\n", f->err);
	assert_non_null(strstr(f->err, "cpu 0: open 'msr/event=0xffff/'"));
	assert_non_null(strstr(f->err, "the kernel refused the event"));
	/* No PMU has this type: ENOENT (perf_event_open(2)). */
	assert_int_equal(perf_group_open(&f->ps, 0, &ev[1], 1, &f->g, f->err, sizeof(f->err)),
			 -ENOENT);
	print_message("%s\n", f->err);
	assert_non_null(strstr(f->err, "the PMU does not know this event type or config"));
	assert_null(f->g);
}

/* Exit codes of the child in fds_outlive_privilege_drop. */
enum {
	CHILD_OK,
	CHILD_DROP_FAILED,
	CHILD_READ_FAILED,
	CHILD_NOT_COUNTING,
	CHILD_REOPENED,
};

static int child_after_drop(struct fixture *f)
{
	struct perf_group_delta d[4];
	struct perf_group *again = NULL;
	char err[512];

	if (privdrop_to_user("nobody", err, sizeof(err)) != 0)
		return CHILD_DROP_FAILED;
	pause_briefly();
	if (perf_group_read(f->g, d) < 0 || perf_group_read(f->g, d) < 0)
		return CHILD_READ_FAILED;
	if (f->g->members[0].total == 0 || f->g->n_reads != 2)
		return CHILD_NOT_COUNTING;
	/* A new open needs the privilege that was dropped (kernel.perf_event_paranoid ≥ 1). */
	if (perf_group_open(&f->ps, 0, (const struct perf_group_event[]){
		{ "cpu-clock", PERF_TYPE_SOFTWARE, { { PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0 } } } },
		1, &again, err, sizeof(err)) == 0)
		return CHILD_REOPENED;
	return CHILD_OK;
}

/*
 * hardware-linux.md §3.1: privilege is checked only at open; read and
 * ioctl on fds opened before the drop keep working, and reopening (after
 * hotplug or reload) needs CAP_PERFMON kept.
 */
static void fds_outlive_privilege_drop(void **state)
{
	struct fixture *f = *state;
	int paranoid = -1, status;
	pid_t pid;

	require_perf(&f->ps);
	if (geteuid() != 0 || !getpwnam("nobody"))
		skip();
	open_msr_group(f);
	assert_int_equal(perf_group_enable(f->g), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_after_drop(f));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (perf_sys_read_paranoid(&f->ps, &paranoid) == 0 && paranoid < 1 &&
	    WEXITSTATUS(status) == CHILD_REOPENED)
		return;
	assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(discovers_real_pmus),
		TEST(core_pmu_probe),
		TEST(core_pmu_absent_falls_back_to_msr),
		TEST(server_imc_without_pmu_is_not_applicable),
		TEST(group_on_cpu0_reads_in_one_call),
		TEST(close_releases_fds),
		TEST(kernel_errors_become_sentences),
		TEST(fds_outlive_privilege_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
