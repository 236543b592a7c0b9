/*
 * Unit tests of the hw dispatch layer, hw_hint() and the device-file
 * backend, run against temporary trees of sparse regular files and fake
 * sysfs topology.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "hw.h"
#include "hw_dev.h"
#include "msr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct tree {
	char root[256];
	char err[512];
	struct hw hw;
};

static int tree_setup(void **state)
{
	static struct tree t;

	memset(&t, 0, sizeof(t));
	helpers_mkdtemp(t.root, sizeof(t.root));
	*state = &t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;

	hw_close(&t->hw);
	helpers_rmtree(t->root);
	return 0;
}

/* Two sockets, two cores each, plus two siblings (cpu 10 and 11). */
static void make_two_socket_tree(const char *root)
{
	helpers_fake_cpu(root, 10, 0, 0, true);
	helpers_fake_cpu(root, 0, 0, 0, true);
	helpers_fake_cpu(root, 2, 1, 0, true);
	helpers_fake_cpu(root, 1, 0, 1, true);
	helpers_fake_cpu(root, 11, 1, 1, true);
	helpers_fake_cpu(root, 3, 1, 1, true);
}

static void path_in(char *buf, size_t len, const char *root, const char *rel)
{
	snprintf(buf, len, "%s/%s", root, rel);
}

static void open_ok(struct tree *t)
{
	int r = hwdev_open(t->root, &t->hw, t->err, sizeof(t->err));

	if (r < 0)
		print_error("hwdev_open: %s\n", t->err);
	assert_int_equal(r, 0);
}

