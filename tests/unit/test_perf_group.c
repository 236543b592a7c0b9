/*
 * Unit tests of perf groups against a scripted kernel behind struct
 * perf_sys: the attributes each event is opened with, one group enable,
 * one read per sample, deltas, multiplexing ratios and scaled estimates,
 * the end-of-file error state, malformed answers, open failures and their
 * sentences, and the system-call counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "helpers.h"
#include "perf_group.h"
#include "perf_sys.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_EVENTS 20
#define FIRST_FD 100

/* The kernel's side, as far as these tests need it. */
struct fake_event {
	struct perf_event_attr attr;
	pid_t pid;
	int cpu;
	int group_fd;
	unsigned long flags;
	bool open;
	uint64_t value;
};

struct fake_kernel {
	struct fake_event ev[MAX_EVENTS];
	size_t n;
	size_t fail_at;             /* index of the open that fails, or MAX_EVENTS */
	int fail_err;
	uint64_t time_enabled, time_running;
	bool group_enabled;
	int last_ioctl_fd;
	unsigned long last_ioctl_req, last_ioctl_arg;
	enum { READ_OK, READ_EOF, READ_SHORT, READ_BAD_ID, READ_BAD_NR, READ_REVERSED } read_mode;
};

static struct fake_event *event_of(struct fake_kernel *k, int fd)
{
	if (fd < FIRST_FD || fd >= FIRST_FD + (int)k->n || !k->ev[fd - FIRST_FD].open)
		return NULL;
	return &k->ev[fd - FIRST_FD];
}

static int fake_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
		     int group_fd, unsigned long flags)
{
	struct fake_kernel *k = ctx;
	struct fake_event *e;

	if (k->n == k->fail_at)
		return -k->fail_err;
	e = &k->ev[k->n];
	e->attr = *attr;
	e->pid = pid;
	e->cpu = cpu;
	e->group_fd = group_fd;
	e->flags = flags;
	e->open = true;
	return FIRST_FD + (int)k->n++;
}

/* Event ids are distinct from fds and from indexes: 1000 + 7 × index. */
static uint64_t id_of(size_t index)
{
	return 1000 + 7 * index;
}

static ssize_t fake_read(void *ctx, int fd, void *buf, size_t len)
{
	struct fake_kernel *k = ctx;
	uint64_t words[3 + 2 * MAX_EVENTS];
	size_t n = 0, bytes;

	if (!event_of(k, fd))
		return -EBADF;
	if (k->read_mode == READ_EOF)
		return 0;
	words[1] = k->time_enabled;
	words[2] = k->time_running;
	for (size_t i = 0; i < k->n; i++) {
		size_t j = k->read_mode == READ_REVERSED ? k->n - 1 - i : i;

		if (!k->ev[j].open)
			continue;
		words[3 + 2 * n] = k->ev[j].value;
		words[4 + 2 * n] = k->read_mode == READ_BAD_ID ? 5 : id_of(j);
		n++;
	}
	words[0] = k->read_mode == READ_BAD_NR ? n + 1 : n;
	bytes = (3 + 2 * n) * sizeof(uint64_t);
	if (k->read_mode == READ_SHORT)
		bytes -= sizeof(uint64_t);
	if (bytes > len)
		return -ENOSPC;
	memcpy(buf, words, bytes);
	return (ssize_t)bytes;
}

static int fake_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct fake_kernel *k = ctx;
	struct fake_event *e = event_of(k, fd);

	if (!e)
		return -EBADF;
	k->last_ioctl_fd = fd;
	k->last_ioctl_req = request;
	k->last_ioctl_arg = arg;
	if (request == PERF_EVENT_IOC_ID) {
		*(uint64_t *)arg = id_of((size_t)(fd - FIRST_FD));
		return 0;
	}
	if (request == PERF_EVENT_IOC_ENABLE)
		k->group_enabled = true;
	else if (request == PERF_EVENT_IOC_DISABLE)
		k->group_enabled = false;
	return 0;
}