static void msr_reads_and_writes_land_at_their_offsets(void **state)
{
	struct tree *t = *state;
	uint64_t v;

	make_two_socket_tree(t->root);
	helpers_fake_msr_write(t->root, 0, IA32_THERM_STATUS, UINT64_C(0x88390000));
	helpers_fake_msr_write(t->root, 1, 0xc001029a, UINT64_C(0x123456789abcdef0));
	open_ok(t);

	assert_int_equal(hw_read_msr(&t->hw, 0, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(v, UINT64_C(0x88390000));
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(v, 0);
	/* An offset above 2^31 must not be truncated or sign-extended. */
	assert_int_equal(hw_read_msr(&t->hw, 1, 0xc001029a, &v), 0);
	assert_int_equal(v, UINT64_C(0x123456789abcdef0));

	assert_int_equal(hw_write_msr(&t->hw, 1, MSR_UNCORE_PERFEVTSEL0, UINT64_C(0x430081)), 0);
	assert_int_equal(helpers_fake_msr_read(t->root, 1, MSR_UNCORE_PERFEVTSEL0), 0x430081);
	assert_int_equal(helpers_fake_msr_read(t->root, 0, MSR_UNCORE_PERFEVTSEL0), 0);
	/* Neighbouring addresses keep their own values in a file (one slot each). */
	assert_int_equal(helpers_fake_msr_read(t->root, 1, MSR_UNCORE_PERFEVTSEL0 + 1), 0);
	assert_int_equal(helpers_fake_msr_read(t->root, 1, MSR_UNCORE_PERFEVTSEL0 - 1), 0);
	for (uint32_t n = 0; n < 8; n++)
		assert_int_equal(hw_write_msr(&t->hw, 1, MSR_UNCORE_PERFEVTSEL0 + n, 0x400100 + n), 0);
	for (uint32_t n = 0; n < 8; n++)
		assert_int_equal(helpers_fake_msr_read(t->root, 1, MSR_UNCORE_PERFEVTSEL0 + n), 0x400100 + n);

	assert_int_equal(hw_write_msr(&t->hw, 2, 0xc0010299, UINT64_MAX), 0);
	assert_int_equal(helpers_fake_msr_read(t->root, 2, 0xc0010299), UINT64_MAX);
	assert_int_equal(helpers_fake_msr_read(t->root, 2, 0xc0010299 - 1), 0);
	assert_int_equal(helpers_fake_msr_read(t->root, 2, 0xc0010299 + 1), 0);

	assert_int_equal(t->hw.n_reads, 3);
	assert_int_equal(t->hw.n_writes, 10);
}

static void short_read_is_eio(void **state)
{
	struct tree *t = *state;
	char path[512];
	uint64_t v = 7;

	make_two_socket_tree(t->root);
	open_ok(t);
	/* The fd stays open: shrinking the file under it makes the read short. */
	path_in(path, sizeof(path), t->root, "dev/cpu/0/msr");
	assert_int_equal(truncate(path, IA32_THERM_STATUS * 8 + 4), 0);
	assert_int_equal(hw_read_msr(&t->hw, 0, IA32_THERM_STATUS, &v), -EIO);
	assert_int_equal(hw_read_msr(&t->hw, 0, 0x1a0, &v), -EIO);
	assert_int_equal(v, 7);
	assert_int_equal(hw_read_msr(&t->hw, 0, 0x198, &v), 0);
}

static void cpuid_reads_leaf_and_subleaf(void **state)
{
	struct tree *t = *state;
	struct hw_cpuid r;

	make_two_socket_tree(t->root);
	helpers_fake_cpuid(t->root, 0, 0xb, 0, 1, 2, 0x100, 0);
	helpers_fake_cpuid(t->root, 0, 0xb, 1, 5, 24, 0x201, 0x21);
	helpers_fake_cpuid(t->root, 3, 0x1, 0, 0x206c2, 0x11, 0x22, 0x33);
	open_ok(t);

	assert_int_equal(hw_cpuid(&t->hw, 0, 0xb, 0, &r), 0);
	assert_int_equal(r.eax, 1);
	assert_int_equal(r.ebx, 2);
	assert_int_equal(r.ecx, 0x100);
	assert_int_equal(r.edx, 0);
	assert_int_equal(hw_cpuid(&t->hw, 0, 0xb, 1, &r), 0);
	assert_int_equal(r.eax, 5);
	assert_int_equal(r.ebx, 24);
	assert_int_equal(r.ecx, 0x201);
	assert_int_equal(r.edx, 0x21);
	assert_int_equal(hw_cpuid(&t->hw, 3, 0x1, 0, &r), 0);
	assert_int_equal(r.eax, 0x206c2);
	assert_int_equal(r.ebx, 0x11);
	assert_int_equal(r.ecx, 0x22);
	assert_int_equal(r.edx, 0x33);
	assert_int_equal(hw_cpuid(&t->hw, 99, 0x1, 0, &r), -ENXIO);
	/* CPUID is not an MSR access. */
	assert_int_equal(t->hw.n_reads, 0);
}

static void enumerate_in_cpu_order_with_topology(void **state)
{
	static const struct hw_cpu want[] = {
		{ .cpu = 0, .socket = 0, .die = 0, .core = 0, .thread = 0, .online = true },
		{ .cpu = 1, .socket = 0, .die = 0, .core = 1, .thread = 0, .online = true },
		{ .cpu = 2, .socket = 1, .die = 1, .core = 0, .thread = 0, .online = true },
		{ .cpu = 3, .socket = 1, .die = 1, .core = 1, .thread = 0, .online = true },
		{ .cpu = 10, .socket = 0, .die = 0, .core = 0, .thread = 1, .online = true },
		{ .cpu = 11, .socket = 1, .die = 0, .core = 1, .thread = 1, .online = true },
	};
	struct tree *t = *state;
	struct hw_cpu cpus[8];
	char path[512];
	int n = -1;

	make_two_socket_tree(t->root);
	helpers_fake_cpu_attr(t->root, 2, "topology/die_id", "1\n");
	helpers_fake_cpu_attr(t->root, 3, "topology/die_id", "1\n");
	path_in(path, sizeof(path), t->root, "sys/devices/system/cpu/cpu11/topology/die_id");
	assert_int_equal(unlink(path), 0);
	/* Entries that are not CPUs. */
	helpers_write_file(strcat(strcpy(path, t->root), "/sys/devices/system/cpu/cpufreq/x"), "");
	helpers_write_file(strcat(strcpy(path, t->root), "/sys/devices/system/cpu/cpuidle/x"), "");
	helpers_write_file(strcat(strcpy(path, t->root), "/sys/devices/system/cpu/cpu7x/x"), "");
	helpers_write_file(strcat(strcpy(path, t->root), "/sys/devices/system/cpu/possible"), "0-11\n");
	open_ok(t);

	assert_int_equal(hw_enumerate(&t->hw, cpus, 8, &n), 0);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		print_message("cpu %d\n", want[i].cpu);
		assert_int_equal(cpus[i].cpu, want[i].cpu);
		assert_int_equal(cpus[i].socket, want[i].socket);
		assert_int_equal(cpus[i].die, want[i].die);
		assert_int_equal(cpus[i].core, want[i].core);
		assert_int_equal(cpus[i].thread, want[i].thread);
		assert_int_equal(cpus[i].online, want[i].online);
	}

	/* A short buffer gets the first entries and the full count. */
	memset(cpus, 0x5a, sizeof(cpus));
	assert_int_equal(hw_enumerate(&t->hw, cpus, 2, &n), 0);
	assert_int_equal(n, 6);
	assert_int_equal(cpus[1].cpu, 1);
	assert_int_equal(cpus[2].cpu, 0x5a5a5a5a);
}

static void root_with_trailing_slash(void **state)
{
	struct tree *t = *state;
	char root[300];
	uint64_t v;

	make_two_socket_tree(t->root);
	helpers_fake_msr_write(t->root, 3, MSR_TEMPERATURE_TARGET, 0x640000);
	snprintf(root, sizeof(root), "%s//", t->root);
	assert_int_equal(hwdev_open(root, &t->hw, t->err, sizeof(t->err)), 0);
	assert_int_equal(hw_read_msr(&t->hw, 3, MSR_TEMPERATURE_TARGET, &v), 0);
	assert_int_equal(v, 0x640000);
}

static void offline_cpu_is_enxio(void **state)
{
	struct tree *t = *state;
	struct hw_cpu cpus[4];
	struct hw_cpuid r;
	uint64_t v;
	int n;

	helpers_fake_cpu(t->root, 0, 0, 0, true);
	helpers_fake_cpu(t->root, 1, 0, 1, false);
	open_ok(t);

	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), -ENXIO);
	assert_int_equal(hw_write_msr(&t->hw, 1, IA32_THERM_STATUS, 0), -ENXIO);
	assert_int_equal(hw_cpuid(&t->hw, 1, 0, 0, &r), -ENXIO);
	assert_int_equal(hw_read_msr(&t->hw, 5, IA32_THERM_STATUS, &v), -ENXIO);
	assert_int_equal(hw_cpu_online(&t->hw, 1), 0);
	assert_int_equal(hw_cpu_online(&t->hw, 0), 1);
	assert_int_equal(hw_cpu_online(&t->hw, 5), -ENXIO);

	assert_int_equal(hw_enumerate(&t->hw, cpus, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_false(cpus[1].online);
	assert_int_equal(cpus[1].socket, -1);
	assert_int_equal(cpus[1].core, -1);
	assert_int_equal(cpus[1].thread, -1);

	/* online is re-read every call; the devices are opened once the CPU is online. */
	helpers_fake_msr_write(t->root, 1, IA32_THERM_STATUS, 0x88000000);
	helpers_fake_cpu(t->root, 1, 0, 1, true);   /* online, with its topology */
	assert_int_equal(hw_cpu_online(&t->hw, 1), 1);
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(v, 0x88000000);
	assert_int_equal(hw_enumerate(&t->hw, cpus, 4, &n), 0);
	assert_true(cpus[1].online);
	assert_int_equal(cpus[1].socket, 0);
	assert_int_equal(cpus[1].core, 1);
	assert_int_equal(cpus[1].thread, 0);
}

struct opener_log {
	int calls, last_cpu, answer;
	const char *root;
};

static int test_opener(void *arg, int cpu, int *ret_msr_fd, int *ret_cpuid_fd)
{
	struct opener_log *o = arg;

	o->calls++;
	o->last_cpu = cpu;
	if (o->answer)
		return o->answer;
	return hwdev_open_cpu(o->root, cpu, ret_msr_fd, ret_cpuid_fd);
}

/*
 * A CPU that comes online after open is reached through the opener when
 * one is set (the process may have dropped the right to open devices); a
 * refusal is the access's error, and the next access asks again.
 */
static void late_cpu_goes_through_the_opener(void **state)
{
	struct tree *t = *state;
	struct opener_log o = { .root = t->root, .answer = -EACCES };
	uint64_t v;

	helpers_fake_cpu(t->root, 0, 0, 0, true);
	helpers_fake_cpu(t->root, 1, 0, 1, false);
	helpers_fake_msr_write(t->root, 1, IA32_THERM_STATUS, 0x1234);
	open_ok(t);
	hwdev_set_opener(&t->hw, test_opener, &o);

	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), -ENXIO);
	assert_int_equal(o.calls, 0);   /* offline: nothing to open */
	helpers_fake_cpu_attr(t->root, 1, "online", "1\n");
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), -EACCES);
	o.answer = 0;
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(v, 0x1234);
	assert_int_equal(o.calls, 2);
	assert_int_equal(o.last_cpu, 1);
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(o.calls, 2);   /* opened once */
	assert_int_equal(hw_read_msr(&t->hw, 0, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(o.calls, 2);
}

/* A regular file standing in for a device answers -ENXIO while its CPU is offline, as the driver does. */
static void stand_in_follows_the_online_attribute(void **state)
{
	struct tree *t = *state;
	struct hw_cpuid r;
	uint64_t v;

	helpers_fake_cpu(t->root, 0, 0, 0, true);
	helpers_fake_cpu(t->root, 1, 0, 1, true);
	helpers_fake_msr_write(t->root, 1, IA32_THERM_STATUS, 0x77);
	open_ok(t);
	helpers_fake_cpu_attr(t->root, 1, "online", "0\n");
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), -ENXIO);
	assert_int_equal(hw_write_msr(&t->hw, 1, IA32_THERM_STATUS, 0), -ENXIO);
	assert_int_equal(hw_cpuid(&t->hw, 1, 0, 0, &r), -ENXIO);
	assert_int_equal(helpers_fake_msr_read(t->root, 1, IA32_THERM_STATUS), 0x77);
	helpers_fake_cpu_attr(t->root, 1, "online", "1\n");
	assert_int_equal(hw_read_msr(&t->hw, 1, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(v, 0x77);
}

static void topology_kept_when_cpu_goes_offline(void **state)
{
	struct tree *t = *state;
	struct hw_cpu cpus[8];
	char path[512];
	int n;

	make_two_socket_tree(t->root);
	open_ok(t);
	/* The kernel removes topology/ of an offline CPU. */
	helpers_fake_cpu_attr(t->root, 3, "online", "0\n");
	path_in(path, sizeof(path), t->root, "sys/devices/system/cpu/cpu3/topology");
	helpers_rmtree(path);

	assert_int_equal(hw_cpu_online(&t->hw, 3), 0);
	assert_int_equal(hw_enumerate(&t->hw, cpus, 8, &n), 0);
	assert_int_equal(cpus[3].cpu, 3);
	assert_false(cpus[3].online);
	assert_int_equal(cpus[3].socket, 1);
	assert_int_equal(cpus[3].core, 1);
	assert_true(cpus[2].online);
}

static void missing_msr_device_names_modprobe(void **state)
{
	struct tree *t = *state;
	char path[512], want[700];

	make_two_socket_tree(t->root);
	path_in(path, sizeof(path), t->root, "dev/cpu/2/msr");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(hwdev_open(t->root, &t->hw, t->err, sizeof(t->err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: the msr driver is not loaded (run 'modprobe msr')", path);
	assert_string_equal(t->err, want);
	assert_null(t->hw.ops);
}

static void missing_cpuid_device_names_modprobe(void **state)
{
	struct tree *t = *state;
	char path[512], want[700];

	make_two_socket_tree(t->root);
	path_in(path, sizeof(path), t->root, "dev/cpu/0/cpuid");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(hwdev_open(t->root, &t->hw, t->err, sizeof(t->err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: the cpuid driver is not loaded (run 'modprobe cpuid')", path);
	assert_string_equal(t->err, want);
}

static void unreadable_msr_device_needs_root(void **state)
{
	struct tree *t = *state;
	char path[512], want[700];

	if (geteuid() == 0)
		skip();  /* root opens a mode-0 file anyway */
	make_two_socket_tree(t->root);
	path_in(path, sizeof(path), t->root, "dev/cpu/1/msr");
	assert_int_equal(chmod(path, 0), 0);
	assert_int_equal(hwdev_open(t->root, &t->hw, t->err, sizeof(t->err)), -EACCES);
	snprintf(want, sizeof(want),
		 "%s: permission denied (run as root or grant CAP_SYS_RAWIO)", path);
	assert_string_equal(t->err, want);
}

static void garbage_topology_is_einval(void **state)
{
	static const struct {
		const char *rel;
		const char *text;
		const char *shown;
	} cases[] = {
		{ "topology/core_id", "abc\n", "abc" },
		{ "topology/core_id", "", "" },
		{ "topology/core_id", "-1\n", "-1" },
		{ "topology/physical_package_id", " 1\n", " 1" },
		{ "topology/physical_package_id", "99999999999999999999999\n", "99999999999999999999999" },
		{ "topology/physical_package_id", "4294967296\n", "4294967296" },
		{ "topology/die_id", "12x\n", "12x" },
		{ "topology/core_id", "1\n2\n", "1?2" },
		{ "online", "yes\n", "yes" },
	};
	struct tree *t = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char path[512], want[700];
		struct hw hw = { 0 };

		print_message("%s = '%s'\n", cases[i].rel, cases[i].shown);
		make_two_socket_tree(t->root);
		helpers_fake_cpu_attr(t->root, 11, cases[i].rel, cases[i].text);
		assert_int_equal(hwdev_open(t->root, &hw, t->err, sizeof(t->err)), -EINVAL);
		snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu11/%s", t->root, cases[i].rel);
		snprintf(want, sizeof(want), "%s: expected a non-negative integer, got '%s'",
			 path, cases[i].shown);
		assert_string_equal(t->err, want);
		assert_null(hw.ops);
		helpers_rmtree(t->root);
	}
	helpers_mkdtemp(t->root, sizeof(t->root));
}

static void missing_topology_of_online_cpu(void **state)
{
	struct tree *t = *state;
	char path[512], want[700];

	make_two_socket_tree(t->root);
	path_in(path, sizeof(path), t->root, "sys/devices/system/cpu/cpu1/topology/core_id");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(hwdev_open(t->root, &t->hw, t->err, sizeof(t->err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(t->err, want);
}

static void no_cpu_directories(void **state)
{
	struct tree *t = *state;
	char path[512], want[700];

	assert_int_equal(hwdev_open(t->root, &t->hw, t->err, sizeof(t->err)), -ENOENT);
	snprintf(want, sizeof(want),
		 "%s/sys/devices/system/cpu: cannot list CPUs: No such file or directory", t->root);
	assert_string_equal(t->err, want);

	path_in(path, sizeof(path), t->root, "sys/devices/system/cpu/cpufreq/policy0");
	helpers_write_file(path, "");
	assert_int_equal(hwdev_open(t->root, &t->hw, t->err, sizeof(t->err)), -ENOENT);
	snprintf(want, sizeof(want), "%s/sys/devices/system/cpu: no cpuN directories found", t->root);
	assert_string_equal(t->err, want);
}

static void read_cpu_attr_values(void **state)
{
	struct tree *t = *state;
	uint64_t v = 42;

	make_two_socket_tree(t->root);
	helpers_fake_cpu_attr(t->root, 2, "thermal_throttle/core_throttle_count", "17\n");
	helpers_fake_cpu_attr(t->root, 2, "thermal_throttle/package_throttle_count",
			      "18446744073709551615\n");
	helpers_fake_cpu_attr(t->root, 3, "thermal_throttle/core_throttle_count", "x1\n");
	helpers_fake_cpu_attr(t->root, 3, "thermal_throttle/package_throttle_count",
			      "18446744073709551616\n");
	open_ok(t);

	assert_int_equal(hw_read_cpu_attr(&t->hw, 2, "thermal_throttle/core_throttle_count", &v), 0);
	assert_int_equal(v, 17);
	assert_int_equal(hw_read_cpu_attr(&t->hw, 2, "thermal_throttle/package_throttle_count", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	v = 42;
	assert_int_equal(hw_read_cpu_attr(&t->hw, 1, "thermal_throttle/core_throttle_count", &v),
			 -ENOENT);
	assert_int_equal(hw_read_cpu_attr(&t->hw, 3, "thermal_throttle/core_throttle_count", &v),
			 -EINVAL);
	assert_int_equal(hw_read_cpu_attr(&t->hw, 3, "thermal_throttle/package_throttle_count", &v),
			 -EINVAL);
	assert_int_equal(v, 42);
	assert_int_equal(t->hw.n_reads, 0);
}

/* A stub backend to test the dispatch layer on its own. */
static int stub_closes;

static int stub_read_msr(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value)
{
	(void)ctx;
	*ret_value = (uint64_t)cpu << 32 | msr;
	return 0;
}

static int stub_write_msr(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	(void)ctx;
	(void)msr;
	(void)value;
	return cpu == 1 ? -EPERM : 0;
}

static void stub_close(void *ctx)
{
	(void)ctx;
	stub_closes++;
}

static const struct hw_ops stub_ops = {
	.name = "stub",
	.read_msr = stub_read_msr,
	.write_msr = stub_write_msr,
	.close = stub_close,
};

static void dispatch_counts_and_closes_once(void **state)
{
	struct hw hw = { .ops = &stub_ops };
	uint64_t v;

	(void)state;
	stub_closes = 0;
	assert_int_equal(hw_read_msr(&hw, 2, 0x19c, &v), 0);
	assert_int_equal(v, UINT64_C(0x20000019c));
	assert_int_equal(hw_write_msr(&hw, 0, 0x3c0, 1), 0);
	assert_int_equal(hw_write_msr(&hw, 1, 0x3c0, 1), -EPERM);
	assert_int_equal(hw.n_reads, 1);
	assert_int_equal(hw.n_writes, 2);
	hw_close(&hw);
	assert_null(hw.ops);
	hw_close(&hw);
	assert_int_equal(stub_closes, 1);
	assert_int_equal(hw_read_msr(&hw, 2, 0x19c, &v), -EBADF);
}

static void hints_for_operators(void **state)
{
	static const struct {
		int err;
		enum hw_op op;
		const char *want;
	} cases[] = {
		{ -ENOENT, HW_OP_OPEN, "the msr driver is not loaded (run 'modprobe msr')" },
		{ -EACCES, HW_OP_OPEN, "permission denied (run as root or grant CAP_SYS_RAWIO)" },
		{ -EPERM, HW_OP_OPEN, "permission denied (run as root or grant CAP_SYS_RAWIO)" },
		{ -EPERM, HW_OP_WRITE, "the kernel refuses MSR writes (kernel lockdown or "
		  "msr.allow_writes=off), falling back to read-only collectors" },
		{ -EACCES, HW_OP_WRITE, "the kernel refuses MSR writes (kernel lockdown or "
		  "msr.allow_writes=off), falling back to read-only collectors" },
		{ -EIO, HW_OP_READ, "no such register on this CPU" },
		{ -EIO, HW_OP_WRITE, "no such register on this CPU" },
		{ -ENXIO, HW_OP_READ, "the CPU is offline" },
		{ -ENXIO, HW_OP_OPEN, "the CPU is offline" },
		{ -ENOENT, HW_OP_READ, "No such file or directory" },
		{ -EINVAL, HW_OP_WRITE, "Invalid argument" },
		{ EIO, HW_OP_READ, "no such register on this CPU" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_string_equal(hw_hint(cases[i].err, cases[i].op), cases[i].want);
}

#define TREE_TEST(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TREE_TEST(msr_reads_and_writes_land_at_their_offsets),
		TREE_TEST(short_read_is_eio),
		TREE_TEST(cpuid_reads_leaf_and_subleaf),
		TREE_TEST(enumerate_in_cpu_order_with_topology),
		TREE_TEST(root_with_trailing_slash),
		TREE_TEST(offline_cpu_is_enxio),
		TREE_TEST(topology_kept_when_cpu_goes_offline),
		TREE_TEST(missing_msr_device_names_modprobe),
		TREE_TEST(missing_cpuid_device_names_modprobe),
		TREE_TEST(unreadable_msr_device_needs_root),
		TREE_TEST(garbage_topology_is_einval),
		TREE_TEST(missing_topology_of_online_cpu),
		TREE_TEST(late_cpu_goes_through_the_opener),
		TREE_TEST(stand_in_follows_the_online_attribute),
		TREE_TEST(no_cpu_directories),
		TREE_TEST(read_cpu_attr_values),
		cmocka_unit_test(dispatch_counts_and_closes_once),
		cmocka_unit_test(hints_for_operators),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