static int fake_close(void *ctx, int fd)
{
	struct fake_event *e = event_of(ctx, fd);

	if (!e)
		return -EBADF;
	e->open = false;
	return 0;
}

static void fake_free(void *ctx)
{
	(void)ctx;
}

static const struct perf_sys_ops fake_ops = {
	.name = "fake",
	.open = fake_open,
	.read = fake_read,
	.ioctl = fake_ioctl,
	.close = fake_close,
	.free = fake_free,
};

struct fixture {
	char root[256];
	char err[512];
	struct fake_kernel k;
	struct perf_sys ps;
	struct perf_group *g;
};

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	f.k.fail_at = MAX_EVENTS;
	helpers_mkdtemp(f.root, sizeof(f.root));
	assert_int_equal(perf_sys_init(&f.ps, &fake_ops, &f.k, f.root), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	perf_group_close(f->g);
	perf_sys_free(&f->ps);
	helpers_rmtree(f->root);
	return 0;
}

/* A core-like group: a RAW leader and two members, one with config1. */
static const struct perf_group_event three[] = {
	{ "cycles", PERF_TYPE_RAW, { { 0x3c, 0, 0, 0 } } },
	{ "instructions", PERF_TYPE_RAW, { { 0xc0, 0, 0, 0 } } },
	{ "offcore", PERF_TYPE_RAW, { { 0x01b7, 0x10001, 0, 0 } } },
};

static void opens_counting_group(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(perf_group_open(&f->ps, 3, three, 3, &f->g, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->k.n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct fake_event *e = &f->k.ev[i];

		print_message("event %zu\n", i);
		assert_int_equal(e->attr.size, sizeof(struct perf_event_attr));
		assert_int_equal(e->attr.type, PERF_TYPE_RAW);
		assert_int_equal(e->attr.config, three[i].cfg.config[0]);
		assert_int_equal(e->attr.config1, three[i].cfg.config[1]);
		assert_int_equal(e->attr.read_format,
				 PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID);
		assert_int_equal(e->attr.disabled, i == 0);
		assert_int_equal(e->attr.pinned, 0);
		assert_int_equal(e->attr.exclusive, 0);
		assert_int_equal(e->attr.exclude_user, 0);
		assert_int_equal(e->attr.exclude_kernel, 0);
		assert_int_equal(e->attr.inherit, 0);
		assert_int_equal(e->attr.sample_period, 0);
		assert_int_equal(e->pid, -1);
		assert_int_equal(e->cpu, 3);
		assert_int_equal(e->group_fd, i == 0 ? -1 : FIRST_FD);
		assert_int_equal(e->flags, PERF_FLAG_FD_CLOEXEC);
		assert_int_equal(f->g->members[i].id, id_of(i));
		assert_string_equal(f->g->members[i].name, three[i].name);
	}
	/* Three opens and three id ioctls. */
	assert_int_equal(f->ps.counts.n_open, 3);
	assert_int_equal(f->ps.counts.n_ioctl, 3);

	assert_int_equal(perf_group_enable(f->g), 0);
	assert_true(f->k.group_enabled);
	assert_int_equal(f->k.last_ioctl_fd, FIRST_FD);
	assert_int_equal(f->k.last_ioctl_req, PERF_EVENT_IOC_ENABLE);
	assert_int_equal(f->k.last_ioctl_arg, PERF_IOC_FLAG_GROUP);
	assert_int_equal(perf_group_disable(f->g), 0);
	assert_int_equal(f->k.last_ioctl_req, PERF_EVENT_IOC_DISABLE);
	assert_int_equal(f->k.last_ioctl_arg, PERF_IOC_FLAG_GROUP);

	perf_group_close(f->g);
	f->g = NULL;
	for (size_t i = 0; i < 3; i++)
		assert_false(f->k.ev[i].open);
	assert_int_equal(f->ps.counts.n_close, 3);
}

static void set_reading(struct fake_kernel *k, uint64_t enabled, uint64_t running,
			uint64_t v0, uint64_t v1, uint64_t v2)
{
	k->time_enabled = enabled;
	k->time_running = running;
	k->ev[0].value = v0;
	k->ev[1].value = v1;
	k->ev[2].value = v2;
}

static void reads_deltas_and_scales(void **state)
{
	struct fixture *f = *state;
	struct perf_group_delta d[3];
	uint64_t calls;

	assert_int_equal(perf_group_open(&f->ps, 0, three, 3, &f->g, f->err, sizeof(f->err)), 0);
	assert_int_equal(perf_group_enable(f->g), 0);
	calls = perf_sys_calls(&f->ps);

	/* First interval: on the PMU the whole time. */
	set_reading(&f->k, 1000000, 1000000, 3000, 2000, 10);
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(perf_sys_calls(&f->ps), calls + 1);
	assert_int_equal(f->ps.counts.n_read, 1);
	for (size_t i = 0; i < 3; i++) {
		assert_true(d[i].ran);
		assert_int_equal(d[i].enabled_ns, 1000000);
		assert_int_equal(d[i].running_ns, 1000000);
		assert_true(d[i].ratio == 1.0);
		assert_int_equal(d[i].scaled, d[i].value);
	}
	assert_int_equal(d[0].value, 3000);
	assert_int_equal(d[1].value, 2000);
	assert_int_equal(d[2].value, 10);

	/* Second interval: multiplexed, on the PMU a quarter of the time. */
	set_reading(&f->k, 2000000, 1250000, 3500, 2300, 10);
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(d[0].value, 500);
	assert_int_equal(d[0].enabled_ns, 1000000);
	assert_int_equal(d[0].running_ns, 250000);
	assert_true(d[0].ratio == 0.25);
	assert_int_equal(d[0].scaled, 2000);
	assert_int_equal(d[1].scaled, 1200);
	assert_int_equal(d[2].value, 0);
	assert_int_equal(d[2].scaled, 0);
	assert_true(d[2].ran);

	/* Third interval: never on the PMU. */
	set_reading(&f->k, 3000000, 1250000, 3500, 2300, 10);
	assert_int_equal(perf_group_read(f->g, d), 0);
	for (size_t i = 0; i < 3; i++) {
		assert_false(d[i].ran);
		assert_int_equal(d[i].running_ns, 0);
		assert_int_equal(d[i].enabled_ns, 1000000);
		assert_int_equal(d[i].scaled, 0);
		assert_true(d[i].ratio == 0.0);
	}

	assert_int_equal(f->g->members[0].value, 3500);
	assert_int_equal(f->g->members[0].total, 3500);
	assert_int_equal(f->g->members[0].total_scaled, 5000);
	assert_int_equal(f->g->members[1].total_scaled, 3200);
	assert_int_equal(f->g->time_enabled, 3000000);
	assert_int_equal(f->g->time_running, 1250000);
	assert_int_equal(f->g->n_reads, 3);
	assert_int_equal(f->ps.counts.n_read, 3);
}

/* The kernel lists the leader first, but ids, not positions, decide. */
static void matches_members_by_id(void **state)
{
	struct fixture *f = *state;
	struct perf_group_delta d[3];

	assert_int_equal(perf_group_open(&f->ps, 0, three, 3, &f->g, f->err, sizeof(f->err)), 0);
	f->k.read_mode = READ_REVERSED;
	set_reading(&f->k, 100, 100, 7, 8, 9);
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(d[0].value, 7);
	assert_int_equal(d[1].value, 8);
	assert_int_equal(d[2].value, 9);
	/* deltas may be NULL. */
	set_reading(&f->k, 200, 200, 17, 18, 19);
	assert_int_equal(perf_group_read(f->g, NULL), 0);
	assert_int_equal(f->g->members[2].total, 19);
}

static void eof_and_malformed_reads(void **state)
{
	static const struct {
		int mode;
		int r;
	} rows[] = {
		{ READ_EOF, -ENODATA },
		{ READ_SHORT, -EIO },
		{ READ_BAD_ID, -EIO },
		{ READ_BAD_NR, -EIO },
	};
	struct fixture *f = *state;
	struct perf_group_delta d[3];

	assert_int_equal(perf_group_open(&f->ps, 0, three, 3, &f->g, f->err, sizeof(f->err)), 0);
	set_reading(&f->k, 100, 100, 1, 2, 3);
	assert_int_equal(perf_group_read(f->g, d), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("row %zu\n", i);
		f->k.read_mode = rows[i].mode;
		set_reading(&f->k, 200, 200, 11, 12, 13);
		assert_int_equal(perf_group_read(f->g, d), rows[i].r);
		/* Nothing advanced. */
		assert_int_equal(f->g->members[0].value, 1);
		assert_int_equal(f->g->time_enabled, 100);
		assert_int_equal(f->g->n_reads, 1);
	}
	/* After an error state, enabling again and reading works. */
	f->k.read_mode = READ_OK;
	assert_int_equal(perf_group_enable(f->g), 0);
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(d[0].value, 10);
	assert_string_equal(perf_group_hint(-ENODATA, PERF_GROUP_OP_READ),
			    "the group is in error state (read returned end of file, as a pinned "
			    "group the PMU could not schedule does); enable it again");
}

/* A failure at any member closes what was opened and names the event and the cause. */
static void open_failure_closes_and_explains(void **state)
{
	struct fixture *f = *state;
	char path[512];

	f->k.fail_at = 2;
	f->k.fail_err = EINVAL;
	assert_int_equal(perf_group_open(&f->ps, 5, three, 3, &f->g, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_null(f->g);
	assert_false(f->k.ev[0].open);
	assert_false(f->k.ev[1].open);
	assert_string_equal(f->err, "cpu 5: open 'offcore' (type 4, config 0x1b7, config1 "
			    "0x10001): the kernel refused the event: a config bit the PMU does "
			    "not accept, or more events in the group than the PMU has counters "
			    "(split the group) (event 3 of a group of 3)");

	/* A permission error quotes perf_event_paranoid from under the root. */
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/perf_event_paranoid", f->root);
	helpers_write_file(path, "2\n");
	f->k.n = 0;
	f->k.fail_at = 0;
	f->k.fail_err = EACCES;
	assert_int_equal(perf_group_open(&f->ps, 0, three, 1, &f->g, f->err, sizeof(f->err)),
			 -EACCES);
	assert_string_equal(f->err, "cpu 0: open 'cycles' (type 4, config 0x3c): permission "
			    "denied: counting all tasks on a CPU needs CAP_PERFMON (Linux 5.8 "
			    "and later) or CAP_SYS_ADMIN, or kernel.perf_event_paranoid below 1; "
			    "above 2 (Debian, Ubuntu) only CAP_SYS_ADMIN: set the sysctl to 2, or "
			    "grant CAP_SYS_ADMIN (kernel.perf_event_paranoid is 2)");

	f->k.fail_err = ENODEV;
	assert_int_equal(perf_group_open(&f->ps, 7, three, 2, &f->g, f->err, sizeof(f->err)),
			 -ENODEV);
	assert_string_equal(f->err, "cpu 7: open 'cycles' (type 4, config 0x3c): the CPU is "
			    "offline, or its PMU does not support this event");

	assert_int_equal(perf_group_open(&f->ps, 0, three, 0, &f->g, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_string_equal(f->err, "cpu 0: a group needs at least one event");
}

static void hints_for_operators(void **state)
{
	static const struct {
		int err;
		const char *part;
	} rows[] = {
		{ -EACCES, "CAP_PERFMON" },
		{ -EPERM, "SystemCallFilter=perf_event_open" },
		{ -ENODEV, "offline" },
		{ -ENOENT, "no such box" },
		{ -EINVAL, "split the group" },
		{ -EMFILE, "LimitNOFILE=" },
		{ -ENOSYS, "CONFIG_PERF_EVENTS" },
		{ -EBUSY, "exclusively" },
		{ -EOPNOTSUPP, "counting-only" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("row %zu\n", i);
		assert_non_null(strstr(perf_group_hint(rows[i].err, PERF_GROUP_OP_OPEN),
				       rows[i].part));
	}
	assert_string_equal(perf_group_hint(-EXDEV, PERF_GROUP_OP_OPEN), strerror(EXDEV));
	assert_string_equal(perf_group_hint(-EACCES, PERF_GROUP_OP_READ), strerror(EACCES));
}

static void scale_arithmetic(void **state)
{
	static const struct {
		uint64_t value, enabled, running;
		bool ran;
		uint64_t scaled;
		double ratio;
	} rows[] = {
		{ 100, 1000, 1000, true, 100, 1.0 },
		{ 100, 1000, 500, true, 200, 0.5 },
		{ 100, 1000, 0, false, 0, 0.0 },
		{ 0, 1000, 0, false, 0, 0.0 },
		{ 0, 0, 0, false, 0, 0.0 },
		{ 10, 3, 2, true, 15, 2.0 / 3.0 },
		{ 1, 3, 2, true, 1, 2.0 / 3.0 },             /* rounded down */
		{ 100, 1000, 2000, true, 100, 1.0 },         /* running above enabled */
		/* value × enabled overflows 64 bits; the estimate does not. */
		{ UINT64_C(1) << 40, UINT64_C(1) << 30, UINT64_C(1) << 29, true,
		  UINT64_C(1) << 41, 0.5 },
		{ UINT64_MAX, 2, 1, true, UINT64_MAX, 0.5 }, /* saturates */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct perf_group_delta d;

		print_message("row %zu\n", i);
		perf_group_scale(rows[i].value, rows[i].enabled, rows[i].running, &d);
		assert_int_equal(d.value, rows[i].value);
		assert_int_equal(d.enabled_ns, rows[i].enabled);
		assert_int_equal(d.running_ns, rows[i].running);
		assert_int_equal(d.ran, rows[i].ran);
		assert_int_equal(d.scaled, rows[i].scaled);
		assert_true(d.ratio == rows[i].ratio);
	}
}

/* A group larger than the stack's id table still reads in one call. */
static void large_group(void **state)
{
	struct fixture *f = *state;
	struct perf_group_event ev[MAX_EVENTS];
	struct perf_group_delta d[MAX_EVENTS];

	for (size_t i = 0; i < MAX_EVENTS; i++)
		ev[i] = (struct perf_group_event){ "e", PERF_TYPE_SOFTWARE, { { i, 0, 0, 0 } } };
	assert_int_equal(perf_group_open(&f->ps, 1, ev, MAX_EVENTS, &f->g, f->err,
					 sizeof(f->err)), 0);
	for (size_t i = 0; i < MAX_EVENTS; i++)
		f->k.ev[i].value = 10 * i;
	f->k.time_enabled = f->k.time_running = 5;
	assert_int_equal(perf_group_read(f->g, d), 0);
	assert_int_equal(d[MAX_EVENTS - 1].value, 10 * (MAX_EVENTS - 1));
	assert_int_equal(f->ps.counts.n_read, 1);
}

static void closed_handle(void **state)
{
	struct perf_sys ps;
	struct perf_event_attr attr;
	uint64_t id;

	(void)state;
	memset(&ps, 0, sizeof(ps));
	memset(&attr, 0, sizeof(attr));
	assert_int_equal(perf_sys_open(&ps, &attr, 0, -1), -EBADF);
	assert_int_equal(perf_sys_id(&ps, 3, &id), -EBADF);
	assert_int_equal(perf_sys_close(&ps, -1), 0);
	perf_sys_free(&ps);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(opens_counting_group),
		TEST(reads_deltas_and_scales),
		TEST(matches_members_by_id),
		TEST(eof_and_malformed_reads),
		TEST(open_failure_closes_and_explains),
		TEST(large_group),
		cmocka_unit_test(hints_for_operators),
		cmocka_unit_test(scale_arithmetic),
		cmocka_unit_test(closed_handle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
